//! The supervisor's watch on its member's activity (docs/ARCHITECTURE.md, "Activity and events"):
//! twice a second it looks at what changed (the pane's output, its inbox, the lead's inbox and the
//! answers given, config.json) and records a change through `store::activity::record`. It reads
//! the screen only once output has stopped, and the task list only once the member has been
//! quiet for `stall_after`, so a member that does nothing costs a few `stat`s.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::base::clock;
use crate::format::config::State;
use crate::format::event::Activity;
use crate::format::settings::Profile;
use crate::launch::teamfile::DEFAULT_STALL_AFTER_S;
use crate::member::activity::{self, LastLine, ScreenRules};
use crate::member::logfile;
use crate::member::permission::AskFeed;
use crate::store::activity::{self as recorded, Expected};

use super::seat::{OffRuntime, Supervisor};

/// How often the supervisor looks.
const TICK: Duration = Duration::from_millis(500);

/// How long output must have stopped before the screen is judged: a program between two lines
/// of output is still working.
pub(super) const QUIET: Duration = Duration::from_secs(2);

/// How much of the end of the log the screen is judged from.
const TAIL_BYTES: u64 = 16 * 1024;

/// What the watch remembers between looks.
struct Watch {
    log: PathBuf,
    log_len: Option<u64>,
    /// The last output, or message in its inbox.
    last_sign: Instant,
    /// The screen was judged since output last stopped.
    judged: bool,
    hooks: bool,
    /// Its program tells only its turn's end (Codex's `notify`): the output that follows at once
    /// is that turn's last, not a new one.
    tells_turn_end: bool,
    rules: ScreenRules,
    stall_after: Duration,
    /// It is `needs-you` because the lead's side has an ask or a plan of its to answer.
    held_by_ask: bool,
    /// The asks nobody answered, read on from the last look: the lead's history is not read
    /// whole at each change of the lead's inbox, by every member's supervisor.
    asks: AskFeed,
    stamps: Stamps,
    is_active: Option<bool>,
    /// When owed work was last looked for, while quiet.
    owes_checked: Option<Instant>,
    /// How many messages waited unread in its inbox at the last look.
    unread: Option<usize>,
}

/// When the files a look depends on last changed.
#[derive(Default, PartialEq, Eq, Clone)]
struct Stamps {
    config: Option<SystemTime>,
    asks: [Option<SystemTime>; 2],
    inbox: Option<SystemTime>,
}

fn modified(path: &Path) -> Option<SystemTime> {
    fs::metadata(path).and_then(|meta| meta.modified()).ok()
}

impl Supervisor {
    /// Records `state` for the member, when it differs from what is recorded (`expected`: what
    /// the watch decided from).
    fn record_activity(&self, state: Activity, why: &str, expected: Expected) {
        match recorded::record(self.team.paths(), &self.name, state, Some(why), expected) {
            Ok(true) => tracing::info!("{} is {} ({why})", self.name, state.as_str()),
            Ok(false) => {}
            Err(err) => tracing::warn!(
                "cannot record that {} is {}: {err}",
                self.name,
                state.as_str()
            ),
        }
    }

    /// Records the member as `starting`: its supervisor has just begun.
    pub(super) fn record_starting(&self) {
        self.record_activity(Activity::Starting, "launched", Expected::Any);
    }

    /// Forgets the member's activity: its program has ended.
    pub(super) fn forget_activity(&self) {
        if let Err(err) = recorded::forget(self.team.paths(), &self.name) {
            tracing::warn!("cannot forget {}'s activity: {err}", self.name);
        }
    }

