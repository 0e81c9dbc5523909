//! `swarm wait NAME`: block until a member ends and print its completion notice. `swarm wait
//! --all`: block until every member launched has ended, printing each notice as it comes.
//! Exit 0 if every one completed, 1 if one failed, was killed or vanished, 4 on timeout, 3 for an
//! unknown member.

use std::time::Duration;

use clap_complete::engine::ArgValueCandidates;

use crate::base::clock;
use crate::cli::args::parse_duration;
use crate::cli::complete;
use crate::cli::context::Context;
use crate::cli::output::WithLine;
use crate::cli::render::Ending;
use crate::error::{Error, ErrorKind, Result};
use crate::member::liveness::{self, Awaited};
use crate::policy::Whereabouts;
use crate::store::team::Team;

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one document, the member's ending:
  {"name", "agentId", "state", "exitCode", "reason", "endedAt", "endedAtMs", "notice"}
"notice" is the task_notification the lead was sent ({"taskId", "status", "exitCode",
"summary", "outputFile", "durationMs", "timestamp", ...}), or null.
With --all, one such object per line, as each member ends."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// The member to wait for
    #[arg(
        value_name = "NAME",
        required_unless_present = "all",
        add = ArgValueCandidates::new(complete::members)
    )]
    pub(crate) name: Option<String>,

    /// Wait for every member that was launched, and each one spawned meanwhile, until none runs,
    /// printing each completion notice as it comes. Not for the member this runs in, nor for one
    /// never started (a lead with no command, a member added by init or join)
    #[arg(long, conflicts_with = "name")]
    pub(crate) all: bool,

    /// Give up after DURATION (seconds, or 30s, 2m, 1h; exit status 4)
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) timeout: Option<Duration>,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let (team, named) = ctx.team_and_member(args.name.as_deref().filter(|_| !args.all))?;
    let config = team.load()?;
    let deadline = args.timeout.and_then(clock::deadline);
    let limit = args.timeout.unwrap_or_default().as_secs_f64();
    let Some(name) = named else {
        // Waiting for itself would never end.
        let own = match ctx.whereabouts()? {
            Whereabouts::Pane {
                team: at, member, ..
            } if *at == config.name => Some(member.as_str()),
            _ => None,
        };
        let mut all_well = true;
        let left = liveness::wait_for_endings(
            &team,
            &ctx.fleet(),
            Awaited::Launched {
                except: own,
                first: false,
            },
            deadline,
            |member, seen| {
                all_well &= liveness::ended_well(seen);
                ctx.event(&WithLine {
                    json: Ending::of(member, seen.label()),
                    line: liveness::ending_line(member, seen),
                })
            },
        )?;
        if !left.is_empty() {
            return Err(Error::timeout(format!(
                "still running after {limit}s: {}",
                described(ctx, &team, &left)?.join(", ")
            )));
        }
        return if all_well {
            Ok(())
        } else {
            Err(Error::silent(ErrorKind::Runtime))
        };
    };
    let member = config.require_member(name.as_str())?.clone();
    let mut well = false;
    let left = liveness::wait_for_endings(
        &team,
        &ctx.fleet(),
        Awaited::Named(std::slice::from_ref(&member.name)),
        deadline,
        |member, seen| {
            well = liveness::ended_well(seen);
            ctx.report(&WithLine {
                json: Ending::of(member, seen.label()),
                line: liveness::ending_line(member, seen),
            })
        },
    )?;
    if !left.is_empty() {
        return Err(Error::timeout(format!(
            "{} is still running after {limit}s",
            described(ctx, &team, &left)?.join(", ")
        )));
    }
    if well {
        Ok(())
    } else {
        Err(Error::silent(ErrorKind::Runtime))
    }
}

/// The members a wait ran out of time for, each said to be unreachable when it is: it may have
/// ended unheard.
fn described(ctx: &Context, team: &Team, left: &[String]) -> Result<Vec<String>> {
    let observation = ctx.fleet().observe(team)?;
    Ok(left
        .iter()
        .map(|name| observation.described(name))
        .collect())
}
