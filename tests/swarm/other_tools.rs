//! swarm beside other tools that write the same files: agent-team-mail (atm), a Rust CLI for
//! Claude Code's teams, with its own locking protocol.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::Sandbox;

/// Appends one message to an inbox exactly as atm's `inbox_append` does (atm-core `io/inbox.rs`,
/// `io/lock.rs`, `io/atomic.rs`): a non-blocking `flock` on `<name>.lock` tried six times with
/// 50 ms doubling back-off; read the inbox and keep its bytes; skip a `message_id` already there;
/// write `<name>.tmp` and sync it; exchange it with the inbox (`renameat2(RENAME_EXCHANGE)`); if
/// the displaced file differs from what was read, merge what it adds, sort by timestamp, write it
/// into the temporary file and exchange again; remove the temporary file; unlock. No lock
/// directory, no swarm flock. Returns `false` where atm would give up and queue the message in its
/// own spool (`WriteOutcome::Queued`).
fn atm_append(inbox: &Path, message: &Value) -> bool {
    let lock_path = inbox.with_extension("lock");
    let tmp = inbox.with_extension("tmp");
    let lock = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_path)
        .unwrap();
    // std's try_lock is flock(LOCK_EX | LOCK_NB), as atm's.
    let mut locked = false;
    for attempt in 0..=5u32 {
        match lock.try_lock() {
            Ok(()) => {
                locked = true;
                break;
            }
            Err(fs::TryLockError::WouldBlock) if attempt < 5 => {
                thread::sleep(Duration::from_millis(50 << attempt));
            }
            Err(fs::TryLockError::WouldBlock) => {}
            Err(fs::TryLockError::Error(err)) => {
                panic!("atm: flock {}: {err}", lock_path.display())
            }
        }
    }
    if !locked {
        return false;
    }

    let original = fs::read(inbox).ok();
    let mut messages: Vec<Value> = original
        .as_deref()
        .map_or_else(Vec::new, |bytes| serde_json::from_slice(bytes).unwrap());
    let id = &message["message_id"];
    if !messages.iter().any(|m| &m["message_id"] == id) {
        messages.push(message.clone());
        let mut file = File::create(&tmp).unwrap();
        file.write_all(&serde_json::to_vec_pretty(&messages).unwrap())
            .unwrap();
        file.sync_all().unwrap();
        drop(file);
        if original.is_none() {
            fs::rename(&tmp, inbox).unwrap();
        } else {
            exchange(inbox, &tmp);
            let displaced = fs::read(&tmp).unwrap();
            if Some(&displaced) != original.as_ref() {
                let theirs: Vec<Value> = serde_json::from_slice(&displaced).unwrap();
                for other in theirs {
                    let present = match other.get("message_id") {
                        Some(id) => messages.iter().any(|m| m.get("message_id") == Some(id)),
                        None => messages.iter().any(|m| {
                            m["from"] == other["from"]
                                && m["text"] == other["text"]
                                && m["timestamp"] == other["timestamp"]
                        }),
                    };
                    if !present {
                        messages.push(other);
                    }
                }
                messages.sort_by(|a, b| {
                    a["timestamp"]
                        .as_str()
                        .unwrap_or("")
                        .cmp(b["timestamp"].as_str().unwrap_or(""))
                });
                fs::write(&tmp, serde_json::to_vec_pretty(&messages).unwrap()).unwrap();
                exchange(inbox, &tmp);
            }
            let _ = fs::remove_file(&tmp);
        }
    }
    lock.unlock().unwrap();
    true
}

fn exchange(a: &Path, b: &Path) {
    use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};
    renameat2(AT_FDCWD, a, AT_FDCWD, b, RenameFlags::RENAME_EXCHANGE).unwrap();
}

/// An atm message: `from`, `text`, `timestamp` (RFC 3339), `read`, `summary`, `message_id`.
fn atm_message(from: &str, text: &str) -> Value {
    let now = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    json!({"from": from, "text": text, "timestamp": now, "read": false,
           "summary": text, "message_id": uuid::Uuid::new_v4().to_string()})
}

