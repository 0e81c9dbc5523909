//! A member's log, bounded (docs/ARCHITECTURE.md, "The supervisor"): `logs/<name>.log` holds the
//! newest output, at most `max` bytes, and `logs/<name>.log.1` the output before it, at most
//! `max` bytes too. tmux's `pipe-pane` feeds the writer (`swarm pipe-log`) what the pane prints;
//! `swarm log` reads the two files as one.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::store::durable::{self, open_private};
use crate::store::paths::rotated_log;

/// Creates the log, mode 0600, unless it exists: swarm makes it before anything is appended.
pub(crate) fn create(path: &Path) -> Result<()> {
    open_append(path).map(drop)
}

/// The log, opened to append, never through a symlink (docs/ARCHITECTURE.md, "Private files").
fn open_append(path: &Path) -> Result<File> {
    open_private(path, OpenOptions::new().append(true))
}

/// Appends to a log, moving it to `<log>.1` before it would grow past its bound.
pub struct Writer {
    path: PathBuf,
    max: u64,
    file: File,
    len: u64,
}

impl Writer {
    pub fn open(path: &Path, max: u64) -> Result<Self> {
        let file = open_append(path)?;
        let len = file
            .metadata()
            .map_err(|err| Error::io("read", path, err))?
            .len();
        Ok(Self {
            path: path.to_path_buf(),
            max: max.max(1),
            file,
            len,
        })
    }

    /// Appends `bytes`. When they do not fit, the log is filled up to the last line end that
    /// fits, moved to `<log>.1`, and the rest goes to a fresh log; a line longer than the bound
    /// is cut. So the log and `<log>.1` hold at least the newest `max` bytes less a line.
    pub(crate) fn write(&mut self, bytes: &[u8]) -> Result<()> {
        let mut rest = bytes;
        while !rest.is_empty() {
            let room = usize::try_from(self.max.saturating_sub(self.len)).unwrap_or(usize::MAX);
            if rest.len() <= room {
                self.append(rest)?;
                break;
            }
            let cut = match rest[..room].iter().rposition(|b| *b == b'\n') {
                Some(end) => end + 1,
                None if self.len == 0 => room,
                None => 0,
            };
            self.append(&rest[..cut])?;
            rest = &rest[cut..];
            self.rotate()?;
        }
        Ok(())
    }

    fn append(&mut self, bytes: &[u8]) -> Result<()> {
        self.file
            .write_all(bytes)
            .map_err(|err| Error::io("write", &self.path, err))?;
        self.len += bytes.len() as u64;
        Ok(())
    }

    fn rotate(&mut self) -> Result<()> {
        let older = rotated_log(&self.path);
        fs::rename(&self.path, &older).map_err(|err| Error::io("rotate", &self.path, err))?;
        self.file = open_append(&self.path)?;
        self.len = 0;
        Ok(())
    }

    /// Copies `input` to the log until it ends.
    pub fn copy_from(&mut self, mut input: impl Read) -> Result<()> {
        let mut buffer = vec![0; 64 * 1024];
        loop {
            match input.read(&mut buffer) {
                Ok(0) => return Ok(()),
                Ok(n) => self.write(&buffer[..n])?,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(Error::os("read the pane's output", err)),
            }
        }
    }
}

/// The last `n` bytes of everything logged, across `<log>.1` and `<log>`.
pub(crate) fn tail(path: &Path, n: u64) -> Result<Vec<u8>> {
    let current = open_existing(path)?;
    let end = length(current.as_ref(), path)?;
    tail_upto(path, current.as_ref(), end, n)
}

fn open_existing(path: &Path) -> Result<Option<File>> {
    durable::open_existing(path)
}

fn length(file: Option<&File>, path: &Path) -> Result<u64> {
    file.map_or(Ok(0), |file| {
        Ok(file
            .metadata()
            .map_err(|err| Error::io("read", path, err))?
            .len())
    })
}

