//! `swarm run NAME`: the supervisor tmux starts in each member's pane (docs/ARCHITECTURE.md,
//! "The supervisor").
//!
//! It records itself in config.json, captures the pane's output, waits for a slot under the team's
//! `max_concurrent`, prepares a worktree, and runs the member's program as a child in its own
//! process group on the pane's terminal. While the program runs it forwards signals, enforces
//! `run_timeout_s`, honours stop requests, answers shutdown requests for `protocol = "wrapper"`
//! members and pastes messages for `delivery = "paste"` members, follows a Claude Code, Codex or
//! Gemini CLI member's session files into the team's usage ledger and weighs the budgets as the ledger grows. When the
//! program ends it records the ending and notifies the lead, exactly once.
//!
//! The runtime is current-thread and also serves the member's peer socket, so nothing may block it:
//! file locks, fsync, tmux and git run on tokio's blocking pool ([`OffRuntime::off_runtime`]),
//! and waits for files use the async watcher.

mod activity;
mod budget;
mod child;
mod fenced;
mod idle;
mod inbox;
mod queue;
mod restart;
mod seat;
mod signals;
mod usage;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use crate::base::clock;
use crate::base::names::Name;
use crate::base::process::{self, Pinned};
pub use crate::base::runtime::OffRuntime;
use crate::base::text::derive_summary;
use crate::error::{Error, Result};
pub use crate::format::config::State;
use crate::format::config::{Member, TeamConfig};
use crate::format::event::What;
use crate::format::message::{InboxMessage, check_text_size};
pub use crate::format::settings::Isolation;
pub use crate::format::signature::{self, Verdict, VerifyKey};
pub use crate::format::structured::{Classified, Structured};
use crate::launch::environment::{self, ProgramEnv, Started};
use crate::launch::keys::KEY_VAR;
use crate::launch::panes::{self, PaneEnvironment};
use crate::launch::prepare::PanePlan;
use crate::launch::profiles;
use crate::launch::worktree::{self, Worktree};
use crate::member::ending::{self, Ending};
use crate::member::identity;
use crate::member::logfile;
use crate::member::notify::{self, Asked};
use crate::member::processes::{self, Run};
use crate::member::reach::Reach;
use crate::member::resume;
use crate::member::{ANNOUNCE_WAIT, GRACE, SWEEP_GRACE};
use crate::peer::{
    self, Control, ControlFrame, Handlers, Incoming, Ledger, Listener, SOCKET_VAR, Sink, TakenQuery,
};
use crate::policy::Whereabouts;
use crate::store::events;
use crate::store::paths::TeamPaths;
use crate::store::team::Team;
use crate::store::watcher::{AsyncWatcher, named};

use self::fenced::Fenced;
use self::inbox::InboxFeed;
use self::restart::{Next, Restarter};
use self::seat::Supervisor;
use self::signals::{Signals, SupervisorSignal};

/// Runs member `name` of `team` in this pane until its program ends and the ending is recorded.
/// `env_file` holds the variables the launch set for the member ("Secrets and the environment").
/// What is shown, before a program starts, for a variable its supervisor sets when it does.
pub(crate) const SET_AT_START: &str = "<set when it starts>";

/// What a supervisor adds to its program's environment once the run exists: `swarm`'s own
/// directory, the run's marker, its peer socket and its worktree.
fn started(run_id: String, socket: Option<String>, worktree: Option<String>) -> Started {
    let mut vars = vec![(processes::RUN_ID_VAR.to_owned(), run_id)];
    vars.extend(socket.map(|socket| (SOCKET_VAR.to_owned(), socket)));
    vars.extend(worktree.map(|worktree| (environment::WORKTREE_VAR.to_owned(), worktree)));
    Started {
        swarm_dir: panes::exe_dir(),
        vars,
    }
}

/// The environment `plan`'s program will get, foreseen before its pane exists, for
/// `up --dry-run`: the same function as [`Supervisor::child_env`], given what the pane will
/// inherit, with what only the start can know as [`SET_AT_START`].
pub fn foreseen_env(plan: &PanePlan, pane: &PaneEnvironment) -> ProgramEnv {
    let started = started(
        SET_AT_START.to_owned(),
        Some(SET_AT_START.to_owned()),
        plan.worktree.then(|| SET_AT_START.to_owned()),
    );
    environment::program_env(pane.vars.clone(), &plan.env, &plan.env_policy, &started)
}

/// What is shown, before a fenced member starts, for its supervisor's pid in the names of its
/// sockets.
pub const SUPERVISOR_PID: &str = "<supervisor pid>";

