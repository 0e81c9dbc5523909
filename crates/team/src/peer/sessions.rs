//! The person's Claude Code sessions, as Claude Code records them (docs/ARCHITECTURE.md, "Peers"):
//! `<claude config>/sessions/<pid>.json` for each live session (a teammate writes none), and a key
//! for each session's socket, `<pid>.<sha256 of the socket's path>.key`. A record is only a file:
//! it counts while its process runs, started when the record says (`procStart`), in this pid
//! namespace (`pidDomain`). swarm reads here and writes nothing.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::base::process;
use crate::store::paths::ClaudePaths;

/// A live Claude Code session of the person's, and the socket it listens on.
#[derive(Debug, Clone)]
pub struct Session {
    pub pid: i32,
    pub socket: PathBuf,
    pub cwd: Option<PathBuf>,
    /// Its session id.
    pub id: Option<String>,
    /// Epoch milliseconds.
    pub started_at: Option<u64>,
    pub name: Option<String>,
    /// What it is doing, as it says: `idle`, `busy`, …
    pub status: Option<String>,
    pub version: Option<String>,
}

impl Session {
    pub fn address(&self) -> String {
        format!("uds:{}", self.socket.display())
    }
}

/// A session record, with the fields swarm reads.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    pid: i32,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    cwd: Option<PathBuf>,
    #[serde(default)]
    started_at: Option<u64>,
    /// The process's start, in clock ticks since boot, as text.
    #[serde(default)]
    proc_start: Option<String>,
    #[serde(default)]
    pid_domain: Option<String>,
    #[serde(default)]
    messaging_socket_path: Option<PathBuf>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    version: Option<String>,
}

/// A socket's key file: `{"peerToken", "procStart"?, "pidDomain"?}`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Key {
    peer_token: String,
    #[serde(default)]
    proc_start: Option<String>,
    #[serde(default)]
    pid_domain: Option<String>,
}

/// Whether the process `pid` a record or key names is the one that wrote it: it runs, it started
/// when the record says, and in the pid namespace it says.
fn is_writer(
    pid: i32,
    proc_start: Option<&str>,
    pid_domain: Option<&str>,
    ours: Option<&str>,
) -> bool {
    if let (Some(theirs), Some(ours)) = (pid_domain, ours)
        && theirs != ours
    {
        return false;
    }
    let Some(running) = process::stat(pid).filter(|p| !p.dead) else {
        return false;
    };
    proc_start.is_none_or(|start| start.trim().parse() == Ok(running.start))
}

/// The live sessions with a socket, oldest first. Records that are stale or unreadable are left
/// as they are: they are Claude Code's.
pub fn live_sessions() -> Vec<Session> {
    let Some(claude) = ClaudePaths::current() else {
        return Vec::new();
    };
    let Ok(entries) = fs::read_dir(claude.sessions()) else {
        return Vec::new();
    };
    let ours = process::pid_domain();
    let mut live: Vec<Session> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let pid = ClaudePaths::record_pid(&entry.file_name())?;
            let record: Record = serde_json::from_slice(&fs::read(entry.path()).ok()?).ok()?;
            let socket = record
                .messaging_socket_path
                .filter(|socket| socket.is_absolute())?;
            (record.pid == pid
                && is_writer(
                    pid,
                    record.proc_start.as_deref(),
                    record.pid_domain.as_deref(),
                    ours.as_deref(),
                ))
            .then_some(Session {
                pid,
                socket,
                cwd: record.cwd,
                id: record.session_id,
                started_at: record.started_at,
                name: record.name,
                status: record.status,
                version: record.version,
            })
        })
        .collect();
    live.sort_by_key(|session| (session.started_at, session.pid));
    live
}

/// Whether `socket` is a Claude Code session's: a live session's, as its record says, or one in
/// a folder where Claude Code puts them (`cc-socks`, `cc-socks-<uid>`), as a teammate's is (a
/// teammate writes no record).
pub fn is_claude_socket(socket: &Path) -> bool {
    let in_its_folder = socket
        .parent()
        .and_then(Path::file_name)
        .and_then(|name| name.to_str())
        .is_some_and(|name| {
            name == "cc-socks"
                || name
                    .strip_prefix("cc-socks-")
                    .is_some_and(|uid| !uid.is_empty() && uid.bytes().all(|b| b.is_ascii_digit()))
        });
    in_its_folder
        || live_sessions()
            .iter()
            .any(|session| session.socket == socket)
}

/// The key of the socket at `socket`, as Claude Code finds it to authenticate a send: the token
/// of the key file named for the socket's path, preferring one whose session still runs.
/// `None` when there is none (Claude Code then sends no auth line).
pub fn key_of(socket: &Path) -> Option<(i32, String)> {
    let claude = ClaudePaths::current()?;
    let digest = format!(
        "{:x}",
        Sha256::digest(socket.as_os_str().as_encoded_bytes())
    );
    let ours = process::pid_domain();
    let mut keys: Vec<(bool, i32, String)> = fs::read_dir(claude.sessions())
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let pid = ClaudePaths::key_pid(&entry.file_name(), &digest)?;
            let key: Key = serde_json::from_slice(&fs::read(entry.path()).ok()?).ok()?;
            let token = key.peer_token;
            if token.len() != 32 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            let live = is_writer(
                pid,
                key.proc_start.as_deref(),
                key.pid_domain.as_deref(),
                ours.as_deref(),
            );
            Some((live, pid, token))
        })
        .collect();
    keys.sort_by_key(|(live, _, _)| !*live);
    keys.into_iter().next().map(|(_, pid, token)| (pid, token))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_in_claude_codes_folders_is_its() {
        for socket in ["/run/user/0/cc-socks/42.sock", "/tmp/cc-socks-1000/42.sock"] {
            assert!(is_claude_socket(Path::new(socket)), "{socket}");
        }
        for socket in [
            "/run/user/0/swarm/42.sock",
            "/tmp/cc-socks-x/42.sock",
            "/42.sock",
        ] {
            assert!(!is_claude_socket(Path::new(socket)), "{socket}");
        }
    }

    #[test]
    fn a_record_counts_only_for_the_process_that_wrote_it() {
        let me = process::own_pid();
        let start = process::stat(me).unwrap().start.to_string();
        let ours = process::pid_domain();
        assert!(is_writer(
            me,
            Some(&start),
            ours.as_deref(),
            ours.as_deref()
        ));
        assert!(is_writer(me, None, None, ours.as_deref()));
        assert!(!is_writer(me, Some("1"), None, ours.as_deref()));
        assert!(!is_writer(
            me,
            Some(&start),
            Some("linux:other:pid:[1]"),
            Some("linux:me:pid:[1]")
        ));
        assert!(!is_writer(i32::MAX, None, None, None));
    }
}
