//! The shared task list: Claude Code's format, its claim rules, races, crashes, bad input.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;
use std::thread;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use crate::harness::{Sandbox, require};

fn list_dir(sandbox: &Sandbox) -> PathBuf {
    sandbox.home().join("tasks").join("t")
}

fn task(sandbox: &Sandbox, id: u64) -> Value {
    let path = list_dir(sandbox).join(format!("{id}.json"));
    serde_json::from_slice(&fs::read(&path).unwrap()).unwrap()
}

pub(crate) fn add(sandbox: &Sandbox, subject: &str) -> u64 {
    sandbox
        .swarm()
        .args(["task", "add", subject])
        .team("t")
        .run()
        .success()
        .stdout_line()
        .parse()
        .unwrap()
}

/// `swarm task list --json` of team `t`: every task shown.
pub(crate) fn listed(sandbox: &Sandbox) -> Vec<Value> {
    sandbox
        .swarm()
        .args(["task", "list", "--json"])
        .team("t")
        .run()
        .success()
        .json()
        .as_array()
        .unwrap()
        .clone()
}

/// What one claimer won and how many claims were refused (each with `already_claimed`).
type Claims = (String, Vec<u64>, usize);

/// Each of `claimers` goes through every task once, claimer `k` starting `k` `claimers`ths of the
/// way into the list (with 8 claimers and 200 tasks, claimer `k` at task `k * 25 + 1`).
fn order(k: usize, claimers: usize, tasks: u64) -> Vec<u64> {
    let start = u64::try_from(k).unwrap() * tasks / u64::try_from(claimers).unwrap();
    (0..tasks).map(|i| (i + start) % tasks + 1).collect()
}

/// A claimer running `swarm task claim ID` once per task, in `ids`' order.
fn swarm_claimer(sandbox: &Sandbox, name: &str, ids: Vec<u64>) -> thread::JoinHandle<Claims> {
    let commands: Vec<_> = ids
        .into_iter()
        .map(|id| {
            let command = sandbox
                .swarm()
                .args(["task", "claim", "--json"])
                .arg(id.to_string())
                .team("t")
                .as_(name)
                .into_command();
            (id, command)
        })
        .collect();
    let name = name.to_owned();
    thread::spawn(move || {
        let mut won = Vec::new();
        let mut refused = 0;
        for (id, mut command) in commands {
            let output = command.output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            match output.status.code() {
                Some(0) => won.push(id),
                Some(2) => {
                    let error: Value = serde_json::from_str(stderr.trim()).unwrap();
                    assert_eq!(error["reason"], "already_claimed", "{stderr}");
                    refused += 1;
                }
                other => panic!("{name} claiming {id}: {other:?} {stderr}"),
            }
        }
        (name, won, refused)
    })
}

/// Every task claimed exactly once, every other claim refused, every file readable and owned by
/// its winner. Returns how many each claimer won.
fn check_claims(
    sandbox: &Sandbox,
    claimers: Vec<thread::JoinHandle<Claims>>,
    tasks: u64,
) -> BTreeMap<String, usize> {
    let count = claimers.len();
    let mut owners: BTreeMap<u64, String> = BTreeMap::new();
    let mut wins = BTreeMap::new();
    let mut refused = 0;
    for claimer in claimers {
        let (name, won, no) = claimer.join().unwrap();
        refused += no;
        wins.insert(name.clone(), won.len());
        for id in won {
            assert!(
                owners.insert(id, name.clone()).is_none(),
                "task {id} was claimed twice"
            );
        }
    }
    let tasks = usize::try_from(tasks).unwrap();
    assert_eq!(owners.len(), tasks, "every task claimed once");
    assert_eq!(refused, (count - 1) * tasks, "every other claim refused");
    for (id, owner) in owners {
        assert_eq!(task(sandbox, id)["owner"], owner.as_str(), "task {id}");
    }
    wins
}

