//! Every protocol message Claude Code writes is known (issue 23, part 3): a teammate in
//! `--permission-mode default` asked to run Bash writes a permission request to the lead's inbox,
//! which swarm decodes and shows in words (docs/ARCHITECTURE.md, "Messages"). `swarm permission`
//! lists that ask and answers it (issue 24, "Permission asks"): allowed, Claude Code runs the
//! tool; denied, it does not. A team rule answers with no one (issue 24, "Permission rules").

use std::path::Path;

use serde_json::{Value, json};

use crate::claude::{ClaudeTeam, Teammate, WORKER};
use crate::harness::eventually;
use crate::model::{ChainId, brings, step, tool};

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

    let mut request = Value::Null;
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

/// The teammate, asked `trigger`, calls Bash to touch `marker` and waits for the lead's answer;
/// returns the chain and the ask as `swarm permission list --json` shows it.
fn ask_to_touch(team: &ClaudeTeam, trigger: &'static str, marker: &Path) -> (ChainId, Value) {
    let command = format!("touch {}", marker.display());
    let chain = team.model.on(
        brings(trigger),
        vec![step(vec![tool(
            "Bash",
            json!({ "command": command, "description": "touch the marker" }),
        )])],
    );
    team.up(&Teammate {
        permission_mode: "default",
        ..Teammate::default()
    });
    team.swarm().args(["send", WORKER, trigger]).run().success();
    let mut asked = Value::Null;
    eventually("the ask in swarm permission list", || {
        let listed = team
            .swarm()
            .args(["permission", "list", "--json"])
            .run()
            .success()
            .json();
        asked = listed
            .as_array()
            .and_then(|asks| asks.first().cloned())
            .unwrap_or_default();
        !asked.is_null()
    });
    assert_eq!(asked["member"], WORKER, "{asked:#}");
    assert_eq!(asked["tool"], "Bash", "{asked:#}");
    assert_eq!(asked["input"]["command"], command.as_str(), "{asked:#}");
    let text = team
        .swarm()
        .args(["permission", "list"])
        .run()
        .success()
        .stdout;
    let id = asked["requestId"].as_str().unwrap();
    assert!(
        text.lines()
            .any(|l| l.starts_with(id) && l.contains(&command)),
        "{text}"
    );
    assert!(!marker.exists());
    (chain, asked)
}

#[test]
#[ignore = "conformance tier: run scripts/conformance"]
fn an_allowed_permission_ask_runs_the_tool() {
    let team = ClaudeTeam::new();
    let marker = team.sandbox.root().join("ALLOWED");
    let (chain, asked) = ask_to_touch(&team, "RUN-BASH-ALLOW", &marker);
    let id = asked["requestId"].as_str().unwrap();
    team.swarm()
        .args(["permission", "allow", id])
        .run()
        .success()
        .stdout_is(&format!("allowed {id} (Bash) for {WORKER}\n"));
    let calls = team.model.finished(chain);
    assert!(marker.exists(), "the tool did not run: {calls:#?}");
    assert!(!calls[0].is_error, "{calls:#?}");
    let listed = team
        .swarm()
        .args(["permission", "list", "--json"])
        .run()
        .success()
        .json();
    assert_eq!(listed, json!([]));
}

#[test]
#[ignore = "conformance tier: run scripts/conformance"]
fn a_denied_permission_ask_does_not_run_the_tool() {
    let team = ClaudeTeam::new();
    let marker = team.sandbox.root().join("DENIED");
    let (chain, asked) = ask_to_touch(&team, "RUN-BASH-DENY", &marker);
    let id = asked["requestId"].as_str().unwrap();
    team.swarm()
        .args(["permission", "deny", id, "--reason", "not today"])
        .run()
        .success()
        .stdout_is(&format!("denied {id} (Bash) for {WORKER}\n"));
    let calls = team.model.finished(chain);
    assert!(!marker.exists(), "the tool ran: {calls:#?}");
    assert!(calls[0].is_error, "{calls:#?}");
    let result = calls[0].result.as_deref().unwrap_or_default();
    assert!(result.contains("not today"), "{calls:#?}");
}

