//! Processes and process groups: liveness checks, signals, and what `/proc` shows of them
//! (parents, groups, sessions, environments). Which processes are a member's is
//! `member/processes.rs`'s to say.

use std::os::fd::{AsFd, OwnedFd};
use std::time::Instant;

use nix::errno::Errno;
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

/// Whether a process with this pid exists (it may belong to another user).
pub fn alive(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    matches!(kill(Pid::from_raw(pid), None), Ok(()) | Err(Errno::EPERM))
}

/// Signals a whole process group; a group that is already gone is not an error.
pub fn signal_group(pgid: i32, signal: Signal) -> bool {
    if pgid <= 1 {
        return false;
    }
    killpg(Pid::from_raw(pgid), signal).is_ok()
}

/// Signals one process; a process that is already gone is not an error.
pub fn signal(pid: i32, signal: Signal) -> bool {
    if pid <= 1 {
        return false;
    }
    kill(Pid::from_raw(pid), signal).is_ok()
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

/// The variable that names a team's lead in every pane; tmux sets it in the supervisor's own
/// environment, where it says whether the pane is the lead's.
pub const LEAD_VAR: &str = "SWARM_LEAD";

/// The variable that marks every process a member's program starts during one run
/// (`member/processes.rs`); a supervisor never carries it.
pub const RUN_ID_VAR: &str = "SWARM_RUN_ID";

/// A `swarm run NAME` supervisor, as its command line and the environment it was started with
/// show it. Nothing a member's program runs can change either: they are the supervisor's own
/// memory, set by tmux when it started the pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SupervisorProcess {
    pub pid: i32,
    /// The member it runs: the last argument.
    pub name: String,
    /// Its home, `--home`, made absolute against its working directory.
    pub home: std::path::PathBuf,
    /// Its team, `--team`.
    pub team: String,
    /// The lead of its team when it was launched: `SWARM_LEAD` in the environment tmux started it
    /// with (docs/ARCHITECTURE.md, "Identity").
    pub lead: Option<String>,
}

impl SupervisorProcess {
    /// Whether it supervises member `name` of team `team` under the home whose directory is
    /// `home` (device and inode).
    pub fn serves(&self, home: (u64, u64), team: &str, name: &str) -> bool {
        self.name == name && self.team == team && dir_id(&self.home) == Some(home)
    }
}

/// A directory's device and inode: two spellings of one directory (a symlink, `..`) are one.
pub fn dir_id(path: &std::path::Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path)
        .ok()
        .filter(std::fs::Metadata::is_dir)
        .map(|meta| (meta.dev(), meta.ino()))
}

/// Process `pid` as a swarm supervisor, if it is one: the one test of "is this a supervisor"
/// every caller uses (docs/ARCHITECTURE.md, "Identity"). All of these hold for it:
/// - its command line is `<exe> [options] run [options] NAME` with the `--home` and `--team`
///   swarm's launcher always gives it (`launch/panes.rs`), so `npm run build` is none;
/// - it runs the swarm program, as this process does, so a script named `run` is none;
/// - it is a pane's first process: its parent is a tmux server, so a copy a member started is
///   none while the member's processes live under it;
/// - it carries no run's marker ([`RUN_ID_VAR`]): every process a member's program starts does.
pub fn supervisor(pid: i32) -> Option<SupervisorProcess> {
    let args = cmdline(pid)?;
    let (name, home, team) = parse_supervisor_args(&args)?;
    if !runs_swarm(pid) || !parent_is_tmux_server(pid) || environment_has(pid, RUN_ID_VAR) {
        return None;
    }
    let mut home = std::path::PathBuf::from(home?);
    if home.is_relative() {
        home = std::fs::read_link(format!("/proc/{pid}/cwd"))
            .ok()?
            .join(home);
    }
    Some(SupervisorProcess {
        pid,
        name,
        home,
        team: team?,
        lead: environment_value(pid, LEAD_VAR).filter(|v| !v.is_empty()),
    })
}

/// Whether process `pid`'s command line is a supervisor's, whether or not it is one: what passes
/// for a supervisor and is not one ([`supervisor`]) is an impostor.
pub fn passes_for_supervisor(pid: i32) -> bool {
    cmdline(pid).is_some_and(|args| parse_supervisor_args(&args).is_some())
}

