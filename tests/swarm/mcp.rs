//! `swarm mcp` over stdio, spoken to as an MCP client speaks (docs/ARCHITECTURE.md, "MCP"): the
//! handshake, the tool list and its size, each tool's answer and its error (the line the command
//! prints), who the server acts as (the member whose pane runs it, whatever it is told), and the
//! policy that refuses a teammate.

use std::io::Write;
use std::process::{Child, ChildStdin, Stdio};

use serde_json::{Value, json};

use crate::harness::{LineReader, PATIENCE, Sandbox, Team, bin, eventually};

/// The tools `swarm mcp` serves, in the order it lists them.
const TOOLS: [&str; 12] = [
    "send",
    "inbox",
    "receive",
    "team",
    "task_list",
    "task_add",
    "task_claim",
    "task_update",
    "task_done",
    "plan_submit",
    "permission_ask",
    "shutdown_answer",
];

/// What the tool list may cost every prompt, in tokens (its JSON's characters / 4).
const TOKEN_BOUND: usize = 2_000;

/// An MCP client of a `swarm mcp` child: newline-delimited JSON-RPC on its stdin and stdout.
struct Client {
    child: Child,
    stdin: ChildStdin,
    lines: LineReader,
    next_id: u64,
}

impl Client {
    /// `swarm mcp` with the sandbox's environment and `env` added, initialized.
    fn start(sandbox: &Sandbox, env: &[(&str, &str)]) -> Self {
        let mut command = sandbox.swarm().arg("mcp").into_command();
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start swarm mcp");
        let stdin = child.stdin.take().unwrap();
        let lines = LineReader::new(child.stdout.take().unwrap());
        let mut client = Self {
            child,
            stdin,
            lines,
            next_id: 0,
        };
        let info = client.request("initialize", initialize());
        assert_eq!(info["serverInfo"]["name"], "swarm", "{info}");
        assert!(info["capabilities"]["tools"].is_object(), "{info}");
        client.notify("notifications/initialized");
        client
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str) {
        self.send(&json!({"jsonrpc": "2.0", "method": method}));
    }

    /// The result of `method`, waiting past anything else the server says first.
    #[track_caller]
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self
                .lines
                .next_within(PATIENCE)
                .unwrap_or_else(|| panic!("no answer to {method} within {PATIENCE:?}"));
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                assert!(message.get("error").is_none(), "{method}: {message}");
                return message["result"].clone();
            }
        }
    }

    /// `tool` called with `arguments`: `Ok` with its text, or `Err` with its error's.
    #[track_caller]
    fn call(&mut self, tool: &str, arguments: Value) -> Result<String, String> {
        let result = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{tool}: no text in {result}"))
            .to_owned();
        if result["isError"] == true {
            Err(text)
        } else {
            Ok(text)
        }
    }

    /// [`Client::call`] that must succeed, its answer as JSON.
    #[track_caller]
    fn ok(&mut self, tool: &str, arguments: Value) -> Value {
        let text = self
            .call(tool, arguments)
            .unwrap_or_else(|err| panic!("{tool} failed: {err}"));
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("{tool}: not JSON: {text}"))
    }

    /// [`Client::call`] that must fail, its error's text.
    #[track_caller]
    fn err(&mut self, tool: &str, arguments: Value) -> String {
        self.call(tool, arguments)
            .expect_err(&format!("{tool} succeeded"))
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn initialize() -> Value {
    json!({
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "swarm-tests", "version": "1"},
    })
}

/// What the command line prints on stderr for a refusal: what a tool's error says.
#[track_caller]
fn cli_refusal(sandbox: &Sandbox, agent: Option<&str>, args: &[&str]) -> String {
    let mut swarm = sandbox.swarm().arg("--json").args(args);
    if let Some(agent) = agent {
        swarm = swarm.env("SWARM_AGENT", agent);
    }
    said(&swarm.run())
}

