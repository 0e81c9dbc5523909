//! The test harness: every test gets its own directory, home and runtime dir, and runs the real
//! binary with a scrubbed environment (no TMUX, no TMUX_PANE, no SWARM_* from the developer's shell).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

#[path = "skip.rs"]
mod skip;
#[allow(
    unused_imports,
    reason = "the conformance tier includes the harness and skips nothing"
)]
pub(crate) use skip::{require, skip};

/// Generous enough for a loaded 2-core machine; tests never assert how fast something was.
pub(crate) const PATIENCE: Duration = Duration::from_secs(60);

pub(crate) fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_swarm")
}

/// 2026-01-01T00:00:00Z: invocation n of a [`Sandbox::deterministic`] runs at this time + n s.
pub(crate) const FIXED_EPOCH_MS: u64 = 1_767_225_600_000;

/// An isolated directory with a swarm home in it. Dropped, it kills every process of its own
/// ([`sandbox_processes`]) before it removes the directory, so nothing still running writes there
/// again, and a directory it cannot remove fails the test.
pub(crate) struct Sandbox {
    /// `None` only while it is dropped.
    dir: Option<TempDir>,
    env: BTreeMap<String, OsString>,
    /// Invocations so far, counted only in a deterministic sandbox.
    invocations: Option<AtomicU64>,
}

impl Sandbox {
    /// A sandbox whose `swarm` invocations each get a fixed clock and id seed of their own (the
    /// test hooks `SWARM_TEST_NOW` and `SWARM_TEST_ID_SEED`), as jj's tests do: invocation n runs
    /// at [`FIXED_EPOCH_MS`] + n seconds with seed n, so its output is the same on every run and
    /// no two invocations share an id. Processes swarm starts (panes, members) get neither.
    pub(crate) fn deterministic() -> Self {
        let mut sandbox = Self::new();
        sandbox.invocations = Some(AtomicU64::new(0));
        sandbox
    }

