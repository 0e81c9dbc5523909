//! `swarm top` on one host of a team across hosts (docs/ARCHITECTURE.md, "Dashboard"): the HOST
//! column, a member of another host shown, messaged, answered and stopped from the dashboard
//! through its node, and what top shows when a node is lost. Two "hosts" share one real
//! nats-server, as in `hosts.rs`; top runs in a pane of a private tmux server of host A's, driven
//! with `send-keys` and read with `capture-pane`, as in `top.rs`. Every wait is on what the
//! screen or the files show.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::harness::{TmuxServer, eventually};
use crate::nats_harness::{Host, NatsServer, alive, team_file};
use crate::top::{keys, open_top, received, screen, shows, typed};

/// Waits until the screen has a line holding `name` and each of `needles`: a member's row.
#[track_caller]
fn row_shows(server: &TmuxServer, session: &str, name: &str, needles: &[&str]) {
    let mut last = String::new();
    let found = catch_unwind(AssertUnwindSafe(|| {
        eventually(&format!("{name}'s row to show {needles:?}"), || {
            last = screen(server, session);
            last.lines().any(|line| {
                line.contains(&format!(" {name} ")) && needles.iter().all(|n| line.contains(n))
            })
        });
    }));
    assert!(
        found.is_ok(),
        "{name}'s row never showed {needles:?}; the screen:\n{last}"
    );
}

#[test]
fn top_on_host_a_shows_messages_answers_and_stops_a_member_on_host_b() {
    let server = NatsServer::start();
    let a = Host::start("hosta", &server);
    let b = Host::start("hostb", &server);
    a.up("t", &team_file("t", "sleep 1000", ""));
    eventually("A to show bob running", || a.shows("t", "bob", "running"));
    let bob_pane = b.sandbox.member("t", "bob")["tmuxPaneId"]
        .as_str()
        .unwrap()
        .to_owned();
    let bob_pid = b.sandbox.member("t", "bob")["pid"].as_i64().unwrap();

    let top = TmuxServer::unstarted_at(&a.sandbox, "top.sock");
    open_top(&top, "top", "t", 120, 40);
    shows(&top, "top", "the HOST column", "HOST");
    row_shows(&top, "top", "team-lead", &["hosta", "running"]);
    row_shows(&top, "top", "bob", &["hostb", "running"]);
    assert!(
        !screen(&top, "top").contains("disconnected"),
        "{}",
        screen(&top, "top")
    );

    // `s` on bob (the second row) writes to bob's inbox here; the nodes carry it to host B.
    keys(&top, "top", &["j"]);
    shows(&top, "top", "bob's pane is elsewhere", "bob · on hostb");
    keys(&top, "top", &["s"]);
    shows(&top, "top", "the editor", "to bob:");
    typed(&top, "top", "typed in top on hosta");
    keys(&top, "top", &["Enter"]);
    Host::until(&[&a, &b], "the message in bob's inbox on B", || {
        received(&b.sandbox, "t", "bob", "typed in top on hosta")
    });

    // bob asks, on host B, to approve a plan; it reaches the lead on A, and `a` answers it there.
    b.sandbox
        .swarm()
        .args(["--team", "t", "--as", "bob", "plan", "submit", "-"])
        .stdin("Parse first, then print")
        .run()
        .success();
    shows(&top, "top", "bob's pending plan", "waiting for a decision");
    keys(&top, "top", &["a"]);
    shows(&top, "top", "the approval noted", "approved bob's plan");
    Host::until(&[&a, &b], "the plan's answer in bob's inbox on B", || {
        received(&b.sandbox, "t", "bob", "plan_approval_response")
    });

    // `x` then `y` on bob stops it on host B, through B's node.
    keys(&top, "top", &["x"]);
    shows(&top, "top", "the confirmation", "stop bob?");
    keys(&top, "top", &["y"]);
    Host::until(&[&a, &b], "bob's pane gone from B", || {
        !b.panes().contains(&bob_pane)
    });
    assert!(!alive(bob_pid), "bob's program still runs on B");
    assert_eq!(b.sandbox.member("t", "bob")["state"], "killed");
    Host::until(&[&a, &b], "A to record bob killed", || {
        a.sandbox.member("t", "bob")["state"] == "killed"
    });
    row_shows(&top, "top", "bob", &["hostb", "killed"]);
    // The lead on A runs on.
    row_shows(&top, "top", "team-lead", &["hosta", "running"]);

    keys(&top, "top", &["q"]);
    shows(&top, "top", "top quitting cleanly", "top-ended-0");
    a.sandbox
        .swarm()
        .args(["down", "t", "--force"])
        .run()
        .success();
}

#[test]
fn top_shows_a_lost_node_as_unreachable_and_its_own_as_disconnected() {
    let server = NatsServer::start();
    let mut a = Host::start("hosta", &server);
    let mut b = Host::start("hostb", &server);
    a.up("u", &team_file("u", "sleep 1000", ""));
    eventually("A to show bob running", || a.shows("u", "bob", "running"));
    let top = TmuxServer::unstarted_at(&a.sandbox, "top.sock");
    open_top(&top, "top", "u", 120, 40);
    row_shows(&top, "top", "bob", &["hostb", "running"]);

    // Host B's node dies: bob may still run there, but is not seen from A.
    b.node.kill();
    row_shows(&top, "top", "bob", &["hostb", "unreachable"]);
    assert!(!screen(&top, "top").contains("disconnected"));

    // This host's own node dies: said once, in the header.
    a.node.kill();
    shows(&top, "top", "A disconnected", "! hosta is disconnected");
    let shown = screen(&top, "top");
    assert_eq!(shown.matches("is disconnected").count(), 1, "{shown}");
    row_shows(&top, "top", "team-lead", &["hosta", "running"]);

    // Both back: bob is seen running again and the header is clear.
    a.node.restart();
    b.node.restart();
    row_shows(&top, "top", "bob", &["hostb", "running"]);
    eventually("the header to clear", || {
        !screen(&top, "top").contains("disconnected")
    });

    keys(&top, "top", &["q"]);
    shows(&top, "top", "top quitting cleanly", "top-ended-0");
    a.sandbox
        .swarm()
        .args(["down", "u", "--force"])
        .run()
        .success();
    Host::until(&[&a, &b], "no pane left on B", || b.panes().is_empty());
}
