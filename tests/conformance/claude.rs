//! The real Claude Code under test, and a team that swarm launches with it.
//!
//! The version is pinned in `tests/conformance/claude-code.version`; `scripts/conformance`
//! installs it (or the one `--claude VERSION` names) with npm into
//! `<target>/conformance/claude-code-<version>/` and passes the version in
//! `SWARM_CONFORMANCE_VERSION`. Each test gets its own sandbox (the harness's), in which Claude
//! Code's home is swarm's: `HOME/.claude`, so swarm writes the team in the format Claude Code
//! reads.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::harness::{Sandbox, Swarm, TmuxServer, eventually, up};
use crate::model::Model;

/// The team every conformance test runs; lower case, as Claude Code sanitises its config folder's
/// name differently from its inbox folder's ("Conformance" in docs/ARCHITECTURE.md).
pub(crate) const TEAM: &str = "conf";

/// The Claude Code teammate.
pub(crate) const WORKER: &str = "worker";

/// The key the teammates present to the stand-in; its last 20 characters are approved in
/// `.claude.json`, so Claude Code does not ask whether to use it.
const API_KEY: &str = "sk-ant-api03-swarm-conformance-stand-in-key-0000";

/// The version under test: `SWARM_CONFORMANCE_VERSION`, else the pinned one.
pub(crate) fn version() -> String {
    std::env::var("SWARM_CONFORMANCE_VERSION")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| {
            let pin =
                Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/claude-code.version");
            fs::read_to_string(&pin)
                .unwrap_or_else(|err| panic!("cannot read {}: {err}", pin.display()))
        })
        .trim()
        .to_owned()
}

/// The `claude` of the installed package, checked once to be the version under test.
pub(crate) fn binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let version = version();
        let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
            || Path::new(env!("CARGO_MANIFEST_DIR")).join("target"),
            PathBuf::from,
        );
        let binary = target
            .join("conformance")
            .join(format!("claude-code-{version}"))
            .join("node_modules/.bin/claude");
        let output = Command::new(&binary)
            .arg("--version")
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("DISABLE_AUTOUPDATER", "1")
            .output()
            .unwrap_or_else(|err| {
                panic!(
                    "Claude Code {version} is not installed at {} ({err}): run scripts/conformance",
                    binary.display()
                )
            });
        let reported = String::from_utf8_lossy(&output.stdout);
        assert!(
            reported.starts_with(&format!("{version} ")),
            "{} reports {reported:?}, not {version}: run scripts/conformance",
            binary.display()
        );
        binary
    })
}

/// How the Claude Code teammate is launched.
pub(crate) struct Teammate<'a> {
    /// Its first message, from the lead.
    pub(crate) prompt: Option<&'a str>,
    /// Always explicit: with none, an interactive Claude Code starts in auto mode, which asks a
    /// classifier the stand-in does not have.
    pub(crate) permission_mode: &'a str,
    /// The team file's `[permissions]` table, if any: `allow = [...]`, `deny = [...]`.
    pub(crate) permissions: Option<&'a str>,
}

impl Default for Teammate<'_> {
    fn default() -> Self {
        Self {
            prompt: None,
            permission_mode: "default",
            permissions: None,
        }
    }
}

/// A team led by the test (a script lead: no lead pane) with one Claude Code teammate, on a
/// private tmux server, its model the stand-in. Dropping it takes the team down at once and
/// kills the tmux server.
pub(crate) struct ClaudeTeam {
    // Dropped in this order: the panes' server first, then the model they talk to, then the
    // sandbox's folder.
    pub(crate) tmux: TmuxServer,
    pub(crate) model: Model,
    pub(crate) sandbox: Sandbox,
}

