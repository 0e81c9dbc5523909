//! The three locks that guard every read-modify-write of a shared JSON file (docs/ARCHITECTURE.md,
//! "Locks"): swarm's own `flock` on `.<stem>.flock`, then the `flock` on `<stem>.lock` that
//! agent-team-mail (atm) takes, then Claude Code's `<file>.lock` directory. swarm processes queue
//! on the first; the second keeps atm's writers out, the directory Claude Code's.
//!
//! While swarm holds a lock directory it records the directory's identity in its flock file. A
//! swarm writer killed inside the locked section leaves the directory behind; the next swarm
//! process to get the flock sees that record, knows the directory's owner is dead (it would still
//! hold the flock otherwise) and removes it at once instead of waiting for it to go stale.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use crate::base::clock;
use crate::error::{Error, Result};
use crate::store::durable::{create_private_dir, open_private, symlink_refused};
use crate::store::paths::LockPaths;

/// A lock directory older than this was left by a writer that died (Claude Code uses the same bound).
pub(crate) const STALE_AFTER: Duration = Duration::from_secs(10);

/// How long to wait for a lock directory held by a live writer before giving up.
pub(crate) const DEFAULT_WAIT: Duration = Duration::from_secs(5);

/// All three locks on one file, released on drop (directory first, swarm's flock last).
#[derive(Debug)]
pub(crate) struct FileLock {
    dir: LockDir,
    /// atm's lock file when its flock is taken only around the write ([`FileLock::atm`]).
    deferred_atm: Option<PathBuf>,
    deadline: Option<Instant>,
    // Fields drop in this order, after `Drop::drop` has removed the directory.
    _atm: Option<Flock>,
    _flock: Flock,
}

impl FileLock {
    /// Waits for all three locks.
    pub(crate) fn acquire(paths: &LockPaths) -> Result<Self> {
        let flock = Queue::open(paths)?.lock()?;
        Self::complete(flock, paths).map_err(|failed| failed.error)
    }

    /// [`FileLock::acquire`] for an inbox: swarm's flock and the lock directory, atm's flock left
    /// to [`FileLock::atm`], around the check and the rename of a write.
    pub(crate) fn acquire_deferring_atm(paths: &LockPaths) -> Result<Self> {
        let flock = Queue::open(paths)?.lock()?;
        Self::complete_deferring_atm(flock, paths).map_err(|failed| failed.error)
    }

    /// Takes atm's flock and the lock directory for a holder of swarm's flock, waiting up to
    /// `SWARM_LOCK_TIMEOUT` for both. When that fails, swarm's flock comes back still held, so
    /// the caller can undo what it did before another swarm process is in.
    pub(crate) fn complete(flock: Flock, paths: &LockPaths) -> Result<Self, Incomplete> {
        Self::take(flock, paths, false)
    }

    /// [`FileLock::complete`] for an inbox, atm's flock left to [`FileLock::atm`]. atm tries its
    /// lock six times in 1.55 s, then gives up and queues the message in a spool only its daemon
    /// delivers; swarm writers that held it from their read to their rename, one after another,
    /// kept it busy that long under load (docs/ARCHITECTURE.md, "Locks").
    pub(crate) fn complete_deferring_atm(
        flock: Flock,
        paths: &LockPaths,
    ) -> Result<Self, Incomplete> {
        Self::take(flock, paths, true)
    }

    fn take(mut flock: Flock, paths: &LockPaths, defer_atm: bool) -> Result<Self, Incomplete> {
        let deadline = clock::deadline(wait_bound());
        // atm locks inboxes and config.json only; a task file has no atm lock.
        let (atm, deferred_atm) = match paths.atm.as_deref() {
            None => (None, None),
            Some(atm) if defer_atm => (None, Some(atm.to_path_buf())),
            Some(atm) => match FlockFile::open(atm).and_then(|atm| atm.lock_by(deadline)) {
                Ok(atm) => (Some(atm), None),
                Err(error) => return Err(Incomplete { flock, error }),
            },
        };
        match LockDir::acquire(paths.dir.clone(), deadline, &mut flock) {
            Ok(dir) => Ok(Self {
                dir,
                deferred_atm,
                deadline,
                _atm: atm,
                _flock: flock,
            }),
            Err(error) => Err(Incomplete { flock, error }),
        }
    }

