//! The on-disk layout (docs/ARCHITECTURE.md, "On disk"): under swarm's home, in the peer runtime
//! directory, and in a git repository whose members work in worktrees. Every file name swarm
//! touches, its temporary, staging and spool files included, is spelled here once.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::base::names::path_component;
use crate::error::{Error, Result};
use crate::format::task::MAX_ID;

#[derive(Debug, Clone)]
pub struct Home {
    root: PathBuf,
    /// The home directory's device and inode, once pinned: shared by every clone, so a server
    /// that pinned its home at start judges against that directory, whatever its path names later.
    id: std::sync::Arc<std::sync::OnceLock<(u64, u64)>>,
}

impl Home {
    pub fn new(root: PathBuf) -> Self {
        Self {
            root,
            id: std::sync::Arc::default(),
        }
    }

    /// Pins the home to the directory its path names now, for a process that judges callers for
    /// as long as it runs (the signing agent, a supervisor, a listener): a home renamed or
    /// replaced later is no longer this one (docs/ARCHITECTURE.md, "Identity").
    pub fn pin(&self) -> Result<(u64, u64)> {
        if let Some(id) = self.id.get() {
            return Ok(*id);
        }
        let id = crate::base::process::dir_id(&self.root).ok_or_else(|| {
            Error::runtime(format!("cannot find the home {}", self.root.display()))
        })?;
        Ok(*self.id.get_or_init(|| id))
    }

    /// The home directory's device and inode: the pinned ones, else what its path names now;
    /// `None` when it names no directory.
    pub fn id(&self) -> Option<(u64, u64)> {
        self.id
            .get()
            .copied()
            .or_else(|| crate::base::process::dir_id(&self.root))
    }

    /// Whether the path still names the home's directory: always, for a home never pinned that
    /// exists.
    pub fn in_place(&self) -> bool {
        let now = crate::base::process::dir_id(&self.root);
        now.is_some() && self.id.get().is_none_or(|id| now == Some(*id))
    }

