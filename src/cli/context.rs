//! Who is running a command, for which team, under which home: the home and team from the global
//! options and the `SWARM_*` environment the launcher sets in every pane; who the caller is from
//! where the command runs (docs/ARCHITECTURE.md, "Identity" and "Who may do what").

use std::cell::OnceCell;
use std::path::PathBuf;

use crate::base::names::Name;
use crate::cli::output::{Printer, Report};
use crate::cluster::fleet::Fleet;
use crate::error::{Error, Result};
use crate::format::config::TeamConfig;
use crate::member::identity;
use crate::member::liveness::Observed;
use crate::policy::{self, Asked, Caller, Whereabouts};
use crate::store::paths::Home;
use crate::store::team::{Team, list_teams};

#[derive(Debug, Clone)]
pub(crate) struct Context {
    pub(crate) home: Home,
    printer: Printer,
    team: Option<String>,
    agent: Option<String>,
    /// `--as` was typed, rather than `SWARM_AGENT` inherited.
    agent_typed: bool,
    whereabouts: OnceCell<Whereabouts>,
}

impl Context {
    pub(crate) fn new(
        home: Option<PathBuf>,
        team: Option<String>,
        agent: Option<String>,
        agent_typed: bool,
        printer: Printer,
    ) -> Result<Self> {
        let nonempty = |value: Option<String>| value.filter(|value| !value.is_empty());
        Ok(Self {
            home: Home::resolve(home.filter(|home| !home.as_os_str().is_empty()))?,
            printer,
            team: nonempty(team),
            agent: nonempty(agent),
            agent_typed,
            whereabouts: OnceCell::new(),
        })
    }

    /// Prints a command's one answer, as JSON with `--json`, else as text ("JSON output").
    pub(crate) fn report(&self, report: &impl Report) -> Result<()> {
        self.printer.report(report)
    }

    /// Prints one event of a stream: a JSON line with `--json`, else its text.
    pub(crate) fn event(&self, event: &impl Report) -> Result<()> {
        self.printer.event(event)
    }

    /// What only a person is told: `text`, and nothing with `--json`.
    pub(crate) fn remark(&self, text: impl FnOnce() -> Result<()>) -> Result<()> {
        self.printer.remark(text)
    }

    /// How this command prints, for a text rendering that colours or a stream that reports
    /// from another thread.
    pub(crate) fn printer(&self) -> Printer {
        self.printer
    }

    /// This host's way to a team's members wherever they run: the one every command hands down
    /// and asks instead of asking where a member runs (`cluster/fleet.rs`).
    pub(crate) fn fleet(&self) -> Fleet {
        Fleet::of(&self.home)
    }

    /// The team `--team`/`SWARM_TEAM` names, if any.
    pub(crate) fn team_given(&self) -> Option<&str> {
        self.team.as_deref()
    }

    /// The team named by `--team`/`SWARM_TEAM`, else the only team under home, else the only one
    /// running.
    pub(crate) fn team(&self) -> Result<Team> {
        self.team_or(None)
    }

    /// Like [`Context::team`], but a positional TEAM argument wins.
    pub(crate) fn team_or(&self, positional: Option<&str>) -> Result<Team> {
        let name = self.team_name(positional)?;
        Team::open(&self.home, name.as_str())
    }

    pub(crate) fn team_name(&self, positional: Option<&str>) -> Result<Name> {
        // What a killed `rm` left is finished before any team is looked for (docs/ARCHITECTURE.md,
        // "Removing a team").
        crate::store::removal::finish_interrupted(&self.home);
        if let Some(name) = positional.or(self.team.as_deref()) {
            return team_named(&self.home, name);
        }
        let teams = list_teams(&self.home)?;
        if teams.is_empty() {
            return Err(Error::not_found(format!(
                "there are no teams under {}",
                self.home.teams_dir().display()
            ))
            .with_hint("create one with `swarm init TEAMFILE` or `swarm up TEAMFILE`"));
        }
        let team = self.pick(&teams).map_err(|listing| {
            Error::usage(format!(
                "which team? pass --team or set SWARM_TEAM (teams: {listing})"
            ))
        })?;
        // Named as it is on disk, from the listing just read.
        Name::of_existing("team", team, teams.iter().map(String::as_str))
    }

