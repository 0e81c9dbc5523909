//! Teams across machines, the node itself: reaching the server, saying so in its record, and
//! refusing what cannot work with one clear line. Every test runs a real nats-server.

use crate::harness::{Sandbox, eventually};
use crate::nats_harness::{NatsServer, Node, ServerAuth, free_port};

#[test]
fn a_node_records_that_it_is_connected_and_that_it_lost_the_server() {
    let mut server = NatsServer::start();
    let sandbox = Sandbox::new();
    let node = Node::start(&sandbox, "hosta", &server.url());
    let record = node.record().unwrap();
    assert_eq!(record["name"], "hosta");
    assert_eq!(record["url"], server.url());
    server.kill();
    node.wait_connected(false);
    // The record can be written before the line that says so is read from the node's stderr.
    eventually("the node to say it lost the server", || {
        node.output().contains("lost the NATS server at")
    });
    server.restart();
    node.wait_connected(true);
}

#[test]
fn a_node_started_before_its_server_waits_for_it() {
    let port = free_port();
    let url = format!("nats://127.0.0.1:{port}");
    let sandbox = Sandbox::new();
    let node = Node::spawn(&sandbox, "hosta", &url);
    eventually("the node to say it cannot reach the server", || {
        node.output()
            .contains(&format!("cannot reach the NATS server at {url}"))
    });
    node.wait_connected(false);
    drop(node);
}

/// The node's lines are its output, and -q silences them as it does every other line: it records
/// that it cannot reach the server after it would have said so.
#[test]
fn a_quiet_node_says_nothing_and_still_records_what_it_would_say() {
    let url = format!("nats://127.0.0.1:{}", free_port());
    let sandbox = Sandbox::new();
    let node = Node::spawn_with(&sandbox, "hosta", &url, &["-q"]);
    node.wait_connected(false);
    assert_eq!(node.output(), "", "swarm -q node printed");
}

#[test]
fn a_second_node_for_one_home_is_refused() {
    let server = NatsServer::start();
    let sandbox = Sandbox::new();
    let _node = Node::start(&sandbox, "hosta", &server.url());
    sandbox
        .swarm()
        .args(["node", "--name", "hostb", "--nats", &server.url()])
        .run()
        .refused(2, "a swarm node already serves");
}

#[test]
fn a_second_node_with_the_same_name_on_another_home_stops_and_the_first_runs_on() {
    let server = NatsServer::start();
    let first_home = Sandbox::new();
    let first = Node::start(&first_home, "gpu1", &server.url());
    // Its key on the server exists once it has beaten.
    eventually("the first node to beat", || {
        std::fs::read_to_string(first_home.home().join("node/hosts.json"))
            .is_ok_and(|text| text.contains("gpu1"))
    });
    let other_home = Sandbox::new();
    other_home
        .swarm()
        .args(["node", "--name", "gpu1", "--nats", &server.url()])
        .run()
        .code(2)
        .stderr_has("another swarm node named gpu1 runs already")
        .stderr_has(&format!("pid {}", first.pid()));
    // Refused before it served anything: the first never saw a beat but its own.
    assert!(
        !first.output().contains("another node uses this name too"),
        "{}",
        first.output()
    );
    first.wait_connected(true);
    // The first node's own restart is no namesake: its last beat does not move.
    let mut first = first;
    first.restart();
}

#[test]
fn wrong_credentials_are_one_line_naming_the_server() {
    let server = NatsServer::start_with(ServerAuth::Token("right".into()));
    let sandbox = Sandbox::new();
    let outcome = sandbox
        .swarm()
        .args(["node", "--name", "hosta", "--nats", &server.url()])
        .env("SWARM_NATS_TOKEN", "wrong")
        .run()
        .refused(1, "refused swarm's credentials");
    assert!(outcome.refusal().contains(&server.url()));
}

#[test]
fn a_node_needs_a_server_url_and_a_valid_host_name() {
    let sandbox = Sandbox::new();
    sandbox
        .swarm()
        .args(["node", "--name", "hosta"])
        .run()
        .refused(2, "swarm node needs a NATS server");
    sandbox
        .swarm()
        .args(["node", "--name", "a.b", "--nats", "nats://127.0.0.1:1"])
        .run()
        .refused(2, "invalid host name");
    sandbox
        .swarm()
        .args(["node", "--name", "hosta", "--nats", "localhost:4222"])
        .run()
        .refused(2, "is not a NATS server URL");
}

#[test]
fn print_unit_writes_a_systemd_unit_without_secrets() {
    let sandbox = Sandbox::new();
    let outcome = sandbox
        .swarm()
        .args([
            "node",
            "--name",
            "gpu1",
            "--print-unit",
            "--nats",
            "nats://hub:4222",
        ])
        .env("SWARM_NATS_USER", "ops")
        .env("SWARM_NATS_PASSWORD", "hunter2")
        .run()
        .success()
        .stdout_has("node --name gpu1")
        .stdout_has("Environment=SWARM_NATS_URL=nats://hub:4222")
        .stdout_has("Environment=SWARM_NATS_USER=ops")
        .stdout_has("Restart=on-failure");
    assert!(!outcome.stdout_line().contains("hunter2"));
    // The tmux server the node places members on goes into the unit; a .creds file must exist.
    let sock = sandbox.root().join("agents.sock");
    sandbox
        .swarm()
        .args(["node", "--name", "gpu1", "--print-unit", "--socket"])
        .arg(&sock)
        .args(["--nats", "nats://hub:4222"])
        .run()
        .success()
        .stdout_has(&format!("Environment=SWARM_TMUX_SOCKET={}", sock.display()));
    sandbox
        .swarm()
        .args([
            "node",
            "--name",
            "gpu1",
            "--print-unit",
            "--creds",
            "/nonexistent/x.creds",
        ])
        .args(["--nats", "nats://hub:4222"])
        .run()
        .refused(1, "/nonexistent/x.creds");
}

/// A unit is lines: a line break in any value written into it (a flag, a variable, the home, a
/// path) would add a line of its own, such as `ExecStartPre=`. Every such value is refused.
#[test]
fn print_unit_refuses_a_control_character_in_anything_it_writes() {
    let sandbox = Sandbox::new();
    let evil = "nats://hub:4222\nExecStartPre=/bin/touch /tmp/pwned";
    let unit = |swarm: crate::harness::Swarm, flags: &[&str]| {
        swarm
            .args(["node", "--name", "gpu1", "--print-unit"])
            .args(flags)
            .run()
            .refused(2, "control character")
    };
    unit(sandbox.swarm(), &["--nats", evil]);
    unit(sandbox.swarm().env("SWARM_NATS_URL", evil), &[]);
    let hub = ["--nats", "nats://hub:4222"];
    unit(
        sandbox.swarm(),
        &[&hub[..], &["--socket", "/tmp/s\nExecStartPre=/bin/x"]].concat(),
    );
    unit(
        sandbox
            .swarm()
            .env("SWARM_NATS_USER", "ops\nExecStartPre=/bin/x")
            .env("SWARM_NATS_PASSWORD", "pw"),
        &hub,
    );
    let creds = sandbox.write("a\rb.creds", "");
    unit(
        sandbox.swarm(),
        &[&hub[..], &["--creds", creds.to_str().unwrap()]].concat(),
    );
    let home = sandbox.root().join("home\u{1b}[2J");
    unit(sandbox.swarm().arg("--home").arg(&home), &hub);
}
