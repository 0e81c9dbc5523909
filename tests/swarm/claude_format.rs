//! Files in Claude Code's exact shape, its lock-directory protocol, and damaged inboxes.

use std::fs;

use serde_json::{Value, json};

use crate::harness::{Sandbox, TmuxServer, eventually};
use crate::top::{open_top, shows};

/// An entry exactly as Claude Code 2.1 writes it (docs/ARCHITECTURE.md, "An inbox"), plus a field
/// from some future version.
fn claude_entry() -> Value {
    json!({"from": "bob", "text": "{\"type\":\"idle_notification\",\"from\":\"bob\",\"timestamp\":\"2026-11-22T08:43:40.970Z\",\"idleReason\":\"available\",\"result\":\"…\"}",
           "timestamp": "2026-11-22T08:43:40.970Z", "color": "blue", "msgV": 1,
           "msg_id": "f3f1d56c-4527-4d9e-a7d4-5783b9f0726d", "type": "message", "read": false,
           "futureField": {"nested": [1, 2]}})
}

fn without_msg_id() -> Value {
    json!({"from": "carol", "text": "no id here", "timestamp": "2026-11-22T08:44:00.000Z", "type": "message", "extra": true})
}

#[test]
fn claude_code_entries_are_read_and_survive_rewrites_intact() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob", "carol"]);
    let original = vec![claude_entry(), without_msg_id()];
    fs::write(
        sandbox.inbox_path("t", "team-lead"),
        serde_json::to_string_pretty(&original).unwrap(),
    )
    .unwrap();

    sandbox
        .swarm()
        .args(["inbox", "team-lead"])
        .team("t")
        .run()
        .success()
        // The entry without an id shows the one derived from its content, the same every time.
        .stdout_is(
            "f3f1d56c-4527-4d9e-a7d4-5783b9f0726d  bob  idle_notification available: …\n\
             cfbcf4a8-899d-5ad4-be15-e2bc6c34842c  carol  no id here\n",
        );

    // A swarm write rewrites the file; the foreign elements come back field for field, in order.
    sandbox
        .swarm()
        .args(["send", "team-lead", "appended"])
        .team("t")
        .as_("bob")
        .run()
        .success();
    let text = fs::read_to_string(sandbox.inbox_path("t", "team-lead")).unwrap();
    let rewritten: Vec<Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(rewritten[..2], original[..]);
    assert_eq!(rewritten[2]["text"], "appended");
    let first_keys: Vec<&str> = text
        .lines()
        .skip(2)
        .take(9)
        .map(|l| l.trim().split('"').nth(1).unwrap_or(""))
        .collect();
    assert_eq!(
        first_keys,
        [
            "from",
            "text",
            "timestamp",
            "color",
            "msgV",
            "msg_id",
            "type",
            "read",
            "futureField"
        ]
    );

    // Consuming keeps every field in history, and a message without msg_id gets a stable one.
    let listed = sandbox
        .swarm()
        .args(["inbox", "team-lead", "--json"])
        .team("t")
        .run()
        .success()
        .json();
    let derived = listed[1]["msg_id"].as_str().unwrap().to_owned();
    let taken = sandbox
        .swarm()
        .args(["recv", "--json"])
        .team("t")
        .as_("team-lead")
        .run()
        .success()
        .json();
    assert_eq!(taken[1]["msg_id"], derived.as_str());
    let history =
        fs::read_to_string(sandbox.team_dir("t").join("history/team-lead.jsonl")).unwrap();
    let first: Value = serde_json::from_str(history.lines().next().unwrap()).unwrap();
    // Kept whole, unknown fields too; delivered, it is marked read.
    let mut delivered = claude_entry();
    delivered["read"] = json!(true);
    assert_eq!(first, delivered);
}

#[test]
fn claude_code_team_config_keeps_unknown_fields() {
    let sandbox = Sandbox::new();
    let dir = sandbox.team_dir("cc");
    fs::create_dir_all(dir.join("inboxes")).unwrap();
    let config = json!({
        "name": "cc", "description": "made by Claude Code", "createdAt": 1_795_336_074_622_u64,
        "leadAgentId": "team-lead@cc", "leadSessionId": "0b7c…", "someNewTeamField": [1],
        "members": [{"agentId": "team-lead@cc", "name": "team-lead", "agentType": "team-lead", "joinedAt": 1,
                     "tmuxPaneId": "", "cwd": "/w", "subscriptions": [], "backendType": "in-process", "mystery": {"x": 1}}]
    });
    fs::write(
        dir.join("config.json"),
        serde_json::to_string_pretty(&config).unwrap(),
    )
    .unwrap();
    sandbox
        .swarm()
        .args(["join", "me"])
        .team("cc")
        .run()
        .success();
    let after = sandbox.config("cc");
    assert_eq!(after["someNewTeamField"], json!([1]));
    assert_eq!(after["members"][0]["mystery"], json!({"x": 1}));
    assert_eq!(after["members"][0]["backendType"], "in-process");
    assert_eq!(after["members"][1]["name"], "me");
}

