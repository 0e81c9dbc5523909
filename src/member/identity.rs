//! Where a process runs (docs/ARCHITECTURE.md, "Identity"): inside which member's pane, or
//! outside every pane, or, when that cannot be established, nowhere at all. Everyone shares one
//! uid, so this, not a name a command is given, is who a command is.
//!
//! A process is inside member M's pane of team T when, walking up from it:
//! - a live `swarm run M` supervisor of this home and of team T is among its ancestors (the
//!   outermost one counts: a supervisor is started by tmux, never by a member, so one below
//!   another was made by the member above it). Each supervisor is a child subreaper, so whatever
//!   a member starts stays below it, through `setsid` and double forks;
//! - or, once M's supervisor is gone, it or a process above it is still one of M's run's
//!   processes: marked with the run's `SWARM_RUN_ID`, or in the program's process group in a
//!   session shown to be the pane's ("A member's processes").
//!
//! Anything else is outside every pane: the person at the keyboard. Outside every pane is a
//! finding, never a default: the whole line up to init is read, and read again to see that it did
//! not change meanwhile. A process that has exited (or whose pid now belongs to another), a line
//! that cannot be read whole, and one that keeps changing are nobody ([`Whereabouts::Unknown`]),
//! and every decision refuses nobody.

use std::path::Path;

use crate::base::process::{self, Pinned, ProcStat};
use crate::error::{Error, Result};
use crate::member::processes::{self, Run};
use crate::peer::{self, Incoming, PeerEntry, Via};
use crate::policy::{PERSON, Whereabouts};
use crate::store::paths::Home;
use crate::store::team::{Team, list_teams};

/// How often a line that changed while it was read (a parent exited, a child was adopted) is read
/// again before where it runs is given up as unknown.
const ATTEMPTS: usize = 5;

/// Where the pinned process `process` runs, for commands acting under `home`.
pub(crate) fn whereabouts(home: &Home, process: &Pinned) -> Whereabouts {
    locate(home, process).0
}

/// Where this process runs.
pub(crate) fn own_whereabouts(home: &Home) -> Whereabouts {
    match Pinned::own() {
        Some(me) => whereabouts(home, &me),
        None => Whereabouts::Unknown("this process cannot read itself in /proc".to_owned()),
    }
}

/// Where the process that has `pid` now runs: for a pid read from a record, such as a registry
/// entry, which proves nothing about who had it before.
pub(crate) fn whereabouts_of_pid(home: &Home, pid: i32) -> Whereabouts {
    match Pinned::now(pid) {
        Some(process) => whereabouts(home, &process),
        None => Whereabouts::Unknown(format!("process {pid} is not running")),
    }
}

/// The supervisor this process runs below, when it runs in member `member`'s pane of `team`: the
/// process whose environment is what the member was launched with.
pub(crate) fn own_supervisor(home: &Home, team: &str, member: &str) -> Option<i32> {
    match locate(home, &Pinned::own()?) {
        (
            Whereabouts::Pane {
                team: at,
                member: m,
                ..
            },
            supervisor,
        ) if at == team && m == member => supervisor,
        _ => None,
    }
}

/// Whether process `pid` is member `member`'s supervisor of `team` under `home`, as its pane's
/// own: a supervisor of that member that runs below no other supervisor of this home (one below
/// another was started by the member above it).
pub(crate) fn is_pane_supervisor(home: &Home, team: &str, member: &str, pid: i32) -> bool {
    Pinned::now(pid).is_some_and(|process| {
        matches!(
            locate(home, &process),
            (Whereabouts::Pane { team: at, member: m, .. }, Some(supervisor))
                if at == team && m == member && supervisor == pid
        )
    })
}

/// Where `process` runs, and the pid of the supervisor of the pane it runs in, if it has one.
fn locate(home: &Home, process: &Pinned) -> (Whereabouts, Option<i32>) {
    let Some(home_id) = process::dir_id(home.root()) else {
        // No home yet: no team, so no pane of one.
        return (Whereabouts::Outside, None);
    };
    let pid = process.pid;
    let gone = || {
        (
            Whereabouts::Unknown(format!("process {pid} has exited")),
            None,
        )
    };
    for _ in 0..ATTEMPTS {
        if !process.alive() {
            return gone();
        }
        let Some(line) = process::lineage(pid) else {
            continue;
        };
        if line[0].start != process.start() {
            return gone();
        }
        let judged = judge(home, home_id, &line);
        // Read again: what was learnt was of these very processes only if none of them changed.
        if process::unchanged(&line) && process.alive() {
            return judged;
        }
    }
    if !process.alive() {
        return gone();
    }
    (
        Whereabouts::Unknown(format!(
            "the processes above process {pid} could not be read whole"
        )),
        None,
    )
}

/// Where the first process of `line` (it and every process above it, read whole) runs.
fn judge(home: &Home, home_id: (u64, u64), line: &[ProcStat]) -> (Whereabouts, Option<i32>) {
    for ancestor in line.iter().rev() {
        let Some(supervisor) = process::supervisor(ancestor.pid) else {
            continue;
        };
        if process::dir_id(&supervisor.home) != Some(home_id) {
            continue;
        }
        return (
            Whereabouts::Pane {
                team: supervisor.team,
                member: supervisor.name,
                lead: supervisor.lead,
            },
            Some(supervisor.pid),
        );
    }
    (orphaned(home, line).unwrap_or(Whereabouts::Outside), None)
}

