//! A member's end: its final state in config.json and the `task_notification` to the lead, written
//! exactly once per ending. The supervisor records it; `stop` and `down` record it only when the
//! supervisor is gone. Both go through [`record`], which checks under the config lock whether the
//! ending is already recorded, and writes the notice to the lead while still holding that lock.
//! Then, outside that lock and on every record (so a second record finishes what a crash left),
//! the member's open tasks return to pending with no owner, and the lead gets a plain message
//! naming them (docs/ARCHITECTURE.md, "Task list"). A release that still did not finish is
//! finished by the next command that touches the board ([`finish_releases`]).

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Duration;

use crate::base::{clock, ids};
use crate::error::{Error, Result};
use crate::format::config::INTERRUPTIONS;
pub use crate::format::config::{Member, State, TeamConfig};
use crate::format::message::InboxMessage;
pub use crate::format::structured::{Structured, TaskNotification, TaskStatus};
use crate::format::task::Task;
use crate::member::reach::Reach;
use crate::protocol::rules;
use crate::store::tasks::TaskList;
use crate::store::team::Team;

/// How a member's program ended.
#[derive(Debug, Clone)]
pub(crate) struct Ending {
    pub(crate) state: State,
    pub(crate) exit_code: Option<i32>,
    /// Why swarm ended it: stop, timeout, shutdown, hangup, signal; `None` if it ended on its own.
    pub(crate) reason: Option<String>,
    pub(crate) worktree: Option<String>,
}

/// The reason recorded for a member that shut down because the lead asked: an approved shutdown
/// request (exited, completed), or one `down` stopped when it had not ended in time (killed).
pub(crate) use crate::format::config::SHUTDOWN;

/// The reason recorded for a member `stop` ended.
pub const STOP: &str = "stop";

/// The reason recorded for a member stopped because the launch (or resume) it was part of failed.
pub const LAUNCH_FAILED: &str = "launch failed";

/// The reason recorded for a member of a resume that failed: stopped if it was placed, recorded
/// so if it was not. An interruption: the run stays as resumable as it was.
pub const RESUME_FAILED: &str = "resume failed";

/// After a resume of `names` failed with `err`: records each of them whose record the resume
/// cleared and that never started (state none) as ended killed, reason [`RESUME_FAILED`], so the
/// team stays interrupted and a resume again brings it back, with its conversation, mail and
/// tasks. Returns `err`, with a note when that record could not be written.
pub fn resume_failed(team: &Team, names: &[String], err: Error) -> Error {
    match record_resume_failed(team, names) {
        Ok(()) => err,
        Err(stuck) => err.with_note(format!("cannot record the resume failed: {stuck}")),
    }
}

fn record_resume_failed(team: &Team, names: &[String]) -> Result<()> {
    let config = team.load()?;
    for name in names {
        if config.member(name).is_some_and(|m| m.state.is_none()) {
            let ending = Ending {
                state: State::Killed,
                exit_code: None,
                reason: Some(RESUME_FAILED.to_owned()),
                worktree: None,
            };
            record(team, name, &ending)?;
        }
    }
    Ok(())
}

/// The reason recorded for a member stopped because its budget, or the team's, was spent.
pub const BUDGET: &str = "budget";

/// Whether `member` ended because swarm was asked to end it (`stop`, `down`), not on its own.
pub fn was_stopped(member: &Member) -> bool {
    member.state == Some(State::Killed)
        && matches!(member.reason.as_deref(), Some(STOP | SHUTDOWN | BUDGET))
}

/// Whether `member`'s recorded ending was an interruption (`Member::was_interrupted`: a hangup,
/// or a signal from outside swarm).
pub fn was_interrupted(member: &Member) -> bool {
    member.was_interrupted()
}

fn is_interruption(reason: Option<&str>) -> bool {
    reason.is_some_and(|reason| INTERRUPTIONS.contains(&reason))
}

/// Signals that mean the program crashed rather than was stopped.
const CRASH_SIGNALS: [i32; 5] = [
    libc_signal(nix::sys::signal::Signal::SIGSEGV),
    libc_signal(nix::sys::signal::Signal::SIGABRT),
    libc_signal(nix::sys::signal::Signal::SIGBUS),
    libc_signal(nix::sys::signal::Signal::SIGILL),
    libc_signal(nix::sys::signal::Signal::SIGFPE),
];

const fn libc_signal(signal: nix::sys::signal::Signal) -> i32 {
    signal as i32
}

impl Ending {
    /// Classifies an exit status: 0 → exited, another code → failed, a signal → killed (a crash
    /// signal → failed). Anything swarm itself ended (`reason`) is killed.
    pub(crate) fn from_status(status: ExitStatus, reason: Option<String>) -> Self {
        let (exit_code, by_signal) = match (status.code(), status.signal()) {
            (Some(code), _) => (code, None),
            (None, Some(signal)) => (128 + signal, Some(signal)),
            (None, None) => (-1, None),
        };
        let crashed = by_signal.is_some_and(|signal| CRASH_SIGNALS.contains(&signal));
        let state = if reason.is_some() || (by_signal.is_some() && !crashed) {
            State::Killed
        } else if exit_code == 0 && by_signal.is_none() {
            State::Exited
        } else {
            State::Failed
        };
        let reason = reason.or_else(|| (state == State::Killed).then(|| "signal".to_owned()));
        Self {
            state,
            exit_code: Some(exit_code),
            reason,
            worktree: None,
        }
    }