    /// The only one of `teams`, else the only one of them running; else the listing of them, the
    /// running ones marked, for the refusal.
    fn pick<'a>(&self, teams: &'a [String]) -> std::result::Result<&'a str, String> {
        let running: Vec<&String> = teams
            .iter()
            .filter(|name| teams.len() > 1 && is_running(&self.home, name))
            .collect();
        match (teams, running.as_slice()) {
            ([only], _) | (_, &[only]) => Ok(only),
            _ => Err(teams
                .iter()
                .map(|name| {
                    if running.contains(&name) {
                        format!("{name} (running)")
                    } else {
                        name.clone()
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")),
        }
    }

    /// The team and the member a command's NAME argument means, `None` without one. `NAME@TEAM`
    /// (how swarm shows a member of a team) names both. With NAME alone, the team is the one
    /// `--team` or `SWARM_TEAM` names; else the only team with a member of that name on its
    /// roster, or the only one of those running; else the team [`Context::team`] picks
    /// (docs/ARCHITECTURE.md, "Running and ended").
    pub(crate) fn team_and_member(&self, named: Option<&str>) -> Result<(Team, Option<Name>)> {
        match named {
            None => Ok((self.team()?, None)),
            Some(named) => self
                .member_team(named)
                .map(|(team, name)| (team, Some(name))),
        }
    }

    /// [`Context::team_and_member`] for a NAME the command requires.
    pub(crate) fn member_team(&self, named: &str) -> Result<(Team, Name)> {
        let (raw, team) = match named.split_once('@') {
            Some((name, team)) => (name, Some(team)),
            None => (named, None),
        };
        let team = if team.is_some() || self.team.is_some() {
            self.team_or(team)?
        } else {
            let having: Vec<String> = list_teams(&self.home)?
                .into_iter()
                .filter(|team| {
                    Team::open(&self.home, team)
                        .and_then(|team| team.load())
                        .is_ok_and(|config| config.member(raw).is_some())
                })
                .collect();
            if having.is_empty() {
                // On no roster: a name as swarm takes one, refused before any team is picked.
                Name::parse("member", raw)?;
                self.team()?
            } else {
                let team = self.pick(&having).map_err(|listing| {
                    Error::usage(format!(
                        "which team? {raw} is a member of several (teams: {listing})"
                    ))
                    .with_hint(format!(
                        "name one as {raw}@TEAM, or pass --team or set SWARM_TEAM"
                    ))
                })?;
                Team::open(&self.home, team)?
            }
        };
        // A member another tool recorded is reached by the name it has ("On disk").
        let name = match team.load() {
            Ok(config) => Name::of_existing("member", raw, config.roster().into_iter())?,
            Err(_) => Name::parse("member", raw)?,
        };
        Ok((team, name))
    }

    /// Where this command runs: inside which member's pane of a team under home, if any. A
    /// command whose whereabouts cannot be told is refused, with why (docs/ARCHITECTURE.md,
    /// "Identity").
    pub(crate) fn whereabouts(&self) -> Result<&Whereabouts> {
        let found = self
            .whereabouts
            .get_or_init(|| identity::own_whereabouts(&self.home));
        match found.refusal("where this command runs") {
            Some(refusal) => Err(refusal),
            None => Ok(found),
        }
    }

    /// Who runs this command in the team of `config`: inside a member's pane that member (`--as`
    /// naming another is refused), outside every pane the member `--as`/`SWARM_AGENT` names, else
    /// the person at the keyboard.
    pub(crate) fn caller(&self, config: &TeamConfig) -> Result<Caller> {
        Caller::resolve(config, self.whereabouts()?, self.asked()?.as_ref())
    }

    /// The name `--as`/`SWARM_AGENT` asks to act as, if any.
    pub(crate) fn asked(&self) -> Result<Option<Asked>> {
        Ok(self
            .agent
            .as_deref()
            .map(|name| Name::parse("member", name))
            .transpose()?
            .map(|name| Asked {
                name,
                typed: self.agent_typed,
            }))
    }

    /// The caller, required to have an inbox in the team (for reading one's own): a member on
    /// its roster, or the person at the keyboard, `user`, who has one in every team.
    pub(crate) fn member_of(&self, config: &TeamConfig) -> Result<Caller> {
        let caller = self.caller(config)?;
        if policy::inbox_owner(config, caller.name().as_str()).is_none() {
            return Err(config
                .unknown_member(caller.name().as_str())
                .with_hint(format!("add it with `swarm join {caller}`")));
        }
        self.fleet().inbox_is_here(config, caller.name().as_str())?;
        Ok(caller)
    }
}

/// Whether team `name` has a member that may still be running (`member/liveness.rs`). A team that
/// cannot be read is not running.
/// A team's name as typed: one swarm would give, or exactly the name of a team folder another
/// tool made under `teams/` (`a.b`), which is reached by the name it has ([`Name::of_existing`]).
pub(crate) fn team_named(home: &Home, raw: &str) -> Result<Name> {
    let on_disk = list_teams(home).unwrap_or_default();
    Name::of_existing("team", raw, on_disk.iter().map(String::as_str))
}

fn is_running(home: &Home, name: &str) -> bool {
    Team::open(home, name)
        .and_then(|team| Observed::take(&team, &Fleet::of(home)))
        .is_ok_and(|observed| observed.running())
}
