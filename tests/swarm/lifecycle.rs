//! Completion notices, wait/info/log/stop, run timeouts, the concurrency limit, worktrees, the
//! wrapper protocol and paste delivery, on a private tmux server per test.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::Value;

use crate::harness::{Sandbox, Team, eventually, processes_in, state};

/// The task_notification the lead received about `name`.
fn notices(sandbox: &Sandbox, team: &str, name: &str) -> Vec<Value> {
    sandbox
        .inbox(team, "team-lead")
        .iter()
        .filter(|m| m["from"] == name)
        .map(|m| serde_json::from_str::<Value>(m["text"].as_str().unwrap()).unwrap())
        .filter(|n| n["type"] == "task_notification")
        .collect()
}

fn notice(sandbox: &Sandbox, team: &str, name: &str) -> Value {
    eventually(&format!("a notice about {name}"), || {
        !notices(sandbox, team, name).is_empty()
    });
    let all = notices(sandbox, team, name);
    assert_eq!(all.len(), 1, "one notice per ending: {all:#?}");
    all[0].clone()
}

#[test]
fn notices_report_completion_failure_and_stops() {
    let sandbox = Sandbox::new();
    let team = Team::up(
        &sandbox,
        r#"
name = "n"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "ok"
command = ["sh", "-c", "echo fine"]
[[member]]
name = "three"
command = ["sh", "-c", "exit 3"]
[[member]]
name = "long"
command = ["sleep", "1000"]
"#,
    );
    let ok = notice(&sandbox, "n", "ok");
    assert_eq!(ok["taskId"], "ok@n");
    assert_eq!(ok["status"], "completed");
    assert_eq!(ok["exitCode"], 0);
    assert!(ok["durationMs"].as_u64().is_some());
    assert!(
        ok["summary"]
            .as_str()
            .unwrap()
            .starts_with("ok completed (exit 0) after")
    );
    assert!(!ok["summary"].as_str().unwrap().contains('\n'));
    assert!(ok["timestamp"].is_string());
    let log = ok["outputFile"].as_str().unwrap();
    assert!(
        Path::new(log).ends_with("logs/ok.log")
            && fs::read_to_string(log).unwrap().contains("fine")
    );
    assert!(ok.get("worktreePath").is_none());

    let three = notice(&sandbox, "n", "three");
    assert_eq!(three["status"], "failed");
    assert_eq!(three["exitCode"], 3);
    // The notice lands just before the final state.
    eventually("three to be recorded failed", || {
        state(&sandbox, "n", "three") == "failed"
    });

    eventually("long to run", || state(&sandbox, "n", "long") == "running");
    let pane = sandbox.member("n", "long")["tmuxPaneId"]
        .as_str()
        .unwrap()
        .to_owned();
    sandbox
        .swarm()
        .args(["stop", "long"])
        .team("n")
        .run()
        .success()
        .stdout_has("long was killed (stop)");
    let long = notice(&sandbox, "n", "long");
    assert_eq!(long["status"], "killed");
    assert_eq!(long["reason"], "stop");
    assert_eq!(long["exitCode"], 128 + 15);
    assert!(
        !team.server().panes().contains(&pane),
        "the stopped member's pane is gone"
    );
    sandbox
        .swarm()
        .args(["stop", "long"])
        .team("n")
        .run()
        .refused(2, "long is not running");
    sandbox
        .swarm()
        .args(["stop", "ghost"])
        .team("n")
        .run()
        .refused(3, "ghost is not a member");
}

#[test]
fn wait_blocks_until_the_end_and_times_out() {
    let sandbox = Sandbox::new();
    let _team = Team::up(
        &sandbox,
        r#"
name = "w"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "slow"
command = ["sh", "-c", "sleep 2; exit 5"]
[[member]]
name = "forever"
command = ["sleep", "1000"]
"#,
    );
    sandbox
        .swarm()
        .args(["wait", "forever", "--timeout", "0.5"])
        .team("w")
        .run()
        .refused(4, "forever is still running");
    sandbox
        .swarm()
        .args(["wait", "nobody"])
        .team("w")
        .run()
        .refused(3, "nobody is not a member");
    let waited = sandbox
        .swarm()
        .args(["wait", "slow"])
        .team("w")
        .run()
        .code(1);
    assert!(
        waited.stdout.starts_with("slow failed (exit 5) after"),
        "{}",
        waited.stdout
    );
    let json = sandbox
        .swarm()
        .args(["wait", "slow", "--json"])
        .team("w")
        .run()
        .code(1)
        .json();
    assert_eq!(json["name"], "slow");
    assert_eq!(json["state"], "failed");
    assert_eq!(json["exitCode"], 5);
    assert_eq!(json["notice"]["status"], "failed");
    assert!(json["endedAt"].as_str().unwrap().ends_with('Z'), "{json}");
    assert!(json["endedAtMs"].as_u64().is_some(), "{json}");
}

