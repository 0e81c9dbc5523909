//! Getting around: `swarm attach` inside and outside tmux, on the team's server and from another
//! one, driven as a person would, by typing into panes that real tmux clients look at.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::harness::{Sandbox, TmuxServer, bin, eventually};

const TEAM: &str = r#"
name = "t"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "alice"
command = ["sleep", "1000"]
[[member]]
name = "bob"
command = ["sleep", "1000"]
"#;

fn up(sandbox: &Sandbox, socket: &Path, toml: &str) {
    let file = sandbox.write("t.toml", toml);
    sandbox
        .swarm()
        .arg("up")
        .arg(file)
        .arg("--socket")
        .arg(socket)
        .run()
        .success();
}

fn pane(sandbox: &Sandbox, name: &str) -> String {
    sandbox.member("t", name)["tmuxPaneId"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn window(sandbox: &Sandbox) -> String {
    sandbox.config("t")["tmux"]["window"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// What each client of `server` looks at: `<session> <window> <pane>`.
fn clients(server: &TmuxServer) -> Vec<String> {
    server
        .run(&[
            "list-clients",
            "-F",
            "#{session_name} #{window_id} #{pane_id}",
        ])
        .lines()
        .map(str::to_owned)
        .collect()
}

/// A new window of `session` on `server` running a plain `sh`, for typing commands into.
fn shell(server: &TmuxServer, session: &str) -> String {
    server
        .run(&[
            "new-window",
            "-d",
            "-t",
            session,
            "-P",
            "-F",
            "#{pane_id}",
            "sh",
        ])
        .trim()
        .to_owned()
}

/// Types `line` and Enter into `pane`, as a person would.
fn type_line(server: &TmuxServer, pane: &str, line: &str) {
    server.run(&["send-keys", "-t", pane, "-l", line]);
    server.run(&["send-keys", "-t", pane, "Enter"]);
}

/// Types `swarm ARGS` into `pane` and waits for its exit status, which it writes to a file.
fn swarm_in(sandbox: &Sandbox, server: &TmuxServer, pane: &str, args: &str, tag: &str) -> i32 {
    let status = sandbox.root().join(format!("status-{tag}"));
    type_line(
        server,
        pane,
        &format!(
            "{} {args} >{out} 2>&1; echo $? >{status}.tmp; mv {status}.tmp {status}",
            bin(),
            out = sandbox.root().join(format!("out-{tag}")).display(),
            status = status.display()
        ),
    );
    eventually(&format!("`swarm {args}` to finish"), || status.exists());
    fs::read_to_string(&status).unwrap().trim().parse().unwrap()
}

fn out(sandbox: &Sandbox, tag: &str) -> String {
    fs::read_to_string(sandbox.root().join(format!("out-{tag}"))).unwrap()
}

/// A second tmux server on `name` in the sandbox whose one pane runs `command`: a terminal for
/// a client of the team's server, or a shell outside it.
fn terminal(sandbox: &Sandbox, name: &str, command: &[&str]) -> TmuxServer {
    let server = TmuxServer::unstarted_at(sandbox, name);
    let status = sandbox
        .command("tmux")
        .arg("-S")
        .arg(server.socket())
        .args([
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "term",
            "-x",
            "160",
            "-y",
            "50",
        ])
        .args(command)
        .status()
        .unwrap();
    assert!(status.success(), "cannot start the terminal's tmux server");
    server
}

/// Inside tmux on the team's server, `attach` switches the person's client to the team's
/// window with the member's pane selected, from whichever session the command runs in.
#[test]
fn attach_inside_tmux_switches_the_client_to_the_members_pane() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::start(&sandbox);
    up(&sandbox, server.socket(), TEAM);
    let team_window = window(&sandbox);
    // A person's client on the fixture session, in a terminal of its own.
    let socket = server.socket().display().to_string();
    let _terminal = terminal(
        &sandbox,
        "term.sock",
        &[
            "env",
            "-u",
            "TMUX",
            "-u",
            "TMUX_PANE",
            "tmux",
            "-S",
            &socket,
            "attach",
            "-t",
            "fixture",
        ],
    );
    eventually("the person's client to attach", || {
        clients(&server)
            .first()
            .is_some_and(|c| c.starts_with("fixture "))
    });
    let prompt = shell(&server, "fixture");
    server.run(&["select-window", "-t", &prompt]);

    assert_eq!(
        swarm_in(&sandbox, &server, &prompt, "attach t bob", "bob"),
        0,
        "{}",
        out(&sandbox, "bob")
    );
    let bob = pane(&sandbox, "bob");
    assert_eq!(clients(&server), [format!("swarm-t {team_window} {bob}")]);
    assert_eq!(server.pane_format(&bob, "#{pane_active}"), "1");

    // One name is a member of the only running team; the client is already in its session.
    let status = swarm_in(&sandbox, &server, &prompt, "attach --json alice", "alice");
    let said: Value = serde_json::from_str(&out(&sandbox, "alice")).unwrap();
    assert_eq!(status, 0, "{said}");
    let alice = pane(&sandbox, "alice");
    assert_eq!(said["how"], "switch-client");
    assert_eq!(said["member"], "alice");
    assert_eq!(said["pane"], alice.as_str());
    assert_eq!(said["session"], "swarm-t");
    assert_eq!(clients(&server), [format!("swarm-t {team_window} {alice}")]);

    // With the team's name alone: its window, with the pane that is active there.
    server.run(&["switch-client", "-t", "fixture"]);
    assert!(clients(&server)[0].starts_with("fixture "));
    assert_eq!(
        swarm_in(&sandbox, &server, &prompt, "attach t", "team"),
        0,
        "{}",
        out(&sandbox, "team")
    );
    assert_eq!(clients(&server), [format!("swarm-t {team_window} {alice}")]);

    sandbox.swarm().args(["down", "--force"]).run().success();
}

/// Outside tmux, `attach` becomes `tmux attach` on the team's private server: the terminal is
/// handed over (swarm execs tmux). Inside another tmux server it refuses to nest, unless
/// `--nest`.
#[test]
fn attach_outside_tmux_hands_the_terminal_to_tmux_attach() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::unstarted(&sandbox);
    up(&sandbox, server.socket(), TEAM);
    let team_window = window(&sandbox);
    let (alice, bob) = (pane(&sandbox, "alice"), pane(&sandbox, "bob"));
    // A terminal that is no pane of the team's server: a pane of another server, whose TMUX the
    // command line unsets, as in a terminal outside tmux.
    let outside = terminal(&sandbox, "term.sock", &["sh"]);
    type_line(
        &outside,
        "term",
        &format!("env -u TMUX -u TMUX_PANE {} attach bob", bin()),
    );
    eventually("a client on the team's server", || {
        clients(&server) == [format!("swarm-t {team_window} {bob}")]
    });
    // The terminal's foreground program is tmux itself, not swarm waiting for it.
    assert_eq!(
        outside.pane_format("term", "#{pane_current_command}"),
        "tmux"
    );

    // Inside another server: refused, with the way to do it.
    let inside = shell(&outside, "term");
    assert_eq!(
        swarm_in(&sandbox, &outside, &inside, "attach bob", "nest"),
        2
    );
    let said = out(&sandbox, "nest");
    assert!(said.contains("would nest tmux in tmux"), "{said}");
    assert!(said.contains("--nest"), "{said}");
    assert!(
        said.contains(&format!("tmux -S {} attach -t", server.socket().display())),
        "{said}"
    );
    // --nest does it all the same, in that pane.
    type_line(&outside, &inside, &format!("{} attach --nest alice", bin()));
    eventually("a second client, at alice's pane", || {
        clients(&server) == vec![format!("swarm-t {team_window} {alice}"); 2]
    });

    sandbox.swarm().args(["down", "--force"]).run().success();
}

/// A member that has no pane, has ended, or is not on the roster, and a team with no window, are
/// each a clear "not found" (exit 3); attaching with no terminal is a usage error (exit 2).
#[test]
fn attach_says_why_there_is_nothing_to_attach_to() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::unstarted(&sandbox);
    up(
        &sandbox,
        server.socket(),
        &format!("{TEAM}[[member]]\nname = \"quick\"\ncommand = [\"true\"]\n"),
    );
    sandbox.swarm().args(["join", "me"]).run().success();
    let other = sandbox.write(
        "u.toml",
        "name = \"u\"\n[[member]]\nname = \"x\"\ncommand = [\"true\"]\n",
    );
    sandbox.swarm().arg("init").arg(other).run().success();
    eventually("quick to end", || {
        sandbox.member("t", "quick")["state"] == "exited"
    });

    // Misspelt: the same words and status as every other command.
    let unknown = sandbox.swarm().args(["attach", "nobody"]).run().refusal();
    let info = sandbox.swarm().args(["info", "nobody"]).run().refusal();
    assert_eq!(unknown, info);
    sandbox
        .swarm()
        .args(["attach", "t", "nobody"])
        .run()
        .refused(3, "nobody is not a member of team t");

    sandbox
        .swarm()
        .args(["attach", "me"])
        .run()
        .refused(3, "me has no pane: it runs no program");
    let quick = pane(&sandbox, "quick");
    sandbox
        .swarm()
        .args(["attach", "quick"])
        .run()
        .refused(3, &format!("quick has exited; its pane {quick} is closed"));
    // One name that is no member of the running team, but a team: that team.
    sandbox
        .swarm()
        .args(["attach", "u"])
        .run()
        .refused(3, "team u has no tmux window");

    // No terminal to hand over (stdin is not one), and no tmux around.
    let refused = sandbox
        .swarm()
        .args(["attach", "bob"])
        .run()
        .refused(2, "swarm attach needs a terminal");
    refused.stderr_has(&format!(
        "tmux -S {} attach -t '{}'",
        server.socket().display(),
        pane(&sandbox, "bob")
    ));

    // The server gone: the window is gone too.
    server.run(&["kill-server"]);
    sandbox
        .swarm()
        .args(["attach", "t"])
        .run()
        .refused(3, "tmux window");
}

/// The names swarm offers for the last of `words` (after `swarm`), asked as bash's registration
/// script asks: `COMPLETE=bash swarm -- swarm WORD…` with the index of the word being completed.
/// Options, which clap offers beside them, are left out.
fn candidates(sandbox: &Sandbox, words: &[&str], env: &[(&str, &str)]) -> Vec<String> {
    let mut run = sandbox
        .swarm()
        .env("COMPLETE", "bash")
        .env("_CLAP_COMPLETE_INDEX", words.len().to_string())
        .env("_CLAP_IFS", "\n")
        .args(["--", "swarm"])
        .args(words);
    for (key, value) in env {
        run = run.env(key, value);
    }
    let outcome = run.run().success();
    assert!(outcome.stderr.is_empty(), "{words:?}: {}", outcome.stderr);
    outcome
        .stdout
        .lines()
        .filter(|line| !line.is_empty() && !line.starts_with('-'))
        .map(str::to_owned)
        .collect()
}

/// Dynamic completion names teams, members, pending requests and live peers from the home the
/// command line points at.
#[test]
fn dynamic_completion_offers_the_names_under_the_home() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob", "carol"]);
    sandbox.team("u", &["x"]);
    let none: &[(&str, &str)] = &[];
    let t = [("SWARM_TEAM", "t")];
    let (roster, teams) = (["team-lead", "bob", "carol"], ["t", "u"]);

    for words in [
        &["--team", ""][..],
        &["status", ""],
        &["rm", "t", ""],
        &["down", ""],
    ] {
        assert_eq!(candidates(&sandbox, words, none), teams, "{words:?}");
    }
    assert_eq!(
        candidates(&sandbox, &["--team", "t", "inbox", ""], none),
        roster
    );
    // log, like attach, takes a team first: its first word is a member or a team.
    assert_eq!(
        candidates(&sandbox, &["--team=t", "log", ""], none),
        ["team-lead", "bob", "carol", "t", "u"]
    );
    assert_eq!(
        candidates(&sandbox, &["log", "u", ""], none),
        ["team-lead", "x"]
    );
    assert_eq!(candidates(&sandbox, &["info", ""], &t), roster);
    assert_eq!(
        candidates(&sandbox, &["--team", "u", "wait", ""], none),
        ["team-lead", "x"]
    );
    assert_eq!(
        candidates(&sandbox, &["--team", "t", "stop", "c"], none),
        ["carol"]
    );
    assert_eq!(candidates(&sandbox, &["--as", ""], &t), roster);
    // Two teams, none running, none named: every team's members, as a command takes them, a
    // name in several teams as NAME@TEAM.
    assert_eq!(
        candidates(&sandbox, &["inbox", ""], none),
        ["team-lead@t", "bob", "carol", "team-lead@u", "x"]
    );
    // attach: one name is a member of the team or a team; after a team, its members.
    assert_eq!(
        candidates(&sandbox, &["attach", ""], none),
        ["team-lead@t", "bob", "carol", "team-lead@u", "x", "t", "u"]
    );
    assert_eq!(
        candidates(&sandbox, &["attach", ""], &t),
        ["team-lead", "bob", "carol", "t", "u"]
    );
    assert_eq!(
        candidates(&sandbox, &["attach", "u", ""], &t),
        ["team-lead", "x"]
    );
    // Another home, from the command line.
    let other = sandbox.root().join("other");
    fs::create_dir_all(other.join("teams/solo")).unwrap();
    fs::copy(
        sandbox.team_dir("u").join("config.json"),
        other.join("teams/solo/config.json"),
    )
    .unwrap();
    let other = other.display().to_string();
    assert_eq!(
        candidates(&sandbox, &["--home", &other, "status", ""], none),
        ["solo"]
    );
    // The only team under a home needs no naming.
    assert_eq!(
        candidates(&sandbox, &["--home", &other, "inbox", ""], none),
        ["team-lead", "x"]
    );

    // Pending requests: shutdown requests in the caller's inbox, plans in the lead's.
    let shutdown = sandbox
        .swarm()
        .args(["--team", "t", "shutdown", "request", "bob"])
        .run()
        .success()
        .stdout_line();
    let plan = sandbox
        .swarm()
        .args(["--team", "t", "--as", "carol", "plan", "submit", "-"])
        .stdin("the plan")
        .run()
        .success()
        .stdout_line();
    assert_eq!(
        candidates(&sandbox, &["shutdown", "approve", ""], &t),
        [shutdown.as_str()]
    );
    assert_eq!(
        candidates(&sandbox, &["--as", "bob", "shutdown", "reject", ""], &t),
        [shutdown.as_str()]
    );
    assert!(candidates(&sandbox, &["--as", "carol", "shutdown", "approve", ""], &t).is_empty());
    assert_eq!(
        candidates(&sandbox, &["plan", "approve", ""], &t),
        [plan.as_str()]
    );
    assert_eq!(
        candidates(&sandbox, &["plan", "reject", "p"], &t),
        [plan.as_str()]
    );

    // Recipients: members, everyone, the person, and live peers by label; never nothing, which
    // would leave the shell to offer file names.
    let (_listener, _socket) = crate::peers::listen(&sandbox, &["--label", "laptop"]);
    assert_eq!(
        candidates(&sandbox, &["send", ""], &t),
        ["team-lead", "bob", "carol", "*", "user", "uds:laptop"]
    );
    assert_eq!(
        candidates(&sandbox, &["send", ""], none),
        [
            "team-lead@t",
            "bob",
            "carol",
            "team-lead@u",
            "x",
            "*",
            "user",
            "uds:laptop"
        ]
    );
    assert_eq!(candidates(&sandbox, &["send", "uds:l"], &t), ["uds:laptop"]);
}

