//! Seen where people look (docs/ARCHITECTURE.md, "Permission asks"): a teammate's pending
//! permission ask shows in `swarm status` (its state, and `pendingAsks` in JSON) and in `swarm
//! top`'s decisions pane, where `a`, `A` and `r` answer it as `permission allow|deny` does.

use serde_json::{Value, json};

use crate::harness::{Sandbox, eventually, watches};
use crate::permissions::{ask, bash_ask, up};
use crate::top::{keys, open_top, screen, shows, typed};

/// A member with a pending ask shows it in its STATE cell and in `--json`'s `pendingAsks`; once
/// the ask is answered, it shows as running again.
#[test]
fn status_shows_a_member_waiting_on_permission() {
    let sandbox = Sandbox::new();
    let _team = up(&sandbox);
    ask(
        &sandbox,
        "bob",
        &bash_ask("perm-s-aaa", "bob", "touch /tmp/s"),
    );

    let text = sandbox
        .swarm()
        .args(["status"])
        .team("pa")
        .run()
        .success()
        .stdout;
    let bob = text
        .lines()
        .find(|l| l.starts_with("bob "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(bob.contains("waits on permission (Bash) "), "{text}");

    let row = sandbox.status_row("pa", "bob");
    assert_eq!(row["state"], "running", "{row:#}");
    let asks = row["pendingAsks"]
        .as_array()
        .unwrap_or_else(|| panic!("{row:#}"));
    assert_eq!(asks.len(), 1, "{row:#}");
    assert_eq!(asks[0]["requestId"], "perm-s-aaa");
    assert_eq!(asks[0]["tool"], "Bash");
    assert!(asks[0]["askedAtMs"].as_u64().is_some(), "{row:#}");
    assert_eq!(sandbox.status_row("pa", "quick")["pendingAsks"], json!([]));

    sandbox
        .swarm()
        .args(["permission", "allow", "perm-s-aaa"])
        .team("pa")
        .run()
        .success();
    assert_eq!(
        sandbox.status_row("pa", "bob")["pendingAsks"],
        Value::Array(vec![])
    );
    let text = sandbox
        .swarm()
        .args(["status"])
        .team("pa")
        .run()
        .success()
        .stdout;
    assert!(!text.contains("waits on permission"), "{text}");
}

/// The answer recorded for `id` in `permission log --json`, if any.
fn answered(sandbox: &Sandbox, id: &str) -> Option<Value> {
    let log = sandbox
        .swarm()
        .args(["permission", "log", "--json"])
        .team("pa")
        .run()
        .success()
        .json();
    log.as_array()
        .unwrap()
        .iter()
        .find(|a| a["requestId"] == id)
        .cloned()
}

/// In `top`, the header counts the asks waiting and the decisions pane lists them; `a` allows the
/// first, `A` allows the next always, `r` denies the last with the reason typed in the editor, each
/// recorded as `permission allow|deny` records it.
#[test]
fn top_lists_permission_asks_and_answers_them_with_a_capital_a_and_r() {
    let sandbox = Sandbox::new();
    let team = up(&sandbox);
    let server = team.server();
    open_top(server, "top", "pa", 120, 40);
    shows(server, "top", "bob's row", "bob");
    for (id, command) in [
        ("perm-t-1", "touch /tmp/one"),
        ("perm-t-2", "touch /tmp/two"),
        ("perm-t-3", "touch /tmp/three"),
    ] {
        ask(&sandbox, "bob", &bash_ask(id, "bob", command));
    }
    shows(server, "top", "the header's count", "3 to decide");
    shows(server, "top", "the ask in the pane", "touch /tmp/three");

    // Each key allows the ask the pane has selected, the oldest; the header counts down.
    for (key, id, always, left) in [
        ("a", "perm-t-1", false, "2 to decide"),
        ("A", "perm-t-2", true, "1 to decide"),
    ] {
        keys(server, "top", &[key]);
        eventually(&format!("{id} allowed by {key}"), || {
            answered(&sandbox, id).is_some()
        });
        let answer = answered(&sandbox, id).unwrap();
        assert_eq!(
            (&answer["allowed"], &answer["always"]),
            (&json!(true), &json!(always)),
            "{key}"
        );
        shows(server, "top", "the count after it", left);
    }

    keys(server, "top", &["r"]);
    shows(
        server,
        "top",
        "the reason's editor",
        "deny bob's Bash, because:",
    );
    typed(server, "top", "not in /tmp");
    keys(server, "top", &["Enter"]);
    eventually("perm-t-3 denied", || {
        answered(&sandbox, "perm-t-3").is_some()
    });
    let third = answered(&sandbox, "perm-t-3").unwrap();
    assert_eq!(
        (&third["allowed"], &third["reason"]),
        (&json!(false), &json!("not in /tmp"))
    );
    eventually("the pane to empty", || {
        !screen(server, "top").contains("waiting for a decision")
    });
}

/// `wait --decision` runs out (exit 4) while nothing waits, and returns (exit 0), printing what
/// waits, once a permission ask arrives; with one already waiting it returns at once, a plan too.
#[test]
fn wait_decision_returns_when_an_ask_arrives_and_times_out_with_4() {
    let sandbox = Sandbox::new();
    let _team = up(&sandbox);
    sandbox
        .swarm()
        .args(["wait", "--decision", "pa", "--timeout", "1s"])
        .run()
        .refused(4, "nothing waits for a decision after 1s");

    let waiting = sandbox
        .swarm()
        .args(["wait", "--decision", "pa", "--timeout", "60s"])
        .spawn();
    let inboxes = sandbox.team_dir("pa").join("inboxes");
    eventually("the wait to watch the inboxes", || {
        watches(waiting.pid(), &inboxes)
    });
    ask(
        &sandbox,
        "bob",
        &bash_ask("perm-w-1", "bob", "touch /tmp/w"),
    );
    let line = waiting.next_line();
    assert!(
        line.contains("perm-w-1") && line.contains("bob asks to use Bash: touch /tmp/w"),
        "{line}"
    );
    let (status, stderr) = waiting.finish();
    assert_eq!(status.code(), Some(0), "{stderr}");

    let json = sandbox
        .swarm()
        .args(["wait", "--decision", "--timeout", "5s", "--json"])
        .team("pa")
        .run()
        .success()
        .json();
    assert_eq!(
        json,
        json!([{"kind": "permission", "requestId": "perm-w-1", "member": "bob",
                "what": "bob asks to use Bash: touch /tmp/w"}])
    );

    // Answered, the ask no longer waits; a plan does.
    sandbox
        .swarm()
        .args(["permission", "deny", "perm-w-1"])
        .team("pa")
        .run()
        .success();
    let plan = sandbox.write("plan.md", "Parse first, then print");
    sandbox
        .swarm()
        .args(["plan", "submit"])
        .arg(&plan)
        .team("pa")
        .as_("bob")
        .run()
        .success();
    let json = sandbox
        .swarm()
        .args(["wait", "--decision", "--timeout", "5s", "--json"])
        .team("pa")
        .run()
        .success()
        .json();
    let kinds: Vec<(&Value, &Value)> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (&w["kind"], &w["member"]))
        .collect();
    assert_eq!(kinds, [(&json!("plan"), &json!("bob"))], "{json:#}");
}
