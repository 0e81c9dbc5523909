//! What every service of `swarm node` shares: the home, the host's name and the connection
//! (docs/ARCHITECTURE.md, "Across machines"). Each service is `serve(node: Arc<Node>)` in a file
//! of its own beside this one.

use std::future::Future;
use std::sync::Arc;

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
}

impl Node {
    /// Runs `work` on tokio's blocking pool: anything that takes a file lock, fsyncs, or runs
    /// tmux goes through here, so the runtime keeps serving the connection meanwhile.
    pub(crate) fn off_runtime<R, W>(
        self: &Arc<Self>,
        work: W,
    ) -> impl Future<Output = R> + use<R, W>
    where
        R: Send + 'static,
        W: FnOnce(&Self) -> R + Send + 'static,
    {
        let this = Arc::clone(self);
        async move {
            tokio::task::spawn_blocking(move || work(&this))
                .await
                .unwrap_or_else(|err| std::panic::resume_unwind(err.into_panic()))
        }
    }
}
