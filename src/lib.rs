//! swarm: teams of agent processes in tmux panes, coordinating through locked JSON mailboxes.
//!
//! `main.rs` only calls [`run`]. The folders are layers, each calling only those listed before it
//! (docs/ARCHITECTURE.md, "Layers"): `base`, `format`, `store`, `policy`, `protocol`, `peer`,
//! `launch`, `member`, `cluster`, `dashboard`, and `cli` on top. This crate holds the last two;
//! the others come from the workspace's crates `swarm-core`, `swarm-team` and `swarm-cluster`,
//! whose roots re-export the layers below them.

use swarm_cluster::{base, cluster, error, format, launch, member, peer, policy, protocol, store};

mod cli;
mod dashboard;

pub use cli::run;

/// What the benchmark harness (`benches/swarm.rs`) drives directly, below the command line.
pub use error::{Error, Result};
pub use format::message::InboxMessage;
pub use store::durable::atomic_write;
pub use store::mailbox::Mailbox;
pub use store::paths::Home;
pub use store::watcher::{Watcher, named};
