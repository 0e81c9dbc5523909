//! `swarm stop NAME|all`: stop members now. SIGTERM to the program's process group, a grace
//! period, SIGKILL, and the pane killed; the member is recorded as killed and the lead notified.

use clap_complete::engine::ArgValueCandidates;

use crate::cli::complete;
use crate::cli::context::Context;
use crate::cli::{output, render};
use crate::error::Result;

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one line per member stopped, its ending as `swarm wait` prints it:
  {"event": "stopped", "name", "agentId", "state", "exitCode", "reason", "endedAt",
   "endedAtMs", "notice"}"#;

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
    let stopped = ctx
        .fleet()
        .stop(&team, name.as_ref(), |config| ctx.caller(config))?;
    let config = team.load()?;
    for (name, state) in &stopped {
        let Some(member) = config.member(name) else {
            continue;
        };
        if ctx.json {
            output::json_line(&render::event("stopped", render::ending(member, state)))?;
        } else {
            output::line(member.notice.as_ref().map_or_else(
                || format!("{name} {state}"),
                |notice| notice.summary.clone(),
            ))?;
        }
    }
    Ok(())
}
