//! Team files, init, join, ls, status, and name validation.

use crate::harness::{Sandbox, eventually};

#[test]
fn init_creates_the_team_with_claude_code_fields() {
    let sandbox = Sandbox::new();
    let file = sandbox.write(
        "review.toml",
        r#"
name = "review"
description = "two reviewers"
[lead]
command = ["bash", "-c", "true"]
[[member]]
name = "security"
command = ["bash", "-c", "true"]
agent_type = "reviewer"
prompt = "Review the auth changes."
[[member]]
name = "style"
command = "true"
"#,
    );
    sandbox
        .swarm()
        .arg("init")
        .arg(&file)
        .run()
        .success()
        .stdout_is(&format!(
            "created team review with 3 members (team-lead, security, style) in {}/teams/review\n",
            sandbox.home().display()
        ));
    let config = sandbox.config("review");
    assert_eq!(config["name"], "review");
    assert_eq!(config["leadAgentId"], "team-lead@review");
    assert!(config["createdAt"].as_u64().unwrap() > 0);
    assert!(config["leadSessionId"].as_str().unwrap().len() == 36);
    let security = sandbox.member("review", "security");
    for field in [
        "agentId",
        "name",
        "joinedAt",
        "tmuxPaneId",
        "cwd",
        "subscriptions",
        "backendType",
        "color",
    ] {
        assert!(
            !security[field].is_null(),
            "member lacks {field}: {security:#}"
        );
    }
    assert_eq!(security["agentId"], "security@review");
    assert_eq!(security["agentType"], "reviewer");
    assert_eq!(security["backendType"], "tmux");
    assert_eq!(security["color"], "red");
    assert_eq!(sandbox.member("review", "style")["color"], "blue");
    let prompt = sandbox.inbox("review", "security");
    assert_eq!(prompt.len(), 1);
    assert_eq!(prompt[0]["from"], "team-lead");
    assert_eq!(prompt[0]["text"], "Review the auth changes.");
    for member in ["team-lead", "style"] {
        assert_eq!(
            sandbox.inbox("review", member).len(),
            0,
            "{member} has an inbox of []"
        );
    }
}

#[test]
fn init_refuses_an_existing_team_and_keeps_it() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    sandbox
        .swarm()
        .args(["send", "bob", "keep me"])
        .team("t")
        .run()
        .success();
    let file = sandbox.write("t.toml", "name = \"t\"\n");
    sandbox
        .swarm()
        .arg("init")
        .arg(&file)
        .run()
        .refused(2, "team t already exists");
    assert_eq!(sandbox.inbox("t", "bob").len(), 1);
}

#[test]
fn team_file_errors_name_the_line() {
    let sandbox = Sandbox::new();
    let file = sandbox.write(
        "bad.toml",
        "name = \"t\"\n\n[[member]]\nname = \"a\"\ncommand = \"true\"\ncolour = \"red\"\n",
    );
    let outcome = sandbox
        .swarm()
        .arg("init")
        .arg(&file)
        .run()
        .refused(2, "bad.toml:6:");
    assert!(outcome.stderr.contains("colour"), "{}", outcome.stderr);
    sandbox
        .swarm()
        .args(["init", "missing.toml"])
        .run()
        .refused(3, "missing.toml");
    assert!(
        !sandbox.team_dir("t").exists(),
        "nothing is created from a bad file"
    );
}

#[test]
fn bad_names_are_refused_everywhere() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    for bad in ["../x", "a/b", "", "-x", "a b", "é"] {
        sandbox
            .swarm()
            .args(["join", "--", bad])
            .team("t")
            .run()
            .refused(2, "invalid member name");
        sandbox
            .swarm()
            .args(["send", "--", bad, "hi"])
            .team("t")
            .run()
            .refused(2, "invalid member name");
        // An empty SWARM_AGENT or SWARM_TEAM means unset, as for any environment variable.
        if !bad.is_empty() {
            sandbox
                .swarm()
                .args(["recv"])
                .team("t")
                .as_(bad)
                .run()
                .refused(2, "invalid member name");
            sandbox
                .swarm()
                .args(["status"])
                .team(bad)
                .run()
                .refused(2, "invalid team name");
        }
    }
    // NUL cannot travel in argv; a team file can carry it.
    let file = sandbox.write("nul.toml", "name = \"a\\u0000b\"\n");
    sandbox
        .swarm()
        .arg("init")
        .arg(&file)
        .run()
        .refused(2, "NUL");
    let file = sandbox.write("dots.toml", "name = \"..\"\n");
    sandbox
        .swarm()
        .arg("init")
        .arg(&file)
        .run()
        .refused(2, "invalid team name");
    let entries: Vec<_> = std::fs::read_dir(sandbox.home().join("teams"))
        .unwrap()
        .collect();
    assert_eq!(entries.len(), 1, "no stray directories");
}

#[test]
fn join_adds_a_member_without_a_pane() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    sandbox
        .swarm()
        .args(["join", "carol"])
        .team("t")
        .run()
        .success()
        .stdout_is("carol joined team t\nact as it with: export SWARM_TEAM=t SWARM_AGENT=carol\n");
    let carol = sandbox.member("t", "carol");
    assert_eq!(carol["tmuxPaneId"], "");
    assert_eq!(carol["agentId"], "carol@t");
    assert_eq!(sandbox.inbox("t", "carol").len(), 0);
    sandbox
        .swarm()
        .args(["join", "carol"])
        .team("t")
        .run()
        .refused(2, "already a member");
    let id = sandbox
        .swarm()
        .args(["send", "carol", "welcome"])
        .team("t")
        .as_("bob")
        .run()
        .success()
        .stdout_line();
    sandbox
        .swarm()
        .args(["recv"])
        .team("t")
        .as_("carol")
        .run()
        .success()
        .stdout_is(&format!("{id}  bob  welcome\n"));
}

