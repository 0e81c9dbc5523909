//! Signed lead messages in a team across hosts (docs/ARCHITECTURE.md, "Signed lead messages"):
//! every teammate is keyed wherever it runs, and a lead-side message to a member is signed by the
//! host whose signing agent holds its key, through that host's node. Each "host" is its own
//! sandbox, private tmux server and `swarm node`, sharing one real nats-server on loopback.

use serde_json::{Value, json};

use crate::harness::{LEAD, eventually};
use crate::nats_harness::{Host, NatsServer, request};

/// Team `name`: the lead and alice on host A, bob on host B printing the key it got.
fn team(name: &str) -> String {
    format!(
        "name = \"{name}\"\n{LEAD}\n[[member]]\nname = \"alice\"\ncommand = [\"sleep\", \"1000\"]\n\
         [[member]]\nname = \"bob\"\nhost = \"hostb\"\n\
         command = [\"sh\", \"-c\", \"echo key=$SWARM_LEAD_VERIFY_KEY; sleep 1000\"]\n"
    )
}

/// Two hosts with team `name` up from A.
fn up(name: &str) -> (NatsServer, Host, Host) {
    let server = NatsServer::start();
    let a = Host::start("hosta", &server);
    let b = Host::start("hostb", &server);
    a.up(name, &team(name));
    Host::until(&[&a, &b], "bob to run, seen on A", || {
        a.shows(name, "bob", "running")
    });
    (server, a, b)
}

/// `epsilon`, spawned on B into running team `name`, once A mirrors it.
fn spawn_epsilon_on_b(a: &Host, b: &Host, name: &str) {
    b.sandbox
        .swarm()
        .args(["spawn", "epsilon", "--team", name, "--", "sleep", "1000"])
        .run()
        .success();
    Host::until(&[a, b], "A to mirror epsilon with its key", || {
        a.row(name, "epsilon")["verifies"] == true
    });
}

/// The message with `text` in `member`'s inbox on `host`, once it is there.
fn arrived(host: &Host, name: &str, member: &str, text: &str) -> Value {
    let mut found = None;
    Host::until(&[host], &format!("{text:?} to reach {member}"), || {
        let path = host.sandbox.inbox_path(name, member);
        found = path
            .exists()
            .then(|| host.sandbox.inbox(name, member))
            .and_then(|inbox| inbox.into_iter().find(|m| m["text"] == text));
        found.is_some()
    });
    found.unwrap()
}

/// Whether `member`'s own reader on `host` (`swarm inbox --json`, judging with the key the
/// member was launched with) shows the message with `text` as verified.
fn verified(host: &Host, name: &str, member: &str, text: &str) -> Value {
    let inbox = host
        .sandbox
        .swarm()
        .args(["inbox", member, "--json", "--team", name])
        .run()
        .success()
        .json();
    inbox
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["text"] == text)
        .map_or(Value::Null, |m| m["verified"].clone())
}

/// Every inbox file of team `name` on `host`, as its text.
fn inboxes(host: &Host, name: &str) -> Vec<(String, String)> {
    let dir = host.sandbox.team_dir(name).join("inboxes");
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            (path.display().to_string(), text)
        })
        .collect();
    files.sort();
    files
}

/// A member `up` starts on another host is keyed by `up`'s host: its record on both hosts has
/// the key and names A as the key's host, its program got the key, `status` says it verifies on
/// both hosts, and the lead's side's messages to it, from either host, arrive signed and verified.
#[test]
fn members_up_starts_on_another_host_are_keyed_and_verify() {
    let (_server, a, b) = up("k");
    let key = a.sandbox.member("k", "bob")["leadVerifyKey"].clone();
    assert!(key.is_string(), "{key}");
    assert_eq!(b.sandbox.member("k", "bob")["leadVerifyKey"], key);
    assert_eq!(b.sandbox.member("k", "bob")["keyHost"], "hosta");
    let env_keys = b
        .sandbox
        .swarm()
        .args(["info", "bob", "--json", "--team", "k"])
        .run()
        .success()
        .json()["envKeys"]
        .clone();
    assert!(
        env_keys
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k == "SWARM_LEAD_VERIFY_KEY"),
        "{env_keys}"
    );
    // The key bob's program was started with, on host B, is the recorded one.
    eventually("bob's log to show its key", || {
        b.sandbox
            .swarm()
            .args(["log", "bob", "--team", "k"])
            .run()
            .stdout
            .contains(&format!("key={}", key.as_str().unwrap()))
    });
    for host in [&a, &b] {
        assert_eq!(host.row("k", "bob")["verifies"], true);
        assert_eq!(host.row("k", "alice")["verifies"], true);
    }

    // The person on A, whose agent holds the key, and the person on B, whose agent does not.
    for (host, text) in [(&a, "from the person on A"), (&b, "from the person on B")] {
        host.sandbox
            .swarm()
            .args(["send", "bob", text, "--team", "k"])
            .run()
            .success();
        let message = arrived(&b, "k", "bob", text);
        assert!(message["lead_sig"].is_string(), "{message}");
        assert_eq!(verified(&b, "k", "bob", text), true);
    }
    a.sandbox
        .swarm()
        .args(["down", "k", "--force"])
        .run()
        .success();
}

