//! The TOML team file (docs/ARCHITECTURE.md, "Launching"). Unknown keys are refused with the line
//! they are on, and every value is checked before anything is created.
//!
//! [`KEYS`] is the one statement of what a team file may hold: swarm-team(5) is written from it,
//! `swarm spawn` takes a flag for each member key it names, and a test holds the parser's fields
//! to it. A member's keys are checked by [`MemberSpec::check`], whether they come from a
//! `[[member]]` table or from `spawn`'s flags.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::base::names::{Name, closest};
use crate::error::{Error, Result};
use crate::format::config::DEFAULT_LEAD;
use crate::format::notify::{Notify, NotifyKeys};
pub use crate::format::paste::{PasteFormat, delivery_with};
use crate::format::permission_rule::{RuleTexts, Rules};
pub use crate::format::settings::{Color, EnvPolicy, Profile};
pub use crate::format::settings::{Delivery, Fence, Isolation, Protocol, Restart, SandboxNetwork};
use crate::format::usage::{Budget, Prices};
use crate::launch::argv::{default_inherit, detect_profile};
use crate::launch::environment::check_policy;
use crate::launch::layout::Layout;
use crate::policy::PERSON;
use crate::store::paths::{UserConfig, absolute};
use crate::store::relaunch::{Launches, MemberLaunch};

#[derive(Debug, Clone)]
pub struct TeamFile {
    pub(crate) path: PathBuf,
    pub name: Name,
    pub(crate) description: Option<String>,
    pub layout: Option<Layout>,
    pub(crate) max_concurrent: Option<u32>,
    /// `dashboard = true`: `up` opens `swarm top` in the team's window.
    pub dashboard: bool,
    /// The team-wide `log_max`, as written; members without their own use it.
    pub(crate) log_max: Option<u64>,
    /// The team-wide `env_clear`, `env_keep` and `env_remove`, as written.
    pub(crate) env_policy: EnvPolicy,
    /// The team-wide `idle_pattern`, `needs_you_pattern` and `stall_after`, kept for `spawn`.
    pub(crate) watching: Watching,
    /// The team-wide `mcp`, kept for `spawn`.
    pub(crate) mcp: bool,
    pub lead: LeadSpec,
    pub members: Vec<MemberSpec>,
    /// The `[[task]]` entries, checked, each after every task it is blocked by.
    pub tasks: Vec<TaskSpec>,
    /// The `[cluster]` table: the NATS server of a team across machines.
    pub cluster: ClusterSpec,
    /// The `[notify]` table as written: [`TeamFile::notify`] puts it over the person's own.
    pub(crate) notify_keys: NotifyKeys,
    /// The `[budget]` table, its members checked.
    pub(crate) budget: Option<Budget>,
    /// The `[prices]` table: per model, over the list swarm ships.
    pub(crate) prices: Prices,
}

/// The `[cluster]` table, a relative `creds` made absolute. A password or token is never in a
/// file: the environment gives it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterSpec {
    pub nats: Option<String>,
    pub creds: Option<PathBuf>,
}

/// One `[[task]]` entry: a task `up` and `init` put on the team's board.
#[derive(Debug, Clone)]
pub struct TaskSpec {
    /// The name the file's other tasks use for it in `blocked_by`.
    pub key: String,
    pub subject: String,
    pub description: String,
    /// The keys of the tasks it waits for, each earlier in [`TeamFile::tasks`].
    pub blocked_by: Vec<String>,
    pub owner: Option<String>,
}

#[derive(Debug, Clone)]
pub struct LeadSpec {
    pub name: Name,
    /// Absent when the lead is whoever runs `swarm` from their own terminal or script.
    pub(crate) command: Option<Vec<String>>,
    pub(crate) profile: Profile,
    pub(crate) inherit: Vec<String>,
    pub(crate) env: BTreeMap<String, String>,
    /// The team's rules for what its program inherits, with its own over them.
    pub(crate) env_policy: EnvPolicy,
    pub cwd: PathBuf,
    /// The bound of its log, in bytes.
    pub(crate) log_max: u64,
    /// Its program gets `swarm mcp` as an MCP server, acting as the lead (`mcp = true`, its own
    /// or the team's).
    pub(crate) mcp: bool,
}

/// A member's settings, every one checked and every default applied: what the team file's
/// `[[member]]` and `swarm spawn`'s flags both become.
#[derive(Debug, Clone)]
pub struct MemberSpec {
    pub name: Name,
    pub(crate) command: Option<Vec<String>>,
    pub(crate) profile: Profile,
    pub(crate) agent_type: Option<String>,
    pub(crate) model: Option<String>,
    pub color: Option<Color>,
    pub(crate) plan_mode_required: bool,
    pub isolation: Isolation,
    pub prompt: Option<String>,
    pub(crate) protocol: Protocol,
    pub(crate) delivery: Delivery,
    /// How paste delivery types a message; `None` for the default, framed (an MCP member's: the
    /// nudge).
    pub(crate) paste_format: Option<PasteFormat>,
    /// Its program gets `swarm mcp` as an MCP server (`mcp = true`, its own or the team's).
    pub(crate) mcp: bool,
    pub(crate) run_timeout_s: u64,
    pub(crate) env: BTreeMap<String, String>,
    /// The team's rules for what its program inherits, with its own over them.
    pub(crate) env_policy: EnvPolicy,
    pub cwd: PathBuf,
    /// The bound of its log, in bytes.
    pub(crate) log_max: u64,
    /// The host whose node runs it; `None` for the host where `up` runs.
    pub host: Option<Name>,
    /// The rules that answer its permission asks: the team's, then its own.
    pub permissions: Rules,
    /// The team's `permissions_via = "swarm"`: a Claude Code member asks through swarm's hook.
    pub(crate) asks_through_swarm: bool,
    /// How its activity is told from its screen and when it is stalled.
    pub(crate) watching: Watching,
    /// What a resume runs in place of its profile's own way, `{session_id}` unreplaced.
    pub(crate) resume_command: Option<Vec<String>>,
    /// When its supervisor starts its program again, and how many times in a row.
    pub restart: Restarts,
    /// Its sandbox, when it is fenced (`sandbox = true`).
    pub fence: Option<Fence>,
}

/// A restart policy and its bound (docs/ARCHITECTURE.md, "Restart policies"): `restart` and
/// `restart_max`, a member's own over the team's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Restarts {
    pub policy: Restart,
    /// Restarts in a row before the member is left ended.
    pub max: u32,
}

/// How many restarts in a row a member gets unless `restart_max` says: as systemd's
/// `StartLimitBurst`.
pub const DEFAULT_RESTART_MAX: u32 = 5;

impl Default for Restarts {
    fn default() -> Self {
        Self {
            policy: Restart::Never,
            max: DEFAULT_RESTART_MAX,
        }
    }
}

impl Restarts {
    /// The keys as written, checked, `over` giving what is not written: `restart_max` is at least
    /// 1, and means nothing under `restart = "never"`.
    fn check(
        policy: Option<Restart>,
        max: Option<u32>,
        over: Self,
        whose: &str,
        spell: impl Fn(&'static str) -> &'static str,
    ) -> std::result::Result<Self, String> {
        let restarts = Self {
            policy: policy.unwrap_or(over.policy),
            max: max.unwrap_or(over.max),
        };
        match max {
            Some(0) => Err(format!(
                "{} of {whose} is 0; at least 1 ({} = \"never\" restarts nothing)",
                spell("restart_max"),
                spell("restart")
            )),
            Some(_) if restarts.policy == Restart::Never => Err(format!(
                "{} of {whose} has no effect with {} = \"never\"",
                spell("restart_max"),
                spell("restart")
            )),
            _ => Ok(restarts),
        }
    }
}

/// How a member's activity is told from its screen, and how long it may be quiet while it holds
/// a task (docs/ARCHITECTURE.md, "Activity and events"): `idle_pattern`, `needs_you_pattern` and
/// `stall_after`, each checked, a member's own over the team's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Watching {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_pattern: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_you_pattern: Option<String>,
    /// Seconds; `None` for the default, [`DEFAULT_STALL_AFTER_S`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_after_s: Option<u64>,
}

/// How long a member may be quiet while it holds a task or owes an answer: ten minutes.
pub const DEFAULT_STALL_AFTER_S: u64 = 600;

/// `stall_after = 600` (seconds) or `stall_after = "10m"`.
#[derive(Deserialize)]
#[serde(untagged)]
pub enum Span {
    Seconds(u64),
    Text(String),
}