/// The argv `plan`'s program (of `member`, in team `team`) will run with, for `up --dry-run`: as
/// it is, or for a fenced member inside bubblewrap's, built by the function its supervisor builds
/// it with, from what the pane will find: [`SUPERVISOR_PID`] for what only the start knows.
pub fn foreseen_argv(
    plan: &PanePlan,
    member: &Member,
    team: &TeamConfig,
    home: &crate::store::paths::Home,
    pane: &PaneEnvironment,
    tmux_socket: Option<PathBuf>,
) -> Result<Vec<String>> {
    let Some(fence) = &member.sandbox else {
        return Ok(plan.argv.clone());
    };
    let workdir = if plan.worktree {
        worktree::foreseen_path(&plan.cwd, &team.name, &plan.name)?
    } else {
        plan.cwd.clone()
    };
    let swarm = std::env::current_exe().map_err(|err| Error::os("find the swarm program", err))?;
    let walls = fenced::Surroundings {
        home: home.root(),
        name: &plan.name,
        members: &team.members,
        env: &|name| pane.vars.get(std::ffi::OsStr::new(name)).cloned(),
        tmux_socket,
        pid: &SUPERVISOR_PID,
        swarm: &swarm,
    }
    .walls(fence, &workdir, plan.worktree);
    Ok(walls.argv(&plan.argv))
}

/// Runs member `name`'s program in this pane until it ends; `reach` signs what it sends for the
/// lead's side.
pub fn run(
    team: Team,
    reach: Box<dyn Reach>,
    name: Name,
    log_max: u64,
    env_file: PathBuf,
) -> Result<()> {
    // Callers are judged against the home it was started in, whatever its path names later.
    team.home().pin()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| Error::os("start the supervisor's runtime", err))?;
    let supervisor = Arc::new(Supervisor::new(team, reach, name, log_max, env_file)?);
    runtime.block_on(supervisor.run())
}

