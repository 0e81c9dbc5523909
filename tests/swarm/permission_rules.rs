//! Permission rules (docs/ARCHITECTURE.md, "Permission rules"): the team file's `[permissions]`,
//! team-wide and per member, answer a teammate's ask at once, with nobody running `permission
//! allow` and the lead a script: the team's signing agent sends the same signed answer and
//! records it as `rule: <rule>`. Deny wins; what no rule matches waits; a rule that cannot parse
//! is refused at `up`.

use serde_json::{Value, json};

use crate::harness::{Sandbox, Team, eventually, state};

const TEAM: &str = r#"
name = "pr"
[permissions]
allow = ["Bash(git status:*)", "Bash(rm -i *)"]
deny = ["Bash(rm:*)"]
[lead]
[[member]]
name = "bob"
command = ["sleep", "1000"]
[member.permissions]
allow = ["Edit(src/**)"]
[[member]]
name = "carol"
command = ["sleep", "1000"]
"#;

fn now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap()
}

/// Claude Code's `permission_request` from `member` for `tool` with `input`, written into the
/// lead's inbox as Claude Code writes it.
fn ask(sandbox: &Sandbox, id: &str, member: &str, tool: &str, input: Value) {
    let request = json!({
        "type": "permission_request",
        "request_id": id,
        "agent_id": member,
        "tool_name": tool,
        "tool_use_id": format!("toolu_{id}"),
        "description": "",
        "input": input,
        "permission_suggestions": []
    });
    sandbox.append_inbox_as_claude(
        "pr",
        "team-lead",
        &[json!({"from": member, "text": request.to_string(), "timestamp": now(), "read": false})],
    );
}

fn log(sandbox: &Sandbox) -> Vec<Value> {
    let log = sandbox
        .swarm()
        .args(["permission", "log", "--json"])
        .team("pr")
        .run()
        .success()
        .json();
    log.as_array().unwrap().clone()
}

/// The answer to `id` in `member`'s inbox, as `inbox --json` shows it.
fn response(sandbox: &Sandbox, member: &str, id: &str) -> Option<Value> {
    let inbox = sandbox
        .swarm()
        .args(["inbox", member, "--json"])
        .team("pr")
        .run()
        .success()
        .json();
    inbox.as_array().unwrap().iter().find_map(|m| {
        (m["structured"]["type"] == "permission_response" && m["structured"]["request_id"] == id)
            .then(|| m.clone())
    })
}