    /// One look; `false` once the member has ended, and there is nothing more to watch.
    fn look(&self, watch: &mut Watch) -> bool {
        let now = Instant::now();
        let paths = self.team.paths();
        let mut stamps = Stamps {
            config: modified(&paths.config()),
            asks: [
                modified(self.team.mailbox(&self.lead).inbox_path()),
                modified(&paths.permission_answers()),
            ],
            inbox: modified(self.team.mailbox(&self.name).inbox_path()),
        };
        // An inbox a writer is half-way through is looked at again at the next tick: reading it
        // now would wait for that writer's lock (and a slow one's could be taken as stale).
        if stamps.asks != watch.stamps.asks && !self.team.mailbox(&self.lead).reads_whole() {
            stamps.asks = watch.stamps.asks;
        }
        if stamps.inbox != watch.stamps.inbox && !self.team.mailbox(&self.name).reads_whole() {
            stamps.inbox = watch.stamps.inbox;
        }
        let changed = stamps != watch.stamps;
        let config_changed = stamps.config != watch.stamps.config;
        let asks_changed = stamps.asks != watch.stamps.asks;
        // Fewer unread messages than before: it took them, and a turn on them begins (Claude
        // Code gives no hook when it takes a teammate message, and deletes what it reads).
        let mut took_messages = false;
        if stamps.inbox != watch.stamps.inbox {
            watch.last_sign = now;
            let unread = self.team.mailbox(&self.name).peek().ok().map(|m| m.len());
            took_messages = matches!((watch.unread, unread), (Some(was), Some(now)) if now < was);
            watch.unread = unread;
        }
        watch.stamps = stamps;

        let len = fs::metadata(&watch.log).map(|meta| meta.len()).ok();
        let output = len != watch.log_len;
        if output {
            watch.log_len = len;
            watch.last_sign = now;
            watch.judged = false;
        }

        let current = recorded::of(paths, &self.name).ok().flatten();
        let state = current.as_ref().map(|c| c.state);

        if config_changed || (changed && asks_changed) {
            let Ok(config) = self.team.load() else {
                return true;
            };
            let Some(member) = config.member(&self.name) else {
                return false;
            };
            if member.state.is_some_and(State::is_final) {
                return false;
            }
            // Claude Code's own word on its turn: `isActive` at its start and its end.
            if config_changed && member.is_active != watch.is_active {
                let was = watch.is_active.replace(member.is_active.unwrap_or(true));
                if was.is_some() && member.state == Some(State::Running) {
                    match member.is_active {
                        Some(false) => {
                            self.record_activity(Activity::Idle, "turn ended", Expected::Any);
                        }
                        Some(true) => {
                            self.record_activity(Activity::Working, "turn began", Expected::Any);
                        }
                        None => {}
                    }
                }
            }
            if asks_changed || watch.held_by_ask {
                match activity::lead_side(&self.team, &config, &self.name, &mut watch.asks) {
                    Ok(side) => {
                        if let Some(why) = side.waits_on {
                            watch.held_by_ask = true;
                            self.record_activity(Activity::NeedsYou, &why, Expected::Any);
                            return true;
                        }
                        if watch.held_by_ask {
                            watch.held_by_ask = false;
                            let expected = Expected::Was(Some(Activity::NeedsYou));
                            self.record_activity(Activity::Working, "answered", expected);
                            return true;
                        }
                        // Claude Code tells the lead at every turn's end; newer than what is
                        // recorded, and it was busy, it is idle now.
                        let since = current.as_ref().map_or(0, |c| c.since);
                        if let Some((_, why)) = side.told_idle.filter(|(sent, _)| *sent > since)
                            && matches!(
                                state,
                                Some(Activity::Working | Activity::Starting | Activity::Stalled)
                            )
                        {
                            self.record_activity(Activity::Idle, &why, Expected::Was(state));
                        }
                    }
                    Err(err) => tracing::warn!("cannot tell what {} waits on: {err}", self.name),
                }
            }
        }
        if watch.held_by_ask {
            return true;
        }
        if took_messages
            && matches!(
                state,
                Some(Activity::Idle | Activity::Starting | Activity::Stalled)
            )
        {
            self.record_activity(Activity::Working, "read a message", Expected::Was(state));
            return true;
        }

        if output {
            let turn_just_ended = watch.tells_turn_end
                && state == Some(Activity::Idle)
                && current.as_ref().is_some_and(|c| {
                    Duration::from_millis(clock::now_ms().saturating_sub(c.since)) < QUIET
                });
            // Output after a stall is a sign of life, whatever else tells the activity.
            if state == Some(Activity::Stalled)
                || (!watch.hooks && state != Some(Activity::Working) && !turn_just_ended)
            {
                self.record_activity(Activity::Working, "output", Expected::Was(state));
            }
            return true;
        }
        let quiet = now.duration_since(watch.last_sign);
        if quiet >= QUIET && !watch.judged && (!watch.hooks || watch.rules.any()) {
            watch.judged = true;
            let tail = logfile::tail(&watch.log, TAIL_BYTES).unwrap_or_default();
            let screen = LastLine::of(&tail);
            match watch.rules.judge(&screen) {
                // A program that tells its activity through hooks is only judged by its patterns.
                Some((_, why)) if watch.hooks && why.starts_with("prompt") => {}
                Some((judged, why)) => self.record_activity(judged, &why, Expected::Was(state)),
                None if state == Some(Activity::Starting) && !watch.hooks => {
                    self.record_activity(Activity::Working, "running", Expected::Was(state));
                }
                None => {}
            }
            return true;
        }

        let since_change = current
            .as_ref()
            .map(|c| Duration::from_millis(clock::now_ms().saturating_sub(c.since)))
            .unwrap_or_default();
        let can_stall = matches!(
            state,
            Some(Activity::Working | Activity::Idle | Activity::Starting)
        );
        if can_stall
            && quiet >= watch.stall_after
            && since_change >= watch.stall_after
            && watch
                .owes_checked
                .is_none_or(|at| now.duration_since(at) >= QUIET)
        {
            watch.owes_checked = Some(now);
            match activity::owes(&self.team, &self.name) {
                Ok(Some(owes)) => {
                    let why = format!("quiet {} and {owes}", clock::span(watch.stall_after));
                    self.record_activity(Activity::Stalled, &why, Expected::Was(state));
                }
                Ok(None) => {}
                Err(err) => tracing::warn!("cannot tell what {} holds: {err}", self.name),
            }
        }
        true
    }
}

/// Runs while the member's program runs: looks every [`TICK`] and records each change.
pub(super) async fn watch(supervisor: Arc<Supervisor>) {
    let member = &supervisor.member;
    let mut watch = Watch {
        log: supervisor.log.clone(),
        // What the log held before the program started is not its output.
        log_len: fs::metadata(&supervisor.log).map(|meta| meta.len()).ok(),
        last_sign: Instant::now(),
        judged: false,
        hooks: member.activity_hooks == Some(true),
        tells_turn_end: member.profile == Some(Profile::Codex),
        rules: ScreenRules::new(
            member.idle_pattern.as_deref(),
            member.needs_you_pattern.as_deref(),
        ),
        stall_after: Duration::from_secs(member.stall_after_s.unwrap_or(DEFAULT_STALL_AFTER_S)),
        held_by_ask: false,
        asks: AskFeed::default(),
        stamps: Stamps::default(),
        is_active: None,
        owes_checked: None,
        // What waits before the program starts (a prompt `up` queued) is taken at its first turn.
        unread: supervisor
            .team
            .mailbox(&supervisor.name)
            .peek()
            .ok()
            .map(|unread| unread.len()),
    };
    let mut ticks = tokio::time::interval(TICK);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let (goes_on, kept) = supervisor
            .off_runtime(move |this| {
                let goes_on = this.look(&mut watch);
                (goes_on, watch)
            })
            .await;
        watch = kept;
        if !goes_on {
            return;
        }
    }
}