impl Supervisor {
    async fn run(self: Arc<Self>) -> Result<()> {
        // First of all: the file holds the member's variables, secrets among them, and goes at once.
        let own_env = self
            .off_runtime(|this| environment::take_handoff(&this.env_file))
            .await;
        child::ignore_terminal_stops();
        // Before the program starts: whatever it leaves behind when its parent exits is
        // reparented here, not to init, so it can be found and ended with the member.
        if let Err(err) = process::become_subreaper() {
            tracing::warn!(
                "{} cannot adopt what its program leaves behind: {err}",
                self.name
            );
        }
        let mut signals = Signals::install()?;
        self.off_runtime(Self::capture_output).await;
        // Binding writes the registry entry durably: an fsync, kept off the runtime.
        let peer = self.off_runtime(Self::open_peer_socket).await;
        let _server = peer.as_ref().map(|listener| {
            let listener = Arc::clone(listener);
            let handlers = Handlers {
                sink: self.inbox_sink(),
                ledger: Some(self.ledger()),
                control: self.control(),
            };
            AbortOnDrop(tokio::spawn(async move {
                listener.serve(handlers).await;
            }))
        });
        let own = peer.as_ref().map(|listener| listener.address());
        let _notices = own
            .clone()
            .map(|own| AbortOnDrop(tokio::spawn(idle::tell_when_idle(Arc::clone(&self), own))));
        let socket = peer
            .as_ref()
            .map(|listener| listener.socket().to_path_buf());
        let queued = self.max_concurrent.is_some() && self.name != self.lead;
        let recorded = socket.clone();
        let registered = self
            .off_runtime(move |this| this.register(queued, recorded.as_deref()))
            .await?;
        if registered {
            self.off_runtime(Self::record_starting).await;
        }
        if !registered {
            // Stopped before this supervisor was known (`stop` recorded the ending itself): the
            // program is not started, and the ending stays as recorded.
            self.say(&format!("{} was stopped before it started", self.name));
            return Ok(());
        }

        if let Some(max) = self.max_concurrent.filter(|_| queued) {
            match queue::wait_for_slot(&self, max, &mut signals).await {
                Ok(queue::Slot::Granted) => {}
                Ok(queue::Slot::Interrupted(reason)) => {
                    if reason == "hangup" {
                        self.hang_up();
                    }
                    return self.end_unstarted(State::Killed, None, Some(reason)).await;
                }
                // Queued, then failed: recorded as an ending, never left `queued` for ever.
                Err(err) => {
                    self.report(&err).await;
                    let reason = format!("{SUPERVISOR_FAILED}: {}", err.message());
                    return self.end_unstarted(State::Failed, None, Some(reason)).await;
                }
            }
        }

        let own_env = match own_env {
            Ok(own_env) => own_env,
            Err(err) => return self.fail_to_start(err).await,
        };
        let (cwd, worktree) = match self.member.isolation {
            Some(Isolation::Worktree) => {
                let created = self
                    .off_runtime(|this| {
                        worktree::create(Path::new(&this.member.cwd), this.team.name(), &this.name)
                    })
                    .await;
                match created {
                    Ok(worktree) => (worktree.path.clone(), Some(worktree)),
                    Err(err) => return self.fail_to_start(err).await,
                }
            }
            _ => (PathBuf::from(&self.member.cwd), None),
        };
        let mut prepared = own_env;
        let files = self
            .off_runtime(move |this| {
                profiles::prepare(&this.team, &this.member, &mut prepared, &|key| {
                    std::env::var(key).ok()
                })
                .map(|()| prepared)
            })
            .await;
        let own_env = match files {
            Ok(own_env) => own_env,
            Err(err) => return self.fail_to_start(err).await,
        };
        let env = self.child_env(&own_env, worktree.as_ref(), socket.as_deref());
        // Followed and weighed across restarts: a restarted program resumes its session, whose
        // files go on.
        let sessions = usage::Sessions::of(&self.member, &cwd, &env).map(Arc::new);
        let weighing = AbortOnDrop(tokio::spawn(budget::watch(Arc::clone(&self))));
        let counting = sessions
            .clone()
            .map(|sessions| AbortOnDrop(tokio::spawn(usage::follow(Arc::clone(&self), sessions))));
        let mut argv = self.member.argv.clone().unwrap_or_default();
        let mut restarter = Restarter::of(&self.member);
        let (mut ending, ran) = loop {
            let (ending, ran) = match self
                .run_program(&argv, &cwd, &env, worktree.as_ref(), &mut signals)
                .await
            {
                Ok(ended) => ended,
                Err(err) => return self.fail_to_start(err).await,
            };
            match restarter.next(&ending, ran) {
                Next::End => break (ending, ran),
                Next::GiveUp { in_a_row } => {
                    self.give_up(in_a_row).await;
                    break (ending, ran);
                }
                Next::Again { pause, total } => {
                    let again = self
                        .restart_after(&ending, ran, pause, total, &own_env, &mut signals)
                        .await;
                    match again {
                        Again::Start(next) => argv = next,
                        Again::Ended(ending) => break (ending, Duration::ZERO),
                    }
                }
            }
        };
        drop(counting);
        drop(weighing);
        if let Some(sessions) = sessions {
            self.off_runtime(move |this| this.count_last_usage(&sessions))
                .await;
        }
        if let Some(worktree) = worktree {
            ending.worktree = self
                .off_runtime(move |_| match worktree.finish() {
                    Ok(kept) => kept.map(|path| path.display().to_string()),
                    Err(err) => {
                        tracing::warn!("keeping worktree {}: {err}", worktree.path.display());
                        Some(worktree.path.display().to_string())
                    }
                })
                .await;
        }
        self.conclude(ending, ran, own).await
    }

