//! `swarm up TEAMFILE`: create the team and start its panes, the lead's first. A team with nothing
//! to run (a lead with no command, no members) is created without a window, which the first
//! `swarm spawn` opens.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};

use crate::base::clock;
use crate::base::text::count;
use crate::cli::args::parse_duration;
use crate::cli::context::Context;
use crate::cli::output::{self, Report, WithLine, WithLines};
use crate::cli::render::{self, Ending, Setting, Tagged};
use crate::cluster::fleet::Fleet;
use crate::cluster::spread::Spread;
use crate::error::{Error, ErrorKind, Result};
use crate::format::notify::Notify;
use crate::format::settings::Isolation;
use crate::format::structured::Structured;
use crate::format::task::Task;
use crate::launch::keys;
use crate::launch::layout;
use crate::launch::lock::LaunchLock;
use crate::launch::panes::{self, Destination, PaneEnvironment};
use crate::launch::prepare::{self, PanePlan, Prepared};
use crate::launch::rerun;
use crate::launch::sandbox;
use crate::launch::tasks;
use crate::launch::teamfile::{TaskSpec, TeamFile};
use crate::launch::worktree;
use crate::member::ending;
use crate::member::liveness::{self, Awaited, Event, Observed};
use crate::member::resume;
use crate::member::seal;
use crate::member::stop;
use crate::member::supervisor;
use crate::member::verify::Judges;
use crate::store::follow::{Follower, Scope};
use crate::store::relaunch;
use crate::store::tasks::{Board, TaskList};
use crate::store::team::{Team, list_teams};

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one document:
  {"team", "session", "window", "socket", "members", "attach"}
With --wait, one line per event:
  {"event": "up", "team", "session", "window", "socket", "members", "attach"}
  {"event": "message", "to", ...the message as `swarm watch` prints it}
  {"event": "ended", ...the member's ending as `swarm wait` prints it}
  {"event": "board", "tasks": [...as `swarm task list` prints them], "open"} last, when the team
  has tasks; exit 1 while any is open.
A team with nothing to run has "session", "window", "socket" and "attach" null. With --resume,
"members" are those resumed.
With --dry-run, one document: {"team", "environmentFrom",
  "panes": [{"name", "argv", "env", "withheld", "cwd", "settings"}],
  "tasks"?: [{"key", "subject", "description", "blocked_by", "owner"}]}:
"env" every variable the program will get, a secret's value as "<masked>"; "withheld" the
inherited names its rules remove; "settings" as `swarm info` shows them; "tasks" when the file
has any."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// The TOML team file (see teams/ for examples); with --resume, the team file or the team's
    /// name [default: --team, SWARM_TEAM, the only team]
    #[arg(value_name = "TEAMFILE", required_unless_present = "resume")]
    pub(crate) teamfile: Option<PathBuf>,

    /// Resume the team, which was interrupted (a reboot, its tmux server or a supervisor gone):
    /// every member whose run was cut short starts again with the same command and settings, a
    /// Claude Code member in its own conversation (`claude --resume`); unread messages stay and
    /// are delivered, tasks stay with their owners, worktrees are used again
    #[arg(long, conflicts_with_all = ["fresh", "dry_run", "wait"])]
    pub(crate) resume: bool,

    /// Start an interrupted team afresh, as a team that ended starts: its members' unread
    /// messages go to history and the tasks they held return to pending
    #[arg(long)]
    pub(crate) fresh: bool,

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

    /// Block until every member has ended, those `swarm spawn` adds meanwhile too, printing the
    /// messages they exchange and each result; exit 1 if any did not complete. Ctrl-C stops the
    /// waiting, not the team (exit 130): `swarm down` stops it
    #[arg(long, conflicts_with = "attach")]
    pub(crate) wait: bool,

    /// Give up waiting after DURATION (seconds, or 30s, 2m, 1h; exit status 4)
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, requires = "wait")]
    pub(crate) timeout: Option<Duration>,

    /// Put the team on a private tmux server: a name (tmux -L) or a socket path (tmux -S)
    #[arg(
        long,
        value_name = "NAME",
        env = "SWARM_TMUX_SOCKET",
        hide_env_values = true
    )]
    pub(crate) socket: Option<String>,
}

/// What `swarm resume --json` prints (docs/ARCHITECTURE.md, "JSON output").
const RESUME_JSON: &str = r#"JSON output (--json), one document, as `swarm up` prints it:
  {"team", "session", "window", "socket", "members", "attach"}
