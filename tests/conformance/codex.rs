//! swarm's MCP server in the hands of a real client: the Codex CLI, as a member with `mcp = true`
//! (docs/ARCHITECTURE.md, "MCP").

use serde_json::{Value, json};

use crate::harness::{Team, eventually};
use crate::stand_in::{StandIn, agent_and_sandbox};

/// The real Codex CLI (0.169.0) as a member with `mcp = true`, its model the loopback stand-in
/// `tests/fixtures/fake_openai.py`, which scripts its tool calls: its call of swarm's `send` lands
/// in the lead's inbox from it, and a message to it is nudged into its pane, where Codex takes it
/// as a prompt and calls `receive`, which hands it the text. `scripts/conformance` installs the
/// Codex that tests/conformance/codex.version pins and names it in `SWARM_CODEX` (one given
/// there wins); run alone, without one, the test is skipped, saying so.
#[test]
#[ignore = "conformance tier: run scripts/conformance"]
fn codex_sends_and_receives_through_swarm_mcp() {
    let Some((codex, sandbox)) = agent_and_sandbox("codex", "SWARM_CODEX") else {
        return;
    };
    let work = sandbox.work();
    let model = StandIn::start(
        &sandbox,
        "fake_openai",
        &json!([
            {"match": "send the lead a hello", "call": "send", "namespace": "mcp__swarm",
             "args": {"to": "lead", "text": "hello from codex"}},
            {"match": "use the receive tool", "call": "receive", "namespace": "mcp__swarm",
             "args": {}},
        ]),
    );
    let project = work.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let quoted = |text: &str| serde_json::to_string(text).unwrap();
    let command = [
        codex.to_string_lossy().into_owned(),
        "-c".to_owned(),
        "model_provider=fake".to_owned(),
        "-c".to_owned(),
        format!(
            "model_providers.fake={{name=\"fake\",base_url=\"http://127.0.0.1:{}/v1\",env_key=\"FAKE_KEY\",wire_api=\"responses\",request_max_retries=0,stream_max_retries=0}}",
            model.port
        ),
        "-c".to_owned(),
        format!(
            "projects={{{}={{trust_level=\"trusted\"}}}}",
            quoted(&project.display().to_string())
        ),
        "-m".to_owned(),
        "gpt-5.1-codex".to_owned(),
        "send the lead a hello".to_owned(),
    ];
    let toml = format!(
        "name = \"cx\"\n[lead]\nname = \"lead\"\n[[member]]\nname = \"coder\"\nmcp = true\n\
         delivery = \"paste\"\ncwd = {cwd}\ncommand = {command}\n\
         env = {{ FAKE_KEY = \"x\", CODEX_HOME = {home} }}\n",
        cwd = quoted(&project.display().to_string()),
        command = serde_json::to_string(&command).unwrap(),
        home = quoted(&work.join("codex-home").display().to_string()),
    );
    std::fs::create_dir_all(work.join("codex-home")).unwrap();
    let _team = Team::up(&sandbox, &toml);

    // Codex called swarm's send tool: the message is the coder's, whatever Codex's environment.
    let mut inbox = Vec::new();
    eventually("codex's message in the lead's inbox", || {
        inbox = sandbox.inbox("cx", "lead");
        !inbox.is_empty()
    });
    assert_eq!(inbox[0]["from"], "coder", "{inbox:?}");
    assert_eq!(inbox[0]["text"], "hello from codex");

    // A message to it: the pane is nudged, Codex takes the nudge as a prompt and calls receive.
    sandbox
        .swarm()
        .args(["--team", "cx", "send", "coder", "please run the tests"])
        .run()
        .success();
    let outputs = || -> Vec<String> {
        std::fs::read_to_string(&model.requests)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .flat_map(|request| {
                request["body"]["input"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .filter(|item| item["type"] == "function_call_output")
            .map(|item| item["output"].to_string())
            .collect()
    };
    eventually("receive to hand codex the text", || {
        outputs().iter().any(|o| o.contains("please run the tests"))
    });
    let seen = std::fs::read_to_string(&model.requests).unwrap();
    assert!(
        seen.contains("1 new message(s) from lead: use the receive tool"),
        "the nudge was its prompt"
    );
    assert!(sandbox.inbox("cx", "coder").is_empty(), "receive took it");
}
