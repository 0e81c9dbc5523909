//! A team's task list in Claude Code's layout (docs/ARCHITECTURE.md, "Task list"): one file per
//! task, the list lock for what reads or creates across tasks, a per-task lock for each change.
//!
//! Every change goes through [`TaskList::edit`]: the list lock when asked (always to create a
//! task), then the lock of each task it changes, in ascending id order; each lock is swarm's flock
//! then Claude Code's proper-lockfile directory (`store/lock.rs`, the same as an inbox's). Tasks
//! are re-read under their locks, changed, and replaced atomically and durably; a new task is
//! created exclusively. A file that is no task is moved aside (`<id>.json.corrupt-<ms>`) and
//! reported, never dropped. What is no file at all under a task's name (a FIFO, a folder, a link)
//! is not swarm's: it is skipped with a warning, left where it is, and its id counts as issued.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::base::clock;
use crate::error::{Error, Result};
use crate::format::task::{MAX_ID, Status, Task, parse_mark};
use crate::store::durable::{self, atomic_write, create_exclusive, private_dir};
use crate::store::lock::FileLock;
use crate::store::paths::{Home, TaskListPaths, parse_task_id};

/// Why a claim is refused, in Claude Code's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    NotFound,
    AlreadyClaimed { owner: String },
    AlreadyResolved,
    Blocked { by: Vec<u64> },
    Busy { owns: Vec<u64> },
}

impl Refusal {
    pub fn word(&self) -> &'static str {
        match self {
            Self::NotFound => "task_not_found",
            Self::AlreadyClaimed { .. } => "already_claimed",
            Self::AlreadyResolved => "already_resolved",
            Self::Blocked { .. } => "blocked",
            Self::Busy { .. } => "busy",
        }
    }

    /// The refusal as an error: exit status 3 for a task that does not exist, else 2, with the
    /// word as its reason.
    pub fn error(&self, id: u64) -> Error {
        let word = self.word();
        let list = |ids: &[u64]| {
            ids.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let error = match self {
            Self::NotFound => Error::not_found(format!("{word}: there is no task {id}"))
                .with_hint("`swarm task list` shows the tasks"),
            Self::AlreadyClaimed { owner } => {
                Error::usage(format!("{word}: task {id} is owned by {owner}"))
            }
            Self::AlreadyResolved => Error::usage(format!("{word}: task {id} is completed")),
            Self::Blocked { by } => Error::usage(format!(
                "{word}: task {id} waits for task {} to be completed",
                list(by)
            )),
            Self::Busy { owns } => Error::usage(format!(
                "{word}: you already own open task {}; finish or release it first",
                list(owns)
            )),
        };
        error.with_reason(word)
    }
}

/// Every task of a list as read without its locks, the files that were no task, and what sits
/// under a task's name without being a file.
#[derive(Debug, Clone, Default)]
pub struct Board {
    pub tasks: BTreeMap<u64, Task>,
    pub unreadable: BTreeSet<u64>,
    junk: BTreeSet<u64>,
    high_water_mark: u64,
}

impl Board {
    /// A board of `tasks` whose ids up to `high_water_mark` have been issued.
    pub fn new(tasks: BTreeMap<u64, Task>, high_water_mark: u64) -> Self {
        Self {
            tasks,
            unreadable: BTreeSet::new(),
            junk: BTreeSet::new(),
            high_water_mark: high_water_mark.min(MAX_ID),
        }
    }

    /// The highest id ever issued on this board: its mark, or the highest id present.
    pub(crate) fn high_water_mark(&self) -> u64 {
        self.tasks
            .keys()
            .chain(&self.unreadable)
            .chain(&self.junk)
            .max()
            .copied()
            .unwrap_or(0)
            .max(self.high_water_mark)
    }

    /// The open tasks (not completed) among `task`'s blockers that exist.
    pub fn open_blockers(&self, task: &Task) -> Vec<u64> {
        task.blocked_by()
            .into_iter()
            .filter(|id| self.tasks.get(id).is_some_and(Task::is_open))
            .collect()
    }

    /// Whether anyone may claim `task` now: pending, no owner, no open blocker, not internal.
    pub fn available(&self, task: &Task) -> bool {
        task.status() == Status::Pending
            && task.owner().is_none()
            && !task.is_internal()
            && self.open_blockers(task).is_empty()
    }

    /// Whether `claimer` may take `task`, and if not, why (Claude Code's rules).
    pub(crate) fn claim_refusal(&self, task: &Task, claimer: &str) -> Option<Refusal> {
        if let Some(owner) = task.owner().filter(|owner| *owner != claimer) {
            return Some(Refusal::AlreadyClaimed {
                owner: owner.to_owned(),
            });
        }
        if task.status() == Status::Completed {
            return Some(Refusal::AlreadyResolved);
        }
        let by = self.open_blockers(task);
        (!by.is_empty()).then_some(Refusal::Blocked { by })
    }