    /// atm's flock, for a holder that deferred it, waited for up to the same deadline as the
    /// other locks; `None` when it is held already or the file has none.
    pub(crate) fn atm(&self) -> Result<Option<Flock>> {
        self.deferred_atm
            .as_deref()
            .map(|atm| FlockFile::open(atm).and_then(|atm| atm.lock_by(self.deadline)))
            .transpose()
    }
}

/// [`FileLock::complete`] failed: why, and swarm's flock, still held until this is dropped.
#[derive(Debug)]
pub(crate) struct Incomplete {
    pub(crate) flock: Flock,
    pub(crate) error: Error,
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // The record stays: it names a directory (device, inode, mtime to the nanosecond) that no
        // later directory can match, as one left by a crash would, and the next holder writes its
        // own over it. Emptying it was a write to the file, and a wait on the journal, at every
        // release.
        let _ = fs::remove_dir(&self.dir.path);
    }
}

/// `SWARM_LOCK_TIMEOUT` (seconds) bounds the wait for another tool's locks; a bound too long to
/// represent is none.
pub fn wait_bound() -> Duration {
    clock::seconds_from_env("SWARM_LOCK_TIMEOUT", DEFAULT_WAIT)
}

/// swarm's flock on a shared file, taken in turn. A process that has to wait for it says so: it
/// holds the waiting room (`.<stem>.wait.flock`) shared while it waits in the kernel. A process
/// that finds someone in the waiting room does not take the lock ahead of them, even when it is
/// free for a moment: it waits too. Otherwise a writer that has just released the lock and comes
/// straight back would win it again and again over the waiters the kernel has only just woken,
/// and a consumer, or a writer whose spooled message is already committed, could wait for a long
/// time (docs/ARCHITECTURE.md, "Locks"). Opened once, so a writer that tried it, found it busy
/// and spooled meanwhile needs nothing more than the lock itself to go on.
#[derive(Debug)]
pub(crate) struct Queue {
    flock: FlockFile,
    room: FlockFile,
}

impl Queue {
    pub(crate) fn open(paths: &LockPaths) -> Result<Self> {
        Ok(Self {
            flock: FlockFile::open(&paths.flock)?,
            room: FlockFile::open(&paths.waiting)?,
        })
    }

    /// The lock if it is free and nobody waits for it; else the queue, to wait in later.
    pub(crate) fn try_lock(self) -> Result<Result<Flock, Self>> {
        // Anyone waiting holds the room shared; a momentary exclusive hold asks without waiting.
        match self.room.file.try_lock() {
            Ok(()) => {
                let _ = self.room.file.unlock();
            }
            Err(fs::TryLockError::WouldBlock) => return Ok(Err(self)),
            Err(fs::TryLockError::Error(err)) => {
                return Err(Error::io("lock", &self.room.path, err));
            }
        }
        let Self { flock, room } = self;
        Ok(flock.try_lock()?.map_err(|flock| Self { flock, room }))
    }

    /// Waits for the lock in the waiting room, in the kernel.
    pub(crate) fn lock(self) -> Result<Flock> {
        self.room
            .file
            .lock_shared()
            .map_err(|err| Error::io("lock", &self.room.path, err))?;
        let flock = self.flock.lock();
        let _ = self.room.file.unlock();
        flock
    }
}

/// An flock file, open but not locked yet.
#[derive(Debug)]
pub struct FlockFile {
    file: File,
    path: PathBuf,
}

impl FlockFile {
    /// Opens the lock file at `path`, creating it when missing, never through a symlink: its
    /// holder writes into it (the lock directory's record), and a link would carry that write
    /// to whatever it points at.
    pub fn open(path: &Path) -> Result<Self> {
        let file = open_private(
            path,
            OpenOptions::new().read(true).write(true).truncate(false),
        )?;
        Ok(Self {
            file,
            path: path.to_path_buf(),
        })
    }

    /// Waits for the lock.
    pub fn lock(self) -> Result<Flock> {
        self.file
            .lock()
            .map_err(|err| Error::io("lock", &self.path, err))?;
        Ok(Flock { file: self.file })
    }

