//! The command line: the top layer. These definitions are the one source of the help text, the
//! man pages (`swarm man`) and the shell completions (`swarm completions`). Each command lives in
//! `commands/`, one file with its `Args` and its `run`; nothing below this layer imports it.

pub(crate) mod args;
mod commands;
mod complete;
pub(crate) mod context;
mod fence;
pub(crate) mod logging;
mod manual;
pub(crate) mod output;
mod permission_ask;
mod removal;
pub(crate) mod render;
mod request;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::parser::ValueSource;
use clap::{ArgAction, Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use clap_complete::engine::ArgValueCandidates;

use crate::base::text::for_terminal;
use crate::error::{Error, ErrorKind, Result};

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

/// The options every command takes, shown under a heading of their own after each command's own.
/// An environment variable's name is shown, never its value: clap would show an unset one as
/// `[env: SWARM_TEAM=]`, as if set to nothing.
#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
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

    /// The team to act on; optional when home holds only one team, only one is running, or only
    /// one has the member a command names
    #[arg(
        long,
        global = true,
        env = "SWARM_TEAM",
        value_name = "NAME",
        hide_env_values = true,
        add = ArgValueCandidates::new(complete::teams)
    )]
    pub(crate) team: Option<String>,

    /// Act as this member [default: user]
    ///
    /// Every pane the launcher starts has SWARM_AGENT set, so agents need no flag.
    #[arg(
        long = "as",
        global = true,
        env = "SWARM_AGENT",
        value_name = "NAME",
        hide_env_values = true,
        add = ArgValueCandidates::new(complete::members)
    )]
    pub(crate) agent: Option<String>,

    /// Print machine-readable JSON: one document, or one object per line for a stream
    #[arg(long, global = true)]
    pub(crate) json: bool,

    /// Colour output and log lines: auto (on a terminal, unless NO_COLOR is set), always, never
    ///
    /// Given before the command (`swarm --color never log --all`): after it, `spawn` and `join`
    /// take --color for a member's colour.
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    pub(crate) color: output::Colour,

    /// Log more (-v info, -vv debug, -vvv trace); RUST_LOG also works
    #[arg(short, long, global = true, action = ArgAction::Count, conflicts_with = "quiet")]
    pub(crate) verbose: u8,

    /// Log less (-q errors only, -qq nothing)
    #[arg(short, long, global = true, action = ArgAction::Count)]
    pub(crate) quiet: u8,
}