    /// `--home`/`SWARM_HOME`, else `~/.swarm`.
    pub fn resolve(explicit: Option<PathBuf>) -> Result<Self> {
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

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `teams/`: a folder swarm owns and keeps private, with everything below it
    /// (docs/ARCHITECTURE.md, "Private files").
    pub fn teams_dir(&self) -> PathBuf {
        self.root.join("teams")
    }

    /// `teams/<team>/`, `<team>` the name with every character outside `[A-Za-z0-9_-]` turned
    /// into `-`, as Claude Code names it; but a team folder another tool named otherwise (`a.b`)
    /// is that folder, by the name it has (docs/ARCHITECTURE.md, "On disk").
    pub fn team(&self, team: &str) -> TeamPaths {
        let root = self.teams_dir();
        let component = path_component(team);
        let dir = if component != team && is_foreign_team_folder(&root, team) {
            root.join(team)
        } else {
            root.join(component)
        };
        TeamPaths { dir, root }
    }

    /// `node/`: what this host's `swarm node` keeps: its record and its lock
    /// (docs/ARCHITECTURE.md, "Across machines"); private, like `teams/`.
    pub(crate) fn node_dir(&self) -> PathBuf {
        self.root.join("node")
    }

    /// `node/node.json`: the node serving this home: its host name, pid, server and whether it
    /// is connected.
    pub(crate) fn node_record(&self) -> PathBuf {
        self.node_dir().join("node.json")
    }

    /// `node/hosts.json`: which hosts' nodes the node last saw alive, and when it wrote that.
    pub(crate) fn node_hosts(&self) -> PathBuf {
        self.node_dir().join("hosts.json")
    }

    /// `node/tasks-<team>.json`: for each task of a clustered team, the revision of its key on the
    /// server that this host's task file last held exactly (docs/ARCHITECTURE.md, "The task list
    /// across hosts").
    pub(crate) fn node_task_copies(&self, team: &str) -> PathBuf {
        self.node_dir().join(format!("tasks-{team}.json"))
    }

    /// `node/.node.flock`: held by the node for as long as it runs, so one home has one node.
    pub(crate) fn node_lock(&self) -> PathBuf {
        self.node_dir().join(".node.flock")
    }

    /// `tasks/`: the task lists, one folder per team, as Claude Code keeps them
    /// (docs/ARCHITECTURE.md, "Task list"); a folder swarm keeps private, like `teams/`.
    pub(crate) fn tasks_dir(&self) -> PathBuf {
        self.root.join(TASKS_DIR)
    }

    /// `tasks/<list>/`: the task list of team `team`, `<list>` its name with every character
    /// outside `[A-Za-z0-9_-]` turned into `-`, as Claude Code names it.
    pub(crate) fn task_list(&self, team: &str) -> TaskListPaths {
        let root = self.tasks_dir();
        TaskListPaths {
            dir: root.join(path_component(team)),
            root,
        }
    }

    /// `peers/`: a folder swarm owns and keeps private.
    pub fn peers_dir(&self) -> PathBuf {
        self.root.join("peers")
    }

    /// `peers/<pid>.json`: the registry entry of the peer with this pid.
    pub fn peer_entry(&self, pid: i32) -> PathBuf {
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
    pub fn is_peer_entry(path: &Path) -> bool {
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
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `teams/.<team>.removing-<pid>` (or `.archiving-<pid>`): where a team's folder is moved the
    /// moment it is removed (or archived as a folder), so it vanishes at once and whole, before
    /// its files are deleted (or it is moved into the archive). No team is listed under a dot
    /// name; [`Aside::of`] reads the name back.
    pub(crate) fn aside(&self, leaving: Leaving) -> PathBuf {
        let name = self.dir.file_name().unwrap_or_default().to_string_lossy();
        self.root
            .join(format!(".{name}.{}-{}", leaving.word(), std::process::id()))
    }

    /// `<folder>/tasks`: where a team's task list goes in its folder once it is taken aside,
    /// and so in its archive.
    pub(crate) fn task_list_in(folder: &Path) -> PathBuf {
        folder.join(TASKS_DIR)
    }

    /// `teams/`: the private folder every directory of the team is in, for
    /// `durable::private_dir`.
    pub fn private_root(&self) -> &Path {
        &self.root
    }

    pub fn config(&self) -> PathBuf {
        self.dir.join(CONFIG_FILE)
    }

    /// Whether a file the watcher reports in the team's directory is config.json.
    pub fn is_config(file: &OsStr) -> bool {
        file == CONFIG_FILE
    }

    /// The locks on config.json.
    pub(crate) fn config_lock(&self) -> LockPaths {
        LockPaths::beside(&self.config())
    }

    /// `.launch.flock`: held by the one `swarm up` that is starting the team.
    pub fn launch_lock(&self) -> PathBuf {
        self.dir.join(LAUNCH_LOCK_FILE)
    }

    pub fn inboxes(&self) -> PathBuf {
        self.dir.join("inboxes")
    }

    /// `permissions.jsonl`: every answer the lead's side gave to a permission ask, one a line
    /// (docs/ARCHITECTURE.md, "Permission asks").
    pub fn permission_answers(&self) -> PathBuf {
        self.dir.join(PERMISSION_ANSWERS_FILE)
    }

    /// `.permissions.flock`: held while an ask is answered, so it is answered once.
    pub(crate) fn permission_answers_lock(&self) -> PathBuf {
        self.dir.join(PERMISSION_ANSWERS_LOCK_FILE)
    }

    /// `relaunch.json`: what each member's launch had that config.json does not keep, for a resume
    /// given no team file (docs/ARCHITECTURE.md, "Resuming a team").
    pub fn relaunch(&self) -> PathBuf {
        self.dir.join(RELAUNCH_FILE)
    }

    /// `.relaunch.flock`: held while `relaunch.json` is rewritten.
    pub(crate) fn relaunch_lock(&self) -> PathBuf {
        self.dir.join(RELAUNCH_LOCK_FILE)
    }

    /// `activity.json`: each member's current activity, since when and why (docs/ARCHITECTURE.md,
    /// "Activity and events").
    pub fn activity(&self) -> PathBuf {
        self.dir.join(ACTIVITY_FILE)
    }

    /// `.activity.flock`: held while a change of activity is recorded, so it is recorded once.
    pub(crate) fn activity_lock(&self) -> PathBuf {
        self.dir.join(ACTIVITY_LOCK_FILE)
    }

    /// `events.jsonl`: the team's event stream, one event a line (docs/ARCHITECTURE.md,
    /// "Activity and events").
    pub fn events(&self) -> PathBuf {
        self.dir.join(EVENTS_FILE)
    }

    /// `usage.jsonl`: the tokens each member's model replies used, one reply a line
    /// (docs/ARCHITECTURE.md, "Costs and budgets").
    pub fn usage(&self) -> PathBuf {
        self.dir.join(USAGE_FILE)
    }

    /// Whether a file the watcher reports in the team's directory is the usage ledger.
    pub fn is_usage(file: &OsStr) -> bool {
        file == USAGE_FILE
    }

    pub(crate) fn history(&self) -> PathBuf {
        self.dir.join("history")
    }

    pub fn logs(&self) -> PathBuf {
        self.dir.join("logs")
    }

    /// `gemini-home/`: the Gemini CLI home swarm gives the team's Gemini CLI teammates
    /// (`GEMINI_CLI_HOME`): its `.gemini/settings.json` is the person's with swarm's hooks added,
    /// every other entry of its `.gemini` a symlink to the person's.
    pub fn gemini_home(&self) -> PathBuf {
        self.dir.join(GEMINI_HOME_DIR)
    }

    /// `mcp.json`: the MCP configuration swarm gives the team's Claude Code members with
    /// `mcp = true` (`--mcp-config`): `swarm mcp` as the server named `swarm`.
    pub fn mcp_config(&self) -> PathBuf {
        self.dir.join(MCP_CONFIG_FILE)
    }

    /// `aider/<member>.chat.md` and `aider/<member>.input`: an aider member's own chat and input
    /// histories, so members in one checkout never restore each other's chat.
    pub fn aider_history(&self, member: &str) -> (PathBuf, PathBuf) {
        let dir = self.dir.join("aider");
        let member = path_component(member);
        (
            dir.join(format!("{member}.chat.md")),
            dir.join(format!("{member}.input")),
        )
    }

    pub fn log(&self, member: &str) -> PathBuf {
        self.logs()
            .join(format!("{}{LOG_SUFFIX}", path_component(member)))
    }

    /// The member (as a path component) whose log `file` in `logs/` is, if it is one.
    pub fn log_owner(file: &OsStr) -> Option<&str> {
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
const PERMISSION_ANSWERS_FILE: &str = "permissions.jsonl";
const PERMISSION_ANSWERS_LOCK_FILE: &str = ".permissions.flock";
const EVENTS_FILE: &str = "events.jsonl";
const RELAUNCH_FILE: &str = "relaunch.json";
const RELAUNCH_LOCK_FILE: &str = ".relaunch.flock";
const USAGE_FILE: &str = "usage.jsonl";
const NOTIFY_FILE: &str = "notify.toml";
const ACTIVITY_FILE: &str = "activity.json";
const ACTIVITY_LOCK_FILE: &str = ".activity.flock";
const GEMINI_HOME_DIR: &str = "gemini-home";
const MCP_CONFIG_FILE: &str = "mcp.json";
const INBOX_SUFFIX: &str = ".json";
const HISTORY_SUFFIX: &str = ".jsonl";
const LOG_SUFFIX: &str = ".log";

const TAR_ZST_SUFFIX: &str = ".tar.zst";

/// Why a team's folder was taken aside: to be deleted, or moved into the archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Leaving {
    Removed,
    Archived,
}

impl Leaving {
    fn word(self) -> &'static str {
        match self {
            Self::Removed => "removing",
            Self::Archived => "archiving",
        }
    }
}

/// A folder of `teams/` that a removal took aside (`.<team>.removing-<pid>`,
/// `.<team>.archiving-<pid>`): whose it was, the pid of the process removing it, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Aside {
    pub(crate) team: String,
    pub(crate) pid: i32,
    pub(crate) leaving: Leaving,
}

impl Aside {
    /// The folder name `file` read back, if a removal named it.
    pub(crate) fn of(file: &OsStr) -> Option<Self> {
        let rest = file.to_str()?.strip_prefix('.')?;
        [Leaving::Removed, Leaving::Archived]
            .into_iter()
            .find_map(|leaving| {
                let (team, pid) = rest.rsplit_once(&format!(".{}-", leaving.word()))?;
                let pid = pid.parse().ok().filter(|pid| *pid > 0)?;
                (!team.is_empty()).then(|| Self {
                    team: team.to_owned(),
                    pid,
                    leaving,
                })
            })
    }
}

/// How a team is archived when it is removed (docs/ARCHITECTURE.md, "Removing a team").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveFormat {
    /// One compressed file: a tar archive compressed with zstd.
    TarZst,
    /// The team's folder itself, moved into the archive.
    Folder,
}

/// Whether `teams/<name>` is a folder another tool made under a name that is one path component
/// swarm would not make itself: not hidden (a removal's `.<team>.removing-<pid>`), no `/`, and a
/// folder, no link. Looked at with `lstat`.
fn is_foreign_team_folder(root: &Path, name: &str) -> bool {
    let mut components = Path::new(name).components();
    matches!(
        (components.next(), components.next()),
        (Some(std::path::Component::Normal(_)), None)
    ) && !name.starts_with('.')
        && std::fs::symlink_metadata(root.join(name)).is_ok_and(|meta| meta.is_dir())
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
    pub inbox: PathBuf,
    /// `history/<name>.jsonl`: the delivered messages.
    pub(crate) history: PathBuf,
    /// `inboxes/.spool/<name>/`: messages of writers waiting for the inbox lock.
    pub(crate) spool: PathBuf,
    pub(crate) lock: LockPaths,
    /// `inboxes/.<name>.consume.flock`: swarm's consumers of this inbox take turns on it.
    pub(crate) consumers: PathBuf,
}

impl MailboxPaths {
    /// `<name>.json.<what>-<ms>`: where a corrupt inbox or its invalid elements are moved aside;
    /// `<name>.json.<what>-<ms>.<attempt>` when that is taken.
    pub(crate) fn aside(&self, what: SetAsideKind, ms: u64, attempt: u32) -> PathBuf {
        let mut name = self.inbox.file_name().unwrap_or_default().to_owned();
        name.push(format!(".{}-{ms}", what.as_str()));
        if attempt > 0 {
            name.push(format!(".{attempt}"));
        }
        self.inbox.with_file_name(name)
    }

