//! Alerts (docs/ARCHITECTURE.md, "Alerts"): `[notify]` sends one alert per member per change,
//! from the team's event stream, through the signing agent: a webhook (retried after a 500), a
//! desktop notification, a command with the alert on stdin, the team window's flag. Bad keys are
//! refused at `up`; a webhook's secret is never shown.

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::Value;

use crate::harness::{Sandbox, Team, eventually, sandbox_processes, state, watches};

/// A loopback HTTP server on a thread of the test: each POST's body is passed on; the first is
/// answered 500, the rest 200.
fn webhook_server() -> (String, Receiver<Value>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}/hooks/T0/secret-token",
        listener.local_addr().unwrap().port()
    );
    let (sender, bodies) = mpsc::channel();
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            let mut line = String::new();
            let mut request_line = String::new();
            reader.read_line(&mut request_line).unwrap();
            loop {
                line.clear();
                reader.read_line(&mut line).unwrap();
                if line == "\r\n" || line.is_empty() {
                    break;
                }
                if let Some((name, value)) = line.split_once(':')
                    && name.eq_ignore_ascii_case("content-length")
                {
                    length = value.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            assert!(
                request_line.starts_with("POST /hooks/T0/secret-token "),
                "{request_line}"
            );
            let status = if n == 0 {
                "500 Internal Server Error"
            } else {
                "200 OK"
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            let _ = sender.send(serde_json::from_slice(&body).unwrap());
        }
    });
    (url, bodies)
}

/// The pid of the sandbox's signing agent.
fn agent(sandbox: &Sandbox) -> u32 {
    let mut found = None;
    eventually("the signing agent to run", || {
        found = sandbox_processes(sandbox.root()).into_iter().find(|pid| {
            fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|line| line.split(|b| *b == 0).any(|arg| arg == b"key-agent"))
        });
        found.is_some()
    });
    u32::try_from(found.unwrap()).unwrap()
}