/// The last `n` bytes of `<log>.1` followed by the first `end` bytes of `current`, the open log.
fn tail_upto(path: &Path, current: Option<&File>, end: u64, n: u64) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let from_current = n.min(end);
    if from_current < n {
        let older = rotated_log(path);
        if let Some(file) = open_existing(&older)? {
            let len = length(Some(&file), &older)?;
            read_range(&file, &older, len, n - from_current, &mut bytes)?;
        }
    }
    if let Some(file) = current {
        read_range(file, path, end, from_current, &mut bytes)?;
    }
    Ok(bytes)
}

/// Appends the `n` bytes of `file` that end at `end` to `out`.
fn read_range(mut file: &File, path: &Path, end: u64, n: u64, out: &mut Vec<u8>) -> Result<()> {
    let n = n.min(end);
    file.seek(SeekFrom::Start(end - n))
        .map_err(|err| Error::io("read", path, err))?;
    file.take(n)
        .read_to_end(out)
        .map_err(|err| Error::io("read", path, err))?;
    Ok(())
}

/// The last `n` lines of what [`tail_upto`] reads, as the bytes they are (a last line not ended
/// yet counts as one), reading further back until there are enough; `None` if nothing was ever
/// logged.
fn lines_upto(path: &Path, current: Option<&File>, end: u64, n: usize) -> Result<Option<Vec<u8>>> {
    if current.is_none() && !rotated_log(path).exists() {
        return Ok(None);
    }
    let mut want: u64 = 64 * 1024;
    loop {
        let mut bytes = tail_upto(path, current, end, want)?;
        let complete = (bytes.len() as u64) < want;
        // The line breaks that begin a line, newest first: one that ends the bytes begins none.
        let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
        let start = if n == 0 {
            Some(bytes.len())
        } else {
            body.iter()
                .enumerate()
                .rev()
                .filter(|(_, b)| **b == b'\n')
                .nth(n - 1)
                .map(|(at, _)| at + 1)
        };
        // The first line may have been cut: it counts only if everything was read.
        if let Some(start) = start.or(complete.then_some(0)) {
            bytes.drain(..start);
            return Ok(Some(bytes));
        }
        want = want.saturating_mul(4);
    }
}

/// Reads what is appended to a log as it comes, following it across a rotation: the file it
/// was reading is read to its end (it is `<log>.1` by then) before the new log is read.
pub struct Follower {
    path: PathBuf,
    file: Option<File>,
    offset: u64,
}

impl Follower {
    /// Follows from where the log ends now, and returns its last `n` lines up to there, as the
    /// bytes they are (`None` if nothing was ever logged), so nothing is shown twice or missed in
    /// between.
    pub fn start(path: &Path, n: usize) -> Result<(Self, Option<Vec<u8>>)> {
        let file = open_existing(path)?;
        let end = length(file.as_ref(), path)?;
        let lines = lines_upto(path, file.as_ref(), end, n)?;
        Ok((
            Self {
                path: path.to_path_buf(),
                file,
                offset: end,
            },
            lines,
        ))
    }

    /// Follows a log from its very beginning, for one that was not there, or not known, when
    /// following began: its first call to [`Follower::fresh`] returns all of it.
    pub(crate) fn from_beginning(path: &Path) -> Self {
        Self {
            path: path.to_path_buf(),
            file: None,
            offset: 0,
        }
    }

    /// Follows a log from `at`, a place an earlier follower reached ([`Follower::position`]),
    /// perhaps in another process: the file it names is found at the log's path or at `<log>.1`,
    /// where a rotation moved it; a file that is in neither any more is lost, and the log is read
    /// from its beginning.
    pub fn resume(path: &Path, at: Position) -> Result<Self> {
        for candidate in [path.to_path_buf(), rotated_log(path)] {
            if let Some(file) = open_existing(&candidate)?
                && file
                    .metadata()
                    .is_ok_and(|meta| meta.ino() == at.inode && meta.dev() == at.device)
            {
                return Ok(Self {
                    path: path.to_path_buf(),
                    file: Some(file),
                    offset: at.offset,
                });
            }
        }
        Ok(Self::from_beginning(path))
    }

