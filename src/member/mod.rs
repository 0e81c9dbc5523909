//! A member's life once launched: the supervisor in its pane, what state it is really in, which
//! processes are its, how it ends, and how it is stopped from outside; who a process is by where
//! it runs, and the signed lead messages that rest on it (the teammates' keys, their signing
//! agent, and the readers' verdicts).

use std::time::Duration;

pub(crate) mod ending;
pub(crate) mod identity;
pub(crate) mod liveness;
pub(crate) mod logfile;
pub(crate) mod processes;
pub(crate) mod seal;
pub(crate) mod signer;
pub(crate) mod stop;
pub(crate) mod supervisor;
pub(crate) mod verify;

/// How long a program has to exit after SIGTERM before its group gets SIGKILL.
pub(crate) const GRACE: Duration = Duration::from_secs(5);
