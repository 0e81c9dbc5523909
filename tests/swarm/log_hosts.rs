//! `log` and `wait` on one host for a member on another (docs/ARCHITECTURE.md, "Roster, control
//! and status across hosts"): the end of its log read through its node, `log -f` as a long-poll
//! that outlives the server's and the node's restarts and ends with the member, `log --all` with
//! it among the local members, and `wait` ending with its mirrored ending. Each "host" is its own
//! home, tmux server and `swarm node`, sharing one real nats-server on loopback.

use std::fs;
use std::os::unix::process::ExitStatusExt;

use nix::sys::signal::Signal;

use crate::harness::{self, LEAD, Sandbox, TmuxServer, eventually, state};
use crate::nats_harness::{Host, NatsServer, team_file};

#[test]
fn a_member_on_another_host_is_logged_followed_through_restarts_and_waited_for() {
    let mut server = NatsServer::start();
    let a = Host::start("hosta", &server);
    let mut b = Host::start("hostb", &server);
    let go = a.sandbox.root().join("go");
    let half = a.sandbox.root().join("half");
    let end = a.sandbox.root().join("end");
    let script = format!(
        "echo before; while [ ! -e {go} ]; do sleep 0.05; done; echo one; echo two; \
         while [ ! -e {half} ]; do sleep 0.05; done; echo half; \
         while [ ! -e {end} ]; do sleep 0.05; done; echo three; exit 3",
        go = go.display(),
        half = half.display(),
        end = end.display()
    );
    a.up("t", &team_file("t", &script, ""));
    Host::until(&[&a, &b], "A to show bob running", || {
        a.shows("t", "bob", "running")
    });

    // The end of its log, once, and among every member's.
    eventually("bob's log to be read on A", || {
        a.sandbox
            .swarm()
            .args(["log", "bob", "--team", "t"])
            .run()
            .stdout
            .contains("before")
    });
    a.sandbox
        .swarm()
        .args(["log", "--all", "--team", "t"])
        .run()
        .success()
        .stdout_has("bob       | before");

    // Followers on A: bob alone, and every member; a wait for bob.
    let follow = a
        .sandbox
        .swarm()
        .args(["log", "bob", "-f", "-n", "1"])
        .team("t")
        .spawn();
    let every = a
        .sandbox
        .swarm()
        .args(["log", "--all", "-f", "-n", "1"])
        .team("t")
        .spawn();
    assert_eq!(follow.next_line(), "before");
    assert_eq!(every.next_line(), "bob       | before");
    let wait = a.sandbox.swarm().args(["wait", "bob"]).team("t").spawn();

    // Lines bob prints after the follow began come in order.
    fs::write(&go, "").unwrap();
    assert_eq!(follow.next_line(), "one");
    assert_eq!(follow.next_line(), "two");
    assert_eq!(every.next_line(), "bob       | one");
    assert_eq!(every.next_line(), "bob       | two");

    // The server goes away and comes back: the followers go on where they were.
    server.kill();
    a.node.wait_connected(false);
    server.restart();
    a.node.wait_connected(true);
    b.node.wait_connected(true);
    fs::write(&half, "").unwrap();
    assert_eq!(follow.next_line(), "half");
    assert_eq!(every.next_line(), "bob       | half");

    // B's node dies: bob is unreachable from A, never vanished, and a wait says so.
    b.node.kill();
    Host::until(&[&a], "A to show bob unreachable", || {
        a.shows("t", "bob", "unreachable")
    });
    a.sandbox
        .swarm()
        .args(["wait", "bob", "--timeout", "1"])
        .team("t")
        .run()
        .refused(4, "bob (unreachable: the node of host hostb is not seen)");

    // bob prints and ends while its node is down; the follow goes on once the node is back,
    // prints the rest and the supervisor's last line, and ends with bob.
    fs::write(&end, "").unwrap();
    eventually("bob to end on B", || {
        b.sandbox.member("t", "bob")["state"] == "failed"
    });
    b.node.restart();
    assert_eq!(follow.next_line(), "three");
    let last = follow.next_line();
    assert!(last.starts_with("[swarm] bob "), "{last}");
    let (status, stderr) = follow.finish();
    assert!(status.success(), "{status:?}: {stderr}");
    assert!(
        stderr.contains("still following bob") && stderr.contains("host hostb answers again"),
        "{stderr}"
    );
    assert_eq!(every.next_line(), "bob       | three");

    // The wait on A ends with bob's mirrored ending: exit 3 is a failure, status 1.
    let (status, stderr) = wait.finish();
    assert_eq!(status.code(), Some(1), "{status:?}: {stderr}");

    // Following every member goes on (other members may still print) until interrupted.
    every.signal(Signal::SIGINT);
    let (status, _) = every.finish();
    assert_eq!(status.signal(), Some(Signal::SIGINT as i32), "{status:?}");
    a.sandbox
        .swarm()
        .args(["down", "t", "--timeout", "1"])
        .run()
        .success();
}

#[test]
fn following_a_member_on_its_own_host_ends_the_same_way_with_its_last_line() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::start(&sandbox);
    let flag = sandbox.root().join("go");
    harness::up(
        &sandbox,
        &server,
        "here",
        &format!(
            "name = \"here\"\n{LEAD}[[member]]\nname = \"brief\"\ncommand = [\"sh\", \"-c\", \"echo hi; while [ ! -e {flag} ]; do sleep 0.05; done; printf 'bye\\\\nno newline'\"]\n",
            flag = flag.display()
        ),
    );
    let follow = sandbox
        .swarm()
        .args(["log", "brief", "-f", "-n", "1"])
        .team("here")
        .spawn();
    assert_eq!(follow.next_line(), "hi");
    fs::write(&flag, "").unwrap();
    assert_eq!(follow.next_line(), "bye");
    // The line the member never finished comes before the supervisor's own last line.
    assert!(follow.next_line().starts_with("no newline"));
    let (status, stderr) = follow.finish();
    assert!(status.success(), "{status:?}: {stderr}");
    assert_eq!(state(&sandbox, "here", "brief"), "exited");
    harness::down(&sandbox, "here");
}
