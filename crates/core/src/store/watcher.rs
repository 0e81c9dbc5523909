//! The one way swarm waits for a file to change: a non-recursive `notify` watch on a directory,
//! filtered by file name. `recv --wait`, `watch`, `wait`, `up --wait`, the `--wait` flows and the
//! supervisor all use it (docs/ARCHITECTURE.md, "Watching").
//!
//! Events are only hints: the caller re-reads the file under its lock. The watch is armed before
//! the caller's first read, so nothing slips between read and watch. A queue overflow (the rescan
//! flag) and a slow safety interval both count as "look again".
//!
//! [`Watcher`] blocks its thread; [`AsyncWatcher`] is the same watch for the supervisor's tokio
//! runtime, whose notify callback feeds a tokio channel so no thread has to block on its behalf.
//!
//! When inotify's limits are reached (no instance or no watch left), both fall back to polling
//! with notify's `PollWatcher`, warn once per process with the sysctl to raise, and keep working.

use std::ffi::{OsStr, OsString};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use notify::event::{AccessKind, AccessMode};
use notify::{
    Event, EventKind, EventKindMask, PollWatcher, RecommendedWatcher, RecursiveMode, Watcher as _,
};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use crate::error::{Error, Result};

/// A backstop against a lost event; not how messages normally arrive.
pub const SAFETY_RESCAN: Duration = Duration::from_secs(2);

/// How often the polling fallback scans, and how often its waiters look again regardless:
/// notify's `PollWatcher` compares modification times in whole seconds, so a file rewritten twice
/// within one second is caught by the re-read, not by an event.
pub const POLL_INTERVAL: Duration = Duration::from_millis(250);

pub struct Watcher {
    armed: Armed,
    signals: Receiver<Signal>,
}

/// The same watch as [`Watcher`], awaited on a tokio runtime.
pub struct AsyncWatcher {
    armed: Armed,
    signals: UnboundedReceiver<Signal>,
    /// When the pending wait looks again regardless; kept across calls, so a wait cancelled by a
    /// `select!` and started again does not postpone the safety re-scan.
    rescan_at: Option<Instant>,
}

/// The watch both waiters share; they differ only in the channel its callback feeds.
struct Armed {
    dirs: Vec<PathBuf>,
    /// How long a wait goes without an event before it looks again anyway.
    rescan: Duration,
    /// What notices changes, inotify or the polling fallback; held only to keep it alive.
    _inner: Box<dyn notify::Watcher + Send>,
}

enum Signal {
    Touched(OsString),
    Rescan,
    Failed(notify::Error),
}

/// Why [`Watcher::wait`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// A relevant file changed, events were lost, or the safety interval passed: read again.
    LookAgain,
    /// The deadline passed.
    Deadline,
}

impl Watcher {
    /// Starts watching `dir` (which must exist). Call before the first read.
    pub fn arm(dir: &Path) -> Result<Self> {
        Self::arm_all(&[dir])
    }

    /// Starts watching several directories (which must exist) through one inotify instance.
    /// Filters see file names only, so a name shared by two of the directories wakes both readers.
    pub fn arm_all(dirs: &[&Path]) -> Result<Self> {
        let (sender, signals) = mpsc::channel();
        let armed = Armed::new(dirs, move |signal| {
            let _ = sender.send(signal);
        })?;
        Ok(Self { armed, signals })
    }

    /// Blocks until a file that `relevant` accepts changes, a rescan is due, or `deadline` passes.
    pub fn wait(
        &self,
        deadline: Option<Instant>,
        relevant: &dyn Fn(&OsStr) -> bool,
    ) -> Result<Wake> {
        let until = wake_by(deadline, Instant::now() + self.armed.rescan);
        loop {
            let timeout = until.saturating_duration_since(Instant::now());
            match self.signals.recv_timeout(timeout) {
                Ok(signal) => {
                    if self.armed.judge(signal, relevant)? {
                        return self.armed.drain(|| self.signals.try_recv().ok());
                    }
                }
                Err(RecvTimeoutError::Timeout) => return Ok(timed_out(deadline)),
                Err(RecvTimeoutError::Disconnected) => return Err(self.armed.stopped()),
            }
        }
    }

