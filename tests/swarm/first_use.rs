//! What a new user runs into in a first hour with swarm: commands that wait without a word, names
//! given in the forms swarm itself shows, and the team a command picks.

use std::fs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::harness::{LEAD, Sandbox, TmuxServer, bin, down, eventually, state, up, watches};
use crate::signatures::agent_socket;

/// Runs `swarm ARGS` in a new window of `server`, with the window's terminal on its stdin, and
/// returns its exit status and what it printed, once it has ended.
fn in_a_terminal(sandbox: &Sandbox, server: &TmuxServer, args: &str) -> (i32, String) {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let tag = sandbox
        .root()
        .join(format!("t{}", RUNS.fetch_add(1, Ordering::Relaxed)));
    let out = PathBuf::from(format!("{}.out", tag.display()));
    let status = PathBuf::from(format!("{}.status", tag.display()));
    let line = format!(
        "{} {args} >{out} 2>&1; echo $? >{status}.tmp; mv {status}.tmp {status}",
        bin(),
        out = out.display(),
        status = status.display()
    );
    server.run(&["new-window", "-d", "-t", "fixture", "sh", "-c", &line]);
    eventually(
        &format!("`swarm {args}` with a terminal on stdin to finish"),
        || status.exists(),
    );
    (
        fs::read_to_string(&status).unwrap().trim().parse().unwrap(),
        fs::read_to_string(&out).unwrap(),
    )
}

/// `send NAME` with no text reads the message from stdin: from a terminal it would wait for a
/// message the person does not know is asked for, so it is refused; an empty one is never sent.
#[test]
fn send_without_text_refuses_a_terminal_and_an_empty_message() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    let server = TmuxServer::start(&sandbox);
    let (code, said) = in_a_terminal(&sandbox, &server, "send --team t bob");
    assert_eq!(code, 2, "send with a terminal on stdin:\n{said}");
    assert!(
        said.starts_with("swarm: ") && said.contains("stdin is a terminal"),
        "{said}"
    );
    let (code, said) = in_a_terminal(&sandbox, &server, "type --team t bob");
    assert_eq!(code, 2, "type with a terminal on stdin:\n{said}");
    assert!(said.contains("stdin is a terminal"), "{said}");

    // Nothing on stdin (/dev/null, an empty pipe), or only blanks.
    for stdin in [None, Some(""), Some(" \n\n")] {
        let mut run = sandbox.swarm().args(["send", "bob"]).team("t");
        if let Some(text) = stdin {
            run = run.stdin(text);
        }
        run.run().refused(2, "empty");
    }
    sandbox
        .swarm()
        .args(["send", "bob", ""])
        .team("t")
        .run()
        .refused(2, "empty");
    assert!(
        !sandbox.inbox_path("t", "bob").exists() || sandbox.inbox("t", "bob").is_empty(),
        "an empty message was sent: {:?}",
        sandbox.inbox("t", "bob")
    );
}

/// With several teams and none named, a command that names a member acts on the one team that
/// has a member of that name, running or ended; `NAME@TEAM`, the form swarm shows, names both;
/// `log TEAM NAME` takes the team first as `status`, `top`, `down` and `attach` do.
#[test]
fn a_named_member_picks_its_team() {
    let sandbox = Sandbox::new();
    sandbox.team("alpha", &["p1", "bob"]);
    sandbox.team("beta", &["q1", "bob"]);
    sandbox
        .swarm()
        .args(["send", "p1", "to alpha"])
        .run()
        .success();
    sandbox
        .swarm()
        .args(["send", "q1@beta", "to beta"])
        .run()
        .success();
    // The team NAME@TEAM names wins over the one SWARM_TEAM names.
    sandbox
        .swarm()
        .args(["send", "bob@beta", "to beta's bob"])
        .team("alpha")
        .run()
        .success();
    assert_eq!(sandbox.inbox("alpha", "p1")[0]["text"], "to alpha");
    assert_eq!(sandbox.inbox("beta", "q1")[0]["text"], "to beta");
    assert_eq!(sandbox.inbox("beta", "bob")[0]["text"], "to beta's bob");
    assert!(
        !sandbox.inbox_path("alpha", "bob").exists() || sandbox.inbox("alpha", "bob").is_empty()
    );
    sandbox
        .swarm()
        .args(["info", "q1", "--json"])
        .run()
        .success()
        .stdout_has("\"name\": \"q1\"");
    let id = sandbox.inbox("alpha", "p1")[0]["msg_id"].clone();
    sandbox
        .swarm()
        .args(["inbox", "p1"])
        .run()
        .success()
        .stdout_is(&format!("{}  team-lead  to alpha\n", id.as_str().unwrap()));
    // A member both teams have is still a question, answered with the ways to name one.
    sandbox
        .swarm()
        .args(["send", "bob", "which?"])
        .run()
        .refused_exactly(
            2,
            "swarm: which team? bob is a member of several (teams: alpha, beta)\n\
             hint: name one as bob@TEAM, or pass --team or set SWARM_TEAM\n",
        );
    // Nothing ran, so nothing was captured: the member is found, in the right team.
    for args in [
        &["log", "alpha", "p1"][..],
        &["log", "p1@alpha"],
        &["log", "p1"],
    ] {
        sandbox
            .swarm()
            .args(args)
            .run()
            .refused(3, "no output captured for p1");
    }
    sandbox
        .swarm()
        .args(["log", "beta", "p1"])
        .run()
        .refused(3, "p1 is not a member of team beta");
}

