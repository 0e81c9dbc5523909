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

/// A stand-in for Codex 0.169.0 that writes its rollout as Codex does: at its first turn,
/// `$CODEX_HOME/sessions/Y/M/D/rollout-<time>-<thread id>.jsonl`, with the `session_meta`, the
/// turn's `turn_context` (which names the model), and for each model response a
/// `token_usage_record` and an `event_msg` `token_count` telling the same usage (the lines in the
/// shape of a real rollout, trimmed); then it tells its `notify` program of the turn as Codex
/// does, which records the thread as the member's session. Then it appends whatever the test
/// leaves in `$FAKE_RECORD/<member>.more`, and replaces the rollout by another file with what
/// it leaves in `<member>.replace`.
const FAKE_CODEX: &str = r#"#!/usr/bin/env python3
import json, os, subprocess, sys, time, uuid
args = sys.argv[1:]
out = os.path.join(os.environ["FAKE_RECORD"], os.environ["SWARM_AGENT"])
overrides = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-c", "--config")]
notify = [json.loads(v.split("=", 1)[1]) for v in overrides if v.split("=", 1)[0] == "notify"][0]
thread = str(uuid.uuid4())
day = os.path.join(os.environ["CODEX_HOME"], "sessions", "2026", "11", "26")
os.makedirs(day, exist_ok=True)
rollout = os.path.join(day, f"rollout-2026-11-26T10-00-00-{thread}.jsonl")
with open(out + ".path", "w") as f:
    f.write(rollout)
with open(out + ".first") as f:
    first = f.read()
with open(rollout, "a") as f:
    f.write(json.dumps({"timestamp": "2026-11-26T10:00:00.000Z", "ordinal": 0, "type": "session_meta",
                        "payload": {"session_id": thread, "id": thread, "cwd": os.getcwd(),
                                    "originator": "codex_tui", "cli_version": "0.169.0",
                                    "model_provider": "fake"}}) + "\n")
    f.write(first)
turn = {"type": "agent-turn-complete", "thread-id": thread, "turn-id": "t1", "cwd": os.getcwd(),
        "client": "codex-tui", "input-messages": ["go"], "last-assistant-message": "done"}
subprocess.run(notify + [json.dumps(turn)], stdin=subprocess.DEVNULL)
print("fake codex ready", flush=True)
while True:
    if os.path.exists(out + ".more"):
        os.rename(out + ".more", out + ".taking")
        with open(out + ".taking") as src, open(rollout, "a") as f:
            f.write(src.read())
        os.remove(out + ".taking")
    if os.path.exists(out + ".replace"):
        os.rename(out + ".replace", out + ".taking")
        os.remove(rollout)
        os.rename(out + ".taking", rollout)
    time.sleep(0.2)
"#;

/// A turn's `turn_context` in a Codex rollout, which names its model (trimmed).
fn codex_turn(turn: &str, model: &str) -> String {
    format!(
        r#"{{"timestamp":"2026-11-26T10:00:01.000Z","ordinal":5,"type":"turn_context","payload":{{"turn_id":"{turn}","root_turn_id":"{turn}","cwd":"/w","approval_policy":"never","model":"{model}","effort":"medium"}}}}"#
    ) + "\n"
}

/// A model response's two usage records in a Codex rollout, as Codex 0.169.0 writes them:
/// `input` includes `cached`; the thread's running total is made up, as swarm never reads it.
fn codex_response(turn: &str, id: &str, input: u64, cached: u64, output: u64) -> String {
    let usage = format!(
        r#"{{"input_tokens":{input},"cached_input_tokens":{cached},"cache_write_input_tokens":0,"output_tokens":{output},"reasoning_output_tokens":1,"total_tokens":{}}}"#,
        input + output
    );
    let total = r#"{"input_tokens":99999,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":99999,"reasoning_output_tokens":0,"total_tokens":199998}"#;
    format!(
        r#"{{"timestamp":"2026-11-26T10:00:02.000Z","ordinal":11,"type":"token_usage_record","payload":{{"thread_id":"t","turn_id":"{turn}","session_id":"t","root_turn_id":"{turn}","response_id":"{id}","usage":{usage},"turn_token_usage":{usage},"thread_token_usage":{total}}}}}"#
    ) + "\n"
        + &format!(
            r#"{{"timestamp":"2026-11-26T10:00:02.001Z","ordinal":12,"type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{total},"last_token_usage":{usage},"last_usage_includes_reasoning":false,"model_context_window":258400}},"rate_limits":{{"limit_id":"codex","limit_name":null,"primary":null,"secondary":null,"credits":null}}}}}}"#
        )
        + "\n"
}