/// Eight claimers, each running `swarm task claim` once per task, race for `tasks` tasks: each is
/// claimed exactly once.
fn eight_claimers_race(tasks: u64) {
    const CLAIMERS: usize = 8;
    let sandbox = Sandbox::new();
    let names: Vec<String> = (0..CLAIMERS).map(|n| format!("c{n}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    sandbox.team("t", &refs);
    for n in 1..=tasks {
        assert_eq!(add(&sandbox, &format!("task {n}")), n);
    }
    let claimers = names
        .iter()
        .enumerate()
        .map(|(k, name)| swarm_claimer(&sandbox, name, order(k, CLAIMERS, tasks)))
        .collect();
    check_claims(&sandbox, claimers, tasks);
}

#[test]
fn eight_claimers_racing_for_the_same_tasks_claim_each_exactly_once() {
    eight_claimers_race(20);
}

#[test]
#[ignore = "stress tier: scripts/stress runs it"]
fn eight_claimers_racing_for_the_same_tasks_claim_each_exactly_once_under_stress() {
    eight_claimers_race(200);
}

/// Claude Code's claim, in node with the real proper-lockfile and Claude Code's settings: under
/// the task's lock (lockfilePath `<id>.json.lock`, 30 retries between 5 and 100 ms, stale after
/// 10 s), read the task, refuse already_claimed, already_resolved or blocked, else write the
/// owner and in_progress (2-space JSON, as Claude Code writes it). One line per claim on stdout:
/// `won ID` or `refused ID REASON`.
const NODE_CLAIMER: &str = r#"
const fs = require("fs");
const path = require("path");
const lockfile = require("proper-lockfile");
const [dir, me, ids] = process.argv.slice(2);
const file = (id) => path.join(dir, `${id}.json`);
const read = (id) => JSON.parse(fs.readFileSync(file(id), "utf8"));
(async () => {
  for (const id of ids.split(",")) {
    const release = await lockfile.lock(file(id), {
      lockfilePath: `${file(id)}.lock`,
      retries: { retries: 30, minTimeout: 5, maxTimeout: 100 },
      stale: 10000,
    });
    let reason = null;
    try {
      const task = read(id);
      if (task.owner && task.owner !== me) reason = "already_claimed";
      else if (task.status === "completed") reason = "already_resolved";
      else if ((task.blockedBy || []).some((b) => fs.existsSync(file(b)) && read(b).status !== "completed"))
        reason = "blocked";
      else {
        task.owner = me;
        task.status = "in_progress";
        fs.writeFileSync(file(id), JSON.stringify(task, null, 2));
      }
    } finally {
      await release();
    }
    console.log(reason ? `refused ${id} ${reason}` : `won ${id}`);
  }
})().catch((err) => { console.error(err); process.exit(1); });
"#;

/// Installs proper-lockfile 4 into `dir` with npm and writes the claimer beside it; `None`, the
/// test skipped, when node or npm is missing.
fn node_claimer_script(dir: &std::path::Path) -> Option<PathBuf> {
    if !require("node") || !require("npm") {
        return None;
    }
    let out = std::process::Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(dir)
        .arg("proper-lockfile@4")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "npm install proper-lockfile@4: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let script = dir.join("claim.js");
    fs::write(&script, NODE_CLAIMER).unwrap();
    Some(script)
}

/// A claimer that is Claude Code's lock protocol in node, one process claiming `ids` in order.
fn node_claimer(
    sandbox: &Sandbox,
    script: &std::path::Path,
    name: &str,
    ids: &[u64],
) -> thread::JoinHandle<Claims> {
    let ids: Vec<String> = ids.iter().map(u64::to_string).collect();
    let mut command = std::process::Command::new("node");
    command
        .arg(script)
        .arg(list_dir(sandbox))
        .arg(name)
        .arg(ids.join(","));
    let name = name.to_owned();
    thread::spawn(move || {
        let output = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "node claimer {name}: {stderr}");
        let mut won = Vec::new();
        let mut refused = 0;
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            match line.split(' ').collect::<Vec<_>>()[..] {
                ["won", id] => won.push(id.parse().unwrap()),
                ["refused", _, "already_claimed"] => refused += 1,
                _ => panic!("node claimer {name}: {line}"),
            }
        }
        (name, won, refused)
    })
}

/// Eight claimers race for `tasks` tasks, the even ones swarm, the odd ones Claude Code's claim in
/// node: each task is claimed exactly once, and nothing is left locked.
fn claims_race_with_node(tasks: u64) {
    const CLAIMERS: usize = 8;
    let sandbox = Sandbox::new();
    let npm_dir = sandbox.root().join("npm");
    fs::create_dir_all(&npm_dir).unwrap();
    let Some(script) = node_claimer_script(&npm_dir) else {
        return;
    };
    let names: Vec<String> = (0..CLAIMERS).map(|n| format!("c{n}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    sandbox.team("t", &refs);
    for n in 1..=tasks {
        assert_eq!(add(&sandbox, &format!("task {n}")), n);
    }
    // Even claimers are swarm, odd ones node.
    let claimers = names
        .iter()
        .enumerate()
        .map(|(k, name)| {
            if k % 2 == 0 {
                swarm_claimer(&sandbox, name, order(k, CLAIMERS, tasks))
            } else {
                node_claimer(&sandbox, &script, name, &order(k, CLAIMERS, tasks))
            }
        })
        .collect();
    let wins = check_claims(&sandbox, claimers, tasks);
    eprintln!("tasks won (even: swarm, odd: node): {wins:?}");
    // Nothing was left locked, and swarm still reads and writes every task.
    assert!(
        fs::read_dir(list_dir(&sandbox)).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .ends_with(".json.lock")),
        "no lock directory left"
    );
    assert_eq!(listed(&sandbox).len(), usize::try_from(tasks).unwrap());
}

#[test]
fn claims_race_with_claude_codes_own_lock_protocol_in_node() {
    claims_race_with_node(20);
}

#[test]
#[ignore = "stress tier: scripts/stress runs it"]
fn claims_race_with_claude_codes_own_lock_protocol_in_node_under_stress() {
    claims_race_with_node(200);
}

#[test]
fn claude_codes_own_fields_survive_swarms_updates() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    let dir = list_dir(&sandbox);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join(".lock"), "").unwrap();
    let written = json!({
        "id": "1", "subject": "Write the parser", "description": "by hand",
        "activeForm": "Writing the parser", "status": "pending", "blocks": [], "blockedBy": [],
        "metadata": {"source": "claude"}, "futureField": [1, 2]
    });
    fs::write(
        dir.join("1.json"),
        serde_json::to_string_pretty(&written).unwrap(),
    )
    .unwrap();
    let internal = json!({"id": "2", "subject": "bob", "description": "", "status": "in_progress",
        "blocks": [], "blockedBy": [], "metadata": {"_internal": true}});
    fs::write(dir.join("2.json"), internal.to_string()).unwrap();
    fs::write(dir.join(".highwatermark"), "2").unwrap();

    let listed = listed(&sandbox);
    assert_eq!(listed.len(), 1, "internal tasks are hidden: {listed:?}");
    let all = sandbox
        .swarm()
        .args(["task", "list", "--all", "--json"])
        .team("t")
        .run()
        .success()
        .json();
    assert_eq!(all.as_array().unwrap().len(), 2);

    sandbox
        .swarm()
        .args(["task", "start", "1"])
        .team("t")
        .as_("bob")
        .run()
        .success();
    sandbox
        .swarm()
        .args(["task", "done", "1", "--note", "ok"])
        .team("t")
        .as_("bob")
        .run()
        .success();
    let after = task(&sandbox, 1);
    let keys: Vec<&String> = after.as_object().unwrap().keys().collect();
    assert_eq!(
        &keys[..9],
        [
            "id",
            "subject",
            "description",
            "activeForm",
            "status",
            "blocks",
            "blockedBy",
            "metadata",
            "futureField"
        ]
    );
    assert_eq!(after["futureField"], json!([1, 2]));
    assert_eq!(after["metadata"], json!({"source": "claude", "note": "ok"}));
    assert_eq!(after["status"], "completed");
    assert_eq!(after["owner"], "bob");
    let text = fs::read_to_string(dir.join("1.json")).unwrap();
    assert!(
        text.starts_with("{\n  \"id\": \"1\""),
        "2-space pretty print:\n{text}"
    );
    // The next id follows the high-water mark Claude Code left.
    assert_eq!(add(&sandbox, "next"), 3);
}

