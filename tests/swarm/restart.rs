//! Restart policies (docs/ARCHITECTURE.md, "Restart policies"): a member whose program fails is
//! started again by its supervisor, in its own conversation, keeping its tasks, after a growing
//! pause; one that keeps failing is left ended after `restart_max`, the lead told once and the
//! alerts told through the event stream.

use std::fs;

use serde_json::Value;

use crate::harness::{Sandbox, Team, eventually};

/// How many times the program was started: the lines of `runs` in the team's directory of work.
fn runs(sandbox: &Sandbox) -> usize {
    fs::read_to_string(sandbox.work().join("runs"))
        .unwrap_or_default()
        .lines()
        .count()
}

/// The completion notices in the lead's inbox from `member`.
fn notices(sandbox: &Sandbox, member: &str) -> Vec<Value> {
    sandbox
        .inbox("t", "team-lead")
        .into_iter()
        .filter(|m| {
            m["from"] == member && m["text"].as_str().unwrap().contains("task_notification")
        })
        .collect()
}

fn events(sandbox: &Sandbox) -> Vec<Value> {
    fs::read_to_string(sandbox.team_dir("t").join("events.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Fails twice (each time once told to, by a file `failN`), then succeeds: two restarts, the
/// task it holds kept through both, one ending told to the lead, as exited.
#[test]
fn a_member_that_fails_twice_then_succeeds_is_restarted_twice_and_keeps_its_task() {
    let sandbox = Sandbox::new();
    let _team = Team::up(
        &sandbox,
        r#"
name = "t"
[lead]
[[member]]
name = "bob"
restart = "on-failure"
command = ["sh", "-c", "echo run >> runs; n=$(wc -l < runs); if [ $n -le 2 ]; then while [ ! -e fail$n ]; do sleep 0.1; done; exit 3; fi; while [ ! -e done ]; do sleep 0.1; done"]
"#,
    );
    eventually("bob to run", || {
        sandbox.status_row("t", "bob")["state"] == "running"
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
        .as_("bob")
        .run()
        .success();
    for n in 1..=2 {
        fs::write(sandbox.work().join(format!("fail{n}")), "").unwrap();
        eventually(&format!("bob to be started again ({n})"), || {
            runs(&sandbox) == n + 1 && sandbox.status_row("t", "bob")["state"] == "running"
        });
        let bob = sandbox.member("t", "bob");
        assert_eq!(bob["restarts"], n, "{bob}");
        assert_eq!(bob["exitCode"], 3, "{bob}");
        let task = sandbox
            .swarm()
            .args(["task", "show", "1", "--json"])
            .team("t")
            .run()
            .success()
            .json();
        assert_eq!(
            task["owner"], "bob",
            "a member restarted keeps its task: {task}"
        );
        assert!(notices(&sandbox, "bob").is_empty(), "no ending yet");
    }
    let restarting = events(&sandbox)
        .into_iter()
        .filter(|e| e["member"] == "bob" && e["state"] == "restarting")
        .count();
    assert_eq!(restarting, 2);
    sandbox
        .swarm()
        .args(["status", "t"])
        .run()
        .success()
        .stdout_has("restarted 2 times");
    fs::write(sandbox.work().join("done"), "").unwrap();
    eventually("bob to end", || {
        sandbox.status_row("t", "bob")["state"] == "exited"
    });
    assert_eq!(runs(&sandbox), 3);
    let told = notices(&sandbox, "bob");
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(
        told[0]["summary"]
            .as_str()
            .unwrap()
            .ends_with("restarted 2 times"),
        "{told:?}"
    );
}

/// Always fails: started once and restarted `restart_max` times, then left failed; the lead told
/// once, a `gave-up` event in the stream, and the alert command told `failed` once.
#[test]
fn a_member_that_always_fails_stops_after_restart_max() {
    let mut sandbox = Sandbox::new();
    let alerted = sandbox.root().join("alerted.jsonl");
    let config_home = sandbox.root().join("home-config");
    sandbox.set_env("XDG_CONFIG_HOME", config_home);
    let toml = format!(
        r#"
name = "t"
restart = "always"
restart_max = 2
[notify]
command = ["sh", "-c", "cat >> {}"]
[lead]
[[member]]
name = "bob"
command = ["sh", "-c", "echo run >> runs; exit 7"]
"#,
        alerted.display()
    );
    let _team = Team::up(&sandbox, &toml);
    eventually("bob to be left failed", || {
        sandbox.status_row("t", "bob")["state"] == "failed"
    });
    assert_eq!(runs(&sandbox), 3, "one start and restart_max restarts");
    let bob = sandbox.member("t", "bob");
    assert_eq!(bob["restarts"], 2, "{bob}");
    let gave_up: Vec<Value> = events(&sandbox)
        .into_iter()
        .filter(|e| e["kind"] == "gave-up")
        .collect();
    assert_eq!(gave_up.len(), 1, "{gave_up:?}");
    assert_eq!(gave_up[0]["member"], "bob");
    assert_eq!(gave_up[0]["restarts"], 2);
    let told = notices(&sandbox, "bob");
    assert_eq!(told.len(), 1, "the lead is told once: {told:?}");
    assert!(
        told[0]["summary"]
            .as_str()
            .unwrap()
            .starts_with("bob failed (exit 7)"),
        "{told:?}"
    );
    eventually("the alert", || alerted.exists());
    let alerts = || -> Vec<Value> {
        fs::read_to_string(&alerted)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    };
    eventually("the failure's alert", || {
        alerts().iter().any(|a| a["alert"] == "failed")
    });
    let failed: Vec<Value> = alerts()
        .into_iter()
        .filter(|a| a["alert"] == "failed")
        .collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(
        failed[0]["text"],
        "bob keeps failing: no more restarts after 2 in a row"
    );
    assert_eq!(runs(&sandbox), 3, "never started again");
}

/// A Claude Code member comes back in its own conversation: `--resume` with its session, the
/// same identity and the same verify key.
#[test]
fn a_claude_member_that_crashed_comes_back_in_its_own_conversation() {
    let mut sandbox = Sandbox::new();
    // Records each launch's argv; the first makes the session's transcript and crashes.
    sandbox.shim(
        "claude",
        r#"#!/bin/sh
printf '%s ' "$@" >> "$FAKE_CLAUDE_DIR/argv" && echo >> "$FAKE_CLAUDE_DIR/argv"
while [ $# -gt 0 ]; do
  if [ "$1" = --session-id ]; then
    mkdir -p "$CLAUDE_CONFIG_DIR/projects/p" && echo '{}' > "$CLAUDE_CONFIG_DIR/projects/p/$2.jsonl"
    exit 1
  fi
  shift
done
exec sleep 1000
"#,
    );
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
restart = "on-failure"
"#,
    );
    let launches = || -> Vec<Vec<String>> {
        fs::read_to_string(record.join("argv"))
            .unwrap_or_default()
            .lines()
            .map(|line| line.split_whitespace().map(str::to_owned).collect())
            .collect()
    };
    eventually("alice to be restarted", || {
        launches().len() == 2 && sandbox.status_row("t", "alice")["state"] == "running"
    });
    let value_of = |argv: &[String], flag: &str| {
        let at = argv.iter().position(|a| a == flag)?;
        argv.get(at + 1).cloned()
    };
    let (first, second) = (&launches()[0], &launches()[1]);
    let session = sandbox.member("t", "alice")["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(value_of(first, "--session-id"), Some(session.clone()));
    assert_eq!(value_of(second, "--resume"), Some(session));
    assert!(!second.contains(&"--session-id".to_owned()), "{second:?}");
    assert_eq!(value_of(second, "--agent-id").as_deref(), Some("alice@t"));
    assert_eq!(
        value_of(second, "--lead-verify-key"),
        value_of(first, "--lead-verify-key")
    );
    assert!(value_of(second, "--lead-verify-key").is_some());
    let alice = sandbox.member("t", "alice");
    assert_eq!(alice["restarts"], 1, "{alice}");
    let recorded: Vec<String> = serde_json::from_value(alice["argv"].clone()).unwrap();
    assert_eq!(
        value_of(&recorded, "--resume"),
        value_of(second, "--resume"),
        "config.json records the command it runs now: {alice}"
    );
}

/// `stop` while a member waits to be restarted ends it there: killed, reason stop, never started
/// again, the lead told once.
#[test]
fn a_member_stopped_while_it_waits_to_restart_is_not_started_again() {
    let sandbox = Sandbox::new();
    let _team = Team::up(
        &sandbox,
        r#"
name = "t"
[lead]
[[member]]
name = "bob"
restart = "always"
restart_max = 20
command = ["sh", "-c", "echo run >> runs; exit 1"]
"#,
    );
    // Its third restart waits 4 s: long enough to be seen waiting.
    eventually("bob to wait for its third restart", || {
        let bob = sandbox.member("t", "bob");
        bob["state"] == "restarting" && bob["restarts"] == 3
    });
    sandbox
        .swarm()
        .args(["stop", "bob", "--team", "t"])
        .run()
        .success();
    let bob = sandbox.member("t", "bob");
    assert_eq!(bob["state"], "killed", "{bob}");
    assert_eq!(bob["reason"], "stop", "{bob}");
    assert_eq!(runs(&sandbox), 3);
    // Its supervisor is gone once the ending is recorded: nothing is left to start it again.
    let supervisor = bob["supervisorPid"].as_i64().unwrap();
    eventually("bob's supervisor to end", || {
        !std::path::Path::new(&format!("/proc/{supervisor}")).exists()
    });
    assert_eq!(runs(&sandbox), 3, "never started again");
    assert_eq!(notices(&sandbox, "bob").len(), 1);
}