    /// Runs `probe` now and again after every relevant change until it yields a value.
    /// `None` means the deadline passed (after one last probe).
    pub fn wait_for<T>(
        &self,
        deadline: Option<Instant>,
        relevant: &dyn Fn(&OsStr) -> bool,
        mut probe: impl FnMut() -> Result<Option<T>>,
    ) -> Result<Option<T>> {
        loop {
            if let Some(found) = probe()? {
                return Ok(Some(found));
            }
            if self.wait(deadline, relevant)? == Wake::Deadline {
                return probe();
            }
        }
    }
}

impl AsyncWatcher {
    /// Starts watching `dir` (which must exist). Call before the first read.
    pub fn arm(dir: &Path) -> Result<Self> {
        Self::arm_all(&[dir])
    }

    /// Starts watching several directories (which must exist) through one inotify instance, as
    /// [`Watcher::arm_all`] does.
    pub fn arm_all(dirs: &[&Path]) -> Result<Self> {
        let (sender, signals) = unbounded_channel();
        let armed = Armed::new(dirs, move |signal| {
            let _ = sender.send(signal);
        })?;
        Ok(Self {
            armed,
            signals,
            rescan_at: None,
        })
    }

    /// [`Watcher::wait`] without blocking the thread. Cancelling it loses nothing that matters:
    /// a relevant event is only taken from the channel by the call that returns it.
    pub async fn wait(
        &mut self,
        deadline: Option<Instant>,
        relevant: &(dyn Fn(&OsStr) -> bool + Sync),
    ) -> Result<Wake> {
        let rescan = self.armed.rescan;
        let safety = *self
            .rescan_at
            .get_or_insert_with(|| Instant::now() + rescan);
        let until = tokio::time::Instant::from_std(wake_by(deadline, safety));
        let woke = loop {
            match tokio::time::timeout_at(until, self.signals.recv()).await {
                Ok(Some(signal)) => match self.armed.judge(signal, relevant) {
                    Ok(false) => {}
                    Ok(true) => break self.armed.drain(|| self.signals.try_recv().ok()),
                    Err(err) => break Err(err),
                },
                Ok(None) => break Err(self.armed.stopped()),
                Err(_) => break Ok(timed_out(deadline)),
            }
        };
        self.rescan_at = None;
        woke
    }

    /// [`Watcher::wait_for`] with a probe that may itself await (say, file work off the runtime).
    pub async fn wait_for<T, F>(
        &mut self,
        deadline: Option<Instant>,
        relevant: &(dyn Fn(&OsStr) -> bool + Sync),
        mut probe: impl FnMut() -> F,
    ) -> Result<Option<T>>
    where
        F: Future<Output = Result<Option<T>>>,
    {
        loop {
            if let Some(found) = probe().await? {
                return Ok(Some(found));
            }
            if self.wait(deadline, relevant).await? == Wake::Deadline {
                return probe().await;
            }
        }
    }
}

impl Armed {
    fn new(dirs: &[&Path], deliver: impl Fn(Signal) + Send + Sync + 'static) -> Result<Self> {
        let deliver: Arc<dyn Fn(Signal) + Send + Sync> = Arc::new(deliver);
        let owned: Vec<PathBuf> = dirs.iter().map(|dir| dir.to_path_buf()).collect();
        let (backend, rescan): (Box<dyn notify::Watcher + Send>, _) =
            match Self::inotify(dirs, Relay::new(&deliver, false)) {
                Ok(inotify) => (Box::new(inotify), SAFETY_RESCAN),
                Err((err, dir)) => {
                    let Some(limit) = Limit::of(&err) else {
                        return Err(translate(err, dir));
                    };
                    limit.warn_once(dir);
                    let poll = Self::poll(dirs, Relay::new(&deliver, true))?;
                    (Box::new(poll), POLL_INTERVAL)
                }
            };
        Ok(Self {
            dirs: owned,
            rescan,
            _inner: backend,
        })
    }

