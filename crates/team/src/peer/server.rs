//! The peer server. It accepts only connections whose `SO_PEERCRED` uid is its own, pins the
//! process that connected as it accepts (`base/process.rs`, `Pinned`), reads one JSON line at a
//! time (at most 1 MiB, within 5 s), hands each message to its sink with that pinned sender (who
//! sent it is the sink's to tell, from the connection, never from the `from` the message claims)
//! and answers. A sender that cannot be pinned is answered with why, and closed.
//! A bad client gets `{"ok": false, "error"}` and is closed; the listener and the other
//! connections carry on. Claude Code's frames (`peer/claude.rs`) are taken on the same socket
//! and answered as Claude Code answers them, by nothing: the connection is closed once the client
//! has half-closed (or gone quiet for 5 s), which its sender counts as delivery. A refused frame
//! gets the error line, and the connection is held open until the sender goes, so that Claude
//! Code's sender, which reads nothing and takes any close for delivery, times out and fails.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};

use super::claude::{self, ControlFrame, Frame};
use super::registry::{self, PeerEntry, Registration};
use super::runtime::runtime_dir;
use super::{Ack, MAX_LINE_BYTES, Request, TakenQuery};
use crate::base::process::Pinned;
use crate::error::{Error, Result};
use crate::store::paths::Home;

/// How long a client may stay silent before it is answered with an error and closed.
pub(crate) const IDLE: Duration = Duration::from_secs(5);

/// How long a refused Claude Code sender is kept waiting at most: longer than its own timeout.
const REFUSAL_HOLD: Duration = Duration::from_secs(10);

/// How often a held connection is looked at.
const HOLD_POLL: Duration = Duration::from_millis(100);

/// What happens to an accepted message: stored in an inbox, or printed. It runs on a blocking
/// thread and must finish (durably, for an inbox) before the sender is acknowledged.
pub type Sink = Arc<dyn Fn(&Incoming) -> Result<()> + Send + Sync>;

/// What a member's supervisor answers to a [`TakenQuery`], asked by the pinned process: the ids
/// its run had taken before. `None` for a listener, which keeps no such record.
pub type Ledger = Arc<dyn Fn(&TakenQuery, &Pinned) -> Result<Vec<String>> + Send + Sync>;

/// What Claude Code's `control` frames ask of a peer (docs/ARCHITECTURE.md, "Peers"), asked by
/// the pinned process that sent them; on a blocking thread.
pub type Control = Arc<dyn Fn(&ControlFrame, &Arc<Pinned>) -> Result<()> + Send + Sync>;

/// Everything a peer socket serves: messages, questions about what was taken (a member's
/// supervisor only), Claude Code's control frames.
#[derive(Clone)]
pub struct Handlers {
    pub sink: Sink,
    pub ledger: Option<Ledger>,
    pub control: Control,
}

/// A message that arrived on the socket, and the process that sent it.
#[derive(Debug, Clone)]
pub struct Incoming {
    pub message: Request,
    /// The process that connected, pinned when the connection was accepted.
    pub(crate) sender: Arc<Pinned>,
    /// The format it came in.
    pub(crate) via: Via,
}

/// The format a message came in: swarm's line, answered with an acknowledgement, or Claude
/// Code's `user` frame, whose `from` is the sending session's own socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    Swarm,
    ClaudeCode,
}

/// A bound peer socket with its registry entry; both are removed when it is dropped.
pub struct Listener {
    unix: UnixListener,
    socket: PathBuf,
    entry: PeerEntry,
    _registration: Registration,
}