impl Watching {
    /// The keys as written, checked: each pattern a regex, `stall_after` a span of at least a
    /// second; `over` gives what is not written.
    fn check(
        idle_pattern: Option<String>,
        needs_you_pattern: Option<String>,
        stall_after: Option<Span>,
        over: &Self,
        whose: &str,
        spell: impl Fn(&'static str) -> &'static str,
    ) -> std::result::Result<Self, String> {
        for (key, pattern) in [
            (spell("idle_pattern"), &idle_pattern),
            (spell("needs_you_pattern"), &needs_you_pattern),
        ] {
            if let Some(pattern) = pattern {
                regex::Regex::new(pattern).map_err(|err| {
                    // The regex crate points at the error over several lines: its last says what.
                    let said = err.to_string();
                    let why = said.lines().last().unwrap_or_default().trim().to_owned();
                    format!("{key} of {whose} is not a regex ({pattern:?}): {why}")
                })?;
            }
        }
        let stall_after_s = match stall_after {
            None => over.stall_after_s,
            Some(Span::Seconds(0)) => {
                let key = spell("stall_after");
                return Err(format!("{key} of {whose} is 0; at least 1 second"));
            }
            Some(Span::Seconds(secs)) => Some(secs),
            Some(Span::Text(text)) => Some(
                humantime::parse_duration(&text)
                    .ok()
                    .map(|d| d.as_secs())
                    .filter(|secs| *secs > 0)
                    .ok_or_else(|| {
                        format!(
                            "{} of {whose} is {text:?}; a number of seconds or a span \
                             like \"10m\", at least 1s",
                            spell("stall_after")
                        )
                    })?,
            ),
        };
        Ok(Self {
            idle_pattern: idle_pattern.or_else(|| over.idle_pattern.clone()),
            needs_you_pattern: needs_you_pattern.or_else(|| over.needs_you_pattern.clone()),
            stall_after_s,
        })
    }
}

/// A `[budget]` whose limits are amounts and whose members are on the team.
fn check_budget(
    budget: Option<&Budget>,
    names: &BTreeSet<Name>,
) -> std::result::Result<(), String> {
    let Some(budget) = budget else {
        return Ok(());
    };
    for (whose, limit) in std::iter::once(("the team", &budget.team))
        .chain(budget.members.iter().map(|(n, l)| (n.as_str(), l)))
    {
        if limit.usd.is_some_and(|usd| !usd.is_finite() || usd < 0.0) {
            return Err(format!(
                "[budget] usd of {whose} must be a number of dollars, 0 or more"
            ));
        }
    }
    if let Some(stranger) = budget
        .members
        .keys()
        .find(|name| !names.iter().any(|known| known.as_str() == name.as_str()))
    {
        return Err(format!(
            "[budget.members] names {stranger}, who is not on the team"
        ));
    }
    Ok(())
}

/// A `[prices]` table of amounts.
fn check_prices(prices: &Prices) -> std::result::Result<(), String> {
    for (model, price) in prices {
        let figures = [
            price.input,
            price.output,
            price.cache_write,
            price.cache_read,
        ];
        if figures.iter().any(|usd| !usd.is_finite() || *usd < 0.0) {
            return Err(format!(
                "[prices.\"{model}\"]: each price is dollars per million tokens, 0 or more"
            ));
        }
    }
    Ok(())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTeam {
    name: String,
    description: Option<String>,
    layout: Option<String>,
    max_concurrent: Option<u32>,
    #[serde(default)]
    dashboard: bool,
    log_max: Option<Size>,
    cwd: Option<PathBuf>,
    env_clear: Option<bool>,
    #[serde(default)]
    env_keep: BTreeSet<String>,
    #[serde(default)]
    env_remove: BTreeSet<String>,
    #[serde(default)]
    lead: RawLead,
    #[serde(default)]
    member: Vec<MemberKeys>,
    #[serde(default)]
    task: Vec<RawTask>,
    #[serde(default)]
    cluster: ClusterSpec,
    #[serde(default)]
    notify: NotifyKeys,
    budget: Option<Budget>,
    #[serde(default)]
    prices: Prices,
    #[serde(default)]
    permissions: RuleTexts,
    permissions_via: Option<String>,
    mcp: Option<bool>,
    idle_pattern: Option<String>,
    needs_you_pattern: Option<String>,
    stall_after: Option<Span>,
    restart: Option<Restart>,
    restart_max: Option<u32>,

    // Fencing members (docs/ARCHITECTURE.md, "Fencing members").
    sandbox: Option<bool>,
    #[serde(default)]
    sandbox_write: Vec<PathBuf>,
    #[serde(default)]
    sandbox_hide: Vec<PathBuf>,
    sandbox_network: Option<Network>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTask {
    key: String,
    subject: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    blocked_by: Vec<String>,
    owner: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawLead {
    name: Option<String>,
    command: Option<Command>,
    profile: Option<Profile>,
    inherit: Option<Vec<String>>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    env_clear: Option<bool>,
    #[serde(default)]
    env_keep: BTreeSet<String>,
    #[serde(default)]
    env_remove: BTreeSet<String>,
    cwd: Option<PathBuf>,
    log_max: Option<Size>,
    mcp: Option<bool>,
}

/// A member's keys as written: a `[[member]]` table, or `swarm spawn`'s flags. Nothing is checked
/// and no default applied yet: [`MemberSpec::check`] does both.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct MemberKeys {
    pub name: String,
    pub command: Option<Command>,
    pub profile: Option<Profile>,
    pub agent_type: Option<String>,
    pub model: Option<String>,
    pub color: Option<Color>,
    #[serde(default)]
    pub plan_mode_required: bool,
    #[serde(default)]
    pub isolation: Isolation,
    pub prompt: Option<String>,
    #[serde(default)]
    pub protocol: Protocol,
    pub delivery: Option<Delivery>,
    pub paste_format: Option<String>,
    pub mcp: Option<bool>,
    #[serde(default)]
    pub run_timeout_s: u64,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub env_clear: Option<bool>,
    #[serde(default)]
    pub env_keep: BTreeSet<String>,
    #[serde(default)]
    pub env_remove: BTreeSet<String>,
    pub cwd: Option<PathBuf>,
    pub log_max: Option<Size>,
    pub host: Option<String>,
    #[serde(default)]
    pub permissions: RuleTexts,
    pub idle_pattern: Option<String>,
    pub needs_you_pattern: Option<String>,
    pub stall_after: Option<Span>,
    pub resume_command: Option<Command>,
    pub restart: Option<Restart>,
    pub restart_max: Option<u32>,

    // Fencing members (docs/ARCHITECTURE.md, "Fencing members").
    pub sandbox: Option<bool>,
    #[serde(default)]
    pub sandbox_write: Vec<PathBuf>,
    #[serde(default)]
    pub sandbox_hide: Vec<PathBuf>,
    pub sandbox_network: Option<Network>,
}

/// `sandbox_network = "none"`, or an allow-list of `"host:port"`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Network {
    Named(String),
    AllowList(Vec<String>),
}

/// The sandbox keys of the team or a member, as written.
struct FenceKeys {
    sandbox: Option<bool>,
    write: Vec<PathBuf>,
    hide: Vec<PathBuf>,
    network: Option<Network>,
}

/// The team's sandbox keys, checked: what each member's own go over (a member's paths are added
/// to the team's, its `sandbox` and `sandbox_network` replace the team's).
#[derive(Debug, Clone, Default)]
pub struct Fencing {
    pub sandbox: bool,
    pub write: Vec<String>,
    pub hide: Vec<String>,
    pub network: SandboxNetwork,
}

impl Fencing {
    /// The keys as written, `who` naming whose they are in a refusal, relative paths taken from
    /// `base` and `~/` from the person's home.
    fn check(
        keys: FenceKeys,
        over: &Self,
        base: &Path,
        spell: impl Fn(&'static str) -> &'static str,
        who: &str,
    ) -> std::result::Result<Self, String> {
        let FenceKeys {
            sandbox,
            write,
            hide,
            network,
        } = keys;
        let paths = |paths: Vec<PathBuf>, key: &'static str| {
            let mut out = Vec::with_capacity(paths.len());
            for path in paths {
                let text = path.to_string_lossy();
                let resolved = match text.strip_prefix("~/") {
                    Some(rest) => std::env::var_os("HOME")
                        .filter(|home| !home.is_empty())
                        .map(|home| PathBuf::from(home).join(rest))
                        .ok_or_else(|| format!("{} of {who}: {text:?} needs HOME", spell(key)))?,
                    None => resolve(base, Some(&path)),
                };
                out.push(resolved.display().to_string());
            }
            Ok::<_, String>(out)
        };
        let network = match network {
            None => over.network.clone(),
            Some(Network::Named(name)) => match name.as_str() {
                "full" => SandboxNetwork::Full,
                "none" => SandboxNetwork::None,
                other => {
                    return Err(format!(
                        "{} of {who} is \"full\", \"none\" or a list of \"host:port\", not {other:?}",
                        spell("sandbox_network")
                    ));
                }
            },
            Some(Network::AllowList(hosts)) => SandboxNetwork::Only(
                hosts
                    .iter()
                    .map(|host| host.parse())
                    .collect::<std::result::Result<_, String>>()
                    .map_err(|why| format!("{} of {who}: {why}", spell("sandbox_network")))?,
            ),
        };
        let mut write_all = over.write.clone();
        write_all.extend(paths(write, "sandbox_write")?);
        let mut hide_all = over.hide.clone();
        hide_all.extend(paths(hide, "sandbox_hide")?);
        Ok(Self {
            sandbox: sandbox.unwrap_or(over.sandbox),
            write: write_all,
            hide: hide_all,
            network,
        })
    }

    /// The member's fence, `None` unless it is fenced.
    fn fence(self) -> Option<Fence> {
        self.sandbox.then_some(Fence {
            write: self.write,
            hide: self.hide,
            network: self.network,
        })
    }
}

/// `log_max = 1048576` or `log_max = "64MiB"`.
#[derive(Deserialize)]
#[serde(untagged)]
pub enum Size {
    Bytes(u64),
    Text(String),
}

/// `command = ["claude", "--model", "opus"]`, or one string split the way a shell would.
#[derive(Deserialize)]
#[serde(untagged)]
pub enum Command {
    Argv(Vec<String>),
    Line(String),
}

/// Where a key goes in a team file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// The top level: the team as a whole.
    Team,
    /// `[lead]`.
    Lead,
    /// Each `[[member]]`.
    Member,
    /// Each `[[task]]`.
    Task,
    /// `[cluster]`.
    Cluster,
    /// `[notify]`.
    Notify,
}

/// One key a team file may hold: what it is, its type, its default and its meaning, and for a
/// member key, how `swarm spawn` takes it.
#[derive(Debug, Clone, Copy)]
pub struct KeyDoc {
    pub section: Section,
    pub key: &'static str,
    pub kind: &'static str,
    pub default: &'static str,
    pub meaning: &'static str,
    /// How `swarm spawn` takes a member key: a flag (`--model`), or a positional argument.
    pub spawn: Option<&'static str>,
}

const fn key(
    section: Section,
    key: &'static str,
    kind: &'static str,
    default: &'static str,
    meaning: &'static str,
) -> KeyDoc {
    KeyDoc {
        section,
        key,
        kind,
        default,
        meaning,
        spawn: None,
    }
}

const fn member(
    key: &'static str,
    spawn: &'static str,
    kind: &'static str,
    default: &'static str,
    meaning: &'static str,
) -> KeyDoc {
    KeyDoc {
        section: Section::Member,
        key,
        kind,
        default,
        meaning,
        spawn: Some(spawn),
    }
}

const SIZE: &str = "integer (bytes) or string (\"64MiB\")";
const COMMAND: &str = "array of strings, or a string split as a shell splits it";
const PROFILES: &str = "\"claude\", \"codex\", \"gemini\", \"aider\", \"opencode\" or \"generic\"";
const PATH: &str = "string (a path)";

/// Every key of a team file, in the order swarm-team(5) lists them. The parser's fields are held
/// to it by a test: a key cannot be added, renamed or dropped without its line here.
pub const KEYS: &[KeyDoc] = &[
    key(
        Section::Team,
        "name",
        "string",
        "required",
        "The team's name, [A-Za-z0-9][A-Za-z0-9_-]{0,63}: its folder <home>/teams/<name>, its tmux window, and the session swarm-<name> outside tmux.",
    ),
    key(
        Section::Team,
        "description",
        "string",
        "none",
        "A line about the team, kept in config.json.",
    ),
    key(
        Section::Team,
        "layout",
        "string",
        "tiled",
        "The tmux layout of the team's window: even-horizontal, even-vertical, main-horizontal, main-vertical or tiled, or a layout string as #{window_layout} prints it, whose pane count must be the team's. Checked before tmux sees it.",
    ),
    key(
        Section::Team,
        "max_concurrent",
        "integer, at least 1",
        "no limit",
        "At most this many teammates run at once; the others wait as queued, in file order. The lead is never limited.",
    ),
    key(
        Section::Team,
        "dashboard",
        "boolean",
        "false",
        "swarm up also opens swarm top, the team's live dashboard, in the team's window: one more pane across its whole width, below the members' panes. It is no member; swarm down closes it.",
    ),
    key(
        Section::Team,
        "log_max",
        SIZE,
        "64MiB",
        "A member's log, logs/<name>.log, is moved to <name>.log.1 before it passes this size (units KiB, MiB, GiB, KB, MB, GB; at least 1KiB). For every member without its own, and for members spawn adds.",
    ),
    key(
        Section::Team,
        "cwd",
        PATH,
        "where swarm up runs",
        "Where the lead and members work, relative to the team file's folder; each may set its own.",
    ),
    key(
        Section::Team,
        "env_clear",
        "boolean",
        "false",
        "Every program (the lead's and each member's) inherits nothing from its pane but what env_keep names, and swarm's own variables, unless it says env_clear = false. For members spawn adds too.",
    ),
    key(
        Section::Team,
        "env_keep",
        "array of variable names",
        "none",
        "With env_clear, the inherited variables every program keeps, with its own env_keep. Refused when no one clears.",
    ),
    key(
        Section::Team,
        "env_remove",
        "array of variable names",
        "none",
        "Inherited variables no program gets, e.g. ANTHROPIC_API_KEY, whatever else is kept; a member's own env still sets them. For members spawn adds too.",
    ),
    key(
        Section::Team,
        "lead",
        "table",
        "a lead with no command",
        "The lead: the keys under [lead].",
    ),
    key(
        Section::Team,
        "member",
        "array of tables",
        "none",
        "One [[member]] table per teammate, in the order their panes are placed.",
    ),
    key(
        Section::Team,
        "cluster",
        "table",
        "none: the team runs on one host",
        "The NATS server of a team across machines: the keys under [cluster].",
    ),
    key(
        Section::Team,
        "notify",
        "table",
        "bell on, for needs-you, stalled, failed, done and cost",
        "How a person who is not looking hears that a member needs them: the keys under [notify], over those of ~/.config/swarm/notify.toml.",
    ),
    key(
        Section::Team,
        "budget",
        "table: usd, tokens, on_exceed, members.NAME.usd, members.NAME.tokens",
        "none: no limit",
        "What the team and each member may spend: [budget] usd = 20 (and/or tokens = ...) for the whole team, [budget.members.bob] usd = 5 for one member. At 80 % a cost event and an alert; at 100 % the member (for the team's budget, every teammate) is asked to shut down and then stopped, and the lead is told once; on_exceed = \"notify\" only alerts. swarm budget NAME USD raises one while the team runs (swarm-cost(1)).",
    ),
    key(
        Section::Team,
        "prices",
        "table of tables: input, output, cache_write, cache_read",
        "the list swarm ships",
        "US dollars per million tokens for a model, over the list swarm ships: [prices.\"my-model\"] input = 1.0, output = 5.0, cache_write = 1.25, cache_read = 0.1. A model with no price shows its tokens and ? for money.",
    ),
    key(
        Section::Team,
        "task",
        "array of tables",
        "none",
        "One [[task]] table per task to put on the team's board at up and init; a board that already holds tasks from the team file gets none again.",
    ),
    key(
        Section::Team,
        "permissions",
        "table: allow, deny (arrays of rules)",
        "none",
        "Permission rules in Claude Code's syntax (Bash(git status:*), Read, Edit(src/**), WebFetch(domain:docs.rs)) that answer every teammate's permission asks with no one asked: [permissions] allow = [...], deny = [...]. Deny wins; what no rule matches is asked. A rule that cannot parse is refused at up. The team's signing agent applies them (swarm-permission(1)).",
    ),
    key(
        Section::Team,
        "permissions_via",
        "string: \"cli\" or \"swarm\"",
        "\"cli\"",
        "\"swarm\": every Claude Code teammate asks through swarm's queue with a PreToolUse hook (swarm permission hook claude, given with --settings), so its asks reach permission list and the rules whatever runs as the lead. Such a teammate may not have --settings of its own or inherited.",
    ),
    key(
        Section::Team,
        "mcp",
        "boolean",
        "false",
        "The lead and every teammate get swarm mcp among their programs' MCP servers, unless each sets its own: see mcp of [[member]] and of [lead]. Members swarm spawn adds get it too, unless spawned with --mcp=false.",
    ),
    key(
        Section::Team,
        "idle_pattern",
        "string, a regex",
        "none",
        "Every member's idle_pattern, unless it sets its own.",
    ),
    key(
        Section::Team,
        "needs_you_pattern",
        "string, a regex",
        "none",
        "Every member's needs_you_pattern, unless it sets its own.",
    ),
    key(
        Section::Team,
        "stall_after",
        "integer (seconds) or a span: \"10m\", \"90s\"",
        "10m",
        "Every member's stall_after, unless it sets its own.",
    ),
    key(
        Section::Team,
        "restart",
        "\"never\", \"on-failure\" or \"always\"",
        "\"never\"",
        "Every member's restart, unless it sets its own (not the lead's, nor members spawn adds).",
    ),
    key(
        Section::Team,
        "restart_max",
        "integer, at least 1",
        "5",
        "Every member's restart_max, unless it sets its own.",
    ),
    key(
        Section::Team,
        "sandbox",
        "boolean",
        "false",
        "Every teammate runs fenced, in a sandbox (bubblewrap), unless it sets its own: see sandbox of [[member]]. The lead is never fenced.",
    ),
    key(
        Section::Team,
        "sandbox_write",
        "array of strings (paths)",
        "none",
        "Paths every fenced teammate may write besides its own directory; a member's own are added.",
    ),
    key(
        Section::Team,
        "sandbox_hide",
        "array of strings (paths)",
        "none",
        "Paths no fenced teammate may see, besides those every fence hides; a member's own are added.",
    ),
    key(
        Section::Team,
        "sandbox_network",
        "string: \"full\" or \"none\"; or array of strings (host:port)",
        "\"full\"",
        "Every fenced teammate's network, unless it sets its own.",
    ),
    key(
        Section::Lead,
        "name",
        "string",
        "team-lead",
        "The lead's name; never user, which is the person at the keyboard.",
    ),
    key(
        Section::Lead,
        "command",
        COMMAND,
        "none",
        "The lead's program, in the first pane. Without one the lead has no pane: it is whoever runs swarm outside every pane (a terminal, a script), which has the lead's authority, and the team's window opens with the first member placed, by swarm up or the first swarm spawn.",
    ),
    key(
        Section::Lead,
        "profile",
        PROFILES,
        "the program's name when it is claude, codex, gemini, aider or opencode, else generic",
        "How the lead and, by default, its teammates are launched: claude gives Claude Code's teammate identity flags and environment; codex, gemini and aider what lets swarm resume their conversation and hear their activity (see the member's profile); generic, identity in SWARM_* variables only.",
    ),
    key(
        Section::Lead,
        "inherit",
        "array of flag names",
        "claude: --model, --permission-mode, --settings, --plugin-dir, --dangerously-skip-permissions; codex: --model, -m, --config, -c, --profile, -p, --sandbox, -s, --ask-for-approval, -a, --dangerously-bypass-approvals-and-sandbox; gemini: --model, -m, --approval-mode, --yolo, -y; aider: --model, --weak-model, --edit-format, --yes-always; opencode: --model, -m; generic: none",
        "Flags of the lead's command that teammates of the same profile get too, with their values, unless they set their own.",
    ),
    key(
        Section::Lead,
        "env",
        "table of strings",
        "none",
        "Variables set in the lead's pane; the SWARM_* identity variables are set after them.",
    ),
    key(
        Section::Lead,
        "env_clear",
        "boolean",
        "the team's env_clear",
        "The lead's program inherits nothing from its pane but what env_keep names, and swarm's own variables.",
    ),
    key(
        Section::Lead,
        "env_keep",
        "array of variable names",
        "none",
        "With env_clear, inherited variables the lead's program keeps, besides the team's env_keep.",
    ),
    key(
        Section::Lead,
        "env_remove",
        "array of variable names",
        "none",
        "Inherited variables the lead's program does not get, besides the team's env_remove; none may be set in its env.",
    ),
    key(
        Section::Lead,
        "cwd",
        PATH,
        "the team's cwd",
        "Where the lead works, relative to the team file's folder.",
    ),
    key(
        Section::Lead,
        "log_max",
        SIZE,
        "the team's log_max",
        "The bound of the lead's log.",
    ),
    key(
        Section::Lead,
        "mcp",
        "boolean",
        "the team's, else false",
        "The lead's program gets swarm mcp as an MCP server named swarm, acting as the lead, wired in as a member's is (see mcp of [[member]]): claude, codex, gemini and opencode. A lead with no command runs swarm itself and gets nothing.",
    ),
    member(
        "name",
        "NAME",
        "string",
        "required",
        "The member's name, unique in the team; never user.",
    ),
    member(
        "command",
        "-- CMD",
        COMMAND,
        "the profile's program: claude, codex, gemini, aider or opencode; generic has none, so it is required",
        "The member's program, started by its supervisor in its own pane.",
    ),
    member(
        "profile",
        "--profile",
        PROFILES,
        "the program's name when it is claude, codex, gemini, aider or opencode, else the lead's",
        "How the member is launched, besides its SWARM_* variables. claude: Claude Code's teammate flags and environment, --session-id, and hooks that tell its activity. codex: -c notify=[\"swarm\",\"hook\",\"codex\"] (its turns' ends, and its session id); resumed with codex resume <id>. gemini: --session-id, and GEMINI_CLI_HOME naming a Gemini CLI home of the team's whose settings are yours with hooks that tell its activity; resumed with --resume <id>. aider: --chat-history-file and --input-history-file of the member's own under the team's folder; resumed with --restore-chat-history. opencode: nothing but what mcp adds; it starts afresh at a resume unless resume_command says how. generic: nothing; it starts afresh at a resume unless resume_command says how.",
    ),
    member(
        "agent_type",
        "--agent-type",
        "string",
        "none (general-purpose in config.json)",
        "The member's agent type: claude gets it as --agent-type.",
    ),
    member(
        "model",
        "--model",
        "string",
        "the lead's --model, when inherited",
        "The model, in place of an inherited --model.",
    ),
    member(
        "color",
        "--color",
        "red, blue, green, yellow, purple, orange, pink or cyan",
        "the next in that order",
        "The colour of the member's name on its pane's border, in swarm's output, and for claude its --agent-color.",
    ),
    member(
        "plan_mode_required",
        "--plan-mode-required",
        "boolean",
        "false",
        "The member starts in plan mode, gets no permission-bypassing flag, and must have its plan approved by the lead.",
    ),
    member(
        "isolation",
        "--worktree",
        "\"none\" or \"worktree\"",
        "none",
        "worktree: the member works in its own git worktree, <repo>/.swarm/worktrees/<team>/<name>, on branch swarm/<team>/<name>; its cwd must be in a git repository.",
    ),
    member(
        "prompt",
        "--prompt",
        "string",
        "none",
        "The member's first message, from the lead, waiting in its inbox when it starts.",
    ),
    member(
        "protocol",
        "--protocol",
        "\"native\", \"wrapper\" or \"none\"",
        "native",
        "native: the program reads its inbox and answers the lead's requests itself; wrapper: the supervisor approves a shutdown request for it and ends it; none: it answers nothing (a shell, a REPL), so swarm down stops it at once instead of asking and waiting, and a shutdown request to it is refused.",
    ),
    member(
        "delivery",
        "--delivery",
        "\"pull\" or \"paste\"",
        "pull, or paste when paste_format is set",
        "pull: the program runs swarm recv; paste: the supervisor pastes each plain message into its pane, then Enter.",
    ),
    member(
        "paste_format",
        "--paste-format",
        "\"framed\", \"raw\", or a template",
        "framed (with mcp: the nudge)",
        "How paste delivery types a message: framed, [from <sender>] <text>; raw, the text exactly; or a template with {from}, {text}, {summary} and {n} (how many messages one paste tells of), {{ and }} for a literal brace. Means delivery = \"paste\"; refused beside delivery = \"pull\". An mcp member's default is the nudge {n} new message(s) from {from}: use the receive tool.",
    ),
    member(
        "mcp",
        "--mcp",
        "boolean",
        "the team's, else false",
        "Its program gets swarm mcp as an MCP server named swarm (messages, tasks, plans, permission asks and shutdown answers as tools, acting as this member), registered without touching the user's files: claude --mcp-config with a file in the team's folder, codex -c mcp_servers.swarm.* overrides (its tools approved), gemini the mcpServers of the settings of the Gemini CLI home swarm gives it (trusted), opencode an mcp entry in OPENCODE_CONFIG_CONTENT, over that variable's own JSON if its pane had one (opencode merges it over your files; its tools may wait a day). With delivery = \"paste\", the pane is typed a nudge, paste_format's default {n} new message(s) from {from}: use the receive tool, and the messages stay unread for the receive tool. swarm spawn takes --mcp, and --mcp=false for a member without it in a team whose file says mcp = true.",
    ),
    member(
        "run_timeout_s",
        "--run-timeout",
        "integer (seconds)",
        "0, no limit",
        "The supervisor stops the program after this long, as swarm stop does (reason timeout). At most a year.",
    ),
    member(
        "env",
        "--env",
        "table of strings",
        "none",
        "Variables set in the member's pane; the SWARM_* identity variables are set after them, so none can be overridden.",
    ),
    member(
        "env_clear",
        "--env-clear",
        "boolean",
        "the team's env_clear",
        "The member's program inherits nothing from its pane but what env_keep names, and swarm's own variables.",
    ),
    member(
        "env_keep",
        "--env-keep",
        "array of variable names",
        "none",
        "With env_clear, inherited variables the member's program keeps, besides the team's env_keep.",
    ),
    member(
        "env_remove",
        "--env-remove",
        "array of variable names",
        "none",
        "Inherited variables the member's program does not get, e.g. ANTHROPIC_API_KEY, besides the team's env_remove; none may be set in its env.",
    ),
    member(
        "cwd",
        "--cwd",
        PATH,
        "the team's cwd (spawn: the current directory)",
        "Where the member works, relative to the team file's folder (spawn: to the current directory).",
    ),
    member(
        "log_max",
        "--log-max",
        SIZE,
        "the team's log_max",
        "The bound of the member's log.",
    ),
    member(
        "host",
        "not taken: up only",
        "string, a host name as swarm node --name gives it",
        "the host where swarm up runs",
        "The host whose swarm node starts and runs the member, in that host's tmux, in a session swarm-<team>. A team naming hosts needs a node running on the host where swarm up runs, and a NATS server ([cluster] or SWARM_NATS_URL).",
    ),
    member(
        "permissions",
        "not taken: up only",
        "table: allow, deny (arrays of rules)",
        "none",
        "The member's own permission rules, added to the team's [permissions]: [member.permissions] allow = [\"Bash(cargo test:*)\"].",
    ),
    member(
        "idle_pattern",
        "--idle-pattern",
        "string, a regex",
        "the team's, else none",
        "What the member's screen shows when its program waits for input (the line the cursor is on, else the last line): the member is idle once its output has stopped and this matches, e.g. \"^>>> $\".",
    ),
    member(
        "needs_you_pattern",
        "--needs-you-pattern",
        "string, a regex",
        "the team's, else none",
        "What the member's screen shows when its program waits on the person (\"\\\\[y/N\\\\]\", \"Press Enter\"): the member needs you once its output has stopped and this matches. Checked before idle_pattern.",
    ),
    member(
        "resume_command",
        "--resume-command",
        COMMAND,
        "the profile's own way; generic: none, it starts its command afresh",
        "What the member runs when its team is resumed, in place of its profile's way back into its conversation: {session_id} stands for its session id (the one its command named with {session_id}, or its program's, as swarm recorded it), e.g. [\"mytool\", \"--resume\", \"{session_id}\"]. One that names {session_id} when none was recorded is not run: the member starts its command afresh.",
    ),
    member(
        "stall_after",
        "--stall-after",
        "integer (seconds) or a span: \"10m\", \"90s\"",
        "the team's, else 10m",
        "The member is stalled once it has printed nothing, read no message and changed no activity for this long while it holds a task in progress or has unread messages.",
    ),
    member(
        "restart",
        "--restart",
        "\"never\", \"on-failure\" or \"always\"",
        "the team's restart, else never",
        "When its supervisor starts its program again after it ended on its own: on-failure after a non-zero exit or a crash, always after any such ending; never after stop, down, a timeout, a shutdown or a signal from outside. It comes back in its own conversation (claude: --resume), keeps its tasks and its unread mail, after a pause of 1s that doubles at each restart in a row, up to 1 minute.",
    ),
    member(
        "restart_max",
        "--restart-max",
        "integer, at least 1",
        "the team's, else 5",
        "How many restarts in a row (each run shorter than 10 minutes) before it is left ended: its ending is then recorded, the lead told once, and a gave-up event alerts as failed.",
    ),
    member(
        "sandbox",
        "--sandbox",
        "boolean",
        "the team's, else false",
        "The member's program runs fenced, in a sandbox (bubblewrap): its directory (or worktree) and sandbox_write read-write, the rest of the file system read-only, sandbox_hide, ~/.ssh, ~/.aws, ~/.config/gh, swarm's home, the team's tmux socket, swarm's sockets and the other members' worktrees hidden, a pid namespace of its own. swarm inside it acts through its supervisor as this member. up refuses it where bubblewrap or the kernel cannot make one.",
    ),
    member(
        "sandbox_write",
        "--sandbox-write",
        "array of strings (paths)",
        "the team's",
        "More paths a fenced member may write; relative to the team file, ~/ for the home directory.",
    ),
    member(
        "sandbox_hide",
        "--sandbox-hide",
        "array of strings (paths)",
        "the team's",
        "More paths a fenced member cannot see.",
    ),
    member(
        "sandbox_network",
        "--sandbox-network",
        "string: \"full\" or \"none\"; or array of strings (host:port)",
        "the team's, else \"full\"",
        "none: the fenced member has no network but loopback (a network namespace of its own). A list of \"host:port\", each a name, *.domain (names under it), an IPv4 address or [IPv6], the port required: the same namespace, and those hosts only, through an HTTP CONNECT and SOCKS5 proxy its supervisor runs outside the sandbox; its program gets HTTP_PROXY, HTTPS_PROXY and ALL_PROXY (and lower case) naming a bridge on its loopback, and NO_PROXY=localhost,127.0.0.1,::1. A target is checked by the name the client sent, not the address it resolves to; one not listed is answered 403 and told in the event stream (net-refused). Fails closed: a program that ignores the proxy variables, DNS lookups from inside, and UDP reach nothing. An entry that is not host:port is refused at up and spawn.",
    ),
    key(
        Section::Task,
        "key",
        "string",
        "required",
        "The task's name in this file, unique among its tasks, for blocked_by; kept in the task's metadata as team_file_key.",
    ),
    key(
        Section::Task,
        "subject",
        "string",
        "required",
        "The task's subject, at most 1 MiB.",
    ),
    key(
        Section::Task,
        "description",
        "string",
        "empty",
        "The task's description, at most 1 MiB.",
    ),
    key(
        Section::Task,
        "blocked_by",
        "array of strings (keys)",
        "none",
        "The keys of the tasks that must be completed before this one can be claimed. An unknown key or a circle is refused before anything is made.",
    ),
    key(
        Section::Task,
        "owner",
        "string",
        "none",
        "The member, or the lead, that owns the task from the start.",
    ),
    key(
        Section::Cluster,
        "nats",
        "string, a URL: nats://host:4222, or tls://host:4222 for TLS",
        "none",
        "The NATS server with JetStream that joins the team's hosts. SWARM_NATS_URL, when set, takes its place, with the login the environment gives.",
    ),
    key(
        Section::Cluster,
        "creds",
        PATH,
        "none",
        "A .creds file to log in with, relative to the team file's folder. A user and password (SWARM_NATS_USER, SWARM_NATS_PASSWORD) or a token (SWARM_NATS_TOKEN) come from the environment only, never from a file.",
    ),
    key(
        Section::Notify,
        "bell",
        "boolean",
        "true",
        "The team's tmux window gets the option @swarm-needs-you (the members whose last alert was needs-you or stalled; unset at none, for a status line's #{@swarm-needs-you}), and every client attached to its session is told the alert (display-message).",
    ),
    key(
        Section::Notify,
        "desktop",
        "boolean",
        "false",
        "A desktop notification per alert: notify-send where it is on PATH, else OSC 9 written to the terminal of every client attached to the team's session.",
    ),
    key(
        Section::Notify,
        "webhook",
        "string, an http:// or https:// URL",
        "none",
        "A JSON POST per alert ({team, text, alert, event}), from a queue of its own: retried with backoff (1, 2, 4, 8 s) after a failure or a 5xx, never holding anything else up. Shown everywhere as its host alone, what follows masked.",
    ),
    key(
        Section::Notify,
        "format",
        "\"json\" or \"slack\"",
        "\"json\"",
        "The webhook's body: swarm's JSON, or {\"text\"} as a Slack incoming webhook takes it.",
    ),
    key(
        Section::Notify,
        "command",
        "array of strings",
        "none",
        "A program run per alert with its JSON ({team, text, alert, event}) on stdin.",
    ),
    key(
        Section::Notify,
        "events",
        "array of: needs-you, stalled, failed, idle, done, cost",
        "[\"needs-you\", \"stalled\", \"failed\", \"done\", \"cost\"]",
        "Which changes alert: a member waits on a decision, has gone quiet holding work, ended badly, finished its turn (noisy), the whole team ended, or a budget reached 80 % or 100 %. One alert per member per change; a member with more than 3 in a minute is told once more when the minute is over, with how many changes it made.",
    ),
];

/// Where a member's keys were written, to name them as they were written in a refusal.
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    /// A team file, at this path.
    File(&'a Path),
    /// `swarm spawn`'s flags.
    Flags,
}

impl Source<'_> {
    /// A member key as this source spells it: `run_timeout_s` in a file, `--run-timeout` as a flag.
    fn key(self, key: &'static str) -> &'static str {
        match self {
            Self::File(_) => key,
            Self::Flags => KEYS
                .iter()
                .find(|doc| doc.section == Section::Member && doc.key == key)
                .and_then(|doc| doc.spawn)
                .unwrap_or(key),
        }
    }

    /// A refusal of what this source says (exit 2): a file's names its path.
    fn invalid(self, what: impl std::fmt::Display) -> Error {
        match self {
            Self::File(path) => Error::usage(format!("{}: {what}", path.display())),
            Self::Flags => Error::usage(what.to_string()),
        }
    }
}

/// What a member's keys default to, from the rest of the team.
#[derive(Debug, Clone, Copy)]
pub struct Defaults<'a> {
    /// The lead's profile.
    pub profile: Profile,
    /// Where a member that names no `cwd` works.
    pub cwd: &'a Path,
    /// What a relative `cwd` is relative to.
    pub base: &'a Path,
    /// The team's `log_max`.
    pub log_max: Option<u64>,
    /// The team's `env_clear`, `env_keep` and `env_remove`, which a member's own go over.
    pub env_policy: &'a EnvPolicy,
    /// The team's permission rules, to which a member's own are added.
    pub permissions: &'a Rules,
    /// The team's `permissions_via = "swarm"`.
    pub asks_through_swarm: bool,
    /// The team's `mcp`.
    pub mcp: bool,
    /// The team's `idle_pattern`, `needs_you_pattern` and `stall_after`.
    pub watching: &'a Watching,
    /// The team's `restart` and `restart_max`.
    pub restart: Restarts,
    /// The team's `sandbox`, `sandbox_write`, `sandbox_hide` and `sandbox_network`.
    pub fencing: &'a Fencing,
}