#[test]
fn claims_are_refused_with_claude_codes_reasons() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob", "amy"]);
    add(&sandbox, "first");
    sandbox
        .swarm()
        .args(["task", "add", "second", "--blocked-by", "1"])
        .team("t")
        .run()
        .success();
    let claim = |who: &str, id: &str| {
        sandbox
            .swarm()
            .args(["task", "claim", id])
            .team("t")
            .as_(who)
    };
    claim("bob", "2").run().refused(2, "blocked");
    claim("bob", "9").run().refused(3, "task_not_found");
    claim("bob", "1").run().success();
    claim("amy", "1").run().refused(2, "already_claimed");
    let refused = claim("amy", "1").arg("--json").run().code(2);
    let error: Value = serde_json::from_str(refused.stderr.trim()).unwrap();
    assert_eq!(error["reason"], "already_claimed");
    assert_eq!(error["kind"], "usage");
    add(&sandbox, "third");
    sandbox
        .swarm()
        .args(["task", "claim", "--exclusive"])
        .team("t")
        .as_("bob")
        .run()
        .refused(2, "busy");
    sandbox
        .swarm()
        .args(["task", "done", "1"])
        .team("t")
        .as_("bob")
        .run()
        .success();
    claim("bob", "1").run().refused(2, "already_resolved");
    // Without an id: the first available, now task 2.
    let claimed = sandbox
        .swarm()
        .args(["task", "claim", "--json"])
        .team("t")
        .as_("amy")
        .run()
        .success()
        .json();
    assert_eq!(claimed["id"], "2");
    assert_eq!(task(&sandbox, 1)["blocks"], json!(["2"]));
    sandbox
        .swarm()
        .args(["task", "update", "1", "--blocked-by", "3"])
        .team("t")
        .run()
        .success();
    sandbox
        .swarm()
        .args(["task", "update", "3", "--blocked-by", "2"])
        .team("t")
        .run()
        .refused(2, "cannot block");
}

#[test]
fn bad_input_is_refused_and_nothing_is_written() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    let dir = list_dir(&sandbox);
    sandbox
        .swarm()
        .args(["task", "list"])
        .team("t")
        .run()
        .refused(3, "no task list yet");
    sandbox
        .swarm()
        .args(["task", "claim", "1"])
        .team("t")
        .as_("bob")
        .run()
        .refused(3, "no task list yet");
    sandbox
        .swarm()
        .args(["task", "add", "x", "--owner", "nobody"])
        .team("t")
        .run()
        .refused(3, "nobody");
    let huge = "d".repeat(1024 * 1024 + 1);
    sandbox
        .swarm()
        .args(["task", "add", "x", "--description", "-"])
        .stdin(huge)
        .team("t")
        .run()
        .refused(2, "at most");
    assert!(!dir.exists(), "nothing was written");
    add(&sandbox, "one");
    let before: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    for bad in ["abc", "01", "1.5", "", "+1"] {
        sandbox
            .swarm()
            .args(["task", "claim", bad])
            .team("t")
            .as_("bob")
            .run()
            .refused(2, "bad task id");
    }
    sandbox
        .swarm()
        .args(["task", "add", "y", "--blocked-by", "7"])
        .team("t")
        .run()
        .refused(3, "task_not_found");
    sandbox
        .swarm()
        .args(["task", "claim", "7"])
        .team("t")
        .as_("bob")
        .run()
        .refused(3, "task_not_found");
    sandbox
        .swarm()
        .args(["task", "assign", "1", "nobody"])
        .team("t")
        .run()
        .refused(3, "nobody");
    let mut after: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let mut before = before;
    before.sort();
    after.sort();
    assert_eq!(before, after);
    assert_eq!(task(&sandbox, 1)["owner"], Value::Null);
}

