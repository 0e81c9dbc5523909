//! The codex, gemini and aider profiles (docs/ARCHITECTURE.md, "Launching", "Activity and
//! events", "Resuming a team"), each driven by a stand-in for the real program that records its
//! argv and calls what swarm wired in exactly as the real one does (Codex 0.169.0's `notify`,
//! Gemini CLI 0.61.0's hooks through its system settings file), with the payloads the real ones
//! gave; and a resume of each in its own conversation.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::harness::{LEAD, Sandbox, Team, eventually};

/// A stand-in for Codex 0.169.0's TUI. It records its argv, takes the program `-c notify=[…]`
/// names, and for each line typed into its pane (the person's prompt) ends a turn as Codex does:
/// the session's rollout is written at its first turn (`$CODEX_HOME/sessions/Y/M/D/rollout-…-<id>.jsonl`;
/// `codex resume <id>` appends to it), and the notify program is spawned, not waited for, with
/// stdin, stdout and stderr null, the turn's JSON as its last argument; the screen is drawn on
/// after that. Then Codex tells notify of the side thread that named the conversation, which has
/// no rollout (its payload as Codex 0.169.0 gave it, seen by hand). The line `title` ends only
/// that side thread's turn, and waits for its notify program.
const FAKE_CODEX: &str = r#"#!/usr/bin/env python3
import json, os, subprocess, sys, time, uuid
args = sys.argv[1:]
with open(os.path.join(os.environ["FAKE_RECORD"], os.environ["SWARM_AGENT"] + ".argv"), "a") as f:
    f.write(json.dumps(args) + "\n")
overrides = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-c", "--config")]
notify = [json.loads(v.split("=", 1)[1]) for v in overrides if v.split("=", 1)[0] == "notify"][0]
thread = args[args.index("resume") + 1] if "resume" in args else str(uuid.uuid4())
day = os.path.join(os.environ["CODEX_HOME"], "sessions", "2026", "11", "26")
TITLE = ("Generate a concise, single-line task title of at most 36 characters and under five "
         "words where possible. Start with an imperative verb. Capitalize only the first word "
         "unless the user's language, proper nouns, acronyms, or code terms require otherwise. "
         "Preserve ticket references exactly. Write in the user's language. Do not use quotes, "
         "markdown, or trailing punctuation. Do not answer the request.\n\nUser prompt:\n")