    /// `.spool/<name>/<nanos>-<pid>-<id>.json`: one waiting writer's messages, written first
    /// under the same name with a leading dot (`staging`) and renamed into place. The names sort
    /// by the time they were written.
    pub(crate) fn spool_file(&self, nanos: u128, pid: u32, id: &str) -> SpoolFile {
        let name = format!("{nanos:024}-{pid}-{id}.json");
        SpoolFile {
            staging: self.spool.join(format!(".{name}")),
            path: self.spool.join(name),
        }
    }

    /// What a file beside the inbox holds, if it is one moved aside from it.
    pub(crate) fn aside_kind(&self, file: &OsStr) -> Option<SetAsideKind> {
        let inbox = self.inbox.file_name()?.to_str()?;
        let rest = file.to_str()?.strip_prefix(inbox)?.strip_prefix('.')?;
        [
            SetAsideKind::Corrupt,
            SetAsideKind::Invalid,
            SetAsideKind::TooLarge,
        ]
        .into_iter()
        .find(|kind| rest.starts_with(&format!("{}-", kind.as_str())))
    }
}

/// The files of one team's task list, in Claude Code's layout (docs/ARCHITECTURE.md, "Task
/// list"): `<id>.json` per task, `.lock` (whose lock directory `.lock.lock` is the list lock),
/// `<id>.json.lock` per task, `.highwatermark`; swarm's flock files beside them.
#[derive(Debug, Clone)]
pub(crate) struct TaskListPaths {
    /// `tasks/`: the private folder every list is in, for `durable::private_dir`.
    pub(crate) root: PathBuf,
    /// `tasks/<list>/`
    pub(crate) dir: PathBuf,
}

const TASK_SUFFIX: &str = ".json";
const TASKS_DIR: &str = "tasks";
const LIST_LOCK_FILE: &str = ".lock";
const HIGH_WATER_MARK_FILE: &str = ".highwatermark";

impl TaskListPaths {
    /// `<id>.json`
    pub(crate) fn task(&self, id: u64) -> PathBuf {
        self.dir.join(format!("{id}{TASK_SUFFIX}"))
    }

    /// The task id a file in the list's folder holds, if it is a task file (`<decimal>.json`).
    pub(crate) fn task_id(file: &OsStr) -> Option<u64> {
        let stem = file.to_str()?.strip_suffix(TASK_SUFFIX)?;
        parse_task_id(stem)
    }

    /// The locks on one task: swarm's flock `.<id>.flock`, then Claude Code's lock directory
    /// `<id>.json.lock` (proper-lockfile's `lockfilePath`); atm takes none.
    pub(crate) fn task_lock(&self, id: u64) -> LockPaths {
        LockPaths {
            atm: None,
            ..LockPaths::beside(&self.task(id))
        }
    }

    /// `.lock`: the empty file Claude Code locks the whole list through.
    pub(crate) fn list_lock_file(&self) -> PathBuf {
        self.dir.join(LIST_LOCK_FILE)
    }

    /// The list lock: swarm's flock `.list.flock`, then Claude Code's lock directory `.lock.lock`.
    pub(crate) fn list_lock(&self) -> LockPaths {
        LockPaths {
            flock: self.dir.join(".list.flock"),
            waiting: self.dir.join(".list.wait.flock"),
            atm: None,
            dir: self.dir.join(format!("{LIST_LOCK_FILE}.lock")),
        }
    }

    /// `.highwatermark`: the highest id ever issued, as decimal text.
    pub(crate) fn high_water_mark(&self) -> PathBuf {
        self.dir.join(HIGH_WATER_MARK_FILE)
    }

    /// Whether a file in the list's folder is task `id` moved aside (`<id>.json.corrupt-…`).
    pub(crate) fn is_aside_of(file: &OsStr, id: u64) -> bool {
        file.to_str()
            .is_some_and(|name| name.starts_with(&format!("{id}{TASK_SUFFIX}.corrupt-")))
    }

    /// `<id>.json.corrupt-<ms>` (`.<attempt>` added when taken): a task file that could not be
    /// read, moved aside.
    pub(crate) fn aside(&self, id: u64, ms: u64, attempt: u32) -> PathBuf {
        let again = if attempt > 0 {
            format!(".{attempt}")
        } else {
            String::new()
        };
        self.dir
            .join(format!("{id}{TASK_SUFFIX}.corrupt-{ms}{again}"))
    }
}

/// A task id as Claude Code writes it: a decimal number without sign or leading zeros, at most
/// [`MAX_ID`].
pub fn parse_task_id(raw: &str) -> Option<u64> {
    let canonical = !raw.is_empty()
        && raw.bytes().all(|b| b.is_ascii_digit())
        && (raw == "0" || !raw.starts_with('0'));
    canonical
        .then(|| raw.parse().ok())
        .flatten()
        .filter(|id| *id <= MAX_ID)
}

/// One writer's spool file, and the name it is written under before it is complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SpoolFile {
    pub(crate) staging: PathBuf,
    pub(crate) path: PathBuf,
}