/// A team-wide allow rule answers bob's Bash ask with no one asked; a deny rule wins over an allow
/// rule that also matches, and covers any part of a compound command; bob's own rule is his
/// alone; what no rule matches waits in `permission list`. Every answer is signed and verifies,
/// and `permission log` names the rule.
#[test]
fn a_rule_answers_an_ask_with_no_one() {
    let sandbox = Sandbox::new();
    let _team = Team::up(&sandbox, TEAM);
    eventually("bob and carol running", || {
        state(&sandbox, "pr", "bob") == "running" && state(&sandbox, "pr", "carol") == "running"
    });
    let cwd = sandbox.work().display().to_string();
    ask(
        &sandbox,
        "perm-r-1",
        "bob",
        "Bash",
        json!({"command": "git status --short"}),
    );
    ask(
        &sandbox,
        "perm-r-2",
        "bob",
        "Bash",
        json!({"command": "rm -i x"}),
    );
    ask(
        &sandbox,
        "perm-r-3",
        "carol",
        "Bash",
        json!({"command": "git status && rm -rf ~"}),
    );
    ask(
        &sandbox,
        "perm-r-4",
        "bob",
        "Edit",
        json!({"file_path": format!("{cwd}/src/a.rs")}),
    );
    ask(
        &sandbox,
        "perm-r-5",
        "carol",
        "Edit",
        json!({"file_path": format!("{cwd}/src/a.rs")}),
    );
    ask(
        &sandbox,
        "perm-r-6",
        "carol",
        "Bash",
        json!({"command": "git status; curl x | sh"}),
    );

    let mut answered = Vec::new();
    eventually("the rules to answer four asks", || {
        answered = log(&sandbox);
        answered.len() == 4
    });
    let by: Vec<(&str, &str, bool, &str)> = answered
        .iter()
        .map(|a| {
            (
                a["requestId"].as_str().unwrap(),
                a["member"].as_str().unwrap(),
                a["allowed"].as_bool().unwrap(),
                a["by"].as_str().unwrap(),
            )
        })
        .collect();
    for expected in [
        ("perm-r-1", "bob", true, "rule: Bash(git status:*)"),
        ("perm-r-2", "bob", false, "rule: Bash(rm:*)"),
        ("perm-r-3", "carol", false, "rule: Bash(rm:*)"),
        ("perm-r-4", "bob", true, "rule: Edit(src/**)"),
    ] {
        assert!(by.contains(&expected), "{expected:?} not in {by:#?}");
    }

    let allowed = response(&sandbox, "bob", "perm-r-1").expect("bob got an answer to perm-r-1");
    assert_eq!(allowed["verified"], true, "{allowed:#}");
    assert_eq!(
        allowed["structured"]["response"],
        json!({"updated_input": {"command": "git status --short"}, "permission_updates": []})
    );
    let denied = response(&sandbox, "carol", "perm-r-3").expect("carol got an answer");
    assert_eq!(denied["verified"], true, "{denied:#}");
    assert_eq!(denied["structured"]["subtype"], "error");
    let error = denied["structured"]["error"].as_str().unwrap();
    assert!(error.contains("Bash(rm:*)"), "{error}");

    let waiting = sandbox
        .swarm()
        .args(["permission", "list", "--json"])
        .team("pr")
        .run()
        .success()
        .json();
    let ids: Vec<&str> = waiting
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["requestId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["perm-r-5", "perm-r-6"]);
    assert!(response(&sandbox, "carol", "perm-r-5").is_none());
    // What a rule answered, nobody answers again.
    sandbox
        .swarm()
        .args(["permission", "deny", "perm-r-1"])
        .team("pr")
        .run()
        .refused(2, "already answered: allowed by rule: Bash(git status:*)");
}

/// A rule that cannot parse is refused at `up` (exit 2), naming it and where it is, and nothing
/// is launched.
#[test]
fn an_unparsable_rule_is_refused_at_up() {
    let sandbox = Sandbox::new();
    for (text, said) in [
        (
            "name = \"bad\"\n[permissions]\nallow = [\"Bash(git status\"]\n[[member]]\nname = \"a\"\ncommand = \"true\"\n",
            "[permissions]: allow rule \"Bash(git status\" opens a ( it does not close at its end",
        ),
        (
            "name = \"bad\"\n[[member]]\nname = \"a\"\ncommand = \"true\"\n[member.permissions]\ndeny = [\"WebFetch(docs.rs)\"]\n",
            "permissions of member a: deny rule \"WebFetch(docs.rs)\": a WebFetch rule is WebFetch(domain:HOST)",
        ),
        (
            "name = \"bad\"\n[permissions]\nalow = [\"Bash\"]\n",
            "unknown field `alow`",
        ),
    ] {
        let file = sandbox.write("bad.toml", text);
        let outcome = sandbox
            .swarm()
            .arg("up")
            .arg(&file)
            .arg("--detach")
            .run()
            .refused(2, said);
        let said = outcome.stderr.lines().filter(|l| !l.starts_with("hint:"));
        assert_eq!(said.count(), 1, "{}", outcome.stderr);
    }
    sandbox
        .swarm()
        .args(["status"])
        .team("bad")
        .run()
        .refused(3, "");
}

/// The team's `@swarm-asks` window option: empty when unset.
fn asks_flag(team: &Team<'_>, window: &str) -> String {
    team.server().window_option(window, "@swarm-asks")
}

/// An ask no rule answers raises the team's window flag (`@swarm-asks`, the count waiting), where
/// an ask a rule answers does not; answered with `permission allow`, the flag clears.
#[test]
fn an_ask_that_waits_flags_the_teams_window() {
    let sandbox = Sandbox::new();
    let team = Team::up(&sandbox, TEAM);
    eventually("bob and carol running", || {
        state(&sandbox, "pr", "bob") == "running" && state(&sandbox, "pr", "carol") == "running"
    });
    let config: Value =
        serde_json::from_slice(&std::fs::read(sandbox.team_dir("pr").join("config.json")).unwrap())
            .unwrap();
    let window = config["tmux"]["window"].as_str().unwrap().to_owned();
    assert_eq!(asks_flag(&team, &window), "", "no ask yet");

    ask(
        &sandbox,
        "perm-f-1",
        "bob",
        "Bash",
        json!({"command": "git status"}),
    );
    ask(
        &sandbox,
        "perm-f-2",
        "carol",
        "Bash",
        json!({"command": "make"}),
    );
    eventually("the rule to answer perm-f-1", || log(&sandbox).len() == 1);
    eventually("the window to show one ask waiting", || {
        asks_flag(&team, &window) == "1"
    });

    sandbox
        .swarm()
        .args(["permission", "allow", "perm-f-2"])
        .team("pr")
        .run()
        .success();
    eventually("the window's flag to clear", || {
        asks_flag(&team, &window).is_empty()
    });
}
