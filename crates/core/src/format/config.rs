//! The schema of `teams/<team>/config.json`: the team and its members, in Claude Code's field
//! names, plus swarm's own fields. Fields swarm does not know survive every rewrite. Reading and
//! writing the file under its locks is `store::team`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::base::names::{closest, path_component};
use crate::error::{Error, Result};
use crate::format::paste::PasteFormat;
use crate::format::settings::{Delivery, EnvPolicy, Fence, Isolation, Profile, Protocol, Restart};
use crate::format::structured::TaskNotification;
use crate::format::usage::{Budget, Prices};

pub const DEFAULT_LEAD: &str = "team-lead";

/// The reasons of an ending that interrupted a run rather than ended it: its terminal went away
/// (`hangup`: the tmux server is gone), a signal from outside swarm ended it (`signal`: a
/// shutdown of the machine), or its supervisor was gone with nothing recorded when its host's node
/// started (`lost`: a reboot, a crash, in a team across hosts), or a resume of it failed (`resume
/// failed`: it stays as interrupted as it was). Such a run can be resumed (docs/ARCHITECTURE.md,
/// "Resuming a team").
pub const INTERRUPTIONS: [&str; 4] = ["hangup", "signal", "lost", "resume failed"];

/// The reason recorded for a member a shutdown ended: `down`'s, or a shutdown request it approved.
pub const SHUTDOWN: &str = "shutdown";

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
    /// Always written (empty when there is none): other tools require it.
    #[serde(default, serialize_with = "or_empty")]
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
    /// The team file's `[budget]`, as `swarm budget` changed it since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// The budget thresholds already told, so each is told once: `team:80`, `bob:100`.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub budget_reached: BTreeSet<String>,
    /// The team file's `[prices]`, over the list swarm ships.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub prices: Prices,

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
    pub profile: Profile,
    #[serde(default)]
    pub inherit: Vec<String>,
    /// The directory relative `cwd`s in the team file were resolved against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_dir: Option<PathBuf>,
    /// The team-wide rules for what members' programs inherit, for members `spawn` adds.
    /// Flattened before `extra`, which therefore never holds its fields.
    #[serde(flatten)]
    pub env_policy: EnvPolicy,
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
    /// The pane `up` opened `swarm top` in (`dashboard = true`), which `down` closes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dashboard_pane: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Member {
    #[serde(default)]
    pub agent_id: String,
    pub name: String,
    /// Always written, [`DEFAULT_AGENT_TYPE`] when swarm chose none: other tools require it.
    #[serde(default, serialize_with = "or_default_agent_type")]
    pub agent_type: Option<String>,
    /// Always written, [`DEFAULT_MODEL`] when swarm chose none: other tools require it.
    #[serde(default, serialize_with = "or_default_model")]
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
    /// The host whose node runs the member, in a team across machines (docs/ARCHITECTURE.md,
    /// "Across machines"); absent in a team on one host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
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
    /// Which inherited variables its program keeps: `envClear`, `envKeep`, `envRemove`.
    /// Flattened before `extra`, which therefore never holds its fields.
    #[serde(flatten)]
    pub env_policy: EnvPolicy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<Profile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<Protocol>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery: Option<Delivery>,
    /// How paste delivery types a message: `framed`, `raw` or a template (`format/paste.rs`), as
    /// written; read with [`Member::paste_format`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paste_format: Option<String>,
    /// Its program has `swarm mcp` among its MCP servers (the team file's `mcp`): paste delivery
    /// types a nudge, and the text is read through the `receive` tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_timeout_s: Option<u64>,
    /// When its supervisor starts its program again (`restart`); absent: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart: Option<Restart>,
    /// How many restarts in a row before it is left ended (`restart_max`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_max: Option<u32>,
    /// How many times its supervisor has started its program again in this run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restarts: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<Isolation>,
    /// Its program runs fenced, in this sandbox (`sandbox = true`, docs/ARCHITECTURE.md,
    /// "Fencing members").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<Fence>,
    /// Position in the start queue when the team's `max_concurrent` is reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_seq: Option<u64>,
    /// The member's peer socket (`uds:` address without the prefix).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_file: Option<String>,
    /// The bound of the member's log in bytes, as its supervisor was told it (`log_max`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_max: Option<u64>,
    /// What its screen shows when its program waits for input: a regex (`idle_pattern`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_pattern: Option<String>,
    /// What its screen shows when its program waits on the person: a regex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_you_pattern: Option<String>,
    /// How long, in seconds, it may be quiet while it holds a task before it is `stalled`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_after_s: Option<u64>,
    /// Its program reports its activity through hooks (the claude profile's `--settings`), so
    /// its supervisor does not judge working and idle from its screen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activity_hooks: Option<bool>,
    /// What a resume runs in place of its profile's own way (`resume_command`), as written:
    /// `{session_id}` stands for its `sessionId` (docs/ARCHITECTURE.md, "Resuming a team").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_command: Option<Vec<String>>,
    /// Set by `stop` and `down` before they signal the supervisor: why it should end the program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_requested: Option<String>,
    /// The last completion notice, for `swarm wait`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<TaskNotification>,
    /// The public key the member verifies the lead's messages with, `<ms>.<base64url SPKI>`: a
    /// copy for the lead's side and for readers outside its pane. The member itself reads the one
    /// it was launched with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead_verify_key: Option<String>,
    /// The host whose signing agent holds the private key of `leadVerifyKey`, in a team across
    /// hosts: the host where the member was keyed (`up`'s for the members `up` started, wherever
    /// they run; the spawning host's for `spawn`). Absent: this host's (docs/ARCHITECTURE.md,
    /// "Signed lead messages").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_host: Option<String>,

    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn tmux_backend() -> String {
    "tmux".to_owned()
}