#[test]
fn log_prints_the_last_lines_and_follows() {
    let sandbox = Sandbox::new();
    let flag = sandbox.root().join("go");
    let _team = Team::up(
        &sandbox,
        &format!(
            r#"
name = "l"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "talker"
command = ["sh", "-c", "for i in 1 2 3 4 5; do echo line $i; done; while [ ! -e {flag} ]; do sleep 0.05; done; echo after the flag; sleep 1000"]
"#,
            flag = flag.display(),
        ),
    );
    let log = sandbox.team_dir("l").join("logs/talker.log");
    eventually("the lines to be captured", || {
        fs::read_to_string(&log).is_ok_and(|l| l.contains("line 5"))
    });
    let last = sandbox
        .swarm()
        .args(["log", "talker", "-n", "3"])
        .team("l")
        .run()
        .success();
    assert_eq!(last.stdout, "line 3\nline 4\nline 5\n");
    let follow = sandbox
        .swarm()
        .args(["log", "talker", "-f", "-n", "1"])
        .team("l")
        .spawn();
    assert_eq!(follow.next_line(), "line 5");
    fs::write(&flag, "").unwrap();
    assert_eq!(follow.next_line(), "after the flag");
    sandbox
        .swarm()
        .args(["log", "lead"])
        .team("l")
        .run()
        .refused(3, "lead is not a member");
}

#[test]
fn a_log_stays_within_its_bound_and_log_reads_and_follows_across_the_rotation() {
    let sandbox = Sandbox::new();
    let flag = sandbox.root().join("go");
    // 2 MB, thirty times the bound, then a last line; then five batches of 2000 numbered lines
    // (40 KB each: the log rotates while it is followed), each when the test says, and an end.
    let _team = Team::up(
        &sandbox,
        &format!(
            r#"
name = "big"
log_max = "64KiB"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "loud"
command = ["sh", "-c", "yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 2000000; echo; echo the last line; for b in 1 2 3 4 5; do while [ ! -e {flag}-$b ]; do sleep 0.05; done; seq -f \"batch $b line %g\" 2000; done; echo the very end; sleep 1000"]
"#,
            flag = flag.display(),
        ),
    );
    let logs = sandbox.team_dir("big").join("logs");
    let (log, older) = (logs.join("loud.log"), logs.join("loud.log.1"));
    let last = |n: &str| {
        sandbox
            .swarm()
            .args(["log", "loud", "-n", n])
            .team("big")
            .run()
            .success()
            .stdout
    };
    eventually("the last line to be captured", || {
        last("1") == "the last line\n"
    });
    let bound = 64 * 1024;
    for file in [&log, &older] {
        let meta = fs::metadata(file).unwrap();
        assert!(
            meta.len() <= bound,
            "{} is {} bytes",
            file.display(),
            meta.len()
        );
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
            0o600
        );
    }
    // More lines than the newest file holds: the tail reads on into the older one.
    let logged = [fs::read(&older).unwrap(), fs::read(&log).unwrap()].concat();
    let logged = String::from_utf8(logged).unwrap().replace('\r', "");
    let all: Vec<&str> = logged.lines().collect();
    let newest = fs::read_to_string(&log).unwrap().lines().count();
    assert!(all.len() > newest + 100, "the older file holds lines too");
    let n = newest + 100;
    let tail = last(&n.to_string());
    assert_eq!(tail.lines().collect::<Vec<_>>(), all[all.len() - n..]);
    assert_eq!(all[all.len() - 1], "the last line");
    assert_eq!(all[all.len() - 3], "0123456789abcdefghijklmnopqrstuvwxyz");

    let follow = sandbox
        .swarm()
        .args(["log", "loud", "-f", "-n", "1"])
        .team("big")
        .spawn();
    assert_eq!(follow.next_line(), "the last line");
    // A follower keeps up with one rotation between looks; output faster than that is lost
    // from disk before anyone reads it, as with `tail -F`.
    for batch in 1..=5 {
        fs::write(format!("{}-{batch}", flag.display()), "").unwrap();
        for i in 1..=2000 {
            assert_eq!(follow.next_line(), format!("batch {batch} line {i}"));
        }
    }
    assert_eq!(follow.next_line(), "the very end");
    for file in [&log, &older] {
        assert!(fs::metadata(file).unwrap().len() <= bound);
    }
    assert!(last("1") == "the very end\n");
    // A member spawned later has the team file's bound too.
    sandbox
        .swarm()
        .args(["spawn", "later", "--", "sleep", "1000"])
        .team("big")
        .run()
        .success();
    eventually("later to run", || {
        state(&sandbox, "big", "later") == "running"
    });
    let supervisor = sandbox.member("big", "later")["supervisorPid"]
        .as_i64()
        .unwrap();
    let argv = fs::read(format!("/proc/{supervisor}/cmdline")).unwrap();
    let argv: Vec<&[u8]> = argv.split(|b| *b == 0).collect();
    assert!(
        argv.windows(2)
            .any(|w| w == [b"--log-max".as_slice(), b"65536"]),
        "{argv:?}"
    );
}

