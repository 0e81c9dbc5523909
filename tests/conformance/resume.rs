//! A Claude Code teammate resumed after a reboot (docs/ARCHITECTURE.md, "Resuming a team"): its
//! tmux server killed, `swarm resume` starts it with `--resume <its session>`, and the model sees
//! the earlier turns of its conversation in the first request it gets afterwards.

use crate::claude::{ClaudeTeam, TEAM, Teammate, WORKER};
use crate::harness::eventually;
use crate::model::{Request, brings, step, text};

#[test]
#[ignore = "conformance tier: run scripts/conformance"]
fn a_resumed_teammate_is_back_in_its_own_conversation() {
    let team = ClaudeTeam::new();
    let before = team.model.on(
        brings("REMEMBER-R1"),
        vec![step(vec![text("Noted, the word is PELICAN-R1.")])],
    );
    team.up(&Teammate {
        prompt: Some("Remember this: REMEMBER-R1"),
        ..Teammate::default()
    });
    let first = team
        .model
        .request("the teammate's first request", Request::is_main);
    team.model.finished(before);
    // Its turn is over, so Claude Code has written it to the session's transcript.
    eventually("the teammate's idle notification", || {
        team.lead_inbox()
            .iter()
            .any(|m| m["from"] == WORKER && m["structured"]["type"] == "idle_notification")
    });
    let session = team.worker()["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(first.session.as_deref(), Some(session.as_str()));

    // The reboot: the tmux server goes, every pane with it.
    team.tmux.kill();
    eventually("the team to be interrupted", || {
        team.swarm()
            .args(["status", TEAM, "--json"])
            .run()
            .success()
            .json()["interrupted"]
            == true
    });
    let after = team
        .model
        .on(brings("AFTER-R2"), vec![step(vec![text("Still here.")])]);
    team.swarm().args(["resume", TEAM]).run().success();
    let argv: Vec<String> =
        serde_json::from_value(team.worker()["argv"].clone()).unwrap_or_default();
    let resumed = argv.iter().position(|a| a == "--resume");
    assert_eq!(
        resumed.and_then(|at| argv.get(at + 1)),
        Some(&session),
        "{argv:?}"
    );
    eventually("the teammate to run again", || {
        team.sandbox.status_row(TEAM, WORKER)["state"] == "running"
    });
    team.swarm()
        .args(["send", WORKER, "AFTER-R2"])
        .run()
        .success();
    let again = team
        .model
        .request("the resumed teammate's first request", |r| {
            r.is_main() && brings("AFTER-R2")(r)
        });
    team.model.finished(after);
    let conversation = again.conversation_text();
    assert!(
        conversation.contains("REMEMBER-R1") && conversation.contains("PELICAN-R1"),
        "the earlier turns are not in its first request after the resume:\n{conversation}"
    );
    assert_eq!(again.session.as_deref(), Some(session.as_str()));
}
