//! Resuming a team across hosts (docs/ARCHITECTURE.md, "Resuming a team"): after a reboot of every
//! host, each node judges its own members when it starts, so the lead's host sees the team
//! interrupted; `swarm resume` there resumes its own members and asks each other host's node to
//! resume its members, with new keys made on the lead's host. Each "host" is its own sandbox,
//! private tmux server and `swarm node`, sharing one real nats-server on loopback.

use std::fs;

use serde_json::Value;

use crate::harness::{LEAD, sandbox_processes};
use crate::nats_harness::{Host, NatsServer, Node, team_file};
use crate::resume::{FAKE_CLAUDE, launches, value_of};

/// Two hosts with team `t` up from A: the lead on A, `bob` on B, a claude member (the fake one,
/// recording its argv on B). `bob` has one unread message from the lead, verified.
fn up_with_claude_on_b() -> (NatsServer, Host, Host) {
    let server = NatsServer::start();
    let a = Host::start("hosta", &server);
    let mut b = Host::start("hostb", &server);
    // B's node, which starts bob there, runs with the fake claude first on its PATH.
    b.sandbox.shim("claude", FAKE_CLAUDE);
    b.node.kill();
    b.node = Node::start(&b.sandbox, "hostb", &server.url());
    let record = b.sandbox.root().join("record");
    fs::create_dir_all(&record).unwrap();
    let claude_dir = b.sandbox.root().join("claude-config");
    a.up(
        "t",
        &format!(
            "name = \"t\"\n{LEAD}\n[[member]]\nname = \"bob\"\nhost = \"hostb\"\n\
             profile = \"claude\"\nenv = {{ FAKE_CLAUDE_DIR = {:?}, CLAUDE_CONFIG_DIR = {:?} }}\n",
            record.display().to_string(),
            claude_dir.display().to_string()
        ),
    );
    Host::until(&[&a, &b], "bob's fake claude to start on B", || {
        launches(&b.sandbox, "bob").len() == 1
    });
    Host::until(&[&a, &b], "A to show bob running", || {
        a.shows("t", "bob", "running")
    });
    a.sandbox
        .swarm()
        .args(["send", "bob", "keep going", "--team", "t"])
        .run()
        .success();
    Host::until(&[&a, &b], "the lead's message to reach bob on B", || {
        unread_on(&b, "bob").len() == 1
    });
    assert_eq!(unread_on(&b, "bob")[0]["verified"], true);
    (server, a, b)
}

/// Two hosts with team `name` up from A: the lead on A, `bob` (a `sleep`) on B, running.
fn up_with_bob_on_b(name: &str) -> (NatsServer, Host, Host) {
    let server = NatsServer::start();
    let a = Host::start("hosta", &server);
    let b = Host::start("hostb", &server);
    a.up(name, &team_file(name, "sleep 1000", ""));
    Host::until(&[&a, &b], "A to show bob running", || {
        a.shows(name, "bob", "running")
    });
    (server, a, b)
}

/// `member`'s unread messages as its own reader on `host` shows them, each judged with the key
/// it runs with.
fn unread_on(host: &Host, member: &str) -> Vec<Value> {
    host.sandbox
        .swarm()
        .args(["inbox", member, "--json", "--team", "t"])
        .run()
        .success()
        .json()
        .as_array()
        .unwrap()
        .clone()
}

