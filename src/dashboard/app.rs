//! The dashboard's loop. It sleeps until something happens: a key, a change the one watcher
//! reports (`store/watcher.rs`: inboxes, history, config.json, the task list), an action's
//! outcome, a signal, or the clock's tick, which only advances elapsed times, and looks at the
//! selected pane. A message is drawn as soon as the watcher reports it; a burst of changes is one
//! wake and one redraw; the whole team is looked at again at most every `RETAKE`
//! (docs/ARCHITECTURE.md, "Dashboard").

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::Event;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use crate::base::clock;
use crate::cluster::fleet::Fleet;
use crate::error::{Error, Result};
use crate::launch::tmux::{self, Tmux};
use crate::member::pane::{self as member_pane, Found};
use crate::member::verify::Judges;
use crate::store::follow::{Follower, Scope};
use crate::store::paths::TeamPaths;
use crate::store::tasks::TaskList;
use crate::store::team::Team;
use crate::store::usage::Tally;
use crate::store::watcher::AsyncWatcher;

use super::actions::{self, ActingAs, Action};
use super::decisions::Kind;
use super::editor::Edit;
use super::feed::Feed;
use super::input::{self, Intent};
use super::pane;
use super::render;
use super::snapshot::{self, Snapshot};
use super::terminal::Guard;
use super::view::{Mode, Purpose, View};

/// The clock's tick: elapsed times, ages, the selected pane.
/// What `a` or `r` says with nothing to answer.
const NOTHING_WAITS: &str = "no plan, shutdown request or permission ask is waiting";

const TICK: Duration = Duration::from_secs(1);

/// After a change, how soon the whole team is looked at again; changes meanwhile are one look.
const RETAKE: Duration = Duration::from_millis(100);

/// Without a change, how often the whole team is looked at again anyway (processes, panes,
/// activity): every this many ticks.
const FULL_LOOK_TICKS: u32 = 3;

/// Worktrees' changes are a git command each: every this many ticks.
const WORKTREE_TICKS: u32 = 10;

/// Test hook: a file to which the dashboard appends `<msg_id>\t<epoch ns>` once the frame that
/// first shows that message is written to the terminal (`benches/swarm.rs`, figure h).
pub(crate) const FRAME_TRACE_VAR: &str = "SWARM_TEST_FRAME_TRACE";

/// How the dashboard ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Exit {
    Quit,
    /// Outside tmux, Enter on a member: how to attach to its pane, printed once the terminal is
    /// given back.
    Attach(Vec<String>),
}

/// Runs the dashboard on `team` as `who` until the person quits; `fleet` reaches its members
/// wherever they run.
pub(crate) fn run(team: &Team, fleet: &Fleet, who: ActingAs) -> Result<Exit> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| Error::os("start the dashboard's runtime", err))?;
    runtime.block_on(run_async(team, fleet, who))
}

struct App<'a> {
    team: &'a Team,
    fleet: &'a Fleet,
    who: ActingAs,
    view: View,
    snapshot: Snapshot,
    feed: Feed,
    outcomes: UnboundedSender<Result<String>>,
    /// Feed lines pushed so far, and how many of them were traced.
    pushed: usize,
    traced: usize,
    trace: Option<PathBuf>,
}