/// Whether process `pid` runs the program this process runs: the same file, or (once swarm was
/// reinstalled) one at the same path.
fn runs_swarm(pid: i32) -> bool {
    use std::os::unix::fs::MetadataExt;
    let file = |path: &str| std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()));
    if file(&format!("/proc/{pid}/exe"))
        .is_some_and(|theirs| file("/proc/self/exe") == Some(theirs))
    {
        return true;
    }
    let (Ok(theirs), Ok(own)) = (
        std::fs::read_link(format!("/proc/{pid}/exe")),
        std::fs::read_link("/proc/self/exe"),
    ) else {
        return false;
    };
    same_program_path(&theirs, &own)
}

/// Whether two `/proc/<pid>/exe` links name the program at one path: a process started before
/// swarm was reinstalled (either of the two: a supervisor or the signing agent judging it) shows
/// its file as `<path> (deleted)`.
fn same_program_path(theirs: &std::path::Path, own: &std::path::Path) -> bool {
    let path = |link: &std::path::Path| {
        let link = link.to_string_lossy();
        link.strip_suffix(" (deleted)").unwrap_or(&link).to_owned()
    };
    path(theirs) == path(own)
}

/// Whether process `pid`'s parent is a tmux server: it is a pane's first process.
fn parent_is_tmux_server(pid: i32) -> bool {
    let Some(parent) = stat(pid).map(|p| p.ppid).filter(|ppid| *ppid > 1) else {
        return false;
    };
    std::fs::read_link(format!("/proc/{parent}/exe")).is_ok_and(|exe| {
        exe.file_name()
            .is_some_and(|name| name.to_string_lossy().starts_with("tmux"))
    }) && cmdline(parent)
        .and_then(|args| args.into_iter().next())
        // Started by its path too (`/usr/bin/tmux`, as a wrapper script's `exec` starts it).
        .is_some_and(|first| {
            std::path::Path::new(&first)
                .file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("tmux"))
        })
}

/// Whether variable `key` is in the environment process `pid` was started with; an environment
/// that cannot be read may hold it.
fn environment_has(pid: i32, key: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/environ")).map_or(true, |environ| {
        environ.split(|b| *b == 0).any(|entry| {
            entry
                .strip_prefix(key.as_bytes())
                .is_some_and(|rest| rest.starts_with(b"="))
        })
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

/// `pid` and every process above it, nearest first, read whole: up to init, or to a process whose
/// parent is outside this pid namespace. `None` when it cannot be read whole: a process on the
/// line has exited or cannot be read, or a parent is younger than its child (its pid was given to
/// a new process). A line read in part proves nothing about what is above it.
pub fn lineage(pid: i32) -> Option<Vec<ProcStat>> {
    let mut line: Vec<ProcStat> = Vec::new();
    let mut at = pid;
    loop {
        let stat = stat(at).filter(|p| !p.dead)?;
        if line
            .last()
            .is_some_and(|child| stat.start > child.start || line.len() >= 4096)
            || line.iter().any(|p| p.pid == stat.pid)
        {
            return None;
        }
        let parent = stat.ppid;
        line.push(stat);
        if parent <= 1 {
            return Some(line);
        }
        at = parent;
    }
}

/// Whether every process of `line` is still the one that was read, with the same parent: read
/// after what was learnt of them, it proves that was learnt of these processes. A parent that
/// exited meanwhile shows as its child's new parent.
pub fn unchanged(line: &[ProcStat]) -> bool {
    line.iter().all(|was| {
        stat(was.pid).is_some_and(|now| !now.dead && now.start == was.start && now.ppid == was.ppid)
    })
}

/// This process's pid.
pub fn own_pid() -> i32 {
    i32::try_from(std::process::id()).unwrap_or(0)
}

/// One process as `/proc/<pid>/stat` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    pub pid: i32,
    pub ppid: i32,
    pub pgid: i32,
    pub sid: i32,
    /// When it started, in clock ticks since boot: with the pid, it names one process for good.
    pub start: u64,
    /// Exited and not yet reaped (or being torn down): it runs nothing and cannot be signalled.
    pub dead: bool,
}

/// `/proc/<pid>/stat`, if the process exists.
pub fn stat(pid: i32) -> Option<ProcStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(pid, &text)
}