    /// A program ended because its shutdown request was approved on its behalf (wrapper): a
    /// successful end, as Claude Code counts a teammate that approved its shutdown ("bob has shut
    /// down"), whatever status the signal that ended it left. The exit code is the real one. One
    /// that had to be killed (it ignored SIGTERM for the grace) is killed, as `down` records a
    /// teammate it had to stop: one ending, one record, whatever the protocol.
    pub(crate) fn shut_down(status: ExitStatus) -> Self {
        let exit_code = match (status.code(), status.signal()) {
            (Some(code), _) => code,
            (None, Some(signal)) => 128 + signal,
            (None, None) => -1,
        };
        if status.signal() == Some(libc_signal(nix::sys::signal::Signal::SIGKILL)) {
            return Self::from_status(status, Some(SHUTDOWN.to_owned()));
        }
        Self {
            state: State::Exited,
            exit_code: Some(exit_code),
            reason: Some(SHUTDOWN.to_owned()),
            worktree: None,
        }
    }

    pub(crate) fn status(&self) -> TaskStatus {
        match self.state {
            State::Exited => TaskStatus::Completed,
            State::Killed => TaskStatus::Killed,
            _ => TaskStatus::Failed,
        }
    }
}

/// Who hears of a member's end, and what its notice says of it, read from config.json as it was
/// recorded.
#[derive(Debug, Clone)]
struct EndingNoticeFacts {
    /// The lead, unless the member is the lead.
    lead: Option<String>,
    /// The member's task id, made of its own name ([`rules::task_id`]).
    task_id: String,
    started_at: Option<u64>,
    color: Option<String>,
}

/// Records the ending and notifies the lead; `None` if this ending was already recorded. Either
/// way, the member's open tasks then return to pending ([`release_tasks`]).
///
/// The notice reaches the lead's inbox before the final state reaches config.json, both under the
/// config lock: whoever sees the member ended (`wait`, `status`) finds the notice already there.
/// A failure between the two leaves the member unrecorded, and recording it again (the supervisor
/// retries) delivers the same notice, recognised by its id, once.
pub(crate) fn record(team: &Team, name: &str, ending: &Ending) -> Result<Option<TaskNotification>> {
    record_as_judged(team, name, ending, None)
}

/// [`record`], only while the member's record is still `judged` (when given), every field: one
/// written since is another run's, or a run someone else has ended.
fn record_as_judged(
    team: &Team,
    name: &str,
    ending: &Ending,
    judged: Option<&Member>,
) -> Result<Option<TaskNotification>> {
    let judged = judged.map(|member| serde_json::to_value(member).unwrap_or_default());
    let (notice, told) = team.update_then(
        |config| {
            let lead = config.lead_name().to_owned();
            let team_name = config.name.clone();
            let member = config.remaining_member_mut(name)?;
            let told = EndingNoticeFacts::of(member, &team_name, &lead);
            if judged
                .as_ref()
                .is_some_and(|judged| *judged != serde_json::to_value(&*member).unwrap_or_default())
            {
                return Ok((None, told));
            }
            let to = told.lead.clone();
            if member.state.is_some_and(State::is_final) {
                // Recorded already. A notice lost to a crash, or to another tool's deleting it
                // unread, is delivered again (its id keeps it from arriving twice).
                if let (Some(notice), Some(lead)) = (&member.notice, &to) {
                    // Kept in config.json, which any member can rewrite: it goes out as this
                    // member's, whatever task its record now names.
                    let notice = TaskNotification {
                        task_id: told.task_id.clone(),
                        ..notice.clone()
                    };
                    let id = notice_id(&notice, member.started_at);
                    deliver(team, name, lead, &notice, member.color.as_deref(), &id)?;
                }
                return Ok((None, told));
            }
            let now = clock::now_ms();
            let started = member.started_at.unwrap_or(now);
            let duration = Duration::from_millis(now.saturating_sub(started));
            let notice = TaskNotification {
                task_id: told.task_id.clone(),
                status: ending.status(),
                exit_code: ending.exit_code,
                summary: with_restarts(summary(name, ending, duration), member.restarts),
                output_file: member.log_file.clone(),
                duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
                worktree_path: ending.worktree.clone(),
                reason: ending.reason.clone(),
                timestamp: clock::timestamp_now(),
            };
            if let Some(lead) = &to {
                let id = notice_id(&notice, member.started_at);
                deliver(team, name, lead, &notice, member.color.as_deref(), &id)?;
            }
            member.state = Some(ending.state);
            member.exit_code = ending.exit_code;
            member.reason.clone_from(&ending.reason);
            member.ended_at = Some(now);
            member.is_active = Some(false);
            member.worktree_path.clone_from(&ending.worktree);
            member.notice = Some(notice.clone());
            Ok((Some(notice), told))
        },
        |_| Ok(()),
    )?;
    // An interrupted run keeps its tasks for the run that resumes it.
    if !(ending.state == State::Killed && is_interruption(ending.reason.as_deref())) {
        release_tasks(team, name, &told)?;
    }
    Ok(notice)
}

