//! From a team file to a team ready to be written: the config with every member's exact argv,
//! and each pane's plan. `init` and `up` both go through here; `member/seal.rs` writes it and
//! queues each prompt, signed where it must be.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::base::{clock, ids};
use crate::format::config::{LaunchSettings, Member, TeamConfig};
pub use crate::format::settings::{Color, EnvPolicy};
pub use crate::format::settings::{Isolation, Restart};
use crate::launch::argv::{Launch, TeamLaunch, TeammateRequest};
use crate::launch::teamfile::{DEFAULT_LOG_MAX, MemberSpec, TeamFile, Watching};
use crate::store::paths::Home;

/// A team ready to be written, with what each pane will run.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub config: TeamConfig,
    pub panes: Vec<PanePlan>,
}

/// One pane to start: the member's name, command, environment and directory. A member on another
/// host gets its plan in `up`'s start request to that host's node.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PanePlan {
    pub name: String,
    pub argv: Vec<String>,
    /// The variables the launch sets for it, which reach its supervisor in a handoff file.
    pub env: BTreeMap<String, String>,
    /// Which inherited variables its program keeps; config.json records them for its supervisor.
    pub(crate) env_policy: EnvPolicy,
    /// Whether it works in a worktree of its own.
    pub(crate) worktree: bool,
    pub cwd: PathBuf,
    /// The bound of the member's log, which its supervisor is told on its command line.
    pub(crate) log_max: u64,
}

/// Builds the config and pane plans. `launcher_env` reads the launcher's environment, for the
/// variables the claude profile forwards.
pub fn prepare(
    home: &Home,
    file: &TeamFile,
    launcher_env: &dyn Fn(&str) -> Option<String>,
) -> Prepared {
    let now = clock::now_ms();
    let team = file.name.as_str();
    let lead_name = file.lead.name.as_str();
    let session = ids::fresh().to_string();
    let launch_team = TeamLaunch {
        home: home.root(),
        team,
        lead: lead_name,
        lead_session_id: &session,
        lead_profile: file.lead.profile,
        lead_argv: file.lead.command.as_deref(),
        inherit: &file.lead.inherit,
    };

    let mut panes = Vec::new();
    let mut lead = Member::new(lead_name, team, now);
    lead.agent_type = Some("team-lead".to_owned());
    lead.cwd = file.lead.cwd.display().to_string();
    lead.profile = Some(file.lead.profile);
    lead.env_policy = file.lead.env_policy.clone();
    if let Some(command) = &file.lead.command {
        let launch = launch_team.lead(
            command,
            &file.lead.env,
            &file.lead.env_policy,
            file.lead.mcp,
            launcher_env,
        );
        record_launch(&mut lead, &launch);
        lead.mcp = file.lead.mcp.then_some(true);
        lead.log_max = Some(file.lead.log_max);
        panes.push(PanePlan {
            name: lead_name.to_owned(),
            argv: launch.argv,
            env: launch.env,
            env_policy: file.lead.env_policy.clone(),
            worktree: false,
            cwd: file.lead.cwd.clone(),
            log_max: file.lead.log_max,
        });
    }
    let mut members = vec![lead];

    for (index, spec) in file.members.iter().enumerate() {
        let color = spec.color.unwrap_or_else(|| Color::round_robin(index));
        let (member, pane) = teammate(&launch_team, spec, color, now, launcher_env);
        panes.push(pane);
        members.push(member);
    }

    let config = TeamConfig {
        name: team.to_owned(),
        description: file.description.clone(),
        created_at: now,
        lead_agent_id: format!("{lead_name}@{team}"),
        lead_session_id: Some(session),
        members,
        launch: Some(LaunchSettings {
            layout: file
                .layout
                .as_ref()
                .map(|layout| layout.as_str().to_owned()),
            max_concurrent: file.max_concurrent,
            profile: file.lead.profile,
            inherit: file.lead.inherit.clone(),
            base_dir: Some(crate::store::durable::parent(&file.path).to_path_buf()),
            env_policy: file.env_policy.clone(),
            extra: file
                .log_max
                .map(|bytes| (LOG_MAX_KEY.to_owned(), bytes.into()))
                .into_iter()
                .chain(
                    (file.watching != Watching::default())
                        .then(|| serde_json::to_value(&file.watching).ok())
                        .flatten()
                        .map(|watching| (WATCHING_KEY.to_owned(), watching)),
                )
                .chain(file.mcp.then(|| (MCP_KEY.to_owned(), true.into())))
                .collect(),
        }),
        tmux: None,
        launching: false,
        budget: file.budget.clone(),
        budget_reached: std::collections::BTreeSet::new(),
        prices: file.prices.clone(),
        extra: serde_json::Map::new(),
    };
    Prepared { config, panes }
}