#[test]
fn each_change_alerts_once_every_way_notify_names() {
    let mut sandbox = Sandbox::new();
    let (url, posts) = webhook_server();
    let desktop = sandbox.root().join("desktop.txt");
    sandbox.shim(
        "notify-send",
        &format!(
            "#!/bin/sh\nprintf '%s|' \"$@\" >> {}\necho >> {0}\n",
            desktop.display()
        ),
    );
    let commanded = sandbox.root().join("commanded.jsonl");
    // The person's own file: its webhook gives way to the team file's, its command is kept.
    sandbox.write(
        "../home-config/swarm/notify.toml",
        format!(
            "webhook = \"https://unused.example/x\"\ncommand = [\"sh\", \"-c\", \"cat >> {}\"]\n",
            commanded.display()
        ),
    );
    let config_home = sandbox.root().join("home-config");
    sandbox.set_env("XDG_CONFIG_HOME", config_home);
    let go = sandbox.work().join("go");
    let toml = format!(
        r#"name = "al"
[notify]
desktop = true
webhook = "{url}"
[[member]]
name = "bob"
command = ["sh", "-c", "while [ ! -e go ]; do sleep 0.1; done; exit 3"]
[[member]]
name = "carol"
command = ["sh", "-c", "while [ ! -e go2 ]; do sleep 0.1; done; swarm permission ask Bash --input '{{\"command\": \"make\"}}'"]
"#
    );
    let team = Team::up(&sandbox, &toml);
    let window = sandbox.config("al")["tmux"]["window"]
        .as_str()
        .unwrap()
        .to_owned();
    let agent = agent(&sandbox);
    eventually("the alerts to follow the team's stream", || {
        watches(agent, &sandbox.team_dir("al"))
    });
    fs::write(&go, "").unwrap();

    // bob failed: the webhook answered 500 once, and had the same alert again.
    let patience = Duration::from_secs(30);
    let first = posts.recv_timeout(patience).expect("a webhook for bob");
    assert_eq!(first["alert"], "failed");
    assert_eq!(first["team"], "al");
    assert_eq!(first["text"], "bob failed");
    assert_eq!(first["event"]["member"], "bob");
    assert_eq!(first["event"]["state"], "failed");
    assert_eq!(posts.recv_timeout(patience).expect("the retry"), first);

    // carol asks: one alert, and the window names her until the answer.
    fs::write(sandbox.work().join("go2"), "").unwrap();
    let asked = posts.recv_timeout(patience).expect("a webhook for carol");
    assert_eq!(asked["alert"], "needs-you");
    assert_eq!(
        asked["text"],
        "carol asks to use Bash - swarm permission list"
    );
    assert_eq!(asked["event"]["kind"], "asked");
    eventually("the window to name carol", || {
        team.server().window_option(&window, "@swarm-needs-you") == "carol"
    });
    let request = asked["event"]["requestId"].as_str().unwrap();
    sandbox
        .swarm()
        .args(["permission", "allow", request])
        .team("al")
        .run()
        .success();
    eventually("carol to end", || {
        state(&sandbox, "al", "carol") == "exited"
    });

    let done = posts
        .recv_timeout(patience)
        .expect("a webhook for the team's end");
    assert_eq!(done["alert"], "done");
    assert_eq!(done["text"], "every member has ended");
    assert!(done["event"].get("member").is_none(), "{done}");
    eventually("the window's flag to clear", || {
        team.server()
            .window_option(&window, "@swarm-needs-you")
            .is_empty()
    });
    assert!(
        posts.recv_timeout(Duration::from_secs(2)).is_err(),
        "nothing changed after the team ended, so nothing more is sent"
    );

    eventually("three desktop alerts", || {
        fs::read_to_string(&desktop).is_ok_and(|text| text.lines().count() == 3)
    });
    assert_eq!(
        fs::read_to_string(&desktop).unwrap(),
        "--app-name=swarm|swarm al|bob failed|\n\
         --app-name=swarm|swarm al|carol asks to use Bash - swarm permission list|\n\
         --app-name=swarm|swarm al|every member has ended|\n"
    );
    eventually("three alerts on the command's stdin", || {
        fs::read_to_string(&commanded).is_ok_and(|text| text.lines().count() == 3)
    });
    let mut kinds: Vec<String> = fs::read_to_string(&commanded)
        .unwrap()
        .lines()
        .map(|line| {
            serde_json::from_str::<Value>(line).unwrap()["alert"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    kinds.sort();
    assert_eq!(kinds, ["done", "failed", "needs-you"]);
}

#[test]
fn bad_notify_keys_are_refused_at_up_and_a_webhooks_secret_is_never_shown() {
    let sandbox = Sandbox::new();
    let team = |notify: &str| {
        format!(
            "name = \"nk\"\n[notify]\n{notify}\n[[member]]\nname = \"bob\"\ncommand = [\"true\"]\n"
        )
    };
    let file = sandbox.write(
        "nk.toml",
        team("webhook = \"https://hooks.example/services/T0/B0/secret-token\"\nformat = \"slack\""),
    );
    let shown = sandbox
        .swarm()
        .args(["up", "--dry-run"])
        .arg(&file)
        .run()
        .success()
        .stdout;
    assert!(
        shown.contains("alerts: bell, webhook https://hooks.example/<masked> (slack); on needs-you, stalled, failed, done, cost\n"),
        "{shown}"
    );
    assert!(!shown.contains("secret-token"), "{shown}");
    let json = sandbox
        .swarm()
        .args(["up", "--dry-run", "--json"])
        .arg(&file)
        .run()
        .success()
        .json();
    assert_eq!(
        json["notify"],
        "bell, webhook https://hooks.example/<masked> (slack); on needs-you, stalled, failed, done, cost"
    );

    let refused = |notify: &str| {
        let file = sandbox.write("nk.toml", team(notify));
        let refusal = sandbox
            .swarm()
            .arg("up")
            .arg(&file)
            .run()
            .refused(2, "")
            .refusal();
        (file, refusal)
    };
    let (_, refusal) = refused("bel = true");
    assert!(refusal.contains("unknown field `bel`"), "{refusal}");
    let (bad_url, refusal) = refused("webhook = \"ftp://host/secret-token\"");
    assert!(
        refusal.starts_with(&format!(
            "swarm: {}: notify webhook ftp://host/<masked> is not an http:// or https:// URL",
            bad_url.display()
        )),
        "{refusal}"
    );
    assert!(!refusal.contains("secret-token"), "{refusal}");
    assert!(!sandbox.team_dir("nk").exists(), "nothing was made");
}

/// Without a runnable `notify-send`, a desktop alert is OSC 9, written to the terminal of each
/// client attached to the team's session: a real tmux client, attached on a pseudo-terminal the
/// test reads.
#[test]
fn without_notify_send_a_desktop_alert_reaches_the_attached_terminal_as_osc_9() {
    use std::os::unix::fs::PermissionsExt;
    let mut sandbox = Sandbox::new();
    sandbox.set_env("XDG_CONFIG_HOME", sandbox.root().join("home-config"));
    // Found first on PATH, but not runnable: the terminal's turn.
    let shim = sandbox.shim("notify-send", "#!/bin/sh\nexit 0\n");
    fs::set_permissions(&shim, fs::Permissions::from_mode(0o644)).unwrap();
    let go = sandbox.work().join("go");
    let team = Team::up(
        &sandbox,
        r#"name = "os"
[notify]
desktop = true
[[member]]
name = "carol"
command = ["sh", "-c", "while [ ! -e go ]; do sleep 0.1; done; swarm permission ask Bash --input '{\"command\": \"make\"}'"]
"#,
    );
    let session = sandbox.config("os")["tmux"]["session"]
        .as_str()
        .unwrap()
        .to_owned();
    // A client attached on a terminal of the test's: what is written to its tty, the test reads.
    let pty = nix::pty::openpty(None, None).unwrap();
    let slave = || std::process::Stdio::from(pty.slave.try_clone().unwrap());
    let mut client = std::process::Command::new("tmux")
        .arg("-S")
        .arg(team.server().socket())
        .args(["attach-session", "-t", &session])
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .env("TERM", "xterm-256color")
        .stdin(slave())
        .stdout(slave())
        .stderr(slave())
        .spawn()
        .unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
    {
        let seen = std::sync::Arc::clone(&seen);
        let mut master = fs::File::from(pty.master);
        std::thread::spawn(move || {
            let mut buffer = [0; 4096];
            while let Ok(read) = master.read(&mut buffer) {
                if read == 0 {
                    break;
                }
                seen.lock().unwrap().extend_from_slice(&buffer[..read]);
            }
        });
    }
    eventually("the client to be attached", || {
        team.server()
            .run(&["list-clients", "-F", "#{client_tty}"])
            .contains("/dev/pts/")
    });
    let agent = agent(&sandbox);
    eventually("the alerts to follow the team's stream", || {
        watches(agent, &sandbox.team_dir("os"))
    });
    fs::write(&go, "").unwrap();
    let expected = b"\x1b]9;swarm os: carol asks to use Bash - swarm permission list\x07";
    eventually("the OSC 9 alert on the client's terminal", || {
        seen.lock()
            .unwrap()
            .windows(expected.len())
            .any(|window| window == expected)
    });
    let _ = client.kill();
    let _ = client.wait();
}