def tell(thread_id, inputs, last):
    turn = {"type": "agent-turn-complete", "thread-id": thread_id, "turn-id": str(uuid.uuid4()),
            "cwd": os.getcwd(), "client": "codex-tui", "input-messages": inputs,
            "last-assistant-message": last}
    return subprocess.Popen(notify + [json.dumps(turn)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("fake codex ready", flush=True)
for line in sys.stdin:
    prompt = line.strip()
    if prompt == "title":
        tell(str(uuid.uuid4()), [TITLE + "run it"], '{"title": "Fake task title"}').wait()
        print("told title", flush=True)
        continue
    os.makedirs(day, exist_ok=True)
    with open(os.path.join(day, f"rollout-2026-11-26T10-00-00-{thread}.jsonl"), "a") as f:
        f.write(json.dumps({"type": "session_meta", "payload": {"id": thread}}) + "\n")
    tell(thread, [prompt], "ran the command")
    # Then the side thread that named the conversation ends too (after the turn, in 0.169.0).
    tell(str(uuid.uuid4()), [TITLE + prompt], '{"title": "Fake task title"}')
    # The TUI draws on as the turn ends: its last output follows the notify.
    time.sleep(0.05)
    print("\u2500 Worked for 1s \u2500", flush=True)
"#;

/// A stand-in for Gemini CLI 0.61.0. It records its argv, reads the system settings file
/// `GEMINI_CLI_SYSTEM_SETTINGS_PATH` names (as Gemini CLI does, only when the file and its
/// folders are root's and closed to others) and the user's, `$GEMINI_CLI_HOME/.gemini/settings.json`
/// (whoever owns it), and runs every layer's hooks, as Gemini CLI does;
/// runs `SessionStart` at its start, and for each line typed into its pane runs the hooks of a
/// turn with their JSON on stdin: `BeforeAgent`, then `AfterAgent`; for the line `ask`,
/// `BeforeAgent`, `BeforeTool` and the `Notification` of an approval dialog, and it waits there.
/// A hook's exit 2 blocks, as in Gemini CLI. A prompt is written to the session's file,
/// `$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/session-<time>-<first 8 of the id>.jsonl`.
const FAKE_GEMINI: &str = r#"#!/usr/bin/env python3
import json, os, subprocess, sys
args = sys.argv[1:]
with open(os.path.join(os.environ["FAKE_RECORD"], os.environ["SWARM_AGENT"] + ".argv"), "a") as f:
    f.write(json.dumps(args) + "\n")
def secure(path):
    # Gemini CLI reads a system settings file only when it and every folder above it are root's
    # and closed to group and others (isFileAndDirectorySecureSync).
    while True:
        st = os.stat(path)
        if st.st_uid != 0 or st.st_mode & 0o022:
            return False
        if path == "/":
            return True
        path = os.path.dirname(path)
layers = []
system = os.environ.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
if system and os.path.exists(system):
    if secure(system):
        with open(system) as f:
            layers.append(json.load(f))
    else:
        print(f"Security Warning: Skipping system settings file '{system}'", flush=True)
# The user's settings, read whoever owns them: `$GEMINI_CLI_HOME/.gemini/settings.json`.
user = os.path.join(os.environ["GEMINI_CLI_HOME"], ".gemini", "settings.json")
if os.path.exists(user):
    with open(user) as f:
        layers.append(json.load(f))
settings = {"hooks": {}}
for layer in layers:
    for event, entries in layer.get("hooks", {}).items():
        settings["hooks"].setdefault(event, []).extend(entries)
resumed = "--resume" in args
session = args[args.index("--resume" if resumed else "--session-id") + 1]
chats = os.path.join(os.environ["GEMINI_CLI_HOME"], ".gemini", "tmp", "proj", "chats")
chat = os.path.join(chats, f"session-2026-11-26T10-00-{session[:8]}.jsonl")
def hook(event, **fields):
    payload = dict(session_id=session, transcript_path=chat, cwd=os.getcwd(),
                   hook_event_name=event, timestamp="2026-11-26T10:00:00.000Z", **fields)
    for entry in settings.get("hooks", {}).get(event, []):
        for h in entry["hooks"]:
            ran = subprocess.run(h["command"], shell=True, input=json.dumps(payload).encode(),
                                 timeout=h.get("timeout", 60000) / 1000)
            if ran.returncode == 2:
                print("blocked by", h["command"], flush=True)
hook("SessionStart", source="resume" if resumed else "startup")
print("fake gemini ready", flush=True)
for line in sys.stdin:
    prompt = line.strip()
    os.makedirs(chats, exist_ok=True)
    with open(chat, "a") as f:
        if f.tell() == 0:
            f.write(json.dumps({"sessionId": session, "kind": "main"}) + "\n")
        f.write(json.dumps({"id": "u1", "type": "user", "content": [{"text": prompt}]}) + "\n")
    hook("BeforeAgent", prompt=prompt)
    if prompt == "ask":
        shell = {"command": "echo approved > approved.txt", "description": "make file"}
        hook("BeforeTool", tool_name="run_shell_command", tool_input=shell)
        hook("Notification", notification_type="ToolPermission",
             message="Tool Confirm Shell Command requires execution",
             details={"type": "exec", "title": "Confirm Shell Command",
                      "command": shell["command"], "rootCommand": "echo, redirection (>)"})
        continue
    hook("AfterAgent", prompt=prompt, prompt_response="gemini all done", stop_hook_active=False)
"#;

/// A program that records its argv and waits: aider, or any program.
const RECORDER: &str = r#"#!/usr/bin/env python3
import json, os, sys, time
with open(os.path.join(os.environ["FAKE_RECORD"], os.environ["SWARM_AGENT"] + ".argv"), "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\n")
time.sleep(1000)
"#;

/// A sandbox with the stand-ins on PATH, each program's own folder in it, and where they record.
fn sandbox_with_fakes() -> Sandbox {
    let mut sandbox = Sandbox::new();
    sandbox.shim("codex", FAKE_CODEX);
    sandbox.shim("gemini", FAKE_GEMINI);
    sandbox.shim("aider", RECORDER);
    sandbox.shim("mytool", RECORDER);
    for (var, dir) in [
        ("FAKE_RECORD", "record"),
        ("CODEX_HOME", "codex-home"),
        ("GEMINI_CLI_HOME", "gemini-home"),
    ] {
        let dir = sandbox.root().join(dir);
        fs::create_dir_all(&dir).unwrap();
        sandbox.set_env(var, &dir);
    }
    // A person who has used Gemini CLI: its sessions go to their folder, through the teammate's
    // own Gemini CLI home.
    fs::create_dir_all(sandbox.root().join("gemini-home/.gemini/tmp")).unwrap();
    sandbox
}

/// Each argv `name`'s program was started with, in order.
fn launches(sandbox: &Sandbox, name: &str) -> Vec<Vec<String>> {
    fs::read_to_string(sandbox.root().join(format!("record/{name}.argv")))
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn activity(sandbox: &Sandbox, team: &str, name: &str) -> (String, String) {
    let row = sandbox.status_row(team, name);
    let text = |key: &str| row[key].as_str().unwrap_or("-").to_owned();
    (text("activity"), text("activityWhy"))
}

fn becomes(sandbox: &Sandbox, team: &str, name: &str, state: &str, why: &str) {
    let mut last = (String::new(), String::new());
    let seen = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        eventually(&format!("{name} to be {state} ({why})"), || {
            last = activity(sandbox, team, name);
            last == (state.to_owned(), why.to_owned())
        });
    }));
    assert!(
        seen.is_ok(),
        "{name} never became {state} ({why}); it is {last:?}"
    );
}