#[test]
fn a_stale_lock_directory_is_taken_over_and_a_live_one_waited_for() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    add(&sandbox, "one");
    let held = list_dir(&sandbox).join("1.json.lock");
    fs::create_dir(&held).unwrap();
    // A live holder (fresh mtime) is waited for, then named.
    sandbox
        .swarm()
        .args(["task", "claim", "1"])
        .team("t")
        .as_("bob")
        .env("SWARM_LOCK_TIMEOUT", "0.2")
        .run()
        .refused(1, "1.json.lock");
    assert_eq!(task(&sandbox, 1)["owner"], Value::Null);
    let old = SystemTime::now() - Duration::from_secs(60);
    fs::File::open(&held).unwrap().set_modified(old).unwrap();
    sandbox
        .swarm()
        .args(["task", "claim", "1"])
        .team("t")
        .as_("bob")
        .run()
        .success();
    assert_eq!(task(&sandbox, 1)["owner"], "bob");
    assert!(!held.exists(), "the stale lock was taken over and released");
}

#[test]
fn writers_killed_at_any_moment_leave_readable_tasks_and_no_lasting_lock() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    add(&sandbox, "one");
    add(&sandbox, "two");
    for round in 0..40u64 {
        let mut child = sandbox
            .swarm()
            .args(["task", "update", "2", "--blocked-by", "1", "--description"])
            .arg(format!("round {round}"))
            .team("t")
            .into_command()
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        thread::sleep(Duration::from_micros(round * 500 % 20_000));
        let _ = kill(Pid::from_raw(child.id().cast_signed()), Signal::SIGKILL);
        let _ = child.wait();
        for id in [1, 2] {
            let value = task(&sandbox, id);
            assert_eq!(value["id"], id.to_string(), "round {round}: {value}");
        }
    }
    // No lock left behind blocks anyone: the next update goes through at once.
    sandbox
        .swarm()
        .args(["task", "update", "2", "--description", "after"])
        .team("t")
        .env("SWARM_LOCK_TIMEOUT", "1")
        .run()
        .success();
    sandbox
        .swarm()
        .args(["task", "add", "three", "--blocked-by", "2"])
        .team("t")
        .env("SWARM_LOCK_TIMEOUT", "1")
        .run()
        .success();
    assert_eq!(task(&sandbox, 2)["description"], "after");
}

#[test]
fn task_wait_all_returns_when_the_board_is_done() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    add(&sandbox, "one");
    add(&sandbox, "two");
    sandbox
        .swarm()
        .args(["task", "wait", "--all", "--timeout", "0.3"])
        .team("t")
        .run()
        .refused(4, "not all completed");
    let waiter = sandbox
        .swarm()
        .args(["task", "wait", "--all", "--timeout", "60"])
        .team("t")
        .spawn();
    for id in ["1", "2"] {
        sandbox
            .swarm()
            .args(["task", "done", id])
            .team("t")
            .as_("bob")
            .run()
            .success();
    }
    assert_eq!(waiter.next_line(), "completed task 1: one");
    assert_eq!(waiter.next_line(), "completed task 2: two");
    let (status, err) = waiter.finish();
    assert!(status.success(), "{err}");
}

#[test]
fn assign_sets_the_owner_and_sends_a_task_assignment() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    add(&sandbox, "one");
    sandbox
        .swarm()
        .args(["task", "assign", "1", "bob"])
        .team("t")
        .run()
        .success();
    assert_eq!(task(&sandbox, 1)["owner"], "bob");
    let inbox = sandbox.inbox("t", "bob");
    let last: Value =
        serde_json::from_str(inbox.last().unwrap()["text"].as_str().unwrap()).unwrap();
    assert_eq!(last["type"], "task_assignment");
    assert_eq!(last["taskId"], "1");
    // A teammate may not assign.
    sandbox
        .swarm()
        .args(["task", "assign", "1", "bob"])
        .team("t")
        .as_("bob")
        .run()
        .code(2);
}

