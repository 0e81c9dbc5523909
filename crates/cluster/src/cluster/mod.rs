//! Teams across machines (docs/ARCHITECTURE.md, "Across machines"): `Fleet`, the one way the rest
//! of the program reaches a team's members wherever they run; the connection to a NATS server
//! with JetStream, the names of what swarm keeps there, and `swarm node`, the one process per host
//! that moves what must cross hosts. Local files stay the source of truth on every host;
//! this layer only copies between them and the server.

pub(crate) mod connection;
pub(crate) mod control;
pub mod fleet;
pub(crate) mod logs;
pub mod node;
pub(crate) mod removal;
pub mod resume;
pub(crate) mod roster;
pub mod settings;
pub(crate) mod sign;
pub mod spread;
pub(crate) mod stream;
pub(crate) mod subjects;
pub mod tasks;