    /// The open tasks with an owner that wait for `done` and for nothing else still open: those
    /// `done`'s completion unblocked.
    pub fn unblocked_by(&self, done: u64) -> Vec<&Task> {
        self.tasks
            .values()
            .filter(|t| t.is_open() && t.owner().is_some() && t.blocked_by().contains(&done))
            .filter(|t| self.open_blockers(t).is_empty())
            .collect()
    }

    /// Puts what file `id` holds where it belongs on the board (nothing for no file).
    fn place(&mut self, id: u64, found: Option<Found>) {
        match found {
            Some(Found::Task(task)) => {
                self.tasks.insert(id, task);
            }
            Some(Found::NoTask) => {
                self.unreadable.insert(id);
            }
            Some(Found::Junk) => {
                self.junk.insert(id);
            }
            None => {}
        }
    }

    /// The open tasks `owner` holds, other than `except`.
    pub(crate) fn owned_open(&self, owner: &str, except: u64) -> Vec<u64> {
        self.tasks
            .values()
            .filter(|t| t.id() != except && t.is_open() && t.owner() == Some(owner))
            .map(Task::id)
            .collect()
    }
}

/// One team's task list.
#[derive(Debug, Clone)]
pub struct TaskList {
    paths: TaskListPaths,
    team: String,
}

/// A task file that was moved aside.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SetAside {
    pub id: u64,
    pub path: PathBuf,
}

/// What an edit reads of the board besides the tasks it locks (which it reads under their locks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// Every task: a change that looks across the board (links, creating, an exclusive claim).
    Board,
    /// The tasks the locked ones wait for, and nothing else: a claim.
    Blockers,
}

/// What one `<id>.json` of the list's folder holds.
enum Found {
    Task(Task),
    /// A regular file that is no task: it is moved aside.
    NoTask,
    /// Something that is no regular file (a FIFO, a folder, a link, a device): not swarm's, so
    /// it is skipped and left where it is.
    Junk,
}

impl TaskList {
    pub fn new(home: &Home, team: &str) -> Self {
        Self {
            paths: home.task_list(team),
            team: team.to_owned(),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.paths.dir
    }

    /// Whether a file name the watcher reports in the list's folder is a task file.
    pub fn is_task_file(file: &std::ffi::OsStr) -> bool {
        TaskListPaths::task_id(file).is_some()
    }

    /// The list, or "not found" (exit 3) when the team has none yet.
    pub fn require(&self) -> Result<()> {
        if self.paths.dir.is_dir() {
            return Ok(());
        }
        Err(Error::not_found(format!(
            "team {} has no task list yet ({} is missing)",
            self.team,
            self.paths.dir.display()
        ))
        .with_hint("add the first task with `swarm task add SUBJECT`"))
    }

    /// The list's folder if there is one, checked to be a real folder, as is `tasks/` (a link
    /// there is refused, never followed): for moving the whole list with its team.
    pub(crate) fn real_dir(&self, verb: &str) -> Result<Option<PathBuf>> {
        match fs::symlink_metadata(&self.paths.dir) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(Error::io("inspect", &self.paths.dir, err)),
            Ok(_) => {
                durable::real_dirs(&self.paths.root, &self.paths.dir, verb)?;
                Ok(Some(self.paths.dir.clone()))
            }
        }
    }

    /// Makes the list's folder and its `.lock` file when missing.
    pub fn ensure(&self) -> Result<()> {
        private_dir(&self.paths.root, &self.paths.dir)?;
        create_exclusive(&self.paths.list_lock_file(), b"")?;
        Ok(())
    }

    /// Every task, read without locks: each file is replaced atomically, so each is whole.
    pub fn read(&self) -> Result<Board> {
        self.require()?;
        let mut board = Board {
            high_water_mark: self.high_water_mark()?,
            ..Board::default()
        };
        for id in self.ids()? {
            board.place(id, self.read_task(id)?);
        }
        Ok(board)
    }

    /// The first task after id `after` that anyone may claim now, reading files one at a time in
    /// id order (and the blockers of a candidate), not the whole board: a claim without an id
    /// costs about the same on a board of ten tasks or of thousands.
    pub fn next_available(&self, after: u64) -> Result<Option<u64>> {
        self.require()?;
        let mut ids = self.ids()?;
        ids.retain(|id| *id > after);
        ids.sort_unstable();
        let mut seen = Board::default();
        for id in ids {
            let Some(Found::Task(task)) = self.read_task(id)? else {
                continue;
            };
            if task.status() != Status::Pending || task.owner().is_some() || task.is_internal() {
                continue;
            }
            for blocker in task.blocked_by() {
                if !seen.tasks.contains_key(&blocker)
                    && let Some(Found::Task(found)) = self.read_task(blocker)?
                {
                    seen.tasks.insert(blocker, found);
                }
            }
            if seen.available(&task) {
                return Ok(Some(id));
            }
        }
        Ok(None)
    }

