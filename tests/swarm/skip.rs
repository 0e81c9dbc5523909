//! A test that cannot run here says so, and a strict run fails on it (docs/ARCHITECTURE.md,
//! "Testing"). One helper for every test: the integration tests reach it through the harness, the
//! unit tests that need a program include this file by path.

use std::io::Write as _;

/// Skips the running test because `prerequisite` (`node`, `npm`, `userns`, `root`, …) is missing
/// here, as `why` says; the caller returns after it. It prints `SKIPPED <test>: <why>` straight to
/// stderr, which libtest does not capture, so a passing run shows it. A strict run
/// (`SWARM_TEST_STRICT=1`, or `CI` set to anything but `0` or `false`, as CI services set it, with
/// `SWARM_TEST_STRICT` unset)
/// fails the test instead, unless `SWARM_TEST_ALLOW_SKIP` (a comma-separated list) names the
/// prerequisite.
#[track_caller]
pub(crate) fn skip(prerequisite: &str, why: &str) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
    let var = |name| std::env::var(name).unwrap_or_default();
    let strict = match var("SWARM_TEST_STRICT").as_str() {
        "" => !matches!(var("CI").as_str(), "" | "0" | "false"),
        value => value != "0",
    };
    let allowed = var("SWARM_TEST_ALLOW_SKIP")
        .split(',')
        .any(|name| name.trim() == prerequisite);
    assert!(
        !strict || allowed,
        "{test} cannot run here: {why}; a strict run skips it only with \
         SWARM_TEST_ALLOW_SKIP={prerequisite}"
    );
}

/// Whether `program` runs (`program --version` succeeds); when it does not, the test is skipped
/// with [`skip`], the program's name being the prerequisite.
#[track_caller]
pub(crate) fn require(program: &str) -> bool {
    let runs = std::process::Command::new(program)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !runs {
        skip(program, &format!("{program} is not installed"));
    }
    runs
}
