//! The node's answers to other hosts' requests (docs/ARCHITECTURE.md, "Roster, control and status
//! across hosts"): start a team's members here, stop some, read a log's end, take the team down
//! here. Each runs through the same code a command on this host would (the launcher, `stop`,
//! `down`, the log reader); the caller's permission was checked on its own host.

use std::ffi::OsStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;

use crate::base::runtime::OffRuntime;
use crate::cluster::control::{
    Answer, DOWN, DownReply, DownRequest, FOLLOW_HOLD, LOG, LOG_TAIL_MAX, LogReply, LogRequest,
    RESUME, ResumeReply, ResumeRequest, SIGN, START, STOP, StartReply, StartRequest, StopReply,
    StopRequest,
};
use crate::cluster::fleet::Fleet;
use crate::cluster::node::shared::Node;
use crate::cluster::node::sign;
use crate::cluster::subjects;
use crate::error::{Error, Result};
use crate::format::config::Member;
use crate::launch::environment;
pub(super) use crate::launch::layout::{self, Layout};
use crate::launch::lock::LaunchLock;
use crate::launch::panes::{self, Destination};
use crate::launch::prepare::PanePlan;
use crate::launch::rerun;
pub(super) use crate::launch::tmux::{Server, Tmux};
pub(super) use crate::member::down::{self, Down, Report};
use crate::member::ending;
use crate::member::liveness::Observed;
pub(super) use crate::member::log_follow::{LogFollow, Step};
use crate::member::logfile::Follower;
use crate::member::resume;
use crate::member::stop;
use crate::policy::PERSON;
use crate::store::team::Team;
use crate::store::watcher::AsyncWatcher;

/// Answers every request for this host until the node stops.
pub(crate) async fn serve(node: Arc<Node>) -> Result<()> {
    let mut requests = node
        .client
        .subscribe(subjects::control_all(node.name.as_str()))
        .await
        .map_err(|err| Error::runtime(format!("cannot listen for requests: {err}")))?;
    while let Some(message) = requests.next().await {
        let node = Arc::clone(&node);
        tokio::spawn(async move {
            let Some(reply) = message.reply else {
                return;
            };
            let verb = message.subject.rsplit('.').next().unwrap_or("").to_owned();
            let payload = message.payload;
            let answer = if verb == LOG {
                encode(match decode(&payload) {
                    Ok(request) => log(&node, request).await,
                    Err(err) => Err(err),
                })
            } else {
                node.off_runtime(move |node| answer(node, &verb, &payload))
                    .await
            };
            if let Err(err) = node.client.publish(reply, answer.into()).await {
                tracing::warn!(target: "swarm::node", "swarm node {}: cannot answer a request: {err}", node.name);
            }
        });
    }
    Ok(())
}

fn decode<Q: serde::de::DeserializeOwned>(payload: &[u8]) -> Result<Q> {
    serde_json::from_slice(payload).map_err(|err| {
        Error::usage(format!("a request this node cannot read: {err}"))
            .with_hint("run the same swarm version on every host")
    })
}

fn encode<A: serde::Serialize>(result: Result<A>) -> Vec<u8> {
    serde_json::to_vec(&Answer::of(result)).unwrap_or_default()
}

fn answer(node: &Node, verb: &str, payload: &[u8]) -> Vec<u8> {
    fn run<Q: serde::de::DeserializeOwned, A: serde::Serialize>(
        payload: &[u8],
        act: impl FnOnce(Q) -> Result<A>,
    ) -> Vec<u8> {
        encode(decode(payload).and_then(act))
    }
    match verb {
        START => run(payload, |request| start(node, request)),
        RESUME => run(payload, |request| resume_members(node, request)),
        STOP => run(payload, |request| stop_members(node, request)),
        DOWN => run(payload, |request| take_down(node, request)),
        SIGN => run(payload, |request| sign::sign(node, request)),
        other => serde_json::to_vec(&Answer::<()>::of(Err(Error::usage(format!(
            "this node does not know the request {other:?}"
        )))))
        .unwrap_or_default(),
    }
}