async fn run_async(team: &Team, fleet: &Fleet, who: ActingAs) -> Result<Exit> {
    let config = team.load()?;
    // Everything said in the team so far first, then what arrives.
    let mut follower = Follower::start(team, &config, Scope::All, false)?.replaying_history();
    let [inboxes, history] = follower.dirs();
    let team_dir = team.paths().dir().to_path_buf();
    let tasks_dir = TaskList::new(team.home(), team.name()).dir().to_path_buf();
    let mut dirs = vec![inboxes.as_path(), history.as_path(), team_dir.as_path()];
    if tasks_dir.is_dir() {
        dirs.push(&tasks_dir);
    }
    let mut watcher = Some(AsyncWatcher::arm_all(&dirs)?);
    let scope = follower.scope().clone();
    let relevant = |file: &OsStr| {
        scope.covers(file)
            || TeamPaths::is_config(file)
            || TeamPaths::is_usage(file)
            || TaskList::is_task_file(file)
    };
    let mut judges = Judges::new(team, &config);

    let mut guard = Guard::take()?;
    let (keys_sender, mut keys) = unbounded_channel();
    // crossterm's reads block: on a thread of their own, which dies with the process.
    std::thread::spawn(move || {
        while let Ok(event) = crossterm::event::read() {
            if keys_sender.send(event).is_err() {
                break;
            }
        }
    });
    let (outcomes, mut outcome) = unbounded_channel();
    let mut app = App {
        team,
        fleet,
        who,
        view: View::default(),
        snapshot: Snapshot::default(),
        feed: Feed::default(),
        outcomes,
        pushed: 0,
        traced: 0,
        trace: std::env::var_os(FRAME_TRACE_VAR).map(PathBuf::from),
    };
    let mut worktrees = snapshot::worktrees(team);
    let mut usage = Tally::default();
    app.arrivals(&mut follower, &mut judges, true);
    app.snapshot = Snapshot::take(team, fleet, &app.feed, &worktrees, &mut usage);
    app.capture();

    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut ticks: u32 = 0;
    let mut retake_at: Option<Instant> = None;
    let mut terminate = signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut hangup = signal(tokio::signal::unix::SignalKind::hangup())?;
    let mut interrupt = signal(tokio::signal::unix::SignalKind::interrupt())?;
    // Every wake changes what is shown, so each one ends in a redraw; the terminal is sent only
    // the cells that differ.
    loop {
        {
            app.view.rate = app.feed.per_minute(clock::now_ms());
            guard
                .terminal
                .draw(|frame| render::draw(frame, &app.snapshot, &app.feed, &app.view))
                .map_err(|err| Error::os("draw the dashboard", err))?;
            app.trace_shown();
        }
        let retake = async {
            match retake_at {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            event = keys.recv() => {
                let Some(event) = event else { return Ok(Exit::Quit) };
                if let Some(exit) = app.event(event) {
                    return Ok(exit);
                }
            }
            woke = async { watcher.as_mut().expect("guarded").wait(None, &relevant).await },
                if watcher.is_some() => {
                if woke.is_err() {
                    // The team's folders went away: it was removed while shown.
                    watcher = None;
                }
                app.arrivals(&mut follower, &mut judges, false);
                retake_at.get_or_insert_with(|| Instant::now() + RETAKE);
            }
            () = retake => {
                retake_at = None;
                app.snapshot = Snapshot::take(team, fleet, &app.feed, &worktrees, &mut usage);
            }
            Some(result) = outcome.recv() => {
                match result {
                    Ok(note) => app.view.noted(note, false),
                    Err(err) => app.view.noted(error_line(&err), true),
                }
                app.snapshot = Snapshot::take(team, fleet, &app.feed, &worktrees, &mut usage);
            }
            _ = tick.tick() => {
                ticks = ticks.wrapping_add(1);
                if ticks.is_multiple_of(WORKTREE_TICKS) {
                    worktrees = snapshot::worktrees(team);
                }
                if ticks.is_multiple_of(FULL_LOOK_TICKS) {
                    app.snapshot = Snapshot::take(team, fleet, &app.feed, &worktrees, &mut usage);
                } else {
                    app.snapshot.now_ms = clock::now_ms();
                }
                app.capture();
            }
            _ = terminate.recv() => return Ok(Exit::Quit),
            _ = hangup.recv() => return Ok(Exit::Quit),
            _ = interrupt.recv() => return Ok(Exit::Quit),
        }
    }
}

fn signal(kind: tokio::signal::unix::SignalKind) -> Result<tokio::signal::unix::Signal> {
    tokio::signal::unix::signal(kind).map_err(|err| Error::os("handle signals", err))
}

/// An error as the bottom line shows it: the message, and the hint after it.
fn error_line(err: &Error) -> String {
    let line = match err.hint() {
        Some(hint) => format!("{} (hint: {hint})", err.message()),
        None => err.message().to_owned(),
    };
    super::feed::one_line(&line)
}

impl App<'_> {
    /// What arrived since the last look, into the feed; at the first look (`first`), everything
    /// said before the dashboard opened. A file that cannot be read is a warning, not the end of
    /// the dashboard.
    fn arrivals(&mut self, follower: &mut Follower<'_>, judges: &mut Judges<'_>, first: bool) {
        let now = clock::now_ms();
        let feed = &mut self.feed;
        let pushed = &mut self.pushed;
        let looked = follower.arrivals(|arrival| {
            let verdict = judges.judge(arrival);
            if first {
                feed.recall(arrival, verdict, now);
            } else {
                feed.push(arrival, verdict, now);
            }
            *pushed += 1;
            Ok(())
        });
        if let Err(err) = looked {
            self.view.noted(error_line(&err), true);
        }
    }

    /// Looks at the selected member's pane again.
    fn capture(&mut self) {
        let Some(row) = self.view.row(&self.snapshot) else {
            return;
        };
        let name = row.name.clone();
        let captured = match (&self.snapshot.socket, &row.pane) {
            (Some(socket), Some(pane)) if row.live => {
                pane::capture(&Tmux::at(socket), pane).unwrap_or(None)
            }
            _ => None,
        };
        self.view.pane.gone = captured.is_none();
        self.view.pane.lines = captured.unwrap_or_default();
        self.view.pane.member = name;
    }

    /// Appends to the trace file the messages the frame just written shows first.
    fn trace_shown(&mut self) {
        let Some(path) = &self.trace else {
            return;
        };
        if self.traced == self.pushed {
            return;
        }
        let fresh = self.pushed - self.traced;
        let at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_nanos());
        let mut lines = String::new();
        for line in self.feed.lines().rev().take(fresh) {
            let _ = writeln!(lines, "{}\t{at}", line.id);
        }
        if let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = file.write_all(lines.as_bytes());
        }
        self.traced = self.pushed;
    }

    /// Hands `action` to a thread of its own: a stop may take seconds, and the screen goes on.
    fn act(&mut self, action: Action) {
        let (team, fleet, who) = (self.team.clone(), self.fleet.clone(), self.who.clone());
        let outcomes = self.outcomes.clone();
        self.view.noted("…", false);
        tokio::task::spawn_blocking(move || {
            let _ = outcomes.send(actions::perform(&team, &fleet, &who, action));
        });
    }

    /// Handles one terminal event; `Some` when the dashboard ends.
    fn event(&mut self, event: Event) -> Option<Exit> {
        let Event::Key(key) = event else {
            // A resize is drawn at the new size; nothing else matters.
            return None;
        };
        let intent = input::intent(&self.view.mode, key);
        if self.view.help && intent != Intent::Quit {
            self.view.help = false;
            return None;
        }
        if intent != Intent::Nothing {
            self.view.note = None;
        }
        let selected = self.view.row(&self.snapshot).cloned();
        match intent {
            Intent::Quit => return Some(Exit::Quit),
            Intent::Up | Intent::Down => {
                self.view
                    .select_by(&self.snapshot, if intent == Intent::Up { -1 } else { 1 });
                if self.view.row(&self.snapshot).map(|r| &r.name)
                    != selected.as_ref().map(|r| &r.name)
                {
                    self.capture();
                }
            }
            Intent::Goto => match selected {
                Some(row) if row.remote => self.view.noted(
                    format!(
                        "{} runs on {}: its pane is there",
                        row.name,
                        row.host.as_deref().unwrap_or("another host")
                    ),
                    true,
                ),
                Some(row) => return self.goto(&row.name, row.pane.as_deref()),
                None => {}
            },
            Intent::Send => match selected {
                Some(row) => self.edit(Purpose::Send(row.name), ""),
                None => self.view.noted("no member to send to", true),
            },
            Intent::Broadcast => self.edit(Purpose::Broadcast, ""),
            Intent::Approve | Intent::ApproveAlways => {
                let always = intent == Intent::ApproveAlways;
                match self.view.decision(&self.snapshot).cloned() {
                    Some(decision) if always && decision.kind != Kind::Permission => {
                        self.view
                            .noted("only a permission ask is allowed always (a approves)", true);
                    }
                    Some(decision) => self.act(Action::Answer {
                        decision,
                        approve: true,
                        always,
                        why: None,
                    }),
                    None => self.view.noted(NOTHING_WAITS, true),
                }
            }
            Intent::Reject => match self.view.decision(&self.snapshot).cloned() {
                Some(decision) => self.edit(Purpose::Reject(decision), ""),
                None => self.view.noted(NOTHING_WAITS, true),
            },
            Intent::Stop => match selected {
                Some(row) if row.live => self.view.mode = Mode::ConfirmStop(row.name),
                Some(row) => self
                    .view
                    .noted(format!("{} is not running ({})", row.name, row.state), true),
                None => {}
            },
            Intent::Confirm(yes) => {
                if let Mode::ConfirmStop(name) =
                    std::mem::replace(&mut self.view.mode, Mode::Normal)
                {
                    if yes {
                        self.act(Action::Stop { name });
                    } else {
                        self.view.noted(format!("{name} keeps running"), false);
                    }
                }
            }
            Intent::Board => {
                if self.view.board || self.snapshot.task_counts().is_some() {
                    self.view.board = !self.view.board;
                } else {
                    self.view.noted("the team has no tasks yet", true);
                }
            }
            Intent::Filter => {
                let filter = self.view.filter.clone();
                self.edit(Purpose::Filter, &filter);
            }
            Intent::Help => self.view.help = true,
            Intent::Edit(key) => self.edited(key),
            Intent::Nothing => {}
        }
        None
    }

    fn edit(&mut self, purpose: Purpose, text: &str) {
        self.view.mode = Mode::Editing {
            purpose,
            editor: super::editor::Editor::with(text),
        };
    }

    fn edited(&mut self, key: super::editor::Key) {
        let Mode::Editing { purpose, editor } = &mut self.view.mode else {
            return;
        };
        let edit = editor.key(key);
        let text = editor.text().to_owned();
        let purpose = purpose.clone();
        match edit {
            Edit::Changed => {
                if purpose == Purpose::Filter {
                    self.view.filter = text;
                }
                return;
            }
            Edit::Ignored => return,
            Edit::Cancel | Edit::Submit => self.view.mode = Mode::Normal,
        }
        if edit == Edit::Cancel {
            if purpose == Purpose::Filter {
                self.view.filter.clear();
            }
            return;
        }
        let empty = text.trim().is_empty();
        match purpose {
            Purpose::Filter => self.view.filter = text,
            Purpose::Send(_) | Purpose::Broadcast if empty => {
                self.view.noted("nothing sent: the message was empty", true);
            }
            Purpose::Send(to) => self.act(Action::Send { to, text }),
            Purpose::Broadcast => self.act(Action::Broadcast { text }),
            Purpose::Reject(decision) => self.act(Action::Answer {
                decision,
                approve: false,
                always: false,
                why: (!empty).then_some(text),
            }),
        }
    }

    /// Enter: inside tmux on the team's server, the member's window and pane are selected and the
    /// client goes there; elsewhere the dashboard ends, leaving how to attach.
    fn goto(&mut self, name: &str, pane: Option<&str>) -> Option<Exit> {
        let (Some(socket), Some(pane)) = (self.snapshot.socket.clone(), pane) else {
            self.view.noted(format!("{name} has no pane"), true);
            return None;
        };
        let server = Tmux::at(&socket);
        // Only the member's own pane: tmux may have given its id to someone else's since.
        let found = self
            .team
            .load()
            .and_then(|config| match config.member(name) {
                Some(member) => member_pane::find(self.team, &server, member),
                None => Ok(Found::Gone),
            });
        match found {
            Ok(Found::Own(_)) => {}
            Ok(_) => {
                self.view
                    .noted(format!("{name}'s pane {pane} is gone"), true);
                return None;
            }
            Err(err) => {
                self.view.noted(error_line(&err), true);
                return None;
            }
        }
        let inside =
            tmux::current_socket().is_some_and(|current| tmux::same_socket(&current, &socket));
        let selected = server.select(pane);
        if let Err(err) = &selected {
            self.view.noted(error_line(err), true);
            return None;
        }
        if !inside {
            return Some(Exit::Attach(server.attach_command(pane)));
        }
        match server.switch_client(pane) {
            Ok(()) => self
                .view
                .noted(format!("went to {name}'s pane {pane}"), false),
            Err(err) => self.view.noted(error_line(&err), true),
        }
        None
    }
}