/// `type p1` with two teams running types into the one that has a `p1`.
#[test]
fn type_reaches_the_one_running_team_with_that_member() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::unstarted(&sandbox);
    let member = |name: &str| format!("[[member]]\nname = \"{name}\"\ncommand = [\"cat\"]\n");
    up(
        &sandbox,
        &server,
        "one",
        &format!("name = \"one\"\n{LEAD}{}", member("p1")),
    );
    up(
        &sandbox,
        &server,
        "two",
        &format!("name = \"two\"\n{LEAD}{}", member("p2")),
    );
    sandbox
        .swarm()
        .args(["type", "p1", "typed into p1"])
        .run()
        .success();
    let pane = sandbox.member("one", "p1")["tmuxPaneId"]
        .as_str()
        .unwrap()
        .to_owned();
    eventually("p1's pane to show what was typed", || {
        server
            .run(&["capture-pane", "-p", "-t", &pane])
            .contains("typed into p1")
    });
    down(&sandbox, "one");
    down(&sandbox, "two");
}

/// A message to a member that has ended is refused saying so, with how and when it ended, not
/// with what its ending did to the signing of the lead's messages; a broadcast goes to the members
/// that have not ended.
#[test]
fn sending_to_a_member_that_ended_says_it_ended() {
    let (sandbox, _server) = running(
        "[[member]]\nname = \"quick\"\ncommand = [\"true\"]\n\
         [[member]]\nname = \"stays\"\ncommand = [\"sleep\", \"1000\"]\n",
    );
    eventually("quick to end", || state(&sandbox, "t", "quick") == "exited");
    let sent = sandbox
        .swarm()
        .args(["send", "*", "hello everyone", "--json"])
        .run()
        .success()
        .json();
    assert_eq!(
        sent["to"],
        serde_json::json!(["team-lead", "stays"]),
        "{sent}"
    );
    let refused = sandbox
        .swarm()
        .args(["send", "quick", "are you there?"])
        .run()
        .refused(3, "quick has ended: exited with status 0");
    assert!(refused.stderr.contains(" ago"), "{}", refused.stderr);
    // Once the signing agent is gone too, the member's ending is still what is said.
    fs::remove_file(agent_socket(&sandbox)).unwrap();
    sandbox
        .swarm()
        .args(["send", "quick", "are you there?"])
        .run()
        .refused(3, "quick has ended: exited with status 0");
    assert!(
        !sandbox.inbox_path("t", "quick").exists() || sandbox.inbox("t", "quick").is_empty(),
        "{:?}",
        sandbox.inbox("t", "quick")
    );
    down(&sandbox, "t");
}

