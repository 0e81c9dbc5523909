//! `swarm stop NAME|all`: stop members now. SIGTERM to the program's process group, a grace
//! period, SIGKILL, and the pane killed; the member is recorded as killed and the lead notified.
//! `all` ends the whole team but its lead, so it takes the team's launch lock first, as `down`
//! does: an `up` placing the team's panes is waited for, a bounded while, before anything stops.

use clap_complete::engine::ArgValueCandidates;

use crate::cli::complete;
use crate::cli::context::Context;
use crate::cli::removal::{self, Progress};
use crate::cli::render::Ending;
use crate::error::Result;
use crate::launch::lock::TAKE_DOWN_WAIT;
use crate::policy::{self, Action};

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one line per member stopped, its ending as `swarm wait` prints it:
  {"event": "stopped", "name", "agentId", "state", "exitCode", "reason", "endedAt",
   "endedAtMs", "notice"}
With `all`, first, when another command holds the team's launch lock (`by` "up": it is placing
the team's panes, and nothing is stopped until it lets go, for at most timeoutMs):
  {"event": "held", "by", "pid", "timeoutMs"}"#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// The member to stop, or `all` for every running member but the lead
    #[arg(value_name = "NAME|all", add = ArgValueCandidates::new(complete::members))]
    pub(crate) name: String,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    // A misspelt name is not found, whoever asks.
    let (team, name) =
        ctx.team_and_member(Some(args.name.as_str()).filter(|name| *name != "all"))?;
    // `all` waits for an `up` placing the team's panes, once it may stop them at all.
    let _held = match name {
        Some(_) => None,
        None => {
            let config = team.load()?;
            policy::allow(&config, &ctx.caller(&config)?, Action::Stop)?;
            Some(removal::wait_to_take_down(
                ctx,
                &team,
                TAKE_DOWN_WAIT,
                "stopping its members",
            )?)
        }
    };
    let stopped = ctx
        .fleet()
        .stop(&team, name.as_ref(), |config| ctx.caller(config))?;
    let config = team.load()?;
    for (name, state) in &stopped {
        let Some(member) = config.member(name) else {
            continue;
        };
        let ending = Ending::of(member, state);
        ctx.event(&Progress::Stopped {
            said: ending.line(),
            ending,
        })?;
    }
    Ok(())
}
