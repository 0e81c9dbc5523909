//! Snapshot tests that pin the interface: every command's help, representative `--json`
//! documents, and refusals (exit status and stderr together). Snapshots are in `snapshots/`.
//!
//! After a deliberate change, accept the new output with `INSTA_UPDATE=always cargo test` (then
//! read the diff in git), or with `cargo insta review` if cargo-insta is installed. A plain
//! `cargo test` fails on a mismatch; it writes `.snap.new` files beside the snapshots (none when
//! `CI` is set), which no later run reads as the snapshot, so they never make a test pass.
//!
//! Runs use [`Sandbox::deterministic`], whose fixed clock and id seed make times and ids the same
//! on every run. What no hook fixes is filtered: the sandbox's path, pids, modification times,
//! and what a member's supervisor (which runs without the hooks) measures and stamps.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::harness::{Outcome, Sandbox, TmuxServer};
use crate::peers::listen;

/// Settings for one sandbox's snapshots: its path and the given `(regex, replacement)` filters.
fn settings(sandbox: &Sandbox, filters: &[(&str, &str)]) -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    // Temp dirs are /tmp/sw plus letters and digits: nothing a regex would misread.
    settings.add_filter(&sandbox.root().display().to_string(), "[sandbox]");
    for (regex, replacement) in filters {
        settings.add_filter(regex, *replacement);
    }
    settings
}

/// A team `t` of the lead, bob and carol, with no panes.
fn team() -> Sandbox {
    let sandbox = Sandbox::deterministic();
    sandbox.team("t", &["bob", "carol"]);
    sandbox
}

/// `swarm ARGS --help`, with the width help wraps at fixed: no terminal is attached, and clap
/// falls back to COLUMNS, capped at the CLI's `max_term_width`.
fn help(sandbox: &Sandbox, path: &[&str], flag: &str) -> String {
    sandbox
        .swarm()
        .args(path)
        .arg(flag)
        .env("COLUMNS", "100")
        .run()
        .success()
        .stdout
}

/// The subcommands a help text lists under "Commands:", without `help` itself.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| !line.is_empty())
        // A wrapped description continues further right; a command starts at column 2.
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn help_of_every_command() {
    let sandbox = Sandbox::deterministic();
    let settings = settings(&sandbox, &[]);
    let mut pending = vec![Vec::<String>::new()];
    let mut seen = Vec::new();
    let mut top = String::new();
    while let Some(path) = pending.pop() {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let long = help(&sandbox, &args, "--help");
        let name = if path.is_empty() {
            "help".to_owned()
        } else {
            format!("help_{}", path.join("_"))
        };
        settings.bind(|| insta::assert_snapshot!(name.clone(), long));
        if path.is_empty() {
            top.clone_from(&long);
        } else {
            // `swarm help CMD` is `swarm CMD --help`.
            let via_help = sandbox
                .swarm()
                .arg("help")
                .args(&args)
                .env("COLUMNS", "100")
                .run()
                .success()
                .stdout;
            assert_eq!(via_help, long, "swarm help {}", path.join(" "));
        }
        for sub in subcommands(&long) {
            let mut child = path.clone();
            child.push(sub);
            pending.push(child);
        }
        seen.push(format!("swarm {}", path.join(" ")).trim_end().to_owned());
    }
    seen.sort();
    // The list itself is pinned, so a command that stops being found fails here.
    settings.bind(|| insta::assert_snapshot!("help_commands", seen.join("\n")));

    let short = help(&sandbox, &[], "-h");
    settings.bind(|| insta::assert_snapshot!("help_short", short));
    let bare = sandbox
        .swarm()
        .arg("help")
        .env("COLUMNS", "100")
        .run()
        .success()
        .stdout;
    assert_eq!(bare, top, "swarm help is swarm --help");
}

/// The snapshots are what any terminal at least 100 columns wide shows, and what a run without a
/// terminal or COLUMNS (CI) shows.
#[test]
fn help_is_wrapped_at_100_columns_at_most() {
    let sandbox = Sandbox::deterministic();
    let pinned = help(&sandbox, &["send"], "--help");
    assert!(pinned.lines().any(|line| line.chars().count() > 90));
    for columns in [None, Some("300")] {
        let mut run = sandbox.swarm().args(["send", "--help"]);
        if let Some(columns) = columns {
            run = run.env("COLUMNS", columns);
        }
        assert_eq!(run.run().success().stdout, pinned, "COLUMNS={columns:?}");
    }
}

