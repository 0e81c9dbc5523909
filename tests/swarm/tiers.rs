//! How the suite itself runs (docs/ARCHITECTURE.md, "Testing"): a test that cannot run here says
//! so and fails a strict run, and `--ignored` runs exactly the stress tier.

use std::process::{Command, Output};

use crate::harness::{
    self, Sandbox, Team, TmuxServer, eventually, processes_in, repo, sandbox_processes, state,
};

/// A test that needs something a machine may lack, and what it needs on this one.
const NEEDY: [&str; 3] = [
    // node and npm: Claude Code's lock protocol.
    "tasks::claims_race_with_claude_codes_own_lock_protocol_in_node",
    // A user namespace of its own (`unshare`).
    "limits::watch_and_recv_wait_keep_working_when_inotify_runs_out",
    // root, and setpriv to become another user.
    "peers::a_connection_from_another_uid_is_closed_unread",
];

/// Every prerequisite a test of this suite may skip for.
const EVERY_PREREQUISITE: &str = "node,npm,python3,userns,root,setpriv";

/// This test binary running only `test`, with an empty PATH, so no program it needs is found.
fn run_without_programs(sandbox: &Sandbox, test: &str, env: &[(&str, &str)]) -> Output {
    let empty = sandbox.root().join("no-programs");
    std::fs::create_dir_all(&empty).unwrap();
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--include-ignored", "--test-threads=1"])
        .env_clear()
        .env("PATH", &empty)
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

fn printed(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn a_test_without_its_prerequisite_says_it_is_skipped_and_fails_a_strict_run() {
    let sandbox = Sandbox::new();
    for test in NEEDY {
        let skipped = format!("SKIPPED {test}: ");

        let relaxed = run_without_programs(&sandbox, test, &[]);
        let text = printed(&relaxed);
        assert_eq!(relaxed.status.code(), Some(0), "{test}:\n{text}");
        assert!(text.contains(&skipped), "{test} says nothing:\n{text}");

        for strict in [("SWARM_TEST_STRICT", "1"), ("CI", "true")] {
            let failed = run_without_programs(&sandbox, test, &[strict]);
            let text = printed(&failed);
            assert_eq!(
                failed.status.code(),
                Some(101),
                "{test}, {strict:?}:\n{text}"
            );
            assert!(
                text.contains(&skipped) && text.contains("cannot run here"),
                "{test}, {strict:?}:\n{text}"
            );
        }

        let allowed = run_without_programs(
            &sandbox,
            test,
            &[
                ("SWARM_TEST_STRICT", "1"),
                ("SWARM_TEST_ALLOW_SKIP", EVERY_PREREQUISITE),
            ],
        );
        let text = printed(&allowed);
        assert_eq!(allowed.status.code(), Some(0), "{test}:\n{text}");
        assert!(text.contains(&skipped), "{test}:\n{text}");
    }
}

/// Every ignored test of `tests/swarm` is in the stress tier, so `scripts/stress` (`--ignored`)
/// runs exactly that tier: it says so, is named `<name>_under_stress`, and the default tier runs
/// `<name>`, the same test at a smaller size, so no behaviour is left to the stress tier alone.
#[test]
fn the_stress_tier_is_every_ignored_test_and_each_has_a_small_version() {
    let dir = repo().join("tests/swarm");
    let mut stressed = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|ext| ext != "rs") {
            continue;
        }
        let source = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = source.lines().collect();
        for (n, line) in lines.iter().enumerate() {
            if !line.trim_start().starts_with("#[ignore") {
                continue;
            }
            let file = path.file_name().unwrap().to_string_lossy();
            assert_eq!(
                line.trim(),
                r#"#[ignore = "stress tier: scripts/stress runs it"]"#,
                "{file}:{}",
                n + 1
            );
            let name = lines[n + 1..]
                .iter()
                .find_map(|l| l.strip_prefix("fn "))
                .and_then(|l| l.split('(').next())
                .unwrap();
            let small = name.strip_suffix("_under_stress").unwrap_or_else(|| {
                panic!("{file}: stress test {name} is not named <name>_under_stress")
            });
            assert!(
                source.contains(&format!("#[test]\nfn {small}() {{")),
                "{file}: stress test {name} has no small version {small} in the default tier"
            );
            stressed += 1;
        }
    }
    assert!(stressed > 0, "no stress test found in {}", dir.display());
}

