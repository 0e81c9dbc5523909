//! swarm's MCP server in the hands of a real client: the Codex CLI, as a member with `mcp = true`
//! (docs/ARCHITECTURE.md, "MCP").

use std::process::{Child, Stdio};

use serde_json::{Value, json};

use crate::harness::{Sandbox, Team, eventually, require, skip};

/// A child process killed and reaped when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The real Codex CLI (0.169.0) as a member with `mcp = true`, its model the loopback stand-in
/// `tests/fixtures/fake_openai.py`, which scripts its tool calls: its call of swarm's `send` lands
/// in the lead's inbox from it, and a message to it is nudged into its pane, where Codex takes it
/// as a prompt and calls `receive`, which hands it the text. `scripts/conformance` installs the
/// Codex that tests/conformance/codex.version pins and names it in `SWARM_CODEX` (one given
/// there wins); run alone, without one, the test is skipped, saying so.
#[test]
#[ignore = "conformance tier: run scripts/conformance"]
fn codex_sends_and_receives_through_swarm_mcp() {
    let Some(codex) = std::env::var_os("SWARM_CODEX").filter(|c| !c.is_empty()) else {
        skip("codex", "SWARM_CODEX names no Codex CLI");
        return;
    };
    if !require("python3") {
        return;
    }
    let mut sandbox = Sandbox::new();
    let path = sandbox.path_with_swarm();
    sandbox.set_env("PATH", path);
    let work = sandbox.work();
    let script = sandbox.write(
        "script.json",
        json!([
            {"match": "send the lead a hello", "call": "send", "namespace": "mcp__swarm",
             "args": {"to": "lead", "text": "hello from codex"}},
            {"match": "use the receive tool", "call": "receive", "namespace": "mcp__swarm",
             "args": {}},
        ])
        .to_string(),
    );
    let port_file = work.join("port");
    let requests = work.join("requests.jsonl");
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/fake_openai.py");
    let _model = Killed(
        sandbox
            .command("python3")
            .arg(fixture)
            .args(["--port", "0", "--port-file"])
            .arg(&port_file)
            .arg("--log")
            .arg(&requests)
            .arg("--script")
            .arg(&script)
            .stdout(Stdio::null())
            .spawn()
            .expect("start the model stand-in"),
    );
    let mut port = String::new();
    eventually("the stand-in to listen", || {
        port = std::fs::read_to_string(&port_file).unwrap_or_default();
        !port.trim().is_empty()
    });
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
            port.trim()
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
        std::fs::read_to_string(&requests)
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
    let seen = std::fs::read_to_string(&requests).unwrap();
    assert!(
        seen.contains("1 new message(s) from lead: use the receive tool"),
        "the nudge was its prompt"
    );
    assert!(sandbox.inbox("cx", "coder").is_empty(), "receive took it");
}
