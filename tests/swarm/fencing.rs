//! Fenced members (docs/ARCHITECTURE.md, "Fencing members"): a member with `sandbox = true` runs
//! under real bubblewrap in a real tmux pane. What it tries is run by a member program that
//! records each exit status, as the identity tests do; its working directory is the test's whole
//! sandbox, so every path it must not reach is kept from it by the fence's own walls (hidden or
//! read-only), never by being elsewhere.

use std::fs;
use std::path::PathBuf;

use serde_json::Value;

use crate::harness::{Sandbox, Team, eventually, require};
use crate::identity::{attack_results, attacker, go};

fn bwrap_runs() -> bool {
    require("bwrap")
}

/// The signing agent's socket, wherever the runtime directory holds it.
fn signer_socket(sandbox: &Sandbox) -> PathBuf {
    let dir = sandbox.root().join("run/swarm");
    let mut found = None;
    eventually("the signing agent to listen", || {
        found = fs::read_dir(&dir).ok().and_then(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .find(|path| {
                    path.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("signer-"))
                        && path.extension().is_some_and(|e| e == "sock")
                })
        });
        found.is_some()
    });
    found.unwrap()
}

fn pid(member: &Value) -> i32 {
    i32::try_from(member["pid"].as_i64().expect("a running member's pid")).unwrap()
}

/// A fenced member cannot write outside its fence, read what it hides (its own `sandbox_hide`,
/// `~/.ssh`), reach the team's tmux server (so `new-window` fails), the signing agent or another
/// member's socket, edit config.json or another member's inbox, signal a process outside its
/// sandbox, or open a connection with `sandbox_network = "none"`. It can write in its own
/// directory.
#[test]
fn a_fenced_member_reaches_nothing_outside_its_fence() {
    if !bwrap_runs() {
        return;
    }
    let sandbox = Sandbox::new();
    let root = sandbox.root().to_path_buf();
    fs::create_dir_all(root.join("secret")).unwrap();
    fs::write(root.join("secret/key"), "s3cret").unwrap();
    fs::create_dir_all(root.join("user/.ssh")).unwrap();
    fs::write(root.join("user/.ssh/id_ed25519"), "private").unwrap();
    // Outside /tmp, where the fence leaves the file system as it is, read-only.
    let outside = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("fence-probe-{}", std::process::id()));
    let _ = fs::remove_file(&outside);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = attacker(
        &sandbox,
        &[
            ("own-write", "sh -c 'echo mine > bob-wrote'"),
            ("write-outside", "echo x > \"$OUTSIDE\""),
            ("read-hidden", "cat secret/key"),
            ("read-ssh", "cat user/.ssh/id_ed25519"),
            ("tmux-ls", "tmux -S \"$TMUX_SOCKET\" list-sessions"),
            (
                "tmux-new-window",
                "tmux -S \"$TMUX_SOCKET\" new-window 'touch pwned'",
            ),
            ("signer", "test -S \"$SIGNER\""),
            ("peer-socket", "test -S \"$ALICE_SOCKET\""),
            ("config", "echo '{}' > home/teams/fz/config.json"),
            ("inbox", "echo '[]' > home/teams/fz/inboxes/alice.json"),
            ("kill-lead", "kill -TERM \"$LEAD_PID\""),
            (
                "connect",
                "python3 -c 'import socket,sys; socket.create_connection((\"127.0.0.1\", int(sys.argv[1])), 5)' \"$PORT\"",
            ),
        ],
    );
    let toml = format!(
        r#"name = "fz"
cwd = "{root}"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "alice"
command = ["sleep", "1000"]
[[member]]
name = "bob"
sandbox = true
sandbox_hide = ["{root}/secret"]
sandbox_network = "none"
command = ["sh", "{script}"]
env = {{ GO = "{work}/go", RESULTS = "{work}/bob-results" }}
"#,
        root = root.display(),
        work = sandbox.work().display(),
    );
    let team = Team::up(&sandbox, &toml);
    eventually("every member to run", || {
        let config = sandbox.config("fz");
        config["members"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["state"] == "running")
    });
    let lead = sandbox.member("fz", "team-lead");
    let alice = sandbox.member("fz", "alice");
    let config_before = fs::read(sandbox.team_dir("fz").join("config.json")).unwrap();
    let windows = || {
        team.server()
            .run(&["list-windows", "-a", "-F", "#{window_id}"])
    };
    let windows_before = windows();
    go(
        &sandbox,
        &[
            ("OUTSIDE", &outside.display().to_string()),
            ("TMUX_SOCKET", &team.server().socket().display().to_string()),
            ("SIGNER", &signer_socket(&sandbox).display().to_string()),
            ("ALICE_SOCKET", alice["socket"].as_str().unwrap()),
            ("LEAD_PID", &pid(&lead).to_string()),
            ("PORT", &port.to_string()),
        ],
    );
    let results = attack_results(&sandbox, "bob-results");
    assert_eq!(results["own-write"], 0, "{results:?}");
    for attempt in [
        "write-outside",
        "read-hidden",
        "read-ssh",
        "tmux-ls",
        "tmux-new-window",
        "signer",
        "peer-socket",
        "config",
        "inbox",
        "kill-lead",
        "connect",
    ] {
        assert_ne!(results[attempt], 0, "{attempt} got through: {results:?}");
    }
    assert_eq!(
        fs::read_to_string(root.join("bob-wrote")).unwrap(),
        "mine\n"
    );
    assert!(!outside.exists());
    assert!(!root.join("pwned").exists());
    assert_eq!(
        fs::read(sandbox.team_dir("fz").join("config.json")).unwrap(),
        config_before,
        "config.json changed"
    );
    assert_eq!(sandbox.member("fz", "team-lead")["state"], "running");
    assert!(nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid(&lead)), None).is_ok());
    assert_eq!(windows(), windows_before, "a window was added");
}

