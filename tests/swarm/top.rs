//! `swarm top` in a real terminal: a pane of a private tmux server at a fixed size, driven with
//! `send-keys` and read with `capture-pane`, as a person would use it. Nothing here measures time:
//! each step waits, with `PATIENCE`, for what the screen or the files show.

use crate::harness::{Sandbox, Team, TmuxServer, bin, down, eventually, state};

/// Opens `swarm top TEAM` in a session of its own of `width`×`height`, outside tmux as far as
/// it can tell; when it ends, the shell says so and stays, for the test to see the screen it left.
pub(crate) fn open_top(server: &TmuxServer, session: &str, team: &str, width: u16, height: u16) {
    let command = format!(
        "env -u TMUX -u TMUX_PANE {} top {team}; echo top-ended-$?; exec sleep 1000",
        bin()
    );
    server.run(&[
        "new-session",
        "-d",
        "-s",
        session,
        "-x",
        &width.to_string(),
        "-y",
        &height.to_string(),
        "sh",
        "-c",
        &command,
    ]);
}

pub(crate) fn screen(server: &TmuxServer, session: &str) -> String {
    server.run(&["capture-pane", "-p", "-t", session])
}

pub(crate) fn shows(server: &TmuxServer, session: &str, what: &str, needle: &str) {
    let mut last = String::new();
    let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        eventually(what, || {
            last = screen(server, session);
            last.contains(needle)
        });
    }));
    assert!(
        found.is_ok(),
        "{what}: {needle:?} never showed; the screen:\n{last}"
    );
}

pub(crate) fn keys(server: &TmuxServer, session: &str, keys: &[&str]) {
    for key in keys {
        server.run(&["send-keys", "-t", session, key]);
    }
}

pub(crate) fn typed(server: &TmuxServer, session: &str, text: &str) {
    server.run(&["send-keys", "-t", session, "-l", text]);
}

/// Whether member `name`'s inbox or history holds `needle`.
pub(crate) fn received(sandbox: &Sandbox, team: &str, name: &str, needle: &str) -> bool {
    let dir = sandbox.team_dir(team);
    [
        dir.join("inboxes").join(format!("{name}.json")),
        dir.join("history").join(format!("{name}.jsonl")),
    ]
    .iter()
    .any(|path| std::fs::read_to_string(path).is_ok_and(|text| text.contains(needle)))
}

#[test]
fn a_person_watches_and_acts_from_top_at_120_by_40() {
    let sandbox = Sandbox::new();
    let team = Team::up(
        &sandbox,
        r#"
name = "t"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "alice"
command = ["sh"]
[[member]]
name = "bob"
command = ["sleep", "1000"]
"#,
    );
    let server = team.server();
    open_top(server, "top", "t", 120, 40);

    // Rows appear, each with its state.
    shows(server, "top", "the members' rows", "alice");
    shows(server, "top", "bob's row", "bob");
    shows(server, "top", "a running member", "running");

    // A message sent from outside appears in the feed.
    sandbox
        .swarm()
        .args(["send", "--team", "t", "bob", "hello from the test"])
        .run()
        .success();
    shows(
        server,
        "top",
        "the message in the feed",
        "hello from the test",
    );

    // `s` on the selected member (alice: the second row) sends it a message.
    keys(server, "top", &["j", "s"]);
    shows(server, "top", "the editor", "to alice:");
    typed(server, "top", "typed in top");
    keys(server, "top", &["Enter"]);
    eventually("alice to receive the message typed in top", || {
        received(&sandbox, "t", "alice", "typed in top")
    });

    // alice asks, from its own pane, to approve a plan; `a` approves it.
    let plan = sandbox.write("plan.md", "Parse first, then print");
    sandbox
        .swarm()
        .args(["type", "--team", "t", "alice"])
        .arg(format!("{} plan submit {}", bin(), plan.display()))
        .run()
        .success();
    shows(server, "top", "the pending plan", "waiting for a decision");
    keys(server, "top", &["a"]);
    eventually("alice to receive plan_approval_response", || {
        received(&sandbox, "t", "alice", "plan_approval_response")
    });
    shows(
        server,
        "top",
        "the approval in the feed",
        "approved alice's plan",
    );

    // Who needs you is sorted first: `j` means the row below as the person sees it, so wait
    // until alice, answered, is back in her place.
    eventually("alice to need nobody any more", || {
        !screen(server, "top").contains("needs you")
    });
    // `x` stops the selected member, once confirmed.
    keys(server, "top", &["j", "x"]);
    shows(server, "top", "the confirmation", "stop bob?");
    keys(server, "top", &["y"]);
    eventually("bob to be stopped", || {
        state(&sandbox, "t", "bob") == "killed"
    });
    shows(server, "top", "bob shown as killed", "killed");

    // `q` gives the terminal back: the main screen, and the shell after top.
    keys(server, "top", &["q"]);
    shows(server, "top", "the shell after top", "top-ended-0");
    assert_eq!(
        server
            .run(&["display-message", "-p", "-t", "top", "#{alternate_on}"])
            .trim(),
        "0",
        "top left the alternate screen on"
    );
}