    /// An inotify watch on every directory, or the error and the directory it is about.
    fn inotify<'a>(
        dirs: &[&'a Path],
        relay: Relay,
    ) -> std::result::Result<RecommendedWatcher, (notify::Error, &'a Path)> {
        let shown = dirs.first().copied().unwrap_or(Path::new("."));
        let mut inner = open_inotify(relay).map_err(|err| (err, shown))?;
        for dir in dirs {
            inner
                .watch(dir, RecursiveMode::NonRecursive)
                .map_err(|err| (err, *dir))?;
        }
        Ok(inner)
    }

    fn poll(dirs: &[&Path], relay: Relay) -> Result<PollWatcher> {
        let shown = dirs.first().copied().unwrap_or(Path::new("."));
        let config = notify::Config::default()
            .with_poll_interval(POLL_INTERVAL)
            .with_event_kinds(watched_kinds());
        let mut inner = PollWatcher::new(relay, config).map_err(|err| translate(err, shown))?;
        for dir in dirs {
            if !dir.is_dir() {
                return Err(translate(
                    notify::Error::new(notify::ErrorKind::PathNotFound),
                    dir,
                ));
            }
            inner
                .watch(dir, RecursiveMode::NonRecursive)
                .map_err(|err| translate(err, dir))?;
        }
        Ok(inner)
    }

    /// The first directory watched, for messages.
    fn shown(&self) -> &Path {
        self.dirs.first().map_or(Path::new("."), PathBuf::as_path)
    }

    /// Whether `signal` ends the wait: a relevant file changed or events were lost.
    fn judge(&self, signal: Signal, relevant: &dyn Fn(&OsStr) -> bool) -> Result<bool> {
        match signal {
            Signal::Touched(name) => Ok(relevant(&name)),
            Signal::Rescan => {
                tracing::debug!(dir = %self.shown().display(), "event queue overflowed; rescanning");
                Ok(true)
            }
            Signal::Failed(err) => Err(translate(err, self.shown())),
        }
    }

    /// One wake-up covers every event already queued: the caller re-reads everything anyway.
    fn drain(&self, mut queued: impl FnMut() -> Option<Signal>) -> Result<Wake> {
        while let Some(signal) = queued() {
            if let Signal::Failed(err) = signal {
                return Err(translate(err, self.shown()));
            }
        }
        Ok(Wake::LookAgain)
    }

    fn stopped(&self) -> Error {
        Error::runtime(format!(
            "the file watcher on {} stopped",
            self.shown().display()
        ))
    }
}

/// notify's callback: turns its events into [`Signal`]s for whichever channel the waiter reads.
struct Relay {
    deliver: Arc<dyn Fn(Signal) + Send + Sync>,
    /// A scan can race a file's removal and report it as an error: for the polling fallback an
    /// error only means "look again".
    polling: bool,
}

impl Relay {
    fn new(deliver: &Arc<dyn Fn(Signal) + Send + Sync>, polling: bool) -> Self {
        Self {
            deliver: Arc::clone(deliver),
            polling,
        }
    }
}

impl notify::EventHandler for Relay {
    fn handle_event(&mut self, event: notify::Result<Event>) {
        match event {
            Ok(event) if event.need_rescan() => (self.deliver)(Signal::Rescan),
            Ok(event) if is_write(event.kind) => {
                for path in event.paths {
                    if let Some(name) = path.file_name() {
                        (self.deliver)(Signal::Touched(name.to_owned()));
                    }
                }
            }
            Ok(_) => {}
            Err(err) if self.polling => {
                tracing::debug!("polling the directory: {err}; looking again");
                (self.deliver)(Signal::Rescan);
            }
            Err(err) => (self.deliver)(Signal::Failed(err)),
        }
    }
}

