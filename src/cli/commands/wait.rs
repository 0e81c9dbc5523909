//! `swarm wait NAME`: block until a member ends and print its completion notice.
//! Exit 0 if it completed, 1 if it failed or was killed, 4 on timeout, 3 for an unknown member.

use std::time::Duration;

use clap_complete::engine::ArgValueCandidates;

use crate::base::clock;
use crate::base::names::Name;
use crate::cli::args::parse_seconds;
use crate::cli::complete;
use crate::cli::context::Context;
use crate::cli::output;
use crate::cli::render;
use crate::error::{Error, ErrorKind, Result};
use crate::member::liveness;

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one document, the member's ending:
  {"name", "agentId", "state", "exitCode", "reason", "endedAt", "endedAtMs", "notice"}
"notice" is the task_notification the lead was sent ({"taskId", "status", "exitCode",
"summary", "outputFile", "durationMs", "timestamp", ...}), or null."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// The member to wait for
    #[arg(value_name = "NAME", add = ArgValueCandidates::new(complete::members))]
    pub(crate) name: String,

    /// Give up after SECS seconds (exit status 4)
    #[arg(long, value_name = "SECS", value_parser = parse_seconds)]
    pub(crate) timeout: Option<Duration>,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let name = Name::parse("member", &args.name)?;
    let team = ctx.team()?;
    let config = team.load()?;
    let member = config.require_member(name.as_str())?.clone();
    let deadline = args.timeout.and_then(clock::deadline);
    let mut well = false;
    let left = liveness::wait_for_endings(
        &team,
        std::slice::from_ref(&member.name),
        deadline,
        |member, seen| {
            well = liveness::ended_well(seen);
            if ctx.json {
                output::json(&render::ending(member, seen.label()))
            } else {
                output::line(liveness::ending_line(member, seen))
            }
        },
    )?;
    if !left.is_empty() {
        let limit = args.timeout.unwrap_or_default().as_secs_f64();
        return Err(Error::timeout(format!(
            "{name} is still running after {limit}s"
        )));
    }
    if well {
        Ok(())
    } else {
        Err(Error::silent(ErrorKind::Runtime))
    }
}
