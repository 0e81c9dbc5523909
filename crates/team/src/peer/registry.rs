//! `<home>/peers/<pid>.json`: who is listening where, so `swarm peers` can list live peers and a
//! sender can find its own address. An entry whose process is gone is stale and removed.

use std::fs;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::runtime::runtime_dir;
use crate::base::clock;
use crate::base::process;
use crate::error::{Error, Result};
use crate::policy::PERSON;
use crate::store::durable::{atomic_write, private_dir, read_if_exists};
use crate::store::paths::{Home, RuntimePaths};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PeerEntry {
    pub pid: i32,
    pub socket: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    pub cwd: PathBuf,
    pub started_at: u64,
    /// The terminal the peer runs on, so a `send` from the same terminal signs with its address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tty: Option<String>,
}

impl PeerEntry {
    pub fn address(&self) -> String {
        format!("uds:{}", self.socket.display())
    }

    /// Whether it runs outside every pane: a `swarm listen` of the person's, which no member
    /// registered.
    pub(crate) fn is_persons(&self) -> bool {
        self.agent.is_none() && self.team.is_none()
    }

    /// The name a message sent from where this listener runs is answered at, never its socket:
    /// `uds:<label>`, or `uds:user` for a listener of the person's without a label. `None` for a
    /// member's, which is answered at `<member>@<team>`.
    pub fn reply_address(&self) -> Option<String> {
        self.label_as_reached().map(|label| format!("uds:{label}"))
    }

    /// Its label, or `user` for a listener of the person's without one, which `uds:user` reaches:
    /// what `peers` shows. `None` for a member's without a label.
    pub fn label_as_reached(&self) -> Option<&str> {
        match &self.label {
            Some(label) => Some(label),
            None if self.is_persons() => Some(PERSON),
            None => None,
        }
    }

    /// Whether `name` is this peer's socket path, its label, or its member's `<agent>@<team>`.
    pub(crate) fn is_called(&self, name: &str) -> bool {
        (name.contains('/') && Path::new(name) == self.socket)
            || self.label.as_deref() == Some(name)
            || matches!((&self.agent, &self.team), (Some(agent), Some(team))
                if name.split_once('@') == Some((agent.as_str(), team.as_str())))
    }
}

/// The listener `uds:user` reaches: the most recent live `swarm listen` without a label that
/// runs outside every pane, if any: its entry says so, and `checks_out` finds it true (an entry
/// is a file any process of the user can write).
fn person_listener(
    home: &Home,
    checks_out: &dyn Fn(&PeerEntry) -> bool,
) -> Result<Option<PeerEntry>> {
    Ok(live_peers(home)?
        .into_iter()
        .rev()
        .find(|peer| peer.label.is_none() && peer.is_persons() && checks_out(peer)))
}

