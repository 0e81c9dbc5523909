//! Messages across hosts: two "hosts" (each a sandbox with its own home and its own `swarm node`)
//! share one real nats-server. A team's config.json, the same on both, puts team-lead and alice
//! on hosta and bob on hostb; members act with `SWARM_AGENT` as scripted members do.

use std::collections::HashSet;
use std::fs;

use serde_json::{Value, json};

use crate::harness::{PATIENCE, Sandbox, Swarm, eventually};
use crate::nats_harness::{NatsServer, Node};

struct Hosts {
    server: NatsServer,
    a: Sandbox,
    b: Sandbox,
    node_a: Node,
    node_b: Node,
}

/// Team `t` on both hosts, each node serving it.
fn two_hosts() -> Hosts {
    let server = NatsServer::start();
    let (a, b) = (Sandbox::new(), Sandbox::new());
    a.team("t", &["alice", "bob"]);
    b.team("t", &["alice", "bob"]);
    let mut config = a.config("t");
    let hosts = json!({"team-lead": "hosta", "alice": "hosta", "bob": "hostb"});
    for member in config["members"].as_array_mut().unwrap() {
        member["host"] = hosts[member["name"].as_str().unwrap()].clone();
    }
    let bytes = serde_json::to_vec_pretty(&config).unwrap();
    for host in [&a, &b] {
        fs::write(host.team_dir("t").join("config.json"), &bytes).unwrap();
    }
    let node_a = Node::start(&a, "hosta", &server.url());
    let node_b = Node::start(&b, "hostb", &server.url());
    for (node, serves) in [
        (
            &node_a,
            "sending for team t: here team-lead, alice; elsewhere bob",
        ),
        (&node_a, "receiving for team t"),
        (
            &node_b,
            "sending for team t: here bob; elsewhere team-lead, alice",
        ),
        (&node_b, "receiving for team t"),
    ] {
        eventually(serves, || node.output().contains(serves));
    }
    Hosts {
        server,
        a,
        b,
        node_a,
        node_b,
    }
}

/// `swarm` on `host`, in team `t`, acting as `member`.
fn acting(host: &Sandbox, member: &str) -> Swarm {
    host.swarm().team("t").as_(member)
}

fn send(host: &Sandbox, from: &str, to: &str, text: &str) -> String {
    acting(host, from)
        .args(["send", to, text])
        .run()
        .success()
        .stdout_line()
}

/// Sends `text` from a member on one host to `address` (a member, or `*`), and waits until it is
/// in the inbox of member `to` on another host with the same `msg_id`; returns the id and the
/// message as it arrived.
fn crosses(
    (here, from): (&Sandbox, &str),
    address: &str,
    (there, to): (&Sandbox, &str),
    text: &str,
) -> (String, Value) {
    let id = send(here, from, address, text);
    let arrived = arrives(there, to, text);
    assert_eq!(arrived["msg_id"], id.as_str(), "{arrived}");
    (id, arrived)
}

/// Waits until `member`'s inbox on `host` holds a message with `text`, and returns it.
#[track_caller]
fn arrives(host: &Sandbox, member: &str, text: &str) -> Value {
    let mut found = None;
    eventually(&format!("{text:?} in {member}'s inbox"), || {
        found = inbox(host, member).into_iter().find(|m| m["text"] == text);
        found.is_some()
    });
    found.unwrap()
}

fn inbox(host: &Sandbox, member: &str) -> Vec<Value> {
    if host.inbox_path("t", member).exists() {
        host.inbox("t", member)
    } else {
        Vec::new()
    }
}

fn recv(host: &Sandbox, member: &str) -> Vec<Value> {
    acting(host, member)
        .args(["recv", "--json"])
        .run()
        .success()
        .json()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn messages_cross_both_ways_and_leave_the_senders_host() {
    let hosts = two_hosts();
    let (id, arrived) = crosses(
        (&hosts.a, "alice"),
        "bob",
        (&hosts.b, "bob"),
        "hello from a",
    );
    assert_eq!(arrived["from"], "alice");
    let got = recv(&hosts.b, "bob");
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["msg_id"], id.as_str());
    eventually("the sent message to leave bob's file on hosta", || {
        inbox(&hosts.a, "bob").is_empty()
    });
    let left = fs::read_to_string(hosts.a.team_dir("t").join("history/bob.jsonl")).unwrap();
    assert!(
        left.contains(&id),
        "hosta's history records what left: {left}"
    );

    crosses(
        (&hosts.b, "bob"),
        "alice",
        (&hosts.a, "alice"),
        "hello from b",
    );
    let got = recv(&hosts.a, "alice");
    assert_eq!(got[0]["from"], "bob");
    assert!(recv(&hosts.a, "alice").is_empty(), "shown once");
    assert!(recv(&hosts.b, "bob").is_empty(), "shown once");
}

