//! A team on disk: its directory and its config.json, read and rewritten under the locks. The
//! schema itself is `format::config`; fields swarm does not know survive every rewrite.

use std::fs;
use std::io;
use std::path::Path;
use std::thread;
use std::time::Duration;

use crate::base::clock;
use crate::base::names::closest;
use crate::error::{Error, Result};
use crate::format::config::{State, TeamConfig};
use crate::format::event::What;
use crate::store::durable::{atomic_write, private_dir, read_if_exists, read_to_rewrite};
use crate::store::events;
use crate::store::lock::{self, FileLock};
use crate::store::mailbox::Mailbox;
use crate::store::paths::{Home, TeamPaths};

/// How long a read that met Claude Code's rewrite of config.json waits before it reads again.
const TORN_READ_PAUSE: Duration = Duration::from_millis(5);

/// A team on disk: its paths and its locked config.
#[derive(Debug, Clone)]
pub struct Team {
    name: String,
    paths: TeamPaths,
    home: Home,
}

impl Team {
    /// An existing team, or "not found" naming the teams that do exist.
    pub fn open(home: &Home, name: &str) -> Result<Self> {
        let paths = home.team(name);
        if paths.config().is_file() {
            return Ok(Self {
                name: name.to_owned(),
                paths,
                home: home.clone(),
            });
        }
        let known = list_teams(home)?;
        let listing = if known.is_empty() {
            format!("there are no teams under {}", home.teams_dir().display())
        } else {
            format!("teams: {}", known.join(", "))
        };
        let hint = match closest(name, known.iter().map(String::as_str)) {
            Some(close) => format!("did you mean {close}?"),
            None => "create one with `swarm init TEAMFILE` or `swarm up TEAMFILE`".to_owned(),
        };
        Err(Error::not_found(format!("no team named {name}; {listing}")).with_hint(hint))
    }