/// What a file in a spool directory is, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SpoolEntry {
    /// Complete: messages to merge.
    Ready,
    /// Still being written, by the process the name gives, if it gives one.
    Staging { writer: Option<i32> },
}

impl SpoolEntry {
    pub(crate) fn of(file: &OsStr) -> Self {
        let name = file.to_string_lossy();
        match name.strip_prefix('.') {
            None => Self::Ready,
            Some(rest) => Self::Staging {
                writer: rest.split('-').nth(1).and_then(|pid| pid.parse().ok()),
            },
        }
    }
}

/// Why something was moved aside from an inbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetAsideKind {
    /// The whole file was not a JSON array.
    Corrupt,
    /// Elements without string `from`, `text` and `timestamp`.
    Invalid,
    /// Messages for a member on another host, larger than the NATS server carries.
    TooLarge,
}

impl SetAsideKind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Corrupt => "corrupt",
            Self::Invalid => "invalid",
            Self::TooLarge => "too-large",
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
    /// `<stem>.lock`: atm's writers `flock` it (`inbox_path.with_extension("lock")`); none for a
    /// task file, which atm never writes.
    pub(crate) atm: Option<PathBuf>,
    /// `<file>.lock`
    pub(crate) dir: PathBuf,
}

impl LockPaths {
    /// `.<file>.lock.swarm-<pid>` beside the lock directory `dir`: where process `pid` makes the
    /// directory before it renames it into place (docs/ARCHITECTURE.md, "Locks").
    pub(crate) fn staging(dir: &Path, pid: u32) -> PathBuf {
        let mut name = OsString::from(".");
        name.push(dir.file_name().unwrap_or_default());
        name.push(format!(".swarm-{pid}"));
        dir.with_file_name(name)
    }

    /// Whether `candidate` is where some swarm writer stages lock directory `dir`: beside it,
    /// named as [`Self::staging`] names it, for any pid.
    pub(crate) fn is_staging(dir: &Path, candidate: &Path) -> bool {
        let prefix = format!(
            ".{}.swarm-",
            dir.file_name().unwrap_or_default().to_string_lossy()
        );
        candidate.parent() == dir.parent()
            && candidate
                .file_name()
                .and_then(|name| name.to_str())
                .and_then(|name| name.strip_prefix(&prefix))
                .is_some_and(|pid| pid.parse::<u32>().is_ok())
    }

    /// `dir/bob.json` → `dir/.bob.flock` (and `dir/.bob.wait.flock`), `dir/bob.lock` and
    /// `dir/bob.json.lock`.
    pub(crate) fn beside(target: &Path) -> Self {
        let stem = target.file_stem().unwrap_or_default().to_string_lossy();
        let mut dir_name = target.file_name().unwrap_or_default().to_owned();
        dir_name.push(".lock");
        Self {
            flock: target.with_file_name(format!(".{stem}.flock")),
            waiting: target.with_file_name(format!(".{stem}.wait.flock")),
            atm: Some(target.with_file_name(format!("{stem}.lock"))),
            dir: target.with_file_name(dir_name),
        }
    }
}

/// A temporary file beside `target` (docs/ARCHITECTURE.md, "Durable writes"): its name starts
/// with this prefix, `.<file>.<writer's pid>.`, and ends with [`TEMP_SUFFIX`], with random
/// characters between.
pub(crate) fn temp_prefix(target: &Path) -> String {
    format!(
        ".{}.{}.",
        target.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    )
}

/// A temporary file named by [`temp_prefix`] (`.<file>.<pid>.<random>.tmp`, or
/// `.<file>.<random>.tmp` as swarm named them before it put its pid in), read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TempName {
    /// The pid of its writer, when the name has one.
    pub(crate) writer: Option<i32>,
}

impl TempName {
    /// `file` read back, if it is named as a temporary file.
    pub(crate) fn of(file: &OsStr) -> Option<Self> {
        let inner = file
            .to_str()?
            .strip_prefix('.')?
            .strip_suffix(TEMP_SUFFIX)?;
        let (head, random) = inner.rsplit_once('.')?;
        if head.is_empty()
            || random.len() != TEMP_RANDOM_LEN
            || !random.chars().all(|c| c.is_ascii_alphanumeric())
        {
            return None;
        }
        let writer = head
            .rsplit_once('.')
            .and_then(|(target, pid)| (!target.is_empty()).then_some(pid)?.parse().ok())
            .filter(|pid: &i32| *pid > 0);
        Some(Self { writer })
    }
}

pub(crate) const TEMP_SUFFIX: &str = ".tmp";

/// How many random characters a temporary file's name has before [`TEMP_SUFFIX`].
pub(crate) const TEMP_RANDOM_LEN: usize = 6;

/// Where peer sockets live (docs/ARCHITECTURE.md, "Peers"): `$XDG_RUNTIME_DIR/swarm`, else
/// `/tmp/swarm-<uid>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimePaths {
    dir: PathBuf,
}

impl RuntimePaths {
    /// From `$XDG_RUNTIME_DIR` (unset or empty: none) and the user's id.
    pub(crate) fn new(xdg_runtime_dir: Option<&OsStr>, uid: u32) -> Self {
        let dir = match xdg_runtime_dir.filter(|dir| !dir.is_empty()) {
            Some(base) => PathBuf::from(base).join("swarm"),
            None => PathBuf::from(format!("/tmp/swarm-{uid}")),
        };
        Self { dir }
    }

    /// This process's runtime directory.
    pub fn current() -> Self {
        Self::new(
            std::env::var_os("XDG_RUNTIME_DIR").as_deref(),
            nix::unistd::getuid().as_raw(),
        )
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `<runtime>/<pid>.sock`: the socket of the peer with this pid.
    pub fn socket(&self, pid: u32) -> PathBuf {
        self.dir.join(format!("{pid}.sock"))
    }

    /// `<runtime>/fence-<pid>.sock`: the socket a fenced member's `swarm` reaches the supervisor
    /// with this pid at (docs/ARCHITECTURE.md, "Fencing members").
    pub fn fence_socket(&self, pid: impl std::fmt::Display) -> PathBuf {
        self.dir.join(format!("fence-{pid}.sock"))
    }

    /// `<runtime>/fence-<pid>-net.sock`: the proxy through which the fenced member of the
    /// supervisor with this pid reaches the hosts its allow-list names.
    pub fn fence_proxy_socket(&self, pid: impl std::fmt::Display) -> PathBuf {
        self.dir.join(format!("fence-{pid}-net.sock"))
    }

    /// `<runtime>/signer-<id>.sock`: the socket of a team's signing agent.
    pub fn signer_socket(&self, id: &str) -> PathBuf {
        self.dir.join(format!("signer-{id}.sock"))
    }

    /// `<runtime>/signer-<id>.lock`: held by a team's signing agent for its whole life.
    pub fn signer_lock(&self, id: &str) -> PathBuf {
        self.dir.join(format!("signer-{id}.lock"))
    }
}

/// Claude Code's own folder (docs/ARCHITECTURE.md, "Peers"): `$CLAUDE_CONFIG_DIR`, else
/// `~/.config/swarm` (`$XDG_CONFIG_HOME/swarm`): the person's own settings for every team.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserConfig {
    dir: PathBuf,
}

