//! `swarm up TEAMFILE`: create the team and start its panes, the lead's first.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::base::secrets;
use crate::cli::args::parse_seconds;
use crate::cli::context::Context;
use crate::cli::output;
use crate::cli::render;
use crate::error::{Error, ErrorKind, Result};
use crate::format::settings::Isolation;
use crate::format::structured::Structured;
use crate::launch::layout;
use crate::launch::lock::LaunchLock;
use crate::launch::panes::{self, Destination, PaneEnvironment};
use crate::launch::prepare::{self, PanePlan};
use crate::launch::teamfile::TeamFile;
use crate::launch::worktree;
use crate::member::liveness::{self, Event, Observed};
use crate::member::supervisor;
use crate::store::follow::{Follower, Scope};
use crate::store::team::Team;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The TOML team file (see teams/ for examples)
    #[arg(value_name = "TEAMFILE")]
    pub(crate) teamfile: PathBuf,

    /// Print each member's exact argv and every variable its program will get, the values of
    /// secret-looking names masked; start nothing
    #[arg(long)]
    pub(crate) dry_run: bool,

    /// Attach to the team's session (or switch to its window inside tmux) once it is up
    #[arg(long, conflicts_with = "detach")]
    pub(crate) attach: bool,

    /// Inside tmux, create the team's window without switching to it
    #[arg(long)]
    pub(crate) detach: bool,

    /// Block until every member has ended, printing the messages they exchange and each result;
    /// exit 1 if any did not complete
    #[arg(long, conflicts_with = "attach")]
    pub(crate) wait: bool,

    /// Give up waiting after SECS seconds (exit status 4)
    #[arg(long, value_name = "SECS", value_parser = parse_seconds, requires = "wait")]
    pub(crate) timeout: Option<Duration>,

    /// Put the team on a private tmux server: a name (tmux -L) or a socket path (tmux -S)
    #[arg(long, value_name = "NAME", env = "SWARM_TMUX_SOCKET")]
    pub(crate) socket: Option<String>,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let file = TeamFile::load(&args.teamfile)?;
    let mut prepared = prepare::prepare(&ctx.home, &file, &|key| std::env::var(key).ok());
    for member in &file.members {
        if member.isolation == Isolation::Worktree {
            worktree::require_repo(&member.cwd, member.name.as_str())?;
        }
    }
    let destination = Destination::choose(args.socket.as_deref());
    if args.dry_run {
        return print_plans(ctx, file.name.as_str(), &prepared.panes, &destination);
    }

    destination.tmux.check_version()?;
    // Held from the check until every pane is placed: a second `up` of this team is refused.
    let launch_lock = LaunchLock::take(&ctx.home, file.name.as_str())?;
    refuse_if_running(ctx, file.name.as_str())?;
    archive_previous_run(ctx, file.name.as_str())?;
    // Written before the first pane starts: until every pane is placed, a member whose program
    // ends at once keeps its pane, so the team's window cannot close under the launcher.
    prepared.config.launching = true;
    let team = prepare::create(&ctx.home, &prepared.config, true)?;
    // Following starts before the first pane, so the transcript misses nothing the team says.
    let mut transcript = if args.wait {
        Some(Follower::start(&team, &prepared.config, Scope::All, false)?)
    } else {
        None
    };
    let layout = file.layout.as_ref().unwrap_or(&layout::DEFAULT);
    let placement = {
        let _launching = Launching(&team);
        panes::start_team(&destination, &team, &prepared.panes, layout, !args.detach)?
    };
    drop(launch_lock);
    // Named as the user chose the server: plain `tmux attach` for the default one.
    let attach = destination.tmux.attach_command(&placement.session);

    if ctx.json {
        let mut placed = serde_json::Map::new();
        // With --wait the output is a stream of events, each one line.
        if args.wait {
            placed.insert("event".into(), json!("up"));
        }
        placed.insert("team".into(), json!(team.name()));
        placed.insert("session".into(), json!(placement.session));
        placed.insert("window".into(), json!(placement.window));
        placed.insert("socket".into(), json!(placement.socket));
        let members: Vec<&String> = prepared.panes.iter().map(|p| &p.name).collect();
        placed.insert("members".into(), json!(members));
        placed.insert("attach".into(), json!(attach));
        if args.wait {
            output::json_line(&placed)?;
        } else {
            output::json(&placed)?;
        }
    } else {
        output::line(format!(
            "team {} is up: {} panes in window {} of session {}",
            team.name(),
            prepared.panes.len(),
            placement.window,
            placement.session
        ))?;
        if !destination.inside {
            output::line(format!("attach with: {}", attach.join(" ")))?;
        }
        output::line(format!(
            "follow it with: swarm status {} · swarm watch --all --team {}",
            team.name(),
            team.name()
        ))?;
    }

    if args.attach {
        let tmux = crate::launch::tmux::Tmux::at(&placement.socket);
        return if destination.inside {
            tmux.switch_to(&placement.window)
        } else {
            tmux.attach(&placement.session)
        };
    }
    if let Some(transcript) = &mut transcript {
        let names: Vec<String> = prepared.panes.iter().map(|p| p.name.clone()).collect();
        return wait_all(ctx, &team, &names, args.timeout, transcript);
    }
    Ok(())
}

/// Clears the team's `launching` mark once `up` has placed every pane, or given up.
struct Launching<'a>(&'a Team);

impl Drop for Launching<'_> {
    fn drop(&mut self) {
        let cleared = self.0.update(|config| {
            config.launching = false;
            Ok(())
        });
        if let Err(err) = cleared {
            // Supervisors stop holding their panes after a bound of their own.
            tracing::warn!("cannot mark team {} as placed: {err}", self.0.name());
        }
    }
}

