//! Where a process runs (docs/ARCHITECTURE.md, "Identity"): inside which member's pane, or in a
//! pane of another home, or outside every pane, or, when that cannot be established, nowhere at
//! all. Everyone shares one uid, so this, not a name a command is given, is who a command is.
//!
//! A line (a process and every process above it) is judged from the outside in, the outermost
//! process that shows whose it is deciding, because a process can forge only what it passes down:
//! - one of a run of this home (marked with the run's `SWARM_RUN_ID`, in the program's process
//!   group in a session shown to be the pane's, or its proven supervisor): that member's pane;
//!   the lead's only when the run's own supervisor is on the line and was launched as the lead's;
//! - a supervisor (`process::supervisor`: the swarm program, a tmux pane's first process, no run
//!   marker): its member's pane when its home is this home, a pane elsewhere for another home,
//!   nobody when its home cannot be found;
//! - a process that passes for a supervisor by its command line and is none: nobody.
//!
//! Anything else is outside every pane: the person at the keyboard. Outside every pane is a
//! finding, never a default: the whole line up to init is read, and read again to see that it did
//! not change meanwhile, and the home is found where it was (pinned by the long-lived judges when
//! they start). A process that has exited (or whose pid now belongs to another), a line that
//! cannot be read whole, one that keeps changing, and a home that cannot be found are nobody
//! ([`Whereabouts::Unknown`]), and every decision refuses nobody.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

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

