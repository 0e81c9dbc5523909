//! `uds:` peers: Unix sockets that reach a swarm process in another terminal, session or team,
//! or a Claude Code session (docs/ARCHITECTURE.md, "Peers"). swarm's wire format is one JSON
//! object per line each way; Claude Code's (`claude.rs`) is taken on the same sockets.

mod claude;
mod client;
mod registry;
mod runtime;
mod server;
mod sessions;

pub use claude::{ControlFrame, auth_line, idle_notice, user_frame};
pub use client::{connect, own_address, own_listener};
pub use registry::{PeerEntry, listed_peers, live_peers, resolve};
pub(crate) use runtime::{is_bound, listening_inode, runtime_dir};
pub use server::{Control, Handlers, Incoming, Ledger, Listener, Sink, Via};
pub use sessions::{Session, is_claude_socket, key_of, live_sessions};

/// The text of a message Claude Code sent, without its `<cross-session-message>` wrapper: what a
/// preview shows.
pub(crate) fn claude_body(content: &str) -> &str {
    claude::body(content)
}

use serde::{Deserialize, Serialize};

/// The variable that names a member's peer socket to its program: its supervisor sets it, and
/// `swarm send` there signs with it.
pub(crate) const SOCKET_VAR: &str = "SWARM_SOCKET";

/// The longest line a peer reads or writes.
pub(crate) const MAX_LINE_BYTES: usize = 1024 * 1024;

/// What a sender writes: `{"from": "uds:…", "text": …, "summary"?: …, "msg_id": …,
/// "timestamp"?: …, "lead_sig"?: …}`. The last two come with a message from the lead's side to a
/// member that verifies the lead's messages (docs/ARCHITECTURE.md, "Signed lead messages").
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request {
    pub from: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    pub msg_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead_sig: Option<String>,
}

/// What a reader asks a member's supervisor on its socket (docs/ARCHITECTURE.md, "Signed lead
/// messages"): `{"taken": [msg_id, …], "take": bool}`, which of these signed lead messages the
/// member's run has already taken; with `take`, they are taken now. Answered by
/// `{"ok": true, "taken": [those taken before]}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TakenQuery {
    pub(crate) taken: Vec<String>,
    #[serde(default)]
    pub(crate) take: bool,
}

/// What a receiver answers: `{"ok": true, "msg_id": …}` (or `"taken"`, to a [`TakenQuery`]) or
/// `{"ok": false, "error": …}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Ack {
    pub(crate) ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) msg_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) taken: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
}

impl Ack {
    pub(crate) fn accepted(msg_id: &str) -> Self {
        Self {
            ok: true,
            msg_id: Some(msg_id.to_owned()),
            taken: None,
            error: None,
        }
    }

    pub(crate) fn taken(before: Vec<String>) -> Self {
        Self {
            ok: true,
            msg_id: None,
            taken: Some(before),
            error: None,
        }
    }

    pub(crate) fn refused(error: impl Into<String>) -> Self {
        Self {
            ok: false,
            msg_id: None,
            taken: None,
            error: Some(error.into()),
        }
    }
}

/// `uds:/path` → `/path`.
pub fn address_path(address: &str) -> Option<&str> {
    address.strip_prefix("uds:").filter(|path| !path.is_empty())
}
