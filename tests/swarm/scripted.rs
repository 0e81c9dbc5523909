//! Scripted teams: a script is the lead. `init`, then `spawn` for each member (the first opens the
//! team's window), then `wait --all`; spawn's flags for every member key; `up --wait` and `wait
//! --all` following members spawned while they wait; what `up --dry-run` and `info` show.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;

use crate::harness::{PATIENCE, Sandbox, TmuxServer, bin, eventually, state, watches};

/// A shell script in the sandbox that finds this build's `swarm` first on PATH, as an installed
/// one would be.
fn script(sandbox: &Sandbox, name: &str, body: &str) -> PathBuf {
    let dir = Path::new(bin()).parent().unwrap();
    sandbox.write(
        name,
        format!("set -e\nexport PATH=\"{}:$PATH\"\n{body}", dir.display()),
    )
}

/// The script a user writes: a team of three, one of them gone at once (so its window closes
/// before the next spawn) and one that writes to the lead, then every completion and message.
const TEAM_OF_THREE: &str = "\
swarm init team.toml
swarm spawn quick -- true
swarm spawn talker -- sh -c 'swarm send team-lead \"talker was here\"'
swarm spawn slow -- sh -c 'sleep 1'
swarm wait --all
swarm recv
";

fn check_team_of_three(out: &str) {
    for line in [
        "created team s with 1 member (team-lead)",
        "spawned quick in pane %",
        "spawned talker in pane %",
        "spawned slow in pane %",
        "quick completed (exit 0)",
        "talker completed (exit 0)",
        "slow completed (exit 0)",
        // The lead's inbox, where the completion notices and the talker's words wait.
        "  talker  talker was here",
        "  quick  task_notification quick@s: quick completed (exit 0)",
        "  slow  task_notification slow@s: slow completed (exit 0)",
    ] {
        assert!(out.contains(line), "no {line:?} in:\n{out}");
    }
}

#[test]
fn a_script_inits_spawns_three_and_waits_for_all_outside_tmux() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::unstarted(&sandbox);
    sandbox.write("team.toml", "name = \"s\"\n");
    let file = script(&sandbox, "team.sh", TEAM_OF_THREE);
    let output = sandbox
        .command("sh")
        .arg(&file)
        .env("SWARM_TMUX_SOCKET", server.socket())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    check_team_of_three(&out);
    let placed = &sandbox.config("s")["tmux"];
    assert_eq!(placed["session"], "swarm-s");
    assert_eq!(placed["socket"], server.socket().display().to_string());
}

/// The same script in a pane of the test's own tmux server, as a person runs it in a terminal
/// inside tmux: the team's window opens in the script's own session.
#[test]
fn a_script_inits_spawns_three_and_waits_for_all_inside_a_tmux_pane() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::start(&sandbox);
    sandbox.write("team.toml", "name = \"s\"\n");
    let file = script(&sandbox, "team.sh", TEAM_OF_THREE);
    let out = sandbox.root().join("out");
    let status = sandbox.root().join("status");
    server.run(&[
        "new-window",
        "-d",
        "-t",
        "fixture",
        "-c",
        &sandbox.work().display().to_string(),
        "sh",
        "-c",
        &format!(
            "sh {} > {} 2>&1; echo $? > {}.tmp && mv {}.tmp {}",
            file.display(),
            out.display(),
            status.display(),
            status.display(),
            status.display()
        ),
    ]);
    eventually("the script to finish", || status.exists());
    let said = fs::read_to_string(&out).unwrap();
    assert_eq!(fs::read_to_string(&status).unwrap().trim(), "0", "{said}");
    check_team_of_three(&said);
    let placed = &sandbox.config("s")["tmux"];
    assert_eq!(
        placed["session"], "fixture",
        "a window in the script's session"
    );
    assert_eq!(placed["socket"], server.socket().display().to_string());
}

fn spawn(sandbox: &Sandbox, server: &TmuxServer, args: &[&str]) -> crate::harness::Outcome {
    sandbox
        .swarm()
        .arg("spawn")
        .arg("--socket")
        .arg(server.socket())
        .args(args)
        .run()
}

fn ended(sandbox: &Sandbox, team: &str, name: &str) -> bool {
    ["exited", "failed", "killed"].contains(&state(sandbox, team, name).as_str())
}

/// What a member's program wrote to `file`, once it has.
fn written(file: &Path) -> String {
    eventually(&format!("{} to be written", file.display()), || {
        file.exists()
    });
    fs::read_to_string(file).unwrap()
}

fn git(dir: &Path, args: &[&str]) {
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
}

