//! Identity comes from where a command runs (docs/ARCHITECTURE.md, "Identity"): the attacks a
//! teammate could make with `--as` and `SWARM_AGENT` are run inside a real pane on a private tmux
//! server, by a member program that records each exit status.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;

use crate::harness::{Sandbox, TmuxServer, down, eventually, require};

/// A member program that waits for `$GO` (a shell file of variables, written by [`go`]), runs
/// `attacks` one per line as `label command…`, and records `label status` for each in `$RESULTS`,
/// then `done`.
pub(crate) fn attacker(sandbox: &Sandbox, attacks: &[(&str, &str)]) -> String {
    let mut script =
        String::from("set -u\nwhile [ ! -f \"$GO\" ]; do sleep 0.05; done\n. \"$GO\"\n");
    for (label, command) in attacks {
        let _ = writeln!(
            script,
            "{command} >>\"$RESULTS.out\" 2>&1; echo \"{label} $?\" >>\"$RESULTS\""
        );
    }
    script.push_str("echo done >>\"$RESULTS\"\nexec sleep 1000\n");
    sandbox.write("attack.sh", script).display().to_string()
}

fn results(sandbox: &Sandbox) -> BTreeMap<String, i32> {
    attack_results(sandbox, "results")
}

fn up(sandbox: &Sandbox, server: &TmuxServer, script: &str) {
    let work = sandbox.work();
    let toml = format!(
        r#"name = "id"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "carol"
command = ["sleep", "1000"]
[[member]]
name = "bob"
command = ["sh", "{script}"]
env = {{ GO = "{go}", RESULTS = "{results}" }}
"#,
        go = work.join("go").display(),
        results = work.join("results").display(),
    );
    let file = sandbox.write("id.toml", toml);
    sandbox
        .swarm()
        .arg("up")
        .arg(file)
        .arg("--socket")
        .arg(server.socket())
        .run()
        .success();
}

pub(crate) fn go(sandbox: &Sandbox, vars: &[(&str, &str)]) {
    let mut text = String::new();
    for (key, value) in vars {
        let _ = writeln!(text, "{key}='{value}'");
    }
    let staged = sandbox.work().join("go.tmp");
    fs::write(&staged, text).unwrap();
    fs::rename(staged, sandbox.work().join("go")).unwrap();
}

