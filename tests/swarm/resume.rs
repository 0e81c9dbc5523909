//! Resuming a team (docs/ARCHITECTURE.md, "Resuming a team"): its tmux server killed, as a reboot
//! does, the team is `interrupted`; `up` refuses to start it over unless told `--resume` or
//! `--fresh`; `up --resume` brings every member back in its own session, with its mail, tasks and
//! worktree.

use std::fs;

use serde_json::Value;

use crate::harness::{Sandbox, Team, eventually, sandbox_processes};
use crate::lifecycle::git;

/// A `claude` that records each launch's argv as one line, makes the transcript of the session it
/// starts (as a session that got a prompt has one), and waits.
pub(crate) const FAKE_CLAUDE: &str = r#"#!/bin/sh
out="$FAKE_CLAUDE_DIR/$SWARM_AGENT"
printf '%s ' "$@" >> "$out.argv" && echo >> "$out.argv"
while [ $# -gt 0 ]; do
  if [ "$1" = --session-id ]; then
    mkdir -p "$CLAUDE_CONFIG_DIR/projects/p" && echo '{}' > "$CLAUDE_CONFIG_DIR/projects/p/$2.jsonl"
  fi
  shift
done
exec sleep 1000
"#;

pub(crate) fn launches(sandbox: &Sandbox, name: &str) -> Vec<Vec<String>> {
    fs::read_to_string(sandbox.root().join(format!("record/{name}.argv")))
        .unwrap_or_default()
        .lines()
        .map(|line| line.split_whitespace().map(str::to_owned).collect())
        .collect()
}

pub(crate) fn value_of(argv: &[String], flag: &str) -> Option<String> {
    let at = argv.iter().position(|a| a == flag)?;
    argv.get(at + 1).cloned()
}

fn unread(sandbox: &Sandbox, name: &str) -> Vec<Value> {
    sandbox
        .swarm()
        .args(["inbox", name, "--team", "t", "--json"])
        .run()
        .success()
        .json()
        .as_array()
        .unwrap()
        .clone()
}

/// Until `status` says team `t` was interrupted.
fn wait_interrupted(sandbox: &Sandbox) {
    eventually("the team to be interrupted", || {
        sandbox
            .swarm()
            .args(["status", "t", "--json"])
            .run()
            .success()
            .json()["interrupted"]
            == true
    });
}

#[test]
fn a_team_whose_tmux_server_died_is_interrupted_and_resumes_whole() {
    resumes_whole_after(|_, team| team.server().kill());
}

/// A reboot as it is: every process of the team, its tmux server, supervisors, programs and
/// signing agent, SIGKILLed at once, with no chance to record anything.
#[test]
fn a_team_whose_every_process_was_sigkilled_resumes_whole() {
    resumes_whole_after(|sandbox, _| {
        let killed = sandbox_processes(sandbox.root());
        assert!(!killed.is_empty());
        for pid in &killed {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(*pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        eventually("every process of the team to be gone", || {
            sandbox_processes(sandbox.root()).is_empty()
        });
    });
}

/// Interrupts a team of claude and other members as `interrupt` does, and resumes it with
/// `up --resume`: the same members, each claude member with `--resume` and its session, unread
/// mail kept, claims kept, worktrees kept with their uncommitted files.
fn resumes_whole_after(interrupt: impl FnOnce(&Sandbox, &Team)) {
    let mut sandbox = Sandbox::new();
    sandbox.shim("claude", FAKE_CLAUDE);
    let record = sandbox.root().join("record");
    fs::create_dir_all(&record).unwrap();
    sandbox.set_env("FAKE_CLAUDE_DIR", &record);
    let claude_dir = sandbox.root().join("claude-config");
    sandbox.set_env("CLAUDE_CONFIG_DIR", &claude_dir);
    let repo = sandbox.work();
    git(&repo, &["init", "-q", "-b", "main"]);
    fs::write(repo.join("README"), "hi\n").unwrap();
    git(&repo, &["add", "README"]);
    git(&repo, &["commit", "-qm", "start"]);
    let team = Team::up(
        &sandbox,
        r#"
name = "t"
layout = "even-horizontal"
[lead]
[[member]]
name = "alice"
profile = "claude"
[[member]]
name = "bob"
profile = "claude"
color = "green"
[[member]]
name = "carol"
command = ["sleep", "1000"]
isolation = "worktree"
"#,
    );
    for name in ["alice", "bob"] {
        eventually(&format!("{name}'s fake claude to start"), || {
            launches(&sandbox, name).len() == 1
        });
    }
    let session = |name: &str| {
        sandbox.member("t", name)["sessionId"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let (alice_session, bob_session) = (session("alice"), session("bob"));
    assert_ne!(alice_session, bob_session);
    assert_eq!(
        value_of(&launches(&sandbox, "alice")[0], "--session-id").as_deref(),
        Some(alice_session.as_str())
    );
    sandbox
        .swarm()
        .args(["info", "alice", "--team", "t"])
        .run()
        .success()
        .stdout_has(&format!("session id      {alice_session}"));
    // alice holds a task, has mail she has not read, and carol has work not committed.
    sandbox
        .swarm()
        .args(["task", "add", "parse"])
        .team("t")
        .run()
        .success();
    sandbox
        .swarm()
        .args(["task", "start", "1"])
        .team("t")
        .as_("alice")
        .run()
        .success();
    sandbox
        .swarm()
        .args(["send", "alice", "keep going"])
        .team("t")
        .run()
        .success();
    let before = unread(&sandbox, "alice");
    assert_eq!(before.len(), 1, "{before:?}");
    assert_eq!(before[0]["verified"], true, "{before:?}");
    // A member added later is resumed as well.
    sandbox
        .swarm()
        .args(["spawn", "dave", "--team", "t", "--", "sleep", "1000"])
        .run()
        .success();
    eventually("dave to run", || {
        sandbox.status_row("t", "dave")["state"] == "running"
    });
    let dave_pid = sandbox.member("t", "dave")["pid"].clone();
    let worktree = repo.join(".swarm/worktrees/t/carol");
    eventually("carol's worktree", || worktree.is_dir());
    fs::write(worktree.join("draft"), "not committed\n").unwrap();
    // bob never got a prompt: Claude Code kept no transcript of his session.
    fs::remove_file(claude_dir.join(format!("projects/p/{bob_session}.jsonl"))).unwrap();

    // A reboot, as far as the team can tell: its tmux server is gone, every pane with it.
    interrupt(&sandbox, &team);
    wait_interrupted(&sandbox);
    sandbox
        .swarm()
        .args(["status", "t"])
        .run()
        .success()
        .stdout_has("team t was interrupted");
    let teams = sandbox
        .swarm()
        .args(["ls", "--json"])
        .run()
        .success()
        .json();
    assert_eq!(teams[0]["interrupted"], true, "{teams}");
    sandbox
        .swarm()
        .arg("ls")
        .run()
        .success()
        .stdout_has("interrupted");
    // The interruption did not give alice's task away.
    let task = sandbox
        .swarm()
        .args(["task", "show", "1", "--json"])
        .team("t")
        .run()
        .success()
        .json();
    assert_eq!(task["owner"], "alice", "{task}");

    // Started over by mistake, it would lose all that.
    let refusal = team.up_command().run().code(2).refusal();
    assert!(
        refusal.contains("--resume") && refusal.contains("--fresh"),
        "{refusal}"
    );
    assert_eq!(launches(&sandbox, "alice").len(), 1);

    team.up_command().arg("--resume").run().success();
    for name in ["alice", "bob"] {
        eventually(&format!("{name} to start again"), || {
            launches(&sandbox, name).len() == 2
        });
    }
    let alice = &launches(&sandbox, "alice")[1];
    assert_eq!(
        value_of(alice, "--resume").as_deref(),
        Some(alice_session.as_str())
    );
    assert!(!alice.contains(&"--session-id".to_owned()), "{alice:?}");
    // Every flag again: the teammate identity too, and a new key.
    assert_eq!(value_of(alice, "--agent-id").as_deref(), Some("alice@t"));
    let key = sandbox.member("t", "alice")["leadVerifyKey"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(value_of(alice, "--lead-verify-key"), Some(key.clone()));
    assert_ne!(
        value_of(&launches(&sandbox, "alice")[0], "--lead-verify-key"),
        Some(key)
    );
    // bob had nothing to resume: a session of his own, new, recorded.
    let bob = &launches(&sandbox, "bob")[1];
    let bob_new = value_of(bob, "--session-id").unwrap();
    assert_ne!(bob_new, bob_session);
    assert!(value_of(bob, "--resume").is_none(), "{bob:?}");
    assert_eq!(session("bob"), bob_new);
    assert_eq!(value_of(bob, "--agent-color").as_deref(), Some("green"));
    for name in ["alice", "bob", "carol", "dave"] {
        eventually(&format!("{name} to run"), || {
            sandbox.status_row("t", name)["state"] == "running"
        });
    }
    assert_ne!(sandbox.member("t", "dave")["pid"], dave_pid);
    // The mail is still unread, and verifies with the new key.
    let after = unread(&sandbox, "alice");
    assert_eq!(after.len(), 1, "{after:?}");
    assert_eq!(after[0]["text"], "keep going");
    assert_eq!(after[0]["verified"], true, "{after:?}");
    assert_ne!(after[0]["msg_id"], before[0]["msg_id"]);
    let task = sandbox
        .swarm()
        .args(["task", "show", "1", "--json"])
        .team("t")
        .run()
        .success()
        .json();
    assert_eq!(task["owner"], "alice", "{task}");
    assert_eq!(task["status"], "in_progress", "{task}");
    assert_eq!(
        fs::read_to_string(worktree.join("draft")).unwrap(),
        "not committed\n"
    );
    let config = sandbox.config("t");
    assert_eq!(config["launch"]["layout"], "even-horizontal");
    // Resumed, it is no longer interrupted; a second resume has nothing to do.
    let status = sandbox
        .swarm()
        .args(["status", "t", "--json"])
        .run()
        .success()
        .json();
    assert_eq!(status["interrupted"], false);
    sandbox
        .swarm()
        .args(["resume", "t"])
        .run()
        .refused(2, "already running");
}

#[test]
fn an_interrupted_team_started_afresh_gives_its_tasks_back() {
    started_afresh_after(|_, team| team.server().kill());
}

/// Its supervisor SIGKILLed before the server goes, alice's run ends with no record at all: it
/// vanished, and starting afresh records that and gives her task back all the same.
#[test]
fn a_team_that_vanished_unrecorded_started_afresh_gives_its_tasks_back() {
    started_afresh_after(|sandbox, team| {
        let supervisor = sandbox.member("t", "alice")["supervisorPid"]
            .as_i64()
            .unwrap();
        let supervisor = nix::unistd::Pid::from_raw(i32::try_from(supervisor).unwrap());
        nix::sys::signal::kill(supervisor, nix::sys::signal::Signal::SIGKILL).unwrap();
        eventually("the supervisor to be gone", || {
            !std::path::Path::new(&format!("/proc/{supervisor}")).exists()
        });
        team.server().kill();
    });
}

/// Interrupts a team of one, alice, holding task 1 (`interrupt`), starts it with `up --fresh`,
/// and checks that the task is pending again with no owner.
fn started_afresh_after(interrupt: impl FnOnce(&Sandbox, &Team)) {
    let sandbox = Sandbox::new();
    let team = Team::up(
        &sandbox,
        r#"
name = "t"
[lead]
[[member]]
name = "alice"
command = ["sleep", "1000"]
"#,
    );
    eventually("alice to run", || {
        sandbox.status_row("t", "alice")["state"] == "running"
    });
    sandbox
        .swarm()
        .args(["task", "add", "parse"])
        .team("t")
        .run()
        .success();
    sandbox
        .swarm()
        .args(["task", "start", "1"])
        .team("t")
        .as_("alice")
        .run()
        .success();
    interrupt(&sandbox, &team);
    wait_interrupted(&sandbox);
    team.up_command().arg("--fresh").run().success();
    let task = sandbox
        .swarm()
        .args(["task", "show", "1", "--json"])
        .team("t")
        .run()
        .success()
        .json();
    assert_eq!(task["status"], "pending", "{task}");
    assert!(task.get("owner").is_none(), "{task}");
}

/// `swarm resume --all`: after a reboot of two teams' servers, both come back; a team that runs
/// is left as it is, and so is one that ended. With nothing interrupted it says so, exit 0.
#[test]
fn resume_all_resumes_every_interrupted_team_and_only_those() {
    let sandbox = Sandbox::new();
    let member = |team: &str| {
        format!(
            "name = \"{team}\"\n[lead]\n[[member]]\nname = \"bob\"\ncommand = [\"sleep\", \"1000\"]\n"
        )
    };
    let first = Team::up(&sandbox, &member("one"));
    let second = Team::up(&sandbox, &member("two"));
    let _running = Team::up(&sandbox, &member("three"));
    for team in ["one", "two", "three"] {
        eventually(&format!("bob of {team} to run"), || {
            sandbox.status_row(team, "bob")["state"] == "running"
        });
    }
    let pid_of_three = sandbox.member("three", "bob")["pid"].clone();
    first.server().kill();
    second.server().kill();
    for team in ["one", "two"] {
        eventually(&format!("{team} to be interrupted"), || {
            sandbox
                .swarm()
                .args(["status", team, "--json"])
                .run()
                .success()
                .json()["interrupted"]
                == true
        });
    }
    let resumed = sandbox
        .swarm()
        .args(["resume", "--all", "--json"])
        .run()
        .success()
        .json();
    let teams: Vec<&str> = resumed
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["team"].as_str().unwrap())
        .collect();
    assert_eq!(teams, ["one", "two"], "{resumed}");
    assert_eq!(resumed[0]["members"], serde_json::json!(["bob"]));
    for team in ["one", "two"] {
        eventually(&format!("bob of {team} to run again"), || {
            sandbox.status_row(team, "bob")["state"] == "running"
        });
    }
    assert_eq!(sandbox.member("three", "bob")["pid"], pid_of_three);
    sandbox
        .swarm()
        .args(["resume", "--all"])
        .run()
        .success()
        .stdout_is("no team was interrupted: there is nothing to resume\n");
    sandbox
        .swarm()
        .args(["resume", "--all", "one"])
        .run()
        .code(2);
}

/// `swarm node --print-unit` without a host name prints the unit that runs `resume --all` at
/// login, with this home and PATH.
#[test]
fn the_resume_unit_runs_resume_all_for_this_home() {
    let sandbox = Sandbox::new();
    let unit = sandbox
        .swarm()
        .args(["node", "--print-unit"])
        .run()
        .success()
        .stdout;
    assert!(unit.contains(" resume --all\n"), "{unit}");
    assert!(
        unit.contains(&format!(
            "Environment=SWARM_HOME={}\n",
            sandbox.home().display()
        )),
        "{unit}"
    );
    assert!(unit.contains("Environment=PATH="), "{unit}");
    // Running a node still needs its name.
    sandbox.swarm().arg("node").run().code(2);
}

/// A resume given no team file brings back what config.json does not keep: each member's `env`
/// values (a secret-looking one from the resumer's own environment, never from swarm's records)
/// and its `[permissions]` rules, which answer its asks again.
#[test]
fn a_resume_without_the_team_file_keeps_env_values_and_permission_rules() {
    let sandbox = Sandbox::new();
    let team = Team::up(
        &sandbox,
        r#"
name = "t"
[lead]
[[member]]
name = "bob"
command = ["sh", "-c", "echo \"$MODE|$SERVICE_TOKEN\" >> seen; exec sleep 1000"]
env = { MODE = "fast", SERVICE_TOKEN = "tok-from-file" }
[member.permissions]
allow = ["Bash(git status:*)"]
"#,
    );
    let seen = || fs::read_to_string(sandbox.work().join("seen")).unwrap_or_default();
    eventually("bob to start", || seen() == "fast|tok-from-file\n");
    let records = fs::read_to_string(sandbox.team_dir("t").join("relaunch.json")).unwrap();
    assert!(records.contains("fast"), "{records}");
    assert!(
        !records.contains("tok-from-file") && !records.contains("SERVICE_TOKEN"),
        "a secret's value is never recorded: {records}"
    );
    team.server().kill();
    wait_interrupted(&sandbox);
    sandbox
        .swarm()
        .args(["resume", "t"])
        .env("SERVICE_TOKEN", "tok-from-resumer")
        .run()
        .success();
    eventually("bob to start again", || seen().lines().count() == 2);
    assert_eq!(seen().lines().nth(1), Some("fast|tok-from-resumer"));
    // Its rule answers its ask again, with nobody asked.
    let request = serde_json::json!({
        "type": "permission_request",
        "request_id": "perm-again",
        "agent_id": "bob",
        "tool_name": "Bash",
        "tool_use_id": "toolu_again",
        "description": "",
        "input": {"command": "git status"},
        "permission_suggestions": []
    });
    let now = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    sandbox.append_inbox_as_claude(
        "t",
        "team-lead",
        &[serde_json::json!({"from": "bob", "text": request.to_string(), "timestamp": now, "read": false})],
    );
    eventually("the rule to answer", || {
        let log = sandbox
            .swarm()
            .args(["permission", "log", "--json", "--team", "t"])
            .run()
            .success()
            .json();
        log.as_array().unwrap().iter().any(|answer| {
            answer["requestId"] == "perm-again"
                && answer["allowed"] == true
                && answer["by"].as_str().unwrap_or_default().contains("rule")
        })
    });
}

/// Two resumes of one team at once: one places the team, the other is refused (exit 2) and
/// places nothing, so every member runs once.
#[test]
fn of_two_resumes_at_once_one_wins() {
    let sandbox = Sandbox::new();
    let team = Team::up(
        &sandbox,
        r#"
name = "t"
[lead]
[[member]]
name = "bob"
command = ["sh", "-c", "echo run >> runs; exec sleep 1000"]
[[member]]
name = "carol"
command = ["sleep", "1000"]
"#,
    );
    let runs = || {
        fs::read_to_string(sandbox.work().join("runs"))
            .unwrap_or_default()
            .lines()
            .count()
    };
    eventually("bob to run", || runs() == 1);
    team.server().kill();
    wait_interrupted(&sandbox);
    let first = sandbox.swarm().args(["resume", "t"]).spawn();
    let second = sandbox.swarm().args(["resume", "t"]).spawn();
    let outcomes = [first.finish(), second.finish()];
    let codes: Vec<Option<i32>> = outcomes.iter().map(|(status, _)| status.code()).collect();
    assert!(
        codes == [Some(0), Some(2)] || codes == [Some(2), Some(0)],
        "{outcomes:?}"
    );
    let (_, refusal) = outcomes
        .iter()
        .find(|(status, _)| status.code() == Some(2))
        .unwrap();
    // Whichever moment it came at: the team being started, running, or no longer interrupted.
    assert!(refusal.starts_with("swarm: team t "), "{refusal}");
    for name in ["bob", "carol"] {
        eventually(&format!("{name} to run again"), || {
            sandbox.status_row("t", name)["state"] == "running"
        });
    }
    assert_eq!(runs(), 2, "bob started once by the resume that won");
    assert_eq!(team.server().panes().len(), 2, "one pane each");
}

/// `tmux kill-server` returns before the server is gone: it waits for each client to say it is
/// leaving, and meanwhile drops every client that connects, so a new session fails with "server
/// exited unexpectedly". A resume at that moment waits for the old server to go and starts the
/// team on a fresh one. A stopped control client holds the old server in that state here.
#[test]
fn a_resume_while_the_old_server_is_still_exiting_waits_for_it() {
    let sandbox = Sandbox::new();
    let team = Team::up(
        &sandbox,
        r#"
name = "t"
[lead]
[[member]]
name = "bob"
command = ["sleep", "1000"]
"#,
    );
    let server = team.server();
    let pid = server.run(&["display-message", "-p", "#{pid}"]);
    let exiting = || {
        fs::read_to_string(format!("/proc/{}/stat", pid.trim())).is_ok_and(|stat| {
            stat.rsplit_once(") ")
                .is_some_and(|(_, rest)| !rest.starts_with('Z'))
        })
    };
    let mut client = std::process::Command::new("tmux")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .arg("-S")
        .arg(server.socket())
        .args(["-C", "attach"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let client_pid = nix::unistd::Pid::from_raw(i32::try_from(client.id()).unwrap());
    eventually("the control client to attach", || {
        server.run(&["list-clients"]).lines().count() == 1
    });
    nix::sys::signal::kill(client_pid, nix::sys::signal::Signal::SIGSTOP).unwrap();
    server.run(&["kill-server"]);
    wait_interrupted(&sandbox);
    assert!(
        exiting(),
        "the old server must still be exiting for this test to mean anything"
    );
    let resume = sandbox.swarm().args(["resume", "t"]).spawn();
    // Long enough for the resume to meet the exiting server; it then has to wait for it.
    std::thread::sleep(std::time::Duration::from_secs(1));
    client.kill().unwrap();
    client.wait().unwrap();
    let (status, stderr) = resume.finish();
    assert!(status.success(), "{stderr}");
    eventually("bob to run again", || {
        sandbox.status_row("t", "bob")["state"] == "running"
    });
}

/// After `swarm down`, `swarm resume` brings back every member `down` ended, a Claude Code member
/// in its own conversation with its unread mail; one whose program had ended on its own stays
/// ended. `up` of the team still starts it afresh, unrefused, and `resume --all` leaves it alone.
#[test]
fn a_team_brought_down_resumes_the_members_down_ended() {
    let mut sandbox = Sandbox::new();
    sandbox.shim("claude", FAKE_CLAUDE);
    let record = sandbox.root().join("record");
    fs::create_dir_all(&record).unwrap();
    sandbox.set_env("FAKE_CLAUDE_DIR", &record);
    sandbox.set_env("CLAUDE_CONFIG_DIR", sandbox.root().join("claude-config"));
    let _team = Team::up(
        &sandbox,
        r#"
name = "t"
[lead]
[[member]]
name = "alice"
profile = "claude"
[[member]]
name = "dora"
command = ["true"]
"#,
    );
    eventually("alice's fake claude to start", || {
        launches(&sandbox, "alice").len() == 1
    });
    eventually("dora to end on her own", || {
        sandbox.status_row("t", "dora")["state"] == "exited"
    });
    let session = sandbox.member("t", "alice")["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    sandbox
        .swarm()
        .args(["send", "alice", "carry on", "--team", "t"])
        .run()
        .success();
    sandbox.swarm().args(["down", "t"]).run().success();
    assert_eq!(sandbox.member("t", "alice")["reason"], "shutdown");
    // Brought down is not interrupted: nothing asks for --resume.
    assert_eq!(
        sandbox
            .swarm()
            .args(["status", "t", "--json"])
            .run()
            .success()
            .json()["interrupted"],
        false
    );
    sandbox
        .swarm()
        .args(["resume", "--all"])
        .run()
        .success()
        .stdout_is("no team was interrupted: there is nothing to resume\n");

    let resumed = sandbox
        .swarm()
        .args(["resume", "t", "--json"])
        .run()
        .success()
        .json();
    // The lead is the person here (no program): alice alone is started again.
    assert_eq!(
        resumed["members"],
        serde_json::json!(["alice"]),
        "{resumed}"
    );
    eventually("alice's fake claude to start again", || {
        launches(&sandbox, "alice").len() == 2
    });
    assert_eq!(
        value_of(&launches(&sandbox, "alice")[1], "--resume").as_deref(),
        Some(session.as_str())
    );
    let mail = unread(&sandbox, "alice");
    assert_eq!(mail.len(), 1, "{mail:?}");
    assert_eq!(mail[0]["verified"], true, "{mail:?}");
    assert_eq!(sandbox.status_row("t", "dora")["state"], "exited");
    sandbox
        .swarm()
        .args(["resume", "t"])
        .run()
        .refused(2, "already running");
    sandbox
        .swarm()
        .args(["down", "t", "--force"])
        .run()
        .success();
}

/// A resume that fails (here tmux cannot start: its socket's path is a folder) leaves the team as
/// interrupted as it found it, bob still holding his task: once the cause is gone, a resume
/// again brings him back.
#[test]
fn a_resume_that_fails_leaves_the_team_interrupted_to_be_resumed_again() {
    let sandbox = Sandbox::new();
    let team = Team::up(
        &sandbox,
        "name = \"t\"\n[lead]\n[[member]]\nname = \"bob\"\ncommand = [\"sleep\", \"1000\"]\n",
    );
    eventually("bob to run", || {
        sandbox.status_row("t", "bob")["state"] == "running"
    });
    sandbox
        .swarm()
        .args(["task", "add", "write the parser", "--team", "t"])
        .run()
        .success();
    sandbox
        .swarm()
        .args(["task", "claim", "1"])
        .team("t")
        .as_("bob")
        .run()
        .success();
    team.server().kill();
    wait_interrupted(&sandbox);
    let socket = team.server().socket().to_owned();
    let _ = fs::remove_file(&socket);
    fs::create_dir(&socket).unwrap();
    sandbox.swarm().args(["resume", "t"]).run().code(1);
    wait_interrupted(&sandbox);
    assert_eq!(sandbox.member("t", "bob")["reason"], "resume failed");
    let board = sandbox
        .swarm()
        .args(["task", "list", "--json", "--team", "t"])
        .run()
        .success()
        .json();
    assert_eq!(board[0]["owner"], "bob", "{board}");

    fs::remove_dir(&socket).unwrap();
    sandbox.swarm().args(["resume", "t"]).run().success();
    eventually("bob to run again", || {
        sandbox.status_row("t", "bob")["state"] == "running"
    });
}
