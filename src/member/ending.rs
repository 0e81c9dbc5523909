//! A member's end: its final state in config.json and the `task_notification` to the lead, written
//! exactly once per ending. The supervisor records it; `stop` and `down` record it only when the
//! supervisor is gone. Both go through [`record`], which checks under the config lock whether the
//! ending is already recorded, and writes the notice to the lead while still holding that lock.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Duration;

use crate::base::{clock, ids};
use crate::error::{Error, Result};
use crate::format::config::State;
use crate::format::message::InboxMessage;
use crate::format::structured::{Structured, TaskNotification, TaskStatus};
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

    pub(crate) fn status(&self) -> TaskStatus {
        match self.state {
            State::Exited => TaskStatus::Completed,
            State::Killed => TaskStatus::Killed,
            _ => TaskStatus::Failed,
        }
    }
}

/// Records the ending and notifies the lead; `None` if this ending was already recorded.
pub(crate) fn record(team: &Team, name: &str, ending: &Ending) -> Result<Option<TaskNotification>> {
    let recorded = team.update_then(
        |config| {
            let lead = config.lead_name().to_owned();
            let team_name = config.name.clone();
            let member = config.member_mut(name).ok_or_else(|| {
                Error::not_found(format!("{name} is no longer a member of team {team_name}"))
            })?;
            if member.state.is_some_and(State::is_final) {
                return Ok(None);
            }
            let now = clock::now_ms();
            let started = member.started_at.unwrap_or(now);
            let duration = Duration::from_millis(now.saturating_sub(started));
            let notice = TaskNotification {
                task_id: member.agent_id.clone(),
                status: ending.status(),
                exit_code: ending.exit_code,
                summary: summary(name, ending, duration),
                output_file: member.log_file.clone(),
                duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
                worktree_path: ending.worktree.clone(),
                reason: ending.reason.clone(),
                timestamp: clock::timestamp_now(),
            };
            member.state = Some(ending.state);
            member.exit_code = ending.exit_code;
            member.reason.clone_from(&ending.reason);
            member.ended_at = Some(now);
            member.is_active = Some(false);
            member.worktree_path.clone_from(&ending.worktree);
            member.notice = Some(notice.clone());
            // One id per ending, so a retried write can be recognised.
            let id = ids::derived(&format!("{}\0{started}", notice.task_id));
            let to = (name != lead).then_some(lead);
            Ok(Some((notice, member.color.clone(), id, to)))
        },
        // The notice goes out once the final state is on disk, still under the config lock.
        |recorded| {
            let Some((notice, color, id, Some(lead))) = recorded else {
                return Ok(());
            };
            let text = Structured::TaskNotification(notice.clone()).to_text();
            let mut message =
                InboxMessage::new(name, &text, Some(&notice.summary), color.as_deref());
            message.set_id(id);
            team.mailbox(lead).update(|unread| {
                if unread.iter().any(|m| m.id() == id.as_str()) {
                    return Ok(((), false));
                }
                unread.push(message);
                Ok(((), true))
            })
        },
    )?;
    Ok(recorded.map(|(notice, ..)| notice))
}

/// "bob completed (exit 0) after 12.3s", "bob was killed (timeout) after 30.0s".
pub(crate) fn summary(name: &str, ending: &Ending, duration: Duration) -> String {
    let after = clock::human_duration(duration);
    let code = ending
        .exit_code
        .map(|code| format!("exit {code}"))
        .unwrap_or_default();
    match ending.status() {
        TaskStatus::Completed => format!("{name} completed ({code}) after {after}"),
        TaskStatus::Failed => format!("{name} failed ({code}) after {after}"),
        TaskStatus::Killed => format!(
            "{name} was killed ({}) after {after}",
            ending.reason.as_deref().unwrap_or("signal")
        ),
    }
}
