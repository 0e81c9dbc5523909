//! `swarm wait NAME`: block until a member ends and print its completion notice. `swarm wait
//! --all`: block until every member launched has ended, printing each notice as it comes.
//! Exit 0 if every one completed, 1 if one failed, was killed or vanished, 4 on timeout, 3 for an
//! unknown member. `swarm wait --decision [TEAM]`: block until something waits for the lead's
//! side to decide (a permission ask or a plan) and print it; exit 0, or 4 on timeout. With
//! `--idle`, `swarm wait NAME` and `wait --all` wait until the member(s) are idle instead
//! (docs/ARCHITECTURE.md, "Activity and events"): exit 0, 1 when NAME ended first, 4 on timeout.

use std::time::Duration;

use clap_complete::engine::ArgValueCandidates;
use serde::Serialize;

use crate::base::clock;
use crate::base::names::Name;
use crate::cli::args::parse_duration;
use crate::cli::complete;
use crate::cli::context::Context;
use crate::cli::output::{self, Report, WithLine};
use crate::cli::render::{self, Ending};
use crate::cluster::fleet::Fleet;
use crate::dashboard::one_line;
use crate::error::{Error, ErrorKind, Result};
use crate::format::event::Activity;
use crate::format::structured::Structured;
use crate::member::liveness::{self, Awaited, Seen};
use crate::member::permission;
use crate::policy::{self, Action, Whereabouts};
use crate::store::activity;
use crate::store::team::Team;
use crate::store::watcher::Watcher;

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one document, the member's ending:
  {"name", "agentId", "state", "exitCode", "reason", "endedAt", "endedAtMs", "notice"}
"notice" is the task_notification the lead was sent ({"taskId", "status", "exitCode",
"summary", "outputFile", "durationMs", "timestamp", ...}), or null.
With --all, one such object per line, as each member ends.
With --idle, one document, the members waited for as they were once idle:
  [{"name", "activity", "activitySince", "activitySinceMs", "why"}]
(with --all, a member that ended meanwhile is left out: it is done).
With --decision, one document, what waits for a decision, oldest permission asks first:
  [{"kind", "requestId", "member", "what"}]
"kind" is "permission" (answer with `swarm permission allow|deny`) or "plan" (`swarm plan
approve|reject`); "what" is it in words, on one line."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// The member to wait for
    #[arg(
        value_name = "NAME",
        required_unless_present_any = ["all", "decision"],
        add = ArgValueCandidates::new(complete::members)
    )]
    pub(crate) name: Option<String>,

    /// Wait for every member that was launched, and each one spawned meanwhile, until none runs,
    /// printing each completion notice as it comes. Not for the member this runs in, nor for one
    /// never started (a lead with no command, a member added by init or join)
    #[arg(long, conflicts_with = "name")]
    pub(crate) all: bool,

    /// Wait until something waits for the lead's side to decide (a teammate's permission ask or
    /// plan) in TEAM [default: --team, SWARM_TEAM, the only team, or the only one running], and
    /// print it
    #[arg(
        long,
        value_name = "TEAM",
        num_args = 0..=1,
        default_missing_value = "",
        conflicts_with_all = ["name", "all"],
        add = ArgValueCandidates::new(complete::teams)
    )]
    pub(crate) decision: Option<String>,

    /// Wait until NAME is idle (its turn is over and it waits for input), or with --all until
    /// every member whose program runs is idle or has ended, and print them
    #[arg(long, conflicts_with = "decision")]
    pub(crate) idle: bool,

    /// Give up after DURATION (seconds, or 30s, 2m, 1h; exit status 4)
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) timeout: Option<Duration>,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    if let Some(team) = &args.decision {
        return decision(
            ctx,
            Some(team.as_str()).filter(|t| !t.is_empty()),
            args.timeout,
        );
    }
    let (team, named) = ctx.team_and_member(args.name.as_deref().filter(|_| !args.all))?;
    if args.idle {
        return idle(ctx, &team, named.as_ref().map(Name::as_str), args.timeout);
    }
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

/// `wait --decision`: wakes on the one watcher, on the team's inboxes and its folder (where the
/// answers are recorded), and looks again each time.
fn decision(ctx: &Context, team: Option<&str>, timeout: Option<Duration>) -> Result<()> {
    let team = ctx.team_or(team)?;
    let config = team.load()?;
    policy::allow(&config, &ctx.caller(&config)?, Action::Read)?;
    let paths = team.paths();
    let (inboxes, folder) = (paths.inboxes(), paths.dir().to_path_buf());
    let watcher = Watcher::arm_all(&[&inboxes, &folder])?;
    let fleet = ctx.fleet();
    let waiting = watcher.wait_for(timeout.and_then(clock::deadline), &|_| true, || {
        Ok(Some(waiting_decisions(&team, &fleet)?).filter(|w| !w.is_empty()))
    })?;
    match waiting {
        Some(waiting) => ctx.report(&Waiting(waiting)),
        None => Err(Error::timeout(format!(
            "nothing waits for a decision after {}s",
            timeout.unwrap_or_default().as_secs_f64()
        ))),
    }
}

