//! Teams across machines, the task list: a team whose config.json names hosts keeps its tasks in
//! the server's task bucket, each node copies them into its host's task files both ways, and a
//! claim is decided on the server, so two hosts never both win a task. Every test runs a real
//! nats-server and two "hosts": two sandboxes, each with its own home and node.

use std::fs;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use crate::harness::{Outcome, Sandbox, eventually};
use crate::nats_harness::{NatsServer, Node};
use crate::tasks::add;

/// Two hosts sharing one server, each with team `t` (lead, alice on hosta, bob on hostb) and a
/// running node.
struct Hosts {
    server: NatsServer,
    a: Sandbox,
    b: Sandbox,
    _nodes: (Node, Node),
}

fn hosts() -> Hosts {
    let server = NatsServer::start();
    let (a, b) = (Sandbox::new(), Sandbox::new());
    for sandbox in [&a, &b] {
        sandbox.team("t", &["alice", "bob"]);
    }
    // config.json is the contract: both hosts hold the same one, naming each member's host.
    let mut config = a.config("t");
    for member in config["members"].as_array_mut().unwrap() {
        let host = match member["name"].as_str().unwrap() {
            "bob" => "hostb",
            _ => "hosta",
        };
        member["host"] = json!(host);
    }
    let bytes = serde_json::to_vec_pretty(&config).unwrap();
    for sandbox in [&a, &b] {
        fs::write(sandbox.team_dir("t").join("config.json"), &bytes).unwrap();
    }
    let nodes = (
        Node::start(&a, "hosta", &server.url()),
        Node::start(&b, "hostb", &server.url()),
    );
    Hosts {
        server,
        a,
        b,
        _nodes: nodes,
    }
}

fn task_path(sandbox: &Sandbox, id: u64) -> PathBuf {
    sandbox.home().join("tasks/t").join(format!("{id}.json"))
}

