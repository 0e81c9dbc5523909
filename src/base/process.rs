//! Processes and process groups: liveness checks and signals.

use nix::errno::Errno;
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

/// Whether a process with this pid exists (it may belong to another user).
pub(crate) fn alive(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    matches!(kill(Pid::from_raw(pid), None), Ok(()) | Err(Errno::EPERM))
}

/// Whether any process of the group still exists.
pub(crate) fn group_alive(pgid: i32) -> bool {
    if pgid <= 1 {
        return false;
    }
    matches!(
        killpg(Pid::from_raw(pgid), None),
        Ok(()) | Err(Errno::EPERM)
    )
}

/// Signals a whole process group; a group that is already gone is not an error.
pub(crate) fn signal_group(pgid: i32, signal: Signal) -> bool {
    if pgid <= 1 {
        return false;
    }
    killpg(Pid::from_raw(pgid), signal).is_ok()
}

/// Signals one process; a process that is already gone is not an error.
pub(crate) fn signal(pid: i32, signal: Signal) -> bool {
    if pid <= 1 {
        return false;
    }
    kill(Pid::from_raw(pid), signal).is_ok()
}

/// Whether `pid` is the `swarm run NAME` supervisor of `name`, so a recycled pid is never signalled.
pub(crate) fn is_supervisor(pid: i32, name: &str) -> bool {
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let args: Vec<&[u8]> = cmdline
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .collect();
    args.iter().any(|a| *a == b"run") && args.last() == Some(&name.as_bytes())
}