#[test]
fn a_member_that_ends_holding_a_task_returns_it_and_the_lead_is_told() {
    use crate::harness::{TmuxServer, bin, eventually};
    let sandbox = Sandbox::new();
    let server = TmuxServer::start(&sandbox);
    // bob claims task 1 as soon as there is one, starts it, and exits.
    let file = sandbox.write(
        "t.toml",
        format!(
            "name = \"t\"\n[lead]\ncommand = [\"sleep\", \"1000\"]\n\
             [[member]]\nname = \"bob\"\n\
             command = [\"sh\", \"-c\", \"until \\\"$0\\\" task start 1; do sleep 0.1; done\", \"{}\"]\n",
            bin()
        ),
    );
    sandbox
        .swarm()
        .arg("up")
        .arg(&file)
        .arg("--socket")
        .arg(server.socket())
        .run()
        .success();
    add(&sandbox, "parse");
    add(&sandbox, "lex");
    let plain = || -> Vec<Value> {
        sandbox
            .inbox("t", "team-lead")
            .into_iter()
            .filter(|m| m["from"] == "bob" && m["text"].as_str().unwrap().contains("pending again"))
            .collect()
    };
    eventually("the lead to hear of bob's tasks", || !plain().is_empty());
    // The lead is told just before the task is written.
    eventually("task 1 to be pending with no owner", || {
        let one = task(&sandbox, 1);
        one["status"] == "pending" && one.get("owner").is_none()
    });
    assert_eq!(task(&sandbox, 2)["status"], "pending");
    let told = plain();
    assert_eq!(told.len(), 1, "{told:#?}");
    assert_eq!(
        told[0]["text"],
        "bob ended with open tasks; they are pending again, with no owner: 1 (parse)"
    );
    eventually("bob to be recorded", || {
        sandbox.member("t", "bob")["state"] == "exited"
    });
}

#[test]
fn completing_a_task_tells_the_owners_of_the_tasks_it_unblocked() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob", "amy"]);
    let run = |args: &[&str]| {
        sandbox.swarm().args(args).team("t").run().success();
    };
    add(&sandbox, "parse");
    run(&["task", "add", "lex", "--blocked-by", "1", "--owner", "bob"]);
    add(&sandbox, "plan");
    run(&[
        "task",
        "add",
        "emit",
        "--blocked-by",
        "1",
        "3",
        "--owner",
        "amy",
    ]);
    run(&["task", "add", "docs", "--blocked-by", "1"]);
    let told = |who: &str| -> Vec<String> {
        sandbox
            .inbox("t", who)
            .iter()
            .filter_map(|m| m["text"].as_str())
            .filter(|text| text.contains("no longer blocked"))
            .map(str::to_owned)
            .collect()
    };
    run(&["task", "done", "1"]);
    assert_eq!(
        told("bob"),
        ["task 1 (parse) is completed: your task 2 (lex) is no longer blocked"]
    );
    assert!(told("amy").is_empty(), "task 4 still waits for task 3");
    // Completing it again, or by update, tells nobody twice; update tells as done does.
    run(&["task", "done", "1"]);
    run(&["task", "update", "3", "--status", "completed"]);
    assert_eq!(told("bob").len(), 1);
    assert_eq!(
        told("amy"),
        ["task 3 (plan) is completed: your task 4 (emit) is no longer blocked"]
    );
    let message = sandbox.inbox("t", "amy").pop().unwrap();
    assert_eq!(message["from"], "team-lead");
}

#[test]
fn status_shows_each_members_current_task_and_the_boards_counts() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob", "amy"]);
    let status = || {
        sandbox
            .swarm()
            .args(["status"])
            .team("t")
            .env("COLUMNS", "200")
            .run()
            .success()
            .stdout
    };
    assert!(!status().contains("tasks:"), "no board, no counts");
    add(&sandbox, "parse");
    add(&sandbox, "lex");
    add(&sandbox, "emit");
    for (who, id) in [("bob", "1"), ("amy", "3")] {
        sandbox
            .swarm()
            .args(["task", "start", id])
            .team("t")
            .as_(who)
            .run()
            .success();
    }
    sandbox
        .swarm()
        .args(["task", "done", "3"])
        .team("t")
        .as_("amy")
        .run()
        .success();
    let text = status();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].ends_with("tasks: 1 pending, 1 in progress, 1 completed"),
        "{text}"
    );
    assert!(lines[1].trim_end().ends_with("TASK"), "{text}");
    let row = |name: &str| {
        lines
            .iter()
            .find(|l| l.starts_with(name))
            .unwrap()
            .trim_end()
            .to_owned()
    };
    assert!(row("bob").ends_with(" 1 parse"), "{text}");
    assert!(
        row("amy").ends_with(" -"),
        "a completed task is no current task: {text}"
    );
    let json = sandbox
        .swarm()
        .args(["status", "--json"])
        .team("t")
        .run()
        .success()
        .json();
    assert_eq!(
        json["tasks"],
        json!({"pending": 1, "inProgress": 1, "completed": 1})
    );
    let bob = &json["members"].as_array().unwrap()[1];
    assert_eq!(bob["task"], json!({"id": "1", "subject": "parse"}));
}

/// A team file whose `[[task]]` entries name each other by key; the blocked one comes first.
const TEAM_WITH_TASKS: &str = r#"name = "t"

[[member]]
name = "a"
command = "true"

[[task]]
key = "build"
subject = "Build it"
blocked_by = ["design"]
owner = "a"

[[task]]
key = "design"
subject = "Design it"
description = "on paper"
"#;

