//! Teams across machines: `up` on one host starting members on another, and the roster, states,
//! control and faults every host sees (docs/ARCHITECTURE.md, "Roster, control and status across
//! hosts"). Each "host" is its own sandbox (home), its own private tmux server and its own
//! `swarm node`, all sharing one real nats-server on loopback.

use crate::harness::{Sandbox, eventually};
use crate::nats_harness::{Host, NatsServer, ServerAuth, alive, free_port, request, team_file};

#[test]
fn up_starts_a_member_on_another_host_and_every_host_sees_it_until_down() {
    let server = NatsServer::start();
    let a = Host::start("hosta", &server);
    let b = Host::start("hostb", &server);
    a.up("t", &team_file("t", "echo hello-from-b; sleep 1000", ""));

    // bob runs on B's tmux server, in session swarm-t, and B's config says so.
    let pane = b.sandbox.member("t", "bob")["tmuxPaneId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(b.panes().contains(&pane), "{:?}", b.panes());
    assert_eq!(b.tmux.pane_format(&pane, "#{session_name}"), "swarm-t");
    // A's own server has the lead's pane only.
    assert_eq!(a.panes().len(), 1, "{:?}", a.panes());

    // Both hosts show every member, with its host, from their own files.
    eventually("A to show bob running on hostb", || {
        a.shows("t", "bob", "running")
    });
    assert_eq!(a.row("t", "bob")["host"], "hostb");
    assert_eq!(a.row("t", "team-lead")["host"], "hosta");
    Host::until(&[&a, &b], "B to show the lead running on hosta", || {
        b.shows("t", "team-lead", "running")
    });
    assert_eq!(b.row("t", "bob")["host"], "hostb");
    assert_eq!(a.status("t")["node"]["connected"], true);
    a.sandbox
        .swarm()
        .args(["status", "t"])
        .run()
        .success()
        .stdout_has("HOST")
        .stdout_has("hostb");

    // Its log, read on A through B's node.
    eventually("bob's log to reach A", || {
        a.sandbox
            .swarm()
            .args(["log", "bob", "--team", "t"])
            .run()
            .stdout_line()
            .contains("hello-from-b")
    });

    // down on A leaves nothing on either host.
    let bob_pid = b.sandbox.member("t", "bob")["pid"].as_i64().unwrap();
    let lead_pid = a.sandbox.member("t", "team-lead")["pid"].as_i64().unwrap();
    a.sandbox
        .swarm()
        .args(["down", "t", "--timeout", "1"])
        .run()
        .success()
        .stdout_has("hostb: ")
        // Said before hostb's node answers, which it does once it is done.
        .stderr_has("swarm: waiting up to 1s for bob to answer the shutdown request");
    eventually("no pane left on either host", || {
        a.panes().is_empty() && b.panes().is_empty()
    });
    assert!(!alive(bob_pid) && !alive(lead_pid));
    eventually("A to show bob ended", || !a.shows("t", "bob", "running"));
}

#[test]
fn a_remote_member_is_stopped_through_its_node() {
    let server = NatsServer::start();
    let a = Host::start("hosta", &server);
    let b = Host::start("hostb", &server);
    a.up("s", &team_file("s", "sleep 1000", ""));
    eventually("A to show bob running", || a.shows("s", "bob", "running"));
    let bob_pid = b.sandbox.member("s", "bob")["pid"].as_i64().unwrap();
    a.sandbox
        .swarm()
        .args(["stop", "bob", "--team", "s"])
        .run()
        .success()
        .stdout_has("bob");
    assert!(!alive(bob_pid));
    assert_eq!(b.sandbox.member("s", "bob")["state"], "killed");
    eventually("A to mirror bob's ending", || a.shows("s", "bob", "killed"));
    a.sandbox
        .swarm()
        .args(["down", "s", "--force"])
        .run()
        .success();
}

#[test]
fn members_of_a_host_whose_node_died_are_unreachable_until_it_is_back() {
    let server = NatsServer::start();
    let a = Host::start("hosta", &server);
    let mut b = Host::start("hostb", &server);
    a.up("u", &team_file("u", "sleep 1000", ""));
    eventually("A to show bob running", || a.shows("u", "bob", "running"));
    b.node.kill();
    eventually("A to show bob unreachable", || {
        a.shows("u", "bob", "unreachable")
    });
    // A down that cannot reach B ends what it can and names B.
    b.node.restart();
    eventually("A to show bob running again", || {
        a.shows("u", "bob", "running")
    });
    b.node.kill();
    eventually("A to show bob unreachable again", || {
        a.shows("u", "bob", "unreachable")
    });
    a.sandbox
        .swarm()
        .args(["down", "u", "--force"])
        .run()
        .code(1)
        .stderr_has("not on hostb");
    assert!(a.panes().is_empty(), "{:?}", a.panes());
    b.node.restart();
    a.sandbox
        .swarm()
        .args(["down", "u", "--force"])
        .run()
        .success();
    eventually("no pane left on B", || b.panes().is_empty());
}

#[test]
fn up_with_the_server_unreachable_names_it_and_makes_nothing() {
    let server = NatsServer::start();
    let a = Host::start("hosta", &server);
    let nowhere = format!("nats://127.0.0.1:{}", free_port());
    let file = a.sandbox.write(
        "n.toml",
        team_file(
            "n",
            "sleep 1000",
            &format!("[cluster]\nnats = \"{nowhere}\"\n"),
        ),
    );
    let outcome = a
        .sandbox
        .swarm()
        .arg("up")
        .arg(file)
        .arg("--socket")
        .arg(a.tmux.socket())
        .run()
        .refused(1, "cannot reach the NATS server at");
    let refusal = outcome.refusal();
    assert!(refusal.contains(&nowhere), "{refusal}");
    assert!(!a.sandbox.team_dir("n").exists());
    assert!(a.panes().is_empty());
}

#[test]
fn a_team_naming_hosts_needs_a_node_here() {
    let sandbox = Sandbox::new();
    let file = sandbox.write("h.toml", team_file("h", "sleep 1000", ""));
    sandbox
        .swarm()
        .arg("up")
        .arg(file)
        .run()
        .refused(2, "no swarm node runs on this host")
        .stderr_has("swarm node --name");
    assert!(!sandbox.team_dir("h").exists());
}

#[test]
fn a_host_without_a_node_is_a_clear_error_and_nothing_stays_up() {
    let server = NatsServer::start();
    let a = Host::start("hosta", &server);
    let file = a.sandbox.write(
        "g.toml",
        team_file("g", "sleep 1000", "").replace("hostb", "ghost"),
    );
    // Once A's node has beaten, the refusal names the hosts that have nodes.
    let hosts = a.sandbox.home().join("node/hosts.json");
    eventually("A's node to have beaten once", || {
        std::fs::read_to_string(&hosts).is_ok_and(|text| text.contains("hosta"))
    });
    a.sandbox
        .swarm()
        .arg("up")
        .arg(file)
        .arg("--socket")
        .arg(a.tmux.socket())
        .env("SWARM_NATS_URL", server.url())
        .run()
        .refused(1, "no swarm node answers for host ghost")
        .stderr_has("(hosts with a node there: hosta)");
    eventually("the lead's pane to be gone", || a.panes().is_empty());
}

#[test]
fn wrong_credentials_at_up_are_one_line() {
    let server = NatsServer::start_with(ServerAuth::Token("right".into()));
    let a = Host::start_with("hosta", &server, &[("SWARM_NATS_TOKEN", "right")]);
    let file = a.sandbox.write(
        "w.toml",
        team_file(
            "w",
            "sleep 1000",
            &format!("[cluster]\nnats = \"{}\"\n", server.url()),
        ),
    );
    a.sandbox
        .swarm()
        .arg("up")
        .arg(file)
        .env("SWARM_NATS_TOKEN", "wrong")
        .run()
        .refused(1, "refused swarm's credentials");
    assert!(!a.sandbox.team_dir("w").exists());
}

#[test]
fn a_stream_someone_configured_differently_is_refused_at_up() {
    let server = NatsServer::start();
    let a = Host::start("hosta", &server);
    let _b = Host::start("hostb", &server);
    // Someone made SWARM_d with limits retention, in memory.
    let port = server
        .url()
        .rsplit(':')
        .next()
        .unwrap()
        .parse::<u16>()
        .unwrap();
    let answer = request(
        port,
        "$JS.API.STREAM.CREATE.SWARM_d",
        r#"{"name":"SWARM_d","subjects":["swarm.d.inbox.*"],"retention":"limits","storage":"memory","num_replicas":1}"#,
    );
    assert!(answer.contains("\"config\""), "{answer}");
    let file = a.sandbox.write("d.toml", team_file("d", "sleep 1000", ""));
    a.sandbox
        .swarm()
        .arg("up")
        .arg(file)
        .env("SWARM_NATS_URL", server.url())
        .run()
        .refused(1, "was configured by someone else: retention is Limits");
    assert!(!a.sandbox.team_dir("d").exists());
}

#[test]
fn up_wait_waits_for_a_member_on_another_host() {
    let server = NatsServer::start();
    let a = Host::start("hosta", &server);
    let b = Host::start("hostb", &server);
    let file = a.sandbox.write(
        "w.toml",
        "name = \"w\"\n[[member]]\nname = \"bob\"\nhost = \"hostb\"\ncommand = [\"sh\", \"-c\", \"sleep 1; echo done\"]\n",
    );
    a.sandbox
        .swarm()
        .arg("up")
        .arg(file)
        .arg("--wait")
        .env("SWARM_NATS_URL", server.url())
        .run()
        .success()
        .stdout_has("on host hostb: bob")
        .stdout_has("bob completed (exit 0)");
    assert_eq!(b.sandbox.member("w", "bob")["state"], "exited");
    assert!(a.panes().is_empty());
}

#[test]
fn members_added_later_get_this_hosts_name_and_the_other_hosts_reach_them() {
    let server = NatsServer::start();
    let a = Host::start("hosta", &server);
    let b = Host::start("hostb", &server);
    a.up("l", &team_file("l", "sleep 1000", ""));
    eventually("A to show bob running", || a.shows("l", "bob", "running"));
    a.sandbox
        .swarm()
        .args(["spawn", "carol", "--team", "l", "--", "sleep", "1000"])
        .run()
        .success();
    b.sandbox
        .swarm()
        .args(["join", "dave", "--team", "l"])
        .run()
        .success();
    assert_eq!(a.sandbox.member("l", "carol")["host"], "hosta");
    assert_eq!(b.sandbox.member("l", "dave")["host"], "hostb");
    Host::until(
        &[&a, &b],
        "each host to mirror the other's new member",
        || b.row("l", "carol")["host"] == "hosta" && a.row("l", "dave")["host"] == "hostb",
    );

    // Written on the host that does not run them, each message reaches its member's host.
    let sent = |host: &Host, from: &str, to: &str, text: &str| {
        host.sandbox
            .swarm()
            .team("l")
            .as_(from)
            .args(["send", to, text])
            .run()
            .success();
    };
    sent(&b, "dave", "carol", "to carol on hosta");
    sent(&a, "carol", "dave", "to dave on hostb");
    let holds = |host: &Host, member: &str, text: &str| {
        let path = host.sandbox.inbox_path("l", member);
        path.exists()
            && host
                .sandbox
                .inbox("l", member)
                .iter()
                .any(|message| message["text"] == text)
    };
    Host::until(&[&a, &b], "both messages to cross", || {
        holds(&a, "carol", "to carol on hosta") && holds(&b, "dave", "to dave on hostb")
    });
    eventually("the copies to leave the senders' hosts", || {
        !holds(&b, "carol", "to carol on hosta") && !holds(&a, "dave", "to dave on hostb")
    });
    a.sandbox
        .swarm()
        .args(["down", "l", "--force"])
        .run()
        .success();
}

#[test]
fn an_earlier_runs_members_stay_out_of_a_new_run() {
    let server = NatsServer::start();
    let a = Host::start("hosta", &server);
    let b = Host::start("hostb", &server);
    let mut c = Host::start("hostc", &server);
    let cy = "[[member]]\nname = \"cy\"\nhost = \"hostc\"\ncommand = [\"sleep\", \"1000\"]\n";
    a.up("r", &format!("{}{cy}", team_file("r", "sleep 1000", "")));
    Host::until(&[&a, &c], "A to show cy running", || {
        a.shows("r", "cy", "running")
    });
    a.sandbox
        .swarm()
        .args(["down", "r", "--force"])
        .run()
        .success();

    // The second run has no host C; C keeps the first run's files.
    a.up("r", &team_file("r", "sleep 1000", ""));
    Host::until(&[&a, &b], "A and B to show the new bob running", || {
        a.shows("r", "bob", "running") && b.shows("r", "team-lead", "running")
    });
    let names = |host: &Host| -> Vec<String> {
        host.status("r")["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(&a), ["team-lead", "bob"]);
    // C's node, restarted, follows its old run again, and puts none of it in the new one.
    let before = c.node.output().matches("roster for team r").count();
    c.node.restart();
    Host::until(&[&c], "C's node to follow team r again", || {
        c.node.output().matches("roster for team r").count() > before
    });
    // Something that crosses the server after C's node started: bob stopped, seen on A.
    a.sandbox
        .swarm()
        .args(["stop", "bob", "--team", "r"])
        .run()
        .success();
    Host::until(&[&a, &b], "A to mirror bob's ending", || {
        a.shows("r", "bob", "killed")
    });
    assert_eq!(names(&a), ["team-lead", "bob"]);
    assert_eq!(names(&b), ["team-lead", "bob"]);
    a.sandbox
        .swarm()
        .args(["down", "r", "--force"])
        .run()
        .success();
}

#[test]
fn a_new_run_starts_a_remote_member_without_the_last_runs_messages() {
    let server = NatsServer::start();
    let a = Host::start("hosta", &server);
    let b = Host::start("hostb", &server);
    let file = format!(
        "{}prompt = \"this run's prompt\"\n",
        team_file("q", "sleep 1000", "")
    );
    a.up("q", &file);
    eventually("A to show bob running", || a.shows("q", "bob", "running"));
    a.sandbox
        .swarm()
        .args(["send", "bob", "left unread", "--team", "q"])
        .run()
        .success();
    let texts = |host: &Host| -> Vec<String> {
        if !host.sandbox.inbox_path("q", "bob").exists() {
            return Vec::new();
        }
        host.sandbox
            .inbox("q", "bob")
            .iter()
            .map(|m| m["text"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    Host::until(&[&a, &b], "the message to reach bob on hostb", || {
        texts(&b).iter().any(|t| t == "left unread")
    });
    a.sandbox
        .swarm()
        .args(["down", "q", "--timeout", "1"])
        .run()
        .success();
    Host::until(&[&a, &b], "down's shutdown request to reach hostb", || {
        texts(&a).is_empty() && texts(&b).iter().any(|t| t.contains("shutdown_request"))
    });

    a.up("q", &file);
    Host::until(&[&a, &b], "this run's prompt to reach bob", || {
        texts(&b).iter().any(|t| t == "this run's prompt")
    });
    assert_eq!(texts(&b), ["this run's prompt"]);
    a.sandbox
        .swarm()
        .args(["down", "q", "--force"])
        .run()
        .success();
}

/// A member started on another host works in that host's home, where its inbox is: its
/// `SWARM_HOME` is its own host's, never the lead's.
#[test]
fn a_member_on_another_host_gets_that_hosts_home() {
    let server = NatsServer::start();
    let a = Host::start("hosta", &server);
    let b = Host::start("hostb", &server);
    a.up(
        "t",
        &team_file("t", "echo \"home=$SWARM_HOME\"; sleep 1000", ""),
    );
    let log = b.sandbox.team_dir("t").join("logs/bob.log");
    let mut printed = String::new();
    eventually("bob to say where its home is", || {
        printed = std::fs::read_to_string(&log).unwrap_or_default();
        printed.contains("home=")
    });
    assert!(
        printed.contains(&format!("home={}\r\n", b.sandbox.home().display())),
        "B's home is {}; bob printed {printed:?}",
        b.sandbox.home().display()
    );
    a.sandbox
        .swarm()
        .args(["down", "t", "--timeout", "1"])
        .run()
        .success();
}
