//! Processes and process groups: liveness checks, signals, and what `/proc` shows of them
//! (parents, groups, sessions, environments). Which processes are a member's is
//! `member/processes.rs`'s to say.

use std::time::Instant;

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
    cmdline(pid).is_some_and(|args| {
        args.iter().any(|a| a == "run") && args.last().map(String::as_str) == Some(name)
    })
}

/// The arguments process `pid` was started with, if it can be read.
pub(crate) fn cmdline(pid: i32) -> Option<Vec<String>> {
    let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some(
        bytes
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
    )
}

/// A `swarm run NAME` supervisor, as its command line and the environment it was started with
/// show it. Nothing a member's program runs can change either: they are the supervisor's own
/// memory, set by tmux when it started the pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SupervisorProcess {
    pub(crate) pid: i32,
    /// The member it runs: the last argument.
    pub(crate) name: String,
    /// Its home: `--home`, else `SWARM_HOME`, else `$HOME/.swarm`, made absolute against its
    /// working directory.
    pub(crate) home: Option<std::path::PathBuf>,
    /// Its team: `--team`, else `SWARM_TEAM`.
    pub(crate) team: Option<String>,
}

/// Process `pid` as a swarm supervisor, if it is one: a command line `<exe> [options] run
/// [options] NAME`.
pub(crate) fn supervisor(pid: i32) -> Option<SupervisorProcess> {
    let args = cmdline(pid)?;
    let (name, home, team) = parse_supervisor_args(&args)?;
    let from_env = |key: &str| environment_value(pid, key).filter(|v| !v.is_empty());
    let home = home
        .or_else(|| from_env("SWARM_HOME"))
        .map(std::path::PathBuf::from)
        .or_else(|| from_env("HOME").map(|h| std::path::Path::new(&h).join(".swarm")))
        .map(|home| {
            if home.is_absolute() {
                home
            } else {
                std::fs::read_link(format!("/proc/{pid}/cwd"))
                    .unwrap_or_default()
                    .join(home)
            }
        });
    Some(SupervisorProcess {
        pid,
        name,
        home,
        team: team.or_else(|| from_env("SWARM_TEAM")),
    })
}

/// `(name, --home, --team)` from a supervisor's arguments, or `None` when they are not one's.
fn parse_supervisor_args(args: &[String]) -> Option<(String, Option<String>, Option<String>)> {
    // The first word that is neither an option nor an option's value is the subcommand.
    let mut run = None;
    let mut at = 1;
    while at < args.len() {
        let word = args[at].as_str();
        if ["--home", "--team", "--as"].contains(&word) {
            at += 2;
        } else if word.starts_with('-') {
            at += 1;
        } else {
            run = (word == "run").then_some(at);
            break;
        }
    }
    let run = run?;
    let name = args.last().filter(|_| args.len() > run + 1)?;
    if name.starts_with('-') {
        return None;
    }
    let option = |flag: &str| {
        let mut found = None;
        let mut words = args[1..args.len() - 1].iter();
        while let Some(word) = words.next() {
            if word == flag {
                found = words.next().cloned();
            } else if let Some(value) = word.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
                found = Some(value.to_owned());
            }
        }
        found.filter(|v| !v.is_empty())
    };
    Some((name.clone(), option("--home"), option("--team")))
}

/// `pid` and the processes above it, nearest first, up to (not including) init. A process that
/// cannot be read ends the line.
pub(crate) fn ancestry(pid: i32) -> Vec<ProcStat> {
    let mut line = Vec::new();
    let mut at = pid;
    while at > 1 && line.len() < 4096 {
        let Some(stat) = stat(at) else { break };
        if line.iter().any(|p: &ProcStat| p.pid == stat.pid) {
            break;
        }
        at = stat.ppid;
        line.push(stat);
    }
    line
}