    /// Runs the program once, from its start to its end and the sweep of what it left; the
    /// ending, and how long it ran. An error only when it could not be started.
    async fn run_program(
        self: &Arc<Self>,
        argv: &[String],
        cwd: &Path,
        env: &BTreeMap<OsString, OsString>,
        worktree: Option<&Worktree>,
        signals: &mut Signals,
    ) -> Result<(Ending, Duration)> {
        // A fenced member runs in its sandbox or not at all ("Fencing members"), each run in a
        // sandbox of its own, its gate opened to that run's first process.
        let (argv, env, fenced) = match self.member.sandbox.as_ref() {
            None => (argv.to_vec(), env.clone(), None),
            Some(fence) => {
                let fenced = Fenced::prepare(self, fence, argv, cwd, worktree.is_some())?;
                (fenced.argv.clone(), fenced.env(env.clone()), Some(fenced))
            }
        };
        let mut child = child::spawn(&argv, cwd, &env)?;
        let fence_socket = fenced.map(|fenced| fenced.open(child.pid));
        let started = Instant::now();
        let pid = child.pid;
        // From here on the program runs: whatever fails, it is ended and its ending recorded by
        // the one path below, never left running unsupervised.
        let mut stopping = Stopping::default();
        let worktree_path = worktree.map(|w| w.path.display().to_string());
        match self
            .off_runtime(move |this| this.record_running(pid, worktree_path))
            .await
        {
            Ok(true) => {}
            // Stopped while it started, by a `stop` that found no supervisor yet and recorded
            // the ending itself: the program ends at once, and that ending stays.
            Ok(false) => {
                let why = self.off_runtime(Self::stop_reason).await;
                stopping.begin(pid, &why, Signal::SIGTERM);
            }
            Err(err) => {
                self.report(&err).await;
                stopping.begin(pid, SUPERVISOR_FAILED, Signal::SIGTERM);
            }
        }
        let watching = AbortOnDrop(tokio::spawn(activity::watch(Arc::clone(self))));
        let mut feed = match InboxFeed::start(self).await {
            Ok(feed) => feed,
            Err(err) => {
                self.report(&err).await;
                stopping.begin(pid, SUPERVISOR_FAILED, Signal::SIGTERM);
                InboxFeed::none()
            }
        };
        let timeout = self
            .member
            .run_timeout_s
            .map(|secs| tokio::time::Instant::now() + Duration::from_secs(secs));
        let status = loop {
            tokio::select! {
                status = child.wait() => match status {
                    Ok(status) => break status,
                    // The program's status is lost: make sure it is gone, and say so.
                    Err(err) => {
                        self.report(&err).await;
                        stopping.reason.get_or_insert_with(|| SUPERVISOR_FAILED.to_owned());
                        process::signal_group(pid, Signal::SIGKILL);
                        break ExitStatus::from_raw(Signal::SIGKILL as i32);
                    }
                },
                caught = signals.next() => match caught {
                    SupervisorSignal::Interrupt => { process::signal_group(pid, Signal::SIGINT); }
                    SupervisorSignal::Child => {
                        self.off_runtime(move |_| processes::reap_adopted(Some(pid))).await;
                    }
                    SupervisorSignal::Terminate => stopping.begin(pid, "signal", Signal::SIGTERM),
                    SupervisorSignal::Hangup => {
                        self.hang_up();
                        stopping.begin(pid, "hangup", Signal::SIGHUP);
                    }
                    SupervisorSignal::Stop => {
                        let why = self.off_runtime(|this| {
                            let why = this.stop_reason();
                            this.say(&format!("stopping {} ({why})", this.name));
                            why
                        }).await;
                        stopping.begin(pid, &why, Signal::SIGTERM);
                    }
                },
                () = at(timeout), if stopping.reason.is_none() => {
                    self.print(format!("run_timeout_s of {}s expired; stopping {}", self.member.run_timeout_s.unwrap_or(0), self.name)).await;
                    stopping.begin(pid, "timeout", Signal::SIGTERM);
                }
                () = at(stopping.kill_at) => {
                    process::signal_group(pid, Signal::SIGKILL);
                    stopping.kill_at = None;
                }
                () = feed.changed() => {
                    if let Some(why) = feed.handle(self).await {
                        // The lead asked, and it was approved: an end as asked, unless swarm
                        // was already ending the program for a reason of its own.
                        stopping.approved |= stopping.reason.is_none();
                        stopping.begin(pid, &why, Signal::SIGTERM);
                    }
                }
            }
        };
        drop(feed);
        drop(watching);
        drop(fence_socket);
        child::reclaim_terminal();
        // Whatever the program left running ends with it: in its group or not, adopted or marked.
        let run = Run::new(&self.team, &self.member, own_pid(), Some(pid));
        self.off_runtime(move |_| {
            processes::end(&[run], SWEEP_GRACE);
            processes::reap_adopted(None);
        })
        .await;

        let ending = if stopping.approved {
            Ending::shut_down(status)
        } else {
            Ending::from_status(status, stopping.reason)
        };
        Ok((ending, started.elapsed()))
    }