/// How large a member's log grows before it is rotated, unless the team file says.
pub(crate) const DEFAULT_LOG_MAX: u64 = 64 * 1024 * 1024;

/// The smallest `log_max`: a bound so small would rotate on almost every write.
const MIN_LOG_MAX: u64 = 1024;

/// The longest `run_timeout_s`, a year. The supervisor adds it to the clock, and a run meant to
/// last longer than this has no use for a timeout.
pub(crate) const MAX_RUN_TIMEOUT_S: u64 = 365 * 24 * 60 * 60;

/// A size in bytes: a number, optionally followed by a unit: `KiB`, `MiB`, `GiB` (or `K`, `M`,
/// `G`), `KB`, `MB`, `GB` (powers of 1000), `B`. Units are read case-insensitively.
pub fn parse_size(text: &str) -> std::result::Result<u64, String> {
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a size like 1048576 or \"64MiB\""))?;
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        other => {
            return Err(format!(
                "{text:?} has an unknown unit {other:?}; use KiB, MiB or GiB"
            ));
        }
    };
    let bytes = number
        .checked_mul(scale)
        .ok_or_else(|| format!("{text:?} is too large"))?;
    if bytes < MIN_LOG_MAX {
        return Err(format!("{text:?} is below the smallest log bound, 1KiB"));
    }
    Ok(bytes)
}

