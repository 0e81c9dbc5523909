//! A fenced member's one way out (docs/ARCHITECTURE.md, "Fencing members"): the socket its
//! supervisor binds into the sandbox. `swarm` inside the sandbox sends its arguments and its
//! stdin, stdout and stderr over it ([`forward`]); the supervisor runs the same `swarm` program
//! with them as a child of its own, in the member's pane, so the command is that member by where
//! it runs and meets every check any command of that member meets ("Identity", "Who may do
//! what"). What connects from outside the sandbox is refused: whatever arrives is the member.
//!
//! The wire: the request, a 4-byte big-endian length and a JSON [`Request`], the first bytes sent
//! with the three descriptors (`SCM_RIGHTS`); the answer, a 4-byte big-endian exit status and,
//! for a refusal, one line that says why.

#![allow(unsafe_code)]

use std::io::{IoSlice, IoSliceMut, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use nix::sys::socket::{ControlMessage, ControlMessageOwned, MsgFlags, recvmsg, sendmsg};
use nix::sys::wait::{Id, WaitPidFlag, waitid};
use serde::{Deserialize, Serialize};

use crate::base::process::{self, Pinned};
use crate::error::{Error, Result};

/// Set by the supervisor in the environment of the command it runs for its fenced member: the
/// command then takes only what a fenced member may ask (`cli/fence.rs`).
pub const FENCED_VAR: &str = "SWARM_FENCED";

/// The variables of the caller's environment the command gets: how it prints, nothing more.
pub const FORWARDED_VARS: &[&str] = &["NO_COLOR", "TERM", "COLUMNS", "LINES"];

/// The largest request: a message's text (1 MiB) and the rest of a command line.
const MAX_REQUEST: usize = 2 * 1024 * 1024;

/// What `swarm` in the sandbox asks.
#[derive(Debug, Serialize, Deserialize)]
pub struct Request {
    /// Its arguments, without the program's name.
    pub args: Vec<String>,
    /// The variables of [`FORWARDED_VARS`] it has.
    pub env: Vec<(String, String)>,
}

/// The supervisor's side: who may use the socket, and what a command runs with.
pub(crate) struct Gate {
    pub(crate) home: PathBuf,
    pub(crate) team: String,
    pub(crate) member: String,
    pub(crate) workdir: PathBuf,
    /// The swarm program, run for each request.
    pub(crate) program: PathBuf,
    /// The sandbox's first process (bubblewrap), its pid and start: set once it runs.
    pub(crate) sandbox: OnceLock<(i32, u64)>,
}

/// Binds the socket, readable and writable by its owner only.
pub(crate) fn listen(path: &Path) -> Result<UnixListener> {
    use std::os::unix::fs::PermissionsExt as _;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|err| Error::io_on_named("create", dir, err))?;
    }
    // A previous supervisor of this pid left it: pids are not reused while one runs.
    let _ = std::fs::remove_file(path);
    let listener = UnixListener::bind(path).map_err(|err| Error::io_on_named("bind", path, err))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|err| Error::io_on_named("protect", path, err))?;
    Ok(listener)
}

/// Answers every connection, each on a thread of its own, for as long as the supervisor runs.
pub(crate) fn serve(listener: UnixListener, gate: Arc<Gate>) {
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let gate = Arc::clone(&gate);
            std::thread::spawn(move || gate.answer(stream));
        }
    });
}

impl Gate {
    fn answer(&self, mut stream: UnixStream) {
        // Pinned as the connection is taken: the process that connected, not a later one.
        let peer = Pinned::peer(&stream);
        let received = receive(&stream);
        let (status, said) = match (peer, received) {
            (Err(why), _) => (
                1,
                format!("the supervisor cannot tell who connected: {why}"),
            ),
            (Ok(_), Err(why)) => (2, why),
            (Ok(peer), Ok((request, fds))) => match self.inside(&peer) {
                Err(why) => (2, why),
                Ok(()) => match self.run(request, fds, &stream) {
                    Ok(status) => (status, String::new()),
                    Err(err) => (1, err.message().to_owned()),
                },
            },
        };
        let mut answer = status.to_be_bytes().to_vec();
        answer.extend(said.as_bytes());
        let _ = stream.write_all(&answer);
        // The caller reads to the end, and the watch below holds a copy of the connection.
        let _ = stream.shutdown(std::net::Shutdown::Both);
    }

