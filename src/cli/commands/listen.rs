//! `swarm listen [--label L]`: open a peer socket in this terminal and print what arrives, until
//! interrupted. The socket and its registry entry are removed on exit, Ctrl-C included.

use std::io::Write;
use std::sync::Arc;

use tokio::signal::unix::{Signal, SignalKind};

use crate::base::names::Name;
use crate::base::text::for_terminal;
use crate::cli::context::Context;
use crate::cli::output;
use crate::error::{Error, Result};
use crate::peer::{Incoming, Listener, Sink};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A name for this peer: `swarm peers` shows it, and `swarm send uds:L` reaches it
    #[arg(long, value_name = "L")]
    pub(crate) label: Option<String>,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| Error::os("start the listener's runtime", err))?;
    runtime.block_on(listen(ctx, args))
}

async fn listen(ctx: &Context, args: Args) -> Result<()> {
    let team = std::env::var("SWARM_TEAM").ok().filter(|t| !t.is_empty());
    let agent = std::env::var("SWARM_AGENT").ok().filter(|a| !a.is_empty());
    if let Some(label) = &args.label {
        Name::parse("label", label)?;
    }
    // Handlers first: a Ctrl-C the moment the socket exists must still remove it.
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    let also = args
        .label
        .as_ref()
        .map(|label| format!(" (or uds:{label})"))
        .unwrap_or_default();
    let listener = Listener::bind(&ctx.home, args.label, team, agent)?;
    {
        let mut stderr = std::io::stderr().lock();
        let listening = format!("listening on {}{also}", listener.address());
        let _ = writeln!(stderr, "swarm: {}", for_terminal(&listening));
        let hint = format!(
            "sends from this terminal are signed with it; elsewhere, export SWARM_SOCKET={}",
            listener.socket().display()
        );
        let _ = writeln!(stderr, "hint: {}", for_terminal(&hint));
    }
    let json = ctx.json;
    let sink: Sink = Arc::new(move |message: &Incoming| {
        if json {
            output::json_line(message)
        } else {
            output::line(crate::format::message::framed(&message.from, &message.text))
        }
    });
    tokio::select! {
        () = listener.serve(sink) => {}
        _ = interrupt.recv() => {}
        _ = terminate.recv() => {}
        _ = hangup.recv() => {}
    }
    drop(listener);
    Ok(())
}

fn signal(kind: SignalKind) -> Result<Signal> {
    tokio::signal::unix::signal(kind).map_err(|err| Error::os("install a signal handler", err))
}
