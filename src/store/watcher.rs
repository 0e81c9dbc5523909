//! The one way swarm waits for a file to change: a non-recursive `notify` watch on a directory,
//! filtered by file name. `recv --wait`, `watch`, `wait`, `up --wait`, the `--wait` flows and the
//! supervisor all use it (DESIGN §4).
//!
//! Events are only hints: the caller re-reads the file under its lock. The watch is armed before
//! the caller's first read, so nothing slips between read and watch. A queue overflow (the rescan
//! flag) and a slow safety interval both count as "look again".

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use notify::event::{AccessKind, AccessMode};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher as _};

use crate::error::{Error, Result};

/// A backstop against a lost event; not how messages normally arrive.
pub(crate) const SAFETY_RESCAN: Duration = Duration::from_secs(2);

pub struct Watcher {
    dirs: Vec<PathBuf>,
    signals: Receiver<Signal>,
    _inner: RecommendedWatcher,
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
    pub(crate) fn arm_all(dirs: &[&Path]) -> Result<Self> {
        let shown = dirs.first().copied().unwrap_or(Path::new("."));
        let (sender, signals) = mpsc::channel();
        let mut inner = notify::recommended_watcher(move |event: notify::Result<Event>| {
            let signal = match event {
                Ok(event) if event.need_rescan() => Some(Signal::Rescan),
                Ok(event) if is_write(event.kind) => {
                    for path in event.paths {
                        if let Some(name) = path.file_name() {
                            let _ = sender.send(Signal::Touched(name.to_owned()));
                        }
                    }
                    None
                }
                Ok(_) => None,
                Err(err) => Some(Signal::Failed(err)),
            };
            if let Some(signal) = signal {
                let _ = sender.send(signal);
            }
        })
        .map_err(|err| translate(err, shown))?;
        for dir in dirs {
            inner
                .watch(dir, RecursiveMode::NonRecursive)
                .map_err(|err| translate(err, dir))?;
        }
        Ok(Self {
            dirs: dirs.iter().map(|dir| dir.to_path_buf()).collect(),
            signals,
            _inner: inner,
        })
    }

    /// The first directory watched, for messages.
    fn shown(&self) -> &Path {
        self.dirs.first().map_or(Path::new("."), PathBuf::as_path)
    }

    /// Blocks until a file that `relevant` accepts changes, a rescan is due, or `deadline` passes.
    pub fn wait(
        &self,
        deadline: Option<Instant>,
        relevant: &dyn Fn(&OsStr) -> bool,
    ) -> Result<Wake> {
        let safety = Instant::now() + SAFETY_RESCAN;
        loop {
            let until = deadline.map_or(safety, |deadline| deadline.min(safety));
            let timeout = until.saturating_duration_since(Instant::now());
            match self.signals.recv_timeout(timeout) {
                Ok(Signal::Touched(name)) if relevant(&name) => return self.drained(),
                Ok(Signal::Touched(_)) => {}
                Ok(Signal::Rescan) => {
                    tracing::debug!(dir = %self.shown().display(), "event queue overflowed; rescanning");
                    return self.drained();
                }
                Ok(Signal::Failed(err)) => return Err(translate(err, self.shown())),
                Err(RecvTimeoutError::Timeout) => {
                    return Ok(
                        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                            Wake::Deadline
                        } else {
                            Wake::LookAgain
                        },
                    );
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(Error::runtime(format!(
                        "the file watcher on {} stopped",
                        self.shown().display()
                    )));
                }
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

    /// One wake-up covers every event already queued: the caller re-reads everything anyway.
    fn drained(&self) -> Result<Wake> {
        while let Ok(signal) = self.signals.try_recv() {
            if let Signal::Failed(err) = signal {
                return Err(translate(err, self.shown()));
            }
        }
        Ok(Wake::LookAgain)
    }
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

/// inotify's limits, turned into what to do about them (DESIGN §4).
pub(crate) fn translate(err: notify::Error, dir: &Path) -> Error {
    let shown = dir.display();
    match &err.kind {
        notify::ErrorKind::MaxFilesWatch => Error::runtime(format!(
            "cannot watch {shown}: the inotify watch limit is reached"
        ))
        .with_hint("raise it with `sudo sysctl fs.inotify.max_user_watches=524288`"),
        notify::ErrorKind::Io(io) if io.raw_os_error() == Some(nix::errno::Errno::ENOSPC as i32) => {
            Error::runtime(format!("cannot watch {shown}: the inotify watch limit is reached"))
                .with_hint("raise it with `sudo sysctl fs.inotify.max_user_watches=524288`")
        }
        notify::ErrorKind::Io(io) if io.raw_os_error() == Some(nix::errno::Errno::EMFILE as i32) => {
            Error::runtime(format!(
                "cannot watch {shown}: too many inotify instances or open files"
            ))
            .with_hint(
                "raise `sudo sysctl fs.inotify.max_user_instances=1024`, or the open-file limit with `ulimit -n`",
            )
        }
        notify::ErrorKind::PathNotFound => {
            Error::not_found(format!("cannot watch {shown}: it does not exist"))
        }
        _ => Error::runtime(format!("cannot watch {shown}: {err}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

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
}