"members" are those resumed, on every host. A team whose members here were none (all on other
hosts, resumed there by their nodes) has "session", "window", "socket" and "attach" null. With --all, an array of those documents, one per team resumed
(empty when no team was interrupted); a team that could not be resumed is a line on stderr,
and the exit status is then 1.
At login, `swarm node --print-unit` prints a systemd user unit that runs `swarm resume --all`."#;

/// `swarm resume [TEAM]`: `swarm up --resume`.
#[derive(Debug, clap::Args)]
#[command(after_long_help = RESUME_JSON)]
pub(crate) struct ResumeArgs {
    /// The team, or its team file, whose variables' values its members get again [default:
    /// --team, SWARM_TEAM, the only team]
    // Its own id: sharing the global --team's would let an empty SWARM_TEAM fill it.
    #[arg(id = "team_arg", value_name = "TEAM")]
    pub(crate) team: Option<PathBuf>,

    /// Resume every interrupted team under the home (after a reboot: `swarm node --print-unit`
    /// runs this at login); a team that is not interrupted is left as it is
    #[arg(long, conflicts_with_all = ["team_arg", "attach"])]
    pub(crate) all: bool,

    /// Attach to the team's session (or switch to its window inside tmux) once it is up
    #[arg(long, conflicts_with = "detach")]
    pub(crate) attach: bool,

    /// Inside tmux, create the team's window without switching to it
    #[arg(long)]
    pub(crate) detach: bool,

    /// Put the team on this tmux server [default: the one it was on]: a name (tmux -L) or a
    /// socket path (tmux -S)
    #[arg(
        long,
        value_name = "NAME",
        env = "SWARM_TMUX_SOCKET",
        hide_env_values = true
    )]
    pub(crate) socket: Option<String>,
}