/// A member spawned on B is keyed on B: the person on A messages it and B's node signs; a
/// broadcast by the person on B reaches every teammate on both hosts signed and verified.
#[test]
fn a_member_spawned_on_another_host_gets_the_leads_messages_signed_there() {
    let (_server, a, b) = up("p");
    spawn_epsilon_on_b(&a, &b, "p");
    assert_eq!(a.sandbox.member("p", "epsilon")["keyHost"], "hostb");

    a.sandbox
        .swarm()
        .args(["send", "epsilon", "hi", "--team", "p"])
        .run()
        .success();
    let message = arrived(&b, "p", "epsilon", "hi");
    assert_eq!(message["from"], "user");
    assert!(message["lead_sig"].is_string(), "{message}");
    assert_eq!(verified(&b, "p", "epsilon", "hi"), true);

    b.sandbox
        .swarm()
        .args(["send", "*", "all hands", "--team", "p"])
        .run()
        .success();
    for (host, member) in [(&a, "alice"), (&b, "bob"), (&b, "epsilon")] {
        let message = arrived(host, "p", member, "all hands");
        assert!(message["lead_sig"].is_string(), "{member}: {message}");
        assert_eq!(verified(host, "p", member, "all hands"), true, "{member}");
    }
    arrived(&a, "p", "team-lead", "all hands");
    a.sandbox
        .swarm()
        .args(["down", "p", "--force"])
        .run()
        .success();
}

/// With the node of the host holding a member's key down, a lead-side message to it cannot be
/// signed: exit 1, one line naming that host, and nothing written, a broadcast's copies for the
/// others neither.
#[test]
fn without_the_key_holding_hosts_node_nothing_is_sent_and_that_host_is_named() {
    let (_server, a, mut b) = up("n");
    spawn_epsilon_on_b(&a, &b, "n");
    b.node.kill();
    let before = inboxes(&a, "n");
    for to in ["epsilon", "*"] {
        let outcome = a
            .sandbox
            .swarm()
            .args(["send", to, "are you there", "--team", "n"])
            .run()
            .code(1);
        let said = outcome.stderr.lines().next().unwrap_or_default().to_owned();
        assert!(
            said.contains("cannot sign the lead's message to epsilon on host hostb")
                && said.contains("nothing was sent")
                && !outcome.stderr.contains("restarted"),
            "{}",
            outcome.stderr
        );
    }
    assert_eq!(inboxes(&a, "n"), before);
    b.node.restart();
    a.sandbox
        .swarm()
        .args(["down", "n", "--force"])
        .run()
        .success();
}

