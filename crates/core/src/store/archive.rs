//! Archiving a team as it is removed (docs/ARCHITECTURE.md, "Removing a team"), into
//! `<home>/archive/`: a `.tar.zst` of the team's folder with its task list as `tasks/`, or the
//! folder itself moved there (`store/removal.rs` brings the task list into it first).
//!
//! The archive is complete and durable before the caller deletes anything: a tarball is written
//! under a temporary name, synced, read back whole and checked against what was written, and only
//! then moved into place (never over another file) and its folder synced. Any failure removes the
//! temporary file and leaves the team as it was. A moved folder is one `rename`, which happens
//! whole or not at all.
//!
//! Nothing is followed: every folder is checked to be a real one, every file is opened with
//! `O_NOFOLLOW` and must be a regular file. What a tarball holds is private as everything under
//! the home is: folders 0700, files 0600, whatever a file's mode was. Links, sockets and FIFOs in a team's folder are not
//! swarm's; they are left out of a tarball (and named in the log).

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};

use crate::base::clock;
use crate::base::text::count;
use crate::error::{Error, Result};
use crate::store::durable::{
    PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, open_existing, private_dir, real_dirs, sync_dir,
};
use crate::store::paths::{ArchiveFormat, Home, TeamPaths};
use crate::store::tasks::TaskList;

/// zstd's own default: fast, and a pane log shrinks a lot.
const LEVEL: i32 = 3;

/// Makes `<home>/archive` exist and be private (0700). Called before anything is done to a team,
/// so an archive that cannot be written fails before the team is stopped or touched.
pub fn prepare(home: &Home) -> Result<()> {
    let dir = home.archive_dir();
    private_dir(&dir, &dir)
}

/// Writes a tarball of team `name`, its folder and its task list (as `<name>/tasks/`), stamped
/// with `now_ms`; returns where. The team is left as it was.
pub fn tarball(home: &Home, name: &str, now_ms: u64) -> Result<PathBuf> {
    prepare(home)?;
    let team = home.team(name);
    real_dirs(team.private_root(), team.dir(), "archive")?;
    let list = TaskList::new(home, name).real_dir("archive")?;
    tarball_of(
        home,
        &team,
        list.as_deref(),
        name,
        &clock::compact_ms(now_ms),
    )
}

/// What went into a tarball, to check it against what comes out.
#[derive(Debug, Default, PartialEq, Eq)]
struct Contents {
    entries: Vec<(PathBuf, u64)>,
}

fn tarball_of(
    home: &Home,
    team: &TeamPaths,
    list: Option<&Path>,
    name: &str,
    stamp: &str,
) -> Result<PathBuf> {
    let dir = home.archive_dir();
    let temp = tempfile::Builder::new()
        .prefix(&format!(".{name}-{stamp}."))
        .suffix(".tmp")
        .permissions(fs::Permissions::from_mode(PRIVATE_FILE_MODE))
        .tempfile_in(&dir)
        .map_err(|err| Error::io("create a temporary file in", &dir, err))?;
    let written = write_tarball(team.dir(), list, name, temp.as_file(), temp.path())?;
    temp.as_file()
        .sync_all()
        .map_err(|err| Error::io("sync", temp.path(), err))?;
    let mut reread = temp
        .reopen()
        .map_err(|err| Error::io("read", temp.path(), err))?;
    reread
        .seek(SeekFrom::Start(0))
        .map_err(|err| Error::io("read", temp.path(), err))?;
    let read = read_tarball(reread).map_err(|err| Error::io("read back", temp.path(), err))?;
    if read != written {
        return Err(Error::runtime(format!(
            "the archive of team {name} did not read back as written ({} written, {} read); the team is left as it was",
            count(written.entries.len(), "entry", "entries"),
            read.entries.len()
        )));
    }
    let mut temp = temp;
    for n in 1.. {
        let path = home.archive(name, stamp, n, ArchiveFormat::TarZst);
        match temp.persist_noclobber(&path) {
            Ok(_) => {
                sync_dir(&dir)?;
                return Ok(path);
            }
            Err(err) if err.error.kind() == io::ErrorKind::AlreadyExists => temp = err.file,
            Err(err) => return Err(Error::io("move the archive to", &path, err.error)),
        }
    }
    unreachable!("some archive name is free")
}