    /// The id of every entry of the list's folder named like a task file (`<id>.json`).
    fn ids(&self) -> Result<Vec<u64>> {
        let entries =
            fs::read_dir(&self.paths.dir).map_err(|err| Error::io("read", &self.paths.dir, err))?;
        let mut ids = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|err| Error::io("read", &self.paths.dir, err))?;
            ids.extend(TaskListPaths::task_id(&entry.file_name()));
        }
        Ok(ids)
    }

    /// One task file: `None` when missing. What is no regular file is never opened: a FIFO would
    /// block a reader, and a link is never followed ("Private files").
    fn read_task(&self, id: u64) -> Result<Option<Found>> {
        let path = self.paths.task(id);
        let meta = match fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(Error::io("inspect", &path, err)),
        };
        if !meta.is_file() {
            durable::warn_passed_over(
                &path,
                format_args!(
                    "{}, not a task file; swarm leaves it alone",
                    durable::kind_of(&meta)
                ),
            );
            return Ok(Some(Found::Junk));
        }
        Ok(
            durable::read_if_exists(&path)?.map(|bytes| match Task::parse(&bytes, id) {
                Some(task) => Found::Task(task),
                None => Found::NoTask,
            }),
        )
    }

    fn high_water_mark(&self) -> Result<u64> {
        let path = self.paths.high_water_mark();
        let Some(bytes) = durable::read_if_exists(&path)? else {
            return Ok(0);
        };
        let text = String::from_utf8_lossy(&bytes);
        Ok(parse_mark(&text).unwrap_or_else(|| {
            tracing::warn!(
                "{} holds no task id up to {MAX_ID}; counting from the tasks present",
                path.display()
            );
            0
        }))
    }

    /// Moves every task file that is no task aside, under the list lock and its own, and keeps
    /// its id from being issued again. What was moved is returned (and logged).
    pub fn repair(&self) -> Result<Vec<SetAside>> {
        if self.read()?.unreadable.is_empty() {
            return Ok(Vec::new());
        }
        let _list = FileLock::acquire(&self.paths.list_lock())?;
        let board = self.read()?;
        let mut moved = Vec::new();
        for &id in &board.unreadable {
            let _task = FileLock::acquire(&self.paths.task_lock(id))?;
            if let Some(Found::NoTask) = self.read_task(id)? {
                moved.push(self.set_aside(id)?);
            }
        }
        if let Some(max) = moved.iter().map(|m| m.id).max()
            && max > board.high_water_mark
        {
            self.write_high_water_mark(max)?;
        }
        Ok(moved)
    }

    fn set_aside(&self, id: u64) -> Result<SetAside> {
        let ms = clock::now_ms();
        let mut attempt = 0;
        let aside = loop {
            let candidate = self.paths.aside(id, ms, attempt);
            if !candidate.exists() {
                break candidate;
            }
            attempt += 1;
        };
        let path = self.paths.task(id);
        fs::rename(&path, &aside)
            .map_err(|err| Error::io("move aside corrupt task file", &path, err))?;
        durable::sync_dir(&self.paths.dir)?;
        tracing::error!(task = %path.display(), moved_to = %aside.display(), "task file was no task; moved it aside");
        Ok(SetAside { id, path: aside })
    }

    fn write_high_water_mark(&self, id: u64) -> Result<()> {
        atomic_write(&self.paths.high_water_mark(), |out| {
            out.write_all(id.to_string().as_bytes())
        })
    }

    /// The one read-modify-write of a list: the list lock when `whole_list` (required to create
    /// tasks), then the locks of `ids` in ascending order; those tasks re-read under their locks.
    /// `change` sees the whole board and may change the locked tasks and create new ones; what
    /// changed is written when it returns `Ok`, nothing when it fails.
    pub fn edit<R>(
        &self,
        ids: &[u64],
        whole_list: bool,
        change: impl FnOnce(&mut Edit) -> Result<R>,
    ) -> Result<R> {
        self.edit_reading(ids, whole_list, Reading::Board, change)
    }

    /// Claims task `id` for `claimer` ([`Edit::claim`]) under its lock. Claude Code's rules look
    /// at the task and the tasks it waits for, so a claim reads only those, and costs the same on
    /// a board of ten tasks or of thousands; an exclusive claim, which must see every task the
    /// claimer holds, reads the whole board under the list lock.
    pub fn claim(&self, id: u64, claimer: &str, exclusive: bool) -> Result<Task> {
        let reading = if exclusive {
            Reading::Board
        } else {
            Reading::Blockers
        };
        self.edit_reading(&[id], exclusive, reading, |edit| {
            edit.claim(id, claimer, exclusive)
        })
    }

    /// [`TaskList::edit`], reading of the board what `reading` says besides the locked tasks.
    fn edit_reading<R>(
        &self,
        ids: &[u64],
        whole_list: bool,
        reading: Reading,
        change: impl FnOnce(&mut Edit) -> Result<R>,
    ) -> Result<R> {
        self.require()?;
        let _list = whole_list
            .then(|| FileLock::acquire(&self.paths.list_lock()))
            .transpose()?;
        // A task that does not exist needs no lock (only a creator under the list lock makes
        // one) and leaves no lock file behind: it is simply not found.
        let (ids, missing): (BTreeSet<u64>, BTreeSet<u64>) = ids
            .iter()
            .copied()
            .partition(|id| fs::symlink_metadata(self.paths.task(*id)).is_ok());
        let mut locks = Vec::with_capacity(ids.len());
        for &id in &ids {
            locks.push(FileLock::acquire(&self.paths.task_lock(id))?);
        }
        let mut board = match reading {
            Reading::Board => self.read()?,
            Reading::Blockers => Board::default(),
        };
        for id in &missing {
            board.tasks.remove(id);
        }
        for &id in &ids {
            board.tasks.remove(&id);
            match self.read_task(id)? {
                Some(Found::Task(task)) => {
                    board.tasks.insert(id, task);
                }
                Some(Found::NoTask) => {
                    let aside = self.set_aside(id)?;
                    return Err(Error::runtime(format!(
                        "task file {id}.json was no task; moved it aside to {}",
                        aside.path.display()
                    ))
                    .with_hint("read it, then add the task again with `swarm task add`"));
                }
                Some(Found::Junk) => {
                    let path = self.paths.task(id);
                    return Err(Error::runtime(format!(
                        "task {id} cannot be changed: {} is not a regular file",
                        path.display()
                    ))
                    .with_hint(
                        "it is not swarm's, so swarm leaves it alone; move it out of the way and add the task again with `swarm task add`",
                    ));
                }
                None => {}
            }
        }
        if reading == Reading::Blockers {
            let blockers: BTreeSet<u64> = ids
                .iter()
                .filter_map(|id| board.tasks.get(id))
                .flat_map(Task::blocked_by)
                .filter(|blocker| !ids.contains(blocker))
                .collect();
            for blocker in blockers {
                board.place(blocker, self.read_task(blocker)?);
            }
        }
        let mut edit = Edit::new(board, ids, whole_list);
        let result = change(&mut edit)?;
        let high_water_mark = edit.board.high_water_mark;
        let changes = edit.finish();
        for task in &changes.created {
            if !create_exclusive(&self.paths.task(task.id()), &task.to_bytes())? {
                return Err(Error::runtime(format!(
                    "task {} appeared while swarm held the list lock; nothing was created",
                    task.id()
                )));
            }
        }
        // A removed task's id is never issued again either: the mark covers it, and never goes
        // back.
        if let Some(last) = changes
            .created
            .iter()
            .map(Task::id)
            .chain(changes.removed.iter().copied())
            .max()
            && last > high_water_mark
        {
            self.write_high_water_mark(last)?;
        }
        for task in &changes.changed {
            atomic_write(&self.paths.task(task.id()), |out| {
                out.write_all(&task.to_bytes())
            })?;
        }
        for &id in &changes.removed {
            let path = self.paths.task(id);
            fs::remove_file(&path).map_err(|err| Error::io("remove", &path, err))?;
            durable::sync_dir(&self.paths.dir)?;
        }
        Ok(result)
    }
}

