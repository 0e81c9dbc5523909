//! Teams across machines on NATS JetStream: `cluster::Fleet`, the rest of the program's one way to a
//! team's members wherever they run, and `swarm node` with its services (docs/ARCHITECTURE.md,
//! "Across machines").

pub use swarm_core::{base, error, format, policy, protocol, store};
pub use swarm_team::{launch, member, peer};

pub mod cluster;