impl EndingNoticeFacts {
    /// What the ending of `member` of team `team` led by `lead` tells, and whom.
    fn of(member: &Member, team: &str, lead: &str) -> Self {
        Self {
            lead: (member.name != lead).then(|| lead.to_owned()),
            task_id: rules::task_id(&member.name, team),
            started_at: member.started_at,
            color: member.color.clone(),
        }
    }
}

/// The reason recorded for a member whose run vanished (its supervisor or tmux server gone
/// without a record) when that run is given up ([`give_up_interrupted`]).
pub const VANISHED: &str = "vanished";

/// Gives up an interrupted run (`up --fresh`): a member of this machine whose run vanished with no
/// ending recorded gets one (killed, [`VANISHED`]), and every interrupted member's open tasks go
/// back to pending, the lead told as for any ending. Returns the tasks released.
pub fn give_up_interrupted(team: &Team, reach: &dyn Reach) -> Result<Vec<Task>> {
    record_vanished(team, reach, VANISHED)?;
    finish_releases(team, reach, &team.load()?, true)
}

/// The reason a node records for a member of its host whose run vanished with no ending recorded,
/// found so when the node starts ([`record_lost`]): an interruption, as a hangup is.
pub const LOST: &str = "lost";

/// Records what a node found when it started (docs/ARCHITECTURE.md, "Resuming a team"): each
/// member of this machine whose run vanished with no ending recorded (its supervisor gone: a
/// reboot, a crash) ends killed, reason [`LOST`], an interruption that keeps its tasks and can be
/// resumed, so the other hosts, which only see records, see it interrupted too. Judged as every
/// command judges it ([`Observed`](crate::member::liveness::Observed)), and recorded only while
/// its record is the one judged, so a run started meanwhile is never ended. Returns their names.
pub fn record_lost(team: &Team, reach: &dyn Reach) -> Result<Vec<String>> {
    record_vanished(team, reach, LOST)
}

/// Records an ending, killed with `reason`, for each member of this machine whose interrupted run
/// has none recorded. Returns their names.
fn record_vanished(team: &Team, reach: &dyn Reach, reason: &str) -> Result<Vec<String>> {
    let observed = crate::member::liveness::Observed::take(team, reach)?;
    let unrecorded = observed
        .interrupted_members()
        .filter(|m| !m.state.is_some_and(State::is_final) && observed.is_here(m));
    let mut recorded = Vec::new();
    for member in unrecorded {
        let ending = Ending {
            state: State::Killed,
            exit_code: None,
            reason: Some(reason.to_owned()),
            worktree: member.worktree_path.clone(),
        };
        // A run started meanwhile (a resume) rewrote the record: it is not this one's to end.
        if record_as_judged(team, &member.name, &ending, Some(member))?.is_some() {
            recorded.push(member.name.clone());
        }
    }
    Ok(recorded)
}