#[test]
fn a_writer_holding_only_the_lock_directory_excludes_swarm() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    let inbox = sandbox.inbox_path("t", "bob");
    let lock_dir = inbox.with_file_name("bob.json.lock");

    // A Claude Code writer: take the directory, read, think, write what it read plus its entry.
    fs::create_dir(&lock_dir).unwrap();
    let seen: Vec<Value> = serde_json::from_slice(&fs::read(&inbox).unwrap()).unwrap();
    let sender = sandbox
        .swarm()
        .args(["send", "bob", "from swarm"])
        .team("t")
        // However slow the machine, the sender waits for us rather than giving up.
        .env("SWARM_LOCK_TIMEOUT", "60")
        .spawn();
    // swarm takes its own flock before the directory: holding the flock, the sender is waiting
    // for our directory, and has not read the inbox yet.
    let flock = inbox.with_file_name(".bob.flock");
    eventually("the sender to hold the inbox's flock", || {
        fs::File::open(&flock)
            .is_ok_and(|file| matches!(file.try_lock(), Err(fs::TryLockError::WouldBlock)))
    });
    let mut written = seen;
    written.push(
        json!({"from": "claude", "text": "from claude", "timestamp": "2026-11-22T08:44:00.000Z"}),
    );
    fs::write(&inbox, serde_json::to_vec_pretty(&written).unwrap()).unwrap();
    fs::remove_dir(&lock_dir).unwrap();

    let (status, stderr) = sender.finish();
    assert!(status.success(), "{stderr}");
    let texts: Vec<String> = sandbox
        .inbox("t", "bob")
        .iter()
        .map(|m| m["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        texts,
        ["from claude", "from swarm"],
        "swarm must wait for the directory, then append"
    );
}

#[test]
fn a_lock_directory_held_too_long_is_an_error_naming_it() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    let lock_dir = sandbox
        .inbox_path("t", "bob")
        .with_file_name("bob.json.lock");
    fs::create_dir(&lock_dir).unwrap();
    sandbox
        .swarm()
        .args(["send", "bob", "blocked"])
        .team("t")
        .env("SWARM_LOCK_TIMEOUT", "0.3")
        .run()
        .refused(1, "bob.json.lock is held by another writer");
    assert!(lock_dir.is_dir(), "a live writer's lock is left alone");
    assert!(sandbox.inbox("t", "bob").is_empty());
}

#[test]
fn a_corrupt_inbox_is_moved_aside_and_reported() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    fs::write(sandbox.inbox_path("t", "bob"), "{\"from\": \"truncated").unwrap();
    sandbox
        .swarm()
        .args(["send", "bob", "after"])
        .team("t")
        .run()
        .success();
    let status = sandbox.swarm().args(["status"]).team("t").run().success();
    assert!(
        status.stdout.contains("corrupt inbox file moved aside to"),
        "{}",
        status.stdout
    );
    let aside: Vec<_> = fs::read_dir(sandbox.team_dir("t").join("inboxes"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("bob.json.corrupt-")
        })
        .collect();
    assert_eq!(aside.len(), 1);
    assert_eq!(
        fs::read_to_string(aside[0].path()).unwrap(),
        "{\"from\": \"truncated",
        "kept byte for byte"
    );
    let inbox = sandbox.inbox("t", "bob");
    assert_eq!(inbox.len(), 1);
    assert_eq!(inbox[0]["text"], "after");
}

#[test]
fn schema_invalid_elements_are_moved_aside_not_dropped() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    let invalid = json!([{"from": "a", "text": "good", "timestamp": "2026-11-22T08:44:00.000Z"}, {"from": "a", "text": 5}, "junk"]);
    fs::write(sandbox.inbox_path("t", "bob"), invalid.to_string()).unwrap();
    let got = sandbox
        .swarm()
        .args(["recv", "--json"])
        .team("t")
        .as_("bob")
        .run()
        .success()
        .json();
    assert_eq!(got.as_array().unwrap().len(), 1);
    assert_eq!(got[0]["text"], "good");
    let status = sandbox
        .swarm()
        .args(["status", "--json"])
        .team("t")
        .run()
        .success()
        .json();
    let bob = status["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "bob")
        .unwrap()
        .clone();
    let aside = bob["setAside"][0]["path"].as_str().unwrap();
    let moved: Value = serde_json::from_str(&fs::read_to_string(aside).unwrap()).unwrap();
    assert_eq!(moved, json!([{"from": "a", "text": 5}, "junk"]));
}