#[test]
fn info_shows_the_full_record() {
    let sandbox = Sandbox::new();
    let _team = Team::up(
        &sandbox,
        r#"
name = "i"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "a"
command = ["sleep", "1000"]
env = { RUST_LOG = "info" }
"#,
    );
    eventually("a to run", || state(&sandbox, "i", "a") == "running");
    let member = sandbox.member("i", "a");
    let text = sandbox
        .swarm()
        .args(["info", "a"])
        .team("i")
        .run()
        .success();
    for (label, value) in [
        ("argv", "sleep 1000".to_owned()),
        (
            "env keys",
            "RUST_LOG SWARM_AGENT SWARM_AGENT_ID SWARM_COLOR SWARM_HOME SWARM_LEAD \
             SWARM_LEAD_VERIFY_KEY SWARM_TEAM"
                .to_owned(),
        ),
        ("pane", member["tmuxPaneId"].as_str().unwrap().to_owned()),
        ("pid", member["pid"].to_string()),
        ("state", "running".to_owned()),
        (
            "log",
            sandbox
                .team_dir("i")
                .join("logs/a.log")
                .display()
                .to_string(),
        ),
    ] {
        let line = text
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("{label:<15} ")))
            .unwrap_or_else(|| panic!("no {label}: {}", text.stdout));
        assert!(line.ends_with(&value), "{line:?} should end with {value:?}");
    }
    assert!(
        text.stdout
            .lines()
            .any(|l| l.starts_with("started") && l.contains('T'))
    );
    let json = sandbox
        .swarm()
        .args(["info", "a", "--json"])
        .team("i")
        .run()
        .success()
        .json();
    assert_eq!(json["argv"], serde_json::json!(["sleep", "1000"]));
    assert_eq!(json["shownState"], "running");
}

#[test]
fn run_timeout_stops_the_member() {
    let sandbox = Sandbox::new();
    let _team = Team::up(
        &sandbox,
        r#"
name = "t"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "sleepy"
command = ["sleep", "1000"]
run_timeout_s = 1
"#,
    );
    let sleepy = notice(&sandbox, "t", "sleepy");
    assert_eq!(sleepy["status"], "killed");
    assert_eq!(sleepy["reason"], "timeout");
    // The notice lands just before the final state.
    eventually("sleepy's reason to be recorded", || {
        sandbox.member("t", "sleepy")["reason"] == "timeout"
    });
}