/// `wait --idle`: wakes on the one watcher, on the team's folder (where activities and states are
/// recorded), until `named` (or, without it, every member whose program runs but the caller's own)
/// is idle; one that has ended is done with, and `named` ending first is a failure (exit 1).
fn idle(ctx: &Context, team: &Team, named: Option<&str>, timeout: Option<Duration>) -> Result<()> {
    let config = team.load()?;
    policy::allow(&config, &ctx.caller(&config)?, Action::Read)?;
    let own = match ctx.whereabouts()? {
        Whereabouts::Pane {
            team: at, member, ..
        } if *at == config.name => Some(member.clone()),
        _ => None,
    };
    let fleet = ctx.fleet();
    let watcher = Watcher::arm(team.paths().dir())?;
    let mut waiting_on = Vec::new();
    let look = || -> Result<Option<Result<Vec<IdleSeen>>>> {
        let observation = fleet.observe(team)?;
        let activities = activity::read(team.paths())?;
        let mut idle = Vec::new();
        let mut busy = Vec::new();
        for (member, seen) in observation.observed.members() {
            let wanted = match named {
                Some(name) => member.name == name,
                None => seen != Seen::NotStarted && own.as_deref() != Some(member.name.as_str()),
            };
            if !wanted {
                continue;
            }
            let current = activities.get(&member.name);
            if !seen.is_live() {
                if named.is_some() {
                    return Ok(Some(Err(Error::runtime(format!(
                        "{} ended ({}) before it was idle",
                        member.name,
                        seen.label()
                    )))));
                }
                continue;
            }
            match current.filter(|c| c.state == Activity::Idle) {
                Some(current) => idle.push(IdleSeen::of(&member.name, current)),
                None => busy.push(format!(
                    "{} ({})",
                    member.name,
                    current.map_or("no activity yet", |c| c.state.as_str())
                )),
            }
        }
        if busy.is_empty() {
            return Ok(Some(Ok(idle)));
        }
        waiting_on = busy;
        Ok(None)
    };
    match watcher.wait_for(timeout.and_then(clock::deadline), &|_| true, look)? {
        Some(Ok(idle)) => ctx.report(&Idle(idle)),
        Some(Err(ended)) => Err(ended),
        None => Err(Error::timeout(format!(
            "not idle after {}s: {}",
            timeout.unwrap_or_default().as_secs_f64(),
            waiting_on.join(", ")
        ))),
    }
}

/// A member found idle.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct IdleSeen {
    name: String,
    activity: &'static str,
    activity_since: Option<String>,
    activity_since_ms: u64,
    why: Option<String>,
}

impl IdleSeen {
    fn of(name: &str, current: &activity::Current) -> Self {
        Self {
            name: name.to_owned(),
            activity: current.state.as_str(),
            activity_since: render::time(Some(current.since)),
            activity_since_ms: current.since,
            why: current.why.clone(),
        }
    }
}

#[derive(Serialize)]
#[serde(transparent)]
struct Idle(Vec<IdleSeen>);

impl Report for Idle {
    fn text(&self) -> Result<()> {
        let now = clock::now_ms();
        for seen in &self.0 {
            let held = Duration::from_secs(now.saturating_sub(seen.activity_since_ms) / 1000);
            output::line(format!(
                "{} is idle ({}) for {}",
                seen.name,
                seen.why.as_deref().unwrap_or("-"),
                clock::span(held)
            ))?;
        }
        Ok(())
    }
}

/// What waits for the lead's side: the permission asks nobody has answered, then the plans unread
/// in the lead's inbox.
fn waiting_decisions(team: &Team, fleet: &Fleet) -> Result<Vec<Waits>> {
    let mut waiting: Vec<Waits> = permission::pending(team, fleet)?
        .iter()
        .map(|ask| Waits {
            kind: "permission",
            request_id: ask.request_id().to_owned(),
            member: ask.member().to_owned(),
            what: one_line(&format!(
                "{} asks to use {}: {}",
                ask.member(),
                ask.tool(),
                ask.summary()
            )),
        })
        .collect();
    let config = team.load()?;
    let lead = config.lead_name();
    for message in team.mailbox(lead).peek()? {
        if let Some(plan @ Structured::PlanApprovalRequest(_)) = message.structured() {
            waiting.push(Waits {
                kind: "plan",
                request_id: plan.request_id().unwrap_or_default().to_owned(),
                member: message.from().to_owned(),
                what: one_line(&plan.in_words(message.from(), lead)),
            });
        }
    }
    Ok(waiting)
}

/// One thing waiting for a decision.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Waits {
    kind: &'static str,
    request_id: String,
    member: String,
    what: String,
}

#[derive(Serialize)]
#[serde(transparent)]
struct Waiting(Vec<Waits>);

impl Report for Waiting {
    fn text(&self) -> Result<()> {
        for waits in &self.0 {
            output::line(format!(
                "{}  {}  {}",
                waits.kind, waits.request_id, waits.what
            ))?;
        }
        Ok(())
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
