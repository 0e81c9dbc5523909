//! `swarm spawn NAME [-- CMD ARGS…]`: the lead adds one teammate pane to its team, with the same
//! inherited flags as the team file's members and a flag for each of their keys. The first spawn
//! into a team with no window (made by `init`) opens one, as `up` would. Each flag is a member key
//! of the team file (swarm-team(5)), spelled as `teamfile::KEYS` says, and becomes the settings the
//! team file's `[[member]]` does, through the same `MemberSpec::check`.

use std::collections::HashSet;
use std::path::PathBuf;

use serde::Serialize;

use crate::base::clock;
use crate::cli::args::resolve_cwd;
use crate::cli::context::Context;
use crate::cli::output::WithLine;
use crate::cluster::fleet::Fleet;
use crate::error::{Error, Result};
use crate::format::paste::PasteFormat;
use crate::format::permission_rule::{RuleTexts, Rules};
use crate::format::settings::{Color, Delivery, Isolation, Profile, Protocol, Restart};
use crate::launch::argv::TeamLaunch;
use crate::launch::layout::{self, Layout};
use crate::launch::panes;
use crate::launch::prepare;
use crate::launch::sandbox;
use crate::launch::teamfile::{
    Command, Defaults, Fencing, MemberKeys, MemberSpec, Network, Restarts, Size, Source, Span,
    parse_size,
};
use crate::launch::worktree;
use crate::member::seal;
use crate::member::stop;
use crate::policy::{self, Action};
use crate::store::relaunch;
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

    /// Run it in its own git worktree on branch swarm/<team>/<name> (isolation = "worktree")
    #[arg(long)]
    pub(crate) worktree: bool,

    /// Its first message, from the lead
    #[arg(long, value_name = "TEXT")]
    pub(crate) prompt: Option<String>,

    /// Who answers the lead's shutdown requests: the program itself, or its supervisor for it
    #[arg(long, value_name = "P")]
    pub(crate) protocol: Option<Protocol>,

    /// How messages reach it: it runs `swarm recv`, or they are pasted into its pane
    /// [default: pull, or paste with --paste-format]
    #[arg(long, value_name = "D")]
    pub(crate) delivery: Option<Delivery>,

    /// Deliver messages by pasting them into its pane, typed this way: framed ([from NAME] TEXT),
    /// raw (the text exactly), or a template with {from}, {text}, {summary} and {n}, where {{ and
    /// }} are literal braces; Enter follows each
    #[arg(long, value_name = "FORMAT", value_parser = PasteFormat::parse)]
    pub(crate) paste_format: Option<PasteFormat>,

    /// Stop it after SECS seconds, as `swarm stop` does; 0 for no limit
    #[arg(long, value_name = "SECS")]
    pub(crate) run_timeout: Option<u64>,

    /// Set a variable in its pane (repeatable); SWARM_* identity variables are set after these
    #[arg(long = "env", value_name = "KEY=VALUE", value_parser = parse_env)]
    pub(crate) env: Vec<(String, String)>,

    /// It is idle once its output stops and its screen's last line matches REGEX
    #[arg(long, value_name = "REGEX")]
    pub(crate) idle_pattern: Option<String>,

    /// It needs you once its output stops and its screen's last line matches REGEX ("\[y/N\]")
    #[arg(long, value_name = "REGEX")]
    pub(crate) needs_you_pattern: Option<String>,

    /// It is stalled once quiet this long while it holds a task or has unread messages (seconds,
    /// or 90s, 10m) [default: 10m]
    #[arg(long, value_name = "DURATION")]
    pub(crate) stall_after: Option<String>,

    /// What a resume of its team runs in place of its profile's way back into its conversation,
    /// split as a shell splits it; {session_id} stands for its session id
    #[arg(long, value_name = "CMD")]
    pub(crate) resume_command: Option<String>,

    /// Start its program again when it ends on its own: after a failure, or always
    /// [default: never]
    #[arg(long, value_name = "WHEN")]
    pub(crate) restart: Option<Restart>,

    /// With --restart, how many restarts in a row before it is left ended [default: 5]
    #[arg(long, value_name = "N")]
    pub(crate) restart_max: Option<u32>,

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

    /// Give its program `swarm mcp` as an MCP server (claude, codex, gemini, opencode); with
    /// paste delivery, the pane gets a nudge and the text waits for the receive tool (mcp = true
    /// in swarm-team(5)); --mcp=false for none in a team whose file says mcp = true
    /// [default: the team file's mcp]
    #[arg(
        long,
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true"
    )]
    pub(crate) mcp: Option<bool>,

    /// Run it fenced, in a sandbox: its directory writable, the team and your secrets out of reach
    /// (sandbox = true in swarm-team(5))
    #[arg(long)]
    pub(crate) sandbox: bool,

    /// With --sandbox, another path it may write (repeatable)
    #[arg(long, value_name = "PATH")]
    pub(crate) sandbox_write: Vec<PathBuf>,

    /// With --sandbox, another path it cannot see (repeatable)
    #[arg(long, value_name = "PATH")]
    pub(crate) sandbox_hide: Vec<PathBuf>,

    /// With --sandbox, its network: full, none, or HOST:PORT it may reach through swarm's proxy
    /// (repeatable, or comma-separated: an allow-list)
    #[arg(long, value_name = "NET", value_delimiter = ',')]
    pub(crate) sandbox_network: Vec<String>,
    /// Where the team's window opens when this spawn opens it (the team has none yet, or it is
    /// gone): a private tmux server, by name (tmux -L) or socket path (tmux -S)
    #[arg(
        long,
        value_name = "NAME",
        env = "SWARM_TMUX_SOCKET",
        hide_env_values = true
    )]
    pub(crate) socket: Option<String>,

    /// The program and its arguments [default for claude: claude]
    #[arg(last = true, value_name = "CMD")]
    pub(crate) command: Vec<String>,
}