#[test]
fn top_at_80_by_24_keeps_going_through_a_corrupt_inbox_and_the_team_ending() {
    let sandbox = Sandbox::new();
    let team = Team::up(
        &sandbox,
        r#"
name = "small"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "carol"
command = ["sleep", "1000"]
"#,
    );
    let server = team.server();
    open_top(server, "top", "small", 80, 24);
    shows(server, "top", "carol's row", "carol");

    // A state change shows.
    sandbox
        .swarm()
        .args(["stop", "--team", "small", "carol"])
        .run()
        .success();
    shows(server, "top", "carol shown as killed", "killed");

    // A corrupt inbox is a warning row; the dashboard keeps running.
    std::fs::write(sandbox.inbox_path("small", "carol"), "{ not json").unwrap();
    shows(server, "top", "the warning row", "corrupt inbox");
    sandbox
        .swarm()
        // carol has ended, and a message to it is refused: the lead has a live inbox.
        .args(["send", "--team", "small", "team-lead", "fine again"])
        .run()
        .success();
    shows(server, "top", "a message after it", "fine again");

    // The team ends while top runs: shown as ended, not as an error.
    sandbox
        .swarm()
        .args(["down", "small", "--force"])
        .run()
        .success();
    shows(server, "top", "the team shown as ended", "ended");
    keys(server, "top", &["q"]);
    shows(server, "top", "top quitting cleanly", "top-ended-0");
}

#[test]
fn without_a_terminal_top_refuses_and_points_at_json() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["alice"]);
    sandbox.swarm().args(["top", "t"]).run().refused_exactly(
        2,
        "swarm: swarm top needs a terminal: stdin or stdout is not one\n\
             hint: use `swarm status --json` for a snapshot, or `swarm watch --all --json` to \
             follow messages\n",
    );
}

#[test]
fn up_opens_top_in_the_teams_window_with_dashboard_true_and_down_closes_it() {
    let sandbox = Sandbox::new();
    let team = Team::up(
        &sandbox,
        r#"
name = "d"
dashboard = true
[lead]
command = ["sleep", "1000"]
[[member]]
name = "alice"
command = ["sleep", "1000"]
"#,
    );
    let server = team.server();
    let config = sandbox.config("d");
    let pane = config["tmux"]["dashboardPane"]
        .as_str()
        .expect("up records the dashboard's pane")
        .to_owned();
    assert_eq!(
        server.pane_format(&pane, "#{window_id}"),
        config["tmux"]["window"].as_str().unwrap(),
        "the dashboard is in the team's window"
    );
    shows(server, &pane, "alice's row in the dashboard", "alice");
    shows(
        server,
        &pane,
        "the lead's row in the dashboard",
        "team-lead",
    );

    down(&sandbox, "d");
    assert!(
        !server.panes().contains(&pane),
        "down left the dashboard's pane"
    );
}

#[test]
fn ctrl_c_gives_the_terminal_back_to_the_shell() {
    let sandbox = Sandbox::new();
    let team = Team::up(
        &sandbox,
        r#"
name = "c"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "alice"
command = ["sleep", "1000"]
"#,
    );
    let server = team.server();
    // An interactive shell, with a prompt of its own, from which top is run as a person would.
    server.run(&[
        "new-session",
        "-d",
        "-s",
        "shell",
        "-x",
        "120",
        "-y",
        "40",
        "env",
        "-u",
        "TMUX",
        "-u",
        "TMUX_PANE",
        "PS1=shell-prompt$ ",
        "sh",
        "-i",
    ]);
    shows(server, "shell", "the shell's prompt", "shell-prompt$");
    typed(
        server,
        "shell",
        &format!("{} top c; echo top-ended-$?", bin()),
    );
    keys(server, "shell", &["Enter"]);
    shows(server, "shell", "alice's row", "alice");
    assert_eq!(
        server.pane_format("shell", "#{alternate_on}"),
        "1",
        "top draws on the alternate screen"
    );

    keys(server, "shell", &["C-c"]);
    shows(server, "shell", "the shell after top", "top-ended-0");
    assert_eq!(
        server.pane_format("shell", "#{alternate_on}"),
        "0",
        "Ctrl-C left the alternate screen on"
    );
    // The terminal is in its cooked mode again: what is typed is echoed, and a line runs.
    typed(server, "shell", "echo cooked-$((40 + 2))");
    keys(server, "shell", &["Enter"]);
    shows(
        server,
        "shell",
        "the typed line echoed",
        "echo cooked-$((40 + 2))",
    );
    shows(server, "shell", "the line run", "cooked-42");
    let screen = screen(server, "shell");
    assert!(
        screen.trim_end().ends_with("shell-prompt$"),
        "the prompt is not back last:\n{screen}"
    );
}

