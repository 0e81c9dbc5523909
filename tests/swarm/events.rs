//! `swarm events` (docs/ARCHITECTURE.md, "Activity and events"): each change of a member's process
//! state is one line, the team's end one more; `--follow` shows what is written after it started,
//! once.

use std::fs::OpenOptions;
use std::io::Write;

use crate::harness::{Sandbox, Team, eventually, state, watches};

/// An event line with its time taken out, for whole-line comparisons.
fn timeless(line: &str) -> String {
    let at = line.find("\"at\":\"").expect("an event has a time") + 6;
    let end = at + line[at..].find('"').unwrap();
    format!("{}…{}", &line[..at], &line[end..])
}

const TEAM: &str = r#"name = "ev"
[[member]]
name = "bob"
command = ["sh", "-c", "exit 3"]
[[member]]
name = "carol"
command = ["sleep", "1000"]
"#;

#[test]
fn each_process_change_is_one_event_and_follow_shows_each_new_one_once() {
    let sandbox = Sandbox::new();
    let _team = Team::up(&sandbox, TEAM);
    eventually("bob to fail and carol to run", || {
        state(&sandbox, "ev", "bob") == "failed" && state(&sandbox, "ev", "carol") == "running"
    });
    let listed = sandbox
        .swarm()
        .args(["events", "ev", "--json"])
        .run()
        .success()
        .stdout;
    // The members' activities are lines of the stream too (tests/swarm/activity.rs has them);
    // here, the process changes.
    let mut lines: Vec<String> = listed
        .lines()
        .filter(|line| !line.contains(r#""kind":"activity""#))
        .map(timeless)
        .collect();
    // The two members start side by side: each one's own lines are in order.
    lines.sort_by_key(|line| line.contains("carol"));
    assert_eq!(
        lines,
        [
            r#"{"at":"…","member":"bob","kind":"process","state":"starting"}"#,
            r#"{"at":"…","member":"bob","kind":"process","state":"running","from":"starting"}"#,
            r#"{"at":"…","member":"bob","kind":"process","state":"failed","from":"running"}"#,
            r#"{"at":"…","member":"carol","kind":"process","state":"starting"}"#,
            r#"{"at":"…","member":"carol","kind":"process","state":"running","from":"starting"}"#,
        ]
    );

    let follow = sandbox.swarm().args(["events", "ev", "--follow"]).spawn();
    let folder = sandbox.team_dir("ev");
    eventually("events --follow to watch the team", || {
        watches(follow.pid(), &folder)
    });
    sandbox
        .swarm()
        .args(["stop", "carol"])
        .team("ev")
        .run()
        .success();
    // What was written before, activities among it, comes first; then the stop.
    let shown_before: Vec<String> = (0..20)
        .map(|_| follow.next_line())
        .take_while(|line| !line.ends_with(" carol killed ← running"))
        .collect();
    assert!(shown_before.len() < 20, "no kill among {shown_before:?}");
    let done = follow.next_line();
    assert!(done.ends_with(" team done"), "{done}");
    assert_eq!(done.len(), "08:00:00 team done".len(), "{done}");
    // A line written by hand, in the documented format, comes next: nothing was shown twice.
    let mut stream = OpenOptions::new()
        .append(true)
        .open(folder.join("events.jsonl"))
        .unwrap();
    stream
        .write_all(b"{\"at\":\"2026-11-26T08:01:02.000Z\",\"member\":\"bob\",\"kind\":\"activity\",\"state\":\"needs-you\",\"from\":\"working\",\"why\":\"permission (Bash)\"}\n")
        .unwrap();
    assert_eq!(
        follow.next_line(),
        "08:01:02 bob needs-you (permission (Bash)) ← working"
    );

    // --since leaves out what is older: a line of 2020, written by hand, and nothing else.
    stream
        .write_all(b"{\"at\":\"2020-01-01T00:00:00.000Z\",\"kind\":\"team-done\"}\n")
        .unwrap();
    let all = sandbox
        .swarm()
        .args(["events", "ev"])
        .run()
        .success()
        .stdout;
    assert!(all.ends_with("\n00:00:00 team done\n"), "{all}");
    let recent = sandbox
        .swarm()
        .args(["events", "ev", "--since", "100000d"])
        .run()
        .success()
        .stdout;
    assert_eq!(recent, all);
    let recent = sandbox
        .swarm()
        .args(["events", "ev", "--since", "2000d"])
        .run()
        .success()
        .stdout;
    assert_eq!(format!("{recent}00:00:00 team done\n"), all);
}
