//! `swarm watch [NAME|--all]`: follow messages as they arrive, until interrupted. It only looks,
//! unless `--consume` is given for your own inbox.

use clap_complete::engine::ArgValueCandidates;
use serde_json::json;

use crate::cli::complete;
use crate::cli::context::Context;
use crate::cli::output::WithLine;
use crate::cli::render;
use crate::error::Result;
use crate::format::signature::Verdict;
use crate::member::verify::Judges;
use crate::policy::{self, Action};
use crate::store::follow::{Arrival, Follower, Scope};
use crate::store::watcher::Watcher;

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one line per message, as `swarm inbox` prints it, "to" first:
  {"to", "from", "text", "structured", "timestamp", "msg_id", ...}
"to" is the member whose inbox it reached, or "*" for a broadcast, shown once."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// Whose inbox to follow [default: yours]
    #[arg(value_name = "NAME", conflicts_with = "all", add = ArgValueCandidates::new(complete::members))]
    pub(crate) name: Option<String>,

    /// Follow every inbox of the team
    #[arg(long)]
    pub(crate) all: bool,

    /// Consume what arrives (your own inbox only), as `recv` does
    #[arg(long, conflicts_with = "all")]
    pub(crate) consume: bool,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let (team, named) = ctx.team_and_member(args.name.as_deref().filter(|_| !args.all))?;
    let config = team.load()?;
    let caller = ctx.caller(&config)?;
    let target = match (named, args.all) {
        (_, true) => None,
        (Some(name), false) => Some(name),
        (None, false) => Some(ctx.member_of(&config)?.name().clone()),
    };
    if let Some(name) = &target {
        policy::require_inbox(&config, name.as_str())?;
        ctx.fleet().inbox_is_here(&config, name.as_str())?;
    }
    policy::allow(&config, &caller, Action::Read)?;
    if let Some(owner) = target.as_ref().filter(|_| args.consume) {
        policy::allow_own(&caller, Action::Consume, owner.as_str()).map_err(|err| {
            err.with_hint(
                "drop --consume to follow someone else's inbox without taking their messages",
            )
        })?;
    }
    let scope = match &target {
        Some(name) => {
            let owner = policy::inbox_owner(&config, name.as_str())
                .ok_or_else(|| config.unknown_member(name.as_str()))?;
            team.mailbox(owner).ensure()?;
            Scope::One(owner.to_owned())
        }
        None => Scope::All,
    };

    let mut follower = Follower::start(&team, &config, scope, args.consume)?;
    let [inboxes, history] = follower.dirs();
    let watcher = Watcher::arm_all(&[&inboxes, &history])?;
    let scope = follower.scope().clone();
    let mut judges = Judges::new(&team, &config);
    loop {
        // With --consume, each message leaves the inbox only once it is shown, and its member's
        // supervisor is told after.
        let mut shown = Vec::new();
        follower.arrivals(|arrival| {
            let verdict = judges.judge(arrival);
            show(ctx, arrival, verdict)?;
            if args.consume {
                shown.push(arrival.clone());
            }
            Ok(())
        })?;
        judges.took(&shown);
        watcher.wait(None, &|file| scope.covers(file))?;
    }
}

fn show(ctx: &Context, arrival: &Arrival, verdict: Verdict) -> Result<()> {
    ctx.event(&WithLine {
        json: render::json(
            &arrival.message,
            verdict,
            &[("to", json!(arrival.addressee()))],
        ),
        line: render::arrival(&arrival.message, arrival.addressee(), verdict),
    })
}
