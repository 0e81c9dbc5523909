//! What a member's pane runs: its exact argv and environment, built from the team file, the lead's
//! recorded argv and the member's profile (docs/ARCHITECTURE.md, "Launching").

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;

use crate::base::process::LEAD_VAR;
use crate::format::config::Member;
pub use crate::format::settings::{Color, EnvPolicy, Profile};
use crate::store::paths::{ClaudePaths, CodexPaths, GeminiPaths};

/// The profile of the program's base name: `claude`, `codex`, `gemini`, `aider`, `opencode`,
/// else generic.
pub(crate) fn detect_profile(command: Option<&[String]>) -> Option<Profile> {
    let program = command?.first()?;
    let base = Path::new(program).file_name()?.to_str()?;
    Some(match base {
        "claude" => Profile::Claude,
        "codex" => Profile::Codex,
        "gemini" => Profile::Gemini,
        "aider" => Profile::Aider,
        "opencode" => Profile::Opencode,
        _ => Profile::Generic,
    })
}

/// Flags teammates inherit from the lead when the team file does not say.
pub(crate) fn default_inherit(profile: Profile) -> &'static [&'static str] {
    match profile {
        Profile::Claude => &[
            "--model",
            "--permission-mode",
            "--settings",
            "--plugin-dir",
            "--dangerously-skip-permissions",
        ],
        Profile::Codex => &[
            "--model",
            "-m",
            "--config",
            "-c",
            "--profile",
            "-p",
            "--sandbox",
            "-s",
            "--ask-for-approval",
            "-a",
            "--dangerously-bypass-approvals-and-sandbox",
        ],
        Profile::Gemini => &["--model", "-m", "--approval-mode", "--yolo", "-y"],
        Profile::Aider => &["--model", "--weak-model", "--edit-format", "--yes-always"],
        Profile::Opencode => &["--model", "-m"],
        Profile::Generic => &[],
    }
}

/// The program a member of this profile runs when it names none.
pub(crate) fn default_program(profile: Profile) -> Option<&'static str> {
    match profile {
        Profile::Claude => Some("claude"),
        Profile::Codex => Some("codex"),
        Profile::Gemini => Some("gemini"),
        Profile::Aider => Some("aider"),
        Profile::Opencode => Some("opencode"),
        Profile::Generic => None,
    }
}

/// Claude Code's and Gemini CLI's flag that starts a session with a chosen id.
pub(crate) const SESSION_FLAG: &str = "--session-id";

/// Claude Code's and Gemini CLI's flag that resumes a session; it cannot be combined with
/// [`SESSION_FLAG`].
pub(crate) const RESUME_FLAG: &str = "--resume";

/// What stands for the member's session id in `command` and `resume_command`.
pub const SESSION_PLACEHOLDER: &str = "{session_id}";

/// Codex's flag that overrides one key of its configuration for this process, `key=TOML`.
const CODEX_CONFIG_FLAGS: [&str; 2] = ["-c", "--config"];

/// The Codex configuration key of the program it runs at every turn's end, with the turn as JSON
/// in its last argument (Codex 0.169.0: `agent-turn-complete`).
const CODEX_NOTIFY_KEY: &str = "notify";

/// What the codex profile sets `notify` to: `swarm hook codex`, as a TOML array.
pub const CODEX_NOTIFY: &str = r#"notify=["swarm","hook","codex"]"#;

/// What a codex resume adds before `resume <id>`: without it, a session recorded in another
/// directory than the one it resumes in waits on a "choose working directory" screen.
const CODEX_RESUME_CWD: &str = r#"tui.resume_cwd="session""#;

/// The variable Gemini CLI takes its home from, in place of `~`: its user settings are
/// `<home>/.gemini/settings.json`, read whoever owns them, where Gemini CLI 0.61.0 reads a system
/// settings file only when root owns it and every folder above it.
pub const GEMINI_HOME_VAR: &str = "GEMINI_CLI_HOME";

/// The Gemini CLI hook events that tell a member's activity to `swarm hook gemini`
/// (docs/ARCHITECTURE.md, "Activity and events").
pub const GEMINI_ACTIVITY_EVENTS: &[&str] = &[
    "SessionStart",
    "BeforeAgent",
    "BeforeTool",
    "AfterTool",
    "Notification",
    "AfterAgent",
];

/// aider's flags for its chat and input history files, and the one that reads the chat back.
const AIDER_CHAT_FLAG: &str = "--chat-history-file";
const AIDER_INPUT_FLAG: &str = "--input-history-file";
const AIDER_RESTORE_FLAG: &str = "--restore-chat-history";

/// Flags that take no value, so the next argument is not theirs.
const BOOLEAN_FLAGS: &[&str] = &[
    "--dangerously-skip-permissions",
    "--allow-dangerously-skip-permissions",
    "--verbose",
    "--debug",
    "--dangerously-bypass-approvals-and-sandbox",
    "--yolo",
    "-y",
    "--yes-always",
];

/// Flags that lift permission checks; a plan-mode-required teammate never gets them.
const BYPASS_FLAGS: &[&str] = &[
    "--dangerously-skip-permissions",
    "--allow-dangerously-skip-permissions",
];

/// Variables the claude profile copies from the launcher: proxies, CA certificates, API base URLs,
/// which a tmux server started long before may lack. API keys and tokens are never among them
/// (a member inherits those from its pane, unless its rules remove them). The member's rules
/// apply to these as to anything inherited.
pub(crate) const FORWARDED_VARS: &[&str] = &[
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_BEDROCK_BASE_URL",
    "ANTHROPIC_VERTEX_BASE_URL",
];

/// What the claude profile sets for every member, the lead included, before the member's own
/// `env` (which may override them): agent teams on, and the Task tools, which Claude Code turns on
/// in an interactive session of a current model only with `CLAUDE_CODE_ENABLE_TODO_TOOLS`
/// (docs/ARCHITECTURE.md, "Task list").
const CLAUDE_VARS: &[(&str, &str)] = &[
    ("CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS", "1"),
    ("CLAUDE_CODE_ENABLE_TODO_TOOLS", "1"),
];

/// The team-wide facts a member's launch depends on.
#[derive(Debug, Clone)]
pub struct TeamLaunch<'a> {
    pub home: &'a Path,
    pub team: &'a str,
    pub lead: &'a str,
    pub lead_session_id: &'a str,
    pub lead_profile: Profile,
    pub lead_argv: Option<&'a [String]>,
    pub inherit: &'a [String],
}

