//! Permission asks (docs/ARCHITECTURE.md, "Permission asks"): a teammate's `permission_request`
//! (or `sandbox_permission_request`), written into the lead's inbox as Claude Code writes it, is
//! listed by `swarm permission list` and answered by `allow` or `deny` with Claude Code's answer,
//! signed as every lead message is, once; `permission log` shows every answer.

use serde_json::{Value, json};

use crate::harness::{Sandbox, Team, eventually, state};

pub(crate) const TEAM: &str = r#"
name = "pa"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "bob"
command = ["sleep", "1000"]
[[member]]
name = "quick"
command = ["true"]
"#;

fn now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap()
}

/// Claude Code's `permission_request` from `member` to run `command` in Bash.
pub(crate) fn bash_ask(id: &str, member: &str, command: &str) -> Value {
    json!({
        "type": "permission_request",
        "request_id": id,
        "agent_id": member,
        "tool_name": "Bash",
        "tool_use_id": format!("toolu_{id}"),
        "description": "Create a marker file",
        "input": {"command": command, "description": "Create a marker file"},
        "permission_suggestions": [
            {"type": "addDirectories", "directories": ["/tmp"], "destination": "session"},
            {"type": "setMode", "mode": "acceptEdits", "destination": "session"}
        ]
    })
}

/// `ask` written by `member` into the lead's inbox, as Claude Code writes it.
pub(crate) fn ask(sandbox: &Sandbox, member: &str, ask: &Value) {
    sandbox.append_inbox_as_claude(
        "pa",
        "team-lead",
        &[json!({"from": member, "text": ask.to_string(), "timestamp": now(), "read": false})],
    );
}

fn list(sandbox: &Sandbox) -> Vec<Value> {
    let listed = sandbox
        .swarm()
        .args(["permission", "list", "--json"])
        .team("pa")
        .run()
        .success()
        .json();
    listed.as_array().unwrap().clone()
}

/// The messages in `member`'s inbox from the lead, as `inbox --json` shows them: decoded, and
/// whether their signature verifies.
fn from_lead(sandbox: &Sandbox, member: &str) -> Vec<Value> {
    let inbox = sandbox
        .swarm()
        .args(["inbox", member, "--json"])
        .team("pa")
        .run()
        .success()
        .json();
    inbox
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["from"] == "team-lead")
        .cloned()
        .collect()
}

fn answer(sandbox: &Sandbox, args: &[&str]) -> crate::harness::Outcome {
    sandbox
        .swarm()
        .arg("permission")
        .args(args)
        .team("pa")
        .run()
}

pub(crate) fn up(sandbox: &Sandbox) -> Team<'_> {
    let team = Team::up(sandbox, TEAM);
    eventually("bob running, quick ended", || {
        state(sandbox, "pa", "bob") == "running" && state(sandbox, "pa", "quick") == "exited"
    });
    team
}

