//! `swarm top [TEAM]`: the team's live dashboard, where the person at the keyboard watches and
//! acts (docs/ARCHITECTURE.md, "Dashboard"). The dashboard itself is the `dashboard` layer; this
//! is its command line.

use clap_complete::engine::ArgValueCandidates;

use crate::base::text::for_terminal;
use crate::cli::complete;
use crate::cli::context::Context;
use crate::cli::logging;
use crate::cli::output;
use crate::dashboard::{self, Exit};
use crate::error::{Error, Result};

/// What `--help` says after the flags, and the man page's JSON OUTPUT.
const HELP: &str = r"Keys: ↑/↓ or j/k select a member; Enter goes to its pane (outside tmux: prints the tmux attach
command and quits); s sends it a message, S sends everyone one; a approves the pending plan or
allows the permission ask, A allows the ask always, r rejects or denies it, saying why; x stops
the selected member after you confirm; t shows the task board; / filters the messages; ? shows
the keys; q quits. The header counts what waits for a decision. Every action runs as the
matching command would (send, plan approve|reject, permission allow|deny, stop), under the same
permissions, as you.

JSON output: none. swarm top needs a terminal; for a machine-readable view use `swarm status
--json` (a snapshot) or `swarm watch --all --json` (messages as they arrive).";

#[derive(Debug, clap::Args)]
#[command(after_long_help = HELP)]
pub(crate) struct Args {
    /// The team [default: --team, SWARM_TEAM, the only team, or the only one running]
    // Its own id: sharing the global --team's would let an empty SWARM_TEAM fill it.
    #[arg(id = "team_arg", value_name = "TEAM", add = ArgValueCandidates::new(complete::teams))]
    pub(crate) team: Option<String>,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let refusal = |why: &str| {
        Error::usage(why).with_hint(
            "use `swarm status --json` for a snapshot, or `swarm watch --all --json` to follow messages",
        )
    };
    ctx.printer()
        .text_only(|| refusal("swarm top is for a terminal and prints no JSON"))?;
    if !dashboard::terminal_present() {
        return Err(refusal(
            "swarm top needs a terminal: stdin or stdout is not one",
        ));
    }
    let team = ctx.team_or(args.team.as_deref())?;
    let who = dashboard::ActingAs {
        whereabouts: ctx.whereabouts()?.clone(),
        asked: ctx.asked()?,
    };
    logging::hold(true);
    let exit = dashboard::run(&team, &ctx.fleet(), who);
    logging::hold(false);
    match exit? {
        Exit::Quit => Ok(()),
        Exit::Attach(argv) => output::line(format!(
            "attach with: {}",
            for_terminal(
                &shlex::try_join(argv.iter().map(String::as_str))
                    .unwrap_or_else(|_| argv.join(" "))
            )
        )),
    }
}