/// What a teammate asks for, from the team file or `swarm spawn`.
#[derive(Debug, Clone)]
pub(crate) struct TeammateRequest<'a> {
    pub(crate) name: &'a str,
    pub(crate) command: Option<&'a [String]>,
    pub(crate) profile: Profile,
    pub(crate) agent_type: Option<&'a str>,
    pub(crate) model: Option<&'a str>,
    pub(crate) color: Option<Color>,
    pub(crate) plan_mode_required: bool,
    pub(crate) env: &'a BTreeMap<String, String>,
    pub(crate) env_policy: &'a EnvPolicy,
    /// The team file's `permissions_via = "swarm"`: a Claude Code teammate asks through
    /// `swarm permission hook claude`, wired in with `--settings`.
    pub(crate) asks_through_swarm: bool,
    /// The Claude Code session it starts (`--session-id`), recorded so it can be resumed
    /// (docs/ARCHITECTURE.md, "Resuming a team").
    pub(crate) session_id: &'a str,
    /// The team file's `mcp = true`: its program gets `swarm mcp` as an MCP server.
    pub(crate) mcp: bool,
}

/// The name every profile registers `swarm mcp` under.
pub const MCP_SERVER: &str = "swarm";

/// `swarm mcp`'s arguments for a member of `team` under `home`: given on its command line, since
/// a client may hand its servers a scrubbed environment (Codex 0.169.0 does).
pub fn mcp_args(home: &Path, team: &str) -> Vec<String> {
    vec![
        "mcp".to_owned(),
        "--home".to_owned(),
        home.display().to_string(),
        "--team".to_owned(),
        team.to_owned(),
    ]
}

/// The `mcpServers` entry of Claude Code's `--mcp-config` file and Gemini CLI's settings.
pub fn mcp_servers(home: &Path, team: &str, trust: bool) -> serde_json::Value {
    let mut server = serde_json::json!({"command": "swarm", "args": mcp_args(home, team)});
    if trust {
        // Gemini CLI offers an untrusted server's tools only after a prompt, never headless.
        server["trust"] = true.into();
    }
    serde_json::json!({ MCP_SERVER: server })
}

/// Codex's `-c` overrides that add `swarm mcp` (Codex 0.169.0, `mcp_servers.<name>.*`): its tools
/// approved, as swarm's own policy decides what each may do.
fn codex_mcp(home: &Path, team: &str) -> Vec<String> {
    let quoted = |text: &str| toml::Value::String(text.to_owned()).to_string();
    let args: Vec<String> = mcp_args(home, team).iter().map(|a| quoted(a)).collect();
    [
        format!("mcp_servers.{MCP_SERVER}.command={}", quoted("swarm")),
        format!("mcp_servers.{MCP_SERVER}.args=[{}]", args.join(",")),
        format!("mcp_servers.{MCP_SERVER}.default_tools_approval_mode=\"approve\""),
    ]
    .into_iter()
    .flat_map(|value| ["-c".to_owned(), value])
    .collect()
}

/// The hook that asks swarm before a tool runs, for a Claude Code teammate whose asks go through
/// swarm: for the tools Claude Code asks about, waiting as long as a person may take
/// (docs/ARCHITECTURE.md, "Asking from any CLI").
const CLAUDE_PERMISSION_HOOK: &str = r#"{"matcher":"Bash|Edit|Write|MultiEdit|NotebookEdit|WebFetch|WebSearch|mcp__.*","hooks":[{"type":"command","command":"swarm permission hook claude","timeout":86400}]}"#;

/// The Claude Code hook events that tell a member's activity to `swarm hook claude`
/// (docs/ARCHITECTURE.md, "Activity and events").
pub const CLAUDE_ACTIVITY_EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "Notification",
    "Stop",
    "StopFailure",
];

/// The one `--settings` swarm gives a Claude Code teammate (Claude Code takes one, merged over the
/// user's own files, which swarm never touches): the activity hooks, and the permission hook when
/// its asks go through swarm.
pub(crate) fn claude_settings(asks_through_swarm: bool) -> String {
    let activity = serde_json::json!({"matcher": "", "hooks": [{
        "type": "command",
        "command": "swarm hook claude",
        "timeout": 10,
    }]});
    let mut hooks = serde_json::Map::new();
    for event in CLAUDE_ACTIVITY_EVENTS {
        let mut entries = vec![activity.clone()];
        if asks_through_swarm && *event == "PreToolUse" {
            entries.push(
                serde_json::from_str(CLAUDE_PERMISSION_HOOK).expect("the hook is written as JSON"),
            );
        }
        hooks.insert((*event).to_owned(), entries.into());
    }
    serde_json::json!({ "hooks": hooks }).to_string()
}

/// Whom an environment is for: the lead, or a teammate of a profile.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Role<'a> {
    Lead,
    Teammate {
        name: &'a str,
        profile: Profile,
        plan_mode_required: bool,
        color: Option<Color>,
    },
}

/// The exact command and environment of one pane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Launch {
    pub(crate) argv: Vec<String>,
    pub(crate) env: BTreeMap<String, String>,
    /// Its program tells its activity through hooks swarm wired in (`claude_settings`, the
    /// gemini settings file).
    #[serde(skip)]
    pub(crate) activity_hooks: bool,
    /// The session its program starts, when swarm knows it at launch (recorded as `sessionId`).
    #[serde(skip)]
    pub(crate) session_id: Option<String>,
}