    /// After `ending` of a run that lasted `ran`, which its restart policy answers with restart
    /// `total` after `pause`: says so in the pane, records the member as restarting with the
    /// command it starts again with (a Claude Code member's `--resume`, [`resume::restarted`]),
    /// and waits out the pause. A `stop`, `down` or signal meanwhile ends it there, as it would
    /// have ended the program. The member keeps its tasks: no ending is recorded.
    async fn restart_after(
        self: &Arc<Self>,
        ending: &Ending,
        ran: Duration,
        pause: Duration,
        total: u32,
        own_env: &BTreeMap<String, String>,
        signals: &mut Signals,
    ) -> Again {
        let line = format!(
            "{}; restarting it in {} (restart {total})",
            ending::summary(&self.name, ending, ran),
            clock::human_duration(pause)
        );
        self.print(line).await;
        let own_env = own_env.clone();
        let exit_code = ending.exit_code;
        let recorded = self
            .off_runtime(move |this| {
                let config = this.team.load()?;
                let mut member = this.member.clone();
                // The session an earlier restart began, if it had to begin one.
                if let Some(now) = config.member(&this.name) {
                    member.session_id.clone_from(&now.session_id);
                    member.argv.clone_from(&now.argv);
                }
                let again = resume::restarted(&this.team, &config, &member, &own_env, &|key| {
                    std::env::var(key).ok()
                });
                again.notes.iter().for_each(|note| this.say(note));
                this.record_restarting(&again, exit_code, total)
                    .map(|going| going.then_some(again.argv))
            })
            .await;
        let argv = match recorded {
            Ok(Some(argv)) => argv,
            // Stopped meanwhile: the ending `stop` recorded stays.
            Ok(None) => {
                let why = self.off_runtime(Self::stop_reason).await;
                return Again::Ended(ended_while_paused(ending, why));
            }
            Err(err) => {
                self.report(&err).await;
                return Again::Ended(ended_while_paused(ending, SUPERVISOR_FAILED.to_owned()));
            }
        };
        let until = tokio::time::Instant::now() + pause;
        loop {
            tokio::select! {
                () = tokio::time::sleep_until(until) => return Again::Start(argv),
                caught = signals.next() => match caught {
                    SupervisorSignal::Interrupt => {}
                    SupervisorSignal::Child => {
                        self.off_runtime(|_| processes::reap_adopted(None)).await;
                    }
                    SupervisorSignal::Terminate => {
                        return Again::Ended(ended_while_paused(ending, "signal".to_owned()));
                    }
                    SupervisorSignal::Hangup => {
                        self.hang_up();
                        return Again::Ended(ended_while_paused(ending, "hangup".to_owned()));
                    }
                    SupervisorSignal::Stop => {
                        let why = self.off_runtime(Self::stop_reason).await;
                        return Again::Ended(ended_while_paused(ending, why));
                    }
                },
            }
        }
    }

    /// The member failed `in_a_row` restarts in a row: no more. Said in the pane, and appended
    /// to the team's event stream, which alerts it as failed; its ending, recorded next, tells
    /// the lead once.
    async fn give_up(self: &Arc<Self>, in_a_row: u32) {
        self.off_runtime(move |this| {
            this.say(&format!(
                "{} failed again after {in_a_row} restarts in a row; it is not restarted again",
                this.name
            ));
            events::tell(
                this.team.paths(),
                Some(&this.name),
                What::GaveUp { restarts: in_a_row },
            );
        })
        .await;
    }

    /// Records the member as restarting, for restart `total`, with the command and session it
    /// starts again with; `false`, and nothing written, when its ending was recorded meanwhile
    /// (see [`Self::register`]).
    fn record_restarting(
        &self,
        again: &resume::Restarted,
        exit_code: Option<i32>,
        total: u32,
    ) -> Result<bool> {
        self.team.update(|config| {
            let member = config.remaining_member_mut(&self.name)?;
            if member.state.is_some_and(State::is_final) {
                return Ok(false);
            }
            member.state = Some(State::Restarting);
            member.pid = None;
            member.exit_code = exit_code;
            member.restarts = Some(total);
            member.argv = Some(again.argv.clone());
            member.session_id.clone_from(&again.session_id);
            Ok(true)
        })
    }

    /// Shows the ending in the pane, records it (and so notifies the lead), tells whoever waits
    /// for the member to be idle that it has ended, and lets the pane go.
    async fn conclude(
        self: &Arc<Self>,
        ending: Ending,
        ran: Duration,
        own: Option<String>,
    ) -> Result<()> {
        self.announce(&ending, ran).await;
        let recorded = self.record_ending(ending).await;
        self.off_runtime(move |this| {
            this.forget_activity();
            this.answer_subscribers(notify::State::Exited, own.as_deref());
        })
        .await;
        recorded?;
        self.hold_pane_while_launching().await;
        Ok(())
    }

    /// Records the ending, retrying a while when that fails: the lead's inbox may be held by
    /// another tool, or the disk briefly full, and the notice is how the lead learns the member
    /// ended. A repeat is safe, since recording is idempotent and re-delivers a notice it lost.
    async fn record_ending(self: &Arc<Self>, ending: Ending) -> Result<()> {
        let mut delays = RECORD_RETRY_DELAYS.iter();
        loop {
            let ending = ending.clone();
            match self
                .off_runtime(move |this| ending::record(&this.team, &this.name, &ending))
                .await
            {
                Ok(_) => return Ok(()),
                Err(err) => match delays.next() {
                    Some(delay) => {
                        tracing::warn!(
                            "recording how {} ended: {err}; retrying in {delay:?}",
                            self.name
                        );
                        tokio::time::sleep(*delay).await;
                    }
                    None => return Err(err),
                },
            }
        }
    }

