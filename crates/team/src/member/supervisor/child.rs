//! The member's program: a child in its own process group, in the foreground of the pane's terminal
//! so keystrokes and Ctrl-C reach it, and signalled as a group so nothing it started outlives it.

#![allow(unsafe_code)]

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::IsTerminal;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;
use std::process::ExitStatus;

use nix::sys::signal::{SigHandler, Signal, signal};
use nix::unistd::{Pid, getpgrp, setpgid, tcsetpgrp};

use crate::error::{Error, Result};

pub(crate) struct Child {
    inner: tokio::process::Child,
    /// The child's pid, which is also its process group id.
    pub(crate) pid: i32,
}

/// Whether this process runs on a terminal it can hand to the child.
pub(crate) fn has_terminal() -> bool {
    std::io::stdin().is_terminal()
}

/// A background process that calls tcsetpgrp gets SIGTTOU; the supervisor must be able to take
/// the terminal back when its child ends.
pub(crate) fn ignore_terminal_stops() {
    // SAFETY: installing SIG_IGN runs no code in signal context.
    let _ = unsafe { signal(Signal::SIGTTOU, SigHandler::SigIgn) };
}

/// Gives the terminal back to the supervisor's own group once the child has ended.
pub(crate) fn reclaim_terminal() {
    if has_terminal() {
        let _ = tcsetpgrp(std::io::stdin().as_fd(), getpgrp());
    }
}

/// Starts the program with exactly `env`: nothing of the supervisor's own environment passes on
/// that `env` does not hold.
pub(crate) fn spawn(
    argv: &[String],
    cwd: &Path,
    env: &BTreeMap<OsString, OsString>,
) -> Result<Child> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| Error::usage("the member has no command to run"))?;
    let foreground = has_terminal();
    let mut command = tokio::process::Command::new(program);
    command.args(args).current_dir(cwd).env_clear().envs(env);
    // SAFETY: the closure runs in the forked child before exec and only makes async-signal-safe
    // system calls (setpgid, sigaction, tcsetpgrp); it allocates nothing.
    unsafe {
        command.pre_exec(move || {
            setpgid(Pid::from_raw(0), Pid::from_raw(0))?;
            if foreground {
                // Not `stdin().as_fd()`: its first use allocates, which a forked child must not.
                tcsetpgrp(BorrowedFd::borrow_raw(0), nix::unistd::getpid())?;
            }
            // The supervisor ignores SIGTTOU; the member must not inherit that.
            signal(Signal::SIGTTOU, SigHandler::SigDfl)?;
            Ok(())
        });
    }
    let inner = command.spawn().map_err(|err| {
        Error::io_on_named("run", Path::new(program), err).with_hint(format!(
            "is {program} installed and on PATH (or in {})?",
            cwd.display()
        ))
    })?;
    let pid = inner
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .unwrap_or(0);
    // Also from the parent, so the group exists before anyone signals it.
    let _ = setpgid(Pid::from_raw(pid), Pid::from_raw(pid));
    Ok(Child { inner, pid })
}

impl Child {
    pub(crate) async fn wait(&mut self) -> Result<ExitStatus> {
        self.inner
            .wait()
            .await
            .map_err(|err| Error::os("wait for the member's program", err))
    }
}
