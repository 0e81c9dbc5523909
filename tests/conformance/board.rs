//! The task board shared both ways with a Claude Code teammate (issue 23, part 1): its TaskList
//! shows swarm's tasks, its TaskUpdate claim is what swarm reports and enforces, and swarm gives
//! the task back when it ends.

use serde_json::{Value, json};

use crate::claude::{ClaudeTeam, TEAM, Teammate, WORKER};
use crate::model::{approve_shutdown, brings, load_tools, step, text, tool};

#[test]
#[ignore = "conformance tier: run scripts/conformance"]
fn the_board_is_shared_both_ways() {
    let team = ClaudeTeam::new();
    let board = team.model.on(
        brings("CHECK-BOARD-E"),
        vec![
            step(vec![load_tools(&["TaskList", "TaskUpdate"])]),
            step(vec![tool("TaskList", json!({}))]),
            step(vec![tool(
                "TaskUpdate",
                json!({ "taskId": "1", "owner": WORKER, "status": "in_progress" }),
            )]),
            step(vec![text("Claimed.")]),
        ],
    );
    team.model.on(
        brings("shutdown_request"),
        vec![step(vec![load_tools(&["SendMessage"])]), approve_shutdown()],
    );
    team.up(&Teammate::default());
    team.swarm()
        .args(["task", "add", "Write the report"])
        .run()
        .success();
    team.swarm()
        .args(["send", WORKER, "CHECK-BOARD-E"])
        .run()
        .success();

    let calls = team.model.finished(board);
    let listed = calls.iter().find(|c| c.tool == "TaskList").unwrap();
    let list = listed.result.as_deref().unwrap_or_default();
    assert!(
        !listed.is_error && list.contains("Write the report"),
        "Claude Code's TaskList does not show swarm's task: {calls:#?}"
    );
    let update = calls.iter().find(|c| c.tool == "TaskUpdate").unwrap();
    assert!(!update.is_error, "{calls:#?}");

    // Its claim is swarm's: shown, and refused to another member.
    let task = task_one(&team);
    assert_eq!(task["owner"], WORKER, "{task:#}");
    assert_eq!(task["status"], "in_progress", "{task:#}");
    team.swarm()
        .args(["task", "claim", "1"])
        .run()
        .refused(2, "already_claimed");

    // When it ends, swarm gives the task back.
    team.swarm()
        .args(["down", TEAM, "--timeout", "50"])
        .run()
        .success();
    let task = task_one(&team);
    assert_eq!(task["status"], "pending", "{task:#}");
    assert!(task.get("owner").is_none_or(Value::is_null), "{task:#}");
}

/// Task 1 as `swarm task show --json` shows it.
fn task_one(team: &ClaudeTeam) -> Value {
    team.swarm()
        .args(["task", "show", "1", "--json"])
        .run()
        .success()
        .json()
}