/// `pid (comm) state ppid pgrp session … starttime …` (proc(5)); comm may hold spaces and
/// parentheses, so the fields are read after its last `)`.
fn parse_stat(pid: i32, text: &str) -> Option<ProcStat> {
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let number = |at: usize| fields.get(at)?.parse::<i32>().ok();
    Some(ProcStat {
        pid,
        ppid: number(1)?,
        pgid: number(2)?,
        sid: number(3)?,
        // Field 22 of the line, the 20th after comm.
        start: fields.get(19)?.parse().ok()?,
        dead: matches!(*fields.first()?, "Z" | "X" | "x"),
    })
}

/// A process pinned down when it was met, so that a pid that exits, or is given to another
/// process, is never taken for it (docs/ARCHITECTURE.md, "Identity"): the process at the other end
/// of a connection, named by the kernel when the connection was made (a pidfd, where the kernel
/// gives one), or this process. Its start time tells its pid's later owners from it.
#[derive(Debug)]
pub struct Pinned {
    pub pid: i32,
    start: u64,
    /// From `SO_PEERPIDFD` (Linux 6.5): it names the process itself, not its number.
    pidfd: Option<OwnedFd>,
}

impl Pinned {
    /// This process.
    pub fn own() -> Option<Self> {
        Self::now(own_pid())
    }

    /// Process `pid` as it is now: for a pid read from a record, which proves nothing about
    /// which process had it before.
    pub fn now(pid: i32) -> Option<Self> {
        let found = stat(pid).filter(|p| !p.dead && pid > 0)?;
        Some(Self {
            pid,
            start: found.start,
            pidfd: None,
        })
    }

    /// The process at the other end of the Unix socket `socket`: the one that connected (or, for
    /// a client, the one that listens), as the kernel recorded it then. An error says, in a few
    /// words, why it cannot be told: it has exited, or it runs in another pid namespace.
    pub fn peer(socket: &impl AsFd) -> Result<Self, String> {
        use nix::sys::socket::{getsockopt, sockopt};
        let cred = getsockopt(socket, sockopt::PeerCredentials)
            .map_err(|err| format!("its credentials cannot be read: {err}"))?;
        let pid = cred.pid();
        if pid <= 0 {
            return Err("it runs in another pid namespace".to_owned());
        }
        let gone = || format!("process {pid} has exited");
        let pidfd = match getsockopt(socket, sockopt::PeerPidfd) {
            Ok(pidfd) => Some(pidfd),
            // A kernel before 6.5: the pid and its start time are all there is.
            Err(Errno::ENOPROTOOPT | Errno::EOPNOTSUPP) => None,
            Err(Errno::ESRCH | Errno::EINVAL) => return Err(gone()),
            Err(err) => return Err(format!("process {pid} cannot be pinned: {err}")),
        };
        let start = stat(pid).filter(|p| !p.dead).ok_or_else(gone)?.start;
        let pinned = Self { pid, start, pidfd };
        // What was read of the pid was of this process only if it still runs now.
        if pinned.alive() {
            Ok(pinned)
        } else {
            Err(gone())
        }
    }

    /// Whether it still runs: not exited, and its pid not given to another process.
    pub fn alive(&self) -> bool {
        if let Some(pidfd) = &self.pidfd
            && exited(pidfd)
        {
            return false;
        }
        stat(self.pid).is_some_and(|p| !p.dead && p.start == self.start)
    }

    /// When it started, in clock ticks since boot.
    pub fn start(&self) -> u64 {
        self.start
    }
}

/// Whether the process a pidfd names has exited: its pidfd reads as ready then. A pidfd that
/// cannot be polled says nothing, and counts as exited.
fn exited(pidfd: &OwnedFd) -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let mut fds = [PollFd::new(pidfd.as_fd(), PollFlags::POLLIN)];
    !matches!(poll(&mut fds, PollTimeout::ZERO), Ok(0))
}