#[test]
fn max_concurrent_queues_members_in_file_order() {
    let sandbox = Sandbox::new();
    let slots = sandbox.root().join("slots");
    fs::create_dir_all(&slots).unwrap();
    let violation = sandbox.root().join("violation");
    // Each worker holds its slot until the test creates `<root>/go-<name>`.
    let worker = format!(
        "[\"sh\", \"-c\", \"mkdir {slots}/$SWARM_AGENT; [ $(ls {slots} | wc -l) -le 2 ] || touch {violation}; while [ ! -e {root}/go-$SWARM_AGENT ]; do sleep 0.05; done; rmdir {slots}/$SWARM_AGENT\"]",
        slots = slots.display(),
        violation = violation.display(),
        root = sandbox.root().display()
    );
    let release = |name: &str| fs::write(sandbox.root().join(format!("go-{name}")), "").unwrap();
    let states = || -> Vec<String> {
        ["w1", "w2", "w3", "w4"]
            .iter()
            .map(|name| state(&sandbox, "q", name))
            .collect()
    };
    // No lead command: the team is driven from this test, as a script would.
    let _team = Team::up(
        &sandbox,
        &format!(
            r#"
name = "q"
max_concurrent = 2
[[member]]
name = "w1"
command = {worker}
[[member]]
name = "w2"
command = {worker}
[[member]]
name = "w3"
command = {worker}
[[member]]
name = "w4"
command = {worker}
"#
        ),
    );

    // Two run and hold their slots; the other two wait their turn.
    eventually("w1 and w2 to run", || {
        states()[..2] == ["running", "running"]
    });
    assert_eq!(states(), ["running", "running", "queued", "queued"]);

    // A slot freed goes to the first in the file that waits.
    release("w1");
    eventually("w3 to run after w1", || states()[2] == "running");
    assert_eq!(states()[1..], ["running", "running", "queued"]);

    release("w2");
    eventually("w4 to run after w2", || states()[3] == "running");
    release("w3");
    release("w4");
    eventually("every worker to finish", || {
        states().iter().all(|state| state == "exited")
    });
    assert!(!violation.exists(), "a member saw more than 2 running");
    let started = |name: &str| sandbox.member("q", name)["startedAt"].as_u64().unwrap();
    let ended = |name: &str| sandbox.member("q", name)["endedAt"].as_u64().unwrap();
    assert!(started("w3") >= ended("w1"), "w3 waits for a slot");
    assert!(
        started("w3") < started("w4"),
        "queued members start in file order"
    );
    for name in ["w1", "w2", "w3", "w4"] {
        assert_eq!(notice(&sandbox, "q", name)["status"], "completed");
    }
}

#[test]
fn spawn_honours_max_concurrent() {
    let sandbox = Sandbox::new();
    let release = sandbox.root().join("release");
    let _team = Team::up(
        &sandbox,
        &format!(
            r#"
name = "sq"
max_concurrent = 1
[lead]
command = ["sleep", "1000"]
[[member]]
name = "long"
command = ["sh", "-c", "while [ ! -e {} ]; do sleep 0.1; done"]
"#,
            release.display(),
        ),
    );
    eventually("long to run", || state(&sandbox, "sq", "long") == "running");
    sandbox
        .swarm()
        .args(["spawn", "extra", "--", "true"])
        .team("sq")
        .as_("team-lead")
        .run()
        .success();
    eventually("extra to queue", || {
        state(&sandbox, "sq", "extra") == "queued"
    });
    assert_eq!(
        state(&sandbox, "sq", "long"),
        "running",
        "the slot is taken"
    );
    fs::write(&release, "").unwrap();
    assert_eq!(notice(&sandbox, "sq", "extra")["status"], "completed");
    let started = sandbox.member("sq", "extra")["startedAt"].as_u64().unwrap();
    let freed = sandbox.member("sq", "long")["endedAt"].as_u64().unwrap();
    assert!(started >= freed, "extra waited for long's slot");
}

pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let output = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

const CLEAN: [&str; 4] = ["clean", "clean2", "clean3", "clean4"];