/// What a teammate does through swarm, a fenced one does with the same results: it sends and
/// the lead reads it from that member, it receives what the lead sent it, it claims a task, and
/// it cannot act as the lead. Each runs the same program; only bob is fenced.
#[test]
fn a_fenced_member_works_through_swarm_as_an_unfenced_one_does() {
    if !bwrap_runs() {
        return;
    }
    let sandbox = Sandbox::new();
    let root = sandbox.root().to_path_buf();
    let tries: &[(&str, &str)] = &[
        ("send", "swarm send team-lead \"hello from $SWARM_AGENT\""),
        ("recv", "swarm recv | grep -q \"task for $SWARM_AGENT\""),
        (
            "claim",
            "swarm task claim \"$(cat work/task-$SWARM_AGENT)\"",
        ),
        ("as-lead", "swarm --as team-lead send alice forged"),
        ("spawn", "swarm spawn mallory -- true"),
        ("status", "swarm status --json | grep -q '\"name\"'"),
        (
            "plan",
            "echo 'the plan' > plan.md && swarm plan submit plan.md",
        ),
    ];
    let script = attacker(&sandbox, tries);
    let toml = format!(
        r#"name = "fw"
cwd = "{root}"
[[member]]
name = "alice"
command = ["sh", "{script}"]
env = {{ GO = "{work}/go", RESULTS = "{work}/alice-results" }}
[[member]]
name = "bob"
sandbox = true
command = ["sh", "{script}"]
env = {{ GO = "{work}/go", RESULTS = "{work}/bob-results" }}
"#,
        root = root.display(),
        work = sandbox.work().display(),
    );
    let _team = Team::up(&sandbox, &toml);
    for name in ["alice", "bob"] {
        sandbox
            .swarm()
            .args(["--team", "fw", "send", name, &format!("task for {name}")])
            .run()
            .success();
        let id = sandbox
            .swarm()
            .args([
                "--team",
                "fw",
                "task",
                "add",
                &format!("work of {name}"),
                "--json",
            ])
            .run()
            .success()
            .json()["id"]
            .as_str()
            .unwrap()
            .to_owned();
        sandbox.write(&format!("task-{name}"), id);
    }
    go(&sandbox, &[]);
    let alice_results = attack_results(&sandbox, "alice-results");
    let bob_results = attack_results(&sandbox, "bob-results");
    assert_eq!(bob_results, alice_results);
    for allowed in ["send", "recv", "claim", "status"] {
        assert_eq!(bob_results[allowed], 0, "{allowed}: {bob_results:?}");
    }
    for refused in ["as-lead", "spawn"] {
        assert_eq!(bob_results[refused], 2, "{refused}: {bob_results:?}");
    }
    let lead_inbox = sandbox.inbox("fw", "team-lead");
    for name in ["alice", "bob"] {
        assert!(
            lead_inbox
                .iter()
                .any(|m| m["from"] == name && m["text"] == format!("hello from {name}")),
            "{lead_inbox:#?}"
        );
    }
    let tasks = sandbox
        .swarm()
        .args(["--team", "fw", "task", "list", "--json"])
        .run()
        .success()
        .json();
    for name in ["alice", "bob"] {
        let task = tasks
            .as_array()
            .or_else(|| tasks["tasks"].as_array())
            .unwrap()
            .iter()
            .find(|t| t["subject"] == format!("work of {name}"))
            .cloned()
            .unwrap();
        assert_eq!(task["owner"], name, "{task:#}");
    }
}

