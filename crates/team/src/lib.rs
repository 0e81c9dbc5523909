//! A team on one machine: `uds:` peers (`peer`), turning a team file into panes and processes
//! (`launch`), and each member's life after launch: its supervisor, liveness, endings, signed lead
//! messages (`member`).
//!
//! Layers above `swarm-core` (docs/ARCHITECTURE.md, "Layers"); what they must ask of other hosts
//! they ask through `member::reach::Reach`.

pub use swarm_core::{base, error, format, policy, protocol, store};

pub mod launch;
pub mod member;
pub mod peer;
