//! `swarm attach [TEAM] [NAME]`: the team's window on the screen, with NAME's pane selected.
//! Outside tmux it becomes `tmux attach` on the team's server; inside tmux on that server it
//! switches the caller's client; inside another tmux server it refuses, as tmux does, unless
//! `--nest` (docs/ARCHITECTURE.md, "Getting around").

use std::io::IsTerminal;
use std::path::Path;

use clap_complete::engine::ArgValueCandidates;
use serde::Serialize;

use crate::base::names::Name;
use crate::cli::complete;
use crate::cli::context::Context;
use crate::cli::output::Report;
use crate::error::{Error, Result};
use crate::format::config::{Member, State, TeamConfig, TmuxPlacement};
use crate::launch::tmux::{self, Located, Tmux};
use crate::member::pane::{self, Found};
use crate::store::team::{Team, list_teams};

const HELP: &str = r#"With one name, a member of the team (--team, SWARM_TEAM, the only team with a member of that name,
the only team, or the only one running) is meant when there is one by that name, else the team of
that name. NAME@TEAM names a member of team TEAM.

Outside tmux, swarm becomes `tmux attach` on the team's server (detach with the prefix key and d).
Inside tmux on the team's server, it switches your client to the team's window. Inside tmux on
another server (a team started with --socket), attaching would nest one tmux in another: swarm
refuses, as tmux does, unless --nest.

JSON output (--json), one line before swarm hands over: "team", "member" (null for the window
alone), "pane", "window", "session", "socket", "how" (attach or switch-client) and "attach", the
tmux command line that attaches."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = HELP)]
pub(crate) struct Args {
    /// The team [default: --team, SWARM_TEAM, the only team, or the only one running]; alone, it
    /// names a member of that team if there is one by that name
    // Their own ids: sharing the global --team's would let an empty SWARM_TEAM fill it.
    #[arg(
        id = "team_arg",
        value_name = "TEAM",
        add = ArgValueCandidates::new(complete::members_and_teams)
    )]
    pub(crate) first: Option<String>,

    /// The member whose pane to select [default: the window's active pane]
    #[arg(
        id = "member_arg",
        value_name = "NAME",
        add = ArgValueCandidates::new(complete::members_of_team_arg)
    )]
    pub(crate) second: Option<String>,

    /// Inside another tmux server, attach in this pane all the same (tmux in tmux)
    #[arg(long)]
    pub(crate) nest: bool,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let (team, member) = resolve(ctx, args.first.as_deref(), args.second.as_deref())?;
    let config = team.load()?;
    let member = member
        .map(|name| config.require_member(name.as_str()))
        .transpose()?;
    let placement = placement(&config)?;
    let server = Tmux::at(&placement.socket);
    let located = match member {
        Some(member) => member_pane(&team, &server, &config, member)?,
        None => window(&server, &config, placement)?,
    };
    let target = located.pane.clone();
    let inside = tmux::current_socket();
    let how = match &inside {
        Some(socket) if tmux::same_socket(socket, &placement.socket) => ClientCommand::Switch,
        Some(socket) if !args.nest => return Err(would_nest(&placement.socket, socket, &target)),
        _ => ClientCommand::Attach,
    };
    if how == ClientCommand::Attach && !std::io::stdin().is_terminal() {
        return Err(
            Error::usage("swarm attach needs a terminal: stdin is not one").with_hint(format!(
                "run `{}` from a terminal",
                attach_line(&placement.socket, &target)
            )),
        );
    }
    // One line, before this process becomes tmux's client: only --json says anything.
    ctx.event(&Attaching {
        team: team.name(),
        member: member.map(|m| m.name.as_str()),
        pane: &located.pane,
        window: &located.window,
        session: &located.session,
        socket: &placement.socket,
        how: how.as_str(),
        attach: attach_argv(&placement.socket, &target),
    })?;
    if member.is_some() {
        server.select(&target)?;
    }
    match how {
        ClientCommand::Switch => server.switch_client(&target).map_err(|err| {
            err.with_hint(format!(
                "from a terminal outside tmux: {}",
                attach_line(&placement.socket, &target)
            ))
        }),
        ClientCommand::Attach => Err(server.exec_attach(&target, inside.is_some())),
    }
}

/// Where `attach` takes the person, and how.
#[derive(Serialize)]
struct Attaching<'a> {
    team: &'a str,
    member: Option<&'a str>,
    pane: &'a str,
    window: &'a str,
    session: &'a str,
    socket: &'a Path,
    how: &'static str,
    attach: Vec<String>,
}

impl Report for Attaching<'_> {
    fn text(&self) -> Result<()> {
        Ok(())
    }
}

/// The tmux client command that shows the person the pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClientCommand {
    /// Inside tmux on the team's server: `switch-client`.
    Switch,
    /// Outside tmux (or nested): `tmux attach`, exec'd.
    Attach,
}

