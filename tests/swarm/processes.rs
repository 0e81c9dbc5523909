//! A member's processes: found without its supervisor, stopped after the supervisor was killed,
//! and ended even when they left the program's process group, on a private tmux server per test.

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;

use crate::harness::{Sandbox, TmuxServer, eventually, processes_in};

fn up(sandbox: &Sandbox, server: &TmuxServer, name: &str, toml: &str) {
    let file = sandbox.write(&format!("{name}.toml"), toml);
    sandbox
        .swarm()
        .arg("up")
        .arg(file)
        .arg("--socket")
        .arg(server.socket())
        .run()
        .success();
}

fn state(sandbox: &Sandbox, team: &str, name: &str) -> String {
    sandbox.member(team, name)["state"]
        .as_str()
        .unwrap_or("-")
        .to_owned()
}

fn status_of(sandbox: &Sandbox, team: &str, name: &str) -> Value {
    let status = sandbox
        .swarm()
        .args(["status", team, "--json"])
        .run()
        .success()
        .json();
    status["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap()
        .clone()
}

fn pid_of(member: &Value, field: &str) -> i64 {
    member[field]
        .as_i64()
        .unwrap_or_else(|| panic!("no {field} in {member:#}"))
}

/// A program that ignores the hang-up its pane's end sends, and SIGTERM, as does its child.
const STUBBORN: &str = r#"["bash", "-c", "trap '' HUP TERM; sleep 1000 & wait"]"#;

#[test]
fn a_member_whose_supervisor_was_killed_is_orphaned_stoppable_and_taken_down() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::start(&sandbox);
    up(
        &sandbox,
        &server,
        "o",
        &format!(
            "name = \"o\"\n[lead]\ncommand = [\"sleep\", \"1000\"]\n\
             [[member]]\nname = \"a\"\ncommand = {STUBBORN}\n\
             [[member]]\nname = \"b\"\ncommand = {STUBBORN}\n"
        ),
    );
    for name in ["team-lead", "a", "b"] {
        eventually(&format!("{name} to run"), || {
            state(&sandbox, "o", name) == "running"
        });
    }
    let config = sandbox.config("o");
    let members = config["members"].as_array().unwrap();
    let groups: Vec<i64> = members.iter().map(|m| pid_of(m, "pid")).collect();
    let supervisors: Vec<i64> = members.iter().map(|m| pid_of(m, "supervisorPid")).collect();
    let panes: Vec<String> = members
        .iter()
        .map(|m| m["tmuxPaneId"].as_str().unwrap().to_owned())
        .collect();
    let a = sandbox.member("o", "a");
    let b = sandbox.member("o", "b");
    for member in [&a, &b] {
        let supervisor = i32::try_from(pid_of(member, "supervisorPid")).unwrap();
        kill(Pid::from_raw(supervisor), Signal::SIGKILL).unwrap();
    }
    // Their panes close with their supervisors; their programs live on.
    eventually("a and b to show as orphaned", || {
        status_of(&sandbox, "o", "a")["state"] == "orphaned"
            && status_of(&sandbox, "o", "b")["state"] == "orphaned"
    });
    let a_group = pid_of(&a, "pid");
    assert!(!processes_in(&[], &[a_group]).is_empty());

    sandbox
        .swarm()
        .args(["stop", "a"])
        .team("o")
        .run()
        .success()
        .stdout_has("a was killed (stop)");
    assert!(
        processes_in(&[], &[a_group]).is_empty(),
        "stop left a's processes: {:?}",
        processes_in(&[], &[a_group])
    );
    assert_eq!(state(&sandbox, "o", "a"), "killed");

    sandbox
        .swarm()
        .args(["down", "o", "--timeout", "1"])
        .run()
        .success()
        .stdout_has("team o is down");
    let left = processes_in(&supervisors, &groups);
    assert!(left.is_empty(), "down left processes: {left:#?}");
    let live_panes = server.panes();
    for pane in &panes {
        assert!(!live_panes.contains(pane), "down left pane {pane}");
    }
    assert_eq!(state(&sandbox, "o", "b"), "killed");
    assert_eq!(sandbox.member("o", "b")["reason"], "shutdown");
}
