//! Man pages, generated from the clap definitions (the one source of the flag docs) plus the
//! sections a Unix user looks for on the top page: exit status, environment, files, examples.

use std::fs;
use std::path::{Path, PathBuf};

use clap_mangen::Man;
use clap_mangen::roff::{Roff, bold, italic, roman};

use crate::error::{Error, Result};
use crate::policy;

const EXIT_STATUS: &[(&str, &str)] = &[
    ("0", "Success."),
    (
        "1",
        "A runtime failure: an OS error, a peer that refused a message, a rejected plan or shutdown request, a member that did not complete.",
    ),
    (
        "2",
        "Bad input or usage, or a protocol rule refused: an invalid name, an oversized message, a non-lead sending a lead-only message, an answer to a request that does not exist, a recipient not on the roster.",
    ),
    (
        "3",
        "Not found: a team, a member, a file, or a peer socket with nobody listening.",
    ),
    ("4", "A --wait or --timeout ran out."),
];

const PERMISSIONS_INTRO: &str = "A command acts as the lead, as a teammate (a member that runs a program), or as the person at the keyboard: anyone else, including members added with swarm join. The person has the lead's authority; what only the lead may send goes out under the lead's name.";

const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "SWARM_HOME",
        "swarm's home directory, as --home. Defaults to ~/.swarm. Set it to ~/.claude to work with a real Claude Code team.",
    ),
    (
        "SWARM_TEAM",
        "The team, as --team. Set in every pane the launcher starts.",
    ),
    (
        "SWARM_AGENT",
        "Who you are, as --as. Set in every pane. Outside a team the sender is user.",
    ),
    ("SWARM_AGENT_ID", "<name>@<team>, set in every pane."),
    (
        "SWARM_COLOR",
        "The member's colour, set in every teammate's pane.",
    ),
    ("SWARM_LEAD", "The lead's name, set in every pane."),
    (
        "SWARM_SOCKET",
        "The member's own peer socket, set by the supervisor; send signs uds: messages with it so they can be answered.",
    ),
    (
        "SWARM_PLAN_MODE",
        "required for a plan_mode_required member of the generic profile.",
    ),
    (
        "SWARM_WORKTREE",
        "The member's git worktree, when it has one.",
    ),
    (
        "SWARM_TMUX_SOCKET",
        "The private tmux server for up, as --socket: a name (tmux -L) or a socket path (tmux -S).",
    ),
    (
        "SWARM_LOCK_TIMEOUT",
        "Seconds to wait for a lock directory held by another writer before failing (default 5).",
    ),
    (
        "XDG_RUNTIME_DIR",
        "Peer sockets live in $XDG_RUNTIME_DIR/swarm, else /tmp/swarm-<uid>.",
    ),
    (
        "TMUX, TMUX_PANE",
        "Set by tmux. Inside tmux, up opens a new window in the current session.",
    ),
    ("RUST_LOG", "Overrides the log level chosen with -v and -q."),
    (
        "Everything else",
        "A member's program inherits its pane's environment from tmux, API keys and tokens included, unless the team file's env_remove, or env_clear with env_keep, withholds it (spawn: --env-remove, --env-clear, --env-keep). up --dry-run shows every variable each program will get, the values of secret-looking names masked.",
    ),
];

const FILES: &[(&str, &str)] = &[
    (
        "<home>/teams/<team>/config.json",
        "The team: name, description, createdAt, leadAgentId, leadSessionId and members, in Claude Code's field names, plus swarm's own (pid, state, exitCode, argv, startedAt, endedAt). Unknown fields survive every rewrite.",
    ),
    (
        "<home>/teams/<team>/inboxes/<name>.json",
        "A member's unread messages: a JSON array, pretty-printed with a 2-space indent.",
    ),
    (
        "<home>/teams/<team>/inboxes/.<name>.flock",
        "swarm's lock file for that inbox.",
    ),
    (
        "<home>/teams/<team>/inboxes/<name>.json.lock",
        "The lock directory Claude Code's writers create and honour; swarm takes it too.",
    ),
    (
        "<home>/teams/<team>/inboxes/<name>.json.corrupt-<ms>",
        "An inbox that was not a JSON array, moved aside. Elements without string from, text and timestamp are moved to <name>.json.invalid-<ms>.",
    ),
    (
        "<home>/teams/<team>/history/<name>.jsonl",
        "Messages already delivered to the member, one JSON object per line.",
    ),
    (
        "<home>/teams/<team>/logs/<name>.log",
        "What the member's pane printed, newest last, at most log_max bytes (64MiB unless the team file says); the output before it is in <name>.log.1.",
    ),
    (
        "<home>/peers/<pid>.json",
        "A live peer: pid, socket, label, team, agent, cwd, startedAt.",
    ),
    (
        "<runtime>/<pid>.sock",
        "A peer socket (mode 0600) in a private directory (mode 0700).",
    ),
    (
        "<runtime>/env-<random>.json",
        "A member's own variables (mode 0600) on their way to its supervisor, which removes it when it reads it.",
    ),
];

