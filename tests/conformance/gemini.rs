//! swarm's MCP server in the hands of a real client: Gemini CLI, as a member with `mcp = true`
//! (docs/ARCHITECTURE.md, "MCP").

use serde_json::json;

use crate::harness::{Team, eventually};
use crate::stand_in::{StandIn, agent_and_sandbox};

/// The real Gemini CLI (0.61.0) as a member with `mcp = true`, headless (`-p`), its model the
/// loopback stand-in `tests/fixtures/fake_gemini.py`, which scripts a call of swarm's `send`
/// tool (`mcp_swarm_send`, as Gemini CLI names a server's tools): the message lands in the lead's
/// inbox from the member, through the `mcpServers` entry of the Gemini CLI home swarm gives it,
/// with the person's own settings (here the API key's auth type) kept. `scripts/conformance`
/// installs the Gemini CLI that tests/conformance/gemini.version pins and names it in
/// `SWARM_GEMINI` (one given there wins); run alone, without one, the test is skipped, saying so.
#[test]
#[ignore = "conformance tier: run scripts/conformance"]
fn gemini_sends_through_swarm_mcp() {
    let Some((gemini, sandbox)) = agent_and_sandbox("gemini", "SWARM_GEMINI") else {
        return;
    };
    // The person's own settings: Gemini CLI takes a base URL in its environment for a gateway,
    // which it refuses, unless the settings choose the API key.
    let theirs = sandbox.root().join("user/.gemini");
    std::fs::create_dir_all(&theirs).unwrap();
    std::fs::write(
        theirs.join("settings.json"),
        json!({"security": {"auth": {"selectedType": "gemini-api-key"}}}).to_string(),
    )
    .unwrap();
    let model = StandIn::start(
        &sandbox,
        "fake_gemini",
        &json!([
            {"match": "send the lead a hello", "call": "mcp_swarm_send",
             "args": {"to": "lead", "text": "hello from gemini"}},
        ]),
    );
    let work = sandbox.work();
    let project = work.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let quoted = |text: &str| serde_json::to_string(text).unwrap();
    let command = [
        gemini.to_string_lossy().into_owned(),
        "-p".to_owned(),
        "send the lead a hello".to_owned(),
    ];
    let toml = format!(
        "name = \"gm\"\n[lead]\nname = \"lead\"\n[[member]]\nname = \"coder\"\nprofile = \"gemini\"\n\
         mcp = true\ncwd = {cwd}\ncommand = {command}\n\
         env = {{ GEMINI_API_KEY = \"x\", GOOGLE_GEMINI_BASE_URL = {url}, \
         GEMINI_CLI_TRUST_WORKSPACE = \"true\" }}\n",
        cwd = quoted(&project.display().to_string()),
        command = serde_json::to_string(&command).unwrap(),
        url = quoted(&format!("http://127.0.0.1:{}", model.port)),
    );
    let _team = Team::up(&sandbox, &toml);

    // Gemini CLI called swarm's send tool: the message is the coder's.
    let mut inbox = Vec::new();
    eventually("gemini's message in the lead's inbox", || {
        inbox = sandbox.inbox("gm", "lead");
        !inbox.is_empty()
    });
    assert_eq!(inbox[0]["from"], "coder", "{inbox:?}");
    assert_eq!(inbox[0]["text"], "hello from gemini");
    // The tool's answer went back to the model: swarm's send, as JSON.
    eventually("the tool's answer to reach the model", || {
        std::fs::read_to_string(&model.requests)
            .unwrap_or_default()
            .contains("functionResponse")
    });
}