/// Writes the tar.zst of folder `dir`, its entries under `top/`, and of the task list `list` as
/// `top/tasks/`, into `out`.
fn write_tarball(
    dir: &Path,
    list: Option<&Path>,
    top: &str,
    out: &File,
    shown: &Path,
) -> Result<Contents> {
    let failed = |err: io::Error| Error::io("write", shown, err);
    let mut encoder = zstd::Encoder::new(out, LEVEL).map_err(failed)?;
    encoder.include_checksum(true).map_err(failed)?;
    let mut builder = tar::Builder::new(encoder);
    let mut contents = Contents::default();
    add_folder(&mut builder, dir, Path::new(top), &mut contents)?;
    if let Some(list) = list {
        let inside = TeamPaths::task_list_in(Path::new(top));
        add_folder(&mut builder, list, &inside, &mut contents)?;
    }
    builder
        .into_inner()
        .and_then(zstd::Encoder::finish)
        .map_err(failed)?;
    Ok(contents)
}

/// Adds folder `dir` as `name`, and everything in it, sorted by name.
fn add_folder<W: io::Write>(
    builder: &mut tar::Builder<W>,
    dir: &Path,
    name: &Path,
    contents: &mut Contents,
) -> Result<()> {
    let meta = fs::symlink_metadata(dir).map_err(|err| Error::io("inspect", dir, err))?;
    let mut header = tar::Header::new_gnu();
    header.set_metadata_in_mode(&meta, tar::HeaderMode::Complete);
    header.set_entry_type(tar::EntryType::Directory);
    header.set_mode(PRIVATE_DIR_MODE);
    header.set_size(0);
    builder
        .append_data(&mut header, name, io::empty())
        .map_err(|err| Error::io("archive", dir, err))?;
    contents.entries.push((name.to_path_buf(), 0));

    let mut entries: Vec<fs::DirEntry> = fs::read_dir(dir)
        .map_err(|err| Error::io("list", dir, err))?
        .collect::<io::Result<_>>()
        .map_err(|err| Error::io("list", dir, err))?;
    entries.sort_by_key(fs::DirEntry::file_name);
    for entry in entries {
        let path = entry.path();
        let inner = name.join(entry.file_name());
        let kind = entry
            .file_type()
            .map_err(|err| Error::io("inspect", &path, err))?;
        if kind.is_dir() {
            add_folder(builder, &path, &inner, contents)?;
        } else if kind.is_file() {
            add_file(builder, &path, &inner, contents)?;
        } else {
            tracing::warn!(
                "leaving {} out of the archive: not a regular file or folder",
                path.display()
            );
        }
    }
    Ok(())
}

/// Adds regular file `path` as `name`, opened without following a link.
fn add_file<W: io::Write>(
    builder: &mut tar::Builder<W>,
    path: &Path,
    name: &Path,
    contents: &mut Contents,
) -> Result<()> {
    let Some(file) = open_existing(path)? else {
        // Gone since the folder was listed: it is not part of the team any more.
        return Ok(());
    };
    let meta = file
        .metadata()
        .map_err(|err| Error::io("inspect", path, err))?;
    let mut header = tar::Header::new_gnu();
    header.set_metadata_in_mode(&meta, tar::HeaderMode::Complete);
    header.set_mode(PRIVATE_FILE_MODE);
    let len = meta.len();
    let exact = Exact {
        inner: file.take(len),
        left: len,
    };
    builder
        .append_data(&mut header, name, exact)
        .map_err(|err| Error::io("archive", path, err))?;
    contents.entries.push((name.to_path_buf(), len));
    Ok(())
}

/// A file's bytes as its header announced them: one that shrank while being read is an error, not
/// a corrupt archive.
struct Exact {
    inner: io::Take<File>,
    left: u64,
}

impl Read for Exact {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && self.left > 0 && !buf.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the file shrank while it was archived",
            ));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// Every entry of a tar.zst, with the length of its data, each read to its end, so that any
/// corruption (zstd's checksum) shows.
fn read_tarball(file: File) -> io::Result<Contents> {
    let mut archive = tar::Archive::new(zstd::Decoder::new(file)?);
    let mut contents = Contents::default();
    for entry in archive.entries()? {
        let mut entry = entry?;
        let path = entry.path()?.into_owned();
        let len = io::copy(&mut entry, &mut io::sink())?;
        contents.entries.push((path, len));
    }
    Ok(contents)
}