/// A new inotify instance. Unit tests can make it fail as the kernel does when the limit is
/// reached, which they cannot bring about for real from inside a threaded test process.
fn open_inotify(relay: Relay) -> notify::Result<RecommendedWatcher> {
    #[cfg(test)]
    if let Some(errno) = tests::INJECTED_ERRNO.with(std::cell::Cell::get) {
        return Err(notify::Error::io(std::io::Error::from_raw_os_error(errno)));
    }
    RecommendedWatcher::new(
        relay,
        notify::Config::default().with_event_kinds(watched_kinds()),
    )
}

/// One of inotify's limits, reached (docs/ARCHITECTURE.md, "Watching").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Limit {
    /// `ENOSPC` from `inotify_add_watch`.
    Watches,
    /// `EMFILE` from `inotify_init1`: the user's instances (or the process's open files).
    Instances,
}

/// The fallback warns once per process, however many watches fall back.
static WARNED: AtomicBool = AtomicBool::new(false);

impl Limit {
    fn of(err: &notify::Error) -> Option<Self> {
        match &err.kind {
            notify::ErrorKind::MaxFilesWatch => Some(Self::Watches),
            notify::ErrorKind::Io(io) => match io.raw_os_error() {
                Some(code) if code == nix::errno::Errno::ENOSPC as i32 => Some(Self::Watches),
                Some(code) if code == nix::errno::Errno::EMFILE as i32 => Some(Self::Instances),
                _ => None,
            },
            _ => None,
        }
    }

    fn reached(self) -> &'static str {
        match self {
            Self::Watches => "the inotify watch limit is reached",
            Self::Instances => "too many inotify instances or open files",
        }
    }

    fn raise(self) -> &'static str {
        match self {
            Self::Watches => "raise it with `sudo sysctl fs.inotify.max_user_watches=524288`",
            Self::Instances => {
                "raise `sudo sysctl fs.inotify.max_user_instances=1024`, or the open-file limit with `ulimit -n`"
            }
        }
    }

    fn warn_once(self, dir: &Path) {
        if !WARNED.swap(true, Ordering::SeqCst) {
            tracing::warn!(
                "cannot watch {} with inotify: {}; polling every {} ms instead ({})",
                dir.display(),
                self.reached(),
                POLL_INTERVAL.as_millis(),
                self.raise()
            );
        }
    }
}

/// When a wait gives up on events: at the deadline or the safety re-scan, whichever is first.
fn wake_by(deadline: Option<Instant>, safety: Instant) -> Instant {
    deadline.map_or(safety, |deadline| deadline.min(safety))
}

/// Why a wait that saw no relevant event returns.
fn timed_out(deadline: Option<Instant>) -> Wake {
    if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
        Wake::Deadline
    } else {
        Wake::LookAgain
    }
}

/// The events asked of the kernel: those [`is_write`] counts. Left to its default, notify 9 asks
/// for every open too, and each command's read of config.json or an inbox then woke every watcher
/// of that folder (each supervisor, the signing agent, each waiting `ask` and `recv`) for nothing.
fn watched_kinds() -> EventKindMask {
    EventKindMask::CORE | EventKindMask::ACCESS_CLOSE
}

/// Events that can mean new content. Opening or reading a file (which swarm itself does on every
/// wake-up) must not count, or a reader would wake itself forever.
fn is_write(kind: EventKind) -> bool {
    match kind {
        EventKind::Access(access) => access == AccessKind::Close(AccessMode::Write),
        EventKind::Any
        | EventKind::Create(_)
        | EventKind::Modify(_)
        | EventKind::Remove(_)
        | EventKind::Other => true,
    }
}

/// A file-name filter for one file.
pub fn named(name: &OsStr) -> impl Fn(&OsStr) -> bool + '_ {
    move |candidate| candidate == name
}