impl UserConfig {
    /// From `$XDG_CONFIG_HOME` and `$HOME` (unset or empty: none); `None` with neither.
    pub fn current() -> Option<Self> {
        let config = std::env::var_os("XDG_CONFIG_HOME").filter(|dir| !dir.is_empty());
        let dir = match config {
            Some(dir) => PathBuf::from(dir),
            None => {
                PathBuf::from(std::env::var_os("HOME").filter(|h| !h.is_empty())?).join(".config")
            }
        };
        Some(Self {
            dir: dir.join("swarm"),
        })
    }

    /// `notify.toml`: the `[notify]` keys of every team, under each team file's own.
    pub fn notify(&self) -> PathBuf {
        self.dir.join(NOTIFY_FILE)
    }
}

/// `~/.claude`. swarm only reads there: the records of the person's live sessions
/// (`sessions/<pid>.json`) and the keys of their sockets
/// (`sessions/<pid>.<sha256 of the socket's path, hex>.key`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaudePaths {
    dir: PathBuf,
    /// Given by `$CLAUDE_CONFIG_DIR`: only then may `$CLAUDE_CODE_PROJECT_DIR_NAME` name a
    /// project's folder.
    configured: bool,
}

impl ClaudePaths {
    /// From `$CLAUDE_CONFIG_DIR` and `$HOME` (unset or empty: none); `None` with neither.
    pub fn new(config_dir: Option<&OsStr>, home: Option<&OsStr>) -> Option<Self> {
        let (dir, configured) = match config_dir.filter(|dir| !dir.is_empty()) {
            Some(dir) => (PathBuf::from(dir), true),
            None => (
                PathBuf::from(home.filter(|home| !home.is_empty())?).join(".claude"),
                false,
            ),
        };
        Some(Self { dir, configured })
    }

    /// This process's view of it.
    pub fn current() -> Option<Self> {
        Self::new(
            std::env::var_os("CLAUDE_CONFIG_DIR").as_deref(),
            std::env::var_os("HOME").as_deref(),
        )
    }

    /// `projects/`: a folder of transcripts for each working directory.
    pub fn projects(&self) -> PathBuf {
        self.dir.join("projects")
    }

    /// `projects/<project>/<id>.jsonl`: the transcript Claude Code 2.1.332 writes for session `id`
    /// started in `cwd` (its real path). The folder is `dir_name` (`$CLAUDE_CODE_PROJECT_DIR_NAME`)
    /// when the config folder was given and the name is one Claude Code takes; otherwise the cwd
    /// with every UTF-16 unit but `a-zA-Z0-9` turned into `-`, cut at 200 with `-` and the base-36
    /// of the absolute Java string hash of the cwd as it was (docs/ARCHITECTURE.md, "Costs and
    /// budgets").
    pub fn transcript(&self, cwd: &Path, dir_name: Option<&OsStr>, id: &str) -> PathBuf {
        let chosen = dir_name
            .filter(|_| self.configured)
            .and_then(OsStr::to_str)
            .filter(|name| claude_takes_dir_name(name));
        let project = match chosen {
            Some(name) => name.to_owned(),
            None => claude_project_name(&cwd.to_string_lossy()),
        };
        self.projects()
            .join(project)
            .join(format!("{id}{TRANSCRIPT_SUFFIX}"))
    }

    /// The transcript of session `id` in any project folder, `projects/*/<id>.jsonl`, when
    /// exactly one holds it: a session resumed from another folder writes to its first folder's
    /// file, and Claude Code itself finds none when several hold one.
    pub fn find_transcript(&self, id: &str) -> Option<PathBuf> {
        let projects = std::fs::read_dir(self.projects()).ok()?;
        let file = format!("{id}{TRANSCRIPT_SUFFIX}");
        let mut found = projects
            .flatten()
            .map(|project| project.path().join(&file))
            .filter(|path| path.is_file());
        let first = found.next()?;
        found.next().is_none().then_some(first)
    }

    /// Whether a transcript of session `id` is in one of Claude Code's project folders,
    /// `projects/*/<id>.jsonl`: only then can `claude --resume <id>` find it (docs/ARCHITECTURE.md,
    /// "Resuming a team"). A session killed before its first prompt wrote none.
    pub fn has_transcript(&self, id: &str) -> bool {
        let Ok(projects) = std::fs::read_dir(self.projects()) else {
            return false;
        };
        let file = format!("{id}{TRANSCRIPT_SUFFIX}");
        projects
            .flatten()
            .any(|project| project.path().join(&file).is_file())
    }

    /// `sessions/`: a record and a key file for each live session of the person's.
    pub fn sessions(&self) -> PathBuf {
        self.dir.join("sessions")
    }

    /// The pid a session record's file name gives: `<pid>.json`.
    pub fn record_pid(file: &OsStr) -> Option<i32> {
        let pid = file.to_str()?.strip_suffix(".json")?;
        digits(pid)
    }

    /// The pid of the session whose key file `file` is, when it is the key of the socket whose
    /// path hashes to `digest` (SHA-256, lower-case hex): `<pid>.<digest>.key`.
    pub fn key_pid(file: &OsStr, digest: &str) -> Option<i32> {
        let pid = file
            .to_str()?
            .strip_suffix(".key")?
            .strip_suffix(digest)?
            .strip_suffix('.')?;
        digits(pid)
    }
}

/// Codex CLI's own folder: `$CODEX_HOME`, else `~/.codex`. swarm only reads there: whether a
/// session (a thread) wrote its rollout, `sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`
/// (Codex 0.169.0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodexPaths {
    dir: PathBuf,
}

impl CodexPaths {
    /// From `$CODEX_HOME` and `$HOME` (unset or empty: none); `None` with neither.
    pub fn new(codex_home: Option<&OsStr>, home: Option<&OsStr>) -> Option<Self> {
        let dir = match codex_home.filter(|dir| !dir.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => PathBuf::from(home.filter(|home| !home.is_empty())?).join(".codex"),
        };
        Some(Self { dir })
    }

