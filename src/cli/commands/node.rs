//! `swarm node --name HOST`: this host's part of every team across machines
//! (docs/ARCHITECTURE.md, "Across machines").

use std::path::PathBuf;

use crate::base::names::Name;
use crate::cli::context::Context;
use crate::cli::output;
use crate::cluster::node::{self, unit};
use crate::cluster::settings::{Auth, Sources};
use crate::error::{Error, Result};

#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub(crate) struct Args {
    /// This host's name, as team files give it in `host = "..."`
    #[arg(long, value_name = "HOST", required_unless_present = "print_unit")]
    pub(crate) name: Option<String>,

    /// The NATS server's URL [default: $SWARM_NATS_URL]
    #[arg(long, value_name = "URL")]
    pub(crate) nats: Option<String>,

    /// A .creds file to log in with [default: $SWARM_NATS_CREDS]
    #[arg(long, value_name = "FILE")]
    pub(crate) creds: Option<PathBuf>,

    /// The tmux server this host's members go on: a name (tmux -L) or a socket path (tmux -S)
    #[arg(
        long,
        value_name = "NAME",
        env = "SWARM_TMUX_SOCKET",
        hide_env_values = true
    )]
    pub(crate) socket: Option<String>,

    /// Print a systemd user unit, and exit: with --name, one that runs this node; without, one
    /// that runs `swarm resume --all` at login, so the teams a reboot interrupted come back
    #[arg(long)]
    pub(crate) print_unit: bool,
}

const AFTER_LONG_HELP: &str = "\
The node runs in the foreground until SIGTERM or SIGINT: in a tmux pane, or as a systemd unit \
(--print-unit --name HOST). Without --name, --print-unit prints swarm-resume.service, a unit that \
runs `swarm resume --all` once at login, for one host as for many (README, \"After a reboot\"). One node serves one home. A password (SWARM_NATS_USER, SWARM_NATS_PASSWORD) or a \
token (SWARM_NATS_TOKEN) is read from the environment only, never from the command line.

While the NATS server cannot be reached the node keeps running and keeps trying; messages for \
other hosts wait in the local inbox files and go once it is back.

JSON OUTPUT
    None: the node prints one line to stderr each time it connects or loses the server (-q silences them). Its \
state is in <home>/node/node.json; `swarm status --json` reports it.";

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let Some(name) = &args.name else {
        // Only --print-unit goes without a name (clap holds the rest to it).
        let exe = std::env::current_exe().map_err(|err| Error::os("find swarm's own path", err))?;
        let path = std::env::var_os("PATH").unwrap_or_default();
        let text = unit::resume_text(&exe, ctx.home.root(), args.socket.as_deref(), &path)?;
        return output::bytes(text.as_bytes());
    };
    let name = Name::parse("host", name)?;
    // The flags name the server and the .creds file; the rest of the login comes from the
    // environment, whichever server the URL came from.
    let env = Sources::from_env();
    let sources = Sources {
        nats: args.nats.or(env.nats),
        creds: args.creds.or(env.creds),
        ..env
    };
    let settings = sources.settle()?.ok_or_else(|| {
        Error::usage("swarm node needs a NATS server")
            .with_hint("pass --nats nats://host:4222 or set SWARM_NATS_URL")
    })?;
    if args.print_unit {
        let exe = std::env::current_exe().map_err(|err| Error::os("find swarm's own path", err))?;
        // The unit runs later, elsewhere: a .creds file that is not there now is said now.
        if let Auth::Creds(path) = &settings.auth {
            std::fs::metadata(path).map_err(|err| Error::io("read NATS credentials", path, err))?;
        }
        let text = unit::text(
            &exe,
            ctx.home.root(),
            name.as_str(),
            &settings,
            args.socket.as_deref(),
        )?;
        return output::bytes(text.as_bytes());
    }
    node::run(ctx.home.clone(), name, settings, args.socket)
}
