//! Man pages, generated from the clap definitions (the one source of the flag docs) plus the
//! sections a Unix user looks for on the top page: exit status, environment, files, examples.

use std::fs;
use std::path::{Path, PathBuf};

use clap_mangen::Man;
use clap_mangen::roff::{Roff, bold, italic, roman};

use crate::error::{EXIT_STATUSES, Error, Result};
use crate::launch::teamfile::{KEYS, Section};
use crate::policy;

/// The commands whose `--json` prints one object per line, each with the flag that makes it do so:
/// swarm(1) lists them from here; tests/swarm/docs.rs checks docs/ARCHITECTURE.md, "JSON output",
/// lists the same and each one's own page says so.
const STREAMS: &[&str] = &[
    "watch",
    "log",
    "listen",
    "up --wait",
    "wait --all",
    "stop",
    "down",
    "rm",
    "prune",
    "events",
];

/// The rules every `--json` output follows; each command's own page shows its document under JSON
/// OUTPUT, from the command's long help (docs/ARCHITECTURE.md, "JSON output").
const JSON_OUTPUT: &[(&str, &str)] = &[
    (
        "Documents and streams",
        "A command that answers once prints one JSON document. One that goes on, or reports as it goes ({streams}), prints one object per line; where a stream mixes kinds, each object has \"event\" first.",
    ),
    (
        "Times",
        "Every time is an RFC 3339 string, UTC, with milliseconds: 2026-01-01T00:00:02.000Z. Where swarm reads the time from a file that keeps epoch milliseconds (config.json's createdAt, joinedAt, startedAt and endedAt, as Claude Code's format has them; a peer's startedAt) or works it out (lastActivity), the same time is also an integer in the key with Ms appended: createdAtMs. A message's timestamp is shown in the same format. Durations are integer milliseconds (durationMs). The files themselves are not changed.",
    ),
    (
        "Missing values",
        "A field of a document swarm makes up is always there, null when it has no value. A record swarm shows as it is kept (a message, a member's record in info) has the fields it has: a message's summary and color are there when it has them.",
    ),
    (
        "A message",
        "In inbox, recv, watch and up --wait: the message's object from the inbox, fields in their order, with msg_id, its timestamp as above, \"structured\" right after \"text\" (the protocol message the text holds, decoded into an object with \"type\" first and Claude Code's field names, or null for plain text), and \"verified\" (true or false) when it claims to come from the lead's side. A broadcast has \"to\": \"*\" and is shown once.",
    ),
    (
        "A member's ending",
        "In wait, stop, down and up --wait: name, agentId, state, exitCode, reason, endedAt, endedAtMs, and notice, the task_notification the lead was sent, or null.",
    ),
    (
        "An error",
        "One line of JSON on stderr, the last: {\"error\": message, \"kind\": \"runtime\", \"usage\", \"not_found\" or \"timeout\", \"hint\": what to do, or null}, with the exit status it has without --json; a refused task claim adds \"reason\", Claude Code's word for it (already_claimed, already_resolved, blocked, busy, task_not_found, cycle). Usage errors found while parsing the command line are such objects too. A command that already answered on stdout and fails only by its status (a rejected plan, a member that did not complete) prints none.",
    ),
];