/// A reboot of both hosts as it is: every process of each (node, tmux server, supervisors,
/// programs, signing agent) SIGKILLed, with no chance to record anything.
fn reboot(hosts: &mut [&mut Host]) {
    for host in hosts.iter_mut() {
        host.node.kill();
    }
    for host in hosts.iter() {
        for pid in sandbox_processes(host.sandbox.root()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
    for host in hosts.iter() {
        Host::until(&[host], "every process of the host to be gone", || {
            sandbox_processes(host.sandbox.root()).is_empty()
        });
    }
}

/// Restarts the nodes of `hosts` after a reboot, and waits until each sees every other one alive
/// again (a node just started is seen once it has beaten twice).
fn restart_nodes(hosts: &mut [&mut Host]) {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    for host in hosts.iter_mut() {
        host.node.restart();
    }
    let names: Vec<String> = hosts
        .iter()
        .map(|host| {
            host.node.record().unwrap()["name"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    for host in hosts.iter() {
        let file = host.sandbox.home().join("node/hosts.json");
        Host::until(&[host], "the node to see every host alive again", || {
            let Ok(text) = fs::read_to_string(&file) else {
                return false;
            };
            let seen: Value = serde_json::from_str(&text).unwrap_or_default();
            seen["writtenMs"]
                .as_u64()
                .is_some_and(|ms| u128::from(ms) >= since)
                && names.iter().all(|name| {
                    seen["alive"]
                        .as_array()
                        .unwrap()
                        .contains(&Value::from(name.as_str()))
                })
        });
    }
}

/// Whether `status` on `host` says team `t` was interrupted.
fn interrupted(host: &Host) -> bool {
    host.status("t")["interrupted"] == true
}

/// After a reboot each node judges its own members as it starts: the lead's host, which last
/// heard bob running, sees him interrupted, and so the team, before anything is resumed.
#[test]
fn after_a_reboot_each_node_judges_its_own_members_and_the_team_is_interrupted() {
    let (_server, mut a, mut b) = up_with_claude_on_b();
    reboot(&mut [&mut a, &mut b]);
    restart_nodes(&mut [&mut a, &mut b]);
    Host::until(&[&a, &b], "A to show the team interrupted", || {
        interrupted(&a)
    });
    assert_eq!(a.row("t", "bob")["state"], "killed", "{}", a.status("t"));
    let teams = a
        .sandbox
        .swarm()
        .args(["ls", "--json"])
        .run()
        .success()
        .json();
    assert_eq!(teams[0]["interrupted"], true, "{teams}");
    a.sandbox
        .swarm()
        .arg("ls")
        .run()
        .success()
        .stdout_has("interrupted");
    // B judged bob by its own processes and says the same.
    assert_eq!(b.row("t", "bob")["state"], "killed", "{}", b.status("t"));
    assert_eq!(launches(&b.sandbox, "bob").len(), 1);

    // At login on B, `resume --all` leaves the team to its lead's host.
    b.sandbox
        .swarm()
        .args(["resume", "--all"])
        .run()
        .success()
        .stdout_has("team t is led from host hosta");
    b.sandbox
        .swarm()
        .args(["resume", "t"])
        .run()
        .refused(2, "team t is led from host hosta: resume it there");
    assert_eq!(launches(&b.sandbox, "bob").len(), 1);
    // On A it resumes the team, bob on B through B's node.
    a.sandbox
        .swarm()
        .args(["resume", "--all"])
        .run()
        .success()
        .stdout_has("on host hostb: bob");
    Host::until(&[&a, &b], "bob to start again on B", || {
        launches(&b.sandbox, "bob").len() == 2
    });
    Host::until(&[&a, &b], "A to show bob running", || {
        a.shows("t", "bob", "running")
    });
    a.sandbox
        .swarm()
        .args(["down", "t", "--force"])
        .run()
        .success();
}

/// `swarm resume` on the lead's host brings bob back on B, in his own conversation, with a new
/// key made on A, his unread message from the lead signed again with it.
#[test]
fn resume_on_the_leads_host_resumes_a_member_on_another_host() {
    let (_server, mut a, mut b) = up_with_claude_on_b();
    let session = b.sandbox.member("t", "bob")["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let old_key = b.sandbox.member("t", "bob")["leadVerifyKey"].clone();
    let before = unread_on(&b, "bob");
    reboot(&mut [&mut a, &mut b]);
    restart_nodes(&mut [&mut a, &mut b]);
    Host::until(&[&a, &b], "A to show the team interrupted", || {
        interrupted(&a)
    });

    a.sandbox
        .swarm()
        .args(["resume", "t"])
        .run()
        .success()
        .stdout_has("bob");
    Host::until(&[&a, &b], "bob's fake claude to start again on B", || {
        launches(&b.sandbox, "bob").len() == 2
    });
    let argv = &launches(&b.sandbox, "bob")[1];
    assert_eq!(
        value_of(argv, "--resume").as_deref(),
        Some(session.as_str())
    );
    assert!(!argv.contains(&"--session-id".to_owned()), "{argv:?}");
    let key = b.sandbox.member("t", "bob")["leadVerifyKey"].clone();
    assert_ne!(key, old_key);
    assert_eq!(value_of(argv, "--lead-verify-key").as_deref(), key.as_str());
    // A records the same new key for him.
    assert_eq!(a.sandbox.member("t", "bob")["leadVerifyKey"], key);
    // The message is still unread, and verifies with the new key.
    let after = unread_on(&b, "bob");
    assert_eq!(after.len(), 1, "{after:?}");
    assert_eq!(after[0]["text"], "keep going");
    assert_eq!(after[0]["verified"], true, "{after:?}");
    assert_ne!(after[0]["msg_id"], before[0]["msg_id"]);
    Host::until(&[&a, &b], "A to show bob and the lead running", || {
        a.shows("t", "bob", "running") && a.shows("t", "team-lead", "running")
    });
    assert_eq!(a.status("t")["interrupted"], false);
    a.sandbox
        .swarm()
        .args(["down", "t", "--force"])
        .run()
        .success();
}

/// With B's node not running, nobody can say what became of bob: once the moment given for it
/// to be seen is over, the resume is refused in one line naming the host, and nothing is started.
#[test]
fn a_resume_is_refused_while_another_hosts_node_is_not_running() {
    let (_server, mut a, mut b) = up_with_bob_on_b("r");
    reboot(&mut [&mut a, &mut b]);
    a.node.restart();
    // A's node judges its own members as it starts: the lead's run was cut short.
    Host::until(&[&a], "A's node to judge the lead", || {
        a.sandbox.member("r", "team-lead")["reason"] == "lost"
    });
    let lead_before = a.sandbox.member("r", "team-lead");
    a.sandbox
        .swarm()
        .args(["resume", "r"])
        .run()
        .code(2)
        .stderr_has("waiting up to 10 s for the swarm node of host hostb to be seen")
        .stderr_has(
            "swarm: team r cannot be resumed now: the swarm node of host hostb is not seen from \
             here, so what became of bob there is not known",
        )
        .stdout_is("");
    assert!(a.panes().is_empty(), "{:?}", a.panes());
    assert_eq!(a.sandbox.member("r", "team-lead"), lead_before);
    assert!(
        sandbox_processes(a.sandbox.root()) == vec![i32::try_from(a.node.pid()).unwrap()],
        "{:?}",
        sandbox_processes(a.sandbox.root())
    );
}

/// Task `id` of team `r` as `host`'s file holds it.
fn task_on(host: &Host, id: u64) -> Option<Value> {
    let path = host.sandbox.home().join(format!("tasks/r/{id}.json"));
    serde_json::from_slice(&fs::read(path).ok()?).ok()
}

/// `up --fresh` on the lead's host gives up an interrupted team across hosts: the task bob held
/// on B when the hosts went down goes back to pending, on both hosts, and bob starts afresh.
#[test]
fn up_fresh_on_the_leads_host_gives_back_the_tasks_of_a_member_lost_on_another_host() {
    let (_server, mut a, mut b) = up_with_bob_on_b("r");
    let toml = team_file("r", "sleep 1000", "");
    a.sandbox
        .swarm()
        .args(["task", "add", "write the parser", "--team", "r"])
        .run()
        .success();
    Host::until(&[&a, &b], "task 1 on B", || task_on(&b, 1).is_some());
    b.sandbox
        .swarm()
        .args(["task", "claim", "1"])
        .team("r")
        .as_("bob")
        .run()
        .success();
    Host::until(&[&a, &b], "bob's claim on A", || {
        task_on(&a, 1).is_some_and(|t| t["owner"] == "bob")
    });
    reboot(&mut [&mut a, &mut b]);
    restart_nodes(&mut [&mut a, &mut b]);
    Host::until(&[&a, &b], "A to show the team interrupted", || {
        a.status("r")["interrupted"] == true
    });
    // Interrupted, bob still holds it: a resume would give it back to him.
    assert_eq!(task_on(&a, 1).unwrap()["owner"], "bob");

    let file = a.sandbox.write("r.toml", &toml);
    a.sandbox
        .swarm()
        .arg("up")
        .arg(file)
        .arg("--fresh")
        .arg("--socket")
        .arg(a.tmux.socket())
        .env(
            "SWARM_NATS_URL",
            a.node.record().unwrap()["url"].as_str().unwrap(),
        )
        .run()
        .success();
    for host in [&a, &b] {
        Host::until(&[&a, &b], "task 1 back to pending on each host", || {
            task_on(host, 1).is_some_and(|t| t["status"] == "pending" && t["owner"].is_null())
        });
    }
    Host::until(&[&a, &b], "A to show bob running afresh", || {
        a.shows("r", "bob", "running")
    });
    a.sandbox
        .swarm()
        .args(["down", "r", "--force"])
        .run()
        .success();
}

/// At login the lead's host may resume (`resume --all`, as the unit runs it) before the other
/// host's node is up, while bob is still recorded running there: the resume waits a moment for
/// it, says so on stderr, and resumes bob there once that node is seen.
#[test]
fn a_resume_waits_a_moment_for_another_hosts_node_starting_meanwhile() {
    let (_server, mut a, mut b) = up_with_bob_on_b("w");
    let bob_before = b.sandbox.member("w", "bob")["startedAt"].clone();
    reboot(&mut [&mut a, &mut b]);
    a.node.restart();
    Host::until(&[&a], "A's node to judge the lead", || {
        a.sandbox.member("w", "team-lead")["reason"] == "lost"
    });
    let resume = a
        .sandbox
        .swarm()
        .args(["resume", "--all"])
        .into_command()
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    b.node.restart();
    let output = resume.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("waiting up to 10 s for the swarm node of host hostb"),
        "{stderr}"
    );
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("on host hostb: bob"),
        "{output:?}"
    );
    Host::until(&[&a, &b], "A to show bob and the lead running", || {
        a.shows("w", "bob", "running") && a.shows("w", "team-lead", "running")
    });
    assert_ne!(b.sandbox.member("w", "bob")["startedAt"], bob_before);
    a.sandbox
        .swarm()
        .args(["down", "w", "--force"])
        .run()
        .success();
}

/// A member `spawn` added on B was keyed there; a resume on A keys it anew on A, and its record
/// says so on both hosts (`keyHost`): its unread message is signed again, and the lead's next
/// message to it is signed, verifying with its new key.
#[test]
fn a_member_spawned_on_another_host_is_keyed_on_the_leads_host_when_resumed() {
    let (_server, mut a, mut b) = up_with_bob_on_b("k");
    b.sandbox
        .swarm()
        .args(["spawn", "carol", "--team", "k", "--", "sleep", "1000"])
        .run()
        .success();
    Host::until(&[&a, &b], "A to show carol running", || {
        a.shows("k", "carol", "running")
    });
    assert_eq!(b.sandbox.member("k", "carol")["keyHost"], "hostb");
    a.sandbox
        .swarm()
        .args(["send", "carol", "before", "--team", "k"])
        .run()
        .success();
    let unread = |host: &Host| -> Vec<Value> {
        host.sandbox
            .swarm()
            .args(["inbox", "carol", "--json", "--team", "k"])
            .run()
            .success()
            .json()
            .as_array()
            .unwrap()
            .clone()
    };
    Host::until(&[&a, &b], "the message to reach carol on B", || {
        unread(&b).len() == 1
    });
    reboot(&mut [&mut a, &mut b]);
    restart_nodes(&mut [&mut a, &mut b]);
    Host::until(&[&a, &b], "A to show the team interrupted", || {
        a.status("k")["interrupted"] == true
    });
    a.sandbox
        .swarm()
        .args(["resume", "k"])
        .run()
        .success()
        .stdout_has("on host hostb: bob, carol");
    assert_eq!(a.sandbox.member("k", "carol")["keyHost"], "hosta");
    assert_eq!(b.sandbox.member("k", "carol")["keyHost"], "hosta");
    a.sandbox
        .swarm()
        .args(["send", "carol", "after", "--team", "k"])
        .run()
        .success();
    Host::until(&[&a, &b], "the second message to reach carol on B", || {
        unread(&b).len() == 2
    });
    let mail = unread(&b);
    assert!(
        mail.iter().all(|message| message["verified"] == true),
        "{mail:?}"
    );
    a.sandbox
        .swarm()
        .args(["down", "k", "--force"])
        .run()
        .success();
}
