//! `teams/<team>/config.json`: the team and its members, in Claude Code's field names, plus swarm's
//! own fields. Fields swarm does not know survive every rewrite (DESIGN §2).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::fsutil::{atomic_write, create_dir_all};
use crate::home::{Home, TeamPaths};
use crate::lock::FileLock;
use crate::mailbox::Mailbox;
use crate::names::path_component;
use crate::protocol::TaskNotification;

pub const DEFAULT_LEAD: &str = "team-lead";

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TeamConfig {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub created_at: u64,
    #[serde(default)]
    pub lead_agent_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead_session_id: Option<String>,
    #[serde(default)]
    pub members: Vec<Member>,

    // swarm's own fields.
    /// Launcher settings from the team file, kept for `spawn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch: Option<LaunchSettings>,
    /// Where the team's panes live.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmux: Option<TmuxPlacement>,
    /// `up` is still placing panes: a supervisor whose program already ended keeps its pane until
    /// then, so the team's window cannot vanish under the launcher.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub launching: bool,

    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LaunchSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrent: Option<u32>,
    /// The lead's profile and the flags its teammates inherit.
    #[serde(default)]
    pub profile: String,
    #[serde(default)]
    pub inherit: Vec<String>,
    /// The directory relative `cwd`s in the team file were resolved against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_dir: Option<PathBuf>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TmuxPlacement {
    /// Absolute path of the server socket, so commands run anywhere reach the same server.
    pub socket: PathBuf,
    pub session: String,
    pub window: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Member {
    #[serde(default)]
    pub agent_id: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_mode_required: Option<bool>,
    #[serde(default)]
    pub joined_at: u64,
    #[serde(default)]
    pub tmux_pane_id: String,
    #[serde(default)]
    pub cwd: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default)]
    pub subscriptions: Vec<Value>,
    #[serde(default = "tmux_backend")]
    pub backend_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_active: Option<bool>,

    // swarm's own fields.
    /// The member's program (its process group leader).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<i32>,
    /// The `swarm run` supervisor in the member's pane.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supervisor_pid: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<State>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Why swarm ended the program, when it did: stop, timeout, shutdown, hangup, signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The exact command the member runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argv: Option<Vec<String>>,
    /// Names of the variables set in the member's environment by the launcher.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_keys: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<Protocol>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery: Option<Delivery>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_timeout_s: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<Isolation>,
    /// Position in the start queue when the team's `max_concurrent` is reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_seq: Option<u64>,
    /// The member's peer socket (`uds:` address without the prefix).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_file: Option<String>,
    /// Set by `stop` and `down` before they signal the supervisor: why it should end the program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_requested: Option<String>,
    /// The last completion notice, for `swarm wait`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<TaskNotification>,

    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn tmux_backend() -> String {
    "tmux".to_owned()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Queued,
    Starting,
    Running,
    Idle,
    Exited,
    Failed,
    Killed,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Starting => "starting",
            Self::Running => "running",
            Self::Idle => "idle",
            Self::Exited => "exited",
            Self::Failed => "failed",
            Self::Killed => "killed",
        }
    }

    /// The program has ended (or never will start).
    pub fn is_final(self) -> bool {
        matches!(self, Self::Exited | Self::Failed | Self::Killed)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// The program reads its own inbox and answers requests itself.
    #[default]
    Native,
    /// The supervisor answers shutdown requests on the program's behalf.
    Wrapper,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Delivery {
    /// The program runs `swarm recv`.
    #[default]
    Pull,
    /// The supervisor pastes arriving messages into the pane.
    Paste,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Isolation {
    #[default]
    None,
    Worktree,
}

impl TeamConfig {
    pub fn lead_name(&self) -> &str {
        self.lead_agent_id
            .split_once('@')
            .map_or(DEFAULT_LEAD, |(name, _)| name)
    }

    pub fn member(&self, name: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.name == name).or_else(|| {
            self.members
                .iter()
                .find(|m| path_component(&m.name) == name)
        })
    }

    pub fn member_mut(&mut self, name: &str) -> Option<&mut Member> {
        let index = self
            .members
            .iter()
            .position(|m| m.name == name)
            .or_else(|| {
                self.members
                    .iter()
                    .position(|m| path_component(&m.name) == name)
            })?;
        self.members.get_mut(index)
    }

    /// A member, or a "not found" error that lists the roster.
    pub fn require_member(&self, name: &str) -> Result<&Member> {
        self.member(name).ok_or_else(|| self.unknown_member(name))
    }

    pub fn unknown_member(&self, name: &str) -> Error {
        Error::not_found(format!(
            "{name} is not a member of team {}; members: {}",
            self.name,
            self.roster().join(", ")
        ))
    }

    pub fn roster(&self) -> Vec<&str> {
        self.members.iter().map(|m| m.name.as_str()).collect()
    }
}

impl Member {
    pub fn new(name: &str, team: &str, now_ms: u64) -> Self {
        Self {
            agent_id: format!("{name}@{team}"),
            name: name.to_owned(),
            joined_at: now_ms,
            backend_type: tmux_backend(),
            ..Self::default()
        }
    }

    pub fn protocol(&self) -> Protocol {
        self.protocol.unwrap_or_default()
    }

    pub fn delivery(&self) -> Delivery {
        self.delivery.unwrap_or_default()
    }
}

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
        Err(Error::not_found(format!("no team named {name}; {listing}"))
            .with_hint("create one with `swarm init TEAMFILE` or `swarm up TEAMFILE`"))
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
            create_dir_all(&dir)?;
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

    pub fn load(&self) -> Result<TeamConfig> {
        let path = self.paths.config();
        let bytes = fs::read(&path).map_err(|err| match err.kind() {
            io::ErrorKind::NotFound => {
                Error::not_found(format!("team {} has no config.json", self.name))
            }
            _ => Error::io("read", &path, err),
        })?;
        parse_config(&path, &bytes)
    }

    /// The one read-modify-write of config.json, under both locks, written atomically.
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
        let _lock = FileLock::acquire(&path)?;
        let existing = match fs::read(&path) {
            Ok(bytes) => Some(parse_config(&path, &bytes)?),
            Err(err) if err.kind() == io::ErrorKind::NotFound => None,
            Err(err) => return Err(Error::io("read", &path, err)),
        };
        let before = existing
            .as_ref()
            .map(serde_json::to_value)
            .transpose()
            .map_err(|err| Error::runtime(err.to_string()))?;
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
        }
        after_write(&result)?;
        Ok(result)
    }
}

fn parse_config(path: &Path, bytes: &[u8]) -> Result<TeamConfig> {
    serde_json::from_slice(bytes).map_err(|err| {
        Error::runtime(format!("cannot read team config {}: {err}", path.display()))
            .with_hint("the file is not valid team JSON; fix or restore it by hand")
    })
}

/// Team directory names under home that hold a config.json, sorted.
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
            entry
                .path()
                .join(crate::home::CONFIG_FILE)
                .is_file()
                .then(|| entry.file_name().into_string().ok())?
        })
        .collect();
    teams.sort();
    Ok(teams)
}

#[cfg(test)]
mod tests {
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
}