impl ClientCommand {
    fn as_str(self) -> &'static str {
        match self {
            Self::Switch => "switch-client",
            Self::Attach => "attach",
        }
    }
}

/// The team and the member the arguments name. With one name: a member of the team the context
/// picks for it (`Context::member_team`: also NAME@TEAM) when it has one by that name, else the
/// team of that name.
fn resolve(
    ctx: &Context,
    first: Option<&str>,
    second: Option<&str>,
) -> Result<(Team, Option<Name>)> {
    let member = |raw: &str| Name::parse("member", raw);
    match (first, second) {
        (Some(team), Some(name)) => Ok((ctx.team_or(Some(team))?, Some(member(name)?))),
        (None, _) => Ok((ctx.team()?, None)),
        (Some(name), None) => {
            let is_team =
                || list_teams(&ctx.home).is_ok_and(|teams| teams.iter().any(|t| t == name));
            match ctx.member_team(name) {
                Ok((team, member)) => {
                    if team.load()?.member(member.as_str()).is_some() || !is_team() {
                        Ok((team, Some(member)))
                    } else {
                        Ok((ctx.team_or(Some(name))?, None))
                    }
                }
                Err(_) if is_team() => Ok((ctx.team_or(Some(name))?, None)),
                Err(err) => Err(err),
            }
        }
    }
}

/// Where the team's panes live, from config.json.
fn placement(config: &TeamConfig) -> Result<&TmuxPlacement> {
    config.tmux.as_ref().ok_or_else(|| {
        Error::not_found(format!(
            "team {} has no tmux window: nothing of it was started",
            config.name
        ))
        .with_hint("start it with `swarm up TEAMFILE`")
    })
}

/// The member's pane, where it is now; a clear "not found" when it has none, ended or is gone.
fn member_pane(
    team: &Team,
    server: &Tmux,
    config: &TeamConfig,
    member: &Member,
) -> Result<Located> {
    let name = &member.name;
    let ended = member.state.filter(|state| state.is_final());
    if member.tmux_pane_id.is_empty() {
        return Err(match ended {
            Some(state) => Error::not_found(format!("{name} {}; it has no pane", ended_as(state))),
            None if member.argv.is_none() => Error::not_found(format!(
                "{name} has no pane: it runs no program (a member added with `swarm join`)"
            )),
            None => Error::not_found(format!("{name} has no pane yet")),
        }
        .with_hint(format!(
            "`swarm status --team {}` shows every member",
            config.name
        )));
    }
    // A pane id is the server's own counter: after a restart it may name someone else's pane.
    match pane::find(team, server, member)? {
        Found::Own(located) => Ok(located),
        _ => Err(match ended {
            Some(state) => Error::not_found(format!(
                "{name} {}; its pane {} is closed",
                ended_as(state),
                member.tmux_pane_id
            ))
            .with_hint(format!(
                "`swarm log {name} --team {}` shows what it printed",
                config.name
            )),
            None => Error::not_found(format!("{name}'s pane {} is gone", member.tmux_pane_id))
                .with_hint(format!(
                    "`swarm status --team {}` shows what became of it",
                    config.name
                )),
        }),
    }
}

/// How a member ended, as a sentence says it.
fn ended_as(state: State) -> &'static str {
    match state {
        State::Killed => "was killed",
        State::Failed => "has failed",
        _ => "has exited",
    }
}

/// The team's window, with whichever pane is active in it.
fn window(server: &Tmux, config: &TeamConfig, placement: &TmuxPlacement) -> Result<Located> {
    server.locate(&placement.window)?.ok_or_else(|| {
        Error::not_found(format!(
            "team {}'s tmux window {} is gone",
            config.name, placement.window
        ))
        .with_hint(format!(
            "`swarm status --team {}` shows its members; `swarm up` starts it again",
            config.name
        ))
    })
}

/// Inside another tmux server, attaching would run tmux in tmux; tmux itself refuses that.
fn would_nest(team_socket: &Path, own_socket: &Path, target: &str) -> Error {
    Error::usage(format!(
        "the team runs on another tmux server ({}) than this one ({}): attaching here would nest tmux in tmux",
        team_socket.display(),
        own_socket.display()
    ))
    .with_hint(format!(
        "pass --nest to do it all the same, or run `{}` outside tmux",
        attach_line(team_socket, target)
    ))
}

/// How a person attaches to `target` on the server at `socket`.
fn attach_argv(socket: &Path, target: &str) -> Vec<String> {
    Tmux::at(socket).attach_command(target)
}

fn attach_line(socket: &Path, target: &str) -> String {
    attach_argv(socket, target)
        .iter()
        .map(|arg| shlex::try_quote(arg).map_or_else(|_| arg.clone(), std::borrow::Cow::into_owned))
        .collect::<Vec<_>>()
        .join(" ")
}