#[test]
fn a_broadcast_reaches_every_member_on_every_host_once() {
    let hosts = two_hosts();
    let (id, copy) = crosses((&hosts.a, "team-lead"), "*", (&hosts.b, "bob"), "standup");
    assert_eq!(copy["broadcast"], true);
    assert_eq!(arrives(&hosts.a, "alice", "standup")["msg_id"], id.as_str());

    let id = send(&hosts.b, "bob", "*", "done here");
    for member in ["team-lead", "alice"] {
        assert_eq!(
            arrives(&hosts.a, member, "done here")["msg_id"],
            id.as_str()
        );
    }
    for member in ["team-lead", "alice"] {
        eventually("the copies to leave hostb", || {
            inbox(&hosts.b, member).is_empty()
        });
    }
}

#[test]
fn a_shutdown_request_crosses_and_its_answer_comes_back() {
    let hosts = two_hosts();
    let waiting = hosts
        .a
        .swarm()
        .args([
            "shutdown", "request", "bob", "--reason", "wrap up", "--wait",
        ])
        .team("t")
        .as_("team-lead")
        .spawn();
    let mut request = None;
    eventually("the request on hostb", || {
        request = inbox(&hosts.b, "bob").into_iter().next();
        request.is_some()
    });
    let text: Value = serde_json::from_str(request.unwrap()["text"].as_str().unwrap()).unwrap();
    assert_eq!(text["type"], "shutdown_request");
    let id = text["requestId"].as_str().unwrap().to_owned();
    acting(&hosts.b, "bob")
        .args(["shutdown", "approve", &id])
        .run()
        .success();
    assert_eq!(waiting.next_line(), format!("bob approved {id}"));
    assert_eq!(waiting.finish().0.code(), Some(0));
}

#[test]
fn claude_codes_message_arrives_with_every_field_intact() {
    let hosts = two_hosts();
    let written = json!({
        "from": "team-lead",
        "text": "review the parser",
        "summary": "review",
        "timestamp": "2026-11-22T08:43:40.970Z",
        "color": "blue",
        "read": false,
        "msgV": 1
    });
    hosts
        .a
        .write_inbox_as_claude("t", "bob", std::slice::from_ref(&written));
    let arrived = arrives(&hosts.b, "bob", "review the parser");
    assert_eq!(arrived, written, "every field, and nothing added");
    eventually("it to leave hosta", || inbox(&hosts.a, "bob").is_empty());
}

#[test]
fn messages_wait_in_the_file_while_the_server_is_down() {
    let mut hosts = two_hosts();
    hosts.server.kill();
    hosts.node_a.wait_connected(false);
    let id = send(&hosts.a, "alice", "bob", "while down");
    // Local messaging keeps working meanwhile.
    send(&hosts.a, "alice", "team-lead", "local");
    assert_eq!(recv(&hosts.a, "team-lead")[0]["text"], "local");
    assert_eq!(inbox(&hosts.a, "bob")[0]["msg_id"], id.as_str());
    hosts.server.restart();
    assert_eq!(
        arrives(&hosts.b, "bob", "while down")["msg_id"],
        id.as_str()
    );
    eventually("it to leave hosta", || inbox(&hosts.a, "bob").is_empty());
}

#[test]
fn a_remote_members_inbox_is_read_on_its_host_only() {
    let hosts = two_hosts();
    send(&hosts.a, "alice", "bob", "for bob");
    arrives(&hosts.b, "bob", "for bob");
    for args in [&["inbox", "bob"][..], &["recv"], &["inbox"]] {
        acting(&hosts.a, "bob")
            .args(args)
            .run()
            .refused(2, "bob runs on host hostb: its inbox is read there");
    }
    let unread = |host: &Sandbox, member: &str| {
        let row = host.status_row("t", member);
        assert!(row.is_object(), "{member} has no row in status");
        row["unread"].clone()
    };
    assert_eq!(unread(&hosts.a, "bob"), Value::Null);
    assert_eq!(unread(&hosts.b, "bob"), json!(1));
    assert_eq!(unread(&hosts.b, "alice"), Value::Null);
    assert_eq!(recv(&hosts.b, "bob")[0]["text"], "for bob");
}