fn log_max(size: Option<Size>, key: &str, who: &str, source: Source<'_>) -> Result<Option<u64>> {
    size.map(|size| match size {
        Size::Bytes(bytes) => parse_size(&bytes.to_string()),
        Size::Text(text) => parse_size(&text),
    })
    .transpose()
    .map_err(|why| source.invalid(format!("{key} of {who}: {why}")))
}

impl TeamFile {
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|err| Error::io_on_named("read team file", path, err))?;
        let path = absolute(path)?;
        let here =
            std::env::current_dir().map_err(|err| Error::os("find the current directory", err))?;
        Self::parse(&path, &text, &here)
    }

    /// Parses `text`. Members work in `here` (where `swarm up` runs) unless the file sets `cwd`;
    /// a relative `cwd` is relative to the team file's own directory.
    pub(crate) fn parse(path: &Path, text: &str, here: &Path) -> Result<Self> {
        let shown = path.display();
        let raw: RawTeam = toml::from_str(text).map_err(|err| {
            let line = err
                .span()
                .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
            let message = err.message().trim_end().replace('\n', " ");
            let at = line.map_or_else(|| shown.to_string(), |line| format!("{shown}:{line}"));
            let error = Error::usage(format!("{at}: {message}"));
            match meant_key(&message) {
                Some(key) => error.with_hint(format!("did you mean `{key}`?")),
                None => error,
            }
        })?;
        let source = Source::File(path);
        let invalid = |what: String| source.invalid(what);
        let base = crate::store::durable::parent(path).to_path_buf();
        let team_cwd = raw
            .cwd
            .as_deref()
            .map_or_else(|| here.to_path_buf(), |cwd| resolve(&base, Some(cwd)));

        let name =
            Name::parse("team", &raw.name).map_err(|err| invalid(err.message().to_owned()))?;
        if raw.max_concurrent == Some(0) {
            return Err(invalid("max_concurrent must be at least 1".into()));
        }
        // Checked before tmux sees it: tmux 3.3a dies on a layout it does not know.
        let layout = raw
            .layout
            .as_deref()
            .map(Layout::parse)
            .transpose()
            .map_err(invalid)?;

        let team_log_max = log_max(raw.log_max, "log_max", "the team", source)?;
        let lead_command = argv(raw.lead.command, "lead", source)?;
        let lead_profile = raw
            .lead
            .profile
            .or_else(|| detect_profile(lead_command.as_deref()))
            .unwrap_or_default();
        let team_policy = EnvPolicy {
            clear: raw.env_clear.unwrap_or(false),
            keep: raw.env_keep,
            remove: raw.env_remove,
        };
        check_policy(&team_policy, &BTreeMap::new())
            .map_err(|why| invalid(format!("the team: {why}")))?;
        let lead_env = checked_env(raw.lead.env, "env", "lead", source)?;
        let lead_policy = env_policy(
            EnvRules {
                clear: raw.lead.env_clear,
                keep: raw.lead.env_keep,
                remove: raw.lead.env_remove,
            },
            &team_policy,
            &lead_env,
            "the lead",
            source,
        )?;
        let lead = LeadSpec {
            name: Name::parse("lead", raw.lead.name.as_deref().unwrap_or(DEFAULT_LEAD))
                .map_err(|err| invalid(err.message().to_owned()))?,
            command: lead_command,
            inherit: raw.lead.inherit.unwrap_or_else(|| {
                default_inherit(lead_profile)
                    .iter()
                    .map(|f| (*f).to_owned())
                    .collect()
            }),
            profile: lead_profile,
            env: lead_env,
            env_policy: lead_policy,
            cwd: raw
                .lead
                .cwd
                .as_deref()
                .map_or_else(|| team_cwd.clone(), |cwd| resolve(&base, Some(cwd))),
            log_max: log_max(raw.lead.log_max, "log_max", "the lead", source)?
                .or(team_log_max)
                .unwrap_or(DEFAULT_LOG_MAX),
            mcp: raw.lead.mcp.or(raw.mcp).unwrap_or(false),
        };
        for flag in &lead.inherit {
            if !flag.starts_with('-') || flag.contains('=') {
                return Err(invalid(format!(
                    "inherit entries are flag names like \"--model\", not {flag:?}"
                )));
            }
        }

        if lead.name.as_str() == PERSON {
            return Err(invalid(format!(
                "the lead cannot be called {PERSON}: that is the person at the keyboard"
            )));
        }
        let permissions = Rules::try_from(raw.permissions)
            .map_err(|why| invalid(format!("[permissions]: {why}")))?;
        let asks_through_swarm = match raw.permissions_via.as_deref() {
            None | Some("cli") => false,
            Some("swarm") => true,
            Some(other) => {
                return Err(invalid(format!(
                    "permissions_via is \"cli\" or \"swarm\", not {other:?}"
                )));
            }
        };
        let watching = Watching::check(
            raw.idle_pattern,
            raw.needs_you_pattern,
            raw.stall_after,
            &Watching::default(),
            "the team",
            |key| key,
        )
        .map_err(invalid)?;
        let restart = Restarts::check(
            raw.restart,
            raw.restart_max,
            Restarts::default(),
            "the team",
            |key| key,
        )
        .map_err(invalid)?;
        let fencing = Fencing::check(
            FenceKeys {
                sandbox: raw.sandbox,
                write: raw.sandbox_write,
                hide: raw.sandbox_hide,
                network: raw.sandbox_network,
            },
            &Fencing::default(),
            &base,
            |key| key,
            "the team",
        )
        .map_err(invalid)?;
        let defaults = Defaults {
            restart,
            profile: lead_profile,
            cwd: &team_cwd,
            base: &base,
            log_max: team_log_max,
            env_policy: &team_policy,
            permissions: &permissions,
            asks_through_swarm,
            mcp: raw.mcp.unwrap_or(false),
            watching: &watching,
            fencing: &fencing,
        };
        let mut seen = BTreeSet::from([lead.name.clone()]);
        let mut members = Vec::with_capacity(raw.member.len());
        for keys in raw.member {
            let member = MemberSpec::check(keys, &defaults, source)?;
            if !seen.insert(member.name.clone()) {
                return Err(invalid(format!(
                    "member name {} is used twice",
                    member.name
                )));
            }
            members.push(member);
        }

        // Claude Code takes one --settings: the hook's would replace the member's own.
        let lead_settings = lead.profile == Profile::Claude
            && lead.inherit.iter().any(|f| f == "--settings")
            && lead.command.as_ref().is_some_and(|c| {
                c.iter()
                    .any(|a| a == "--settings" || a.starts_with("--settings="))
            });
        for member in members.iter().filter(|m| m.asks_through_swarm) {
            let own = member.command.as_ref().is_some_and(|c| {
                c.iter()
                    .any(|a| a == "--settings" || a.starts_with("--settings="))
            });
            if own || lead_settings {
                return Err(invalid(format!(
                    "member {} gets --settings {}, and permissions_via = \"swarm\" needs Claude \
                     Code's one --settings for its hook",
                    member.name,
                    if own {
                        "in its command"
                    } else {
                        "from the lead"
                    }
                )));
            }
        }

        let anyone_clears = (lead.command.is_some() && lead.env_policy.clear)
            || members.iter().any(|member| member.env_policy.clear);
        if !team_policy.keep.is_empty() && !anyone_clears {
            return Err(invalid(
                "env_keep has no effect: neither the team nor any member has env_clear = true"
                    .into(),
            ));
        }

        let panes = members.len() + usize::from(lead.command.is_some());
        if let Some(cells) = layout.as_ref().and_then(Layout::cells)
            && cells != panes
        {
            return Err(invalid(format!(
                "the layout string describes {cells} panes but the team has {panes}"
            )));
        }

        let tasks = check_tasks(raw.task, &seen, source)?;
        raw.notify.clone().settle().map_err(invalid)?;
        check_budget(raw.budget.as_ref(), &seen).map_err(invalid)?;
        check_prices(&raw.prices).map_err(invalid)?;
        let cluster = ClusterSpec {
            nats: raw.cluster.nats,
            creds: raw.cluster.creds.map(|creds| resolve(&base, Some(&creds))),
        };

        Ok(Self {
            path: path.to_path_buf(),
            name,
            description: raw.description,
            layout,
            max_concurrent: raw.max_concurrent,
            dashboard: raw.dashboard,
            log_max: team_log_max,
            env_policy: team_policy,
            watching,
            mcp: raw.mcp.unwrap_or(false),
            lead,
            members,
            tasks,
            cluster,
            notify_keys: raw.notify,
            budget: raw.budget,
            prices: raw.prices,
        })
    }

    /// The team's alerts: its `[notify]` keys over those of `~/.config/swarm/notify.toml`
    /// (`$XDG_CONFIG_HOME/swarm/notify.toml`), key by key. A bad key in either is refused (exit
    /// 2), named by its file.
    pub fn notify(&self) -> Result<Notify> {
        let mine = match UserConfig::current().map(|dir| dir.notify()) {
            Some(path) => match std::fs::read_to_string(&path) {
                Ok(text) => toml::from_str::<NotifyKeys>(&text).map_err(|err| {
                    let message = err.message().trim_end().replace('\n', " ");
                    Error::usage(format!("{}: {message}", path.display()))
                })?,
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => NotifyKeys::default(),
                Err(err) => return Err(Error::io_on_named("read", &path, err)),
            },
            None => NotifyKeys::default(),
        };
        self.notify_keys.clone().over(mine).settle().map_err(|why| {
            Error::usage(why).with_hint(format!(
                "fix [notify] in {} or ~/.config/swarm/notify.toml",
                self.path.display()
            ))
        })
    }
}