    /// Where the follower has read to, for [`Follower::resume`].
    pub fn position(&self) -> Position {
        let meta = self.file.as_ref().and_then(|file| file.metadata().ok());
        Position {
            inode: meta.as_ref().map_or(0, MetadataExt::ino),
            device: meta.as_ref().map_or(0, MetadataExt::dev),
            offset: self.offset,
        }
    }

    /// Whatever was appended since the last call.
    pub(crate) fn fresh(&mut self) -> Result<Vec<u8>> {
        self.fresh_upto(usize::MAX)
    }

    /// What was appended since the last call, at most `max` bytes: the rest comes next time.
    pub(crate) fn fresh_upto(&mut self, max: usize) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.read_rest(&mut out, max)?;
        // A different file at the path: the log was rotated (or made). What was written between
        // the end of ours and the new log is in `<log>.1`, unless it was rotated away again.
        while out.len() < max {
            let Some(current) = open_existing(&self.path)? else {
                break;
            };
            if self
                .file
                .as_ref()
                .is_some_and(|ours| same_file(ours, &current))
            {
                break;
            }
            if let Some(ours) = &self.file
                && let Some(older) = open_existing(&rotated_log(&self.path))?
                && !same_file(ours, &older)
                && !same_file(&current, &older)
            {
                // The file in between, read as ours; the loop then moves on to the log.
                self.file = Some(older);
            } else {
                self.file = Some(current);
            }
            self.offset = 0;
            self.read_rest(&mut out, max)?;
        }
        Ok(out)
    }

    /// Appends what the file being read holds past the offset to `out`, until `out` holds `max`.
    fn read_rest(&mut self, out: &mut Vec<u8>, max: usize) -> Result<()> {
        let Some(file) = &mut self.file else {
            return Ok(());
        };
        let len = file
            .metadata()
            .map_err(|err| Error::io("read", &self.path, err))?
            .len();
        if len < self.offset {
            self.offset = 0; // truncated: start over
        }
        file.seek(SeekFrom::Start(self.offset))
            .map_err(|err| Error::io("read", &self.path, err))?;
        let room = u64::try_from(max.saturating_sub(out.len())).unwrap_or(u64::MAX);
        let read = file
            .take(room)
            .read_to_end(out)
            .map_err(|err| Error::io("read", &self.path, err))?;
        self.offset += read as u64;
        Ok(())
    }
}

/// Where a [`Follower`] has read to: which file (by inode, so a rotation or a restart of the
/// reader loses nothing) and how far into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Position {
    pub(crate) inode: u64,
    pub(crate) device: u64,
    pub(crate) offset: u64,
}

