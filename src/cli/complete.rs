//! Dynamic completion of names (docs/ARCHITECTURE.md, "Getting around"). With
//! `source <(COMPLETE=bash swarm)` the shell asks swarm itself for the candidates of each word, and
//! the functions here, hooked to arguments with `ArgValueCandidates`, name the teams, members,
//! request ids and peers under the home the command line being completed points at.
//!
//! They run on every Tab, so they read a few files and nothing more: no lock, no tmux, no `/proc`
//! scan, and never a write. Whatever cannot be read gives no candidates, silently.

use std::ffi::OsString;
use std::path::PathBuf;

use clap_complete::engine::CompletionCandidate;

use crate::format::config::TeamConfig;
use crate::format::structured::Structured;
use crate::peer;
use crate::policy::PERSON;
use crate::store::paths::Home;
use crate::store::team::{Team, list_teams};

/// Every team under the home.
pub(crate) fn teams() -> Vec<CompletionCandidate> {
    let Some(home) = Line::current().home() else {
        return Vec::new();
    };
    list_teams(&home)
        .unwrap_or_default()
        .into_iter()
        .map(|name| {
            let about = Team::open(&home, &name)
                .and_then(|team| team.load())
                .ok()
                .and_then(|config| config.description.filter(|d| !d.is_empty()));
            candidate(name, about)
        })
        .collect()
}

/// The members of the team the command line acts on. With no team named and none picked, every
/// team's, as a command that names a member finds its team (`Context::member_team`): a name that
/// several teams have as NAME@TEAM.
pub(crate) fn members() -> Vec<CompletionCandidate> {
    let line = Line::current();
    if let Some(config) = line.config(line.team.as_deref()) {
        return member_candidates(&config);
    }
    let Some(home) = line.home().filter(|_| line.team.is_none()) else {
        return Vec::new();
    };
    let configs: Vec<TeamConfig> = list_teams(&home)
        .unwrap_or_default()
        .iter()
        .filter_map(|name| Team::open(&home, name).and_then(|team| team.load()).ok())
        .collect();
    let teams_with = |name: &str| {
        configs
            .iter()
            .filter(|config| config.member(name).is_some())
            .count()
    };
    configs
        .iter()
        .flat_map(|config| {
            member_candidates(config).into_iter().map(|candidate| {
                let name = candidate.get_value().to_string_lossy().into_owned();
                if teams_with(&name) > 1 {
                    CompletionCandidate::new(format!("{name}@{}", config.name))
                        .help(candidate.get_help().cloned())
                } else {
                    candidate
                }
            })
        })
        .collect()
}

/// For `swarm attach NAME`: the members of the team the command line acts on, then every team.
pub(crate) fn members_and_teams() -> Vec<CompletionCandidate> {
    let mut all = members();
    all.extend(teams());
    all
}

/// For `swarm attach TEAM NAME`: the members of the team named just before.
pub(crate) fn members_of_team_arg() -> Vec<CompletionCandidate> {
    let line = Line::current();
    // positionals[0] is the command itself.
    let team = line.positionals.get(1).or(line.team.as_ref());
    line.config(team.map(String::as_str))
        .map(|config| member_candidates(&config))
        .unwrap_or_default()
}