const PERMISSIONS_INTRO: &str = "Who a command acts as depends on where it runs, never on what it says. Inside a member's pane (a process its supervisor started, or anything that started in turn, through setsid and double forks) it is that member, whatever SWARM_AGENT says, and --as naming anyone else is refused; from a pane of another team under the same home it is a stranger to this one, who may only send and read. Outside every pane it is the person at the keyboard, user, who has the lead's authority (what only the lead may send goes out under the lead's name) and may act as any member with --as; members added with swarm join act from outside too.";

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
        "Who you are outside every pane, as --as. Set in every pane, where it only says who the pane already is. Outside a team the sender is user.",
    ),
    ("SWARM_AGENT_ID", "<name>@<team>, set in every pane."),
    (
        "SWARM_COLOR",
        "The member's colour, set in every teammate's pane.",
    ),
    ("SWARM_LEAD", "The lead's name, set in every pane."),
    (
        "SWARM_LEAD_VERIFY_KEY",
        "The public key a teammate verifies the lead's messages with, <ms>.<base64url DER SPKI>, made at its launch and set in its pane (Claude Code also gets it as --lead-verify-key). A message from the lead, user or system that does not verify with it is shown as forged and never acted on.",
    ),
    (
        "SWARM_SOCKET",
        "The member's own peer socket, set by the supervisor; send signs uds: messages with it so they can be answered.",
    ),
    (
        "SWARM_SUPERVISOR_SOCKET",
        "Set by the supervisor in a fenced member's sandbox (sandbox = true): swarm there runs every command through this socket, and the supervisor runs it as that member.",
    ),
    (
        "SWARM_FENCED",
        "Set by a fenced member's supervisor for the command it runs for the member: the command takes only what a fenced member may ask.",
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
        "The private tmux server for up, and for a spawn that opens the team's window, as --socket: a name (tmux -L) or a socket path (tmux -S).",
    ),
    (
        "SWARM_TMUX_TIMEOUT",
        "Seconds a tmux command may take before its server counts as stopped or stuck (default 10): the command fails with one line naming the server.",
    ),
    (
        "SWARM_LOCK_TIMEOUT",
        "Seconds to wait for another tool's lock (Claude Code's lock directory, agent-team-mail's lock file) before failing (default 5).",
    ),
    (
        "XDG_RUNTIME_DIR",
        "Peer sockets and each team's signing agent live in $XDG_RUNTIME_DIR/swarm, else /tmp/swarm-<uid>.",
    ),
    (
        "TMUX, TMUX_PANE",
        "Set by tmux. Inside tmux, up opens a new window in the current session, and attach switches the client instead of attaching; inside another server's pane attach refuses to nest unless --nest.",
    ),
    (
        "COMPLETE",
        "Set by a shell's dynamic completion (source <(COMPLETE=bash swarm)): swarm prints the registration script, or the candidates for the word being completed (team, member, request id and peer names among them), and exits.",
    ),
    ("RUST_LOG", "Overrides the log level chosen with -v and -q."),
    (
        "Everything else",
        "A member's program inherits its pane's environment from tmux, API keys and tokens included, unless the team file's env_remove, or env_clear with env_keep, withholds it (spawn: --env-remove, --env-clear, --env-keep). up --dry-run shows every variable each program will get, the values of secret-looking names masked.",
    ),
];