impl TeamLaunch<'_> {
    /// The lead runs its own command; a Claude Code lead gets the team's session id.
    /// A Codex, Gemini CLI or aider lead gets what lets its conversation be resumed
    /// ([`resumable`]), and no activity hooks. With `mcp`, it gets `swarm mcp` as a teammate of
    /// its profile does ([`TeamLaunch::mcp_flags`], `launch/profiles.rs`).
    pub(crate) fn lead(
        &self,
        command: &[String],
        env: &BTreeMap<String, String>,
        env_policy: &EnvPolicy,
        mcp: bool,
        launcher_env: &dyn Fn(&str) -> Option<String>,
    ) -> Launch {
        let mut argv = command.to_vec();
        let named = name_session(&mut argv, self.lead_session_id);
        if mcp {
            argv.extend(self.mcp_flags(&argv, self.lead_profile));
        }
        if self.lead_profile == Profile::Claude {
            let flags = flags_in(&argv);
            if !flags.contains(SESSION_FLAG) && !flags.contains(RESUME_FLAG) {
                argv.extend([SESSION_FLAG.to_owned(), self.lead_session_id.to_owned()]);
            }
        } else {
            self.resumable(
                &mut argv,
                self.lead_profile,
                self.lead,
                self.lead_session_id,
            );
        }
        let session_id = started_session(self.lead_profile, &argv, self.lead_session_id, named);
        let env = self.environment(&Role::Lead, env, env_policy, launcher_env);
        Launch {
            argv,
            env,
            activity_hooks: false,
            session_id,
        }
    }

    /// What a profile other than Claude Code's adds so that a resume can find the member's
    /// conversation again: Codex's `notify` (which tells swarm its session id at the first turn's
    /// end, `swarm hook codex`), Gemini CLI's `--session-id`, aider's history files of the
    /// member's own; and for any program, its `{session_id}` in `command` replaced. Nothing the
    /// command already says is added again.
    fn resumable(&self, argv: &mut Vec<String>, profile: Profile, name: &str, session_id: &str) {
        let flags = flags_in(argv);
        match profile {
            Profile::Codex => {
                if !codex_overrides(argv)
                    .iter()
                    .any(|key| key == CODEX_NOTIFY_KEY)
                {
                    argv.extend(["-c".to_owned(), CODEX_NOTIFY.to_owned()]);
                }
            }
            Profile::Gemini => {
                if !flags.contains(SESSION_FLAG) && !flags.contains(RESUME_FLAG) {
                    argv.extend([SESSION_FLAG.to_owned(), session_id.to_owned()]);
                }
            }
            Profile::Aider => {
                let paths = crate::store::paths::Home::new(self.home.to_path_buf()).team(self.team);
                let (chat, input) = paths.aider_history(name);
                for (flag, file) in [(AIDER_CHAT_FLAG, chat), (AIDER_INPUT_FLAG, input)] {
                    if !flags.contains(flag) {
                        argv.extend([flag.to_owned(), file.display().to_string()]);
                    }
                }
            }
            Profile::Claude | Profile::Opencode | Profile::Generic => {}
        }
    }

    pub(crate) fn teammate(
        &self,
        member: &TeammateRequest<'_>,
        launcher_env: &dyn Fn(&str) -> Option<String>,
    ) -> Launch {
        let mut argv: Vec<String> = match member.command {
            Some(command) => command.to_vec(),
            None => default_program(member.profile)
                .map(str::to_owned)
                .into_iter()
                .collect(),
        };
        let named = name_session(&mut argv, member.session_id);
        let own_flags = flags_in(&argv);

        if member.profile == self.lead_profile
            && let Some(lead_argv) = self.lead_argv
        {
            for flag in self.inherit {
                if own_flags.contains(flag)
                    || (member.model.is_some() && flag == "--model")
                    || (member.plan_mode_required
                        && (BYPASS_FLAGS.contains(&flag.as_str()) || flag == "--permission-mode"))
                {
                    continue;
                }
                argv.extend(occurrences(lead_argv, flag));
            }
        }

        if let Some(model) = member.model
            && !own_flags.contains("--model")
            && !(matches!(member.profile, Profile::Codex | Profile::Opencode)
                && own_flags.contains("-m"))
            && (member.profile != Profile::Generic || self.inherit.iter().any(|f| f == "--model"))
        {
            argv.extend(["--model".to_owned(), model.to_owned()]);
        }

        // Only Claude Code takes identity flags; every other profile learns it from `SWARM_*`.
        let mut activity_hooks = false;
        match member.profile {
            Profile::Claude => {
                if member.mcp {
                    argv.extend(self.mcp_flags(&argv, Profile::Claude));
                }
                argv.extend([
                    "--agent-id".to_owned(),
                    format!("{}@{}", member.name, self.team),
                    "--agent-name".to_owned(),
                    member.name.to_owned(),
                    "--team-name".to_owned(),
                    self.team.to_owned(),
                ]);
                if let Some(color) = member.color {
                    argv.extend(["--agent-color".to_owned(), color.as_str().to_owned()]);
                }
                argv.extend([
                    "--parent-session-id".to_owned(),
                    self.lead_session_id.to_owned(),
                ]);
                if !own_flags.contains(SESSION_FLAG) && !own_flags.contains(RESUME_FLAG) {
                    argv.extend([SESSION_FLAG.to_owned(), member.session_id.to_owned()]);
                }
                if member.plan_mode_required {
                    argv.push("--plan-mode-required".to_owned());
                }
                if let Some(agent_type) = member.agent_type {
                    argv.extend(["--agent-type".to_owned(), agent_type.to_owned()]);
                }
                // Own or inherited settings are the user's: Claude Code takes one, so none is
                // added and the activity is judged from the screen (`up` refuses a teammate that
                // asks through swarm and has its own).
                activity_hooks = !flags_in(&argv).contains("--settings");
                if activity_hooks {
                    argv.extend([
                        "--settings".to_owned(),
                        claude_settings(member.asks_through_swarm),
                    ]);
                }
            }
            profile => {
                self.resumable(&mut argv, profile, member.name, member.session_id);
                if member.mcp {
                    argv.extend(self.mcp_flags(&argv, profile));
                }
            }
        }
        let session_id = started_session(member.profile, &argv, member.session_id, named);
        let role = Role::Teammate {
            name: member.name,
            profile: member.profile,
            plan_mode_required: member.plan_mode_required,
            color: member.color,
        };
        let env = self.environment(&role, member.env, member.env_policy, launcher_env);
        // Its own env may name another home: then swarm's hooks are not in the settings read.
        if member.profile == Profile::Gemini {
            activity_hooks = env.get(GEMINI_HOME_VAR) == Some(&self.gemini_home());
        }
        Launch {
            argv,
            env,
            activity_hooks,
            session_id,
        }
    }

    /// What a program of `profile` whose command is `argv` takes on its command line to get
    /// `swarm mcp`: Claude Code, `--mcp-config` naming the file `launch/profiles.rs` writes
    /// (variadic: a flag must follow it, as one does in every launch); Codex, its `-c` overrides,
    /// unless the command sets `mcp_servers.swarm.*` itself. Gemini CLI and opencode take it
    /// from their settings, as their program starts (`launch/profiles.rs`).
    fn mcp_flags(&self, argv: &[String], profile: Profile) -> Vec<String> {
        let prefix = format!("mcp_servers.{MCP_SERVER}.");
        match profile {
            Profile::Claude => {
                let paths = crate::store::paths::Home::new(self.home.to_path_buf()).team(self.team);
                vec![
                    "--mcp-config".to_owned(),
                    paths.mcp_config().display().to_string(),
                ]
            }
            Profile::Codex
                if !codex_overrides(argv)
                    .iter()
                    .any(|key| key.starts_with(&prefix)) =>
            {
                codex_mcp(self.home, self.team)
            }
            _ => Vec::new(),
        }
    }

    /// The Gemini CLI home swarm gives the team's Gemini CLI teammates.
    fn gemini_home(&self) -> String {
        crate::store::paths::Home::new(self.home.to_path_buf())
            .team(self.team)
            .gemini_home()
            .display()
            .to_string()
    }

    /// The environment a member's program gets: what its profile sets, the launcher's variables
    /// the claude profile forwards, the member's own `env`, then swarm's identity. `up`, `spawn`
    /// and a resume (`launch/resume.rs`, which has only config.json's record) all build it here.
    pub(crate) fn environment(
        &self,
        role: &Role<'_>,
        own: &BTreeMap<String, String>,
        env_policy: &EnvPolicy,
        launcher_env: &dyn Fn(&str) -> Option<String>,
    ) -> BTreeMap<String, String> {
        let mut env = BTreeMap::new();
        match *role {
            Role::Lead if self.lead_profile == Profile::Claude => {
                forward(&mut env, launcher_env, env_policy);
                claude_vars(&mut env);
            }
            Role::Lead => {}
            Role::Teammate {
                profile: Profile::Claude,
                ..
            } => {
                forward(&mut env, launcher_env, env_policy);
                env.insert("CLAUDECODE".into(), "1".into());
                claude_vars(&mut env);
            }
            Role::Teammate {
                profile,
                plan_mode_required,
                ..
            } => {
                if plan_mode_required {
                    env.insert("SWARM_PLAN_MODE".into(), "required".into());
                }
                if profile == Profile::Gemini {
                    env.insert(GEMINI_HOME_VAR.into(), self.gemini_home());
                }
            }
        }
        env.extend(own.iter().map(|(k, v)| (k.clone(), v.clone())));
        match *role {
            Role::Lead => self.identity(&mut env, self.lead, None),
            Role::Teammate { name, color, .. } => self.identity(&mut env, name, color),
        }
        env
    }

    /// `SWARM_*` identity, set last so nothing in a team file can impersonate another member.
    fn identity(&self, env: &mut BTreeMap<String, String>, name: &str, color: Option<Color>) {
        env.insert(
            crate::launch::environment::HOME_VAR.into(),
            self.home.display().to_string(),
        );
        env.insert("SWARM_TEAM".into(), self.team.to_owned());
        env.insert("SWARM_AGENT".into(), name.to_owned());
        env.insert("SWARM_AGENT_ID".into(), format!("{name}@{}", self.team));
        env.insert(LEAD_VAR.into(), self.lead.to_owned());
        match color {
            Some(color) => env.insert("SWARM_COLOR".into(), color.as_str().to_owned()),
            None => env.remove("SWARM_COLOR"),
        };
    }
}