    /// Waits for a lock that another tool holds for short moments, polling so the wait ends at
    /// `deadline`. (atm's own writers poll it with 50 ms back-off; a swarm process asks sooner.)
    fn lock_by(self, deadline: Option<Instant>) -> Result<Flock> {
        let mut backoff = Duration::from_micros(500);
        loop {
            match self.file.try_lock() {
                Ok(()) => return Ok(Flock { file: self.file }),
                Err(fs::TryLockError::WouldBlock) => {}
                Err(fs::TryLockError::Error(err)) => {
                    return Err(Error::io("lock", &self.path, err));
                }
            }
            if clock::passed(deadline) {
                return Err(Error::runtime(format!(
                    "lock {} is held by another writer",
                    self.path.display()
                ))
                .with_hint(format!(
                    "agent-team-mail (atm) takes this lock to write; a process holding it is still running (`fuser {}` names it)",
                    self.path.display()
                )));
            }
            thread::sleep(backoff);
            backoff = (backoff * 2).min(Duration::from_millis(10));
        }
    }

    /// The lock if no other swarm process holds it right now; else the file, to wait on later.
    pub fn try_lock(self) -> Result<Result<Flock, Self>> {
        match self.file.try_lock() {
            Ok(()) => Ok(Ok(Flock { file: self.file })),
            Err(fs::TryLockError::WouldBlock) => Ok(Err(self)),
            Err(fs::TryLockError::Error(err)) => Err(Error::io("lock", &self.path, err)),
        }
    }
}

/// An exclusive `flock`, held until drop. The kernel releases it if the process dies.
#[derive(Debug)]
pub struct Flock {
    file: File,
}

impl Flock {
    /// Waits for the lock on `path`, creating the file when missing.
    pub fn wait(path: &Path) -> Result<Self> {
        FlockFile::open(path)?.lock()
    }
}

/// How much of a flock file a record fills, padded: a record no longer than this is written in
/// place, the file's size unchanged.
const RECORD_SIZE: usize = 4096;

/// What a flock file holds: a line its holder writes for the next one to read, such as the
/// identity of the lock directory it created, or the pid of the `swarm up` starting a team.
impl Flock {
    /// What the last holder recorded, if anything.
    pub(crate) fn recorded(&mut self) -> Option<String> {
        read_record(&mut self.file)
    }

    /// Replaces the record: written over the last one in place, padded with newlines to
    /// [`RECORD_SIZE`], so the file keeps its size and its block. Truncated and written again at
    /// every inbox write, it made ext4 wait on its journal with the reader's lock held.
    pub fn record(&mut self, text: &str) {
        use std::os::unix::fs::FileExt;
        let mut bytes = text.as_bytes().to_vec();
        let written = if bytes.len() <= RECORD_SIZE {
            bytes.resize(RECORD_SIZE, b'\n');
            self.file.metadata().and_then(|meta| {
                if meta.len() > RECORD_SIZE as u64 {
                    self.file.set_len(RECORD_SIZE as u64)?;
                }
                self.file.write_all_at(&bytes, 0)
            })
        } else {
            self.file
                .set_len(0)
                .and_then(|()| self.file.write_all_at(&bytes, 0))
        };
        if let Err(err) = written {
            tracing::debug!("cannot record in a lock file: {err}");
        }
    }

    /// Empties the record.
    pub fn forget(&mut self) {
        let _ = self.file.set_len(0);
    }
}

impl FlockFile {
    /// What the holder of the lock recorded, read without the lock.
    pub fn recorded(&mut self) -> Option<String> {
        read_record(&mut self.file)
    }
}

fn read_record(file: &mut File) -> Option<String> {
    let mut record = String::new();
    file.rewind().ok()?;
    file.read_to_string(&mut record).ok()?;
    let record = record.trim();
    (!record.is_empty()).then(|| record.to_owned())
}

impl Drop for Flock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

/// Claude Code's lock: a directory that exists while a writer holds it.
#[derive(Debug)]
struct LockDir {
    path: PathBuf,
}

