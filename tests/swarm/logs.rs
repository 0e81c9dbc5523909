//! Logs a person can read: `swarm log` renders a pane's output as text, `--raw` keeps the bytes,
//! and `--all -f` interleaves every member's new lines after their names.

use std::fs;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Command;
use std::thread;
use std::time::Duration;

use nix::sys::signal::Signal;

use crate::harness::{Background, Sandbox, Team, bin, eventually, state, watches};

fn pane(sandbox: &Sandbox, team: &str, name: &str) -> String {
    sandbox.member(team, name)["tmuxPaneId"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A member that prints `lines` (each through printf, so `\033` escapes work) once `flag` exists.
fn printer(name: &str, flag: &Path, lines: &[&str]) -> String {
    let prints: Vec<String> = lines
        .iter()
        .map(|line| format!("printf '{line}\\\\n'"))
        .collect();
    format!(
        "[[member]]\nname = \"{name}\"\ncommand = [\"sh\", \"-c\", \"while [ ! -e {flag} ]; do sleep 0.05; done; {}; sleep 1000\"]\n",
        prints.join("; "),
        flag = flag.display()
    )
}

#[test]
fn log_shows_a_shell_pane_as_text_and_raw_keeps_its_bytes() {
    let sandbox = Sandbox::new();
    let team = Team::up(
        &sandbox,
        r#"
name = "sh"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "shell"
command = ["bash", "--norc", "--noprofile", "-i"]
"#,
    );
    eventually("the shell to run", || {
        state(&sandbox, "sh", "shell") == "running"
    });
    let log = sandbox.team_dir("sh").join("logs/shell.log");
    // Its prompt, with readline ready for keys (bracketed paste on).
    eventually("the shell's prompt", || {
        fs::read_to_string(&log).is_ok_and(|text| text.contains("\x1b[?2004h"))
    });
    // Typed as a person would: bash echoes it, with its prompt and readline's sequences.
    team.server().run(&[
        "send-keys",
        "-t",
        &pane(&sandbox, "sh", "shell"),
        r"echo hello; printf 'progress 10%%\r\e[7mdone\e[0m\e[K\n'",
        "Enter",
    ]);
    eventually("the output to be logged", || {
        fs::read_to_string(&log).is_ok_and(|text| text.contains("\x1b[7mdone"))
    });
    let raw_file = fs::read_to_string(&log).unwrap();
    assert!(
        raw_file.contains('\x1b'),
        "the pane printed control sequences"
    );

    let shown = sandbox
        .swarm()
        .args(["log", "shell", "-n", "50"])
        .team("sh")
        .run()
        .success()
        .stdout;
    assert!(
        !shown.contains('\x1b') && !shown.contains('\r'),
        "no control sequence is shown: {shown:?}"
    );
    let lines: Vec<&str> = shown.lines().collect();
    assert!(
        lines
            .iter()
            .any(|l| l.ends_with(r"# echo hello; printf 'progress 10%%\r\e[7mdone\e[0m\e[K\n'")),
        "the command line as typed: {lines:#?}"
    );
    assert!(lines.contains(&"hello"), "{lines:#?}");
    assert!(
        lines.contains(&"done"),
        "the progress was overwritten: {lines:#?}"
    );
    assert!(
        lines
            .last()
            .is_some_and(|l| l.starts_with("bash") && l.ends_with('#')),
        "the prompt waiting for input: {lines:#?}"
    );

    // bash may redraw its prompt at any time (a resize, under load): what `--raw` prints is held
    // against the file as it was both before and after the call.
    let raw_log = |lines: &str| {
        let mut seen = (String::new(), String::new());
        eventually("a log that held still around the call", || {
            let before = fs::read_to_string(&log).unwrap();
            let shown = sandbox
                .swarm()
                .args(["log", "shell", "--raw", "-n", lines])
                .team("sh")
                .run()
                .success()
                .stdout;
            let after = fs::read_to_string(&log).unwrap();
            let held = before == after;
            seen = (shown, after);
            held
        });
        seen
    };
    let (raw, file) = raw_log("1000");
    assert_eq!(raw, file, "--raw is the bytes");
    assert!(raw.contains("\x1b[?2004h") && raw.contains("\x1b[7m"));
    // The last line as the file has it, control bytes and all.
    let (last, file) = raw_log("1");
    let file_last = file.trim_end_matches('\n').rsplit('\n').next().unwrap();
    assert!(file.ends_with(&last), "{last:?} ends {file:?}");
    assert_eq!(last.trim_end_matches('\n'), file_last, "{file:?}");
    assert!(
        last.contains("bash") && last.chars().any(|c| c == '\x1b' || c == '\r'),
        "the prompt's line with its control bytes: {last:?}"
    );
}

#[test]
fn log_all_follows_every_member_after_its_name() {
    let sandbox = Sandbox::new();
    let flag = sandbox.root().join("go");
    let first = sandbox.root().join("first");
    let _team = Team::up(
        &sandbox,
        &format!(
            r#"
name = "duo"
[lead]
command = ["sleep", "1000"]
{}{}
"#,
            printer("alpha", &first, &["alpha one"]),
            printer(
                "be",
                &flag,
                &[r"\\033[32mbeta\\033[0m two", r"beta\\033[?2004h three"]
            ),
        ),
    );
    for name in ["alpha", "be"] {
        eventually(&format!("{name} to run"), || {
            state(&sandbox, "duo", name) == "running"
        });
    }
    let logs = sandbox.team_dir("duo").join("logs");
    let follow = sandbox
        .swarm()
        .args(["log", "--all", "-f", "-n", "0"])
        .team("duo")
        .spawn();
    eventually("the follower to watch the logs", || {
        watches(follow.pid(), &logs)
    });
    // Names are padded to the longest, team-lead.
    fs::write(&first, "").unwrap();
    assert_eq!(follow.next_line(), "alpha     | alpha one");
    fs::write(&flag, "").unwrap();
    assert_eq!(follow.next_line(), "be        | beta two");
    assert_eq!(follow.next_line(), "be        | beta three");
    // A member spawned while following is followed too.
    sandbox
        .swarm()
        .args([
            "spawn",
            "gamma",
            "--",
            "sh",
            "-c",
            "echo gamma here; sleep 1000",
        ])
        .team("duo")
        .run()
        .success();
    assert_eq!(follow.next_line(), "gamma     | gamma here");
    // A log whose member the roster does not name yet (its supervisor logged before `spawn` had
    // recorded it): followed once config.json names it, though the log never grows again.
    fs::write(logs.join("delta.log"), "delta here\r\n").unwrap();
    // Time for the follower to see the log and find no delta in the roster (were it slower,
    // the test would only be weaker).
    thread::sleep(Duration::from_millis(300));
    let plain = Sandbox::new();
    plain.team("x", &["delta"]);
    let mut delta = plain.config("x")["members"][1].clone();
    delta["agentId"] = "delta@duo".into();
    let mut config = sandbox.config("duo");
    config["members"].as_array_mut().unwrap().push(delta);
    let staged = sandbox.team_dir("duo").join("config.json.staged");
    fs::write(&staged, serde_json::to_vec_pretty(&config).unwrap()).unwrap();
    fs::rename(&staged, sandbox.team_dir("duo").join("config.json")).unwrap();
    assert_eq!(follow.next_line(), "delta     | delta here");
    // Ctrl-C ends it at once, saying nothing.
    follow.signal(Signal::SIGINT);
    let (status, stderr) = follow.finish();
    assert_eq!(status.signal(), Some(Signal::SIGINT as i32), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");

    // Without -f: each member's last lines in turn.
    let shown = sandbox
        .swarm()
        .args(["log", "--all", "-n", "1"])
        .team("duo")
        .run()
        .success()
        .stdout;
    assert_eq!(
        shown,
        "alpha     | alpha one\nbe        | beta three\ngamma     | gamma here\ndelta     | delta here\n"
    );
    sandbox
        .swarm()
        .args(["log", "--all", "--raw"])
        .team("duo")
        .run()
        .code(2);
}

#[test]
fn a_follower_whose_reader_goes_away_exits_quietly_and_colours_only_a_terminal() {
    let sandbox = Sandbox::new();
    let flag = sandbox.root().join("go");
    let again = sandbox.root().join("again");
    let team = Team::up(
        &sandbox,
        &format!(
            r#"
name = "c"
[lead]
command = ["sleep", "1000"]
{}{}
"#,
            printer("red", &flag, &["one"]),
            printer("blue", &again, &["two"]),
        ),
    );
    for name in ["red", "blue"] {
        eventually(&format!("{name} to run"), || {
            state(&sandbox, "c", name) == "running"
        });
    }
    // `swarm log --all -f | head -n 1`: the next line after head has gone ends swarm, status 0.
    let mut pipeline = sandbox.command("bash");
    pipeline.args([
        "-c",
        &format!(
            "set -o pipefail; {} log --all -f -n 0 --team c | head -n 1",
            bin()
        ),
    ]);
    let piped = Background::spawn(pipeline);
    let logs = sandbox.team_dir("c").join("logs");
    eventually("the follower to watch the logs", || {
        follower_pids(piped.pid())
            .iter()
            .any(|pid| watches(*pid, &logs))
    });
    fs::write(&flag, "").unwrap();
    assert_eq!(piped.next_line(), "red       | one");
    fs::write(&again, "").unwrap();
    let (status, stderr) = piped.finish();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");

    // On a terminal (a tmux pane), each name is in its member's colour; NO_COLOR turns it off.
    let expected = [("red", "\x1b[31m"), ("blue", "\x1b[34m")];
    for (member, _) in expected {
        assert_eq!(sandbox.member("c", member)["color"], member);
    }
    // --color wins over both: never on a terminal, always despite NO_COLOR.
    for (run, (no_color, flag, coloured)) in [
        ("", "", true),
        ("1", "", false),
        ("", "--color never", false),
        ("1", "--color always", true),
    ]
    .into_iter()
    .enumerate()
    {
        let shown = sandbox.root().join(format!("shown{run}"));
        let command = format!(
            "NO_COLOR={no_color} {} {flag} log --all -n 1 --team c; touch {}; sleep 1000",
            bin(),
            shown.display()
        );
        let window = team.server().run(&[
            "new-window",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "env",
            &format!("SWARM_HOME={}", sandbox.home().display()),
            "sh",
            "-c",
            &command,
        ]);
        eventually("the log to be shown", || shown.exists());
        let screen = team
            .server()
            .run(&["capture-pane", "-p", "-e", "-t", window.trim()]);
        for (member, colour) in expected {
            assert_eq!(
                screen.contains(&format!("{colour}{member}")),
                coloured,
                "{member} with NO_COLOR={no_color:?} {flag}: {screen:?}"
            );
            assert!(screen.contains(member), "{screen:?}");
        }
    }
    // Into a pipe, only --color always colours; --json never does.
    for (flags, coloured) in [
        (&["log"][..], false),
        (&["--color", "always", "log"][..], true),
        (&["--color", "always", "log", "--json"][..], false),
    ] {
        let out = sandbox
            .swarm()
            .args(flags)
            .args(["--all", "-n", "1", "--team", "c"])
            .run()
            .success();
        let stdout = &out.stdout;
        assert_eq!(
            stdout.contains("\x1b[31m"),
            coloured,
            "{flags:?}: {stdout:?}"
        );
        assert!(stdout.contains("red"), "{flags:?}: {stdout:?}");
    }
}

/// The pids of `swarm` processes whose parent is `parent`.
fn follower_pids(parent: u32) -> Vec<u32> {
    let output = Command::new("ps")
        .args(["-eo", "pid=,ppid=,args="])
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let pid: u32 = fields.next()?.parse().ok()?;
            let ppid: u32 = fields.next()?.parse().ok()?;
            let args: Vec<&str> = fields.collect();
            (ppid == parent && args.first().is_some_and(|a| a.ends_with("swarm"))).then_some(pid)
        })
        .collect()
}

/// A program that clears its screen and draws again, over and over (a TUI's redraws, with no
/// line break between them), leaves a log that renders as what the screen showed last, and in
/// time linear in the log's size: megabytes of it are shown well within the harness's patience,
/// where each clear once cost a screen as tall as the whole line so far.
#[test]
fn a_log_of_many_redrawn_screens_shows_the_last_one() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["tui"]);
    let logs = sandbox.team_dir("t").join("logs");
    fs::create_dir_all(&logs).unwrap();
    let mut log = Vec::new();
    // 2 MiB with no line break: one line, each of whose clears once erased a screen of 1024 rows.
    let mut frame = 0;
    while log.len() < 2 << 20 {
        log.extend_from_slice(
            format!("\x1b[2J\x1b[H\x1b[?25lframe {frame}\x1b[K\r\x1b[1B\x1b[7mstatus ok\x1b[0m")
                .as_bytes(),
        );
        frame += 1;
    }
    log.extend_from_slice(format!("\x1b[2J\x1b[Hlast frame {frame}\r\nthe end\r\n").as_bytes());
    fs::write(logs.join("tui.log"), &log).unwrap();
    let shown = sandbox
        .swarm()
        .args(["log", "tui", "-n", "2"])
        .team("t")
        .run()
        .success()
        .stdout;
    assert_eq!(shown, format!("last frame {frame}\nthe end\n"));
}

/// swarm's own log lines on stderr are coloured by the rule stdout is: `--color always` even into
/// a pipe, `never` not, and by default not into a pipe.
#[test]
fn log_lines_on_stderr_follow_color() {
    let sandbox = Sandbox::new();
    // A team whose config.json cannot be read: `ls` skips it with a warning.
    let broken = sandbox.home().join("teams").join("broken");
    fs::create_dir_all(&broken).unwrap();
    fs::write(broken.join("config.json"), "not json").unwrap();
    for (flags, coloured) in [
        (&[][..], false),
        (&["--color", "always"][..], true),
        (&["--color", "never"][..], false),
    ] {
        let out = sandbox.swarm().args(flags).arg("ls").run().success();
        assert!(
            out.stderr.contains("skipping team broken"),
            "{flags:?}: {}",
            out.stderr
        );
        assert_eq!(
            out.stderr.contains('\x1b'),
            coloured,
            "{flags:?}: {:?}",
            out.stderr
        );
        assert!(!out.stdout.contains('\x1b'), "{flags:?}: {:?}", out.stdout);
    }
}
