//! `swarm status [TEAM]`: every member with its pane, pid, state, activity, exit code, unread
//! count, whether it verifies the lead's messages, last activity and current task, plus anything
//! moved aside from an inbox, and the task board's counts.

use std::fs;
use std::path::Path;
use std::time::Duration;

use clap_complete::engine::ArgValueCandidates;
use serde::Serialize;

use crate::base::clock;
use crate::base::text::count;
use crate::cli::complete;
use crate::cli::context::Context;
use crate::cli::output::{self, Report, Table};
use crate::cli::render;
use crate::cluster::fleet::NodeSeen;
use crate::error::Result;
use crate::format::config::{Member, TeamConfig};
use crate::format::settings::Fence;
use crate::format::task::Status;
use crate::format::usage::{Spend, token_count};
use crate::member::ending;
use crate::member::liveness::Seen;
use crate::member::permission::{self, Ask};
use crate::store::activity;
use crate::store::mailbox::SetAside;
use crate::store::tasks::{Board, TaskList};
use crate::store::team::Team;
use crate::store::usage::Tally;

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one document:
  {"team", "description", "lead", "members": [{"name", "agentId", "pane", "pid", "state",
    "exitCode", "restarts", "unread", "lastActivity", "lastActivityMs", "verifies",
    "setAside": [{"path", "reason"}], "task": {"id", "subject"}, "pendingAsks": [{"requestId",
    "tool", "askedAt", "askedAtMs"}], "activity", "activitySince", "activitySinceMs",
    "activityWhy", "sandbox"?: {"write", "hide", "network"}, "cost"}],
   "tasks": {"pending", "inProgress", "completed"}, "interrupted", "cost"}
"cost" is {"tokens": {"input", "output", "cacheWrite", "cacheRead"}, "usd", "unpriced"}, as
`swarm cost --json` gives it: the member's, and the whole team's.
"interrupted" is true when nothing of the team runs and a member's run was cut short (its tmux
server or supervisor gone, or ended by a hangup or a signal): `swarm resume TEAM` resumes it.
"restarts" counts the times its restart policy started its program again in this run ("state"
is "restarting" while it waits to); the table shows them beside its state.
"state" is as the table shows it ("-" for never launched), except that the table shows a member
with "pendingAsks" (permission asks nobody has answered, oldest first; `swarm permission list`
has them whole) as "waits on permission (TOOL) AGE"; "pane" is null before there is one.
In a team across hosts each member also has "host", and the document "node": {"host",
"connected"}, this host's node: a member on another host is "unreachable" while its node is
not seen, or this host's node is disconnected, and its "unread" is null (its inbox is there).
"activity" is what a running member is doing: "starting", "working", "idle", "needs-you" or
"stalled", since "activitySince", because of "activityWhy" (the table's ACTIVITY shows the state
and for how long); null for a member whose program does not run, or on another host.
"task" is the member's in_progress task (the lowest id if several), null when none; "tasks"
counts the board's tasks (Claude Code's internal ones aside), all 0 when there is no list.
"sandbox" is there for a fenced member only: the paths it may write besides its own directory,
those hidden besides what every fence hides, and its network ("full" or "none"); the table then
has a FENCED column.
Times are RFC 3339 with their epoch milliseconds beside (swarm(1), JSON OUTPUT)."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// The team [default: --team, SWARM_TEAM, the only team, or the only one running]
    // Its own id: sharing the global --team's would let an empty SWARM_TEAM fill it.
    #[arg(id = "team_arg", value_name = "TEAM", add = ArgValueCandidates::new(complete::teams))]
    pub(crate) team: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MemberStatus {
    pub(crate) name: String,
    pub(crate) agent_id: String,
    /// The host it runs on, in a team across hosts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) host: Option<String>,
    /// The tmux pane id, `null` before the member has one.
    pub(crate) pane: Option<String>,
    pub(crate) pid: Option<i32>,
    pub(crate) state: &'static str,
    pub(crate) exit_code: Option<i32>,
    /// How many times its restart policy has started its program again in this run.
    pub(crate) restarts: u32,
    /// `null` for a member on another host: its inbox is there.
    pub(crate) unread: Option<usize>,
    /// The last message, output or state change (RFC 3339), and in epoch milliseconds.
    pub(crate) last_activity: Option<String>,
    pub(crate) last_activity_ms: Option<u64>,
    /// Whether the member verifies the lead's messages: it was launched with a key.
    pub(crate) verifies: bool,
    pub(crate) set_aside: Vec<SetAside>,
    /// The member's in_progress task, the lowest id if it has several.
    pub(crate) task: Option<CurrentTask>,
    /// The permission asks it waits on, oldest first.
    pub(crate) pending_asks: Vec<PendingAsk>,
    /// What its program is doing, while it runs, since when and why.
    pub(crate) activity: Option<&'static str>,
    pub(crate) activity_since: Option<String>,
    pub(crate) activity_since_ms: Option<u64>,
    pub(crate) activity_why: Option<String>,
    /// Its sandbox, for a fenced member ("Fencing members").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) sandbox: Option<Fence>,
    /// Its tokens and what they cost, from the team's usage ledger.
    pub(crate) cost: Spend,
}

