//! Activity states (docs/ARCHITECTURE.md, "Activity and events"): each signal driven by a real
//! program in a real pane (a fake Claude Code that runs the hooks its generated `--settings`
//! names, `bash`, `python3 -i`, a prompt a pattern knows, a permission ask), read back through
//! `status --json`, `wait --idle`, `top` and the event stream. Every wait is on what the files
//! show, with `PATIENCE`.

use serde_json::Value;

use crate::harness::{LEAD, Sandbox, Team, bin, down, eventually};
use crate::top::{open_top, shows};

/// A member's activity as `status --json` shows it.
fn activity(sandbox: &Sandbox, team: &str, name: &str) -> String {
    sandbox.status_row(team, name)["activity"]
        .as_str()
        .unwrap_or("-")
        .to_owned()
}

fn becomes(sandbox: &Sandbox, team: &str, name: &str, state: &str) {
    let mut last = String::new();
    let seen = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        eventually(&format!("{name} to be {state}"), || {
            last = activity(sandbox, team, name);
            last == state
        });
    }));
    assert!(seen.is_ok(), "{name} never became {state}; it is {last}");
}

/// The activity changes of `name` in the team's event stream, in order: `(state, why)`.
fn changes(sandbox: &Sandbox, team: &str, name: &str) -> Vec<(String, String)> {
    let text =
        std::fs::read_to_string(sandbox.team_dir(team).join("events.jsonl")).unwrap_or_default();
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["kind"] == "activity" && event["member"] == name)
        .map(|event| {
            (
                event["state"].as_str().unwrap_or_default().to_owned(),
                event["why"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// `swarm send` (a paste) or `swarm type` of `text` to member `name` of `team`.
fn typed(sandbox: &Sandbox, team: &str, how: &str, name: &str, text: &str) {
    sandbox
        .swarm()
        .args([how, name, "--team", team, text])
        .run()
        .success();
}

fn states(changes: &[(String, String)]) -> Vec<&str> {
    changes.iter().map(|(state, _)| state.as_str()).collect()
}

/// A stand-in for Claude Code: it finds the hooks in the `--settings` it was launched with and,
/// for each line typed into its pane (a hook's input, as Claude Code gives it), runs the command
/// the settings name for that event with the line on its stdin, as Claude Code does.
const FAKE_CLAUDE: &str = r#"
import json, subprocess, sys
args = sys.argv[1:]
settings = json.loads(args[args.index("--settings") + 1])
print("fake claude ready", flush=True)
for line in sys.stdin:
    event = json.loads(line)
    for entry in settings["hooks"].get(event["hook_event_name"], []):
        for hook in entry["hooks"]:
            subprocess.run(hook["command"], shell=True, input=line.encode(), check=True)
    print("ran", event["hook_event_name"], flush=True)
"#;

fn hook_input(event: &str, extra: &str) -> String {
    format!(
        r#"{{"session_id":"s-1","transcript_path":"/tmp/t.jsonl","cwd":"/tmp","hook_event_name":"{event}"{extra}}}"#
    )
}

#[test]
fn claude_codes_hooks_drive_its_activity_through_the_settings_swarm_gives_it() {
    let sandbox = Sandbox::new();
    let fake = sandbox.write("fake_claude.py", FAKE_CLAUDE);
    let team = Team::up(
        &sandbox,
        &format!(
            "name = \"hk\"\n{LEAD}[[member]]\nname = \"cc\"\nprofile = \"claude\"\n\
             command = [\"python3\", \"-u\", \"{}\"]\n",
            fake.display()
        ),
    );
    let argv = sandbox.member("hk", "cc")["argv"].clone();
    assert!(
        argv.to_string().contains("swarm hook claude"),
        "the claude profile wires the activity hooks: {argv}"
    );
    eventually("the fake to start", || {
        sandbox
            .swarm()
            .args(["log", "cc", "--team", "hk"])
            .run()
            .stdout_line()
            .contains("fake claude ready")
    });
    let step = |input: String, state: &str| {
        sandbox
            .swarm()
            .args(["type", "cc", "--team", "hk", &input])
            .run()
            .success();
        becomes(&sandbox, "hk", "cc", state);
    };
    step(
        hook_input("UserPromptSubmit", r#","prompt":"go""#),
        "working",
    );
    let tool = r#","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_1""#;
    step(hook_input("PreToolUse", tool), "working");
    let asks = r#","message":"Claude needs your permission to use Bash","notification_type":"permission_prompt""#;
    step(hook_input("Notification", asks), "needs-you");
    assert_eq!(
        sandbox.status_row("hk", "cc")["activityWhy"],
        "Claude needs your permission to use Bash"
    );
    step(hook_input("PostToolUse", tool), "working");
    step(
        hook_input(
            "Stop",
            r#","stop_hook_active":false,"last_assistant_message":"done""#,
        ),
        "idle",
    );
    sandbox
        .swarm()
        .args(["wait", "cc", "--idle", "--team", "hk", "--timeout", "30"])
        .run()
        .success()
        .stdout_has("cc is idle (turn ended)");
    // One event a change: the second `working` (PreToolUse after UserPromptSubmit) is none.
    let seen = changes(&sandbox, "hk", "cc");
    assert_eq!(
        states(&seen),
        ["starting", "working", "needs-you", "working", "idle"],
        "{seen:?}"
    );
    down(&sandbox, team.name());
    assert_eq!(
        sandbox.status_row("hk", "cc")["activity"],
        Value::Null,
        "an ended member has no activity"
    );
}

#[test]
fn swarm_hook_claude_outside_a_pane_or_without_a_hooks_input_is_refused() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    sandbox
        .swarm()
        .args(["hook", "claude"])
        .stdin(hook_input("Stop", ""))
        .run()
        .refused(
            1,
            "swarm hook claude records the activity of the member whose pane it runs in",
        );
    sandbox
        .swarm()
        .args(["hook", "claude"])
        .stdin("{\"prompt\":\"x\"}")
        .run()
        .refused(1, "the hook's input has no hook_event_name");
    sandbox
        .swarm()
        .args(["hook", "claude"])
        .stdin("not json")
        .run()
        .refused(1, "the hook's input is not JSON");
}

#[test]
fn bash_and_python_panes_are_idle_at_their_prompt_and_working_while_a_command_runs() {
    let sandbox = Sandbox::new();
    let team = Team::up(
        &sandbox,
        &format!(
            "name = \"sc\"\n{LEAD}\
             [[member]]\nname = \"sh\"\ncommand = [\"bash\", \"--norc\", \"--noprofile\", \"-i\"]\npaste_format = \"raw\"\n\
             [[member]]\nname = \"py\"\ncommand = [\"python3\", \"-i\"]\npaste_format = \"raw\"\n\
             [[member]]\nname = \"yn\"\ncommand = [\"bash\", \"-c\", \"read -p 'remove it all? [y/N] ' a; echo got $a; exec sleep 1000\"]\n\
             needs_you_pattern = \"\\\\[y/N\\\\]\"\n"
        ),
    );
    becomes(&sandbox, "sc", "sh", "idle");
    becomes(&sandbox, "sc", "py", "idle");
    becomes(&sandbox, "sc", "yn", "needs-you");
    assert_eq!(
        sandbox.status_row("sc", "yn")["activityWhy"],
        "screen: remove it all? [y/N]"
    );
    // A command that prints nothing for a while is working, not idle: no prompt shows.
    typed(&sandbox, "sc", "send", "sh", "sleep 4; echo slept");
    becomes(&sandbox, "sc", "sh", "working");
    let waited = sandbox
        .swarm()
        .args(["wait", "sh", "--idle", "--team", "sc", "--timeout", "60"])
        .run()
        .success();
    assert!(waited.stdout_line().starts_with("sh is idle (prompt: "));
    assert!(
        sandbox
            .swarm()
            .args(["log", "sh", "--team", "sc"])
            .run()
            .stdout_line()
            .contains("slept"),
        "idle only once the command was done"
    );
    typed(&sandbox, "sc", "send", "py", "print(6*7)");
    becomes(&sandbox, "sc", "py", "working");
    becomes(&sandbox, "sc", "py", "idle");
    typed(&sandbox, "sc", "type", "yn", "y");
    becomes(&sandbox, "sc", "yn", "working");
    // Every member idle but the lead, which runs sleep and shows no prompt: wait --all --idle
    // runs out of time naming it.
    sandbox
        .swarm()
        .args(["wait", "--all", "--idle", "--team", "sc", "--timeout", "3"])
        .run()
        .refused(4, "not idle after 3s: team-lead (working)");
    // One event a change, never a repeat: python's last three are its prompt, the paste, the
    // prompt again.
    let py = changes(&sandbox, "sc", "py");
    let py = states(&py);
    assert!(py.windows(2).all(|pair| pair[0] != pair[1]), "{py:?}");
    assert_eq!(py[0], "starting");
    assert_eq!(py[py.len() - 3..], ["idle", "working", "idle"], "{py:?}");
    down(&sandbox, team.name());
    sandbox
        .swarm()
        .args(["wait", "sh", "--idle", "--team", "sc", "--timeout", "5"])
        .run()
        .refused(1, "sh ended (killed) before it was idle");
}

/// The team file's patterns are the team's: a member `spawn` adds later is watched by them too,
/// unless it names its own.
#[test]
fn a_spawned_member_is_watched_by_the_team_files_patterns() {
    let sandbox = Sandbox::new();
    let team = Team::up(
        &sandbox,
        &format!("name = \"sp\"\nneeds_you_pattern = \"\\\\[y/N\\\\]\"\n{LEAD}"),
    );
    let asks = "read -p 'remove it all? [y/N] ' a; exec sleep 1000";
    sandbox
        .swarm()
        .args(["spawn", "yn", "--team", "sp", "--", "bash", "-c", asks])
        .run()
        .success();
    becomes(&sandbox, "sp", "yn", "needs-you");
    assert_eq!(
        sandbox.status_row("sp", "yn")["activityWhy"],
        "screen: remove it all? [y/N]"
    );
    down(&sandbox, team.name());
}

#[test]
fn a_quiet_member_that_holds_a_task_is_stalled_until_it_prints_again() {
    let sandbox = Sandbox::new();
    let team = Team::up(
        &sandbox,
        &format!(
            "name = \"st\"\nstall_after = 2\n{LEAD}\
             [[member]]\nname = \"sh\"\ncommand = [\"bash\", \"--norc\", \"--noprofile\", \"-i\"]\npaste_format = \"raw\"\n\
             [[member]]\nname = \"free\"\ncommand = [\"bash\", \"--norc\", \"--noprofile\", \"-i\"]\n\
             stall_after = \"1s\"\n"
        ),
    );
    becomes(&sandbox, "st", "sh", "idle");
    sandbox
        .swarm()
        .args(["task", "add", "build it", "--owner", "sh", "--team", "st"])
        .run()
        .success();
    becomes(&sandbox, "st", "sh", "stalled");
    assert_eq!(
        sandbox.status_row("st", "sh")["activityWhy"],
        "quiet 2s and holds a task"
    );
    typed(&sandbox, "st", "send", "sh", "echo back");
    becomes(&sandbox, "st", "sh", "working");
    // Quiet and holding nothing is idle, however long.
    becomes(&sandbox, "st", "free", "idle");
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert_eq!(activity(&sandbox, "st", "free"), "idle");
    down(&sandbox, team.name());
}

#[test]
fn a_permission_ask_makes_its_member_need_you_until_it_is_answered_and_top_puts_it_first() {
    let sandbox = Sandbox::new();
    let team = Team::up(
        &sandbox,
        &format!(
            "name = \"pa\"\n{LEAD}\
             [[member]]\nname = \"alpha\"\ncommand = [\"bash\", \"--norc\", \"--noprofile\", \"-i\"]\n\
             [[member]]\nname = \"zed\"\ncommand = [\"bash\", \"-c\", \"{} permission ask Bash --input '{{\\\"command\\\":\\\"rm -rf build\\\"}}'; echo asked-$?; exec sleep 1000\"]\n",
            bin()
        ),
    );
    becomes(&sandbox, "pa", "zed", "needs-you");
    assert_eq!(
        sandbox.status_row("pa", "zed")["activityWhy"],
        "permission (Bash)"
    );
    becomes(&sandbox, "pa", "alpha", "idle");
    // top: zed, last in the file, is first in the table, with why; the header counts it.
    open_top(team.server(), "watch", "pa", 120, 40);
    shows(
        team.server(),
        "watch",
        "zed first",
        "» zed needs you: permission (Bash)",
    );
    let screen = crate::top::screen(team.server(), "watch");
    let zed = screen.find("zed       bash");
    let lead = screen.find("team-lead sleep");
    assert!(
        zed.is_some() && lead.is_some() && zed < lead,
        "zed needs you and comes before the lead, first in the file:\n{screen}"
    );
    assert!(screen.contains("1 needs-you"), "{screen}");
    let id = sandbox
        .swarm()
        .args(["permission", "list", "--team", "pa", "--json"])
        .run()
        .success()
        .json()[0]["requestId"]
        .as_str()
        .unwrap()
        .to_owned();
    sandbox
        .swarm()
        .args(["permission", "allow", &id, "--team", "pa"])
        .run()
        .success();
    becomes(&sandbox, "pa", "zed", "working");
    let seen = changes(&sandbox, "pa", "zed");
    assert_eq!(
        seen.iter()
            .filter(|(state, _)| state == "needs-you")
            .count(),
        1,
        "one needs-you while the ask waited: {seen:?}"
    );
    assert!(
        seen.contains(&("working".to_owned(), "answered".to_owned())),
        "{seen:?}"
    );
    down(&sandbox, team.name());
}

#[test]
fn a_pattern_that_is_not_a_regex_is_refused_at_up() {
    let sandbox = Sandbox::new();
    let (_team, outcome) = Team::try_up(
        &sandbox,
        &format!(
            "name = \"bad\"\n{LEAD}[[member]]\nname = \"sh\"\ncommand = [\"bash\"]\nidle_pattern = \"([\"\n"
        ),
    );
    outcome.refused(2, "idle_pattern of sh is not a regex");
    let (_team, outcome) = Team::try_up(
        &sandbox,
        &format!("name = \"bad2\"\nstall_after = \"soon\"\n{LEAD}"),
    );
    outcome.refused(2, "stall_after of the team is \"soon\"");
}

#[test]
fn claude_codes_idle_notification_to_the_lead_makes_a_busy_member_idle() {
    let sandbox = Sandbox::new();
    let team = Team::up(
        &sandbox,
        &format!(
            "name = \"in\"\n{LEAD}[[member]]\nname = \"quiet\"\n\
             command = [\"sh\", \"-c\", \"echo started; exec sleep 1000\"]\n"
        ),
    );
    becomes(&sandbox, "in", "quiet", "working");
    // Sent a moment after it became working, as Claude Code writes it at its turn's end.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let date = std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%dT%H:%M:%S.000Z"])
        .output()
        .unwrap();
    let later = String::from_utf8(date.stdout).unwrap().trim().to_owned();
    let idle = serde_json::json!({
        "type": "idle_notification", "from": "quiet", "timestamp": later, "idleReason": "available",
    });
    sandbox.append_inbox_as_claude(
        "in",
        "team-lead",
        &[serde_json::json!({
            "from": "quiet", "text": idle.to_string(), "timestamp": later, "read": false,
        })],
    );
    becomes(&sandbox, "in", "quiet", "idle");
    assert_eq!(
        sandbox.status_row("in", "quiet")["activityWhy"],
        "idle_notification (available)"
    );
    down(&sandbox, team.name());
}