/// Each subcommand's arguments are added when it is parsed or its help, page or completions are
/// made (`defer`): a command builds only its own, and starts sooner.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum Command {
    /// Start a team from a TOML team file: the lead's pane, then one pane per member
    Up(commands::up::Args),

    /// Resume an interrupted team (after a reboot, or its tmux server gone): `swarm up --resume`
    Resume(commands::up::ResumeArgs),

    /// Add a teammate pane to the team, opening its window if it has none (lead only)
    Spawn(Box<commands::spawn::Args>),

    /// Create a team from a TOML team file without launching anything
    Init(commands::init::Args),

    /// Add a member with no pane: a person in another terminal, or a script
    Join(commands::join::Args),

    /// List the teams under home
    Ls(commands::ls::Args),

    /// Show each member (pane, pid, state, exit, unread, activity, task) and the task counts
    Status(commands::status::Args),

    /// Show a member's full record: command, environment keys, pane, pids, times, worktree, log
    Info(commands::info::Args),

    /// Attach to the team's window with a member's pane selected; inside tmux, switch to it
    Attach(commands::attach::Args),

    /// Print the last lines a member's pane printed, as text; -f follows, --all for everyone
    Log(commands::log::Args),

    /// Block until a member ends (--all: every member) and print its completion notice
    Wait(commands::wait::Args),

    /// Stop a member now (or all of them): SIGTERM, a grace period, SIGKILL, pane killed
    Stop(commands::stop::Args),

    /// Shut the whole team down gracefully, then stop what is left; --rm removes it too
    Down(commands::down::Args),

    /// Remove ended teams with their inboxes, logs and tasks; --archive keeps a copy
    Rm(commands::rm::Args),

    /// Remove every team that has ended, or those that ended longer ago than --older-than
    Prune(commands::prune::Args),

    /// Send a message to a member, to everyone ('*'), or to a uds: peer
    Send(commands::send::Args),

    /// Type keys into a member's pane, as if at its keyboard, then Enter
    Type(commands::type_keys::Args),

    /// Show unread messages without consuming them
    Inbox(commands::inbox::Args),

    /// Consume messages from your inbox, printing each with its msg_id and sender
    Recv(commands::recv::Args),

    /// Follow messages as they arrive in one inbox, or in every inbox of the team
    Watch(commands::watch::Args),

    /// Show the team's events: process states, activities, decisions asked and answered; -f follows
    Events(commands::events::Args),

    /// What each member spent, per model, with the team's total and its rate; --all every team
    Cost(commands::cost::Args),

    /// Add tokens to your own usage, for a program whose files swarm does not read
    #[command(subcommand)]
    Usage(commands::usage::Command),

    /// Set or raise a member's budget, or the team's, while the team runs (lead or person)
    Budget(commands::budget::Args),

    /// A live dashboard of the team: members, their panes, messages, decisions; act from it
    Top(commands::top::Args),

    /// Ask a teammate to shut down, or answer such a request
    #[command(subcommand)]
    Shutdown(commands::shutdown::Command),

    /// Submit a plan for the lead's approval, or answer one
    #[command(subcommand)]
    Plan(commands::plan::Command),

    /// Teammates' permission asks: list, allow or deny them, or ask from any CLI
    #[command(subcommand)]
    Permission(commands::permission::Command),

    /// Set a Claude Code teammate's permission mode, allowing its oldest waiting ask (lead only)
    Mode(commands::permission::ModeArgs),

    /// The team's shared task list, in Claude Code's format: add, claim, finish, wait
    #[command(subcommand)]
    Task(commands::task::Command),

    /// Serve swarm as MCP tools over stdio, to the agent in a member's pane (acts as that member)
    Mcp(commands::mcp::Args),

    /// Open a peer socket in this terminal and print what arrives (uds: messages)
    Listen(commands::listen::Args),

    /// List live peers; stale entries are removed
    Peers(commands::peers::Args),

    /// Serve this host's part of every team across machines, through a NATS server
    Node(commands::node::Args),

    /// Print a shell completion script
    Completions(commands::completions::Args),

    /// Write the man pages into a directory
    Man(commands::man::Args),

    /// The pane supervisor: tmux starts it in each member's pane; not run by hand
    Run(commands::run::Args),

    /// Record a member's activity from its program's hook (Claude Code, Codex or Gemini CLI runs it; not run by hand)
    Hook(commands::hook::Args),

    /// The log writer tmux pipes a member's pane into; not run by hand
    #[command(hide = true)]
    PipeLog(commands::pipe_log::Args),

    /// The signing agent that holds the teammates' keys; started on demand, not run by hand
    #[command(hide = true)]
    KeyAgent(commands::key_agent::Args),

    /// Starts a fenced member's program behind its proxy bridge, inside its sandbox; not run by hand
    #[command(hide = true, name = crate::launch::sandbox::BRIDGE_COMMAND)]
    FenceBridge(commands::fence_bridge::Args),
}

/// Parses the command line, runs the command, and maps the outcome to an exit status.
pub fn run() -> ExitCode {
    // `COMPLETE=bash swarm`: the shell asks for candidates (or the script that asks); answered
    // here, before anything else runs, and the process exits.
    clap_complete::CompleteEnv::with_factory(Cli::command).complete();
    // Known before parsing, so that even a usage error clap finds is reported as JSON.
    let json = json_requested(std::env::args_os());
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let parsed = parse(&args).and_then(|matches| {
        let name = matches.subcommand_name().unwrap_or_default().to_owned();
        Ok((Cli::from_arg_matches(&matches)?, typed_as(&matches), name))
    });
    let (cli, agent_typed, name) = match parsed {
        Ok(parsed) => parsed,
        Err(err) => {
            // --help and --version are not errors: they print to stdout as ever.
            if json && err.use_stderr() {
                let (message, hint) = clap_message(&err);
                report_json(ErrorKind::Usage, &message, hint.as_deref());
            } else {
                let _ = err.print();
            }
            return ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2));
        }
    };
    logging::init(cli.global.verbose, cli.global.quiet, cli.global.color);
    // Inside a sandbox, the member's supervisor runs the command ("Fencing members").
    if let Some(forwarded) = fence::forward(&cli, &args) {
        return match forwarded {
            Ok(status) => ExitCode::from(u8::try_from(status).unwrap_or(1)),
            Err(err) => {
                report(&err, json);
                ExitCode::from(err.kind().exit_code())
            }
        };
    }
    match fence::admit(&cli, &name).and_then(|()| dispatch(cli, agent_typed)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if err.is_broken_pipe() => ExitCode::SUCCESS,
        Err(err) => {
            report(&err, json);
            ExitCode::from(err.kind().exit_code())
        }
    }
}

