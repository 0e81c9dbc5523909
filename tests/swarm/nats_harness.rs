//! The parts a test across machines needs: a private `nats-server` with JetStream on loopback,
//! and `swarm node` processes, each killed when dropped. A "host" is a [`Sandbox`] of its own (its
//! own home and tmux server) with a node; several hosts share one server, as on a real network.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

use crate::harness::{LEAD, PATIENCE, Sandbox, TmuxServer, bin};

/// How a test server wants clients to log in.
#[derive(Clone, Debug)]
pub(crate) enum ServerAuth {
    None,
    Token(String),
    UserPassword(String, String),
}

/// A private `nats-server -js` on a free loopback port, its storage in a temp dir that outlives
/// restarts; SIGKILLed when dropped.
pub(crate) struct NatsServer {
    child: Option<Child>,
    port: u16,
    store: TempDir,
    auth: ServerAuth,
}

impl NatsServer {
    pub(crate) fn start() -> Self {
        Self::start_with(ServerAuth::None)
    }

    pub(crate) fn start_with(auth: ServerAuth) -> Self {
        let store = tempfile::Builder::new()
            .prefix("nats")
            .tempdir_in("/tmp")
            .unwrap();
        let mut server = Self {
            child: None,
            port: free_port(),
            store,
            auth,
        };
        server.launch();
        server
    }