/// An ask is listed in words and in JSON; `allow` sends Claude Code's success answer (the input
/// back whole, no rules kept), signed so that it verifies; the ask leaves the list, and a second
/// answer is refused.
#[test]
fn an_ask_is_listed_and_allowed_once_with_a_signed_answer() {
    let sandbox = Sandbox::new();
    let _team = up(&sandbox);
    let request = bash_ask("perm-1-aaa", "bob", "touch /tmp/marker");
    ask(&sandbox, "bob", &request);

    let text = sandbox
        .swarm()
        .args(["permission", "list"])
        .team("pa")
        .run()
        .success()
        .stdout;
    let rows: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0], ["ID", "MEMBER", "TOOL", "AGE", "WHAT"], "{text}");
    assert_eq!(rows.len(), 2, "{text}");
    assert_eq!(rows[1][..3], ["perm-1-aaa", "bob", "Bash"], "{text}");
    assert!(rows[1][3].ends_with('s'), "{text}");
    assert_eq!(rows[1][5..], ["touch", "/tmp/marker"], "{text}");

    let listed = list(&sandbox);
    assert_eq!(listed.len(), 1, "{listed:#?}");
    let asked_at = listed[0]["askedAt"].as_str().unwrap().to_owned();
    assert_eq!(
        listed[0],
        json!({
            "requestId": "perm-1-aaa",
            "member": "bob",
            "tool": "Bash",
            "input": request["input"],
            "description": "Create a marker file",
            "suggestions": request["permission_suggestions"],
            "askedAt": asked_at,
        })
    );

    answer(&sandbox, &["allow", "perm-1-aaa"])
        .success()
        .stdout_is("allowed perm-1-aaa (Bash) for bob\n");
    let sent = from_lead(&sandbox, "bob");
    let response = sent
        .iter()
        .find(|m| m["structured"]["type"] == "permission_response")
        .unwrap_or_else(|| panic!("no permission_response in bob's inbox: {sent:#?}"));
    assert_eq!(response["verified"], true, "{response:#}");
    assert!(response["lead_sig"].is_string(), "{response:#}");
    assert_eq!(
        response["structured"],
        json!({
            "type": "permission_response",
            "request_id": "perm-1-aaa",
            "subtype": "success",
            "tool_use_id": "toolu_perm-1-aaa",
            "response": {"updated_input": request["input"], "permission_updates": []},
        })
    );

    assert_eq!(list(&sandbox), Vec::<Value>::new());
    answer(&sandbox, &["allow", "perm-1-aaa"]).refused(
        2,
        "permission request perm-1-aaa was already answered: allowed by user at ",
    );
    answer(&sandbox, &["deny", "perm-1-aaa"]).refused(2, "was already answered");
    let responses = from_lead(&sandbox, "bob")
        .into_iter()
        .filter(|m| m["structured"]["type"] == "permission_response")
        .count();
    assert_eq!(responses, 1);
}