pub(crate) fn resume(ctx: &Context, args: ResumeArgs) -> Result<()> {
    if args.all {
        return resume_all(ctx, &args);
    }
    run(
        ctx,
        Args {
            teamfile: args.team,
            dry_run: false,
            attach: args.attach,
            detach: args.detach,
            wait: false,
            timeout: None,
            socket: args.socket,
            resume: true,
            fresh: false,
        },
    )
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let fleet = ctx.fleet();
    let Some(teamfile) = args.teamfile.as_deref().filter(|_| !args.resume) else {
        return resume_team(ctx, &args);
    };
    let file = TeamFile::load(teamfile)?;
    // Refused before anything is made: an alert that cannot go is found now, not when it fires.
    let notify = file.notify()?;
    let mut prepared = prepare::prepare(&ctx.home, &file, &|key| std::env::var(key).ok());
    for member in &file.members {
        if member.isolation == Isolation::Worktree {
            worktree::require_repo(&member.cwd, member.name.as_str())?;
        }
        // Fenced, or not started at all: never silently unfenced ("Fencing members").
        if let Some(fence) = &member.fence {
            sandbox::check_available(&fence.network)?;
        }
    }
    let destination = Destination::choose(args.socket.as_deref());
    if args.dry_run {
        Spread::here().key_teammates(&mut prepared, |_| Ok(keys::MADE_AT_LAUNCH.to_owned()))?;
        return print_plans(ctx, &prepared, &destination, &file, &notify);
    }
    // Before anything is made: what runs elsewhere is set apart, refused if it cannot start.
    let mut spread = fleet.spread(&file, &mut prepared)?;

    // A team with nothing to run (a lead with no command, no members yet) is made as `init`
    // makes one; its window opens with the first `swarm spawn`.
    let panes_to_place = !prepared.panes.is_empty();
    let members_elsewhere = spread.elsewhere();
    if args.attach && !panes_to_place {
        return Err(Error::usage(format!(
            "team {} has nothing to run yet, so there is nothing to attach to",
            file.name
        ))
        .with_hint("add a member with `swarm spawn NAME -- PROGRAM ARGS…`, then `swarm attach`"));
    }
    if panes_to_place {
        destination.tmux.check_version()?;
    }
    // Held from the check until every pane is placed: a second `up` of this team is refused.
    let launch_lock = LaunchLock::take(&ctx.home, file.name.as_str())?;
    refuse_if_running(ctx, file.name.as_str())?;
    if !args.fresh {
        refuse_if_interrupted(ctx, file.name.as_str())?;
    }
    // A team that ran before starts fresh; one only made by `init` keeps what waits for it.
    if let Ok(previous) = Team::open(&ctx.home, file.name.as_str()) {
        // Its records are about to be replaced: what its ended members still hold goes back
        // first, or it would stay theirs; the lead's word of it goes with the last run.
        if let Err(err) = ending::give_up_interrupted(&previous, &fleet) {
            tracing::warn!("tasks of members that ended are not all returned yet: {err}");
        }
        rerun::archive_previous_run(&previous, |_| true, None)?;
    }
    // Written before the first pane starts: until every pane is placed, a member whose program
    // ends at once keeps its pane, so the team's window cannot close under the launcher.
    prepared.config.launching = true;
    let (team_name, lead) = (file.name.to_string(), file.lead.name.to_string());
    // Every teammate is keyed here, wherever it runs; this host's agent applies its rules.
    let works_in: BTreeMap<String, PathBuf> = prepared
        .config
        .members
        .iter()
        .map(|m| (m.name.clone(), PathBuf::from(&m.cwd)))
        .collect();
    spread.key_teammates(&mut prepared, |member| {
        let spec = file.members.iter().find(|m| m.name.as_str() == member);
        let rules = spec.map(|m| m.permissions.clone()).unwrap_or_default();
        let cwd = works_in.get(member).cloned().unwrap_or_default();
        seal::make_key(
            &ctx.home,
            &team_name,
            &lead,
            member,
            &rules,
            &cwd,
            Some(&notify),
        )
    })?;
    let team = seal::create(&ctx.home, &fleet, &prepared.config, true)?;
    // What a resume given no team file needs again (docs/ARCHITECTURE.md, "Resuming a team").
    relaunch::record(team.paths(), file.launches(), true)?;
    // On the board before the first pane starts, so members find them.
    if let tasks::Made::Created(made) = tasks::create(&ctx.home, &file)? {
        tracing::info!("put {} on the board", count(made.len(), "task", "tasks"));
    }
    // Following starts before the first pane, so the transcript misses nothing the team says.
    let mut transcript = if args.wait {
        Some(Follower::start(&team, &prepared.config, Scope::All, false)?)
    } else {
        None
    };
    let layout = file.layout.as_ref().unwrap_or(&layout::DEFAULT);
    let placed = if panes_to_place {
        let _launching = Launching(&team);
        panes::start_team(&destination, &team, &prepared.panes, layout, !args.detach).and_then(
            |placement| {
                if file.dashboard {
                    panes::open_dashboard(&team, &placement, &file.lead.cwd)?;
                }
                Ok(Some(placement))
            },
        )
    } else {
        drop(Launching(&team));
        Ok(None)
    };
    // Still under the launch lock: what a failed launch started is stopped before another `up`.
    let placement = placed.map_err(|err| stop_placed(&team, &fleet, err))?;
    let elsewhere = spread
        .start(&team, &file)
        .map_err(|err| stop_placed(&team, &fleet, err))?;
    // `stop NAME` does not wait for the launch lock: a member stopped while the team was placed
    // leaves a team that is not whole, and `up` says so (`--wait` reports it as it ends).
    let stopped: Vec<String> = team
        .load()?
        .members
        .iter()
        .filter(|member| ending::was_stopped(member))
        .map(|member| member.name.clone())
        .collect();
    drop(launch_lock);
    // The team is up: from here on, Ctrl-C leaves it running.
    if args.wait {
        on_interrupt_leave_running(ctx, team.name())?;
    }
    // Named as the user chose the server: plain `tmux attach` for the default one.
    let attach = placement
        .as_ref()
        .map(|placement| destination.tmux.attach_command(&placement.session));

    let mut lines = Vec::new();
    if placement.is_none() && members_elsewhere > 0 {
        lines.push(format!(
            "team {} is up, its members on other hosts",
            team.name()
        ));
    } else if let (Some(placement), Some(attach)) = (&placement, &attach) {
        lines.push(format!(
            "team {} is up: {} in window {} of session {}",
            team.name(),
            count(prepared.panes.len(), "pane", "panes"),
            placement.window,
            placement.session
        ));
        if !destination.inside {
            lines.push(format!("attach with: {}", attach.join(" ")));
        }
        lines.push(format!(
            "follow it with: swarm status {} · swarm watch --all --team {}",
            team.name(),
            team.name()
        ));
    } else {
        lines.push(format!(
            "team {} is up with nothing to run yet: its lead has no command and it has no members",
            team.name()
        ));
        lines.push(format!(
            "add one with: swarm spawn --team {} NAME -- PROGRAM ARGS…",
            team.name()
        ));
    }
    lines.extend(
        elsewhere
            .iter()
            .map(|(host, names)| format!("on host {host}: {}", names.join(", "))),
    );
    let up = WithLines {
        json: TeamUp {
            team: team.name(),
            session: placement.as_ref().map(|p| p.session.as_str()),
            window: placement.as_ref().map(|p| p.window.as_str()),
            socket: placement.as_ref().map(|p| p.socket.as_path()),
            members: prepared
                .panes
                .iter()
                .map(|p| &p.name)
                .chain(elsewhere.iter().flat_map(|(_, names)| names))
                .collect(),
            attach: attach.as_deref(),
        },
        lines,
    };
    // With --wait the output is a stream of events, each one line.
    if args.wait {
        ctx.event(&Tagged {
            event: "up",
            fields: up,
        })?;
    } else {
        ctx.report(&up)?;
    }
    if !stopped.is_empty() && !args.wait {
        return Err(Error::runtime(format!(
            "team {} is not whole: {} stopped while `swarm up` placed the team",
            team.name(),
            stopped.join(", ")
        ))
        .with_hint(format!(
            "`swarm status {}` shows who runs; `swarm down {}` stops the rest",
            team.name(),
            team.name()
        )));
    }
    if args.attach
        && let Some(placement) = &placement
    {
        let tmux = crate::launch::tmux::Tmux::at(&placement.socket);
        return if destination.inside {
            tmux.switch_to(&placement.window)
        } else {
            tmux.attach(&placement.session)
        };
    }
    if let Some(transcript) = &mut transcript {
        return wait_all(ctx, &team, args.timeout, transcript);
    }
    Ok(())
}

