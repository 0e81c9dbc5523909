//! Seen where people look (docs/ARCHITECTURE.md, "Permission asks"): a teammate's pending
//! permission ask shows in `swarm status` (its state, and `pendingAsks` in JSON).

use serde_json::{Value, json};

use crate::harness::Sandbox;
use crate::permissions::{ask, bash_ask, up};

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
