//! `uds:` both ways with the real Claude Code (issue 23, part 2): its SendMessage to a swarm
//! socket is taken and counted as delivered, what `swarm send` writes to a Claude Code session's
//! socket reaches its model with an address it answers at, and `swarm peers` lists the person's
//! Claude Code sessions (docs/ARCHITECTURE.md, "Peers").

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::claude::{ClaudeTeam, Teammate, WORKER};
use crate::harness::{Background, Sandbox, eventually};
use crate::model::{Request, Step, brings, load_tools, mentions, send_message, step, text, tool};

/// A `swarm listen --json` of the person's, ready: its socket bound and registered.
fn listen(sandbox: &Sandbox) -> (Background, PathBuf) {
    let listener = sandbox.swarm().args(["listen", "--json"]).spawn();
    let socket = sandbox
        .root()
        .join("run/swarm")
        .join(format!("{}.sock", listener.pid()));
    let entry = sandbox
        .home()
        .join("peers")
        .join(format!("{}.json", listener.pid()));
    eventually("the listener's socket and registry entry", || {
        socket.exists() && entry.exists()
    });
    (listener, socket)
}

/// The socket Claude Code process `pid` listens on: `$XDG_RUNTIME_DIR/cc-socks/<pid>.sock`, the
/// sandbox's runtime folder being short enough for it.
fn cc_socket(sandbox: &Sandbox, pid: i32) -> PathBuf {
    let socket = sandbox
        .root()
        .join("run/cc-socks")
        .join(format!("{pid}.sock"));
    eventually("the Claude Code session's socket", || socket.exists());
    socket
}

/// The session record Claude Code writes for a session of the person's (a teammate writes none).
fn session_record(sandbox: &Sandbox, pid: i32) -> Value {
    let record = sandbox
        .root()
        .join("user/.claude/sessions")
        .join(format!("{pid}.json"));
    let mut found = Value::Null;
    eventually("the session record with its socket", || {
        found = fs::read(&record)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or(Value::Null);
        found["messagingSocketPath"].is_string()
    });
    found
}

fn address(socket: &Path) -> String {
    format!("uds:{}", socket.display())
}

#[test]
#[ignore = "conformance tier: run scripts/conformance"]
fn claude_codes_send_to_a_swarm_listener_is_taken_and_succeeds() {
    let team = ClaudeTeam::new();
    let (listener, socket) = listen(&team.sandbox);
    let chain = team.model.on(
        brings("SEND-UDS-F"),
        vec![
            step(vec![load_tools(&["SendMessage"])]),
            step(vec![send_message(&address(&socket), "UDS-FROM-CLAUDE-F")]),
            step(vec![text("Sent.")]),
        ],
    );
    team.up(&Teammate::default());
    let pid = team.worker_pid();
    let teammate_socket = cc_socket(&team.sandbox, pid);
    team.swarm()
        .args(["send", WORKER, "SEND-UDS-F"])
        .run()
        .success();

    let calls = team.model.finished(chain);
    let sent = calls.iter().find(|c| c.tool == "SendMessage").unwrap();
    let result = sent.result.as_deref().unwrap_or_default();
    assert!(
        !sent.is_error && result.contains("\"success\":true"),
        "Claude Code's SendMessage to the swarm listener failed: {calls:#?}"
    );
    // Printed under the address it is answered at: the session's own socket.
    let got = listener.next_json();
    assert_eq!(got["from"], address(&teammate_socket).as_str(), "{got:#}");
    let shown = got["text"].as_str().unwrap();
    assert!(shown.contains("UDS-FROM-CLAUDE-F"), "{got:#}");
    assert!(
        got["msg_id"].as_str().is_some_and(|id| id.len() == 36),
        "{got:#}"
    );

    // Sent to a member's socket, it is filed in the member's inbox under that address.
    let member_socket = team.worker()["socket"].as_str().unwrap().to_owned();
    let again = team.model.on(
        brings("SEND-MEMBER-F"),
        vec![
            step(vec![load_tools(&["SendMessage"])]),
            step(vec![send_message(
                &format!("uds:{member_socket}"),
                "UDS-TO-MEMBER-F",
            )]),
            step(vec![text("Sent.")]),
        ],
    );
    team.swarm()
        .args(["send", WORKER, "SEND-MEMBER-F"])
        .run()
        .success();
    let calls = team.model.finished(again);
    assert!(
        calls.iter().any(|c| c
            .result
            .as_deref()
            .is_some_and(|r| r.contains("\"success\":true"))),
        "{calls:#?}"
    );
    let seen = team.model.teammate_message("UDS-TO-MEMBER-F");
    assert_eq!(
        seen.attribute("teammate_id"),
        Some(address(&teammate_socket).as_str()),
        "{seen:?}"
    );
}