impl TaskList {
    /// Writes copies of tasks decided elsewhere (on the server, by another host) as they are,
    /// at their own ids, through [`TaskList::edit`] under the list lock and theirs: a task that
    /// differs is replaced, a missing one created. Returns the tasks that were written.
    pub fn adopt(&self, tasks: &[Task]) -> Result<Vec<Task>> {
        if tasks.is_empty() {
            return Ok(Vec::new());
        }
        self.ensure()?;
        let ids: Vec<u64> = tasks.iter().map(Task::id).collect();
        self.edit(&ids, true, |edit| {
            for task in tasks {
                if edit.task(task.id()) != Some(task) {
                    edit.put(task.clone());
                }
            }
            Ok(())
        })?;
        Ok(tasks.to_vec())
    }

    /// Removes this host's copies of tasks deleted elsewhere (on the server, by another host),
    /// under the list lock and theirs, raising the high-water mark over their ids first so no id
    /// is issued again. Returns the ids whose files were removed.
    pub fn discard(&self, ids: &[u64]) -> Result<Vec<u64>> {
        if ids.is_empty() || !self.paths.dir.is_dir() {
            return Ok(Vec::new());
        }
        self.edit(ids, true, |edit| {
            let present: Vec<u64> = ids
                .iter()
                .copied()
                .filter(|id| edit.task(*id).is_some())
                .collect();
            for &id in &present {
                edit.remove(id);
            }
            Ok(present)
        })
    }