    /// While `up` is still placing the team, the pane stays: it may be all that keeps the team's
    /// window alive for the panes still to come.
    async fn hold_pane_while_launching(self: &Arc<Self>) {
        let placed = || {
            self.off_runtime(|this| {
                Ok(this
                    .team
                    .load()
                    .map_or(true, |config| !config.launching)
                    .then_some(()))
            })
        };
        if matches!(placed().await, Ok(Some(()))) {
            return;
        }
        let Ok(mut watcher) = AsyncWatcher::arm(self.team.paths().dir()) else {
            return;
        };
        // `up` clears the mark when it is done; the bound covers an `up` that was killed.
        let deadline = Instant::now() + Duration::from_secs(30);
        let _ = watcher
            .wait_for(Some(deadline), &TeamPaths::is_config, placed)
            .await;
    }

    /// Captures everything the pane shows into `logs/<name>.log`, through swarm's own writer,
    /// which keeps it within `log_max`. The log is made here, mode 0600, before anything is
    /// appended to it.
    fn capture_output(&self) {
        if let (Some(tmux), Some(pane)) = (&self.tmux, &self.pane) {
            let paths = self.team.paths();
            let captured = crate::store::durable::private_dir(paths.private_root(), &paths.logs())
                .and_then(|()| logfile::create(&self.log))
                .and_then(|()| panes::log_writer_argv(&self.log, self.log_max))
                .and_then(|writer| tmux.pipe_pane(pane, &writer));
            if let Err(err) = captured {
                tracing::warn!("output of {} is not captured: {err}", self.name);
            }
        }
    }

    /// The member's peer socket: a message sent to it is stored in the member's inbox.
    fn open_peer_socket(&self) -> Option<Arc<Listener>> {
        match Listener::bind(
            self.team.home(),
            None,
            Some(self.team.name().to_owned()),
            Some(self.name.clone()),
        ) {
            Ok(listener) => Some(Arc::new(listener)),
            Err(err) => {
                tracing::warn!("{} has no peer socket: {err}", self.name);
                None
            }
        }
    }

    /// Answers, on the peer socket, which of the lead's signed messages this run has taken: anyone
    /// of the user may ask, to show a replay for what it is; only the member's own readers (in its
    /// pane), or the person's (outside every pane), take them (docs/ARCHITECTURE.md, "Signed lead
    /// messages").
    fn ledger(self: &Arc<Self>) -> Ledger {
        let this = Arc::clone(self);
        Arc::new(move |query: &TakenQuery, asker: &Pinned| {
            if query.take {
                let own = match identity::whereabouts(this.team.home(), asker) {
                    Whereabouts::Pane { team, member, .. } => {
                        team == this.team.name() && member == this.name
                    }
                    Whereabouts::Outside => true,
                    Whereabouts::Elsewhere { .. } | Whereabouts::Unknown(_) => false,
                };
                if !own {
                    return Err(Error::usage(format!(
                        "only {}'s own readers take its messages",
                        this.name
                    )));
                }
            }
            Ok(this.taken(&query.taken, query.take))
        })
    }

    /// What Claude Code's control frames ask of the member's socket: a `notify_when_idle` waits
    /// for the member to be idle ([`idle::tell_when_idle`]); the others are logged.
    fn control(self: &Arc<Self>) -> Control {
        let this = Arc::clone(self);
        Arc::new(move |frame: &ControlFrame, sender: &Arc<Pinned>| {
            match notify::read(frame, sender)? {
                Asked::Notify(subscription) => {
                    tracing::info!(
                        "{} will tell {} when it is idle",
                        this.name,
                        subscription.describe()
                    );
                    this.subscribers.add(subscription);
                }
                Asked::Noted(what) => tracing::info!("{what}"),
            }
            Ok(())
        })
    }