/// A permission ask a member waits on (`swarm permission list` shows it whole).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PendingAsk {
    pub(crate) request_id: String,
    pub(crate) tool: String,
    pub(crate) asked_at: String,
    pub(crate) asked_at_ms: Option<u64>,
}

impl PendingAsk {
    fn of(ask: &Ask) -> Self {
        Self {
            request_id: ask.request_id().to_owned(),
            tool: ask.tool().to_owned(),
            asked_at: ask.asked_at.clone(),
            asked_at_ms: ask.asked_at_ms(),
        }
    }
}

/// A member's current task.
#[derive(Debug, Serialize)]
pub(crate) struct CurrentTask {
    pub(crate) id: String,
    pub(crate) subject: String,
}

/// How many of the board's tasks are in each status.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskCounts {
    pub(crate) pending: usize,
    pub(crate) in_progress: usize,
    pub(crate) completed: usize,
}

impl TaskCounts {
    fn of(board: &Board) -> Self {
        let mut counts = Self::default();
        for task in board.tasks.values().filter(|t| !t.is_internal()) {
            match task.status() {
                Status::Pending => counts.pending += 1,
                Status::InProgress => counts.in_progress += 1,
                Status::Completed => counts.completed += 1,
            }
        }
        counts
    }

    fn total(&self) -> usize {
        self.pending + self.in_progress + self.completed
    }
}

/// The member's current task on `board`.
fn current_task(board: &Board, member: &str) -> Option<CurrentTask> {
    board
        .tasks
        .values()
        .find(|t| !t.is_internal() && t.status() == Status::InProgress && t.owner() == Some(member))
        .map(|t| CurrentTask {
            id: t.id().to_string(),
            subject: t.subject().to_owned(),
        })
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let team = ctx.team_or(args.team.as_deref())?;
    let fleet = ctx.fleet();
    let observation = fleet.observe(&team)?;
    let observed = &observation.observed;
    let config = &observed.config;
    // A member that ended still holding tasks gives them back before the board is shown.
    if let Err(err) = ending::finish_releases(&team, &fleet, config, false) {
        tracing::warn!("tasks of members that ended are not all returned yet: {err}");
    }
    let list = TaskList::new(&ctx.home, team.name());
    let board = if list.dir().is_dir() {
        list.read()?
    } else {
        Board::default()
    };
    let asks = permission::pending_as_seen(&team, observed)?;
    let activities = activity::read(team.paths())?;
    let mut tally = Tally::default();
    tally.read_on(team.paths())?;
    let rows = observed
        .members()
        .map(|(member, seen)| {
            let unread = observation.unread(&team, member)?;
            let mut row = member_status(&team, &board, member, seen, unread);
            row.cost = tally.spend(&member.name, &config.prices);
            let runs = matches!(seen, Seen::Recorded(state) if !state.is_final());
            if let Some(current) = activities.get(&member.name).filter(|_| runs) {
                row.activity = Some(current.state.as_str());
                row.activity_since = render::time(Some(current.since));
                row.activity_since_ms = Some(current.since);
                row.activity_why.clone_from(&current.why);
            }
            row.pending_asks = asks
                .iter()
                .filter(|ask| ask.member() == member.name)
                .map(PendingAsk::of)
                .collect();
            Ok(row)
        })
        .collect::<Result<Vec<_>>>()?;
    let counts = TaskCounts::of(&board);
    let launched = observed
        .members()
        .filter(|(_, seen)| *seen != Seen::NotStarted)
        .count();
    ctx.report(&TeamStatus {
        team: &config.name,
        description: config.description.as_deref(),
        lead: config.lead_name(),
        members: rows,
        tasks: counts,
        node: observation.node.as_ref(),
        interrupted: observed.interrupted(),
        cost: tally.total(&config.prices),
        config,
        launched,
    })
}