    /// Whether session `id` wrote a rollout: only then can `codex resume <id>` find it, and only
    /// a session of the person's conversation does (Codex's title thread writes none).
    pub fn has_rollout(&self, id: &str) -> bool {
        self.rollout(id).is_some()
    }

    /// The rollout of session `id`, `sessions/*/*/*/rollout-*-<id>.jsonl`: a resumed session
    /// appends to the file of the day it began.
    pub fn rollout(&self, id: &str) -> Option<PathBuf> {
        let suffix = format!("-{id}.jsonl");
        let days = |dir: PathBuf| {
            std::fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .map(|entry| entry.path())
        };
        days(self.dir.join("sessions"))
            .flat_map(days)
            .flat_map(days)
            .flat_map(|day| days(day).collect::<Vec<_>>())
            .find(|file| {
                file.file_name()
                    .and_then(OsStr::to_str)
                    .is_some_and(|name| name.starts_with("rollout-") && name.ends_with(&suffix))
            })
    }
}

/// Gemini CLI's own folder: `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`. swarm only reads
/// there: the session files of a project, `tmp/<project>/chats/session-<time>-<first 8 of the
/// id>.jsonl` (Gemini CLI 0.61.0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeminiPaths {
    dir: PathBuf,
}

impl GeminiPaths {
    /// From `$GEMINI_CLI_HOME` and `$HOME` (unset or empty: none); `None` with neither.
    pub fn new(gemini_home: Option<&OsStr>, home: Option<&OsStr>) -> Option<Self> {
        let home = gemini_home
            .filter(|dir| !dir.is_empty())
            .or_else(|| home.filter(|home| !home.is_empty()))?;
        Some(Self {
            dir: PathBuf::from(home).join(".gemini"),
        })
    }

    /// The folder itself.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `settings.json`: the user's settings, read whoever owns them (a system settings file is
    /// read only when root owns it and every folder above it).
    pub fn settings(&self) -> PathBuf {
        self.dir.join(GEMINI_SETTINGS_FILE)
    }

    /// `tmp/`: a folder for each project (working directory).
    pub fn projects(&self) -> PathBuf {
        self.dir.join("tmp")
    }

    /// Each project's `tmp/<project>/chats/` that exists: its sessions' files.
    pub fn chats_folders(&self) -> Vec<PathBuf> {
        let Ok(projects) = std::fs::read_dir(self.projects()) else {
            return Vec::new();
        };
        projects
            .flatten()
            .map(|project| project.path().join("chats"))
            .filter(|chats| chats.is_dir())
            .collect()
    }

    /// The files that may hold session `id`: Gemini CLI names a session's file by the first 8
    /// characters of its id only, so each must be read to know whose it is.
    pub fn session_files(&self, id: &str) -> Vec<PathBuf> {
        let Some(short) = id.get(..8) else {
            return Vec::new();
        };
        self.chats_folders()
            .into_iter()
            .filter_map(|chats| std::fs::read_dir(chats).ok())
            .flatten()
            .flatten()
            .map(|entry| entry.path())
            .filter(|file| {
                file.file_name()
                    .and_then(OsStr::to_str)
                    .is_some_and(|name| {
                        name.starts_with("session-")
                            && (name.ends_with(&format!("-{short}.jsonl"))
                                || name.ends_with(&format!("-{short}.json")))
                    })
            })
            .collect()
    }

    /// Whether session `id` holds a conversation `gemini --resume <id>` can take up: a file of
    /// its (its first line names it) with a message of the person's or the model's. A session
    /// killed before its first prompt holds only Gemini CLI's `<session_context>`, and its
    /// resume fails ("Invalid session identifier").
    pub fn has_conversation(&self, id: &str) -> bool {
        self.session_files(id).iter().any(|file| {
            let Ok(text) = std::fs::read_to_string(file) else {
                return false;
            };
            let mut records = text
                .lines()
                .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok());
            let ours = records
                .next()
                .is_some_and(|meta| meta["sessionId"].as_str() == Some(id));
            ours && records.any(|record| match record["type"].as_str() {
                Some("gemini") => true,
                Some("user") => !record["content"][0]["text"]
                    .as_str()
                    .is_some_and(|text| text.starts_with("<session_context>")),
                _ => false,
            })
        })
    }
}

const TRANSCRIPT_SUFFIX: &str = ".jsonl";

const GEMINI_SETTINGS_FILE: &str = "settings.json";

/// How long a project folder's name may be before Claude Code cuts it and adds a hash.
const CLAUDE_PROJECT_NAME_MAX: usize = 200;

/// Whether Claude Code takes `name` from `$CLAUDE_CODE_PROJECT_DIR_NAME`: `[A-Za-z0-9_-]{1,64}`,
/// not a DOS device name.
fn claude_takes_dir_name(name: &str) -> bool {
    let device = |name: &str| {
        let lower = name.to_ascii_lowercase();
        ["con", "prn", "aux", "nul"].contains(&lower.as_str())
            || ["com", "lpt"].iter().any(|prefix| {
                lower.len() == 4
                    && lower.starts_with(prefix)
                    && lower.as_bytes()[3].is_ascii_digit()
            })
    };
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        && !device(name)
}

/// The project folder name Claude Code derives from `cwd` (see [`ClaudePaths::transcript`]).
fn claude_project_name(cwd: &str) -> String {
    let units: Vec<u16> = cwd.encode_utf16().collect();
    let sanitized: String = units
        .iter()
        .map(|unit| match u8::try_from(*unit) {
            Ok(b) if b.is_ascii_alphanumeric() => char::from(b),
            _ => '-',
        })
        .collect();
    if sanitized.len() <= CLAUDE_PROJECT_NAME_MAX {
        return sanitized;
    }
    let hash = units.iter().fold(0i32, |hash, unit| {
        hash.wrapping_mul(31).wrapping_add(i32::from(*unit))
    });
    let mut magnitude = i64::from(hash).unsigned_abs();
    let mut base36 = Vec::new();
    loop {
        base36.push(b"0123456789abcdefghijklmnopqrstuvwxyz"[(magnitude % 36) as usize]);
        magnitude /= 36;
        if magnitude == 0 {
            break;
        }
    }
    base36.reverse();
    format!(
        "{}-{}",
        &sanitized[..CLAUDE_PROJECT_NAME_MAX],
        String::from_utf8_lossy(&base36)
    )
}