/// The team placed: where its panes are, its members, and how to attach.
#[derive(Serialize)]
struct TeamUp<'a> {
    team: &'a str,
    session: Option<&'a str>,
    window: Option<&'a str>,
    socket: Option<&'a Path>,
    members: Vec<&'a String>,
    attach: Option<&'a [String]>,
}

/// From now on Ctrl-C ends the waiting, not the team: it runs on in tmux, as after `up` without
/// `--wait`, and stderr says so and how to stop it (docs/ARCHITECTURE.md, "Launching"). A thread
/// of its own waits for the signal, so the wait itself needs no change.
fn on_interrupt_leave_running(ctx: &Context, team: &str) -> Result<()> {
    let failed = |err| Error::os("install a handler for Ctrl-C", err);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(failed)?;
    let mut interrupt = {
        let _entered = runtime.enter();
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).map_err(failed)?
    };
    let said =
        Error::runtime(format!("stopped waiting; team {team} runs on in tmux")).with_hint(format!(
            "`swarm down {team}` stops it; `swarm top {team}` or `swarm wait --all --team {team}` \
             follows it"
        ));
    let printer = ctx.printer();
    std::thread::spawn(move || {
        runtime.block_on(interrupt.recv());
        printer.error(&said);
        std::process::exit(i32::from(crate::error::INTERRUPTED));
    });
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

/// A launch that failed part-way stops the members whose panes it already placed, as `stop`
/// does, so its exit 1 leaves nothing running. Returns `err`, saying what was stopped.
fn stop_placed(team: &Team, fleet: &Fleet, err: Error) -> Error {
    stop_placed_as(team, fleet, err, ending::LAUNCH_FAILED)
}

/// [`stop_placed`] with the ending's `reason`.
fn stop_placed_as(team: &Team, fleet: &Fleet, err: Error, reason: &str) -> Error {
    let placed: Vec<String> = match team.load() {
        Ok(config) => config
            .members
            .iter()
            .filter(|m| !m.tmux_pane_id.is_empty() || m.supervisor_pid.is_some())
            .map(|m| m.name.clone())
            .collect(),
        Err(stuck) => {
            return err.with_note(format!("cannot tell which panes were placed: {stuck}"));
        }
    };
    if placed.is_empty() {
        return err;
    }
    match stop::stop(team, fleet, &placed, reason) {
        Ok(_) => err.with_note(format!("stopped {}, already placed", placed.join(", "))),
        Err(stuck) => err.with_note(format!(
            "cannot stop {}, already placed: {stuck}",
            placed.join(", ")
        )),
    }
}

