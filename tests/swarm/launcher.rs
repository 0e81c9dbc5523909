//! up, spawn, status, down and the supervisor, on a private tmux server per test.

use std::fs;

use serde_json::Value;

use crate::harness::{
    Sandbox, Team, TmuxServer, eventually, gated_tmux, processes_in, repo, state, up_on,
};

/// Counts read right: "1 pane", "1 member", "2 members", wherever swarm prints one.
#[test]
fn counts_of_one_are_singular() {
    let sandbox = Sandbox::new();
    let solo = Team::written(
        &sandbox,
        r#"
name = "solo"
[lead]
command = ["sleep", "1000"]
"#,
    );
    sandbox
        .swarm()
        .arg("init")
        .arg(solo.file())
        .run()
        .success()
        .stdout_has("created team solo with 1 member (team-lead)");
    sandbox
        .swarm()
        .args(["status", "solo"])
        .run()
        .success()
        .stdout_has("team solo · 1 member\n");
    solo.up_command()
        .run()
        .success()
        .stdout_has("team solo is up: 1 pane in window");
    eventually("the lead to run", || {
        state(&sandbox, "solo", "team-lead") == "running"
    });
    sandbox
        .swarm()
        .args(["status", "solo"])
        .run()
        .success()
        .stdout_has("team solo · 1 member · 1 launched\n");

    sandbox.team("pair", &["bob"]);
    sandbox
        .swarm()
        .args(["status", "pair"])
        .run()
        .success()
        .stdout_has("team pair · 2 members\n");
}

