//! Files on disk: where they are, how they are written durably and locked, the mailboxes, the
//! team's config store, and the one watcher that waits for them to change.

pub mod activity;
pub mod archive;
pub mod durable;
pub mod events;
pub mod follow;
pub mod lock;
pub mod mailbox;
pub mod node;
pub mod paths;
pub mod permissions;
pub mod relaunch;
pub mod removal;
pub mod tasks;
pub mod team;
pub mod usage;
pub mod watcher;