/// `status` and `top` show which members are fenced; a process outside the sandbox that finds a
/// fenced member's socket is not that member: the supervisor refuses it with one line, and
/// nothing is done.
#[test]
fn status_and_top_show_the_fenced_and_its_socket_serves_only_its_sandbox() {
    if !bwrap_runs() {
        return;
    }
    let sandbox = Sandbox::new();
    let team = Team::up(
        &sandbox,
        "name = \"fs\"\n[[member]]\nname = \"alice\"\ncommand = [\"sleep\", \"1000\"]\n\
         [[member]]\nname = \"bob\"\nsandbox = true\nsandbox_network = \"none\"\ncommand = [\"sleep\", \"1000\"]\n",
    );
    eventually("bob to run", || {
        sandbox.member("fs", "bob")["state"] == "running"
    });
    let bob = sandbox.status_row("fs", "bob");
    assert_eq!(bob["sandbox"]["network"], "none", "{bob:#}");
    assert_eq!(sandbox.status_row("fs", "alice").get("sandbox"), None);
    let table = sandbox
        .swarm()
        .args(["status", "fs"])
        .run()
        .success()
        .stdout;
    let header = table.lines().nth(1).unwrap();
    assert!(header.contains("FENCED"), "{table}");
    let column = header.find("FENCED").unwrap();
    let cell = |name: &str| {
        let line = table.lines().find(|l| l.starts_with(name)).unwrap();
        line[column..].split("  ").next().unwrap().trim().to_owned()
    };
    assert_eq!(cell("bob"), "yes, no network", "{table}");
    assert_eq!(cell("alice"), "no", "{table}");
    crate::top::open_top(team.server(), "dash", "fs", 120, 30);
    crate::top::shows(team.server(), "dash", "top marks bob", "bob [fenced]");
    assert!(!crate::top::screen(team.server(), "dash").contains("alice [fenced]"));
    let supervisor = sandbox.member("fs", "bob")["supervisorPid"]
        .as_i64()
        .unwrap();
    let socket = sandbox
        .root()
        .join(format!("run/swarm/fence-{supervisor}.sock"));
    assert!(socket.exists(), "{}", socket.display());
    sandbox
        .swarm()
        .env("SWARM_SUPERVISOR_SOCKET", &socket)
        .args(["send", "team-lead", "forged as bob"])
        .run()
        .refused_exactly(
            2,
            "swarm: this socket serves only the processes of bob's sandbox\n",
        );
    assert!(sandbox.inbox("fs", "team-lead").is_empty());
}