/// The name of whoever runs at `whereabouts`: `<member>@<team>` in a member's pane, `user`
/// outside every pane; `None` for nobody.
pub(crate) fn sender_name(whereabouts: &Whereabouts) -> Option<String> {
    match whereabouts {
        Whereabouts::Pane { team, member, .. } => Some(format!("{member}@{team}")),
        Whereabouts::Outside => Some(PERSON.to_owned()),
        Whereabouts::Unknown(_) => None,
    }
}

/// Who really sent a message that arrived on a peer socket from the pinned process `sender`,
/// checked against the `from` it claims, as a name it can be answered at, never a socket path
/// (docs/ARCHITECTURE.md, "Peers"):
/// - from a member's pane, `<member>@<team>`: the claim must be that name (`uds:` or not), or
///   name a listener in that same pane;
/// - from outside every pane, `user`, `uds:user`, or the listener of the person's the claim
///   names (by label or socket) as it is answered: `uds:<label>`, or `uds:user` without a label.
///
/// A claim that disagrees with where the sender runs is refused, and so is a sender whose
/// whereabouts cannot be told.
pub(crate) fn peer_sender(home: &Home, sender: &Pinned, claimed: &str) -> Result<String> {
    let sender = whereabouts(home, sender);
    let Some(real) = sender_name(&sender) else {
        return Err(sender
            .refusal("who sent the message")
            .unwrap_or_else(|| Error::runtime("cannot tell who sent the message")));
    };
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
    if whereabouts_of_pid(home, listener.pid) != sender {
        return Err(refusal());
    }
    Ok(match &sender {
        Whereabouts::Outside => listener.reply_address().unwrap_or(real),
        Whereabouts::Pane { .. } | Whereabouts::Unknown(_) => real,
    })
}

/// Who really sent what arrived on a peer socket, as a name it is answered at: for swarm's own
/// line, [`peer_sender`]; for Claude Code's frame, [`claude_sender`].
pub(crate) fn incoming_sender(home: &Home, incoming: &Incoming) -> Result<String> {
    let claimed = &incoming.message.from;
    match incoming.via {
        Via::Swarm => peer_sender(home, &incoming.sender, claimed),
        Via::ClaudeCode => claude_sender(home, &incoming.sender, Some(claimed.as_str())),
    }
}

/// Who really sent one of Claude Code's frames from the pinned process `sender`, whose `from`
/// (`uds:<socket>`, where an answer reaches it) is `claimed` (docs/ARCHITECTURE.md, "Peers"):
/// - a socket the sender itself listens on, as the kernel shows (it holds the socket bound
///   there): that address, `uds:<path>`; a swarm peer's socket is named as swarm names it
///   ([`peer_sender`]);
/// - none: where the sender runs, as for swarm's own lines (`<member>@<team>`, `user`);
/// - a socket anyone else listens on: refused.
pub(crate) fn claude_sender(home: &Home, sender: &Pinned, claimed: Option<&str>) -> Result<String> {
    let Some(address) = claimed.filter(|from| !from.is_empty()) else {
        let whereabouts = whereabouts(home, sender);
        return sender_name(&whereabouts).ok_or_else(|| {
            whereabouts
                .refusal("who sent the message")
                .unwrap_or_else(|| Error::runtime("cannot tell who sent the message"))
        });
    };
    let Some(path) = peer::address_path(address).map(Path::new) else {
        return Err(Error::usage(format!(
            "the message claims to be from {address}, which is not a uds: address"
        )));
    };
    if peer::live_peers(home)?.iter().any(|p| p.socket == path) {
        return peer_sender(home, sender, address);
    }
    if listens_at(sender, path) {
        return Ok(address.to_owned());
    }
    Err(Error::usage(format!(
        "the message claims to be from {address} but was sent by process {}, which does not listen there",
        sender.pid
    )))
}

/// Whether the pinned process `process` listens on the socket bound at `path`: it holds the
/// listening socket the kernel lists there, and is still the process it was when pinned.
pub(crate) fn listens_at(process: &Pinned, path: &Path) -> bool {
    peer::listening_inode(path).is_some_and(|inode| process::holds_socket(process.pid, inode))
        && process.alive()
}

/// The member whose run the first process of `line` belongs to although no live supervisor is
/// above it: its supervisor was killed and it lives on, still marked, or still in the program's
/// group in the pane's session. Never the lead: what is left of a run proves no launch as the
/// lead's.
fn orphaned(home: &Home, line: &[ProcStat]) -> Option<Whereabouts> {
    let mut runs = Vec::new();
    for name in list_teams(home).ok()? {
        let Ok(team) = Team::open(home, &name) else {
            continue;
        };
        let Ok(config) = team.load() else {
            continue;
        };
        runs.extend(
            config
                .members
                .iter()
                .filter_map(|member| Run::of(&team, member)),
        );
    }
    let owner = processes::owner_by_lineage(line, &runs)?;
    Some(Whereabouts::Pane {
        team: owner.team().to_owned(),
        member: owner.name.clone(),
        lead: None,
    })
}
