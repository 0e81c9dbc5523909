//! Placing a team's panes: where the team goes, the first pane and the splits, the layout, each
//! pane's title and colour. `up` and `spawn` share it. tmux execs the supervisor (`swarm run NAME`)
//! directly in each pane, so no keys are ever typed into a shell, and the member's variables reach
//! it in a [`Handoff`], never on tmux's command line.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::base::process::LEAD_VAR;
use crate::error::{Error, Result};
pub use crate::format::config::{State, TmuxPlacement};
pub use crate::format::settings::Color;
use crate::launch::environment::Handoff;
use crate::launch::keys::KEY_VAR;
use crate::launch::layout::Layout;
use crate::launch::lock::LaunchLock;
use crate::launch::prepare::PanePlan;
use crate::launch::tmux::{
    Environment, PaneInfo, PaneSpec, Placement, Server, Tmux, current_socket, is_gone, same_socket,
};
use crate::store::team::Team;

/// Which server a team goes on and whether it joins the caller's own tmux session.
#[derive(Debug, Clone)]
pub struct Destination {
    pub tmux: Tmux,
    /// Inside tmux without `--socket`: a new window in the current session.
    pub inside: bool,
}

impl Destination {
    pub fn choose(socket: Option<&str>) -> Self {
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
    pub fn reopen(socket: Option<&str>, was: Option<&TmuxPlacement>) -> Self {
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
pub fn start_team(
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
    let handoff = Handoff::write(&first.env)?;
    let argv = supervisor_argv(team, &first.name, first.log_max, &handoff)?;
    let info = destination
        .tmux
        .first_pane(placement, &spec(first, &argv, &public_env(first)))?;
    handoff.deliver();
    let where_ = TmuxPlacement {
        socket: info.socket.clone(),
        session: info.session.clone(),
        window: info.window.clone(),
        dashboard_pane: None,
        extra: serde_json::Map::new(),
    };
    team.update(|config| {
        config.tmux = Some(where_.clone());
        Ok(())
    })?;
    settle(&Tmux::at(&info.socket), team, &first.name, &info)?;
    Ok((where_, info))
}

/// Where `pane`, the one this process runs in, is on the server it runs under (`$TMUX`), as
/// config.json records a team's placement: what a supervisor records when its launcher has not
/// (killed once the pane existed, before it heard of it), so `down` finds the pane.
pub(crate) fn placement_of(pane: &str) -> Option<TmuxPlacement> {
    let socket = current_socket()?;
    let located = Tmux::at(&socket).locate(pane).ok().flatten()?;
    Some(TmuxPlacement {
        socket,
        session: located.session,
        window: located.window,
        dashboard_pane: None,
        extra: serde_json::Map::new(),
    })
}

/// `dashboard = true`: opens `swarm top` on the team in a pane across the whole width of its
/// window, below the members' panes, and records the pane, which is no member's, for `down` to
/// close (docs/ARCHITECTURE.md, "Dashboard").
pub fn open_dashboard(team: &Team, placement: &TmuxPlacement, cwd: &Path) -> Result<String> {
    let argv = vec![
        swarm_exe()?,
        "top".into(),
        "--home".into(),
        team.home().root().as_os_str().to_owned(),
        team.name().into(),
    ];
    let tmux = Tmux::at(&placement.socket);
    let info = tmux.split_below(
        &placement.window,
        &PaneSpec {
            cwd,
            argv: &argv,
            public_env: &[],
        },
    )?;
    team.update(|config| {
        if let Some(tmux) = config.tmux.as_mut() {
            tmux.dashboard_pane = Some(info.pane.clone());
        }
        Ok(())
    })?;
    tmux.title(&info.pane, "swarm top")?;
    tmux.mark(&info.pane, team.home().root(), team.name())?;
    Ok(info.pane)
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
    let handoff = Handoff::write(&plan.env)?;
    let argv = supervisor_argv(team, &plan.name, plan.log_max, &handoff)?;
    let public = public_env(plan);
    let info = match tmux.split(&placement.window, &spec(plan, &argv, &public)) {
        Ok(info) => info,
        Err(err) if is_gone(err.message()) => return Ok(None),
        Err(err) => return Err(err),
    };
    handoff.deliver();
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
pub fn place_member(
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
    let whose = (team.home().root(), team.name(), name);
    match tmux.decorate(&info.pane, &info.window, whose, tmux_color) {
        // A program that ended at once takes its pane with it; its ending is recorded all the same.
        Err(err) if is_gone(err.message()) => {
            tracing::debug!("{name}'s pane closed before it was decorated");
            Ok(())
        }
        other => other,
    }
}

fn spec<'a>(
    plan: &'a PanePlan,
    argv: &'a [OsString],
    public_env: &'a [(&'a str, &'a str)],
) -> PaneSpec<'a> {
    PaneSpec {
        cwd: &plan.cwd,
        argv,
        public_env,
    }
}

/// What of a pane's variables tmux may set itself: its verify key and its team's lead, public,
/// which swarm's readers in the pane and every judge of where a process runs take from the
/// supervisor's own environment, where the member cannot change them (docs/ARCHITECTURE.md,
/// "Identity"). Everything else reaches the supervisor in its [`Handoff`].
fn public_env(plan: &PanePlan) -> Vec<(&str, &str)> {
    [KEY_VAR, LEAD_VAR]
        .into_iter()
        .filter_map(|name| plan.env.get_key_value(name))
        .map(|(key, value)| (key.as_str(), value.as_str()))
        .collect()
}

/// What a variable tmux sets in each pane it creates is shown as, before the pane exists.
pub(crate) const SET_BY_TMUX: &str = "<set by tmux>";

/// The variables tmux sets in every pane, over what the server and session give it (tmux 3.3a,
/// `environ_for_session` and `spawn_pane`); PATH is the creating client's, handled apart.
const SET_IN_EVERY_PANE: [&str; 6] = [
    "TERM",
    "TERM_PROGRAM",
    "TERM_PROGRAM_VERSION",
    "TMUX",
    "TMUX_PANE",
    "SHELL",
];

/// tmux's default `update-environment`: what a new session takes from the client that makes it.
const DEFAULT_UPDATE_ENVIRONMENT: [&str; 8] = [
    "DISPLAY",
    "KRB5CCNAME",
    "SSH_ASKPASS",
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "SSH_CONNECTION",
    "WINDOWID",
    "XAUTHORITY",
];

/// The search path tmux gives a pane when neither its client nor its session has one.
const TMUX_DEFAULT_PATH: &str = "/usr/bin:/bin";

/// What a pane `up` places on `destination` will inherit from tmux, as far as it is known before
/// any pane exists (docs/ARCHITECTURE.md, "Secrets and the environment"): for `up --dry-run`.
#[derive(Debug, Clone)]
pub struct PaneEnvironment {
    /// Every variable the pane's supervisor will find; those tmux sets per pane are
    /// [`SET_BY_TMUX`].
    pub(crate) vars: BTreeMap<OsString, OsString>,
    /// Where they come from, in words.
    pub source: String,
}

/// Predicts a pane's environment the way tmux builds it: the server's global environment (for a
/// server this `up` would start, its own environment, with `PWD`), the session's over it (inside
/// tmux the current session's; for a new session, the `update-environment` variables of this
/// process), this process's PATH, and what tmux sets in every pane. A config file a new server
/// would read is not.
pub fn pane_environment(destination: &Destination) -> Result<PaneEnvironment> {
    let launcher: BTreeMap<OsString, OsString> = std::env::vars_os()
        .filter(|(name, _)| !crate::base::TEST_HOOKS.iter().any(|hook| name == hook))
        .collect();
    let mut vars = BTreeMap::new();
    let source = match destination.tmux.environment(false)? {
        Some(global) => {
            apply(&mut vars, global);
            if destination.inside {
                if let Some(session) = destination.tmux.environment(true)? {
                    apply(&mut vars, session);
                }
                "the tmux server this runs in, and its current session"
            } else {
                let update = destination
                    .tmux
                    .global_values("update-environment")?
                    .unwrap_or_else(|| DEFAULT_UPDATE_ENVIRONMENT.map(str::to_owned).to_vec());
                apply(&mut vars, updated(&update, &launcher));
                "the running tmux server"
            }
        }
        None => {
            vars.clone_from(&launcher);
            if let Some(pwd) = tmux_pwd(&launcher) {
                vars.insert("PWD".into(), pwd);
            }
            "a new tmux server, started from this environment (its config file not read)"
        }
    };
    let path = launcher
        .get(OsStr::new("PATH"))
        .or_else(|| vars.get(OsStr::new("PATH")))
        .cloned()
        .unwrap_or_else(|| TMUX_DEFAULT_PATH.into());
    vars.insert("PATH".into(), path);
    for name in SET_IN_EVERY_PANE {
        vars.insert(name.into(), SET_BY_TMUX.into());
    }
    Ok(PaneEnvironment {
        vars,
        source: source.to_owned(),
    })
}

fn apply(vars: &mut BTreeMap<OsString, OsString>, entries: Environment) {
    for (name, value) in entries {
        match value {
            Some(value) => vars.insert(name.into(), value.into()),
            None => vars.remove(OsStr::new(&name)),
        };
    }
}

/// A new session's environment: for each `update-environment` pattern, the client's variables
/// it matches, or, when none does, the pattern itself removed (tmux 3.3a, `environ_update`).
fn updated(patterns: &[String], client: &BTreeMap<OsString, OsString>) -> Environment {
    let mut entries = Vec::new();
    for pattern in patterns {
        let before = entries.len();
        for (name, value) in client {
            if let Some(name) = name.to_str().filter(|name| glob(pattern, name)) {
                entries.push((name.to_owned(), Some(value.to_string_lossy().into_owned())));
            }
        }
        if entries.len() == before {
            entries.push((pattern.clone(), None));
        }
    }
    entries
}

/// `fnmatch` with `*` and `?`, which is what `update-environment` patterns use.
fn glob(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == '?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((star_p, star_n)) => {
                    p = star_p + 1;
                    n = star_n + 1;
                    star = Some((star_p, star_n + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

/// The `PWD` a new tmux server puts in its global environment: the client's `PWD` when it names
/// the working directory, else the working directory.
fn tmux_pwd(launcher: &BTreeMap<OsString, OsString>) -> Option<OsString> {
    let cwd = std::env::current_dir().ok()?;
    let same = launcher
        .get(OsStr::new("PWD"))
        .filter(|pwd| !pwd.is_empty())
        .and_then(|pwd| std::fs::canonicalize(pwd).ok())
        .is_some_and(|pwd| std::fs::canonicalize(&cwd).is_ok_and(|cwd| cwd == pwd));
    if same {
        launcher.get(OsStr::new("PWD")).cloned()
    } else {
        Some(cwd.into_os_string())
    }
}

/// The directory of the swarm executable, put first on members' PATH so the `swarm` they run is
/// the one that launched them.
pub(crate) fn exe_dir() -> Option<PathBuf> {
    std::env::current_exe().ok()?.parent().map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_environment_patterns_match_as_fnmatch_does() {
        assert!(glob("SSH_*", "SSH_AUTH_SOCK"));
        assert!(glob("DISPLAY", "DISPLAY"));
        assert!(glob("*_KEY", "ANTHROPIC_API_KEY"));
        assert!(glob("A?C", "ABC"));
        assert!(glob("*", ""));
        assert!(!glob("DISPLAY", "DISPLAY2"));
        assert!(!glob("SSH_*", "XSSH_A"));
        assert!(!glob("A?C", "AC"));
    }

    #[test]
    fn a_new_session_takes_what_update_environment_names_from_its_client() {
        let client = BTreeMap::from([
            (OsString::from("SSH_AUTH_SOCK"), OsString::from("/s")),
            (OsString::from("SSH_AGENT_PID"), OsString::from("7")),
            (OsString::from("HOME"), OsString::from("/h")),
        ]);
        let patterns = ["SSH_*".to_owned(), "DISPLAY".to_owned()];
        assert_eq!(
            updated(&patterns, &client),
            [
                ("SSH_AGENT_PID".to_owned(), Some("7".to_owned())),
                ("SSH_AUTH_SOCK".to_owned(), Some("/s".to_owned())),
                ("DISPLAY".to_owned(), None),
            ]
        );
    }
}
