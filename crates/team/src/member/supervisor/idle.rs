//! Claude Code sessions that asked to be told when the member is idle (`notify_when_idle` on its
//! socket) are told once, with a `peer_idle_notice`: when it is idle, or when its program has
//! ended (docs/ARCHITECTURE.md, "Peers"). "Idle" is the member's recorded activity
//! ("Activity and events"), the one every reader sees.

use std::sync::Arc;
use std::time::Instant;

pub(super) use crate::base::runtime::OffRuntime;
pub(super) use crate::format::config::State;
use crate::format::event;
use crate::member::notify;
use crate::store::activity as recorded;
use crate::store::paths::TeamPaths;
use crate::store::watcher::{AsyncWatcher, POLL_INTERVAL, SAFETY_RESCAN};

use super::seat::Supervisor;

/// What the member is doing, as far as a notice needs to tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Activity {
    Busy,
    Idle,
    Ended,
}

impl Supervisor {
    /// Whether the member is idle: its program runs, its recorded activity is `idle`, and nothing
    /// waits unread in its inbox (it is about to take it up). Ended once its ending is recorded.
    pub(super) fn activity(&self) -> Activity {
        let Ok(config) = self.team.load() else {
            return Activity::Busy;
        };
        let Some(member) = config.member(&self.name) else {
            return Activity::Ended;
        };
        if member.state.is_some_and(State::is_final) {
            return Activity::Ended;
        }
        let idle = recorded::of(self.team.paths(), &self.name)
            .ok()
            .flatten()
            .is_some_and(|current| current.state == event::Activity::Idle);
        if member.state != Some(State::Running) || !idle {
            return Activity::Busy;
        }
        match self.team.mailbox(&self.name).peek() {
            Ok(unread) if unread.is_empty() => Activity::Idle,
            _ => Activity::Busy,
        }
    }

    /// Answers every subscription waiting, saying `state`, from the member's socket `own`.
    pub(super) fn answer_subscribers(&self, state: notify::State, own: Option<&str>) {
        for subscription in self.subscribers.take() {
            match subscription.answer(state, own) {
                Ok(()) => tracing::info!(
                    "told {} that {} is {}",
                    subscription.describe(),
                    self.name,
                    state.as_str()
                ),
                Err(err) => tracing::warn!(
                    "cannot tell {} that {} is {}: {}",
                    subscription.describe(),
                    self.name,
                    state.as_str(),
                    err.message()
                ),
            }
        }
    }
}

/// Runs while the member runs: whenever someone waits to be told, looks whenever config.json, the
/// recorded activity or the member's inbox changes (and every few seconds regardless), and tells
/// them once the member is idle or has ended.
pub(super) async fn tell_when_idle(supervisor: Arc<Supervisor>, own: String) {
    let inbox = supervisor
        .team
        .mailbox(&supervisor.name)
        .file_name()
        .to_owned();
    let activity = supervisor
        .team
        .paths()
        .activity()
        .file_name()
        .unwrap_or_default()
        .to_owned();
    let relevant = move |name: &std::ffi::OsStr| {
        TeamPaths::is_config(name) || name == inbox || name == activity
    };
    loop {
        supervisor.subscribers.wait_for_one().await;
        let paths = supervisor.team.paths();
        let mut watcher = AsyncWatcher::arm_all(&[paths.dir(), &paths.inboxes()]).ok();
        loop {
            let activity = supervisor.off_runtime(Supervisor::activity).await;
            let state = match activity {
                Activity::Busy => None,
                Activity::Idle => Some(notify::State::Idle),
                Activity::Ended => Some(notify::State::Exited),
            };
            if let Some(state) = state {
                let own = own.clone();
                supervisor
                    .off_runtime(move |this| this.answer_subscribers(state, Some(&own)))
                    .await;
                break;
            }
            let woke = match &mut watcher {
                Some(events) => events
                    .wait(Some(Instant::now() + SAFETY_RESCAN), &relevant)
                    .await
                    .map(drop),
                None => {
                    tokio::time::sleep(POLL_INTERVAL).await;
                    Ok(())
                }
            };
            if woke.is_err() {
                watcher = None;
            }
        }
    }
}
