//! Durable file writes. A reader that takes no lock must never see a partial file, nor an empty new
//! one, and a write that returned is on disk: temp file in the same directory, fsync, rename (or a
//! rename that replaces nothing, for a new file), fsync the directory (docs/ARCHITECTURE.md,
//! "Durable writes").
//!
//! No temporary file outlives its writer for long: one a killed writer left
//! (`.<file>.<pid>.<random>.tmp`) is removed by the first write in its folder of a later process,
//! once it is older than a few minutes and its writer is gone ([`sweep_abandoned_temps`]).
//!
//! Every file swarm opens under its home is opened here, and none through a symlink
//! (docs/ARCHITECTURE.md, "Private files"): a file swarm writes in place (a lock file, a history
//! file, a log) is opened with `O_NOFOLLOW` by [`open_private`], a file it is about to rewrite is
//! read the same way by [`read_to_rewrite`], and a new file is created exclusively, which follows
//! no link either. A symlink where swarm keeps a file is refused, naming it; what it points to is
//! never touched.
//!
//! Everything swarm keeps under its home is private to its owner: directories 0700 ([`private_dir`]),
//! files 0600, whatever the umask. A file or directory found open to others, made before swarm
//! kept its files private or by another tool, is tightened the next time swarm writes there.

use std::collections::BTreeSet;
use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, BufWriter, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::unistd::getuid;

use crate::base::process;
use crate::error::{Error, Result};
use crate::store::paths::{self, TempName};

/// Mode for files swarm creates: messages are private to their owner.
pub(crate) const PRIVATE_FILE_MODE: u32 = 0o600;

/// Mode for directories swarm creates under its home.
pub(crate) const PRIVATE_DIR_MODE: u32 = 0o700;

/// Replaces `path` with what `write` produces, atomically and durably. The new file is mode 0600,
/// whatever the old one's was, and the rename replaces a symlink at `path` itself.
pub fn atomic_write(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<()> {
    replacement(path, write)?.rename()?.sync();
    Ok(())
}

/// [`atomic_write`] in steps, for a writer that checks something just before the rename, under a
/// lock it holds for no longer than that (atm's, on an inbox: docs/ARCHITECTURE.md, "Locks"):
/// the next version of `path`, written and synced beside it, not in place yet. Dropped, it goes.
pub(crate) fn replacement(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<Replacement> {
    Ok(Replacement {
        temp: synced_temp(path, PRIVATE_FILE_MODE, write)?,
        path: path.to_path_buf(),
    })
}

/// A file's next version, synced and waiting to be renamed into place.
#[derive(Debug)]
pub(crate) struct Replacement {
    temp: tempfile::NamedTempFile,
    path: PathBuf,
}

impl Replacement {
    /// Renames it onto its file: readers see it from now on; durable once [`Renamed::sync`]ed.
    pub(crate) fn rename(self) -> Result<Renamed> {
        self.temp
            .persist(&self.path)
            .map_err(|err| Error::io("rename a temporary file onto", &self.path, err.error))?;
        Ok(Renamed(self.path))
    }
}

/// A file just renamed into place, its directory not synced yet.
#[must_use = "a rename is durable only once its directory is synced"]
#[derive(Debug)]
pub(crate) struct Renamed(PathBuf);

impl Renamed {
    /// Syncs the directory: the rename survives a crash.
    pub(crate) fn sync(self) {
        sync_after_rename(&self.0);
    }
}

/// Syncs the directory of a file just renamed into place. The rename has happened and readers see
/// the new file, so a failure here is no failure of the write: reporting one would tell the caller
/// that nothing changed. It is logged instead; the file is durable once the directory is next
/// synced, by this or any later write.
fn sync_after_rename(path: &Path) {
    if let Err(err) = sync_dir(parent(path)) {
        tracing::warn!("{err}; {} may not survive a crash", path.display());
    }
}

/// Makes a rename or create in `dir` durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|dir| dir.sync_all())
        .map_err(|err| Error::io("sync directory", dir, err))
}

/// Creates `path` holding `contents` unless it exists; never touches an existing file.
/// Returns whether it created the file. A symlink at `path` is refused.
///
/// The contents are written and synced under a temporary name first, then moved into place
/// without replacing anything (`renameat2(RENAME_NOREPLACE)`, else `link` and `unlink`), so a
/// reader that takes no lock sees no file or the whole file, never an empty one.
pub(crate) fn create_exclusive(path: &Path, contents: &[u8]) -> Result<bool> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_symlink() => return Err(symlink_refused("write", path)),
        Ok(_) => return Ok(false),
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => return Err(Error::io("inspect", path, err)),
    }
    let temp = synced_temp(path, PRIVATE_FILE_MODE, |out| out.write_all(contents))?;
    match temp.persist_noclobber(path) {
        Ok(_) => {
            sync_after_rename(path);
            Ok(true)
        }
        Err(err) if err.error.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(err) => Err(Error::io("create", path, err.error)),
    }
}