#[test]
fn ls_and_status_report_teams_and_unread_counts() {
    let sandbox = Sandbox::new();
    sandbox
        .swarm()
        .arg("ls")
        .run()
        .success()
        .stdout_is(&format!(
            "no teams under {}/teams\n",
            sandbox.home().display()
        ));
    sandbox.team("alpha", &["bob"]);
    sandbox.team("beta", &["x", "y"]);
    let listing = sandbox
        .swarm()
        .args(["ls", "--json"])
        .run()
        .success()
        .json();
    let names: Vec<&str> = listing
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["alpha", "beta"]);
    assert_eq!(listing[1]["members"], 3);

    sandbox
        .swarm()
        .args(["send", "bob", "one"])
        .team("alpha")
        .run()
        .success();
    sandbox
        .swarm()
        .args(["send", "bob", "two"])
        .team("alpha")
        .run()
        .success();
    let status = sandbox
        .swarm()
        .args(["status", "alpha", "--json"])
        .run()
        .success()
        .json();
    let bob = status["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "bob")
        .unwrap();
    assert_eq!(bob["unread"], 2);
    assert!(
        bob["lastActivity"].as_str().unwrap().ends_with('Z'),
        "{bob}"
    );
    assert!(bob["lastActivityMs"].as_u64().is_some(), "{bob}");
    let text = sandbox.swarm().args(["status", "alpha"]).run().success();
    let bob_row = text
        .stdout
        .lines()
        .find(|l| l.starts_with("bob"))
        .unwrap()
        .to_owned();
    assert!(
        bob_row.split_whitespace().any(|cell| cell == "2"),
        "{bob_row}"
    );

    sandbox
        .swarm()
        .arg("status")
        .run()
        .refused(2, "which team?");
    sandbox
        .swarm()
        .args(["status", "gamma"])
        .run()
        .refused(3, "no team named gamma");
}

#[test]
fn an_empty_swarm_team_counts_as_unset_for_status_and_down() {
    let sandbox = Sandbox::new();
    sandbox.team("alpha", &["bob"]);
    // The global --team and the positional TEAM once shared a clap id, so an empty SWARM_TEAM
    // filled the positional and was refused as an invalid name.
    sandbox
        .swarm()
        .arg("status")
        .env("SWARM_TEAM", "")
        .run()
        .success()
        .stdout_has("team alpha");
    sandbox
        .swarm()
        .args(["down", "--timeout", "1"])
        .env("SWARM_TEAM", "")
        .run()
        .success()
        .stdout_is("team alpha is down\n");
    // The positional still wins over the environment.
    sandbox.team("beta", &["x"]);
    sandbox
        .swarm()
        .args(["status", "beta"])
        .env("SWARM_TEAM", "alpha")
        .run()
        .success()
        .stdout_has("team beta");
}

/// A process that passes for `name`'s supervisor (`… run NAME`), killed with its group on drop.
struct FakeSupervisor(std::process::Child);

impl FakeSupervisor {
    fn of(name: &str) -> Self {
        use std::os::unix::process::CommandExt;
        // `; :` keeps the shell from exec'ing sleep, which would change its command line.
        let child = std::process::Command::new("sh")
            .args(["-c", "sleep 600; :", "run", name])
            .process_group(0)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let cmdline = format!("/proc/{}/cmdline", child.id());
        let tail = format!("run\0{name}\0");
        eventually("the fake supervisor to show its command line", || {
            std::fs::read(&cmdline).is_ok_and(|bytes| bytes.ends_with(tail.as_bytes()))
        });
        Self(child)
    }
}

impl Drop for FakeSupervisor {
    fn drop(&mut self) {
        let group = nix::unistd::Pid::from_raw(i32::try_from(self.0.id()).unwrap());
        let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        let _ = self.0.wait();
    }
}

/// `ls` counts as live what `status` shows as live: a member whose recorded supervisor only
/// looks like one by its command line (`… run bob`) has vanished, whatever its pane.
#[test]
fn ls_counts_live_members_as_status_sees_them() {
    let sandbox = Sandbox::new();
    sandbox.team("alpha", &["bob"]);
    let bob = FakeSupervisor::of("bob");
    let config_path = sandbox.team_dir("alpha").join("config.json");
    let mut config = sandbox.config("alpha");
    // A tmux server that no longer runs has no panes.
    config["tmux"] = serde_json::json!({
        "socket": sandbox.root().join("gone.sock"),
        "session": "swarm-alpha",
        "window": "@1",
    });
    let member = config["members"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|m| m["name"] == "bob")
        .unwrap();
    member["state"] = "running".into();
    member["supervisorPid"] = bob.0.id().into();
    member["tmuxPaneId"] = "%99".into();
    std::fs::write(&config_path, serde_json::to_vec_pretty(&config).unwrap()).unwrap();

    let status = sandbox
        .swarm()
        .args(["status", "alpha", "--json"])
        .run()
        .success()
        .json();
    let shown = status["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "bob")
        .unwrap()["state"]
        .clone();
    assert_eq!(shown, "vanished");
    let listing = sandbox
        .swarm()
        .args(["ls", "--json"])
        .run()
        .success()
        .json();
    assert_eq!(listing[0]["live"], 0, "{listing:#}");
}