/// A pid written in decimal digits only, as Claude Code names its files.
fn digits(text: &str) -> Option<i32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// swarm's files in a git repository whose members work in worktrees of their own
/// (docs/ARCHITECTURE.md, "On disk").
#[derive(Debug, Clone)]
pub struct RepoPaths {
    /// The top of the main worktree.
    top: PathBuf,
    /// The git directory the repository's worktrees share.
    common: PathBuf,
}

impl RepoPaths {
    pub fn new(top: PathBuf, common: PathBuf) -> Self {
        Self { top, common }
    }

    /// `.swarm/worktrees/<team>/<member>`: one directory per team, so no team and member names
    /// can make the same path (`a-b` + `c` and `a` + `b-c` did, joined with a dash).
    pub fn worktree(&self, team: &str, member: &str) -> PathBuf {
        self.team_worktrees(team).join(path_component(member))
    }

    /// `.swarm/worktrees/<team>`: the worktrees of one team's members.
    pub fn team_worktrees(&self, team: &str) -> PathBuf {
        self.top
            .join(".swarm")
            .join("worktrees")
            .join(path_component(team))
    }

    /// `<git common dir>/info/exclude`, where `.swarm/` is kept out of `git status`.
    pub fn exclude(&self) -> PathBuf {
        self.common.join("info").join("exclude")
    }

    /// The line in `info/exclude` that keeps `.swarm/` out of `git status`.
    pub const EXCLUDED: &str = "/.swarm/";

    /// `<git common dir>/swarm-worktrees.lock`: swarm's git commands on the repository take turns.
    pub fn git_lock(&self) -> PathBuf {
        self.common.join("swarm-worktrees.lock")
    }
}

/// `logs/<name>.log` → `logs/<name>.log.1`: the output before a log's newest, once it was rotated.
pub fn rotated_log(log: &Path) -> PathBuf {
    let mut name = log.file_name().unwrap_or_default().to_owned();
    name.push(".1");
    log.with_file_name(name)
}