/// A team with live members is not started twice.
fn refuse_if_running(ctx: &Context, name: &str) -> Result<()> {
    let Ok(team) = Team::open(&ctx.home, name) else {
        return Ok(());
    };
    let Ok(observed) = Observed::take(&team, &ctx.fleet()) else {
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

/// An interrupted team is resumed or started afresh, never started over by mistake: starting it
/// afresh gives up its members' conversations, unread messages and tasks.
fn refuse_if_interrupted(ctx: &Context, name: &str) -> Result<()> {
    let Ok(team) = Team::open(&ctx.home, name) else {
        return Ok(());
    };
    let Ok(observed) = Observed::take(&team, &ctx.fleet()) else {
        return Ok(());
    };
    if !observed.interrupted() {
        return Ok(());
    }
    Err(Error::usage(format!(
        "team {name} was interrupted: `swarm up --resume` resumes it, `swarm up --fresh` starts it afresh"
    )))
}

/// `up --resume`: the team's interrupted members placed again (docs/ARCHITECTURE.md, "Resuming a
/// team"), under the launch lock as `up` places a team.
fn resume_team(ctx: &Context, args: &Args) -> Result<()> {
    // A team file gives its name and the values of its members' variables; else a team's name.
    let (file, name) = match &args.teamfile {
        Some(path) if path.is_file() => {
            let file = TeamFile::load(path)?;
            let name = file.name.to_string();
            (Some(file), Some(name))
        }
        Some(name) => (None, Some(name.to_string_lossy().into_owned())),
        None => (None, None),
    };
    let team = ctx.team_or(name.as_deref())?;
    let resumed = place_again(
        ctx,
        &team,
        file.as_ref(),
        args.socket.as_deref(),
        !args.detach,
    )?;
    let mut lines = resumed.lines();
    if let Some(attach) = &resumed.placed.attach
        && !resumed.inside
    {
        lines.push(format!("attach with: {}", attach.join(" ")));
    }
    ctx.report(&WithLines {
        json: &resumed.placed,
        lines,
    })?;
    if args.attach
        && let (Some(socket), Some(window), Some(session)) = (
            &resumed.placed.socket,
            &resumed.placed.window,
            &resumed.placed.session,
        )
    {
        let tmux = crate::launch::tmux::Tmux::at(socket);
        return if resumed.inside {
            tmux.switch_to(window)
        } else {
            tmux.attach(session)
        };
    }
    Ok(())
}

/// `swarm resume --all`: every interrupted team under the home resumed, each as `swarm resume
/// TEAM` resumes it. A team that cannot be is said on stderr, and the others are resumed all the
/// same; then exit 1. One that is no longer interrupted when its turn comes (another resume took
/// it meanwhile) is left as it is.
fn resume_all(ctx: &Context, args: &ResumeArgs) -> Result<()> {
    let fleet = ctx.fleet();
    // Judged by this host's part: at login, a team across hosts may still show members elsewhere
    // as running or unreachable, until their nodes are seen (`place_again` waits for them).
    let interrupted = |name: &str| {
        Team::open(&ctx.home, name)
            .and_then(|team| Observed::take(&team, &fleet))
            .is_ok_and(|observed| observed.interrupted_here())
    };
    let mut resumed = Vec::new();
    let mut failed = Vec::new();
    let mut led_elsewhere = Vec::new();
    for name in list_teams(&ctx.home)? {
        if !interrupted(&name) {
            continue;
        }
        if let Some(host) = Team::open(&ctx.home, &name)
            .ok()
            .and_then(|team| fleet.led_from_elsewhere(&team))
        {
            led_elsewhere.push(format!(
                "team {name} is led from host {host}: it is resumed from there"
            ));
            continue;
        }
        let placed = Team::open(&ctx.home, &name)
            .and_then(|team| place_again(ctx, &team, None, args.socket.as_deref(), !args.detach));
        match placed {
            Ok(team) => resumed.push(team),
            Err(_) if !interrupted(&name) => {
                tracing::info!("team {name} was resumed meanwhile, by another resume");
            }
            Err(err) => {
                tracing::warn!("team {name} is not resumed: {}", err.message());
                failed.push(name);
            }
        }
    }
    let mut lines: Vec<String> = resumed.iter().flat_map(ResumedTeam::lines).collect();
    if resumed.is_empty() && failed.is_empty() && led_elsewhere.is_empty() {
        lines.push("no team was interrupted: there is nothing to resume".to_owned());
    }
    lines.extend(led_elsewhere);
    ctx.report(&WithLines {
        json: resumed.iter().map(|r| &r.placed).collect::<Vec<_>>(),
        lines,
    })?;
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Error::runtime(format!(
            "{} not resumed: {}",
            count(failed.len(), "team was", "teams were"),
            failed.join(", ")
        ))
        .with_hint("`swarm resume TEAM` says why, one team at a time"))
    }
}