/// Every write from the lead's side to a member that has ended (a shutdown request, a plan's
/// answer, a task assignment) is refused at the one place they are all written, as `send` is:
/// saying that the member ended, not what its ending did to the signing of the lead's messages.
/// Nothing is written, and the task is not given to it.
#[test]
fn every_lead_side_write_to_a_member_that_ended_says_it_ended() {
    let (sandbox, _server) = running(
        "[[member]]\nname = \"quick\"\n\
         command = [\"sh\", \"-c\", \"echo 'the plan' | swarm plan submit -\"]\n\
         [[member]]\nname = \"stays\"\ncommand = [\"sleep\", \"1000\"]\n",
    );
    eventually("quick to end", || state(&sandbox, "t", "quick") == "exited");
    let inbox = sandbox
        .swarm()
        .args(["inbox", "team-lead", "--json"])
        .run()
        .success()
        .json();
    let plan = inbox
        .as_array()
        .unwrap()
        .iter()
        .find_map(|m| m["structured"]["requestId"].as_str())
        .expect("quick's plan request")
        .to_owned();
    sandbox
        .swarm()
        .args(["task", "add", "ship it"])
        .run()
        .success();
    let ended = "quick has ended: exited with status 0";
    for args in [
        vec!["shutdown", "request", "quick"],
        vec!["plan", "approve", &plan],
        vec!["plan", "reject", &plan, "--feedback", "no"],
        vec!["task", "assign", "1", "quick"],
    ] {
        let refused = sandbox.swarm().args(&args).run().refused(3, ended);
        assert!(
            refused.stderr.contains("nothing was sent"),
            "{args:?}: {}",
            refused.stderr
        );
    }
    let task = sandbox
        .swarm()
        .args(["task", "show", "1", "--json"])
        .run()
        .success()
        .json();
    assert!(task["owner"].is_null(), "{task}");
    assert!(
        !sandbox.inbox_path("t", "quick").exists() || sandbox.inbox("t", "quick").is_empty(),
        "{:?}",
        sandbox.inbox("t", "quick")
    );
    // Once the signing agent is gone too, the member's ending is still what is said.
    fs::remove_file(agent_socket(&sandbox)).unwrap();
    sandbox
        .swarm()
        .args(["shutdown", "request", "quick"])
        .run()
        .refused(3, ended);
    down(&sandbox, "t");
}

/// `down` says once on stderr whom it waits for and how long, then reports each ending as it
/// comes.
#[test]
fn down_says_what_it_waits_for_and_how_long() {
    let (sandbox, _server) =
        running("[[member]]\nname = \"shell\"\ncommand = [\"sleep\", \"1000\"]\n");
    let down = sandbox.swarm().args(["down", "--timeout", "600"]).spawn();
    eventually("shell to be asked to shut down", || {
        asked(&sandbox, "shell")
    });
    sandbox.swarm().args(["stop", "shell"]).run().success();
    let ended = down.next_line();
    assert!(ended.starts_with("shell was killed"), "{ended}");
    let (status, stderr) = down.finish();
    assert!(status.success(), "{stderr}");
    assert_eq!(
        stderr.lines().collect::<Vec<_>>(),
        [
            "swarm: waiting up to 600s for shell to answer the shutdown request and exit; then \
             whoever is left is stopped, with 5s to exit after SIGTERM before SIGKILL (605s in \
             all)"
        ],
    );
}

/// Team `t` up on a private server: a lead that runs until taken down, and `members`, team-file
/// text. Bound as `(sandbox, server)`, the server goes first.
fn running(members: &str) -> (Sandbox, TmuxServer) {
    let sandbox = Sandbox::new();
    let server = TmuxServer::unstarted(&sandbox);
    up(
        &sandbox,
        &server,
        "t",
        &format!("name = \"t\"\n{LEAD}{members}"),
    );
    (sandbox, server)
}

/// Whether a shutdown request waits in `name`'s inbox.
fn asked(sandbox: &Sandbox, name: &str) -> bool {
    sandbox.inbox_path("t", name).exists()
        && sandbox.inbox("t", name).iter().any(|m| {
            m["text"]
                .as_str()
                .unwrap_or("")
                .contains("shutdown_request")
        })
}

/// A member whose protocol says it cannot answer a shutdown request (`protocol = "none"`: a
/// shell, a REPL) is neither asked nor waited for by `down`, but stopped at once.
#[test]
fn down_stops_members_that_cannot_answer_at_once() {
    let (sandbox, _server) = running(
        "[[member]]\nname = \"shell\"\ncommand = [\"sleep\", \"1000\"]\n\
         [[member]]\nname = \"repl\"\ncommand = [\"sleep\", \"1000\"]\nprotocol = \"none\"\n",
    );
    sandbox
        .swarm()
        .args(["shutdown", "request", "repl"])
        .run()
        .refused(2, "repl cannot answer a shutdown request");
    let down = sandbox.swarm().args(["down", "--timeout", "600"]).spawn();
    assert_eq!(down.next_line(), "repl stopped: killed");
    // While down waits for shell to answer, it has asked shell and nobody else.
    let shell = state(&sandbox, "t", "shell");
    assert!(["starting", "running"].contains(&shell.as_str()), "{shell}");
    eventually("shell to be asked to shut down", || {
        asked(&sandbox, "shell")
    });
    assert!(!asked(&sandbox, "repl"), "{:?}", sandbox.inbox("t", "repl"));
    sandbox.swarm().args(["stop", "shell"]).run().success();
    let ended = down.next_line();
    assert!(ended.starts_with("shell was killed"), "{ended}");
    let (status, stderr) = down.finish();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains("for shell to answer") && !stderr.contains("repl"),
        "{stderr}"
    );
}