/// A step that answers the latest cross-session message with SendMessage to the address it came
/// from, as Claude Code's model is told to.
fn answer_the_sender(reply: &'static str) -> Step {
    Box::new(move |request: &Request| {
        const KEY: &str = "<cross-session-message from=\"";
        let text = request.conversation_text();
        let from = text
            .rfind(KEY)
            .and_then(|at| text[at + KEY.len()..].split('"').next())
            .unwrap_or_else(|| panic!("no cross-session message with a from: {text:?}"))
            .to_owned();
        vec![tool(
            "SendMessage",
            json!({ "to": from, "message": reply, "summary": reply }),
        )]
    })
}

#[test]
#[ignore = "conformance tier: run scripts/conformance"]
fn swarm_sends_to_a_claude_code_session_and_is_answered() {
    let team = ClaudeTeam::new();
    let (listener, socket) = listen(&team.sandbox);
    let chain = team.model.on(
        mentions("UDS-TO-CLAUDE-G"),
        vec![
            step(vec![load_tools(&["SendMessage"])]),
            answer_the_sender("UDS-ANSWER-G"),
            step(vec![text("Answered.")]),
        ],
    );
    let pid = team.solo_session("default");
    let record = session_record(&team.sandbox, pid);
    let session_socket = PathBuf::from(record["messagingSocketPath"].as_str().unwrap());
    assert_eq!(session_socket, cc_socket(&team.sandbox, pid));

    // Sent from the person's terminal, where the listener runs: the answer comes back there.
    let sent = team
        .swarm()
        .args([
            "-v",
            "send",
            &address(&session_socket),
            "UDS-TO-CLAUDE-G",
            "--json",
        ])
        .env("SWARM_SOCKET", &socket)
        .run()
        .success();
    // With the session's key, as Claude Code's own sends.
    assert!(sent.stderr.contains("its key"), "{}", sent.stderr);
    let sent = sent.json();
    assert_eq!(sent["delivered"], "peer", "{sent:#}");

    let seen = team
        .model
        .request("the message in the session's next request", |r| {
            r.is_main() && r.fresh_text().contains("UDS-TO-CLAUDE-G")
        })
        .fresh_text();
    assert!(
        seen.contains(&format!(
            "<cross-session-message from=\"{}\" from-name=\"user\">",
            address(&socket)
        )),
        "{seen}"
    );
    let calls = team.model.finished(chain);
    assert!(
        calls.iter().all(|c| !c.is_error)
            && calls.iter().any(|c| c
                .result
                .as_deref()
                .is_some_and(|r| r.contains("\"success\":true"))),
        "Claude Code's answer failed: {calls:#?}"
    );
    let answer = listener.next_json();
    assert_eq!(
        answer["from"],
        address(&session_socket).as_str(),
        "{answer:#}"
    );
    assert!(
        answer["text"].as_str().unwrap().contains("UDS-ANSWER-G"),
        "{answer:#}"
    );
}

#[test]
#[ignore = "conformance tier: run scripts/conformance"]
fn peers_lists_the_persons_claude_code_sessions() {
    let team = ClaudeTeam::new();
    let pid = team.solo_session("default");
    let record = session_record(&team.sandbox, pid);
    let socket = record["messagingSocketPath"].as_str().unwrap().to_owned();

    let peers = team
        .swarm()
        .args(["peers", "--json"])
        .run()
        .success()
        .json();
    let session = peers
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["kind"] == "claude")
        .unwrap_or_else(|| panic!("no Claude Code session among the peers: {peers:#}"));
    assert_eq!(session["pid"], pid, "{peers:#}");
    assert_eq!(session["socket"], socket.as_str(), "{peers:#}");
    assert_eq!(session["cwd"], record["cwd"], "{peers:#}");
    assert_eq!(session["name"], record["name"], "{peers:#}");
    // Its status, once it has written one.
    assert_eq!(
        session["status"],
        record.get("status").cloned().unwrap_or_default(),
        "{peers:#}"
    );
    assert_eq!(
        session["version"],
        crate::claude::version().as_str(),
        "{peers:#}"
    );
    let table = team.swarm().arg("peers").run().success().stdout;
    assert!(
        table.contains(&format!("uds:{socket}")) && table.contains("CLAUDE"),
        "{table}"
    );

    // And `uds:` completion offers it.
    let offered = team
        .swarm()
        .env("COMPLETE", "bash")
        .env("_CLAP_COMPLETE_INDEX", "2")
        .env("_CLAP_IFS", "\n")
        .args(["--", "swarm", "send", "uds:"])
        .run()
        .success()
        .stdout;
    assert!(offered.contains(&format!("uds:{socket}")), "{offered}");
}