/// A temporary file beside `path` holding what `write` produces, synced, with permission `mode`.
fn synced_temp(
    path: &Path,
    mode: u32,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<tempfile::NamedTempFile> {
    let dir = parent(path);
    sweep_abandoned_temps(dir);
    let temp = tempfile::Builder::new()
        .prefix(&paths::temp_prefix(path))
        .suffix(paths::TEMP_SUFFIX)
        .rand_bytes(paths::TEMP_RANDOM_LEN)
        .permissions(fs::Permissions::from_mode(mode))
        .tempfile_in(dir)
        .map_err(|err| Error::io("create a temporary file in", dir, err))?;
    let mut writer = BufWriter::new(temp.as_file());
    write(&mut writer)
        .and_then(|()| writer.flush())
        .map_err(|err| Error::io("write", temp.path(), err))?;
    drop(writer);
    temp.as_file()
        .sync_all()
        .map_err(|err| Error::io("sync", temp.path(), err))?;
    Ok(temp)
}

/// How old a temporary file must be before it counts as abandoned: a write holds one for
/// milliseconds, or for a lock wait at most, never for minutes.
const TEMP_ABANDONED_AFTER: Duration = Duration::from_secs(5 * 60);

/// Removes the temporary files a killed writer left in `dir`: named as [`synced_temp`] names
/// them, older than [`TEMP_ABANDONED_AFTER`], and written by a process that is gone (or by a
/// swarm that put no pid in the name). Once per folder per process, before its first write
/// there. A writer that is merely slow loses nothing to this: it renames its own file, and a
/// rename that finds it gone fails its write, which then says so.
fn sweep_abandoned_temps(dir: &Path) {
    static SWEPT: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());
    let first = SWEPT
        .lock()
        .is_ok_and(|mut swept| swept.insert(dir.to_path_buf()));
    if !first {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Some(TempName { writer }) = TempName::of(&entry.file_name()) else {
            continue;
        };
        let abandoned = entry.metadata().is_ok_and(|meta| {
            meta.is_file()
                && meta
                    .modified()
                    .ok()
                    .and_then(|at| at.elapsed().ok())
                    .is_some_and(|age| age > TEMP_ABANDONED_AFTER)
        }) && writer.is_none_or(|pid| !process::alive(pid));
        if abandoned && fs::remove_file(entry.path()).is_ok() {
            tracing::info!(file = %entry.path().display(), "removed a temporary file a killed writer left");
        }
    }
}

/// Creates `path`, which must not exist yet, holding `contents`, without syncing it: for a file
/// whose loss in a crash loses nothing (a spool file, see `store/mailbox.rs`). Like every file
/// swarm creates, it is created exclusively, mode 0600, and through no symlink.
pub(crate) fn create_unsynced(path: &Path, contents: &[u8]) -> Result<()> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(PRIVATE_FILE_MODE)
        .custom_flags(OFlag::O_NOFOLLOW.bits())
        .open(path)
        .map_err(|err| open_error("create", path, err))?
        .write_all(contents)
        .map_err(|err| Error::io("write", path, err))
}

