//! The on-disk layout under swarm's home (docs/ARCHITECTURE.md, "On disk"). Every path swarm
//! touches is spelled here once.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::base::names::path_component;
use crate::error::{Error, Result};

#[derive(Debug, Clone)]
pub struct Home {
    root: PathBuf,
}

impl Home {
    pub fn new(root: PathBuf) -> Self {
        Self { root }
    }

    /// `--home`/`SWARM_HOME`, else `~/.swarm`.
    pub(crate) fn resolve(explicit: Option<PathBuf>) -> Result<Self> {
        if let Some(root) = explicit {
            return Ok(Self::new(absolute(&root)?));
        }
        let home = std::env::var_os("HOME")
            .filter(|home| !home.is_empty())
            .ok_or_else(|| {
                Error::usage("cannot find your home directory: HOME is not set")
                    .with_hint("set SWARM_HOME or pass --home DIR")
            })?;
        Ok(Self::new(PathBuf::from(home).join(".swarm")))
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// `teams/`: a folder swarm owns and keeps private, with everything below it
    /// (docs/ARCHITECTURE.md, "Private files").
    pub(crate) fn teams_dir(&self) -> PathBuf {
        self.root.join("teams")
    }

    pub fn team(&self, team: &str) -> TeamPaths {
        let root = self.teams_dir();
        TeamPaths {
            dir: root.join(path_component(team)),
            root,
        }
    }

    /// `peers/`: a folder swarm owns and keeps private.
    pub(crate) fn peers_dir(&self) -> PathBuf {
        self.root.join("peers")
    }

    /// `peers/<pid>.json`: the registry entry of the peer with this pid.
    pub(crate) fn peer_entry(&self, pid: i32) -> PathBuf {
        self.peers_dir().join(format!("{pid}.json"))
    }

    /// `archive/`: where teams are archived when they are removed; a folder swarm owns and keeps
    /// private, like `teams/`.
    pub(crate) fn archive_dir(&self) -> PathBuf {
        self.root.join("archive")
    }

    /// `archive/<team>-<stamp>.tar.zst`, or the folder `archive/<team>-<stamp>`; `-<n>` follows
    /// the stamp from the second archive of one team within a second.
    pub(crate) fn archive(
        &self,
        team: &str,
        stamp: &str,
        n: u32,
        format: ArchiveFormat,
    ) -> PathBuf {
        let again = if n > 1 {
            format!("-{n}")
        } else {
            String::new()
        };
        let suffix = match format {
            ArchiveFormat::TarZst => TAR_ZST_SUFFIX,
            ArchiveFormat::Folder => "",
        };
        self.archive_dir()
            .join(format!("{}-{stamp}{again}{suffix}", path_component(team)))
    }

    /// Whether `path` is a registry entry file in `peers/`.
    pub(crate) fn is_peer_entry(path: &Path) -> bool {
        path.extension().is_some_and(|ext| ext == "json")
    }
}

/// Paths inside `teams/<team>/`.
#[derive(Debug, Clone)]
pub struct TeamPaths {
    dir: PathBuf,
    root: PathBuf,
}

impl TeamPaths {
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// `teams/.<team>.removing-<pid>`: where a team's folder is moved the moment it is removed,
    /// so it vanishes at once and whole, before its files are deleted. No team is listed under a
    /// dot name.
    pub(crate) fn removing(&self) -> PathBuf {
        let name = self.dir.file_name().unwrap_or_default().to_string_lossy();
        self.root
            .join(format!(".{name}.removing-{}", std::process::id()))
    }

    /// `teams/`: the private folder every directory of the team is in, for
    /// `durable::private_dir`.
    pub(crate) fn private_root(&self) -> &Path {
        &self.root
    }

    pub(crate) fn config(&self) -> PathBuf {
        self.dir.join(CONFIG_FILE)
    }

    /// Whether a file the watcher reports in the team's directory is config.json.
    pub(crate) fn is_config(file: &OsStr) -> bool {
        file == CONFIG_FILE
    }

    /// The locks on config.json.
    pub(crate) fn config_lock(&self) -> LockPaths {
        LockPaths::beside(&self.config())
    }

    /// `.launch.flock`: held by the one `swarm up` that is starting the team.
    pub(crate) fn launch_lock(&self) -> PathBuf {
        self.dir.join(LAUNCH_LOCK_FILE)
    }

    pub(crate) fn inboxes(&self) -> PathBuf {
        self.dir.join("inboxes")
    }

    pub(crate) fn history(&self) -> PathBuf {
        self.dir.join("history")
    }

    pub(crate) fn logs(&self) -> PathBuf {
        self.dir.join("logs")
    }

    pub(crate) fn log(&self, member: &str) -> PathBuf {
        self.logs()
            .join(format!("{}{LOG_SUFFIX}", path_component(member)))
    }

