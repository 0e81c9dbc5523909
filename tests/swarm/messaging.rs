//! send, inbox, recv and watch, as a user runs them.

use std::time::Duration;
use std::{fs, thread};

use serde_json::Value;

use crate::harness::{PATIENCE, Sandbox, eventually, voluntary_switches, watch_mask, watches};

#[test]
fn send_then_recv_delivers_once_with_id_and_sender() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    let id = sandbox
        .swarm()
        .args(["send", "bob", "start on task 1"])
        .team("t")
        .as_("team-lead")
        .run()
        .success()
        .stdout_line();
    assert_eq!(id.len(), 36, "send prints the msg_id: {id}");
    let stored = sandbox.inbox("t", "bob");
    assert_eq!(stored[0]["msg_id"], id.as_str());
    assert_eq!(stored[0]["from"], "team-lead");
    assert_eq!(stored[0]["summary"], "start on task 1");
    assert_eq!(stored[0]["read"], false);
    assert!(stored[0]["timestamp"].as_str().unwrap().ends_with('Z'));

    sandbox
        .swarm()
        .args(["recv"])
        .team("t")
        .as_("bob")
        .run()
        .success()
        .stdout_is(&format!("{id}  team-lead  start on task 1\n"));
    assert!(sandbox.inbox("t", "bob").is_empty());
    let again = sandbox
        .swarm()
        .args(["recv"])
        .team("t")
        .as_("bob")
        .run()
        .success();
    assert!(again.stdout.is_empty(), "delivered twice: {}", again.stdout);
    let history = fs::read_to_string(sandbox.team_dir("t").join("history/bob.jsonl")).unwrap();
    assert!(history.contains(&id));
}

#[test]
fn text_comes_from_stdin_and_summary_can_be_given() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    sandbox
        .swarm()
        .args(["send", "bob", "-"])
        .team("t")
        .stdin("line one\nline two\n")
        .run()
        .success();
    sandbox
        .swarm()
        .args(["send", "bob", "--summary", "short"])
        .team("t")
        .stdin("from stdin")
        .run()
        .success();
    let stored = sandbox.inbox("t", "bob");
    assert_eq!(stored[0]["text"], "line one\nline two\n");
    assert_eq!(stored[0]["summary"], "line one");
    assert_eq!(stored[1]["text"], "from stdin");
    assert_eq!(stored[1]["summary"], "short");
}

#[test]
fn outside_a_team_the_sender_is_user() {
    let sandbox = Sandbox::new();
    // A team whose lead runs a program (never started here): outside every pane is the person.
    let file = sandbox.write(
        "t.toml",
        "name = \"t\"\n[lead]\ncommand = [\"true\"]\n[[member]]\nname = \"bob\"\ncommand = [\"true\"]\n",
    );
    sandbox.swarm().arg("init").arg(file).run().success();
    sandbox
        .swarm()
        .args(["send", "bob", "hi"])
        .team("t")
        .env_remove("SWARM_AGENT")
        .run()
        .success();
    assert_eq!(sandbox.inbox("t", "bob")[0]["from"], "user");
    // user is not on the roster, yet has an inbox: bob's answer reaches it, and `recv` outside
    // every pane takes it.
    sandbox
        .swarm()
        .args(["send", "user", "hello back"])
        .team("t")
        .as_("bob")
        .run()
        .success();
    let got = sandbox
        .swarm()
        .args(["recv", "--json"])
        .team("t")
        .env_remove("SWARM_AGENT")
        .run()
        .success()
        .json();
    assert_eq!(got[0]["from"], "bob");
    assert_eq!(got[0]["text"], "hello back");
    sandbox
        .swarm()
        .args(["recv"])
        .team("t")
        .as_("mallory")
        .run()
        .refused(3, "mallory is not a member");
}