/// A rule answers without anyone: the teammate's Bash ask matches the team's allow rule, and the
/// team's signing agent answers it, signed, with nobody running `permission allow`; Claude Code
/// runs the tool, and `permission log` names the rule.
#[test]
#[ignore = "conformance tier: run scripts/conformance"]
fn a_rule_answers_without_anyone() {
    let team = ClaudeTeam::new();
    let marker = team.sandbox.root().join("RULED");
    let command = format!("touch {}", marker.display());
    let chain = team.model.on(
        brings("RUN-BASH-RULE"),
        vec![step(vec![tool(
            "Bash",
            json!({ "command": command, "description": "touch the marker" }),
        )])],
    );
    team.up(&Teammate {
        permission_mode: "default",
        permissions: Some("allow = [\"Bash(touch:*)\"]"),
        ..Teammate::default()
    });
    team.swarm()
        .args(["send", WORKER, "RUN-BASH-RULE"])
        .run()
        .success();
    let calls = team.model.finished(chain);
    assert!(marker.exists(), "the tool did not run: {calls:#?}");
    assert!(!calls[0].is_error, "{calls:#?}");
    let log = team
        .swarm()
        .args(["permission", "log", "--json"])
        .run()
        .success()
        .json();
    let answers = log.as_array().unwrap();
    assert_eq!(answers.len(), 1, "{log:#}");
    assert_eq!(answers[0]["member"], WORKER, "{log:#}");
    assert_eq!(answers[0]["allowed"], true, "{log:#}");
    assert_eq!(answers[0]["by"], "rule: Bash(touch:*)", "{log:#}");
    let listed = team
        .swarm()
        .args(["permission", "list", "--json"])
        .run()
        .success()
        .json();
    assert_eq!(listed, json!([]));
}

/// The real teammate applies a `setMode` entry of an allow's `permission_updates` (issue 24,
/// `swarm mode`): asked to write three files in `default` mode, it asks for the first; allowed
/// with no updates, it asks again for the second (an edit asks in this mode); allowed with
/// `{"type":"setMode","mode":"acceptEdits","destination":"session"}` (`permission allow --mode
/// acceptEdits`), it writes the third asking nobody.
#[test]
#[ignore = "conformance tier: run scripts/conformance"]
fn an_allow_with_a_mode_changes_the_teammates_mode() {
    let team = ClaudeTeam::new();
    let work = std::fs::canonicalize(team.sandbox.work()).unwrap();
    let files = ["FIRST.txt", "SECOND.txt", "THIRD.txt"].map(|name| work.join(name));
    let write = |path: &Path| {
        step(vec![tool(
            "Write",
            json!({ "file_path": path.display().to_string(), "content": "written\n" }),
        )])
    };
    let chain = team.model.on(
        brings("WRITE-THREE"),
        files.iter().map(|f| write(f)).collect(),
    );
    team.up(&Teammate {
        permission_mode: "default",
        ..Teammate::default()
    });
    team.swarm()
        .args(["send", WORKER, "WRITE-THREE"])
        .run()
        .success();
    let asked = |team: &ClaudeTeam, file: &Path| -> String {
        let mut id = String::new();
        eventually(&format!("the ask to write {}", file.display()), || {
            let listed = team
                .swarm()
                .args(["permission", "list", "--json"])
                .run()
                .success()
                .json();
            id = listed
                .as_array()
                .and_then(|asks| asks.first())
                .filter(|ask| ask["input"]["file_path"] == file.display().to_string())
                .map(|ask| ask["requestId"].as_str().unwrap().to_owned())
                .unwrap_or_default();
            !id.is_empty()
        });
        id
    };
    let first = asked(&team, &files[0]);
    team.swarm()
        .args(["permission", "allow", &first])
        .run()
        .success();
    let second = asked(&team, &files[1]);
    assert!(files[0].exists(), "FIRST.txt was not written");
    team.swarm()
        .args(["permission", "allow", &second, "--mode", "acceptEdits"])
        .run()
        .success()
        .stdout_is(&format!(
            "allowed {second} (Write) for {WORKER}, its mode now acceptEdits\n"
        ));
    let calls = team.model.finished(chain);
    assert!(files.iter().all(|f| f.exists()), "{calls:#?}");
    assert!(calls.iter().all(|c| !c.is_error), "{calls:#?}");
    let log = team
        .swarm()
        .args(["permission", "log", "--json"])
        .run()
        .success()
        .json();
    assert_eq!(
        log.as_array().unwrap().len(),
        2,
        "the third write asked: {log:#}"
    );
}