impl ClaudeTeam {
    /// The sandbox and the stand-in, before anything runs: a test scripts the model first.
    pub(crate) fn new() -> Self {
        // No install, no test: fail before anything starts.
        binary();
        let mut sandbox = Sandbox::new();
        let model = Model::start();
        let user = sandbox.root().join("user");
        sandbox.set_env("SWARM_HOME", user.join(".claude"));
        // What a person who set Claude Code up once has: onboarding done, the key approved, the
        // project trusted. Without them it shows dialogs no one answers.
        let work = fs::canonicalize(sandbox.work()).unwrap();
        let approved = &API_KEY[API_KEY.len() - 20..];
        fs::create_dir_all(user.join(".claude")).unwrap();
        fs::write(
            user.join(".claude.json"),
            serde_json::to_vec_pretty(&json!({
                "hasCompletedOnboarding": true,
                "lastOnboardingVersion": version(),
                "theme": "dark",
                "customApiKeyResponses": { "approved": [approved], "rejected": [] },
                "projects": { work.display().to_string(): { "hasTrustDialogAccepted": true } },
            }))
            .unwrap(),
        )
        .unwrap();
        sandbox.set_env("ANTHROPIC_BASE_URL", model.url());
        sandbox.set_env("ANTHROPIC_API_KEY", API_KEY);
        sandbox.set_env("DISABLE_AUTOUPDATER", "1");
        sandbox.set_env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
        if nix::unistd::geteuid().is_root() {
            // Claude Code refuses some permission modes to root outside a sandbox.
            sandbox.set_env("IS_SANDBOX", "1");
        }
        let tmux = TmuxServer::unstarted(&sandbox);
        Self {
            tmux,
            model,
            sandbox,
        }
    }

    /// `swarm up` of the team, with the Claude Code teammate `teammate`.
    pub(crate) fn up(&self, teammate: &Teammate<'_>) {
        let mut toml = format!(
            "name = \"{TEAM}\"\n\n[[member]]\nname = \"{WORKER}\"\nprofile = \"claude\"\ncommand = [{}, \"--permission-mode\", {}]\n",
            toml_string(&binary().display().to_string()),
            toml_string(teammate.permission_mode),
        );
        if let Some(prompt) = teammate.prompt {
            let _ = writeln!(toml, "prompt = {}", toml_string(prompt));
        }
        if let Some(rules) = teammate.permissions {
            let _ = writeln!(toml, "\n[permissions]\n{rules}");
        }
        up(&self.sandbox, &self.tmux, TEAM, &toml);
    }

    /// A Claude Code session of the person's, started on its own in the team's tmux server (in
    /// a session of its own, outside every member's pane) in the work folder: what `swarm peers`
    /// finds by its session record. Returns its pid.
    pub(crate) fn solo_session(&self, permission_mode: &str) -> i32 {
        let work = self.sandbox.work().display().to_string();
        let binary = binary().display().to_string();
        let pid = self.tmux.run(&[
            "new-session",
            "-d",
            "-s",
            "solo",
            "-x",
            "200",
            "-y",
            "50",
            "-c",
            &work,
            "-P",
            "-F",
            "#{pane_pid}",
            "--",
            &binary,
            "--permission-mode",
            permission_mode,
        ]);
        pid.trim().parse().unwrap()
    }

    /// A `swarm` command of the test, the team's lead.
    pub(crate) fn swarm(&self) -> Swarm {
        self.sandbox.swarm().team(TEAM)
    }

    /// The teammate's record in config.json.
    pub(crate) fn worker(&self) -> Value {
        self.sandbox.member(TEAM, WORKER)
    }

    /// The pid of the teammate's program, once its supervisor recorded it.
    pub(crate) fn worker_pid(&self) -> i32 {
        let mut pid = 0;
        eventually("the teammate's pid in config.json", || {
            pid = self.worker()["pid"].as_i64().unwrap_or(0);
            pid > 0
        });
        i32::try_from(pid).unwrap()
    }

    /// What the teammate's pane shows now.
    pub(crate) fn pane_text(&self) -> String {
        let pane = self.worker()["tmuxPaneId"].as_str().unwrap().to_owned();
        self.tmux.run(&["capture-pane", "-p", "-t", &pane])
    }

    /// The messages in the lead's inbox, as `swarm inbox --json` shows them.
    pub(crate) fn lead_inbox(&self) -> Vec<Value> {
        let out = self
            .swarm()
            .args(["inbox", "team-lead", "--json"])
            .run()
            .success();
        out.json().as_array().unwrap().clone()
    }
}

impl Drop for ClaudeTeam {
    fn drop(&mut self) {
        // Whatever a failed test left: nothing of the team may outlive it.
        let _ = self
            .sandbox
            .swarm()
            .args(["down", TEAM, "--force"])
            .into_command()
            .output();
    }
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

/// Whether process `pid` still runs (and is no zombie).
pub(crate) fn alive(pid: i32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'))
    })
}