/// For `swarm send TO`: the members, `*` for everyone, `user`, each live peer by its label or its
/// member's `name@team`, and each live Claude Code session of the person's by its socket. Never
/// nothing, which would leave the shell to offer file names.
pub(crate) fn recipients() -> Vec<CompletionCandidate> {
    let line = Line::current();
    let mut all = members();
    all.push(candidate("*".to_owned(), Some("everyone".to_owned())));
    all.push(candidate(
        PERSON.to_owned(),
        Some("the person at the keyboard".to_owned()),
    ));
    let Some(home) = line.home() else {
        return all;
    };
    for peer in peer::listed_peers(&home) {
        let mut names = Vec::new();
        if let Some(label) = &peer.label {
            names.push(label.clone());
        }
        if let (Some(agent), Some(team)) = (&peer.agent, &peer.team) {
            names.push(format!("{agent}@{team}"));
        }
        for name in names {
            let about = format!("peer {} in {}", peer.pid, peer.cwd.display());
            all.push(candidate(format!("uds:{name}"), Some(about)));
        }
    }
    // The person's Claude Code sessions, by their sockets.
    for session in peer::live_sessions() {
        let mut about = format!("Claude Code session {}", session.pid);
        if let Some(name) = &session.name {
            about = format!("{about} ({name})");
        }
        if let Some(cwd) = &session.cwd {
            about = format!("{about} in {}", cwd.display());
        }
        all.push(candidate(session.address(), Some(about)));
    }
    all
}

/// For `shutdown approve|reject`: the shutdown requests unread in the caller's inbox, or in
/// everyone's when the command line does not say who the caller is.
pub(crate) fn shutdown_requests() -> Vec<CompletionCandidate> {
    let line = Line::current();
    let Some(config) = line.config(line.team.as_deref()) else {
        return Vec::new();
    };
    let holders: Vec<&str> = match line.agent.as_deref() {
        Some(agent) if config.member(agent).is_some() => vec![agent],
        _ => config.roster(),
    };
    requests(&line, &config, &holders, |message| match message {
        Structured::ShutdownRequest(request) => Some((
            request.request_id,
            request
                .reason
                .unwrap_or_else(|| format!("from {}", request.from)),
        )),
        _ => None,
    })
}

/// For `plan approve|reject`: the plans waiting, unread, in the lead's inbox.
pub(crate) fn plan_requests() -> Vec<CompletionCandidate> {
    let line = Line::current();
    let Some(config) = line.config(line.team.as_deref()) else {
        return Vec::new();
    };
    let lead = config.lead_name().to_owned();
    requests(&line, &config, &[lead.as_str()], |message| match message {
        Structured::PlanApprovalRequest(request) => {
            Some((request.request_id, format!("plan from {}", request.from)))
        }
        _ => None,
    })
}

fn requests(
    line: &Line,
    config: &TeamConfig,
    holders: &[&str],
    pick: impl Fn(Structured) -> Option<(String, String)>,
) -> Vec<CompletionCandidate> {
    let Some(team) = line
        .home()
        .and_then(|home| Team::open(&home, &config.name).ok())
    else {
        return Vec::new();
    };
    holders
        .iter()
        .flat_map(|holder| team.mailbox(holder).peek_as_is())
        .filter_map(|message| message.structured().and_then(&pick))
        .map(|(id, about)| candidate(id, Some(about)))
        .collect()
}

fn member_candidates(config: &TeamConfig) -> Vec<CompletionCandidate> {
    config
        .members
        .iter()
        .map(|member| {
            candidate(
                member.name.clone(),
                member.state.map(|state| state.as_str().to_owned()),
            )
        })
        .collect()
}

fn candidate(value: String, about: Option<String>) -> CompletionCandidate {
    CompletionCandidate::new(value).help(about.map(Into::into))
}

/// What the command line being completed says so far: the words before the cursor, with
/// `--home`, `--team` and `--as` (else `SWARM_HOME`, `SWARM_TEAM` and `SWARM_AGENT`), and the
/// other words that are not options: the command, then its arguments.
#[derive(Debug, Default, PartialEq, Eq)]
struct Line {
    home: Option<String>,
    team: Option<String>,
    agent: Option<String>,
    positionals: Vec<String>,
}

