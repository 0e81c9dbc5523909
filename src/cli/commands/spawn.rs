//! `swarm spawn NAME [-- CMD ARGS…]`: the lead adds one teammate pane to its running team, with the
//! same inherited flags as the team file's members.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use serde_json::json;

use crate::base::clock;
use crate::base::names::Name;
use crate::cli::args::resolve_cwd;
use crate::cli::context::Context;
use crate::cli::output;
use crate::error::{Error, Result};
use crate::format::config::Member;
use crate::format::paste::{PasteFormat, delivery_with};
use crate::format::settings::Isolation;
use crate::format::settings::{Color, Profile};
use crate::launch::argv::{TeamLaunch, TeammateRequest, default_program, detect_profile};
use crate::launch::layout::{self, Layout};
use crate::launch::panes;
use crate::launch::prepare::{self, PanePlan, record_launch};
use crate::launch::teamfile::parse_size;
use crate::launch::tmux::Tmux;
use crate::launch::worktree;
use crate::member::seal;
use crate::member::stop;
use crate::policy::{self, Action, PERSON};
use crate::store::team::Team;

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one document:
  {"name", "pane", "argv"}"#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
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

    /// Deliver messages by pasting them into its pane, typed this way: framed ([from NAME] TEXT),
    /// raw (the text exactly), or a template with {from}, {text} and {summary}, where {{ and }}
    /// are literal braces; Enter follows each
    #[arg(long, value_name = "FORMAT", value_parser = PasteFormat::parse)]
    pub(crate) paste_format: Option<PasteFormat>,

    /// Rotate its log at this size, e.g. 64MiB [default: the team file's log_max, else 64MiB]
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub(crate) log_max: Option<u64>,

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
        },
        &|key| std::env::var(key).ok(),
    );

    let mut launch = launch;
    let mut member = Member::new(name.as_str(), team.name(), clock::now_ms());
    member.agent_type.clone_from(&args.agent_type);
    member.model.clone_from(&args.model);
    member.prompt.clone_from(&args.prompt);
    member.color = Some(color.as_str().to_owned());
    member.plan_mode_required = args.plan_mode_required.then_some(true);
    member.cwd = cwd.display().to_string();
    member.profile = Some(profile);
    member.isolation = args.worktree.then_some(Isolation::Worktree);
    if let Some(format) = &args.paste_format {
        member.delivery = Some(delivery_with(None, Some(format)).map_err(Error::usage)?);
        member.paste_format = Some(format.as_str().to_owned());
    }
    record_launch(&mut member, &launch);
    seal::give_key(&ctx.home, team.name(), &lead, &mut member, &mut launch.env)?;
    team.update(|config| {
        if config.member(name.as_str()).is_some() {
            return Err(Error::usage(format!(
                "{name} is already a member of team {}",
                config.name
            )));
        }
        config.members.push(member.clone());
        Ok(())
    })?;
    let plan = PanePlan {
        name: name.to_string(),
        argv: member.argv.clone().unwrap_or_default(),
        env: launch.env,
        cwd,
        log_max: args
            .log_max
            .unwrap_or_else(|| prepare::team_log_max(&launch_settings)),
    };
    // From here a failure takes the new member back out: exit 1 leaves nothing to clean up, and
    // the same `spawn` can be run again.
    let mut undo = Undo::default();
    let placed = (|| {
        undo.created_inbox = team.mailbox(name.as_str()).ensure()?;
        if let Some(prompt) = &args.prompt {
            undo.prompt = seal::deliver_prompt(&team, &team.load()?, name.as_str(), prompt)?;
        }
        panes::add_pane(
            &Tmux::at(&placement.socket),
            &team,
            &placement,
            &plan,
            &layout,
        )
    })();
    let info = placed.map_err(|err| undo.apply(&team, name.as_str(), err))?;
    if ctx.json {
        return output::json(&json!({"name": name.as_str(), "pane": info.pane, "argv": plan.argv}));
    }
    output::line(format!("spawned {name} in pane {}", info.pane))
}

/// What `spawn` did before placing the pane, to take back if placing it fails.
#[derive(Debug, Default)]
struct Undo {
    created_inbox: bool,
    prompt: Option<String>,
}

impl Undo {
    /// Takes the member back out: ends what its pane started, if a pane was placed, removes it
    /// from config.json, and withdraws its prompt and the inbox `spawn` created. Returns `err`,
    /// saying what was undone, or what could not be.
    fn apply(self, team: &Team, name: &str, err: Error) -> Error {
        let undone = (|| -> Result<()> {
            let placed = team.load()?.member(name).is_some_and(|m| {
                !m.tmux_pane_id.is_empty() || m.supervisor_pid.is_some() || m.pid.is_some()
            });
            if placed {
                stop::stop(team, &[name.to_owned()], "spawn failed")?;
            }
            team.update(|config| {
                config.members.retain(|m| m.name != name);
                Ok(())
            })?;
            let mailbox = team.mailbox(name);
            if let Some(prompt) = self.prompt {
                mailbox.retract(&HashSet::from([prompt]))?;
            }
            if self.created_inbox {
                mailbox.remove_if_empty()?;
            }
            Ok(())
        })();
        match undone {
            Ok(()) => err.with_note(format!("{name} was not added")),
            Err(stuck) => err.with_note(format!("{name} could not be taken out again: {stuck}")),
        }
    }
}