fn claude_vars(env: &mut BTreeMap<String, String>) {
    env.extend(
        CLAUDE_VARS
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned())),
    );
}

fn forward(
    env: &mut BTreeMap<String, String>,
    launcher_env: &dyn Fn(&str) -> Option<String>,
    policy: &EnvPolicy,
) {
    for key in FORWARDED_VARS.iter().filter(|key| policy.keeps(key)) {
        if let Some(value) = launcher_env(key) {
            env.insert((*key).to_owned(), value);
        }
    }
}

/// The Claude Code session `argv` starts or resumes: the value of its `--session-id` or
/// `--resume`.
pub(crate) fn session_in(argv: &[String]) -> Option<String> {
    [SESSION_FLAG, RESUME_FLAG].iter().find_map(|flag| {
        let found = occurrences(argv, flag);
        match found.as_slice() {
            [_, value, ..] => Some(value.clone()),
            [joined, ..] => joined.split_once('=').map(|(_, value)| value.to_owned()),
            [] => None,
        }
    })
}

/// How a member's program starts again when its team is resumed (docs/ARCHITECTURE.md,
/// "Resuming a team").
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resumption {
    pub(crate) argv: Vec<String>,
    /// The session it resumes or starts, recorded as its `sessionId`.
    pub(crate) session_id: Option<String>,
    /// Said on stderr: it starts a new conversation, and why.
    pub(crate) note: Option<String>,
}

/// The argv `member` resumes with, from its record: its `resume_command` with `{session_id}`
/// when it has one, else its profile's way back into its conversation, each only when the
/// program kept that conversation (looked for in its own files, found through `var`: the
/// member's environment, then the launcher's); otherwise its command afresh, a Claude Code or
/// Gemini CLI member with the new session `fresh_id`.
pub(crate) fn resume(
    member: &Member,
    fresh_id: &str,
    var: &dyn Fn(&str) -> Option<String>,
) -> Resumption {
    let mut argv = member.argv.clone().unwrap_or_default();
    let recorded = member.session_id.clone();
    let afresh = |why: &str| Some(format!("{} starts a new conversation: {why}", member.name));
    let os = |key: &str| var(key).map(std::ffi::OsString::from);
    if let Some(command) = &member.resume_command {
        let mut resumed = command.clone();
        match &recorded {
            Some(id) => {
                name_session(&mut resumed, id);
                return Resumption {
                    argv: resumed,
                    session_id: recorded,
                    note: None,
                };
            }
            None if !name_session(&mut resumed, "") => {
                return Resumption {
                    argv: resumed,
                    session_id: None,
                    note: None,
                };
            }
            None => {
                return Resumption {
                    argv,
                    session_id: None,
                    note: afresh("its resume_command names {session_id}, and none was recorded"),
                };
            }
        }
    }
    let profile = member.profile.unwrap_or_default();
    let mut session_id = recorded.clone();
    let mut note = None;
    match profile {
        Profile::Claude | Profile::Gemini => {
            for flag in [SESSION_FLAG, RESUME_FLAG, crate::launch::keys::KEY_FLAG] {
                argv = without_flag(&argv, flag);
            }
            let kept = match profile {
                Profile::Claude => {
                    ClaudePaths::new(os("CLAUDE_CONFIG_DIR").as_deref(), os("HOME").as_deref())
                        .is_some_and(|claude| {
                            recorded
                                .as_ref()
                                .is_some_and(|id| claude.has_transcript(id))
                        })
                }
                _ => GeminiPaths::new(os("GEMINI_CLI_HOME").as_deref(), os("HOME").as_deref())
                    .is_some_and(|gemini| {
                        recorded
                            .as_ref()
                            .is_some_and(|id| gemini.has_conversation(id))
                    }),
            };
            match recorded.clone().filter(|_| kept) {
                Some(id) => argv.extend([RESUME_FLAG.to_owned(), id]),
                None => {
                    // No conversation to go back to (it never had a prompt): a new session.
                    // Gemini CLI refuses an id whose unprompted file is still there: never the old
                    // one (a lead's fresh id is the one it had).
                    let fresh_id =
                        if profile == Profile::Gemini && recorded.as_deref() == Some(fresh_id) {
                            crate::base::ids::fresh().to_string()
                        } else {
                            fresh_id.to_owned()
                        };
                    if session_id.is_some() {
                        note = afresh(match profile {
                            Profile::Claude => "Claude Code kept no transcript of its session",
                            _ => "Gemini CLI kept no conversation of its session",
                        });
                    }
                    argv.extend([SESSION_FLAG.to_owned(), fresh_id.clone()]);
                    session_id = Some(fresh_id);
                }
            }
        }
        Profile::Codex => {
            // What an earlier resume added goes: `-c tui.resume_cwd=… resume <id>` ends it.
            if let Some(at) = argv
                .windows(2)
                .position(|pair| pair[0] == "-c" && pair[1] == CODEX_RESUME_CWD)
            {
                argv.truncate(at);
            }
            let codex = CodexPaths::new(os("CODEX_HOME").as_deref(), os("HOME").as_deref());
            match recorded {
                Some(id) if codex.is_some_and(|codex| codex.has_rollout(&id)) => {
                    argv.extend([
                        "-c".to_owned(),
                        CODEX_RESUME_CWD.to_owned(),
                        "resume".to_owned(),
                        id,
                    ]);
                }
                // Kept: the one to go back to until the new run tells its own.
                Some(_) => note = afresh("Codex kept no rollout of its session"),
                None => note = afresh("Codex told no session id: it finished no turn"),
            }
        }
        Profile::Aider => {
            let flags = flags_in(&argv);
            if !flags.contains(AIDER_RESTORE_FLAG) && !flags.contains("--no-restore-chat-history") {
                argv.push(AIDER_RESTORE_FLAG.to_owned());
            }
        }
        Profile::Opencode | Profile::Generic => {}
    }
    Resumption {
        argv,
        session_id,
        note,
    }
}