/// A refusal's message and hint, from its `--json` error object, as the command line shows them.
#[track_caller]
fn said(outcome: &crate::harness::Outcome) -> String {
    assert!(
        !outcome.status.success(),
        "{} succeeded",
        outcome.description
    );
    let error: Value = serde_json::from_str(outcome.stderr.trim_end()).unwrap_or_else(|_| {
        panic!(
            "{}: not one JSON error: {}",
            outcome.description, outcome.stderr
        )
    });
    let mut text = format!("swarm: {}", error["error"].as_str().unwrap());
    if let Some(hint) = error["hint"].as_str() {
        text.push_str("\nhint: ");
        text.push_str(hint);
    }
    text
}

fn team(sandbox: &Sandbox) {
    sandbox.write(
        "t.toml",
        "name = \"t\"\n[lead]\nname = \"lead\"\n[[member]]\nname = \"bob\"\ncommand = [\"true\"]\n\
         [[member]]\nname = \"carol\"\ncommand = [\"true\"]\n",
    );
    sandbox.swarm().args(["init", "t.toml"]).run().success();
}

#[test]
fn the_server_lists_its_tools_within_the_token_bound() {
    let sandbox = Sandbox::new();
    let mut client = Client::start(&sandbox, &[]);
    let listed = client.request("tools/list", json!({}));
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, TOOLS);
    for tool in listed["tools"].as_array().unwrap() {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert!(
            tool["description"].as_str().is_some_and(|d| d.len() <= 80),
            "{tool}"
        );
    }
    let tokens = listed["tools"].to_string().len() / 4;
    eprintln!("tools/list: {tokens} tokens (characters / 4)");
    assert!(tokens < TOKEN_BOUND, "the tool list costs {tokens} tokens");
}

#[test]
fn messages_go_and_come_through_the_tools_as_through_the_commands() {
    let sandbox = Sandbox::new();
    team(&sandbox);
    let mut person = Client::start(&sandbox, &[]);
    let mut bob = Client::start(&sandbox, &[("SWARM_AGENT", "bob")]);

    let sent = person.ok(
        "send",
        json!({"to": "bob", "text": "-", "summary": "a dash"}),
    );
    // Outside every pane, in a team whose lead runs no program, the person acts as the lead.
    assert_eq!(sent["from"], "lead");
    assert_eq!(sent["to"], json!(["bob"]));
    assert_eq!(
        person.err("send", json!({"to": "nobody", "text": "hi"})),
        cli_refusal(&sandbox, None, &["send", "nobody", "hi"])
    );
    assert_eq!(
        person.err("send", json!({"to": "bob"})),
        "swarm: send needs text: text"
    );

    let unread = bob.ok("inbox", json!({}));
    assert_eq!(
        unread[0]["text"], "-",
        "free text is never an option: {unread}"
    );
    assert_eq!(unread[0]["summary"], "a dash");
    assert_eq!(
        bob.ok("inbox", json!({})),
        unread,
        "inbox leaves them unread"
    );
    let taken = bob.ok("receive", json!({}));
    assert_eq!(taken[0]["msg_id"], sent["msg_id"]);
    assert_eq!(bob.ok("inbox", json!({})), json!([]));
    assert_eq!(
        bob.err("receive", json!({"wait": 0.2})),
        "swarm: no message arrived for bob within 0.2s"
    );
    // A message that comes while it waits is taken.
    sandbox
        .swarm()
        .args(["send", "bob", "later"])
        .run()
        .success();
    assert_eq!(bob.ok("receive", json!({"wait": 30}))[0]["text"], "later");

    let members = person.ok("team", json!({}));
    let names: Vec<&str> = members["members"]
        .as_array()
        .unwrap_or_else(|| panic!("{members}"))
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["lead", "bob", "carol"]);
}

