//! How the suite itself runs (docs/ARCHITECTURE.md, "Testing"): a test that cannot run here says
//! so and fails a strict run, and `--ignored` runs exactly the stress tier.

use std::process::{Command, Output};

use crate::harness::Sandbox;

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