/// Inside bob's pane, `--as` naming anyone else is refused, `SWARM_AGENT` does not change who
/// runs a command, and leaving the pane's session changes nothing: bob cannot approve carol's plan
/// as the lead, approve carol's shutdown as carol, or take the team down as a stranger.
#[test]
fn a_teammate_cannot_act_as_anyone_else_from_its_pane() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::start(&sandbox);
    sandbox
        .swarm()
        .args(["init"])
        .arg(sandbox.write(
            "other.toml",
            "name = \"other\"\n[[member]]\nname = \"x\"\ncommand = [\"true\"]\n",
        ))
        .run()
        .success();
    let script = attacker(
        &sandbox,
        &[
            (
                "as-lead-plan",
                "swarm --team id --as team-lead plan approve \"$PLAN\" --permission-mode bypassPermissions",
            ),
            (
                "env-lead-plan",
                "SWARM_AGENT=team-lead swarm --team id plan approve \"$PLAN\" --permission-mode bypassPermissions",
            ),
            (
                "setsid-lead-plan",
                "setsid sh -c 'swarm --team id --as team-lead plan approve \"$1\" --permission-mode bypassPermissions' sh \"$PLAN\"",
            ),
            (
                "as-carol-shutdown",
                "swarm --team id --as carol shutdown approve \"$SHUT\"",
            ),
            (
                "as-mallory-down",
                "swarm --team id --as mallory down --force",
            ),
            ("as-user-stop", "swarm --team id --as user stop carol"),
            ("stranger-down", "swarm --team other down --force"),
            ("stranger-send", "swarm --team other send x hello"),
            ("own-send", "swarm --team id send team-lead 'from bob'"),
            (
                "own-as-send",
                "swarm --team id --as bob send team-lead 'as bob'",
            ),
        ],
    );
    up(&sandbox, &server, &script);
    eventually("carol to run", || {
        sandbox.member("id", "carol")["state"] == "running"
    });
    let plan = sandbox
        .swarm()
        .args(["--team", "id", "--as", "carol", "plan", "submit", "-"])
        .stdin("the plan")
        .run()
        .success()
        .stdout_line();
    let shut = sandbox
        .swarm()
        .args(["--team", "id", "shutdown", "request", "carol"])
        .run()
        .success()
        .stdout_line();
    go(&sandbox, &[("PLAN", &plan), ("SHUT", &shut)]);
    let results = results(&sandbox);
    for refused in [
        "as-lead-plan",
        "env-lead-plan",
        "setsid-lead-plan",
        "as-carol-shutdown",
        "as-mallory-down",
        "as-user-stop",
        "stranger-down",
    ] {
        assert_eq!(results.get(refused), Some(&2), "{refused}: {results:?}");
    }
    for allowed in ["stranger-send", "own-send", "own-as-send"] {
        assert_eq!(results.get(allowed), Some(&0), "{allowed}: {results:?}");
    }
    // Nothing reached carol as the lead's answer, and the lead saw no approval from carol.
    let carol = sandbox.inbox("id", "carol");
    assert!(
        !carol.iter().any(|m| m["text"]
            .as_str()
            .unwrap()
            .contains("plan_approval_response")),
        "{carol:#?}"
    );
    let lead = sandbox.inbox("id", "team-lead");
    assert!(
        !lead
            .iter()
            .any(|m| m["text"].as_str().unwrap().contains("shutdown_approved")),
        "{lead:#?}"
    );
    // What bob sent went out under bob's name; what it sent to the other team, as bob@id.
    let from: Vec<&str> = lead.iter().filter_map(|m| m["from"].as_str()).collect();
    assert!(
        from.iter().filter(|f| **f == "bob").count() >= 2,
        "{from:?}"
    );
    assert_eq!(sandbox.inbox("other", "x")[0]["from"], "bob@id");
    assert_eq!(sandbox.member("id", "carol")["state"], "running");
    sandbox
        .swarm()
        .args(["down", "id", "--force"])
        .run()
        .success();
}

