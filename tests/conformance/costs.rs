//! What a real Claude Code teammate spends, as swarm counts it (docs/ARCHITECTURE.md, "Costs and
//! budgets"): the transcript is where `ClaudePaths::transcript` says, and `swarm cost` shows for
//! the member the sum of the usage the model stand-in reported for the main requests of its
//! session, each reply once.

use std::fs;

use crate::claude::{ClaudeTeam, TEAM, Teammate, WORKER};
use crate::harness::eventually;
use crate::model::{INPUT_TOKENS, OUTPUT_TOKENS, brings, step, text};

#[test]
#[ignore = "conformance tier: run scripts/conformance"]
fn swarm_cost_shows_the_usage_the_model_reported() {
    let team = ClaudeTeam::new();
    let reply = team
        .model
        .on(brings("COST-PING"), vec![step(vec![text("Counted.")])]);
    team.up(&Teammate::default());
    team.swarm()
        .args(["send", WORKER, "COST-PING"])
        .run()
        .success();
    team.model.finished(reply);

    let session = team.worker()["sessionId"].as_str().unwrap().to_owned();
    // Where Claude Code writes it: `~/.claude/projects/<cwd, each character but a-zA-Z0-9 a
    // '-'>/<session>.jsonl`.
    let cwd = fs::canonicalize(team.sandbox.work()).unwrap();
    let folder: String = cwd
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let transcript = team
        .sandbox
        .root()
        .join("user/.claude/projects")
        .join(folder)
        .join(format!("{session}.jsonl"));
    eventually("the transcript where the rule puts it", || {
        transcript.is_file()
    });

    let answered = || {
        team.model
            .requests()
            .iter()
            .filter(|r| r.is_main() && r.session.as_deref() == Some(session.as_str()))
            .count() as u64
    };
    let counted = || {
        let cost = team
            .swarm()
            .args(["cost", TEAM, "--json"])
            .run()
            .success()
            .json();
        let member = cost["members"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == WORKER)
            .cloned()
            .unwrap();
        (
            member["total"]["tokens"]["input"].as_u64().unwrap(),
            member["total"]["tokens"]["output"].as_u64().unwrap(),
        )
    };
    eventually("swarm cost to show what the model reported", || {
        let n = answered();
        n > 0 && counted() == (n * INPUT_TOKENS, n * OUTPUT_TOKENS)
    });
}