#[test]
fn the_task_tools_edit_the_board_under_the_same_policy() {
    let sandbox = Sandbox::new();
    team(&sandbox);
    let mut person = Client::start(&sandbox, &[]);
    let mut bob = Client::start(&sandbox, &[("SWARM_AGENT", "bob")]);

    let added = person.ok(
        "task_add",
        json!({"subject": "--parse it", "description": "-"}),
    );
    assert_eq!(added["subject"], "--parse it");
    assert_eq!(added["description"], "-");
    let id = added["id"].as_str().unwrap().to_owned();
    assert_eq!(
        person.err("task_add", json!({"subject": "x", "blocked_by": ["99"]})),
        cli_refusal(&sandbox, None, &["task", "add", "x", "--blocked-by", "99"])
    );
    assert_eq!(person.ok("task_list", json!({}))[0]["id"], id.as_str());

    assert_eq!(bob.ok("task_claim", json!({}))["owner"], "bob");
    assert_eq!(
        bob.err("task_claim", json!({"id": "99"})),
        cli_refusal(&sandbox, Some("bob"), &["task", "claim", "99"])
    );
    let started = bob.ok("task_update", json!({"id": id, "status": "in-progress"}));
    assert_eq!(started["status"], "in_progress");
    assert_eq!(
        bob.err("task_update", json!({"id": id, "status": "sleeping"})),
        cli_refusal(
            &sandbox,
            Some("bob"),
            &["task", "update", &id, "--status=sleeping"]
        )
    );
    assert_eq!(
        bob.ok("task_list", json!({"owner": "bob"}))[0]["status"],
        "in_progress"
    );
    let done = bob.ok("task_done", json!({"id": id, "note": "parsed"}));
    assert_eq!(done["status"], "completed");
    assert_eq!(done["metadata"]["note"], "parsed");
    assert_eq!(
        bob.err("task_done", json!({"id": "99"})),
        cli_refusal(&sandbox, Some("bob"), &["task", "done", "99"])
    );

    // A teammate gives no task to another: the lead's to do, as at the command line.
    let refused = bob.err("task_add", json!({"subject": "yours", "owner": "carol"}));
    assert_eq!(
        refused,
        cli_refusal(
            &sandbox,
            Some("bob"),
            &["task", "add", "yours", "--owner", "carol"]
        )
    );
    assert_eq!(
        person.ok("task_list", json!({})).as_array().unwrap().len(),
        1
    );
}

#[test]
fn the_decision_tools_wait_for_their_answers() {
    let sandbox = Sandbox::new();
    team(&sandbox);
    let mut bob = Client::start(&sandbox, &[("SWARM_AGENT", "bob")]);

    // plan_submit waits until the lead answers; the lead answers from its inbox.
    let answer = std::thread::scope(|scope| {
        let waiting = scope.spawn(|| bob.ok("plan_submit", json!({"plan": "1. parse\n2. test"})));
        let mut request = None;
        eventually("the plan reaches the lead", || {
            request = sandbox
                .inbox("t", "lead")
                .iter()
                .filter_map(|m| m["text"].as_str())
                .filter_map(|text| serde_json::from_str::<Value>(text).ok())
                .find(|m| m["type"] == "plan_approval_request")
                .map(|m| m["requestId"].as_str().unwrap().to_owned());
            request.is_some()
        });
        sandbox
            .swarm()
            .args(["--as", "lead", "plan", "approve"])
            .arg(request.unwrap())
            .run()
            .success();
        waiting.join().unwrap()
    });
    assert_eq!(answer["approved"], true, "{answer}");
    // The same line but for the request's id, which is new each time.
    let without_id = |line: String| without_ids(&line, "plan_approval-");
    assert_eq!(
        without_id(bob.err("plan_submit", json!({"plan": "3. ship", "timeout": 0.2}))),
        without_id(cli_refusal_with_stdin(
            &sandbox,
            "bob",
            &["plan", "submit", "-", "--wait", "--timeout", "0.2"],
            "3. ship"
        ))
    );

    // permission_ask files its ask in the queue; its answer must be signed for a member swarm
    // launched (in a pane: see below), so here it runs out of time as the command does.
    let without_perm_id = |line: String| without_ids(&line, "perm-");
    assert_eq!(
        without_perm_id(bob.err("permission_ask", json!({"tool": "Bash", "timeout": 0.2}))),
        without_perm_id(cli_refusal(
            &sandbox,
            Some("bob"),
            &["permission", "ask", "Bash", "--timeout", "0.2"]
        ))
    );
    assert_eq!(
        bob.err("permission_ask", json!({"input": {}})),
        "swarm: permission_ask needs tool: text"
    );

    // shutdown_answer answers a request addressed to the caller.
    let request = sandbox
        .swarm()
        .args(["--as", "lead", "shutdown", "request", "bob"])
        .run()
        .success()
        .stdout_line();
    let rejected = bob.ok(
        "shutdown_answer",
        json!({"request_id": request, "approve": false, "reason": "busy"}),
    );
    assert!(rejected.to_string().contains(&request), "{rejected}");
    assert_eq!(
        bob.err(
            "shutdown_answer",
            json!({"request_id": "shutdown-1@bob", "approve": true})
        ),
        cli_refusal(
            &sandbox,
            Some("bob"),
            &["shutdown", "approve", "shutdown-1@bob"]
        )
    );
}