const FILES: &[(&str, &str)] = &[
    (
        "<home>/teams, <home>/peers",
        "Private to you: swarm keeps every folder below them mode 0700 and every file 0600, whatever the umask, and tightens what an older swarm or another tool left open to others the next time it writes there (the home itself is never changed). It follows no symlink there: a link where swarm keeps a file is refused.",
    ),
    (
        "<home>/teams/<team>/config.json",
        "The team: name, description, createdAt, leadAgentId, leadSessionId and members, in Claude Code's field names, plus swarm's own (pid, state, exitCode, argv, startedAt, endedAt and more). Unknown fields survive every rewrite.",
    ),
    (
        "<home>/teams/<team>/.config.flock, .config.wait.flock, config.lock, config.json.lock",
        "The locks on config.json, all taken to rewrite it: swarm's lock file and the one its waiting processes hold shared, the lock file agent-team-mail's writers flock, and the lock directory Claude Code's writers create.",
    ),
    (
        "<home>/teams/<team>/.launch.flock",
        "Held by the swarm up that is starting the team, or a swarm spawn opening its window, and holding its pid: a second up of the team is refused, and spawns take turns.",
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
        "<home>/teams/<team>/inboxes/.<name>.wait.flock",
        "swarm processes waiting for that inbox's lock hold it shared, so none takes the lock ahead of them.",
    ),
    (
        "<home>/teams/<team>/inboxes/.<name>.consume.flock",
        "swarm's consumers of that inbox take turns on it.",
    ),
    (
        "<home>/teams/<team>/inboxes/<name>.lock",
        "The lock file agent-team-mail's writers flock; swarm takes it too.",
    ),
    (
        "<home>/teams/<team>/inboxes/<name>.json.lock",
        "The lock directory Claude Code's writers create and honour; swarm takes it too.",
    ),
    (
        "<home>/teams/<team>/inboxes/.spool/<name>/<ns>-<pid>-<id>.json",
        "Messages of a sender waiting for that inbox's lock, merged into the inbox by whoever holds it. Written first under the same name with a leading dot.",
    ),
    (
        "<home>/teams/<team>/inboxes/<name>.json.corrupt-<ms>",
        "An inbox that was not a JSON array, moved aside. Elements without string from, text and timestamp are moved to <name>.json.invalid-<ms>. A name already taken gets .1, .2, ... added.",
    ),
    (
        "<home>/teams/<team>/history/<name>.jsonl",
        "Messages already delivered to the member, one JSON object per line.",
    ),
    (
        "<home>/teams/<team>/permissions.jsonl",
        "Every answer the lead's side gave to a teammate's permission ask (swarm permission allow, deny), one JSON object per line: requestId, member, tool, allowed, always, mode (when the answer set one), reason, by, at. An ask answered here is answered; a second answer is refused.",
    ),
    (
        "<home>/teams/<team>/logs/<name>.log",
        "What the member's pane printed, byte for byte, newest last, at most log_max bytes (64MiB unless the team file says); the output before it is in <name>.log.1. swarm log shows it as text, swarm log --raw as it is.",
    ),
    (
        "<home>/archive/<team>-<time>.tar.zst, <home>/archive/<team>-<time>",
        "A team removed with rm, prune or down --rm and --archive: a tar archive compressed with zstd that unpacks to <team>/, or with --archive=dir the team's folder itself; either holds the team's task list as tasks/. <time> is UTC, as 20260101T120000Z. Private like the rest: the folder 0700, the archive 0600.",
    ),
    (
        "<home>/teams/.<team>.removing-<pid>, <home>/teams/.<team>.archiving-<pid>",
        "A team's folder, its task list moved in as tasks/, while swarm process <pid> deletes it or moves it into the archive. One a killed rm left is finished by the next swarm command that lists or picks teams, which says so on stderr.",
    ),
    (
        "<home>/node/node.json, <home>/node/hosts.json",
        "This host's swarm node: its host name, pid, server URL and whether it is connected, beside the lock it holds while it runs (.node.flock); and the hosts whose nodes it sees alive. A member on another host shows as unreachable when its host is not among them.",
    ),
    (
        "<home>/peers/<pid>.json",
        "A live peer: pid, socket, label, team, agent, cwd, startedAt and tty.",
    ),
    (
        ".<file>.<pid>.<random>.tmp, .<file>.lock.swarm-<pid>",
        "Beside a file swarm replaces, its next version while swarm process <pid> writes it; beside a lock directory, that directory while swarm process <pid> makes it. Only a swarm process that was killed leaves one; a temporary file is removed by the next write in its folder once it is five minutes old and its writer is gone, and either is safe to remove when no swarm runs.",
    ),
    (
        "<runtime>/<pid>.sock",
        "A peer socket (mode 0600) in a private directory (mode 0700).",
    ),
    (
        "<runtime>/fence-<pid>.sock",
        "The socket of a fenced member's supervisor (mode 0600), bound into its sandbox: the only processes it serves are the sandbox's.",
    ),
    (
        "<runtime>/fence-<pid>-net.sock",
        "The proxy of a fenced member whose sandbox_network is an allow-list (mode 0600), bound into its sandbox: its only way to the hosts the list names.",
    ),
    (
        "<runtime>/env-<random>.json",
        "A member's own variables (mode 0600) on their way to its supervisor, which removes it when it reads it.",
    ),
    (
        "<repo>/.swarm/worktrees/<team>/<name>",
        "The git worktree of a member with isolation = \"worktree\", on branch swarm/<team>/<name>. Removed with its branch at the member's end when nothing was committed or changed; kept otherwise, and used again by the member's next run. swarm adds /.swarm/ to the repository's info/exclude, and its git commands on the repository take turns on swarm-worktrees.lock in the git directory.",
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
    (
        "Lead a team from a script: the first spawn opens its window; wait for every member:",
        "swarm init team.toml; swarm spawn a -- ./job 1; swarm spawn b -- ./job 2; swarm wait --all",
    ),
    ("Read what a member printed:", "swarm log bob -n 50"),
    (
        "Watch a member at work in its pane (inside tmux, switch to it):",
        "swarm attach bob",
    ),
    (
        "Follow what every member prints, each line after its name:",
        "swarm log --all -f",
    ),
    (
        "Message a terminal that runs swarm listen:",
        "swarm send uds:/run/user/1000/swarm/4242.sock 'build is green'",
    ),
    ("Shut the team down:", "swarm down"),
    (
        "Shut the team down and remove it, keeping an archive:",
        "swarm down --rm --archive",
    ),
    (
        "Remove every team that ended more than a week ago:",
        "swarm prune --older-than 7d",
    ),
    (
        "Work with a real Claude Code team:",
        "SWARM_HOME=~/.claude swarm status my-team",
    ),
];

/// Writes `swarm.1`, one page per subcommand of `command` (the whole command line) and the team
/// file's page, `swarm-team.5`, into `dir`; returns the files written. A `dir` named `man1` is a
/// section folder of a man path: `swarm-team.5` goes to the `man5` beside it, where man looks.
pub(crate) fn write_pages(command: clap::Command, dir: &Path) -> Result<Vec<PathBuf>> {
    crate::store::durable::create_dir_outside_home(dir)?;
    let mut command = command.disable_help_subcommand(true);
    command.build();
    let mut written = Vec::new();
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_subcommand_pages(sub, dir, &mut written)?;
    }
    let version = command.get_version().unwrap_or_default().to_owned();
    let top = dir.join("swarm.1");
    fs::write(&top, render_top(command)?).map_err(|err| Error::io("write", &top, err))?;
    written.push(top);
    let formats = match (dir.file_name(), dir.parent()) {
        (Some(name), Some(parent)) if name == "man1" => parent.join("man5"),
        _ => dir.to_path_buf(),
    };
    crate::store::durable::create_dir_outside_home(&formats)?;
    let team = formats.join(TEAM_PAGE);
    fs::write(&team, render_team_page(&version)).map_err(|err| Error::io("write", &team, err))?;
    written.push(team);
    written.sort();
    Ok(written)
}