fn same_file(a: &File, b: &File) -> bool {
    match (a.metadata(), b.metadata()) {
        (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn the_log_stays_within_its_bound_and_keeps_the_newest_output() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("bob.log");
        create(&log).unwrap();
        assert_eq!(
            fs::metadata(&log).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let mut writer = Writer::open(&log, 100).unwrap();
        for i in 0..50 {
            writer.write(format!("line {i:02}\n").as_bytes()).unwrap();
        }
        let older = rotated_log(&log);
        assert!(fs::metadata(&log).unwrap().len() <= 100);
        assert!(fs::metadata(&older).unwrap().len() <= 100);
        assert_eq!(
            fs::metadata(&older).unwrap().permissions().mode() & 0o777,
            0o600
        );
        // Lines stay whole: every line is in one file.
        let current = fs::read_to_string(&log).unwrap();
        assert!(
            current.ends_with("line 49\n") && current.starts_with("line "),
            "{current}"
        );
        assert_eq!(
            String::from_utf8(Follower::start(&log, 12).unwrap().1.unwrap()).unwrap(),
            (38..50).fold(String::new(), |lines, i| lines + &format!("line {i:02}\n")),
            "the tail reads across the rotation"
        );
        assert_eq!(tail(&log, 20).unwrap(), b"line 47\nline 48\nline 49\n"[4..]);
        // A write larger than the bound keeps its newest part.
        writer.write(&[b'x'; 250]).unwrap();
        assert_eq!(fs::read(&log).unwrap(), vec![b'x'; 50]);
        assert_eq!(fs::read(&older).unwrap(), vec![b'x'; 100]);
    }

    /// A log in a fresh directory, kept while the directory is, and its writer.
    fn bounded_log(max: u64) -> (tempfile::TempDir, PathBuf, Writer) {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("bob.log");
        let writer = Writer::open(&log, max).unwrap();
        (dir, log, writer)
    }

    #[test]
    fn rotation_falls_on_a_line_end() {
        let (_dir, log, mut writer) = bounded_log(10);
        writer.write(b"abc\ndefg\nhij").unwrap();
        assert_eq!(fs::read(rotated_log(&log)).unwrap(), b"abc\ndefg\n");
        assert_eq!(fs::read(&log).unwrap(), b"hij");
    }

    #[test]
    fn a_follower_reads_across_a_rotation_without_losing_a_byte() {
        let (_dir, log, mut writer) = bounded_log(10);
        writer.write(b"before\n").unwrap();
        let (mut follower, lines) = Follower::start(&log, 5).unwrap();
        assert_eq!(lines.unwrap(), b"before\n");
        writer.write(b"one\n").unwrap(); // rotates: "before\n" + "one\n" > 10
        writer.write(b"two\n").unwrap();
        assert_eq!(follower.fresh().unwrap(), b"one\ntwo\n");
        writer.write(b"three\n").unwrap(); // rotates
        assert_eq!(follower.fresh().unwrap(), b"three\n");
        assert!(follower.fresh().unwrap().is_empty());
        // Two rotations between looks: the log in between is read from `<log>.1`.
        writer.write(b"four\n").unwrap(); // rotates
        writer.write(b"five\n").unwrap();
        writer.write(b"six\n").unwrap(); // rotates
        assert_eq!(follower.fresh().unwrap(), b"four\nfive\nsix\n");
    }

    #[test]
    fn a_follower_resumes_from_its_place_across_a_rotation_and_in_bounded_pieces() {
        let (_dir, log, mut writer) = bounded_log(10);
        writer.write(b"one\n").unwrap();
        let (first, _) = Follower::start(&log, 1).unwrap();
        let at = first.position();
        drop(first);
        writer.write(b"two\n").unwrap();
        writer.write(b"three\n").unwrap(); // rotates: the place is in `<log>.1` now
        let mut resumed = Follower::resume(&log, at).unwrap();
        assert_eq!(resumed.fresh_upto(3).unwrap(), b"two");
        let at = resumed.position();
        let mut again = Follower::resume(&log, at).unwrap();
        assert_eq!(again.fresh_upto(100).unwrap(), b"\nthree\n");
        // Truncated: read again from the start.
        fs::write(&log, "x\n").unwrap();
        assert_eq!(again.fresh().unwrap(), b"x\n");
        // A place in a file that is gone: the log from its beginning.
        let lost = Position {
            inode: 0,
            device: 0,
            offset: 7,
        };
        assert_eq!(
            Follower::resume(&log, lost).unwrap().fresh().unwrap(),
            b"x\n"
        );
    }

    #[test]
    fn the_last_lines_are_the_bytes_they_are() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("bob.log");
        fs::write(&log, "one\r\n\x1b[7mtwo\x1b[0m\r\nthree").unwrap();
        let last = |n| Follower::start(&log, n).unwrap().1.unwrap();
        assert_eq!(last(1), b"three");
        assert_eq!(last(2), b"\x1b[7mtwo\x1b[0m\r\nthree");
        assert_eq!(last(9), fs::read(&log).unwrap());
        assert_eq!(last(0), b"");
        fs::write(&log, "one\ntwo\n").unwrap();
        assert_eq!(last(1), b"two\n");
    }

    #[test]
    fn nothing_logged_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("none.log");
        let (mut follower, lines) = Follower::start(&log, 3).unwrap();
        assert_eq!(lines, None);
        assert!(follower.fresh().unwrap().is_empty());
        fs::write(&log, "late\n").unwrap();
        assert_eq!(follower.fresh().unwrap(), b"late\n");
    }
}
