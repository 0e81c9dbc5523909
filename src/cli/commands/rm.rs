//! `swarm rm TEAM...`: remove teams that have ended, with everything swarm keeps of them: config,
//! inboxes, history, spools, logs, locks, the task list and stale registry entries
//! (docs/ARCHITECTURE.md, "Removing a team"). A team that still runs is refused; `--force` stops
//! it first, at once, the way `swarm down --force` does; a team a `swarm up` is starting is
//! refused before anything is stopped.

use std::time::Duration;

use clap_complete::engine::ArgValueCandidates;

use crate::cli::complete;
use crate::cli::context::{Context, team_named};
use crate::cli::removal::{self, ArchiveArgs};
use crate::cluster::fleet::DownEvent;
use crate::error::Result;
use crate::member::down::{self, Down, Outcome};
use crate::member::liveness::Observed;
use crate::policy::{self, Action};
use crate::store::team::Team;

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one line per team removed:
  {"event": "removed", "team", "archive"}
With --force, a running team's endings come first, as `swarm down` prints them."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// The teams to remove
    #[arg(value_name = "TEAM", required = true, add = ArgValueCandidates::new(complete::teams))]
    pub(crate) teams: Vec<String>,

    /// Stop a team that still runs first, at once, as `swarm down --force` does
    #[arg(long)]
    pub(crate) force: bool,

    #[command(flatten)]
    pub(crate) archive: ArchiveArgs,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    // A removal a killed `rm` left is finished first: a team it was removing is removed.
    let finished = removal::finish_interrupted(ctx);
    // Every name is checked before any team is touched.
    let mut teams = Vec::new();
    let mut done = Vec::new();
    for name in &args.teams {
        let name = team_named(&ctx.home, name)?;
        let team = match Team::open(&ctx.home, name.as_str()) {
            Ok(team) => team,
            Err(_) if finished.iter().any(|f| f.team == name.as_str()) => {
                done.push(name);
                continue;
            }
            Err(err) => return Err(err),
        };
        let config = team.load()?;
        let caller = ctx.caller(&config)?;
        policy::allow(&config, &caller, Action::Remove)?;
        if args.force {
            policy::allow(&config, &caller, Action::Down)?;
        }
        teams.push(team);
    }
    args.archive.prepare(ctx)?;
    for name in &done {
        let archived = finished
            .iter()
            .find(|f| f.team == name.as_str())
            .and_then(|f| f.archived.as_deref());
        removal::report(ctx, name.as_str(), archived, None)?;
    }
    for team in &teams {
        remove(ctx, team, &args)?;
    }
    Ok(())
}

/// Removes one team: its launch lock first, so an `up` starting it makes this refuse before
/// anything is stopped; with `--force` a team that still runs is taken down at once, under the
/// lock, then removed.
fn remove(ctx: &Context, team: &Team, args: &Args) -> Result<()> {
    let held = removal::claim(team)?;
    let observed = Observed::take(team, &ctx.fleet())?;
    let live: Vec<String> = observed.live().map(str::to_owned).collect();
    if !live.is_empty() {
        if !args.force {
            return Err(
                removal::still_running(team.name(), &live).with_hint(format!(
                    "or take it down gracefully and remove it with `swarm down --rm {}`",
                    team.name()
                )),
            );
        }
        let how = Down {
            timeout: Duration::ZERO,
            force: true,
        };
        let outcome = down::down(team, &ctx.fleet(), &held, how, |report| {
            removal::report_down(ctx, DownEvent::Here(report))
        })?;
        if outcome == Outcome::LeadSpared {
            return Err(removal::lead_runs_this(team.name()));
        }
    }
    removal::remove_claimed(
        ctx,
        team,
        &held,
        args.archive,
        "stop it first with `swarm down`, then remove it",
    )
}