/// Creates the team here, its config.json mirrored from the roster `up` sent, and starts this
/// host's members in its own tmux, as `up` starts local ones.
fn start(node: &Node, request: StartRequest) -> Result<StartReply> {
    let StartRequest {
        mut config,
        panes: mut plans,
        layout,
    } = request;
    at_home(node, &mut plans);
    let name = config.name.clone();
    let layout = parse_layout(layout.as_deref())?;
    let _launch = LaunchLock::take(&node.home, &name)?;
    if let Ok(team) = Team::open(&node.home, &name)
        && let Ok(observed) = Observed::take(&team, &Fleet::of(&node.home))
    {
        refuse_if_running_here(&observed)?;
    }
    // What the previous run left this host's members goes to history; this run's first messages
    // (written on the lead's host from `createdAt` on) may be here already.
    if let Ok(previous) = Team::open(&node.home, &name) {
        // A run interrupted here (`up --fresh` of a team its members here were lost from) is
        // given up as `up` gives it up on its own host: what they held goes back to pending.
        if let Err(err) = ending::give_up_interrupted(&previous, &Fleet::of(&node.home)) {
            tracing::warn!(target: "swarm::node",
                "team {name}: tasks of members that ended here are not all returned yet: {err}");
        }
        let here = node.name.as_str();
        rerun::archive_previous_run(
            &previous,
            |member| member.host.as_deref() == Some(here),
            Some(config.created_at),
        )?;
    }
    config.tmux = None;
    config.launching = !plans.is_empty();
    // The prompts were queued on the lead's host, signed there; they cross hosts as messages.
    let team = Team::create(&node.home, &config, true)?;
    team.mailbox(PERSON).ensure()?;
    place(node, &team, &plans, layout.as_ref(), ending::LAUNCH_FAILED)?;
    Ok(StartReply {
        members: records_here(node, &team)?,
    })
}

/// Resumes this host's interrupted members of a team the lead's host resumes (docs/
/// ARCHITECTURE.md, "Resuming a team"), through the same `member::resume` as a resume of a team
/// on one host: each one's command made here, where its session's files are, with the new key its
/// plan carries; the lead's unread messages here signed again with it. Placed in the node's own
/// tmux, as `start` places them.
fn resume_members(node: &Node, request: ResumeRequest) -> Result<ResumeReply> {
    let ResumeRequest {
        team: name,
        panes: mut plans,
        layout,
        answer_by_ms,
    } = request;
    if answer_by_ms.is_some_and(|by| crate::base::clock::now_ms() > by) {
        return Err(Error::usage(format!(
            "a resume of team {name} came after its sender stopped waiting for it: not carried out"
        )));
    }
    if plans.is_empty() {
        return Err(Error::usage(format!(
            "a resume of team {name} named no member here"
        )));
    }
    at_home(node, &mut plans);
    let layout = parse_layout(layout.as_deref())?;
    let _launch = LaunchLock::take(&node.home, &name)?;
    let team = Team::open(&node.home, &name)?;
    let fleet = Fleet::of(&node.home);
    let observed = Observed::take(&team, &fleet)?;
    refuse_if_running_here(&observed)?;
    let resumed = resume::resume_handed(&team, &fleet, &observed, plans, &|key| {
        std::env::var(key).ok()
    })?;
    let names: Vec<String> = resumed.panes.iter().map(|plan| plan.name.clone()).collect();
    // A resume that fails leaves them as interrupted as it found them.
    place(
        node,
        &team,
        &resumed.panes,
        layout.as_ref(),
        ending::RESUME_FAILED,
    )
    .map_err(|err| ending::resume_failed(&team, &names, err))?;
    Ok(ResumeReply {
        members: records_here(node, &team)?,
        notes: resumed.notes,
    })
}

/// The plans were made on the lead's host, with its home; a member here works in this one, where
/// its inbox is.
fn at_home(node: &Node, plans: &mut [PanePlan]) {
    for plan in plans {
        plan.env.insert(
            environment::HOME_VAR.to_owned(),
            node.home.root().display().to_string(),
        );
    }
}

fn parse_layout(layout: Option<&str>) -> Result<Option<Layout>> {
    layout.map(Layout::parse).transpose().map_err(Error::usage)
}

/// A team with members running here is not started (or resumed) here again.
fn refuse_if_running_here(observed: &Observed) -> Result<()> {
    let live: Vec<&str> = observed.live_here().collect();
    if live.is_empty() {
        return Ok(());
    }
    let name = &observed.config.name;
    Err(Error::usage(format!(
        "team {name} is already running here ({})",
        live.join(", ")
    ))
    .with_hint(format!("stop it first with `swarm down {name}`")))
}

/// Places `plans` in the node's own tmux, as `up` places a team's panes, then marks the team
/// placed; a failure stops what was placed, its ending's reason `failed`.
fn place(
    node: &Node,
    team: &Team,
    plans: &[PanePlan],
    layout: Option<&Layout>,
    failed: &str,
) -> Result<()> {
    if plans.is_empty() {
        return Ok(());
    }
    let destination = Destination {
        tmux: Tmux::new(Server::from_arg(node.socket.as_deref())),
        inside: false,
    };
    let placed = destination.tmux.check_version().and_then(|_| {
        panes::start_team(
            &destination,
            team,
            plans,
            layout.unwrap_or(&layout::DEFAULT),
            false,
        )
    });
    team.update(|config| {
        config.launching = false;
        Ok(())
    })?;
    if let Err(err) = placed {
        let names: Vec<String> = plans.iter().map(|plan| plan.name.clone()).collect();
        return Err(
            match stop::stop(team, &Fleet::of(&node.home), &names, failed) {
                Ok(_) => err,
                Err(stuck) => err.with_note(format!("cannot stop what was placed: {stuck}")),
            },
        );
    }
    Ok(())
}