#[test]
fn worktrees_are_kept_when_changed_and_removed_when_clean() {
    let mut sandbox = Sandbox::new();
    for (key, value) in [
        ("GIT_AUTHOR_NAME", "t"),
        ("GIT_AUTHOR_EMAIL", "t@t"),
        ("GIT_COMMITTER_NAME", "t"),
        ("GIT_COMMITTER_EMAIL", "t@t"),
    ] {
        sandbox.set_env(key, value);
    }
    let repo = sandbox.work();
    git(&repo, &["init", "-q", "-b", "main"]);
    fs::write(repo.join("README"), "hi\n").unwrap();
    git(&repo, &["add", "README"]);
    git(&repo, &["commit", "-qm", "start"]);
    // Several members end at once: their supervisors' git commands on the one repository race.
    let clean = CLEAN.iter().fold(String::new(), |mut toml, name| {
        let _ = write!(
            toml,
            "[[member]]\nname = \"{name}\"\ncommand = [\"sh\", \"-c\", \"pwd > /dev/null\"]\nisolation = \"worktree\"\n"
        );
        toml
    });
    let _team = Team::up(
        &sandbox,
        &format!(
            r#"
name = "wt"
[lead]
command = ["sleep", "1000"]
{clean}[[member]]
name = "dirty"
command = ["sh", "-c", "echo change >> README"]
isolation = "worktree"
[[member]]
name = "committer"
command = ["sh", "-c", "echo new > f && git add f && git commit -qm work"]
isolation = "worktree"
"#,
        ),
    );
    for name in CLEAN {
        let clean = notice(&sandbox, "wt", name);
        assert_eq!(clean["status"], "completed");
        assert!(
            clean.get("worktreePath").is_none(),
            "{clean:#}\n{name}'s pane:\n{}",
            fs::read_to_string(sandbox.team_dir("wt").join(format!("logs/{name}.log")))
                .unwrap_or_default()
        );
        assert!(!repo.join(format!(".swarm/worktrees/wt/{name}")).exists());
        assert!(
            git(&repo, &["branch", "--list", &format!("swarm/wt/{name}")])
                .trim()
                .is_empty(),
            "the clean branch is deleted"
        );
    }

    for name in ["dirty", "committer"] {
        let kept = notice(&sandbox, "wt", name);
        let path = repo.join(format!(".swarm/worktrees/wt/{name}"));
        assert_eq!(kept["worktreePath"], path.display().to_string(), "{kept:#}");
        assert!(path.is_dir());
        assert!(
            !git(&repo, &["branch", "--list", &format!("swarm/wt/{name}")])
                .trim()
                .is_empty()
        );
    }
    assert_eq!(
        fs::read_to_string(repo.join(".swarm/worktrees/wt/committer/f")).unwrap(),
        "new\n"
    );
    assert_eq!(
        fs::read_to_string(repo.join("README")).unwrap(),
        "hi\n",
        "the main checkout is untouched"
    );
    let status = git(&repo, &["status", "--porcelain", "--untracked-files=all"]);
    assert!(
        !status.contains(".swarm"),
        ".swarm/ is excluded from status:\n{status}"
    );
}

#[test]
fn worktree_isolation_outside_a_repository_is_refused_before_anything_starts() {
    let sandbox = Sandbox::new();
    let (team, up) = Team::try_up(
        &sandbox,
        r#"
name = "nr"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "a"
command = ["true"]
isolation = "worktree"
"#,
    );
    up.refused(2, "is not inside a git repository");
    assert!(!sandbox.team_dir("nr").exists());
    assert_eq!(team.server().panes().len(), 1);
}

#[test]
fn paste_delivery_types_messages_into_the_pane_made_safe_for_a_terminal() {
    let sandbox = Sandbox::new();
    let received = sandbox.root().join("received.txt");
    let _team = Team::up(
        &sandbox,
        &format!(
            r#"
name = "p"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "typist"
command = ["sh", "-c", "cat > {}"]
delivery = "paste"
"#,
            received.display(),
        ),
    );
    eventually("typist to run", || {
        state(&sandbox, "p", "typist") == "running"
    });
    // Quotes, `;` and non-ASCII arrive as they are; a control character would reach the program
    // as a keystroke (ESC could end a bracketed paste), and a later line could pass for a
    // message of its own: controls arrive escaped, later lines marked (docs/ARCHITECTURE.md,
    // "Terminal output").
    let text = "a;b \"double\" 'single' \x1b[201~\x07\rx\n[from user] second line é ü";
    sandbox
        .swarm()
        .args(["send", "typist", text])
        .team("p")
        .as_("team-lead")
        .run()
        .success();
    let expected = "[from team-lead] a;b \"double\" 'single' \\e[201~\\a\\rx\n  | [from user] second line é ü\n";
    eventually("the paste to arrive", || {
        fs::read_to_string(&received).is_ok_and(|got| got == expected)
    });
    // Pasted first, then moved to history: a crash in between pastes it again, never loses it.
    eventually("the pasted message to move to history", || {
        sandbox.inbox("p", "typist").is_empty()
    });
    let history = fs::read_to_string(sandbox.team_dir("p").join("history/typist.jsonl")).unwrap();
    assert!(history.contains("second line"));
}