impl Line {
    /// The line of this completion request: the shell runs `swarm -- swarm WORD…` with the index
    /// of the word being completed in `_CLAP_COMPLETE_INDEX` (fish completes the last word).
    fn current() -> Self {
        let args: Vec<OsString> = std::env::args_os().collect();
        let Some(start) = args.iter().position(|arg| arg == "--") else {
            return Self::default();
        };
        // After `--`: the program's name, then its words.
        let words: Vec<String> = args[start + 1..]
            .iter()
            .map(|word| word.to_string_lossy().into_owned())
            .collect();
        let cursor = std::env::var("_CLAP_COMPLETE_INDEX")
            .ok()
            .and_then(|index| index.parse::<usize>().ok())
            .unwrap_or(words.len().saturating_sub(1))
            .min(words.len());
        let mut line = Self::parse(words.get(1..cursor).unwrap_or_default());
        let env = |key: &str| std::env::var(key).ok().filter(|value| !value.is_empty());
        line.home = line.home.or_else(|| env("SWARM_HOME"));
        line.team = line.team.or_else(|| env("SWARM_TEAM"));
        line.agent = line.agent.or_else(|| env("SWARM_AGENT"));
        line
    }

    fn parse(words: &[String]) -> Self {
        let mut line = Self::default();
        let mut words = words.iter();
        while let Some(word) = words.next() {
            if word == "--" {
                // What follows is a program's own command line (`spawn NAME -- CMD`).
                break;
            }
            let (flag, inline) = match word.split_once('=') {
                Some((flag, value)) if flag.starts_with("--") => (flag, Some(value.to_owned())),
                _ => (word.as_str(), None),
            };
            let slot = match flag {
                "--home" => &mut line.home,
                "--team" => &mut line.team,
                "--as" => &mut line.agent,
                _ => {
                    if !word.starts_with('-') {
                        line.positionals.push(word.clone());
                    }
                    continue;
                }
            };
            *slot = inline.or_else(|| words.next().cloned());
        }
        line
    }

    /// The home, as the command would resolve it; `~/` as the shell would expand it.
    fn home(&self) -> Option<Home> {
        let explicit = self.home.as_deref().map(|raw| {
            match (raw.strip_prefix('~'), std::env::var_os("HOME")) {
                (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
                    PathBuf::from(format!("{}{rest}", home.to_string_lossy()))
                }
                _ => PathBuf::from(raw),
            }
        });
        Home::resolve(explicit.filter(|path| !path.as_os_str().is_empty())).ok()
    }

    /// The config of team `named`, else of the only team under the home, else of the only one
    /// whose config.json records a member that has not ended. Cheaper than the command's own
    /// choice (no tmux, no `/proc`), and the same wherever it matters: one team, or one running.
    fn config(&self, named: Option<&str>) -> Option<TeamConfig> {
        let home = self.home()?;
        let load = |name: &str| Team::open(&home, name).and_then(|team| team.load()).ok();
        if let Some(name) = named {
            return load(name);
        }
        let teams = list_teams(&home).ok()?;
        if let [only] = teams.as_slice() {
            return load(only);
        }
        let mut live = teams.iter().filter_map(|name| load(name)).filter(|config| {
            config
                .members
                .iter()
                .any(|member| member.state.is_some_and(|state| !state.is_final()))
        });
        match (live.next(), live.next()) {
            (Some(only), None) => Some(only),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(words: &[&str]) -> Line {
        Line::parse(&words.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn options_that_choose_the_home_team_and_caller_are_read_from_the_line() {
        assert_eq!(
            parse(&[
                "--home", "/h", "attach", "--team=t", "--json", "x", "--as", "bob"
            ]),
            Line {
                home: Some("/h".into()),
                team: Some("t".into()),
                agent: Some("bob".into()),
                positionals: vec!["attach".into(), "x".into()],
            }
        );
        // A program's own words are not swarm's.
        assert_eq!(
            parse(&["spawn", "x", "--", "claude", "--team", "no"]).team,
            None
        );
    }

    #[test]
    fn a_home_that_cannot_be_read_has_no_candidates() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not-a-dir");
        std::fs::write(&file, "x").unwrap();
        let line = Line {
            home: Some(file.display().to_string()),
            ..Line::default()
        };
        assert!(line.config(None).is_none());
        assert!(line.config(Some("t")).is_none());
    }
}