/// `allow --always` keeps the ask's suggestions; `deny --reason` sends Claude Code's error
/// answer with the reason; both signed. A sandbox host ask is listed and answered likewise.
#[test]
fn always_keeps_the_suggestions_and_deny_says_why() {
    let sandbox = Sandbox::new();
    let _team = up(&sandbox);
    let first = bash_ask("perm-2-aaa", "bob", "touch /tmp/a");
    let second = bash_ask("perm-2-bbb", "bob", "rm -rf /");
    ask(&sandbox, "bob", &first);
    ask(&sandbox, "bob", &second);
    ask(
        &sandbox,
        "bob",
        &json!({
            "type": "sandbox_permission_request",
            "requestId": "sandbox-2-ccc",
            "workerId": "bob@pa",
            "workerName": "bob",
            "hostPattern": {"host": "docs.rs"},
            "createdAt": 1
        }),
    );
    let ids: Vec<(Value, Value)> = list(&sandbox)
        .iter()
        .map(|a| (a["requestId"].clone(), a["tool"].clone()))
        .collect();
    assert_eq!(
        ids,
        [
            (json!("perm-2-aaa"), json!("Bash")),
            (json!("perm-2-bbb"), json!("Bash")),
            (json!("sandbox-2-ccc"), json!("network")),
        ]
    );

    answer(&sandbox, &["allow", "perm-2-aaa", "--always"])
        .success()
        .stdout_is("allowed always perm-2-aaa (Bash) for bob\n");
    answer(
        &sandbox,
        &["deny", "perm-2-bbb", "--reason", "not on my disk"],
    )
    .success()
    .stdout_is("denied perm-2-bbb (Bash) for bob\n");
    answer(&sandbox, &["allow", "sandbox-2-ccc", "--always"])
        .refused(2, "sandbox-2-ccc asks to reach a host");
    answer(&sandbox, &["allow", "sandbox-2-ccc", "--json"]).success();

    let sent = from_lead(&sandbox, "bob");
    let by_id = |id: &str| {
        sent.iter()
            .find(|m| m["structured"]["request_id"] == id || m["structured"]["requestId"] == id)
            .unwrap_or_else(|| panic!("no answer to {id}: {sent:#?}"))
            .clone()
    };
    let always = by_id("perm-2-aaa");
    assert_eq!(always["verified"], true, "{always:#}");
    assert_eq!(
        always["structured"]["response"]["permission_updates"],
        first["permission_suggestions"]
    );
    let denied = by_id("perm-2-bbb");
    assert_eq!(denied["verified"], true, "{denied:#}");
    assert_eq!(
        denied["structured"],
        json!({
            "type": "permission_response",
            "request_id": "perm-2-bbb",
            "subtype": "error",
            "tool_use_id": "toolu_perm-2-bbb",
            "error": "Permission denied by user: not on my disk",
        })
    );
    let host = by_id("sandbox-2-ccc");
    assert_eq!(host["verified"], true, "{host:#}");
    assert_eq!(host["structured"]["type"], "sandbox_permission_response");
    assert_eq!(host["structured"]["host"], "docs.rs");
    assert_eq!(host["structured"]["allow"], true);
    assert_eq!(list(&sandbox), Vec::<Value>::new());

    // The log has every answer, oldest first.
    let logged = sandbox
        .swarm()
        .args(["permission", "log", "--json"])
        .team("pa")
        .run()
        .success()
        .json();
    let logged: Vec<Value> = logged
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            assert!(a["at"].as_str().unwrap().ends_with('Z'), "{a}");
            let mut a = a.clone();
            a.as_object_mut().unwrap().remove("at");
            a
        })
        .collect();
    assert_eq!(
        logged,
        [
            json!({"requestId": "perm-2-aaa", "member": "bob", "tool": "Bash", "allowed": true,
                   "always": true, "mode": null, "reason": null, "by": "user"}),
            json!({"requestId": "perm-2-bbb", "member": "bob", "tool": "Bash", "allowed": false,
                   "always": false, "mode": null, "reason": "not on my disk", "by": "user"}),
            json!({"requestId": "sandbox-2-ccc", "member": "bob", "tool": "network",
                   "allowed": true, "always": false, "mode": null, "reason": null, "by": "user"}),
        ]
    );
    let text = sandbox
        .swarm()
        .args(["permission", "log"])
        .team("pa")
        .run()
        .success()
        .stdout;
    let rows: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().skip(1).collect())
        .collect();
    assert_eq!(
        rows,
        [
            vec!["ID", "MEMBER", "TOOL", "ANSWER", "BY", "REASON"],
            vec![
                "perm-2-aaa",
                "bob",
                "Bash",
                "allowed",
                "always",
                "user",
                "-"
            ],
            vec![
                "perm-2-bbb",
                "bob",
                "Bash",
                "denied",
                "user",
                "not",
                "on",
                "my",
                "disk"
            ],
            vec!["sandbox-2-ccc", "bob", "network", "allowed", "user", "-"],
        ],
        "{text}"
    );
}

/// An unknown id is not found (exit 3); a teammate may not answer (exit 2), and nothing is sent;
/// an ask whose member has ended is withdrawn: not listed, and not answered.
#[test]
fn unknown_ids_teammates_and_ended_members_are_refused() {
    let sandbox = Sandbox::new();
    let _team = up(&sandbox);
    ask(
        &sandbox,
        "bob",
        &bash_ask("perm-3-aaa", "bob", "touch /tmp/b"),
    );
    ask(
        &sandbox,
        "quick",
        &bash_ask("perm-3-bbb", "quick", "touch /tmp/q"),
    );

    answer(&sandbox, &["allow", "perm-3-zzz"]).refused_exactly(
        3,
        "swarm: there is no permission request perm-3-zzz in team-lead's inbox or history\n\
         hint: `swarm permission list` shows the asks waiting for an answer\n",
    );
    sandbox
        .swarm()
        .args(["permission", "allow", "perm-3-aaa"])
        .team("pa")
        .as_("bob")
        .run()
        .refused(
            2,
            "only the lead or the person at the keyboard may answer a permission request; bob is a teammate",
        );
    assert!(from_lead(&sandbox, "bob").is_empty());

    let ids: Vec<Value> = list(&sandbox)
        .iter()
        .map(|a| a["requestId"].clone())
        .collect();
    assert_eq!(ids, [json!("perm-3-aaa")]);
    answer(&sandbox, &["allow", "perm-3-bbb"]).refused_exactly(
        2,
        "swarm: quick has ended: its permission request perm-3-bbb is withdrawn\n",
    );
    // The lead may answer what is still asked.
    sandbox
        .swarm()
        .args(["permission", "deny", "perm-3-aaa"])
        .team("pa")
        .as_("team-lead")
        .run()
        .success();
}