    /// Stores what arrives on the peer socket in the member's inbox, durably, before the sender
    /// is acknowledged, under the name of whoever really sent it (docs/ARCHITECTURE.md, "Peers").
    /// Protocol messages stay inside the team and are refused here. So is a message from the
    /// lead's side (the person outside every pane, `user`) to a member that verifies the lead's
    /// messages: it would need a signature the socket cannot add ("Signed lead messages").
    fn inbox_sink(&self) -> Sink {
        let team = self.team.clone();
        let name = self.name.clone();
        let lead = self.lead.clone();
        // The key this member was launched with: this process's own environment.
        let key = std::env::var(KEY_VAR)
            .ok()
            .filter(|key| !key.is_empty())
            .map(|key| VerifyKey::parse(&key).unwrap_or_else(|_| VerifyKey::unusable()));
        Arc::new(move |incoming: &Incoming| {
            let request = &incoming.message;
            if !matches!(Structured::classify(&request.text), Classified::Plain) {
                return Err(Error::usage(
                    "protocol messages cannot arrive over a peer socket",
                ));
            }
            check_text_size(&request.text)?;
            let from = identity::incoming_sender(team.home(), incoming)?;
            // Claude Code's text is wrapped: the preview is of what it says.
            let summary = request
                .summary
                .clone()
                .unwrap_or_else(|| derive_summary(peer::claude_body(&request.text)));
            let mut message = InboxMessage::new(&from, &request.text, Some(&summary), None);
            message.set_id(&request.msg_id);
            if let Some(key) = &key
                && signature::speaks_for_lead(&from, &lead)
            {
                // Stored only as the entry the lead's side signed, and only if it checks.
                if let (Some(timestamp), Some(lead_sig)) = (&request.timestamp, &request.lead_sig) {
                    message.set_field("timestamp", timestamp.clone().into());
                    message.set_field(signature::FIELD, lead_sig.clone().into());
                }
                if let Verdict::Forged(why) = key.check(&message) {
                    return Err(Error::usage(format!(
                        "{name} verifies the lead's messages, and this one from {from} does not \
                         verify: {why}"
                    ))
                    .with_hint(format!("`swarm send {name}` signs it")));
                }
            }
            team.mailbox(&name).update(|unread| {
                // A sender that retries after a lost acknowledgement must not duplicate the message.
                if unread.iter().any(|m| m.id() == request.msg_id.as_str()) {
                    return Ok(((), false));
                }
                unread.push(message.clone());
                Ok(((), true))
            })
        })
    }

    /// Records this supervisor and clears what a previous run of the member left; `false`, and
    /// nothing written, when the member's ending is already recorded: a launch that failed, or a
    /// `stop`, ended it before its supervisor got here. Every new member's record starts without
    /// a state, so an ending here is never a previous run's.
    fn register(&self, queued: bool, socket: Option<&Path>) -> Result<bool> {
        let pane = self.pane.clone();
        let socket = socket.map(|s| s.display().to_string());
        let log = self.log.display().to_string();
        // Where this pane is, when its launcher has not recorded it (yet, or ever: killed once
        // the pane existed), so `down` finds the pane whatever became of the launcher.
        let placement = match &pane {
            Some(pane) if self.team.load()?.tmux.is_none() => panes::placement_of(pane),
            _ => None,
        };
        self.team.update(|config| {
            if config.tmux.is_none() {
                config.tmux.clone_from(&placement);
            }
            let member = config.remaining_member_mut(&self.name)?;
            if member.state.is_some_and(State::is_final) {
                return Ok(false);
            }
            member.supervisor_pid = Some(i32::try_from(std::process::id()).unwrap_or(0));
            if let Some(pane) = pane {
                member.tmux_pane_id = pane;
            }
            member.log_file = Some(log);
            member.socket = socket;
            member.state = Some(if queued {
                State::Queued
            } else {
                State::Starting
            });
            member.is_active = Some(true);
            member.pid = None;
            member.exit_code = None;
            member.reason = None;
            member.started_at = None;
            member.ended_at = None;
            member.notice = None;
            member.stop_requested = None;
            member.restarts = None;
            Ok(true)
        })
    }

    /// Records the program as running; `false`, and nothing written, when the member's ending
    /// was recorded meanwhile (see [`Self::register`]).
    fn record_running(&self, pid: i32, worktree_path: Option<String>) -> Result<bool> {
        self.team.update(|config| {
            let member = config.remaining_member_mut(&self.name)?;
            if member.state.is_some_and(State::is_final) {
                return Ok(false);
            }
            member.pid = Some(pid);
            member.state = Some(State::Running);
            member.started_at = Some(clock::now_ms());
            member.worktree_path = worktree_path;
            Ok(true)
        })
    }

    /// The program's whole environment, built by the one function that builds it
    /// (docs/ARCHITECTURE.md, "Secrets and the environment"): what this pane inherited, as the
    /// member's rules allow; the variables the launch set for it; `swarm` itself first on PATH;
    /// and the run's marker, which everything the program starts inherits ("A member's
    /// processes"), its socket and its worktree.
    fn child_env(
        &self,
        own_env: &BTreeMap<String, String>,
        worktree: Option<&Worktree>,
        socket: Option<&Path>,
    ) -> BTreeMap<OsString, OsString> {
        let started = started(
            Run::new(&self.team, &self.member, own_pid(), None).id,
            socket.map(|socket| socket.display().to_string()),
            worktree.map(|worktree| worktree.path.display().to_string()),
        );
        environment::program_env(
            std::env::vars_os(),
            own_env,
            &self.member.env_policy,
            &started,
        )
        .vars
    }