/// The team file's page.
const TEAM_PAGE: &str = "swarm-team.5";

const TEAM_DESCRIPTION: &[&str] = &[
    "A team file is TOML: the team's keys at the top level, the lead's in a [lead] table, and one [[member]] table per teammate. swarm up starts the team it describes, swarm up --dry-run prints each pane's exact argv and environment and the settings of each member, and swarm init creates the team without starting anything.",
    "Every key is checked before anything is created: a key not listed below is refused with the line it is on, and so is a value that is not valid (exit status 2).",
    "swarm spawn adds a member later, to a team started by up or created by init: it takes each member key as the flag named below, checked as the key is, and records the same settings. A team whose lead has no command is led from outside every pane, by a terminal or a script: swarm init, then swarm spawn for each member (the first opens the team's window) and swarm wait --all.",
];

const TEAM_EXAMPLE: &str = r#"name = "review"
layout = "main-vertical"
log_max = "64MiB"

[lead]
command = ["claude", "--model", "opus"]

[[member]]
name = "security"
model = "sonnet"
plan_mode_required = true
isolation = "worktree"
prompt = "Review the auth changes."

[[member]]
name = "repl"
command = ["python3", "-i"]
paste_format = "raw"
run_timeout_s = 3600
env = { PYTHONUNBUFFERED = "1" }"#;

