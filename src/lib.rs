//! swarm: teams of agent processes in tmux panes, coordinating through locked JSON mailboxes.
//!
//! `main.rs` only calls [`run`]; every concern lives in its own module.

pub mod cli;
pub mod clock;
pub mod commands;
pub mod config;
pub mod context;
pub mod ending;
pub mod error;
pub mod exchange;
pub mod follow;
pub mod fsutil;
pub mod home;
pub mod launcher;
pub mod liveness;
pub mod lock;
mod logging;
pub mod mailbox;
pub mod manual;
pub mod message;
pub mod names;
pub mod output;
pub mod peer;
pub mod process;
pub mod profile;
pub mod protocol;
pub mod render;
pub mod rules;
pub mod setup;
pub mod stopper;
pub mod supervisor;
pub mod teamfile;
pub mod tmux;
pub mod watcher;
pub mod worktree;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use crate::error::Error;

/// Parses the command line, runs the command, and maps the outcome to an exit status (DESIGN §5).
pub fn run() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2));
        }
    };
    logging::init(cli.global.verbose, cli.global.quiet);
    match commands::dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if err.is_broken_pipe() => ExitCode::SUCCESS,
        Err(err) => {
            report(&err);
            ExitCode::from(err.kind().exit_code())
        }
    }
}

/// One line on stderr, and a hint where one helps. An empty message means the command already
/// said everything on stdout (a rejected plan, a failed member) and only the status is left.
fn report(err: &Error) {
    if err.message().is_empty() {
        return;
    }
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "swarm: {}", err.message());
    if let Some(hint) = err.hint() {
        let _ = writeln!(stderr, "hint: {hint}");
    }
}