    /// The member (as a path component) whose log `file` in `logs/` is, if it is one.
    pub(crate) fn log_owner(file: &OsStr) -> Option<&str> {
        owner(file, LOG_SUFFIX)
    }

    /// Every file of one member's mailbox.
    pub fn mailbox(&self, member: &str) -> MailboxPaths {
        let component = path_component(member);
        let inbox = self.inboxes().join(format!("{component}{INBOX_SUFFIX}"));
        MailboxPaths {
            root: self.root.clone(),
            lock: LockPaths::beside(&inbox),
            consumers: self.inboxes().join(format!(".{component}.consume.flock")),
            inbox,
            history: self.history().join(format!("{component}{HISTORY_SUFFIX}")),
            spool: self.inboxes().join(".spool").join(&component),
        }
    }

    /// The member (as a path component) whose inbox `file` in `inboxes/` is, if it is one.
    pub(crate) fn inbox_owner(file: &OsStr) -> Option<&str> {
        owner(file, INBOX_SUFFIX)
    }

    /// The member (as a path component) whose history `file` in `history/` is, if it is one.
    pub(crate) fn history_owner(file: &OsStr) -> Option<&str> {
        owner(file, HISTORY_SUFFIX)
    }
}

const CONFIG_FILE: &str = "config.json";
const LAUNCH_LOCK_FILE: &str = ".launch.flock";
const INBOX_SUFFIX: &str = ".json";
const HISTORY_SUFFIX: &str = ".jsonl";
const LOG_SUFFIX: &str = ".log";

const TAR_ZST_SUFFIX: &str = ".tar.zst";

/// How a team is archived when it is removed (docs/ARCHITECTURE.md, "Removing a team").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArchiveFormat {
    /// One compressed file: a tar archive compressed with zstd.
    TarZst,
    /// The team's folder itself, moved into the archive.
    Folder,
}

/// `bob.json` → `bob`; dot files (locks, temporary files, the spool) belong to no one.
fn owner<'a>(file: &'a OsStr, suffix: &str) -> Option<&'a str> {
    let stem = file.to_str()?.strip_suffix(suffix)?;
    (!stem.is_empty() && !stem.starts_with('.')).then_some(stem)
}

/// One member's mailbox files.
#[derive(Debug, Clone)]
pub struct MailboxPaths {
    /// `teams/`: the private folder they are all in, for `durable::private_dir`.
    pub(crate) root: PathBuf,
    /// `inboxes/<name>.json`: the unread messages.
    pub(crate) inbox: PathBuf,
    /// `history/<name>.jsonl`: the delivered messages.
    pub(crate) history: PathBuf,
    /// `inboxes/.spool/<name>/`: messages of writers waiting for the inbox lock.
    pub(crate) spool: PathBuf,
    pub(crate) lock: LockPaths,
    /// `inboxes/.<name>.consume.flock`: swarm's consumers of this inbox take turns on it.
    pub(crate) consumers: PathBuf,
}

impl MailboxPaths {
    /// `<name>.json.<what>-<ms>`: where a corrupt inbox or its invalid elements are moved aside.
    pub(crate) fn aside(&self, what: SetAsideKind, ms: u64) -> PathBuf {
        let mut name = self.inbox.file_name().unwrap_or_default().to_owned();
        name.push(format!(".{}-{ms}", what.as_str()));
        self.inbox.with_file_name(name)
    }

    /// What a file beside the inbox holds, if it is one moved aside from it.
    pub(crate) fn aside_kind(&self, file: &OsStr) -> Option<SetAsideKind> {
        let inbox = self.inbox.file_name()?.to_str()?;
        let rest = file.to_str()?.strip_prefix(inbox)?.strip_prefix('.')?;
        [SetAsideKind::Corrupt, SetAsideKind::Invalid]
            .into_iter()
            .find(|kind| rest.starts_with(&format!("{}-", kind.as_str())))
    }
}

/// Why something was moved aside from an inbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SetAsideKind {
    /// The whole file was not a JSON array.
    Corrupt,
    /// Elements without string `from`, `text` and `timestamp`.
    Invalid,
}

impl SetAsideKind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Corrupt => "corrupt",
            Self::Invalid => "invalid",
        }
    }
}

/// The three locks that guard a shared file (docs/ARCHITECTURE.md, "Locks"): swarm's flock file,
/// never renamed or removed; the flock file agent-team-mail (atm) takes; Claude Code's lock
/// directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LockPaths {
    /// `.<stem>.flock`
    pub(crate) flock: PathBuf,
    /// `.<stem>.wait.flock`: swarm processes waiting for the first lock hold it shared.
    pub(crate) waiting: PathBuf,
    /// `<stem>.lock`: atm's writers `flock` it (`inbox_path.with_extension("lock")`).
    pub(crate) atm: PathBuf,
    /// `<file>.lock`
    pub(crate) dir: PathBuf,
}

