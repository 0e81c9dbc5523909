//! Files on disk: where they are, how they are written durably and locked, the mailboxes, the
//! team's config store, and the one watcher that waits for them to change.

pub(crate) mod archive;
pub(crate) mod durable;
pub(crate) mod follow;
pub(crate) mod lock;
pub(crate) mod mailbox;
pub(crate) mod node;
pub(crate) mod paths;
pub(crate) mod permissions;
pub(crate) mod removal;
pub(crate) mod tasks;
pub(crate) mod team;
pub(crate) mod watcher;