    pub(crate) fn new() -> Self {
        // Short prefix: tmux and peer sockets must fit in 108 bytes.
        let dir = tempfile::Builder::new()
            .prefix("sw")
            .tempdir_in("/tmp")
            .unwrap();
        let root = dir.path();
        for sub in ["home", "user", "run", "work"] {
            fs::create_dir_all(root.join(sub)).unwrap();
        }
        fs::set_permissions(
            root.join("run"),
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .unwrap();
        let mut env = BTreeMap::new();
        env.insert(
            "PATH".to_owned(),
            std::env::var_os("PATH").unwrap_or_default(),
        );
        env.insert("HOME".to_owned(), root.join("user").into_os_string());
        env.insert("SWARM_HOME".to_owned(), root.join("home").into_os_string());
        env.insert(
            "XDG_RUNTIME_DIR".to_owned(),
            root.join("run").into_os_string(),
        );
        env.insert("LANG".to_owned(), "C.UTF-8".into());
        env.insert("TERM".to_owned(), "xterm-256color".into());
        Self {
            dir: Some(dir),
            env,
            invocations: None,
        }
    }

    pub(crate) fn root(&self) -> &Path {
        self.dir.as_ref().expect("a sandbox being dropped").path()
    }

    /// The swarm home its commands use: `<root>/home`, unless a test set `SWARM_HOME`.
    pub(crate) fn home(&self) -> PathBuf {
        self.env
            .get("SWARM_HOME")
            .map_or_else(|| self.root().join("home"), PathBuf::from)
    }

    pub(crate) fn work(&self) -> PathBuf {
        self.root().join("work")
    }

    pub(crate) fn team_dir(&self, team: &str) -> PathBuf {
        self.home().join("teams").join(team)
    }

    pub(crate) fn inbox_path(&self, team: &str, member: &str) -> PathBuf {
        self.team_dir(team)
            .join("inboxes")
            .join(format!("{member}.json"))
    }

    /// The raw JSON array in an inbox file.
    pub(crate) fn inbox(&self, team: &str, member: &str) -> Vec<Value> {
        let text = fs::read_to_string(self.inbox_path(team, member)).unwrap();
        serde_json::from_str(&text)
            .unwrap_or_else(|err| panic!("inbox is not JSON ({err}): {text}"))
    }

    /// Rewrites an inbox the way Claude Code's writers do: in place, holding `<name>.json.lock`.
    pub(crate) fn write_inbox_as_claude(&self, team: &str, member: &str, messages: &[Value]) {
        self.rewrite_inbox_as_claude(team, member, |_| messages.to_vec());
    }

    /// Adds `messages` to an inbox the way Claude Code's writers do: read, add and write in place,
    /// all holding `<name>.json.lock`, so a reader consuming meanwhile loses nothing and gets
    /// nothing back.
    pub(crate) fn append_inbox_as_claude(&self, team: &str, member: &str, messages: &[Value]) {
        self.rewrite_inbox_as_claude(team, member, |mut unread| {
            unread.extend_from_slice(messages);
            unread
        });
    }

    fn rewrite_inbox_as_claude(
        &self,
        team: &str,
        member: &str,
        change: impl FnOnce(Vec<Value>) -> Vec<Value>,
    ) {
        let inbox = self.inbox_path(team, member);
        let lock = inbox.with_file_name(format!("{member}.json.lock"));
        eventually("the inbox lock directory to be free", || {
            fs::create_dir(&lock).is_ok()
        });
        let unread = if inbox.exists() {
            self.inbox(team, member)
        } else {
            Vec::new()
        };
        fs::write(&inbox, serde_json::to_vec_pretty(&change(unread)).unwrap()).unwrap();
        fs::remove_dir(&lock).unwrap();
    }

    pub(crate) fn config(&self, team: &str) -> Value {
        let text = fs::read_to_string(self.team_dir(team).join("config.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    pub(crate) fn member(&self, team: &str, name: &str) -> Value {
        let config = self.config(team);
        config["members"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} is not in {config:#}"))
    }

    /// The panes `swarm up --dry-run --json FILE` shows here, by name.
    pub(crate) fn planned_panes(&self, file: &Path) -> BTreeMap<String, Value> {
        let plan = self
            .swarm()
            .args(["up", "--dry-run", "--json"])
            .arg(file)
            .run()
            .success()
            .json();
        plan["panes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|pane| (pane["name"].as_str().unwrap().to_owned(), pane.clone()))
            .collect()
    }

    /// Member `name`'s row in `swarm status TEAM --json` here; `null` when it has none.
    pub(crate) fn status_row(&self, team: &str, name: &str) -> Value {
        let status = self
            .swarm()
            .args(["status", team, "--json"])
            .run()
            .success()
            .json();
        status["members"]
            .as_array()
            .unwrap()
            .iter()
            .find(|row| row["name"] == name)
            .cloned()
            .unwrap_or(Value::Null)
    }

    /// Writes a file under the sandbox's work directory and returns its path.
    pub(crate) fn write(&self, relative: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.work().join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, contents).unwrap();
        path
    }

    /// Sets a variable for every command of this sandbox.
    pub(crate) fn set_env(&mut self, key: &str, value: impl Into<OsString>) {
        self.env.insert(key.to_owned(), value.into());
    }

    pub(crate) fn env_value(&self, key: &str) -> Option<&OsString> {
        self.env.get(key)
    }

    /// Puts a program of the test's own first on the sandbox's PATH: `script` (a `#!` line and
    /// what follows) as `<root>/shims/<program>`, the one folder of every shim of the sandbox.
    pub(crate) fn shim(&mut self, program: &str, script: &str) -> PathBuf {
        let dir = self.shims();
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join(program);
        // The program is written by a process of its own: a file this one held open for writing
        // would be inherited, until its exec, by every child another test forks meanwhile, and
        // running the program then fails with ETXTBSY ("Text file busy").
        let source = self.root().join(format!("shim-{program}.src"));
        fs::write(&source, script).unwrap();
        let installed = Command::new("install")
            .args(["-m", "755"])
            .arg(&source)
            .arg(&file)
            .status()
            .unwrap();
        assert!(
            installed.success(),
            "cannot install shim {}",
            file.display()
        );
        let path = self.env_value("PATH").cloned().unwrap_or_default();
        if !std::env::split_paths(&path).any(|entry| entry == dir) {
            let path =
                std::env::join_paths(std::iter::once(dir).chain(std::env::split_paths(&path)))
                    .unwrap();
            self.set_env("PATH", path);
        }
        file
    }

    /// A `tmux` [shim](Sandbox::shim) that runs `before` (shell lines, `"$@"` being tmux's
    /// arguments), then execs the real tmux.
    pub(crate) fn tmux_shim(&mut self, before: &str) {
        let real = real_tmux(self);
        self.shim(
            "tmux",
            &format!("#!/bin/sh\n{before}exec {} \"$@\"\n", real.display()),
        );
    }

    fn shims(&self) -> PathBuf {
        self.root().join("shims")
    }

    /// The sandbox's PATH with this build's `swarm` first, as an installed one would be.
    pub(crate) fn path_with_swarm(&self) -> String {
        format!(
            "{}:{}",
            Path::new(bin()).parent().unwrap().display(),
            self.env_value("PATH")
                .map(|p| p.to_string_lossy())
                .unwrap_or_default()
        )
    }

    /// A `swarm` invocation with the sandbox's environment.
    pub(crate) fn swarm(&self) -> Swarm {
        let mut command = Command::new(bin());
        command.env_clear().envs(&self.env).current_dir(self.work());
        if let Some(invocations) = &self.invocations {
            let n = invocations.fetch_add(1, Ordering::Relaxed) + 1;
            command
                .env("SWARM_TEST_NOW", (FIXED_EPOCH_MS + n * 1000).to_string())
                .env("SWARM_TEST_ID_SEED", n.to_string());
        }
        Swarm {
            command,
            stdin: None,
        }
    }

    /// Another program with the sandbox's environment.
    pub(crate) fn command(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command.env_clear().envs(&self.env).current_dir(self.work());
        command
    }

    /// `swarm init` of a team with a lead and the given teammates, all generic.
    pub(crate) fn team(&self, name: &str, teammates: &[&str]) {
        use std::fmt::Write as _;
        let mut toml = format!("name = \"{name}\"\n");
        for teammate in teammates {
            let _ = writeln!(
                toml,
                "[[member]]\nname = \"{teammate}\"\ncommand = [\"true\"]"
            );
        }
        let file = self.write(&format!("{name}.toml"), toml);
        self.swarm().args(["init"]).arg(file).run().success();
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let Some(dir) = self.dir.take() else { return };
        let root = dir.path().to_owned();
        let ended = end_sandbox_processes(&root);
        let removed = dir.close();
        let trouble = match (ended, removed) {
            (Ok(()), Ok(())) => return,
            (Err(left), _) => format!(
                "sandbox {}: processes still running: {left:?}",
                root.display()
            ),
            (Ok(()), Err(err)) => format!("cannot remove sandbox {}: {err}", root.display()),
        };
        if thread::panicking() {
            eprintln!("{trouble}");
        } else {
            panic!("{trouble}");
        }
    }
}

/// SIGKILLs every process of the sandbox at `root` until none is left, the tmux servers among
/// them: what still runs when a test ends (a supervisor ending its member after its pane closed,
/// a lingering signing agent) would otherwise write into the directory after it was removed.
/// Gives back those still there after [`PATIENCE`].
fn end_sandbox_processes(root: &Path) -> Result<(), Vec<i32>> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let left = sandbox_processes(root);
        if left.is_empty() {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(left);
        }
        for pid in left {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        thread::sleep(Duration::from_millis(5));
    }
}

/// The live processes of the sandbox at `root`, this one aside: every process with a variable, its
/// working directory or an argument in the sandbox (its programs inherit `HOME`, `SWARM_HOME` and
/// `XDG_RUNTIME_DIR` from the sandbox), and every process in the session or group such a process
/// leads (a pane's program that cleared its environment and left the directory).
pub(crate) fn sandbox_processes(root: &Path) -> Vec<i32> {
    let own = nix::unistd::getpid().as_raw();
    let own_ids = ids_of(own).map_or((own, own), |(_, group, session)| (group, session));
    let root = root.to_string_lossy().into_owned();
    let under = format!("{root}/");
    let inside = |text: &str| text == root || text.contains(&under);
    let mut live: Vec<(i32, i32, i32, bool)> = Vec::new();
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    for entry in entries.filter_map(Result::ok) {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        if pid == own {
            continue;
        }
        let Some((state, group, session)) = ids_of(pid) else {
            continue;
        };
        if matches!(state, 'Z' | 'X') {
            continue;
        }
        let proc = entry.path();
        let strings = |file: &str| {
            fs::read(proc.join(file))
                .map(|bytes| {
                    bytes
                        .split(|b| *b == 0)
                        .map(|s| String::from_utf8_lossy(s).into_owned())
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        };
        let of_sandbox = strings("environ")
            .iter()
            .any(|var| var.split_once('=').is_some_and(|(_, value)| inside(value)))
            || fs::read_link(proc.join("cwd")).is_ok_and(|cwd| inside(&cwd.to_string_lossy()))
            || strings("cmdline").iter().any(|arg| inside(arg));
        live.push((pid, group, session, of_sandbox));
    }
    let leaders: Vec<i32> = live
        .iter()
        .filter(|(pid, group, session, of)| *of && (pid == group || pid == session))
        .map(|(pid, ..)| *pid)
        .filter(|pid| *pid != own_ids.0 && *pid != own_ids.1)
        .collect();
    live.iter()
        .filter(|(_, group, session, of)| {
            *of || leaders.contains(group) || leaders.contains(session)
        })
        .map(|(pid, ..)| *pid)
        .collect()
}

/// A process's state, process group and session, from `/proc/<pid>/stat`.
fn ids_of(pid: i32) -> Option<(char, i32, i32)> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name in parentheses may hold spaces and parentheses: fields follow the last ')'.
    let mut fields = stat.get(stat.rfind(')')? + 1..)?.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _parent = fields.next()?;
    let group = fields.next()?.parse().ok()?;
    let session = fields.next()?.parse().ok()?;
    Some((state, group, session))
}

/// A fluent builder for one run of the binary.
pub(crate) struct Swarm {
    command: Command,
    stdin: Option<Vec<u8>>,
}

impl Swarm {
    pub(crate) fn arg(mut self, arg: impl AsRef<std::ffi::OsStr>) -> Self {
        self.command.arg(arg);
        self
    }

    pub(crate) fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        self.command.args(args);
        self
    }

    /// Acts as member `name` (`SWARM_AGENT`).
    pub(crate) fn as_(self, name: &str) -> Self {
        self.env("SWARM_AGENT", name)
    }

    pub(crate) fn team(self, team: &str) -> Self {
        self.env("SWARM_TEAM", team)
    }

    pub(crate) fn env(mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> Self {
        self.command.env(key, value);
        self
    }

    pub(crate) fn env_remove(mut self, key: &str) -> Self {
        self.command.env_remove(key);
        self
    }

    pub(crate) fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.command.current_dir(dir);
        self
    }

    pub(crate) fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(bytes.into());
        self
    }

    pub(crate) fn run(mut self) -> Outcome {
        self.command
            .stdin(if self.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let description = format!("{:?}", self.command);
        let mut child = self
            .command
            .spawn()
            .unwrap_or_else(|err| panic!("cannot run {description}: {err}"));
        if let Some(bytes) = self.stdin.take() {
            let mut stdin = child.stdin.take().unwrap();
            thread::spawn(move || {
                let _ = stdin.write_all(&bytes);
            });
        }
        let output = wait_output(child, PATIENCE, &description);
        Outcome {
            description,
            status: output.0,
            stdout: output.1,
            stderr: output.2,
        }
    }

    /// Starts the command in the background with stdout piped, for commands that stream.
    pub(crate) fn spawn(mut self) -> Background {
        self.command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let description = format!("{:?}", self.command);
        let mut child = self.command.spawn().unwrap();
        let lines = LineReader::new(child.stdout.take().unwrap());
        Background {
            child: Some(child),
            lines,
            description,
        }
    }

    pub(crate) fn into_command(self) -> Command {
        self.command
    }
}

fn wait_output(
    mut child: Child,
    patience: Duration,
    description: &str,
) -> (ExitStatus, String, String) {
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = thread::spawn(move || {
        let mut text = Vec::new();
        let _ = stdout.read_to_end(&mut text);
        text
    });
    let err = thread::spawn(move || {
        let mut text = Vec::new();
        let _ = stderr.read_to_end(&mut text);
        text
    });
    let deadline = Instant::now() + patience;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{description} did not finish within {patience:?}");
        }
        thread::sleep(Duration::from_millis(5));
    };
    let stdout = String::from_utf8_lossy(&out.join().unwrap()).into_owned();
    let stderr = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
    (status, stdout, stderr)
}

/// What a finished run printed, with assertions that explain themselves on failure.
pub(crate) struct Outcome {
    pub(crate) description: String,
    pub(crate) status: ExitStatus,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Outcome {
    #[track_caller]
    pub(crate) fn success(self) -> Self {
        self.code(0)
    }

    #[track_caller]
    pub(crate) fn code(self, code: i32) -> Self {
        assert_eq!(
            self.status.code(),
            Some(code),
            "{}\nexpected exit {code}\n--- stdout\n{}\n--- stderr\n{}",
            self.description,
            self.stdout,
            self.stderr
        );
        self
    }

    #[track_caller]
    pub(crate) fn stdout_has(self, needle: &str) -> Self {
        assert!(
            self.stdout.contains(needle),
            "stdout lacks {needle:?}:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
        self
    }

    /// Stdout is `expected`, all of it, as just's tests compare: a line too many or missing, or
    /// a changed word anywhere, fails where a substring would pass.
    #[track_caller]
    pub(crate) fn stdout_is(self, expected: &str) -> Self {
        assert!(
            self.stdout == expected,
            "{}\n--- expected stdout\n{expected}--- stdout\n{}--- stderr\n{}",
            self.description,
            self.stdout,
            self.stderr
        );
        self
    }

    /// Stderr is `expected`, all of it.
    #[track_caller]
    pub(crate) fn stderr_is(self, expected: &str) -> Self {
        assert!(
            self.stderr == expected,
            "{}\n--- expected stderr\n{expected}--- stderr\n{}",
            self.description,
            self.stderr
        );
        self
    }

    #[track_caller]
    pub(crate) fn stderr_has(self, needle: &str) -> Self {
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}:\n{}",
            self.stderr
        );
        self
    }