/// Each flag of spawn is a member key of the team file, and reaches the member as the key does.
#[test]
fn every_spawn_flag_reaches_the_member() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::unstarted(&sandbox);
    sandbox.write("team.toml", "name = \"f\"\n");
    sandbox.swarm().args(["init", "team.toml"]).run().success();
    let out = sandbox.root().join("out");
    fs::create_dir_all(&out).unwrap();
    let elsewhere = sandbox.root().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();

    // --env, --cwd, --color, --plan-mode-required, --log-max, --agent-type, --model.
    let report = out.join("plain");
    let report_text = format!(
        "printf '%s|%s|%s|%s|%s' \"$GREETING\" \"$SPACED\" \"$(pwd)\" \"$SWARM_COLOR\" \"$SWARM_PLAN_MODE\" > {}.tmp && mv {}.tmp {}",
        report.display(),
        report.display(),
        report.display()
    );
    spawn(
        &sandbox,
        &server,
        &[
            "plain",
            "--env",
            "GREETING=hello",
            "--env",
            "SPACED=a b=c",
            "--cwd",
            &elsewhere.display().to_string(),
            "--color",
            "cyan",
            "--plan-mode-required",
            "--log-max",
            "4KiB",
            "--agent-type",
            "tester",
            "--model",
            "m1",
            "--",
            "sh",
            "-c",
            &report_text,
        ],
    )
    .success();
    assert_eq!(
        written(&report),
        format!("hello|a b=c|{}|cyan|required", elsewhere.display())
    );
    let info = sandbox
        .swarm()
        .args(["info", "plain", "--json"])
        .run()
        .success()
        .json();
    assert_eq!(info["settings"]["logMax"], 4096);
    assert_eq!(info["settings"]["agentType"], "tester");
    assert_eq!(info["settings"]["model"], "m1");
    assert_eq!(info["settings"]["planModeRequired"], true);
    assert!(
        info["envKeys"]
            .as_array()
            .unwrap()
            .contains(&"GREETING".into())
    );

    // --delivery paste and --prompt: the prompt is the first message, typed into the pane.
    let pasted = out.join("pasted");
    spawn(
        &sandbox,
        &server,
        &[
            "typist",
            "--delivery",
            "paste",
            "--prompt",
            "first words",
            "--",
            "sh",
            "-c",
            &format!(
                "read line; printf '%s' \"$line\" > {}.tmp && mv {}.tmp {}",
                pasted.display(),
                pasted.display(),
                pasted.display()
            ),
        ],
    )
    .success();
    assert_eq!(written(&pasted), "[from team-lead] first words");

    // --paste-format alone means paste delivery; beside --delivery pull it is refused.
    sandbox
        .swarm()
        .args([
            "spawn",
            "bad",
            "--delivery",
            "pull",
            "--paste-format",
            "raw",
            "--",
            "true",
        ])
        .run()
        .refused(
            2,
            "--paste-format of bad: \"raw\" needs delivery = \"paste\"",
        );

    // --protocol wrapper: the supervisor approves the lead's shutdown request for the program.
    spawn(
        &sandbox,
        &server,
        &["wrapped", "--protocol", "wrapper", "--", "sleep", "1000"],
    )
    .success();
    eventually("wrapped to run", || {
        state(&sandbox, "f", "wrapped") == "running"
    });
    sandbox
        .swarm()
        .args([
            "shutdown",
            "request",
            "wrapped",
            "--wait",
            "--timeout",
            "60",
        ])
        .run()
        .success();
    eventually("wrapped to end", || ended(&sandbox, "f", "wrapped"));
    assert_eq!(sandbox.member("f", "wrapped")["reason"], "shutdown");

    // --run-timeout: the supervisor stops it once the time is up.
    spawn(
        &sandbox,
        &server,
        &["timed", "--run-timeout", "1", "--", "sleep", "1000"],
    )
    .success();
    eventually("timed to be stopped", || ended(&sandbox, "f", "timed"));
    assert_eq!(state(&sandbox, "f", "timed"), "killed");
    assert_eq!(sandbox.member("f", "timed")["reason"], "timeout");
    sandbox
        .swarm()
        .args([
            "spawn",
            "late",
            "--run-timeout",
            "99999999999",
            "--",
            "true",
        ])
        .run()
        .refused(2, "--run-timeout of late is 99999999999; at most 31536000");
    sandbox
        .swarm()
        .args(["spawn", "late", "--env", "NOVALUE", "--", "true"])
        .run()
        .code(2)
        .stderr_has("\"NOVALUE\" is not KEY=VALUE");

    // --worktree: its own git worktree on its own branch.
    let repo = sandbox.root().join("repo");
    fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    fs::write(repo.join("README"), "hi\n").unwrap();
    git(&repo, &["add", "README"]);
    git(&repo, &["commit", "-qm", "start"]);
    let branch = out.join("branch");
    spawn(
        &sandbox,
        &server,
        &[
            "isolated",
            "--worktree",
            "--cwd",
            &repo.display().to_string(),
            "--",
            "sh",
            "-c",
            &format!(
                "git rev-parse --abbrev-ref HEAD > {}.tmp && mv {}.tmp {}",
                branch.display(),
                branch.display(),
                branch.display()
            ),
        ],
    )
    .success();
    assert_eq!(written(&branch).trim(), "swarm/f/isolated");
    assert_eq!(
        sandbox.member("f", "isolated")["isolation"],
        "worktree",
        "recorded as the team file's key records it"
    );
    sandbox.swarm().args(["down", "--force"]).run().success();
}