/// A team whose lead runs no program is a script's (`init`, then `spawn`): outside every pane is
/// its lead, who sends as the lead and reads the lead's inbox, where notices and `user` arrive.
#[test]
fn outside_a_scripted_team_the_sender_is_its_lead() {
    let sandbox = Sandbox::new();
    sandbox.team("s", &["bob"]);
    sandbox
        .swarm()
        .args(["send", "bob", "hi"])
        .team("s")
        .env_remove("SWARM_AGENT")
        .run()
        .success();
    assert_eq!(sandbox.inbox("s", "bob")[0]["from"], "team-lead");
    for to in ["team-lead", "user"] {
        sandbox
            .swarm()
            .args(["send", to, &format!("to {to}")])
            .team("s")
            .as_("bob")
            .run()
            .success();
    }
    let got = sandbox
        .swarm()
        .args(["recv", "--json"])
        .team("s")
        .env_remove("SWARM_AGENT")
        .run()
        .success()
        .json();
    let texts: Vec<&str> = got
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["to team-lead", "to user"]);
}

#[test]
fn broadcast_reaches_everyone_but_the_sender_once() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["a", "b", "c"]);
    let id = sandbox
        .swarm()
        .args(["send", "*", "standup"])
        .team("t")
        .as_("a")
        .run()
        .success()
        .stdout_line();
    for member in ["team-lead", "b", "c"] {
        let inbox = sandbox.inbox("t", member);
        assert_eq!(inbox.len(), 1, "{member}");
        assert_eq!(inbox[0]["msg_id"], id.as_str());
    }
    assert!(
        sandbox.inbox("t", "a").is_empty(),
        "the sender gets no copy"
    );
}

/// A broadcast that cannot reach everyone reaches nobody: the copies already written are taken
/// back, so the retry after exit 1 delivers each copy once.
#[test]
fn a_broadcast_that_fails_part_way_is_withdrawn() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["a", "b", "c"]);
    // b's inbox cannot be locked (a folder where its lock file belongs): the broadcast fails
    // after the lead's and a's copies. (What is no file where the inbox itself belongs keeps b
    // out of the broadcast instead: file_safety.rs.)
    let b = sandbox.team_dir("t").join("inboxes").join(".b.flock");
    let _ = fs::remove_file(&b);
    fs::create_dir(&b).unwrap();
    sandbox
        .swarm()
        .args(["send", "*", "standup"])
        .team("t")
        .as_("user")
        .run()
        .code(1)
        .stderr_has("withdrawn from team-lead, a, so nobody has it");
    for member in ["team-lead", "a"] {
        assert!(
            sandbox.inbox("t", member).is_empty(),
            "{member} kept a copy"
        );
    }

    fs::remove_dir(&b).unwrap();
    let id = sandbox
        .swarm()
        .args(["send", "*", "standup"])
        .team("t")
        .as_("user")
        .run()
        .success()
        .stdout_line();
    for member in ["team-lead", "a", "b", "c"] {
        let inbox = sandbox.inbox("t", member);
        assert_eq!(inbox.len(), 1, "{member}: {inbox:?}");
        assert_eq!(inbox[0]["msg_id"], id.as_str());
    }
}

#[test]
fn unknown_recipient_is_refused_listing_the_roster() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    sandbox
        .swarm()
        .args(["send", "ghost", "hi"])
        .team("t")
        .run()
        .refused(
            3,
            "ghost is not a member of team t; members: team-lead, bob",
        );
    assert!(
        !sandbox.inbox_path("t", "ghost").exists(),
        "no phantom inbox"
    );
}

#[test]
fn oversized_text_is_refused_and_nothing_written() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    let exact = "x".repeat(1024 * 1024);
    sandbox
        .swarm()
        .args(["send", "bob", "-"])
        .team("t")
        .stdin(exact.clone())
        .run()
        .success();
    // Linux caps one argument at 128 KiB, so text this large only ever arrives on stdin.
    let over = format!("{exact}y");
    sandbox
        .swarm()
        .args(["send", "bob", "-"])
        .team("t")
        .stdin(over.clone())
        .run()
        .refused(2, "1 MiB");
    sandbox
        .swarm()
        .args(["send", "*"])
        .team("t")
        .stdin(over.clone())
        .run()
        .refused(2, "1 MiB");
    sandbox
        .swarm()
        .args(["plan", "submit", "-"])
        .team("t")
        .as_("bob")
        .stdin(over)
        .run()
        .refused(2, "1 MiB");
    assert_eq!(sandbox.inbox("t", "bob").len(), 1);
    assert!(sandbox.inbox("t", "team-lead").is_empty());
}