/// A member's peer socket takes the sender from `SO_PEERCRED`, never from the `from` a client
/// writes: a raw client claiming to be the lead is refused, from outside every pane and from a
/// teammate's pane alike, and nothing reaches the inbox.
#[test]
fn a_raw_socket_client_claiming_to_be_the_lead_is_refused() {
    use std::io::{BufRead, BufReader, Write};
    if !require("node") {
        return;
    }
    let sandbox = Sandbox::new();
    let server = TmuxServer::start(&sandbox);
    let client = sandbox.write(
        "raw.js",
        r"const fs = require('fs'), net = require('net');
const [go, out] = process.argv.slice(2);
const wait = () => fs.existsSync(go) ? send(fs.readFileSync(go, 'utf8').trim()) : setTimeout(wait, 50);
function send(socket) {
  const c = net.createConnection(socket, () => c.write(JSON.stringify({from: 'team-lead', text: 'from bob', msg_id: 'raw-2'}) + '\n'));
  let answer = '';
  c.on('data', d => { answer += d; if (answer.includes('\n')) { fs.writeFileSync(out, answer); c.end(); } });
}
wait();
setInterval(() => {}, 1000);
",
    );
    let work = sandbox.work();
    let toml = format!(
        r#"name = "raw"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "carol"
command = ["sleep", "1000"]
[[member]]
name = "bob"
command = ["node", "{client}", "{go}", "{out}"]
"#,
        client = client.display(),
        go = work.join("go").display(),
        out = work.join("answer").display(),
    );
    let file = sandbox.write("raw.toml", toml);
    sandbox
        .swarm()
        .arg("up")
        .arg(file)
        .arg("--socket")
        .arg(server.socket())
        .run()
        .success();
    eventually("carol to run with a socket", || {
        sandbox.member("raw", "carol")["state"] == "running"
            && sandbox.member("raw", "carol")["socket"].is_string()
    });
    let socket = sandbox.member("raw", "carol")["socket"]
        .as_str()
        .unwrap()
        .to_owned();

    // From outside every pane: the person, not the lead.
    let mut stream = std::os::unix::net::UnixStream::connect(&socket).unwrap();
    stream
        .write_all(b"{\"from\": \"team-lead\", \"text\": \"stop now\", \"msg_id\": \"raw-1\"}\n")
        .unwrap();
    let mut answer = String::new();
    BufReader::new(&stream).read_line(&mut answer).unwrap();
    let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["ok"], false, "{answer}");
    assert!(
        answer["error"]
            .as_str()
            .unwrap()
            .contains("claims to be from team-lead but was sent by user"),
        "{answer}"
    );

    // From bob's pane: bob, not the lead.
    // Renamed into place: the client polls for the file, and one it saw created but not yet
    // written named no socket (an empty path), so it never connected (a CI failure).
    fs::write(work.join("go.partial"), &socket).unwrap();
    fs::rename(work.join("go.partial"), work.join("go")).unwrap();
    eventually("bob's client to be answered", || {
        fs::read_to_string(work.join("answer")).is_ok_and(|a| a.ends_with('\n'))
    });
    let answer: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(work.join("answer")).unwrap()).unwrap();
    assert_eq!(answer["ok"], false, "{answer}");
    assert!(
        answer["error"]
            .as_str()
            .unwrap()
            .contains("claims to be from team-lead but was sent by bob@raw"),
        "{answer}"
    );
    let inbox = sandbox.team_dir("raw").join("inboxes/carol.json");
    let unread: Vec<serde_json::Value> = fs::read_to_string(&inbox)
        .map(|text| serde_json::from_str(&text).unwrap())
        .unwrap_or_default();
    assert!(unread.is_empty(), "{unread:#?}");

    // Told the truth, the same client is still refused: carol verifies the lead's messages, and
    // what user says to her must be signed by the lead's side ("Signed lead messages").
    let mut stream = std::os::unix::net::UnixStream::connect(&socket).unwrap();
    stream
        .write_all(b"{\"from\": \"user\", \"text\": \"hello\", \"msg_id\": \"raw-3\"}\n")
        .unwrap();
    let mut answer = String::new();
    BufReader::new(&stream).read_line(&mut answer).unwrap();
    assert!(
        answer.contains("\"ok\":false") && answer.contains("it is not signed"),
        "{answer}"
    );
    // `swarm send` signs it, and the socket stores it under the sender's real name.
    sandbox
        .swarm()
        .arg("send")
        .arg(format!("uds:{socket}"))
        .arg("hello")
        .run()
        .success();
    let stored = sandbox.inbox("raw", "carol");
    assert_eq!(stored.len(), 1, "{stored:#?}");
    assert_eq!(stored[0]["from"], "user");
    assert!(stored[0]["lead_sig"].is_string(), "{stored:#?}");
    sandbox
        .swarm()
        .args(["down", "raw", "--force"])
        .run()
        .success();
}

/// config.json is a file every process of the user can write: bob naming itself the lead there
/// (`leadAgentId`) does not make it the lead in its pane. Its pane's supervisor was launched as
/// a teammate's, and that is what decides; the refusals' hints name the lead that supervisor was
/// launched with, not the one config.json names.
#[test]
fn editing_lead_agent_id_does_not_make_a_teammate_the_lead() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::start(&sandbox);
    let script = attacker(
        &sandbox,
        &[
            ("stop-carol", "swarm --team id stop carol"),
            ("type-carol", "swarm --team id type carol 'rm -rf ~'"),
        ],
    );
    up(&sandbox, &server, &script);
    eventually("carol to run", || {
        sandbox.member("id", "carol")["state"] == "running"
    });
    let path = sandbox.team_dir("id").join("config.json");
    let mut config = sandbox.config("id");
    config["leadAgentId"] = "bob@id".into();
    fs::write(&path, serde_json::to_vec_pretty(&config).unwrap()).unwrap();
    go(&sandbox, &[]);
    let results = results(&sandbox);
    for refused in ["stop-carol", "type-carol"] {
        assert_eq!(results.get(refused), Some(&2), "{refused}: {results:?}");
    }
    let said = fs::read_to_string(sandbox.work().join("results.out")).unwrap();
    assert!(
        said.contains("hint: ask the lead (team-lead) to do it") && !said.contains("(bob)"),
        "{said}"
    );
    assert_eq!(sandbox.member("id", "carol")["state"], "running");
    down(&sandbox, "id");
}

