//! `swarm spawn NAME [-- CMD ARGS…]`: the lead adds one teammate pane to its running team, with the
//! same inherited flags as the team file's members.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::json;

use crate::base::clock;
use crate::base::names::Name;
use crate::cli::args::resolve_cwd;
use crate::cli::context::Context;
use crate::cli::output;
use crate::error::{Error, Result};
use crate::format::config::Member;
use crate::format::settings::Isolation;
use crate::format::settings::{Color, EnvPolicy, Profile};
use crate::launch::argv::{TeamLaunch, TeammateRequest, default_program, detect_profile};
use crate::launch::environment::check_policy;
use crate::launch::layout::{self, Layout};
use crate::launch::panes;
use crate::launch::prepare::{self, PanePlan, record_launch};
use crate::launch::teamfile::parse_size;
use crate::launch::tmux::Tmux;
use crate::launch::worktree;
use crate::policy::{self, Action, PERSON};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The new teammate's name
    #[arg(value_name = "NAME")]
    pub(crate) name: String,

    /// The launch profile [default: detected from the command, else the lead's]
    #[arg(long, value_name = "P")]
    pub(crate) profile: Option<Profile>,

    /// The teammate's agent type (claude: --agent-type)
    #[arg(long, value_name = "T")]
    pub(crate) agent_type: Option<String>,

    /// Model, overriding an inherited --model
    #[arg(long, value_name = "M")]
    pub(crate) model: Option<String>,

    /// Working directory [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub(crate) cwd: Option<PathBuf>,

    /// Border and identity colour [default: next in the team's rotation]
    #[arg(long, value_name = "C")]
    pub(crate) color: Option<Color>,

    /// Start it in plan mode: it gets no permission-bypassing flag and must have its plan approved
    #[arg(long)]
    pub(crate) plan_mode_required: bool,

    /// Run it in its own git worktree on branch swarm/<team>/<name>
    #[arg(long)]
    pub(crate) worktree: bool,

    /// Its first message, from the lead
    #[arg(long, value_name = "TEXT")]
    pub(crate) prompt: Option<String>,

    /// Rotate its log at this size, e.g. 64MiB [default: the team file's log_max, else 64MiB]
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub(crate) log_max: Option<u64>,

    /// Its program inherits nothing from the pane but what --env-keep names (and swarm's own
    /// variables) [default: the team file's env_clear]
    #[arg(long)]
    pub(crate) env_clear: bool,

    /// With --env-clear, an inherited variable its program keeps (repeatable)
    #[arg(long, value_name = "NAME")]
    pub(crate) env_keep: Vec<String>,

    /// An inherited variable its program does not get, e.g. ANTHROPIC_API_KEY (repeatable), on top
    /// of the team file's env_remove
    #[arg(long, value_name = "NAME")]
    pub(crate) env_remove: Vec<String>,

    /// The program and its arguments [default for claude: claude]
    #[arg(last = true, value_name = "CMD")]
    pub(crate) command: Vec<String>,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let name = Name::parse("member", &args.name)?;
    if name.as_str() == PERSON {
        return Err(Error::usage(format!(
            "a teammate cannot be called {PERSON}: that is the person at the keyboard"
        )));
    }
    let team = ctx.team()?;
    let config = team.load()?;
    policy::allow(&config, &ctx.caller(&config)?, Action::Spawn)?;
    let lead = config.lead_name().to_owned();
    if config.member(name.as_str()).is_some() {
        return Err(Error::usage(format!(
            "{name} is already a member of team {}",
            config.name
        )));
    }
    let placement = config.tmux.clone().ok_or_else(|| {
        Error::usage(format!(
            "team {} has no tmux window to spawn into",
            config.name
        ))
        .with_hint("start it with `swarm up TEAMFILE`")
    })?;

    let command = (!args.command.is_empty()).then_some(args.command.as_slice());
    let launch_settings = config.launch.clone().unwrap_or_default();
    // Checked again before tmux sees it: config.json may have been edited since `up`.
    let layout = launch_settings
        .layout
        .as_deref()
        .map(Layout::parse)
        .transpose()
        .map_err(|why| {
            Error::usage(format!("team {}: {why}", config.name))
                .with_hint("fix launch.layout in the team's config.json")
        })?
        .unwrap_or(layout::DEFAULT);
    let lead_profile = launch_settings.profile;
    let profile = args
        .profile
        .or_else(|| detect_profile(command))
        .unwrap_or(lead_profile);
    if command.is_none() && default_program(profile).is_none() {
        return Err(
            Error::usage(format!("{name} needs a command: give it after `--`"))
                .with_hint(format!("swarm spawn {name} -- PROGRAM ARGS…")),
        );
    }
    let cwd = resolve_cwd(args.cwd.as_deref())?;
    if args.worktree {
        worktree::require_repo(&cwd, name.as_str())?;
    }
    let teammates = config.members.len().saturating_sub(1);
    let color = args.color.unwrap_or_else(|| Color::round_robin(teammates));
    let lead_argv = config.member(&lead).and_then(|m| m.argv.clone());
    let session = config.lead_session_id.clone().unwrap_or_default();
    let env = BTreeMap::new();
    let own_policy = EnvPolicy {
        clear: false,
        keep: args.env_keep.iter().cloned().collect(),
        remove: args.env_remove.iter().cloned().collect(),
    };
    check_policy(&own_policy, &env).map_err(Error::usage)?;
    let env_policy = own_policy.over(args.env_clear.then_some(true), &launch_settings.env_policy);
    if !args.env_keep.is_empty() && !env_policy.clear {
        return Err(Error::usage(
            "--env-keep has no effect without --env-clear (or the team file's env_clear = true)",
        ));
    }
    let launch = TeamLaunch {
        home: ctx.home.root(),
        team: team.name(),
        lead: &lead,
        lead_session_id: &session,
        lead_profile,
        lead_argv: lead_argv.as_deref(),
        inherit: &launch_settings.inherit,
    }
    .teammate(
        &TeammateRequest {
            name: name.as_str(),
            command,
            profile,
            agent_type: args.agent_type.as_deref(),
            model: args.model.as_deref(),
            color: Some(color),
            plan_mode_required: args.plan_mode_required,
            env: &env,
            env_policy: &env_policy,
        },
        &|key| std::env::var(key).ok(),
    );

    team.update(|config| {
        if config.member(name.as_str()).is_some() {
            return Err(Error::usage(format!(
                "{name} is already a member of team {}",
                config.name
            )));
        }
        let mut member = Member::new(name.as_str(), &config.name, clock::now_ms());
        member.agent_type.clone_from(&args.agent_type);
        member.model.clone_from(&args.model);
        member.prompt.clone_from(&args.prompt);
        member.color = Some(color.as_str().to_owned());
        member.plan_mode_required = args.plan_mode_required.then_some(true);
        member.cwd = cwd.display().to_string();
        member.profile = Some(profile);
        member.isolation = args.worktree.then_some(Isolation::Worktree);
        member.env_policy = env_policy.clone();
        record_launch(&mut member, &launch);
        config.members.push(member);
        Ok(())
    })?;
    team.mailbox(name.as_str()).ensure()?;
    if let Some(prompt) = &args.prompt {
        prepare::deliver_prompt(&team, &lead, name.as_str(), prompt)?;
    }
    let plan = PanePlan {
        name: name.to_string(),
        argv: launch.argv,
        env: launch.env,
        env_policy,
        worktree: args.worktree,
        cwd,
        log_max: args
            .log_max
            .unwrap_or_else(|| prepare::team_log_max(&launch_settings)),
    };
    let info = panes::add_pane(
        &Tmux::at(&placement.socket),
        &team,
        &placement,
        &plan,
        &layout,
    )?;
    if ctx.json {
        return output::json(&json!({"name": name.as_str(), "pane": info.pane, "argv": plan.argv}));
    }
    output::line(format!("spawned {name} in pane {}", info.pane))
}