#[test]
fn inbox_looks_without_consuming_and_all_adds_history() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    sandbox
        .swarm()
        .args(["send", "bob", "first"])
        .team("t")
        .run()
        .success();
    sandbox
        .swarm()
        .args(["recv"])
        .team("t")
        .as_("bob")
        .run()
        .success();
    sandbox
        .swarm()
        .args(["send", "bob", "second"])
        .team("t")
        .run()
        .success();
    for _ in 0..2 {
        let unread = sandbox
            .swarm()
            .args(["inbox", "bob", "--json"])
            .team("t")
            .run()
            .success()
            .json();
        assert_eq!(unread.as_array().unwrap().len(), 1);
        assert_eq!(unread[0]["text"], "second");
    }
    let all = sandbox
        .swarm()
        .args(["inbox", "bob", "--all", "--json"])
        .team("t")
        .run()
        .success()
        .json();
    let states: Vec<(&str, &str)> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["text"].as_str().unwrap(), m["state"].as_str().unwrap()))
        .collect();
    assert_eq!(states, [("first", "delivered"), ("second", "unread")]);
    sandbox
        .swarm()
        .args(["inbox", "nobody"])
        .team("t")
        .run()
        .refused(3, "nobody is not a member");
}

#[test]
fn recv_max_takes_the_oldest() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    for text in ["1", "2", "3"] {
        sandbox
            .swarm()
            .args(["send", "bob", text])
            .team("t")
            .run()
            .success();
    }
    let taken = sandbox
        .swarm()
        .args(["recv", "--max", "2", "--json"])
        .team("t")
        .as_("bob")
        .run()
        .success()
        .json();
    let texts: Vec<&str> = taken
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["1", "2"]);
    assert_eq!(sandbox.inbox("t", "bob").len(), 1);
}

#[test]
fn recv_wait_blocks_until_a_message_lands() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    let waiting = sandbox
        .swarm()
        .args(["recv", "--wait", "--json"])
        .team("t")
        .as_("bob")
        .spawn();
    // Once the receiver watches the inboxes, a message sent now wakes it (or its first look finds
    // the message, if the send wins that race): either way it cannot be missed.
    let inboxes = sandbox.team_dir("t").join("inboxes");
    eventually("the receiver to watch the inboxes", || {
        watches(waiting.pid(), &inboxes)
    });
    let id = sandbox
        .swarm()
        .args(["send", "bob", "wake up"])
        .team("t")
        .run()
        .success()
        .stdout_line();
    let (status, stderr) = {
        let line = waiting.next_line();
        assert!(
            line.trim() == "[",
            "pretty JSON document expected, got {line}"
        );
        let mut document = line;
        while let Some(more) = waiting.lines.next_within(PATIENCE) {
            document.push_str(&more);
        }
        let received: Value = serde_json::from_str(&document).unwrap();
        assert_eq!(received[0]["msg_id"], id.as_str());
        waiting.finish()
    };
    assert!(status.success(), "{stderr}");
}

/// inotify's events for an open or a read-only close.
const IN_OPEN: u32 = 0x20;
const IN_CLOSE_NOWRITE: u32 = 0x10;
const IN_ACCESS: u32 = 0x01;

/// Every command reads config.json and inboxes: a watcher that asked for opens too was woken by
/// each read in its folder (every supervisor, the signing agent, each waiting `ask` or `recv`).
#[test]
fn a_waiting_reader_is_not_woken_by_reads_in_the_folder_it_watches() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    let waiting = sandbox
        .swarm()
        .args(["recv", "--wait", "--timeout", "600"])
        .team("t")
        .as_("bob")
        .spawn();
    let inboxes = sandbox.team_dir("t").join("inboxes");
    eventually("the receiver to watch the inboxes", || {
        watches(waiting.pid(), &inboxes)
    });
    let mask = watch_mask(waiting.pid(), &inboxes).unwrap();
    assert_eq!(
        mask & (IN_OPEN | IN_CLOSE_NOWRITE | IN_ACCESS),
        0,
        "the watch asks for reads: mask {mask:#x}"
    );
    let before = voluntary_switches(waiting.pid());
    let inbox = inboxes.join("bob.json");
    for _ in 0..50 {
        fs::read(&inbox).unwrap();
        thread::sleep(Duration::from_millis(2));
    }
    let woken = voluntary_switches(waiting.pid()) - before;
    // The safety rescan wakes it every 2 s: far fewer than one wake-up for each read.
    assert!(woken < 25, "50 reads woke the receiver {woken} times");
}