    /// A refusal is one line (plus an optional hint line) on stderr, nothing on stdout.
    #[track_caller]
    pub(crate) fn refused(self, code: i32, needle: &str) -> Self {
        let outcome = self.code(code).stderr_has(needle);
        outcome.assert_refusal();
        outcome
    }

    /// A refusal whose stderr is `expected`, all of it (its line and hint), nothing on stdout.
    #[track_caller]
    pub(crate) fn refused_exactly(self, code: i32, expected: &str) -> Self {
        let outcome = self.code(code).stderr_is(expected);
        outcome.assert_refusal();
        outcome
    }

    /// The stderr of a refusal of any status, for a snapshot that pins its wording.
    #[track_caller]
    pub(crate) fn refusal(self) -> String {
        assert!(
            !self.status.success(),
            "{} succeeded:\n{}",
            self.description,
            self.stdout
        );
        self.assert_refusal();
        self.stderr
    }

    #[track_caller]
    fn assert_refusal(&self) {
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert!(
            (1..=2).contains(&lines.len())
                && lines[0].starts_with("swarm: ")
                && lines.get(1).is_none_or(|l| l.starts_with("hint: ")),
            "a refusal should be one line and an optional hint:\n{}",
            self.stderr
        );
        assert!(
            self.stdout.is_empty(),
            "a refusal printed to stdout:\n{}",
            self.stdout
        );
    }