/// Opens a file that swarm writes in place (a lock file, a history file, a log) with `options`,
/// creating it mode 0600 when missing, and tightening it to 0600 if it was open to others. A
/// symlink at `path` is refused (`O_NOFOLLOW`), and so is anything but a regular file.
/// (`O_NONBLOCK`, cleared once the file is known to be regular, keeps a FIFO planted there from
/// blocking the open.)
pub fn open_private(path: &Path, options: &mut OpenOptions) -> Result<File> {
    let file = options
        .create(true)
        .mode(PRIVATE_FILE_MODE)
        .custom_flags((OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK).bits())
        .open(path)
        .map_err(|err| open_error("open", path, err))?;
    let (file, _) = regular(file, path)?;
    // Written in place: blocking again, as a writer expects of its file.
    fcntl(&file, FcntlArg::F_GETFL)
        .map(|flags| OFlag::from_bits_retain(flags) - OFlag::O_NONBLOCK)
        .and_then(|flags| fcntl(&file, FcntlArg::F_SETFL(flags)))
        .map_err(|errno| Error::io("open", path, errno.into()))?;
    tighten(&file, path)?;
    Ok(file)
}

/// Whether something with this status is ours and open to others.
fn is_loose(meta: &fs::Metadata) -> bool {
    meta.mode() & 0o077 != 0 && meta.uid() == getuid().as_raw()
}

/// Makes an open file of ours that others may read or write 0600 (`fchmod`, so no path is
/// looked up again). A file of another user is left as it is.
fn tighten(file: &File, path: &Path) -> Result<()> {
    let meta = file
        .metadata()
        .map_err(|err| Error::io("inspect", path, err))?;
    if !is_loose(&meta) {
        return Ok(());
    }
    file.set_permissions(fs::Permissions::from_mode(PRIVATE_FILE_MODE))
        .map_err(|err| Error::io("make private", path, err))
}

/// Reads the file at `path` that the caller (holding its lock) is about to rewrite; `None` when
/// it is missing. A symlink there is refused: its target is neither read nor replaced. The file
/// is tightened to 0600 if it was open to others, so that it is private even when it is not
/// rewritten, and so is whatever is moved aside from it.
pub(crate) fn read_to_rewrite(path: &Path) -> Result<Option<Vec<u8>>> {
    let Some((file, size)) = open_read("write", path)? else {
        return Ok(None);
    };
    tighten(&file, path)?;
    read_whole(file, size, path).map(Some)
}

/// Opens a file for reading, mapping "missing" to `None`. A symlink there is refused.
pub fn open_existing(path: &Path) -> Result<Option<File>> {
    Ok(open_read("read", path)?.map(|(file, _)| file))
}

/// The file and its size. `O_NONBLOCK` keeps a FIFO from blocking the open; it is left set, as
/// it changes nothing for a regular file (the only kind returned), which saves two system calls
/// a file on every read of the board or a mailbox folder.
fn open_read(verb: &str, path: &Path) -> Result<Option<(File, u64)>> {
    let opened = OpenOptions::new()
        .read(true)
        .custom_flags((OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK).bits())
        .open(path);
    match opened {
        Ok(file) => regular(file, path).map(Some),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) if is_symlink_error(&err, path) => Err(symlink_refused(verb, path)),
        Err(err) => Err(Error::io("read", path, err)),
    }
}

fn read_nofollow(verb: &str, path: &Path) -> Result<Option<Vec<u8>>> {
    let Some((file, size)) = open_read(verb, path)? else {
        return Ok(None);
    };
    read_whole(file, size, path).map(Some)
}

/// All of `file`, whose size its open found: room for it is made at once, and the read goes
/// through `Take` so that std does not ask the size and the position again (a `statx` and an
/// `lseek` a file). What grew meanwhile is read too.
fn read_whole(file: File, size: u64, path: &Path) -> Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0).saturating_add(1));
    file.take(u64::MAX)
        .read_to_end(&mut bytes)
        .map_err(|err| Error::io("read", path, err))?;
    Ok(bytes)
}

/// The file just opened with `O_NONBLOCK`, and its size, if it is a regular file; anything else
/// (a directory, a FIFO, a device) is refused.
fn regular(file: File, path: &Path) -> Result<(File, u64)> {
    let meta = file
        .metadata()
        .map_err(|err| Error::io("inspect", path, err))?;
    if meta.is_file() {
        return Ok((file, meta.len()));
    }
    Err(Error::runtime(format!(
        "refusing to use {}: it is not a regular file",
        path.display()
    ))
    .with_hint(format!(
        "swarm keeps a file of its own at {}; move whatever is there out of the way and retry",
        path.display()
    )))
}