/// `stop` and `down` with `--json` print one event per line, each member's ending as `wait`
/// prints it; `down` ends with an event of its own. A wrapper member that approves the shutdown
/// request `down` sends has ended well.
#[test]
fn stop_and_down_print_endings_as_json_events() {
    let sandbox = Sandbox::new();
    let _team = Team::up(
        &sandbox,
        r#"
name = "ev"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "bob"
command = ["sleep", "1000"]
[[member]]
name = "carol"
command = ["sleep", "1000"]
[[member]]
name = "wr"
command = ["sleep", "1000"]
protocol = "wrapper"
"#,
    );
    for name in ["team-lead", "bob", "carol", "wr"] {
        eventually(&format!("{name} to run"), || {
            state(&sandbox, "ev", name) == "running"
        });
    }
    let events = |stdout: &str| -> Vec<Value> {
        stdout
            .lines()
            .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {line}")))
            .collect()
    };
    let stopped = sandbox
        .swarm()
        .args(["stop", "bob", "--json"])
        .team("ev")
        .run()
        .success();
    let stopped = events(&stopped.stdout);
    assert_eq!(stopped.len(), 1, "{stopped:#?}");
    assert_eq!(stopped[0]["event"], "stopped");
    assert_eq!(stopped[0]["name"], "bob");
    assert_eq!(stopped[0]["state"], "killed");
    assert_eq!(stopped[0]["reason"], "stop");
    assert_eq!(stopped[0]["notice"]["status"], "killed");
    assert!(stopped[0]["endedAt"].as_str().unwrap().ends_with('Z'));

    let down = sandbox
        .swarm()
        .args(["down", "ev", "--timeout", "3", "--json"])
        .run()
        .success();
    let down = events(&down.stdout);
    let of = |event: &str, name: &str| {
        down.iter()
            .find(|e| e["event"] == event && e["name"] == name)
            .unwrap_or_else(|| panic!("no {event} event for {name}: {down:#?}"))
            .clone()
    };
    let wr = of("ended", "wr");
    assert_eq!(wr["state"], "exited", "approved, so ended well: {wr}");
    assert_eq!(wr["reason"], "shutdown");
    assert_eq!(wr["notice"]["status"], "completed");
    let carol = of("stopped", "carol");
    assert_eq!(carol["state"], "killed", "it did not answer: {carol}");
    assert_eq!(carol["reason"], "shutdown");
    assert_eq!(of("stopped", "team-lead")["state"], "killed");
    assert_eq!(
        down.last().unwrap(),
        &serde_json::json!({"event": "down", "team": "ev", "leadSpared": false})
    );
}

#[test]
fn a_wrapper_member_approves_shutdown_on_its_programs_behalf() {
    let sandbox = Sandbox::new();
    let _team = Team::up(
        &sandbox,
        r#"
name = "wr"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "legacy"
command = ["sleep", "1000"]
protocol = "wrapper"
"#,
    );
    eventually("legacy to run", || {
        state(&sandbox, "wr", "legacy") == "running"
    });
    let pid = sandbox.member("wr", "legacy")["pid"].as_i64().unwrap();
    let answer = sandbox
        .swarm()
        .args(["shutdown", "request", "legacy", "--wait", "--timeout", "30"])
        .team("wr")
        .as_("team-lead")
        .run()
        .success();
    assert!(
        answer.stdout.starts_with("legacy approved shutdown-"),
        "{}",
        answer.stdout
    );
    // An approved shutdown is a successful end, as Claude Code counts it ("has shut down"):
    // completed, with the reason and the real exit code, and `wait` exits 0.
    let ended = notice(&sandbox, "wr", "legacy");
    assert_eq!(ended["status"], "completed");
    assert_eq!(ended["reason"], "shutdown");
    assert_eq!(ended["exitCode"], 143, "sleep ends on the SIGTERM: {ended}");
    assert!(
        ended["summary"]
            .as_str()
            .unwrap()
            .starts_with("legacy has shut down (shutdown request approved, exit 143) after "),
        "{ended}"
    );
    // The notice lands just before the final state.
    eventually("legacy to be recorded exited", || {
        state(&sandbox, "wr", "legacy") == "exited"
    });
    sandbox
        .swarm()
        .args(["wait", "legacy", "--timeout", "60"])
        .team("wr")
        .run()
        .success()
        .stdout_has("legacy has shut down");
    eventually("the program to be gone", || {
        processes_in(&[pid], &[pid]).is_empty()
    });
}

