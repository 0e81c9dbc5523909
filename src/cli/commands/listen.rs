//! `swarm listen [--label L]`: open a peer socket in this terminal and print what arrives, each
//! under a name it can be answered at, until interrupted. Without a label it is reached as
//! `uds:user`. The socket and its registry entry are removed on exit, Ctrl-C included. A Claude
//! Code session's SendMessage to it is printed too, under the session's own socket
//! (docs/ARCHITECTURE.md, "Peers").

use std::io::Write;
use std::sync::Arc;

use serde::Serialize;
use tokio::signal::unix::{Signal, SignalKind};

use crate::base::names::Name;
use crate::base::process::Pinned;
use crate::base::text::for_terminal;
use crate::cli::context::Context;
use crate::cli::output::{self, Report};
use crate::error::{Error, Result};
use crate::member::identity;
use crate::member::notify::{self, Asked, State};
use crate::peer::{Control, ControlFrame, Handlers, Incoming, Listener, Request, Sink};
use crate::policy::{PERSON, Whereabouts};

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one line per message, under the name of whoever really sent it:
  {"from", "text", "summary", "msg_id", "timestamp", "lead_sig"}
"summary", "timestamp" and "lead_sig" only when the sender gave them."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// A name for this peer: `swarm peers` shows it, and `swarm send uds:L` reaches it [default:
    /// none, and `swarm send uds:user` reaches the newest such listener]
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
    // Senders are judged against the home as it is now, whatever its path names later; a home
    // not made yet is looked up when a message comes.
    let _ = ctx.home.pin();
    // Registered under the member whose pane it runs in, if any: never a name it was given.
    let (team, agent) = match ctx.whereabouts()? {
        Whereabouts::Pane { team, member, .. } => (Some(team.clone()), Some(member.clone())),
        Whereabouts::Elsewhere { .. } => {
            return Err(Error::usage(
                "this command runs in a member's pane of another home: listen there, or outside every pane",
            ));
        }
        Whereabouts::Outside | Whereabouts::Unknown(_) => (None, None),
    };
    if let Some(label) = &args.label {
        Name::parse("label", label)?;
        if label == PERSON {
            return Err(Error::usage(format!(
                "--label {PERSON} is taken: uds:{PERSON} reaches a listener without a label"
            ))
            .with_hint("drop --label to listen as uds:user"));
        }
    }
    // Handlers first: a Ctrl-C the moment the socket exists must still remove it.
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    let listener = Listener::bind(&ctx.home, args.label, team, agent)?;
    {
        let mut stderr = std::io::stderr().lock();
        let socket = listener.socket().display().to_string();
        // The name it is reached at, and what this terminal sends is signed with: never the
        // socket. In a member's pane, what is sent from there is signed as that member.
        match listener.entry().reply_address() {
            Some(name) => {
                let listening = format!("listening as {name} on {socket}");
                let _ = writeln!(stderr, "swarm: {}", for_terminal(&listening));
                let hint = format!(
                    "what this terminal sends is signed {name}, so replies come here; \
                     elsewhere, export SWARM_SOCKET={socket}"
                );
                let _ = writeln!(stderr, "hint: {}", for_terminal(&hint));
            }
            None => {
                let listening = format!("listening on {}", listener.address());
                let _ = writeln!(stderr, "swarm: {}", for_terminal(&listening));
            }
        }
    }
    let printer = ctx.printer();
    let home = ctx.home.clone();
    let sink: Sink = Arc::new(move |incoming: &Incoming| {
        // Shown under the name of whoever really sent it, never the one it claims.
        let message = Request {
            from: identity::incoming_sender(&home, incoming)?,
            ..incoming.message.clone()
        };
        printer.event(&Heard(message))
    });
    let own = listener.address();
    let control: Control = Arc::new(move |frame: &ControlFrame, sender: &Arc<Pinned>| {
        match notify::read(frame, sender)? {
            // A person's terminal has no idle to tell of: the subscriber hears so at once, on a
            // thread of its own, since it waits for this connection to close first.
            Asked::Notify(subscription) => {
                let own = own.clone();
                std::thread::spawn(move || {
                    if let Err(err) = subscription.answer(State::Unavailable, Some(&own)) {
                        tracing::warn!(
                            "cannot answer {}: {}",
                            subscription.describe(),
                            err.message()
                        );
                    }
                });
            }
            Asked::Noted(what) => tracing::info!("{what}"),
        }
        Ok(())
    });
    let handlers = Handlers {
        sink,
        ledger: None,
        control,
    };
    tokio::select! {
        () = listener.serve(handlers) => {}
        _ = interrupt.recv() => {}
        _ = terminate.recv() => {}
        _ = hangup.recv() => {}
    }
    drop(listener);
    Ok(())
}

/// A message this listener received, under the name of whoever really sent it.
#[derive(Serialize)]
#[serde(transparent)]
struct Heard(Request);

impl Report for Heard {
    fn text(&self) -> Result<()> {
        output::line(crate::format::message::framed(&self.0.from, &self.0.text))
    }
}

fn signal(kind: SignalKind) -> Result<Signal> {
    tokio::signal::unix::signal(kind).map_err(|err| Error::os("install a signal handler", err))
}