/// Where bubblewrap is missing, or cannot make a sandbox, `up` refuses a fenced member with one
/// line that says what is missing, before anything is made: never silently unfenced.
#[test]
fn up_refuses_a_fence_it_cannot_build() {
    let mut sandbox = Sandbox::new();
    let toml = "name = \"fr\"\n[[member]]\nname = \"bob\"\nsandbox = true\ncommand = [\"sleep\", \"1000\"]\n";
    let file = sandbox.write("fr.toml", toml);
    // No bwrap on PATH: only an empty folder.
    let empty = sandbox.root().join("empty");
    fs::create_dir_all(&empty).unwrap();
    sandbox
        .swarm()
        .env("PATH", &empty)
        .arg("up")
        .arg(&file)
        .run()
        .refused_exactly(
            2,
            "swarm: sandbox = true cannot be honoured: bubblewrap (bwrap) is not on PATH\n\
             hint: install bubblewrap (Debian: apt-get install bubblewrap), or leave sandbox out to run the member unfenced\n",
        );
    assert!(!sandbox.team_dir("fr").exists());
    // A kernel without unprivileged user namespaces: bwrap says so and fails.
    sandbox.shim(
        "bwrap",
        "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n",
    );
    sandbox
        .swarm()
        .arg("up")
        .arg(&file)
        .run()
        .refused(
            2,
            "sandbox = true cannot be honoured: bwrap cannot make a sandbox here (user namespaces off in the kernel?): bwrap: No permissions to creating new namespace",
        );
    assert!(!sandbox.team_dir("fr").exists());
}

