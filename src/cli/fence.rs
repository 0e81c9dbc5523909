//! `swarm` and a fenced member (docs/ARCHITECTURE.md, "Fencing members"). Inside the sandbox,
//! every command goes to the member's supervisor ([`forward`]); the supervisor runs it with the
//! same swarm program, as that member, and [`admit`] keeps such a command to what a fenced member
//! may ask.

use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};

use crate::cli::commands::plan;
use crate::cli::{Cli, Command};
use crate::error::{Error, Result};
use crate::launch::sandbox::SUPERVISOR_SOCKET_VAR;
use crate::member::fence::{self, FENCED_VAR, FORWARDED_VARS, Request};

/// Inside a sandbox (its supervisor's socket in the environment): the command, run by the
/// supervisor, and its exit status; `None` outside one.
pub(crate) fn forward(cli: &Cli, args: &[OsString]) -> Option<Result<i32>> {
    // Run by the sandbox itself, before the member's program: nothing to ask the supervisor.
    if matches!(cli.command, Command::FenceBridge(_)) {
        return None;
    }
    let socket = std::env::var_os(SUPERVISOR_SOCKET_VAR).filter(|s| !s.is_empty())?;
    Some(forward_to(cli, args, std::path::Path::new(&socket)))
}

fn forward_to(cli: &Cli, args: &[OsString], socket: &std::path::Path) -> Result<i32> {
    let mut args: Vec<String> = args
        .iter()
        .skip(1)
        .map(|arg| {
            arg.to_str().map(str::to_owned).ok_or_else(|| {
                Error::usage(
                    "an argument is not UTF-8: swarm inside a sandbox sends only text to its supervisor",
                )
            })
        })
        .collect::<Result<_>>()?;
    // A plan file is read here, inside the fence, and given as stdin: the supervisor reads no
    // path for the member.
    let mut stdin: Option<OwnedFd> = None;
    if let Command::Plan(plan::Command::Submit(submit)) = &cli.command
        && submit.file != "-"
    {
        let file = std::fs::File::open(&submit.file).map_err(|err| {
            Error::io_on_named("read plan", std::path::Path::new(&submit.file), err)
        })?;
        stdin = Some(file.into());
        if let Some(at) = args.iter().rposition(|arg| *arg == submit.file) {
            "-".clone_into(&mut args[at]);
        }
    }
    let env = FORWARDED_VARS
        .iter()
        .filter_map(|name| {
            std::env::var(name)
                .ok()
                .map(|value| ((*name).to_owned(), value))
        })
        .collect();
    let stdin_fd = stdin.as_ref().map_or(0, AsRawFd::as_raw_fd);
    let (status, said) = fence::forward(socket, &Request { args, env }, stdin_fd)?;
    if said.is_empty() {
        Ok(status)
    } else {
        let error = if status == 2 {
            Error::usage(said)
        } else {
            Error::runtime(said)
        };
        Err(error)
    }
}

/// For a command the supervisor runs for its fenced member: refused unless it is one a member
/// asks of swarm (messages, tasks, plans, permissions, looking at the team), on its own team's
/// home, with no path for the supervisor to read.
pub(crate) fn admit(cli: &Cli, name: &str) -> Result<()> {
    let Some(member) = std::env::var_os(FENCED_VAR).filter(|m| !m.is_empty()) else {
        return Ok(());
    };
    let member = member.to_string_lossy();
    let allowed = match &cli.command {
        Command::Send(_)
        | Command::Recv(_)
        | Command::Inbox(_)
        | Command::Watch(_)
        | Command::Events(_)
        | Command::Status(_)
        | Command::Info(_)
        | Command::Ls(_)
        | Command::Wait(_)
        | Command::Task(_)
        | Command::Shutdown(_)
        | Command::Permission(_)
        | Command::Hook(_) => true,
        Command::Plan(plan::Command::Submit(submit)) => {
            if submit.file != "-" {
                return Err(Error::usage(format!(
                    "{member} is fenced: its plan comes on stdin, not from {}",
                    submit.file
                )));
            }
            true
        }
        _ => false,
    };
    if !allowed {
        return Err(Error::usage(format!(
            "{member} is fenced: swarm {name} is not available inside its sandbox"
        ))
        .with_hint("ask the lead to do it"));
    }
    let home = std::env::var_os("SWARM_HOME").map(std::path::PathBuf::from);
    if cli.global.home != home {
        return Err(Error::usage(format!(
            "{member} is fenced: it acts on its own team's home, and --home is refused"
        )));
    }
    Ok(())
}
