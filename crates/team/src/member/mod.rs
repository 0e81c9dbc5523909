//! A member's life once launched: the supervisor in its pane, what state it is really in, which
//! processes are its, how it ends, and how it is stopped from outside; who a process is by where
//! it runs, and the signed lead messages that rest on it (the teammates' keys, their signing
//! agent, and the readers' verdicts).

use std::time::Duration;

pub mod activity;
pub mod answer;
pub mod down;
pub mod ending;
pub mod fence;
pub mod identity;
pub mod liveness;
pub mod log_follow;
pub mod logfile;
pub mod notify;
pub mod pane;
pub mod permission;
pub mod permission_ask;
pub(crate) mod processes;
pub mod proxy;
pub mod reach;
pub mod remove;
pub mod resume;
pub mod seal;
pub mod send;
pub mod signer;
pub mod stop;
pub mod supervisor;
pub mod verify;

// The supervisor's steps from "end the program" to its ending recorded (docs/ARCHITECTURE.md,
// "The supervisor"). `stop` waits for them by the same numbers: `ending_bound`.

/// How long a program has to exit after SIGTERM before its group gets SIGKILL.
pub(crate) const GRACE: Duration = Duration::from_secs(5);

/// How long what the program left behind has after SIGTERM, once the program itself has ended.
pub(crate) const SWEEP_GRACE: Duration = Duration::from_secs(1);

/// How long the supervisor waits for its last line to reach the pane's log.
pub(crate) const ANNOUNCE_WAIT: Duration = Duration::from_secs(2);

/// What no step above bounds: git removing a worktree, fsync and scheduling on a busy machine.
const SLACK: Duration = Duration::from_secs(3);

/// The longest a supervisor asked to end its program takes to record the ending, unless something
/// it waits for is wedged: the grace and SIGKILL, the sweep of what the program left (SIGTERM, the
/// sweep's grace, SIGKILL for up to `processes::KILL_BOUND`), its last line reaching the log, and
/// the config lock, where other tools' locks are waited for up to `SWARM_LOCK_TIMEOUT`.
pub fn ending_bound() -> Duration {
    [
        GRACE,
        SWEEP_GRACE,
        processes::KILL_BOUND,
        ANNOUNCE_WAIT,
        crate::store::lock::wait_bound(),
        SLACK,
    ]
    .into_iter()
    .fold(Duration::ZERO, Duration::saturating_add)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `stop` used to allow the grace and 3 s more, less than a supervisor whose program and
    /// its leftovers ignore SIGTERM needs: it took the ending over from a supervisor still at work.
    #[test]
    fn the_ending_bound_covers_every_step_a_supervisor_takes() {
        let steps = GRACE
            + SWEEP_GRACE
            + processes::KILL_BOUND
            + ANNOUNCE_WAIT
            + crate::store::lock::wait_bound();
        assert!(ending_bound() > steps, "{:?} <= {steps:?}", ending_bound());
    }
}