fn type_line(sandbox: &Sandbox, team: &str, name: &str, line: &str) {
    sandbox
        .swarm()
        .args(["type", name, "--team", team, line])
        .run()
        .success();
}

fn log_shows(sandbox: &Sandbox, team: &str, name: &str, text: &str) {
    eventually(&format!("{name}'s pane to show {text:?}"), || {
        sandbox
            .swarm()
            .args(["log", name, "--team", team])
            .run()
            .stdout
            .contains(text)
    });
}

fn session_id(sandbox: &Sandbox, team: &str, name: &str) -> Option<String> {
    sandbox.member(team, name)["sessionId"]
        .as_str()
        .map(str::to_owned)
}

/// The activity changes of `name` in the team's event stream, in order.
fn states(sandbox: &Sandbox, team: &str, name: &str) -> Vec<String> {
    fs::read_to_string(sandbox.team_dir(team).join("events.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["kind"] == "activity" && event["member"] == name)
        .map(|event| event["state"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Waits until the events tell exactly `expected` of `name`'s activity: a change is written to
/// the activity file first and to the events a moment later, so a state seen may not be told yet.
#[track_caller]
fn states_become(sandbox: &Sandbox, team: &str, name: &str, expected: &[&str]) {
    let mut last = Vec::new();
    let told = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        eventually(&format!("the events to tell {name}'s {expected:?}"), || {
            last = states(sandbox, team, name);
            last == expected
        });
    }));
    assert!(
        told.is_ok(),
        "{name}'s events told {last:?}, not {expected:?}"
    );
}

#[test]
fn codex_tells_its_turns_end_and_session_through_notify_and_gemini_its_activity_through_hooks() {
    let sandbox = sandbox_with_fakes();
    let team = Team::up(
        &sandbox,
        &format!(
            "name = \"p\"\n{LEAD}[[member]]\nname = \"cx\"\nprofile = \"codex\"\n\
             [[member]]\nname = \"gm\"\ncommand = [\"gemini\", \"--approval-mode\", \"default\"]\n"
        ),
    );
    // Codex: its argv names swarm as its notify program, and nothing tells a session yet.
    eventually("codex to start", || launches(&sandbox, "cx").len() == 1);
    assert_eq!(
        launches(&sandbox, "cx")[0],
        strings(&["-c", r#"notify=["swarm","hook","codex"]"#])
    );
    log_shows(&sandbox, "p", "cx", "fake codex ready");
    assert_eq!(session_id(&sandbox, "p", "cx"), None);
    // The thread that names the conversation ends first: it is not the member's conversation.
    type_line(&sandbox, "p", "cx", "title");
    log_shows(&sandbox, "p", "cx", "told title");
    assert_eq!(session_id(&sandbox, "p", "cx"), None);
    assert!(
        !states(&sandbox, "p", "cx").contains(&"idle".to_owned()),
        "{:?}",
        states(&sandbox, "p", "cx")
    );
    type_line(&sandbox, "p", "cx", "run it");
    becomes(&sandbox, "p", "cx", "idle", "turn ended");
    let rollout = fs::read_dir(sandbox.root().join("codex-home/sessions/2026/11/26"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name()
        .into_string()
        .unwrap();
    let thread = session_id(&sandbox, "p", "cx").expect("the session of the turn is recorded");
    assert_eq!(
        rollout,
        format!("rollout-2026-11-26T10-00-00-{thread}.jsonl")
    );
    sandbox
        .swarm()
        .args(["info", "cx", "--team", "p"])
        .run()
        .success()
        .stdout_has(&format!("session id      {thread}"));

    // Gemini CLI: its own session id, and the hooks in the settings file swarm wrote.
    eventually("gemini to start", || launches(&sandbox, "gm").len() == 1);
    let session = session_id(&sandbox, "p", "gm").expect("gemini's session is chosen at launch");
    assert_eq!(
        launches(&sandbox, "gm")[0],
        strings(&["--approval-mode", "default", "--session-id", &session])
    );
    assert_eq!(sandbox.member("p", "gm")["activityHooks"], true);
    let settings: Value = serde_json::from_slice(
        &fs::read(
            sandbox
                .team_dir("p")
                .join("gemini-home/.gemini/settings.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(
        settings["hooks"]["AfterAgent"][0]["hooks"][0]["command"],
        "swarm hook gemini"
    );
    becomes(&sandbox, "p", "gm", "idle", "session started");
    type_line(&sandbox, "p", "gm", "ask");
    becomes(
        &sandbox,
        "p",
        "gm",
        "needs-you",
        "Tool Confirm Shell Command requires execution",
    );
    type_line(&sandbox, "p", "gm", "go on");
    becomes(&sandbox, "p", "gm", "idle", "turn ended");
    states_become(
        &sandbox,
        "p",
        "gm",
        &[
            "starting",
            "idle",
            "working",
            "needs-you",
            "working",
            "idle",
        ],
    );
    let log = sandbox
        .swarm()
        .args(["log", "gm", "--team", "p"])
        .run()
        .stdout;
    assert!(!log.contains("blocked by"), "a hook blocked gemini: {log}");
    assert!(!log.contains("Skipping system settings"), "{log}");
    // What Codex drew as its turn ended was that turn's: it stayed idle.
    let codex = states(&sandbox, "p", "cx");
    assert_eq!(codex.last().map(String::as_str), Some("idle"), "{codex:?}");
    drop(team);
}

#[test]
fn swarm_hook_codex_and_gemini_refuse_with_exit_1_outside_a_pane_or_without_their_input() {
    let sandbox = Sandbox::new();
    let turn = r#"{"type":"agent-turn-complete","thread-id":"t","turn-id":"u","cwd":"/tmp","client":"codex-tui","input-messages":["x"],"last-assistant-message":"y"}"#;
    sandbox.swarm().args(["hook", "codex", turn]).run().refused(
        1,
        "swarm hook codex records the activity of the member whose pane it runs in",
    );
    sandbox
        .swarm()
        .args(["hook", "codex"])
        .run()
        .refused(1, "as its last argument; none was given");
    sandbox
        .swarm()
        .args(["hook", "codex", "{\"thread-id\":\"t\"}"])
        .run()
        .refused(1, "the hook's input has no type");
    sandbox
        .swarm()
        .args(["hook", "gemini"])
        .stdin("{\"prompt\":\"x\"}")
        .run()
        .refused(1, "the hook's input has no hook_event_name");
    sandbox
        .swarm()
        .args(["hook", "gemini", "{}"])
        .run()
        .refused(1, "reads the hook's input on stdin, not as an argument");
}

#[test]
fn up_dry_run_shows_what_each_profile_adds() {
    let sandbox = Sandbox::new();
    let file = sandbox.write(
        "d.toml",
        "name = \"d\"\n[[member]]\nname = \"cx\"\nprofile = \"codex\"\n\
         [[member]]\nname = \"gm\"\nprofile = \"gemini\"\n\
         [[member]]\nname = \"ad\"\nprofile = \"aider\"\n\
         [[member]]\nname = \"gn\"\ncommand = [\"mytool\", \"--session\", \"{session_id}\"]\n\
         resume_command = [\"mytool\", \"--resume\", \"{session_id}\"]\n",
    );
    let planned = sandbox
        .swarm()
        .args(["up", "--dry-run", "--json"])
        .arg(&file)
        .run()
        .success()
        .json();
    let pane = |name: &str| {
        planned["panes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|pane| pane["name"] == name)
            .unwrap()
            .clone()
    };
    let argv =
        |name: &str| -> Vec<String> { serde_json::from_value(pane(name)["argv"].clone()).unwrap() };
    assert_eq!(
        argv("cx"),
        strings(&["codex", "-c", r#"notify=["swarm","hook","codex"]"#])
    );
    assert_eq!(argv("gm")[..2], strings(&["gemini", "--session-id"]));
    let gemini_home = pane("gm")["env"]["GEMINI_CLI_HOME"].clone();
    assert!(
        Path::new(gemini_home.as_str().unwrap()).ends_with("teams/d/gemini-home"),
        "{gemini_home}"
    );
    let aider = argv("ad");
    assert_eq!(aider[1], "--chat-history-file");
    assert!(aider[2].ends_with("teams/d/aider/ad.chat.md"), "{aider:?}");
    assert_eq!(aider[3], "--input-history-file");
    let generic = argv("gn");
    assert_eq!(generic[..2], strings(&["mytool", "--session"]));
    assert_ne!(generic[2], "{session_id}", "the placeholder is replaced");
    // The text form says the same.
    sandbox
        .swarm()
        .args(["up", "--dry-run"])
        .arg(&file)
        .run()
        .success()
        .stdout_has(r#"notify=["swarm","hook","codex"]"#)
        .stdout_has("--session-id")
        .stdout_has("--chat-history-file");
}

/// A swarm home under `/tmp`, where Gemini CLI reads no system settings file (others may write
/// there), as when swarm does not run as root: a gemini teammate gets swarm's hooks through a
/// Gemini CLI home of its own (`GEMINI_CLI_HOME`), whose settings are the person's with the hooks
/// added and whose other files are the person's own, untouched.
#[test]
fn a_gemini_teammate_gets_its_hooks_through_a_gemini_home_of_its_own_wherever_swarm_runs() {
    let mut sandbox = Sandbox::new();
    sandbox.shim("gemini", FAKE_GEMINI);
    for (var, dir) in [
        ("FAKE_RECORD", "record"),
        ("GEMINI_CLI_HOME", "gemini-home"),
    ] {
        let dir = sandbox.root().join(dir);
        fs::create_dir_all(&dir).unwrap();
        sandbox.set_env(var, &dir);
    }
    // The person's own Gemini CLI folder: settings with a hook of theirs, and credentials.
    let theirs = sandbox.root().join("gemini-home/.gemini");
    fs::create_dir_all(&theirs).unwrap();
    let mine = sandbox.root().join("record/mine");
    let settings = serde_json::json!({
        "ui": {"theme": "Default"},
        "hooks": {"AfterAgent": [{"matcher": "*", "hooks": [
            {"type": "command", "command": format!("echo ran >> {}", mine.display())}
        ]}]}
    })
    .to_string();
    fs::write(theirs.join("settings.json"), &settings).unwrap();
    fs::write(theirs.join("oauth_creds.json"), "{}").unwrap();
    let team = Team::up(
        &sandbox,
        &format!("name = \"g\"\n{LEAD}[[member]]\nname = \"gm\"\nprofile = \"gemini\"\n"),
    );
    eventually("gemini to start", || launches(&sandbox, "gm").len() == 1);
    let member = sandbox.member("g", "gm");
    assert_eq!(member["activityHooks"], true, "{member}");
    becomes(&sandbox, "g", "gm", "idle", "session started");
    type_line(&sandbox, "g", "gm", "go on");
    becomes(&sandbox, "g", "gm", "idle", "turn ended");
    states_become(
        &sandbox,
        "g",
        "gm",
        &["starting", "idle", "working", "idle"],
    );
    // The person's own hook ran too, and their files are as they were, reached from the
    // teammate's Gemini CLI home.
    assert_eq!(fs::read_to_string(&mine).unwrap(), "ran\n");
    assert_eq!(
        fs::read_to_string(theirs.join("settings.json")).unwrap(),
        settings
    );
    let own = sandbox.team_dir("g").join("gemini-home/.gemini");
    assert_eq!(
        fs::read_link(own.join("oauth_creds.json")).unwrap(),
        theirs.join("oauth_creds.json")
    );
    let ours: Value =
        serde_json::from_slice(&fs::read(own.join("settings.json")).unwrap()).unwrap();
    assert_eq!(ours["ui"]["theme"], "Default");
    assert_eq!(
        ours["hooks"]["AfterAgent"][1]["hooks"][0]["command"],
        "swarm hook gemini"
    );
    let log = sandbox
        .swarm()
        .args(["log", "gm", "--team", "g"])
        .run()
        .stdout;
    assert!(!log.contains("blocked by"), "a hook blocked gemini: {log}");
    drop(team);
}

#[test]
fn codex_gemini_aider_and_a_resume_command_resume_each_in_its_own_conversation() {
    let sandbox = sandbox_with_fakes();
    let team = Team::up(
        &sandbox,
        r#"
name = "r"
[lead]
[[member]]
name = "cx"
profile = "codex"
[[member]]
name = "gm"
profile = "gemini"
[[member]]
name = "quiet"
profile = "gemini"
[[member]]
name = "ad"
profile = "aider"
[[member]]
name = "gn"
command = ["mytool", "--session", "{session_id}"]
resume_command = ["mytool", "--resume", "{session_id}"]
[[member]]
name = "plain"
command = ["mytool", "plain"]
"#,
    );
    for name in ["cx", "gm", "quiet", "ad", "gn", "plain"] {
        eventually(&format!("{name} to start"), || {
            launches(&sandbox, name).len() == 1
        });
    }
    log_shows(&sandbox, "r", "cx", "fake codex ready");
    type_line(&sandbox, "r", "cx", "run it");
    eventually("codex's session to be recorded", || {
        session_id(&sandbox, "r", "cx").is_some()
    });
    let codex_session = session_id(&sandbox, "r", "cx").unwrap();
    log_shows(&sandbox, "r", "gm", "fake gemini ready");
    type_line(&sandbox, "r", "gm", "do things");
    let chats = sandbox.root().join("gemini-home/.gemini/tmp/proj/chats");
    eventually("gemini's conversation to be written", || {
        fs::read_dir(&chats).is_ok_and(|mut files| files.next().is_some())
    });
    let gemini_session = session_id(&sandbox, "r", "gm").unwrap();
    // `quiet` never got a prompt: Gemini CLI kept no conversation to resume.
    let quiet_session = session_id(&sandbox, "r", "quiet").unwrap();
    let generic_session = session_id(&sandbox, "r", "gn").expect("its command names its session");
    assert_eq!(
        launches(&sandbox, "gn")[0],
        strings(&["--session", &generic_session])
    );

    team.server().kill();
    eventually("the team to be interrupted", || {
        sandbox
            .swarm()
            .args(["status", "r", "--json"])
            .run()
            .success()
            .json()["interrupted"]
            == true
    });
    let resumed = team.up_command().arg("--resume").run().success();
    for name in ["cx", "gm", "quiet", "ad", "gn", "plain"] {
        eventually(&format!("{name} to start again"), || {
            launches(&sandbox, name).len() == 2
        });
    }
    assert_eq!(
        launches(&sandbox, "cx")[1],
        strings(&[
            "-c",
            r#"notify=["swarm","hook","codex"]"#,
            "-c",
            r#"tui.resume_cwd="session""#,
            "resume",
            &codex_session,
        ])
    );
    assert_eq!(
        launches(&sandbox, "gm")[1],
        strings(&["--resume", &gemini_session])
    );
    let quiet = &launches(&sandbox, "quiet")[1];
    assert_eq!(quiet[0], "--session-id");
    assert_ne!(
        quiet[1], quiet_session,
        "a new session: the old id is taken"
    );
    assert_eq!(
        session_id(&sandbox, "r", "quiet").as_deref(),
        Some(quiet[1].as_str())
    );
    resumed.stderr_has(
        "quiet starts a new conversation: Gemini CLI kept no conversation of its session",
    );
    let aider = &launches(&sandbox, "ad")[1];
    assert_eq!(
        aider[..],
        [
            &launches(&sandbox, "ad")[0][..],
            &strings(&["--restore-chat-history"])
        ]
        .concat()
    );
    assert_eq!(
        launches(&sandbox, "gn")[1],
        strings(&["--resume", &generic_session])
    );
    // Without a resume_command a generic program starts afresh, as it was.
    assert_eq!(launches(&sandbox, "plain")[1], strings(&["plain"]));
    // The resumed gemini tells its activity again, through the same settings.
    becomes(&sandbox, "r", "gm", "idle", "session started");
    drop(team);
}