/// The records of the team's members this host runs, as its config.json has them now.
fn records_here(node: &Node, team: &Team) -> Result<Vec<Member>> {
    Ok(team.load()?.members_on(node.name.as_str()).collect())
}

fn stop_members(node: &Node, request: StopRequest) -> Result<StopReply> {
    let team = Team::open(&node.home, &request.team)?;
    let stopped = stop::stop(
        &team,
        &Fleet::of(&node.home),
        &request.members,
        &request.reason,
    )?;
    Ok(StopReply { stopped })
}

/// The end of a member's log, or, following, what comes after the place asked for: at once when
/// there is some, else when the log grows or the member ends, through the one watcher, or with
/// nothing after [`FOLLOW_HOLD`].
async fn log(node: &Arc<Node>, request: LogRequest) -> Result<LogReply> {
    let after = request.after;
    let opened = node
        .off_runtime(move |node| -> Result<_> {
            let team = Team::open(&node.home, &request.team)?;
            team.load()?.require_member(&request.member)?;
            let follow = LogFollow::new(team, Box::new(Fleet::of(&node.home)), &request.member);
            let Some(at) = after else {
                let (follower, tail) = Follower::start(follow.log(), request.lines)?;
                return Ok(Err(LogReply {
                    tail: tail.map(|tail| tail[tail.len().saturating_sub(LOG_TAIL_MAX)..].to_vec()),
                    position: Some(follower.position()),
                    ended: false,
                }));
            };
            Ok(Ok((Follower::resume(follow.log(), at)?, follow)))
        })
        .await?;
    let (mut follower, follow) = match opened {
        Ok(following) => following,
        Err(tail) => return Ok(tail),
    };
    let follow = Arc::new(follow);
    let hold = Instant::now() + FOLLOW_HOLD;
    let mut watcher: Option<AsyncWatcher> = None;
    loop {
        let looked = Arc::clone(&follow);
        let (back, step) = node
            .off_runtime(move |_| {
                let step = looked.step(&mut follower, LOG_TAIL_MAX);
                (follower, step)
            })
            .await;
        follower = back;
        let (bytes, ended) = match step? {
            Step::Fresh(bytes) => (bytes, false),
            Step::Ended(bytes) => (bytes, true),
            Step::Quiet => {
                let Some(watcher) = &mut watcher else {
                    // Armed after a first look found nothing, then looked again: nothing written
                    // in between is missed, and a busy log never pays for a watch.
                    let made = Arc::clone(&follow);
                    let dirs = node.off_runtime(move |_| made.dirs()).await?;
                    watcher = Some(AsyncWatcher::arm_all(&[&dirs[0], &dirs[1]])?);
                    continue;
                };
                if Instant::now() >= hold {
                    (Vec::new(), false)
                } else {
                    watcher
                        .wait(Some(hold), &|file: &OsStr| follow.relevant(file))
                        .await?;
                    continue;
                }
            }
        };
        return Ok(LogReply {
            tail: Some(bytes),
            position: Some(follower.position()),
            ended,
        });
    }
}

fn take_down(node: &Node, request: DownRequest) -> Result<DownReply> {
    let team = Team::open(&node.home, &request.team)?;
    // Nothing is stopped while this node starts the team's members here; the `down` that asks
    // waited for the `up` that asked for that start, so one still under way is another run's.
    let held = LaunchLock::try_take_to_take_down(&node.home, &request.team)?.map_err(|holder| {
        Error::usage(format!(
            "team {} is {} here; nothing of it was stopped",
            request.team,
            holder.doing()
        ))
    })?;
    let mut lines = Vec::new();
    down::down(
        &team,
        &Fleet::of(&node.home),
        &held,
        Down {
            timeout: Duration::from_millis(request.timeout_ms),
            force: request.force,
        },
        |report| {
            // Whom it waits for is said where `down` runs, before it asks this node.
            if !matches!(report, Report::Waiting { .. }) {
                lines.push(report.line());
            }
            Ok(())
        },
    )?;
    Ok(DownReply {
        lines,
        members: records_here(node, &team)?,
    })
}