/// A 10 MB input is listed cut short (a line of the table, the whole of it in --json) and answered
/// whole, past the 1 MiB message limit.
#[test]
fn a_ten_megabyte_input_is_listed_short_and_answered_whole() {
    let sandbox = Sandbox::new();
    let _team = up(&sandbox);
    let command = format!("echo {}", "x".repeat(10 * 1024 * 1024));
    let request = bash_ask("perm-4-aaa", "bob", &command);
    ask(&sandbox, "bob", &request);

    let text = sandbox
        .swarm()
        .args(["permission", "list"])
        .team("pa")
        .run()
        .success()
        .stdout;
    assert_eq!(text.lines().count(), 2, "{}", &text[..text.len().min(500)]);
    assert!(text.len() < 300, "{}", &text[..text.len().min(500)]);
    assert!(text.contains("echo xxxx"), "{text}");
    assert!(text.contains('…'), "{text}");
    assert_eq!(list(&sandbox)[0]["input"]["command"], command.as_str());

    answer(&sandbox, &["allow", "perm-4-aaa"]).success();
    let sent = from_lead(&sandbox, "bob");
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["verified"], true);
    assert_eq!(
        sent[0]["structured"]["response"]["updated_input"]["command"],
        command.as_str()
    );
}

/// An answer given with `swarm send` as raw JSON is the same answer: recorded, so `allow` after it
/// is refused, and a raw answer after `allow` is refused too.
#[test]
fn a_raw_answer_with_send_counts_once_like_allow() {
    let sandbox = Sandbox::new();
    let _team = up(&sandbox);
    ask(
        &sandbox,
        "bob",
        &bash_ask("perm-5-aaa", "bob", "touch /tmp/c"),
    );
    ask(
        &sandbox,
        "bob",
        &bash_ask("perm-5-bbb", "bob", "touch /tmp/d"),
    );
    let raw = |id: &str| {
        json!({"type": "permission_response", "request_id": id, "subtype": "error",
               "tool_use_id": format!("toolu_{id}"), "error": "no"})
        .to_string()
    };

    sandbox
        .swarm()
        .args(["send", "bob", &raw("perm-5-aaa")])
        .team("pa")
        .run()
        .success();
    answer(&sandbox, &["allow", "perm-5-aaa"]).refused(
        2,
        "permission request perm-5-aaa was already answered: denied by user at ",
    );

    answer(&sandbox, &["allow", "perm-5-bbb"]).success();
    sandbox
        .swarm()
        .args(["send", "bob", &raw("perm-5-bbb")])
        .team("pa")
        .run()
        .refused(
            2,
            "permission request perm-5-bbb was already answered: allowed by user at ",
        );

    assert_eq!(list(&sandbox), Vec::<Value>::new());
    let answers: Vec<(Value, Value)> = from_lead(&sandbox, "bob")
        .iter()
        .map(|m| (m["structured"]["request_id"].clone(), m["verified"].clone()))
        .collect();
    assert_eq!(
        answers,
        [
            (json!("perm-5-aaa"), json!(true)),
            (json!("perm-5-bbb"), json!(true))
        ]
    );
}

