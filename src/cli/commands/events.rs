//! `swarm events [TEAM] [--follow] [--since DUR]`: the team's event stream (docs/ARCHITECTURE.md,
//! "Activity and events"), one line an event: every change of a member's process state and
//! activity, every decision asked and answered, the team's end. `--follow` reads on from where it
//! got to each time the one watcher sees the stream change, so no event is shown twice.

use std::time::Duration;

use clap_complete::engine::ArgValueCandidates;

use crate::base::clock;
use crate::cli::args::parse_duration;
use crate::cli::complete;
use crate::cli::context::Context;
use crate::cli::output::{self, WithLine};
use crate::error::Result;
use crate::format::event::Event;
use crate::policy::{self, Action};
use crate::store::durable::private_dir;
use crate::store::events::{self, Offset};
use crate::store::watcher::{Watcher, named};

/// How often a follower with nothing to print looks whether its reader has gone.
const LOOK_AT_READER: Duration = Duration::from_secs(1);

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json): one object per line, each event as its line of teams/TEAM/events.jsonl:
  {"at", "member", "kind": "process", "state", "from"}
  {"at", "member", "kind": "activity", "state", "from", "why"}
  {"at", "member", "kind": "asked", "requestId", "what"}
  {"at", "member", "kind": "answered", "requestId", "allowed", "by"}
  {"at", "kind": "team-done"}
Text shows the time of day in UTC, the member, and what happened."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// The team [default: --team, SWARM_TEAM, the only team, or the only one running]
    // Its own id: sharing the global --team's would let an empty SWARM_TEAM fill it.
    #[arg(id = "team_arg", value_name = "TEAM", add = ArgValueCandidates::new(complete::teams))]
    pub(crate) team: Option<String>,

    /// Go on showing each event as it is written, until interrupted
    #[arg(short, long)]
    pub(crate) follow: bool,

    /// Only events of the last DURATION (seconds, or 30s, 2m, 1h)
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) since: Option<Duration>,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let team = ctx.team_or(args.team.as_deref())?;
    let config = team.load()?;
    policy::allow(&config, &ctx.caller(&config)?, Action::Read)?;
    let paths = team.paths();
    let since_ms = args.since.map(|since| {
        clock::now_ms().saturating_sub(u64::try_from(since.as_millis()).unwrap_or(u64::MAX))
    });
    let show = |event: &Event| -> Result<()> {
        let recent =
            since_ms.is_none_or(|since| clock::parse_ms(&event.at).is_some_and(|at| at >= since));
        if !recent {
            return Ok(());
        }
        ctx.event(&WithLine {
            json: event,
            line: event.line(),
        })
    };
    // Armed before the first read, so an event written between the two is not missed.
    let watcher = if args.follow {
        private_dir(paths.private_root(), paths.dir())?;
        Some(Watcher::arm(paths.dir())?)
    } else {
        None
    };
    let stream = paths.events();
    let stream_name = stream.file_name().unwrap_or_default().to_owned();
    let mut offset = Offset::default();
    loop {
        let (read, next) = events::read_from(paths, offset)?;
        read.iter().try_for_each(show)?;
        offset = next;
        let Some(watcher) = &watcher else {
            return Ok(());
        };
        // Woken now and then with nothing new, to end once nobody reads what it prints.
        watcher.wait(clock::deadline(LOOK_AT_READER), &named(&stream_name))?;
        if output::reader_gone() {
            return Ok(());
        }
    }
}