/// Puts `id` in place of every `{session_id}` in `argv`'s arguments; `true` when there was one.
pub(crate) fn name_session(argv: &mut [String], id: &str) -> bool {
    let mut named = false;
    for arg in argv.iter_mut().skip(1) {
        if arg.contains(SESSION_PLACEHOLDER) {
            *arg = arg.replace(SESSION_PLACEHOLDER, id);
            named = true;
        }
    }
    named
}

/// The session a launch of `profile` with `argv` starts, when swarm knows it now: `id` when the
/// command named it (`{session_id}`), else Claude Code's and Gemini CLI's `--session-id` (or
/// `--resume`). Codex chooses its own, told later (`swarm hook codex`); aider has none.
fn started_session(profile: Profile, argv: &[String], id: &str, named: bool) -> Option<String> {
    if named {
        return Some(id.to_owned());
    }
    match profile {
        Profile::Claude | Profile::Gemini => session_in(argv),
        Profile::Codex | Profile::Aider | Profile::Opencode | Profile::Generic => None,
    }
}

/// The keys a Codex argv overrides with `-c key=value`, `--config key=value` or
/// `--config=key=value`.
fn codex_overrides(argv: &[String]) -> Vec<String> {
    let mut keys = Vec::new();
    for flag in CODEX_CONFIG_FLAGS {
        for arg in occurrences(argv, flag) {
            let value = match arg
                .strip_prefix(flag)
                .and_then(|rest| rest.strip_prefix('='))
            {
                Some(value) => value,
                None if arg == flag => continue,
                None => arg.as_str(),
            };
            if let Some((key, _)) = value.split_once('=') {
                keys.push(key.trim().to_owned());
            }
        }
    }
    keys
}

/// `argv` without any `flag` and its value: the session flags a resume replaces.
pub(crate) fn without_flag(argv: &[String], flag: &str) -> Vec<String> {
    let mut kept = Vec::with_capacity(argv.len());
    let mut args = argv.iter().peekable();
    if let Some(program) = args.next() {
        kept.push(program.clone());
    }
    while let Some(arg) = args.next() {
        if arg == flag {
            args.next_if(|next| !next.starts_with('-'));
        } else if !arg
            .strip_prefix(flag)
            .is_some_and(|rest| rest.starts_with('='))
        {
            kept.push(arg.clone());
        }
    }
    kept
}

/// Flag names present in `argv`, with `--flag=value` counted as `--flag`.
fn flags_in(argv: &[String]) -> BTreeSet<String> {
    argv.iter()
        .filter(|arg| arg.starts_with('-'))
        .map(|arg| {
            arg.split_once('=')
                .map_or(arg.as_str(), |(flag, _)| flag)
                .to_owned()
        })
        .collect()
}

