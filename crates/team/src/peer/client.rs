//! Sending to a peer: connect, write one JSON line, wait for the acknowledgement.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::registry::{PeerEntry, live_peers, own_tty};
use super::{Ack, MAX_LINE_BYTES, Request, TakenQuery};
use crate::base::process::Pinned;
use crate::error::{Error, ErrorKind, Result};
use crate::policy::PERSON;
use crate::store::paths::Home;

/// How long to wait for the receiver's acknowledgement (it may be storing the message durably).
const ACK_WAIT: Duration = Duration::from_secs(30);

/// How long a receiver of Claude Code's frames has to close the connection once they are written
/// (Claude Code's own sender waits 5 s from connecting; a loaded machine gets more).
pub(crate) const CLOSE_WAIT: Duration = Duration::from_secs(10);

/// The name the person at the keyboard sends under, so the receiver can answer it: that of its
/// own listener, `SWARM_SOCKET`'s, else a `swarm listen` running on this same terminal (its
/// newest): `uds:<label>`, or `uds:user` without a label. With no listener of its own, `user`.
/// Never a socket path. The receiver accepts it only from a process that runs where that listener
/// runs (outside every pane). A member sends as `<member>@<team>`. `checks_out` tells whether a
/// listener really runs outside every pane: its entry only says so.
pub fn own_address(home: &Home, checks_out: &dyn Fn(&PeerEntry) -> bool) -> String {
    own_listener(home, checks_out)
        .and_then(|peer| peer.reply_address())
        .unwrap_or_else(|| PERSON.to_owned())
}

/// The live listener of the person's that `SWARM_SOCKET` names, else the newest on this terminal.
pub fn own_listener(home: &Home, checks_out: &dyn Fn(&PeerEntry) -> bool) -> Option<PeerEntry> {
    let peers = live_peers(home).ok()?;
    if let Some(socket) = std::env::var_os("SWARM_SOCKET").filter(|s| !s.is_empty()) {
        let socket = Path::new(&socket);
        let same = |path: &Path| {
            path == socket
                || std::fs::canonicalize(path)
                    .is_ok_and(|a| std::fs::canonicalize(socket).is_ok_and(|b| a == b))
        };
        return peers.into_iter().find(|p| same(&p.socket));
    }
    let tty = own_tty()?;
    peers
        .into_iter()
        .rev()
        .find(|p| p.is_persons() && p.tty.as_deref() == Some(tty.as_str()) && checks_out(p))
}

/// A receiver that closes the connection unanswered (it refused us, or died) is one clear error.
fn hung_up(path: &Path, action: &str, err: std::io::Error) -> Error {
    match err.kind() {
        std::io::ErrorKind::BrokenPipe
        | std::io::ErrorKind::ConnectionReset
        | std::io::ErrorKind::UnexpectedEof => Error::runtime(format!(
            "the peer at {} closed the connection without acknowledging the message",
            path.display()
        ))
        .with_hint("a peer only accepts connections from its own user"),
        _ => Error::io(action, path, err),
    }
}

/// A connection to a peer socket, before anything is said on it: the sender first learns from it
/// who serves the socket ([`Connection::server`]), then delivers.
pub struct Connection {
    stream: UnixStream,
    path: PathBuf,
}

/// Connects to the peer socket at `path`. Not found: nothing listens there.
pub fn connect(path: &Path) -> Result<Connection> {
    let stream = UnixStream::connect(path).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused => {
            Error::not_found(format!("no peer is listening at {}", path.display()))
                .with_hint("`swarm peers` lists live peers")
        }
        _ => Error::io("connect to", path, err),
    })?;
    Ok(Connection {
        stream,
        path: path.to_owned(),
    })
}

impl Connection {
    /// The process that serves the socket (the one that listens), pinned from this connection,
    /// or why it cannot be told.
    pub(crate) fn server(&self) -> std::result::Result<Pinned, String> {
        Pinned::peer(&self.stream)
    }

    /// The user the process serving the socket runs as, if it can be read.
    pub(crate) fn server_uid(&self) -> Option<u32> {
        use nix::sys::socket::{getsockopt, sockopt};
        getsockopt(&self.stream, sockopt::PeerCredentials)
            .ok()
            .map(|cred| cred.uid())
    }

    /// Delivers one message and returns its id once the receiver has acknowledged it.
    pub(crate) fn deliver(self, request: &Request) -> Result<String> {
        let line = serde_json::to_vec(request).map_err(|err| Error::runtime(err.to_string()))?;
        if line.len() > MAX_LINE_BYTES {
            return Err(Error::usage(format!(
                "the message is {} bytes as a peer line; a peer socket takes at most {MAX_LINE_BYTES} bytes (1 MiB)",
                line.len()
            )));
        }
        let path = self.path.clone();
        let ack = self.exchange(line)?;
        if ack.ok {
            Ok(ack.msg_id.unwrap_or_else(|| request.msg_id.clone()))
        } else {
            Err(refused(&path, "refused the message", ack))
        }
    }

