//! Placing a team's panes: where the team goes, the first pane and the splits, the layout, each
//! pane's title and colour. `up` and `spawn` share it. tmux execs the supervisor (`swarm run NAME`)
//! directly in each pane, so no keys are ever typed into a shell.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::config::{State, TmuxPlacement};
use crate::format::settings::Color;
use crate::launch::layout::Layout;
use crate::launch::lock::LaunchLock;
use crate::launch::prepare::PanePlan;
use crate::launch::tmux::{
    PaneInfo, PaneSpec, Placement, Server, Tmux, current_socket, is_gone, same_socket,
};
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

impl Destination {
    /// Where `spawn` opens a team's window: on the server `socket` names; else on the server the
    /// window was on, as a new window in the current session when that is this process's tmux,
    /// else a detached session; else where `up` would.
    pub(crate) fn reopen(socket: Option<&str>, was: Option<&TmuxPlacement>) -> Self {
        let Some(was) = was.filter(|_| socket.is_none_or(str::is_empty)) else {
            return Self::choose(socket);
        };
        match current_socket() {
            Some(current) if same_socket(&current, &was.socket) => Self {
                tmux: Tmux::at(&current),
                inside: true,
            },
            _ => Self {
                tmux: Tmux::at(&was.socket),
                inside: false,
            },
        }
    }
}

/// The command tmux runs in a member's pane: its supervisor, told the bound of the member's log.
pub(crate) fn supervisor_argv(name: &str, log_max: u64) -> Result<Vec<OsString>> {
    Ok(vec![
        swarm_exe()?,
        "run".into(),
        "--log-max".into(),
        log_max.to_string().into(),
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
    let (where_, _) = open_window(destination, team, first, select)?;
    // From here on, talk to the server by its socket path, as every later command will.
    let tmux = Tmux::at(&where_.socket);
    for plan in rest {
        add_pane(&tmux, team, &where_, plan, layout)?;
    }
    tmux.select_layout(&where_.window, layout)?;
    Ok(where_)
}

/// Opens the team's window with its first pane, as a new window in the current session (inside
/// tmux) or a detached session `swarm-<team>`, and records in config.json where it is.
fn open_window(
    destination: &Destination,
    team: &Team,
    first: &PanePlan,
    select: bool,
) -> Result<(TmuxPlacement, PaneInfo)> {
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
    let argv = supervisor_argv(&first.name, first.log_max)?;
    let info = destination
        .tmux
        .first_pane(placement, &spec(first, &argv))?;
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
    settle(&Tmux::at(&info.socket), team, &first.name, &info)?;
    Ok((where_, info))
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
    try_add_pane(tmux, team, placement, plan, layout)?.ok_or_else(|| {
        Error::not_found(format!(
            "the team's tmux window {} is gone",
            placement.window
        ))
        .with_hint("start the team again with `swarm up`")
    })
}

/// [`add_pane`], or `None` when the window (or its whole server) is gone and nothing was placed.
fn try_add_pane(
    tmux: &Tmux,
    team: &Team,
    placement: &TmuxPlacement,
    plan: &PanePlan,
    layout: &Layout,
) -> Result<Option<PaneInfo>> {
    let argv = supervisor_argv(&plan.name, plan.log_max)?;
    let info = match tmux.split(&placement.window, &spec(plan, &argv)) {
        Ok(info) => info,
        Err(err) if is_gone(err.message()) => return Ok(None),
        Err(err) => return Err(err),
    };
    // Keep room for the next split.
    tmux.select_layout(&placement.window, layout.while_growing())?;
    settle(tmux, team, &plan.name, &info)?;
    Ok(Some(info))
}

/// Places the pane of a member `spawn` adds: split into the team's window, or, when the team has
/// none (it was made by `init`, or started with nothing to run) or its window is gone (its last
/// pane closed), opens one as `up` does, on the server `socket` names, else the one the window
/// was on. Opening takes the team's launch lock ("Locks"), so spawns run at once open one window
/// between them and the others split into it.
pub(crate) fn place_member(
    team: &Team,
    plan: &PanePlan,
    layout: &Layout,
    socket: Option<&str>,
) -> Result<PaneInfo> {
    let split = || -> Result<Option<PaneInfo>> {
        let Some(placement) = team.load()?.tmux else {
            return Ok(None);
        };
        try_add_pane(&Tmux::at(&placement.socket), team, &placement, plan, layout)
    };
    if let Some(info) = split()? {
        return Ok(info);
    }
    let _opening = LaunchLock::wait(team.home(), team.name())?;
    // Another spawn may have opened one while this one waited (on a server started again, its
    // window may even have the id of the one that was gone).
    if let Some(info) = split()? {
        return Ok(info);
    }
    let destination = Destination::reopen(socket, team.load()?.tmux.as_ref());
    destination.tmux.check_version()?;
    open_window(&destination, team, plan, false).map(|(_, info)| info)
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
        Err(err) if is_gone(err.message()) => {
            tracing::debug!("{name}'s pane closed before it was decorated");
            Ok(())
        }
        other => other,
    }
}

fn spec<'a>(plan: &'a PanePlan, argv: &'a [OsString]) -> PaneSpec<'a> {
    PaneSpec {
        cwd: &plan.cwd,
        env: &plan.env,
        argv,
    }
}

/// The directory of the swarm executable, put first on members' PATH so the `swarm` they run is
/// the one that launched them.
pub(crate) fn exe_dir() -> Option<PathBuf> {
    std::env::current_exe().ok()?.parent().map(PathBuf::from)
}
