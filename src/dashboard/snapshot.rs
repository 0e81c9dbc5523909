//! The team as one look shows it: a row per member, the pending decisions, the board. Taken
//! after every change the watcher reports and on the clock's tick; it never fails: a team that
//! is gone is shown as gone, and what cannot be read of one member is a warning on its row.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::SystemTime;

use crate::base::clock;
use crate::cluster::fleet::Fleet;
use crate::format::config::{Member, TeamConfig};
use crate::format::event::Activity;
use crate::format::settings::{Color, Fence};
use crate::format::task::Status;
use crate::format::usage::token_count;
use crate::member::liveness::Seen;
use crate::policy;
use crate::store::activity;
use crate::store::tasks::TaskList;
use crate::store::team::Team;
use crate::store::usage::Tally;

use super::decisions::{self, Decision};
use super::feed::{Feed, one_line};
use crate::member::permission;

/// Where the team is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Nothing was launched yet.
    NotStarted,
    /// A member may still be running.
    Running,
    /// Every member launched has ended.
    Ended,
    /// Its folder is gone: removed (`rm`, `down --rm`) while the dashboard ran.
    Gone,
}

impl Phase {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::NotStarted => "not started",
            Self::Running => "running",
            Self::Ended => "ended",
            Self::Gone => "gone",
        }
    }
}

/// One member's row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Row {
    pub(crate) name: String,
    /// The host it runs on, in a team across hosts.
    pub(crate) host: Option<String>,
    /// It runs on another host: its pane and log are there, not here.
    pub(crate) remote: bool,
    pub(crate) color: Option<Color>,
    /// Its program's name, `-` for a member that runs none.
    pub(crate) program: String,
    /// Whether it is fenced, as `status` shows it (`Fence::shown`); `None` when it is not.
    pub(crate) fenced: Option<&'static str>,
    /// The model it was given, when one was.
    pub(crate) model: Option<String>,
    /// `queued`, `starting`, `running`, `exited`, `failed`, `killed`, or what `status` shows for
    /// a member it cannot trust (`vanished`, …).
    pub(crate) state: String,
    pub(crate) live: bool,
    /// What its program is doing, as recorded ("Activity and events"); `None` when it does not
    /// run here.
    pub(crate) activity: Option<Doing>,
    pub(crate) started_ms: Option<u64>,
    pub(crate) ended_ms: Option<u64>,
    pub(crate) timeout_s: Option<u64>,
    pub(crate) unread: usize,
    pub(crate) last_in_ms: Option<u64>,
    pub(crate) last_out_ms: Option<u64>,
    /// `<id> <subject>` of its task in progress.
    pub(crate) task: Option<String>,
    /// For a worktree member: its branch, lines added and removed.
    pub(crate) worktree: Option<(String, u64, u64)>,
    /// Its pane on this host's tmux server: none for a member on another host, whose pane is on
    /// that host's.
    pub(crate) pane: Option<String>,
    /// What went wrong reading it, or what was moved aside from its inbox.
    pub(crate) warning: Option<String>,
    /// Its tokens, `12.3k`, and what they cost, `$0.42` (`?` unpriced), from the usage ledger.
    pub(crate) tokens: String,
    pub(crate) cost: String,
}

/// A member's recorded activity, since when and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Doing {
    pub(crate) state: Activity,
    pub(crate) since_ms: u64,
    pub(crate) why: Option<String>,
}

/// One task of the board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TaskRow {
    pub(crate) id: u64,
    pub(crate) status: Status,
    pub(crate) owner: Option<String>,
    pub(crate) subject: String,
    pub(crate) blocked_by: Vec<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Snapshot {
    pub(crate) team: String,
    pub(crate) lead: String,
    pub(crate) phase: Option<Phase>,
    pub(crate) rows: Vec<Row>,
    pub(crate) decisions: Vec<Decision>,
    /// The board, once the team has a task list.
    pub(crate) tasks: Option<Vec<TaskRow>>,
    /// Problems of the team as a whole.
    pub(crate) warnings: Vec<String>,
    /// The team spans hosts: the table has a HOST column.
    pub(crate) hosts: bool,
    /// In a team across hosts, this host's name (`this host` when its node has none) while its
    /// node is not running or not connected.
    pub(crate) disconnected: Option<String>,
    /// The tmux server the panes are on.
    pub(crate) socket: Option<PathBuf>,
    /// What the team spent, `$1.20 · 45.0k tokens`, once it has spent anything.
    pub(crate) cost: Option<String>,
    /// When it was taken, by swarm's clock.
    pub(crate) now_ms: u64,
}

impl Snapshot {
    pub(crate) fn phase(&self) -> Phase {
        self.phase.unwrap_or(Phase::NotStarted)
    }