/// Makes a relative path absolute against the current directory, without resolving symlinks.
pub fn absolute(path: &Path) -> Result<PathBuf> {
    std::path::absolute(path).map_err(|err| Error::io("resolve", path, err))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claude_transcript_is_where_claude_code_puts_it() {
        let home = ClaudePaths::new(None, Some(OsStr::new("/home/u"))).unwrap();
        let id = "cccccccc-cccc-4ccc-8ccc-cccccccccccc";
        assert_eq!(
            home.transcript(Path::new("/tmp/research-26/A"), None, id),
            Path::new(
                "/home/u/.claude/projects/-tmp-research-26-A/cccccccc-cccc-4ccc-8ccc-cccccccccccc.jsonl"
            )
        );
        // Every UTF-16 unit outside a-zA-Z0-9 is a '-': one for é, two for an emoji.
        assert_eq!(claude_project_name("/tmp/a b/é😀x"), "-tmp-a-b----x");
        // Over 200: cut, and the base-36 of the Java string hash of the whole path (the figures
        // computed apart, by a reimplementation checked against Claude Code 2.1.332).
        let long = format!("/tmp/research-26/{}", "d".repeat(233));
        let name = claude_project_name(&long);
        assert_eq!(name.len(), 200 + 1 + 6);
        assert!(name.ends_with("ddd-g62s58"), "{name}");
        // The name chosen by the environment counts only with a config folder given.
        let name = Some(OsStr::new("my_proj-1"));
        assert_eq!(
            home.transcript(Path::new("/w"), name, id).parent().unwrap(),
            Path::new("/home/u/.claude/projects/-w")
        );
        let own = ClaudePaths::new(Some(OsStr::new("/cfg")), None).unwrap();
        assert_eq!(
            own.transcript(Path::new("/w"), name, id).parent().unwrap(),
            Path::new("/cfg/projects/my_proj-1")
        );
        for refused in ["nul", "COM1", "a b", ""] {
            assert_eq!(
                own.transcript(Path::new("/w"), Some(OsStr::new(refused)), id)
                    .parent()
                    .unwrap(),
                Path::new("/cfg/projects/-w"),
                "{refused}"
            );
        }
    }

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
        assert_eq!(
            bob.lock.atm.as_deref(),
            Some(Path::new("/h/teams/t/inboxes/bob.lock"))
        );
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
        assert_eq!(
            team.config_lock().atm.as_deref(),
            Some(Path::new("/h/teams/t/config.lock"))
        );
        let home = Home::new(PathBuf::from("/h"));
        assert_eq!(
            home.archive("t", "20260101T000000Z", 1, ArchiveFormat::TarZst),
            Path::new("/h/archive/t-20260101T000000Z.tar.zst")
        );
        assert_eq!(
            home.archive("t", "20260101T000000Z", 2, ArchiveFormat::Folder),
            Path::new("/h/archive/t-20260101T000000Z-2")
        );
        let removing = team.aside(Leaving::Removed);
        assert_eq!(
            removing,
            Path::new(&format!("/h/teams/.t.removing-{}", std::process::id()))
        );
        let read = |path: &Path| Aside::of(path.file_name().unwrap());
        let pid = i32::try_from(std::process::id()).unwrap();
        assert_eq!(
            read(&removing),
            Some(Aside {
                team: "t".into(),
                pid,
                leaving: Leaving::Removed
            })
        );
        assert_eq!(
            read(&team.aside(Leaving::Archived)).map(|aside| aside.leaving),
            Some(Leaving::Archived)
        );
        for no in [
            ".t",
            "t.removing-5",
            ".t.removing-",
            ".t.removing-x",
            "..removing-5",
        ] {
            assert_eq!(read(Path::new(no)), None, "{no}");
        }
        assert_eq!(TeamPaths::task_list_in(&removing), removing.join("tasks"));
        assert_eq!(
            bob.aside(SetAsideKind::Corrupt, 7, 0),
            Path::new("/h/teams/t/inboxes/bob.json.corrupt-7")
        );
        assert_eq!(
            bob.aside(SetAsideKind::Invalid, 7, 2),
            Path::new("/h/teams/t/inboxes/bob.json.invalid-7.2")
        );
        assert_eq!(
            bob.spool_file(5, 42, "ab"),
            SpoolFile {
                staging: PathBuf::from(
                    "/h/teams/t/inboxes/.spool/bob/.000000000000000000000005-42-ab.json"
                ),
                path: PathBuf::from(
                    "/h/teams/t/inboxes/.spool/bob/000000000000000000000005-42-ab.json"
                ),
            }
        );
        assert_eq!(
            LockPaths::staging(&bob.lock.dir, 42),
            Path::new("/h/teams/t/inboxes/.bob.json.lock.swarm-42")
        );
        let prefix = temp_prefix(&bob.inbox);
        assert_eq!(prefix, format!(".bob.json.{}.", std::process::id()));
        let name = |name: &str| TempName::of(OsStr::new(name)).map(|temp| temp.writer);
        let me = i32::try_from(std::process::id()).unwrap();
        assert_eq!(name(&format!("{prefix}aB3xYz.tmp")), Some(Some(me)));
        assert_eq!(name(".bob.json.aB3xYz.tmp"), Some(None));
        assert_eq!(name("..highwatermark.aB3xYz.tmp"), Some(None));
        assert_eq!(name(".7.json.42.aB3xYz.tmp"), Some(Some(42)));
        for no in [
            "bob.json",
            ".bob.json.tmp",
            ".bob.json..tmp",
            "bob.json.x.tmp",
            ".x.a-b.tmp",
        ] {
            assert_eq!(name(no), None, "{no}");
        }
    }

    #[test]
    fn task_list_names_follow_claude_code() {
        let list = Home::new(PathBuf::from("/h")).task_list("my team.x");
        assert_eq!(list.dir, Path::new("/h/tasks/my-team-x"));
        assert_eq!(list.task(3), Path::new("/h/tasks/my-team-x/3.json"));
        assert_eq!(
            list.task_lock(3).dir,
            Path::new("/h/tasks/my-team-x/3.json.lock")
        );
        assert_eq!(
            list.task_lock(3).flock,
            Path::new("/h/tasks/my-team-x/.3.flock")
        );
        assert_eq!(list.task_lock(3).atm, None);
        assert_eq!(list.list_lock_file(), Path::new("/h/tasks/my-team-x/.lock"));
        assert_eq!(
            list.list_lock().dir,
            Path::new("/h/tasks/my-team-x/.lock.lock")
        );
        assert_eq!(
            list.high_water_mark(),
            Path::new("/h/tasks/my-team-x/.highwatermark")
        );
        assert_eq!(
            list.aside(3, 7, 1),
            Path::new("/h/tasks/my-team-x/3.json.corrupt-7.1")
        );
        assert_eq!(TaskListPaths::task_id(OsStr::new("12.json")), Some(12));
        assert_eq!(
            TaskListPaths::task_id(OsStr::new("9007199254740991.json")),
            Some(MAX_ID)
        );
        for no in [
            "9007199254740992.json",
            "18446744073709551615.json",
            "18446744073709551616.json",
            "012.json",
            "1.json.lock",
            ".1.json.x.tmp",
            "a.json",
            "-1.json",
            ".json",
        ] {
            assert_eq!(TaskListPaths::task_id(OsStr::new(no)), None, "{no}");
        }
    }

    #[test]
    fn a_team_folder_another_tool_named_is_that_folder() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path().to_path_buf());
        assert_eq!(home.team("a.b").dir(), home.teams_dir().join("a-b"));
        std::fs::create_dir_all(home.teams_dir().join("a.b")).unwrap();
        assert_eq!(home.team("a.b").dir(), home.teams_dir().join("a.b"));
        assert_eq!(home.team("a-b").dir(), home.teams_dir().join("a-b"));
        std::fs::create_dir_all(home.teams_dir().join(".x.removing-1")).unwrap();
        assert_eq!(
            home.team(".x.removing-1").dir(),
            home.teams_dir().join("-x-removing-1")
        );
        assert_eq!(home.team("../a.b").dir(), home.teams_dir().join("---a-b"));
    }

    #[test]
    fn spool_names_are_read_back() {
        let bob = Home::new(PathBuf::from("/h")).team("t").mailbox("bob");
        let file = bob.spool_file(5, 42, "ab");
        let name = |path: &Path| path.file_name().unwrap().to_owned();
        assert_eq!(SpoolEntry::of(&name(&file.path)), SpoolEntry::Ready);
        assert_eq!(
            SpoolEntry::of(&name(&file.staging)),
            SpoolEntry::Staging { writer: Some(42) }
        );
        assert_eq!(
            SpoolEntry::of(OsStr::new(".odd")),
            SpoolEntry::Staging { writer: None }
        );
    }

    #[test]
    fn peer_sockets_live_in_the_runtime_directory() {
        let xdg = RuntimePaths::new(Some(OsStr::new("/run/user/7")), 7);
        assert_eq!(xdg.dir(), Path::new("/run/user/7/swarm"));
        assert_eq!(xdg.socket(99), Path::new("/run/user/7/swarm/99.sock"));
        for unset in [None, Some(OsStr::new(""))] {
            assert_eq!(RuntimePaths::new(unset, 7).dir(), Path::new("/tmp/swarm-7"));
        }
    }

    #[test]
    fn claude_codes_folder_and_its_session_files() {
        let set = ClaudePaths::new(Some(OsStr::new("/c")), Some(OsStr::new("/h"))).unwrap();
        assert_eq!(set.sessions(), Path::new("/c/sessions"));
        for unset in [None, Some(OsStr::new(""))] {
            let home = ClaudePaths::new(unset, Some(OsStr::new("/h"))).unwrap();
            assert_eq!(home.sessions(), Path::new("/h/.claude/sessions"));
        }
        assert_eq!(ClaudePaths::new(None, None), None);
        assert_eq!(ClaudePaths::record_pid(OsStr::new("4242.json")), Some(4242));
        for not in ["x.json", ".json", "42.json.tmp", "-1.json", "42.key"] {
            assert_eq!(ClaudePaths::record_pid(OsStr::new(not)), None, "{not}");
        }
        let digest = "ab".repeat(32);
        let key = format!("4242.{digest}.key");
        assert_eq!(ClaudePaths::key_pid(OsStr::new(&key), &digest), Some(4242));
        let other = format!("4242.{}.key", "cd".repeat(32));
        assert_eq!(ClaudePaths::key_pid(OsStr::new(&other), &digest), None);
        let temp = format!("{key}.tmp.1f");
        assert_eq!(ClaudePaths::key_pid(OsStr::new(&temp), &digest), None);
    }

    #[test]
    fn worktrees_of_different_teams_never_share_a_path() {
        let repo = RepoPaths::new(PathBuf::from("/r"), PathBuf::from("/r/.git"));
        assert_eq!(
            repo.worktree("a-b", "c"),
            Path::new("/r/.swarm/worktrees/a-b/c")
        );
        assert_ne!(repo.worktree("a-b", "c"), repo.worktree("a", "b-c"));
        assert_eq!(repo.exclude(), Path::new("/r/.git/info/exclude"));
        assert_eq!(repo.git_lock(), Path::new("/r/.git/swarm-worktrees.lock"));
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