    /// Raises the high-water mark to `id` when it is lower, under the list lock: a task file
    /// removed by hand leaves its id issued.
    pub fn raise_high_water_mark(&self, id: u64) -> Result<()> {
        self.require()?;
        let _list = FileLock::acquire(&self.paths.list_lock())?;
        if self.high_water_mark()? < id {
            self.write_high_water_mark(id)?;
        }
        Ok(())
    }

    /// Whether task `id`'s file was moved aside as no task (`<id>.json.corrupt-…`).
    pub fn was_set_aside(&self, id: u64) -> Result<bool> {
        let entries =
            fs::read_dir(&self.paths.dir).map_err(|err| Error::io("read", &self.paths.dir, err))?;
        for entry in entries {
            let entry = entry.map_err(|err| Error::io("read", &self.paths.dir, err))?;
            if TaskListPaths::is_aside_of(&entry.file_name(), id) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Moves task `old` to the id `task` carries (which another host issued too): `old`'s file is
    /// removed and `task` created, in one edit under the list lock.
    pub fn renumber(&self, old: u64, task: &Task) -> Result<()> {
        self.edit(&[old, task.id()], true, |edit| {
            if edit.task(old).is_some() {
                edit.remove(old);
            }
            edit.put(task.clone());
            Ok(())
        })
    }

    /// Returns every open task `owner` holds (internal ones aside: they are Claude Code's own
    /// bookkeeping) to pending with no owner, under those tasks' locks, re-checked there.
    /// `before_write` sees the tasks to release, still under their locks, before any is written:
    /// when it fails, or answers `false`, nothing is. A list that does not exist has nothing to
    /// release, and a second call finds nothing left.
    pub fn release_owned(
        &self,
        owner: &str,
        before_write: impl FnOnce(&[Task]) -> Result<bool>,
    ) -> Result<Vec<Task>> {
        if !self.paths.dir.is_dir() {
            return Ok(Vec::new());
        }
        let ids: Vec<u64> = self
            .read()?
            .tasks
            .values()
            .filter(|t| held_by(t, owner))
            .map(Task::id)
            .collect();
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.edit(&ids, false, |edit| {
            let released: Vec<Task> = ids
                .iter()
                .filter_map(|id| edit.task(*id))
                .filter(|task| held_by(task, owner))
                .map(|task| {
                    let mut task = task.clone();
                    task.set_owner(None);
                    task.set_status(Status::Pending);
                    task
                })
                .collect();
            if released.is_empty() || !before_write(&released)? {
                return Ok(Vec::new());
            }
            for task in &released {
                *edit.task_mut(task.id()).expect("read under its lock") = task.clone();
            }
            Ok(released)
        })
    }

    /// The owners of open tasks among `owners`, from a read without locks: who has tasks to
    /// release.
    pub fn holders<'a>(&self, owners: &[&'a str]) -> Result<Vec<&'a str>> {
        if !self.paths.dir.is_dir() {
            return Ok(Vec::new());
        }
        let board = self.read()?;
        Ok(owners
            .iter()
            .copied()
            .filter(|owner| board.tasks.values().any(|t| held_by(t, owner)))
            .collect())
    }
}

/// Whether `task` is one of `owner`'s to give back when it ends: open, its, not internal.
fn held_by(task: &Task, owner: &str) -> bool {
    task.is_open() && !task.is_internal() && task.owner() == Some(owner)
}

/// What [`TaskList::edit`] hands its change.
#[derive(Debug)]
pub struct Edit {
    board: Board,
    locked: BTreeSet<u64>,
    next_id: Option<u64>,
    created: Vec<u64>,
    originals: BTreeMap<u64, Task>,
}

/// What an [`Edit`] changed: the tasks it created and the existing tasks that differ now.
#[derive(Debug, Clone, Default)]
pub struct Changes {
    pub created: Vec<Task>,
    pub changed: Vec<Task>,
    pub(crate) removed: Vec<u64>,
}

impl Edit {
    /// An edit of `board` that may change the tasks `locked` holds (those that exist) and, with
    /// `whole_list`, create tasks from the next id: max(ids present, high-water mark) + 1. The
    /// local list hands it what it read under its locks; a replica elsewhere, what it read at
    /// known revisions.
    pub fn new(board: Board, locked: BTreeSet<u64>, whole_list: bool) -> Self {
        let next_id = whole_list.then(|| board.high_water_mark() + 1);
        let originals = locked
            .iter()
            .filter_map(|id| board.tasks.get(id).map(|t| (*id, t.clone())))
            .collect();
        Self {
            board,
            locked,
            next_id,
            created: Vec::new(),
            originals,
        }
    }

    /// What the change made: the created tasks in id order, and each locked task that differs
    /// from what was read.
    pub fn finish(mut self) -> Changes {
        let mut changes = Changes::default();
        self.created.sort_unstable();
        for id in &self.created {
            if let Some(task) = self.board.tasks.remove(id) {
                changes.created.push(task);
            }
        }
        for (id, before) in &self.originals {
            match self.board.tasks.remove(id) {
                Some(after) if after != *before => changes.changed.push(after),
                Some(_) => {}
                None => changes.removed.push(*id),
            }
        }
        changes
    }