impl Listener {
    /// Binds `<runtime>/<pid>.sock` (mode 0600) and registers it under `home`.
    pub fn bind(
        home: &Home,
        label: Option<String>,
        team: Option<String>,
        agent: Option<String>,
    ) -> Result<Self> {
        let socket = runtime_dir()?.socket(std::process::id());
        // A socket file left by an earlier process with this pid is stale: that process is gone.
        let _ = std::fs::remove_file(&socket);
        let listener =
            UnixListener::bind(&socket).map_err(|err| Error::io("listen on", &socket, err))?;
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))
            .map_err(|err| Error::io("restrict", &socket, err))?;
        let entry = registry::entry(socket.clone(), label, team, agent);
        let registration = Registration::write(home, &entry)?;
        Ok(Self {
            unix: listener,
            socket,
            entry,
            _registration: registration,
        })
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// What it registered as.
    pub fn entry(&self) -> &PeerEntry {
        &self.entry
    }

    pub fn address(&self) -> String {
        format!("uds:{}", self.socket.display())
    }

    /// Serves connections until the task is dropped, each line to its handler.
    pub async fn serve(&self, handlers: Handlers) {
        let own_uid = nix::unistd::getuid().as_raw();
        loop {
            match self.unix.accept().await {
                Ok((stream, _)) => {
                    tokio::spawn(handle(stream, handlers.clone(), own_uid));
                }
                Err(err) => {
                    tracing::warn!("accepting a peer connection failed: {err}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }
}

async fn handle(stream: UnixStream, handlers: Handlers, own_uid: u32) {
    match stream.peer_cred() {
        Ok(cred) if cred.uid() == own_uid => {}
        Ok(cred) => {
            tracing::warn!(
                "refused a peer connection from uid {} (pid {}): only uid {own_uid} may send here",
                cred.uid(),
                cred.pid()
                    .map_or_else(|| "?".to_owned(), |pid| pid.to_string())
            );
            return;
        }
        Err(err) => {
            tracing::warn!("refused a peer connection whose credentials cannot be read: {err}");
            return;
        }
    }
    // Who connected, tied to the connection now: never a bare pid looked up later.
    let sender = Pinned::peer(&stream)
        .map(Arc::new)
        .map_err(|why| format!("cannot tell who sent the message: {why}"));
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    // Whether the client speaks Claude Code's format: it is answered by nothing but the close.
    let mut claude = false;
    loop {
        let line = match tokio::time::timeout(IDLE, read_line(&mut reader)).await {
            // All it said was handled; Claude Code's client waits for the close, not for more.
            Err(_) if claude => return,
            Err(_) => Err(format!("nothing arrived within {}s", IDLE.as_secs())),
            Ok(Ok(None)) => return,
            Ok(Ok(Some(line))) => Ok(line),
            Ok(Err(problem)) => Err(problem),
        };
        let parsed = line.and_then(|line| parse(&line));
        claude |= matches!(parsed, Ok(Line::Claude(_)));
        let outcome = match parsed.and_then(|line| Ok((line, sender.clone()?))) {
            Ok((Line::Claude(Ok(Frame::Auth)), _)) => continue,
            Ok((Line::Claude(Ok(Frame::User(frame))), sender)) => {
                let incoming = Incoming {
                    message: Request {
                        from: frame.from.unwrap_or_default(),
                        text: frame.content,
                        summary: None,
                        msg_id: frame
                            .msg_id
                            .unwrap_or_else(|| crate::base::ids::fresh().to_string()),
                        timestamp: None,
                        lead_sig: None,
                    },
                    sender,
                    via: Via::ClaudeCode,
                };
                run(&handlers.sink, incoming, |sink, incoming| sink(incoming))
                    .await
                    .map(|()| None)
            }
            Ok((Line::Claude(Ok(Frame::Control(frame))), sender)) => {
                let control = Arc::clone(&handlers.control);
                run(&control, (frame, sender), |control, (frame, sender)| {
                    control(frame, sender)
                })
                .await
                .map(|()| None)
            }
            Ok((Line::Message(message), sender)) => {
                let incoming = Incoming {
                    message,
                    sender,
                    via: Via::Swarm,
                };
                run(&handlers.sink, incoming, |sink, incoming| {
                    sink(incoming).map(|()| Ack::accepted(&incoming.message.msg_id))
                })
                .await
                .map(Some)
            }
            Ok((Line::Taken(query), sender)) => match &handlers.ledger {
                Some(ledger) => run(ledger, (query, sender), |ledger, (query, sender)| {
                    ledger(query, sender).map(Ack::taken)
                })
                .await
                .map(Some),
                None => Err("this peer keeps no record of the lead's messages taken".to_owned()),
            },
            Ok((Line::Claude(Err(problem)), _)) | Err(problem) => Err(problem),
        };
        let (reply, keep_going) = match outcome {
            // Claude Code's frames are answered by nothing: it counts the close as delivery.
            Ok(None) => continue,
            Ok(Some(ack)) => (ack, true),
            Err(problem) => {
                if claude {
                    tracing::warn!("refused a Claude Code frame: {problem}");
                }
                (Ack::refused(problem), false)
            }
        };
        let mut reply = serde_json::to_vec(&reply).unwrap_or_default();
        reply.push(b'\n');
        let written = write.write_all(&reply).await.is_ok();
        if !keep_going && claude {
            hold_until_gone(write.as_ref()).await;
        }
        if !written || !keep_going {
            return;
        }
    }
}

/// Keeps a connection whose Claude Code frame was refused open until its sender has gone (closed
/// its end, which a client that reads the refusal does at once) or [`REFUSAL_HOLD`] has passed.
/// Claude Code's sender reads nothing and counts any close as delivery; only its own timeout (5 s
/// without activity) makes its send fail, as a refused one must.
async fn hold_until_gone(stream: &UnixStream) {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd;
    let deadline = tokio::time::Instant::now() + REFUSAL_HOLD;
    while tokio::time::Instant::now() < deadline {
        // No events asked: only the hang-up (both directions shut) or an error is reported.
        let mut fds = [PollFd::new(stream.as_fd(), PollFlags::empty())];
        let gone = poll(&mut fds, PollTimeout::ZERO).is_err()
            || fds[0]
                .revents()
                .is_some_and(|seen| seen.intersects(PollFlags::POLLHUP | PollFlags::POLLERR));
        if gone {
            return;
        }
        tokio::time::sleep(HOLD_POLL).await;
    }
}

/// Runs `work` with `handler` on a blocking thread (it may store a message durably) and gives
/// its result, or why it could not be had, as one line.
async fn run<H, A, T>(
    handler: &Arc<H>,
    argument: A,
    work: impl FnOnce(&H, &A) -> Result<T> + Send + 'static,
) -> Result<T, String>
where
    H: ?Sized + Send + Sync + 'static,
    A: Send + 'static,
    T: Send + 'static,
{
    let handler = Arc::clone(handler);
    match tokio::task::spawn_blocking(move || work(&handler, &argument)).await {
        Ok(Ok(done)) => Ok(done),
        Ok(Err(err)) => Err(err.message().to_owned()),
        Err(err) => Err(format!("the message could not be handled: {err}")),
    }
}

/// One line without its newline; `None` at a clean end of input. Refuses lines over the limit.
async fn read_line(reader: &mut (impl AsyncBufRead + Unpin)) -> Result<Option<Vec<u8>>, String> {
    let mut line = Vec::new();
    loop {
        let available = reader
            .fill_buf()
            .await
            .map_err(|err| format!("read failed: {err}"))?;
        if available.is_empty() {
            return Ok((!line.is_empty()).then_some(line));
        }
        let (chunk, found) = match available.iter().position(|b| *b == b'\n') {
            Some(end) => (&available[..end], Some(end + 1)),
            None => (available, None),
        };
        if line.len() + chunk.len() > MAX_LINE_BYTES {
            return Err(format!(
                "line is over the limit of {MAX_LINE_BYTES} bytes (1 MiB)"
            ));
        }
        line.extend_from_slice(chunk);
        let used = found.unwrap_or(available.len());
        reader.consume(used);
        if found.is_some() {
            return Ok(Some(line));
        }
    }
}

/// One line a client says: a message, a question about what was taken, or one of Claude Code's
/// frames, told apart by its `type`, which swarm's own lines never have.
enum Line {
    Message(Request),
    Taken(TakenQuery),
    /// One of Claude Code's frames, or why it is not a good one.
    Claude(Result<Frame, String>),
}

fn parse(line: &[u8]) -> Result<Line, String> {
    let value: serde_json::Value =
        serde_json::from_slice(line).map_err(|err| format!("invalid JSON: {err}"))?;
    if let serde_json::Value::Object(object) = &value
        && let Some(kind) = object.get("type")
    {
        return Ok(Line::Claude(
            kind.as_str()
                .ok_or_else(|| "invalid frame: its type is not a string".to_owned())
                .and_then(|kind| claude::parse(kind, object)),
        ));
    }
    if value.get("taken").is_some() && value.get("text").is_none() {
        return serde_json::from_value(value)
            .map(Line::Taken)
            .map_err(|err| format!("invalid question: {err}"));
    }
    let request: Request =
        serde_json::from_value(value).map_err(|err| format!("invalid message: {err}"))?;
    if request.from.is_empty() || request.msg_id.is_empty() {
        return Err("invalid message: from and msg_id must not be empty".to_owned());
    }
    Ok(Line::Message(request))
}
