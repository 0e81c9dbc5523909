//! This host's node as the local files know it (docs/ARCHITECTURE.md, "Across machines"): its
//! lock, held for as long as it runs, and its record, which says whether it reaches the server.
//! Local commands read these; none of them talks to NATS to learn it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::store::durable::{atomic_write, private_dir, read_if_exists, sync_dir};
use crate::store::lock::{Flock, FlockFile};
use crate::store::paths::Home;

/// What `node/node.json` holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeRecord {
    /// The host name this node serves, as team files name it in `host =`.
    pub name: String,
    pub pid: i32,
    /// The server's URL (never a password or token).
    pub url: String,
    /// Whether the node reaches the server now.
    pub connected: bool,
    /// When `connected` last changed, in ms since the epoch.
    pub since_ms: u64,
}

/// The lock a running node holds; dropped when it ends, or by the kernel when it dies.
pub struct NodeLock {
    _flock: Flock,
}

impl NodeLock {
    /// Takes the home's node lock, or says which node holds it.
    pub fn take(home: &Home) -> Result<Self> {
        private_dir(home.root(), &home.node_dir())?;
        match FlockFile::open(&home.node_lock())?.try_lock()? {
            Ok(flock) => Ok(Self { _flock: flock }),
            Err(_) => {
                let holder = read(home).ok().flatten();
                let who = holder.map_or_else(String::new, |record| {
                    format!(" (host {}, pid {})", record.name, record.pid)
                });
                Err(Error::usage(format!(
                    "a swarm node already serves {}{who}",
                    home.root().display()
                ))
                .with_hint(
                    "one node per home; stop that one first, or give this one another --home",
                ))
            }
        }
    }
}

/// Replaces the record, durably.
pub fn write(home: &Home, record: &NodeRecord) -> Result<()> {
    write_json(home, &home.node_record(), record)
}

/// The record the last node left, running or not.
pub fn read(home: &Home) -> Result<Option<NodeRecord>> {
    read_json(&home.node_record())
}

/// Replaces one of the node's files, durably.
fn write_json(home: &Home, path: &Path, value: &impl Serialize) -> Result<()> {
    private_dir(home.root(), &home.node_dir())?;
    atomic_write(path, |out| {
        serde_json::to_writer_pretty(&mut *out, value)?;
        Ok(())
    })
}

/// One of the node's files, if it is there.
fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>> {
    let Some(bytes) = read_if_exists(path)? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|err| corrupt(path, &err))
}

/// The record of the node running now for this home, if one is.
pub fn running(home: &Home) -> Result<Option<NodeRecord>> {
    let lock = home.node_lock();
    if !lock.exists() {
        return Ok(None);
    }
    match FlockFile::open(&lock)?.try_lock()? {
        // Nobody holds it: no node runs, whatever the record says.
        Ok(_free) => Ok(None),
        Err(_held) => read(home),
    }
}

/// What `node/tasks-<team>.json` holds: for each task id, the revision of its key on the server
/// that this host's task file last held exactly, written only once the file holds it. A task
/// with no revision here was never copied to or from this host's files: its file missing is no
/// deletion (docs/ARCHITECTURE.md, "The task list across hosts").
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskCopies {
    /// Which bucket the revisions are of: when the server made it (ns since the epoch). A bucket
    /// made since is another board (the team was removed on its lead's host, and its board with
    /// it); none recorded (an older node's record) is the bucket there now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bucket: Option<String>,
    pub held: BTreeMap<u64, u64>,
}

/// The node's record of team `team`'s task files; empty when there is none yet, or when it
/// cannot be read (then no local file counts as deleted: in doubt, a task is kept).
pub fn read_task_copies(home: &Home, team: &str) -> TaskCopies {
    match read_json(&home.node_task_copies(team)) {
        Ok(copies) => copies.unwrap_or_default(),
        Err(err) => {
            tracing::warn!(team, %err, "the record of this host's task copies is unreadable; starting afresh");
            TaskCopies::default()
        }
    }
}

/// Replaces the node's record of team `team`'s task files, durably.
pub fn write_task_copies(home: &Home, team: &str, copies: &TaskCopies) -> Result<()> {
    write_json(home, &home.node_task_copies(team), copies)
}

/// Removes the node's record of team `team`'s task files, with the team: a team made again under
/// the name has no copies yet.
pub(crate) fn remove_task_copies(home: &Home, team: &str) -> Result<()> {
    let path = home.node_task_copies(team);
    match std::fs::remove_file(&path) {
        Ok(()) => sync_dir(&home.node_dir()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(Error::io("remove", &path, err)),
    }
}

/// What `node/hosts.json` holds: the hosts whose nodes this host's node last saw alive.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostsRecord {
    pub alive: BTreeSet<String>,
    /// When the node wrote it, in ms since the epoch.
    pub written_ms: u64,
}

/// Replaces `node/hosts.json`, durably.
pub fn write_hosts(home: &Home, record: &HostsRecord) -> Result<()> {
    write_json(home, &home.node_hosts(), record)
}

/// What `node/hosts.json` holds now, if anything.
pub fn read_hosts(home: &Home) -> Result<Option<HostsRecord>> {
    read_json(&home.node_hosts())
}

fn corrupt(path: &Path, err: &serde_json::Error) -> Error {
    Error::runtime(format!(
        "{} is not what swarm node writes: {err}",
        path.display()
    ))
    .with_hint("restart `swarm node`; it rewrites the file")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> NodeRecord {
        NodeRecord {
            name: "gpu1".into(),
            pid: 42,
            url: "nats://127.0.0.1:4222".into(),
            connected: true,
            since_ms: 1,
        }
    }

    #[test]
    fn a_record_is_running_only_while_its_lock_is_held() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path().join("home"));
        assert_eq!(running(&home).unwrap(), None);
        let lock = NodeLock::take(&home).unwrap();
        write(&home, &record()).unwrap();
        assert_eq!(running(&home).unwrap(), Some(record()));
        let second = NodeLock::take(&home).err().unwrap();
        assert!(
            second.message().contains("host gpu1, pid 42"),
            "{}",
            second.message()
        );
        drop(lock);
        assert_eq!(running(&home).unwrap(), None);
        assert_eq!(read(&home).unwrap(), Some(record()));
    }
}