#[test]
fn status_json() {
    let sandbox = team();
    sandbox
        .swarm()
        .args(["send", "bob", "hello bob"])
        .team("t")
        .run()
        .success();
    // A board: bob works on task 1; task 2 waits.
    for subject in ["Write the parser", "Write the tests"] {
        sandbox
            .swarm()
            .args(["task", "add", subject])
            .team("t")
            .run()
            .success();
    }
    sandbox
        .swarm()
        .args(["task", "start", "1"])
        .team("t")
        .as_("bob")
        .run()
        .success();
    let status = sandbox
        .swarm()
        .args(["status", "--json"])
        .team("t")
        .run()
        .success()
        .stdout;
    // The latest of the inbox's, history's and log's modification times.
    settings(
        &sandbox,
        &[
            (
                r#""lastActivity": "[0-9T:.-]+Z""#,
                r#""lastActivity": "[mtime]""#,
            ),
            (r#""lastActivityMs": \d+"#, r#""lastActivityMs": "[mtime]""#),
        ],
    )
    .bind(|| insta::assert_snapshot!("status_json", status));
}

#[test]
fn inbox_and_recv_json() {
    let sandbox = team();
    for (from, text) in [
        ("team-lead", "first"),
        ("carol", "second"),
        ("carol", "third"),
    ] {
        sandbox
            .swarm()
            .args(["send", "bob", text, "--summary", &format!("{text} one")])
            .team("t")
            .as_(from)
            .run()
            .success();
    }
    let bob = |args: &[&str]| {
        sandbox
            .swarm()
            .args(args)
            .team("t")
            .as_("bob")
            .run()
            .success()
            .stdout
    };
    let settings = settings(&sandbox, &[]);
    let inbox = bob(&["inbox", "--json"]);
    settings.bind(|| insta::assert_snapshot!("inbox_json", inbox));
    let received = bob(&["recv", "--max", "2", "--json"]);
    settings.bind(|| insta::assert_snapshot!("recv_json", received));
    let all = bob(&["inbox", "--all", "--json"]);
    settings.bind(|| insta::assert_snapshot!("inbox_all_json", all));
}

#[test]
fn peers_json() {
    let sandbox = Sandbox::deterministic();
    let (listener, _socket) = listen(&sandbox, &["--label", "x"]);
    let peers = sandbox
        .swarm()
        .args(["peers", "--json"])
        .run()
        .success()
        .stdout;
    let pid = listener.pid().to_string();
    settings(&sandbox, &[(&format!(r"\b{pid}\b"), "[pid]")])
        .bind(|| insta::assert_snapshot!("peers_json", peers));
}

#[test]
fn task_notice_json() {
    let sandbox = Sandbox::deterministic();
    // Started by the test, so no pane inherits the hooks from `up`.
    let server = TmuxServer::start(&sandbox);
    let file = sandbox.write(
        "one.toml",
        "name = \"one\"\n[lead]\ncommand = [\"sleep\", \"1000\"]\n[[member]]\nname = \"bob\"\ncommand = [\"true\"]\n",
    );
    sandbox
        .swarm()
        .arg("up")
        .arg(file)
        .arg("--socket")
        .arg(server.socket())
        .run()
        .success();
    let waited = sandbox
        .swarm()
        .args(["wait", "bob", "--json"])
        .team("one")
        .run()
        .success()
        .stdout;
    let inbox = sandbox
        .swarm()
        .args(["inbox", "--json"])
        .team("one")
        .as_("team-lead")
        .run()
        .success()
        .stdout;
    sandbox
        .swarm()
        .args(["down", "one", "--force"])
        .run()
        .success();
    // The supervisor runs without the hooks: its clock, its measured duration, and the msg_id it
    // derives from the real start time are what they were. `inbox` shows the notice as escaped
    // JSON inside `text`, hence the optional backslashes.
    let filters = [
        (r#"(\\?"durationMs\\?": ?)\d+"#, "${1}[ms]"),
        (r"after \d[\d.m]*s", "after [duration]"),
        (
            r#"(\\?"timestamp\\?": ?\\?")\d{4}-\d\d-\d\dT[0-9:.]+Z"#,
            "${1}[time]",
        ),
        (r#"("msg_id": ")[0-9a-f-]{36}"#, "${1}[derived id]"),
        (r#"("endedAt": ")[0-9T:.-]+Z"#, "${1}[time]"),
        (r#"("endedAtMs": )\d+"#, "${1}[ms]"),
    ];
    let settings = settings(&sandbox, &filters);
    settings.bind(|| insta::assert_snapshot!("wait_json", waited));
    settings.bind(|| insta::assert_snapshot!("task_notice_inbox_json", inbox));
}

/// The documents the other commands print with `--json`, each pinned: times in RFC 3339 with
/// their milliseconds beside where config.json keeps milliseconds, protocol messages decoded
/// beside their text, a broadcast once, to `*`.
#[test]
fn json_documents() {
    let sandbox = team();
    let settings = settings(&sandbox, &[]);
    let json = |who: &str, args: &[&str], stdin: Option<&str>| {
        let mut run = sandbox.swarm().args(args).arg("--json").team("t").as_(who);
        if let Some(stdin) = stdin {
            run = run.stdin(stdin);
        }
        run.run().success().stdout
    };
    let field = |document: &str, key: &str| {
        serde_json::from_str::<serde_json::Value>(document).unwrap()[key]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let watch = sandbox
        .swarm()
        .args(["watch", "--all", "--json"])
        .team("t")
        .spawn();

    let broadcast = json("team-lead", &["send", "*", "standup in 5"], None);
    settings.bind(|| insta::assert_snapshot!("send_json", broadcast));
    json("carol", &["send", "bob", "hi bob"], None);
    let request = json(
        "team-lead",
        &["shutdown", "request", "bob", "--reason", "done"],
        None,
    );
    settings.bind(|| insta::assert_snapshot!("shutdown_request_json", request));
    let request_id = field(&request, "requestId");
    let approved = json("bob", &["shutdown", "approve", &request_id], None);
    settings.bind(|| insta::assert_snapshot!("shutdown_approve_json", approved));
    let submitted = json("carol", &["plan", "submit", "-"], Some("1. test\n2. ship"));
    let plan_id = field(&submitted, "requestId");
    let answered = json(
        "team-lead",
        &[
            "plan",
            "approve",
            &plan_id,
            "--permission-mode",
            "acceptEdits",
        ],
        None,
    );
    settings.bind(|| insta::assert_snapshot!("plan_approve_json", answered));

    // Every message, each once, the broadcast to `*`: six in all.
    let watched: Vec<String> = (0..6).map(|_| watch.next_line()).collect();
    assert!(
        watch
            .lines
            .next_within(Duration::from_millis(500))
            .is_none(),
        "nothing more"
    );
    let watched = watched.join("\n");
    settings.bind(|| insta::assert_snapshot!("watch_all_json", watched));
    let lead_inbox = json("team-lead", &["inbox", "--all"], None);
    settings.bind(|| insta::assert_snapshot!("inbox_structured_json", lead_inbox));

    let ls = json("user", &["ls"], None);
    settings.bind(|| insta::assert_snapshot!("ls_json", ls));
    let info = json("user", &["info", "bob"], None);
    settings.bind(|| insta::assert_snapshot!("info_json", info));
    let prune = json("user", &["prune", "--dry-run"], None);
    settings.bind(|| insta::assert_snapshot!("prune_dry_run_json", prune));
    let rm = json("user", &["rm", "t"], None);
    settings.bind(|| insta::assert_snapshot!("rm_json", rm));
}

/// One refusal as a snapshot shows it: the command, its exit status and its stderr.
fn refusal(args: &[&str], outcome: Outcome) -> String {
    let code = outcome.status.code();
    let stderr = outcome.refusal();
    format!(
        "$ swarm {}\nexit {}\n{stderr}",
        args.join(" "),
        code.unwrap_or(-1)
    )
}

#[test]
fn refusals() {
    let sandbox = team();
    let lead_request = sandbox
        .swarm()
        .args(["shutdown", "request", "bob"])
        .team("t")
        .as_("team-lead")
        .run()
        .success()
        .stdout_line();
    // (acting as, args, stdin)
    let cases: Vec<(&str, Vec<&str>, Option<String>)> = vec![
        ("team-lead", vec!["--team", "a/b", "status"], None),
        ("team-lead", vec!["join", "../x"], None),
        ("team-lead", vec!["join", "bob"], None),
        ("team-lead", vec!["inbox", "nobody"], None),
        ("team-lead", vec!["send", "ghost", "hi"], None),
        ("mallory", vec!["recv"], None),
        ("bob", vec!["watch", "carol", "--consume"], None),
        ("bob", vec!["shutdown", "request", "carol"], None),
        ("team-lead", vec!["shutdown", "request", "team-lead"], None),
        ("carol", vec!["shutdown", "approve", &lead_request], None),
        ("bob", vec!["shutdown", "approve", "shutdown-123@bob"], None),
        (
            "bob",
            vec!["shutdown", "reject", "nonsense", "--reason", "no"],
            None,
        ),
        (
            "team-lead",
            vec!["plan", "submit", "-"],
            Some("the plan".into()),
        ),
        (
            "bob",
            vec!["plan", "approve", "plan_approval-5@bob@t"],
            None,
        ),
        (
            "team-lead",
            vec!["plan", "reject", "plan_approval-5@bob@t"],
            None,
        ),
        (
            "team-lead",
            vec!["send", "bob", "-"],
            Some("x".repeat(1024 * 1024 + 1)),
        ),
        (
            "team-lead",
            vec![
                "send",
                "*",
                r#"{"type":"shutdown_request","requestId":"shutdown-1@bob","from":"team-lead","timestamp":"t"}"#,
            ],
            None,
        ),
        (
            "team-lead",
            vec!["send", "bob", r#"{"type":"shutdown_request"}"#],
            None,
        ),
        ("carol", vec!["recv", "--wait", "--timeout", "0.2"], None),
        ("team-lead", vec!["stop", "bob"], None),
        ("team-lead", vec!["wait", "ghost"], None),
        ("team-lead", vec!["send", "uds:", "hi"], None),
        ("team-lead", vec!["send", "uds:nobody", "hi"], None),
    ];
    let mut shown = Vec::new();
    for (who, args, stdin) in cases {
        let mut run = sandbox.swarm().args(&args).team("t").as_(who);
        if let Some(stdin) = stdin {
            run = run.stdin(stdin);
        }
        shown.push(refusal(&args, run.run()));
    }
    // Refusals that need another home: no team at all, and two teams to choose from.
    let empty = Sandbox::deterministic();
    shown.push(refusal(&["status"], empty.swarm().arg("status").run()));
    sandbox.team("u", &[]);
    shown.push(refusal(&["status"], sandbox.swarm().arg("status").run()));

    let text = shown.join("\n");
    settings(
        &sandbox,
        &[(&empty.root().display().to_string(), "[empty sandbox]")],
    )
    .bind(|| insta::assert_snapshot!("refusals", text));
}

#[test]
fn usage_errors_come_from_clap_with_status_2() {
    let sandbox = Sandbox::deterministic();
    let mut shown = Vec::new();
    for args in [
        vec!["sned", "bob", "hi"],
        vec!["send"],
        vec!["recv", "--max", "0"],
    ] {
        let outcome = sandbox.swarm().args(&args).run();
        assert!(outcome.stdout.is_empty(), "{}", outcome.stdout);
        shown.push(format!(
            "$ swarm {}\nexit {}\n{}",
            args.join(" "),
            outcome.status.code().unwrap_or(-1),
            outcome.stderr
        ));
    }
    let text = shown.join("\n");
    settings(&sandbox, &[]).bind(|| insta::assert_snapshot!("usage_errors", text));
}

/// A misspelt member's name is exit 3 with the same words from every command that names a member,
/// whoever runs it, before any other check; with a hint when a member's name looks like it.
#[test]
fn a_misspelt_member_is_not_found_in_the_same_words_everywhere() {
    let sandbox = team();
    let task = r#"{"type":"task_assignment","taskId":"1","subject":"s","description":"d","assignedBy":"team-lead","timestamp":"2026-01-01T00:00:00.000Z"}"#;
    // (acting as, args)
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("team-lead", vec!["send", "bobb", "hi"]),
        ("team-lead", vec!["send", "bobb", task]),
        ("carol", vec!["send", "bobb", "hi"]),
        ("team-lead", vec!["stop", "bobb"]),
        ("carol", vec!["stop", "bobb"]),
        ("team-lead", vec!["info", "bobb"]),
        ("team-lead", vec!["log", "bobb"]),
        ("team-lead", vec!["log", "bobb", "-f"]),
        ("team-lead", vec!["wait", "bobb"]),
        ("team-lead", vec!["inbox", "bobb"]),
        ("team-lead", vec!["watch", "bobb"]),
        ("carol", vec!["watch", "bobb", "--consume"]),
        ("team-lead", vec!["shutdown", "request", "bobb"]),
        (
            "team-lead",
            vec!["plan", "approve", "plan_approval-5@bobb@t"],
        ),
        (
            "team-lead",
            vec![
                "plan",
                "reject",
                "plan_approval-5@bobb@t",
                "--feedback",
                "no",
            ],
        ),
    ];
    let expected = "bobb is not a member of team t; members: team-lead, bob, carol";
    for (who, args) in cases {
        let outcome = sandbox.swarm().args(&args).team("t").as_(who).run();
        let stderr = outcome.refused(3, expected).stderr;
        assert_eq!(
            stderr,
            format!("swarm: {expected}\nhint: did you mean bob?\n"),
            "{args:?} as {who}"
        );
        let json = sandbox
            .swarm()
            .args(&args)
            .arg("--json")
            .team("t")
            .as_(who)
            .run()
            .code(3)
            .json_error();
        assert_eq!(
            json,
            serde_json::json!({"error": expected, "kind": "not_found", "hint": "did you mean bob?"}),
            "{args:?} as {who}"
        );
    }
    // Acting as a misspelt member to read one's own inbox: the same words, a hint of its own.
    sandbox
        .swarm()
        .arg("recv")
        .team("t")
        .as_("bobb")
        .run()
        .refused(3, expected);
    // A name like no member's gets no guess.
    sandbox
        .swarm()
        .args(["info", "zzz"])
        .team("t")
        .run()
        .refused(3, "zzz is not a member of team t")
        .stderr
        .lines()
        .count()
        .eq(&1)
        .then_some(())
        .expect("no hint");
    assert!(
        !sandbox.inbox_path("t", "bobb").exists(),
        "no phantom inbox"
    );
}

/// With `--json`, every refusal is one JSON object on stderr, with the status it has without:
/// swarm's own and clap's usage errors alike.
#[test]
fn errors_are_json_with_the_same_status() {
    let sandbox = team();
    let mut shown = Vec::new();
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("team-lead", vec!["inbox", "nobody"]),
        ("mallory", vec!["recv"]),
        ("bob", vec!["shutdown", "request", "carol"]),
        ("carol", vec!["recv", "--wait", "--timeout", "0.2"]),
        ("team-lead", vec!["--team", "a/b", "status"]),
        ("team-lead", vec!["sned", "bob", "hi"]),
        ("team-lead", vec!["send"]),
        ("team-lead", vec!["recv", "--max", "0"]),
    ];
    for (who, args) in cases {
        let plain = sandbox.swarm().args(&args).team("t").as_(who).run();
        let json = sandbox
            .swarm()
            .args(&args)
            .arg("--json")
            .team("t")
            .as_(who)
            .run();
        assert_eq!(json.status.code(), plain.status.code(), "{args:?}");
        let error = json.json_error();
        shown.push(format!(
            "$ swarm {} --json\nexit {}\n{error}",
            args.join(" "),
            json.status.code().unwrap_or(-1)
        ));
    }
    // `--json` anywhere before `--` counts; after it, it is text.
    sandbox
        .swarm()
        .args(["--json", "send", "ghost", "hi"])
        .team("t")
        .run()
        .json_error();
    sandbox
        .swarm()
        .args(["send", "bob", "--", "--json"])
        .team("t")
        .run()
        .success();
    // Help and version are no errors, and stay text.
    sandbox
        .swarm()
        .args(["--json", "--version"])
        .run()
        .success()
        .stdout_is(concat!("swarm ", env!("CARGO_PKG_VERSION"), "\n"));
    let text = shown.join("\n\n");
    settings(&sandbox, &[]).bind(|| insta::assert_snapshot!("errors_json", text));
}

#[test]
fn seeded_invocations_repeat_their_ids_and_times_but_never_share_them() {
    let send = |sandbox: &Sandbox, seed: &str| {
        sandbox
            .swarm()
            .args(["send", "bob", "hi", "--json"])
            .team("t")
            .env("SWARM_TEST_ID_SEED", seed)
            .run()
            .success()
            .json()["msg_id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let one = team();
    let other = team();
    // Same seed, same id, in two homes; a new seed, a new id.
    let id = send(&one, "42");
    assert_eq!(id, send(&other, "42"));
    assert_ne!(id, send(&other, "43"));

    // The harness's own seeds: every invocation a new id, so none is deduplicated away.
    for _ in 0..3 {
        one.swarm()
            .args(["send", "bob", "again"])
            .team("t")
            .run()
            .success();
    }
    let inbox = one.inbox("t", "bob");
    let ids: BTreeSet<&str> = inbox
        .iter()
        .map(|m| m["msg_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), inbox.len());
    // Invocation 1 was `init`; each later one runs a second after the one before.
    let times: Vec<&str> = inbox
        .iter()
        .map(|m| m["timestamp"].as_str().unwrap())
        .collect();
    assert_eq!(
        times,
        [
            "2026-01-01T00:00:02.000Z",
            "2026-01-01T00:00:03.000Z",
            "2026-01-01T00:00:04.000Z",
            "2026-01-01T00:00:05.000Z"
        ]
    );

    one.swarm()
        .args(["status"])
        .team("t")
        .env("SWARM_TEST_NOW", "yesterday")
        .run()
        .code(101)
        .stderr_has("SWARM_TEST_NOW=yesterday is neither epoch milliseconds nor RFC 3339");
}

/// Every command's help shows the options every command takes under a heading of their own, after
/// the command's own; an environment variable is named, never shown as if set to nothing, whether
/// it is set or not.
#[test]
fn global_options_have_their_own_heading_and_env_names_no_value() {
    let sandbox = Sandbox::deterministic();
    let globals = ["--home", "--team", "--as", "--json", "--verbose", "--quiet"];
    let mut pending = vec![Vec::<String>::new()];
    while let Some(path) = pending.pop() {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        for team in [None, Some("demo")] {
            let mut run = sandbox
                .swarm()
                .args(&args)
                .arg("--help")
                .env("COLUMNS", "100");
            if let Some(team) = team {
                run = run.env("SWARM_TEAM", team);
            }
            let text = run.run().success().stdout;
            let command = format!("swarm {} --help (SWARM_TEAM={team:?})", path.join(" "));
            assert!(
                !text.contains("=]"),
                "{command} shows an environment variable as set to nothing:\n{text}"
            );
            assert!(
                !text.contains("SWARM_TEAM=demo"),
                "{command} shows the value of SWARM_TEAM:\n{text}"
            );
            let section = |heading: &str| -> Vec<String> {
                text.lines()
                    .skip_while(|line| *line != heading)
                    .skip(1)
                    .take_while(|line| line.is_empty() || line.starts_with(' '))
                    .filter(|line| line.trim_start().starts_with('-'))
                    .map(str::to_owned)
                    .collect()
            };
            let own = section("Options:");
            let global = section("Global options:");
            for flag in globals {
                let named = |lines: &[String]| {
                    lines.iter().any(|line| {
                        line.split([',', ' '])
                            .any(|word| word.trim_end_matches('.') == flag)
                    })
                };
                assert!(
                    !named(&own),
                    "{command} lists {flag} among its own options:\n{text}"
                );
                assert!(
                    named(&global),
                    "{command} lacks {flag} under Global options:\n{text}"
                );
            }
            let own_at = text.find("\nOptions:");
            let global_at = text.find("\nGlobal options:");
            assert!(
                own_at.is_none() || own_at < global_at,
                "{command} shows its own options after the global ones:\n{text}"
            );
        }
        let text = help(&sandbox, &args, "--help");
        for sub in subcommands(&text) {
            let mut child = path.clone();
            child.push(sub);
            pending.push(child);
        }
    }
}