/// Task `id` as the host's file holds it, if it has one.
fn task(sandbox: &Sandbox, id: u64) -> Option<Value> {
    let bytes = fs::read(task_path(sandbox, id)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Waits until the host's file of task `id` satisfies `check`.
#[track_caller]
fn eventually_task(sandbox: &Sandbox, id: u64, what: &str, check: impl Fn(&Value) -> bool) {
    eventually(what, || task(sandbox, id).is_some_and(|t| check(&t)));
}

/// `swarm task VERB ID` on `sandbox` as member `name`.
fn as_member(sandbox: &Sandbox, name: &str, verb: &str, id: u64) -> Outcome {
    sandbox
        .swarm()
        .args(["task", verb])
        .arg(id.to_string())
        .team("t")
        .as_(name)
        .run()
}

#[test]
fn a_task_added_on_one_host_is_listed_on_the_other_and_a_claim_there_shows_here() {
    let hosts = hosts();
    let id = add(&hosts.a, "write the parser");
    assert_eq!(id, 1);
    eventually_task(&hosts.b, id, "task 1 on host b", |t| {
        t["subject"] == "write the parser"
    });
    hosts
        .b
        .swarm()
        .args(["task", "list", "--json"])
        .team("t")
        .run()
        .success()
        .stdout_has("write the parser");
    // Ids are issued by the server: the next task, added on the other host, is 2.
    assert_eq!(add(&hosts.b, "write the lexer"), 2);
    eventually_task(&hosts.a, 2, "task 2 on host a", |t| {
        t["subject"] == "write the lexer"
    });
    as_member(&hosts.b, "bob", "claim", 1).success();
    assert_eq!(
        task(&hosts.b, 1).unwrap()["owner"],
        "bob",
        "written here at once"
    );
    eventually_task(&hosts.a, 1, "bob's claim on host a", |t| {
        t["owner"] == "bob"
    });
    as_member(&hosts.a, "alice", "claim", 1).refused(2, "already_claimed: task 1 is owned by bob");
    as_member(&hosts.b, "bob", "done", 1).success();
    eventually_task(&hosts.a, 1, "task 1 completed on host a", |t| {
        t["status"] == "completed"
    });
}

/// One claim of task `id` by `name` on `sandbox`, ready to start.
fn claim_command(sandbox: &Sandbox, name: &str, id: u64) -> Command {
    sandbox
        .swarm()
        .args(["task", "claim", "--json"])
        .arg(id.to_string())
        .team("t")
        .as_(name)
        .into_command()
}

#[test]
fn two_hosts_racing_to_claim_each_of_50_tasks_never_both_win() {
    const TASKS: u64 = 50;
    let hosts = hosts();
    for n in 1..=TASKS {
        assert_eq!(add(&hosts.a, &format!("task {n}")), n);
    }
    eventually_task(&hosts.b, TASKS, "every task on host b", |_| true);
    let mut winners = Vec::new();
    for id in 1..=TASKS {
        // Both claimers are started before either is waited for.
        let alice = start(claim_command(&hosts.a, "alice", id));
        let bob = start(claim_command(&hosts.b, "bob", id));
        let results = [("alice", finish(alice)), ("bob", finish(bob))];
        let won: Vec<&str> = results
            .iter()
            .filter(|(_, (code, _))| *code == Some(0))
            .map(|(name, _)| *name)
            .collect();
        assert_eq!(won.len(), 1, "task {id}: exactly one wins: {results:?}");
        for (_, (code, stderr)) in &results {
            if *code != Some(0) {
                assert_eq!(*code, Some(2), "task {id}: {stderr}");
                let error: Value = serde_json::from_str(stderr.trim()).unwrap();
                assert_eq!(error["reason"], "already_claimed", "{stderr}");
            }
        }
        winners.push((id, won[0]));
    }
    for (id, winner) in winners {
        for sandbox in [&hosts.a, &hosts.b] {
            eventually_task(sandbox, id, &format!("task {id} owned by {winner}"), |t| {
                t["owner"] == winner
            });
        }
    }
}

/// Starts `command` with its output collected.
fn start(mut command: Command) -> Child {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Its exit status and what it printed on stderr.
fn finish(child: Child) -> (Option<i32>, String) {
    let output = child.wait_with_output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_task_file_written_directly_in_claude_codes_shape_reaches_the_other_host() {
    let hosts = hosts();
    assert_eq!(add(&hosts.a, "first"), 1);
    eventually_task(&hosts.b, 1, "task 1 on host b", |_| true);
    // Claude Code's TaskCreate on host b: the next id by its own high-water mark, its fields.
    let written = json!({
        "id": "2",
        "subject": "Review the parser",
        "description": "Read it twice",
        "activeForm": "Reviewing the parser",
        "status": "pending",
        "blocks": [],
        "blockedBy": ["1"],
        "metadata": {"from": "claude", "_extra": [1, 2]}
    });
    let dir = hosts.b.home().join("tasks/t");
    let staging = dir.join(".2.json.tmp");
    fs::write(&staging, serde_json::to_vec_pretty(&written).unwrap()).unwrap();
    fs::rename(&staging, dir.join("2.json")).unwrap();
    eventually_task(&hosts.a, 2, "Claude Code's task on host a", |t| {
        *t == written
    });
    // Claude Code's TaskUpdate on host a: a direct change of a task both hosts hold.
    let mut changed = task(&hosts.a, 1).unwrap();
    changed["owner"] = json!("alice");
    changed["status"] = json!("in_progress");
    let dir = hosts.a.home().join("tasks/t");
    let staging = dir.join(".1.json.tmp");
    fs::write(&staging, serde_json::to_vec_pretty(&changed).unwrap()).unwrap();
    fs::rename(&staging, dir.join("1.json")).unwrap();
    eventually_task(&hosts.b, 1, "alice's direct claim on host b", |t| {
        *t == changed
    });
    // The server knows it: bob's claim is refused with Claude Code's reason.
    as_member(&hosts.b, "bob", "claim", 1).refused(2, "already_claimed: task 1 is owned by alice");
    // The next id swarm issues comes after Claude Code's.
    assert_eq!(add(&hosts.a, "third"), 3);
}

#[test]
fn with_the_server_down_a_claim_exits_1_naming_it_and_changes_nothing() {
    let mut hosts = hosts();
    assert_eq!(add(&hosts.a, "first"), 1);
    let before = fs::read(task_path(&hosts.a, 1)).unwrap();
    hosts.server.kill();
    let url = hosts.server.url();
    let refusal = as_member(&hosts.a, "alice", "claim", 1)
        .refused(1, "cannot reach the NATS server")
        .refusal();
    assert!(refusal.contains(&url), "{refusal}");
    assert_eq!(fs::read(task_path(&hosts.a, 1)).unwrap(), before);
    // Reading still works from the local files.
    hosts
        .a
        .swarm()
        .args(["task", "show", "1"])
        .team("t")
        .run()
        .success()
        .stdout_has("owner: -");
    // Once it is back, the claim goes through and reaches the other host.
    hosts.server.restart();
    as_member(&hosts.a, "alice", "claim", 1).success();
    eventually_task(
        &hosts.b,
        1,
        "alice's claim on host b after the restart",
        |t| t["owner"] == "alice",
    );
    assert_eq!(add(&hosts.b, "second"), 2);
    eventually_task(&hosts.a, 2, "task 2 on host a after the restart", |_| true);
}

#[test]
fn a_one_host_team_needs_no_server() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["alice"]);
    let id = add(&sandbox, "alone");
    sandbox
        .swarm()
        .args(["task", "claim"])
        .arg(id.to_string())
        .team("t")
        .as_("alice")
        .env("SWARM_NATS_URL", "nats://127.0.0.1:1")
        .run()
        .success();
}