    /// Whether `peer` runs in this member's sandbox: below its first process, which nothing
    /// outside the sandbox is.
    fn inside(&self, peer: &Pinned) -> std::result::Result<(), String> {
        let refused = || {
            format!(
                "this socket serves only the processes of {}'s sandbox",
                self.member
            )
        };
        let &(pid, start) = self.sandbox.get().ok_or_else(refused)?;
        let line = process::lineage(peer.pid).ok_or_else(refused)?;
        let below = line.iter().any(|p| p.pid == pid && p.start == start);
        if below && peer.alive() && peer.pid != pid {
            Ok(())
        } else {
            Err(refused())
        }
    }

    /// Runs the command as this member, in its pane: the same swarm program, with the caller's
    /// stdio, this team and home, and the fenced marker; ended if the caller goes away.
    fn run(&self, request: Request, fds: [OwnedFd; 3], stream: &UnixStream) -> Result<i32> {
        let [stdin, stdout, stderr] = fds;
        let mut command = Command::new(&self.program);
        command
            .args(&request.args)
            .current_dir(&self.workdir)
            .env_remove("SWARM_AGENT")
            .env_remove(crate::launch::sandbox::SUPERVISOR_SOCKET_VAR)
            .env_remove("SWARM_TMUX_SOCKET")
            .env("SWARM_HOME", &self.home)
            .env("SWARM_TEAM", &self.team)
            .env(FENCED_VAR, &self.member)
            .stdin(Stdio::from(stdin))
            .stdout(Stdio::from(stdout))
            .stderr(Stdio::from(stderr));
        for (name, value) in request.env {
            if FORWARDED_VARS.contains(&name.as_str()) {
                command.env(name, value);
            }
        }
        // In the supervisor's own process group: the supervisor reaps only orphans of other
        // groups, so this child's status stays its waiter's. It ends if this thread, and so the
        // supervisor, does.
        // SAFETY: the closure runs in the forked child before exec and makes one
        // async-signal-safe system call (prctl); it allocates nothing.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut command, || {
                nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGTERM)?;
                Ok(())
            });
        }
        let mut child = command
            .spawn()
            .map_err(|err| Error::io_on_named("run", &self.program, err))?;
        let pid = i32::try_from(child.id()).unwrap_or(i32::MAX);
        let running = Arc::new(Mutex::new(true));
        // The caller never writes after its request: its end of the connection closing is the
        // caller gone (Ctrl-C, killed), and the command goes with it.
        if let Ok(mut watch) = stream.try_clone() {
            let running = Arc::clone(&running);
            std::thread::spawn(move || {
                let _ = watch.read(&mut [0u8; 1]);
                if *running.lock().unwrap_or_else(PoisonError::into_inner) {
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(pid),
                        nix::sys::signal::Signal::SIGTERM,
                    );
                }
            });
        }
        // Waited for without reaping, so the pid is not free while the watch may signal it.
        let _ = waitid(
            Id::Pid(nix::unistd::Pid::from_raw(pid)),
            WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT,
        );
        *running.lock().unwrap_or_else(PoisonError::into_inner) = false;
        let status = child
            .wait()
            .map_err(|err| Error::os("wait for the forwarded command", err))?;
        Ok(exit_status(status))
    }
}

