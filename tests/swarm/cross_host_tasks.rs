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
use crate::tasks::{add, listed};

/// Two hosts sharing one server, each with team `t` (lead, alice on hosta, bob on hostb) and a
/// running node.
struct Hosts {
    server: NatsServer,
    a: Sandbox,
    b: Sandbox,
    nodes: (Node, Node),
}

fn hosts() -> Hosts {
    let server = NatsServer::start();
    let (a, b) = (Sandbox::new(), Sandbox::new());
    make_team(&[&a, &b]);
    let nodes = (
        Node::start(&a, "hosta", &server.url()),
        Node::start(&b, "hostb", &server.url()),
    );
    Hosts {
        server,
        a,
        b,
        nodes,
    }
}

/// Team `t` on each of `sandboxes`, from the first one's `init`: config.json is the contract, so
/// every host holds the same one, naming each member's host (bob on hostb, the rest on hosta).
fn make_team(sandboxes: &[&Sandbox]) {
    for sandbox in sandboxes {
        sandbox.team("t", &["alice", "bob"]);
    }
    let mut config = sandboxes[0].config("t");
    for member in config["members"].as_array_mut().unwrap() {
        let host = match member["name"].as_str().unwrap() {
            "bob" => "hostb",
            _ => "hosta",
        };
        member["host"] = json!(host);
    }
    let bytes = serde_json::to_vec_pretty(&config).unwrap();
    for sandbox in sandboxes {
        fs::write(sandbox.team_dir("t").join("config.json"), &bytes).unwrap();
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

/// alice on host a and bob on host b claim each of `tasks` tasks at once: exactly one wins each,
/// and both hosts come to agree on who.
fn two_hosts_racing_to_claim(tasks: u64) {
    let hosts = hosts();
    for n in 1..=tasks {
        assert_eq!(add(&hosts.a, &format!("task {n}")), n);
    }
    eventually_task(&hosts.b, tasks, "every task on host b", |_| true);
    let mut winners = Vec::new();
    for id in 1..=tasks {
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

#[test]
fn two_hosts_racing_to_claim_each_task_never_both_win() {
    two_hosts_racing_to_claim(10);
}

#[test]
#[ignore = "stress tier: scripts/stress runs it"]
fn two_hosts_racing_to_claim_each_task_never_both_win_under_stress() {
    two_hosts_racing_to_claim(50);
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

/// Deletes task `id` from the host's files as Claude Code's TaskUpdate to status `deleted` does:
/// the high-water mark raised over it, the file removed, and the other tasks' links to it taken
/// out.
fn delete_as_claude_code(sandbox: &Sandbox, id: u64) {
    let dir = sandbox.home().join("tasks/t");
    let mark_path = dir.join(".highwatermark");
    let mark: u64 = fs::read_to_string(&mark_path)
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(0);
    if id > mark {
        fs::write(&mark_path, id.to_string()).unwrap();
    }
    fs::remove_file(task_path(sandbox, id)).unwrap();
    let gone = json!(id.to_string());
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|ext| ext != "json") {
            continue;
        }
        let mut other: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        let mut changed = false;
        for field in ["blocks", "blockedBy"] {
            if let Some(links) = other[field].as_array_mut() {
                let before = links.len();
                links.retain(|link| *link != gone);
                changed |= links.len() != before;
            }
        }
        if changed {
            let staging = dir.join(".links.json.tmp");
            fs::write(&staging, serde_json::to_vec_pretty(&other).unwrap()).unwrap();
            fs::rename(&staging, &path).unwrap();
        }
    }
}

/// Waits until the host has no file of task `id`.
#[track_caller]
fn eventually_gone(sandbox: &Sandbox, id: u64, what: &str) {
    eventually(what, || !task_path(sandbox, id).exists());
}

/// The host's high-water mark file, as a number (0 when it has none).
fn high_water_mark(sandbox: &Sandbox) -> u64 {
    fs::read_to_string(sandbox.home().join("tasks/t/.highwatermark"))
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn a_task_deleted_on_either_host_disappears_on_the_other() {
    let hosts = hosts();
    assert_eq!(add(&hosts.a, "parse"), 1);
    hosts
        .a
        .swarm()
        .args(["task", "add", "lex", "--blocked-by", "1"])
        .team("t")
        .run()
        .success();
    assert_eq!(add(&hosts.a, "emit"), 3);
    eventually_task(&hosts.b, 3, "every task on host b", |_| true);
    eventually_task(&hosts.b, 2, "task 2 waiting for 1 on host b", |t| {
        t["blockedBy"] == json!(["1"])
    });
    // Claude Code on host a deletes task 1: the file goes on host b, and task 2 waits for
    // nothing there either.
    delete_as_claude_code(&hosts.a, 1);
    eventually_gone(&hosts.b, 1, "task 1 gone from host b");
    eventually_task(&hosts.b, 2, "task 2 waiting for nothing on host b", |t| {
        t["blockedBy"] == json!([])
    });
    // A person removes task 3's file on host b, the highest id: it goes on host a, and host b's
    // own mark keeps the id issued.
    fs::remove_file(task_path(&hosts.b, 3)).unwrap();
    eventually_gone(&hosts.a, 3, "task 3 gone from host a");
    assert!(task_path(&hosts.a, 2).exists(), "task 2 stays");
    assert!(task_path(&hosts.b, 2).exists(), "task 2 stays");
    eventually("host b's mark over task 3", || {
        high_water_mark(&hosts.b) >= 3
    });
    assert!(high_water_mark(&hosts.a) >= 3, "host a's mark over task 3");
    // Deleted is deleted on the server too: no claim finds them, and no id is issued again.
    as_member(&hosts.a, "alice", "claim", 1).refused(3, "task_not_found");
    as_member(&hosts.b, "bob", "claim", 3).refused(3, "task_not_found");
    assert_eq!(add(&hosts.b, "link"), 4);
    eventually_task(&hosts.a, 4, "task 4 on host a", |t| t["subject"] == "link");
}

#[test]
fn deletions_made_while_a_node_is_down_cross_when_it_comes_back() {
    let mut hosts = hosts();
    for subject in ["one", "two", "three"] {
        add(&hosts.a, subject);
    }
    hosts
        .a
        .swarm()
        .args(["task", "done", "2"])
        .team("t")
        .run()
        .success();
    eventually_task(&hosts.b, 3, "every task on host b", |_| true);
    eventually_task(&hosts.b, 2, "task 2 completed on host b", |t| {
        t["status"] == "completed"
    });
    hosts.nodes.1.kill();
    // Deleted on host a while host b's node is down, and known to be on the server: a claim of
    // the completed task (decided on the server) is refused `already_resolved` until the deletion
    // is there, then `task_not_found`. Neither changes anything.
    delete_as_claude_code(&hosts.a, 2);
    eventually("task 2's deletion on the server", || {
        as_member(&hosts.a, "bob", "claim", 2).status.code() == Some(3)
    });
    // Meanwhile on host b Claude Code deletes task 1, and host a adds task 4, which host b's
    // files never held: its missing file there is no deletion.
    delete_as_claude_code(&hosts.b, 1);
    assert_eq!(add(&hosts.a, "four"), 4);
    assert!(task_path(&hosts.b, 2).exists(), "host b's node is down");
    hosts.nodes.1.restart();
    eventually_gone(&hosts.b, 2, "task 2 gone from host b once its node is back");
    eventually_gone(&hosts.a, 1, "task 1, deleted on host b, gone from host a");
    eventually_task(&hosts.b, 4, "task 4 copied to host b", |t| {
        t["subject"] == "four"
    });
    assert!(
        high_water_mark(&hosts.b) >= 2,
        "host b's mark never goes back"
    );
    for sandbox in [&hosts.a, &hosts.b] {
        for id in [3, 4] {
            assert!(task(sandbox, id).is_some(), "task {id} stays");
        }
    }
    as_member(&hosts.a, "alice", "claim", 4).success();
    eventually_task(&hosts.b, 4, "alice's claim of task 4 on host b", |t| {
        t["owner"] == "alice"
    });
}

/// One exclusive claim of task `id` by `name` on `sandbox`, ready to start.
fn exclusive_claim_command(sandbox: &Sandbox, name: &str, id: u64) -> Command {
    let mut command = claim_command(sandbox, name, id);
    command.arg("--exclusive");
    command
}

/// `rounds` rounds in which alice claims a task exclusively on each of two hosts at once: exactly
/// one claim wins each round, the other is refused as Claude Code words it.
fn exclusive_claims_on_two_hosts(rounds: u64) {
    let hosts = hosts();
    for n in 1..=2 * rounds {
        assert_eq!(add(&hosts.a, &format!("task {n}")), n);
    }
    eventually_task(&hosts.b, 2 * rounds, "every task on host b", |_| true);
    for round in 1..=rounds {
        let (x, y) = (2 * round - 1, 2 * round);
        // alice, on two hosts at once, claims a different task on each.
        let on_a = start(exclusive_claim_command(&hosts.a, "alice", x));
        let on_b = start(exclusive_claim_command(&hosts.b, "alice", y));
        let results = [(&hosts.a, x, finish(on_a)), (&hosts.b, y, finish(on_b))];
        let won: Vec<(&Sandbox, u64)> = results
            .iter()
            .filter(|(_, _, (code, _))| *code == Some(0))
            .map(|(sandbox, id, _)| (*sandbox, *id))
            .collect();
        let shown: Vec<_> = results.iter().map(|(_, id, result)| (id, result)).collect();
        assert_eq!(won.len(), 1, "round {round}: exactly one wins: {shown:?}");
        for (_, id, (code, stderr)) in &results {
            if *code != Some(0) {
                assert_eq!(*code, Some(2), "task {id}: {stderr}");
                let error: Value = serde_json::from_str(stderr.trim()).unwrap();
                assert_eq!(error["reason"], "busy", "{stderr}");
                assert!(
                    error["error"]
                        .as_str()
                        .unwrap_or("")
                        .contains("you already own open task"),
                    "Claude Code's words: {stderr}"
                );
            }
        }
        // alice finishes what she won, so the next round starts with her free.
        let (sandbox, id) = won[0];
        as_member(sandbox, "alice", "done", id).success();
    }
    for id in 1..=2 * rounds {
        eventually_task(&hosts.a, id, &format!("task {id} settled on host a"), |t| {
            t["status"] == "completed" || t["owner"].is_null()
        });
    }
}

#[test]
fn exclusive_claims_by_one_owner_on_two_hosts_never_both_win() {
    exclusive_claims_on_two_hosts(5);
}

#[test]
#[ignore = "stress tier: scripts/stress runs it"]
fn exclusive_claims_by_one_owner_on_two_hosts_never_both_win_under_stress() {
    exclusive_claims_on_two_hosts(25);
}

/// The team's task bucket on `server`, and a runtime to drive it: for a test that plays a claimer
/// stopped halfway, which no swarm command can be made to be.
fn bucket(server: &NatsServer) -> (tokio::runtime::Runtime, async_nats::jetstream::kv::Store) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let store = runtime.block_on(async {
        let client = async_nats::connect(server.url()).await.unwrap();
        async_nats::jetstream::new(client)
            .get_key_value("swarm_tasks_t")
            .await
            .unwrap()
    });
    (runtime, store)
}

#[test]
fn an_exclusive_claim_stopped_halfway_can_never_land_after_another_wins() {
    let hosts = hosts();
    assert_eq!(add(&hosts.a, "first"), 1);
    assert_eq!(add(&hosts.a, "second"), 2);
    eventually_task(&hosts.b, 2, "task 2 on host b", |_| true);
    let (runtime, store) = bucket(&hosts.server);
    // alice's exclusive claim of task 1 on host a, stopped after its first step: it decided on
    // task 1 at this revision and recorded that on her claimer key, and has not written task 1.
    let (revision, mut claimed) = runtime.block_on(async {
        let entry = store.entry("task.1").await.unwrap().unwrap();
        let task: Value = serde_json::from_slice(&entry.value).unwrap();
        let intent = json!({"task": 1, "revision": entry.revision});
        store
            .create("claimer.alice", serde_json::to_vec(&intent).unwrap().into())
            .await
            .unwrap();
        (entry.revision, task)
    });
    // Her exclusive claim of task 2 on host b goes through: task 1 is not hers.
    hosts
        .b
        .swarm()
        .args(["task", "claim", "--exclusive", "2"])
        .team("t")
        .as_("alice")
        .run()
        .success();
    // The stopped claim now takes its last step, at the revision it decided on: it must lose,
    // or alice would own two open tasks.
    claimed["owner"] = json!("alice");
    let landed = runtime.block_on(store.update(
        "task.1",
        serde_json::to_vec_pretty(&claimed).unwrap().into(),
        revision,
    ));
    assert!(landed.is_err(), "the stopped claim of task 1 landed too");
    for sandbox in [&hosts.a, &hosts.b] {
        eventually_task(sandbox, 2, "task 2 alice's", |t| t["owner"] == "alice");
        assert!(task(sandbox, 1).unwrap()["owner"].is_null(), "task 1 free");
    }
    hosts
        .a
        .swarm()
        .args(["task", "claim", "--exclusive", "1"])
        .team("t")
        .as_("alice")
        .run()
        .refused(2, "busy: you already own open task 2");
}

#[test]
fn a_hosts_whole_list_removed_while_its_node_is_down_is_copied_again_not_deleted() {
    let mut hosts = hosts();
    add(&hosts.a, "one");
    add(&hosts.a, "two");
    eventually_task(&hosts.b, 2, "task 2 on host b", |_| true);
    hosts.nodes.1.kill();
    fs::remove_dir_all(hosts.b.home().join("tasks/t")).unwrap();
    hosts.nodes.1.restart();
    for id in [1, 2] {
        eventually_task(&hosts.b, id, &format!("task {id} back on host b"), |_| true);
    }
    // Anything host b's node did meanwhile is on the server before this task is.
    assert_eq!(add(&hosts.b, "three"), 3);
    eventually_task(&hosts.a, 3, "task 3 on host a", |_| true);
    for id in [1, 2] {
        assert!(task(&hosts.a, id).is_some(), "task {id} stays on host a");
    }
}

/// A team across hosts removed on its lead's host is removed whole: its board leaves the server
/// with it (and the node's record of its copies with its files), so a new team of the name starts
/// with an empty board whose ids start at 1; the other host, which keeps its files of the team
/// until `rm` there, loses its copies of the old board and never puts them back on the server.
#[test]
fn a_team_removed_on_its_leads_host_takes_its_board_off_the_server() {
    let hosts = hosts();
    assert_eq!(add(&hosts.a, "old one"), 1);
    assert_eq!(add(&hosts.a, "old two"), 2);
    eventually_task(&hosts.b, 2, "task 2 on host b", |_| true);
    let record = hosts.a.home().join("node/tasks-t.json");
    assert!(record.exists());
    remove(&hosts.a);
    assert!(!record.exists(), "the node's record goes with the team");
    for id in [1, 2] {
        eventually_gone(&hosts.b, id, &format!("host b's copy of old task {id}"));
    }
    assert!(hosts.b.team_dir("t").join("config.json").exists());
    make_team(&[&hosts.a]);
    assert_eq!(add(&hosts.a, "new one"), 1, "a new board's ids start at 1");
    eventually_task(&hosts.b, 1, "the new task 1 on host b", |t| {
        t["subject"] == "new one"
    });
    for sandbox in [&hosts.a, &hosts.b] {
        let subjects: Vec<Value> = listed(sandbox)
            .iter()
            .map(|task| task["subject"].clone())
            .collect();
        assert_eq!(subjects, ["new one"], "nothing of the old board");
    }
}

/// Removing a team across hosts on its lead's host needs the server, which holds its board: with
/// the server down it is exit 1 naming the server, and the team is left as it was, board and all;
/// once the server is back, the removal goes through.
#[test]
fn with_the_server_down_a_team_is_not_removed_on_its_leads_host() {
    let mut hosts = hosts();
    assert_eq!(add(&hosts.a, "kept"), 1);
    hosts.server.kill();
    hosts
        .a
        .swarm()
        .args(["rm", "t"])
        .run()
        .refused(1, "cannot reach the NATS server")
        .stderr_has("left as it was");
    assert!(hosts.a.team_dir("t").join("config.json").exists());
    assert!(task(&hosts.a, 1).is_some(), "the board is still here");
    hosts.server.restart();
    remove(&hosts.a);
}

/// `swarm rm t` on `sandbox`, which removes it.
fn remove(sandbox: &Sandbox) {
    sandbox
        .swarm()
        .args(["rm", "t"])
        .run()
        .success()
        .stdout_has("removed team t");
}