#[test]
fn enter_inside_tmux_takes_the_client_to_the_members_pane() {
    let sandbox = Sandbox::new();
    let team = Team::up(
        &sandbox,
        r#"
name = "g"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "alice"
command = ["sleep", "1000"]
"#,
    );
    let server = team.server();
    // top in a pane of the team's own server: inside tmux, as far as it can tell.
    server.run(&[
        "new-session",
        "-d",
        "-s",
        "top",
        "-x",
        "120",
        "-y",
        "40",
        &format!("{} top g; exec sleep 1000", bin()),
    ]);
    // A client looking at it, as a person's terminal would be: attached from a pane of another
    // private server.
    let outer = TmuxServer::unstarted_at(&sandbox, "outer.sock");
    outer.run(&[
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-x",
        "120",
        "-y",
        "40",
        "env",
        "-u",
        "TMUX",
        "-u",
        "TMUX_PANE",
        "tmux",
        "-S",
        server.socket().to_str().unwrap(),
        "attach",
        "-t",
        "top",
    ]);
    let clients = || server.run(&["list-clients", "-F", "#{client_session}"]);
    eventually("a client on top's session", || clients().trim() == "top");
    shows(server, "top", "alice's row", "alice");

    let alice = sandbox.member("g", "alice")["tmuxPaneId"]
        .as_str()
        .unwrap()
        .to_owned();
    keys(server, "top", &["j", "Enter"]);
    eventually("the client to go to the team's session", || {
        clients().trim() == "swarm-g"
    });
    assert_eq!(
        server.pane_format("swarm-g", "#{pane_id}"),
        alice,
        "Enter did not select alice's pane"
    );
}

/// Opened after its members have spoken and the lead has read it all, top shows everything they
/// said, and when each last sent and received; its header says what each member is in words and
/// fits 120 columns, dropping the rate and then the task counts rather than the members' states;
/// the `?` help is whole.
#[test]
fn top_opened_late_shows_what_was_said_and_a_header_that_fits() {
    let sandbox = Sandbox::new();
    let says = format!("{} send team-lead 'said before top'", bin());
    let team = Team::up(
        &sandbox,
        &format!(
            r#"
name = "h"
[[member]]
name = "talker"
command = ["sh", "-c", "{says}"]
[[member]]
name = "sleeper"
command = ["sleep", "1000"]
[[member]]
name = "failing"
command = ["sh", "-c", "exit 3"]
[[member]]
name = "stopped"
command = ["sleep", "1000"]
"#,
        ),
    );
    let server = team.server();
    for (name, ended) in [("talker", "exited"), ("failing", "failed")] {
        eventually(&format!("{name} to end"), || {
            state(&sandbox, "h", name) == ended
        });
    }
    sandbox.swarm().args(["stop", "stopped"]).run().success();
    for subject in ["one", "two", "three"] {
        sandbox
            .swarm()
            .args(["task", "add", subject])
            .run()
            .success();
    }
    sandbox
        .swarm()
        .args(["task", "start", "2"])
        .as_("sleeper")
        .run()
        .success();
    sandbox
        .swarm()
        .args(["task", "start", "3"])
        .as_("sleeper")
        .run()
        .success();
    sandbox
        .swarm()
        .args(["task", "done", "3"])
        .as_("sleeper")
        .run()
        .success();
    // The script that leads the team reads everything: nothing is left unread.
    sandbox
        .swarm()
        .args(["recv"])
        .run()
        .success()
        .stdout_has("said before top");

    // sleeper prints nothing and shows no prompt: working, once its start is over.
    eventually("sleeper to be working", || {
        sandbox.status_row("h", "sleeper")["activity"] == "working"
    });
    open_top(server, "top", "h", 120, 40);
    shows(
        server,
        "top",
        "what talker said, read before",
        "said before top",
    );
    let screen = screen(server, "top");
    let header = screen.lines().next().unwrap_or_default();
    assert!(
        header
            .trim_end()
            .ends_with("1 working, 1 not started, 1 exited, 1 failed, 1 killed"),
        "the header is cut or says `-`:\n{screen}"
    );
    let talker = screen
        .lines()
        .find(|line| line.contains(" talker "))
        .unwrap_or_default();
    assert!(
        !talker.contains("-/-"),
        "talker's last message out is not shown:\n{screen}"
    );

    keys(server, "top", &["?"]);
    shows(
        server,
        "top",
        "the help's last line, whole",
        "each action runs as its `swarm` command would, with your permissions",
    );
    keys(server, "top", &["Escape", "q"]);
    shows(server, "top", "top quitting", "top-ended-0");
}
