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