#[test]
fn a_message_too_large_to_cross_is_kept_aside_and_holds_up_nothing() {
    let hosts = two_hosts();
    // Under send's limit as text, twice the server's 1 MiB once every quote is escaped.
    let quotes = "\"".repeat(1_000_000);
    acting(&hosts.a, "alice")
        .args(["send", "bob", "-"])
        .stdin(quotes.clone())
        .run()
        .success();
    let after = send(&hosts.a, "alice", "bob", "after the large one");
    assert_eq!(
        arrives(&hosts.b, "bob", "after the large one")["msg_id"],
        after.as_str()
    );
    eventually("the large one to leave bob's inbox on hosta", || {
        inbox(&hosts.a, "bob").is_empty()
    });
    assert!(inbox(&hosts.b, "bob").iter().all(|m| m["text"] != quotes));
    // Kept whole beside bob's inbox on hosta, and reported there.
    let kept: Vec<_> = fs::read_dir(hosts.a.team_dir("t").join("inboxes"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().contains("bob.json.too-large-"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let held: Vec<Value> = serde_json::from_slice(&fs::read(&kept[0]).unwrap()).unwrap();
    assert_eq!(held.len(), 1);
    assert_eq!(held[0]["text"], quotes.as_str());
    // Neither shown nor sent: history on hosta records the message after it, not this one.
    let history =
        fs::read_to_string(hosts.a.team_dir("t").join("history/bob.jsonl")).unwrap_or_default();
    assert!(history.contains("after the large one"));
    assert!(!history.contains(&quotes));
    hosts
        .a
        .swarm()
        .args(["status", "t"])
        .run()
        .success()
        .stdout_has("too large to cross hosts");
    assert!(
        hosts.node_a.output().contains("over the"),
        "{}",
        hosts.node_a.output()
    );
}

/// 4 writers × `each` messages from hosta to bob on hostb, read by `watch --consume` on hostb,
/// while the server is SIGKILLed and restarted, and then hostb's node: every message arrives, and
/// the reader shows none twice.
fn a_storm_across_hosts(each: usize) {
    const WRITERS: usize = 4;
    let mut hosts = two_hosts();
    let watch = acting(&hosts.b, "bob")
        .args(["watch", "--consume", "--json"])
        .spawn();
    let writers: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let commands: Vec<_> = (0..each)
                .map(|n| {
                    acting(&hosts.a, "alice")
                        .args(["send", "bob", &format!("w{writer} m{n}")])
                        .into_command()
                })
                .collect();
            std::thread::spawn(move || {
                commands
                    .into_iter()
                    .map(|mut command| {
                        let output = command.output().unwrap();
                        assert!(output.status.success(), "{output:?}");
                        String::from_utf8(output.stdout).unwrap().trim().to_owned()
                    })
                    .collect::<Vec<String>>()
            })
        })
        .collect();
    let total = WRITERS * each;
    let mut shown: Vec<String> = Vec::new();
    let mut killed_server = false;
    let mut killed_node = false;
    while shown.len() < total {
        let line = watch.lines.next_within(PATIENCE * 3).unwrap_or_else(|| {
            panic!(
                "{} of {total} shown; node hostb printed:\n{}",
                shown.len(),
                hosts.node_b.output()
            )
        });
        let message: Value = serde_json::from_str(&line).unwrap();
        shown.push(message["msg_id"].as_str().unwrap().to_owned());
        if !killed_server && shown.len() >= total / 8 {
            hosts.server.kill();
            hosts.node_a.wait_connected(false);
            hosts.server.restart();
            killed_server = true;
        }
        if !killed_node && shown.len() >= total / 2 {
            hosts.node_b.restart();
            killed_node = true;
        }
    }
    let sent: HashSet<String> = writers
        .into_iter()
        .flat_map(|writer| writer.join().unwrap())
        .collect();
    assert_eq!(sent.len(), total);
    let distinct: HashSet<&String> = shown.iter().collect();
    assert_eq!(distinct.len(), shown.len(), "a msg_id was shown twice");
    let missing: Vec<&String> = sent.iter().filter(|id| !distinct.contains(id)).collect();
    assert!(missing.is_empty(), "never shown: {missing:?}");
    assert!(killed_server && killed_node);
    // What the reader recorded, once each, and nothing left unread on either host.
    let last = send(&hosts.a, "alice", "bob", "last");
    let line = watch.next_json();
    assert_eq!(
        line["msg_id"],
        last.as_str(),
        "shown after all were: {line}"
    );
    let history = fs::read_to_string(hosts.b.team_dir("t").join("history/bob.jsonl")).unwrap();
    let recorded: Vec<String> = history
        .lines()
        .map(|line| {
            serde_json::from_str::<Value>(line).unwrap()["msg_id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    let once: HashSet<&String> = recorded.iter().collect();
    assert_eq!((recorded.len(), once.len()), (total + 1, total + 1));
    eventually("hosta to have sent everything", || {
        inbox(&hosts.a, "bob").is_empty()
    });
}

#[test]
fn a_storm_across_hosts_survives_a_killed_server_and_a_killed_node() {
    a_storm_across_hosts(50);
}

#[test]
#[ignore = "stress tier: scripts/stress runs it"]
fn a_storm_across_hosts_survives_a_killed_server_and_a_killed_node_under_stress() {
    a_storm_across_hosts(500);
}