/// A team placed again by a resume: where, and who.
struct ResumedTeam {
    placed: TeamResumed,
    /// The caller runs inside tmux: attaching is switching windows.
    inside: bool,
    /// The members other hosts' nodes resumed, by host.
    elsewhere: Vec<(String, Vec<String>)>,
}

/// What `swarm resume --json` prints of a team: as `swarm up` does. No panes here (its members
/// all on other hosts) has "session", "window", "socket" and "attach" null.
#[derive(Serialize)]
struct TeamResumed {
    team: String,
    session: Option<String>,
    window: Option<String>,
    socket: Option<PathBuf>,
    members: Vec<String>,
    attach: Option<Vec<String>>,
}

impl ResumedTeam {
    /// `team t resumed: alice, bob in window @1 of session swarm-t`, and a line for each other
    /// host's members.
    fn lines(&self) -> Vec<String> {
        let here: Vec<&String> = self
            .placed
            .members
            .iter()
            .filter(|name| !self.elsewhere.iter().any(|(_, names)| names.contains(name)))
            .collect();
        let mut lines = vec![match (&self.placed.window, &self.placed.session) {
            (Some(window), Some(session)) => format!(
                "team {} resumed: {} in window {window} of session {session}",
                self.placed.team,
                here.iter()
                    .map(|name| name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            _ => format!(
                "team {} resumed, its members on other hosts",
                self.placed.team
            ),
        }];
        lines.extend(
            self.elsewhere
                .iter()
                .map(|(host, names)| format!("on host {host}: {}", names.join(", "))),
        );
        lines
    }
}

/// Places `team`'s interrupted members again, under the launch lock, those of other hosts through
/// their nodes; refused (exit 2) when the team runs or was not interrupted, or another host
/// cannot answer for its members. `file`, when given, gives its members' variables' values.
fn place_again(
    ctx: &Context,
    team: &Team,
    file: Option<&TeamFile>,
    socket: Option<&str>,
    switch: bool,
) -> Result<ResumedTeam> {
    let fleet = ctx.fleet();
    let launch_lock = LaunchLock::take(&ctx.home, team.name())?;
    // Refused before any wait for other hosts: the resume belongs to the lead's host.
    if let Some(host) = fleet.led_from_elsewhere(team) {
        return Err(resume::led_elsewhere(team.name(), &host));
    }
    let elsewhere = fleet.resume_spread(team)?;
    refuse_if_running(ctx, team.name())?;
    let observed = Observed::take(team, &fleet)?;
    if !observed.resumable() {
        return Err(Error::usage(format!(
            "team {} was neither interrupted nor brought down: there is nothing to resume",
            team.name()
        ))
        .with_hint("`swarm up TEAMFILE` starts it again"));
    }
    let layout_text = observed
        .config
        .launch
        .as_ref()
        .and_then(|l| l.layout.clone());
    let layout = match layout_text.as_deref() {
        Some(text) => layout::Layout::parse(text).map_err(|why| {
            Error::usage(format!("team {}: {why}", team.name()))
                .with_hint("fix launch.layout in the team's config.json")
        })?,
        None => layout::DEFAULT,
    };
    let destination = Destination::reopen(socket, observed.config.tmux.as_ref());
    destination.tmux.check_version()?;
    let resumed = resume::prepare(team, &fleet, &observed, file, &|key| {
        std::env::var(key).ok()
    })?;
    for note in &resumed.notes {
        tracing::warn!("{note}");
    }
    let placed = {
        let _launching = Launching(team);
        if resumed.panes.is_empty() {
            Ok(None)
        } else {
            panes::start_team(&destination, team, &resumed.panes, &layout, switch).map(Some)
        }
    };
    // A resume that fails leaves the team as interrupted as it found it, to be resumed again.
    let failed = |err: Error| {
        let err = stop_placed_as(team, &fleet, err, ending::RESUME_FAILED);
        let names: Vec<String> = resumed
            .panes
            .iter()
            .chain(&resumed.away)
            .map(|plan| plan.name.clone())
            .collect();
        ending::resume_failed(team, &names, err)
    };
    let placement = placed.map_err(failed)?;
    let started = elsewhere
        .start(team, &resumed.away, layout_text.as_deref())
        .map_err(failed)?;
    drop(launch_lock);
    for note in &started.notes {
        tracing::warn!("{note}");
    }
    let attach = placement
        .as_ref()
        .map(|placement| destination.tmux.attach_command(&placement.session));
    let members = resumed
        .panes
        .into_iter()
        .map(|p| p.name)
        .chain(started.hosts.iter().flat_map(|(_, names)| names.clone()))
        .collect();
    Ok(ResumedTeam {
        placed: TeamResumed {
            team: team.name().to_owned(),
            session: placement.as_ref().map(|p| p.session.clone()),
            window: placement.as_ref().map(|p| p.window.clone()),
            socket: placement.map(|p| p.socket),
            members,
            attach,
        },
        inside: destination.inside,
        elsewhere: started.hosts,
    })
}

/// What `--dry-run` shows of each pane: its directory, its exact argv, every variable its program
/// will get (docs/ARCHITECTURE.md, "Secrets and the environment"), the values of secret-looking
/// names masked by the one rule of `base::secrets`, the inherited names its rules withhold, and
/// every setting its member runs with.
fn print_plans(
    ctx: &Context,
    prepared: &Prepared,
    destination: &Destination,
    file: &TeamFile,
    notify: &Notify,
) -> Result<()> {
    let team = prepared.config.name.as_str();
    let pane_env = panes::pane_environment(destination)?;
    let panes = prepared.panes.iter().map(|plan| {
        let settings = prepared
            .config
            .member(&plan.name)
            .map(render::settings)
            .unwrap_or_default();
        let argv = match prepared.config.member(&plan.name) {
            Some(member) => supervisor::foreseen_argv(
                plan,
                member,
                &prepared.config,
                &ctx.home,
                &pane_env,
                Some(destination.tmux.socket_path()),
            )?,
            None => plan.argv.clone(),
        };
        Ok(DryRunPane::of(plan, argv, &pane_env, settings))
    });
    ctx.report(&DryRun {
        team,
        environment_from: &pane_env.source,
        panes: panes.collect::<Result<_>>()?,
        tasks: (!file.tasks.is_empty()).then(|| file.tasks.iter().map(DryRunTask::of).collect()),
        notify: notify.summary(),
    })
}

/// What `up --dry-run` would start: every pane, and the tasks it would put on the board.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DryRun<'a> {
    team: &'a str,
    environment_from: &'a str,
    panes: Vec<DryRunPane<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tasks: Option<Vec<DryRunTask<'a>>>,
    /// The alerts, one line, a webhook's secret masked.
    notify: String,
}

/// A `[[task]]` of the team file, as `--dry-run` shows it (its keys as the file spells them).
#[derive(Serialize)]
struct DryRunTask<'a> {
    key: &'a str,
    subject: &'a str,
    description: &'a str,
    blocked_by: &'a [String],
    owner: Option<&'a str>,
}

