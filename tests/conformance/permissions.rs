//! Every protocol message Claude Code writes is known (issue 23, part 3): a teammate in
//! `--permission-mode default` asked to run Bash writes a permission request to the lead's inbox,
//! which swarm decodes and shows in words (docs/ARCHITECTURE.md, "Messages").

use serde_json::json;

use crate::claude::{ClaudeTeam, Teammate, WORKER};
use crate::harness::eventually;
use crate::model::{brings, step, tool};

#[test]
#[ignore = "conformance tier: run scripts/conformance"]
fn a_permission_request_is_decoded_and_shown_in_words() {
    let team = ClaudeTeam::new();
    team.model.on(
        brings("RUN-BASH-H"),
        vec![step(vec![tool(
            "Bash",
            json!({ "command": "echo PERM-H > perm.txt", "description": "write perm.txt" }),
        )])],
    );
    team.up(&Teammate {
        permission_mode: "default",
        ..Teammate::default()
    });
    team.swarm()
        .args(["send", WORKER, "RUN-BASH-H"])
        .run()
        .success();

    let mut request = serde_json::Value::Null;
    eventually("the permission request in the lead's inbox", || {
        request = team
            .lead_inbox()
            .into_iter()
            .find(|m| {
                m["from"] == WORKER
                    && m["text"]
                        .as_str()
                        .is_some_and(|t| t.contains("permission_request"))
            })
            .unwrap_or_default();
        !request.is_null()
    });
    let structured = &request["structured"];
    assert_eq!(structured["type"], "permission_request", "{request:#}");
    assert_eq!(structured["agent_id"], WORKER, "{request:#}");
    assert_eq!(structured["tool_name"], "Bash", "{request:#}");
    assert_eq!(
        structured["input"]["command"], "echo PERM-H > perm.txt",
        "{request:#}"
    );
    let id = structured["request_id"].as_str().unwrap_or_default();
    assert!(id.starts_with("perm-"), "{request:#}");

    // In words, not as JSON.
    let shown = team
        .swarm()
        .args(["inbox", "team-lead"])
        .run()
        .success()
        .stdout;
    let line = shown
        .lines()
        .find(|l| l.contains(id))
        .unwrap_or_else(|| panic!("the request is not listed: {shown}"));
    assert!(
        line.contains("asks permission to use Bash")
            && line.contains("echo PERM-H > perm.txt")
            && !line.contains("{\""),
        "{line}"
    );
}