/// The command line parsed. clap gives each global option to every subcommand before it parses
/// (six options, thirty-odd subcommands, one of which runs); here only the subcommand `args`
/// name is given them. What it cannot parse, or asks for help, is parsed again with the whole
/// tree, which says so as ever (docs/ARCHITECTURE.md, "Start-up").
fn parse(args: &[std::ffi::OsString]) -> std::result::Result<clap::ArgMatches, clap::Error> {
    // Kept to the end: freeing a command tree would cost more than building what the command
    // needs of it.
    let mut named = std::mem::ManuallyDrop::new(globals_for_one(Cli::command(), args));
    match named.try_get_matches_from_mut(args) {
        Ok(matches) => Ok(matches),
        Err(err) if err.kind() == clap::error::ErrorKind::DisplayVersion => Err(err),
        Err(_) => std::mem::ManuallyDrop::new(Cli::command()).try_get_matches_from_mut(args),
    }
}

/// `command` with its global options given to the one subcommand `args` name, if any, in place
/// of every subcommand: the options before it are read at the top, those after it in it, and
/// clap carries each one's value to both levels as for any global.
fn globals_for_one(command: clap::Command, args: &[std::ffi::OsString]) -> clap::Command {
    let globals: Vec<clap::Arg> = command
        .get_arguments()
        .filter(|arg| arg.is_global_set())
        .cloned()
        .collect();
    let named = subcommand_named(&command, args).map(|sub| sub.get_name().to_owned());
    let command = globals.iter().fold(command, |command, arg| {
        command.mut_arg(arg.get_id(), |arg| arg.global(false))
    });
    match named {
        Some(name) => command.mut_subcommand(name, |sub| sub.args(globals)),
        None => command,
    }
}

/// The subcommand `args` name: the first word that is neither an option of `command`'s nor the
/// value one takes.
fn subcommand_named<'a>(
    command: &'a clap::Command,
    args: &[std::ffi::OsString],
) -> Option<&'a clap::Command> {
    let takes_value = |long: &str| {
        command
            .get_arguments()
            .any(|arg| arg.get_long() == Some(long) && arg.get_action().takes_values())
    };
    let mut words = args.iter().skip(1).map(|arg| arg.to_str());
    while let Some(word) = words.next() {
        let word = word?;
        if word == "--" {
            return None;
        }
        if let Some(long) = word.strip_prefix("--") {
            if !long.contains('=') && takes_value(long) {
                words.next();
            }
        } else if !word.starts_with('-') {
            return command.find_subcommand(word);
        }
    }
    None
}

/// One line on stderr, and a hint where one helps; with `--json`, one JSON object on one line
/// (docs/ARCHITECTURE.md, "Errors and exit statuses"). An empty message means the command already
/// said everything on stdout (a rejected plan, a failed member) and only the status is left.
pub(crate) fn report(err: &Error, json: bool) {
    if err.message().is_empty() {
        return;
    }
    if json {
        if let Some(reason) = err.reason() {
            let object = serde_json::json!({"error": err.message(), "kind": err.kind().name(), "hint": err.hint(), "reason": reason});
            let _ = writeln!(std::io::stderr().lock(), "{object}");
            return;
        }
        return report_json(err.kind(), err.message(), err.hint());
    }
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "swarm: {}", for_terminal(err.message()));
    if let Some(hint) = err.hint() {
        let _ = writeln!(stderr, "hint: {}", for_terminal(hint));
    }
}