/// Checks the `[[task]]` entries: keys unique, subjects and descriptions within bounds, owners on
/// the roster, every `blocked_by` key known and no circle. Returns them blockers first, otherwise
/// in file order.
fn check_tasks(
    raw: Vec<RawTask>,
    roster: &BTreeSet<Name>,
    source: Source<'_>,
) -> Result<Vec<TaskSpec>> {
    use crate::format::task::MAX_DESCRIPTION_BYTES;
    let mut keys = BTreeSet::new();
    for task in &raw {
        if task.key.is_empty() {
            return Err(source.invalid("a [[task]] has an empty key"));
        }
        if !keys.insert(task.key.as_str()) {
            return Err(source.invalid(format!("task key {:?} is used twice", task.key)));
        }
        if task.subject.trim().is_empty() {
            return Err(source.invalid(format!("task {:?} has an empty subject", task.key)));
        }
        for (what, text) in [
            ("subject", &task.subject),
            ("description", &task.description),
        ] {
            if text.len() > MAX_DESCRIPTION_BYTES {
                return Err(
                    source.invalid(format!("the {what} of task {:?} is over 1 MiB", task.key))
                );
            }
        }
        if let Some(owner) = &task.owner
            && !roster.iter().any(|name| name.as_str() == owner)
        {
            return Err(source.invalid(format!(
                "task {:?} is owned by {owner:?}, who is neither the lead nor a member",
                task.key
            )));
        }
    }
    for task in &raw {
        for blocker in &task.blocked_by {
            if !keys.contains(blocker.as_str()) {
                return Err(source.invalid(format!(
                    "task {:?} is blocked by {blocker:?}, which no [[task]] has as its key",
                    task.key
                )));
            }
        }
    }
    // Blockers first: each pass takes, in file order, every task whose blockers are all taken.
    let mut placed: BTreeSet<String> = BTreeSet::new();
    let mut ordered = Vec::with_capacity(raw.len());
    let mut left: Vec<RawTask> = raw;
    while !left.is_empty() {
        let (ready, waiting): (Vec<RawTask>, Vec<RawTask>) = left
            .into_iter()
            .partition(|t| t.blocked_by.iter().all(|b| placed.contains(b)));
        if ready.is_empty() {
            let circle: Vec<&str> = waiting.iter().map(|t| t.key.as_str()).collect();
            return Err(source.invalid(format!(
                "the blocked_by of tasks {} form a circle",
                circle.join(", ")
            )));
        }
        for task in ready {
            placed.insert(task.key.clone());
            ordered.push(TaskSpec {
                key: task.key,
                subject: task.subject,
                description: task.description,
                blocked_by: task.blocked_by,
                owner: task.owner,
            });
        }
        left = waiting;
    }
    Ok(ordered)
}