impl<'a> DryRunTask<'a> {
    fn of(task: &'a TaskSpec) -> Self {
        Self {
            key: &task.key,
            subject: &task.subject,
            description: &task.description,
            blocked_by: &task.blocked_by,
            owner: task.owner.as_deref(),
        }
    }
}

impl Report for DryRun<'_> {
    fn text(&self) -> Result<()> {
        output::line(format!(
            "environment from {}; values of secret-looking names masked",
            self.environment_from
        ))?;
        for pane in &self.panes {
            output::line(format!("{}:", pane.plan.name))?;
            output::line(format!(
                "  {:<12}  {}",
                "argv",
                render::shell_words(&pane.argv)
            ))?;
            for (name, value) in &pane.vars {
                output::line(format!("  {:<12}  {name}={value}", "env"))?;
            }
            for name in &pane.withheld {
                output::line(format!("  {:<12}  {name}", "drop"))?;
            }
            for setting in &pane.settings {
                output::line(format!("  {:<12}  {}", setting.label, setting.text))?;
            }
        }
        let tasks = self.tasks.as_deref().unwrap_or_default();
        if !tasks.is_empty() {
            output::line("tasks (made unless the board has tasks from this file):")?;
        }
        for task in tasks {
            let mut line = format!("  {:<12}  {}", task.key, task.subject);
            if !task.blocked_by.is_empty() {
                let _ = write!(line, "  (blocked by {})", task.blocked_by.join(", "));
            }
            if let Some(owner) = &task.owner {
                let _ = write!(line, "  (owner {owner})");
            }
            output::line(line)?;
        }
        output::line(format!("alerts: {}", self.notify))
    }
}

/// One pane as `--dry-run` shows it.
struct DryRunPane<'a> {
    plan: &'a PanePlan,
    /// The argv its supervisor will run: a fenced member's inside bubblewrap's.
    argv: Vec<String>,
    /// Every variable its program will get, each value as [`secrets::shown`] shows it.
    vars: Vec<(String, String)>,
    /// Inherited names its rules withhold.
    withheld: Vec<String>,
    /// Every setting its member runs with.
    settings: Vec<Setting>,
}