/// Member `name`'s tokens and whether any are unpriced, by model, in `swarm cost --json`.
fn by_model(sandbox: &Sandbox, team: &str, name: &str) -> Vec<(String, [u32; 4])> {
    cost_of(sandbox, team, name)["models"]
        .as_array()
        .map(|models| {
            models
                .iter()
                .map(|model| {
                    (
                        model["model"].as_str().unwrap_or("").to_owned(),
                        tokens(model),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_codex_rollout_is_followed_as_it_grows_each_response_counted_once_and_a_new_file_noticed() {
    let mut sandbox = Sandbox::new();
    sandbox.shim("codex", FAKE_CODEX);
    let record = sandbox.root().join("record");
    let codex_home = sandbox.root().join("codex-home");
    fs::create_dir_all(&record).unwrap();
    fs::create_dir_all(&codex_home).unwrap();
    sandbox.set_env("FAKE_RECORD", &record);
    sandbox.set_env("CODEX_HOME", &codex_home);
    // The first turn: two responses of one model.
    fs::write(
        record.join("cx.first"),
        codex_turn("t1", "gpt-5.1-codex")
            + &codex_response("t1", "resp_1", 1200, 200, 34)
            + &codex_response("t1", "resp_2", 1300, 1200, 40),
    )
    .unwrap();
    let _team = Team::up(
        &sandbox,
        "name = \"x\"\n[[member]]\nname = \"cx\"\nprofile = \"codex\"\n",
    );
    // input (not cached), output, cache write, cache read.
    let mut expected: [u32; 4] = [1000 + 100, 34 + 40, 0, 200 + 1200];
    eventually("the first turn's responses to be counted", || {
        tokens(&cost_of(&sandbox, "x", "cx")["total"]) == expected
    });
    let rollout = PathBuf::from(fs::read_to_string(record.join("cx.path")).unwrap());

    // A second turn on another model, its last response half written at first.
    let second = codex_response("t2", "resp_3", 500, 0, 7);
    let (head, tail) = second.split_at(60);
    fs::write(
        record.join("cx.more"),
        codex_turn("t2", "gpt-5.1-codex-mini") + head,
    )
    .unwrap();
    eventually("the half line to be taken", || {
        !record.join("cx.more").exists()
    });
    fs::write(record.join("cx.more"), tail).unwrap();
    expected[0] += 500;
    expected[1] += 7;
    eventually("the second turn to be counted", || {
        tokens(&cost_of(&sandbox, "x", "cx")["total"]) == expected
    });
    let mut models = by_model(&sandbox, "x", "cx");
    models.sort();
    assert_eq!(
        models,
        [
            ("gpt-5.1-codex".to_owned(), [1100, 74, 0, 1400]),
            ("gpt-5.1-codex-mini".to_owned(), [500, 7, 0, 0]),
        ]
    );
    // No price is known for these models: tokens, and `?` for money.
    assert_eq!(cost_of(&sandbox, "x", "cx")["total"]["unpriced"], true);

    // The rollout replaced by another file holding what it held and a response more: only the
    // new one is counted.
    let held = fs::read_to_string(&rollout).unwrap();
    fs::write(
        record.join("cx.replace"),
        held + &codex_response("t2", "resp_4", 10, 0, 1),
    )
    .unwrap();
    expected[0] += 10;
    expected[1] += 1;
    eventually("the replaced rollout's new response to be counted", || {
        tokens(&cost_of(&sandbox, "x", "cx")["total"]) == expected
    });
    let status = sandbox.status_row("x", "cx");
    assert_eq!(tokens(&status["cost"]), expected);
}

/// A stand-in for Gemini CLI 0.61.0 that writes its session file as Gemini CLI does:
/// `$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/session-<time>-<first 8 of the id>.jsonl`, a
/// meta line, a `$set` of the history, the person's message, and each model message written
/// once and again with its tool call (the lines in the shape of a real session file, trimmed).
/// Then it appends whatever the test leaves in `$FAKE_RECORD/<member>.more`.
const FAKE_GEMINI: &str = r#"#!/usr/bin/env python3
import json, os, sys, time
args = sys.argv[1:]
out = os.path.join(os.environ["FAKE_RECORD"], os.environ["SWARM_AGENT"])
session = args[args.index("--session-id") + 1]
chats = os.path.join(os.environ["GEMINI_CLI_HOME"], ".gemini", "tmp", "proj", "chats")
os.makedirs(chats, exist_ok=True)
chat = os.path.join(chats, f"session-2026-11-26T10-00-{session[:8]}.jsonl")
with open(out + ".path", "w") as f:
    f.write(chat)
with open(out + ".first") as f:
    first = f.read()
with open(chat, "a") as f:
    f.write(json.dumps({"sessionId": session, "projectHash": "6ce1", "startTime": "2026-11-26T10:00:00.000Z",
                        "lastUpdated": "2026-11-26T10:00:00.000Z", "kind": "main"}) + "\n")
    f.write(json.dumps({"$set": {"messages": [{"id": "c0", "type": "user",
                                               "content": [{"text": "<session_context>"}]}]}}) + "\n")
    f.write(json.dumps({"id": "u1", "timestamp": "2026-11-26T10:00:01.000Z", "type": "user",
                        "content": [{"text": "do things"}]}) + "\n")
    f.write(first)
print("fake gemini ready", flush=True)
while True:
    if os.path.exists(out + ".more"):
        os.rename(out + ".more", out + ".taking")
        with open(out + ".taking") as src, open(chat, "a") as f:
            f.write(src.read())
        os.remove(out + ".taking")
    time.sleep(0.2)
"#;

/// A model message of a Gemini CLI session file, written twice as Gemini CLI does when it calls
/// a tool, and the `lastUpdated` record after each: `input` includes `cached`.
fn gemini_message(id: &str, input: u64, cached: u64, output: u64, thoughts: u64) -> String {
    let tokens = format!(
        r#"{{"input":{input},"output":{output},"cached":{cached},"thoughts":{thoughts},"tool":0,"total":{}}}"#,
        input + output + thoughts
    );
    let message = format!(
        r#"{{"id":"{id}","timestamp":"2026-11-26T10:00:02.000Z","type":"gemini","content":"","thoughts":[],"tokens":{tokens},"model":"gemini-3.8-flash""#
    );
    let updated = r#"{"$set":{"lastUpdated":"2026-11-26T10:00:02.001Z"}}"#;
    format!(
        "{message}}}\n{updated}\n{message},\"toolCalls\":[{{\"id\":\"run_1\",\"name\":\"run_shell_command\",\"args\":{{\"command\":\"true\"}}}}]}}\n"
    )
}

#[test]
fn a_gemini_session_file_is_followed_as_it_grows_each_message_counted_once() {
    let mut sandbox = Sandbox::new();
    sandbox.shim("gemini", FAKE_GEMINI);
    let record = sandbox.root().join("record");
    let gemini_home = sandbox.root().join("gemini-home");
    fs::create_dir_all(&record).unwrap();
    fs::create_dir_all(&gemini_home).unwrap();
    sandbox.set_env("FAKE_RECORD", &record);
    sandbox.set_env("GEMINI_CLI_HOME", &gemini_home);
    fs::write(
        record.join("gm.first"),
        gemini_message("m1", 1500, 300, 40, 12) + &gemini_message("m2", 1600, 1500, 20, 0),
    )
    .unwrap();
    let _team = Team::up(
        &sandbox,
        "name = \"g\"\n[[member]]\nname = \"gm\"\nprofile = \"gemini\"\n",
    );
    // input (not cached), output with thoughts, cache write, cache read.
    let mut expected: [u32; 4] = [1200 + 100, 52 + 20, 0, 300 + 1500];
    eventually("the first messages to be counted", || {
        tokens(&cost_of(&sandbox, "g", "gm")["total"]) == expected
    });
    // A resume writes the whole history again in a `$set`, the newest message with its tokens:
    // not counted again; then a new message, half written at first.
    let rewrite = format!(
        r#"{{"$set":{{"messages":[{{"id":"m1","type":"gemini","content":""}},{}]}}}}"#,
        gemini_message("m2", 1600, 1500, 20, 0)
            .lines()
            .next()
            .unwrap()
    ) + "\n";
    let third = gemini_message("m3", 70, 0, 9, 1);
    let (head, tail) = third.split_at(50);
    fs::write(record.join("gm.more"), rewrite + head).unwrap();
    eventually("the half line to be taken", || {
        !record.join("gm.more").exists()
    });
    fs::write(record.join("gm.more"), tail).unwrap();
    expected[0] += 70;
    expected[1] += 10;
    eventually("the new message to be counted", || {
        tokens(&cost_of(&sandbox, "g", "gm")["total"]) == expected
    });
    assert_eq!(
        by_model(&sandbox, "g", "gm"),
        [("gemini-3.8-flash".to_owned(), expected)]
    );
    assert_eq!(cost_of(&sandbox, "g", "gm")["total"]["unpriced"], true);
    let status = sandbox.status_row("g", "gm");
    assert_eq!(tokens(&status["cost"]), expected);
}