    /// Takes a locked task off the list; its file is removed when the edit is written, and the
    /// high-water mark raised over its id.
    ///
    /// # Panics
    /// When the edit did not lock it, or does not hold the list lock.
    pub fn remove(&mut self, id: u64) {
        assert!(
            self.locked.contains(&id) && self.next_id.is_some(),
            "task {id} removed without its lock and the list's"
        );
        self.board.tasks.remove(&id);
    }

    /// Puts `task` on the board as it is, at its own id: replacing a locked task, or creating it
    /// when it does not exist (under the list lock). This is how a copy of a task made elsewhere
    /// is written.
    ///
    /// # Panics
    /// When the task exists and is not locked, or is new and the edit does not hold the list lock.
    pub fn put(&mut self, task: Task) {
        let id = task.id();
        if self.board.tasks.contains_key(&id) && !self.created.contains(&id) {
            *self.task_mut(id).expect("checked above") = task;
            return;
        }
        let next = self.next_id.expect("tasks are created under the list lock");
        self.next_id = Some(next.max(id + 1));
        if !self.created.contains(&id) {
            self.created.push(id);
        }
        self.locked.insert(id);
        self.board.tasks.insert(id, task);
    }

    /// Makes the next task created take id `first`: ids a replica already took for this change
    /// (`cluster/tasks.rs`) stay its own when the change is decided again.
    ///
    /// # Panics
    /// When the edit does not hold the list lock.
    pub fn issue_from(&mut self, first: u64) {
        assert!(self.next_id.is_some(), "ids are issued under the list lock");
        self.next_id = Some(first);
    }
    /// Every task on the board, as read under this edit's locks.
    pub fn tasks(&self) -> impl Iterator<Item = &Task> {
        self.board.tasks.values()
    }

    pub fn task(&self, id: u64) -> Option<&Task> {
        self.board.tasks.get(&id)
    }

    /// A task this edit holds the lock of; `None` when it does not exist (a task that does not
    /// exist has no lock to take, so asking for one is not a change without it).
    ///
    /// # Panics
    /// When the edit did not lock it: a change must name every task it writes.
    pub fn task_mut(&mut self, id: u64) -> Option<&mut Task> {
        if !self.board.tasks.contains_key(&id) {
            return None;
        }
        assert!(
            self.locked.contains(&id),
            "task {id} changed without its lock"
        );
        self.board.tasks.get_mut(&id)
    }

    /// Creates a task with the next id (under the list lock); `make` builds it from its id. No
    /// id is left once [`MAX_ID`] is issued.
    ///
    /// # Panics
    /// When the edit does not hold the list lock.
    pub fn create(&mut self, make: impl FnOnce(u64) -> Task) -> Result<u64> {
        let id = self.next_id.expect("tasks are created under the list lock");
        if id > MAX_ID {
            return Err(Error::runtime(format!(
                "no task id is left: task {MAX_ID}, the largest id Claude Code can read, is issued"
            ))
            .with_hint("a file that high was put there by hand; renumber or remove it"));
        }
        self.next_id = Some(id + 1);
        self.board.tasks.insert(id, make(id));
        self.locked.insert(id);
        self.created.push(id);
        Ok(id)
    }

    /// Claims `id` for `claimer` by Claude Code's rules; with `exclusive` (the edit must hold the
    /// list lock) also refuses a claimer that owns another open task.
    pub fn claim(&mut self, id: u64, claimer: &str, exclusive: bool) -> Result<Task> {
        let Some(task) = self.task(id) else {
            return Err(Refusal::NotFound.error(id));
        };
        if let Some(refusal) = self.board.claim_refusal(task, claimer) {
            return Err(refusal.error(id));
        }
        if exclusive {
            let owns = self.board.owned_open(claimer, id);
            if !owns.is_empty() {
                return Err(Refusal::Busy { owns }.error(id));
            }
        }
        let task = self.task_mut(id).expect("checked above");
        task.set_owner(Some(claimer));
        Ok(task.clone())
    }