#[test]
fn recv_wait_times_out_with_status_4() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    sandbox
        .swarm()
        .args(["recv", "--wait", "--timeout", "0.5"])
        .team("t")
        .as_("bob")
        .run()
        .refused(4, "no message arrived for bob");
    sandbox
        .swarm()
        .args(["recv", "--timeout", "1"])
        .team("t")
        .as_("bob")
        .run()
        .code(2);
}

#[test]
fn watch_follows_one_inbox_without_consuming() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob", "carol"]);
    sandbox
        .swarm()
        .args(["send", "bob", "already here"])
        .team("t")
        .run()
        .success();
    let watch = sandbox
        .swarm()
        .args(["watch", "bob", "--json"])
        .team("t")
        .spawn();
    assert_eq!(watch.next_json()["text"], "already here");
    sandbox
        .swarm()
        .args(["send", "carol", "not for bob"])
        .team("t")
        .run()
        .success();
    let id = sandbox
        .swarm()
        .args(["send", "bob", "fresh"])
        .team("t")
        .as_("carol")
        .run()
        .success()
        .stdout_line();
    let arrived = watch.next_json();
    assert_eq!(arrived["msg_id"], id.as_str());
    assert_eq!(arrived["from"], "carol");
    assert_eq!(arrived["to"], "bob");
    assert_eq!(sandbox.inbox("t", "bob").len(), 2, "watch does not consume");
}

/// A broadcast is one message with a copy per member, each with the same msg_id and marked as a
/// broadcast: `watch --all` shows it once, as `team-lead → *`, however its copies are read or taken,
/// and so does a broadcast another tool wrote (the same message in several inboxes, unmarked).
#[test]
fn a_broadcast_shows_once_to_everyone() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob", "carol", "dave"]);
    // Another tool's broadcast: the same message, with no msg_id, in two inboxes.
    let foreign = serde_json::json!({"from": "team-lead", "text": "from claude", "timestamp": "2026-01-01T00:00:00.000Z"});
    for name in ["bob", "carol"] {
        sandbox.write_inbox_as_claude("t", name, std::slice::from_ref(&foreign));
    }
    let all = sandbox.swarm().args(["watch", "--all"]).team("t").spawn();
    assert!(
        all.next_line().ends_with("team-lead → *  from claude"),
        "shown once, to everyone"
    );
    let json = sandbox
        .swarm()
        .args(["watch", "--all", "--json"])
        .team("t")
        .spawn();
    assert_eq!(json.next_json()["to"], "*");

    let id = sandbox
        .swarm()
        .args(["send", "*", "standup in 5"])
        .team("t")
        .as_("team-lead")
        .run()
        .success()
        .stdout_line();
    for name in ["bob", "carol", "dave"] {
        let copies = sandbox.inbox("t", name);
        let copy = copies.last().unwrap();
        assert_eq!(copy["msg_id"], id.as_str(), "{name}");
        assert_eq!(copy["broadcast"], true, "{name}");
    }
    assert!(
        all.next_line().ends_with("team-lead → *  standup in 5"),
        "shown once, to everyone"
    );
    let shown = json.next_json();
    assert_eq!(shown["to"], "*");
    assert_eq!(shown["msg_id"], id.as_str());
    // Taking the copies one by one shows nothing again.
    for name in ["bob", "carol", "dave"] {
        sandbox
            .swarm()
            .arg("recv")
            .team("t")
            .as_(name)
            .run()
            .success();
    }
    sandbox
        .swarm()
        .args(["send", "bob", "only to bob"])
        .team("t")
        .as_("carol")
        .run()
        .success();
    // The next line is the next message: no other copy of the broadcast came in between.
    assert!(
        all.next_line().ends_with("carol → bob  only to bob"),
        "a message to one member is to that member"
    );
    assert_eq!(json.next_json()["to"], "bob");
}