/// A script named `run` started as `sh run --home H --team T team-lead`, with `SWARM_LEAD` naming
/// the lead: it waits for `go`, runs `attacks` as [`attacker`] does into `<label>-results`, and
/// sleeps. It passes for the lead's supervisor by its command line only.
fn fake_supervisor(sandbox: &Sandbox, label: &str, attacks: &[(&str, &str)]) -> String {
    let work = sandbox.work();
    let (ready, results) = (work.join(format!("{label}-ready")), work.join(label));
    let mut script = format!(
        ": > '{}'\nwhile [ ! -f '{}' ]; do sleep 0.05; done\n",
        ready.display(),
        work.join("go").display()
    );
    for (attack, command) in attacks {
        let _ = writeln!(
            script,
            "{command} >>'{out}.out' 2>&1; echo \"{attack} $?\" >>'{out}'",
            out = results.display()
        );
    }
    let _ = writeln!(
        script,
        "echo done >>'{}'\nexec sleep 1000",
        results.display()
    );
    let dir = work.join(format!("{label}-fake"));
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("run"), script).unwrap();
    dir.display().to_string()
}

/// What the attacks recorded in `<work>/<label>` (their `$RESULTS`), once they are done.
pub(crate) fn attack_results(sandbox: &Sandbox, label: &str) -> BTreeMap<String, i32> {
    let path = sandbox.work().join(label);
    eventually(&format!("{label}'s attacks to finish"), || {
        fs::read_to_string(&path).is_ok_and(|text| text.lines().any(|l| l == "done"))
    });
    let out = fs::read_to_string(sandbox.work().join(format!("{label}.out"))).unwrap_or_default();
    eprintln!("what {label}'s attacks printed:\n{out}");
    fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter_map(|line| line.split_once(' '))
        .map(|(attack, code)| (attack.to_owned(), code.parse().unwrap()))
        .collect()
}

/// bob starts a process whose command line is that of the lead's supervisor (`sh run --home H
/// --team id team-lead`, `SWARM_LEAD=team-lead`), one still marked as bob's run and one not, and
/// then its own supervisor is killed. Neither is a supervisor: a supervisor runs the swarm
/// program, was started by tmux, and carries no run's marker. What the marked one starts is
/// still bob's (refused as the lead, exit 2); what the other starts is nobody's (exit 1).
#[test]
fn a_process_that_passes_for_the_leads_supervisor_is_not_the_lead() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::start(&sandbox);
    let attacks = [
        (
            "send",
            "swarm --team id --as team-lead send carol 'via the fake'",
        ),
        ("type", "swarm --team id type carol 'echo TYPED-BY-BOB'"),
    ];
    let home = sandbox.home().display().to_string();
    let marked = fake_supervisor(&sandbox, "marked", &attacks);
    let bare = fake_supervisor(&sandbox, "bare", &attacks);
    let launch = |dir: &str, env: &str| {
        format!(
            "(cd '{dir}' && {env} SWARM_LEAD=team-lead setsid sh run --home '{home}' --team id team-lead </dev/null >/dev/null 2>&1 &)\n"
        )
    };
    let script = sandbox.write(
        "fakes.sh",
        format!(
            "{}{}exec sleep 1000\n",
            launch(&marked, "env"),
            launch(&bare, "env -u SWARM_RUN_ID")
        ),
    );
    let toml = format!(
        "name = \"id\"\n[lead]\ncommand = [\"sleep\", \"1000\"]\n[[member]]\nname = \"carol\"\n\
         command = [\"sleep\", \"1000\"]\n[[member]]\nname = \"bob\"\ncommand = [\"sh\", \"{}\"]\n",
        script.display()
    );
    let file = sandbox.write("id.toml", toml);
    sandbox
        .swarm()
        .arg("up")
        .arg(file)
        .arg("--socket")
        .arg(server.socket())
        .run()
        .success();
    for label in ["marked", "bare"] {
        eventually(&format!("the {label} fake to start"), || {
            sandbox.work().join(format!("{label}-ready")).exists()
        });
    }
    eventually("carol to run", || {
        sandbox.member("id", "carol")["state"] == "running"
    });
    let supervisor = i32::try_from(
        sandbox.member("id", "bob")["supervisorPid"]
            .as_i64()
            .unwrap(),
    )
    .unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(supervisor),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    eventually("bob's supervisor to be gone", || {
        !std::path::Path::new(&format!("/proc/{supervisor}")).exists()
    });
    go(&sandbox, &[]);
    let marked = attack_results(&sandbox, "marked");
    let bare = attack_results(&sandbox, "bare");
    for attack in ["send", "type"] {
        assert_eq!(marked.get(attack), Some(&2), "marked {attack}: {marked:?}");
        assert_eq!(bare.get(attack), Some(&1), "bare {attack}: {bare:?}");
    }
    let carol = sandbox.inbox("id", "carol");
    assert!(
        !carol.iter().any(|m| m["text"] == "via the fake"),
        "{carol:#?}"
    );
    down(&sandbox, "id");
}