/// A member whose supervisor is gone (`orphaned`) has nothing that answers a shutdown request
/// for it: `down` neither asks nor waits for it, but stops it at once, saying why.
#[test]
fn down_stops_an_orphaned_member_at_once() {
    // It ignores the hang-up its supervisor's end sends, so it runs on, orphaned.
    let (sandbox, _server) = running(
        "[[member]]\nname = \"orphan\"\ncommand = [\"sh\", \"-c\", \"trap '' HUP; sleep 1000; :\"]\n",
    );
    eventually("orphan to run", || {
        state(&sandbox, "t", "orphan") == "running"
    });
    let supervisor = sandbox.member("t", "orphan")["supervisorPid"]
        .as_i64()
        .unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(supervisor).unwrap()),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    eventually("orphan to be orphaned", || {
        sandbox.status_row("t", "orphan")["state"] == "orphaned"
    });
    let down = sandbox.swarm().args(["down", "--timeout", "600"]).spawn();
    assert_eq!(
        down.next_line(),
        "cannot ask orphan to shut down: its supervisor is gone, so nothing answers for it"
    );
    assert_eq!(down.next_line(), "orphan stopped: killed");
    assert!(
        !asked(&sandbox, "orphan"),
        "{:?}",
        sandbox.inbox("t", "orphan")
    );
    let (status, stderr) = down.finish();
    assert!(status.success(), "{stderr}");
    assert!(
        !stderr.contains("waiting"),
        "nobody is waited for: {stderr}"
    );
}

/// Ctrl-C while `up --wait` follows the team ends the waiting, not the team, which runs on in
/// tmux as after `up` without `--wait`: stderr says so and how to stop it, and the status is 130,
/// as a shell reports a command Ctrl-C ended.
#[test]
fn ctrl_c_during_up_wait_says_the_team_runs_on() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::unstarted(&sandbox);
    let file = sandbox.write(
        "t.toml",
        format!(
            "name = \"t\"\n{LEAD}[[member]]\nname = \"long\"\ncommand = [\"sleep\", \"1000\"]\n"
        ),
    );
    let up = sandbox
        .swarm()
        .arg("up")
        .arg(&file)
        .arg("--wait")
        .arg("--socket")
        .arg(server.socket())
        .spawn();
    assert!(up.next_line().starts_with("team t is up"));
    let pid = up.pid();
    eventually("up --wait to follow the team", || {
        watches(pid, &sandbox.team_dir("t"))
    });
    up.signal(nix::sys::signal::Signal::SIGINT);
    let (status, stderr) = up.finish();
    assert_eq!(status.code(), Some(130), "{status:?}\n{stderr}");
    assert_eq!(
        stderr.lines().collect::<Vec<_>>(),
        [
            "swarm: stopped waiting; team t runs on in tmux",
            "hint: `swarm down t` stops it; `swarm top t` or `swarm wait --all --team t` follows it"
        ]
    );
    // Still live: it may not have told its supervisor's start apart from its running yet.
    eventually("long to run on", || {
        state(&sandbox, "t", "long") == "running"
    });
    down(&sandbox, "t");
}

/// `up --dry-run` shows each member's settings as `info` shows them once the team is made: an
/// agent type or model the file leaves out is what config.json records for it.
#[test]
fn dry_run_and_info_agree_on_every_setting() {
    let sandbox = Sandbox::new();
    let file = sandbox.write(
        "t.toml",
        "name = \"t\"\n[[member]]\nname = \"plain\"\ncommand = [\"true\"]\n\
         [[member]]\nname = \"typed\"\ncommand = [\"true\"]\nagent_type = \"reviewer\"\nmodel = \"opus\"\n",
    );
    let planned = sandbox
        .swarm()
        .args(["up", "--dry-run", "--json"])
        .arg(&file)
        .run()
        .success()
        .json();
    sandbox.swarm().arg("init").arg(&file).run().success();
    for pane in planned["panes"].as_array().unwrap() {
        let name = pane["name"].as_str().unwrap();
        let info = sandbox
            .swarm()
            .args(["info", name, "--json"])
            .run()
            .success()
            .json();
        assert_eq!(pane["settings"], info["settings"], "{name}");
    }
}