    /// The error object a refusal with `--json` prints: one line of JSON on stderr, with
    /// `error`, `kind` and `hint`, and nothing on stdout.
    #[track_caller]
    pub(crate) fn json_error(&self) -> Value {
        assert!(
            !self.status.success(),
            "{} succeeded:\n{}",
            self.description,
            self.stdout
        );
        assert!(
            self.stdout.is_empty(),
            "a refusal printed to stdout:\n{}",
            self.stdout
        );
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(
            lines.len(),
            1,
            "one line of JSON on stderr:\n{}",
            self.stderr
        );
        let error: Value = serde_json::from_str(lines[0])
            .unwrap_or_else(|err| panic!("stderr is not JSON ({err}):\n{}", self.stderr));
        let keys: Vec<&str> = error
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["error", "kind", "hint"], "{error}");
        error
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|err| panic!("stdout is not JSON ({err}):\n{}", self.stdout))
    }

    pub(crate) fn stdout_line(&self) -> String {
        self.stdout.trim_end().to_owned()
    }
}

/// Reads a child's stdout line by line on a thread, so tests can wait for a line with a deadline.
pub(crate) struct LineReader {
    lines: mpsc::Receiver<String>,
}

impl LineReader {
    pub(crate) fn new(stdout: ChildStdout) -> Self {
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Self { lines }
    }