#[test]
fn up_starts_one_pane_per_member_and_records_panes_and_pids() {
    let sandbox = Sandbox::new();
    let (team, up) = Team::try_up(
        &sandbox,
        r#"
name = "three"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "a"
command = ["sleep", "1000"]
[[member]]
name = "b"
command = ["sleep", "1000"]
[[member]]
name = "c"
command = ["sleep", "1000"]
"#,
    );
    let server = team.server();
    up.success()
        .stdout_has("team three is up: 4 panes")
        .stdout_has(&format!(
            "attach with: tmux -S {} attach -t swarm-three",
            server.socket().display()
        ));
    for name in ["team-lead", "a", "b", "c"] {
        eventually(&format!("{name} to run"), || {
            state(&sandbox, "three", name) == "running"
        });
    }
    let config = sandbox.config("three");
    assert_eq!(config["tmux"]["session"], "swarm-three");
    let panes = server.panes();
    for member in config["members"].as_array().unwrap() {
        let pane = member["tmuxPaneId"].as_str().unwrap();
        assert!(
            panes.contains(&pane.to_owned()),
            "{pane} is not a live pane"
        );
        // The pane's process is the supervisor; the recorded pid is its child, the member's program.
        let pane_pid: i64 = server.pane_format(pane, "#{pane_pid}").parse().unwrap();
        assert_eq!(member["supervisorPid"].as_i64(), Some(pane_pid));
        let pid = member["pid"].as_i64().unwrap();
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let fields: Vec<&str> = stat
            .rsplit(')')
            .next()
            .unwrap()
            .split_whitespace()
            .collect();
        assert_eq!(
            fields[1].parse::<i64>().unwrap(),
            pane_pid,
            "the program's parent is the supervisor"
        );
        assert_eq!(
            fields[2].parse::<i64>().unwrap(),
            pid,
            "the program leads its own process group"
        );
        assert_eq!(
            server.pane_format(pane, "#{pane_title}"),
            member["name"].as_str().unwrap()
        );
    }
    let a_pane = sandbox.member("three", "a")["tmuxPaneId"]
        .as_str()
        .unwrap()
        .to_owned();
    let b_pane = sandbox.member("three", "b")["tmuxPaneId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(server.pane_format(&a_pane, "#{@swarm-color}"), "red");
    assert_eq!(server.pane_format(&b_pane, "#{@swarm-color}"), "blue");
    let border = server.run(&["show-options", "-wv", "-t", &a_pane, "pane-border-format"]);
    assert!(border.contains("#{@swarm-color}"), "{border}");
    assert_eq!(
        server
            .run(&["show-options", "-gwv", "pane-border-status"])
            .trim(),
        "off",
        "no global option changed"
    );
    assert!(
        !server.run(&["show-options", "-gw"]).contains("swarm"),
        "no global option changed"
    );

    let status = sandbox
        .swarm()
        .args(["status", "three", "--json"])
        .run()
        .success()
        .json();
    for member in status["members"].as_array().unwrap() {
        assert_eq!(member["state"], "running");
        assert!(member["pid"].as_i64().is_some());
    }
    team.up_command().run().refused(2, "already running");
    sandbox
        .swarm()
        .args(["down", "three", "--timeout", "1"])
        .run()
        .success();
}

/// Puts a `tmux` first on PATH that refuses to place a pane for member `name` (any command with
/// `name` as an argument, as the pane's `swarm run NAME` is), as a full window would; other calls
/// go straight to the real tmux.
fn refusing_tmux(sandbox: &mut Sandbox, name: &str) {
    sandbox.tmux_shim(
        &format!(
            "for arg in \"$@\"; do\n  if [ \"$arg\" = {name} ]; then echo 'no space for new pane' >&2; exit 1; fi\ndone\n"
        ),
    );
}

/// An `up` that cannot place one of its panes stops the members it already placed: exit 1 leaves
/// no pane and no program of the team running.
#[test]
fn an_up_that_fails_part_way_stops_what_it_started() {
    let mut sandbox = Sandbox::new();
    refusing_tmux(&mut sandbox, "doomed");
    let team = Team::written(
        &sandbox,
        r#"
name = "p"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "a"
command = ["sleep", "1000"]
[[member]]
name = "doomed"
command = ["sleep", "1000"]
"#,
    );
    let server = team.server();
    let fixture = server.panes();
    team.up_command()
        .run()
        .code(1)
        .stderr_has("no space for new pane")
        .stderr_has("stopped team-lead, a, already placed");
    assert_eq!(server.panes(), fixture, "the team's panes survived");
    for name in ["team-lead", "a"] {
        assert_eq!(state(&sandbox, "p", name), "killed", "{name}");
        assert_eq!(sandbox.member("p", name)["reason"], "launch failed");
    }
    let supervisors: Vec<i64> = ["team-lead", "a"]
        .iter()
        .filter_map(|name| sandbox.member("p", name)["supervisorPid"].as_i64())
        .collect();
    let groups: Vec<i64> = ["team-lead", "a"]
        .iter()
        .filter_map(|name| sandbox.member("p", name)["pid"].as_i64())
        .collect();
    eventually("every process of the team to be gone", || {
        processes_in(&supervisors, &groups).is_empty()
    });
}

#[test]
fn a_second_up_of_a_team_being_started_is_refused() {
    let mut sandbox = Sandbox::new();
    gated_tmux(&mut sandbox, "new-session");
    let first_server = TmuxServer::unstarted_at(&sandbox, "first.sock");
    let second_server = TmuxServer::unstarted_at(&sandbox, "second.sock");
    let file = sandbox.write(
        "twice.toml",
        r#"
name = "twice"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "a"
command = ["sleep", "1000"]
"#,
    );
    // The first `up` has written the team and is about to place its first pane.
    let gate = sandbox.root().join("gate");
    let first = sandbox
        .swarm()
        .arg("up")
        .arg(&file)
        .arg("--socket")
        .arg(first_server.socket())
        .env("TMUX_GATE", &gate)
        .spawn();
    let reached = sandbox.root().join("gate.reached");
    eventually("the first up to reach tmux", || reached.exists());
    let second = sandbox
        .swarm()
        .arg("up")
        .arg(&file)
        .arg("--socket")
        .arg(second_server.socket())
        .run();
    fs::write(&gate, "").unwrap();
    let (status, stderr) = first.finish();
    assert!(status.success(), "the first up failed: {stderr}");
    second.refused(
        2,
        "team twice is already being started by another `swarm up`",
    );
    assert!(
        !second_server.is_running(),
        "the refused up started a server"
    );
    let config = sandbox.config("twice");
    assert_eq!(
        config["tmux"]["socket"].as_str().unwrap(),
        first_server.socket().to_str().unwrap()
    );
    for name in ["team-lead", "a"] {
        eventually(&format!("{name} to run"), || {
            state(&sandbox, "twice", name) == "running"
        });
    }
    let supervisors: Vec<i64> = sandbox.config("twice")["members"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["supervisorPid"].as_i64())
        .collect();
    sandbox
        .swarm()
        .args(["down", "twice", "--timeout", "1"])
        .run()
        .success();
    assert!(
        !first_server.is_running() || first_server.panes().is_empty(),
        "down left panes"
    );
    eventually("the supervisors to be gone", || {
        processes_in(&supervisors, &[]).is_empty()
    });
}

#[test]
fn a_layout_tmux_does_not_know_is_refused_and_the_server_survives() {
    let sandbox = Sandbox::new();
    // The team's server holds an unrelated session ("fixture"): tmux 3.3a took it down with
    // `select-layout grid`.
    let (grid, up) = Team::try_up(
        &sandbox,
        r#"
name = "grid"
layout = "grid"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "a"
command = ["sleep", "1000"]
"#,
    );
    up.refused(2, "layout \"grid\" is not a layout tmux knows");
    sandbox
        .swarm()
        .args(["up", "--dry-run"])
        .arg(grid.file())
        .run()
        .refused(2, "layout \"grid\"");
    assert!(
        grid.server()
            .run(&["list-sessions", "-F", "#{session_name}"])
            .contains("fixture"),
        "the unrelated session survives"
    );
    assert!(!sandbox.team_dir("grid").join("config.json").exists());

    // spawn re-applies the layout config.json records, so it is checked there too.
    let tiled = Team::up(
        &sandbox,
        r#"
name = "tiled"
[lead]
command = ["sleep", "1000"]
"#,
    );
    // The lead's supervisor records its start in config.json: edit it only after that.
    eventually("the lead to run", || {
        state(&sandbox, "tiled", "team-lead") == "running"
    });
    let config_path = sandbox.team_dir("tiled").join("config.json");
    let mut config = sandbox.config("tiled");
    config["launch"]["layout"] = "grid".into();
    fs::write(&config_path, serde_json::to_vec_pretty(&config).unwrap()).unwrap();
    sandbox
        .swarm()
        .args(["spawn", "b", "--", "sleep", "1000"])
        .team("tiled")
        .run()
        .refused(2, "layout \"grid\"");
    assert!(
        tiled
            .server()
            .run(&["list-sessions", "-F", "#{session_name}"])
            .contains("fixture"),
        "the unrelated session survives spawn"
    );
}

#[test]
fn a_custom_layout_string_is_applied_and_spawn_can_grow_past_it() {
    let sandbox = Sandbox::new();
    // A narrow pane on the left and two stacked on the right, as `#{window_layout}` prints it.
    let team = Team::up(
        &sandbox,
        r#"
name = "custom"
layout = "156a,240x70,0,0{60x70,0,0,0,179x70,61,0[179x20,61,0,1,179x49,61,21,2]}"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "a"
command = ["sleep", "1000"]
[[member]]
name = "b"
command = ["sleep", "1000"]
"#,
    );
    let server = team.server();
    let pane = |name: &str| {
        sandbox.member("custom", name)["tmuxPaneId"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(
        server.pane_format(&pane("team-lead"), "#{pane_width}"),
        "60"
    );
    assert_eq!(server.pane_format(&pane("a"), "#{pane_width}"), "179");
    assert_eq!(server.pane_format(&pane("b"), "#{pane_width}"), "179");
    // The layout describes three panes; a fourth is laid out tiled instead of refused by tmux.
    sandbox
        .swarm()
        .args(["spawn", "c", "--", "sleep", "1000"])
        .team("custom")
        .run()
        .success();
    assert!(server.panes().contains(&pane("c")));
}

#[test]
fn values_ending_with_a_semicolon_reach_the_member_whole() {
    let mut sandbox = Sandbox::new();
    // tmux reads an argument that ends with `;` as the end of a command.
    let home = sandbox.root().join("home;");
    fs::create_dir_all(&home).unwrap();
    sandbox.set_env("SWARM_HOME", &home);
    let cwd = sandbox.work().join("dir;");
    fs::create_dir_all(&cwd).unwrap();
    let out = sandbox.root().join("seen");
    let _team = Team::up(
        &sandbox,
        &format!(
            r#"
name = "semi"
cwd = "dir;"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "a"
command = ["sh", "-c", "{{ pwd; printf '%s\n' \"$1\" \"$2\" \"$SWARM_HOME\" \"$VALUE\"; }} > {out}.tmp && mv {out}.tmp {out}; exec sleep 1000", "sh", "one;", "two\\;"]
env = {{ VALUE = "three;" }}
"#,
            out = out.display()
        ),
    );
    eventually("a to record what it sees", || out.exists());
    let seen = fs::read_to_string(&out).unwrap();
    assert_eq!(
        seen,
        format!(
            "{}\none;\ntwo\\;\n{}\nthree;\n",
            cwd.display(),
            home.display()
        )
    );
}

/// The README's first command, run twice in a row: the board lives on between runs of a team,
/// and each run works through the tasks it made.
#[test]
fn the_demo_team_runs_to_completion_again_and_again() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::start(&sandbox);
    for run in 1..=2 {
        demo_run(&sandbox, &server, run);
    }
}

/// Run `run` of the demo team, checked from its transcript to its board and logs.
fn demo_run(sandbox: &Sandbox, server: &TmuxServer, run: u64) {
    let outcome = sandbox
        .swarm()
        .arg("up")
        .arg(repo().join("teams/demo.toml"))
        .args(["--wait", "--timeout", "120", "--socket"])
        .arg(server.socket())
        .run()
        .success();
    for line in [
        "alice completed (exit 0)",
        "bob completed (exit 0)",
        "team-lead completed (exit 0)",
    ] {
        assert!(outcome.stdout.contains(line), "{}", outcome.stdout);
    }
    // The transcript: every message the team exchanged, each once, a member's last message
    // before its ending.
    let position = |needle: &str| {
        let found: Vec<usize> = outcome
            .stdout
            .match_indices(needle)
            .map(|(at, _)| at)
            .collect();
        assert_eq!(
            found.len(),
            1,
            "{needle:?} should appear once:\n{}",
            outcome.stdout
        );
        found[0]
    };
    // The broadcast shows once, to everyone, not once per copy.
    position("team-lead → *  standup: say hello");
    assert!(
        !outcome.stdout.contains("team-lead → alice  standup"),
        "{}",
        outcome.stdout
    );
    position("alice → team-lead  hello from alice");
    let plan = position("alice → team-lead  plan_approval_request plan_approval-");
    let approval = position("team-lead → alice  plan_approval_response plan_approval-");
    assert!(plan < approval, "{}", outcome.stdout);
    position("bob → team-lead  result: the change looks good");
    let approved = position("alice → team-lead  shutdown_approved shutdown-");
    let ended = position("alice completed (exit 0)");
    assert!(approved < ended, "{}", outcome.stdout);
    // The board the lead made, claimed and finished by alice and bob, shown as the run ends.
    let board = position("the board is done:");
    assert!(ended < board, "{}", outcome.stdout);
    for row in [
        format!(
            "{}   completed  alice  -           Write a friendlier greeting",
            2 * run - 1
        ),
        format!(
            "{}   completed  bob    -           Review the greeting",
            2 * run
        ),
    ] {
        assert!(
            outcome.stdout.contains(&row),
            "run {run}: {}",
            outcome.stdout
        );
    }
    assert!(
        !outcome.stdout.contains("task_notification"),
        "endings are shown once, as ending lines:\n{}",
        outcome.stdout
    );
    let lead_log = fs::read_to_string(sandbox.team_dir("demo").join("logs/team-lead.log")).unwrap();
    for step in [
        "alice says hello",
        "bob says hello",
        "approving alice's plan",
        "alice reports",
        "bob reports",
        "alice approved shutdown-",
        "bob approved shutdown-",
        "all done",
    ] {
        assert!(
            lead_log.contains(step),
            "the lead's log lacks {step:?}:\n{lead_log}"
        );
    }
    let alice_log = fs::read_to_string(sandbox.team_dir("demo").join("logs/alice.log")).unwrap();
    assert!(
        alice_log.contains("permission mode: acceptEdits"),
        "{alice_log}"
    );
    let lead = sandbox.inbox("demo", "team-lead");
    assert_eq!(
        lead.len(),
        2,
        "the lead holds one completion notice per teammate"
    );
    // A supervisor records its ending before it exits, and its pane closes when it does.
    eventually("only the fixture's pane to be left", || {
        server.panes().len() == 1
    });
}

#[test]
fn up_wait_json_is_a_stream_of_one_line_events() {
    let sandbox = Sandbox::new();
    let team = Team::written(
        &sandbox,
        r#"
name = "pair"
[lead]
# Ends only once the worker's broadcast is in its inbox: a broadcast reaches no member that ended.
command = ["sh", "-c", "until swarm inbox --all | grep -q 'bye, all'; do sleep 0.1; done"]
[[member]]
name = "worker"
command = ["sh", "-c", "swarm send team-lead 'finished: 42'; swarm send '*' 'bye, all'; exit 3"]
"#,
    );
    let outcome = team
        .up_command()
        .args(["--wait", "--timeout", "120", "--json"])
        .run()
        .code(1);
    let events: Vec<Value> = outcome
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {line}")))
        .collect();
    assert_eq!(events[0]["event"], "up", "{}", outcome.stdout);
    assert_eq!(
        events[0]["members"],
        serde_json::json!(["team-lead", "worker"])
    );
    let message = events
        .iter()
        .find(|e| e["event"] == "message")
        .unwrap_or_else(|| panic!("no message event:\n{}", outcome.stdout));
    assert_eq!(message["from"], "worker");
    assert_eq!(message["to"], "team-lead");
    assert_eq!(message["text"], "finished: 42");
    assert_eq!(message["structured"], Value::Null);
    assert!(message["timestamp"].as_str().unwrap().ends_with('Z'));
    let broadcast: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "message" && e["text"] == "bye, all")
        .collect();
    assert_eq!(broadcast.len(), 1, "{}", outcome.stdout);
    assert_eq!(broadcast[0]["to"], "*");
    let ended: Vec<&Value> = events.iter().filter(|e| e["event"] == "ended").collect();
    assert_eq!(ended.len(), 2, "{}", outcome.stdout);
    let worker = ended.iter().find(|e| e["name"] == "worker").unwrap();
    assert_eq!(worker["agentId"], "worker@pair");
    assert_eq!(worker["state"], "failed");
    assert_eq!(worker["exitCode"], 3);
    assert_eq!(worker["reason"], Value::Null);
    assert!(
        worker["endedAt"].as_str().unwrap().ends_with('Z'),
        "{worker}"
    );
    assert!(worker["endedAtMs"].as_u64().is_some(), "{worker}");
    assert_eq!(worker["notice"]["status"], "failed");
    // The completion notice is the ending event, not a message too.
    assert!(
        !outcome.stdout.contains("\"task_notification\""),
        "{}",
        outcome.stdout
    );
}

const CLAUDE_TEAM: &str = r#"
name = "cc"
[lead]
command = ["claude", "--model", "opus", "--permission-mode", "acceptEdits", "--dangerously-skip-permissions", "--settings", "s.json"]
[[member]]
name = "researcher"
agent_type = "explorer"
[[member]]
name = "security"
agent_type = "reviewer"
model = "sonnet"
plan_mode_required = true
env = { CLAUDE_CODE_ENABLE_TODO_TOOLS = "0" }
"#;

fn dry_run(sandbox: &Sandbox) -> Value {
    let file = sandbox.write("cc.toml", CLAUDE_TEAM);
    // A server of the sandbox's own, not yet started: what the panes inherit is this process's.
    let plan = sandbox
        .swarm()
        .args(["up", "--dry-run", "--json"])
        .arg(&file)
        .arg("--socket")
        .arg(sandbox.root().join("dry-run.sock"))
        .env("HTTPS_PROXY", "http://proxy:3128")
        .env("ANTHROPIC_API_KEY", "sk-secret")
        .run()
        .success()
        .json();
    assert!(
        !sandbox.team_dir("cc").exists(),
        "--dry-run creates nothing"
    );
    plan
}

fn pane<'a>(plan: &'a Value, name: &str) -> &'a Value {
    plan["panes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap()
}