const EXAMPLES: &[(&str, &str)] = &[
    (
        "Start a team and wait for it to finish:",
        "swarm up teams/demo.toml --wait",
    ),
    ("See what every member is doing:", "swarm status"),
    (
        "Tell one member something, or everyone:",
        "swarm send bob 'take task 2'; swarm send '*' 'standup in 5'",
    ),
    (
        "Read your own inbox as an agent, blocking until a message arrives:",
        "swarm recv --wait --timeout 300",
    ),
    ("Follow every message of the team:", "swarm watch --all"),
    (
        "Ask a teammate to stop, and wait for its answer:",
        "swarm shutdown request bob --reason done --wait",
    ),
    (
        "Submit a plan and wait for the lead's verdict:",
        "swarm plan submit plan.md --wait",
    ),
    (
        "Add a teammate from the lead's program:",
        "swarm spawn tester --model sonnet -- claude",
    ),
    ("Read what a member printed:", "swarm log bob -n 50"),
    (
        "Message a terminal that runs swarm listen:",
        "swarm send uds:/run/user/1000/swarm/4242.sock 'build is green'",
    ),
    ("Shut the team down:", "swarm down"),
    (
        "Work with a real Claude Code team:",
        "SWARM_HOME=~/.claude swarm status my-team",
    ),
];

/// Writes `swarm.1` and one page per subcommand of `command` (the whole command line) into `dir`;
/// returns the files written.
pub(crate) fn write_pages(command: clap::Command, dir: &Path) -> Result<Vec<PathBuf>> {
    crate::store::durable::create_dir_all(dir)?;
    let mut command = command.disable_help_subcommand(true);
    command.build();
    let mut written = Vec::new();
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_subcommand_pages(sub, dir, &mut written)?;
    }
    let top = dir.join("swarm.1");
    fs::write(&top, render_top(command)?).map_err(|err| Error::io("write", &top, err))?;
    written.push(top);
    written.sort();
    Ok(written)
}

fn write_subcommand_pages(
    command: &clap::Command,
    dir: &Path,
    written: &mut Vec<PathBuf>,
) -> Result<()> {
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_subcommand_pages(sub, dir, written)?;
    }
    let man = Man::new(command.clone());
    let path = dir.join(man.get_filename());
    let mut page = Vec::new();
    man.render(&mut page)
        .map_err(|err| Error::io("render", &path, err))?;
    fs::write(&path, page).map_err(|err| Error::io("write", &path, err))?;
    written.push(path);
    Ok(())
}

fn render_top(command: clap::Command) -> Result<Vec<u8>> {
    let man = Man::new(command);
    let mut page = Vec::new();
    let render =
        |result: std::io::Result<()>| result.map_err(|err| Error::os("render the manual", err));
    render(man.render_title(&mut page))?;
    render(man.render_name_section(&mut page))?;
    render(man.render_synopsis_section(&mut page))?;
    render(man.render_description_section(&mut page))?;
    render(man.render_options_section(&mut page))?;
    render(man.render_subcommands_section(&mut page))?;
    let mut roff = Roff::default();
    definitions(&mut roff, "EXIT STATUS", EXIT_STATUS);
    roff.control("SH", ["PERMISSIONS"]);
    roff.text([roman(PERMISSIONS_INTRO)]);
    for (doing, who) in policy::definitions() {
        roff.control("TP", []);
        roff.text([bold(doing)]);
        roff.text([roman(who)]);
    }
    definitions(&mut roff, "ENVIRONMENT", ENVIRONMENT);
    definitions(&mut roff, "FILES", FILES);
    roff.control("SH", ["EXAMPLES"]);
    for (what, command) in EXAMPLES {
        roff.control("TP", []);
        roff.text([roman(*what)]);
        roff.text([bold(*command)]);
    }
    roff.control("SH", ["SEE ALSO"]);
    roff.text([
        bold("tmux"),
        roman("(1), "),
        italic("swarm-<command>"),
        roman("(1) for each command."),
    ]);
    render(roff.to_writer(&mut page))?;
    render(man.render_version_section(&mut page))?;
    Ok(page)
}

fn definitions(roff: &mut Roff, title: &str, items: &[(&str, &str)]) {
    roff.control("SH", [title]);
    for (term, meaning) in items {
        roff.control("TP", []);
        roff.text([bold(*term)]);
        roff.text([roman(*meaning)]);
    }
}
