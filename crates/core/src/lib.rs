//! The formats swarm shares with Claude Code and the files that hold them: the error type and its exit
//! statuses (`error`), the wall clock, names and processes (`base`), the formats (`format`), every
//! file on disk with its locks, durable writes and the one watcher (`store`), who may do what
//! (`policy`), and the rules every structured message obeys (`protocol`).
//!
//! The lowest layers (docs/ARCHITECTURE.md, "Layers"): nothing here knows of tmux, panes or hosts.

pub mod base;
pub mod error;
pub mod format;
pub mod policy;
pub mod protocol;
pub mod store;
