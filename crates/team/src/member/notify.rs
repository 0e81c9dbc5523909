//! Claude Code's `control` frames on a swarm socket (docs/ARCHITECTURE.md, "Peers"). A session
//! that sends `notify_when_idle` is told once, with a `peer_idle_notice`, when the peer goes idle
//! or ends: the notice goes to the socket the subscription names as its `from`, and only if the
//! process serving that socket is the one that subscribed (Claude Code's own check before it
//! answers, `expectPeerPid`), so no one can have another's notices sent to a socket of their
//! choosing. `rename`, `peer_message_status` and `peer_idle_notice` ask nothing of a swarm peer:
//! they are logged.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::Notify;

use crate::base::clock;
use crate::base::process::Pinned;
use crate::error::{Error, Result};
use crate::member::identity;
use crate::peer::{self, ControlFrame};

/// What a swarm peer does with a control frame.
#[derive(Debug)]
pub enum Asked {
    /// `notify_when_idle`: a subscription to answer once.
    Notify(Subscription),
    /// Anything else: taken, with a line for the log saying what it was.
    Noted(String),
}

/// A `notify_when_idle` of a Claude Code session's, to be answered once.
#[derive(Debug, Clone)]
pub struct Subscription {
    /// The process that subscribed, pinned as it connected.
    subscriber: Arc<Pinned>,
    /// Where the notice goes: the subscriber's own socket.
    reply_to: PathBuf,
    /// The subscription's `msg_id`, which the notice names.
    id: String,
}

/// The subscriptions a peer has not answered yet.
#[derive(Default)]
pub(crate) struct Subscribers {
    waiting: Mutex<Vec<Subscription>>,
    added: Notify,
}

impl Subscribers {
    pub(crate) fn add(&self, subscription: Subscription) {
        self.lock().push(subscription);
        self.added.notify_one();
    }

    /// Every subscription waiting, each to be answered once.
    pub(crate) fn take(&self) -> Vec<Subscription> {
        std::mem::take(&mut *self.lock())
    }

    /// Returns once at least one subscription waits.
    pub(crate) async fn wait_for_one(&self) {
        while self.lock().is_empty() {
            self.added.notified().await;
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Subscription>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What the notice says of the peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Done with what it had, waiting for more.
    Idle,
    /// Its program has ended.
    Exited,
    /// It cannot tell (a `swarm listen`, which is a person's terminal).
    Unavailable,
}

impl State {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Exited => "exited",
            Self::Unavailable => "unavailable",
        }
    }
}

/// What `frame`, from the pinned process `sender`, asks; a subscription whose reply address is
/// not a socket the sender itself listens on is refused.
pub fn read(frame: &ControlFrame, sender: &Arc<Pinned>) -> Result<Asked> {
    let detail = |keys: &[&str]| {
        keys.iter()
            .filter_map(|key| frame.text(key).map(|value| format!("{key}={value}")))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let noted = |what: &str, keys: &[&str]| {
        Asked::Noted(format!(
            "Claude Code process {} {what} {}",
            sender.pid,
            detail(keys)
        ))
    };
    Ok(match frame.action.as_str() {
        "notify_when_idle" => {
            let reply_to = frame
                .text("from")
                .and_then(peer::address_path)
                .ok_or_else(|| Error::usage("notify_when_idle needs from, a uds: address"))?;
            let id = frame
                .text("msg_id")
                .filter(|id| !id.is_empty())
                .ok_or_else(|| Error::usage("notify_when_idle needs a msg_id"))?;
            let reply_to = PathBuf::from(reply_to);
            if !identity::listens_at(sender, &reply_to) {
                return Err(Error::usage(format!(
                    "notify_when_idle asks for notices at {}, where process {} does not listen",
                    reply_to.display(),
                    sender.pid
                )));
            }
            Asked::Notify(Subscription {
                subscriber: Arc::clone(sender),
                reply_to,
                id: id.to_owned(),
            })
        }
        "rename" => noted("is now called", &["name"]),
        "peer_message_status" => noted(
            "reports on a message of ours:",
            &["orig_msg_id", "status", "status_detail", "drop_reason"],
        ),
        "peer_idle_notice" => noted(
            "sent an idle notice nobody here asked for:",
            &["orig_msg_id", "state"],
        ),
        other => Asked::Noted(format!(
            "Claude Code process {} sent control action {other}, which asks nothing of a swarm peer",
            sender.pid
        )),
    })
}

impl Subscription {
    /// Sends the notice, from the peer whose address is `own` (`uds:<path>`), as Claude Code
    /// sends one: to the subscriber's socket, once the connection shows the subscriber serves it.
    pub fn answer(&self, state: State, own: Option<&str>) -> Result<()> {
        let path = self.reply_to.as_path();
        if std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink()) {
            return Err(Error::runtime(format!(
                "not sending an idle notice to {}: it is a symlink",
                path.display()
            )));
        }
        let connection = peer::connect(path)?;
        let server = connection
            .server()
            .map_err(|why| Error::runtime(format!("who serves {}: {why}", path.display())))?;
        if server.pid != self.subscriber.pid || server.start() != self.subscriber.start() {
            return Err(refused_endpoint(path, server.pid, self.subscriber.pid));
        }
        let finished_at = (state != State::Unavailable).then(clock::now_ms);
        let notice = peer::idle_notice(
            &self.id,
            state.as_str(),
            finished_at,
            own,
            &crate::base::ids::fresh().to_string(),
        );
        connection.deliver_frames(&[notice])
    }

    /// For the log: whom the notice goes to.
    pub fn describe(&self) -> String {
        format!(
            "process {} at {} (subscription {})",
            self.subscriber.pid,
            self.reply_to.display(),
            self.id
        )
    }
}

fn refused_endpoint(path: &Path, serving: i32, subscriber: i32) -> Error {
    Error::runtime(format!(
        "not sending an idle notice to {}: process {serving} serves it, not {subscriber}, which subscribed",
        path.display()
    ))
}