    /// Asks a member's supervisor which of the signed lead messages `query` names its run has
    /// taken before (and, with `take`, takes them).
    pub(crate) fn ask_taken(self, query: &TakenQuery) -> Result<Vec<String>> {
        let line = serde_json::to_vec(query).map_err(|err| Error::runtime(err.to_string()))?;
        let path = self.path.clone();
        let ack = self.exchange(line)?;
        match ack.taken {
            Some(taken) if ack.ok => Ok(taken),
            _ => Err(refused(&path, "did not answer what was taken", ack)),
        }
    }

    /// Delivers `lines` (Claude Code's frames) as Claude Code delivers them: writes them,
    /// half-closes, and counts them delivered when the receiver closes having said nothing.
    /// A receiver that says something refused them (a swarm peer says why); one that has not
    /// closed within [`CLOSE_WAIT`] may not have them.
    pub(crate) fn deliver_frames(self, lines: &[String]) -> Result<()> {
        let Self { mut stream, path } = self;
        let path = path.as_path();
        let mut bytes = Vec::new();
        for line in lines {
            bytes.extend_from_slice(line.as_bytes());
            bytes.push(b'\n');
        }
        if bytes.len() > MAX_LINE_BYTES {
            return Err(Error::usage(format!(
                "the message is {} bytes as Claude Code's frame; a peer socket takes at most {MAX_LINE_BYTES} bytes (1 MiB)",
                bytes.len()
            )));
        }
        let deadline = std::time::Instant::now() + CLOSE_WAIT;
        stream
            .set_write_timeout(Some(CLOSE_WAIT))
            .map_err(|err| Error::io("configure", path, err))?;
        stream
            .write_all(&bytes)
            .and_then(|()| stream.shutdown(std::net::Shutdown::Write))
            .map_err(|err| hung_up(path, "send to", err))?;
        let mut said = Vec::new();
        let mut chunk = [0_u8; 4096];
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return Err(unclosed(path));
            }
            stream
                .set_read_timeout(Some(left))
                .map_err(|err| Error::io("configure", path, err))?;
            match stream.read(&mut chunk) {
                Ok(0) => break,
                // A refusal is one line; a swarm socket holds the connection open after it.
                Ok(n) => {
                    said.extend_from_slice(&chunk[..n]);
                    if said.contains(&b'\n') || said.len() >= MAX_LINE_BYTES {
                        break;
                    }
                }
                Err(err)
                    if matches!(
                        err.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err(unclosed(path));
                }
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                // Reset: it went away without a clean close, which is no delivery.
                Err(err) => return Err(hung_up(path, "hear back from", err)),
            }
        }
        if said.is_empty() {
            return Ok(());
        }
        let said = String::from_utf8_lossy(&said);
        let why = serde_json::from_str::<Ack>(said.lines().next().unwrap_or_default())
            .ok()
            .and_then(|ack| ack.error)
            .unwrap_or_else(|| said.trim().to_owned());
        Err(Error::runtime(format!(
            "the peer at {} refused the message: {why}",
            path.display()
        )))
    }

    /// Says one line and reads the one answering it.
    fn exchange(self, mut line: Vec<u8>) -> Result<Ack> {
        let Self { mut stream, path } = self;
        let path = path.as_path();
        line.push(b'\n');
        stream
            .set_read_timeout(Some(ACK_WAIT))
            .map_err(|err| Error::io("configure", path, err))?;
        stream
            .write_all(&line)
            .map_err(|err| hung_up(path, "send to", err))?;
        let mut answer = String::new();
        BufReader::new(&stream)
            .take(MAX_LINE_BYTES as u64)
            .read_line(&mut answer)
            .map_err(|err| hung_up(path, "read the acknowledgement from", err))?;
        if answer.trim().is_empty() {
            let closed = std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
            return Err(hung_up(path, "read the acknowledgement from", closed));
        }
        serde_json::from_str(answer.trim()).map_err(|_| {
            Error::runtime(format!(
                "the peer at {} answered garbage: {}",
                path.display(),
                answer.trim()
            ))
        })
    }
}

/// A receiver of Claude Code's frames that has not closed the connection in time.
fn unclosed(path: &Path) -> Error {
    Error::runtime(format!(
        "the peer at {} did not close the connection within {}s: it may not have the message",
        path.display(),
        CLOSE_WAIT.as_secs()
    ))
    .with_hint("a Claude Code session closes at once once it has a message; is it still running?")
}

/// A refusal the peer at `path` answered.
fn refused(path: &Path, what: &str, ack: Ack) -> Error {
    Error::new(
        ErrorKind::Runtime,
        format!(
            "the peer at {} {what}: {}",
            path.display(),
            ack.error.unwrap_or_else(|| "no reason given".to_owned())
        ),
    )
}