/// swarm-team(5): every key of the team file, from the parser's own table (`teamfile::KEYS`), so
/// the page lists exactly the keys the parser reads.
fn render_team_page(version: &str) -> Vec<u8> {
    let mut roff = Roff::default();
    let footer = format!("swarm {version}");
    roff.control("TH", ["swarm-team", "5", "", footer.as_str()]);
    roff.control("SH", ["NAME"]);
    roff.text([roman(
        "swarm-team - the TOML team file of swarm up, swarm init and swarm spawn",
    )]);
    roff.control("SH", ["DESCRIPTION"]);
    for (n, paragraph) in TEAM_DESCRIPTION.iter().enumerate() {
        if n > 0 {
            roff.control("PP", []);
        }
        roff.text([roman(*paragraph)]);
    }
    for (section, title) in [
        (Section::Team, "TEAM KEYS"),
        (Section::Lead, "LEAD KEYS"),
        (Section::Member, "MEMBER KEYS"),
        (Section::Task, "TASK KEYS"),
        (Section::Cluster, "CLUSTER KEYS"),
        (Section::Notify, "NOTIFY KEYS"),
    ] {
        roff.control("SH", [title]);
        roff.text([roman(match section {
            Section::Team => "At the top level of the file.",
            Section::Lead => "In the [lead] table.",
            Section::Member => "In each [[member]] table, and as swarm spawn's flags.",
            Section::Notify => "In the [notify] table, and in ~/.config/swarm/notify.toml ($XDG_CONFIG_HOME/swarm/notify.toml, the same keys at its top level) for every team: the team file's keys win, key by key. up refuses a bad key in either (exit 2). The team's signing agent sends the alerts, from the team's event stream (swarm events); a team with no teammate has none.",
            Section::Cluster => "In the [cluster] table, for a team whose members name hosts (docs/ARCHITECTURE.md, \"Across machines\").",
            Section::Task => "In each [[task]] table. The tasks are made when up or init makes the team, ids in place of keys; a second up finds them on the board (metadata team_file_key) and makes none.",
        })]);
        for doc in KEYS.iter().filter(|doc| doc.section == section) {
            roff.control("TP", []);
            roff.text([bold(doc.key)]);
            roff.text([
                italic("Type: "),
                roman(doc.kind),
                roman(". "),
                italic("Default: "),
                roman(doc.default),
                roman("."),
            ]);
            if let Some(spawn) = doc.spawn {
                roff.text([italic("spawn: "), bold(spawn), roman(".")]);
            }
            roff.control("br", []);
            roff.text([roman(doc.meaning)]);
        }
    }
    roff.control("SH", ["EXAMPLE"]);
    roff.control("nf", []);
    for line in TEAM_EXAMPLE.lines() {
        roff.text([roman(line)]);
    }
    roff.control("fi", []);
    roff.control("SH", ["SEE ALSO"]);
    roff.text([
        bold("swarm"),
        roman("(1), "),
        bold("swarm-up"),
        roman("(1), "),
        bold("swarm-init"),
        roman("(1), "),
        bold("swarm-spawn"),
        roman("(1), "),
        bold("swarm-wait"),
        roman("(1), "),
        bold("tmux"),
        roman("(1)"),
    ]);
    roff.render().into_bytes()
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
    let page = render_subcommand(command, &man).map_err(|err| Error::io("render", &path, err))?;
    fs::write(&path, page).map_err(|err| Error::io("write", &path, err))?;
    written.push(path);
    Ok(())
}

/// A command's page as clap_mangen renders one, and the long help after its options (what its
/// `--json` prints) under JSON OUTPUT, before VERSION, its shapes kept as they are laid out.
fn render_subcommand(command: &clap::Command, man: &Man) -> std::io::Result<Vec<u8>> {
    let Some(json) = command.get_after_long_help().map(ToString::to_string) else {
        let mut page = Vec::new();
        man.render(&mut page)?;
        return Ok(page);
    };
    let mut page = Vec::new();
    Man::new(command.clone().after_long_help(None::<&str>)).render(&mut page)?;
    let page = String::from_utf8_lossy(&page).into_owned();
    let mut roff = Roff::default();
    roff.control("SH", ["JSON OUTPUT"]);
    laid_out(&mut roff, &json);
    let section = roff.render();
    // Once at the top of the page is enough.
    let preamble = Roff::default().render();
    let section = section.strip_prefix(&preamble).unwrap_or(&section);
    let at = page.find("\n.SH VERSION").map_or(page.len(), |at| at + 1);
    Ok(format!("{}{section}{}", &page[..at], &page[at..]).into_bytes())
}