impl Args {
    /// The flags as the keys of a team file's `[[member]]`, to be checked as one is.
    fn keys(&self) -> MemberKeys {
        MemberKeys {
            name: self.name.clone(),
            command: (!self.command.is_empty()).then(|| Command::Argv(self.command.clone())),
            profile: self.profile,
            agent_type: self.agent_type.clone(),
            model: self.model.clone(),
            color: self.color,
            plan_mode_required: self.plan_mode_required,
            isolation: if self.worktree {
                Isolation::Worktree
            } else {
                Isolation::None
            },
            prompt: self.prompt.clone(),
            protocol: self.protocol.unwrap_or_default(),
            delivery: self.delivery,
            paste_format: self
                .paste_format
                .as_ref()
                .map(|format| format.as_str().to_owned()),
            mcp: self.mcp,
            run_timeout_s: self.run_timeout.unwrap_or(0),
            env: self.env.iter().cloned().collect(),
            env_clear: self.env_clear.then_some(true),
            env_keep: self.env_keep.iter().cloned().collect(),
            env_remove: self.env_remove.iter().cloned().collect(),
            cwd: self.cwd.clone(),
            log_max: self.log_max.map(Size::Bytes),
            // Rules come from a team file only: a spawned member's asks are all asked.
            permissions: RuleTexts::default(),
            // A member on another host is started by `up` through that host's node.
            host: None,
            idle_pattern: self.idle_pattern.clone(),
            needs_you_pattern: self.needs_you_pattern.clone(),
            restart: self.restart,
            restart_max: self.restart_max,
            stall_after: self.stall_after.as_ref().map(|span| match span.parse() {
                Ok(secs) => Span::Seconds(secs),
                Err(_) => Span::Text(span.clone()),
            }),
            resume_command: self.resume_command.clone().map(Command::Line),
            sandbox: self.sandbox.then_some(true),
            sandbox_write: self.sandbox_write.clone(),
            sandbox_hide: self.sandbox_hide.clone(),
            sandbox_network: match self.sandbox_network.as_slice() {
                [] => None,
                [named] if !named.contains(':') => Some(Network::Named(named.clone())),
                hosts => Some(Network::AllowList(hosts.to_vec())),
            },
        }
    }
}

