//! Placing a team's panes: where the team goes, the first pane and the splits, the layout, each
//! pane's title and colour. `up` and `spawn` share it. tmux execs the supervisor (`swarm run NAME`)
//! directly in each pane, so no keys are ever typed into a shell, and the member's variables reach
//! it in a [`Handoff`], never on tmux's command line.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::config::{State, TmuxPlacement};
use crate::format::settings::Color;
use crate::launch::environment::Handoff;
use crate::launch::layout::Layout;
use crate::launch::prepare::PanePlan;
use crate::launch::tmux::{PaneInfo, PaneSpec, Placement, Server, Tmux};
use crate::store::team::Team;

/// Which server a team goes on and whether it joins the caller's own tmux session.
#[derive(Debug, Clone)]
pub(crate) struct Destination {
    pub(crate) tmux: Tmux,
    /// Inside tmux without `--socket`: a new window in the current session.
    pub(crate) inside: bool,
}

impl Destination {
    pub(crate) fn choose(socket: Option<&str>) -> Self {
        if socket.is_some_and(|s| !s.is_empty()) {
            return Self {
                tmux: Tmux::new(Server::from_arg(socket)),
                inside: false,
            };
        }
        match Tmux::current() {
            Some(tmux) => Self { tmux, inside: true },
            None => Self {
                tmux: Tmux::new(Server::Default),
                inside: false,
            },
        }
    }
}

/// The command tmux runs in a member's pane: its supervisor, told its home and team, the bound of
/// the member's log, and the file its environment waits in. Nothing secret: this is tmux's
/// command line, which every local user can read.
pub(crate) fn supervisor_argv(
    team: &Team,
    name: &str,
    log_max: u64,
    handoff: &Handoff,
) -> Result<Vec<OsString>> {
    Ok(vec![
        swarm_exe()?,
        "run".into(),
        "--home".into(),
        team.home().root().as_os_str().to_owned(),
        "--team".into(),
        team.name().into(),
        "--log-max".into(),
        log_max.to_string().into(),
        "--env-file".into(),
        handoff.path().as_os_str().to_owned(),
        name.into(),
    ])
}

/// The command tmux pipes a member's pane into: swarm's own log writer, which bounds the log.
pub(crate) fn log_writer_argv(log: &Path, log_max: u64) -> Result<Vec<OsString>> {
    Ok(vec![
        swarm_exe()?,
        "pipe-log".into(),
        "--max".into(),
        log_max.to_string().into(),
        log.as_os_str().to_owned(),
    ])
}

fn swarm_exe() -> Result<OsString> {
    std::env::current_exe()
        .map(PathBuf::into_os_string)
        .map_err(|err| Error::os("find the swarm executable", err))
}

/// Starts one pane per plan: the first as a new window or session, the rest split into it.
pub(crate) fn start_team(
    destination: &Destination,
    team: &Team,
    plans: &[PanePlan],
    layout: &Layout,
    select: bool,
) -> Result<TmuxPlacement> {
    let Some((first, rest)) = plans.split_first() else {
        return Err(Error::usage(format!(
            "team {} has nothing to run: no command for the lead or any member",
            team.name()
        )));
    };
    let session = format!("swarm-{}", team.name());
    let placement = if destination.inside {
        Placement::NewWindow {
            name: team.name(),
            select,
        }
    } else {
        Placement::NewSession {
            session: &session,
            window: team.name(),
        }
    };
    let handoff = Handoff::write(&first.env)?;
    let argv = supervisor_argv(team, &first.name, first.log_max, &handoff)?;
    let info = destination
        .tmux
        .first_pane(placement, &spec(first, &argv))?;
    handoff.deliver();
    let where_ = TmuxPlacement {
        socket: info.socket.clone(),
        session: info.session.clone(),
        window: info.window.clone(),
        extra: serde_json::Map::new(),
    };
    team.update(|config| {
        config.tmux = Some(where_.clone());
        Ok(())
    })?;
    // From here on, talk to the server by its socket path, as every later command will.
    let tmux = Tmux::at(&info.socket);
    settle(&tmux, team, &first.name, &info)?;
    for plan in rest {
        add_pane(&tmux, team, &where_, plan, layout)?;
    }
    tmux.select_layout(&where_.window, layout)?;
    Ok(where_)
}

/// Splits one more member's pane into the team's window, then lays it out: a named `layout`
/// itself, a custom one (which fits only its own pane count) as tiled.
pub(crate) fn add_pane(
    tmux: &Tmux,
    team: &Team,
    placement: &TmuxPlacement,
    plan: &PanePlan,
    layout: &Layout,
) -> Result<PaneInfo> {
    let handoff = Handoff::write(&plan.env)?;
    let argv = supervisor_argv(team, &plan.name, plan.log_max, &handoff)?;
    let info = tmux
        .split(&placement.window, &spec(plan, &argv))
        .map_err(|err| {
            if err.message().contains("can't find") {
                Error::not_found(format!(
                    "the team's tmux window {} is gone",
                    placement.window
                ))
                .with_hint("start the team again with `swarm up`")
            } else {
                err
            }
        })?;
    handoff.deliver();
    // Keep room for the next split.
    tmux.select_layout(&placement.window, layout.while_growing())?;
    settle(tmux, team, &plan.name, &info)?;
    Ok(info)
}

/// Titles and colours the pane and records it; never downgrades what the supervisor already wrote.
fn settle(tmux: &Tmux, team: &Team, name: &str, info: &PaneInfo) -> Result<()> {
    let color = team.update(|config| {
        let limited = config
            .launch
            .as_ref()
            .is_some_and(|l| l.max_concurrent.is_some())
            && name != config.lead_name();
        let member = config
            .member_mut(name)
            .ok_or_else(|| Error::not_found(format!("{name} vanished from the team")))?;
        member.tmux_pane_id.clone_from(&info.pane);
        if member.state.is_none() {
            member.state = Some(if limited {
                State::Queued
            } else {
                State::Starting
            });
        }
        Ok(member.color.clone())
    })?;
    let tmux_color = color.as_deref().and_then(Color::parse).map(Color::tmux);
    match tmux.decorate(&info.pane, &info.window, name, tmux_color) {
        // A program that ended at once takes its pane with it; its ending is recorded all the same.
        Err(err) if crate::launch::tmux::is_gone(err.message()) => {
            tracing::debug!("{name}'s pane closed before it was decorated");
            Ok(())
        }
        other => other,
    }
}

fn spec<'a>(plan: &'a PanePlan, argv: &'a [OsString]) -> PaneSpec<'a> {
    PaneSpec {
        cwd: &plan.cwd,
        argv,
    }
}

/// The directory of the swarm executable, put first on members' PATH so the `swarm` they run is
/// the one that launched them.
pub(crate) fn exe_dir() -> Option<PathBuf> {
    std::env::current_exe().ok()?.parent().map(PathBuf::from)
}