/// A program that ignores SIGTERM is killed after the grace, whoever ends it: taken down by `down`
/// (protocol native, not answering) or by its supervisor once it approved the shutdown for it
/// (wrapper), it is recorded the same way, killed with 137, never `exited 137`.
#[test]
fn one_ending_is_recorded_the_same_way_whatever_the_protocol() {
    let stubborn = "command = [\"sh\", \"-c\", \"trap '' TERM; sleep 1000\"]";
    let (sandbox, _server) = running(&format!(
        "[[member]]\nname = \"native\"\n{stubborn}\n\
         [[member]]\nname = \"wrapped\"\n{stubborn}\nprotocol = \"wrapper\"\n"
    ));
    sandbox
        .swarm()
        .args(["down", "--timeout", "1"])
        .run()
        .success();
    for name in ["native", "wrapped"] {
        let member = sandbox.member("t", name);
        assert_eq!(
            (member["state"].as_str(), member["exitCode"].as_i64()),
            (Some("killed"), Some(137)),
            "{name}: {member}"
        );
    }
}

/// `peers` names the person's listener without a label as it is reached, `user` (`uds:user`),
/// not `-`.
#[test]
fn peers_names_the_persons_listener_user() {
    let sandbox = Sandbox::new();
    let (_listener, _socket) = crate::peers::listen(&sandbox, &[]);
    let shown = sandbox.swarm().arg("peers").run().success().stdout;
    let row: Vec<&str> = shown
        .lines()
        .nth(1)
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(row.get(1), Some(&"user"), "{shown}");
    let listed = sandbox
        .swarm()
        .args(["peers", "--json"])
        .run()
        .success()
        .json();
    assert_eq!(listed[0]["label"], "user", "{listed}");
}

/// `prune` says a limit the way it takes one: `7d`, `1h30m`, not `7days`.
#[test]
fn prune_says_a_limit_as_it_takes_one() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    for (given, said) in [
        ("7d", "7d"),
        ("90m", "1h30m"),
        ("1h 30m", "1h30m"),
        ("45s", "45s"),
    ] {
        sandbox
            .swarm()
            .args(["prune", "--older-than", given])
            .run()
            .success()
            .stdout_is(&format!(
                "nothing to prune (ended less than {said} ago: t)\n"
            ));
    }
}

/// A misspelt team, or a misspelt key in a team file, gets the hint a misspelt member or command
/// gets: the name it most looks like.
#[test]
fn a_misspelt_team_or_team_file_key_gets_a_did_you_mean() {
    let sandbox = Sandbox::new();
    sandbox.team("demo", &["bob"]);
    sandbox
        .swarm()
        .args(["--team", "demoo", "status"])
        .run()
        .refused_exactly(
            3,
            "swarm: no team named demoo; teams: demo\nhint: did you mean demo?\n",
        );
    sandbox
        .swarm()
        .args(["status", "dmeo"])
        .run()
        .refused_exactly(
            3,
            "swarm: no team named dmeo; teams: demo\nhint: did you mean demo?\n",
        );
    for (toml, key, meant) in [
        (
            "name = \"y\"\n[[member]]\nnmae = \"bob\"\ncommand = [\"true\"]\n",
            "nmae",
            "name",
        ),
        ("name = \"y\"\nlayot = \"tiled\"\n", "layot", "layout"),
        (
            "name = \"y\"\n[lead]\ncomand = [\"x\"]\n",
            "comand",
            "command",
        ),
    ] {
        let file = sandbox.write("y.toml", toml);
        sandbox
            .swarm()
            .arg("init")
            .arg(&file)
            .run()
            .refused(2, &format!("unknown field `{key}`"))
            .stderr_has(&format!("hint: did you mean `{meant}`?"));
    }
}

/// Every flag that takes a duration takes one syntax: seconds, or humantime's units.
#[test]
fn a_timeout_takes_seconds_or_units() {
    let sandbox = Sandbox::new();
    let file = sandbox.write(
        "t.toml",
        "name = \"t\"\n[[member]]\nname = \"bob\"\ncommand = [\"true\"]\n",
    );
    sandbox.swarm().arg("init").arg(&file).run().success();
    for timeout in ["0.2", "200ms"] {
        sandbox
            .swarm()
            .args([
                "recv",
                "--team",
                "t",
                "--as",
                "team-lead",
                "--wait",
                "--timeout",
                timeout,
            ])
            .run()
            .code(4);
    }
    sandbox
        .swarm()
        .args(["recv", "--team", "t", "--wait", "--timeout", "soon"])
        .run()
        .code(2)
        .stderr_has("\"soon\" is not a duration");
}