impl TeamFile {
    /// What a resume given no team file needs of each launch, the lead's and every member's
    /// (`store/relaunch.rs`).
    pub fn launches(&self) -> Launches {
        let mut launches = Launches::from([(
            self.lead.name.to_string(),
            MemberLaunch::of(&self.lead.env, &Rules::default()),
        )]);
        launches.extend(
            self.members
                .iter()
                .map(|spec| (spec.name.to_string(), spec.launch())),
        );
        launches
    }
}

impl MemberSpec {
    /// What a resume given no team file needs of its launch (`store/relaunch.rs`).
    pub fn launch(&self) -> MemberLaunch {
        MemberLaunch::of(&self.env, &self.permissions)
    }

    /// Checks a member's keys, from a team file or `spawn`'s flags, and applies the defaults the
    /// rest of the team gives them. A refusal names the key as `source` spells it.
    pub fn check(keys: MemberKeys, defaults: &Defaults<'_>, source: Source<'_>) -> Result<Self> {
        let name = Name::parse("member", &keys.name)
            .map_err(|err| source.invalid(err.message().to_owned()))?;
        if name.as_str() == PERSON {
            return Err(source.invalid(format!(
                "a member cannot be called {PERSON}: that is the person at the keyboard"
            )));
        }
        if keys.run_timeout_s > MAX_RUN_TIMEOUT_S {
            return Err(source.invalid(format!(
                "{} of {name} is {}; at most {MAX_RUN_TIMEOUT_S} (a year), or 0 for none",
                source.key("run_timeout_s"),
                keys.run_timeout_s
            )));
        }
        let paste_key = source.key("paste_format");
        let paste_format = keys
            .paste_format
            .as_deref()
            .map(PasteFormat::parse)
            .transpose()
            .map_err(|why| source.invalid(format!("{paste_key} of {name}: {why}")))?;
        let delivery = delivery_with(keys.delivery, paste_format.as_ref())
            .map_err(|why| source.invalid(format!("{paste_key} of {name}: {why}")))?;
        let command = argv(keys.command, name.as_str(), source)?;
        let resume_command = argv(keys.resume_command, name.as_str(), source)
            .map_err(|err| source.invalid(err.message().replace("command", "resume_command")))?;
        let profile = keys
            .profile
            .or_else(|| detect_profile(command.as_deref()))
            .unwrap_or(defaults.profile);
        if command.is_none() && profile == Profile::Generic {
            let refusal = source.invalid(format!(
                "member {name} needs a command: the generic profile has no default program"
            ));
            return Err(match source {
                Source::File(_) => refusal,
                Source::Flags => refusal.with_hint(format!("swarm spawn {name} -- PROGRAM ARGS…")),
            });
        }
        let host = keys
            .host
            .as_deref()
            .map(|host| Name::parse("host", host))
            .transpose()
            .map_err(|err| source.invalid(format!("host of {name}: {}", err.message())))?;
        let own = Rules::try_from(keys.permissions)
            .map_err(|why| source.invalid(format!("permissions of member {name}: {why}")))?;
        let permissions = defaults.permissions.and(&own);
        let watching = Watching::check(
            keys.idle_pattern,
            keys.needs_you_pattern,
            keys.stall_after,
            defaults.watching,
            name.as_str(),
            |key| source.key(key),
        )
        .map_err(|why| source.invalid(why))?;
        let restart = Restarts::check(
            keys.restart,
            keys.restart_max,
            defaults.restart,
            name.as_str(),
            |key| source.key(key),
        )
        .map_err(|why| source.invalid(why))?;
        let fence = Fencing::check(
            FenceKeys {
                sandbox: keys.sandbox,
                write: keys.sandbox_write,
                hide: keys.sandbox_hide,
                network: keys.sandbox_network,
            },
            defaults.fencing,
            defaults.base,
            |key| source.key(key),
            name.as_str(),
        )
        .map_err(|why| source.invalid(why))?
        .fence();
        let env = checked_env(keys.env, source.key("env"), name.as_str(), source)?;
        let env_policy = env_policy(
            EnvRules {
                clear: keys.env_clear,
                keep: keys.env_keep,
                remove: keys.env_remove,
            },
            defaults.env_policy,
            &env,
            name.as_str(),
            source,
        )?;
        Ok(Self {
            log_max: log_max(keys.log_max, source.key("log_max"), name.as_str(), source)?
                .or(defaults.log_max)
                .unwrap_or(DEFAULT_LOG_MAX),
            env,
            env_policy,
            cwd: keys.cwd.as_deref().map_or_else(
                || defaults.cwd.to_path_buf(),
                |cwd| resolve(defaults.base, Some(cwd)),
            ),
            name,
            command,
            profile,
            agent_type: keys.agent_type,
            model: keys.model,
            color: keys.color,
            plan_mode_required: keys.plan_mode_required,
            isolation: keys.isolation,
            prompt: keys.prompt,
            protocol: keys.protocol,
            delivery,
            paste_format,
            mcp: keys.mcp.unwrap_or(defaults.mcp),
            run_timeout_s: keys.run_timeout_s,
            host,
            permissions,
            asks_through_swarm: defaults.asks_through_swarm && profile == Profile::Claude,
            watching,
            resume_command,
            restart,
            fence,
        })
    }
}

/// The key serde's "unknown field `nmae`, expected one of `name`, `command`, …" most likely
/// meant, from those it lists.
fn meant_key(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("unknown field `")?;
    let (unknown, rest) = rest.split_once('`')?;
    let expected = rest.split_once("expected ")?.1;
    let known = expected.split('`').skip(1).step_by(2);
    closest(unknown, known)
}

fn resolve(base: &Path, cwd: Option<&Path>) -> PathBuf {
    match cwd {
        None => base.to_path_buf(),
        Some(cwd) => normalize(&base.join(cwd)),
    }
}

/// `/repo/teams/..` → `/repo`, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn argv(command: Option<Command>, who: &str, source: Source<'_>) -> Result<Option<Vec<String>>> {
    let argv = match command {
        None => return Ok(None),
        Some(Command::Argv(argv)) => argv,
        Some(Command::Line(line)) => shlex::split(&line)
            .ok_or_else(|| source.invalid(format!("the command of {who} has unbalanced quotes")))?,
    };
    if argv.first().is_none_or(String::is_empty) {
        return Err(source.invalid(format!("the command of {who} is empty")));
    }
    if argv.iter().any(|arg| arg.contains('\0')) {
        return Err(source.invalid(format!("the command of {who} contains a NUL byte")));
    }
    Ok(Some(argv))
}