#[test]
fn watch_all_follows_every_inbox_and_consume_takes_your_own() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob", "carol"]);
    let all = sandbox.swarm().args(["watch", "--all"]).team("t").spawn();
    sandbox
        .swarm()
        .args(["send", "bob", "to bob"])
        .team("t")
        .as_("carol")
        .run()
        .success();
    assert!(all.next_line().contains("carol → bob  to bob"));
    sandbox
        .swarm()
        .args(["send", "carol", "to carol"])
        .team("t")
        .as_("bob")
        .run()
        .success();
    assert!(all.next_line().contains("bob → carol  to carol"));

    sandbox
        .swarm()
        .args(["watch", "bob", "--consume"])
        .team("t")
        .as_("carol")
        .run()
        .refused(
            2,
            "only bob may consume messages from bob's inbox; you are carol",
        );
    sandbox
        .swarm()
        .args(["watch", "--all", "--consume"])
        .team("t")
        .as_("carol")
        .run()
        .code(2)
        .stderr_has("'--all' cannot be used with '--consume'");
    let consuming = sandbox
        .swarm()
        .args(["watch", "--consume", "--json"])
        .team("t")
        .as_("carol")
        .spawn();
    assert_eq!(consuming.next_json()["text"], "to carol");
    eventually("carol's inbox to be consumed", || {
        sandbox.inbox("t", "carol").is_empty()
    });
    sandbox
        .swarm()
        .args(["send", "carol", "next"])
        .team("t")
        .run()
        .success();
    assert_eq!(consuming.next_json()["text"], "next");
    eventually("carol's inbox to be consumed", || {
        sandbox.inbox("t", "carol").is_empty()
    });
}

#[test]
fn watch_sees_every_message_exactly_once_however_fast_it_is_consumed() {
    const MESSAGES: usize = 200;
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    // An unread message each watcher prints once it is following: history from before a watch
    // started is not news to it, so nothing may be sent and consumed before then.
    sandbox
        .swarm()
        .args(["send", "bob", "ready"])
        .team("t")
        .run()
        .success();
    let observer = sandbox
        .swarm()
        .args(["watch", "bob", "--json"])
        .team("t")
        .spawn();
    let everyone = sandbox
        .swarm()
        .args(["watch", "--all", "--json"])
        .team("t")
        .spawn();
    assert_eq!(observer.next_json()["text"], "ready");
    assert_eq!(everyone.next_json()["text"], "ready");
    // bob takes each message the moment it lands, racing both watchers.
    let consumer = sandbox
        .swarm()
        .args(["watch", "--consume", "--json"])
        .team("t")
        .as_("bob")
        .spawn();
    assert_eq!(consumer.next_json()["text"], "ready");
    let mut sent = std::collections::HashSet::new();
    for n in 0..MESSAGES {
        let id = sandbox
            .swarm()
            .args(["send", "bob"])
            .arg(format!("m{n}"))
            .team("t")
            .run()
            .success()
            .stdout_line();
        sent.insert(id);
    }
    for (name, watcher) in [
        ("watch bob", &observer),
        ("watch --all", &everyone),
        ("watch --consume", &consumer),
    ] {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..MESSAGES {
            let id = watcher.next_json()["msg_id"].as_str().unwrap().to_owned();
            assert!(seen.insert(id.clone()), "{name} showed {id} twice");
        }
        assert_eq!(seen, sent, "{name} missed messages");
        assert!(
            watcher
                .lines
                .next_within(Duration::from_millis(300))
                .is_none(),
            "{name} showed more than was sent"
        );
    }
    assert!(
        sandbox.inbox("t", "bob").is_empty(),
        "bob consumed everything"
    );
}