/// What `meta` is, in words, for a line that says why swarm passes it over: "a FIFO".
pub(crate) fn kind_of(meta: &fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    if kind.is_symlink() {
        "a symlink"
    } else if kind.is_dir() {
        "a folder"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_block_device() || kind.is_char_device() {
        "a device"
    } else {
        "a regular file"
    }
}

/// Says once per process that swarm passes over `path` and why (`why`: "a FIFO, not a task
/// file; swarm leaves it alone"): a reader that meets it again, in a loop or for another
/// member, adds no line.
pub(crate) fn warn_passed_over(path: &Path, why: std::fmt::Arguments<'_>) {
    crate::base::text::warn_once(format!("skipping {}: {why}", path.display()));
}

/// What is at `path` when it is no regular file (a FIFO, a folder, a symlink, a device), in
/// [`kind_of`]'s words; `None` for a regular file or nothing. Looked at with `lstat`, never
/// opened: opening a FIFO would block.
pub(crate) fn irregular(path: &Path) -> Option<&'static str> {
    let meta = fs::symlink_metadata(path).ok()?;
    (!meta.is_file()).then(|| kind_of(&meta))
}

/// `O_NOFOLLOW` fails with `ELOOP` on a symlink; check that it was one, not a loop further up.
fn is_symlink_error(err: &io::Error, path: &Path) -> bool {
    err.raw_os_error() == Some(Errno::ELOOP as i32)
        && fs::symlink_metadata(path).is_ok_and(|meta| meta.is_symlink())
}

fn open_error(action: &str, path: &Path, err: io::Error) -> Error {
    if is_symlink_error(&err, path) {
        symlink_refused("write", path)
    } else {
        Error::io(action, path, err)
    }
}

/// The refusal of a symlink where swarm keeps a file of its own (exit 1: nothing was written).
pub(crate) fn symlink_refused(verb: &str, path: &Path) -> Error {
    Error::runtime(format!(
        "refusing to {verb} through a symlink: {}",
        path.display()
    ))
    .with_hint(format!(
        "swarm never follows a symlink under its home; remove the link (what it points to is left alone) with `rm {}` and retry",
        path.display()
    ))
}

/// Where a reader of an append-only file of lines has got to: the bytes it has read whole lines
/// of, and the offset to read on from. A file shorter than that was begun again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineOffset(pub u64);

/// The whole lines of append-only file `path` from `from` on, and where to read on from: a last
/// line not yet ended (an append in flight) is left for the next read; a file shorter than
/// `from` (removed and begun again) is read from its start; no file is no lines.
pub fn whole_lines_from(path: &Path, from: LineOffset) -> Result<(Vec<u8>, LineOffset)> {
    let Some((mut file, len)) = open_read("read", path)? else {
        return Ok((Vec::new(), LineOffset::default()));
    };
    let start = if len < from.0 { 0 } else { from.0 };
    let mut bytes = Vec::with_capacity(usize::try_from(len - start).unwrap_or(0));
    io::Seek::seek(&mut file, io::SeekFrom::Start(start))
        .and_then(|_| file.read_to_end(&mut bytes))
        .map_err(|err| Error::io("read", path, err))?;
    let whole = bytes
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |at| at + 1);
    bytes.truncate(whole);
    Ok((bytes, LineOffset(start + whole as u64)))
}

/// Appends newline-terminated `lines` to `path` and syncs it, creating the file when missing.
/// A last line torn by a crash is ended first, so it cannot swallow the first new line. The first
/// append to a new file also syncs its directory, or a crash could lose the file and its lines.
pub(crate) fn append_lines_durably(path: &Path, lines: &[u8]) -> Result<()> {
    let mut file = open_private(path, OpenOptions::new().read(true).append(true))?;
    let fresh = file
        .metadata()
        .map_err(|err| Error::io("inspect", path, err))?
        .len()
        == 0;
    let torn = ends_without_newline(&file).map_err(|err| Error::io("read", path, err))?;
    let mut bytes = Vec::with_capacity(lines.len() + 1);
    if torn {
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(lines);
    file.write_all(&bytes)
        .and_then(|()| file.sync_data())
        .map_err(|err| Error::io("append to", path, err))?;
    if fresh {
        sync_dir(parent(path))?;
    }
    Ok(())
}

fn ends_without_newline(file: &File) -> io::Result<bool> {
    use std::os::unix::fs::FileExt;
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(false);
    }
    let mut last = [0u8];
    file.read_exact_at(&mut last, len - 1)?;
    Ok(last[0] != b'\n')
}