/// A member's own `env_clear`, `env_keep` and `env_remove`, as written.
struct EnvRules {
    clear: Option<bool>,
    keep: BTreeSet<String>,
    remove: BTreeSet<String>,
}

/// A member's (or the lead's) rules over the team's, checked: the one check of the team file's
/// keys and of `spawn`'s `--env-clear`, `--env-keep` and `--env-remove`.
fn env_policy(
    own: EnvRules,
    team: &EnvPolicy,
    env: &BTreeMap<String, String>,
    who: &str,
    source: Source<'_>,
) -> Result<EnvPolicy> {
    let policy = EnvPolicy {
        clear: false,
        keep: own.keep,
        remove: own.remove,
    };
    // Only its own rules can contradict each other or its own `env`: a name the team removes
    // and the member sets is the member's own, and a name the team keeps and the member
    // removes is removed.
    check_policy(&policy, env).map_err(|why| source.invalid(format!("{who}: {why}")))?;
    let kept_by_itself = !policy.keep.is_empty();
    let policy = policy.over(own.clear, team);
    if kept_by_itself && !policy.clear {
        return Err(source.invalid(match source {
            Source::File(_) => format!("env_keep of {who} has no effect without env_clear = true"),
            Source::Flags => {
                "--env-keep has no effect without --env-clear (or the team file's env_clear = true)"
                    .to_owned()
            }
        }));
    }
    Ok(policy)
}