    /// Writes a new team. Refuses to overwrite an existing one unless `replace` is set, in which
    /// case inboxes, history and logs are kept and only the config is rewritten.
    pub fn create(home: &Home, config: &TeamConfig, replace: bool) -> Result<Self> {
        let paths = home.team(&config.name);
        for dir in [
            paths.dir().to_path_buf(),
            paths.inboxes(),
            paths.history(),
            paths.logs(),
        ] {
            private_dir(paths.private_root(), &dir)?;
        }
        let team = Self {
            name: config.name.clone(),
            paths,
            home: home.clone(),
        };
        team.update_raw(|()| Ok(()), |existing| {
            if existing.is_some() && !replace {
                return Err(Error::usage(format!("team {} already exists", config.name)).with_hint(
                    "pick another name, or remove it with `swarm down` and delete its directory",
                ));
            }
            Ok(((), Some(config.clone())))
        })?;
        for member in &config.members {
            team.mailbox(&member.name).ensure()?;
        }
        Ok(team)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn paths(&self) -> &TeamPaths {
        &self.paths
    }

    pub fn home(&self) -> &Home {
        &self.home
    }

    pub fn mailbox(&self, member: &str) -> Mailbox {
        Mailbox::new(&self.paths, member)
    }

    /// config.json as it is, read without a lock. swarm replaces it atomically, but Claude Code
    /// rewrites it in place while it holds its lock directory (it writes, then truncates), so a
    /// read that meets such a rewrite sees a torn file: a read that does not parse is taken again
    /// while that directory is there, up to the lock wait bound (docs/ARCHITECTURE.md,
    /// "config.json").
    pub fn load(&self) -> Result<TeamConfig> {
        let path = self.paths.config();
        let claude_lock = self.paths.config_lock().dir;
        let deadline = clock::deadline(lock::wait_bound());
        loop {
            let locked_before = claude_lock.exists();
            let bytes = read_if_exists(&path)?.ok_or_else(|| {
                Error::not_found(format!("team {} has no config.json", self.name))
            })?;
            match parse_config(&path, &bytes) {
                Err(_) if (locked_before || claude_lock.exists()) && !clock::passed(deadline) => {
                    thread::sleep(TORN_READ_PAUSE);
                }
                parsed => return parsed,
            }
        }
    }

    /// The one read-modify-write of config.json, under all three locks, written atomically.
    pub fn update<R>(&self, change: impl FnOnce(&mut TeamConfig) -> Result<R>) -> Result<R> {
        self.update_then(change, |_| Ok(()))
    }

    /// Like [`Team::update`], then runs `after_write` once the new config is on disk, still under
    /// the lock, so what it does is never seen before the change it follows.
    pub fn update_then<R>(
        &self,
        change: impl FnOnce(&mut TeamConfig) -> Result<R>,
        after_write: impl FnOnce(&R) -> Result<()>,
    ) -> Result<R> {
        let path = self.paths.config();
        self.update_raw(after_write, |existing| {
            let mut config = existing.ok_or_else(|| {
                Error::not_found(format!(
                    "team {} has no config.json at {}",
                    self.name,
                    path.display()
                ))
            })?;
            let result = change(&mut config)?;
            Ok((result, Some(config)))
        })
    }

    fn update_raw<R>(
        &self,
        after_write: impl FnOnce(&R) -> Result<()>,
        change: impl FnOnce(Option<TeamConfig>) -> Result<(R, Option<TeamConfig>)>,
    ) -> Result<R> {
        let path = self.paths.config();
        private_dir(self.paths.private_root(), self.paths.dir())?;
        let _lock = FileLock::acquire(&self.paths.config_lock())?;
        let existing = read_to_rewrite(&path)?
            .map(|bytes| parse_config(&path, &bytes))
            .transpose()?;
        let before = existing
            .as_ref()
            .map(serde_json::to_value)
            .transpose()
            .map_err(|err| Error::runtime(err.to_string()))?;
        let states_before = existing.as_ref().map(states).unwrap_or_default();
        let (result, replacement) = change(existing)?;
        // An unchanged config is not rewritten: every rewrite wakes everyone watching the file.
        let unchanged = |config: &TeamConfig| {
            before
                .as_ref()
                .is_some_and(|before| serde_json::to_value(config).ok().as_ref() == Some(before))
        };
        if let Some(config) = replacement.filter(|config| !unchanged(config)) {
            atomic_write(&path, |out| {
                serde_json::to_writer_pretty(&mut *out, &config)?;
                Ok(())
            })?;
            // Under the lock, so the stream has the changes in the order they were made.
            self.tell_changes(&states_before, &states(&config));
        }
        after_write(&result)?;
        Ok(result)
    }
}

/// Each member's recorded process state, in roster order, and whether it runs a program.
fn states(config: &TeamConfig) -> Vec<(String, Option<State>, bool)> {
    config
        .members
        .iter()
        .map(|member| (member.name.clone(), member.state, member.argv.is_some()))
        .collect()
}

/// Whether every member that runs a program has ended (and there is one): a member not yet
/// started has no state, and has not ended.
fn all_ended(states: &[(String, Option<State>, bool)]) -> bool {
    let programs: Vec<Option<State>> = states
        .iter()
        .filter(|(_, _, runs)| *runs)
        .map(|(_, state, _)| *state)
        .collect();
    !programs.is_empty()
        && programs
            .iter()
            .all(|state| state.is_some_and(State::is_final))
}

impl Team {
    /// Appends to the event stream one line per member whose state changed from `before` to
    /// `after`, and the team's end when this change ended it.
    fn tell_changes(
        &self,
        before: &[(String, Option<State>, bool)],
        after: &[(String, Option<State>, bool)],
    ) {
        for (name, state, _) in after {
            let Some(state) = *state else { continue };
            let from = before
                .iter()
                .find(|(was, _, _)| was == name)
                .and_then(|(_, from, _)| *from);
            if from != Some(state) {
                events::tell(&self.paths, Some(name), What::Process { state, from });
            }
        }
        if all_ended(after) && !all_ended(before) {
            events::tell(&self.paths, None, What::TeamDone);
        }
    }
}

fn parse_config(path: &Path, bytes: &[u8]) -> Result<TeamConfig> {
    serde_json::from_slice(bytes).map_err(|err| {
        Error::runtime(format!("cannot read team config {}: {err}", path.display()))
            .with_hint("the file is not valid team JSON; fix or restore it by hand")
    })
}

/// Team directory names under home that hold a config.json, sorted. A dot name is never a team
/// (a team being removed is moved to one).
pub fn list_teams(home: &Home) -> Result<Vec<String>> {
    let dir = home.teams_dir();
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(Error::io("list", &dir, err)),
    };
    let mut teams: Vec<String> = entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let name = entry.file_name().into_string().ok()?;
            (!name.starts_with('.') && home.team(&name).config().is_file()).then_some(name)
        })
        .collect();
    teams.sort();
    Ok(teams)
}

/// A team on disk in a temporary home, for the unit tests of the layers above.
#[cfg(any(test, feature = "fixture"))]
pub mod fixture {
    use super::{Home, Team, TeamConfig};
    use crate::format::config::Member;

