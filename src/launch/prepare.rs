//! From a team file to a team on disk: the config with every member's exact argv, and each prompt
//! waiting as the member's first message. `init` and `up` both go through here.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::base::text::derive_summary;
use crate::base::{clock, ids};
use crate::error::Result;
use crate::format::config::{LaunchSettings, Member, TeamConfig};
use crate::format::message::InboxMessage;
use crate::format::settings::Isolation;
use crate::format::settings::{Color, EnvPolicy};
use crate::launch::argv::{Launch, TeamLaunch, TeammateRequest};
use crate::launch::teamfile::{DEFAULT_LOG_MAX, TeamFile};
use crate::store::paths::Home;
use crate::store::team::Team;

/// A team ready to be written, with what each pane will run.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    pub(crate) config: TeamConfig,
    pub(crate) panes: Vec<PanePlan>,
}

/// One pane to start: the member's name, command, environment and directory.
#[derive(Debug, Clone)]
pub(crate) struct PanePlan {
    pub(crate) name: String,
    pub(crate) argv: Vec<String>,
    /// The variables the launch sets for it, which reach its supervisor in a handoff file.
    pub(crate) env: BTreeMap<String, String>,
    /// Which inherited variables its program keeps; config.json records them for its supervisor.
    pub(crate) env_policy: EnvPolicy,
    /// Whether it works in a worktree of its own.
    pub(crate) worktree: bool,
    pub(crate) cwd: PathBuf,
    /// The bound of the member's log, which its supervisor is told on its command line.
    pub(crate) log_max: u64,
}

/// Builds the config and pane plans. `launcher_env` reads the launcher's environment, for the
/// variables the claude profile forwards.
pub(crate) fn prepare(
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
        let launch = launch_team.lead(command, &file.lead.env, &file.lead.env_policy, launcher_env);
        record_launch(&mut lead, &launch);
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
            },
            launcher_env,
        );
        let mut member = Member::new(spec.name.as_str(), team, now);
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
        member.run_timeout_s = (spec.run_timeout_s > 0).then_some(spec.run_timeout_s);
        member.isolation = (spec.isolation == Isolation::Worktree).then_some(Isolation::Worktree);
        record_launch(&mut member, &launch);
        panes.push(PanePlan {
            name: spec.name.as_str().to_owned(),
            argv: launch.argv,
            env: launch.env,
            env_policy: spec.env_policy.clone(),
            worktree: spec.isolation == Isolation::Worktree,
            cwd: spec.cwd.clone(),
            log_max: spec.log_max,
        });
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
                .collect(),
        }),
        tmux: None,
        launching: false,
        extra: serde_json::Map::new(),
    };
    Prepared { config, panes }
}

pub(crate) fn record_launch(member: &mut Member, launch: &Launch) {
    member.argv = Some(launch.argv.clone());
    member.env_keys = Some(launch.env.keys().cloned().collect());
}

/// Where config.json keeps the team file's `log_max`, for members `spawn` adds later: in the
/// launch settings, beside the fields `format::config` names.
const LOG_MAX_KEY: &str = "logMax";

/// The bound of a new member's log: the team file's `log_max`, else the default.
pub(crate) fn team_log_max(settings: &LaunchSettings) -> u64 {
    settings
        .extra
        .get(LOG_MAX_KEY)
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(DEFAULT_LOG_MAX)
}

/// Writes the team and queues each member's prompt as its first message, from the lead.
/// `replace` rewrites an existing team's config; inboxes, history and logs are kept.
pub(crate) fn create(home: &Home, config: &TeamConfig, replace: bool) -> Result<Team> {
    let team = Team::create(home, config, replace)?;
    let lead = config.lead_name();
    for member in &config.members {
        if let Some(prompt) = &member.prompt {
            deliver_prompt(&team, lead, &member.name, prompt)?;
        }
    }
    Ok(team)
}

/// Queues a prompt unless the same prompt is already waiting unread (an `init` before `up`).
pub(crate) fn deliver_prompt(team: &Team, lead: &str, member: &str, prompt: &str) -> Result<()> {
    crate::format::message::check_text_size(prompt)?;
    team.mailbox(member).update(|unread| {
        if unread
            .iter()
            .any(|m| m.from() == lead && m.text() == prompt)
        {
            return Ok(((), false));
        }
        let summary = derive_summary(prompt);
        unread.push(InboxMessage::new(lead, prompt, Some(&summary), None));
        Ok(((), true))
    })
}