    /// The next line, or `None` at end of output or after `patience`.
    pub(crate) fn next_within(&self, patience: Duration) -> Option<String> {
        self.lines.recv_timeout(patience).ok()
    }

    #[track_caller]
    pub(crate) fn next(&self) -> String {
        self.next_within(PATIENCE)
            .expect("no line within the deadline")
    }
}

/// A background `swarm` process, killed when dropped.
pub(crate) struct Background {
    child: Option<Child>,
    pub(crate) lines: LineReader,
    pub(crate) description: String,
}

impl Background {
    /// Starts any command in the background with stdout piped, as [`Swarm::spawn`] does.
    pub(crate) fn spawn(mut command: Command) -> Self {
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let description = format!("{command:?}");
        let mut child = command.spawn().unwrap();
        let lines = LineReader::new(child.stdout.take().unwrap());
        Self {
            child: Some(child),
            lines,
            description,
        }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    #[track_caller]
    pub(crate) fn next_line(&self) -> String {
        self.lines
            .next_within(PATIENCE)
            .unwrap_or_else(|| panic!("{} printed no line within {PATIENCE:?}", self.description))
    }

    #[track_caller]
    pub(crate) fn next_json(&self) -> Value {
        let line = self.next_line();
        serde_json::from_str(&line).unwrap_or_else(|err| panic!("not a JSON line ({err}): {line}"))
    }

    /// Waits for the process to exit and returns its status and stderr.
    pub(crate) fn finish(mut self) -> (ExitStatus, String) {
        let mut child = self.child.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let deadline = Instant::now() + PATIENCE;
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "{} did not exit",
                self.description
            );
            thread::sleep(Duration::from_millis(10));
        };
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        (status, text)
    }

    pub(crate) fn signal(&self, signal: nix::sys::signal::Signal) {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.pid()).unwrap());
        let _ = nix::sys::signal::kill(pid, signal);
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Polls `condition` until it holds or the deadline passes; for state owned by other processes.
#[track_caller]
pub(crate) fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(20));
    }
}