/// A node signs only what speaks for the lead, for a member on its roster keyed on its host: a
/// `sign` request anyone on the server sends for a teammate's message, for a member keyed on
/// another host, or for someone not in the team is refused; the lead's side's is signed.
#[test]
fn a_node_signs_only_the_leads_side_for_members_keyed_there() {
    let (server, a, _b) = up("r");
    let ask = |host: &str, member: &str, from: &str| -> Value {
        let message = json!({"from": from, "text": "approve everything", "msg_id": "x-1",
            "timestamp": "2030-01-01T00:00:00.000Z"});
        let payload = json!({"team": "r", "member": member, "message": message}).to_string();
        let answer = request(server.port(), &format!("swarm.node.{host}.sign"), &payload);
        serde_json::from_str(answer.trim()).unwrap()
    };
    assert!(ask("hosta", "bob", "user")["ok"]["leadSig"].is_string());
    for (host, member, from, why) in [
        (
            "hosta",
            "bob",
            "alice",
            "only the lead's side's messages are signed",
        ),
        (
            "hostb",
            "bob",
            "team-lead",
            "bob's key is held on host hosta",
        ),
        ("hosta", "mallory", "team-lead", "mallory"),
        ("hosta", "team-lead", "user", "verifies no lead's messages"),
    ] {
        let answer = ask(host, member, from);
        let error = answer["refused"]["error"].as_str().unwrap_or_default();
        assert!(error.contains(why), "{host} {member} {from}: {answer}");
    }
    // A team on one host (no keyHost) is never signed for from outside it.
    a.sandbox.team("solo", &["m"]);
    let mut config = a.sandbox.config("solo");
    for member in config["members"].as_array_mut().unwrap() {
        member["leadVerifyKey"] = json!("a-key");
    }
    std::fs::write(
        a.sandbox.team_dir("solo").join("config.json"),
        serde_json::to_vec_pretty(&config).unwrap(),
    )
    .unwrap();
    let message = json!({"from": "user", "text": "approve everything", "msg_id": "x-2",
        "timestamp": "2030-01-01T00:00:00.000Z"});
    let payload = json!({"team": "solo", "member": "m", "message": message}).to_string();
    let answer: Value =
        serde_json::from_str(request(server.port(), "swarm.node.hosta.sign", &payload).trim())
            .unwrap();
    assert!(
        answer["refused"]["error"]
            .as_str()
            .is_some_and(|error| error.contains("names no key host")),
        "{answer}"
    );
    a.sandbox
        .swarm()
        .args(["down", "r", "--force"])
        .run()
        .success();
}

/// A teammate on another host asks through `permission ask` (docs/ARCHITECTURE.md, "Asking from
/// any CLI"): the ask crosses to the lead's host and is listed there, and `permission allow` on
/// the lead's host, signed there for the member, crosses back and lets the ask exit 0.
#[test]
fn an_ask_from_another_host_is_listed_and_answered_at_the_leads() {
    let server = NatsServer::start();
    let a = Host::start("hosta", &server);
    let b = Host::start("hostb", &server);
    a.up(
        "pa",
        &format!(
            "name = \"pa\"\n{LEAD}\n[[member]]\nname = \"bob\"\nhost = \"hostb\"\n\
             command = [\"sh\", \"-c\", \"swarm permission ask Bash --input \
             '{{\\\"command\\\": \\\"make\\\"}}' > {dir}/ask.out 2> {dir}/ask.err; \
             echo $? > {dir}/ask.rc; sleep 1000\"]\n",
            dir = b.sandbox.work().display()
        ),
    );
    let mut asked = None;
    Host::until(&[&a, &b], "bob's ask to be listed on A", || {
        let listed = a
            .sandbox
            .swarm()
            .args(["permission", "list", "--json", "--team", "pa"])
            .run()
            .success()
            .json();
        asked = listed.as_array().unwrap().first().cloned();
        asked.is_some()
    });
    let ask = asked.unwrap();
    assert_eq!(ask["member"], "bob", "{ask}");
    assert_eq!(ask["input"], json!({"command": "make"}), "{ask}");
    let id = ask["requestId"].as_str().unwrap();
    a.sandbox
        .swarm()
        .args(["permission", "allow", id, "--team", "pa"])
        .run()
        .success();
    let rc = b.sandbox.work().join("ask.rc");
    Host::until(&[&a, &b], "bob's ask to end on B", || {
        std::fs::read_to_string(&rc).is_ok_and(|text| text.ends_with('\n'))
    });
    let err = std::fs::read_to_string(b.sandbox.work().join("ask.err")).unwrap_or_default();
    assert_eq!(std::fs::read_to_string(&rc).unwrap().trim(), "0", "{err}");
    let out = std::fs::read_to_string(b.sandbox.work().join("ask.out")).unwrap();
    assert_eq!(out, format!("allowed {id}\n"));
}
