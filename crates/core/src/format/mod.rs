//! The formats swarm shares with Claude Code: config.json's schema, an inbox message, the
//! structured protocol messages inside it, the signature on a lead's message, the typed
//! choices a member is made with, and how paste delivery types a message. Data and
//! its rules only; no file is read or written here.

pub mod config;
pub mod event;
pub mod message;
pub mod notify;
pub mod paste;
pub mod permission_rule;
pub mod settings;
pub mod signature;
pub mod structured;
pub mod task;
pub mod usage;
