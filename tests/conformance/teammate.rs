//! A Claude Code teammate that swarm launches: it starts with the identity flags, answers a
//! message, and shuts down when the team goes down.

use serde_json::Value;

use crate::claude::{ClaudeTeam, TEAM, Teammate, WORKER, alive};
use crate::harness::{eventually, processes_in};
use crate::model::{Request, approve_shutdown, brings, load_tools, send_message, step, text};

#[test]
#[ignore = "conformance tier: run scripts/conformance"]
fn the_identity_flags_are_accepted_and_the_teammate_starts() {
    let team = ClaudeTeam::new();
    let hello = team
        .model
        .on(brings("HELLO-A"), vec![step(vec![text("Hello.")])]);
    team.up(&Teammate {
        prompt: Some("Say hello: HELLO-A"),
        ..Teammate::default()
    });

    // Its first request: the prompt swarm queued, read from the inbox its --agent-name and
    // --team-name name, from the lead, verified with the key of --lead-verify-key.
    let first = team
        .model
        .request("the teammate's first request", Request::is_main);
    assert!(first.session.is_some(), "{first:?}");
    team.model.finished(hello);
    let prompt = team.model.teammate_message("HELLO-A");
    assert_eq!(
        prompt.attribute("teammate_id"),
        Some("team-lead"),
        "{prompt:?}"
    );
    assert_eq!(prompt.attribute("verified"), None, "{prompt:?}");

    // At the end of its turn it tells the lead it is idle, under the name swarm gave it.
    eventually("the teammate's idle notification", || {
        team.lead_inbox()
            .iter()
            .any(|m| m["from"] == WORKER && m["structured"]["type"] == "idle_notification")
    });
    let pane = team.pane_text();
    assert!(pane.contains(&format!("@{WORKER}")), "{pane}");
    assert!(!pane.to_lowercase().contains("error"), "{pane}");
    assert_eq!(
        team.sandbox.status_row(TEAM, WORKER)["state"],
        "running",
        "{pane}"
    );
}

#[test]
#[ignore = "conformance tier: run scripts/conformance"]
fn a_message_in_gets_a_reply_out() {
    let team = ClaudeTeam::new();
    let reply = team.model.on(
        brings("PING-B"),
        vec![
            step(vec![load_tools(&["SendMessage"])]),
            step(vec![send_message("team-lead", "PONG-B")]),
            step(vec![text("Answered.")]),
        ],
    );
    team.up(&Teammate::default());
    team.swarm()
        .args(["send", WORKER, "PING-B"])
        .run()
        .success();

    let seen = team.model.teammate_message("PING-B");
    assert_eq!(seen.attribute("teammate_id"), Some("team-lead"), "{seen:?}");
    let calls = team.model.finished(reply);
    assert!(
        calls.iter().all(|c| !c.is_error),
        "a tool call failed: {calls:#?}"
    );
    eventually("the reply in the lead's inbox", || {
        team.lead_inbox()
            .iter()
            .any(|m| m["from"] == WORKER && m["text"] == "PONG-B")
    });
    team.swarm()
        .arg("recv")
        .run()
        .success()
        .stdout_has("PONG-B");
}

#[test]
#[ignore = "conformance tier: run scripts/conformance"]
fn down_is_approved_and_leaves_nothing() {
    let team = ClaudeTeam::new();
    let approval = team.model.on(
        brings("shutdown_request"),
        vec![step(vec![load_tools(&["SendMessage"])]), approve_shutdown()],
    );
    team.up(&Teammate::default());
    let pid = team.worker_pid();
    let supervisor = team.worker()["supervisorPid"].as_i64().unwrap();
    let pane = team.worker()["tmuxPaneId"].as_str().unwrap().to_owned();

    let down = team
        .swarm()
        .args(["down", TEAM, "--timeout", "50", "--json"])
        .run()
        .success();
    let events: Vec<Value> = down
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let calls = team.model.calls(approval);
    assert!(
        calls.iter().any(|c| c.tool == "SendMessage") && calls.iter().all(|c| !c.is_error),
        "the model did not approve, or a tool call failed: {calls:#?}"
    );
    // It ended on its own, having approved: nothing had to be stopped.
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "ended" && e["name"] == WORKER),
        "{}",
        down.stdout
    );
    assert!(
        !events.iter().any(|e| e["event"] == "stopped"),
        "{}",
        down.stdout
    );
    assert!(
        team.lead_inbox()
            .iter()
            .any(|m| m["from"] == WORKER && m["structured"]["type"] == "shutdown_approved"),
        "{:#?}",
        team.lead_inbox()
    );
    assert!(!alive(pid) && !alive(i32::try_from(supervisor).unwrap()));
    assert_eq!(
        processes_in(&[supervisor], &[i64::from(pid)]),
        Vec::<String>::new()
    );
    assert!(!team.tmux.panes_if_running().contains(&pane));
}
