//! Costs and budgets (docs/ARCHITECTURE.md, "Costs and budgets"): a claude member's transcript,
//! written where Claude Code writes it, is followed as it grows and each reply counted once into
//! `swarm cost`, `status` and the budgets; `swarm usage add` counts for any other program; a
//! budget of a few cents is alerted at 80 % and stops its member at 100 %, the lead told once.

use std::fs;
use std::path::PathBuf;

use serde_json::Value;

use crate::harness::{Sandbox, Team, eventually};

/// A `claude` that writes its session's transcript where Claude Code 2.1.332 does, under
/// `$HOME/.claude/projects/<cwd, every character but a-zA-Z0-9 a '-'>/<session id>.jsonl`,
/// starting with one reply of two blocks (two entries, one `message.id`), and a subagent's file
/// beside it; then appends whatever the test leaves in `$FAKE_CLAUDE_DIR/<member>.more`.
const FAKE_CLAUDE: &str = r#"#!/bin/sh
out="$FAKE_CLAUDE_DIR/$SWARM_AGENT"
while [ $# -gt 0 ]; do
  [ "$1" = --session-id ] && sid="$2"
  shift
done
dir="$HOME/.claude/projects/$(pwd -P | sed 's/[^a-zA-Z0-9]/-/g')"
mkdir -p "$dir/$sid/subagents"
file="$dir/$sid.jsonl"
echo "$file" > "$out.path"
reply() {
  printf '{"parentUuid":null,"isSidechain":%s,"message":{"id":"%s","type":"message","role":"assistant","model":"claude-opus-5-5","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":%s,"cache_creation_input_tokens":%s,"cache_read_input_tokens":%s,"output_tokens":%s,"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":%s},"speed":"standard"}},"requestId":"req_%s","type":"assistant","uuid":"u-%s","timestamp":"2026-11-26T08:00:00.000Z","sessionId":"%s","version":"2.1.332"}\n' "$1" "$2" "$3" "$4" "$5" "$6" "$4" "$2" "$2" "$sid"
}
{
  printf '{"type":"user","message":{"role":"user","content":"go"},"uuid":"u0","sessionId":"%s"}\n' "$sid"
  reply false msg_1 10 100 1000 5
  reply false msg_1 10 100 1000 5
} >> "$file"
reply true msg_sub 3 0 0 2 > "$dir/$sid/subagents/agent-a1.jsonl"
while :; do
  if [ -f "$out.more" ]; then
    mv "$out.more" "$out.taking" && cat "$out.taking" >> "$file" && rm "$out.taking"
  fi
  sleep 0.2
done
"#;

/// The reply line the fake writes, for the test to append more of them.
fn reply(id: &str, input: u64, output: u64) -> String {
    format!(
        r#"{{"type":"assistant","message":{{"id":"{id}","model":"claude-opus-5-5","usage":{{"input_tokens":{input},"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":{output}}}}},"uuid":"u-{id}"}}"#
    ) + "\n"
}

/// Member `name`'s document in `swarm cost --json`.
fn cost_of(sandbox: &Sandbox, team: &str, name: &str) -> Value {
    let cost = sandbox
        .swarm()
        .args(["cost", team, "--json"])
        .run()
        .success()
        .json();
    cost["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|member| member["name"] == name)
        .cloned()
        .unwrap_or(Value::Null)
}

fn tokens(spend: &Value) -> [u32; 4] {
    ["input", "output", "cacheWrite", "cacheRead"]
        .map(|kind| u32::try_from(spend["tokens"][kind].as_u64().unwrap()).unwrap())
}

#[test]
fn a_claude_transcript_is_followed_as_it_grows_and_each_reply_counted_once() {
    let mut sandbox = Sandbox::new();
    sandbox.shim("claude", FAKE_CLAUDE);
    let record = sandbox.root().join("record");
    fs::create_dir_all(&record).unwrap();
    sandbox.set_env("FAKE_CLAUDE_DIR", &record);
    let _team = Team::up(
        &sandbox,
        r#"
name = "c"
[[member]]
name = "alice"
profile = "claude"
"#,
    );
    // The reply of two blocks once, and the subagent's: what the transcript holds so far.
    let mut expected: [u32; 4] = [10 + 3, 5 + 2, 100, 1000];
    eventually("alice's first replies to be counted", || {
        tokens(&cost_of(&sandbox, "c", "alice")["total"]) == expected
    });
    let transcript = PathBuf::from(
        fs::read_to_string(record.join("alice.path"))
            .unwrap()
            .trim(),
    );
    assert!(transcript.starts_with(sandbox.root().join("user/.claude/projects")));

    // More replies, one of them half written at first: counted once it is whole.
    let second = reply("msg_2", 7, 3);
    let (head, tail) = second.split_at(40);
    fs::write(record.join("alice.more"), head).unwrap();
    eventually("the half line to be taken", || {
        !record.join("alice.more").exists()
    });
    fs::write(
        record.join("alice.more"),
        tail.to_owned() + &reply("msg_2", 7, 3) + &reply("msg_3", 1000, 400),
    )
    .unwrap();
    expected[0] += 7 + 1000;
    expected[1] += 3 + 400;
    eventually("the new replies to be counted", || {
        tokens(&cost_of(&sandbox, "c", "alice")["total"]) == expected
    });
    // Priced at claude-opus-5-5's figures: $4, $20, $5 and $0.20 a million.
    let usd = (f64::from(expected[0]) * 4.0
        + f64::from(expected[1]) * 20.0
        + f64::from(expected[2]) * 5.0
        + f64::from(expected[3]) * 0.2)
        / 1e6;
    let total = &cost_of(&sandbox, "c", "alice")["total"];
    assert!(
        (total["usd"].as_f64().unwrap() - usd).abs() < 1e-12,
        "{total}"
    );
    assert_eq!(total["unpriced"], false);
    let status = sandbox.status_row("c", "alice");
    assert_eq!(tokens(&status["cost"]), expected);
    let text = sandbox.swarm().args(["status", "c"]).run().success().stdout;
    assert!(text.contains(&format!("${usd:.2}")), "{text}");
}

const BUDGET_TEAM: &str = r#"
name = "b"
[budget]
usd = 10
[budget.members.bob]
usd = 0.05
[prices."fake-model"]
input = 10.0
output = 10.0
cache_write = 0.0
cache_read = 0.0
[[member]]
name = "bob"
command = ["sh", "-c", "swarm usage add --input 4200 --model fake-model && while [ ! -f \"$GO\" ]; do sleep 0.1; done && swarm usage add --input 1000 --model fake-model && exec sleep 1000"]
[[member]]
name = "carol"
command = ["sleep", "1000"]
"#;

#[test]
fn a_budget_of_a_few_cents_alerts_at_80_percent_and_stops_its_member_at_100() {
    let mut sandbox = Sandbox::new();
    let go = sandbox.root().join("go");
    sandbox.set_env("GO", &go);
    sandbox.set_env("SWARM_BUDGET_GRACE", "1");
    let _team = Team::up(&sandbox, BUDGET_TEAM);
    let events = |sandbox: &Sandbox| -> Vec<Value> {
        sandbox
            .swarm()
            .args(["events", "b", "--json"])
            .run()
            .success()
            .stdout
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .filter(|event| event["kind"] == "cost")
            .collect()
    };
    eventually("the 80 % event", || !events(&sandbox).is_empty());
    let first = events(&sandbox);
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(first[0]["percent"], 80);
    assert_eq!(first[0]["member"], "bob");
    assert_eq!(first[0]["spent"], "$0.04");
    assert_eq!(first[0]["limit"], "$0.05");
    assert_eq!(sandbox.member("b", "bob")["state"], "running");

    fs::write(&go, "").unwrap();
    eventually("bob to be ended for its budget", || {
        sandbox.member("b", "bob")["state"]
            .as_str()
            .is_some_and(|state| state != "running")
    });
    let all = events(&sandbox);
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(all[1]["percent"], 100);
    // The lead is told once, whoever else spends afterwards.
    sandbox
        .swarm()
        .args(["usage", "add", "--input", "10", "--model", "fake-model"])
        .as_("carol")
        .team("b")
        .run()
        .success();
    let told = |sandbox: &Sandbox| {
        sandbox
            .inbox("b", "team-lead")
            .iter()
            .filter(|m| {
                m["text"]
                    .as_str()
                    .is_some_and(|t| t.contains("budget spent"))
            })
            .count()
    };
    eventually("the lead to be told", || told(&sandbox) == 1);
    let cost = cost_of(&sandbox, "b", "carol");
    assert_eq!(tokens(&cost["total"]), [10, 0, 0, 0]);
    assert_eq!(told(&sandbox), 1);
    assert_eq!(events(&sandbox).len(), 2);
}

#[test]
fn usage_add_refuses_nothing_and_a_stranger() {
    let sandbox = Sandbox::new();
    sandbox.team("u", &["bob"]);
    sandbox
        .swarm()
        .args(["usage", "add"])
        .as_("bob")
        .team("u")
        .run()
        .refused(2, "nothing to add");
    sandbox
        .swarm()
        .args(["usage", "add", "--input", "5"])
        .as_("nobody")
        .team("u")
        .run()
        .code(3);
    sandbox
        .swarm()
        .args(["usage", "add", "--input", "5", "--output", "1"])
        .as_("bob")
        .team("u")
        .run()
        .success();
    let cost = cost_of(&sandbox, "u", "bob");
    assert_eq!(tokens(&cost["total"]), [5, 1, 0, 0]);
    assert_eq!(cost["total"]["unpriced"], true);
    let text = sandbox.swarm().args(["cost", "u"]).run().success().stdout;
    assert!(text.contains(" ? "), "{text}");
}

#[test]
fn a_team_whose_budget_is_spent_is_refused_at_resume_until_it_is_raised() {
    let sandbox = Sandbox::new();
    let team = Team::up(
        &sandbox,
        r#"
name = "r"
[budget]
tokens = 1000
[[member]]
name = "bob"
command = ["sleep", "1000"]
"#,
    );
    eventually("bob to run", || {
        sandbox.member("r", "bob")["state"] == "running"
    });
    sandbox
        .swarm()
        .args(["usage", "add", "--input", "1200"])
        .as_("bob")
        .team("r")
        .run()
        .success();
    team.server().run(&["kill-server"]);
    eventually("the team to be interrupted", || {
        sandbox
            .swarm()
            .args(["status", "r", "--json"])
            .run()
            .success()
            .json()["interrupted"]
            == true
    });
    team.up_command()
        .arg("--resume")
        .run()
        .refused_exactly(
            2,
            "swarm: team r has spent its budget: ? (1.2k tokens) of 1.0k tokens\nhint: raise it with `swarm budget r USD`, then resume\n",
        );
    sandbox
        .swarm()
        .args(["budget", "r", "1", "--tokens", "5000"])
        .team("r")
        .run()
        .success();
    team.up_command().arg("--resume").run().success();
}