/// `{"error": …, "kind": …, "hint": … or null}` on one line of stderr.
fn report_json(kind: ErrorKind, message: &str, hint: Option<&str>) {
    let object = serde_json::json!({"error": message, "kind": kind.name(), "hint": hint});
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{object}");
}

/// Whether `--json` is on the command line, before any `--` (after it, it is an argument).
fn json_requested(args: impl IntoIterator<Item = std::ffi::OsString>) -> bool {
    args.into_iter()
        .skip(1)
        .take_while(|arg| arg != "--")
        .any(|arg| arg == "--json")
}

/// What clap says about a usage error, as a message and a hint: the message is what follows
/// `error: ` up to the first blank line, on one line; the hint is clap's tips, else where the
/// usage is shown.
fn clap_message(err: &clap::Error) -> (String, Option<String>) {
    let text = err.render().to_string();
    let mut paragraphs = text.split("\n\n");
    let message = paragraphs
        .next()
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let message = message
        .strip_prefix("error: ")
        .unwrap_or(&message)
        .to_owned();
    let rest: Vec<&str> = paragraphs.flat_map(str::lines).map(str::trim).collect();
    let tips: Vec<&str> = rest
        .iter()
        .filter_map(|line| line.strip_prefix("tip: "))
        .collect();
    let hint = if tips.is_empty() {
        // `Usage: swarm send --json <TO> [TEXT]` names the command whose help says more.
        rest.iter()
            .find_map(|line| line.strip_prefix("Usage: "))
            .map(|usage| {
                let command: Vec<&str> = usage
                    .split_whitespace()
                    .take_while(|word| !word.starts_with(['-', '<', '[']))
                    .collect();
                format!("`{} --help` shows how to use it", command.join(" "))
            })
    } else {
        Some(tips.join("; "))
    };
    (message, hint)
}

/// Whether `--as` was typed on the command line (at any level), rather than taken from
/// `SWARM_AGENT`: inside a pane, only a typed name that is not the pane's is refused.
fn typed_as(matches: &clap::ArgMatches) -> bool {
    let mut at = Some(matches);
    while let Some(level) = at {
        if level.value_source("agent") == Some(ValueSource::CommandLine) {
            return true;
        }
        at = level.subcommand().map(|(_, sub)| sub);
    }
    false
}