#[test]
fn team_file_tasks_are_made_at_init_blockers_first_with_ids_for_keys() {
    let sandbox = Sandbox::new();
    let file = sandbox.write("t.toml", TEAM_WITH_TASKS);
    let out = sandbox
        .swarm()
        .args(["init", "--json"])
        .arg(&file)
        .run()
        .success();
    assert_eq!(out.json()["tasks"], json!({"design": 1, "build": 2}));
    let design = task(&sandbox, 1);
    let build = task(&sandbox, 2);
    assert_eq!(design["subject"], "Design it");
    assert_eq!(design["description"], "on paper");
    assert_eq!(design["blocks"], json!(["2"]));
    assert_eq!(design["metadata"]["team_file_key"], "design");
    assert_eq!(build["blockedBy"], json!(["1"]));
    assert_eq!(build["owner"], "a");
    assert_eq!(build["status"], "pending");
}

#[test]
fn a_second_up_of_the_team_makes_its_tasks_no_second_time() {
    let sandbox = Sandbox::new();
    // Nothing to run: `up` makes the team on disk and opens no window.
    let text = TEAM_WITH_TASKS
        .replace("[[member]]\nname = \"a\"\ncommand = \"true\"\n", "")
        .replace("owner = \"a\"", "owner = \"team-lead\"");
    let file = sandbox.write("t.toml", text);
    sandbox.swarm().arg("up").arg(&file).run().success();
    sandbox.swarm().arg("up").arg(&file).run().success();
    let files = fs::read_dir(list_dir(&sandbox))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".json")
        })
        .count();
    assert_eq!(files, 2, "the second up made no tasks");
}

#[test]
fn an_unknown_key_a_circle_or_an_unknown_owner_is_refused_before_anything_is_made() {
    let sandbox = Sandbox::new();
    for (bad, needle) in [
        (
            TEAM_WITH_TASKS.replace("[\"design\"]", "[\"nope\"]"),
            "\"nope\", which no [[task]]",
        ),
        (
            TEAM_WITH_TASKS.replace("description = \"on paper\"", "blocked_by = [\"build\"]"),
            "form a circle",
        ),
        (
            TEAM_WITH_TASKS.replace("owner = \"a\"", "owner = \"zed\""),
            "\"zed\"",
        ),
    ] {
        let file = sandbox.write("t.toml", bad);
        for command in ["init", "up"] {
            sandbox
                .swarm()
                .arg(command)
                .arg(&file)
                .run()
                .refused(2, needle);
        }
        let dry = sandbox.swarm().args(["up", "--dry-run"]).arg(&file).run();
        dry.refused(2, needle);
        assert!(!sandbox.team_dir("t").exists());
        assert!(!list_dir(&sandbox).exists());
    }
}

#[test]
fn up_dry_run_shows_the_team_files_tasks() {
    let sandbox = Sandbox::new();
    let file = sandbox.write("t.toml", TEAM_WITH_TASKS);
    let out = sandbox
        .swarm()
        .args(["up", "--dry-run", "--json"])
        .arg(&file)
        .run()
        .success();
    let tasks = &out.json()["tasks"];
    assert_eq!(tasks[0]["key"], "design");
    assert_eq!(tasks[1]["blocked_by"], json!(["design"]));
    sandbox
        .swarm()
        .args(["up", "--dry-run"])
        .arg(&file)
        .run()
        .success()
        .stdout_has("build         Build it  (blocked by design)  (owner a)");
    assert!(!list_dir(&sandbox).exists());
}

/// `up --wait` on a team with tasks ends once its members have, shows the board as it ends, and
/// exits 0 only when every task is completed.
#[test]
fn up_wait_shows_the_board_at_the_end_and_fails_while_a_task_is_open() {
    let sandbox = Sandbox::new();
    let server = crate::harness::TmuxServer::unstarted(&sandbox);
    // The worker claims the first available task and completes it: that leaves the board done
    // for "one", and "two"'s second task open.
    let worker = "sh -c 'id=$(swarm task claim --json | sed -n \"s/.*\\\"id\\\": *\\\"\\([0-9]*\\)\\\".*/\\1/p\" | head -n 1); swarm task done $id'";
    for (team, tasks) in [("one", 1), ("two", 2)] {
        let mut toml = format!(
            "name = \"{team}\"\n[[member]]\nname = \"w\"\ncommand = [\"sh\", \"-c\", {}]\n",
            toml_string(worker)
        );
        for n in 0..tasks {
            let _ = write!(toml, "[[task]]\nkey = \"k{n}\"\nsubject = \"job {n}\"\n");
        }
        let file = sandbox.write(&format!("{team}.toml"), toml);
        let run = sandbox
            .swarm()
            .arg("up")
            .arg(&file)
            .args(["--wait", "--timeout", "120", "--socket"])
            .arg(server.socket())
            .env("PATH", sandbox.path_with_swarm())
            .run();
        let code = i32::from(tasks != 1);
        assert_eq!(
            run.status.code(),
            Some(code),
            "{team}: {}{}",
            run.stdout,
            run.stderr
        );
        let expected = if tasks == 1 {
            "the board is done:"
        } else {
            "the board is not done: 1 task open"
        };
        assert!(run.stdout.contains(expected), "{team}: {}", run.stdout);
        assert!(run.stdout.contains("job 0"), "{team}: {}", run.stdout);
    }
}