    /// Shows in the pane (and so the log) an error the supervisor cannot act on.
    async fn report(self: &Arc<Self>, err: &Error) {
        let mut lines = vec![format!("{}: {}", self.name, err.message())];
        lines.extend(err.hint().map(|hint| format!("hint: {hint}")));
        tracing::warn!("{}: {err}", self.name);
        self.off_runtime(move |this| lines.iter().for_each(|line| this.say(line)))
            .await;
    }

    /// The program could not start: say why in the pane, record it, tell the lead.
    async fn fail_to_start(self: &Arc<Self>, err: Error) -> Result<()> {
        let mut lines = vec![format!("cannot start {}: {}", self.name, err.message())];
        lines.extend(err.hint().map(|hint| format!("hint: {hint}")));
        self.off_runtime(move |this| lines.iter().for_each(|line| this.say(line)))
            .await;
        let code = if err.kind() == crate::error::ErrorKind::NotFound {
            127
        } else {
            126
        };
        self.end_unstarted(
            State::Failed,
            Some(code),
            Some(format!("start: {}", err.message())),
        )
        .await
    }

    async fn end_unstarted(
        self: &Arc<Self>,
        state: State,
        exit_code: Option<i32>,
        reason: Option<String>,
    ) -> Result<()> {
        let ending = Ending {
            state,
            exit_code,
            reason,
            worktree: None,
        };
        self.conclude(ending, Duration::ZERO, None).await
    }

    /// Prints the ending in the pane and waits until it has reached the log, so `swarm log` after
    /// `swarm wait` shows the member's last lines.
    async fn announce(self: &Arc<Self>, ending: &Ending, ran: Duration) {
        let line = ending::summary(&self.name, ending, ran);
        if self.hung_up() || self.pane.is_none() {
            return;
        }
        let marker = Arc::new(format!("[swarm] {line}"));
        let watcher = AsyncWatcher::arm(crate::store::durable::parent(&self.log)).ok();
        self.print(line).await;
        let Some(mut watcher) = watcher else { return };
        let file = self.log.file_name().unwrap_or_default().to_owned();
        let deadline = Instant::now() + ANNOUNCE_WAIT;
        let shown = || {
            let marker = Arc::clone(&marker);
            self.off_runtime(move |this| {
                // The line is the last the pane printed: the log's tail holds it.
                Ok(logfile::tail(&this.log, 64 * 1024)
                    .ok()
                    .filter(|bytes| contains(bytes, marker.as_bytes()))
                    .map(drop))
            })
        };
        let _ = watcher.wait_for(Some(deadline), &named(&file), shown).await;
    }
}

/// What a pause before a restart ends in.
enum Again {
    /// Start the program again with this command.
    Start(Vec<String>),
    /// The member was ended while it waited: no restart.
    Ended(Ending),
}

/// The ending of a member ended (`why`) while it waited to be restarted after `last`.
fn ended_while_paused(last: &Ending, why: String) -> Ending {
    Ending {
        state: State::Killed,
        exit_code: last.exit_code,
        reason: Some(why),
        worktree: None,
    }
}

/// Why a program was ended (or never started) because its supervisor failed at its own work.
const SUPERVISOR_FAILED: &str = "supervisor failed";

/// swarm is ending the program: why, and when its group gets SIGKILL if it has not exited.
#[derive(Default)]
struct Stopping {
    reason: Option<String>,
    /// Ending because a shutdown request was approved on the program's behalf (wrapper).
    approved: bool,
    kill_at: Option<tokio::time::Instant>,
}

impl Stopping {
    /// Signals the group; the first reason given is the one recorded.
    fn begin(&mut self, pgid: i32, why: &str, signal: Signal) {
        self.reason.get_or_insert_with(|| why.to_owned());
        process::signal_group(pgid, signal);
        self.kill_at
            .get_or_insert(tokio::time::Instant::now() + GRACE);
    }
}

/// A background task that ends with the scope holding it.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Sleeps until `deadline`, or forever without one.
async fn at(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// Pauses between attempts to record an ending; each attempt also waits out a held lock.
const RECORD_RETRY_DELAYS: [Duration; 4] = [
    Duration::from_secs(1),
    Duration::from_secs(3),
    Duration::from_secs(8),
    Duration::from_secs(15),
];

fn own_pid() -> i32 {
    i32::try_from(std::process::id()).unwrap_or(0)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}