/// Whether process `pid` has an inotify watch on `dir`: how a test sees that a waiting command is
/// armed, so what it writes next cannot be missed. Reads `/proc/<pid>/fdinfo`.
pub(crate) fn watches(pid: u32, dir: &Path) -> bool {
    watch_mask(pid, dir).is_some()
}

/// The events process `pid`'s inotify watch on `dir` asks the kernel for (its `mask:` in
/// /proc/PID/fdinfo), if it has one.
pub(crate) fn watch_mask(pid: u32, dir: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let needle = format!(" ino:{:x} ", fs::metadata(dir).ok()?.ino());
    fs::read_dir(format!("/proc/{pid}/fdinfo"))
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|fd| fs::read_to_string(fd.path()).ok())
        .flat_map(|info| info.lines().map(str::to_owned).collect::<Vec<_>>())
        .filter(|line| line.starts_with("inotify wd:") && line.contains(&needle))
        .find_map(|line| {
            let mask = line
                .split(' ')
                .find_map(|field| field.strip_prefix("mask:"))?;
            u32::from_str_radix(mask, 16).ok()
        })
}

/// How many times every thread of process `pid` has given up the CPU to wait: each wake-up of
/// a thread that sleeps on something counts one.
pub(crate) fn voluntary_switches(pid: u32) -> u64 {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|task| fs::read_to_string(task.path().join("status")).ok())
        .filter_map(|status| {
            status.lines().find_map(|line| {
                line.strip_prefix("voluntary_ctxt_switches:")
                    .and_then(|n| n.trim().parse::<u64>().ok())
            })
        })
        .sum()
}

/// A private tmux server for one test (`tmux -S <sandbox>/tmux.sock -f /dev/null`), started from
/// the sandbox's scrubbed environment and killed when dropped.
pub(crate) struct TmuxServer {
    socket: PathBuf,
    env: BTreeMap<String, OsString>,
}

impl TmuxServer {
    pub(crate) fn start(sandbox: &Sandbox) -> Self {
        Self::start_at(sandbox, "tmux.sock")
    }

    /// [`TmuxServer::start`] on socket `name` in the sandbox, for a test with several servers.
    pub(crate) fn start_at(sandbox: &Sandbox, name: &str) -> Self {
        let socket = sandbox.root().join(name);
        let status = sandbox
            .command("tmux")
            .arg("-S")
            .arg(&socket)
            .args([
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "fixture",
                "-x",
                "200",
                "-y",
                "60",
            ])
            .status()
            .expect("tmux must be installed to run these tests");
        assert!(status.success(), "cannot start a private tmux server");
        Self {
            socket,
            env: sandbox.env.clone(),
        }
    }

    /// The guard for a server that `swarm up --socket` will start itself, with no session of the
    /// test's keeping it alive: the server exits when the team's last pane closes.
    pub(crate) fn unstarted(sandbox: &Sandbox) -> Self {
        Self::unstarted_at(sandbox, "tmux.sock")
    }

    /// [`TmuxServer::unstarted`] on socket `name` in the sandbox, for a test with several servers.
    pub(crate) fn unstarted_at(sandbox: &Sandbox, name: &str) -> Self {
        Self {
            socket: sandbox.root().join(name),
            env: sandbox.env.clone(),
        }
    }

    /// Whether a server answers on this socket.
    pub(crate) fn is_running(&self) -> bool {
        Command::new("tmux")
            .env_clear()
            .envs(&self.env)
            .arg("-S")
            .arg(&self.socket)
            .arg("list-sessions")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap()
            .success()
    }