/// Every protocol message Claude Code 2.1.332 writes into a mailbox, as it writes it, with the
/// words swarm shows it in: `(inbox, from, text, words)`.
fn written_by_claude_code() -> Vec<(&'static str, &'static str, Value, &'static str)> {
    vec![
        (
            "team-lead",
            "worker",
            json!({"type": "permission_request", "request_id": "perm-1795650000000-k2j4h1x", "agent_id": "worker", "tool_name": "Bash", "tool_use_id": "toolu_01", "description": "write perm.txt", "input": {"command": "echo PERM > perm.txt", "description": "write perm.txt"}, "permission_suggestions": []}),
            "worker asks permission to use Bash: echo PERM > perm.txt",
        ),
        (
            "team-lead",
            "worker",
            json!({"type": "sandbox_permission_request", "requestId": "sandbox-9", "workerId": "worker@t", "workerName": "worker", "workerColor": "blue", "hostPattern": {"host": "example.com"}, "createdAt": 1_795_650_000_000_u64}),
            "worker asks to reach example.com",
        ),
        (
            "team-lead",
            "worker",
            json!({"type": "task_completed", "from": "worker", "taskId": "4", "taskSubject": "Write the report", "timestamp": "2026-11-25T10:00:00.000Z"}),
            "task_completed 4: Write the report",
        ),
        (
            "team-lead",
            "worker",
            json!({"type": "teammate_terminated", "message": "worker has exited"}),
            "teammate_terminated: worker has exited",
        ),
        (
            "worker",
            "team-lead",
            json!({"type": "permission_response", "request_id": "perm-1795650000000-k2j4h1x", "subtype": "error", "tool_use_id": "toolu_01", "error": "not now"}),
            "refused: not now",
        ),
        (
            "worker",
            "team-lead",
            json!({"type": "sandbox_permission_response", "requestId": "sandbox-9", "host": "example.com", "allow": true, "timestamp": "2026-11-25T10:00:00.000Z"}),
            "example.com allowed",
        ),
        (
            "worker",
            "team-lead",
            json!({"type": "mode_set_request", "mode": "acceptEdits", "from": "team-lead"}),
            "permission mode acceptEdits",
        ),
        (
            "worker",
            "team-lead",
            json!({"type": "team_permission_update", "toolName": "Bash", "directoryPath": "/w"}),
            "rules for Bash",
        ),
    ]
}

#[test]
fn every_message_claude_code_writes_shows_in_words() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["worker"]);
    let watch = sandbox.swarm().args(["watch", "--all"]).spawn();
    let messages = written_by_claude_code();
    for (n, (inbox, from, frame, _)) in messages.iter().enumerate() {
        sandbox.append_inbox_as_claude(
            "t",
            inbox,
            &[json!({"from": from, "text": frame.to_string(),
                     "timestamp": format!("2026-11-25T10:00:0{n}.000Z"), "color": "blue",
                     "msgV": 1, "msg_id": format!("00000000-0000-4000-8000-00000000000{n}"),
                     "type": "message", "read": false})],
        );
    }
    for member in ["team-lead", "worker"] {
        let listed = sandbox
            .swarm()
            .args(["inbox", member, "--json"])
            .run()
            .success()
            .json();
        for (_, _, frame, _) in messages.iter().filter(|m| m.0 == member) {
            let found = listed
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["structured"]["type"] == frame["type"])
                .unwrap_or_else(|| panic!("{} is not decoded: {listed:#}", frame["type"]));
            // Decoded in Claude Code's own shape, nothing added or lost.
            assert_eq!(found["structured"], *frame, "{found:#}");
        }
    }
    // In words wherever a message is shown: never as its JSON.
    let inbox = |member: &str| {
        sandbox
            .swarm()
            .args(["inbox", member])
            .run()
            .success()
            .stdout
    };
    let (lead, worker) = (inbox("team-lead"), inbox("worker"));
    let watched: Vec<String> = (0..messages.len()).map(|_| watch.next_line()).collect();
    for (member, _, frame, words) in &messages {
        let listed = if *member == "team-lead" {
            &lead
        } else {
            &worker
        };
        for (what, shown) in [("inbox", listed.as_str()), ("watch", &watched.join("\n"))] {
            let line = shown
                .lines()
                .find(|l| l.contains(frame["type"].as_str().unwrap()) || l.contains(words))
                .unwrap_or_else(|| panic!("{what} does not show {}: {shown}", frame["type"]));
            assert!(
                line.contains(words) && !line.contains("{\""),
                "{what}: {line}"
            );
        }
    }
    // And in `top`'s feed.
    let server = TmuxServer::start(&sandbox);
    open_top(&server, "top", "t", 200, 50);
    for words in [
        "worker asks permission to use Bash: echo PERM > perm.txt",
        "worker asks permission to reach example.com",
        "worker completed task 4: Write the report",
        "team-lead refused worker's request perm-1795650000000-k2j4h1x",
        "team-lead allowed worker to reach example.com",
        "team-lead asks worker to switch to permission mode acceptEdits",
    ] {
        shows(&server, "top", "a Claude Code message in words", words);
    }
    // The lead of this script's team takes its own, in words too.
    let taken = sandbox.swarm().arg("recv").run().success().stdout;
    assert!(
        taken.contains("worker asks permission to use Bash: echo PERM > perm.txt")
            && !taken.contains("{\""),
        "{taken}"
    );
}
