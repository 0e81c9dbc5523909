//! What state a member is really in. config.json records what the supervisor last wrote; a member
//! whose supervisor or pane has vanished since is shown as vanished, never as running.

use std::collections::HashSet;

use crate::config::{Member, State};
use crate::process;

/// A member's state as `status` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// Never launched: a member added by `init` or `join`.
    NotStarted,
    Recorded(State),
    /// Recorded as live, but its supervisor process is gone.
    ProcessVanished,
    /// Recorded as live, but its tmux pane is gone.
    PaneVanished,
}

impl Seen {
    pub fn label(self) -> &'static str {
        match self {
            Self::NotStarted => "-",
            Self::Recorded(state) => state.as_str(),
            Self::ProcessVanished => "vanished",
            Self::PaneVanished => "pane-gone",
        }
    }

    /// The member's program may still be running.
    pub fn is_live(self) -> bool {
        matches!(self, Self::Recorded(state) if !state.is_final())
    }
}

/// `panes` is the set of live pane ids on the team's tmux server, when it could be listed.
pub fn seen(member: &Member, panes: Option<&HashSet<String>>) -> Seen {
    let Some(state) = member.state else {
        return Seen::NotStarted;
    };
    if state.is_final() {
        return Seen::Recorded(state);
    }
    if let Some(pid) = member.supervisor_pid
        && !process::alive(pid)
    {
        return Seen::ProcessVanished;
    }
    if let Some(panes) = panes
        && !member.tmux_pane_id.is_empty()
        && !panes.contains(&member.tmux_pane_id)
    {
        return Seen::PaneVanished;
    }
    Seen::Recorded(state)
}

/// Pane ids alive on the team's tmux server, or `None` when the team has no panes to check.
/// A server that is no longer running has no panes.
pub fn live_panes(config: &crate::config::TeamConfig) -> Option<HashSet<String>> {
    let placement = config.tmux.as_ref()?;
    match crate::tmux::Tmux::at(&placement.socket).panes() {
        Ok(panes) => Some(panes.unwrap_or_default()),
        Err(err) => {
            tracing::debug!("cannot list panes: {err}");
            None
        }
    }
}

/// Blocks until every member named has ended or vanished, calling `ended` once for each, in the
/// order they end. Returns the members still live when the deadline passed.
pub fn wait_for_endings(
    team: &crate::config::Team,
    names: &[String],
    deadline: Option<std::time::Instant>,
    mut ended: impl FnMut(&Member, Seen) -> crate::error::Result<()>,
) -> crate::error::Result<Vec<String>> {
    let watcher = crate::watcher::Watcher::arm(team.paths().dir())?;
    let config_file = std::ffi::OsStr::new(crate::home::CONFIG_FILE);
    let mut reported = HashSet::new();
    let mut still_live = Vec::new();
    watcher.wait_for(deadline, &|file| file == config_file, || {
        let config = team.load()?;
        let panes = live_panes(&config);
        still_live.clear();
        for name in names {
            let Some(member) = config.member(name) else {
                reported.insert(name.clone());
                continue;
            };
            let seen = seen(member, panes.as_ref());
            if seen.is_live() || seen == Seen::NotStarted {
                still_live.push(name.clone());
            } else if reported.insert(name.clone()) {
                ended(member, seen)?;
            }
        }
        Ok(still_live.is_empty().then_some(()))
    })?;
    Ok(still_live)
}

/// One line for a member that has ended: its notice's summary, or what became of it.
pub fn ending_line(member: &Member, seen: Seen) -> String {
    match (&member.notice, seen) {
        (Some(notice), Seen::Recorded(_)) => notice.summary.clone(),
        (_, Seen::ProcessVanished) => format!("{} vanished: its supervisor is gone", member.name),
        (_, Seen::PaneVanished) => format!("{} vanished: its pane is gone", member.name),
        _ => format!("{} {}", member.name, seen.label()),
    }
}

/// Whether a member ended well: completed with exit 0.
pub fn ended_well(seen: Seen) -> bool {
    seen == Seen::Recorded(State::Exited)
}