/// The socket a `uds:` address names, and the registry entry it was found by: a path (anything
/// with a `/`, found by none), `user` for the person's newest listener without a
/// label, else a live peer's label or its member's `<agent>@<team>`. An entry is only a claim:
/// only those `checks_out` finds true (their process serves their socket and runs where they say)
/// count, and the sender checks the one it takes again against whoever the connection shows
/// serves the socket. Several of one member's listeners, all in its pane, are one: the newest.
pub fn resolve(
    home: &Home,
    target: &str,
    checks_out: &dyn Fn(&PeerEntry) -> bool,
) -> Result<(PathBuf, Option<PeerEntry>)> {
    if target.contains('/') {
        return Ok((PathBuf::from(target), None));
    }
    if target == PERSON {
        return person_listener(home, checks_out)?
            .map(|peer| (peer.socket.clone(), Some(peer)))
            .ok_or_else(|| {
                Error::not_found(format!("no terminal listens as uds:{PERSON}")).with_hint(
                    "run `swarm listen` without --label in the terminal that should receive it",
                )
            });
    }
    let peers = live_peers(home)?;
    let called: Vec<&PeerEntry> = peers
        .iter()
        .filter(|p| p.is_called(target) && checks_out(p))
        .collect();
    let one_members = called.first().is_some_and(|first| {
        first.agent.is_some()
            && called
                .iter()
                .all(|p| (&p.agent, &p.team) == (&first.agent, &first.team))
    });
    match called.as_slice() {
        [.., peer] if one_members => Ok((peer.socket.clone(), Some((*peer).clone()))),
        [peer] => Ok((peer.socket.clone(), Some((*peer).clone()))),
        [] => Err(Error::not_found(format!("no live peer is called {target}"))
            .with_hint("`swarm peers` lists live peers; an address is uds:PATH or uds:LABEL")),
        several => Err(Error::usage(format!(
            "{target} names {} live peers: {}",
            several.len(),
            several
                .iter()
                .map(|p| p.address())
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .with_hint("send to one of them by its socket path")),
    }
}

/// A registry entry and its socket, removed when dropped.
#[derive(Debug)]
pub(crate) struct Registration {
    entry_path: PathBuf,
    socket: PathBuf,
}

impl Registration {
    pub(crate) fn write(home: &Home, entry: &PeerEntry) -> Result<Self> {
        let dir = home.peers_dir();
        private_dir(&dir, &dir)?;
        let entry_path = home.peer_entry(entry.pid);
        atomic_write(&entry_path, |out| {
            serde_json::to_writer_pretty(&mut *out, entry)?;
            Ok(())
        })?;
        Ok(Self {
            entry_path,
            socket: entry.socket.clone(),
        })
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.socket);
        let _ = fs::remove_file(&self.entry_path);
    }
}

/// Live peers, oldest first. Entries of processes that are gone are removed with their sockets.
/// An entry is only a claim: the socket it names is removed only if it is that peer's own, a
/// socket at `<runtime>/<pid>.sock` (docs/ARCHITECTURE.md, "Private files").
pub fn live_peers(home: &Home) -> Result<Vec<PeerEntry>> {
    let dir = home.peers_dir();
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(Error::io("list", &dir, err)),
    };
    let mut live = Vec::new();
    let mut runtime = None;
    for entry in entries.filter_map(std::result::Result::ok) {
        let path = entry.path();
        if !Home::is_peer_entry(&path) {
            continue;
        }
        let parsed = read_if_exists(&path)
            .ok()
            .flatten()
            .and_then(|bytes| serde_json::from_slice::<PeerEntry>(&bytes).ok());
        match parsed {
            Some(peer) if process::alive(peer.pid) && is_socket(&peer.socket) => live.push(peer),
            Some(peer) => {
                tracing::info!(pid = peer.pid, "removing stale peer entry");
                let runtime = runtime.get_or_insert_with(|| runtime_dir().ok());
                if is_own_socket(runtime.as_ref(), &peer) {
                    let _ = fs::remove_file(&peer.socket);
                } else {
                    tracing::warn!(
                        pid = peer.pid,
                        "leaving {}: not the peer's own socket",
                        peer.socket.display()
                    );
                }
                let _ = fs::remove_file(&path);
            }
            None => {
                tracing::warn!("removing unreadable peer entry {}", path.display());
                let _ = fs::remove_file(&path);
            }
        }
    }
    live.sort_by_key(|peer| (peer.started_at, peer.pid));
    Ok(live)
}

/// Live peers, oldest first, read as the registry lists them and nothing removed: for completing
/// a name, which must write nothing. What cannot be read is left out.
pub fn listed_peers(home: &Home) -> Vec<PeerEntry> {
    let Ok(entries) = fs::read_dir(home.peers_dir()) else {
        return Vec::new();
    };
    let mut live: Vec<PeerEntry> = entries
        .filter_map(std::result::Result::ok)
        .map(|entry| entry.path())
        .filter(|path| Home::is_peer_entry(path))
        .filter_map(|path| read_if_exists(&path).ok().flatten())
        .filter_map(|bytes| serde_json::from_slice::<PeerEntry>(&bytes).ok())
        .filter(|peer| process::alive(peer.pid) && is_socket(&peer.socket))
        .collect();
    live.sort_by_key(|peer| (peer.started_at, peer.pid));
    live
}

/// Whether the socket `peer` names is the one a peer with its pid binds: `<pid>.sock` in the
/// runtime folder (`peer/server.rs`), and a socket. Nothing else is removed on an entry's word.
fn is_own_socket(runtime: Option<&RuntimePaths>, peer: &PeerEntry) -> bool {
    runtime.is_some_and(|runtime| {
        u32::try_from(peer.pid).is_ok_and(|pid| peer.socket == runtime.socket(pid))
    }) && is_socket(&peer.socket)
}

fn is_socket(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_socket())
}

/// The entry for a peer of this process.
pub(crate) fn entry(
    socket: PathBuf,
    label: Option<String>,
    team: Option<String>,
    agent: Option<String>,
) -> PeerEntry {
    PeerEntry {
        pid: i32::try_from(std::process::id()).unwrap_or(0),
        socket,
        label,
        team,
        agent,
        cwd: std::env::current_dir().unwrap_or_default(),
        started_at: clock::now_ms(),
        tty: own_tty(),
    }
}

/// The terminal on stdin, if any.
pub(crate) fn own_tty() -> Option<String> {
    nix::unistd::ttyname(std::io::stdin())
        .ok()
        .map(|path| path.display().to_string())
}