/// A loopback TCP server the test runs outside every sandbox: it answers each connection with
/// one HTTP response naming `name`, and counts the connections it took.
fn web_server(name: &'static str) -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let taken = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&taken);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            let body = format!("hello from {name}");
            let _ = write!(
                stream,
                "HTTP/1.0 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (port, taken)
}

/// `sandbox_network = ["host:port", …]`: the fenced member's program reaches a listed server
/// (outside its sandbox, on the host's loopback) through its supervisor's proxy, by HTTP CONNECT,
/// a plain proxied request and SOCKS5; a server the list does not name is refused (403, told in
/// the event stream) and never sees a connection; and nothing connects without the proxy.
#[test]
fn an_allow_listed_member_reaches_only_the_listed_hosts_through_the_proxy() {
    if !bwrap_runs() || !require("curl") {
        return;
    }
    let sandbox = Sandbox::new();
    let root = sandbox.root().to_path_buf();
    let (listed, listed_taken) = web_server("listed");
    let (unlisted, unlisted_taken) = web_server("unlisted");
    let through = "env NO_PROXY= no_proxy= curl -sS --max-time 20";
    let script = attacker(
        &sandbox,
        &[
            (
                "proxy-vars",
                "case \"$HTTPS_PROXY $http_proxy $ALL_PROXY $NO_PROXY\" in \
                 'http://127.0.0.1:'*' http://127.0.0.1:'*' socks5h://127.0.0.1:'*' localhost,127.0.0.1,::1') ;; *) exit 1 ;; esac",
            ),
            (
                "connect",
                &format!("{through} -p -o connect.txt http://127.0.0.1:$LISTED/"),
            ),
            (
                "plain",
                &format!("{through} -o plain.txt http://127.0.0.1:$LISTED/"),
            ),
            (
                "socks",
                &format!("{through} -o socks.txt --proxy \"$ALL_PROXY\" http://127.0.0.1:$LISTED/"),
            ),
            (
                "unlisted",
                &format!("{through} -p http://127.0.0.1:$UNLISTED/"),
            ),
            (
                "unlisted-plain",
                &format!("{through} --fail-with-body -o unlisted.txt http://127.0.0.1:$UNLISTED/"),
            ),
            (
                "unlisted-socks",
                &format!("{through} --proxy \"$ALL_PROXY\" http://127.0.0.1:$UNLISTED/"),
            ),
            (
                "by-another-name",
                &format!("{through} -p http://localhost:$LISTED/"),
            ),
            (
                "direct",
                "curl -sS --max-time 20 --noproxy '*' http://127.0.0.1:$LISTED/",
            ),
            (
                "direct-socket",
                "python3 -c 'import socket,sys; socket.create_connection((\"127.0.0.1\", int(sys.argv[1])), 5)' \"$LISTED\"",
            ),
        ],
    );
    let toml = format!(
        r#"name = "fn"
cwd = "{root}"
[[member]]
name = "bob"
sandbox = true
sandbox_network = ["127.0.0.1:{listed}"]
command = ["sh", "{script}"]
env = {{ GO = "{work}/go", RESULTS = "{work}/bob-results" }}
"#,
        root = root.display(),
        work = sandbox.work().display(),
    );
    let _team = Team::up(&sandbox, &toml);
    eventually("bob to run", || {
        sandbox.member("fn", "bob")["state"] == "running"
    });
    go(
        &sandbox,
        &[
            ("LISTED", &listed.to_string()),
            ("UNLISTED", &unlisted.to_string()),
        ],
    );
    let results = attack_results(&sandbox, "bob-results");
    for allowed in ["proxy-vars", "connect", "plain", "socks"] {
        assert_eq!(results[allowed], 0, "{allowed}: {results:?}");
    }
    for (file, what) in [
        ("connect.txt", "CONNECT"),
        ("plain.txt", "GET"),
        ("socks.txt", "SOCKS5"),
    ] {
        assert_eq!(
            fs::read_to_string(root.join(file)).unwrap(),
            "hello from listed",
            "through the proxy by {what}"
        );
    }
    for refused in [
        "unlisted",
        "unlisted-plain",
        "unlisted-socks",
        "by-another-name",
        "direct",
        "direct-socket",
    ] {
        assert_ne!(results[refused], 0, "{refused} got through: {results:?}");
    }
    // The plain request was answered 403 by the proxy, not by the server.
    assert!(
        fs::read_to_string(root.join("unlisted.txt"))
            .unwrap()
            .contains("is not on this member's allow-list"),
    );
    assert_eq!(
        unlisted_taken.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the unlisted server was reached"
    );
    assert_eq!(listed_taken.load(std::sync::atomic::Ordering::SeqCst), 3);
    let refused_target = format!("127.0.0.1:{unlisted}");
    eventually("the refusal to reach the event stream", || {
        let events = sandbox
            .swarm()
            .args(["events", "fn", "--json"])
            .run()
            .success()
            .stdout;
        events.lines().any(|line| {
            let event: Value = serde_json::from_str(line).unwrap();
            event["kind"] == "net-refused"
                && event["member"] == "bob"
                && event["target"] == refused_target.as_str()
        })
    });
    assert_eq!(
        sandbox.status_row("fn", "bob")["sandbox"]["network"],
        serde_json::json!([format!("127.0.0.1:{listed}")])
    );
}

/// An allow-list entry that is not `host:port` is refused at `up`, and by `spawn`, with one
/// line naming the key and the entry, before anything is made.
#[test]
fn a_bad_allow_list_entry_is_refused_at_up_and_spawn() {
    let sandbox = Sandbox::new();
    let listed = sandbox.write(
        "fl.toml",
        "name = \"fl\"\n[[member]]\nname = \"bob\"\nsandbox = true\nsandbox_network = [\"example.com:443\", \"example.com\"]\ncommand = [\"true\"]\n",
    );
    let refusal = sandbox.swarm().arg("up").arg(&listed).run().refused(
        2,
        "sandbox_network of bob: \"example.com\" is not host:port (no port)",
    );
    assert_eq!(refusal.stderr.lines().count(), 1, "{}", refusal.stderr);
    assert!(!sandbox.team_dir("fl").exists());
    sandbox
        .swarm()
        .args(["init"])
        .arg(sandbox.write("fs.toml", "name = \"fs\"\n"))
        .run()
        .success();
    sandbox
        .swarm()
        .args([
            "--team",
            "fs",
            "spawn",
            "bob",
            "--sandbox",
            "--sandbox-network",
            "pypi.org:443,files.pythonhosted.org:0",
            "--",
            "true",
        ])
        .run()
        .refused(
            2,
            "\"files.pythonhosted.org:0\" is not host:port (the port is a number from 1 to 65535)",
        );
    assert!(
        !sandbox.config("fs")["members"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["name"] == "bob")
    );
}

/// `up --dry-run` shows a fenced member's command as it will run: bubblewrap's argv around its
/// program, and with an allow-list the bridge that starts it behind the proxy; an unfenced
/// member's as it is.
#[test]
fn up_dry_run_shows_the_sandbox_a_fenced_member_runs_in() {
    if !bwrap_runs() {
        return;
    }
    let sandbox = Sandbox::new();
    let file = sandbox.write(
        "fd.toml",
        "name = \"fd\"\n[[member]]\nname = \"bob\"\nsandbox = true\nsandbox_network = [\"example.com:443\"]\ncommand = [\"sleep\", \"1000\"]\n\
         [[member]]\nname = \"carol\"\nsandbox = true\nsandbox_network = \"none\"\ncommand = [\"sleep\", \"1000\"]\n\
         [[member]]\nname = \"alice\"\ncommand = [\"sleep\", \"1000\"]\n",
    );
    let panes = sandbox.planned_panes(&file);
    let argv = |name: &str| -> Vec<String> {
        serde_json::from_value(panes[name]["argv"].clone()).unwrap()
    };
    let bob = argv("bob");
    assert_eq!(bob[0], "bwrap", "{bob:?}");
    for flag in [
        "--unshare-pid",
        "--unshare-net",
        "--cap-drop",
        "fence-bridge",
    ] {
        assert!(bob.iter().any(|a| a == flag), "{flag} missing: {bob:?}");
    }
    assert_eq!(bob[bob.len() - 2..], ["sleep", "1000"], "{bob:?}");
    // Fenced without network: bubblewrap's argv, and the program straight after it.
    let carol = argv("carol");
    assert_eq!(carol[0], "bwrap", "{carol:?}");
    assert!(carol.iter().any(|a| a == "--unshare-net"), "{carol:?}");
    assert!(!carol.iter().any(|a| a == "fence-bridge"), "{carol:?}");
    let program = carol.iter().position(|a| a == "--").unwrap();
    assert_eq!(carol[program + 1..], ["sleep", "1000"], "{carol:?}");
    assert_eq!(argv("alice"), ["sleep", "1000"]);
    let text = sandbox
        .swarm()
        .args(["up", "--dry-run"])
        .arg(&file)
        .run()
        .success()
        .stdout;
    assert!(
        text.contains("argv          bwrap --die-with-parent"),
        "{text}"
    );
}

/// The processes whose parent is `parent` and whose command line holds `word`.
fn children_running(parent: i64, word: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let stat = fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // The parent is the second field after the command's closing parenthesis.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|field| field.parse::<i64>().ok());
        let cmdline = fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if ppid == Some(parent) && String::from_utf8_lossy(&cmdline).contains(word) {
            found.push(pid);
        }
    }
    found
}