/// `text` in roff: indented lines (a JSON shape) as they are, the others as filled paragraphs.
/// A first line `JSON output (--json), one document:` reads `One document:` under its heading.
fn laid_out(roff: &mut Roff, text: &str) {
    let text = text.strip_prefix("JSON output (--json), ").map_or_else(
        || text.to_owned(),
        |rest| {
            let mut chars = rest.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().chain(chars).collect::<String>()
            })
        },
    );
    let mut prose: Vec<&str> = Vec::new();
    let mut shape: Vec<&str> = Vec::new();
    let flush_prose = |roff: &mut Roff, prose: &mut Vec<&str>| {
        if !prose.is_empty() {
            roff.text([roman(prose.join(" "))]);
            prose.clear();
        }
    };
    let flush_shape = |roff: &mut Roff, shape: &mut Vec<&str>| {
        if !shape.is_empty() {
            roff.control("nf", []);
            for line in shape.drain(..) {
                roff.text([roman(line)]);
            }
            roff.control("fi", []);
        }
    };
    for line in text.lines() {
        if line.starts_with(' ') {
            flush_prose(roff, &mut prose);
            shape.push(line);
        } else {
            flush_shape(roff, &mut shape);
            prose.push(line);
        }
    }
    flush_prose(roff, &mut prose);
    flush_shape(roff, &mut shape);
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
    roff.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in EXIT_STATUSES {
        roff.control("TP", []);
        roff.text([bold(code.to_string())]);
        roff.text([roman(*meaning)]);
    }
    roff.control("SH", ["JSON OUTPUT"]);
    for (term, meaning) in JSON_OUTPUT {
        roff.control("TP", []);
        roff.text([bold(*term)]);
        roff.text([roman(meaning.replace("{streams}", &STREAMS.join(", ")))]);
    }
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
        roman("(1) for each command, "),
        bold("swarm-team"),
        roman("(5) for the team file."),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Text as roff writes it.
    fn roff_text(text: &str) -> String {
        text.replace('\\', r"\\")
            .replace('-', r"\-")
            .replace('\'', r"\*(Aq")
    }

    /// swarm-team(5) lists every key of the parser's table in its own section, with its type, its
    /// default, its meaning and, for a member key, spawn's flag for it.
    #[test]
    fn the_team_page_lists_every_key_in_its_section() {
        let page = String::from_utf8(render_team_page("0.0.0")).unwrap();
        for (section, title, next) in [
            (Section::Team, ".SH \"TEAM KEYS\"", ".SH \"LEAD KEYS\""),
            (Section::Lead, ".SH \"LEAD KEYS\"", ".SH \"MEMBER KEYS\""),
            (Section::Member, ".SH \"MEMBER KEYS\"", ".SH \"TASK KEYS\""),
            (Section::Task, ".SH \"TASK KEYS\"", ".SH \"CLUSTER KEYS\""),
            (
                Section::Cluster,
                ".SH \"CLUSTER KEYS\"",
                ".SH \"NOTIFY KEYS\"",
            ),
            (Section::Notify, ".SH \"NOTIFY KEYS\"", ".SH EXAMPLE"),
        ] {
            let start = page.find(title).unwrap_or_else(|| panic!("no {title}"));
            let end = start + page[start..].find(next).unwrap();
            let part = &page[start..end];
            let docs: Vec<_> = KEYS.iter().filter(|doc| doc.section == section).collect();
            assert_eq!(part.matches(".TP\n").count(), docs.len(), "{title}");
            for doc in docs {
                let entry = format!(".TP\n\\fB{}\\fR\n", roff_text(doc.key));
                let at = part
                    .find(&entry)
                    .unwrap_or_else(|| panic!("{title} lacks {}", doc.key));
                let body = &part[at + entry.len()..];
                let body = &body[..body.find(".TP\n").unwrap_or(body.len())];
                for needle in [doc.kind, doc.default, doc.meaning] {
                    assert!(body.contains(&roff_text(needle)), "{}: {needle}", doc.key);
                }
                if let Some(spawn) = doc.spawn {
                    assert!(body.contains(&roff_text(spawn)), "{}: {spawn}", doc.key);
                }
            }
        }
    }

    #[test]
    fn a_man1_folder_gets_the_team_page_in_man5_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let command = clap::Command::new("swarm").version("0.0.0");
        let man1 = dir.path().join("man").join("man1");
        let written = write_pages(command.clone(), &man1).unwrap();
        assert!(written.contains(&man1.join("swarm.1")));
        assert!(written.contains(&dir.path().join("man/man5/swarm-team.5")));
        let flat = dir.path().join("pages");
        let written = write_pages(command, &flat).unwrap();
        assert!(written.contains(&flat.join("swarm-team.5")));
    }
}