#[test]
fn plan_mode_reaches_a_generic_member() {
    let sandbox = Sandbox::new();
    let _team = Team::up(
        &sandbox,
        r#"
name = "pm"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "careful"
command = ["sh", "-c", "echo mode=$SWARM_PLAN_MODE"]
plan_mode_required = true
"#,
    );
    notice(&sandbox, "pm", "careful");
    let log = fs::read_to_string(sandbox.team_dir("pm").join("logs/careful.log")).unwrap();
    assert!(log.contains("mode=required"), "{log}");
}

#[test]
fn a_program_that_cannot_start_is_recorded_as_failed() {
    let sandbox = Sandbox::new();
    let _team = Team::up(
        &sandbox,
        r#"
name = "ns"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "ghost"
command = ["no-such-program-xyz"]
"#,
    );
    let ghost = notice(&sandbox, "ns", "ghost");
    assert_eq!(ghost["status"], "failed");
    assert_eq!(ghost["exitCode"], 127);
    assert!(
        ghost["reason"]
            .as_str()
            .unwrap()
            .contains("no-such-program-xyz")
    );
}

#[test]
fn the_notice_is_written_once_even_under_a_signal_storm() {
    let sandbox = Sandbox::new();
    let _team = Team::up(
        &sandbox,
        r#"
name = "st"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "stoic"
command = ["bash", "-c", "trap '' TERM HUP INT; sleep 1.5; exit 0"]
"#,
    );
    eventually("stoic to run", || {
        state(&sandbox, "st", "stoic") == "running"
    });
    let supervisor = i32::try_from(
        sandbox.member("st", "stoic")["supervisorPid"]
            .as_i64()
            .unwrap(),
    )
    .unwrap();
    let pid = nix::unistd::Pid::from_raw(supervisor);
    let mut sent = 0;
    while nix::sys::signal::kill(pid, None).is_ok() && sent < 2000 {
        for signal in [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP] {
            let _ = nix::sys::signal::kill(pid, signal);
        }
        sent += 1;
        std::thread::sleep(Duration::from_millis(2));
    }
    let stoic = notice(&sandbox, "st", "stoic");
    assert_eq!(stoic["status"], "killed");
    // Whichever signal the supervisor acted on first is the recorded reason.
    assert!(
        ["signal", "hangup"].contains(&stoic["reason"].as_str().unwrap()),
        "{stoic:#}"
    );
    // The notice lands just before the final state.
    eventually("stoic to be recorded killed", || {
        state(&sandbox, "st", "stoic") == "killed"
    });
}

#[test]
fn an_ending_is_recorded_once_the_leads_inbox_is_free_again() {
    let mut sandbox = Sandbox::new();
    sandbox.set_env("SWARM_LOCK_TIMEOUT", "0.5");
    let go = sandbox.work().join("go");
    let _team = Team::up(
        &sandbox,
        &format!(
            r#"
name = "held"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "w"
command = ["sh", "-c", "while [ ! -e {} ]; do sleep 0.1; done"]
"#,
            go.display(),
        ),
    );
    eventually("w to run", || state(&sandbox, "held", "w") == "running");
    // Another tool holds the lead's inbox while w ends: the first attempt at the notice fails.
    let holder = crate::concurrency::ForeignHolder::hold(
        sandbox.team_dir("held").join("inboxes/team-lead.json.lock"),
    );
    fs::write(&go, "").unwrap();
    let log = sandbox.team_dir("held").join("logs/w.log");
    eventually("the supervisor to retry", || {
        fs::read_to_string(&log).is_ok_and(|log| log.contains("retrying"))
    });
    drop(holder);
    assert_eq!(notice(&sandbox, "held", "w")["status"], "completed");
}

