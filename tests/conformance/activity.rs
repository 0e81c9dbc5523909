//! Activity from Claude Code's own hooks (docs/ARCHITECTURE.md, "Activity and events"): the real
//! teammate, launched with the `--settings` the claude profile generates, goes `working` while
//! it takes its first prompt, `idle` when its turn ends, `needs-you` while its Bash ask waits on
//! the lead's side, and `working` again once the ask is allowed; one event a change.

use serde_json::{Value, json};

use crate::claude::{ClaudeTeam, TEAM, Teammate, WORKER};
use crate::harness::eventually;
use crate::model::{brings, step, tool};

fn activity(team: &ClaudeTeam) -> String {
    let status = team
        .swarm()
        .args(["status", "--json"])
        .run()
        .success()
        .json();
    status["members"]
        .as_array()
        .and_then(|rows| rows.iter().find(|row| row["name"] == WORKER))
        .and_then(|row| row["activity"].as_str())
        .unwrap_or("-")
        .to_owned()
}

fn becomes(team: &ClaudeTeam, state: &str) {
    let mut last = String::new();
    let seen = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        eventually(&format!("{WORKER} to be {state}"), || {
            last = activity(team);
            last == state
        });
    }));
    assert!(
        seen.is_ok(),
        "{WORKER} never became {state}; it is {last}; events:\n{}",
        events(team).join("\n")
    );
}

fn events(team: &ClaudeTeam) -> Vec<String> {
    let path = team
        .sandbox
        .root()
        .join("user/.claude/teams")
        .join(TEAM)
        .join("events.jsonl");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["kind"] == "activity" && event["member"] == WORKER)
        .map(|event| {
            format!(
                "{} ({})",
                event["state"].as_str().unwrap_or_default(),
                event["why"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

#[test]
#[ignore = "conformance tier: run scripts/conformance"]
fn a_teammate_goes_working_idle_needs_you_and_working_again() {
    let team = ClaudeTeam::new();
    let marker = team.sandbox.root().join("ACTIVE");
    let chain = team.model.on(
        brings("RUN-BASH-ACT"),
        vec![step(vec![tool(
            "Bash",
            json!({ "command": format!("touch {}", marker.display()), "description": "touch" }),
        )])],
    );
    team.up(&Teammate {
        prompt: Some("say hi"),
        permission_mode: "default",
        ..Teammate::default()
    });
    // Its first turn (the prompt swarm queued) ends: it tells the lead, and is idle.
    eventually("the first turn's idle notification", || {
        team.lead_inbox().iter().any(|m| {
            m["from"] == WORKER
                && m["text"]
                    .as_str()
                    .is_some_and(|t| t.contains("idle_notification"))
        })
    });
    becomes(&team, "idle");
    team.swarm()
        .args(["send", WORKER, "RUN-BASH-ACT"])
        .run()
        .success();
    becomes(&team, "needs-you");
    let asked = team
        .swarm()
        .args(["permission", "list", "--json"])
        .run()
        .success()
        .json();
    let id = asked[0]["requestId"].as_str().unwrap().to_owned();
    team.swarm()
        .args(["permission", "allow", &id])
        .run()
        .success();
    let calls = team.model.finished(chain);
    assert!(marker.exists(), "the tool did not run: {calls:#?}");
    becomes(&team, "idle");
    let seen = events(&team);
    let states: Vec<&str> = seen
        .iter()
        .map(|line| line.split(' ').next().unwrap_or_default())
        .collect();
    assert!(
        states.windows(2).all(|pair| pair[0] != pair[1]),
        "a repeat: {seen:#?}"
    );
    // The first turn ("say hi", no tool) may end before anything records it working (seen once
    // in a full run; its idle was recorded, its working not). The turn with the tool is the one
    // that must show every state.
    let wanted = ["idle", "working", "needs-you", "working", "idle"];
    let mut rest = states.iter();
    assert!(
        wanted.iter().all(|w| rest.any(|s| s == w)),
        "not idle → working → needs-you → working → idle: {seen:#?}"
    );
}
