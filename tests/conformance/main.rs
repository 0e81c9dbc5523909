//! The conformance tier: swarm against the real Claude Code, at the version pinned in
//! `tests/conformance/claude-code.version`, as a teammate swarm launches, its model a loopback
//! stand-in the tests own (docs/ARCHITECTURE.md, "Conformance"). Every test is ignored by a plain
//! `cargo test`; `scripts/conformance` installs Claude Code and runs them.

#[path = "../swarm/harness.rs"]
mod harness;

mod activity;
mod board;
mod claude;
mod codex;
mod costs;
mod gemini;
mod model;
mod permissions;
mod resume;
mod signatures;
mod stand_in;
mod teammate;
mod uds;