/// `wait --all` prints each ending as it comes, and exits 1 when one did not complete: here one
/// fails, and one more is spawned while it waits.
#[test]
fn wait_all_reports_each_ending_and_fails_when_one_member_did() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::unstarted(&sandbox);
    sandbox.write("team.toml", "name = \"w\"\n");
    sandbox.swarm().args(["init", "team.toml"]).run().success();
    let go = sandbox.root().join("go");
    spawn(
        &sandbox,
        &server,
        &[
            "gate",
            "--",
            "sh",
            "-c",
            &format!("while [ ! -e {} ]; do sleep 0.1; done", go.display()),
        ],
    )
    .success();
    spawn(&sandbox, &server, &["bad", "--", "sh", "-c", "exit 3"]).success();
    let waiting = sandbox.swarm().args(["wait", "--all"]).spawn();
    eventually("wait --all to watch the team", || {
        watches(waiting.pid(), &sandbox.team_dir("w"))
    });
    spawn(&sandbox, &server, &["late", "--", "true"]).success();
    eventually("late to end", || ended(&sandbox, "w", "late"));
    fs::write(&go, "").unwrap();
    let mut lines = Vec::new();
    while lines.len() < 3 {
        lines.push(waiting.next_line());
    }
    let (status, stderr) = waiting.finish();
    assert_eq!(status.code(), Some(1), "{lines:?}{stderr}");
    for ending in [
        "gate completed (exit 0)",
        "bad failed (exit 3)",
        "late completed (exit 0)",
    ] {
        assert!(
            lines.iter().any(|line| line.starts_with(ending)),
            "no {ending:?} in {lines:?}"
        );
    }

    // Once every member has ended, it says how each did at once; one line of JSON each.
    let json = sandbox
        .swarm()
        .args(["wait", "--all", "--json"])
        .run()
        .code(1);
    let endings: Vec<Value> = json
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(endings.len(), 3, "{}", json.stdout);
    let bad = endings.iter().find(|e| e["name"] == "bad").unwrap();
    assert_eq!(bad["state"], "failed");
    assert_eq!(bad["exitCode"], 3);
    assert_eq!(bad["notice"]["status"], "failed");

    // A member still running when the time is up: exit 4, naming it.
    spawn(&sandbox, &server, &["sleeper", "--", "sleep", "1000"]).success();
    sandbox
        .swarm()
        .args(["wait", "--all", "--timeout", "0.5"])
        .run()
        .code(4)
        .stderr_is("swarm: still running after 0.5s: sleeper\n");
    sandbox
        .swarm()
        .args(["wait", "--all", "gate"])
        .run()
        .code(2);
    sandbox.swarm().args(["down", "--force"]).run().success();
}

/// `up --wait` reports the members `spawn` adds after it started, too.
#[test]
fn up_wait_prints_the_ending_of_a_member_spawned_later() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::unstarted(&sandbox);
    let go = sandbox.root().join("go");
    let file = sandbox.write(
        "u.toml",
        format!(
            "name = \"u\"\n[[member]]\nname = \"a\"\ncommand = [\"sh\", \"-c\", \"while [ ! -e {} ]; do sleep 0.1; done\"]\n",
            go.display()
        ),
    );
    let up = sandbox
        .swarm()
        .arg("up")
        .arg(&file)
        .arg("--socket")
        .arg(server.socket())
        .arg("--wait")
        .spawn();
    assert!(up.next_line().starts_with("team u is up: 1 pane in"));
    spawn(
        &sandbox,
        &server,
        &[
            "late",
            "--",
            "sh",
            "-c",
            "swarm send team-lead 'late says hi'",
        ],
    )
    .success();
    eventually("late to end", || ended(&sandbox, "u", "late"));
    fs::write(&go, "").unwrap();
    let deadline = Instant::now() + PATIENCE;
    let mut lines = Vec::new();
    while !["a completed", "late completed"]
        .iter()
        .all(|ending| lines.iter().any(|line: &String| line.starts_with(ending)))
    {
        assert!(Instant::now() < deadline, "{lines:?}");
        lines.push(up.next_line());
    }
    let (status, stderr) = up.finish();
    assert!(status.success(), "{lines:?}{stderr}");
    assert!(
        lines
            .iter()
            .any(|line| line.ends_with("late → team-lead  late says hi")),
        "the transcript shows what the later member said: {lines:?}"
    );
}