/// `line` with each word that starts with `prefix` (a request's id, new each time) as `ID`.
fn without_ids(line: &str, prefix: &str) -> String {
    line.split(' ')
        .map(|word| if word.starts_with(prefix) { "ID" } else { word })
        .collect::<Vec<_>>()
        .join(" ")
}

#[track_caller]
fn cli_refusal_with_stdin(sandbox: &Sandbox, agent: &str, args: &[&str], stdin: &str) -> String {
    said(
        &sandbox
            .swarm()
            .arg("--json")
            .args(args)
            .env("SWARM_AGENT", agent)
            .stdin(stdin)
            .run(),
    )
}

/// In bob's pane, the server acts as bob: what it sends is from bob whatever `SWARM_AGENT` says,
/// an argument naming someone else is refused, and what the policy refuses a teammate it refuses.
#[test]
fn a_members_server_acts_as_that_member_and_no_argument_changes_it() {
    let sandbox = Sandbox::new();
    let work = sandbox.work();
    let requests = work.join("requests.jsonl");
    let answers = work.join("answers.jsonl");
    let lines: Vec<Value> = vec![
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize()}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "send", "arguments": {"to": "lead", "text": "from the pane"}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "send", "arguments": {"to": "carol", "text": "x", "from": "lead"}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "task_add", "arguments": {"subject": "yours", "owner": "carol"}}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "permission_ask", "arguments": {"tool": "Bash", "input": {"command": "make"}, "description": "build"}}}),
    ];
    let text: String = lines
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    let script = sandbox.write(
        "bob.sh",
        format!(
            "while [ ! -f {go} ]; do sleep 0.05; done\n\
             {{ cat {requests}; sleep 1000; }} | SWARM_AGENT=carol {bin} mcp > {answers}\n",
            go = work.join("go").display(),
            requests = requests.display(),
            answers = answers.display(),
            bin = bin(),
        ),
    );
    let _team = Team::up(
        &sandbox,
        &format!(
            "name = \"p\"\n[lead]\nname = \"lead\"\ncommand = [\"sleep\", \"1000\"]\n\
             [[member]]\nname = \"carol\"\ncommand = [\"sleep\", \"1000\"]\n\
             [[member]]\nname = \"bob\"\ncommand = [\"sh\", \"{}\"]\n",
            script.display()
        ),
    );
    std::fs::write(&requests, text).unwrap();
    std::fs::write(work.join("go"), "").unwrap();
    let mut answered: Vec<Value> = Vec::new();
    eventually("the server answers every call", || {
        answered = std::fs::read_to_string(&answers)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        answered.len() >= 4
    });
    // The ask waits in the queue, from bob, until the person allows it.
    let mut asks = Value::Null;
    eventually("bob's ask is listed", || {
        asks = sandbox
            .swarm()
            .args(["--json", "--team", "p", "permission", "list"])
            .run()
            .success()
            .json();
        asks.as_array().is_some_and(|a| !a.is_empty())
    });
    assert_eq!(asks[0]["member"], "bob");
    assert_eq!(asks[0]["input"]["command"], "make");
    sandbox
        .swarm()
        .args(["--team", "p", "permission", "allow"])
        .arg(asks[0]["requestId"].as_str().unwrap())
        .run()
        .success();
    eventually("the ask is answered", || {
        answered = std::fs::read_to_string(&answers)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        answered.len() >= 5
    });
    let answer = |id: u64| {
        answered
            .iter()
            .find(|a| a["id"] == id)
            .map(|a| a["result"].clone())
            .unwrap()
    };
    let sent: Value =
        serde_json::from_str(answer(2)["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(sent["from"], "bob", "{sent}");
    let inbox = sandbox.inbox("p", "lead");
    assert_eq!(inbox.len(), 1);
    assert_eq!(inbox[0]["from"], "bob");
    assert_eq!(inbox[0]["text"], "from the pane");

    assert_eq!(answer(3)["isError"], true);
    assert_eq!(
        answer(3)["content"][0]["text"],
        "swarm: send takes no argument from (it takes to, text, summary)"
    );
    assert!(sandbox.inbox("p", "carol").is_empty());
    assert_eq!(answer(5)["isError"], false, "{}", answer(5));
    assert!(answer(5).to_string().contains("make"), "{}", answer(5));
    assert_eq!(answer(4)["isError"], true);
    // The same refusal; only the hint, which names the lead in a pane, differs.
    let first_line = |text: &str| text.lines().next().unwrap_or_default().to_owned();
    assert_eq!(
        first_line(answer(4)["content"][0]["text"].as_str().unwrap()),
        first_line(&cli_refusal(
            &sandbox,
            Some("bob"),
            &["--team", "p", "task", "add", "yours", "--owner", "carol"]
        ))
    );
}

/// What member `name`'s pane showed, as `swarm log` renders it.
fn screen(sandbox: &Sandbox, team: &str, name: &str) -> String {
    sandbox
        .swarm()
        .args(["log", name, "-n", "1000", "--team", team])
        .run()
        .success()
        .stdout
}

/// With `mcp = true` and paste delivery, the pane is typed a nudge for each arrival, never the
/// text, and the messages stay unread until the receive tool takes them.
#[test]
fn an_mcp_members_pane_is_nudged_and_the_text_waits_for_receive() {
    let sandbox = Sandbox::new();
    // The pane shows what is typed once: the terminal's echo (the program reads it away).
    let _team = Team::up(
        &sandbox,
        "name = \"n\"\n[lead]\nname = \"lead\"\ncommand = [\"sleep\", \"1000\"]\n\
         [[member]]\nname = \"agent\"\ncommand = [\"sh\", \"-c\", \"cat >/dev/null\"]\nmcp = true\ndelivery = \"paste\"\n",
    );
    assert_eq!(sandbox.member("n", "agent")["mcp"], true);
    let send = |text: &str| {
        sandbox
            .swarm()
            .args(["--team", "n", "send", "agent", text])
            .run()
            .success();
    };
    send("the first secret");
    send("the second secret");
    let nudges = || {
        screen(&sandbox, "n", "agent")
            .lines()
            .filter(|l| l.ends_with("new message(s) from user: use the receive tool"))
            .count()
    };
    eventually("the pane is nudged about both", || {
        let counted: usize = screen(&sandbox, "n", "agent")
            .lines()
            .filter_map(|l| l.strip_suffix(" new message(s) from user: use the receive tool"))
            .filter_map(|n| n.parse::<usize>().ok())
            .sum();
        counted == 2
    });
    let told = nudges();
    assert!(
        !screen(&sandbox, "n", "agent").contains("secret"),
        "the text is never pasted"
    );
    assert_eq!(sandbox.inbox("n", "agent").len(), 2, "both wait unread");

    let mut agent = Client::start(&sandbox, &[("SWARM_AGENT", "agent"), ("SWARM_TEAM", "n")]);
    let taken = agent.ok("receive", json!({}));
    let texts: Vec<&str> = taken
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["the first secret", "the second secret"]);
    // Another arrival is one more nudge; what was taken is not told again.
    send("a third");
    eventually("one more nudge", || nudges() == told + 1);
    assert_eq!(sandbox.inbox("n", "agent").len(), 1);
}

