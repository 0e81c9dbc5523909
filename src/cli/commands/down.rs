//! `swarm down [TEAM]`: a graceful shutdown of the whole team. Every live teammate is asked to shut
//! down; those that have not ended by the timeout are stopped, the lead last; then their panes go
//! (`member/down.rs`). With `--rm`, the team is then removed as `swarm rm` removes it.

use std::time::Duration;

use clap_complete::engine::ArgValueCandidates;
use serde::Serialize;

use crate::cli::args::parse_duration;
use crate::cli::complete;
use crate::cli::context::Context;
use crate::cli::output::WithLine;
use crate::cli::removal::{self, ArchiveArgs};
use crate::cli::render::Tagged;
use crate::error::Result;
use crate::member::down::{Down, Outcome};
use crate::policy::{self, Action};

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one line per event:
  {"event": "held", "by", "pid", "timeoutMs"}   first, when another command holds the team's
                              launch lock (`by` "up": it is placing the team's panes); nothing is
                              stopped until it lets go, for at most timeoutMs (said on stderr
                              without --json)
  {"event": "waiting", "names", "timeoutMs"}   the teammates asked to shut down, and how long they
                              get before they are stopped (said once, on stderr, without --json)
  {"event": "ended", ...}     a teammate asked to shut down has ended (as `swarm wait` prints it)
  {"event": "stopped", ...}   a member that was still running was stopped (likewise)
  {"event": "warning", "name", "message"}   a teammate could not be asked to shut down
  {"event": "remote", "host", "line"}   what another host's node reports of its members
  {"event": "down", "team", "leadSpared"}
  {"event": "removed", "team", "archive"}   with --rm"#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
#[command(mut_arg("archive", |arg| arg.requires("rm")))]
pub(crate) struct Args {
    /// The team [default: --team, SWARM_TEAM, the only team, or the only one running]
    // Its own id: sharing the global --team's would let an empty SWARM_TEAM fill it.
    #[arg(id = "team_arg", value_name = "TEAM", add = ArgValueCandidates::new(complete::teams))]
    pub(crate) team: Option<String>,

    /// How long teammates get to answer and exit before they are stopped (then 5 s from SIGTERM
    /// to SIGKILL); stderr says whom it waits for. One whose protocol is "none" (a shell, a REPL),
    /// or whose supervisor is gone (orphaned), is stopped at once, not asked. A `swarm up` still
    /// placing the team's panes is waited for as long first
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "20")]
    pub(crate) timeout: Duration,

    /// Skip the shutdown requests and stop everyone at once
    #[arg(long)]
    pub(crate) force: bool,

    /// Then remove the team, as `swarm rm` does: config, inboxes, history, logs, tasks and all
    #[arg(long)]
    pub(crate) rm: bool,

    #[command(flatten)]
    pub(crate) archive: ArchiveArgs,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let team = ctx.team_or(args.team.as_deref())?;
    let config = team.load()?;
    let caller = ctx.caller(&config)?;
    policy::allow(&config, &caller, Action::Down)?;
    // The team's launch lock is taken before anything is stopped and held until the team is down
    // (with --rm, gone): an `up` placing its panes wins. A removal refuses at once; a plain
    // `down` waits for the `up` to finish, up to its timeout, then takes the team down.
    let held = if args.rm {
        policy::allow(&config, &caller, Action::Remove)?;
        args.archive.prepare(ctx)?;
        removal::claim(&team)?
    } else {
        removal::wait_to_take_down(ctx, &team, args.timeout, "taking it down")?
    };
    let how = Down {
        timeout: args.timeout,
        force: args.force,
    };
    // What an `up` it waited for has placed meanwhile is read again.
    let config = team.load()?;
    let outcome = ctx.fleet().down(&team, &config, &held, how, |event| {
        removal::report_down(ctx, event)
    })?;
    let lead_spared = outcome == Outcome::LeadSpared;
    ctx.event(&Tagged {
        event: "down",
        fields: WithLine {
            json: TeamDown {
                team: team.name(),
                lead_spared,
            },
            line: if lead_spared {
                format!(
                    "team {} is down; the lead ends when its program exits",
                    team.name()
                )
            } else {
                format!("team {} is down", team.name())
            },
        },
    })?;
    if !args.rm {
        return Ok(());
    }
    if outcome == Outcome::LeadSpared {
        return Err(removal::lead_runs_this(team.name()));
    }
    removal::remove_claimed(
        ctx,
        &team,
        &held,
        args.archive,
        "stop what is left with `swarm down --force`, then remove it with `swarm rm`",
    )
}

/// The team is down: all of it, or all but the lead, which runs this command.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TeamDown<'a> {
    team: &'a str,
    lead_spared: bool,
}