/// The team, each member and the task counts; across hosts, this host's node.
#[derive(Serialize)]
struct TeamStatus<'a> {
    team: &'a str,
    description: Option<&'a str>,
    lead: &'a str,
    members: Vec<MemberStatus>,
    tasks: TaskCounts,
    #[serde(skip_serializing_if = "Option::is_none")]
    node: Option<&'a NodeSeen>,
    interrupted: bool,
    /// The whole team's tokens and what they cost.
    cost: Spend,
    #[serde(skip)]
    config: &'a TeamConfig,
    #[serde(skip)]
    launched: usize,
}

impl Report for TeamStatus<'_> {
    fn text(&self) -> Result<()> {
        print(
            self.config,
            self.launched,
            &self.members,
            &self.tasks,
            &self.cost,
        )?;
        if self.interrupted {
            output::line(interrupted_line(self.team))?;
        }
        if let Some(node) = self.node.filter(|node| !node.connected) {
            let here = node.host.as_deref().unwrap_or("this host");
            output::line(format!(
                "! {here} is disconnected: its swarm node does not run or does not reach the NATS server; members on other hosts show as unreachable"
            ))?;
        }
        Ok(())
    }
}

/// What `status` says of an interrupted team (docs/ARCHITECTURE.md, "Resuming a team").
pub(crate) fn interrupted_line(team: &str) -> String {
    format!(
        "! team {team} was interrupted: resume it with `swarm resume {team}`, or start it afresh with `swarm up --fresh TEAMFILE`"
    )
}

fn member_status(
    team: &Team,
    board: &Board,
    member: &Member,
    seen: Seen,
    unread: Option<usize>,
) -> MemberStatus {
    let mailbox = team.mailbox(&member.name);
    let file_times = [
        mailbox.inbox_path().to_path_buf(),
        mailbox.history_path().to_path_buf(),
        team.paths().log(&member.name),
    ]
    .into_iter()
    .filter_map(|path| modified_ms(&path));
    let record_times = [Some(member.joined_at), member.started_at, member.ended_at]
        .into_iter()
        .flatten();
    let last_activity = file_times.chain(record_times).filter(|ms| *ms > 0).max();
    MemberStatus {
        name: member.name.clone(),
        agent_id: member.agent_id.clone(),
        host: member.host.clone(),
        pane: Some(member.tmux_pane_id.clone()).filter(|pane| !pane.is_empty()),
        pid: member.pid,
        state: seen.label(),
        exit_code: member.exit_code,
        restarts: member.restarts.unwrap_or(0),
        unread,
        last_activity: render::time(last_activity),
        last_activity_ms: last_activity,
        verifies: member.lead_verify_key.is_some(),
        set_aside: mailbox.set_aside(),
        task: current_task(board, &member.name),
        pending_asks: Vec::new(),
        activity: None,
        activity_since: None,
        activity_since_ms: None,
        activity_why: None,
        sandbox: member.sandbox.clone(),
        cost: Spend::default(),
    }
}

/// The member's activity and how long it has been so: `working 12s`.
fn activity_cell(row: &MemberStatus, now: u64) -> String {
    match (row.activity, row.activity_since_ms) {
        (Some(state), Some(since)) => {
            let held = Duration::from_secs(now.saturating_sub(since) / 1000);
            format!("{state} {}", clock::span(held))
        }
        _ => "-".to_owned(),
    }
}