    /// Takes a look at `team`, wherever its members run. `worktrees` holds the last look at each
    /// worktree member's changes.
    pub(crate) fn take(
        team: &Team,
        fleet: &Fleet,
        feed: &Feed,
        worktrees: &HashMap<String, (String, u64, u64)>,
        usage: &mut Tally,
    ) -> Self {
        let now_ms = clock::now_ms();
        let mut snapshot = Self {
            team: team.name().to_owned(),
            now_ms,
            ..Self::default()
        };
        if !team.paths().config().exists() {
            snapshot.phase = Some(Phase::Gone);
            return snapshot;
        }
        let observation = match fleet.observe(team) {
            Ok(observation) => observation,
            Err(err) => {
                snapshot.phase = Some(if team.paths().config().exists() {
                    Phase::Running
                } else {
                    Phase::Gone
                });
                snapshot.warnings.push(one_line(err.message()));
                return snapshot;
            }
        };
        let observed = &observation.observed;
        let config = &observed.config;
        config.lead_name().clone_into(&mut snapshot.lead);
        snapshot.socket = config.tmux.as_ref().map(|t| t.socket.clone());
        snapshot.hosts = config.spans_hosts();
        if let Some(node) = observation.node.as_ref().filter(|node| !node.connected) {
            snapshot.disconnected = Some(
                node.host
                    .as_deref()
                    .map_or_else(|| "this host".to_owned(), one_line),
            );
        }
        let launched = observed.members().any(|(_, seen)| seen != Seen::NotStarted);
        snapshot.phase = Some(match (observed.running(), launched) {
            (true, _) => Phase::Running,
            (false, true) => Phase::Ended,
            (false, false) => Phase::NotStarted,
        });
        let board = tasks(team, &mut snapshot.warnings);
        let activities = activity::read(team.paths()).unwrap_or_else(|err| {
            snapshot.warnings.push(one_line(err.message()));
            BTreeMap::new()
        });
        // Read on from where the last look got to: the ledger is never read again whole.
        if let Err(err) = usage.read_on(team.paths()) {
            snapshot.warnings.push(one_line(err.message()));
        }
        let total = usage.total(&config.prices);
        snapshot.cost = (!total.tokens.is_zero()).then(|| {
            format!(
                "{} · {} tokens",
                total.money(),
                token_count(total.tokens.total())
            )
        });
        for (member, seen) in observed.members() {
            let remote = !observed.is_here(member);
            let mut row = row(team, member, (seen, remote), feed, now_ms);
            let spend = usage.spend(&member.name, &config.prices);
            row.tokens = token_count(spend.tokens.total());
            row.cost = spend.money();
            let runs = matches!(seen, Seen::Recorded(state) if !state.is_final()) && !remote;
            row.activity = activities
                .get(&member.name)
                .filter(|_| runs)
                .map(|current| Doing {
                    state: current.state,
                    since_ms: current.since,
                    why: current.why.as_deref().map(one_line),
                });
            row.worktree = worktrees.get(&member.name).cloned();
            row.task = board.as_ref().and_then(|board| {
                board
                    .iter()
                    .find(|t| t.status == Status::InProgress && t.owner.as_ref() == Some(&row.name))
                    .map(|t| format!("{} {}", t.id, t.subject))
            });
            match team.mailbox(&member.name).peek() {
                Ok(unread) => {
                    row.unread = unread.len();
                    decisions::among(&member.name, &unread, &mut snapshot.decisions);
                }
                Err(err) => row.warning = Some(one_line(err.message())),
            }
            if let Some(aside) = team.mailbox(&member.name).set_aside().first() {
                row.warning.get_or_insert_with(|| {
                    one_line(&format!(
                        "{} moved aside to {}",
                        aside.reason,
                        aside.path.display()
                    ))
                });
            }
            snapshot.rows.push(row);
        }
        match permission::pending_as_seen(team, observed) {
            Ok(asks) => decisions::asks(config.lead_name(), &asks, &mut snapshot.decisions),
            Err(err) => snapshot.warnings.push(one_line(err.message())),
        }
        person_inbox(team, config, &mut snapshot);
        snapshot.tasks = board;
        // Who needs the person comes first, in the team's order.
        snapshot
            .rows
            .sort_by_key(|row| row.activity.as_ref().map(|a| a.state) != Some(Activity::NeedsYou));
        snapshot
    }

    /// How many members are working, idle, need the person, or are stalled.
    pub(crate) fn by_activity(&self) -> Vec<(Activity, usize)> {
        [
            Activity::NeedsYou,
            Activity::Stalled,
            Activity::Working,
            Activity::Idle,
        ]
        .into_iter()
        .map(|state| {
            let n = self
                .rows
                .iter()
                .filter(|row| row.activity.as_ref().is_some_and(|a| a.state == state))
                .count();
            (state, n)
        })
        .collect()
    }