/// A team file with nothing to run is made by `up` as `init` makes one: no window until the first
/// spawn, and nothing to attach to.
#[test]
fn up_of_a_team_with_nothing_to_run_leaves_the_window_to_the_first_spawn() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::unstarted(&sandbox);
    let file = sandbox.write("e.toml", "name = \"e\"\n");
    sandbox
        .swarm()
        .arg("up")
        .arg(&file)
        .arg("--attach")
        .arg("--socket")
        .arg(server.socket())
        .run()
        .refused(
            2,
            "team e has nothing to run yet, so there is nothing to attach to",
        );
    sandbox
        .swarm()
        .arg("up")
        .arg(&file)
        .arg("--socket")
        .arg(server.socket())
        .run()
        .success()
        .stdout_is(
            "team e is up with nothing to run yet: its lead has no command and it has no members\n\
             add one with: swarm spawn --team e NAME -- PROGRAM ARGS…\n",
        );
    assert!(sandbox.config("e")["tmux"].is_null());
    assert!(!server.is_running());
    spawn(&sandbox, &server, &["first", "--", "sleep", "1000"]).success();
    assert_eq!(sandbox.config("e")["tmux"]["session"], "swarm-e");
    sandbox.swarm().args(["down", "--force"]).run().success();
}

/// `up --dry-run` and `info` show every setting a member runs with; a secret's value is hidden.
#[test]
fn dry_run_and_info_show_every_setting_and_hide_secrets() {
    let sandbox = Sandbox::new();
    let file = sandbox.write(
        "d.toml",
        "name = \"d\"\nlog_max = \"2MiB\"\n\
         [[member]]\nname = \"py\"\ncommand = \"python3 -i\"\npaste_format = \"raw\"\n\
         protocol = \"wrapper\"\nrun_timeout_s = 60\nisolation = \"none\"\n\
         env = { OPENAI_API_KEY = \"sk-secret\", RUST_LOG = \"info\" }\n",
    );
    let text = sandbox
        .swarm()
        .args(["up", "--dry-run"])
        .arg(&file)
        .run()
        .success()
        .stdout;
    for line in [
        "py:",
        "  argv          python3 -i",
        "  env           OPENAI_API_KEY=<masked>",
        "  env           RUST_LOG=info",
        "  protocol      wrapper",
        "  delivery      paste",
        "  paste format  raw",
        "  run timeout   60s",
        "  isolation     none",
        "  log max       2MiB",
        &format!("  cwd           {}", sandbox.work().display()),
    ] {
        assert!(
            text.contains(&format!("{line}\n")),
            "no {line:?} in:\n{text}"
        );
    }
    assert!(!text.contains("sk-secret"), "{text}");
    let plan = sandbox
        .swarm()
        .args(["up", "--dry-run", "--json"])
        .arg(&file)
        .run()
        .success()
        .json();
    let py = &plan["panes"][0];
    assert_eq!(py["env"]["OPENAI_API_KEY"], "<masked>");
    assert_eq!(py["settings"]["pasteFormat"], "raw");
    assert_eq!(py["settings"]["runTimeoutS"], 60);
    assert_eq!(py["settings"]["logMax"], 2 << 20);

    // info shows the same settings, from config.json, for a team only created.
    sandbox.swarm().arg("init").arg(&file).run().success();
    let info = sandbox.swarm().args(["info", "py"]).run().success().stdout;
    for line in [
        "protocol        wrapper",
        "delivery        paste",
        "paste format    raw",
        "run timeout     60s",
        "isolation       none",
        "log max         2MiB",
        "env keys        OPENAI_API_KEY RUST_LOG SWARM_AGENT",
    ] {
        assert!(info.contains(line), "no {line:?} in:\n{info}");
    }
    assert!(!info.contains("sk-secret"));
}
