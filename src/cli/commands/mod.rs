//! One file per command, each with its `Args` and a `run` function. Commands never import each
//! other: what two of them share lives in `cli/args.rs`, `cli/render.rs`, `cli/removal.rs` or a
//! lower layer.

pub(super) mod attach;
pub(super) mod completions;
pub(super) mod down;
pub(super) mod events;
pub(super) mod hook;
pub(super) mod inbox;
pub(super) mod info;
pub(super) mod init;
pub(super) mod join;
pub(super) mod key_agent;
pub(super) mod listen;
pub(super) mod log;
pub(super) mod ls;
pub(super) mod man;
pub(super) mod node;
pub(super) mod peers;
pub(super) mod permission;
pub(super) mod pipe_log;
pub(super) mod plan;
pub(super) mod prune;
pub(super) mod recv;
pub(super) mod rm;
pub(super) mod run;
pub(super) mod send;
pub(super) mod shutdown;
pub(super) mod spawn;
pub(super) mod status;
pub(super) mod stop;
pub(super) mod task;
pub(super) mod top;
pub(super) mod type_keys;
pub(super) mod up;
pub(super) mod wait;
pub(super) mod watch;
