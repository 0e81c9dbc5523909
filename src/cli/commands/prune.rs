//! `swarm prune [--older-than DUR]`: remove every team that has ended, meaning nothing of it runs
//! (docs/ARCHITECTURE.md, "Removing a team"), or only those that ended longer ago than DUR.

use std::time::Duration;

use crate::base::clock;
use crate::base::names::Name;
use crate::cli::args::parse_duration;
use crate::cli::context::Context;
use crate::cli::removal::{self, ArchiveArgs, Progress};
use crate::cli::{output, render};
use crate::error::Result;
use crate::member::liveness::Observed;
use crate::member::remove::Removal;
use crate::policy::{self, Action};
use crate::store::team::{Team, list_teams};

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one line per team:
  {"event": "removed", "team", "archive", "endedAt", "endedAtMs"}
  {"event": "would_remove", "team", "endedAt", "endedAtMs"}   with --dry-run
Nothing at all when there is nothing to prune."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// Only teams that ended longer ago than this: 30m, 2h, 7d, 1h30m
    ///
    /// A team ended when the last of its members did; one that never ran, when it was created.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) older_than: Option<Duration>,

    /// Print what would be removed, and remove nothing
    #[arg(long)]
    pub(crate) dry_run: bool,

    #[command(flatten)]
    pub(crate) archive: ArchiveArgs,
}

/// A team that has ended, and when.
struct Ended {
    team: Team,
    at: u64,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let now = clock::now_ms();
    let mut ended = Vec::new();
    let mut running = Vec::new();
    let mut recent = Vec::new();
    removal::finish_interrupted(ctx);
    for name in list_teams(&ctx.home)? {
        // A folder another tool named so that it is no name swarm would type is left alone.
        if let Err(err) = Name::parse("team", &name) {
            tracing::warn!("leaving team {name}: {}", err.message());
            continue;
        }
        let observed = match Team::open(&ctx.home, &name).and_then(|team| {
            let observed = Observed::take(&team, &ctx.fleet())?;
            Ok((team, observed))
        }) {
            Ok(found) => found,
            Err(err) => {
                tracing::warn!("leaving team {name}: {err}");
                continue;
            }
        };
        let (team, observed) = observed;
        if observed.running() {
            running.push(name);
            continue;
        }
        let at = observed.config.last_activity();
        let age = Duration::from_millis(now.saturating_sub(at));
        if args.older_than.is_some_and(|limit| age < limit) {
            recent.push(name);
            continue;
        }
        // Checked for every team before any is removed.
        policy::allow(
            &observed.config,
            &ctx.caller(&observed.config)?,
            Action::Remove,
        )?;
        ended.push(Ended { team, at });
    }
    if ended.is_empty() {
        return nothing(ctx, &args, &running, &recent);
    }
    if !args.dry_run {
        args.archive.prepare(ctx)?;
    }
    for Ended { team, at } in &ended {
        if args.dry_run {
            let known = Some(*at).filter(|ms| *ms > 0);
            ctx.event(&Progress::WouldRemove {
                team: team.name(),
                ended_at: render::time(known),
                ended_at_ms: known,
                said: format!(
                    "would remove team {} (ended {})",
                    team.name(),
                    clock::ago(*at, now)
                ),
            })?;
            continue;
        }
        match ctx.fleet().remove(team, args.archive.format())? {
            Removal::Removed(archived) => {
                removal::report(ctx, team.name(), archived.as_deref(), Some(*at))?;
            }
            // It started again since it was looked at: it is not pruned.
            Removal::Running(live) => {
                tracing::warn!(
                    "leaving team {}: it runs again ({})",
                    team.name(),
                    live.join(", ")
                );
            }
            Removal::Busy(holder) => {
                tracing::warn!("leaving team {}: it is {}", team.name(), holder.doing());
            }
        }
    }
    Ok(())
}

/// Says why nothing was pruned.
fn nothing(ctx: &Context, args: &Args, running: &[String], recent: &[String]) -> Result<()> {
    ctx.remark(|| {
        let mut why = Vec::new();
        if !running.is_empty() {
            why.push(format!("running: {}", running.join(", ")));
        }
        if let Some(limit) = args.older_than
            && !recent.is_empty()
        {
            why.push(format!(
                "ended less than {} ago: {}",
                clock::span(limit),
                recent.join(", ")
            ));
        }
        if why.is_empty() {
            output::line("nothing to prune")
        } else {
            output::line(format!("nothing to prune ({})", why.join("; ")))
        }
    })
}