/// A status as a shell reports it: the exit code, or 128 and the signal.
fn exit_status(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt as _;
    status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

/// Reads a request and the three descriptors sent with it.
fn receive(stream: &UnixStream) -> std::result::Result<(Request, [OwnedFd; 3]), String> {
    let mut first = vec![0u8; 64 * 1024];
    let mut space = nix::cmsg_space!([RawFd; 3]);
    let (read, fds) = {
        let mut iov = [IoSliceMut::new(&mut first)];
        let message = recvmsg::<()>(
            stream.as_raw_fd(),
            &mut iov,
            Some(&mut space),
            MsgFlags::MSG_CMSG_CLOEXEC,
        )
        .map_err(|err| format!("the request could not be read: {err}"))?;
        let mut fds: Vec<OwnedFd> = Vec::new();
        for cmsg in message.cmsgs().map_err(|err| err.to_string())? {
            if let ControlMessageOwned::ScmRights(raw) = cmsg {
                // SAFETY: the kernel has just given this process these descriptors; each is owned
                // here once.
                fds.extend(
                    raw.into_iter()
                        .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }),
                );
            }
        }
        (message.bytes, fds)
    };
    let fds: [OwnedFd; 3] = fds
        .try_into()
        .map_err(|_| "the request did not bring stdin, stdout and stderr".to_owned())?;
    let mut bytes = first[..read].to_vec();
    let mut reader = stream;
    read_to(&mut reader, &mut bytes, 4)?;
    let length = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
    if length > MAX_REQUEST {
        return Err(format!("the request is over {MAX_REQUEST} bytes"));
    }
    read_to(&mut reader, &mut bytes, 4 + length)?;
    let request = serde_json::from_slice(&bytes[4..4 + length])
        .map_err(|err| format!("the request is not one swarm sends: {err}"))?;
    Ok((request, fds))
}

/// Reads from `reader` onto `bytes` until it holds `length` bytes.
fn read_to(
    mut reader: impl Read,
    bytes: &mut Vec<u8>,
    length: usize,
) -> std::result::Result<(), String> {
    while bytes.len() < length {
        let mut chunk = vec![0u8; length - bytes.len()];
        let got = reader
            .read(&mut chunk)
            .map_err(|err| format!("the request could not be read: {err}"))?;
        if got == 0 {
            return Err("the request is cut short".to_owned());
        }
        bytes.extend(&chunk[..got]);
    }
    Ok(())
}

/// `swarm` inside a sandbox: sends `request` with `stdin` and this process's stdout and stderr
/// to the supervisor at `socket`, and waits for the command to end. Its exit status, and the
/// supervisor's line when it refused.
pub fn forward(socket: &Path, request: &Request, stdin: RawFd) -> Result<(i32, String)> {
    let unreachable = |err: std::io::Error| {
        Error::io_on_named("reach the supervisor at", socket, err).with_hint(
            "swarm inside a sandbox acts through its member's supervisor, which may have ended",
        )
    };
    let mut stream = UnixStream::connect(socket).map_err(unreachable)?;
    let body =
        serde_json::to_vec(request).map_err(|err| Error::runtime(format!("encode: {err}")))?;
    let mut frame = u32::try_from(body.len())
        .map_err(|_| Error::usage("the command line is too long"))?
        .to_be_bytes()
        .to_vec();
    frame.extend(body);
    let fds = [stdin, 1, 2];
    let first = frame.len().min(16 * 1024);
    let sent = sendmsg::<()>(
        stream.as_raw_fd(),
        &[IoSlice::new(&frame[..first])],
        &[ControlMessage::ScmRights(&fds)],
        MsgFlags::empty(),
        None,
    )
    .map_err(|err| unreachable(err.into()))?;
    stream.write_all(&frame[sent..]).map_err(unreachable)?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).map_err(unreachable)?;
    if answer.len() < 4 {
        return Err(Error::runtime(
            "the supervisor ended before the command did".to_owned(),
        ));
    }
    let status = i32::from_be_bytes([answer[0], answer[1], answer[2], answer[3]]);
    Ok((status, String::from_utf8_lossy(&answer[4..]).into_owned()))
}