/// A stand-in for an agent CLI that speaks MCP, installed as `claude`, `codex`, `gemini` or
/// `opencode`. It records its argv and `SWARM_*` variables, finds the `swarm` server where its
/// program takes its MCP servers from (claude: the `--mcp-config` file; codex: its
/// `-c mcp_servers.swarm.*` overrides, TOML; gemini: the `mcpServers` of
/// `$GEMINI_CLI_HOME/.gemini/settings.json`; opencode: the `mcp` of `OPENCODE_CONFIG_CONTENT`),
/// and, when `FAKE_SEND_TO` names someone, starts that server as its program would and calls its
/// `send` tool. What it saw is written to `$FAKE_RECORD/<SWARM_AGENT>.json`, then it waits.
const FAKE_AGENT: &str = r#"#!/usr/bin/env python3
import json, os, subprocess, sys, time, tomllib
program = os.path.basename(sys.argv[0])
args = sys.argv[1:]
seen = {"argv": args, "env": {k: v for k, v in os.environ.items()
                              if k.startswith(("SWARM_", "OPENCODE_", "GEMINI_CLI_HOME"))}}
server = None
if program == "claude" and "--mcp-config" in args:
    with open(args[args.index("--mcp-config") + 1]) as f:
        server = json.load(f)["mcpServers"].get("swarm")
