//! Many writer processes and a consumer at once; writers killed at random moments.

use std::collections::{HashMap, HashSet};
use std::process::Stdio;
use std::thread;
use std::time::{Duration, Instant};

use crate::harness::{PATIENCE, Sandbox};

#[test]
fn eight_writers_and_a_consumer_deliver_every_message_exactly_once() {
    const WRITERS: usize = 8;
    const EACH: usize = 200;
    let sandbox = Sandbox::new();
    sandbox.team("t", &["sink"]);

    let writers: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let commands: Vec<_> = (0..EACH)
                .map(|n| {
                    sandbox
                        .swarm()
                        .args(["send", "sink"])
                        .arg(format!("w{writer} m{n}"))
                        .team("t")
                        .as_(&format!("w{writer}"))
                        .into_command()
                })
                .collect();
            thread::spawn(move || {
                commands
                    .into_iter()
                    .map(|mut command| {
                        let output = command.output().unwrap();
                        assert!(
                            output.status.success(),
                            "{}",
                            String::from_utf8_lossy(&output.stderr)
                        );
                        String::from_utf8(output.stdout).unwrap().trim().to_owned()
                    })
                    .collect::<Vec<String>>()
            })
        })
        .collect();

    let mut received: HashMap<String, usize> = HashMap::new();
    let deadline = Instant::now() + PATIENCE * 5;
    while received.len() < WRITERS * EACH {
        assert!(
            Instant::now() < deadline,
            "only {} of {} arrived",
            received.len(),
            WRITERS * EACH
        );
        let batch = sandbox
            .swarm()
            .args(["recv", "--wait", "--timeout", "30", "--json"])
            .team("t")
            .as_("sink")
            .run()
            .success()
            .json();
        for message in batch.as_array().unwrap() {
            *received
                .entry(message["msg_id"].as_str().unwrap().to_owned())
                .or_default() += 1;
        }
    }
    let sent: HashSet<String> = writers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    assert_eq!(
        sent.len(),
        WRITERS * EACH,
        "every send printed a distinct msg_id"
    );
    let got: HashSet<String> = received.keys().cloned().collect();
    assert_eq!(got, sent);
    let repeated: Vec<_> = received.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        repeated.is_empty(),
        "delivered more than once: {repeated:?}"
    );
    assert!(sandbox.inbox("t", "sink").is_empty());
    let history =
        std::fs::read_to_string(sandbox.team_dir("t").join("history/sink.jsonl")).unwrap();
    assert_eq!(history.lines().count(), WRITERS * EACH);
}

#[test]
fn writers_killed_at_random_moments_lose_no_acknowledged_send() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    let mut acknowledged = Vec::new();
    let mut killed = 0;
    // A cheap deterministic sequence of delays, so a failure can be replayed.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for round in 0..150 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let delay = Duration::from_micros(seed % 6000);
        let mut children: Vec<_> = (0..3)
            .map(|k| {
                let mut command = sandbox
                    .swarm()
                    .args(["send", "bob"])
                    .arg(format!("round {round} writer {k}"))
                    .team("t")
                    .into_command();
                command
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .stdin(Stdio::null());
                command.spawn().unwrap()
            })
            .collect();
        thread::sleep(delay);
        let victim = usize::try_from(seed % 3).unwrap();
        let _ = children[victim].kill();
        for child in children {
            let output = child.wait_with_output().unwrap();
            if output.status.success() {
                acknowledged.push(String::from_utf8(output.stdout).unwrap().trim().to_owned());
            } else {
                assert!(
                    output.status.code().is_none(),
                    "a send failed on its own: {}",
                    String::from_utf8_lossy(&output.stderr)
                );
                killed += 1;
            }
        }
        // The inbox parses after every round, whatever was interrupted.
        let inbox = sandbox.inbox("t", "bob");
        let ids: HashSet<&str> = inbox
            .iter()
            .map(|m| m["msg_id"].as_str().unwrap())
            .collect();
        for id in &acknowledged {
            assert!(
                ids.contains(id.as_str()),
                "acknowledged send {id} is missing after round {round}"
            );
        }
    }
    assert!(
        killed > 0,
        "no writer was killed mid-way; the test proved nothing"
    );
    // No debris blocks later writers, and nothing was moved aside as corrupt.
    sandbox
        .swarm()
        .args(["send", "bob", "after the storm"])
        .team("t")
        .run()
        .success();
    let status = sandbox
        .swarm()
        .args(["status", "--json"])
        .team("t")
        .run()
        .success()
        .json();
    let bob = status["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "bob")
        .unwrap()
        .clone();
    assert_eq!(bob["setAside"], serde_json::json!([]));
}