impl LockDir {
    fn acquire(path: PathBuf, deadline: Option<Instant>, flock: &mut Flock) -> Result<Self> {
        let mut backoff = Duration::from_millis(1);
        recover_abandoned(&path, flock);
        loop {
            if create(&path, flock)? {
                return Ok(Self { path });
            }
            match age(&path)? {
                // Gone between the attempt and the stat: retry at once.
                None => continue,
                Some(age) if age > STALE_AFTER => {
                    tracing::warn!(lock = %path.display(), age_s = age.as_secs(), "removing stale lock directory");
                    match fs::remove_dir(&path) {
                        Ok(()) => continue,
                        Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
                        Err(err) => {
                            return Err(Error::io("remove stale lock directory", &path, err));
                        }
                    }
                }
                Some(age) => {
                    if clock::passed(deadline) {
                        return Err(Error::runtime(format!(
                            "lock {} is held by another writer (modified {}s ago)",
                            path.display(),
                            age.as_secs()
                        ))
                        .with_hint(format!(
                            "it is treated as stale after {}s; if no writer is running, remove it with `rmdir {}`",
                            STALE_AFTER.as_secs(),
                            path.display()
                        )));
                    }
                }
            }
            thread::sleep(backoff);
            backoff = (backoff * 2).min(Duration::from_millis(25));
        }
    }
}

/// Removes what a swarm writer killed inside its locked section left: its lock directory, or the
/// staging directory it was about to move into place. Safe because we hold the flock, so the
/// writer named in the record is dead, and the identity check spares any directory created since.
/// A record is only a hint: a staging directory it names is removed only if it is where a swarm
/// writer makes one ([`LockPaths::is_staging`]). It stays, as [`FileLock`]'s release leaves it:
/// the next holder writes its own over it, and emptying it freed the file's block at every take,
/// a discard the disk had to finish before the writer went on.
fn recover_abandoned(path: &Path, flock: &mut Flock) {
    let Some(record) = flock.recorded() else {
        return;
    };
    if let Some((staging, recorded)) = record.split_once('\n') {
        let staging = Path::new(staging);
        let ours = LockPaths::is_staging(path, staging);
        let candidates: &[&Path] = if ours { &[path, staging] } else { &[path] };
        for &candidate in candidates {
            if identity(candidate).as_deref() == Some(recorded) {
                tracing::info!(lock = %candidate.display(), "removing lock directory left by a swarm writer that died");
                let _ = fs::remove_dir(candidate);
            }
        }
    }
}