/// Completion runs on every Tab: a home that is missing, not a folder, or holds garbage offers no
/// names, says nothing, fails nothing, and is left as it was.
#[test]
fn dynamic_completion_of_a_broken_home_offers_nothing_and_writes_nothing() {
    let sandbox = Sandbox::new();
    let missing = sandbox.root().join("missing");
    let file = sandbox.write("not-a-home", "x");
    let garbage = sandbox.root().join("garbage");
    fs::create_dir_all(garbage.join("teams/t/inboxes")).unwrap();
    fs::write(garbage.join("teams/t/config.json"), "{ not json").unwrap();
    fs::write(garbage.join("teams/t/inboxes/bob.json"), "[{\"torn\"").unwrap();
    fs::create_dir_all(garbage.join("peers")).unwrap();
    fs::write(garbage.join("peers/1.json"), "nonsense").unwrap();
    for home in [&missing, &file, &garbage] {
        let home = home.display().to_string();
        for words in [
            &["status", ""][..],
            &["inbox", ""],
            &["--team", "t", "inbox", ""],
            &["--team", "t", "send", ""],
            &["--team", "t", "shutdown", "approve", ""],
            &["--team", "t", "plan", "approve", ""],
            &["attach", "t", ""],
        ] {
            let offered = candidates(&sandbox, words, &[("SWARM_HOME", &home)]);
            // `*` and `user` are send's own words, not names from the home.
            assert!(
                offered
                    .iter()
                    .all(|name| ["t", "*", "user"].contains(&name.as_str())),
                "{home} {words:?}: {offered:?}"
            );
        }
    }
    assert!(!missing.exists(), "completion made the home");
    assert_eq!(fs::read_to_string(&file).unwrap(), "x");
    assert_eq!(
        fs::read_to_string(garbage.join("teams/t/inboxes/bob.json")).unwrap(),
        "[{\"torn\""
    );
    assert!(
        garbage.join("peers/1.json").exists(),
        "completion swept the registry"
    );
    let names: Vec<_> = fs::read_dir(garbage.join("teams/t/inboxes"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(names, ["bob.json"], "nothing moved aside or locked");
}

/// teams/claude.toml says in its header how to run it with Claude Code's own home; the dry run it
/// shows works as written, plans the team in that home, and starts and writes nothing.
#[test]
fn the_claude_team_file_says_how_to_use_it_with_a_real_claude_code_home() {
    let sandbox = Sandbox::new();
    let file = fs::read_to_string(crate::harness::repo().join("teams/claude.toml")).unwrap();
    let header: Vec<&str> = file
        .lines()
        .take_while(|line| line.starts_with('#'))
        .map(|line| line.trim_start_matches('#').trim())
        .collect();
    // As prose: the lines joined.
    let prose = header.join(" ");
    for needle in [
        "SWARM_HOME=~/.claude swarm up teams/claude.toml",
        "~/.claude/teams/<team>/",
        "Needs: tmux",
        "logged in",
        "costs",
        "SWARM_HOME=~/.claude swarm down",
    ] {
        assert!(
            prose.contains(needle),
            "the header lacks {needle:?}:\n{prose}"
        );
    }
    let dry_run = header
        .iter()
        .find(|line| line.starts_with("SWARM_HOME=~/.claude swarm up --dry-run"))
        .expect("the header shows a dry run");
    let path = sandbox.path_with_swarm();
    let output = sandbox
        .command("bash")
        .args(["--norc", "--noprofile", "-c", dry_run])
        .env("PATH", path)
        .env_remove("SWARM_HOME")
        .current_dir(crate::harness::repo())
        .output()
        .unwrap();
    let plan = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{dry_run}: {plan}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let claude_home = sandbox.root().join("user/.claude");
    assert!(
        plan.contains(&format!("SWARM_HOME={}", claude_home.display())),
        "{plan}"
    );
    assert!(plan.contains("--team-name claude"), "{plan}");
    assert!(
        plan.contains("CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1"),
        "{plan}"
    );
    assert!(!plan.contains("API_KEY"), "{plan}");
    assert!(
        !claude_home.exists(),
        "a dry run wrote {}",
        claude_home.display()
    );
}