    /// Makes `blockers` exactly the tasks `id` waits for, keeping each blocker's `blocks` in
    /// step. Every task named, old or new, must be locked by this edit. A blocker that does not
    /// exist is not found; one that would close a circle is refused.
    pub fn set_blockers(&mut self, id: u64, blockers: &[u64]) -> Result<()> {
        let old: BTreeSet<u64> = self
            .task(id)
            .map(|t| t.blocked_by().into_iter().collect())
            .unwrap_or_default();
        let new: BTreeSet<u64> = blockers.iter().copied().collect();
        for &blocker in &new {
            if self.task(blocker).is_none() {
                return Err(Refusal::NotFound.error(blocker));
            }
            if !old.contains(&blocker) && self.board.reaches(blocker, id) {
                return Err(Error::usage(format!(
                    "task {blocker} cannot block task {id}: task {id} already comes before it, so neither could ever start"
                ))
                .with_reason("cycle"));
            }
        }
        for &gone in old.difference(&new) {
            if let Some(t) = self.task_mut(gone) {
                let blocks: Vec<u64> = t.blocks().into_iter().filter(|b| *b != id).collect();
                t.set_blocks(&blocks);
            }
        }
        for &added in &new {
            if let Some(t) = self.task_mut(added) {
                let mut blocks = t.blocks();
                blocks.push(id);
                t.set_blocks(&blocks);
            }
        }
        let blockers: Vec<u64> = new.into_iter().collect();
        if let Some(t) = self.task_mut(id) {
            t.set_blocked_by(&blockers);
        }
        Ok(())
    }
}

impl Board {
    /// Whether `from` is `to` or waits for it, directly or through other tasks: then `to` may
    /// not wait for `from`.
    fn reaches(&self, from: u64, to: u64) -> bool {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from];
        while let Some(at) = todo.pop() {
            if at == to {
                return true;
            }
            if seen.insert(at)
                && let Some(t) = self.tasks.get(&at)
            {
                todo.extend(t.blocked_by());
            }
        }
        false
    }
}

