//! Durable file writes. A reader that takes no lock must never see a partial file, nor an empty new
//! one, and a write that returned is on disk: temp file in the same directory, fsync, rename (or a
//! rename that replaces nothing, for a new file), fsync the directory (docs/ARCHITECTURE.md,
//! "Durable writes").
//!
//! Every file swarm opens under its home is opened here, and none through a symlink
//! (docs/ARCHITECTURE.md, "Private files"): a file swarm writes in place (a lock file, a history
//! file, a log) is opened with `O_NOFOLLOW` by [`open_private`], a file it is about to rewrite is
//! read the same way by [`read_to_rewrite`], and a new file is created exclusively, which follows
//! no link either. A symlink where swarm keeps a file is refused, naming it; what it points to is
//! never touched.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl};

use crate::error::{Error, Result};

/// Mode for files swarm creates: messages are private to their owner.
pub(crate) const PRIVATE_FILE_MODE: u32 = 0o600;

/// Replaces `path` with what `write` produces, atomically and durably.
/// An existing file keeps its permission bits.
pub fn atomic_write(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<()> {
    let mode =
        fs::metadata(path).map_or(PRIVATE_FILE_MODE, |meta| meta.permissions().mode() & 0o7777);
    let temp = synced_temp(path, mode, write)?;
    temp.persist(path)
        .map_err(|err| Error::io("rename a temporary file onto", path, err.error))?;
    sync_dir(parent(path))
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
            sync_dir(parent(path))?;
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
    let file_name = path.file_name().unwrap_or_default().to_string_lossy();
    let temp = tempfile::Builder::new()
        .prefix(&format!(".{file_name}."))
        .suffix(".tmp")
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
/// creating it mode 0600 when missing. A symlink at `path` is refused (`O_NOFOLLOW`), and so is
/// anything but a regular file. (`O_NONBLOCK`, cleared once the file is known to be regular,
/// keeps a FIFO planted there from blocking the open.)
pub(crate) fn open_private(path: &Path, options: &mut OpenOptions) -> Result<File> {
    let file = options
        .create(true)
        .mode(PRIVATE_FILE_MODE)
        .custom_flags((OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK).bits())
        .open(path)
        .map_err(|err| open_error("open", path, err))?;
    regular(file, path)
}

/// Reads the file at `path` that the caller (holding its lock) is about to rewrite; `None` when
/// it is missing. A symlink there is refused: its target is neither read nor replaced.
pub(crate) fn read_to_rewrite(path: &Path) -> Result<Option<Vec<u8>>> {
    read_nofollow("write", path)
}

/// Opens a file for reading, mapping "missing" to `None`. A symlink there is refused.
pub(crate) fn open_existing(path: &Path) -> Result<Option<File>> {
    open_read("read", path)
}

fn open_read(verb: &str, path: &Path) -> Result<Option<File>> {
    // `O_NONBLOCK`, cleared once the file is known to be regular, keeps a FIFO from blocking.
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
    let Some(mut file) = open_read(verb, path)? else {
        return Ok(None);
    };
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|err| Error::io("read", path, err))?;
    Ok(Some(bytes))
}

/// The file just opened with `O_NONBLOCK` if it is a regular file, blocking again; anything else
/// (a directory, a FIFO, a device) is refused.
fn regular(file: File, path: &Path) -> Result<File> {
    let meta = file
        .metadata()
        .map_err(|err| Error::io("inspect", path, err))?;
    if meta.is_file() {
        fcntl(&file, FcntlArg::F_GETFL)
            .map(|flags| OFlag::from_bits_retain(flags) - OFlag::O_NONBLOCK)
            .and_then(|flags| fcntl(&file, FcntlArg::F_SETFL(flags)))
            .map_err(|errno| Error::io("open", path, errno.into()))?;
        return Ok(file);
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

/// Appends newline-terminated `lines` to `path` and syncs it, creating the file when missing.
/// A last line torn by a crash is ended first, so it cannot swallow the first new line.
pub(crate) fn append_lines_durably(path: &Path, lines: &[u8]) -> Result<()> {
    let mut file = open_private(path, OpenOptions::new().read(true).append(true))?;
    let torn = ends_without_newline(&file).map_err(|err| Error::io("read", path, err))?;
    let mut bytes = Vec::with_capacity(lines.len() + 1);
    if torn {
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(lines);
    file.write_all(&bytes)
        .and_then(|()| file.sync_data())
        .map_err(|err| Error::io("append to", path, err))
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

pub(crate) fn create_dir_all(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).map_err(|err| Error::io("create directory", dir, err))
}

/// Reads a file, mapping "missing" to `None`. A symlink there is refused.
pub(crate) fn read_if_exists(path: &Path) -> Result<Option<Vec<u8>>> {
    read_nofollow("read", path)
}

pub(crate) fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_keeps_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.json");
        fs::write(&path, "old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        atomic_write(&path, |out: &mut dyn Write| out.write_all(b"new")).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o640
        );
        let leftovers: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "temporary files left behind");
    }

    /// A directory holding `target` (a file outside swarm's reach, say) and `link` to it.
    fn linked() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
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