elif program == "codex":
    overrides = dict(args[i + 1].split("=", 1) for i, a in enumerate(args[:-1]) if a == "-c")
    keys = {k[len("mcp_servers.swarm."):]: tomllib.loads("v = " + v)["v"]
            for k, v in overrides.items() if k.startswith("mcp_servers.swarm.")}
    if keys:
        server = keys
elif program == "gemini" and "GEMINI_CLI_HOME" in os.environ:
    settings = os.path.join(os.environ["GEMINI_CLI_HOME"], ".gemini", "settings.json")
    if os.path.exists(settings):
        with open(settings) as f:
            server = json.load(f).get("mcpServers", {}).get("swarm")
elif program == "opencode" and "OPENCODE_CONFIG_CONTENT" in os.environ:
    entry = json.loads(os.environ["OPENCODE_CONFIG_CONTENT"]).get("mcp", {}).get("swarm")
    if entry:
        server = dict(entry, args=entry["command"][1:], command=entry["command"][0])
seen["server"] = server
to = os.environ.get("FAKE_SEND_TO")
if server and to:
    child = subprocess.Popen([server["command"]] + server["args"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    def say(message):
        child.stdin.write(json.dumps(message) + "\n")
        child.stdin.flush()
    say({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": program, "version": "1"}}})
    say({"jsonrpc": "2.0", "method": "notifications/initialized"})
    say({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "send", "arguments": {"to": to, "text": "hello from " + program}}})
    for line in child.stdout:
        answer = json.loads(line)
        if answer.get("id") == 2:
            seen["sent"] = answer["result"]
            break
    child.stdin.close()
    child.wait()
record = os.path.join(os.environ["FAKE_RECORD"], os.environ["SWARM_AGENT"] + ".json")
with open(record + ".new", "w") as f:
    json.dump(seen, f)
os.rename(record + ".new", record)
time.sleep(1000)
"#;

/// A sandbox with [`FAKE_AGENT`] as each MCP-speaking program, and the folder it records in.
fn sandbox_with_agents() -> Sandbox {
    let mut sandbox = Sandbox::new();
    for program in ["claude", "codex", "gemini", "opencode"] {
        sandbox.shim(program, FAKE_AGENT);
    }
    let record = sandbox.root().join("record");
    std::fs::create_dir_all(&record).unwrap();
    sandbox.set_env("FAKE_RECORD", &record);
    sandbox
}

/// What `name`'s stand-in recorded, once it has.
fn recorded(sandbox: &Sandbox, name: &str) -> Value {
    let file = sandbox.root().join(format!("record/{name}.json"));
    let mut seen = Value::Null;
    eventually(&format!("{name}'s program to record what it got"), || {
        seen = std::fs::read(&file)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or(Value::Null);
        !seen.is_null()
    });
    seen
}

/// `swarm mcp`'s arguments for team `team` of the sandbox, as every profile registers them.
fn server_args(sandbox: &Sandbox, team: &str) -> Value {
    json!([
        "mcp",
        "--home",
        sandbox.home().display().to_string(),
        "--team",
        team
    ])
}

/// The team file's `mcp = true` holds for a member `spawn` adds later, as for one of its
/// `[[member]]`s; `--mcp=false` leaves one out.
#[test]
fn a_member_spawned_into_an_mcp_team_gets_swarm_mcp_unless_it_says_not() {
    let sandbox = sandbox_with_agents();
    let _team = Team::up(
        &sandbox,
        "name = \"s\"\nmcp = true\n[lead]\nname = \"lead\"\ncommand = [\"sleep\", \"1000\"]\n",
    );
    let spawn = |args: &[&str]| {
        sandbox
            .swarm()
            .args(["--json", "--team", "s", "spawn"])
            .args(args)
            .run()
            .success()
            .json()
    };
    let spawned = spawn(&["cx", "--env", "FAKE_SEND_TO=lead", "--", "codex"]);
    assert!(
        spawned["argv"].as_array().unwrap().iter().any(|a| a
            .as_str()
            .unwrap()
            .starts_with("mcp_servers.swarm.command=")),
        "{spawned}"
    );
    assert_eq!(sandbox.member("s", "cx")["mcp"], true);
    let seen = recorded(&sandbox, "cx");
    assert_eq!(seen["server"]["args"], server_args(&sandbox, "s"), "{seen}");
    assert_eq!(seen["sent"]["isError"], false, "{seen}");
    let inbox = sandbox.inbox("s", "lead");
    assert_eq!(inbox.len(), 1, "{inbox:?}");
    assert_eq!(inbox[0]["from"], "cx");
    assert_eq!(inbox[0]["text"], "hello from codex");

    let own = spawn(&["plain", "--mcp=false", "--", "codex"]);
    assert!(!own["argv"].to_string().contains("mcp_servers"), "{own}");
    assert_eq!(sandbox.member("s", "plain")["mcp"], Value::Null);
    assert_eq!(recorded(&sandbox, "plain")["server"], Value::Null);
}

/// With `mcp = true`, a lead that runs an agent CLI gets `swarm mcp` as its profile's teammates
/// do, and its server acts as the lead: what it sends is from the lead. `[lead] mcp = false`
/// leaves it out.
#[test]
fn the_lead_of_an_mcp_team_gets_swarm_mcp_and_its_server_acts_as_the_lead() {
    let sandbox = sandbox_with_agents();
    for program in ["claude", "codex", "gemini"] {
        let name = format!("l{program}");
        let team = Team::up(
            &sandbox,
            &format!(
                "name = \"{name}\"\nmcp = true\n[lead]\nname = \"boss\"\ncommand = [\"{program}\"]\n\
                 env = {{ FAKE_SEND_TO = \"bob\" }}\n\
                 [[member]]\nname = \"bob\"\ncommand = [\"sleep\", \"1000\"]\n"
            ),
        );
        assert_eq!(sandbox.member(&name, "boss")["mcp"], true, "{program}");
        let seen = recorded(&sandbox, "boss");
        assert_eq!(
            seen["server"]["args"],
            server_args(&sandbox, &name),
            "{program}: {seen}"
        );
        assert_eq!(seen["sent"]["isError"], false, "{program}: {seen}");
        let inbox = sandbox.inbox(&name, "bob");
        assert_eq!(inbox.len(), 1, "{program}: {inbox:?}");
        assert_eq!(inbox[0]["from"], "boss", "{program}");
        assert_eq!(inbox[0]["text"], format!("hello from {program}"));
        drop(team);
        std::fs::remove_file(sandbox.root().join("record/boss.json")).unwrap();
    }
    let file = sandbox.write(
        "off.toml",
        "name = \"off\"\nmcp = true\n[lead]\ncommand = [\"codex\"]\nmcp = false\n\
         [[member]]\nname = \"cx\"\ncommand = [\"codex\"]\n",
    );
    let panes = sandbox.planned_panes(&file);
    assert!(
        !panes["team-lead"]["argv"]
            .to_string()
            .contains("mcp_servers"),
        "{panes:?}"
    );
    assert!(
        panes["cx"]["argv"]
            .to_string()
            .contains("mcp_servers.swarm.args")
    );
}

/// opencode takes its MCP servers from its configuration, which `OPENCODE_CONFIG_CONTENT` adds
/// to the person's files: an opencode member gets `swarm mcp` there, over what the variable held
/// in its pane, and its server acts as that member.
#[test]
fn an_opencode_member_gets_swarm_mcp_in_its_inline_configuration_over_the_persons() {
    let mut sandbox = sandbox_with_agents();
    let theirs = json!({"theme": "mine", "mcp": {"theirs": {"type": "local", "command": ["x"]}}});
    sandbox.set_env("OPENCODE_CONFIG_CONTENT", theirs.to_string());
    let _team = Team::up(
        &sandbox,
        "name = \"o\"\n[lead]\nname = \"lead\"\ncommand = [\"sleep\", \"1000\"]\n\
         [[member]]\nname = \"oc\"\ncommand = [\"opencode\"]\nmcp = true\n\
         env = { FAKE_SEND_TO = \"lead\" }\n\
         [[member]]\nname = \"plain\"\ncommand = [\"opencode\"]\n",
    );
    assert_eq!(sandbox.member("o", "oc")["profile"], "opencode");
    let seen = recorded(&sandbox, "oc");
    let config: Value =
        serde_json::from_str(seen["env"]["OPENCODE_CONFIG_CONTENT"].as_str().unwrap()).unwrap();
    assert_eq!(config["theme"], "mine", "{config}");
    assert_eq!(config["mcp"]["theirs"], theirs["mcp"]["theirs"]);
    let mut command = vec![json!("swarm")];
    command.extend(
        server_args(&sandbox, "o")
            .as_array()
            .unwrap()
            .iter()
            .cloned(),
    );
    assert_eq!(config["mcp"]["swarm"]["command"], Value::Array(command));
    assert_eq!(config["mcp"]["swarm"]["type"], "local");
    assert_eq!(config["mcp"]["swarm"]["enabled"], true);
    assert_eq!(seen["sent"]["isError"], false, "{seen}");
    let inbox = sandbox.inbox("o", "lead");
    assert_eq!(inbox.len(), 1, "{inbox:?}");
    assert_eq!(inbox[0]["from"], "oc");
    assert_eq!(inbox[0]["text"], "hello from opencode");
    // Without mcp, the person's own reaches it as it was.
    let plain = recorded(&sandbox, "plain");
    assert_eq!(
        plain["env"]["OPENCODE_CONFIG_CONTENT"],
        theirs.to_string(),
        "{plain}"
    );
}
