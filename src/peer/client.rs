//! Sending to a peer: connect, write one JSON line, wait for the acknowledgement.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use super::registry::{PeerEntry, live_peers, own_tty};
use super::{Ack, MAX_LINE_BYTES, Request};
use crate::error::{Error, ErrorKind, Result};
use crate::policy::PERSON;
use crate::store::paths::Home;

/// How long to wait for the receiver's acknowledgement (it may be storing the message durably).
const ACK_WAIT: Duration = Duration::from_secs(30);

/// The name the person at the keyboard sends under, so the receiver can answer it: that of its
/// own listener, `SWARM_SOCKET`'s, else a `swarm listen` running on this same terminal (its
/// newest): `uds:<label>`, or `uds:user` without a label. With no listener of its own, `user`.
/// Never a socket path. The receiver accepts it only from a process that runs where that listener
/// runs (outside every pane). A member sends as `<member>@<team>`.
pub(crate) fn own_address(home: &Home) -> String {
    own_listener(home)
        .and_then(|peer| peer.reply_address())
        .unwrap_or_else(|| PERSON.to_owned())
}

/// The live listener of the person's that `SWARM_SOCKET` names, else the newest on this terminal.
fn own_listener(home: &Home) -> Option<PeerEntry> {
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
        .find(|p| p.is_persons() && p.tty.as_deref() == Some(tty.as_str()))
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

/// Delivers one message and returns its id once the receiver has acknowledged it.
pub(crate) fn deliver(path: &Path, request: &Request) -> Result<String> {
    let mut line = serde_json::to_vec(request).map_err(|err| Error::runtime(err.to_string()))?;
    if line.len() > MAX_LINE_BYTES {
        return Err(Error::usage(format!(
            "the message is {} bytes as a peer line; a peer socket takes at most {MAX_LINE_BYTES} bytes (1 MiB)",
            line.len()
        )));
    }
    line.push(b'\n');
    let mut stream = UnixStream::connect(path).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused => {
            Error::not_found(format!("no peer is listening at {}", path.display()))
                .with_hint("`swarm peers` lists live peers")
        }
        _ => Error::io("connect to", path, err),
    })?;
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
    let ack: Ack = serde_json::from_str(answer.trim()).map_err(|_| {
        Error::runtime(format!(
            "the peer at {} answered garbage: {}",
            path.display(),
            answer.trim()
        ))
    })?;
    if ack.ok {
        Ok(ack.msg_id.unwrap_or_else(|| request.msg_id.clone()))
    } else {
        Err(Error::new(
            ErrorKind::Runtime,
            format!(
                "the peer at {} refused the message: {}",
                path.display(),
                ack.error.unwrap_or_else(|| "no reason given".to_owned())
            ),
        ))
    }
}
