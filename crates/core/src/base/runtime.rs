//! Blocking work from a tokio runtime: the supervisor and `swarm node` each serve a socket or a
//! connection on one runtime while file locks, fsyncs, tmux and git block.

use std::future::Future;
use std::sync::Arc;

/// Work that blocks, run on tokio's blocking pool for whatever shares it behind an `Arc`.
pub trait OffRuntime: Send + Sync + 'static {
    /// Runs `work` on tokio's blocking pool and waits for it without blocking the runtime, which
    /// meanwhile goes on serving. Anything that takes a file lock, fsyncs, or runs tmux or git
    /// from a runtime goes through here.
    fn off_runtime<R, W>(self: &Arc<Self>, work: W) -> impl Future<Output = R> + use<R, W, Self>
    where
        R: Send + 'static,
        W: FnOnce(&Self) -> R + Send + 'static,
    {
        let this = Arc::clone(self);
        async move {
            // Only a shutting-down runtime cancels a blocking task, and the runtime lives as long
            // as what it serves; a panic in the work is the caller's own.
            tokio::task::spawn_blocking(move || work(&this))
                .await
                .unwrap_or_else(|err| std::panic::resume_unwind(err.into_panic()))
        }
    }
}

impl<T: Send + Sync + 'static> OffRuntime for T {}