    pub(crate) fn socket(&self) -> &Path {
        &self.socket
    }

    /// Kills the server, as a reboot ends it, and waits until its process is gone: a server still
    /// exiting takes a session a new `up` or `resume` opens on the same socket down with it.
    pub(crate) fn kill(&self) {
        let pid = self.run(&["display-message", "-p", "#{pid}"]);
        self.run(&["kill-server"]);
        let proc = format!("/proc/{}", pid.trim());
        eventually("the tmux server's process to be gone", || {
            !Path::new(&proc).exists()
        });
    }

    /// Runs a tmux command on this server and returns its stdout.
    pub(crate) fn run(&self, args: &[&str]) -> String {
        let output = Command::new("tmux")
            .env_clear()
            .envs(&self.env)
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    pub(crate) fn panes(&self) -> Vec<String> {
        self.run(&["list-panes", "-a", "-F", "#{pane_id}"])
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// The panes, none when no server runs: also when it exits while asked, its last pane gone.
    pub(crate) fn panes_if_running(&self) -> Vec<String> {
        let output = Command::new("tmux")
            .env_clear()
            .envs(&self.env)
            .arg("-S")
            .arg(&self.socket)
            .args(["list-panes", "-a", "-F", "#{pane_id}"])
            .stderr(Stdio::null())
            .output()
            .unwrap();
        if !output.status.success() {
            return Vec::new();
        }
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// Window option `option` of `window` (`@swarm-asks`): empty when unset.
    pub(crate) fn window_option(&self, window: &str, option: &str) -> String {
        let output = Command::new("tmux")
            .env_clear()
            .envs(&self.env)
            .arg("-S")
            .arg(&self.socket)
            .args(["show-options", "-w", "-v", "-t", window, option])
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }

    /// `#{format}` of one pane.
    pub(crate) fn pane_format(&self, pane: &str, format: &str) -> String {
        self.run(&["display-message", "-p", "-t", pane, format])
            .trim()
            .to_owned()
    }
}

impl Drop for TmuxServer {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .env_clear()
            .envs(&self.env)
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .stderr(Stdio::null())
            .status();
    }
}

/// A team running for one test: the TOML written to `<work>/<name>.toml`, a private tmux server of
/// its own (`<root>/tmux-<name>.sock`), and `swarm up FILE --socket SERVER`. Dropped, it takes the
/// team down (`swarm down NAME --force`, which must succeed, unless the test removed the team or
/// failed already) and kills the server.
pub(crate) struct Team<'s> {
    sandbox: &'s Sandbox,
    name: String,
    file: PathBuf,
    server: TmuxServer,
}

impl<'s> Team<'s> {
    /// Starts the team `toml` describes (raw TOML, its `name` the team's), asserting `up` succeeded.
    #[track_caller]
    pub(crate) fn up(sandbox: &'s Sandbox, toml: &str) -> Self {
        let (team, outcome) = Self::try_up(sandbox, toml);
        outcome.success();
        team
    }

    /// [`Team::up`] that leaves what `up` printed, and whether it succeeded, to the test.
    pub(crate) fn try_up(sandbox: &'s Sandbox, toml: &str) -> (Self, Outcome) {
        let team = Self::written(sandbox, toml);
        let outcome = team.up_command().run();
        (team, outcome)
    }

    /// The team file written and its server started, with nothing up yet: for a test that runs
    /// `up` itself ([`Team::up_command`]) in the background or with more arguments.
    pub(crate) fn written(sandbox: &'s Sandbox, toml: &str) -> Self {
        let table: toml::Table = toml
            .parse()
            .unwrap_or_else(|err| panic!("the test's team file is not TOML ({err}):\n{toml}"));
        let name = table["name"].as_str().expect("a team file names its team");
        Self {
            sandbox,
            name: name.to_owned(),
            file: sandbox.write(&format!("{name}.toml"), toml),
            server: TmuxServer::start_at(sandbox, &format!("tmux-{name}.sock")),
        }
    }