/// This process's pid.
pub(crate) fn own_pid() -> i32 {
    i32::try_from(std::process::id()).unwrap_or(0)
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

/// What a program [`run_within`] ran printed, and whether all of its input reached it.
#[derive(Debug)]
pub(crate) struct Ran {
    pub(crate) output: std::process::Output,
    /// Writing the input: an error when the program exited, or closed its stdin, before it read
    /// it all.
    pub(crate) input: std::io::Result<()>,
}

/// How long a program killed for running out of time gets to go before its output is given up.
const KILLED_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// Runs `command` to its end with `input` on its stdin (none: `/dev/null`), capturing its output,
/// for at most `limit` (docs/ARCHITECTURE.md, "External programs"). `None` when it ran out of
/// time: then it and everything it started in its process group have been killed. The program
/// leads a process group of its own for that, and the input is written on a thread of its own, so
/// a program that stopped reading (a stopped tmux server's client) can hold up neither.
pub(crate) fn run_within(
    command: &mut std::process::Command,
    input: Option<&[u8]>,
    limit: std::time::Duration,
) -> std::io::Result<Option<Ran>> {
    use std::io::Write as _;
    use std::os::unix::process::CommandExt as _;
    use std::process::Stdio;
    use std::sync::mpsc;

    command
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = command.spawn()?;
    let group = i32::try_from(child.id()).unwrap_or(i32::MAX);
    let writer = child
        .stdin
        .take()
        .zip(input.map(<[u8]>::to_vec))
        .map(|(mut stdin, bytes)| {
            std::thread::spawn(move || stdin.write_all(&bytes))
            // stdin is dropped when the thread ends: the program sees the end of its input.
        });
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        let output = child.wait_with_output();
        let input = writer.map_or(Ok(()), |writer| {
            writer
                .join()
                .unwrap_or_else(|_| Err(std::io::Error::other("the input writer panicked")))
        });
        let _ = done.send(output.map(|output| Ran { output, input }));
    });
    match crate::base::clock::deadline(limit) {
        None => finished.recv().map_err(std::io::Error::other)?.map(Some),
        Some(deadline) => {
            match finished.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(ran) => ran.map(Some),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    // Not reaped yet (the thread is still waiting for it), so the group is still
                    // the program's own.
                    signal_group(group, Signal::SIGKILL);
                    let _ = finished.recv_timeout(KILLED_GRACE);
                    Ok(None)
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => Err(std::io::Error::other(
                    "the thread waiting for the program ended",
                )),
            }
        }
    }
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

    fn sh(script: &str) -> std::process::Command {
        let mut command = std::process::Command::new("sh");
        command.args(["-c", script]);
        command
    }

    #[test]
    fn a_program_that_ends_in_time_gives_its_output_and_reads_its_input() {
        let ran = run_within(
            &mut sh("cat; echo err >&2; exit 3"),
            Some(b"in"),
            std::time::Duration::from_secs(60),
        )
        .unwrap()
        .unwrap();
        assert_eq!(ran.output.stdout, b"in");
        assert_eq!(ran.output.stderr, b"err\n");
        assert_eq!(ran.output.status.code(), Some(3));
        assert!(ran.input.is_ok());
    }

    /// A program that stops (as a stopped tmux server's client waits for ever), whose input is
    /// more than a pipe holds, and whose child keeps its output open: all are ended at the bound.
    #[test]
    fn a_program_that_does_not_end_in_time_is_killed_with_its_group() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let mut command = sh("sleep 1000 & echo $! > \"$1\"; kill -STOP $$");
        command.arg("sh").arg(&pid_file);
        let ran = run_within(
            &mut command,
            Some(&vec![b'x'; 4 << 20]),
            std::time::Duration::from_millis(300),
        )
        .unwrap();
        assert!(ran.is_none());
        let sleeper: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // Killed; reaped by init, as its parent is gone.
        let deadline = Instant::now() + std::time::Duration::from_secs(30);
        while stat(sleeper).is_some_and(|s| !s.dead) {
            assert!(Instant::now() < deadline, "{sleeper} outlived the bound");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    #[test]
    fn a_program_that_is_not_there_is_not_found() {
        let err = run_within(
            &mut std::process::Command::new("/nonexistent/program"),
            None,
            std::time::Duration::from_secs(1),
        )
        .unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
    }

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

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn supervisor_command_lines_name_member_home_and_team() {
        assert_eq!(
            parse_supervisor_args(&words("/x/swarm run --log-max 100 bob")),
            Some(("bob".into(), None, None))
        );
        assert_eq!(
            parse_supervisor_args(&words("swarm --home /h --team=t run bob")),
            Some(("bob".into(), Some("/h".into()), Some("t".into())))
        );
        for not_one in [
            "swarm run",
            "swarm send bob hi",
            "swarm send run hi",
            "swarm run --log-max",
            "run bob",
        ] {
            assert_eq!(parse_supervisor_args(&words(not_one)), None, "{not_one}");
        }
    }

    #[test]
    fn ancestry_starts_here_and_climbs() {
        let me = own_pid();
        let line = ancestry(me);
        assert_eq!(line[0].pid, me);
        assert_eq!(line[1].pid, nix::unistd::getppid().as_raw());
        assert!(supervisor(me).is_none());
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