/// Every process this user owns, as `/proc` shows it at one moment.
pub fn own_processes() -> Vec<ProcStat> {
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

/// Whether process `pid` holds the socket whose inode is `inode` (`socket:[<inode>]` among its
/// open files): the process that bound a listening socket holds it for as long as it listens.
pub fn holds_socket(pid: i32, inode: u64) -> bool {
    let Ok(files) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    let wanted = format!("socket:[{inode}]");
    files.filter_map(Result::ok).any(|file| {
        std::fs::read_link(file.path()).is_ok_and(|target| target.as_os_str() == wanted.as_str())
    })
}

/// Where this process's pids mean something, as Claude Code writes it in a session record
/// (`pidDomain`): `linux:<machine id>:pid:[<pid namespace inode>]`. `None` when it cannot be read.
pub fn pid_domain() -> Option<String> {
    let machine = ["/etc/machine-id", "/var/lib/dbus/machine-id"]
        .iter()
        .find_map(|path| std::fs::read_to_string(path).ok())
        .map(|id| id.trim().to_owned())
        .filter(|id| !id.is_empty())?;
    let namespace = std::fs::read_link("/proc/self/ns/pid").ok()?;
    Some(format!("linux:{machine}:{}", namespace.display()))
}

/// The value of `key` in the environment process `pid` was started with, if it can be read.
pub fn environment_value(pid: i32, key: &str) -> Option<String> {
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
pub struct Ran {
    pub output: std::process::Output,
    /// Writing the input: an error when the program exited, or closed its stdin, before it read
    /// it all.
    pub input: std::io::Result<()>,
}

/// How long a program killed for running out of time gets to go before its output is given up.
const KILLED_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// Runs `command` to its end with `input` on its stdin (none: `/dev/null`), capturing its output,
/// for at most `limit` (docs/ARCHITECTURE.md, "External programs"). `None` when it ran out of
/// time: then it and everything it started in its process group have been killed. The program
/// leads a process group of its own for that, and the input is written on a thread of its own, so
/// a program that stopped reading (a stopped tmux server's client) can hold up neither.
pub fn run_within(
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
pub fn become_subreaper() -> nix::Result<()> {
    nix::sys::prctl::set_child_subreaper(true)
}

/// Reaps child `pid` if it has exited; whether it had.
pub fn reap(pid: i32) -> bool {
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
    fn a_program_reinstalled_at_its_path_is_the_same_whichever_side_is_older() {
        use std::path::Path;
        let new = Path::new("/usr/local/bin/swarm");
        let old = Path::new("/usr/local/bin/swarm (deleted)");
        assert!(same_program_path(old, new));
        assert!(
            same_program_path(new, old),
            "an agent started before the reinstall"
        );
        assert!(same_program_path(new, new));
        assert!(!same_program_path(Path::new("/tmp/x/swarm"), new));
        assert!(!same_program_path(Path::new("/tmp/x/swarm (deleted)"), old));
    }

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
        let line = "42 (a (b) c) S 1 42 40 34816 42 4194560 0 0 0 0 5 3 0 0 20 0 1 0 987654 1 2";
        let stat = parse_stat(42, line).unwrap();
        assert_eq!(
            stat,
            ProcStat {
                pid: 42,
                ppid: 1,
                pgid: 42,
                sid: 40,
                start: 987_654,
                dead: false
            }
        );
        let zombie = "7 (zombie) Z 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0";
        assert!(parse_stat(7, zombie).unwrap().dead);
        assert!(parse_stat(7, "7 (cut").is_none());
        assert!(
            parse_stat(7, "7 (short) S 1 7 7 0").is_none(),
            "no start time"
        );
    }

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn supervisor_command_lines_name_member_home_and_team() {
        let me = own_pid();
        assert!(supervisor(me).is_none(), "this test is no supervisor");
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
    fn the_lineage_starts_here_climbs_to_init_and_stays_unchanged() {
        let me = own_pid();
        let line = lineage(me).unwrap();
        assert_eq!(line[0].pid, me);
        assert_eq!(line[1].pid, nix::unistd::getppid().as_raw());
        assert!(line.last().unwrap().ppid <= 1);
        assert!(line.windows(2).all(|w| w[1].start <= w[0].start));
        assert!(unchanged(&line));
        assert!(supervisor(me).is_none());
        let own = Pinned::own().unwrap();
        assert!(own.alive());
        assert_eq!(own.start(), line[0].start);
    }

    /// A child pinned from a socket pair it holds: alive while it runs, then neither it nor
    /// anything that takes its pid is.
    #[test]
    fn a_pinned_peer_that_exits_is_gone() {
        use std::os::unix::net::UnixStream;
        let (ours, theirs) = UnixStream::pair().unwrap();
        // A socket pair's credentials are its maker's: this process, which stays.
        let pinned = Pinned::peer(&ours).unwrap();
        assert_eq!(pinned.pid, own_pid());
        assert!(pinned.alive());
        drop(theirs);
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        let early = Pinned::now(pid);
        child.wait().unwrap();
        assert!(early.is_none_or(|p| !p.alive()));
        assert!(Pinned::now(pid).is_none());
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