/// Creates a directory outside swarm's home (a folder the user named, a git directory), as
/// `mkdir -p` does under the user's umask. Under the home, [`private_dir`] is the one way.
pub fn create_dir_outside_home(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).map_err(|err| Error::io("create directory", dir, err))
}

/// Makes `dir` exist and be private, with every directory from `root` down to it: `root` is a
/// folder swarm owns under its home (`<home>/teams`, `<home>/peers`, see `store/paths.rs`) and
/// `dir` is `root` or below it (docs/ARCHITECTURE.md, "Private files").
/// - What is missing is created 0700. Folders above `root` (the home among them) are created
///   0700 when missing, but an existing one is never changed: it may be the user's `~/.claude`.
/// - A symlink on the way from `root` to `dir` is refused, as is anything but a directory:
///   swarm would otherwise write, and clean up, wherever it points.
/// - A directory of ours found open to others (made before swarm kept its files private, or by
///   another tool) is tightened to 0700, with everything below it, once: directories 0700,
///   files 0600, links skipped. After that a call costs one `lstat` per level.
pub fn private_dir(root: &Path, dir: &Path) -> Result<()> {
    let below = dir.strip_prefix(root).map_err(|_| {
        Error::runtime(format!(
            "{} is not inside {}, the folder swarm keeps it in",
            dir.display(),
            root.display()
        ))
    })?;
    if let Some(above) = root.parent().filter(|above| !above.as_os_str().is_empty())
        && !root.exists()
    {
        DirBuilder::new()
            .recursive(true)
            .mode(PRIVATE_DIR_MODE)
            .create(above)
            .map_err(|err| Error::io("create directory", above, err))?;
    }
    let mut current = root.to_path_buf();
    ensure_private(&current)?;
    for component in below.components() {
        current.push(component);
        ensure_private(&current)?;
    }
    Ok(())
}

/// Makes `dir` private like [`private_dir`], but only inside a folder that still exists: `false`
/// when its parent is gone. A team being removed is renamed away whole (`Team::remove`); a
/// service still running for it must not bring its folder back empty.
pub fn private_dir_inside(dir: &Path) -> Result<bool> {
    match create_private_dir(dir) {
        Ok(()) => Ok(true),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
            ensure_private(dir).map(|()| true)
        }
        Err(err) => Err(Error::io("create directory", dir, err)),
    }
}

/// Checks that `dir`, and every folder from `root` down to it, is a real folder and no symlink,
/// before swarm reads or removes the tree below it; `verb` says which, for the refusal.
pub(crate) fn real_dirs(root: &Path, dir: &Path, verb: &str) -> Result<()> {
    let below = dir.strip_prefix(root).map_err(|_| {
        Error::runtime(format!(
            "{} is not inside {}, the folder swarm keeps it in",
            dir.display(),
            root.display()
        ))
    })?;
    let check = |path: &Path| -> Result<()> {
        let meta = fs::symlink_metadata(path).map_err(|err| Error::io("inspect", path, err))?;
        if meta.is_symlink() {
            return Err(symlink_refused(verb, path));
        }
        if !meta.is_dir() {
            return Err(Error::runtime(format!(
                "refusing to {verb} {}: it is not a directory",
                path.display()
            )));
        }
        Ok(())
    };
    let mut current = root.to_path_buf();
    check(&current)?;
    for component in below.components() {
        current.push(component);
        check(&current)?;
    }
    Ok(())
}