/// README's test command is the line after its install command, and `.ci/run` runs it as written.
#[test]
fn ci_runs_the_readmes_test_command() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let command = readme
        .lines()
        .skip_while(|line| !line.starts_with("scripts/install"))
        .nth(1)
        .unwrap();
    assert!(command.starts_with("cargo test"), "{command}");
    let ci = std::fs::read_to_string(repo().join(".ci/run")).unwrap();
    assert!(
        ci.lines().any(|line| line == command),
        ".ci/run does not run README's test command {command:?}"
    );
}

/// The harness's running team is taken down when its test ends, passed or failed: no program,
/// supervisor or tmux server of it is left.
#[test]
fn a_running_team_is_taken_down_when_its_test_ends_however_it_ends() {
    let sandbox = Sandbox::new();
    for (test_fails, name) in [(false, "passes"), (true, "fails")] {
        let toml = format!(
            r#"
name = "{name}"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "a"
command = ["sh", "-c", "sleep 1000 & sleep 1000"]
"#
        );
        let started = std::sync::Mutex::new(None);
        let test = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let team = Team::up(&sandbox, &toml);
                    eventually("the team to run", || {
                        ["team-lead", "a"]
                            .iter()
                            .all(|member| state(&sandbox, name, member) == "running")
                    });
                    let members = sandbox.config(name)["members"].clone();
                    let members = members.as_array().unwrap();
                    let pids: Vec<i64> = members
                        .iter()
                        .flat_map(|m| [&m["pid"], &m["supervisorPid"]])
                        .map(|pid| pid.as_i64().unwrap())
                        .collect();
                    let groups: Vec<i64> =
                        members.iter().map(|m| m["pid"].as_i64().unwrap()).collect();
                    assert!(!processes_in(&pids, &groups).is_empty());
                    let socket = team.server().socket().to_owned();
                    *started.lock().unwrap() = Some((pids, groups, socket));
                    assert!(!test_fails, "the test fails here");
                })
                .join()
        });
        assert_eq!(test.is_err(), test_fails, "{name}");
        let (pids, groups, socket) = started.into_inner().unwrap().expect("the team started");
        eventually(&format!("{name}: the team's processes to be gone"), || {
            processes_in(&pids, &groups).is_empty()
        });
        eventually(&format!("{name}: the team's server to be gone"), || {
            !sandbox
                .command("tmux")
                .arg("-S")
                .arg(&socket)
                .arg("list-sessions")
                .output()
                .unwrap()
                .status
                .success()
        });
        for member in ["team-lead", "a"] {
            assert_eq!(state(&sandbox, name, member), "killed", "{name}: {member}");
        }
    }
}

/// A finished sandbox leaves nothing behind: its directory is gone and no process of it runs, so
/// nothing writes there again, not even a supervisor still ending its member when the test ends.
#[test]
fn a_finished_sandbox_leaves_no_directory_and_no_process() {
    let sandbox = Sandbox::new();
    let root = sandbox.root().to_owned();
    let server = TmuxServer::start(&sandbox);
    // The member ignores the hangup and the termination that end it when its server is killed, so
    // its supervisor is still at work when the sandbox goes.
    harness::up(
        &sandbox,
        &server,
        "t",
        r#"
name = "t"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "stubborn"
command = ["sh", "-c", "trap '' HUP TERM; while :; do sleep 1; done"]
"#,
    );
    eventually("the member to run", || {
        state(&sandbox, "t", "stubborn") == "running"
    });
    assert!(!sandbox_processes(&root).is_empty());

    drop(server);
    drop(sandbox);
    let left: Vec<i64> = sandbox_processes(&root)
        .into_iter()
        .map(i64::from)
        .collect();
    assert_eq!(processes_in(&left, &[]), Vec::<String>::new());
    assert!(!root.exists(), "{} is left", root.display());
}