/// `swarm mode NAME MODE` sets a Claude Code teammate's mode the one way it takes one from its
/// lead, with the answer to an ask: it allows bob's oldest ask with a `setMode` update, signed;
/// with none waiting it sends nothing (exit 3, one line). `allow --mode` does the same for a given
/// ask, with `--always` in place of any mode the suggestions name; bypassPermissions, a host ask
/// and a teammate are refused (exit 2); `permission log` names the mode.
#[test]
fn mode_and_allow_mode_set_the_mode_with_an_answer() {
    let sandbox = Sandbox::new();
    let _team = up(&sandbox);
    let mode = |args: &[&str]| sandbox.swarm().arg("mode").args(args).team("pa").run();
    mode(&["bob", "acceptEdits"]).refused_exactly(
        3,
        "swarm: bob has no permission ask waiting: Claude Code takes a new mode only with the answer to one, and drops a mode sent on its own\n\
         hint: `swarm wait --decision` returns when one waits; `swarm permission allow ID --mode MODE` answers a given one\n",
    );
    mode(&["nobody", "plan"]).refused(3, "nobody is not a member of team pa");
    mode(&["bob", "sideways"])
        .code(2)
        .stderr_has("invalid value 'sideways'");

    ask(
        &sandbox,
        "bob",
        &bash_ask("perm-m-1", "bob", "touch /tmp/m1"),
    );
    ask(
        &sandbox,
        "bob",
        &bash_ask("perm-m-2", "bob", "touch /tmp/m2"),
    );
    ask(
        &sandbox,
        "bob",
        &json!({
            "type": "sandbox_permission_request", "requestId": "sandbox-m-3",
            "workerId": "bob@pa", "workerName": "bob", "hostPattern": {"host": "docs.rs"},
            "createdAt": 1
        }),
    );
    sandbox
        .swarm()
        .args(["mode", "bob", "plan"])
        .team("pa")
        .as_("bob")
        .run()
        .refused(2, "bob is a teammate");
    mode(&["bob", "bypassPermissions"]).refused(2, "launched in that mode");
    mode(&["bob", "acceptEdits"])
        .success()
        .stdout_is("allowed perm-m-1 (Bash) for bob, its mode now acceptEdits\n");
    answer(&sandbox, &["allow", "sandbox-m-3", "--mode", "plan"])
        .refused(2, "its answer carries no permission mode");
    answer(
        &sandbox,
        &["allow", "perm-m-2", "--always", "--mode", "default"],
    )
    .success()
    .stdout_is("allowed always perm-m-2 (Bash) for bob, its mode now default\n");

    let sent = from_lead(&sandbox, "bob");
    let updates = |id: &str| {
        let answer = sent
            .iter()
            .find(|m| m["structured"]["request_id"] == id)
            .unwrap_or_else(|| panic!("no answer to {id}: {sent:#?}"));
        assert_eq!(answer["verified"], true, "{answer:#}");
        answer["structured"]["response"]["permission_updates"].clone()
    };
    assert_eq!(
        updates("perm-m-1"),
        json!([{"type": "setMode", "mode": "acceptEdits", "destination": "session"}])
    );
    assert_eq!(
        updates("perm-m-2"),
        json!([
            {"type": "addDirectories", "directories": ["/tmp"], "destination": "session"},
            {"type": "setMode", "mode": "default", "destination": "session"}
        ])
    );
    let log = answer(&sandbox, &["log", "--json"]).success().json();
    let modes: Vec<(&str, &str, bool)> = log
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["requestId"].as_str().unwrap(),
                a["mode"].as_str().unwrap_or("-"),
                a["always"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        modes,
        [
            ("perm-m-1", "acceptEdits", false),
            ("perm-m-2", "default", true)
        ]
    );
    mode(&["bob", "acceptEdits"]).refused(3, "bob has no permission ask waiting");
    let table = answer(&sandbox, &["log"]).success().stdout;
    assert!(
        table
            .lines()
            .any(|l| l.contains("perm-m-1") && l.contains("allowed, mode acceptEdits")),
        "{table}"
    );
}