    /// Members counted by state, in the order states come: `2 running · 1 exited`.
    pub(crate) fn by_state(&self) -> Vec<(String, usize)> {
        let mut counts: Vec<(String, usize)> = Vec::new();
        for row in &self.rows {
            match counts.iter_mut().find(|(state, _)| *state == row.state) {
                Some((_, n)) => *n += 1,
                None => counts.push((row.state.clone(), 1)),
            }
        }
        counts
    }

    /// The board's counts: pending, in progress, completed.
    pub(crate) fn task_counts(&self) -> Option<[usize; 3]> {
        let tasks = self.tasks.as_ref().filter(|tasks| !tasks.is_empty())?;
        let count = |status| tasks.iter().filter(|t| t.status == status).count();
        Some([
            count(Status::Pending),
            count(Status::InProgress),
            count(Status::Completed),
        ])
    }
}

/// A member as its record, its pane's log and the feed show it; `remote` when it runs on another
/// host, where its log is.
fn row(
    team: &Team,
    member: &Member,
    (seen, remote): (Seen, bool),
    feed: &Feed,
    now_ms: u64,
) -> Row {
    let live = seen.is_live();
    let state = seen.label().to_owned();
    // File times are the machine's, whatever swarm's clock says.
    let real_now = clock::to_ms(SystemTime::now());
    let mailbox = team.mailbox(&member.name);
    let file_ms = |path: &std::path::Path| {
        std::fs::metadata(path)
            .and_then(|meta| meta.modified())
            .ok()
            .map(clock::to_ms)
    };
    let last_in_ms = [
        feed.last_in.get(&member.name).copied(),
        file_ms(mailbox.history_path()),
    ]
    .into_iter()
    .flatten()
    .filter(|ms| *ms <= now_ms.max(real_now))
    .max();
    Row {
        name: member.name.clone(),
        host: member.host.as_deref().map(one_line),
        remote,
        color: member.color.as_deref().and_then(Color::parse),
        program: member
            .argv
            .as_ref()
            .and_then(|argv| argv.first())
            .map_or_else(
                || "-".to_owned(),
                |program| one_line(program.rsplit('/').next().unwrap_or(program)),
            ),
        fenced: member
            .sandbox
            .as_ref()
            .map(|fence| Fence::shown(Some(fence))),
        model: member
            .model
            .as_deref()
            .filter(|model| *model != crate::format::config::DEFAULT_MODEL && !model.is_empty())
            .map(one_line),
        state,
        live,
        activity: None,
        started_ms: member.started_at.filter(|ms| *ms > 0),
        ended_ms: member.ended_at.filter(|ms| *ms > 0),
        timeout_s: member.run_timeout_s.filter(|s| *s > 0),
        unread: 0,
        last_in_ms,
        last_out_ms: feed.last_out.get(&member.name).copied(),
        task: None,
        worktree: None,
        pane: Some(member.tmux_pane_id.clone()).filter(|pane| !pane.is_empty() && !remote),
        warning: None,
        tokens: String::new(),
        cost: String::new(),
    }
}

/// The person's own inbox, `user`, when it is not on the roster: requests and a warning there
/// count too.
fn person_inbox(team: &Team, config: &TeamConfig, snapshot: &mut Snapshot) {
    if config.member(policy::PERSON).is_some() {
        return;
    }
    let mailbox = team.mailbox(policy::PERSON);
    if let Some(aside) = mailbox.set_aside().first() {
        snapshot.warnings.push(one_line(&format!(
            "{}: {} moved aside to {}",
            policy::PERSON,
            aside.reason,
            aside.path.display()
        )));
    }
}

/// The board, once the team has a task list; what cannot be read is a warning.
fn tasks(team: &Team, warnings: &mut Vec<String>) -> Option<Vec<TaskRow>> {
    let list = TaskList::new(team.home(), team.name());
    if !list.dir().is_dir() {
        return None;
    }
    match list.read() {
        Ok(board) => Some(
            board
                .tasks
                .values()
                .filter(|task| !task.is_internal())
                .map(|task| TaskRow {
                    id: task.id(),
                    status: task.status(),
                    owner: task.owner().map(one_line),
                    subject: one_line(task.subject()),
                    blocked_by: task.blocked_by(),
                })
                .collect(),
        ),
        Err(err) => {
            warnings.push(one_line(err.message()));
            None
        }
    }
}

/// The worktree members' changes, looked at now (a git command each: not on every redraw).
pub(crate) fn worktrees(team: &Team) -> HashMap<String, (String, u64, u64)> {
    let Ok(config) = team.load() else {
        return HashMap::new();
    };
    config
        .members
        .iter()
        .filter_map(|member| {
            let path = member.worktree_path.as_deref()?;
            let (branch, added, removed) =
                crate::launch::worktree::changes(std::path::Path::new(path))?;
            Some((member.name.clone(), (one_line(&branch), added, removed)))
        })
        .collect()
}