/// Makes one directory exist and be private (see [`private_dir`]).
fn ensure_private(dir: &Path) -> Result<()> {
    let mut created = false;
    loop {
        match fs::symlink_metadata(dir) {
            Ok(meta) if meta.is_symlink() => return Err(symlink_refused("write", dir)),
            Ok(meta) if !meta.is_dir() => {
                return Err(Error::runtime(format!(
                    "refusing to use {}: it is not a directory",
                    dir.display()
                ))
                .with_hint(format!(
                    "swarm keeps a folder of its own at {}; move whatever is there out of the way and retry",
                    dir.display()
                )));
            }
            Ok(meta) => {
                if is_loose(&meta) {
                    tracing::info!(dir = %dir.display(), "making an existing folder private");
                    tighten_tree(dir, 0)?;
                }
                return Ok(());
            }
            Err(err) if err.kind() == io::ErrorKind::NotFound && !created => {
                match create_private_dir(dir) {
                    Ok(()) => return Ok(()),
                    // Made by another process meanwhile: look at what it is.
                    Err(err) if err.kind() == io::ErrorKind::AlreadyExists => created = true,
                    Err(err) => return Err(Error::io("create directory", dir, err)),
                }
            }
            Err(err) => return Err(Error::io("inspect", dir, err)),
        }
    }
}

/// Creates one directory, mode 0700 whatever the umask; fails if anything is at `dir`.
pub(crate) fn create_private_dir(dir: &Path) -> io::Result<()> {
    DirBuilder::new().mode(PRIVATE_DIR_MODE).create(dir)
}

/// How deep [`tighten_tree`] goes: far deeper than anything swarm makes.
const TIGHTEN_DEPTH: usize = 8;