fn dispatch(cli: Cli, agent_typed: bool) -> Result<()> {
    let global = cli.global;
    // Inside a sandbox, with no home to resolve: the program it becomes takes its place.
    let command = match cli.command {
        Command::FenceBridge(args) => return commands::fence_bridge::run(args),
        command => command,
    };
    let ctx = Context::new(
        global.home,
        global.team,
        global.agent,
        agent_typed,
        output::Printer::new(global.json, global.color),
    )?;
    match command {
        Command::FenceBridge(_) => Ok(()),
        Command::Up(args) => commands::up::run(&ctx, args),
        Command::Resume(args) => commands::up::resume(&ctx, args),
        Command::Spawn(args) => commands::spawn::run(&ctx, *args),
        Command::Down(args) => commands::down::run(&ctx, args),
        Command::Rm(args) => commands::rm::run(&ctx, args),
        Command::Prune(args) => commands::prune::run(&ctx, args),
        Command::Info(args) => commands::info::run(&ctx, args),
        Command::Attach(args) => commands::attach::run(&ctx, args),
        Command::Log(args) => commands::log::run(&ctx, args),
        Command::Wait(args) => commands::wait::run(&ctx, args),
        Command::Stop(args) => commands::stop::run(&ctx, args),
        Command::Top(args) => commands::top::run(&ctx, args),
        Command::Listen(args) => commands::listen::run(&ctx, args),
        Command::Mcp(args) => commands::mcp::run(&ctx, args),
        Command::Peers(args) => commands::peers::run(&ctx, args),
        Command::Completions(args) => commands::completions::run(&ctx, args, Cli::command()),
        Command::Man(args) => commands::man::run(&ctx, args, Cli::command()),
        Command::Run(args) => commands::run::run(&ctx, args),
        Command::Hook(args) => commands::hook::run(&ctx, args),
        Command::PipeLog(args) => commands::pipe_log::run(&ctx, args),
        Command::KeyAgent(args) => commands::key_agent::run(&ctx, args),
        Command::Node(args) => commands::node::run(&ctx, args),
        Command::Init(args) => commands::init::run(&ctx, args),
        Command::Join(args) => commands::join::run(&ctx, args),
        Command::Ls(args) => commands::ls::run(&ctx, args),
        Command::Status(args) => commands::status::run(&ctx, args),
        Command::Send(args) => commands::send::run(&ctx, args),
        Command::Type(args) => commands::type_keys::run(&ctx, args),
        Command::Inbox(args) => commands::inbox::run(&ctx, args),
        Command::Recv(args) => commands::recv::run(&ctx, args),
        Command::Watch(args) => commands::watch::run(&ctx, args),
        Command::Events(args) => commands::events::run(&ctx, args),
        Command::Cost(args) => commands::cost::run(&ctx, args),
        Command::Usage(command) => commands::usage::run(&ctx, command),
        Command::Budget(args) => commands::budget::run(&ctx, args),
        Command::Shutdown(command) => commands::shutdown::run(&ctx, command),
        Command::Plan(command) => commands::plan::run(&ctx, command),
        Command::Permission(command) => commands::permission::run(&ctx, command),
        Command::Mode(args) => commands::permission::mode(&ctx, args),
        Command::Task(command) => commands::task::run(&ctx, command),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// clap's own checks of the whole command line, every deferred subcommand built: a
    /// subcommand's argument that shares a global's id would shadow it.
    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    /// A run builds only what its command needs: the global options are given to the subcommand
    /// named alone, not copied into each of the thirty-odd others (docs/ARCHITECTURE.md,
    /// "Start-up"); typed before it or after it, they reach the command as ever.
    #[test]
    fn only_the_subcommand_named_is_given_the_global_options() {
        let args: Vec<std::ffi::OsString> = ["swarm", "--home", "/h", "task", "list", "--as", "a"]
            .into_iter()
            .map(Into::into)
            .collect();
        let mut command = globals_for_one(Cli::command(), &args);
        let matches = command.try_get_matches_from_mut(&args).unwrap();
        let given: Vec<&str> = command
            .get_subcommands()
            .filter(|sub| sub.get_arguments().any(|arg| arg.get_id() == "home"))
            .map(clap::Command::get_name)
            .collect();
        assert_eq!(given, ["task"], "subcommands given the global options");
        let cli = Cli::from_arg_matches(&matches).unwrap();
        assert_eq!(cli.global.home, Some(PathBuf::from("/h")));
        assert_eq!(cli.global.agent.as_deref(), Some("a"));
        assert!(typed_as(&matches), "--as typed after the subcommand");
        assert!(matches!(cli.command, Command::Task(_)));
    }

    #[test]
    fn the_subcommand_named_is_the_first_word_no_option_takes() {
        let named = |args: &[&str]| {
            let args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
            subcommand_named(&Cli::command(), &args).map(|sub| sub.get_name().to_owned())
        };
        assert_eq!(named(&["swarm", "inbox"]).as_deref(), Some("inbox"));
        assert_eq!(
            named(&["swarm", "--team", "ls", "-vq", "--json", "status"]).as_deref(),
            Some("status")
        );
        assert_eq!(
            named(&["swarm", "--home=/h", "send", "a"]).as_deref(),
            Some("send")
        );
        assert_eq!(named(&["swarm", "--", "inbox"]), None);
        assert_eq!(named(&["swarm", "inbx"]), None);
        assert_eq!(named(&["swarm", "--version"]), None);
    }

    #[test]
    fn json_is_asked_for_anywhere_before_a_double_dash() {
        let asks = |args: &[&str]| json_requested(args.iter().map(std::ffi::OsString::from));
        assert!(asks(&["swarm", "--json", "status"]));
        assert!(asks(&["swarm", "status", "--json"]));
        assert!(!asks(&["swarm", "send", "bob", "--", "--json"]));
        assert!(!asks(&["swarm", "send", "bob", "--jsonx"]));
        assert!(
            !asks(&["--json"]),
            "the program's own name is not an argument"
        );
    }
}
