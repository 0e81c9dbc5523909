//! Whether a tmux pane is still the one swarm placed for a member (docs/ARCHITECTURE.md, "A
//! member's processes"): the one answer `stop`, `down`, `type`, `attach` and the dashboard act on.
//! config.json's `tmuxPaneId` and `tmux.socket` are only a claim, which any teammate can rewrite
//! and a restarted tmux server gives to other panes, so nothing is killed, typed into or shown on
//! their word alone.

use std::path::Path;

use crate::base::process;
use crate::error::Result;
use crate::format::config::Member;
use crate::launch::tmux::{Located, Tmux};
use crate::member::processes::Run;
use crate::store::team::Team;

/// What the pane config.json names for a member is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// The member's own pane, where it is now.
    Own(Located),
    /// No such pane on the server, or no server.
    Gone,
    /// A pane that is not the member's: someone else's, or one that took the id since.
    Other,
}

/// Whether `member`'s recorded pane on `tmux` is its own: the pane's first process, whose pid
/// tmux reports itself, is proven to be this member's supervisor (`Run::supervisor_proven`: its
/// command line, its program and its tmux server parent), registered or not yet; or it is the supervisor recorded
/// for the member, now gone, the pane kept only by what it started, and the pane still carries
/// the marks launch gave it (member, team and home). No edit of config.json makes another pane
/// pass.
pub fn find(team: &Team, tmux: &Tmux, member: &Member) -> Result<Found> {
    if member.tmux_pane_id.is_empty() {
        return Ok(Found::Gone);
    }
    let Some(located) = tmux.locate(&member.tmux_pane_id)? else {
        return Ok(Found::Gone);
    };
    let Some(first) = located.pid.filter(|pid| *pid > 1) else {
        return Ok(Found::Other);
    };
    let proven = Run::new(team, member, first, None).supervisor_proven();
    let left_by_its_supervisor = member.supervisor_pid == Some(first)
        // Exited, or a zombie tmux has not reaped yet: the pane is still the one it was in.
        && process::stat(first).is_none_or(|it| it.dead)
        && marked(team, &located, &member.name);
    Ok(if proven || left_by_its_supervisor {
        Found::Own(located)
    } else {
        Found::Other
    })
}

/// Kills `member`'s pane on `tmux` when it is its own; a pane that is not is left alone, and a
/// warning says so.
pub(crate) fn kill(team: &Team, tmux: &Tmux, member: &Member) -> Result<()> {
    match find(team, tmux, member)? {
        Found::Own(located) => tmux.kill_pane(&located.pane).map(drop),
        Found::Gone => Ok(()),
        Found::Other => {
            left_alone(&member.tmux_pane_id, &format!("{}'s", member.name));
            Ok(())
        }
    }
}

/// Kills the dashboard pane `up` opened for `team` when it is still that: marked with the team
/// and its home at launch, and no member's.
pub(crate) fn kill_dashboard(team: &Team, tmux: &Tmux, pane: &str) -> Result<()> {
    let Some(located) = tmux.locate(pane)? else {
        return Ok(());
    };
    if marked(team, &located, "") {
        tmux.kill_pane(pane).map(drop)
    } else {
        left_alone(pane, &format!("team {}'s dashboard", team.name()));
        Ok(())
    }
}

/// Whether `located` carries the marks swarm gave a pane of `team` at launch, for `member` (none
/// for the dashboard's).
fn marked(team: &Team, located: &Located, member: &str) -> bool {
    located.member == member
        && located.team == team.name()
        && process::dir_id(Path::new(&located.home))
            .is_some_and(|home| team.home().id() == Some(home))
}

fn left_alone(pane: &str, whose: &str) {
    tracing::warn!("left pane {pane} alone: it is not {whose}");
}