/// Refuses, before anything is moved, an archive on another file system than `teams/`: a
/// folder cannot be moved there by a `rename`.
pub(crate) fn require_same_file_system(home: &Home) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    prepare(home)?;
    let device = |dir: &Path| {
        fs::metadata(dir)
            .map(|meta| meta.dev())
            .map_err(|err| Error::io("inspect", dir, err))
    };
    if device(&home.teams_dir())? == device(&home.archive_dir())? {
        return Ok(());
    }
    Err(other_file_system(home, &home.teams_dir()))
}

fn other_file_system(home: &Home, from: &Path) -> Error {
    Error::io("move", from, Errno::EXDEV.into()).with_hint(format!(
        "{} is on another file system; archive as a file with --archive instead",
        home.archive_dir().display()
    ))
}

/// Moves folder `from` (team `name`'s, taken aside) into the archive, stamped with `now_ms`,
/// never over anything there; returns where.
pub(crate) fn place_folder(home: &Home, from: &Path, name: &str, now_ms: u64) -> Result<PathBuf> {
    prepare(home)?;
    let stamp = clock::compact_ms(now_ms);
    for n in 1.. {
        let path = home.archive(name, &stamp, n, ArchiveFormat::Folder);
        match renameat2(
            AT_FDCWD,
            from,
            AT_FDCWD,
            &path,
            RenameFlags::RENAME_NOREPLACE,
        ) {
            Ok(()) => {
                sync_dir(&home.archive_dir())?;
                sync_dir(&home.teams_dir())?;
                return Ok(path);
            }
            Err(Errno::EEXIST) => {}
            Err(Errno::EXDEV) => return Err(other_file_system(home, from)),
            Err(errno) => return Err(Error::io("move", from, errno.into())),
        }
    }
    unreachable!("some archive name is free")
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::symlink_metadata(path).unwrap().mode() & 0o777
    }

    /// A team folder with a few files, a nested folder and a link to a file outside, and a task
    /// list of one task.
    fn team(dir: &Path) -> (Home, TeamPaths) {
        let home = Home::new(dir.join("home"));
        let team = home.team("t");
        fs::create_dir_all(team.inboxes()).unwrap();
        fs::write(team.config(), "{}").unwrap();
        fs::write(team.inboxes().join("bob.json"), "[]").unwrap();
        fs::write(dir.join("outside"), "secret").unwrap();
        std::os::unix::fs::symlink(dir.join("outside"), team.dir().join("link")).unwrap();
        let list = TaskList::new(&home, "t");
        list.ensure().unwrap();
        fs::write(list.dir().join("1.json"), "{}").unwrap();
        (home, team)
    }

    #[test]
    fn a_tarball_holds_every_file_and_folder_and_no_link() {
        let dir = tempfile::tempdir().unwrap();
        let (home, team) = team(dir.path());
        let path = tarball(&home, "t", 0).unwrap();
        assert_eq!(path, home.archive_dir().join("t-19700101T000000Z.tar.zst"));
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&home.archive_dir()), 0o700);
        let read = read_tarball(File::open(&path).unwrap()).unwrap();
        let names: Vec<String> = read
            .entries
            .iter()
            .map(|(path, len)| format!("{} {len}", path.display()))
            .collect();
        assert_eq!(
            names,
            [
                "t 0",
                "t/config.json 2",
                "t/inboxes 0",
                "t/inboxes/bob.json 2",
                "t/tasks 0",
                "t/tasks/.lock 0",
                "t/tasks/1.json 2"
            ]
        );
        assert!(team.config().exists(), "the team is left as it was");
        assert!(TaskList::new(&home, "t").dir().join("1.json").exists());
        let again = tarball(&home, "t", 0).unwrap();
        assert_eq!(
            again,
            home.archive_dir().join("t-19700101T000000Z-2.tar.zst")
        );
        let leftovers = fs::read_dir(home.archive_dir()).unwrap().count();
        assert_eq!(leftovers, 2, "no temporary file is left");
    }

    #[test]
    fn an_archive_that_cannot_be_written_leaves_the_team() {
        let dir = tempfile::tempdir().unwrap();
        let (home, team) = team(dir.path());
        fs::write(home.archive_dir(), "not a folder").unwrap();
        assert!(tarball(&home, "t", 0).is_err());
        assert!(team.config().exists());
        assert!(TaskList::new(&home, "t").dir().join("1.json").exists());
        fs::remove_file(home.archive_dir()).unwrap();
        std::os::unix::fs::symlink(dir.path(), home.archive_dir()).unwrap();
        let err = tarball(&home, "t", 0).unwrap_err();
        assert!(err.message().contains("symlink"), "{}", err.message());
        assert!(team.config().exists());
    }
}