/// `--env KEY=VALUE`.
fn parse_env(raw: &str) -> std::result::Result<(String, String), String> {
    raw.split_once('=')
        .map(|(key, value)| (key.to_owned(), value.to_owned()))
        .ok_or_else(|| format!("{raw:?} is not KEY=VALUE"))
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let here = resolve_cwd(None)?;
    let team = ctx.team()?;
    let fleet = ctx.fleet();
    let config = team.load()?;
    policy::allow(&config, &ctx.caller(&config)?, Action::Spawn)?;
    let launch_settings = config.launch.clone().unwrap_or_default();
    let spec = MemberSpec::check(
        args.keys(),
        &Defaults {
            profile: launch_settings.profile,
            cwd: &here,
            base: &here,
            log_max: Some(prepare::team_log_max(&launch_settings)),
            env_policy: &launch_settings.env_policy,
            permissions: &Rules::default(),
            asks_through_swarm: false,
            mcp: prepare::team_mcp(&launch_settings),
            watching: &prepare::team_watching(&launch_settings),
            restart: Restarts::default(),
            fencing: &Fencing::default(),
        },
        Source::Flags,
    )?;
    if let Some(fence) = &spec.fence {
        sandbox::check_available(&fence.network)?;
    }
    let name = spec.name.clone();
    let lead = config.lead_name().to_owned();
    if config.member(name.as_str()).is_some() {
        return Err(Error::usage(format!(
            "{name} is already a member of team {}",
            config.name
        )));
    }
    // Its pane is told the lead's name as config.json has it now; a pane told its own name would
    // be the lead's ("Identity"), and config.json is a file any member can write.
    if name.as_str() == lead {
        return Err(Error::usage(format!(
            "{name} is the name of team {}'s lead: a spawned member is a teammate",
            config.name
        )));
    }
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
    if spec.isolation == Isolation::Worktree {
        worktree::require_repo(&spec.cwd, name.as_str())?;
    }
    let teammates = config.members.len().saturating_sub(1);
    let color = spec.color.unwrap_or_else(|| Color::round_robin(teammates));
    let lead_argv = config.member(&lead).and_then(|m| m.argv.clone());
    let session = config.lead_session_id.clone().unwrap_or_default();
    let launch_team = TeamLaunch {
        home: ctx.home.root(),
        team: team.name(),
        lead: &lead,
        lead_session_id: &session,
        lead_profile: launch_settings.profile,
        lead_argv: lead_argv.as_deref(),
        inherit: &launch_settings.inherit,
    };
    let (mut member, mut plan) =
        prepare::teammate(&launch_team, &spec, color, clock::now_ms(), &|key| {
            std::env::var(key).ok()
        });
    seal::give_key(&ctx.home, team.name(), &lead, &mut member, &mut plan.env)?;
    fleet.place_new_member(&config, &mut member)?;
    plan.argv = member.argv.clone().unwrap_or_default();
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
    // From here a failure takes the new member back out: exit 1 leaves nothing to clean up, and
    // the same `spawn` can be run again.
    let mut undo = Undo::default();
    let placed = (|| {
        undo.created_inbox = team.mailbox(name.as_str()).ensure()?;
        // What a resume given no team file needs again ("Resuming a team").
        let launch = relaunch::Launches::from([(name.to_string(), spec.launch())]);
        relaunch::record(team.paths(), launch, false)?;
        if let Some(prompt) = &spec.prompt {
            undo.prompt =
                seal::deliver_prompt(&team, &fleet, &team.load()?, name.as_str(), prompt)?;
        }
        panes::place_member(&team, &plan, &layout, args.socket.as_deref())
    })();
    let info = placed.map_err(|err| undo.apply(&team, &fleet, name.as_str(), err))?;
    ctx.report(&WithLine {
        json: Spawned {
            name: name.as_str(),
            pane: &info.pane,
            argv: &plan.argv,
        },
        line: format!("spawned {name} in pane {}", info.pane),
    })
}

/// The member spawned: its pane and the command it runs.
#[derive(Serialize)]
struct Spawned<'a> {
    name: &'a str,
    pane: &'a str,
    argv: &'a [String],
}

/// What `spawn` did before placing the pane, to take back if placing it fails.
#[derive(Debug, Default)]
struct Undo {
    created_inbox: bool,
    prompt: Option<String>,
}

impl Undo {
    /// Takes the member back out: ends what its pane started, if a pane was placed, removes it
    /// from config.json and `relaunch.json`, and withdraws its prompt and the inbox `spawn` created. Returns `err`,
    /// saying what was undone, or what could not be.
    fn apply(self, team: &Team, fleet: &Fleet, name: &str, err: Error) -> Error {
        let undone = (|| -> Result<()> {
            let placed = team.load()?.member(name).is_some_and(|m| {
                !m.tmux_pane_id.is_empty() || m.supervisor_pid.is_some() || m.pid.is_some()
            });
            if placed {
                stop::stop(team, fleet, &[name.to_owned()], "spawn failed")?;
            }
            team.update(|config| {
                config.members.retain(|m| m.name != name);
                Ok(())
            })?;
            relaunch::forget(team.paths(), name)?;
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

#[cfg(test)]
mod tests {
    use clap::Args as _;

    use super::*;
    use crate::launch::teamfile::{KEYS, Section};

    /// spawn takes every member key of the team file: the flag `KEYS` names for it, or NAME and
    /// the command after `--`.
    #[test]
    fn every_member_key_is_a_flag() {
        let command = Args::augment_args(clap::Command::new("spawn"));
        let longs: Vec<&str> = command
            .get_arguments()
            .filter_map(|a| a.get_long())
            .collect();
        for doc in KEYS.iter().filter(|doc| doc.section == Section::Member) {
            let spawn = doc.spawn.unwrap();
            if spawn.starts_with("not taken") {
                assert!(
                    ["host", "permissions"].contains(&doc.key),
                    "only host and permissions are up's alone, not {}",
                    doc.key
                );
                continue;
            }
            match spawn.strip_prefix("--") {
                Some(" CMD") => assert_eq!(doc.key, "command"),
                Some(long) => assert!(
                    longs.contains(&long),
                    "spawn has no {spawn} for {}",
                    doc.key
                ),
                None => assert_eq!((doc.key, spawn), ("name", "NAME")),
            }
        }
    }

    #[test]
    fn env_flags_are_key_value_pairs() {
        assert_eq!(parse_env("A=b=c"), Ok(("A".into(), "b=c".into())));
        assert_eq!(parse_env("A="), Ok(("A".into(), String::new())));
        assert!(parse_env("A").is_err());
    }
}
