//! The command line. These definitions are the one source of the help text, the man pages
//! (`swarm man`) and the shell completions (`swarm completions`).

use std::path::PathBuf;

use clap::{ArgAction, Args, Parser, Subcommand};

use crate::commands;

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
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub struct GlobalArgs {
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
    pub home: Option<PathBuf>,

    /// The team to act on; optional when home holds only one team
    #[arg(long, global = true, env = "SWARM_TEAM", value_name = "NAME")]
    pub team: Option<String>,

    /// Act as this member [default: user]
    ///
    /// Every pane the launcher starts has SWARM_AGENT set, so agents need no flag.
    #[arg(long = "as", global = true, env = "SWARM_AGENT", value_name = "NAME")]
    pub agent: Option<String>,

    /// Print machine-readable JSON: one document, or one object per line for a stream
    #[arg(long, global = true)]
    pub json: bool,

    /// Log more (-v info, -vv debug, -vvv trace); RUST_LOG also works
    #[arg(short, long, global = true, action = ArgAction::Count, conflicts_with = "quiet")]
    pub verbose: u8,

    /// Log less (-q errors only, -qq nothing)
    #[arg(short, long, global = true, action = ArgAction::Count)]
    pub quiet: u8,
}

#[derive(Debug, Subcommand)]
pub enum Command {
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
    Run(crate::supervisor::Args),
}

/// Seconds as a duration: `30`, `0.5`.
pub fn parse_seconds(raw: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = raw
        .parse()
        .map_err(|_| format!("{raw:?} is not a number of seconds"))?;
    std::time::Duration::try_from_secs_f64(secs)
        .map_err(|_| format!("{raw:?} is not a valid number of seconds"))
}