/// Makes directory `dir` 0700 and everything of ours below it private: directories 0700,
/// regular files 0600. Nothing is followed: each entry is opened with `O_NOFOLLOW` and changed
/// through its descriptor, and links, sockets and FIFOs are left as they are. Only `dir` itself
/// must succeed; an entry that cannot be changed (gone meanwhile, another user's) is skipped.
fn tighten_tree(dir: &Path, depth: usize) -> Result<()> {
    let handle = OpenOptions::new()
        .read(true)
        .custom_flags((OFlag::O_NOFOLLOW | OFlag::O_DIRECTORY).bits())
        .open(dir)
        .map_err(|err| open_error("open", dir, err))?;
    let meta = handle
        .metadata()
        .map_err(|err| Error::io("inspect", dir, err))?;
    if is_loose(&meta) {
        handle
            .set_permissions(fs::Permissions::from_mode(PRIVATE_DIR_MODE))
            .map_err(|err| Error::io("make private", dir, err))?;
    }
    if depth >= TIGHTEN_DEPTH {
        return Ok(());
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.filter_map(std::result::Result::ok) {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let tightened = if kind.is_dir() {
            tighten_tree(&path, depth + 1)
        } else if kind.is_file() {
            open_read("write", &path)
                .and_then(|file| file.map_or(Ok(()), |(f, _)| tighten(&f, &path)))
        } else {
            Ok(())
        };
        if let Err(err) = tightened {
            tracing::debug!("cannot make {} private: {err}", path.display());
        }
    }
    Ok(())
}

/// Reads a file, mapping "missing" to `None`. A symlink there is refused.
pub fn read_if_exists(path: &Path) -> Result<Option<Vec<u8>>> {
    read_nofollow("read", path)
}

pub fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_folder_inside_one_that_is_gone_is_not_made() {
        let dir = tempfile::tempdir().unwrap();
        let team = dir.path().join("teams/t");
        assert!(!private_dir_inside(&team.join("inboxes")).unwrap());
        assert!(!dir.path().join("teams").exists());
        fs::create_dir_all(&team).unwrap();
        assert!(private_dir_inside(&team.join("inboxes")).unwrap());
        assert_eq!(mode(&team.join("inboxes")), 0o700);
        fs::set_permissions(team.join("inboxes"), fs::Permissions::from_mode(0o755)).unwrap();
        assert!(private_dir_inside(&team.join("inboxes")).unwrap());
        assert_eq!(mode(&team.join("inboxes")), 0o700);
    }

    #[test]
    fn atomic_write_replaces_and_makes_the_file_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.json");
        fs::write(&path, "old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        atomic_write(&path, |out: &mut dyn Write| out.write_all(b"new")).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(mode(&path), 0o600);
        let leftovers: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "temporary files left behind");
    }

    #[test]
    fn files_opened_to_be_written_are_tightened_and_new_ones_private() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.jsonl");
        fs::write(&old, "").unwrap();
        fs::set_permissions(&old, fs::Permissions::from_mode(0o644)).unwrap();
        append_lines_durably(&old, b"x\n").unwrap();
        assert_eq!(mode(&old), 0o600);
        let inbox = dir.path().join("bob.json");
        fs::write(&inbox, "[]").unwrap();
        fs::set_permissions(&inbox, fs::Permissions::from_mode(0o664)).unwrap();
        read_to_rewrite(&inbox).unwrap();
        assert_eq!(mode(&inbox), 0o600, "even when it is not rewritten");
        let new = [
            dir.path().join("new.flock"),
            dir.path().join("new.json"),
            dir.path().join("new.spool"),
        ];
        open_private(&new[0], OpenOptions::new().read(true).write(true)).unwrap();
        create_exclusive(&new[1], b"[]").unwrap();
        create_unsynced(&new[2], b"[]").unwrap();
        for path in new {
            assert_eq!(mode(&path), 0o600, "{}", path.display());
        }
    }

    #[test]
    fn private_dirs_are_made_0700_and_an_old_loose_tree_is_tightened_once() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let root = home.join("teams");
        let inboxes = root.join("t/inboxes");
        private_dir(&root, &inboxes).unwrap();
        for made in [&home, &root, &root.join("t"), &inboxes] {
            assert_eq!(mode(made), 0o700, "{}", made.display());
        }
        // A home made before swarm kept its files private, with a link to something not swarm's.
        fs::set_permissions(&home, fs::Permissions::from_mode(0o755)).unwrap();
        let outside = dir.path().join("outside");
        fs::write(&outside, "").unwrap();
        fs::set_permissions(&outside, fs::Permissions::from_mode(0o644)).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("t/link")).unwrap();
        let history = root.join("t/history");
        fs::create_dir(&history).unwrap();
        fs::write(history.join("bob.jsonl"), "").unwrap();
        fs::write(inboxes.join("bob.json"), "[]").unwrap();
        for path in [&root, &root.join("t"), &inboxes, &history] {
            fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
        }
        for path in [history.join("bob.jsonl"), inboxes.join("bob.json")] {
            fs::set_permissions(path, fs::Permissions::from_mode(0o644)).unwrap();
        }
        private_dir(&root, &inboxes).unwrap();
        for path in [&root, &root.join("t"), &inboxes, &history] {
            assert_eq!(mode(path), 0o700, "{}", path.display());
        }
        for path in [history.join("bob.jsonl"), inboxes.join("bob.json")] {
            assert_eq!(mode(&path), 0o600, "{}", path.display());
        }
        assert_eq!(mode(&home), 0o755, "the home itself is never changed");
        assert_eq!(mode(&outside), 0o644, "a link is not followed");
    }

    #[test]
    fn a_symlinked_private_dir_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("teams");
        let elsewhere = dir.path().join("elsewhere");
        fs::create_dir_all(root.join("t")).unwrap();
        fs::create_dir(&elsewhere).unwrap();
        fs::set_permissions(&elsewhere, fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink(&elsewhere, root.join("t/inboxes")).unwrap();
        let err = private_dir(&root, &root.join("t/inboxes/.spool/bob")).unwrap_err();
        assert_eq!(
            err.message(),
            format!(
                "refusing to write through a symlink: {}",
                root.join("t/inboxes").display()
            )
        );
        assert!(!elsewhere.join(".spool").exists());
        assert_eq!(mode(&elsewhere), 0o755);
    }

    /// A directory holding `target` (a file outside swarm's reach, say) and `link` to it.
    fn linked() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        fs::write(&target, "keep").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        (dir, target, link)
    }

    #[test]
    fn nothing_is_opened_through_a_symlink() {
        let (_dir, target, link) = linked();
        let refused = format!("refusing to write through a symlink: {}", link.display());
        let errors = [
            open_private(&link, OpenOptions::new().read(true).write(true)).unwrap_err(),
            append_lines_durably(&link, b"x\n").unwrap_err(),
            create_exclusive(&link, b"[]").unwrap_err(),
            read_to_rewrite(&link).unwrap_err(),
        ];
        for err in errors {
            assert_eq!(err.message(), refused);
            assert_eq!(err.kind(), crate::error::ErrorKind::Runtime);
            assert!(err.hint().unwrap().contains("rm "), "{:?}", err.hint());
        }
        assert!(create_unsynced(&link, b"x").is_err());
        assert_eq!(
            read_if_exists(&link).unwrap_err().message(),
            format!("refusing to read through a symlink: {}", link.display())
        );
        assert!(open_existing(&link).is_err());
        assert_eq!(fs::read_to_string(&target).unwrap(), "keep");
        assert!(fs::symlink_metadata(&link).unwrap().is_symlink());
    }

    #[test]
    fn a_dangling_symlink_creates_nothing_where_it_points() {
        let dir = tempfile::tempdir().unwrap();
        let nowhere = dir.path().join("nowhere");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&nowhere, &link).unwrap();
        assert!(open_private(&link, OpenOptions::new().append(true)).is_err());
        assert!(append_lines_durably(&link, b"x\n").is_err());
        assert!(create_unsynced(&link, b"x").is_err());
        assert!(create_exclusive(&link, b"[]").is_err());
        assert!(!nowhere.exists());
    }

    #[test]
    fn a_fifo_where_a_file_belongs_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("bob.jsonl");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let err = append_lines_durably(&fifo, b"x\n").unwrap_err();
        assert!(
            err.message().contains("not a regular file"),
            "{}",
            err.message()
        );
        let err = read_if_exists(&fifo).unwrap_err();
        assert!(
            err.message().contains("not a regular file"),
            "{}",
            err.message()
        );
    }

    #[test]
    fn atomic_write_replaces_a_symlink_itself_never_its_target() {
        let (_dir, target, link) = linked();
        atomic_write(&link, |out: &mut dyn Write| out.write_all(b"new")).unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().is_file());
        assert_eq!(fs::read_to_string(&link).unwrap(), "new");
        assert_eq!(fs::read_to_string(&target).unwrap(), "keep");
    }

    #[test]
    fn a_torn_last_line_does_not_swallow_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.jsonl");
        fs::write(&path, "{\"a\":1}\n{\"torn").unwrap();
        append_lines_durably(&path, b"{\"b\":2}\n").unwrap();
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "{\"a\":1}\n{\"torn\n{\"b\":2}\n"
        );
        append_lines_durably(&path, b"{\"c\":3}\n").unwrap();
        assert!(
            fs::read_to_string(&path)
                .unwrap()
                .ends_with("2}\n{\"c\":3}\n")
        );
    }

    #[test]
    fn create_exclusive_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.json");
        assert!(create_exclusive(&path, b"[]").unwrap());
        fs::write(&path, "[1]").unwrap();
        assert!(!create_exclusive(&path, b"[]").unwrap());
        assert_eq!(fs::read_to_string(&path).unwrap(), "[1]");
    }

    #[test]
    fn a_file_being_created_is_never_seen_empty_or_partial() {
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        use std::sync::{Arc, Barrier};
        let dir = tempfile::tempdir().unwrap();
        let partial = Arc::new(AtomicUsize::new(0));
        for round in 0..200 {
            let path = dir.path().join(format!("{round}.json"));
            let created = Arc::new(AtomicBool::new(false));
            let start = Arc::new(Barrier::new(3));
            // Readers that take no lock spin on the path while it is created.
            let readers: Vec<_> = (0..2)
                .map(|_| {
                    let (path, created, start, partial) = (
                        path.clone(),
                        Arc::clone(&created),
                        Arc::clone(&start),
                        Arc::clone(&partial),
                    );
                    std::thread::spawn(move || {
                        start.wait();
                        loop {
                            let done = created.load(Ordering::SeqCst);
                            if let Ok(bytes) = fs::read(&path)
                                && bytes != b"[]"
                            {
                                partial.fetch_add(1, Ordering::SeqCst);
                            }
                            if done {
                                break;
                            }
                        }
                    })
                })
                .collect();
            start.wait();
            assert!(create_exclusive(&path, b"[]").unwrap());
            created.store(true, Ordering::SeqCst);
            for reader in readers {
                reader.join().unwrap();
            }
        }
        assert_eq!(
            partial.load(Ordering::SeqCst),
            0,
            "reads saw a partial file"
        );
        let leftovers = fs::read_dir(dir.path())
            .unwrap()
            .filter(|entry| {
                let name = entry.as_ref().unwrap().file_name();
                name.to_string_lossy().starts_with('.')
            })
            .count();
        assert_eq!(leftovers, 0, "temporary files left behind");
    }
}