    /// Team `t`, led by `team-lead`, with `teammates`; nothing launched. The directory holds it.
    pub fn team(teammates: &[&str]) -> (tempfile::TempDir, Team) {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path().to_path_buf());
        let mut members = vec![Member::new("team-lead", "t", 1)];
        // Teammates run a program; a member without one would be the person at the keyboard.
        members.extend(teammates.iter().map(|name| {
            let mut member = Member::new(name, "t", 1);
            member.argv = Some(vec!["true".into()]);
            member
        }));
        let config = TeamConfig {
            name: "t".into(),
            lead_agent_id: "team-lead@t".into(),
            members,
            ..TeamConfig::default()
        };
        let team = Team::create(&home, &config, false).unwrap();
        (dir, team)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    const CLAUDE_CONFIG: &str = r#"{
  "name": "demo",
  "description": "x",
  "createdAt": 1,
  "leadAgentId": "team-lead@demo",
  "leadSessionId": "s",
  "futureTeamField": {"a": 1},
  "members": [
    {"agentId": "team-lead@demo", "name": "team-lead", "agentType": "team-lead", "joinedAt": 1,
     "tmuxPaneId": "", "cwd": "/", "subscriptions": [], "backendType": "tmux", "futureMemberField": true}
  ]
}"#;

    #[test]
    fn unknown_fields_survive_a_rewrite() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path().to_path_buf());
        let paths = home.team("demo");
        fs::create_dir_all(paths.dir()).unwrap();
        fs::write(paths.config(), CLAUDE_CONFIG).unwrap();
        let team = Team::open(&home, "demo").unwrap();
        team.update(|config| {
            config.members[0].state = Some(State::Running);
            Ok(())
        })
        .unwrap();
        let written: Value = serde_json::from_slice(&fs::read(paths.config()).unwrap()).unwrap();
        assert_eq!(written["futureTeamField"], serde_json::json!({"a": 1}));
        assert_eq!(written["members"][0]["futureMemberField"], true);
        assert_eq!(written["members"][0]["state"], "running");
        assert_eq!(team.load().unwrap().lead_name(), "team-lead");
    }

    #[test]
    fn a_read_that_meets_claude_codes_rewrite_in_place_is_taken_again() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path().to_path_buf());
        let paths = home.team("demo");
        fs::create_dir_all(paths.dir()).unwrap();
        // Claude Code rewrites config.json in place, holding its lock directory: it writes the
        // new text over the old, then truncates. Between the two the file is the new text and
        // the old one's tail, as Claude Code 2.1.332 left it when it turned `isActive` to true.
        let lock = paths.config_lock().dir;
        fs::create_dir(&lock).unwrap();
        fs::write(paths.config(), format!("{CLAUDE_CONFIG}}}")).unwrap();
        let team = Team::open(&home, "demo").unwrap();
        let writer = {
            let config = paths.config();
            let lock = lock.clone();
            thread::spawn(move || {
                thread::sleep(Duration::from_millis(200));
                fs::write(config, CLAUDE_CONFIG).unwrap();
                fs::remove_dir(lock).unwrap();
            })
        };
        assert_eq!(team.load().unwrap().lead_name(), "team-lead");
        writer.join().unwrap();

        // With no writer holding the lock, a file that does not parse is corrupt.
        fs::write(paths.config(), format!("{CLAUDE_CONFIG}}}")).unwrap();
        let err = team.load().unwrap_err();
        assert!(
            err.message().contains("trailing characters"),
            "{}",
            err.message()
        );
    }

    #[test]
    fn open_lists_known_teams_when_missing() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path().to_path_buf());
        let config = TeamConfig {
            name: "alpha".into(),
            ..TeamConfig::default()
        };
        Team::create(&home, &config, false).unwrap();
        let err = Team::open(&home, "beta").unwrap_err();
        assert_eq!(err.kind(), crate::error::ErrorKind::NotFound);
        assert!(err.message().contains("teams: alpha"), "{}", err.message());
        let again = Team::create(&home, &config, false).unwrap_err();
        assert_eq!(again.kind(), crate::error::ErrorKind::Usage);
    }

    #[test]
    fn each_change_of_a_members_state_is_one_event_and_the_teams_end_one_more() {
        use crate::format::event::{Event, What};
        use crate::store::events::{Offset, read_from};

        let (_dir, team) = fixture::team(&["bob", "carol"]);
        let set = |name: &str, state: State| {
            team.update(|config| {
                for member in &mut config.members {
                    if member.name == name {
                        member.state = Some(state);
                    }
                }
                Ok(())
            })
            .unwrap();
        };
        set("bob", State::Running);
        set("bob", State::Running);
        set("carol", State::Running);
        set("bob", State::Exited);
        set("carol", State::Failed);
        set("carol", State::Failed);
        let (events, _) = read_from(team.paths(), Offset::default()).unwrap();
        let seen: Vec<(Option<String>, What)> = events
            .into_iter()
            .map(|Event { member, what, .. }| (member, what))
            .collect();
        let process =
            |name: &str, state, from| (Some(name.to_owned()), What::Process { state, from });
        assert_eq!(
            seen,
            [
                process("bob", State::Running, None),
                process("carol", State::Running, None),
                process("bob", State::Exited, Some(State::Running)),
                process("carol", State::Failed, Some(State::Running)),
                (None, What::TeamDone),
            ]
        );
    }
}
