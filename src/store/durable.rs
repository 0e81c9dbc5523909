//! Durable file writes. A reader that takes no lock must never see a partial file, nor an empty new
//! one, and a write that returned is on disk: temp file in the same directory, fsync, rename (or a
//! rename that replaces nothing, for a new file), fsync the directory (docs/ARCHITECTURE.md,
//! "Durable writes").

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use crate::error::{Error, Result};
use crate::store::paths;

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
/// Returns whether it created the file.
///
/// The contents are written and synced under a temporary name first, then moved into place
/// without replacing anything (`renameat2(RENAME_NOREPLACE)`, else `link` and `unlink`), so a
/// reader that takes no lock sees no file or the whole file, never an empty one.
pub(crate) fn create_exclusive(path: &Path, contents: &[u8]) -> Result<bool> {
    if path.exists() {
        return Ok(false);
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
    let temp = tempfile::Builder::new()
        .prefix(&paths::temp_prefix(path))
        .suffix(paths::TEMP_SUFFIX)
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

/// Appends newline-terminated `lines` to `path` and syncs it, creating the file when missing.
/// A last line torn by a crash is ended first, so it cannot swallow the first new line.
pub(crate) fn append_lines_durably(path: &Path, lines: &[u8]) -> Result<()> {
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .mode(PRIVATE_FILE_MODE)
        .open(path)
        .map_err(|err| Error::io("open", path, err))?;
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

/// Reads a file, mapping "missing" to `None`.
pub(crate) fn read_if_exists(path: &Path) -> Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(Error::io("read", path, err)),
    }
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