impl LockPaths {
    /// `dir/bob.json` → `dir/.bob.flock` (and `dir/.bob.wait.flock`), `dir/bob.lock` and
    /// `dir/bob.json.lock`.
    pub(crate) fn beside(target: &Path) -> Self {
        let stem = target.file_stem().unwrap_or_default().to_string_lossy();
        let mut dir_name = target.file_name().unwrap_or_default().to_owned();
        dir_name.push(".lock");
        Self {
            flock: target.with_file_name(format!(".{stem}.flock")),
            waiting: target.with_file_name(format!(".{stem}.wait.flock")),
            atm: target.with_file_name(format!("{stem}.lock")),
            dir: target.with_file_name(dir_name),
        }
    }
}

/// `logs/<name>.log` → `logs/<name>.log.1`: the output before a log's newest, once it was rotated.
pub(crate) fn rotated_log(log: &Path) -> PathBuf {
    let mut name = log.file_name().unwrap_or_default().to_owned();
    name.push(".1");
    log.with_file_name(name)
}

/// Makes a relative path absolute against the current directory, without resolving symlinks.
pub(crate) fn absolute(path: &Path) -> Result<PathBuf> {
    std::path::absolute(path).map_err(|err| Error::io("resolve", path, err))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_layout() {
        let team = Home::new(PathBuf::from("/h")).team("t");
        let bob = team.mailbox("bob");
        assert_eq!(bob.inbox, Path::new("/h/teams/t/inboxes/bob.json"));
        assert_eq!(bob.history, Path::new("/h/teams/t/history/bob.jsonl"));
        assert_eq!(bob.spool, Path::new("/h/teams/t/inboxes/.spool/bob"));
        assert_eq!(bob.lock.flock, Path::new("/h/teams/t/inboxes/.bob.flock"));
        assert_eq!(
            bob.lock.waiting,
            Path::new("/h/teams/t/inboxes/.bob.wait.flock")
        );
        assert_eq!(bob.lock.atm, Path::new("/h/teams/t/inboxes/bob.lock"));
        assert_eq!(bob.lock.dir, Path::new("/h/teams/t/inboxes/bob.json.lock"));
        assert_eq!(
            bob.consumers,
            Path::new("/h/teams/t/inboxes/.bob.consume.flock")
        );
        assert_eq!(
            team.config_lock().flock,
            Path::new("/h/teams/t/.config.flock")
        );
        assert_eq!(team.launch_lock(), Path::new("/h/teams/t/.launch.flock"));
        assert_eq!(
            rotated_log(&team.log("bob")),
            Path::new("/h/teams/t/logs/bob.log.1")
        );
        assert_eq!(team.config_lock().atm, Path::new("/h/teams/t/config.lock"));
        let home = Home::new(PathBuf::from("/h"));
        assert_eq!(
            home.archive("t", "20260101T000000Z", 1, ArchiveFormat::TarZst),
            Path::new("/h/archive/t-20260101T000000Z.tar.zst")
        );
        assert_eq!(
            home.archive("t", "20260101T000000Z", 2, ArchiveFormat::Folder),
            Path::new("/h/archive/t-20260101T000000Z-2")
        );
        assert_eq!(
            team.removing(),
            Path::new(&format!("/h/teams/.t.removing-{}", std::process::id()))
        );
        assert_eq!(
            bob.aside(SetAsideKind::Corrupt, 7),
            Path::new("/h/teams/t/inboxes/bob.json.corrupt-7")
        );
    }

    #[test]
    fn owners_are_read_back_from_file_names() {
        let bob = Home::new(PathBuf::from("/h")).team("t").mailbox("bob");
        assert_eq!(TeamPaths::inbox_owner(OsStr::new("bob.json")), Some("bob"));
        assert_eq!(
            TeamPaths::history_owner(OsStr::new("bob.jsonl")),
            Some("bob")
        );
        for no in [
            "bob.jsonl",
            "bob.json.lock",
            "bob.lock",
            ".bob.flock",
            ".bob.consume.flock",
            ".bob.wait.flock",
            ".bob.json.1.tmp",
            "bob.json.corrupt-1",
        ] {
            assert_eq!(TeamPaths::inbox_owner(OsStr::new(no)), None, "{no}");
        }
        assert_eq!(TeamPaths::log_owner(OsStr::new("bob.log")), Some("bob"));
        assert_eq!(TeamPaths::log_owner(OsStr::new("bob.log.1")), None);
        assert_eq!(
            bob.aside_kind(OsStr::new("bob.json.invalid-3")),
            Some(SetAsideKind::Invalid)
        );
        assert_eq!(bob.aside_kind(OsStr::new("bob.json.lock")), None);
    }
}