#[test]
fn broken_pipe_is_quiet() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    for n in 0..200 {
        sandbox
            .swarm()
            .args(["send", "bob"])
            .arg(format!("message {n}"))
            .team("t")
            .run()
            .success();
    }
    let mut inbox = sandbox
        .swarm()
        .args(["inbox", "bob"])
        .team("t")
        .into_command();
    inbox
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = inbox.spawn().unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `recv` and `watch --consume` into a pipe nobody reads: a quiet exit 0, and the messages they
/// could not show are still unread.
#[test]
fn a_consumer_whose_stdout_is_closed_takes_nothing() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    for text in ["1", "2", "3"] {
        sandbox
            .swarm()
            .args(["send", "bob", text])
            .team("t")
            .run()
            .success();
    }
    for args in [
        &["recv"][..],
        &["recv", "--wait"],
        &["recv", "--json"],
        &["watch", "--consume"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        // Closed before the consumer starts: its first write fails, deterministically.
        drop(reader);
        let output = sandbox
            .swarm()
            .args(args)
            .team("t")
            .as_("bob")
            .into_command()
            .stdin(std::process::Stdio::null())
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        assert!(output.status.success(), "{args:?}: {output:?}");
        assert!(output.stderr.is_empty(), "{args:?}: {output:?}");
        assert_eq!(
            sandbox.inbox("t", "bob").len(),
            3,
            "{args:?} took messages it never showed"
        );
    }
    // They are shown, and taken, by the next consumer that can.
    let shown = received_lines(&sandbox.inbox("t", "bob"));
    sandbox
        .swarm()
        .args(["recv"])
        .team("t")
        .as_("bob")
        .run()
        .success()
        .stdout_is(&shown);
    assert!(sandbox.inbox("t", "bob").is_empty());
}

/// A timeout too long for the clock to represent is no deadline, never a panic (exit 101).
#[test]
fn timeouts_too_long_to_represent_mean_no_deadline() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    for bound in ["1e19", "1e30", "inf"] {
        sandbox
            .swarm()
            .args(["send", "bob", "hello"])
            .team("t")
            .env("SWARM_LOCK_TIMEOUT", bound)
            .run()
            .success();
    }
    let shown = received_lines(&sandbox.inbox("t", "bob"));
    assert_eq!(shown.lines().count(), 3, "{shown}");
    sandbox
        .swarm()
        .args(["recv", "--wait", "--timeout", "1e19"])
        .team("t")
        .as_("bob")
        .run()
        .success()
        .stdout_is(&shown);
    // An ended member, so `wait` returns at once.
    let config_path = sandbox.team_dir("t").join("config.json");
    let mut config = sandbox.config("t");
    for member in config["members"].as_array_mut().unwrap() {
        if member["name"] == "bob" {
            member["state"] = "exited".into();
            member["exitCode"] = 0.into();
        }
    }
    fs::write(&config_path, serde_json::to_vec(&config).unwrap()).unwrap();
    sandbox
        .swarm()
        .args(["wait", "bob", "--timeout", "1e19"])
        .team("t")
        .run()
        .success();
}

#[test]
fn team_is_chosen_by_flag_env_or_being_the_only_one() {
    let sandbox = Sandbox::new();
    sandbox.team("alpha", &["bob"]);
    sandbox
        .swarm()
        .args(["send", "bob", "only team"])
        .run()
        .success();
    sandbox.team("beta", &["bob"]);
    sandbox
        .swarm()
        .args(["send", "bob", "which?"])
        .run()
        .refused(2, "alpha, beta");
    sandbox
        .swarm()
        .args(["--team", "beta", "send", "bob", "by flag"])
        .run()
        .success();
    sandbox
        .swarm()
        .args(["send", "bob", "by env"])
        .team("beta")
        .run()
        .success();
    assert_eq!(sandbox.inbox("alpha", "bob").len(), 1);
    assert_eq!(sandbox.inbox("beta", "bob").len(), 2);
}

/// What `recv` prints for `inbox`, the messages it holds: a line each, `ID  FROM  TEXT`.
fn received_lines(inbox: &[Value]) -> String {
    let mut lines = String::new();
    for m in inbox {
        for field in ["msg_id", "from"] {
            lines.push_str(m[field].as_str().unwrap());
            lines.push_str("  ");
        }
        lines.push_str(m["text"].as_str().unwrap());
        lines.push('\n');
    }
    lines
}