#[cfg(test)]
thread_local! {
    /// How many lines this thread has judged.
    static JUDGED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Where the pinned process `process` runs, for commands acting under `home`.
pub(crate) fn whereabouts(home: &Home, process: &Pinned) -> Whereabouts {
    locate(home, process).0
}

/// Where this process runs.
pub fn own_whereabouts(home: &Home) -> Whereabouts {
    locate_own(home).0
}

/// Where the process that has `pid` now runs: for a pid read from a record, such as a registry
/// entry, which proves nothing about who had it before.
pub fn whereabouts_of_pid(home: &Home, pid: i32) -> Whereabouts {
    match Pinned::now(pid) {
        Some(process) => whereabouts(home, &process),
        None => Whereabouts::Unknown(format!("process {pid} is not running")),
    }
}

/// The supervisor this process runs below, when it runs in member `member`'s pane of `team`: the
/// process whose environment is what the member was launched with.
pub(crate) fn own_supervisor(home: &Home, team: &str, member: &str) -> Option<i32> {
    match locate_own(home) {
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

/// Where `process` runs, and the pid of the supervisor of the pane it runs in, if it has one.
/// Judged against the home's directory as pinned ([`Home::pin`]) or found now: a home that
/// cannot be found, or was moved while the line was judged, tells nothing, so nobody.
fn locate(home: &Home, process: &Pinned) -> (Whereabouts, Option<i32>) {
    locate_on_line(home, process).0
}

/// This process's line as last judged under a home, and what it was found to be.
struct OwnLine {
    root: PathBuf,
    home_id: (u64, u64),
    line: Vec<ProcStat>,
    found: (Whereabouts, Option<i32>),
}

/// What this process's line was judged to be, by home.
static OWN_LINES: Mutex<Vec<OwnLine>> = Mutex::new(Vec::new());

/// Where this process runs. One command asks more than once (who the caller is, then the key its
/// reader verifies the lead's messages with); a line read again unchanged, under the same home
/// still in place, is the line already judged, and is not judged again (docs/ARCHITECTURE.md,
/// "Start-up"). A supervisor found off the line is not trusted to that: its pid proves nothing
/// later, so such a line is judged each time.
fn locate_own(home: &Home) -> (Whereabouts, Option<i32>) {
    let Some(me) = Pinned::own() else {
        return (
            Whereabouts::Unknown("this process cannot read itself in /proc".to_owned()),
            None,
        );
    };
    let mut lines = OWN_LINES.lock().unwrap_or_else(PoisonError::into_inner);
    let known = lines.iter().position(|own| own.root == home.root());
    if let Some(own) = known.map(|at| &lines[at])
        && home.in_place()
        && home.id() == Some(own.home_id)
        && process::unchanged(&own.line)
    {
        return own.found.clone();
    }
    let (found, judged) = locate_on_line(home, &me);
    if let Some(at) = known {
        lines.swap_remove(at);
    }
    if let Some((home_id, line)) = judged
        && found
            .1
            .is_none_or(|supervisor| line.iter().any(|p| p.pid == supervisor))
    {
        lines.push(OwnLine {
            root: home.root().to_path_buf(),
            home_id,
            line,
            found: found.clone(),
        });
    }
    found
}

/// The home's id and the line an answer was judged from.
type JudgedLine = ((u64, u64), Vec<ProcStat>);

/// [`locate`], with the home's id and the line the answer was judged from when it was judged
/// from one.
fn locate_on_line(
    home: &Home,
    process: &Pinned,
) -> ((Whereabouts, Option<i32>), Option<JudgedLine>) {
    let moved = || {
        (
            Whereabouts::Unknown(format!(
                "the home {} cannot be found where it was",
                home.root().display()
            )),
            None,
        )
    };
    let Some(home_id) = home.id() else {
        return (moved(), None);
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
            return (gone(), None);
        }
        let Some(line) = process::lineage(pid) else {
            continue;
        };
        if line[0].start != process.start() {
            return (gone(), None);
        }
        let judged = judge(home, home_id, &line);
        if !home.in_place() || home.id() != Some(home_id) {
            return (moved(), None);
        }
        // Read again: what was learnt was of these very processes only if none of them changed.
        if process::unchanged(&line) && process.alive() {
            return (judged, Some((home_id, line)));
        }
    }
    if !process.alive() {
        return (gone(), None);
    }
    (
        (
            Whereabouts::Unknown(format!(
                "the processes above process {pid} could not be read whole"
            )),
            None,
        ),
        None,
    )
}

/// Where the first process of `line` (it and every process above it, read whole) runs, judged
/// from the outside in: the outermost process that shows whose it is decides, because a process
/// can forge what it passes down, never what is above it.
/// - A process of one of this home's runs (marked, in the program's group, or its proven
///   supervisor): that member's pane, the lead's only when the run's own supervisor is on the
///   line and was launched as the lead's.
/// - A supervisor of this home: its member's pane; of another home: a member of a team elsewhere,
///   never the person; of a home that cannot be found: nobody.
/// - A process that passes for a supervisor and is none (`process::supervisor`): nobody.
///
/// Outside every pane only when none of these is found.
fn judge(home: &Home, home_id: (u64, u64), line: &[ProcStat]) -> (Whereabouts, Option<i32>) {
    #[cfg(test)]
    JUDGED.set(JUDGED.get() + 1);
    let runs = match runs(home) {
        Ok(runs) => runs,
        Err(why) => return (Whereabouts::Unknown(why), None),
    };
    let run = processes::outermost_run(line, &runs);
    for (at, ancestor) in line.iter().enumerate().rev() {
        if let Some((run_at, run)) = run
            && run_at == at
        {
            return of_run(line, run);
        }
        if let Some(supervisor) = process::supervisor(ancestor.pid) {
            return match process::dir_id(&supervisor.home) {
                None => (
                    Whereabouts::Unknown(format!(
                        "the home of supervisor {} cannot be found",
                        supervisor.pid
                    )),
                    None,
                ),
                Some(id) if id != home_id => (
                    Whereabouts::Elsewhere {
                        team: supervisor.team,
                        member: supervisor.name,
                    },
                    None,
                ),
                Some(_) => (
                    Whereabouts::Pane {
                        team: supervisor.team,
                        member: supervisor.name,
                        lead: supervisor.lead,
                    },
                    Some(supervisor.pid),
                ),
            };
        }
        if process::passes_for_supervisor(ancestor.pid) {
            return (
                Whereabouts::Unknown(format!(
                    "process {} passes for a swarm supervisor but is not one",
                    ancestor.pid
                )),
                None,
            );
        }
    }
    (Whereabouts::Outside, None)
}

/// The pane of `run`, for a line one of its processes is on: the lead's only when its own proven
/// supervisor is on the line and was launched as the lead's (what is left of a run proves no
/// launch as the lead's).
fn of_run(line: &[ProcStat], run: &Run) -> (Whereabouts, Option<i32>) {
    let supervisor = line
        .iter()
        .any(|p| p.pid == run.supervisor)
        .then(|| process::supervisor(run.supervisor))
        .flatten()
        .filter(|_| run.supervisor_proven());
    let pid = supervisor.as_ref().map(|s| s.pid);
    (
        Whereabouts::Pane {
            team: run.team().to_owned(),
            member: run.name.clone(),
            lead: supervisor.and_then(|s| s.lead),
        },
        pid,
    )
}

/// The name of whoever runs at `whereabouts`: `<member>@<team>` in a member's pane, `user`
/// outside every pane, `<member>@<team>` too in a pane of another home; `None` for nobody.
pub fn sender_name(whereabouts: &Whereabouts) -> Option<String> {
    match whereabouts {
        Whereabouts::Pane { team, member, .. } | Whereabouts::Elsewhere { team, member } => {
            Some(format!("{member}@{team}"))
        }
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
        Whereabouts::Pane { .. } | Whereabouts::Elsewhere { .. }
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
        Whereabouts::Pane { .. } | Whereabouts::Elsewhere { .. } | Whereabouts::Unknown(_) => real,
    })
}

/// Who really sent what arrived on a peer socket, as a name it is answered at: for swarm's own
/// line, [`peer_sender`]; for Claude Code's frame, [`claude_sender`].
pub fn incoming_sender(home: &Home, incoming: &Incoming) -> Result<String> {
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

/// Every run this home's teams record: what a line's processes are matched against. A home whose
/// teams cannot be listed tells nothing.
fn runs(home: &Home) -> std::result::Result<Vec<Run>, String> {
    let mut runs = Vec::new();
    let names = list_teams(home).map_err(|err| {
        format!(
            "the teams of {} cannot be read: {err}",
            home.root().display()
        )
    })?;
    for name in names {
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
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One command asks where it runs more than once (who the caller is, then the key its reader
    /// verifies the lead's messages with): its line, read again unchanged under the same home,
    /// is not judged again (docs/ARCHITECTURE.md, "Start-up").
    #[test]
    fn this_process_is_judged_once_while_its_line_stands() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path().to_path_buf());
        let before = JUDGED.get();
        let found = own_whereabouts(&home);
        assert_eq!(own_supervisor(&home, "team", "member"), None);
        assert_eq!(own_whereabouts(&home), found);
        assert_eq!(
            JUDGED.get() - before,
            1,
            "judgements of this process's line"
        );

        // Another home is judged afresh: what a line means depends on the home.
        let other = tempfile::tempdir().unwrap();
        own_whereabouts(&Home::new(other.path().to_path_buf()));
        assert_eq!(
            JUDGED.get() - before,
            2,
            "judgements of this process's line"
        );
    }
}