/// A supervisor that cannot record its program as running (another tool holds config.json's lock
/// past `SWARM_LOCK_TIMEOUT`) does not give up and leave: it ends the program and records the
/// ending, so the lead hears of it and nothing runs unsupervised.
#[test]
fn a_program_whose_start_cannot_be_recorded_is_ended_and_its_ending_recorded() {
    let mut sandbox = Sandbox::new();
    for (key, value) in [
        ("GIT_AUTHOR_NAME", "t"),
        ("GIT_AUTHOR_EMAIL", "t@t"),
        ("GIT_COMMITTER_NAME", "t"),
        ("GIT_COMMITTER_EMAIL", "t@t"),
        ("SWARM_LOCK_TIMEOUT", "3"),
    ] {
        sandbox.set_env(key, value);
    }
    let repo = sandbox.work();
    git(&repo, &["init", "-q", "-b", "main"]);
    fs::write(repo.join("README"), "hi\n").unwrap();
    git(&repo, &["add", "README"]);
    git(&repo, &["commit", "-qm", "start"]);
    let lock = |path: &Path| {
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .unwrap();
        file.lock().unwrap();
        file
    };
    // swarm's git commands on the repository take this lock: bob's supervisor registers, then
    // waits here, before its program starts.
    let git_turn = lock(&repo.join(".git/swarm-worktrees.lock"));
    let pid_file = sandbox.root().join("bob.pid");
    let _team = Team::up(
        &sandbox,
        &format!(
            r#"
name = "t"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "bob"
command = ["sh", "-c", "echo $$ > {}; exec sleep 2717"]
isolation = "worktree"
"#,
            pid_file.display(),
        ),
    );
    // Registered: its supervisor's pid is in config.json, written before it waits on git.
    eventually("bob to register and the lead to run", || {
        state(&sandbox, "t", "bob") == "starting"
            && sandbox.member("t", "bob")["supervisorPid"].is_i64()
            && state(&sandbox, "t", "team-lead") == "running"
    });
    // agent-team-mail's lock on config.json, held as atm would hold it.
    let atm = lock(&sandbox.team_dir("t").join("config.lock"));
    drop(git_turn);
    eventually("bob's program to start and be ended", || {
        fs::read_to_string(&pid_file).is_ok_and(|pid| {
            !pid.trim().is_empty() && !Path::new("/proc").join(pid.trim()).exists()
        })
    });
    drop(atm);
    let bob = notice(&sandbox, "t", "bob");
    assert_eq!(bob["status"], "killed", "{bob:#}");
    assert_eq!(bob["reason"], "supervisor failed", "{bob:#}");
    // The notice lands just before the final state.
    eventually("bob to be recorded killed", || {
        state(&sandbox, "t", "bob") == "killed"
    });
}

/// The wrapper answers a shutdown request before it takes the request from the inbox: while the
/// answer cannot be written (another tool holds the lead's inbox), the request stays unread and
/// the program runs; once the inbox is free, the answer goes out and the program ends.
#[test]
fn a_wrapper_answer_that_cannot_be_sent_leaves_the_request_to_try_again() {
    let mut sandbox = Sandbox::new();
    sandbox.set_env("SWARM_LOCK_TIMEOUT", "0.5");
    let _team = Team::up(
        &sandbox,
        r#"
name = "wr2"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "legacy"
command = ["sleep", "1000"]
protocol = "wrapper"
"#,
    );
    eventually("legacy to run", || {
        state(&sandbox, "wr2", "legacy") == "running"
    });
    let holder = crate::concurrency::ForeignHolder::hold(
        sandbox.team_dir("wr2").join("inboxes/team-lead.json.lock"),
    );
    let asking = sandbox
        .swarm()
        .args([
            "shutdown",
            "request",
            "legacy",
            "--wait",
            "--timeout",
            "120",
        ])
        .team("wr2")
        .spawn();
    let log = sandbox.team_dir("wr2").join("logs/legacy.log");
    eventually("the wrapper to try again", || {
        fs::read_to_string(&log).is_ok_and(|log| log.contains("trying again"))
    });
    assert_eq!(state(&sandbox, "wr2", "legacy"), "running");
    let unread = sandbox.inbox("wr2", "legacy");
    assert!(
        unread
            .iter()
            .any(|m| m["text"].as_str().unwrap().contains("shutdown_request")),
        "the request stays unread until it is answered: {unread:#?}"
    );
    drop(holder);
    let (status, stderr) = asking.finish();
    assert!(status.success(), "{stderr}");
    let ended = notice(&sandbox, "wr2", "legacy");
    assert_eq!(ended["reason"], "shutdown");
}
