//! The formats swarm shares with Claude Code: config.json's schema, an inbox message, the
//! structured protocol messages inside it, the signature on a lead's message, the typed
//! choices a member is made with, and how paste delivery types a message. Data and
//! its rules only; no file is read or written here.

pub(crate) mod config;
pub(crate) mod message;
pub(crate) mod paste;
pub(crate) mod permission_rule;
pub(crate) mod settings;
pub(crate) mod signature;
pub(crate) mod structured;
pub(crate) mod task;