/// bob, a teammate in one home, acts on a team of another home: it is a stranger there, never
/// the person at the keyboard. It cannot send as that team's lead, nor type into its panes.
#[test]
fn a_teammate_in_one_home_is_a_stranger_in_another() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::start(&sandbox);
    let other = sandbox.root().join("other-home");
    let other_home = other.display().to_string();
    let script = attacker(
        &sandbox,
        &[
            (
                "as-lead",
                &format!(
                    "SWARM_AGENT= swarm --home '{other_home}' --team tb --as team-lead send alice 'lead here'"
                ),
            ),
            (
                "type",
                &format!("swarm --home '{other_home}' --team tb type alice 'echo TYPED-BY-BOB'"),
            ),
            (
                "send",
                &format!("swarm --home '{other_home}' --team tb send alice 'from bob'"),
            ),
        ],
    );
    up(&sandbox, &server, &script);
    let file = sandbox.write(
        "tb.toml",
        "name = \"tb\"\n[lead]\ncommand = [\"sleep\", \"1000\"]\n[[member]]\nname = \"alice\"\n\
         command = [\"sleep\", \"1000\"]\n",
    );
    sandbox
        .swarm()
        .arg("--home")
        .arg(&other)
        .arg("up")
        .arg(file)
        .arg("--socket")
        .arg(server.socket())
        .run()
        .success();
    let alice = |field: &str| -> serde_json::Value {
        let config: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(other.join("teams/tb/config.json")).unwrap())
                .unwrap();
        config["members"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == "alice")
            .unwrap()[field]
            .clone()
    };
    eventually("alice to run", || alice("state") == "running");
    go(&sandbox, &[]);
    let results = results(&sandbox);
    assert_eq!(results.get("as-lead"), Some(&2), "{results:?}");
    assert_eq!(results.get("type"), Some(&2), "{results:?}");
    assert_eq!(results.get("send"), Some(&0), "{results:?}");
    let inbox: Vec<serde_json::Value> = serde_json::from_str(
        &fs::read_to_string(other.join("teams/tb/inboxes/alice.json")).unwrap(),
    )
    .unwrap();
    let from: Vec<&str> = inbox.iter().filter_map(|m| m["from"].as_str()).collect();
    assert_eq!(from, ["bob@id"], "{inbox:#?}");
    sandbox
        .swarm()
        .arg("--home")
        .arg(&other)
        .args(["down", "tb", "--force"])
        .run()
        .success();
    down(&sandbox, "id");
}