/// A command a fenced member runs through its supervisor ends when the member's `swarm` does:
/// `swarm recv --wait`, killed inside the sandbox, leaves nothing waiting outside it.
#[test]
fn a_forwarded_command_ends_with_the_fenced_swarm_that_asked() {
    if !bwrap_runs() {
        return;
    }
    let sandbox = Sandbox::new();
    let root = sandbox.root().to_path_buf();
    let script = sandbox.write(
        "waiter.sh",
        "swarm recv --wait & echo $! > waiter.pid\n\
         while [ ! -f work/stop ]; do sleep 0.05; done\n\
         kill \"$(cat waiter.pid)\"\nexec sleep 1000\n",
    );
    let _team = Team::up(
        &sandbox,
        &format!(
            "name = \"fk\"\ncwd = \"{root}\"\n[[member]]\nname = \"bob\"\nsandbox = true\ncommand = [\"sh\", \"{script}\"]\n",
            root = root.display(),
            script = script.display(),
        ),
    );
    eventually("bob to run", || {
        sandbox.member("fk", "bob")["state"] == "running"
    });
    let supervisor = sandbox.member("fk", "bob")["supervisorPid"]
        .as_i64()
        .unwrap();
    eventually("the supervisor to run bob's recv", || {
        !children_running(supervisor, "recv").is_empty()
    });
    fs::write(sandbox.work().join("stop"), "").unwrap();
    eventually("bob's recv to end with the swarm that asked", || {
        children_running(supervisor, "recv").is_empty()
    });
    assert_eq!(sandbox.member("fk", "bob")["state"], "running");
}
