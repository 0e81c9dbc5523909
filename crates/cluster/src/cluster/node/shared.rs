//! What every service of `swarm node` shares (docs/ARCHITECTURE.md, "Across machines"): one file
//! of its own, so each service (`node/<service>.rs`) can take it without importing `node/mod.rs`,
//! which starts them.

use async_nats::jetstream;
use tokio::sync::watch;

use crate::base::names::Name;
use crate::store::paths::Home;

/// What every service of the node shares.
pub(crate) struct Node {
    pub(crate) home: Home,
    /// This host's name, as team files give it in `host =`.
    pub(crate) name: Name,
    pub(crate) client: async_nats::Client,
    pub(crate) js: jetstream::Context,
    pub(crate) url: String,
    /// Whether the client reaches the server now; follows its reconnections.
    pub(crate) connected: watch::Receiver<bool>,
    /// The tmux server members started here go on (`--socket`); the default one when `None`.
    pub(crate) socket: Option<String>,
}