/// Two swarm writers and two writers in atm's way (its lock, then an in-place append) send `each`
/// messages apiece to one inbox: every message is there once.
fn atm_writers_beside_swarm(each: usize) {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    let inbox = sandbox.inbox_path("t", "bob");

    let swarm_writers: Vec<_> = (0..2)
        .map(|writer| {
            let commands: Vec<_> = (0..each)
                .map(|n| {
                    sandbox
                        .swarm()
                        .args(["send", "bob"])
                        .arg(format!("swarm{writer} m{n}"))
                        .team("t")
                        .into_command()
                })
                .collect();
            thread::spawn(move || {
                for mut command in commands {
                    let output = command.output().unwrap();
                    assert!(
                        output.status.success(),
                        "{}",
                        String::from_utf8_lossy(&output.stderr)
                    );
                }
                0
            })
        })
        .collect();
    let atm_writers: Vec<_> = (0..2)
        .map(|writer| {
            let inbox = inbox.clone();
            thread::spawn(move || {
                let mut queued = 0;
                for n in 0..each {
                    let message =
                        atm_message(&format!("atm{writer}"), &format!("atm{writer} m{n}"));
                    // A queued message is delivered later by atm's spool: the same append again.
                    while !atm_append(&inbox, &message) {
                        queued += 1;
                    }
                    // Each `atm send` is a process of its own, which takes a while to start: a
                    // writer does not take its lock again the moment it let it go.
                    thread::sleep(Duration::from_millis(20));
                }
                queued
            })
        })
        .collect();
    let queued: usize = swarm_writers
        .into_iter()
        .chain(atm_writers)
        .map(|w| w.join().unwrap())
        .sum();

    let mut texts: HashMap<String, usize> = HashMap::new();
    for message in sandbox.inbox("t", "bob") {
        *texts
            .entry(message["text"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    let repeated: Vec<_> = texts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(repeated.is_empty(), "in the inbox twice: {repeated:?}");
    assert_eq!(
        texts.len(),
        4 * each,
        "{} of {} messages survived ({queued} atm appends queued and retried)",
        texts.len(),
        4 * each
    );
}

#[test]
fn nothing_is_lost_beside_atm_writers() {
    atm_writers_beside_swarm(25);
}

#[test]
#[ignore = "stress tier: scripts/stress runs it"]
fn nothing_is_lost_beside_atm_writers_under_stress() {
    atm_writers_beside_swarm(200);
}

#[test]
fn a_message_another_tool_marked_read_is_not_unread() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    // atm's reader marks what it showed `"read": true` and keeps it in the file.
    let mut seen = atm_message("carol", "seen by atm");
    seen["read"] = json!(true);
    let fresh = atm_message("carol", "fresh");
    let original = vec![seen.clone(), fresh.clone()];
    sandbox.write_inbox_as_claude("t", "bob", &original);

    let status = sandbox
        .swarm()
        .args(["status", "--json"])
        .team("t")
        .run()
        .success()
        .json();
    let bob = status["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "bob")
        .unwrap()
        .clone();
    assert_eq!(bob["unread"], 1, "{bob:#}");
    let listed = sandbox
        .swarm()
        .args(["inbox", "bob", "--json"])
        .team("t")
        .run()
        .success()
        .json();
    let texts: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["fresh"]);
    let taken = sandbox
        .swarm()
        .args(["recv", "--json"])
        .team("t")
        .as_("bob")
        .run()
        .success()
        .json();
    let texts: Vec<&str> = taken
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["fresh"]);
    sandbox
        .swarm()
        .args(["recv", "--wait", "--timeout", "0.5"])
        .team("t")
        .as_("bob")
        .run()
        .code(4);
    // It stays where the other tool left it, untouched.
    assert_eq!(sandbox.inbox("t", "bob"), [seen]);
}

/// The fields atm's `TeamConfig` and `AgentMember` (atm-core `schema/team_config.rs`,
/// `schema/agent_member.rs`) cannot do without, with atm's types; optional ones with theirs too.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct AtmTeamConfig {
    name: String,
    #[serde(default)]
    description: Option<String>,
    created_at: u64,
    lead_agent_id: String,
    lead_session_id: String,
    members: Vec<AtmMember>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct AtmMember {
    agent_id: String,
    name: String,
    agent_type: String,
    model: String,
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    color: Option<String>,
    #[serde(default)]
    plan_mode_required: Option<bool>,
    joined_at: u64,
    #[serde(default)]
    tmux_pane_id: Option<String>,
    cwd: String,
    #[serde(default)]
    subscriptions: Vec<Value>,
    #[serde(default)]
    backend_type: Option<String>,
    #[serde(default)]
    is_active: Option<bool>,
    #[serde(default)]
    last_active: Option<u64>,
    #[serde(default)]
    session_id: Option<String>,
}

#[test]
fn atm_can_read_a_team_swarm_made() {
    let sandbox = Sandbox::new();
    let file = sandbox.write(
        "t.toml",
        "name = \"t\"\n[[member]]\nname = \"bob\"\ncommand = [\"true\"]\n\
         [[member]]\nname = \"carol\"\ncommand = [\"true\"]\nmodel = \"sonnet\"\n",
    );
    sandbox.swarm().arg("init").arg(file).run().success();
    sandbox
        .swarm()
        .args(["join", "dave"])
        .team("t")
        .run()
        .success();
    let text = fs::read_to_string(sandbox.team_dir("t").join("config.json")).unwrap();
    let config: AtmTeamConfig = serde_json::from_str(&text)
        .unwrap_or_else(|err| panic!("atm cannot read it: {err}\n{text}"));
    let model = |name: &str| {
        config
            .members
            .iter()
            .find(|m| m.name == name)
            .unwrap()
            .model
            .clone()
    };
    assert_eq!(model("carol"), "sonnet", "a chosen model is kept");
    assert_eq!(config.members.len(), 4);
}

/// Adds members to config.json as another tool would, under names swarm would never give.
fn add_members_as_another_tool(sandbox: &Sandbox, team: &str, names: &[&str]) {
    let path = sandbox.team_dir(team).join("config.json");
    let mut config: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    let members = config["members"].as_array_mut().unwrap();
    for name in names {
        members.push(json!({
            "agentId": format!("{name}@{team}"), "name": name, "agentType": "general-purpose",
            "model": "default", "joinedAt": 1_767_225_600_000_u64, "cwd": "/tmp",
            "tmuxPaneId": "", "subscriptions": [],
        }));
    }
    fs::write(&path, serde_json::to_vec_pretty(&config).unwrap()).unwrap();
}

/// A member another tool recorded under a name swarm would not give (too long for a file name,
/// or with a `.`) is shown, can be sent to, gets broadcasts, and breaks nobody else.
#[test]
fn members_named_by_another_tool_are_shown_reached_and_break_nothing() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    let long = "x".repeat(300);
    add_members_as_another_tool(&sandbox, "t", &[&long, "dot.name", "two words"]);

    let status = sandbox
        .swarm()
        .args(["status", "--json"])
        .team("t")
        .run()
        .success()
        .json();
    let names: Vec<&str> = status["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["team-lead", "bob", &long, "dot.name", "two words"]);
    sandbox
        .swarm()
        .args(["status"])
        .team("t")
        .run()
        .success()
        .stdout_has("dot.name");

    for name in [long.as_str(), "dot.name", "two words"] {
        sandbox
            .swarm()
            .args(["send", name, &format!("for {name}")])
            .team("t")
            .run()
            .success();
    }
    sandbox
        .swarm()
        .args(["send", "*", "to everyone"])
        .team("t")
        .run()
        .success();
    for name in ["bob", long.as_str(), "dot.name", "two words"] {
        let inbox = sandbox
            .swarm()
            .args(["inbox", name, "--json"])
            .team("t")
            .run()
            .success()
            .json();
        let texts: Vec<&str> = inbox
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["text"].as_str().unwrap())
            .collect();
        let mut expected = Vec::new();
        if name != "bob" {
            expected.push(format!("for {name}"));
        }
        expected.push("to everyone".to_owned());
        assert_eq!(texts, expected, "{name}");
    }
    // Claude Code's own file for "dot.name": every character outside [A-Za-z0-9_-] as `-`.
    assert_eq!(sandbox.inbox("t", "dot-name").len(), 2);
    assert_eq!(sandbox.status_row("t", &long)["unread"], 2);
    assert_eq!(sandbox.status_row("t", "bob")["unread"], 1);
}