/// A teammate's record in config.json and its pane's plan, from its settings: what `up`, `init`
/// and `spawn` all write for a member, so a member spawned later is the same as one in the file.
pub fn teammate(
    launch_team: &TeamLaunch<'_>,
    spec: &MemberSpec,
    color: Color,
    now: u64,
    launcher_env: &dyn Fn(&str) -> Option<String>,
) -> (Member, PanePlan) {
    let launch = launch_team.teammate(
        &TeammateRequest {
            name: spec.name.as_str(),
            command: spec.command.as_deref(),
            profile: spec.profile,
            agent_type: spec.agent_type.as_deref(),
            model: spec.model.as_deref(),
            color: Some(color),
            plan_mode_required: spec.plan_mode_required,
            env: &spec.env,
            env_policy: &spec.env_policy,
            asks_through_swarm: spec.asks_through_swarm,
            mcp: spec.mcp,
            session_id: &ids::fresh().to_string(),
        },
        launcher_env,
    );
    let mut member = Member::new(spec.name.as_str(), launch_team.team, now);
    member.agent_type.clone_from(&spec.agent_type);
    member.model.clone_from(&spec.model);
    member.prompt.clone_from(&spec.prompt);
    member.color = Some(color.as_str().to_owned());
    member.plan_mode_required = spec.plan_mode_required.then_some(true);
    member.cwd = spec.cwd.display().to_string();
    member.profile = Some(spec.profile);
    member.env_policy = spec.env_policy.clone();
    member.protocol = Some(spec.protocol);
    member.delivery = Some(spec.delivery);
    member.paste_format = spec
        .paste_format
        .as_ref()
        .map(|format| format.as_str().to_owned());
    member.mcp = spec.mcp.then_some(true);
    member.run_timeout_s = (spec.run_timeout_s > 0).then_some(spec.run_timeout_s);
    member.isolation = (spec.isolation == Isolation::Worktree).then_some(Isolation::Worktree);
    member.log_max = Some(spec.log_max);
    member.host = spec.host.as_ref().map(ToString::to_string);
    member.idle_pattern.clone_from(&spec.watching.idle_pattern);
    member
        .needs_you_pattern
        .clone_from(&spec.watching.needs_you_pattern);
    member.stall_after_s = spec.watching.stall_after_s;
    if spec.restart.policy != Restart::Never {
        member.restart = Some(spec.restart.policy);
        member.restart_max = Some(spec.restart.max);
    }
    member.sandbox.clone_from(&spec.fence);
    member.activity_hooks = launch.activity_hooks.then_some(true);
    member.resume_command.clone_from(&spec.resume_command);
    record_launch(&mut member, &launch);
    let pane = PanePlan {
        name: spec.name.as_str().to_owned(),
        argv: launch.argv,
        env: launch.env,
        env_policy: spec.env_policy.clone(),
        worktree: spec.isolation == Isolation::Worktree,
        cwd: spec.cwd.clone(),
        log_max: spec.log_max,
    };
    (member, pane)
}

pub(crate) fn record_launch(member: &mut Member, launch: &Launch) {
    member.session_id.clone_from(&launch.session_id);
    member.argv = Some(launch.argv.clone());
    member.env_keys = Some(launch.env.keys().cloned().collect());
}

/// Where config.json keeps the team file's `log_max`, for members `spawn` adds later: in the
/// launch settings, beside the fields `format::config` names.
const LOG_MAX_KEY: &str = "logMax";

const WATCHING_KEY: &str = "watching";

/// Where config.json keeps the team file's team-wide `mcp = true`, for members `spawn` adds.
const MCP_KEY: &str = "mcp";

/// Whether a member `spawn` adds gets `swarm mcp` unless it says: the team file's `mcp`.
pub fn team_mcp(settings: &LaunchSettings) -> bool {
    settings
        .extra
        .get(MCP_KEY)
        .and_then(serde_json::Value::as_bool)
        == Some(true)
}

/// How a member `spawn` adds is watched, unless it says: the team file's `idle_pattern`,
/// `needs_you_pattern` and `stall_after`.
pub fn team_watching(settings: &LaunchSettings) -> Watching {
    settings
        .extra
        .get(WATCHING_KEY)
        .and_then(|value| serde_json::from_value(value.clone()).ok())
        .unwrap_or_default()
}

/// The bound of a new member's log: the team file's `log_max`, else the default.
pub fn team_log_max(settings: &LaunchSettings) -> u64 {
    settings
        .extra
        .get(LOG_MAX_KEY)
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(DEFAULT_LOG_MAX)
}