/// A team with live members is not started twice.
fn refuse_if_running(ctx: &Context, name: &str) -> Result<()> {
    let Ok(team) = Team::open(&ctx.home, name) else {
        return Ok(());
    };
    let Ok(observed) = Observed::take(&team) else {
        return Ok(());
    };
    let live: Vec<&str> = observed.live().collect();
    if live.is_empty() {
        return Ok(());
    }
    Err(Error::usage(format!(
        "team {name} is already running ({})",
        live.join(", ")
    ))
    .with_hint(format!("stop it first with `swarm down {name}`")))
}

/// A team that ran before starts fresh: what its members left unread moves to their history.
/// A team only created by `init` keeps its inboxes, so messages queued before the first launch wait.
fn archive_previous_run(ctx: &Context, name: &str) -> Result<()> {
    let Ok(team) = Team::open(&ctx.home, name) else {
        return Ok(());
    };
    let Ok(config) = team.load() else {
        return Ok(());
    };
    if config.members.iter().all(|m| m.state.is_none()) {
        return Ok(());
    }
    for member in &config.members {
        let archived = team.mailbox(&member.name).consume(None, |_| true)?;
        if !archived.is_empty() {
            tracing::info!(
                "moved {} unread messages of {} from the previous run to history",
                archived.len(),
                member.name
            );
        }
    }
    Ok(())
}

/// What `--dry-run` shows of each pane: its directory, its argv, and every variable its program
/// will get (docs/ARCHITECTURE.md, "Secrets and the environment"), the values of secret-looking
/// names masked, then the inherited names its rules withhold.
fn print_plans(
    ctx: &Context,
    team: &str,
    plans: &[PanePlan],
    destination: &Destination,
) -> Result<()> {
    let pane_env = panes::pane_environment(destination)?;
    let foreseen: Vec<Foreseen<'_>> = plans
        .iter()
        .map(|plan| Foreseen::of(plan, &pane_env))
        .collect();
    if ctx.json {
        let panes: Vec<Value> = foreseen
            .iter()
            .map(|pane| {
                let env: serde_json::Map<String, Value> = pane
                    .vars
                    .iter()
                    .map(|(name, value)| (name.clone(), json!(value)))
                    .collect();
                json!({
                    "name": pane.plan.name,
                    "argv": pane.plan.argv,
                    "cwd": pane.plan.cwd,
                    "env": env,
                    "withheld": pane.withheld,
                })
            })
            .collect();
        return output::json(&json!({
            "team": team, "environmentFrom": pane_env.source, "panes": panes,
        }));
    }
    output::line(format!(
        "environment from {}; values of secret-looking names masked",
        pane_env.source
    ))?;
    for pane in &foreseen {
        output::line(format!("{}:", pane.plan.name))?;
        output::line(format!("  cwd  {}", pane.plan.cwd.display()))?;
        output::line(format!("  argv {}", render::shell_words(&pane.plan.argv)))?;
        for (name, value) in &pane.vars {
            output::line(format!("  env  {name}={value}"))?;
        }
        for name in &pane.withheld {
            output::line(format!("  drop {name}"))?;
        }
    }
    Ok(())
}

/// One pane as `--dry-run` shows it.
struct Foreseen<'a> {
    plan: &'a PanePlan,
    /// Every variable its program will get, each value as [`secrets::shown`] shows it.
    vars: Vec<(String, String)>,
    /// Inherited names its rules withhold.
    withheld: Vec<String>,
}

impl<'a> Foreseen<'a> {
    fn of(plan: &'a PanePlan, pane_env: &PaneEnvironment) -> Self {
        let env = supervisor::foreseen_env(plan, pane_env);
        let vars = env
            .vars
            .iter()
            .map(|(name, value)| {
                let name = name.to_string_lossy().into_owned();
                let value = secrets::shown(&name, &value.to_string_lossy()).into_owned();
                (name, value)
            })
            .collect();
        let withheld = env
            .removed
            .iter()
            .map(|name| name.to_string_lossy().into_owned())
            .collect();
        Self {
            plan,
            vars,
            withheld,
        }
    }
}

/// Waits for every member, printing the messages they exchange and each ending; exit 1 unless
/// all completed, 4 on timeout.
fn wait_all(
    ctx: &Context,
    team: &Team,
    names: &[String],
    timeout: Option<Duration>,
    transcript: &mut Follower<'_>,
) -> Result<()> {
    let deadline = timeout.map(|timeout| Instant::now() + timeout);
    let mut all_well = true;
    let left = liveness::follow_endings(team, names, deadline, Some(transcript), |event| {
        match event {
            // The ending line below says what the completion notice says.
            Event::Arrived(arrival)
                if matches!(
                    arrival.message.structured(),
                    Some(Structured::TaskNotification(_))
                ) =>
            {
                Ok(())
            }
            Event::Arrived(arrival) if ctx.json => output::json_line(&render::json(
                &arrival.message,
                &[("event", json!("message")), ("to", json!(arrival.to))],
            )),
            Event::Arrived(arrival) => output::line(render::arrival(&arrival.message, &arrival.to)),
            Event::Ended(member, seen) => {
                all_well &= liveness::ended_well(seen);
                if ctx.json {
                    output::json_line(&json!({
                        "event": "ended", "name": member.name, "state": seen.label(),
                        "exitCode": member.exit_code, "notice": member.notice,
                    }))
                } else {
                    output::line(liveness::ending_line(member, seen))
                }
            }
        }
    })?;
    if !left.is_empty() {
        return Err(Error::timeout(format!(
            "still running: {}",
            left.join(", ")
        )));
    }
    if all_well {
        Ok(())
    } else {
        Err(Error::silent(ErrorKind::Runtime))
    }
}
