//! The bottom layer: time, names, processes, blocking work off a runtime, text for terminals,
//! which values are secret.
//! Nothing here knows what a team is.

pub mod clock;
pub mod ids;
pub mod names;
pub mod process;
pub mod runtime;
pub mod screen;
pub mod secrets;
pub mod text;

/// The hidden test hooks (`clock`, `ids`). They apply to the one process they are given to: swarm
/// removes them from every process it starts, since a seeded id source shared by two processes
/// would repeat ids, and a repeated `msg_id` is a dropped message.
pub const TEST_HOOKS: [&str; 2] = [clock::NOW_VAR, ids::SEED_VAR];