/// A watch that cannot be made, turned into what to do about it (docs/ARCHITECTURE.md, "Watching").
pub(crate) fn translate(err: notify::Error, dir: &Path) -> Error {
    let shown = dir.display();
    if let Some(limit) = Limit::of(&err) {
        return Error::runtime(format!("cannot watch {shown}: {}", limit.reached()))
            .with_hint(limit.raise());
    }
    match &err.kind {
        notify::ErrorKind::PathNotFound => {
            Error::not_found(format!("cannot watch {shown}: it does not exist"))
        }
        _ => Error::runtime(format!("cannot watch {shown}: {err}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::io;

    thread_local! {
        /// Set by a test: the errno `open_inotify` fails with on this thread.
        pub(super) static INJECTED_ERRNO: Cell<Option<i32>> = const { Cell::new(None) };
    }

    /// Runs `body` with every inotify instance made on this thread failing with `errno`.
    fn without_inotify<T>(errno: nix::errno::Errno, body: impl FnOnce() -> T) -> T {
        INJECTED_ERRNO.with(|injected| injected.set(Some(errno as i32)));
        let result = body();
        INJECTED_ERRNO.with(|injected| injected.set(None));
        result
    }

    /// Replaces `target` from another thread once the caller is waiting.
    fn write_soon(target: &Path) -> std::thread::JoinHandle<()> {
        let target = target.to_path_buf();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            crate::store::durable::atomic_write(&target, |out| out.write_all(b"[]")).unwrap();
        })
    }

    #[test]
    fn without_inotify_a_watcher_polls_and_still_wakes() {
        let dir = tempfile::tempdir().unwrap();
        let watcher = without_inotify(nix::errno::Errno::EMFILE, || {
            Watcher::arm(dir.path()).unwrap()
        });
        assert_eq!(watcher.armed.rescan, POLL_INTERVAL);
        let target = dir.path().join("bob.json");
        let writer = write_soon(&target);
        let name = OsString::from("bob.json");
        let found = watcher
            .wait_for(
                Some(Instant::now() + Duration::from_secs(30)),
                &named(&name),
                || Ok(target.exists().then_some(())),
            )
            .unwrap();
        writer.join().unwrap();
        assert_eq!(found, Some(()));
    }

    #[test]
    fn without_inotify_the_async_watcher_polls_and_still_wakes() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("bob.json");
        let name = OsString::from("bob.json");
        runtime().block_on(async {
            let mut watcher = without_inotify(nix::errno::Errno::ENOSPC, || {
                AsyncWatcher::arm(dir.path()).unwrap()
            });
            assert_eq!(watcher.armed.rescan, POLL_INTERVAL);
            let writer = write_soon(&target);
            let found = watcher
                .wait_for(
                    Some(Instant::now() + Duration::from_secs(30)),
                    &named(&name),
                    || async { Ok(target.exists().then_some(())) },
                )
                .await
                .unwrap();
            writer.join().unwrap();
            assert_eq!(found, Some(()));
        });
    }

    #[test]
    fn other_inotify_failures_are_still_errors() {
        let dir = tempfile::tempdir().unwrap();
        let failed = without_inotify(nix::errno::Errno::EACCES, || Watcher::arm(dir.path()).err());
        assert!(failed.is_some(), "EACCES is not a limit to poll around");
    }

    #[test]
    fn watch_limit_errors_name_the_sysctl() {
        let dir = Path::new("/h/inboxes");
        let watches = translate(notify::Error::new(notify::ErrorKind::MaxFilesWatch), dir);
        assert!(
            watches
                .hint()
                .unwrap()
                .contains("fs.inotify.max_user_watches")
        );
        let enospc = translate(notify::Error::io(io::Error::from_raw_os_error(28)), dir);
        assert!(
            enospc
                .hint()
                .unwrap()
                .contains("fs.inotify.max_user_watches")
        );
        let instances = translate(notify::Error::io(io::Error::from_raw_os_error(24)), dir);
        assert!(
            instances
                .hint()
                .unwrap()
                .contains("fs.inotify.max_user_instances")
        );
        assert!(instances.message().contains("/h/inboxes"));
    }

    #[test]
    fn reads_do_not_count_as_changes() {
        assert!(!is_write(EventKind::Access(AccessKind::Open(
            AccessMode::Any
        ))));
        assert!(!is_write(EventKind::Access(AccessKind::Close(
            AccessMode::Read
        ))));
        assert!(is_write(EventKind::Access(AccessKind::Close(
            AccessMode::Write
        ))));
        assert!(is_write(EventKind::Modify(
            notify::event::ModifyKind::Name(notify::event::RenameMode::To)
        )));
    }

    #[test]
    fn a_rename_into_the_directory_wakes_the_waiter() {
        let dir = tempfile::tempdir().unwrap();
        let watcher = Watcher::arm(dir.path()).unwrap();
        let target = dir.path().join("bob.json");
        let writer = {
            let target = target.clone();
            std::thread::spawn(move || {
                crate::store::durable::atomic_write(&target, |out| out.write_all(b"[]")).unwrap();
            })
        };
        let name = OsString::from("bob.json");
        let found = watcher
            .wait_for(
                Some(Instant::now() + Duration::from_secs(30)),
                &named(&name),
                || Ok(target.exists().then_some(())),
            )
            .unwrap();
        writer.join().unwrap();
        assert_eq!(found, Some(()));
    }

    #[test]
    fn an_unrelated_file_does_not_satisfy_the_wait() {
        let dir = tempfile::tempdir().unwrap();
        let watcher = Watcher::arm(dir.path()).unwrap();
        std::fs::write(dir.path().join("alice.json"), "[]").unwrap();
        let name = OsString::from("bob.json");
        let wake = watcher
            .wait(
                Some(Instant::now() + Duration::from_millis(200)),
                &named(&name),
            )
            .unwrap();
        assert_eq!(wake, Wake::Deadline);
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn the_async_watcher_wakes_for_its_file_only() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("bob.json");
        let name = OsString::from("bob.json");
        runtime().block_on(async {
            let mut watcher = AsyncWatcher::arm(dir.path()).unwrap();
            std::fs::write(dir.path().join("alice.json"), "[]").unwrap();
            let wake = watcher
                .wait(
                    Some(Instant::now() + Duration::from_millis(200)),
                    &named(&name),
                )
                .await
                .unwrap();
            assert_eq!(wake, Wake::Deadline);

            let writer = {
                let target = target.clone();
                std::thread::spawn(move || {
                    crate::store::durable::atomic_write(&target, |out| out.write_all(b"[]"))
                        .unwrap();
                })
            };
            let found = watcher
                .wait_for(
                    Some(Instant::now() + Duration::from_secs(30)),
                    &named(&name),
                    || async { Ok(target.exists().then_some(())) },
                )
                .await
                .unwrap();
            writer.join().unwrap();
            assert_eq!(found, Some(()));
        });
    }

    #[test]
    fn a_cancelled_async_wait_still_comes_round_to_the_safety_rescan() {
        let dir = tempfile::tempdir().unwrap();
        let nothing = OsString::from("nothing.json");
        runtime().block_on(async {
            let mut watcher = AsyncWatcher::arm(dir.path()).unwrap();
            let give_up = Instant::now() + Duration::from_secs(30);
            let relevant = named(&nothing);
            // Cancelled far more often than the safety interval, as a busy `select!` would.
            let wake = loop {
                tokio::select! {
                    wake = watcher.wait(Some(give_up), &relevant) => break wake.unwrap(),
                    () = tokio::time::sleep(SAFETY_RESCAN / 4) => {}
                }
            };
            assert_eq!(wake, Wake::LookAgain);
        });
    }
}