/// Claude Code's agent type for a member that asked for none.
pub(crate) const DEFAULT_AGENT_TYPE: &str = "general-purpose";

/// The model of a member that chose none: its program's own default (Claude Code's alias).
pub const DEFAULT_MODEL: &str = "default";

// Fields of Claude Code's schema that swarm may leave unchosen but other tools cannot do without
// (agent-team-mail refuses a config without them): written with a default rather than left out.

#[expect(
    clippy::ref_option,
    reason = "serde's serialize_with passes the field by reference"
)]
fn or_empty<S: serde::Serializer>(value: &Option<String>, out: S) -> Result<S::Ok, S::Error> {
    out.serialize_str(value.as_deref().unwrap_or_default())
}

#[expect(
    clippy::ref_option,
    reason = "serde's serialize_with passes the field by reference"
)]
fn or_default_agent_type<S: serde::Serializer>(
    value: &Option<String>,
    out: S,
) -> Result<S::Ok, S::Error> {
    out.serialize_str(value.as_deref().unwrap_or(DEFAULT_AGENT_TYPE))
}

#[expect(
    clippy::ref_option,
    reason = "serde's serialize_with passes the field by reference"
)]
fn or_default_model<S: serde::Serializer>(
    value: &Option<String>,
    out: S,
) -> Result<S::Ok, S::Error> {
    out.serialize_str(value.as_deref().unwrap_or(DEFAULT_MODEL))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Queued,
    Starting,
    Running,
    Idle,
    /// Its program ended and its restart policy starts it again after a pause.
    Restarting,
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
            Self::Restarting => "restarting",
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

impl TeamConfig {
    /// The members whose record names `host` as the one that runs them, in roster order.
    pub fn members_on(self, host: &str) -> impl Iterator<Item = Member> {
        self.members
            .into_iter()
            .filter(move |member| member.host.as_deref() == Some(host))
    }

    /// Whether the team spans hosts: its config.json names a host for some member
    /// (docs/ARCHITECTURE.md, "Across machines").
    pub fn spans_hosts(&self) -> bool {
        self.members.iter().any(|member| member.host.is_some())
    }

    /// When anything last began or ended in the team, in epoch milliseconds: the latest of its
    /// creation and each member's joining, start and end. For a team that has ended, when it
    /// ended (`swarm prune --older-than`).
    pub fn last_activity(&self) -> u64 {
        self.members
            .iter()
            .flat_map(|m| [Some(m.joined_at), m.started_at, m.ended_at])
            .flatten()
            .chain([self.created_at])
            .max()
            .unwrap_or_default()
    }

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
        let index = self.member_index(name)?;
        self.members.get_mut(index)
    }

    fn member_index(&self, name: &str) -> Option<usize> {
        self.members
            .iter()
            .position(|m| m.name == name)
            .or_else(|| {
                self.members
                    .iter()
                    .position(|m| path_component(&m.name) == name)
            })
    }

    /// Where in `members` member `name` is, for one that was a member when its caller began (its
    /// supervisor, its ending) and may have been removed since: then "NAME is no longer a member
    /// of team T", not found.
    pub fn remaining_member_index(&self, name: &str) -> Result<usize> {
        self.member_index(name).ok_or_else(|| {
            Error::not_found(format!(
                "{name} is no longer a member of team {}",
                self.name
            ))
        })
    }

    /// [`Self::remaining_member_index`]'s member, to change.
    pub fn remaining_member_mut(&mut self, name: &str) -> Result<&mut Member> {
        let index = self.remaining_member_index(name)?;
        Ok(&mut self.members[index])
    }

    /// A member, or a "not found" error that lists the roster: the one way every command checks
    /// a member's name, so a misspelt one is exit 3 with the same words everywhere.
    pub fn require_member(&self, name: &str) -> Result<&Member> {
        self.member(name).ok_or_else(|| self.unknown_member(name))
    }

    /// "bobb is not a member of team t; members: team-lead, bob", with a hint naming the member
    /// it most looks like, if one does.
    pub fn unknown_member(&self, name: &str) -> Error {
        let err = Error::not_found(format!(
            "{name} is not a member of team {}; members: {}",
            self.name,
            self.roster().join(", ")
        ));
        match closest(name, self.members.iter().map(|m| m.name.as_str())) {
            Some(close) => err.with_hint(format!("did you mean {close}?")),
            None => err,
        }
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

    /// Whether its recorded ending interrupted its run ([`INTERRUPTIONS`]).
    /// Whether its run ended in a shutdown ([`SHUTDOWN`]): a team `down` took down resumes it.
    pub fn ended_in_shutdown(&self) -> bool {
        self.state.is_some_and(State::is_final) && self.reason.as_deref() == Some(SHUTDOWN)
    }

    pub fn was_interrupted(&self) -> bool {
        self.state == Some(State::Killed)
            && self
                .reason
                .as_deref()
                .is_some_and(|reason| INTERRUPTIONS.contains(&reason))
    }

    pub fn protocol(&self) -> Protocol {
        self.protocol.unwrap_or_default()
    }

    /// The agent type config.json records: [`DEFAULT_AGENT_TYPE`] when none was chosen.
    pub fn agent_type(&self) -> &str {
        self.agent_type.as_deref().unwrap_or(DEFAULT_AGENT_TYPE)
    }

    /// The model config.json records: [`DEFAULT_MODEL`] when none was chosen.
    pub fn model(&self) -> &str {
        self.model.as_deref().unwrap_or(DEFAULT_MODEL)
    }

    pub fn delivery(&self) -> Delivery {
        self.delivery.unwrap_or_default()
    }

    /// Whether its program has `swarm mcp` among its MCP servers.
    pub fn mcp(&self) -> bool {
        self.mcp == Some(true)
    }

    /// How paste delivery types a message for this member: `framed` (an MCP member: the nudge,
    /// [`crate::format::paste::NUDGE`]) unless config.json says otherwise; what it says is
    /// checked again, as the file may have been edited.
    pub fn paste_format(&self) -> Result<PasteFormat> {
        let default = if self.mcp() {
            crate::format::paste::NUDGE
        } else {
            "framed"
        };
        PasteFormat::parse(self.paste_format.as_deref().unwrap_or(default))
            .map_err(|why| Error::usage(format!("pasteFormat of {}: {why}", self.name)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_policy_round_trips_beside_fields_swarm_does_not_know() {
        let text = r#"{"name":"bob","envClear":true,"envKeep":["PATH"],"envRemove":["API_KEY"],"fromAnotherTool":1}"#;
        let member: Member = serde_json::from_str(text).unwrap();
        assert!(member.env_policy.clear);
        assert!(member.env_policy.keep.contains("PATH"));
        assert!(member.env_policy.remove.contains("API_KEY"));
        assert_eq!(
            member.extra.keys().collect::<Vec<_>>(),
            ["fromAnotherTool"],
            "the policy's fields are not kept twice"
        );
        let written = serde_json::to_value(&member).unwrap();
        assert_eq!(written["envRemove"], serde_json::json!(["API_KEY"]));
        assert_eq!(written["fromAnotherTool"], 1);
        let plain = serde_json::to_value(Member::new("a", "t", 0)).unwrap();
        assert!(plain.get("envClear").is_none() && plain.get("envKeep").is_none());
    }
}