/// Finishes every release of tasks an ending left undone (docs/ARCHITECTURE.md, "Task list"): a
/// member recorded as ended, whose ending this machine records (it runs here, as `reach` tells),
/// that still owns open tasks has them returned to pending with no owner, and the lead is told
/// once, as [`record`] does. So tasks never stay with a member that ended, whatever stopped its
/// release then (a crash, a lock held too long, a full disk). Returns the tasks released.
/// An interrupted member ([`was_interrupted`]) keeps its tasks for the run that resumes it while
/// nothing of its team runs, unless `interrupted_too`: the run is given up (`up --fresh`).
pub fn finish_releases(
    team: &Team,
    reach: &dyn Reach,
    config: &TeamConfig,
    interrupted_too: bool,
) -> Result<Vec<Task>> {
    let sites = reach.sites(config);
    let ended: Vec<&str> = config
        .members
        .iter()
        .filter(|m| m.state.is_some_and(State::is_final) && sites.is_here(m))
        .map(|m| m.name.as_str())
        .collect();
    if ended.is_empty() {
        return Ok(Vec::new());
    }
    let list = TaskList::new(team.home(), team.name());
    let mut released = Vec::new();
    // Looked at only for an interrupted holder: while the rest of the team runs on, its tasks are
    // not waiting for a resume, and go back like any ended member's.
    let team_runs = std::cell::LazyCell::new(|| {
        crate::member::liveness::Observed::take(team, reach).is_ok_and(|seen| seen.running())
    });
    for name in list.holders(&ended)? {
        let member = config.member(name).expect("one of the roster's");
        if was_interrupted(member) && !interrupted_too && !*team_runs {
            continue;
        }
        let told = EndingNoticeFacts::of(member, &config.name, config.lead_name());
        let tasks = release_tasks(team, name, &told)?;
        if !tasks.is_empty() {
            tracing::info!(
                "returned {name}'s open tasks, which its ending left with it, to pending: {}",
                tasks
                    .iter()
                    .map(|t| t.id().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        released.extend(tasks);
    }
    Ok(released)
}

/// Returns the ended member's open tasks to pending with no owner and tells the lead which, in a
/// plain message from the member put in the lead's inbox under those tasks' locks, before they
/// are written: a crash between the two leaves the tasks owned, and the next record (or
/// [`finish_releases`]) releases them and finds the message already sent (its id is derived from
/// the ending and the tasks). Under those locks, config.json must still show this ending: a member
/// that runs again meanwhile keeps what it holds.
fn release_tasks(team: &Team, name: &str, told: &EndingNoticeFacts) -> Result<Vec<Task>> {
    let list = TaskList::new(team.home(), team.name());
    list.release_owned(name, |tasks| {
        let still_ended = team.load()?.member(name).is_some_and(|m| {
            m.state.is_some_and(State::is_final) && m.started_at == told.started_at
        });
        if !still_ended {
            return Ok(false);
        }
        let Some(lead) = &told.lead else {
            return Ok(true);
        };
        let ids: Vec<String> = tasks.iter().map(|t| t.id().to_string()).collect();
        let text = released_text(name, tasks);
        let summary = format!("{name}'s open tasks are pending again: {}", ids.join(", "));
        let mut message = InboxMessage::new(name, &text, Some(&summary), told.color.as_deref());
        message.set_id(&ids::derived(&format!(
            "{}\0{}\0released\0{}",
            told.task_id,
            told.started_at.unwrap_or_default(),
            ids.join(",")
        )));
        deliver_once(team, lead, message).map(|()| true)
    })
}

/// "bob ended with open tasks; they are pending again, with no owner: 3 (Write the parser), …".
fn released_text(name: &str, tasks: &[Task]) -> String {
    let list: Vec<String> = tasks
        .iter()
        .map(|t| format!("{} ({})", t.id(), t.subject()))
        .collect();
    format!(
        "{name} ended with open tasks; they are pending again, with no owner: {}",
        list.join(", ")
    )
}

/// Puts the notice in the lead's inbox unless it is there, or was delivered already.
fn deliver(
    team: &Team,
    name: &str,
    lead: &str,
    notice: &TaskNotification,
    color: Option<&str>,
    id: &str,
) -> Result<()> {
    let text = Structured::TaskNotification(notice.clone()).to_text();
    let mut message = InboxMessage::new(name, &text, Some(&notice.summary), color);
    message.set_id(id);
    deliver_once(team, lead, message)
}

/// Puts `message` in `to`'s inbox unless one with its id is there, or was delivered already.
fn deliver_once(team: &Team, to: &str, message: InboxMessage) -> Result<()> {
    let mailbox = team.mailbox(to);
    let id = message.id().into_owned();
    if mailbox.history()?.iter().any(|m| m.id() == id) {
        return Ok(());
    }
    mailbox.update(|unread| {
        if unread.iter().any(|m| m.id() == id) {
            return Ok(((), false));
        }
        unread.push(message.clone());
        Ok(((), true))
    })
}

/// One id per ending, so a notice written again after a crash is recognised.
fn notice_id(notice: &TaskNotification, started: Option<u64>) -> String {
    ids::derived(&format!(
        "{}\0{}",
        notice.task_id,
        started.unwrap_or_default()
    ))
}

/// "bob completed (exit 0) after 12.3s", "bob was killed (timeout) after 30.0s".
pub(crate) fn summary(name: &str, ending: &Ending, duration: Duration) -> String {
    let after = clock::human_duration(duration);
    let code = ending
        .exit_code
        .map(|code| format!("exit {code}"))
        .unwrap_or_default();
    match ending.status() {
        TaskStatus::Completed if ending.reason.is_some() => {
            format!("{name} has shut down (shutdown request approved, {code}) after {after}")
        }
        TaskStatus::Completed => format!("{name} completed ({code}) after {after}"),
        TaskStatus::Failed => format!("{name} failed ({code}) after {after}"),
        TaskStatus::Killed => format!(
            "{name} was killed ({}) after {after}",
            ending.reason.as_deref().unwrap_or("signal")
        ),
    }
}

/// A summary that tells, too, how many times the member's restart policy started it again.
fn with_restarts(summary: String, restarts: Option<u32>) -> String {
    match restarts {
        Some(1) => format!("{summary}, restarted once"),
        Some(n) if n > 1 => format!("{summary}, restarted {n} times"),
        _ => summary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{Error, ErrorKind};
    use crate::member::reach::Alone;
    pub(super) use crate::store::team::fixture;

    /// A wait status as the kernel reports it: `code << 8` for an exit, the signal number for a
    /// death by signal.
    fn exited(code: i32) -> ExitStatus {
        ExitStatus::from_raw(code << 8)
    }

    fn signalled(signal: nix::sys::signal::Signal) -> ExitStatus {
        ExitStatus::from_raw(signal as i32)
    }

    #[test]
    fn exit_statuses_are_classified() {
        use nix::sys::signal::Signal::{SIGKILL, SIGSEGV, SIGTERM};
        let cases = [
            (exited(0), None, State::Exited, 0, None),
            (exited(3), None, State::Failed, 3, None),
            (signalled(SIGTERM), None, State::Killed, 143, Some("signal")),
            (signalled(SIGKILL), None, State::Killed, 137, Some("signal")),
            // A crash is a failure, not something done to the program.
            (signalled(SIGSEGV), None, State::Failed, 139, None),
            // Whatever swarm ended, however it ended, was killed for that reason.
            (exited(0), Some("stop"), State::Killed, 0, Some("stop")),
            (
                signalled(SIGSEGV),
                Some("timeout"),
                State::Killed,
                139,
                Some("timeout"),
            ),
        ];
        for (status, reason, state, code, why) in cases {
            let ending = Ending::from_status(status, reason.map(str::to_owned));
            assert_eq!(ending.state, state, "{status:?} {reason:?}");
            assert_eq!(ending.exit_code, Some(code), "{status:?} {reason:?}");
            assert_eq!(ending.reason.as_deref(), why, "{status:?} {reason:?}");
            assert!(ending.worktree.is_none());
        }
        let status = |ending: Ending| ending.status();
        assert_eq!(
            status(Ending::from_status(exited(0), None)),
            TaskStatus::Completed
        );
        assert_eq!(
            status(Ending::from_status(exited(1), None)),
            TaskStatus::Failed
        );
        assert_eq!(
            status(Ending::from_status(signalled(SIGTERM), None)),
            TaskStatus::Killed
        );
    }

    #[test]
    fn summaries_say_how_it_ended_and_after_how_long() {
        let summary_of = |status, reason: Option<&str>| {
            let ending = Ending::from_status(status, reason.map(str::to_owned));
            summary("bob", &ending, Duration::from_millis(12_340))
        };
        assert_eq!(
            summary_of(exited(0), None),
            "bob completed (exit 0) after 12.3s"
        );
        assert_eq!(
            summary_of(exited(2), None),
            "bob failed (exit 2) after 12.3s"
        );
        assert_eq!(
            summary_of(exited(0), Some("timeout")),
            "bob was killed (timeout) after 12.3s"
        );
        assert_eq!(
            summary_of(signalled(nix::sys::signal::Signal::SIGTERM), None),
            "bob was killed (signal) after 12.3s"
        );
        let approved = Ending::shut_down(signalled(nix::sys::signal::Signal::SIGTERM));
        assert_eq!(
            summary("bob", &approved, Duration::from_millis(12_340)),
            "bob has shut down (shutdown request approved, exit 143) after 12.3s"
        );
    }

    #[test]
    fn an_approved_shutdown_is_a_successful_end() {
        use nix::sys::signal::Signal::SIGTERM;
        for status in [signalled(SIGTERM), exited(0), exited(3)] {
            let ending = Ending::shut_down(status);
            assert_eq!(ending.state, State::Exited, "{status:?}");
            assert_eq!(ending.status(), TaskStatus::Completed, "{status:?}");
            assert_eq!(ending.reason.as_deref(), Some(SHUTDOWN));
        }
        assert_eq!(Ending::shut_down(signalled(SIGTERM)).exit_code, Some(143));
        // One that had to be killed was killed, as `down` records a teammate it stopped.
        let killed = Ending::shut_down(signalled(nix::sys::signal::Signal::SIGKILL));
        assert_eq!(
            (killed.state, killed.exit_code, killed.reason.as_deref()),
            (State::Killed, Some(137), Some(SHUTDOWN))
        );
    }

    /// Marks bob as running since `started`, with a log, as the supervisor does.
    fn running(team: &Team, started: u64) {
        team.update(|config| {
            let bob = config.member_mut("bob").unwrap();
            bob.state = Some(State::Running);
            bob.started_at = Some(started);
            bob.is_active = Some(true);
            bob.color = Some("blue".into());
            bob.log_file = Some("/logs/bob.log".into());
            Ok(())
        })
        .unwrap();
    }

    /// The team's task list, with task 1 (parse) made and held by bob.
    fn holding_parse(team: &Team) -> TaskList {
        let list = TaskList::new(team.home(), team.name());
        list.ensure().unwrap();
        list.edit(&[], true, |edit| {
            edit.create(|id| Task::new(id, "parse", "", None, Some("bob")))?;
            Ok(())
        })
        .unwrap();
        list
    }

    fn notices(team: &Team) -> Vec<(InboxMessage, TaskNotification)> {
        team.mailbox("team-lead")
            .peek()
            .unwrap()
            .into_iter()
            .filter_map(|message| match message.structured() {
                Some(Structured::TaskNotification(notice)) => Some((message, notice)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn an_ending_is_recorded_and_the_lead_told_exactly_once() {
        let (_dir, team) = fixture::team(&["bob"]);
        running(&team, 1_000);
        let ending = Ending::from_status(exited(3), None);
        let notice = record(&team, "bob", &ending)
            .unwrap()
            .expect("first record");
        assert_eq!(notice.task_id, "bob@t");
        assert_eq!(notice.status, TaskStatus::Failed);
        assert_eq!(notice.exit_code, Some(3));
        assert_eq!(notice.output_file.as_deref(), Some("/logs/bob.log"));
        assert!(
            notice.summary.starts_with("bob failed (exit 3) after "),
            "{}",
            notice.summary
        );

        let bob = team.load().unwrap().member("bob").unwrap().clone();
        assert_eq!(bob.state, Some(State::Failed));
        assert_eq!(bob.exit_code, Some(3));
        assert_eq!(bob.is_active, Some(false));
        assert!(bob.ended_at.is_some_and(|ended| ended >= 1_000));
        assert_eq!(bob.notice.as_ref(), Some(&notice));

        let sent = notices(&team);
        assert_eq!(sent.len(), 1);
        let (message, told) = &sent[0];
        assert_eq!(told, &notice);
        assert_eq!(message.from(), "bob");
        assert_eq!(message.fields()["summary"], notice.summary.as_str());
        assert_eq!(message.fields()["color"], "blue");

        // A second record of this ending, or of another one, changes nothing.
        assert!(record(&team, "bob", &ending).unwrap().is_none());
        let other = Ending::from_status(exited(0), Some("stop".into()));
        assert!(record(&team, "bob", &other).unwrap().is_none());
        assert_eq!(notices(&team).len(), 1);
        assert_eq!(
            team.load().unwrap().member("bob").unwrap().state,
            Some(State::Failed)
        );
    }

    #[test]
    fn a_notice_lost_to_a_crash_is_sent_by_the_next_record_and_only_once() {
        let (_dir, team) = fixture::team(&["bob"]);
        running(&team, 1_000);
        let ending = Ending::from_status(exited(0), None);
        record(&team, "bob", &ending)
            .unwrap()
            .expect("first record");
        // A crash after the config write, before the notice: the lead's inbox never got it.
        let lead = team.mailbox("team-lead");
        lead.update(|unread| {
            unread.clear();
            Ok(((), true))
        })
        .unwrap();
        assert!(
            record(&team, "bob", &ending).unwrap().is_none(),
            "recorded once"
        );
        assert_eq!(notices(&team).len(), 1, "the lost notice is sent again");
        assert!(record(&team, "bob", &ending).unwrap().is_none());
        assert_eq!(notices(&team).len(), 1, "and only once");
        // Once the lead has read it, it is not sent again either.
        lead.consume(None, |_| true).unwrap();
        record(&team, "bob", &ending).unwrap();
        assert!(notices(&team).is_empty());
    }

    #[test]
    fn an_ended_members_open_tasks_return_to_pending_and_the_lead_is_told_once() {
        pub(crate) use crate::format::task::Status;
        let (_dir, team) = fixture::team(&["bob"]);
        running(&team, 1_000);
        let list = TaskList::new(team.home(), team.name());
        list.ensure().unwrap();
        for (subject, status) in [("parse", Status::InProgress), ("lex", Status::Completed)] {
            list.edit(&[], true, |edit| {
                let id = edit.create(|id| Task::new(id, subject, "", None, Some("bob")))?;
                edit.task_mut(id).unwrap().set_status(status);
                Ok(())
            })
            .unwrap();
        }
        let ending = Ending::from_status(exited(1), None);
        record(&team, "bob", &ending)
            .unwrap()
            .expect("first record");
        let board = list.read().unwrap();
        assert!(board.available(&board.tasks[&1]), "{:?}", board.tasks[&1]);
        assert_eq!(
            board.tasks[&2].owner(),
            Some("bob"),
            "a completed task keeps its owner"
        );
        let told = |team: &Team| -> Vec<InboxMessage> {
            team.mailbox("team-lead")
                .peek()
                .unwrap()
                .into_iter()
                .filter(|m| m.structured().is_none())
                .collect()
        };
        let sent = told(&team);
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].from(), "bob");
        assert_eq!(
            sent[0].text(),
            "bob ended with open tasks; they are pending again, with no owner: 1 (parse)"
        );
        // The notice comes first, then the tasks.
        let all = team.mailbox("team-lead").peek().unwrap();
        assert!(all[0].structured().is_some());
        assert!(record(&team, "bob", &ending).unwrap().is_none());
        assert_eq!(told(&team).len(), 1, "told once");
    }

    /// A run cut short (its pane hung up: the tmux server gone; or a signal from outside) is no
    /// ending for its tasks while nothing of its team runs: they wait for the run that resumes it
    /// (docs/ARCHITECTURE.md, "Resuming a team"), unless the team is started afresh. While the
    /// rest of the team runs on, they go back like any ended member's.
    #[test]
    fn an_interrupted_member_keeps_its_tasks_until_the_run_is_given_up() {
        for reason in ["hangup", "signal"] {
            let (_dir, team) = fixture::team(&["bob"]);
            running(&team, 1_000);
            let list = holding_parse(&team);
            let status = signalled(nix::sys::signal::Signal::SIGHUP);
            let ending = Ending::from_status(status, Some(reason.to_owned()));
            record(&team, "bob", &ending).unwrap().expect("recorded");
            let config = team.load().unwrap();
            assert!(was_interrupted(config.member("bob").unwrap()), "{reason}");
            let kept = finish_releases(&team, &Alone, &config, false).unwrap();
            assert!(kept.is_empty(), "{reason}");
            let owner = list.read().unwrap().tasks[&1].owner().map(str::to_owned);
            assert_eq!(owner.as_deref(), Some("bob"), "{reason}");
            if reason == "signal" {
                // The lead runs on: bob's run alone was cut short.
                team.update(|config| {
                    config.remaining_member_mut("team-lead")?.state = Some(State::Running);
                    Ok(())
                })
                .unwrap();
            }
            let released = finish_releases(&team, &Alone, &config, reason == "hangup").unwrap();
            assert_eq!(released.iter().map(Task::id).collect::<Vec<_>>(), [1]);
        }
    }

    /// A node starting after a reboot finds bob recorded as running, his supervisor gone: he is
    /// recorded interrupted (`lost`) once, keeping his task for the run that resumes him.
    #[test]
    fn a_run_whose_supervisor_vanished_is_recorded_lost_and_keeps_its_tasks() {
        let (_dir, team) = fixture::team(&["bob"]);
        running(&team, 1_000);
        let gone = {
            let mut child = std::process::Command::new("true").spawn().unwrap();
            let pid = i32::try_from(child.id()).unwrap();
            child.wait().unwrap();
            pid
        };
        team.update(|config| {
            config.remaining_member_mut("bob")?.supervisor_pid = Some(gone);
            Ok(())
        })
        .unwrap();
        let list = holding_parse(&team);
        assert_eq!(record_lost(&team, &Alone).unwrap(), ["bob"]);
        let config = team.load().unwrap();
        let bob = config.member("bob").unwrap();
        assert_eq!(
            (bob.state, bob.reason.as_deref()),
            (Some(State::Killed), Some(LOST))
        );
        assert!(was_interrupted(bob));
        let owner = list.read().unwrap().tasks[&1].owner().map(str::to_owned);
        assert_eq!(owner.as_deref(), Some("bob"));
        assert!(record_lost(&team, &Alone).unwrap().is_empty(), "once");
        assert_eq!(notices(&team).len(), 1);
    }

    /// A record rewritten after it was judged (a run started meanwhile) is not ended.
    #[test]
    fn an_ending_as_judged_is_not_recorded_over_a_record_changed_since() {
        let (_dir, team) = fixture::team(&["bob"]);
        running(&team, 1_000);
        let judged = team.load().unwrap().member("bob").unwrap().clone();
        running(&team, 2_000);
        let ending = Ending {
            state: State::Killed,
            exit_code: None,
            reason: Some(LOST.to_owned()),
            worktree: None,
        };
        assert!(
            record_as_judged(&team, "bob", &ending, Some(&judged))
                .unwrap()
                .is_none()
        );
        assert_eq!(
            team.load().unwrap().member("bob").unwrap().state,
            Some(State::Running)
        );
    }

    #[test]
    fn tasks_still_held_after_a_crash_are_released_by_the_next_record_and_told_once() {
        let (_dir, team) = fixture::team(&["bob"]);
        running(&team, 1_000);
        let list = holding_parse(&team);
        let ending = Ending::from_status(exited(0), None);
        // A crash after the message, before the task was written: the release fails here.
        let lead = team.mailbox("team-lead");
        let told = EndingNoticeFacts {
            lead: Some("team-lead".into()),
            task_id: "bob@t".into(),
            started_at: Some(1_000),
            color: None,
        };
        list.release_owned("bob", |tasks| {
            let mut message = InboxMessage::new("bob", &released_text("bob", tasks), None, None);
            message.set_id(&ids::derived("bob@t\u{0}1000\u{0}released\u{0}1"));
            deliver_once(&team, "team-lead", message)?;
            Err::<bool, _>(Error::runtime("crash"))
        })
        .unwrap_err();
        assert_eq!(list.read().unwrap().tasks[&1].owner(), Some("bob"));
        record(&team, "bob", &ending).unwrap();
        assert!(release_tasks(&team, "bob", &told).unwrap().is_empty());
        assert_eq!(list.read().unwrap().tasks[&1].owner(), None);
        let plain = lead
            .peek()
            .unwrap()
            .into_iter()
            .filter(|m| m.structured().is_none())
            .count();
        assert_eq!(
            plain, 1,
            "the message sent before the crash is not sent again"
        );
    }

    #[test]
    fn a_release_left_undone_is_finished_later_unless_the_member_runs_again() {
        let (_dir, team) = fixture::team(&["bob"]);
        running(&team, 1_000);
        let list = holding_parse(&team);
        // While bob runs, what it holds is its own.
        let config = team.load().unwrap();
        assert!(
            finish_releases(&team, &Alone, &config, false)
                .unwrap()
                .is_empty()
        );
        // Ended, with the release undone: the next look finishes it, once.
        team.update(|config| {
            let bob = config.member_mut("bob").unwrap();
            bob.state = Some(State::Exited);
            Ok(())
        })
        .unwrap();
        let ended = team.load().unwrap();
        let released = finish_releases(&team, &Alone, &ended, false).unwrap();
        assert_eq!(released.iter().map(Task::id).collect::<Vec<_>>(), [1]);
        assert!(list.read().unwrap().tasks[&1].owner().is_none());
        assert!(
            finish_releases(&team, &Alone, &ended, false)
                .unwrap()
                .is_empty()
        );
        let told = team
            .mailbox("team-lead")
            .peek()
            .unwrap()
            .into_iter()
            .filter(|m| m.text().contains("pending again"))
            .count();
        assert_eq!(told, 1);
        // A config read before bob ran again does not take what the new run holds.
        list.edit(&[1], false, |edit| edit.claim(1, "bob", false).map(drop))
            .unwrap();
        running(&team, 2_000);
        assert!(
            finish_releases(&team, &Alone, &ended, false)
                .unwrap()
                .is_empty()
        );
        assert_eq!(list.read().unwrap().tasks[&1].owner(), Some("bob"));
    }

    #[test]
    fn the_notice_id_is_derived_from_the_ending() {
        let (_dir, team) = fixture::team(&["bob"]);
        running(&team, 1_000);
        record(&team, "bob", &Ending::from_status(exited(0), None)).unwrap();
        let (message, _) = notices(&team).remove(0);
        assert_eq!(message.id(), ids::derived("bob@t\u{0}1000"));
    }

    /// config.json is a file every member can write: bob naming itself carol there (`agentId`)
    /// does not make its completion notice report carol's task, nor its release notice take the
    /// id of carol's. And a notice kept in its record is sent again as bob's.
    #[test]
    fn notices_name_the_member_itself_whatever_its_record_says() {
        let (_dir, team) = fixture::team(&["bob", "carol"]);
        running(&team, 1_000);
        holding_parse(&team);
        team.update(|config| {
            config.member_mut("bob").unwrap().agent_id = "carol@t".into();
            Ok(())
        })
        .unwrap();
        let ending = Ending::from_status(exited(0), None);
        let notice = record(&team, "bob", &ending).unwrap().unwrap();
        assert_eq!(notice.task_id, "bob@t");
        let (message, told) = notices(&team).remove(0);
        assert_eq!(told.task_id, "bob@t");
        assert_eq!(message.id(), ids::derived("bob@t\u{0}1000"));
        let released = team
            .mailbox("team-lead")
            .peek()
            .unwrap()
            .into_iter()
            .find(|m| m.text().contains("pending again"))
            .unwrap();
        assert_eq!(
            released.id(),
            ids::derived("bob@t\u{0}1000\u{0}released\u{0}1")
        );
        // The notice its record keeps, rewritten to name carol's task, goes out again as bob's.
        team.mailbox("team-lead")
            .update(|unread| {
                unread.clear();
                Ok(((), true))
            })
            .unwrap();
        team.update(|config| {
            let bob = config.member_mut("bob").unwrap();
            bob.notice.as_mut().unwrap().task_id = "carol@t".into();
            Ok(())
        })
        .unwrap();
        assert!(record(&team, "bob", &ending).unwrap().is_none());
        let again = notices(&team);
        assert_eq!(again.len(), 1, "{again:?}");
        assert_eq!(again[0].1.task_id, "bob@t");
    }

    #[test]
    fn the_leads_own_ending_is_recorded_without_a_notice_to_itself() {
        let (_dir, team) = fixture::team(&["bob"]);
        let ending = Ending::from_status(exited(0), None);
        let notice = record(&team, "team-lead", &ending).unwrap().unwrap();
        assert_eq!(notice.task_id, "team-lead@t");
        assert_eq!(
            team.load().unwrap().member("team-lead").unwrap().state,
            Some(State::Exited)
        );
        assert!(team.mailbox("team-lead").peek().unwrap().is_empty());
    }

    #[test]
    fn an_unknown_member_is_not_found() {
        let (_dir, team) = fixture::team(&["bob"]);
        let err = record(&team, "ghost", &Ending::from_status(exited(0), None)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotFound);
        assert_eq!(err.message(), "ghost is no longer a member of team t");
        assert!(team.mailbox("team-lead").peek().unwrap().is_empty());
    }
}