    /// `swarm up FILE --socket SERVER`, to run or to spawn.
    pub(crate) fn up_command(&self) -> Swarm {
        up_on(self.sandbox, &self.server, &self.file)
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn file(&self) -> &Path {
        &self.file
    }

    pub(crate) fn server(&self) -> &TmuxServer {
        &self.server
    }
}

impl Drop for Team<'_> {
    fn drop(&mut self) {
        if !self.sandbox.team_dir(&self.name).exists() {
            return;
        }
        let down = self.sandbox.swarm().args(["down", &self.name, "--force"]);
        if !thread::panicking() {
            down.run().success();
            return;
        }
        // The test has failed already: take down what can be, and never panic a second time.
        let Ok(mut child) = down
            .into_command()
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        else {
            return;
        };
        let deadline = Instant::now() + PATIENCE;
        while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// Processes whose process group is one of `groups` or whose pid is one of `pids`, from `ps`.
pub(crate) fn processes_in(pids: &[i64], groups: &[i64]) -> Vec<String> {
    let output = Command::new("ps")
        .args(["-eo", "pid=,pgid=,stat=,args="])
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| {
            let mut fields = line.split_whitespace();
            let pid: i64 = fields.next().and_then(|f| f.parse().ok()).unwrap_or(0);
            let pgid: i64 = fields.next().and_then(|f| f.parse().ok()).unwrap_or(0);
            let zombie = fields.next().is_some_and(|stat| stat.starts_with('Z'));
            !zombie && (pids.contains(&pid) || groups.contains(&pgid))
        })
        .map(str::to_owned)
        .collect()
}

/// The real `tmux` on the sandbox's PATH (past its shims), for shims that wrap it.
pub(crate) fn real_tmux(sandbox: &Sandbox) -> PathBuf {
    let path = sandbox.env_value("PATH").cloned().unwrap_or_default();
    std::env::split_paths(&path)
        .filter(|dir| *dir != sandbox.shims())
        .map(|dir| dir.join("tmux"))
        .find(|candidate| candidate.is_file())
        .expect("tmux must be installed to run these tests")
}

/// Puts a `tmux` first on PATH that, in a process started with `TMUX_GATE=<file>`, creates
/// `<file>.reached` and waits for `<file>` before it runs any command with `word` among its
/// arguments (`new-session`, or a member's name, as its pane's `swarm run NAME` has); other calls
/// go straight to the real tmux.
pub(crate) fn gated_tmux(sandbox: &mut Sandbox, word: &str) {
    sandbox.tmux_shim(
        &format!(
            "for arg in \"$@\"; do\n  if [ -n \"$TMUX_GATE\" ] && [ \"$arg\" = {word} ]; then\n    : > \"$TMUX_GATE.reached\"\n    while [ ! -e \"$TMUX_GATE\" ]; do sleep 0.05; done\n  fi\ndone\n"
        ),
    );
}

/// Like [`gated_tmux`], but the command with `word` runs first and its answer is held back until
/// `<file>` exists: the pane exists while the caller has not yet heard of it.
pub(crate) fn gated_tmux_answer(sandbox: &mut Sandbox, word: &str) {
    let real = real_tmux(sandbox);
    sandbox.tmux_shim(&format!(
            "for arg in \"$@\"; do\n  if [ -n \"$TMUX_GATE\" ] && [ \"$arg\" = {word} ]; then\n    out=$({real} \"$@\"); status=$?\n    : > \"$TMUX_GATE.reached\"\n    while [ ! -e \"$TMUX_GATE\" ]; do sleep 0.05; done\n    printf '%s\\n' \"$out\"; exit $status\n  fi\ndone\n",
            real = real.display()
        ),
    );
}

/// The repository's own files (teams/, scripts/).
pub(crate) fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A lead that runs until the team is taken down.
pub(crate) const LEAD: &str = "[lead]\ncommand = [\"sleep\", \"1000\"]\n";

/// Starts team `name` from `toml` on `server`.
pub(crate) fn up(sandbox: &Sandbox, server: &TmuxServer, name: &str, toml: &str) {
    let file = sandbox.write(&format!("{name}.toml"), toml);
    up_on(sandbox, server, &file).run().success();
}

/// `swarm up FILE` on `server`, to run or to spawn.
pub(crate) fn up_on(sandbox: &Sandbox, server: &TmuxServer, file: &Path) -> Swarm {
    sandbox
        .swarm()
        .arg("up")
        .arg(file)
        .arg("--socket")
        .arg(server.socket())
}

/// Takes team `team` down at once.
pub(crate) fn down(sandbox: &Sandbox, team: &str) {
    sandbox
        .swarm()
        .args(["down", team, "--force"])
        .run()
        .success();
}

/// A member's recorded state, `-` when it has none.
pub(crate) fn state(sandbox: &Sandbox, team: &str, name: &str) -> String {
    sandbox.member(team, name)["state"]
        .as_str()
        .unwrap_or("-")
        .to_owned()
}