/// Takes the lock directory if it is free. The directory is made under a private name, recorded in
/// the flock file, then renamed into place without replacing anything, so there is no moment at
/// which the lock exists unrecorded.
fn create(path: &Path, flock: &mut Flock) -> Result<bool> {
    let staging = LockPaths::staging(path, std::process::id());
    match create_private_dir(&staging) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
        Err(err) => return Err(Error::io("create lock directory", &staging, err)),
    }
    if let Some(identity) = identity(&staging) {
        flock.record(&format!("{}\n{identity}", staging.display()));
    }
    match rename_no_replace(&staging, path) {
        Ok(()) => Ok(true),
        Err(err) => {
            flock.forget();
            let _ = fs::remove_dir(&staging);
            if err.kind() == io::ErrorKind::AlreadyExists {
                Ok(false)
            } else {
                Err(Error::io("create lock directory", path, err))
            }
        }
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn rename_no_replace(from: &Path, to: &Path) -> io::Result<()> {
    use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};
    match renameat2(AT_FDCWD, from, AT_FDCWD, to, RenameFlags::RENAME_NOREPLACE) {
        Ok(()) => Ok(()),
        // File systems without RENAME_NOREPLACE: mkdir is atomic too, only the record comes later.
        Err(nix::errno::Errno::EINVAL) => {
            fs::remove_dir(from)?;
            create_private_dir(to)
        }
        Err(errno) => Err(io::Error::from(errno)),
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn rename_no_replace(from: &Path, to: &Path) -> io::Result<()> {
    fs::remove_dir(from)?;
    create_private_dir(to)
}

/// Device, inode and modification time: enough to tell one directory from a later one at the same
/// path. A rename within one directory changes none of them.
fn identity(path: &Path) -> Option<String> {
    let meta = fs::symlink_metadata(path).ok()?;
    meta.is_dir().then(|| {
        format!(
            "{}:{}:{}.{}",
            meta.dev(),
            meta.ino(),
            meta.mtime(),
            meta.mtime_nsec()
        )
    })
}

/// How old the lock directory at `path` is; `None` when it is gone. A symlink there is refused:
/// a stale one would be removed, and a link is no lock of Claude Code's.
fn age(path: &Path) -> Result<Option<Duration>> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_symlink() => return Err(symlink_refused("write", path)),
        Ok(meta) => meta,
        Err(_) => return Ok(None),
    };
    let Ok(modified) = meta.modified() else {
        return Ok(None);
    };
    Ok(Some(
        SystemTime::now()
            .duration_since(modified)
            .unwrap_or_default(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_dir_is_removed_on_release() {
        let dir = tempfile::tempdir().unwrap();
        let paths = LockPaths::beside(&dir.path().join("bob.json"));
        {
            let _lock = FileLock::acquire(&paths).unwrap();
            assert!(paths.dir.is_dir());
        }
        assert!(!paths.dir.exists());
        assert!(paths.flock.exists(), "the flock file stays");
    }

    /// Taking the lock directory leaves the file's record in place until it writes its own: a
    /// lock file emptied at each take lost its block each time, and the disk discarded it.
    #[test]
    fn taking_a_lock_directory_writes_its_record_over_the_last() {
        let dir = tempfile::tempdir().unwrap();
        let paths = LockPaths::beside(&dir.path().join("bob.json"));
        drop(FileLock::acquire(&paths).unwrap());
        let size = |path: &Path| fs::metadata(path).unwrap().len();
        assert_eq!(size(&paths.flock), RECORD_SIZE as u64);
        let mut flock = Queue::open(&paths).unwrap().lock().unwrap();
        recover_abandoned(&paths.dir, &mut flock);
        assert_eq!(
            size(&paths.flock),
            RECORD_SIZE as u64,
            "the record was emptied"
        );
        assert!(flock.recorded().is_some());
    }

    /// A record is written over the last in place: the file keeps its size, whatever the length
    /// of the record before, and only the newest is read back.
    #[test]
    fn a_record_replaces_the_last_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".bob.flock");
        let mut flock = Flock::wait(&path).unwrap();
        let long = "x".repeat(RECORD_SIZE + 10);
        flock.record(&long);
        assert_eq!(flock.recorded().as_deref(), Some(long.as_str()));
        flock.record("/a/staging\n1:2:3");
        assert_eq!(flock.recorded().as_deref(), Some("/a/staging\n1:2:3"));
        assert_eq!(fs::metadata(&path).unwrap().len(), RECORD_SIZE as u64);
        flock.record("/b\n4");
        assert_eq!(flock.recorded().as_deref(), Some("/b\n4"));
        assert_eq!(fs::metadata(&path).unwrap().len(), RECORD_SIZE as u64);
        flock.forget();
        assert_eq!(flock.recorded(), None);
    }

    #[test]
    fn a_held_lock_dir_times_out_with_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let held = dir.path().join("bob.json.lock");
        fs::create_dir(&held).unwrap();
        let mut flock = FlockFile::open(&dir.path().join(".bob.flock"))
            .unwrap()
            .lock()
            .unwrap();
        let err = LockDir::acquire(
            held.clone(),
            clock::deadline(Duration::from_millis(50)),
            &mut flock,
        )
        .unwrap_err();
        assert!(err.message().contains("bob.json.lock"), "{}", err.message());
        assert!(held.is_dir(), "a live writer's lock must not be removed");
    }

    #[test]
    fn an_atm_writer_holding_its_flock_is_waited_for_then_named() {
        let dir = tempfile::tempdir().unwrap();
        let paths = LockPaths::beside(&dir.path().join("bob.json"));
        let atm_path = paths.atm.clone().unwrap();
        let atm = File::create(&atm_path).unwrap();
        atm.lock().unwrap();
        let err = FlockFile::open(&atm_path)
            .unwrap()
            .lock_by(clock::deadline(Duration::from_millis(50)))
            .unwrap_err();
        assert!(err.message().contains("bob.lock"), "{}", err.message());
        atm.unlock().unwrap();
        let lock = FileLock::acquire(&paths).unwrap();
        assert!(
            File::open(&atm_path).unwrap().try_lock().is_err(),
            "atm's flock is held with the others"
        );
        drop(lock);
        assert!(File::open(&atm_path).unwrap().try_lock().is_ok());
    }

    #[test]
    fn a_free_lock_is_not_taken_ahead_of_a_process_waiting_for_it() {
        let dir = tempfile::tempdir().unwrap();
        let paths = LockPaths::beside(&dir.path().join("bob.json"));
        // A process the kernel has just woken to take the lock, still in the waiting room.
        let waiter = FlockFile::open(&paths.waiting).unwrap();
        waiter.file.lock_shared().unwrap();
        let Err(queue) = Queue::open(&paths).unwrap().try_lock().unwrap() else {
            panic!("a newcomer took the free lock ahead of a waiting process");
        };
        waiter.file.unlock().unwrap();
        assert!(queue.try_lock().unwrap().is_ok(), "nobody waits now");
    }

    #[test]
    fn a_stale_lock_dir_is_broken() {
        let dir = tempfile::tempdir().unwrap();
        let held = dir.path().join("bob.json.lock");
        fs::create_dir(&held).unwrap();
        let old = SystemTime::now() - Duration::from_secs(60);
        File::open(&held).unwrap().set_modified(old).unwrap();
        let lock = FileLock::acquire(&LockPaths::beside(&dir.path().join("bob.json"))).unwrap();
        assert!(held.is_dir());
        drop(lock);
        assert!(!held.exists());
    }

    #[test]
    fn a_lock_dir_left_by_a_dead_swarm_writer_is_removed_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let paths = LockPaths::beside(&dir.path().join("bob.json"));
        let held = paths.dir.clone();
        {
            // A writer killed inside its locked section: the kernel drops its flock, nothing
            // removes its directory or its record.
            let mut flock = FlockFile::open(&paths.flock).unwrap().lock().unwrap();
            let _dir = LockDir::acquire(held.clone(), Some(Instant::now()), &mut flock).unwrap();
        }
        assert!(held.is_dir());
        let again = LockDir::acquire(
            held.clone(),
            Some(Instant::now()),
            &mut FlockFile::open(&paths.flock).unwrap().lock().unwrap(),
        );
        assert!(
            again.is_ok(),
            "the dead writer's directory should be recognised"
        );
    }

    #[test]
    fn a_record_naming_a_directory_elsewhere_removes_nothing_there() {
        let dir = tempfile::tempdir().unwrap();
        let paths = LockPaths::beside(&dir.path().join("bob.json"));
        // An empty directory outside, recorded as if a swarm writer had staged it.
        let elsewhere = dir.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        let forged = format!("{}\n{}", elsewhere.display(), identity(&elsewhere).unwrap());
        fs::write(&paths.flock, forged).unwrap();
        drop(FileLock::acquire(&paths).unwrap());
        assert!(
            elsewhere.is_dir(),
            "a directory the record named was removed"
        );
        // The same name beside the lock directory would have been one of swarm's.
        let staged = LockPaths::staging(&paths.dir, 1);
        fs::create_dir(&staged).unwrap();
        let record = format!("{}\n{}", staged.display(), identity(&staged).unwrap());
        fs::write(&paths.flock, record).unwrap();
        drop(FileLock::acquire(&paths).unwrap());
        assert!(!staged.exists(), "a dead writer's staging directory stays");
    }

    #[test]
    fn a_symlinked_lock_file_is_refused_and_its_target_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let paths = LockPaths::beside(&dir.path().join("bob.json"));
        let target = dir.path().join("precious");
        fs::write(&target, "keep").unwrap();
        std::os::unix::fs::symlink(&target, &paths.flock).unwrap();
        let err = FileLock::acquire(&paths).unwrap_err();
        assert!(
            err.message()
                .starts_with("refusing to write through a symlink"),
            "{}",
            err.message()
        );
        assert_eq!(fs::read_to_string(&target).unwrap(), "keep");
    }

    #[test]
    fn a_foreign_lock_dir_is_not_mistaken_for_swarms() {
        let dir = tempfile::tempdir().unwrap();
        let paths = LockPaths::beside(&dir.path().join("bob.json"));
        drop(FileLock::acquire(&paths).unwrap());
        // Claude Code creates its own directory at the same path.
        fs::create_dir(&paths.dir).unwrap();
        let mut flock = FlockFile::open(&paths.flock).unwrap().lock().unwrap();
        assert!(
            LockDir::acquire(
                paths.dir.clone(),
                clock::deadline(Duration::from_millis(20)),
                &mut flock
            )
            .is_err()
        );
    }
}
