//! Where a process runs (docs/ARCHITECTURE.md, "Identity"): inside which member's pane, or
//! outside every pane. Everyone shares one uid, so this, not a name a command is given, is who a
//! command is.
//!
//! A process is inside member M's pane of team T when, walking up from it:
//! - a live `swarm run M` supervisor of this home and of team T is among its ancestors (the
//!   outermost one counts: a supervisor is started by tmux, never by a member, so one below
//!   another was made by the member above it). Each supervisor is a child subreaper, so whatever
//!   a member starts stays below it, through `setsid` and double forks;
//! - or, once M's supervisor is gone, it or a process above it is still one of M's run's
//!   processes as config.json names them: marked with the run's `SWARM_RUN_ID`, or in the
//!   program's process group in the pane's session ("A member's processes").
//!
//! Anything else is outside every pane: the person at the keyboard.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::base::process::{self, SupervisorProcess};
use crate::error::{Error, Result};
use crate::member::processes::{self, Run};
use crate::peer::{self, PeerEntry};
use crate::policy::{PERSON, Whereabouts};
use crate::store::paths::Home;
use crate::store::team::{Team, list_teams};

/// Where process `pid` runs, for commands acting under `home`.
pub(crate) fn whereabouts(home: &Home, pid: i32) -> Whereabouts {
    let Some(home_id) = dir_id(home.root()) else {
        // No home yet: no team, so no pane of one.
        return Whereabouts::Outside;
    };
    if let Some((supervisor, team)) = pane_supervisor(home, home_id, pid) {
        return Whereabouts::Pane {
            team,
            member: supervisor.name,
        };
    }
    orphaned(home, pid).unwrap_or(Whereabouts::Outside)
}

/// The live supervisor of this home whose pane process `pid` runs in, and its team: the
/// outermost among `pid`'s ancestors.
fn pane_supervisor(
    home: &Home,
    home_id: (u64, u64),
    pid: i32,
) -> Option<(SupervisorProcess, String)> {
    process::ancestry(pid).iter().rev().find_map(|ancestor| {
        let supervisor = process::supervisor(ancestor.pid)?;
        if supervisor.home.as_deref().and_then(dir_id) != Some(home_id) {
            return None;
        }
        let team = team_of(home, &supervisor)?;
        Some((supervisor, team))
    })
}

/// The supervisor this process runs below, when it runs in member `member`'s pane of `team`: the
/// process whose environment is what the member was launched with.
pub(crate) fn own_supervisor(home: &Home, team: &str, member: &str) -> Option<i32> {
    let (supervisor, at) = pane_supervisor(home, dir_id(home.root())?, process::own_pid())?;
    (at == team && supervisor.name == member).then_some(supervisor.pid)
}

/// Where this process runs.
pub(crate) fn own_whereabouts(home: &Home) -> Whereabouts {
    whereabouts(home, process::own_pid())
}

/// The name of whoever runs at `whereabouts`: `<member>@<team>` in a member's pane, else `user`.
pub(crate) fn sender_name(whereabouts: &Whereabouts) -> String {
    match whereabouts {
        Whereabouts::Pane { team, member } => format!("{member}@{team}"),
        Whereabouts::Outside => PERSON.to_owned(),
    }
}

/// Who really sent a message that arrived on a peer socket from process `pid` (`SO_PEERCRED`),
/// checked against the `from` it claims, as a name it can be answered at, never a socket path
/// (docs/ARCHITECTURE.md, "Peers"):
/// - from a member's pane, `<member>@<team>`: the claim must be that name (`uds:` or not), or
///   name a listener in that same pane;
/// - from outside every pane, `user`, `uds:user`, or the listener of the person's the claim
///   names (by label or socket) as it is answered: `uds:<label>`, or `uds:user` without a label.
///
/// A claim that disagrees with where the sender runs is refused.
pub(crate) fn peer_sender(home: &Home, pid: i32, claimed: &str) -> Result<String> {
    let sender = whereabouts(home, pid);
    let real = sender_name(&sender);
    let person = format!("uds:{PERSON}");
    match &sender {
        Whereabouts::Pane { .. }
            if claimed == real || claimed.strip_prefix("uds:") == Some(real.as_str()) =>
        {
            return Ok(real);
        }
        Whereabouts::Outside if claimed == PERSON || claimed == person => {
            return Ok(claimed.to_owned());
        }
        _ => {}
    }
    let refusal = || {
        Error::usage(format!(
            "the message claims to be from {claimed} but was sent by {real}"
        ))
    };
    let Some(address) = peer::address_path(claimed) else {
        return Err(refusal());
    };
    let peers = peer::live_peers(home)?;
    let named: Vec<&PeerEntry> = peers.iter().filter(|p| p.is_called(address)).collect();
    let [listener] = named.as_slice() else {
        return Err(refusal());
    };
    if whereabouts(home, listener.pid) != sender {
        return Err(refusal());
    }
    Ok(match &sender {
        Whereabouts::Pane { .. } => real,
        Whereabouts::Outside => listener.reply_address().unwrap_or(real),
    })
}

/// The team a supervisor serves: the one its command line or environment names, else the one
/// whose config.json records it.
fn team_of(home: &Home, supervisor: &SupervisorProcess) -> Option<String> {
    if let Some(team) = &supervisor.team {
        return Some(team.clone());
    }
    list_teams(home).ok()?.into_iter().find(|name| {
        Team::open(home, name)
            .and_then(|team| team.load())
            .is_ok_and(|config| {
                config
                    .member(&supervisor.name)
                    .is_some_and(|m| m.supervisor_pid == Some(supervisor.pid))
            })
    })
}

/// The member whose run `pid` belongs to although no live supervisor is above it: its supervisor
/// was killed and it lives on, still marked, or still in the program's group.
fn orphaned(home: &Home, pid: i32) -> Option<Whereabouts> {
    let mut runs = Vec::new();
    let mut teams = Vec::new();
    for name in list_teams(home).ok()? {
        let Ok(config) = Team::open(home, &name).and_then(|team| team.load()) else {
            continue;
        };
        for member in &config.members {
            if let Some(run) = Run::of(member) {
                runs.push(run);
                teams.push(config.name.clone());
            }
        }
    }
    if runs.is_empty() {
        return None;
    }
    let owner = processes::owner_by_ancestry(pid, &runs)?;
    let at = runs.iter().position(|run| std::ptr::eq(run, owner))?;
    Some(Whereabouts::Pane {
        team: teams[at].clone(),
        member: owner.name.clone(),
    })
}

/// A directory's device and inode: two spellings of one home (a symlink, `..`) are one home.
fn dir_id(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path)
        .ok()
        .filter(std::fs::Metadata::is_dir)
        .map(|meta| (meta.dev(), meta.ino()))
}
