//! Restart policies (docs/ARCHITECTURE.md, "Restart policies"): whether a member's program that
//! ended on its own starts again, after what pause, and when its supervisor gives up. The pause
//! grows as systemd's and overmind's do: 1 s, doubled at each restart in a row, at most a minute;
//! a run that lasted [`STEADY`] starts the count afresh.

use std::time::Duration;

use crate::format::config::{Member, State};
use crate::format::settings::Restart;
use crate::launch::teamfile::DEFAULT_RESTART_MAX;
use crate::member::ending::Ending;

/// The pause before the first restart in a row.
const FIRST_PAUSE: Duration = Duration::from_secs(1);

/// The longest pause between restarts.
const LONGEST_PAUSE: Duration = Duration::from_secs(60);

/// A run this long was no failure in a row: the count and the pause begin again.
pub(super) const STEADY: Duration = Duration::from_secs(600);

/// What follows an ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Next {
    /// The ending is the member's end: no policy asks for more.
    End,
    /// Start the program again after this pause; this is restart `total` of the run.
    Again { pause: Duration, total: u32 },
    /// The policy would restart it, but it has failed `in_a_row` restarts in a row: its ending
    /// stands.
    GiveUp { in_a_row: u32 },
}

/// A member's policy, and the restarts its supervisor has made.
#[derive(Debug)]
pub(super) struct Restarter {
    policy: Restart,
    max: u32,
    in_a_row: u32,
    total: u32,
}

impl Restarter {
    pub(super) fn of(member: &Member) -> Self {
        Self {
            policy: member.restart.unwrap_or_default(),
            max: member.restart_max.unwrap_or(DEFAULT_RESTART_MAX),
            in_a_row: 0,
            total: 0,
        }
    }

    /// What follows `ending` of a run that lasted `ran`. Only an ending of the program's own
    /// counts: one swarm or a signal from outside made (`stop`, `down`, a timeout, a shutdown, a
    /// hangup) has a reason, and is always the end.
    pub(super) fn next(&mut self, ending: &Ending, ran: Duration) -> Next {
        let wanted = ending.reason.is_none()
            && match self.policy {
                Restart::Never => false,
                Restart::OnFailure => ending.state == State::Failed,
                Restart::Always => matches!(ending.state, State::Failed | State::Exited),
            };
        if !wanted {
            return Next::End;
        }
        if ran >= STEADY {
            self.in_a_row = 0;
        }
        if self.in_a_row >= self.max {
            return Next::GiveUp {
                in_a_row: self.in_a_row,
            };
        }
        self.in_a_row += 1;
        self.total += 1;
        Next::Again {
            pause: pause(self.in_a_row),
            total: self.total,
        }
    }
}

/// The pause before restart `nth` in a row (from 1).
fn pause(nth: u32) -> Duration {
    FIRST_PAUSE
        .saturating_mul(2_u32.saturating_pow(nth.saturating_sub(1)))
        .min(LONGEST_PAUSE)
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitStatus;

    use super::*;

    fn member(policy: Restart, max: u32) -> Member {
        Member {
            restart: Some(policy),
            restart_max: Some(max),
            ..Member::new("bob", "t", 1)
        }
    }

    fn exited(code: i32) -> Ending {
        Ending::from_status(ExitStatus::from_raw(code << 8), None)
    }

    const QUICK: Duration = Duration::from_secs(1);

    #[test]
    fn the_pause_doubles_up_to_a_minute() {
        let pauses: Vec<u64> = (1..=8).map(|n| pause(n).as_secs()).collect();
        assert_eq!(pauses, [1, 2, 4, 8, 16, 32, 60, 60]);
        assert_eq!(pause(u32::MAX), LONGEST_PAUSE);
    }

    #[test]
    fn on_failure_restarts_a_failure_up_to_its_max_in_a_row_then_gives_up() {
        let mut restarter = Restarter::of(&member(Restart::OnFailure, 2));
        let again = |pause, total| Next::Again {
            pause: Duration::from_secs(pause),
            total,
        };
        assert_eq!(restarter.next(&exited(1), QUICK), again(1, 1));
        assert_eq!(restarter.next(&exited(1), QUICK), again(2, 2));
        assert_eq!(
            restarter.next(&exited(1), QUICK),
            Next::GiveUp { in_a_row: 2 }
        );
        // A success is its end.
        let mut restarter = Restarter::of(&member(Restart::OnFailure, 2));
        assert_eq!(restarter.next(&exited(0), QUICK), Next::End);
        // A run that held steady starts the count again; the total goes on.
        let mut restarter = Restarter::of(&member(Restart::OnFailure, 1));
        assert_eq!(restarter.next(&exited(1), QUICK), again(1, 1));
        assert_eq!(restarter.next(&exited(1), STEADY), again(1, 2));
        assert_eq!(
            restarter.next(&exited(1), QUICK),
            Next::GiveUp { in_a_row: 1 }
        );
    }

    #[test]
    fn always_restarts_a_success_too_but_never_what_swarm_or_a_signal_ended() {
        let mut restarter = Restarter::of(&member(Restart::Always, 5));
        assert!(matches!(
            restarter.next(&exited(0), QUICK),
            Next::Again { total: 1, .. }
        ));
        for reason in ["stop", "timeout", "shutdown", "hangup", "signal"] {
            let mut ended = exited(0);
            ended.reason = Some(reason.to_owned());
            ended.state = State::Killed;
            assert_eq!(restarter.next(&ended, QUICK), Next::End, "{reason}");
        }
        let crash = Ending::from_status(ExitStatus::from_raw(libc_sigsegv()), None);
        assert_eq!(crash.state, State::Failed);
        assert!(matches!(
            restarter.next(&crash, QUICK),
            Next::Again { total: 2, .. }
        ));
        let mut never = Restarter::of(&Member::new("bob", "t", 1));
        assert_eq!(never.next(&exited(1), QUICK), Next::End);
    }

    fn libc_sigsegv() -> i32 {
        nix::sys::signal::Signal::SIGSEGV as i32
    }
}