fn argv(pane: &Value) -> Vec<String> {
    pane["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn dry_run_shows_the_claude_profiles_exact_argv_and_environment() {
    let sandbox = Sandbox::new();
    let plan = dry_run(&sandbox);
    let lead = argv(pane(&plan, "team-lead"));
    assert_eq!(
        &lead[..9],
        [
            "claude",
            "--model",
            "opus",
            "--permission-mode",
            "acceptEdits",
            "--dangerously-skip-permissions",
            "--settings",
            "s.json",
            "--session-id"
        ]
    );
    let session = lead[9].clone();

    let researcher = argv(pane(&plan, "researcher"));
    // Each Claude Code teammate starts a session of its own, with an id swarm chose and records
    // (docs/ARCHITECTURE.md, "Resuming a team").
    let own_session = |argv: &[String]| {
        let at = argv.iter().position(|a| a == "--session-id").unwrap();
        let id = argv[at + 1].clone();
        assert!(id.len() == 36 && id != session, "{id}");
        id
    };
    let researcher_session = own_session(&researcher);
    assert_eq!(
        researcher,
        [
            "claude",
            "--model",
            "opus",
            "--permission-mode",
            "acceptEdits",
            "--settings",
            "s.json",
            "--dangerously-skip-permissions",
            "--agent-id",
            "researcher@cc",
            "--agent-name",
            "researcher",
            "--team-name",
            "cc",
            "--agent-color",
            "red",
            "--parent-session-id",
            &session,
            "--session-id",
            &researcher_session,
            "--agent-type",
            "explorer",
            // Each teammate's own, made at launch ("Signed lead messages").
            "--lead-verify-key",
            "<made-at-launch>",
        ]
    );
    let security = argv(pane(&plan, "security"));
    let security_session = own_session(&security);
    assert_ne!(security_session, researcher_session);
    assert_eq!(
        security,
        [
            "claude",
            "--settings",
            "s.json",
            "--model",
            "sonnet",
            "--agent-id",
            "security@cc",
            "--agent-name",
            "security",
            "--team-name",
            "cc",
            "--agent-color",
            "blue",
            "--parent-session-id",
            &session,
            "--session-id",
            &security_session,
            "--plan-mode-required",
            "--agent-type",
            "reviewer",
            "--lead-verify-key",
            "<made-at-launch>",
        ],
        "member model overrides the inherited one; plan mode drops every permission flag"
    );
    // Every claude member, the lead too, gets the Task tools; a member's own env overrides it.
    for (name, todo_tools) in [("team-lead", "1"), ("researcher", "1"), ("security", "0")] {
        let env = &pane(&plan, name)["env"];
        assert_eq!(env["CLAUDE_CODE_ENABLE_TODO_TOOLS"], todo_tools, "{name}");
        assert_eq!(env["CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS"], "1", "{name}");
    }
    for name in ["researcher", "security"] {
        let env = &pane(&plan, name)["env"];
        assert_eq!(env["CLAUDECODE"], "1");
        assert_eq!(env["CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS"], "1");
        assert_eq!(env["HTTPS_PROXY"], "http://proxy:3128");
        assert_eq!(env["SWARM_AGENT"], name);
        assert_eq!(env["SWARM_TEAM"], "cc");
        assert_eq!(env["SWARM_LEAD"], "team-lead");
        assert_eq!(env["SWARM_LEAD_VERIFY_KEY"], "<made-at-launch>");
        // The profile copies no key, but the pane passes on what the server has: shown masked.
        assert_eq!(env["ANTHROPIC_API_KEY"], "<masked>");
        assert!(!env.to_string().contains("sk-secret"));
    }
    let text = sandbox
        .swarm()
        .args(["up", "--dry-run"])
        .arg(sandbox.work().join("cc.toml"))
        .arg("--socket")
        .arg(sandbox.root().join("dry-run.sock"))
        .run()
        .success();
    assert!(text.stdout.contains("security:\n"), "{}", text.stdout);
    assert!(
        text.stdout
            .contains("  argv          claude --settings s.json --model sonnet"),
        "{}",
        text.stdout
    );
    // The lead verifies nothing: it has no key.
    assert!(!argv(pane(&plan, "team-lead")).contains(&"--lead-verify-key".to_owned()));
}

#[test]
fn a_real_pane_receives_exactly_the_dry_run_argv() {
    let mut sandbox = Sandbox::new();
    // A `claude` that records what it was started with, then waits.
    sandbox.shim(
        "claude",
        r#"#!/bin/sh
out="$FAKE_CLAUDE_DIR/$SWARM_AGENT"
printf '%s\n' "$@" > "$out.argv.tmp" && mv "$out.argv.tmp" "$out.argv"
env > "$out.env.tmp" && mv "$out.env.tmp" "$out.env"
exec sleep 1000
"#,
    );
    let record = sandbox.root().join("record");
    fs::create_dir_all(&record).unwrap();
    sandbox.set_env("FAKE_CLAUDE_DIR", &record);
    let plan = dry_run(&sandbox);
    let _team = Team::up(&sandbox, CLAUDE_TEAM);
    let config = sandbox.config("cc");
    let session = config["leadSessionId"].as_str().unwrap().to_owned();
    for name in ["team-lead", "researcher", "security"] {
        let file = record.join(format!("{name}.argv"));
        eventually(&format!("{name}'s fake claude to start"), || file.exists());
        let received: Vec<String> = fs::read_to_string(&file)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        let mut expected = argv(pane(&plan, name));
        // The dry run made its own session ids; the real launch uses the team's as the parent,
        // the member's own recorded in config.json, and the key made for this teammate at launch:
        // `<launch ms>.<base64url DER SPKI of an ed25519 key>`.
        let key = &sandbox.member("cc", name)["leadVerifyKey"];
        let own = sandbox.member("cc", name)["sessionId"]
            .as_str()
            .unwrap()
            .to_owned();
        let mut flag = String::new();
        for arg in &mut expected {
            if arg.len() == 36 && arg.matches('-').count() == 4 {
                if flag == "--session-id" {
                    arg.clone_from(&own);
                } else {
                    arg.clone_from(&session);
                }
            }
            flag.clone_from(arg);
            if arg == "<made-at-launch>" {
                let key = key.as_str().unwrap();
                let (ms, spki) = key.split_once('.').unwrap();
                assert!(ms.parse::<u64>().is_ok() && spki.starts_with("MCowBQYDK2VwAyEA"));
                *arg = key.to_owned();
            }
        }
        assert_eq!(name == "team-lead", key.is_null(), "{name}: {key}");
        assert_eq!(received[..], expected[1..], "{name}");
        assert_eq!(
            sandbox.member("cc", name)["argv"].as_array().unwrap().len(),
            expected.len()
        );
    }
    // The fake writes its environment after its argv: wait for the whole of it.
    let env_file = record.join("security.env");
    eventually("security's environment", || {
        fs::read_to_string(&env_file).is_ok_and(|env| env.contains("SWARM_TEAM=cc"))
    });
    let env = fs::read_to_string(&env_file).unwrap();
    let key = sandbox.member("cc", "security")["leadVerifyKey"].clone();
    assert!(
        env.contains("CLAUDECODE=1")
            && env.contains("SWARM_AGENT_ID=security@cc")
            && env.contains(&format!("SWARM_LEAD_VERIFY_KEY={}", key.as_str().unwrap()))
            && env
                .lines()
                .any(|line| line == "CLAUDE_CODE_ENABLE_TODO_TOOLS=0"),
        "{env}"
    );
    let env_file = record.join("researcher.env");
    eventually("researcher's environment", || {
        fs::read_to_string(&env_file).is_ok_and(|env| env.contains("SWARM_TEAM=cc"))
    });
    let env = fs::read_to_string(&env_file).unwrap();
    assert!(
        env.lines()
            .any(|line| line == "CLAUDE_CODE_ENABLE_TODO_TOOLS=1"),
        "{env}"
    );
    // `info` names it among the variables swarm set.
    sandbox
        .swarm()
        .args(["info", "researcher", "--team", "cc"])
        .run()
        .success()
        .stdout_has("CLAUDE_CODE_ENABLE_TODO_TOOLS");
}

#[test]
fn the_lead_and_the_person_spawn_teammates_do_not_and_names_are_unique() {
    let sandbox = Sandbox::new();
    let team = Team::up(
        &sandbox,
        r#"
name = "s"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "a"
command = ["sleep", "1000"]
"#,
    );
    sandbox
        .swarm()
        .args(["spawn", "b", "--", "sleep", "1000"])
        .team("s")
        .as_("a")
        .run()
        .refused(
            2,
            "only the lead or the person at the keyboard may spawn a teammate; a is a teammate",
        );
    // The person at the keyboard has the lead's authority.
    sandbox
        .swarm()
        .args(["spawn", "c", "--", "sleep", "1000"])
        .team("s")
        .run()
        .success();
    eventually("c to run", || state(&sandbox, "s", "c") == "running");
    let spawned = sandbox
        .swarm()
        .args(["spawn", "b", "--prompt", "hi b", "--", "sleep", "1000"])
        .team("s")
        .as_("team-lead")
        .run()
        .success();
    let pane = spawned.stdout.trim().rsplit(' ').next().unwrap().to_owned();
    assert!(team.server().panes().contains(&pane), "{pane}");
    eventually("b to run", || state(&sandbox, "s", "b") == "running");
    assert_eq!(sandbox.member("s", "b")["color"], "green");
    assert_eq!(sandbox.inbox("s", "b")[0]["text"], "hi b");
    sandbox
        .swarm()
        .args(["spawn", "b", "--", "true"])
        .team("s")
        .as_("team-lead")
        .run()
        .refused(2, "already a member");
}

/// A spawn whose pane cannot be placed exits 1 having changed nothing: the same spawn can be run
/// again, and fails for the same reason, not because the member exists.
#[test]
fn a_spawn_that_cannot_place_its_pane_takes_the_member_back_out() {
    let mut sandbox = Sandbox::new();
    sandbox.team("t", &["a"]);
    refusing_tmux(&mut sandbox, "x");
    // The team's window (on a server of the test's own) has no room for x, nor has a new one.
    let _server = TmuxServer::unstarted_at(&sandbox, "gone.sock");
    let config_path = sandbox.team_dir("t").join("config.json");
    let mut config = sandbox.config("t");
    config["tmux"] = serde_json::json!({
        "socket": sandbox.root().join("gone.sock"),
        "session": "swarm-t",
        "window": "@1",
    });
    fs::write(&config_path, serde_json::to_vec(&config).unwrap()).unwrap();
    let before = fs::read(&config_path).unwrap();
    for _ in 0..2 {
        sandbox
            .swarm()
            .args(["spawn", "x", "--prompt", "hello x", "--", "sleep", "1000"])
            .team("t")
            .run()
            .code(1)
            .stderr_has("no space for new pane")
            .stderr_has("x was not added");
        assert_eq!(
            serde_json::from_slice::<Value>(&fs::read(&config_path).unwrap()).unwrap(),
            serde_json::from_slice::<Value>(&before).unwrap(),
            "config.json changed"
        );
        assert!(
            !sandbox.inbox_path("t", "x").exists(),
            "x's inbox (with its prompt) was left behind"
        );
        assert!(
            !sandbox.team_dir("t").join("relaunch.json").exists(),
            "x's record for a resume was left behind"
        );
    }
}

#[test]
fn down_leaves_no_pane_and_no_process() {
    let sandbox = Sandbox::new();
    let polite = repo().join("scripts/demo/lib.sh");
    let team = Team::up(
        &sandbox,
        &format!(
            r#"
name = "d"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "polite"
command = ["bash", "-c", ". {lib}; await_shutdown"]
[[member]]
name = "stubborn"
command = ["bash", "-c", "trap '' TERM HUP; sleep 1000 & sleep 1000 & wait"]
[[member]]
name = "plain"
command = ["sh", "-c", "sleep 1000"]
"#,
            lib = polite.display()
        ),
    );
    for name in ["team-lead", "polite", "stubborn", "plain"] {
        eventually(&format!("{name} to run"), || {
            state(&sandbox, "d", name) == "running"
        });
    }
    let config = sandbox.config("d");
    let pids: Vec<i64> = config["members"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| {
            [
                m["pid"].as_i64().unwrap(),
                m["supervisorPid"].as_i64().unwrap(),
            ]
        })
        .collect();
    let groups: Vec<i64> = config["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["pid"].as_i64().unwrap())
        .collect();
    let team_panes: Vec<String> = config["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["tmuxPaneId"].as_str().unwrap().to_owned())
        .collect();
    assert!(!processes_in(&pids, &groups).is_empty());

    let down = sandbox
        .swarm()
        .args(["down", "d", "--timeout", "5"])
        .run()
        .success();
    assert!(
        down.stdout.contains("polite completed (exit 0)"),
        "{}",
        down.stdout
    );
    assert!(down.stdout.contains("team d is down"), "{}", down.stdout);
    eventually("every process of the team to be gone", || {
        processes_in(&pids, &groups).is_empty()
    });
    let panes = team.server().panes();
    for pane in &team_panes {
        assert!(!panes.contains(pane), "pane {pane} survived down");
    }
    assert_eq!(state(&sandbox, "d", "polite"), "exited");
    for name in ["stubborn", "plain", "team-lead"] {
        assert_eq!(state(&sandbox, "d", name), "killed", "{name}");
        assert_eq!(sandbox.member("d", name)["reason"], "shutdown");
    }
    assert!(
        sandbox.team_dir("d").join("history/polite.jsonl").exists(),
        "history stays"
    );
    assert!(
        sandbox.team_dir("d").join("logs/stubborn.log").exists(),
        "logs stay"
    );
}

#[test]
fn down_of_a_team_alone_on_its_server_succeeds_as_the_server_exits() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::unstarted(&sandbox);
    let file = sandbox.write(
        "alone.toml",
        r#"
name = "alone"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "a"
command = ["sleep", "1000"]
[[member]]
name = "early"
command = ["sh", "-c", "exit 3"]
[[member]]
name = "b"
command = ["sleep", "1000"]
"#,
    );
    // Killing the team's panes makes its server exit under `down`, which then meets a server
    // with no session left; the timing varies, so go round several times.
    for round in 0..8 {
        up_on(&sandbox, &server, &file).run().success();
        eventually("every member to run", || {
            ["team-lead", "a", "b"]
                .iter()
                .all(|name| state(&sandbox, "alone", name) == "running")
        });
        let outcome = sandbox
            .swarm()
            .args(["down", "alone", "--timeout", "0.5"])
            .run();
        assert!(
            outcome.status.success() && outcome.stdout.contains("team alone is down"),
            "round {round}: {}\n{}",
            outcome.stdout,
            outcome.stderr
        );
        for name in ["team-lead", "a", "b"] {
            assert_eq!(state(&sandbox, "alone", name), "killed", "round {round}");
        }
        eventually("the team's server to exit", || {
            !sandbox
                .command("tmux")
                .arg("-S")
                .arg(server.socket())
                .arg("list-sessions")
                .stderr(std::process::Stdio::null())
                .status()
                .unwrap()
                .success()
        });
    }
}

#[test]
fn a_pane_closed_from_tmux_ends_its_program_and_is_recorded_killed() {
    let sandbox = Sandbox::new();
    let team = Team::up(
        &sandbox,
        r#"
name = "k"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "a"
command = ["bash", "-c", "trap '' HUP; sleep 1000"]
"#,
    );
    eventually("a to run", || state(&sandbox, "k", "a") == "running");
    let member = sandbox.member("k", "a");
    let pid = member["pid"].as_i64().unwrap();
    team.server()
        .run(&["kill-pane", "-t", member["tmuxPaneId"].as_str().unwrap()]);
    eventually("a to be recorded killed", || {
        state(&sandbox, "k", "a") == "killed"
    });
    assert_eq!(sandbox.member("k", "a")["reason"], "hangup");
    eventually("a's processes to be gone", || {
        processes_in(&[pid], &[pid]).is_empty()
    });
    let notice = &sandbox.inbox("k", "team-lead")[0];
    let body: Value = serde_json::from_str(notice["text"].as_str().unwrap()).unwrap();
    assert_eq!(body["type"], "task_notification");
    assert_eq!(body["status"], "killed");
}

#[test]
fn status_shows_a_vanished_member_as_vanished() {
    let sandbox = Sandbox::new();
    let _team = Team::up(
        &sandbox,
        r#"
name = "v"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "a"
command = ["sleep", "1000"]
"#,
    );
    eventually("a to run", || state(&sandbox, "v", "a") == "running");
    let member = sandbox.member("v", "a");
    let supervisor = i32::try_from(member["supervisorPid"].as_i64().unwrap()).unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(supervisor),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    eventually("a to show as vanished", || {
        let status = sandbox
            .swarm()
            .args(["status", "v", "--json"])
            .run()
            .success()
            .json();
        let a = status["members"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == "a")
            .unwrap()
            .clone();
        a["state"] == "vanished" || a["state"] == "pane-gone"
    });
    let text = sandbox.swarm().args(["status", "v"]).run().success();
    let row = text
        .stdout
        .lines()
        .find(|l| l.starts_with("a "))
        .unwrap()
        .to_owned();
    assert!(!row.contains("running"), "{row}");
}

#[test]
fn the_person_at_the_keyboard_has_the_leads_authority_however_it_is_named() {
    let sandbox = Sandbox::new();
    let _team = Team::up(
        &sandbox,
        r#"
name = "p"
[[member]]
name = "a"
command = ["sleep", "1000"]
[[member]]
name = "b"
command = ["sleep", "1000"]
"#,
    );
    eventually("a and b to run", || {
        state(&sandbox, "p", "a") == "running" && state(&sandbox, "p", "b") == "running"
    });
    // `user` asks a teammate to shut down: the request goes out as the lead's.
    let id = sandbox
        .swarm()
        .args(["shutdown", "request", "a"])
        .team("p")
        .run()
        .success()
        .stdout_line();
    let inbox = sandbox.inbox("p", "a");
    assert_eq!(inbox[0]["from"], "team-lead");
    assert!(inbox[0]["text"].as_str().unwrap().contains(&id));
    // A member added with `swarm join` is a person too: it may stop members and take the
    // team down, which teammates may not.
    sandbox
        .swarm()
        .args(["join", "alice"])
        .team("p")
        .run()
        .success();
    sandbox
        .swarm()
        .args(["stop", "b"])
        .team("p")
        .as_("a")
        .run()
        .refused(
            2,
            "only the lead or the person at the keyboard may stop a member",
        );
    sandbox
        .swarm()
        .args(["stop", "b"])
        .team("p")
        .as_("alice")
        .run()
        .success();
    sandbox
        .swarm()
        .args(["down", "--timeout", "1"])
        .team("p")
        .as_("a")
        .run()
        .refused(2, "may take the team down; a is a teammate");
    sandbox
        .swarm()
        .args(["down", "--force"])
        .team("p")
        .as_("alice")
        .run()
        .success()
        .stdout_has("team p is down");
    // `user` names the person at the keyboard, never a member with a program.
    let clash = sandbox.write(
        "u.toml",
        r#"
name = "u"
[[member]]
name = "user"
command = ["true"]
"#,
    );
    sandbox
        .swarm()
        .arg("init")
        .arg(&clash)
        .run()
        .refused(2, "cannot be called user");
}

/// Stops a tmux server (SIGSTOP) for as long as it is held, and resumes it when dropped, before
/// the server's own guard kills it.
struct Stopped(nix::unistd::Pid);

impl Stopped {
    fn server(server: &TmuxServer) -> Self {
        let pid: i32 = server
            .run(&["display-message", "-p", "#{pid}"])
            .trim()
            .parse()
            .unwrap();
        let pid = nix::unistd::Pid::from_raw(pid);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGSTOP).unwrap();
        Self(pid)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(self.0, nix::sys::signal::Signal::SIGCONT);
    }
}

/// A tmux server that stops answering wedges nothing: the signing agent, which looks at the
/// team's panes while it holds its keys, still signs, so `send` to a member with a key works;
/// `status` shows the team and says tmux did not answer; a command that needs tmux fails with
/// one line naming the server.
#[test]
fn a_tmux_server_that_stops_answering_wedges_nothing() {
    let sandbox = Sandbox::new();
    let team = Team::up(
        &sandbox,
        r#"
name = "w"
[[member]]
name = "bob"
command = ["sleep", "1000"]
"#,
    );
    let server = team.server();
    eventually("bob to run", || state(&sandbox, "w", "bob") == "running");
    assert!(
        sandbox.member("w", "bob")["leadVerifyKey"].is_string(),
        "bob verifies the lead's messages, so a send to him is signed by the team's agent"
    );
    let stopped = Stopped::server(server);
    // The agent looks at the team's panes every few seconds: let it meet the stopped server.
    std::thread::sleep(std::time::Duration::from_secs(6));

    sandbox
        .swarm()
        .args(["send", "bob", "still there?"])
        .team("w")
        .run()
        .success();
    assert_eq!(
        sandbox.inbox("w", "bob").last().unwrap()["text"],
        "still there?"
    );

    let socket = server.socket().display().to_string();
    // Every member's supervisor is seen running: status needs no pane, so asks tmux nothing.
    sandbox
        .swarm()
        .args(["status", "w"])
        .env("SWARM_TMUX_TIMEOUT", "1")
        .run()
        .success()
        .stdout_has("bob");
    let refusal = sandbox
        .swarm()
        .args(["type", "bob", "hello"])
        .team("w")
        .env("SWARM_TMUX_TIMEOUT", "1")
        .run()
        .code(1)
        .refusal();
    assert!(
        refusal.starts_with("swarm: tmux ")
            && refusal.contains(&format!(
                "got no answer within 1s from the tmux server at {socket}: it is stopped or stuck"
            )),
        "{refusal}"
    );
    drop(stopped);
}

/// A command that met a tmux server that does not answer remembers it: its later looks at that
/// server fail at once with the same line, instead of each waiting out its own bound (`down`
/// looked six times). Counted as the tmux commands `down` started.
#[test]
fn a_server_that_did_not_answer_is_not_asked_again_by_the_same_command() {
    let mut sandbox = Sandbox::new();
    let calls = sandbox.root().join("tmux.calls");
    sandbox.tmux_shim("[ -n \"$TMUX_CALLS\" ] && echo \"$*\" >> \"$TMUX_CALLS\"\n");
    let team = Team::up(
        &sandbox,
        r#"
name = "w"
[[member]]
name = "bob"
command = ["sleep", "1000"]
[[member]]
name = "carol"
command = ["sleep", "1000"]
"#,
    );
    let server = team.server();
    eventually("bob and carol to run", || {
        state(&sandbox, "w", "bob") == "running" && state(&sandbox, "w", "carol") == "running"
    });
    let stopped = Stopped::server(server);
    let socket = server.socket().display().to_string();
    let outcome = sandbox
        .swarm()
        .args(["down", "w", "--force"])
        .env("SWARM_TMUX_TIMEOUT", "1")
        .env("TMUX_CALLS", &calls)
        .run();
    assert!(
        outcome.stderr.contains(&format!(
            "got no answer within 1s from the tmux server at {socket}: it is stopped or stuck"
        )),
        "{}",
        outcome.stderr
    );
    let asked: Vec<String> = fs::read_to_string(&calls)
        .unwrap_or_default()
        .lines()
        .filter(|line| line.contains(&socket))
        .map(str::to_owned)
        .collect();
    assert_eq!(asked.len(), 1, "asked the stopped server: {asked:#?}");
    drop(stopped);
}

/// tmux reads its own arguments (a directory, a name, an option), and a control character in
/// one is refused before tmux sees it: the one rule for what swarm writes into a unit, a tmux
/// command or a file format.
#[test]
fn a_control_character_never_reaches_a_tmux_command() {
    let sandbox = Sandbox::new();
    let odd = sandbox.work().join("line\nbreak");
    fs::create_dir_all(&odd).unwrap();
    let (team, up) = Team::try_up(
        &sandbox,
        &format!(
            r#"
name = "c"
cwd = {:?}
[[member]]
name = "bob"
command = ["sleep", "1000"]
"#,
            odd.display().to_string()
        ),
    );
    up.refused(2, "control character");
    assert_eq!(team.server().panes().len(), 1, "no pane was placed");
}

/// Without a UTF-8 locale (a systemd unit's, cron's) tmux prints the tab between the fields of
/// a `-F` format as `_`: `up` then failed with "tmux printed no pane id: \"%0_@0_…\"".
#[test]
fn a_team_starts_and_stops_without_a_utf8_locale() {
    let mut sandbox = Sandbox::new();
    sandbox.set_env("LANG", "C");
    sandbox.set_env("LC_ALL", "C");
    let team = Team::up(
        &sandbox,
        r#"
name = "t"
[[member]]
name = "bob"
command = ["sleep", "1000"]
"#,
    );
    eventually("bob to run", || {
        sandbox.status_row("t", "bob")["state"] == "running"
    });
    // Team's drop runs `down` and wants it to succeed, without the locale too.
    drop(team);
}