/// `s` as a TOML basic string.
fn toml_string(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// `swarm task ARGS` in team `t`, as member `who` (else as the person at the keyboard).
fn task_as(sandbox: &Sandbox, who: Option<&str>, args: &[&str]) -> crate::harness::Outcome {
    let swarm = sandbox.swarm().arg("task").args(args).team("t");
    match who {
        Some(who) => swarm.as_(who).run(),
        None => swarm.run(),
    }
}

/// A task file named with the largest id a u64 holds, or a high-water mark that large, is no
/// task swarm can count from: the next id does not wrap, and `task add` goes on working.
#[test]
fn an_id_at_the_top_of_the_range_wedges_no_board() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    assert_eq!(add(&sandbox, "one"), 1);
    let top = u64::MAX.to_string();
    fs::write(
        list_dir(&sandbox).join(format!("{top}.json")),
        json!({"id": top, "subject": "far away", "description": "", "status": "pending",
               "blocks": [], "blockedBy": []})
        .to_string(),
    )
    .unwrap();
    assert_eq!(add(&sandbox, "two"), 2);
    assert_eq!(add(&sandbox, "three"), 3);
    fs::write(list_dir(&sandbox).join(".highwatermark"), &top).unwrap();
    assert_eq!(add(&sandbox, "four"), 4);
    let listed = task_as(&sandbox, None, &["list", "--json"])
        .success()
        .json();
    let ids: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["1", "2", "3", "4"]);
    task_as(&sandbox, Some("bob"), &["claim", &top]).refused(2, "bad task id");
}

/// What is no task file in the list's folder (a FIFO, a folder, a link named like one) is
/// skipped with a warning by every reader and writer of the board, and its id stays issued.
#[test]
fn junk_named_like_a_task_is_skipped_with_a_warning() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    add(&sandbox, "one");
    add(&sandbox, "two");
    let dir = list_dir(&sandbox);
    nix::unistd::mkfifo(&dir.join("9.json"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    fs::create_dir(dir.join("10.json")).unwrap();
    std::os::unix::fs::symlink(sandbox.root().join("elsewhere"), dir.join("11.json")).unwrap();
    let status = sandbox
        .swarm()
        .args(["status"])
        .team("t")
        .run()
        .success()
        .stdout_has("tasks: 2 pending");
    assert!(status.stderr.contains("9.json"), "{}", status.stderr);
    task_as(&sandbox, None, &["list"]).success().stdout_is(
        "ID  STATUS   OWNER  BLOCKED-BY  SUBJECT\n\
             1   pending  -      -           one\n\
             2   pending  -      -           two\n",
    );
    task_as(&sandbox, Some("bob"), &["start", "1"]).success();
    // A claim reads the tasks in id order up to the one it takes, and what that one waits for:
    // the junk after it is never in its way, and nothing is said of it.
    let claimed = task_as(&sandbox, Some("bob"), &["claim"])
        .success()
        .stdout_is("claimed task 2: two\n");
    assert_eq!(claimed.stderr, "");
    assert_eq!(add(&sandbox, "three"), 12, "the junk's ids count as issued");
    let refused = task_as(&sandbox, Some("bob"), &["done", "9"]).code(1);
    assert!(
        refused.stderr.contains("swarm: task 9 cannot be changed:")
            && refused.stderr.contains("9.json is not a regular file"),
        "{}",
        refused.stderr
    );
    assert!(dir.join("9.json").exists() && dir.join("10.json").is_dir());
}

/// A member that ends while junk sits in the list still returns its tasks; and one whose tasks
/// could not be returned when it ended has them returned by the next command that reads the
/// board.
#[test]
fn a_member_that_ends_beside_junk_still_returns_its_tasks() {
    use crate::harness::{Team, bin, eventually};
    let sandbox = Sandbox::new();
    let fifo = list_dir(&sandbox).join("9.json");
    // bob starts task 1, puts a FIFO in the list, and exits.
    let _team = Team::up(
        &sandbox,
        &format!(
            r#"
name = "t"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "bob"
command = ["sh", "-c", "until \"$0\" task start 1; do sleep 0.1; done; mkfifo \"$1\"", "{}", "{}"]
"#,
            bin(),
            fifo.display(),
        ),
    );
    add(&sandbox, "parse");
    eventually("bob to be recorded", || {
        sandbox.member("t", "bob")["state"] == "exited"
    });
    assert!(fifo.exists());
    eventually("task 1 to be pending with no owner", || {
        let one = task(&sandbox, 1);
        one["status"] == "pending" && one.get("owner").is_none()
    });
    crate::harness::down(&sandbox, "t");
}

/// A member recorded as ended that still owns open tasks (its release did not finish: a crash, a
/// lock held too long, a full disk) has them returned by the next command that touches the
/// board, and the lead is told once.
#[test]
fn a_release_left_unfinished_is_finished_by_the_next_command() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob", "amy"]);
    add(&sandbox, "parse");
    add(&sandbox, "lex");
    for (who, id) in [("bob", "1"), ("amy", "2")] {
        task_as(&sandbox, Some(who), &["start", id]).success();
    }
    // bob ended (as its supervisor records it) without its tasks being returned; amy never ran.
    let path = sandbox.team_dir("t").join("config.json");
    let mut config: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    let bob = config["members"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|m| m["name"] == "bob")
        .unwrap();
    bob["state"] = json!("exited");
    bob["exitCode"] = json!(0);
    bob["startedAt"] = json!(1);
    bob["endedAt"] = json!(2);
    fs::write(&path, serde_json::to_vec_pretty(&config).unwrap()).unwrap();
    for command in [&["status"][..], &["task", "list"]] {
        sandbox.swarm().args(command).team("t").run().success();
        let one = task(&sandbox, 1);
        assert_eq!(one["status"], "pending", "after {command:?}: {one}");
        assert!(one.get("owner").is_none(), "after {command:?}: {one}");
    }
    assert_eq!(task(&sandbox, 2)["owner"], "amy", "amy has not ended");
    let told: Vec<Value> = sandbox
        .inbox("t", "team-lead")
        .into_iter()
        .filter(|m| m["text"].as_str().unwrap().contains("pending again"))
        .collect();
    assert_eq!(told.len(), 1, "{told:#?}");
    assert_eq!(
        told[0]["text"],
        "bob ended with open tasks; they are pending again, with no owner: 1 (parse)"
    );
}