/// Every occurrence of `flag` in `argv`, as `--flag value`, `--flag=value` or a bare boolean flag.
/// A flag's value is the next argument unless it looks like another flag.
fn occurrences(argv: &[String], flag: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut args = argv.iter().skip(1).peekable();
    while let Some(arg) = args.next() {
        if arg == "--" {
            break;
        }
        if arg
            .strip_prefix(flag)
            .is_some_and(|rest| rest.starts_with('='))
        {
            found.push(arg.clone());
        } else if arg == flag {
            found.push(arg.clone());
            if !BOOLEAN_FLAGS.contains(&flag)
                && let Some(value) = args.next_if(|next| !next.starts_with('-'))
            {
                found.push(value.clone());
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    fn team<'a>(lead_argv: &'a [String], inherit: &'a [String]) -> TeamLaunch<'a> {
        TeamLaunch {
            home: Path::new("/h"),
            team: "t",
            lead: "team-lead",
            lead_session_id: "sess",
            lead_profile: Profile::Claude,
            lead_argv: Some(lead_argv),
            inherit,
        }
    }

    const NO_RULES: &EnvPolicy = &EnvPolicy {
        clear: false,
        keep: BTreeSet::new(),
        remove: BTreeSet::new(),
    };

    fn request(env: &BTreeMap<String, String>) -> TeammateRequest<'_> {
        TeammateRequest {
            name: "bob",
            command: None,
            profile: Profile::Claude,
            agent_type: None,
            model: None,
            color: Some(Color::Blue),
            plan_mode_required: false,
            env,
            env_policy: NO_RULES,
            asks_through_swarm: false,
            session_id: "bob-session",
            mcp: false,
        }
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn claude_teammate_gets_identity_and_inherited_flags() {
        let lead = strings(&[
            "claude",
            "--model",
            "opus",
            "--permission-mode=acceptEdits",
            "--verbose",
            "do it",
        ]);
        let inherit = strings(&["--model", "--permission-mode", "--settings"]);
        let env = BTreeMap::new();
        let launch = team(&lead, &inherit).teammate(&request(&env), &no_env);
        let mut wanted = strings(&[
            "claude",
            "--model",
            "opus",
            "--permission-mode=acceptEdits",
            "--agent-id",
            "bob@t",
            "--agent-name",
            "bob",
            "--team-name",
            "t",
            "--agent-color",
            "blue",
            "--parent-session-id",
            "sess",
            "--session-id",
            "bob-session",
        ]);
        // No settings of its own: the activity hooks, in the one --settings swarm gives.
        wanted.extend(["--settings".to_owned(), claude_settings(false)]);
        assert_eq!(launch.argv, wanted);
        assert!(launch.activity_hooks);
        assert_eq!(launch.env["CLAUDECODE"], "1");
        assert_eq!(launch.env["CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS"], "1");
        assert_eq!(launch.env["CLAUDE_CODE_ENABLE_TODO_TOOLS"], "1");
        assert_eq!(launch.env["SWARM_AGENT_ID"], "bob@t");
    }

    #[test]
    fn the_generated_settings_hold_the_activity_hooks_and_the_permission_hook_once() {
        let settings: serde_json::Value = serde_json::from_str(&claude_settings(true)).unwrap();
        let hooks = settings["hooks"].as_object().unwrap();
        assert_eq!(
            hooks.keys().map(String::as_str).collect::<Vec<_>>(),
            CLAUDE_ACTIVITY_EVENTS
        );
        for (event, entries) in hooks {
            let commands: Vec<&str> = entries
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["hooks"][0]["command"].as_str().unwrap())
                .collect();
            let wanted: &[&str] = if event == "PreToolUse" {
                &["swarm hook claude", "swarm permission hook claude"]
            } else {
                &["swarm hook claude"]
            };
            assert_eq!(commands, wanted, "{event}");
        }
        assert!(!claude_settings(false).contains("permission hook"));
    }

    #[test]
    fn a_members_env_overrides_what_the_claude_profile_sets() {
        let lead = strings(&["claude"]);
        let env = BTreeMap::from([("CLAUDE_CODE_ENABLE_TODO_TOOLS".to_owned(), "0".to_owned())]);
        let team = team(&lead, &[]);
        let launch = team.teammate(&request(&env), &no_env);
        assert_eq!(launch.env["CLAUDE_CODE_ENABLE_TODO_TOOLS"], "0");
        let launch = team.lead(&lead, &env, NO_RULES, false, &no_env);
        assert_eq!(launch.env["CLAUDE_CODE_ENABLE_TODO_TOOLS"], "0");
    }

    #[test]
    fn member_model_overrides_and_own_flags_win() {
        let lead = strings(&["claude", "--model", "opus", "--settings", "a.json"]);
        let inherit = strings(&["--model", "--settings"]);
        let env = BTreeMap::new();
        let own = strings(&["claude", "--settings", "mine.json"]);
        let mut member = request(&env);
        member.model = Some("sonnet");
        member.command = Some(&own);
        let launch = team(&lead, &inherit).teammate(&member, &no_env);
        let argv = launch.argv;
        assert_eq!(
            &argv[..5],
            strings(&["claude", "--settings", "mine.json", "--model", "sonnet"])
        );
        assert!(!argv.contains(&"opus".to_owned()) && !argv.contains(&"a.json".to_owned()));
        // Its own settings are the one Claude Code takes: no hooks added beside them.
        assert_eq!(argv.iter().filter(|a| *a == "--settings").count(), 1);
        assert!(!launch.activity_hooks);
    }

    #[test]
    fn plan_mode_teammate_gets_no_bypass_and_starts_in_plan_mode() {
        let lead = strings(&[
            "claude",
            "--dangerously-skip-permissions",
            "--permission-mode",
            "bypassPermissions",
        ]);
        let inherit = strings(&["--dangerously-skip-permissions", "--permission-mode"]);
        let env = BTreeMap::new();
        let mut member = request(&env);
        member.plan_mode_required = true;
        member.agent_type = Some("reviewer");
        let argv = team(&lead, &inherit).teammate(&member, &no_env).argv;
        assert!(
            !argv.iter().any(|a| a.contains("dangerously")
                || a.contains("bypass")
                || a == "--permission-mode"),
            "{argv:?}"
        );
        assert!(
            argv.ends_with(&strings(&[
                "--plan-mode-required",
                "--agent-type",
                "reviewer",
                "--settings",
                &claude_settings(false),
            ])),
            "{argv:?}"
        );
    }

    #[test]
    fn generic_profile_uses_swarm_variables_only() {
        let lead = strings(&["aider", "--model", "x"]);
        let inherit = strings(&["--model"]);
        let env = BTreeMap::from([("SWARM_AGENT".to_owned(), "mallory".to_owned())]);
        let command = strings(&["aider"]);
        let member = TeammateRequest {
            command: Some(&command),
            profile: Profile::Generic,
            plan_mode_required: true,
            ..request(&env)
        };
        let mut launch_team = team(&lead, &inherit);
        launch_team.lead_profile = Profile::Generic;
        let launch = launch_team.teammate(&member, &no_env);
        assert_eq!(launch.argv, strings(&["aider", "--model", "x"]));
        assert_eq!(launch.env["SWARM_PLAN_MODE"], "required");
        assert_eq!(
            launch.env["SWARM_AGENT"], "bob",
            "identity cannot be overridden"
        );
        assert!(!launch.env.contains_key("CLAUDECODE"));
    }

    #[test]
    fn other_profiles_inherit_nothing() {
        let lead = strings(&["claude", "--model", "opus"]);
        let inherit = strings(&["--model"]);
        let env = BTreeMap::new();
        let command = strings(&["codex"]);
        let member = TeammateRequest {
            command: Some(&command),
            profile: Profile::Generic,
            ..request(&env)
        };
        assert_eq!(
            team(&lead, &inherit).teammate(&member, &no_env).argv,
            strings(&["codex"])
        );
    }

    #[test]
    fn only_proxy_ca_and_base_url_variables_are_forwarded() {
        let lead = strings(&["claude"]);
        let env = BTreeMap::new();
        let launcher = |key: &str| match key {
            "HTTPS_PROXY" => Some("http://proxy:3128".to_owned()),
            "ANTHROPIC_BASE_URL" => Some("https://gw".to_owned()),
            "ANTHROPIC_API_KEY" => Some("secret".to_owned()),
            _ => None,
        };
        let launch = team(&lead, &[]).teammate(&request(&env), &launcher);
        assert_eq!(launch.env["HTTPS_PROXY"], "http://proxy:3128");
        assert_eq!(launch.env["ANTHROPIC_BASE_URL"], "https://gw");
        assert!(!launch.env.values().any(|v| v == "secret"));

        // The member's rules hold for what is copied as for what is inherited.
        let rules = EnvPolicy {
            clear: true,
            keep: BTreeSet::from(["ANTHROPIC_BASE_URL".to_owned()]),
            remove: BTreeSet::new(),
        };
        let mut member = request(&env);
        member.env_policy = &rules;
        let launch = team(&lead, &[]).teammate(&member, &launcher);
        assert_eq!(launch.env["ANTHROPIC_BASE_URL"], "https://gw");
        assert!(!launch.env.contains_key("HTTPS_PROXY"));
    }

    #[test]
    fn claude_lead_gets_the_team_session() {
        let lead = strings(&["claude", "--model", "opus"]);
        let launch = team(&lead, &[]).lead(&lead, &BTreeMap::new(), NO_RULES, false, &no_env);
        assert_eq!(
            launch.argv,
            strings(&["claude", "--model", "opus", "--session-id", "sess"])
        );
        assert!(
            !launch.env.contains_key("CLAUDECODE"),
            "a lead is not nested in Claude Code"
        );
        assert_eq!(launch.env["CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS"], "1");
        assert_eq!(launch.env["CLAUDE_CODE_ENABLE_TODO_TOOLS"], "1");
    }

    fn teammate_of(profile: Profile, command: Option<&[String]>) -> Launch {
        let lead = strings(&["claude"]);
        let env = BTreeMap::new();
        let member = TeammateRequest {
            command,
            profile,
            model: Some("m1"),
            ..request(&env)
        };
        team(&lead, &[]).teammate(&member, &no_env)
    }

    /// `mcp = true` registers `swarm mcp` as each program takes a server on its command line, and
    /// a codex member's own `mcp_servers.swarm` is left as it is.
    #[test]
    fn an_mcp_member_gets_swarm_mcp_as_its_program_takes_it() {
        let lead = strings(&["claude"]);
        let env = BTreeMap::new();
        let launch = |profile: Profile, command: &[String]| {
            let member = TeammateRequest {
                command: Some(command),
                profile,
                mcp: true,
                ..request(&env)
            };
            team(&lead, &[]).teammate(&member, &no_env).argv
        };
        let codex = launch(Profile::Codex, &strings(&["codex"]));
        let home = team(&lead, &[]).home.display().to_string();
        let overrides: Vec<&str> = codex
            .windows(2)
            .filter(|pair| pair[0] == "-c" && pair[1].starts_with("mcp_servers."))
            .map(|pair| pair[1].as_str())
            .collect();
        assert_eq!(
            overrides,
            [
                r#"mcp_servers.swarm.command="swarm""#.to_owned(),
                format!(r#"mcp_servers.swarm.args=["mcp","--home","{home}","--team","t"]"#),
                r#"mcp_servers.swarm.default_tools_approval_mode="approve""#.to_owned(),
            ]
        );
        let own = launch(
            Profile::Codex,
            &strings(&["codex", "-c", "mcp_servers.swarm.command=\"mine\""]),
        );
        assert_eq!(
            own.iter().filter(|a| a.starts_with("mcp_servers.")).count(),
            1
        );

        let claude = launch(Profile::Claude, &strings(&["claude"]));
        let at = claude.iter().position(|a| a == "--mcp-config").unwrap();
        assert!(claude[at + 1].ends_with("/teams/t/mcp.json"), "{claude:?}");
        assert!(
            claude[at + 2].starts_with("--"),
            "a flag ends the variadic list"
        );
        for profile in [
            Profile::Gemini,
            Profile::Aider,
            Profile::Opencode,
            Profile::Generic,
        ] {
            let argv = launch(profile, &strings(&["x"]));
            assert!(!argv.iter().any(|a| a.contains("mcp")), "{argv:?}");
        }
    }

    #[test]
    fn profiles_are_told_by_the_programs_name() {
        let detect = |program: &str| detect_profile(Some(&strings(&[program])));
        assert_eq!(detect("/usr/bin/claude"), Some(Profile::Claude));
        assert_eq!(detect("codex"), Some(Profile::Codex));
        assert_eq!(detect("/opt/node/bin/gemini"), Some(Profile::Gemini));
        assert_eq!(detect("aider"), Some(Profile::Aider));
        assert_eq!(detect("codex-wrapper"), Some(Profile::Generic));
        for profile in [Profile::Codex, Profile::Gemini, Profile::Aider] {
            assert_eq!(default_program(profile), Some(profile.as_str()));
        }
    }

    #[test]
    fn a_codex_teammate_tells_its_turns_to_swarm_hook_codex_through_notify() {
        let launch = teammate_of(Profile::Codex, None);
        assert_eq!(
            launch.argv,
            strings(&[
                "codex",
                "--model",
                "m1",
                "-c",
                r#"notify=["swarm","hook","codex"]"#
            ])
        );
        // The screen tells when it works; notify only its turn's end, and its session.
        assert!(!launch.activity_hooks);
        assert_eq!(launch.session_id, None, "Codex chooses its own session id");
        assert!(!launch.env.contains_key("CLAUDECODE"));
        // Its own notify is the user's: none is added beside it.
        let own = strings(&["codex", "-m", "o3", "--config", "notify=[\"my-notifier\"]"]);
        let launch = teammate_of(Profile::Codex, Some(&own));
        assert_eq!(launch.argv, own);
        let joined = strings(&["codex", "--config=notify=[]"]);
        assert_eq!(teammate_of(Profile::Codex, Some(&joined)).argv[..2], joined);
    }

    #[test]
    fn a_gemini_teammate_starts_its_own_session_in_swarms_gemini_home() {
        let launch = teammate_of(Profile::Gemini, None);
        assert_eq!(
            launch.argv,
            strings(&["gemini", "--model", "m1", "--session-id", "bob-session"])
        );
        assert_eq!(launch.session_id.as_deref(), Some("bob-session"));
        assert_eq!(launch.env[GEMINI_HOME_VAR], "/h/teams/t/gemini-home");
        assert!(launch.activity_hooks);
        // A home of its own: swarm's hooks are not in the settings it reads.
        let lead = strings(&["claude"]);
        let env = BTreeMap::from([(GEMINI_HOME_VAR.to_owned(), "/home/me".to_owned())]);
        let member = TeammateRequest {
            command: None,
            profile: Profile::Gemini,
            ..request(&env)
        };
        let launch = team(&lead, &[]).teammate(&member, &no_env);
        assert_eq!(launch.env[GEMINI_HOME_VAR], "/home/me");
        assert!(!launch.activity_hooks);
        assert_eq!(launch.argv[1], SESSION_FLAG, "its session is still chosen");
    }

    #[test]
    fn an_aider_teammate_keeps_its_histories_in_files_of_its_own() {
        let launch = teammate_of(Profile::Aider, None);
        assert_eq!(
            launch.argv,
            strings(&[
                "aider",
                "--model",
                "m1",
                "--chat-history-file",
                "/h/teams/t/aider/bob.chat.md",
                "--input-history-file",
                "/h/teams/t/aider/bob.input",
            ])
        );
        assert_eq!(launch.session_id, None);
        let own = strings(&["aider", "--chat-history-file", "x.md"]);
        assert_eq!(
            teammate_of(Profile::Aider, Some(&own)).argv[1..4],
            strings(&["--chat-history-file", "x.md", "--model"])
        );
    }

    #[test]
    fn a_generic_command_names_its_session_with_the_placeholder() {
        let command = strings(&["mytool", "--session={session_id}"]);
        let launch = teammate_of(Profile::Generic, Some(&command));
        assert_eq!(launch.argv, strings(&["mytool", "--session=bob-session"]));
        assert_eq!(launch.session_id.as_deref(), Some("bob-session"));
        let plain = strings(&["mytool"]);
        assert_eq!(teammate_of(Profile::Generic, Some(&plain)).session_id, None);
    }

    #[test]
    fn teammates_of_a_codex_lead_inherit_its_configuration() {
        let lead = strings(&[
            "codex",
            "-c",
            "model_provider=fake",
            "-m",
            "gpt-5.1-codex",
            "--dangerously-bypass-approvals-and-sandbox",
            "fix it",
        ]);
        let inherit: Vec<String> = default_inherit(Profile::Codex)
            .iter()
            .map(|f| (*f).to_owned())
            .collect();
        let env = BTreeMap::new();
        let member = TeammateRequest {
            command: None,
            profile: Profile::Codex,
            ..request(&env)
        };
        let mut launch_team = team(&lead, &inherit);
        launch_team.lead_profile = Profile::Codex;
        let launch = launch_team.teammate(&member, &no_env);
        assert_eq!(
            launch.argv,
            strings(&[
                "codex",
                "-m",
                "gpt-5.1-codex",
                "-c",
                "model_provider=fake",
                "--dangerously-bypass-approvals-and-sandbox",
                "-c",
                r#"notify=["swarm","hook","codex"]"#,
            ])
        );
        // The lead gets what lets it be resumed too, and no activity hooks.
        let launch = launch_team.lead(&lead, &BTreeMap::new(), NO_RULES, false, &no_env);
        assert!(launch.argv.ends_with(&strings(&["-c", CODEX_NOTIFY])));
    }

    fn recorded(profile: Profile, argv: &[&str], session: Option<&str>) -> Member {
        let mut member = Member::new("bob", "t", 0);
        member.profile = Some(profile);
        member.argv = Some(strings(argv));
        member.session_id = session.map(str::to_owned);
        member
    }

    /// A folder standing for `$HOME`, with the files each program keeps of session `id`.
    fn home_with_sessions(id: &str) -> tempfile::TempDir {
        let home = tempfile::tempdir().unwrap();
        let day = home.path().join(".codex/sessions/2026/11/26");
        std::fs::create_dir_all(&day).unwrap();
        std::fs::write(
            day.join(format!("rollout-2026-11-26T10-00-00-{id}.jsonl")),
            "{}\n",
        )
        .unwrap();
        let chats = home.path().join(".gemini/tmp/proj/chats");
        std::fs::create_dir_all(&chats).unwrap();
        let short = &id[..8];
        std::fs::write(
            chats.join(format!("session-2026-11-26T10-00-{short}.jsonl")),
            format!(
                "{{\"sessionId\":\"{id}\",\"kind\":\"main\"}}\n\
                 {{\"$set\":{{\"messages\":[]}}}}\n\
                 {{\"id\":\"m1\",\"type\":\"user\",\"content\":[{{\"text\":\"do things\"}}]}}\n"
            ),
        )
        .unwrap();
        home
    }

    #[test]
    fn each_profile_resumes_its_conversation_only_when_its_program_kept_it() {
        let id = "019a0000-1111-7222-8333-444455556666";
        let home = home_with_sessions(id);
        let home_dir = home.path().display().to_string();
        let var = |key: &str| (key == "HOME").then(|| home_dir.clone());
        let notify = r#"notify=["swarm","hook","codex"]"#;

        let codex = recorded(Profile::Codex, &["codex", "-c", notify], Some(id));
        let resumed = resume(&codex, "fresh", &var);
        assert_eq!(
            resumed.argv,
            strings(&[
                "codex",
                "-c",
                notify,
                "-c",
                r#"tui.resume_cwd="session""#,
                "resume",
                id
            ])
        );
        assert_eq!(
            (resumed.session_id.as_deref(), resumed.note),
            (Some(id), None)
        );
        // Resumed twice: the first resume's words are not said again.
        let again = recorded(
            Profile::Codex,
            &resumed.argv.iter().map(String::as_str).collect::<Vec<_>>(),
            Some(id),
        );
        assert_eq!(resume(&again, "fresh", &var).argv, resumed.argv);
        let untold = resume(
            &recorded(Profile::Codex, &["codex", "-c", notify], None),
            "fresh",
            &var,
        );
        assert_eq!(untold.argv, strings(&["codex", "-c", notify]));
        assert!(
            untold
                .note
                .unwrap()
                .contains("bob starts a new conversation: Codex told no session id")
        );
        let lost = "019a0000-9999-7222-8333-444455556666";
        let gone = resume(
            &recorded(Profile::Codex, &["codex", "-c", notify], Some(lost)),
            "fresh",
            &var,
        );
        assert_eq!(
            (gone.argv.len(), gone.session_id.as_deref()),
            (3, Some(lost))
        );

        let gemini = recorded(
            Profile::Gemini,
            &["gemini", "-m", "x", "--session-id", id],
            Some(id),
        );
        let resumed = resume(&gemini, "fresh", &var);
        assert_eq!(
            resumed.argv,
            strings(&["gemini", "-m", "x", "--resume", id])
        );
        assert_eq!(resumed.note, None);
        // Never prompted: Gemini CLI cannot resume it, nor start it again with the same id.
        let unprompted = recorded(
            Profile::Gemini,
            &["gemini", "--session-id", lost],
            Some(lost),
        );
        let fresh = resume(&unprompted, "fresh", &var);
        assert_eq!(fresh.argv, strings(&["gemini", "--session-id", "fresh"]));
        assert_eq!(fresh.session_id.as_deref(), Some("fresh"));
        assert!(
            fresh
                .note
                .unwrap()
                .contains("Gemini CLI kept no conversation")
        );
        // A lead's fresh id is the team's, the one it had: a new one all the same.
        let lead = resume(&unprompted, lost, &var);
        assert_eq!(lead.argv[1], SESSION_FLAG);
        assert_ne!(lead.argv[2], lost);

        let aider = recorded(
            Profile::Aider,
            &["aider", "--chat-history-file", "c.md"],
            None,
        );
        let resumed = resume(&aider, "fresh", &var);
        assert_eq!(
            resumed.argv,
            strings(&[
                "aider",
                "--chat-history-file",
                "c.md",
                "--restore-chat-history"
            ])
        );
        assert_eq!(
            resume(
                &recorded(
                    Profile::Aider,
                    &resumed.argv.iter().map(String::as_str).collect::<Vec<_>>(),
                    None
                ),
                "fresh",
                &var
            )
            .argv,
            resumed.argv
        );

        let generic = recorded(Profile::Generic, &["mytool", "--session=abc"], Some("abc"));
        assert_eq!(
            resume(&generic, "fresh", &var).argv,
            strings(&["mytool", "--session=abc"])
        );
        let mut told = generic.clone();
        told.resume_command = Some(strings(&["mytool", "--resume", "{session_id}"]));
        assert_eq!(
            resume(&told, "fresh", &var).argv,
            strings(&["mytool", "--resume", "abc"])
        );
        told.session_id = None;
        let afresh = resume(&told, "fresh", &var);
        assert_eq!(afresh.argv, strings(&["mytool", "--session=abc"]));
        assert!(
            afresh
                .note
                .unwrap()
                .contains("names {session_id}, and none was recorded")
        );
    }
}
