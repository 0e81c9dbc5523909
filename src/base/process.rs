//! Processes and process groups: liveness checks, signals, and what `/proc` shows of them
//! (parents, groups, sessions, environments). Which processes are a member's is
//! `member/processes.rs`'s to say.

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

/// One process as `/proc/<pid>/stat` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcStat {
    pub(crate) pid: i32,
    pub(crate) ppid: i32,
    pub(crate) pgid: i32,
    pub(crate) sid: i32,
    /// Exited and not yet reaped (or being torn down): it runs nothing and cannot be signalled.
    pub(crate) dead: bool,
}

/// `/proc/<pid>/stat`, if the process exists.
pub(crate) fn stat(pid: i32) -> Option<ProcStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(pid, &text)
}

/// `pid (comm) state ppid pgrp session …`; comm may hold spaces and parentheses, so the fields
/// are read after its last `)`.
fn parse_stat(pid: i32, text: &str) -> Option<ProcStat> {
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    let mut number = || fields.next()?.parse::<i32>().ok();
    Some(ProcStat {
        pid,
        ppid: number()?,
        pgid: number()?,
        sid: number()?,
        dead: matches!(state, "Z" | "X" | "x"),
    })
}

/// Every process this user owns, as `/proc` shows it at one moment.
pub(crate) fn own_processes() -> Vec<ProcStat> {
    let uid = nix::unistd::geteuid().as_raw();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let owner = std::os::unix::fs::MetadataExt::uid(&entry.metadata().ok()?);
            if owner != uid {
                return None;
            }
            stat(pid)
        })
        .collect()
}

/// The value of `key` in the environment process `pid` was started with, if it can be read.
pub(crate) fn environment_value(pid: i32, key: &str) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    environ
        .split(|b| *b == 0)
        .find_map(|entry| {
            entry
                .strip_prefix(key.as_bytes())
                .and_then(|rest| rest.strip_prefix(b"="))
        })
        .map(|value| String::from_utf8_lossy(value).into_owned())
}

/// Makes this process the reaper of its orphaned descendants: a process whose parent dies is
/// reparented to it instead of to init, so it can still find and end it.
pub(crate) fn become_subreaper() -> nix::Result<()> {
    nix::sys::prctl::set_child_subreaper(true)
}

/// Reaps child `pid` if it has exited; whether it had.
pub(crate) fn reap(pid: i32) -> bool {
    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
    !matches!(
        waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG)),
        Ok(WaitStatus::StillAlive) | Err(_)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_read_after_the_command_name() {
        let stat = parse_stat(42, "42 (a (b) c) S 1 42 40 34816 42 4194560 0 0").unwrap();
        assert_eq!(
            stat,
            ProcStat {
                pid: 42,
                ppid: 1,
                pgid: 42,
                sid: 40,
                dead: false
            }
        );
        assert!(parse_stat(7, "7 (zombie) Z 1 7 7 0").unwrap().dead);
        assert!(parse_stat(7, "7 (cut").is_none());
    }

    #[test]
    fn this_process_is_seen_with_its_environment() {
        let me = i32::try_from(std::process::id()).unwrap();
        let own = own_processes();
        let found = own.iter().find(|p| p.pid == me).unwrap();
        assert_eq!(found.pgid, nix::unistd::getpgrp().as_raw());
        assert_eq!(
            environment_value(me, "PATH"),
            std::env::var("PATH").ok(),
            "read from /proc/self/environ"
        );
        assert_eq!(environment_value(me, "SWARM_NO_SUCH_VARIABLE_EVER"), None);
    }
}
