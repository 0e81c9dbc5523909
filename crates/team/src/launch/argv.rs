//! What a member's pane runs: its exact argv and environment, built from the team file, the lead's
//! recorded argv and the member's profile (docs/ARCHITECTURE.md, "Launching").

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;

use crate::base::process::LEAD_VAR;
pub use crate::format::settings::{Color, EnvPolicy, Profile};

/// `claude` when the program is Claude Code, else generic.
pub(crate) fn detect_profile(command: Option<&[String]>) -> Option<Profile> {
    let program = command?.first()?;
    let base = Path::new(program).file_name()?.to_str()?;
    Some(if base == "claude" {
        Profile::Claude
    } else {
        Profile::Generic
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
        Profile::Generic => &[],
    }
}

/// The program a member of this profile runs when it names none.
pub(crate) fn default_program(profile: Profile) -> Option<&'static str> {
    match profile {
        Profile::Claude => Some("claude"),
        Profile::Generic => None,
    }
}

/// Claude Code's flag that starts a session with a chosen id.
pub(crate) const SESSION_FLAG: &str = "--session-id";

/// Claude Code's flag that resumes a session; it cannot be combined with [`SESSION_FLAG`].
pub(crate) const RESUME_FLAG: &str = "--resume";

/// Flags that take no value, so the next argument is not theirs.
const BOOLEAN_FLAGS: &[&str] = &[
    "--dangerously-skip-permissions",
    "--allow-dangerously-skip-permissions",
    "--verbose",
    "--debug",
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
    /// Its program tells its activity through hooks swarm wired in (`claude_settings`).
    #[serde(skip)]
    pub(crate) activity_hooks: bool,
}

impl TeamLaunch<'_> {
    /// The lead runs its own command; a Claude Code lead gets the team's session id.
    pub(crate) fn lead(
        &self,
        command: &[String],
        env: &BTreeMap<String, String>,
        env_policy: &EnvPolicy,
        launcher_env: &dyn Fn(&str) -> Option<String>,
    ) -> Launch {
        let mut argv = command.to_vec();
        if self.lead_profile == Profile::Claude {
            let flags = flags_in(&argv);
            if !flags.contains(SESSION_FLAG) && !flags.contains(RESUME_FLAG) {
                argv.extend([SESSION_FLAG.to_owned(), self.lead_session_id.to_owned()]);
            }
        }
        let env = self.environment(&Role::Lead, env, env_policy, launcher_env);
        Launch {
            argv,
            env,
            activity_hooks: false,
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
            && (member.profile == Profile::Claude || self.inherit.iter().any(|f| f == "--model"))
        {
            argv.extend(["--model".to_owned(), model.to_owned()]);
        }

        // Only Claude Code takes identity flags; every other profile learns it from `SWARM_*`.
        let mut activity_hooks = false;
        match member.profile {
            Profile::Claude => {
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
            Profile::Generic => {}
        }
        let role = Role::Teammate {
            name: member.name,
            profile: member.profile,
            plan_mode_required: member.plan_mode_required,
            color: member.color,
        };
        let env = self.environment(&role, member.env, member.env_policy, launcher_env);
        Launch {
            argv,
            env,
            activity_hooks,
        }
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
                profile: Profile::Generic,
                plan_mode_required,
                ..
            } => {
                if plan_mode_required {
                    env.insert("SWARM_PLAN_MODE".into(), "required".into());
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
        let launch = team.lead(&lead, &env, NO_RULES, &no_env);
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
        let launch = team(&lead, &[]).lead(&lead, &BTreeMap::new(), NO_RULES, &no_env);
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
}
