//! The command line: the top layer. These definitions are the one source of the help text, the
//! man pages (`swarm man`) and the shell completions (`swarm completions`). Each command lives in
//! `commands/`, one file with its `Args` and its `run`; nothing below this layer imports it.

pub(crate) mod args;
mod commands;
pub(crate) mod context;
mod logging;
mod manual;
pub(crate) mod output;
pub(crate) mod render;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{ArgAction, Args, CommandFactory, Parser, Subcommand};

use crate::base::text::for_terminal;
use crate::error::{Error, Result};

use self::context::Context;

const ABOUT: &str = "Run teams of coding agents in tmux panes and let them message each other";

const LONG_ABOUT: &str = "\
swarm launches a team of agent processes (Claude Code, Codex, aider, or any CLI program) into tmux \
panes and lets them coordinate through locked JSON mailbox files, watched with inotify so a message \
lands in milliseconds. On top of plain messages sit broadcast, shutdown requests and plan approval; \
uds: addresses reach a peer in another terminal.

The on-disk format is the one Claude Code's agent teams use: with SWARM_HOME=~/.claude, swarm reads \
and writes a real Claude Code team.";

#[derive(Debug, Parser)]
#[command(
    name = "swarm",
    version,
    about = ABOUT,
    long_about = LONG_ABOUT,
    propagate_version = true,
    max_term_width = 100,
    after_help = "Run `swarm help COMMAND` for one command, or `man swarm` for the whole manual."
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: GlobalArgs,

    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Args)]
pub(crate) struct GlobalArgs {
    /// swarm's home directory, holding teams/ and peers/ [default: ~/.swarm]
    ///
    /// Point it at ~/.claude to work with a real Claude Code team.
    #[arg(
        long,
        global = true,
        env = "SWARM_HOME",
        value_name = "DIR",
        hide_env_values = true
    )]
    pub(crate) home: Option<PathBuf>,

    /// The team to act on; optional when home holds only one team
    #[arg(long, global = true, env = "SWARM_TEAM", value_name = "NAME")]
    pub(crate) team: Option<String>,

    /// Act as this member [default: user]
    ///
    /// Every pane the launcher starts has SWARM_AGENT set, so agents need no flag.
    #[arg(long = "as", global = true, env = "SWARM_AGENT", value_name = "NAME")]
    pub(crate) agent: Option<String>,

    /// Print machine-readable JSON: one document, or one object per line for a stream
    #[arg(long, global = true)]
    pub(crate) json: bool,

    /// Log more (-v info, -vv debug, -vvv trace); RUST_LOG also works
    #[arg(short, long, global = true, action = ArgAction::Count, conflicts_with = "quiet")]
    pub(crate) verbose: u8,

    /// Log less (-q errors only, -qq nothing)
    #[arg(short, long, global = true, action = ArgAction::Count)]
    pub(crate) quiet: u8,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Start a team from a TOML team file: the lead's pane, then one pane per member
    Up(commands::up::Args),

    /// Add a teammate pane to the running team (lead only)
    Spawn(commands::spawn::Args),

    /// Create a team from a TOML team file without launching anything
    Init(commands::init::Args),

    /// Add a member with no pane: a person in another terminal, or a script
    Join(commands::join::Args),

    /// List the teams under home
    Ls(commands::ls::Args),

    /// Show each member: pane, pid, state, exit code, unread count, last activity
    Status(commands::status::Args),

    /// Show a member's full record: command, environment keys, pane, pids, times, worktree, log
    Info(commands::info::Args),

    /// Print the last lines a member's pane printed; -f follows
    Log(commands::log::Args),

    /// Block until a member ends and print its completion notice
    Wait(commands::wait::Args),

    /// Stop a member now (or all of them): SIGTERM, a grace period, SIGKILL, pane killed
    Stop(commands::stop::Args),

    /// Shut the whole team down gracefully, then remove what is left
    Down(commands::down::Args),

    /// Send a message to a member, to everyone ('*'), or to a uds: peer
    Send(commands::send::Args),

    /// Show unread messages without consuming them
    Inbox(commands::inbox::Args),

    /// Consume messages from your inbox, printing each with its msg_id and sender
    Recv(commands::recv::Args),

    /// Follow messages as they arrive in one inbox, or in every inbox of the team
    Watch(commands::watch::Args),

    /// Ask a teammate to shut down, or answer such a request
    #[command(subcommand)]
    Shutdown(commands::shutdown::Command),

    /// Submit a plan for the lead's approval, or answer one
    #[command(subcommand)]
    Plan(commands::plan::Command),

    /// Open a peer socket in this terminal and print what arrives (uds: messages)
    Listen(commands::listen::Args),

    /// List live peers; stale entries are removed
    Peers(commands::peers::Args),

    /// Print a shell completion script
    Completions(commands::completions::Args),

    /// Write the man pages into a directory
    Man(commands::man::Args),

    /// The pane supervisor: tmux starts it in each member's pane; not run by hand
    Run(commands::run::Args),

    /// The log writer tmux pipes a member's pane into; not run by hand
    #[command(hide = true)]
    PipeLog(commands::pipe_log::Args),
}

/// Parses the command line, runs the command, and maps the outcome to an exit status.
pub fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2));
        }
    };
    logging::init(cli.global.verbose, cli.global.quiet);
    match dispatch(cli) {
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
    let _ = writeln!(stderr, "swarm: {}", for_terminal(err.message()));
    if let Some(hint) = err.hint() {
        let _ = writeln!(stderr, "hint: {}", for_terminal(hint));
    }
}

fn dispatch(cli: Cli) -> Result<()> {
    let global = cli.global;
    let ctx = Context::new(global.home, global.team, global.agent, global.json)?;
    match cli.command {
        Command::Up(args) => commands::up::run(&ctx, args),
        Command::Spawn(args) => commands::spawn::run(&ctx, args),
        Command::Down(args) => commands::down::run(&ctx, args),
        Command::Info(args) => commands::info::run(&ctx, args),
        Command::Log(args) => commands::log::run(&ctx, args),
        Command::Wait(args) => commands::wait::run(&ctx, args),
        Command::Stop(args) => commands::stop::run(&ctx, args),
        Command::Listen(args) => commands::listen::run(&ctx, args),
        Command::Peers(args) => commands::peers::run(&ctx, args),
        Command::Completions(args) => commands::completions::run(&ctx, args, Cli::command()),
        Command::Man(args) => commands::man::run(&ctx, args, Cli::command()),
        Command::Run(args) => commands::run::run(&ctx, args),
        Command::PipeLog(args) => commands::pipe_log::run(&ctx, args),
        Command::Init(args) => commands::init::run(&ctx, args),
        Command::Join(args) => commands::join::run(&ctx, args),
        Command::Ls(args) => commands::ls::run(&ctx, args),
        Command::Status(args) => commands::status::run(&ctx, args),
        Command::Send(args) => commands::send::run(&ctx, args),
        Command::Inbox(args) => commands::inbox::run(&ctx, args),
        Command::Recv(args) => commands::recv::run(&ctx, args),
        Command::Watch(args) => commands::watch::run(&ctx, args),
        Command::Shutdown(command) => commands::shutdown::run(&ctx, command),
        Command::Plan(command) => commands::plan::run(&ctx, command),
    }
}