impl Serialize for DryRunPane<'_> {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let env: serde_json::Map<String, Value> = self
            .vars
            .iter()
            .map(|(name, value)| (name.clone(), json!(value)))
            .collect();
        let mut map = serializer.serialize_map(Some(6))?;
        map.serialize_entry("name", &self.plan.name)?;
        map.serialize_entry("argv", &self.argv)?;
        map.serialize_entry("env", &env)?;
        map.serialize_entry("withheld", &self.withheld)?;
        map.serialize_entry("cwd", &self.plan.cwd)?;
        map.serialize_entry("settings", &render::settings_object(&self.settings))?;
        map.end()
    }
}

impl<'a> DryRunPane<'a> {
    fn of(
        plan: &'a PanePlan,
        argv: Vec<String>,
        pane_env: &PaneEnvironment,
        settings: Vec<Setting>,
    ) -> Self {
        let env = supervisor::foreseen_env(plan, pane_env);
        let vars = env
            .vars
            .iter()
            .map(|(name, value)| {
                let name = name.to_string_lossy().into_owned();
                let value = render::env_value(&name, &value.to_string_lossy());
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
            argv,
            vars,
            withheld,
            settings,
        }
    }
}

/// The team's board once its members have ended, if it has one; whether every task completed.
fn print_board(ctx: &Context, team: &Team) -> Result<bool> {
    let Ok(board) = TaskList::new(&ctx.home, team.name()).read() else {
        return Ok(true);
    };
    let shown: Vec<&Task> = board.tasks.values().filter(|t| !t.is_internal()).collect();
    if shown.is_empty() {
        return Ok(true);
    }
    let open = shown.iter().filter(|t| t.is_open()).count();
    ctx.event(&Tagged {
        event: "board",
        fields: BoardAtEnd {
            tasks: &shown,
            open,
            board: &board,
        },
    })?;
    Ok(open == 0)
}

/// The team's board once its members have ended: its tasks, and how many are open.
#[derive(Serialize)]
struct BoardAtEnd<'a> {
    tasks: &'a [&'a Task],
    open: usize,
    #[serde(skip)]
    board: &'a Board,
}

impl Report for BoardAtEnd<'_> {
    fn text(&self) -> Result<()> {
        output::line(if self.open == 0 {
            "the board is done:".to_owned()
        } else {
            format!(
                "the board is not done: {} open",
                count(self.open, "task", "tasks")
            )
        })?;
        render::board_table(self.board, self.tasks).print()
    }
}

/// Waits for every member launched, those `swarm spawn` adds meanwhile too, printing the messages
/// they exchange and each ending; exit 1 unless all completed, 4 on timeout. A team started with
/// nothing to run is waited for until its first member is spawned, and then until all have ended.
fn wait_all(
    ctx: &Context,
    team: &Team,
    timeout: Option<Duration>,
    transcript: &mut Follower<'_>,
) -> Result<()> {
    let deadline = timeout.and_then(clock::deadline);
    let mut all_well = true;
    let config = team.load()?;
    let mut judges = Judges::new(team, &config);
    let awaited = Awaited::Launched {
        except: None,
        first: true,
    };
    let left = liveness::follow_endings(
        team,
        &ctx.fleet(),
        awaited,
        deadline,
        Some(transcript),
        |event| {
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
                Event::Arrived(arrival) => {
                    let verdict = judges.judge(arrival);
                    ctx.event(&WithLine {
                        json: render::json(
                            &arrival.message,
                            verdict,
                            &[
                                ("event", json!("message")),
                                ("to", json!(arrival.addressee())),
                            ],
                        ),
                        line: render::arrival(&arrival.message, arrival.addressee(), verdict),
                    })
                }
                Event::Ended(member, seen) => {
                    all_well &= liveness::ended_well(seen);
                    ctx.event(&Tagged {
                        event: "ended",
                        fields: WithLine {
                            json: Ending::of(member, seen.label()),
                            line: liveness::ending_line(member, seen),
                        },
                    })
                }
            }
        },
    )?;
    if !left.is_empty() {
        return Err(Error::timeout(format!(
            "still running: {}",
            left.join(", ")
        )));
    }
    // With everyone ended nothing more can move on the board: it is shown as it ends, and a
    // task left open is a run that did not finish.
    all_well &= print_board(ctx, team)?;
    if all_well {
        Ok(())
    } else {
        Err(Error::silent(ErrorKind::Runtime))
    }
}