/// One policy for every edit of a task: a teammate changes only tasks that are its own or no
/// one's, and gives a task to no one else; the lead's side may do both.
#[test]
fn every_edit_of_a_task_follows_one_policy() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob", "amy"]);
    add(&sandbox, "amy's");
    add(&sandbox, "free");
    task_as(&sandbox, Some("amy"), &["start", "1"]).success();
    for edit in [
        &["done", "1"][..],
        &["release", "1"],
        &["update", "1", "--owner", "bob", "--status", "completed"],
        &["update", "1", "--status", "completed"],
        &["update", "1", "--subject", "mine now"],
        &["update", "1", "--no-owner"],
    ] {
        task_as(&sandbox, Some("bob"), edit).refused(2, "already_claimed: task 1 is owned by amy");
    }
    let one = task(&sandbox, 1);
    assert_eq!(
        (one["owner"].as_str(), one["subject"].as_str()),
        (Some("amy"), Some("amy's"))
    );
    assert_eq!(one["status"], "in_progress");
    // Giving a task to someone else is assigning it: the lead's.
    for edit in [
        &["update", "2", "--owner", "amy"][..],
        &["add", "more", "--owner", "amy"],
    ] {
        task_as(&sandbox, Some("bob"), edit).refused(2, "may assign a task; bob is a teammate");
    }
    assert!(task(&sandbox, 2).get("owner").is_none());
    assert!(!list_dir(&sandbox).join("3.json").exists());
    // What is the teammate's own, or no one's, it may change.
    task_as(
        &sandbox,
        Some("bob"),
        &["update", "2", "--subject", "free for all"],
    )
    .success();
    task_as(&sandbox, Some("bob"), &["update", "2", "--owner", "bob"]).success();
    task_as(
        &sandbox,
        Some("bob"),
        &["update", "2", "--status", "completed"],
    )
    .success();
    task_as(&sandbox, Some("bob"), &["add", "mine", "--owner", "bob"]).success();
    // The person at the keyboard has the lead's authority over every task.
    task_as(&sandbox, None, &["update", "1", "--owner", "bob"]).success();
    task_as(&sandbox, Some("bob"), &["done", "1"]).success();
}

/// `task claim` with nothing to claim finds nothing (exit 3), as README and the help say; a
/// claim refused by a rule is exit 2.
#[test]
fn claiming_with_nothing_available_is_not_found() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    add(&sandbox, "one");
    task_as(&sandbox, Some("bob"), &["claim"]).success();
    let none = task_as(&sandbox, Some("bob"), &["claim", "--json"]).code(3);
    let none: Value = serde_json::from_str(none.stderr.trim()).unwrap();
    assert_eq!(none["kind"], "not_found");
    assert_eq!(none["reason"], "none_available");
    let readme = fs::read_to_string(crate::harness::repo().join("README.md")).unwrap();
    assert!(
        readme.contains("nothing available exits 3"),
        "README says what a claim with nothing available exits with"
    );
    let help = sandbox
        .swarm()
        .args(["task", "claim", "--help"])
        .run()
        .success();
    assert!(
        help.stdout.contains("none_available (exit 3)"),
        "{}",
        help.stdout
    );
}

/// Every edit of a task that does not exist is refused as `task_not_found`, exit 3: `done` once
/// panicked ("task 9 changed without its lock"), exit 101, found through `swarm mcp`'s task_done.
#[test]
fn an_edit_of_a_task_that_does_not_exist_is_task_not_found() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    add(&sandbox, "first");
    for edit in [
        &["task", "done", "9"][..],
        &["task", "start", "9"],
        &["task", "update", "9", "--subject", "x"],
        &["task", "release", "9"],
    ] {
        sandbox
            .swarm()
            .args(edit)
            .team("t")
            .as_("bob")
            .run()
            .refused(3, "task_not_found");
    }
}
