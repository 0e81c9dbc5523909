//! `max_concurrent`: a member beyond the team's limit waits as `queued` and starts when a running
//! member ends, in file order. Every supervisor claims its own slot under the config lock; the lead
//! is never limited.

use std::collections::HashSet;
use std::sync::Arc;

use crate::base::process;
pub(super) use crate::base::runtime::OffRuntime;
use crate::error::Result;
pub(super) use crate::format::config::{Member, State};
use crate::launch::tmux::Tmux;
use crate::member::processes::{self, Run};
use crate::store::paths::TeamPaths;
use crate::store::team::Team;
use crate::store::watcher::{AsyncWatcher, POLL_INTERVAL};

use super::seat::Supervisor;
use super::signals::{Signals, SupervisorSignal};

pub(crate) enum Slot {
    Granted,
    /// Stopped or hung up while still queued.
    Interrupted(String),
}

enum Claim {
    Granted,
    Waiting { running: usize, ahead: usize },
}

pub(crate) async fn wait_for_slot(
    supervisor: &Arc<Supervisor>,
    max: u32,
    signals: &mut Signals,
) -> Result<Slot> {
    let limit = usize::try_from(max).unwrap_or(usize::MAX);
    let mut watcher = AsyncWatcher::arm(supervisor.team.paths().dir())?;
    let mut following = true;
    let mut announced = None;
    loop {
        // Under the config lock, which another writer may hold for a while: off the runtime.
        match supervisor
            .off_runtime(move |this| claim(this, limit))
            .await?
        {
            Claim::Granted => return Ok(Slot::Granted),
            Claim::Waiting { running, ahead } => {
                if announced != Some((running, ahead)) {
                    supervisor
                        .print(format!(
                            "{} is queued: {running} of {limit} running, {ahead} ahead in the queue",
                            supervisor.name
                        ))
                        .await;
                    announced = Some((running, ahead));
                }
            }
        }
        // Until config.json may have changed; signals are answered meanwhile.
        loop {
            tokio::select! {
                woke = watcher.wait(None, &TeamPaths::is_config), if following => match woke {
                    Ok(_) => break,
                    Err(err) => {
                        tracing::warn!(
                            "{} stopped following config.json: {err}; looking every {} ms instead",
                            supervisor.name,
                            POLL_INTERVAL.as_millis()
                        );
                        following = false;
                    }
                },
                // Without events a freed slot is still noticed.
                () = tokio::time::sleep(POLL_INTERVAL), if !following => break,
                caught = signals.next() => match caught {
                    SupervisorSignal::Interrupt | SupervisorSignal::Child => {}
                    SupervisorSignal::Terminate => return Ok(Slot::Interrupted("signal".into())),
                    SupervisorSignal::Hangup => return Ok(Slot::Interrupted("hangup".into())),
                    SupervisorSignal::Stop => {
                        let why = supervisor.off_runtime(Supervisor::stop_reason).await;
                        return Ok(Slot::Interrupted(why));
                    }
                },
            }
        }
    }
}

fn claim(supervisor: &Supervisor, limit: usize) -> Result<Claim> {
    let panes = supervisor
        .tmux
        .as_ref()
        .and_then(|tmux: &Tmux| tmux.panes().ok().flatten());
    supervisor.team.update(|config| {
        let index = config.remaining_member_index(&supervisor.name)?;
        let lead = config.lead_name().to_owned();
        let running = config
            .members
            .iter()
            .filter(|m| {
                m.name != supervisor.name && m.name != lead && occupies(&supervisor.team, m)
            })
            .count();
        let ahead = config.members[..index]
            .iter()
            .filter(|m| m.name != lead && waiting(m, panes.as_ref()))
            .count();
        let me = &mut config.members[index];
        if running < limit && ahead == 0 {
            me.state = Some(State::Starting);
            Ok(Claim::Granted)
        } else {
            me.state = Some(State::Queued);
            Ok(Claim::Waiting { running, ahead })
        }
    })
}

/// Holds one of the team's slots: its supervisor is alive, or its processes outlived it. One
/// waiting to be restarted keeps its slot.
fn occupies(team: &Team, member: &Member) -> bool {
    matches!(
        member.state,
        Some(State::Starting | State::Running | State::Idle | State::Restarting)
    ) && Run::of(team, member).is_some_and(|run| run.supervisor_proven() || processes::alive(&run))
}

/// Queued ahead of others: its supervisor is alive, or has not registered yet but its pane exists.
fn waiting(member: &Member, panes: Option<&HashSet<String>>) -> bool {
    member.state == Some(State::Queued)
        && match member.supervisor_pid {
            Some(pid) => process::alive(pid),
            None => panes.is_none_or(|panes| panes.contains(&member.tmux_pane_id)),
        }
}