/// The member's state, or the oldest permission ask it waits on and for how long; and how many
/// times it was restarted.
fn state_cell(row: &MemberStatus, now: u64) -> String {
    let restarted = match row.restarts {
        0 => String::new(),
        1 => " (restarted once)".to_owned(),
        n => format!(" (restarted {n} times)"),
    };
    let Some(oldest) = row.pending_asks.first() else {
        return format!("{}{restarted}", row.state);
    };
    let mut cell = format!("waits on permission ({})", oldest.tool);
    if let Some(ms) = oldest.asked_at_ms {
        let waited = Duration::from_millis(now.saturating_sub(ms));
        cell = format!("{cell} {}", clock::human_duration(waited));
    }
    if row.pending_asks.len() > 1 {
        cell = format!("{cell} +{}", row.pending_asks.len() - 1);
    }
    format!("{cell}{restarted}")
}

fn modified_ms(path: &Path) -> Option<u64> {
    fs::metadata(path).ok()?.modified().ok().map(clock::to_ms)
}

fn print(
    config: &TeamConfig,
    launched: usize,
    rows: &[MemberStatus],
    counts: &TaskCounts,
    cost: &Spend,
) -> Result<()> {
    let mut heading = format!(
        "team {} · {}",
        config.name,
        count(rows.len(), "member", "members")
    );
    if !cost.tokens.is_zero() {
        heading = format!(
            "{heading} · {} ({} tokens)",
            cost.money(),
            token_count(cost.tokens.total())
        );
    }
    if launched > 0 {
        heading = format!("{heading} · {launched} launched");
    }
    if counts.total() > 0 {
        heading = format!(
            "{heading} · tasks: {} pending, {} in progress, {} completed",
            counts.pending, counts.in_progress, counts.completed
        );
    }
    if let Some(description) = &config.description {
        heading = format!("{heading} · {description}");
    }
    output::line(heading)?;
    let now = clock::now_ms();
    // The HOST column only for a team across hosts: one host's table stays as it was.
    let spread = rows.iter().any(|row| row.host.is_some());
    // The FENCED column only when a member is fenced.
    let fencing = rows.iter().any(|row| row.sandbox.is_some());
    let mut header = vec![
        "NAME",
        "PANE",
        "PID",
        "STATE",
        "ACTIVITY",
        "EXIT",
        "UNREAD",
        "VERIFIES",
        "LAST ACTIVITY",
        "TOKENS",
        "COST",
        "TASK",
    ];
    if spread {
        header.insert(1, "HOST");
    }
    if fencing {
        header.insert(header.len() - 2, "FENCED");
    }
    let mut table = Table::new(&header);
    for row in rows {
        let mut cells = vec![
            row.name.clone(),
            row.pane.clone().unwrap_or_else(|| "-".into()),
            row.pid.map_or_else(|| "-".into(), |pid| pid.to_string()),
            state_cell(row, now),
            activity_cell(row, now),
            row.exit_code
                .map_or_else(|| "-".into(), |code| code.to_string()),
            row.unread.map_or_else(|| "-".into(), |n| n.to_string()),
            if row.verifies { "yes" } else { "no" }.to_owned(),
            row.last_activity_ms
                .map_or_else(|| "-".into(), |ms| clock::ago(ms, now)),
            token_count(row.cost.tokens.total()),
            row.cost.money(),
            row.task
                .as_ref()
                .map_or_else(|| "-".into(), |t| format!("{} {}", t.id, t.subject)),
        ];
        if spread {
            cells.insert(1, row.host.clone().unwrap_or_else(|| "-".into()));
        }
        if fencing {
            let at = cells.len() - 2;
            cells.insert(at, Fence::shown(row.sandbox.as_ref()).to_owned());
        }
        table.row(cells);
    }
    table.print()?;
    for row in rows {
        for aside in &row.set_aside {
            output::line(format!(
                "! {}: {} moved aside to {}",
                row.name,
                aside.reason,
                aside.path.display()
            ))?;
        }
    }
    Ok(())
}