/// A task id typed on the command line: decimal, no sign, no leading zeros, at most [`MAX_ID`].
pub fn parse_id(raw: &str) -> Result<u64> {
    parse_task_id(raw).ok_or_else(|| {
        Error::usage(format!(
            "bad task id {}: a task id is a decimal number up to {MAX_ID}, as `swarm task list` shows it",
            crate::base::names::quoted(raw)
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list() -> (tempfile::TempDir, TaskList) {
        let dir = tempfile::tempdir().unwrap();
        let list = TaskList::new(&Home::new(dir.path().to_path_buf()), "t");
        list.ensure().unwrap();
        (dir, list)
    }

    fn add(list: &TaskList, subject: &str, blockers: &[u64]) -> u64 {
        list.edit(blockers, true, |edit| {
            let id = edit.create(|id| Task::new(id, subject, "", None, None))?;
            edit.set_blockers(id, blockers)?;
            Ok(id)
        })
        .unwrap()
    }

    #[test]
    fn ids_follow_the_high_water_mark_and_links_go_both_ways() {
        let (_dir, list) = list();
        assert_eq!(add(&list, "a", &[]), 1);
        assert_eq!(add(&list, "b", &[1]), 2);
        let board = list.read().unwrap();
        assert_eq!(board.tasks[&1].blocks(), [2]);
        assert_eq!(board.tasks[&2].blocked_by(), [1]);
        fs::remove_file(list.paths.task(2)).unwrap();
        assert_eq!(
            add(&list, "c", &[]),
            3,
            "a deleted id is never issued again"
        );
        assert_eq!(
            fs::read_to_string(list.paths.high_water_mark()).unwrap(),
            "3"
        );
    }

    #[test]
    fn a_task_discarded_keeps_its_id_issued_and_the_mark_never_goes_back() {
        let (_dir, list) = list();
        for subject in ["a", "b", "c"] {
            add(&list, subject, &[]);
        }
        // Files that came without a mark (written by a tool that keeps none).
        fs::remove_file(list.paths.high_water_mark()).unwrap();
        assert_eq!(list.discard(&[3, 7]).unwrap(), [3], "only files there go");
        assert!(!list.paths.task(3).exists());
        assert_eq!(
            fs::read_to_string(list.paths.high_water_mark()).unwrap(),
            "3"
        );
        list.raise_high_water_mark(2).unwrap();
        assert_eq!(
            fs::read_to_string(list.paths.high_water_mark()).unwrap(),
            "3",
            "never lowered"
        );
        assert_eq!(
            add(&list, "d", &[]),
            4,
            "a discarded id is never issued again"
        );
    }

    #[test]
    fn claims_follow_claude_codes_rules() {
        let (_dir, list) = list();
        add(&list, "a", &[]);
        add(&list, "b", &[1]);
        // Through the claim, which reads the task and its blockers, and through an edit of the
        // whole board, which must agree with it (and writes nothing, the change undone).
        let claim = |id, who: &str, exclusive| {
            let whole = list
                .edit(&[id], exclusive, |edit| {
                    edit.claim(id, who, exclusive)?;
                    Err::<(), _>(Error::runtime("undone"))
                })
                .map_err(|err| err.reason().unwrap_or("?").to_owned());
            let claimed = list
                .claim(id, who, exclusive)
                .map_err(|err| err.reason().unwrap_or("?").to_owned());
            assert_eq!(
                claimed.as_ref().err(),
                whole.as_ref().err().filter(|e| *e != "?"),
                "claim {id} by {who}"
            );
            claimed
        };
        assert_eq!(claim(2, "bob", false).unwrap_err(), "blocked");
        assert_eq!(claim(9, "bob", false).unwrap_err(), "task_not_found");
        claim(1, "bob", false).unwrap();
        claim(1, "bob", false).unwrap();
        assert_eq!(claim(1, "amy", false).unwrap_err(), "already_claimed");
        add(&list, "c", &[]);
        assert_eq!(claim(3, "bob", true).unwrap_err(), "busy");
        list.edit(&[1], false, |edit| {
            edit.task_mut(1).unwrap().set_status(Status::Completed);
            Ok(())
        })
        .unwrap();
        assert_eq!(claim(1, "bob", false).unwrap_err(), "already_resolved");
        claim(2, "amy", false).unwrap();
        claim(3, "bob", true).unwrap();
    }

    #[test]
    fn the_next_available_task_is_the_first_pending_unowned_and_unblocked_one() {
        let (_dir, list) = list();
        add(&list, "a", &[]);
        add(&list, "b", &[1]);
        add(&list, "c", &[]);
        assert_eq!(list.next_available(0).unwrap(), Some(1));
        assert_eq!(
            list.next_available(1).unwrap(),
            Some(3),
            "2 is blocked by 1"
        );
        list.edit(&[1], false, |edit| edit.claim(1, "bob", false))
            .unwrap();
        assert_eq!(list.next_available(0).unwrap(), Some(3), "1 is owned");
        list.edit(&[1], false, |edit| {
            edit.task_mut(1).unwrap().set_status(Status::Completed);
            Ok(())
        })
        .unwrap();
        assert_eq!(
            list.next_available(0).unwrap(),
            Some(2),
            "its blocker is done"
        );
        assert_eq!(list.next_available(3).unwrap(), None);
        // As a full read of the board judges it.
        let board = list.read().unwrap();
        let first = board
            .tasks
            .values()
            .find(|t| board.available(t))
            .map(Task::id);
        assert_eq!(list.next_available(0).unwrap(), first);
    }

    #[test]
    fn a_cycle_is_refused_and_nothing_written() {
        let (_dir, list) = list();
        add(&list, "a", &[]);
        add(&list, "b", &[1]);
        add(&list, "c", &[2]);
        let before = list.read().unwrap().tasks;
        let err = list
            .edit(&[1, 3], true, |edit| edit.set_blockers(1, &[3]))
            .unwrap_err();
        assert_eq!(err.reason(), Some("cycle"));
        assert_eq!(list.read().unwrap().tasks, before);
    }

    #[test]
    fn an_owners_open_tasks_are_released_once() {
        let (_dir, list) = list();
        for _ in 0..3 {
            add(&list, "x", &[]);
        }
        for (id, status) in [
            (1, Status::InProgress),
            (2, Status::Completed),
            (3, Status::Pending),
        ] {
            list.edit(&[id], false, |edit| {
                let task = edit.task_mut(id).unwrap();
                task.set_owner(Some("bob"));
                task.set_status(status);
                Ok(())
            })
            .unwrap();
        }
        // A failing `before_write` writes nothing, nor does one that answers no.
        let failed = list.release_owned("bob", |_| Err(Error::runtime("no")));
        assert!(failed.is_err());
        assert_eq!(list.read().unwrap().tasks[&1].owner(), Some("bob"));
        assert!(list.release_owned("bob", |_| Ok(false)).unwrap().is_empty());
        assert_eq!(list.read().unwrap().tasks[&1].owner(), Some("bob"));
        assert_eq!(list.holders(&["amy", "bob"]).unwrap(), ["bob"]);
        let mut seen = Vec::new();
        let released = list
            .release_owned("bob", |tasks| {
                seen = tasks.iter().map(Task::id).collect();
                Ok(true)
            })
            .unwrap();
        assert_eq!(released.iter().map(Task::id).collect::<Vec<_>>(), [1, 3]);
        assert_eq!(seen, [1, 3]);
        let board = list.read().unwrap();
        assert!(board.available(&board.tasks[&1]));
        assert_eq!(
            board.tasks[&2].owner(),
            Some("bob"),
            "completed tasks keep theirs"
        );
        let again = list
            .release_owned("bob", |_| panic!("nothing to release"))
            .unwrap();
        assert!(again.is_empty());
        assert!(list.holders(&["bob"]).unwrap().is_empty());
    }

    #[test]
    fn a_corrupt_task_file_is_moved_aside_and_its_id_kept() {
        let (_dir, list) = list();
        add(&list, "a", &[]);
        fs::write(list.paths.task(2), "{not json").unwrap();
        let moved = list.repair().unwrap();
        assert_eq!(moved.len(), 1);
        assert!(moved[0].path.exists());
        assert!(!list.paths.task(2).exists());
        assert_eq!(add(&list, "b", &[]), 3);
    }
}