fn checked_env(
    env: BTreeMap<String, String>,
    key: &str,
    who: &str,
    source: Source<'_>,
) -> Result<BTreeMap<String, String>> {
    for (name, value) in &env {
        if name.is_empty() || name.contains(['=', '\0']) || value.contains('\0') {
            return Err(source.invalid(format!(
                "the {key} of {who} has an invalid variable {name:?}"
            )));
        }
    }
    Ok(env)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<TeamFile> {
        TeamFile::parse(Path::new("/repo/teams/t.toml"), text, Path::new("/work"))
    }

    #[test]
    fn a_budget_names_members_of_the_team_and_prices_are_amounts() {
        let file = parse(
            "name = \"t\"\n[budget]\nusd = 20\non_exceed = \"notify\"\n\
             [budget.members.bob]\ntokens = 1000\n\
             [prices.\"m\"]\ninput = 1.0\noutput = 2.0\ncache_write = 0.5\ncache_read = 0.1\n\
             [[member]]\nname = \"bob\"\ncommand = [\"sleep\", \"9\"]\n",
        )
        .unwrap();
        let budget = file.budget.unwrap();
        assert!(
            budget
                .team
                .usd
                .is_some_and(|usd| (usd - 20.0).abs() < f64::EPSILON)
        );
        assert_eq!(budget.on_exceed, crate::format::usage::OnExceed::Notify);
        assert_eq!(budget.members["bob"].tokens, Some(1000));
        assert!((file.prices["m"].output - 2.0).abs() < f64::EPSILON);
        for (text, refusal) in [
            (
                "[budget.members.carol]\nusd = 1\n",
                "[budget.members] names carol, who is not on the team",
            ),
            ("[budget]\nusd = -1\n", "[budget] usd of the team must be"),
            (
                "[prices.\"m\"]\ninput = -1.0\noutput = 0.0\ncache_write = 0.0\ncache_read = 0.0\n",
                "each price is dollars per million tokens",
            ),
            ("[budget]\ndollars = 1\n", "unknown field"),
        ] {
            let err = parse(&format!("name = \"t\"\n{text}")).unwrap_err();
            assert!(err.message().contains(refusal), "{text}: {}", err.message());
        }
    }

    /// The fields a derived `Deserialize` asks for: what the parser accepts, and refuses beside.
    fn fields_of<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
        use serde::de::{Error as _, Visitor, value::Error as DeError};

        struct Fields(&'static [&'static str]);
        struct Asked<'a>(&'a mut Fields);

        impl<'de> serde::Deserializer<'de> for Asked<'_> {
            type Error = DeError;

            fn deserialize_any<V: Visitor<'de>>(
                self,
                _: V,
            ) -> std::result::Result<V::Value, DeError> {
                Err(DeError::custom("not a struct"))
            }

            fn deserialize_struct<V: Visitor<'de>>(
                self,
                _: &'static str,
                fields: &'static [&'static str],
                _: V,
            ) -> std::result::Result<V::Value, DeError> {
                self.0.0 = fields;
                Err(DeError::custom("asked"))
            }

            serde::forward_to_deserialize_any! {
                bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
                byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
                identifier ignored_any
            }
        }

        let mut fields = Fields(&[]);
        let _ = T::deserialize(Asked(&mut fields));
        fields.0
    }

    /// swarm-team(5) is written from `KEYS`, and the parser refuses every key its structs lack:
    /// the two name the same keys, section by section, so the manual cannot drift from the parser.
    #[test]
    fn the_key_table_names_exactly_the_keys_the_parser_reads() {
        for (section, fields) in [
            (Section::Team, fields_of::<RawTeam>()),
            (Section::Lead, fields_of::<RawLead>()),
            (Section::Member, fields_of::<MemberKeys>()),
            (Section::Task, fields_of::<RawTask>()),
            (Section::Cluster, fields_of::<ClusterSpec>()),
            (Section::Notify, fields_of::<NotifyKeys>()),
        ] {
            let parsed: BTreeSet<&str> = fields.iter().copied().collect();
            let documented: BTreeSet<&str> = KEYS
                .iter()
                .filter(|doc| doc.section == section)
                .map(|doc| doc.key)
                .collect();
            assert!(!parsed.is_empty(), "{section:?}");
            assert_eq!(
                parsed, documented,
                "{section:?}: the parser's keys and KEYS differ"
            );
        }
        for doc in KEYS {
            assert_eq!(
                doc.spawn.is_some(),
                doc.section == Section::Member,
                "{}: every member key, and only those, says how spawn takes it",
                doc.key
            );
            assert!(
                !doc.kind.is_empty() && !doc.default.is_empty() && doc.meaning.ends_with('.'),
                "{}: type, default and a sentence of meaning",
                doc.key
            );
        }
    }

    #[test]
    fn a_refusal_names_the_key_as_its_source_spells_it() {
        let keys = |timeout| MemberKeys {
            name: "a".into(),
            command: Some(Command::Argv(vec!["x".into()])),
            run_timeout_s: timeout,
            ..MemberKeys::default()
        };
        let defaults = Defaults {
            profile: Profile::Generic,
            cwd: Path::new("/work"),
            base: Path::new("/work"),
            log_max: None,
            env_policy: &EnvPolicy::default(),
            permissions: &Rules::default(),
            asks_through_swarm: false,
            mcp: false,
            watching: &Watching::default(),
            restart: Restarts::default(),
            fencing: &Fencing::default(),
        };
        let err = MemberSpec::check(keys(u64::MAX), &defaults, Source::Flags).unwrap_err();
        assert_eq!(err.kind(), crate::error::ErrorKind::Usage);
        assert!(
            err.message().starts_with("--run-timeout of a is "),
            "{}",
            err.message()
        );
        let err = MemberSpec::check(
            keys(u64::MAX),
            &defaults,
            Source::File(Path::new("/t.toml")),
        )
        .unwrap_err();
        assert!(
            err.message().starts_with("/t.toml: run_timeout_s of a is "),
            "{}",
            err.message()
        );
        let spec = MemberSpec::check(keys(60), &defaults, Source::Flags).unwrap();
        assert_eq!((spec.run_timeout_s, spec.log_max), (60, DEFAULT_LOG_MAX));
        assert_eq!(spec.cwd, Path::new("/work"));
    }

    /// `spawn`'s `--env-*` flags are checked as a `[[member]]` table's keys are, over the team's
    /// rules, and a refusal names the flags.
    #[test]
    fn spawn_env_flags_go_through_the_member_check() {
        let team = EnvPolicy {
            clear: true,
            keep: BTreeSet::from(["PATH".to_owned()]),
            remove: BTreeSet::from(["AWS_SECRET_ACCESS_KEY".to_owned()]),
        };
        let defaults = Defaults {
            profile: Profile::Generic,
            cwd: Path::new("/work"),
            base: Path::new("/work"),
            log_max: None,
            env_policy: &team,
            permissions: &Rules::default(),
            asks_through_swarm: false,
            mcp: false,
            watching: &Watching::default(),
            restart: Restarts::default(),
            fencing: &Fencing::default(),
        };
        let keys = |clear: Option<bool>, keep: &[&str], remove: &[&str]| MemberKeys {
            name: "a".into(),
            command: Some(Command::Argv(vec!["x".into()])),
            env_clear: clear,
            env_keep: keep.iter().map(|k| (*k).to_owned()).collect(),
            env_remove: remove.iter().map(|k| (*k).to_owned()).collect(),
            ..MemberKeys::default()
        };
        let spec =
            MemberSpec::check(keys(None, &["HOME"], &["K"]), &defaults, Source::Flags).unwrap();
        assert!(spec.env_policy.clear, "the team's env_clear holds");
        assert!(spec.env_policy.keeps("HOME") && spec.env_policy.keeps("PATH"));
        assert!(!spec.env_policy.keeps("K") && !spec.env_policy.keeps("AWS_SECRET_ACCESS_KEY"));

        let open = Defaults {
            env_policy: &EnvPolicy::default(),
            ..defaults
        };
        let err = MemberSpec::check(keys(None, &["HOME"], &[]), &open, Source::Flags).unwrap_err();
        assert_eq!(err.kind(), crate::error::ErrorKind::Usage);
        assert!(
            err.message()
                .starts_with("--env-keep has no effect without --env-clear"),
            "{}",
            err.message()
        );
        let err =
            MemberSpec::check(keys(Some(true), &["X"], &["X"]), &open, Source::Flags).unwrap_err();
        assert_eq!(err.kind(), crate::error::ErrorKind::Usage);
    }

    #[test]
    fn full_example_parses() {
        let file = parse(
            r#"
name = "review"
description = "two reviewers and a fixer"
layout = "main-vertical"
max_concurrent = 8
dashboard = true

[lead]
command = ["claude", "--model", "opus", "--permission-mode", "acceptEdits"]
profile = "claude"
inherit = ["--model", "--permission-mode", "--settings", "--plugin-dir"]

[[member]]
name = "security"
agent_type = "reviewer"
model = "sonnet"
plan_mode_required = true
isolation = "worktree"
prompt = "Review the auth changes for injection risks."
protocol = "native"
delivery = "pull"
run_timeout_s = 0
env = { RUST_LOG = "info" }
cwd = "sub"
"#,
        )
        .unwrap();
        assert_eq!(file.name.as_str(), "review");
        assert!(file.dashboard);
        assert_eq!(file.lead.name.as_str(), "team-lead");
        assert_eq!(file.lead.profile, Profile::Claude);
        let member = &file.members[0];
        assert_eq!(member.isolation, Isolation::Worktree);
        assert_eq!(member.cwd, Path::new("/repo/teams/sub"));
        assert_eq!(
            file.lead.cwd,
            Path::new("/work"),
            "members default to where swarm up runs"
        );
        assert_eq!(member.env["RUST_LOG"], "info");
    }

    #[test]
    fn unknown_keys_are_refused_with_their_line() {
        let err = parse("name = \"t\"\n\n[[member]]\nname = \"a\"\ncommand = \"x\"\nbogus = 1\n")
            .unwrap_err();
        assert_eq!(err.kind(), crate::error::ErrorKind::Usage);
        assert!(
            err.message().starts_with("/repo/teams/t.toml:6:"),
            "{}",
            err.message()
        );
        assert!(err.message().contains("bogus"), "{}", err.message());
        assert!(!err.message().contains('\n'));
    }

    #[test]
    fn bad_names_and_duplicates_are_refused() {
        for text in [
            "name = \"../x\"",
            "name = \"t\"\n[[member]]\nname = \"a/b\"\ncommand = \"x\"",
            "name = \"t\"\n[[member]]\nname = \"a\"\ncommand = \"x\"\n[[member]]\nname = \"a\"\ncommand = \"x\"",
            "name = \"t\"\n[[member]]\nname = \"team-lead\"\ncommand = \"x\"",
            "name = \"t\"\n[lead]\nprofile = \"generic\"\n[[member]]\nname = \"a\"",
            "name = \"t\"\nmax_concurrent = 0",
            "name = \"t\"\n[[member]]\nname = \"a\"\ncommand = []",
            "name = \"t\"\n[[member]]\nname = \"user\"\ncommand = \"x\"",
            "name = \"t\"\n[lead]\nname = \"user\"",
        ] {
            let err = parse(text).unwrap_err();
            assert_eq!(err.kind(), crate::error::ErrorKind::Usage, "{text}");
        }
    }

    #[test]
    fn layouts_are_checked_before_tmux_sees_them() {
        let team = |layout: &str| {
            parse(&format!(
                "name = \"t\"\nlayout = \"{layout}\"\n[lead]\ncommand = \"x\"\n[[member]]\nname = \"a\"\ncommand = \"x\""
            ))
        };
        for bad in [
            "grid",
            "",
            "main-vertical-mirrored",
            "537c,200x60,0,0{100x60,0,0,0,99x60,101,0,1}",
        ] {
            let err = team(bad).unwrap_err();
            assert_eq!(err.kind(), crate::error::ErrorKind::Usage, "{bad}");
            assert!(
                err.message().starts_with("/repo/teams/t.toml: layout"),
                "{}",
                err.message()
            );
        }
        assert_eq!(
            team("main-vertical").unwrap().layout,
            Some(Layout::Named("main-vertical"))
        );
        let two = "537b,200x60,0,0{100x60,0,0,0,99x60,101,0,1}";
        assert_eq!(team(two).unwrap().layout.unwrap().cells(), Some(2));
        let err = parse(&format!(
            "name = \"t\"\nlayout = \"{two}\"\n[[member]]\nname = \"a\"\ncommand = \"x\""
        ))
        .unwrap_err();
        assert!(
            err.message()
                .ends_with("the layout string describes 2 panes but the team has 1"),
            "{}",
            err.message()
        );
    }

    #[test]
    fn log_bounds_are_sizes_team_wide_or_per_member() {
        let file = parse(
            "name = \"t\"\nlog_max = \"2MiB\"\n[lead]\ncommand = \"x\"\nlog_max = 4096\n\
             [[member]]\nname = \"a\"\ncommand = \"x\"\n[[member]]\nname = \"b\"\ncommand = \"x\"\nlog_max = \"64 KiB\"",
        )
        .unwrap();
        assert_eq!(file.log_max, Some(2 << 20));
        assert_eq!(file.lead.log_max, 4096);
        assert_eq!(file.members[0].log_max, 2 << 20);
        assert_eq!(file.members[1].log_max, 64 << 10);
        let plain = parse("name = \"t\"\n[[member]]\nname = \"a\"\ncommand = \"x\"").unwrap();
        assert_eq!(plain.members[0].log_max, DEFAULT_LOG_MAX);
        assert_eq!(plain.log_max, None);
        for bad in [
            "\"12 parsecs\"",
            "\"lots\"",
            "100",
            "\"99999999999999GiB\"",
            "-1",
        ] {
            let err = parse(&format!("name = \"t\"\nlog_max = {bad}")).unwrap_err();
            assert_eq!(err.kind(), crate::error::ErrorKind::Usage, "{bad}");
        }
        assert_eq!(parse_size("1MB"), Ok(1_000_000));
        assert_eq!(parse_size("3g"), Ok(3 << 30));
    }

    #[test]
    fn run_timeouts_past_a_year_are_refused() {
        let team = |secs: u64| {
            parse(&format!(
                "name = \"t\"\n[[member]]\nname = \"a\"\ncommand = \"x\"\nrun_timeout_s = {secs}"
            ))
        };
        assert_eq!(
            team(MAX_RUN_TIMEOUT_S).unwrap().members[0].run_timeout_s,
            MAX_RUN_TIMEOUT_S
        );
        for absurd in [MAX_RUN_TIMEOUT_S + 1, i64::MAX.unsigned_abs()] {
            let err = team(absurd).unwrap_err();
            assert_eq!(err.kind(), crate::error::ErrorKind::Usage, "{absurd}");
            assert_eq!(
                err.message(),
                format!(
                    "/repo/teams/t.toml: run_timeout_s of a is {absurd}; at most 31536000 (a year), or 0 for none"
                )
            );
        }
    }

    #[test]
    fn paste_formats_are_checked_and_mean_paste_delivery() {
        let team = |keys: &str| {
            parse(&format!(
                "name = \"t\"\n[[member]]\nname = \"py\"\ncommand = \"python3 -i\"\n{keys}"
            ))
        };
        let raw = team("paste_format = \"raw\"").unwrap();
        assert_eq!(raw.members[0].delivery, Delivery::Paste);
        assert_eq!(raw.members[0].paste_format, Some(PasteFormat::Raw));
        let template = team("delivery = \"paste\"\npaste_format = \"# {from}\\n{text}\"").unwrap();
        assert_eq!(
            template.members[0].paste_format.as_ref().unwrap().as_str(),
            "# {from}\n{text}"
        );
        let plain = team("delivery = \"paste\"").unwrap();
        assert_eq!(plain.members[0].paste_format, None);
        assert_eq!(team("").unwrap().members[0].delivery, Delivery::Pull);
        for (keys, why) in [
            (
                "paste_format = \"{frm}: {text}\"",
                "/repo/teams/t.toml: paste_format of py: \"{frm}: {text}\" has an unknown placeholder {frm}",
            ),
            (
                "paste_format = \"Raw\"",
                "/repo/teams/t.toml: paste_format of py: \"Raw\" is not a paste format",
            ),
            (
                "delivery = \"pull\"\npaste_format = \"raw\"",
                "/repo/teams/t.toml: paste_format of py: \"raw\" needs delivery = \"paste\", not \"pull\"",
            ),
        ] {
            let err = team(keys).unwrap_err();
            assert_eq!(err.kind(), crate::error::ErrorKind::Usage, "{keys}");
            assert!(err.message().starts_with(why), "{}", err.message());
        }
    }

    #[test]
    fn env_rules_are_team_wide_or_a_members_own_and_checked() {
        let file = parse(
            "name = \"t\"\nenv_remove = [\"AWS_SECRET_ACCESS_KEY\"]\nenv_keep = [\"PATH\"]\n\
             [lead]\ncommand = \"x\"\n\
             [[member]]\nname = \"a\"\ncommand = \"x\"\nenv_remove = [\"ANTHROPIC_API_KEY\"]\n\
             [[member]]\nname = \"b\"\ncommand = \"x\"\nenv_clear = true\nenv_keep = [\"HOME\"]\n",
        )
        .unwrap();
        let names = |set: &BTreeSet<String>| set.iter().cloned().collect::<Vec<_>>();
        assert!(!file.lead.env_policy.clear);
        assert_eq!(
            names(&file.lead.env_policy.remove),
            ["AWS_SECRET_ACCESS_KEY"]
        );
        let a = &file.members[0].env_policy;
        assert_eq!(
            names(&a.remove),
            ["ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY"]
        );
        let b = &file.members[1].env_policy;
        assert!(b.clear);
        assert_eq!(names(&b.keep), ["HOME", "PATH"]);
        assert_eq!(file.env_policy.remove.len(), 1);

        // Between the team and a member there is no contradiction: a name removed anywhere is
        // removed, and a member's own variable is set whatever the team removes.
        let file = parse(
            "name = \"t\"\nenv_clear = true\nenv_keep = [\"K\", \"PATH\"]\nenv_remove = [\"T\"]\n\
             [[member]]\nname = \"a\"\ncommand = \"x\"\nenv_remove = [\"K\"]\nenv = { T = \"own\" }\n",
        )
        .unwrap();
        let a = &file.members[0];
        assert!(!a.env_policy.keeps("K") && a.env_policy.keeps("PATH"));
        assert_eq!(a.env["T"], "own");

        for bad in [
            "name = \"t\"\n[[member]]\nname = \"a\"\ncommand = \"x\"\nenv_keep = [\"PATH\"]",
            "name = \"t\"\nenv_keep = [\"PATH\"]\n[[member]]\nname = \"a\"\ncommand = \"x\"",
            "name = \"t\"\n[[member]]\nname = \"a\"\ncommand = \"x\"\nenv = { K = \"v\" }\nenv_remove = [\"K\"]",
            "name = \"t\"\nenv_clear = true\nenv_keep = [\"X\"]\nenv_remove = [\"X\"]",
            "name = \"t\"\n[lead]\nenv_remove = [\"A=B\"]",
            "name = \"t\"\n[[member]]\nname = \"a\"\ncommand = \"x\"\nenv_clear = \"yes\"",
        ] {
            let err = parse(bad).unwrap_err();
            assert_eq!(err.kind(), crate::error::ErrorKind::Usage, "{bad}");
        }
    }

    #[test]
    fn relative_cwd_is_relative_to_the_team_file() {
        let file = parse("name = \"t\"\ncwd = \"..\"\n[[member]]\nname = \"a\"\ncommand = \"x\"\ncwd = \"../other\"").unwrap();
        assert_eq!(file.lead.cwd, Path::new("/repo"));
        assert_eq!(file.members[0].cwd, Path::new("/repo/other"));
    }

    #[test]
    fn command_strings_split_like_a_shell() {
        let file = parse(
            "name = \"t\"\n[[member]]\nname = \"a\"\ncommand = \"bash -c 'echo hi; exit 3'\"",
        )
        .unwrap();
        assert_eq!(
            file.members[0].command.as_deref().unwrap(),
            ["bash", "-c", "echo hi; exit 3"]
        );
    }
}