    /// `nats://127.0.0.1:<port>`.
    pub(crate) fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.as_ref().expect("the server is running").id()
    }

    /// SIGKILLs the server: no goodbye to its clients, nothing flushed that was not synced.
    pub(crate) fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port with the same storage.
    pub(crate) fn restart(&mut self) {
        self.kill();
        self.launch();
    }

    fn launch(&mut self) {
        let mut command = Command::new("nats-server");
        command
            .args([
                "-js",
                "-a",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-sd",
            ])
            .arg(self.store.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        match &self.auth {
            ServerAuth::None => {}
            ServerAuth::Token(token) => {
                command.args(["--auth", token]);
            }
            ServerAuth::UserPassword(user, password) => {
                command.args(["--user", user, "--pass", password]);
            }
        }
        let mut child = command.spawn().expect(
            "nats-server must be installed to run these tests (apt-get install nats-server)",
        );
        // The server says "Server is ready" once it listens with JetStream up.
        let stderr = child.stderr.take().unwrap();
        let (ready, wait) = std::sync::mpsc::channel();
        thread::spawn(move || {
            let mut said = false;
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if !said && line.contains("Server is ready") {
                    let _ = ready.send(());
                    said = true;
                }
            }
        });
        if wait.recv_timeout(PATIENCE).is_err() {
            let _ = child.kill();
            panic!("nats-server on port {} did not become ready", self.port);
        }
        assert!(TcpStream::connect(("127.0.0.1", self.port)).is_ok());
        self.child = Some(child);
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A port nothing listens on right now.
pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `swarm node --name <host>` for one sandbox, killed when dropped. What it prints goes to
/// `<sandbox>/node-<host>.log`, kept across restarts, for a failing test to show.
pub(crate) struct Node {
    child: Option<Child>,
    host: String,
    home: PathBuf,
    log: PathBuf,
    /// The sandbox's environment and directory, with the server's URL added.
    template: Command,
    /// Global options before `node` (`-q`).
    global: Vec<String>,
}

impl Node {
    /// Starts the node of `sandbox` against `url` and waits until it says it is connected.
    pub(crate) fn start(sandbox: &Sandbox, host: &str, url: &str) -> Self {
        let node = Self::spawn(sandbox, host, url);
        node.wait_connected(true);
        node
    }

    /// Starts it without waiting for anything.
    pub(crate) fn spawn(sandbox: &Sandbox, host: &str, url: &str) -> Self {
        Self::spawn_with(sandbox, host, url, &[])
    }

    /// Starts `swarm <global>... node`, without waiting for anything.
    pub(crate) fn spawn_with(sandbox: &Sandbox, host: &str, url: &str, global: &[&str]) -> Self {
        let mut template = sandbox.swarm().into_command();
        template.env("SWARM_NATS_URL", url);
        let mut node = Self {
            child: None,
            host: host.to_owned(),
            home: sandbox.home(),
            log: sandbox.root().join(format!("node-{host}.log")),
            template,
            global: global.iter().map(|arg| (*arg).to_owned()).collect(),
        };
        node.launch();
        node
    }

    fn launch(&mut self) {
        let mut command = Command::new(bin());
        command.env_clear();
        for (key, value) in self.template.get_envs() {
            if let Some(value) = value {
                command.env(key, value);
            }
        }
        if let Some(dir) = self.template.get_current_dir() {
            command.current_dir(dir);
        }
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .unwrap();
        command
            .args(&self.global)
            .args(["node", "--name", &self.host])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log);
        self.child = Some(command.spawn().unwrap());
    }

    /// What the node printed so far, over all its runs.
    pub(crate) fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.as_ref().expect("the node is running").id()
    }

    /// What `node/node.json` says now.
    pub(crate) fn record(&self) -> Option<Value> {
        let bytes = std::fs::read(self.home.join("node/node.json")).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Waits until the node's record says it is (or is not) connected, as this process.
    #[track_caller]
    pub(crate) fn wait_connected(&self, connected: bool) {
        let pid = i64::from(self.pid());
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(record) = self.record()
                && record["pid"].as_i64() == Some(pid)
                && record["connected"].as_bool() == Some(connected)
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "node {} never recorded connected={connected}; its record: {:?}; it printed:\n{}",
                self.host,
                self.record(),
                self.output()
            );
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILLs the node.
    pub(crate) fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again, as systemd would after a crash, and waits until it is connected.
    pub(crate) fn restart(&mut self) {
        self.kill();
        self.launch();
        self.wait_connected(true);
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One host: its home, its tmux server (started by the first team placed on it) and its node.
pub(crate) struct Host {
    pub(crate) sandbox: Sandbox,
    pub(crate) tmux: TmuxServer,
    pub(crate) node: Node,
}

impl Host {
    pub(crate) fn start(name: &str, server: &NatsServer) -> Self {
        Self::start_with(name, server, &[])
    }

    pub(crate) fn start_with(name: &str, server: &NatsServer, env: &[(&str, &str)]) -> Self {
        let mut sandbox = Sandbox::new();
        let tmux = TmuxServer::unstarted(&sandbox);
        // The node places its members on this host's private server, as `up --socket` does.
        sandbox.set_env("SWARM_TMUX_SOCKET", tmux.socket());
        for (key, value) in env {
            sandbox.set_env(key, *value);
        }
        let node = Node::start(&sandbox, name, &server.url());
        Self {
            sandbox,
            tmux,
            node,
        }
    }

    /// `swarm status --json` of the team, here.
    pub(crate) fn status(&self, team: &str) -> Value {
        self.sandbox
            .swarm()
            .args(["status", team, "--json"])
            .run()
            .success()
            .json()
    }

    /// A member's row in this host's `status --json`.
    pub(crate) fn row(&self, team: &str, name: &str) -> Value {
        self.sandbox.status_row(team, name)
    }

    pub(crate) fn shows(&self, team: &str, name: &str, state: &str) -> bool {
        self.row(team, name)["state"] == state
    }

    /// Polls `condition` like `eventually`, showing what every node printed if it never holds.
    #[track_caller]
    pub(crate) fn until(hosts: &[&Self], what: &str, mut condition: impl FnMut() -> bool) {
        let deadline = Instant::now() + PATIENCE;
        while !condition() {
            if Instant::now() > deadline {
                let said: Vec<String> = hosts.iter().map(|host| host.node.output()).collect();
                panic!(
                    "timed out waiting for {what}; the nodes printed:\n{}",
                    said.join("\n")
                );
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    pub(crate) fn panes(&self) -> Vec<String> {
        self.tmux.panes_if_running()
    }

    /// `swarm up` of team file `toml` here, on this host's tmux server and NATS server.
    pub(crate) fn up(&self, name: &str, toml: &str) {
        let file = self.sandbox.write(&format!("{name}.toml"), toml);
        self.sandbox
            .swarm()
            .arg("up")
            .arg(file)
            .arg("--socket")
            .arg(self.tmux.socket())
            .env(
                "SWARM_NATS_URL",
                self.node.record().unwrap()["url"].as_str().unwrap(),
            )
            .run()
            .success();
    }
}

/// Whether any process still runs with `pid`.
pub(crate) fn alive(pid: i64) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// A team with a lead on host A and `bob` on host B running `command`.
pub(crate) fn team_file(name: &str, command: &str, extra: &str) -> String {
    format!(
        "name = \"{name}\"\n{extra}\n{LEAD}\n[[member]]\nname = \"bob\"\nhost = \"hostb\"\ncommand = [\"sh\", \"-c\", {command:?}]\n"
    )
}

/// One NATS request over the plain protocol, for what swarm itself would never ask.
pub(crate) fn request(port: u16, subject: &str, payload: &str) -> String {
    let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    let mut line = String::new();
    reader.read_line(&mut line).unwrap(); // INFO
    write!(
        writer,
        "CONNECT {{\"verbose\":false,\"headers\":true}}\r\nSUB _INBOX.t 1\r\nPUB {subject} _INBOX.t {}\r\n{payload}\r\n",
        payload.len()
    )
    .unwrap();
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        if line.starts_with("MSG") {
            line.clear();
            reader.read_line(&mut line).unwrap();
            return line;
        }
        if line.starts_with("PING") {
            writer.write_all(b"PONG\r\n").unwrap();
        }
    }
}
