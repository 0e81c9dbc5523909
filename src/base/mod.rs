//! The bottom layer: time, names, processes, blocking work off a runtime, text for terminals,
//! which values are secret.
//! Nothing here knows what a team is.

pub(crate) mod clock;
pub(crate) mod ids;
pub(crate) mod names;
pub(crate) mod process;
pub(crate) mod runtime;
pub(crate) mod screen;
pub(crate) mod secrets;
pub(crate) mod text;

/// The hidden test hooks (`clock`, `ids`). They apply to the one process they are given to: swarm
/// removes them from every process it starts, since a seeded id source shared by two processes
/// would repeat ids, and a repeated `msg_id` is a dropped message.
pub(crate) const TEST_HOOKS: [&str; 2] = [clock::NOW_VAR, ids::SEED_VAR];
