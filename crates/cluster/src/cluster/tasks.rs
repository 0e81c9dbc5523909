//! A clustered team's task list on the server (docs/ARCHITECTURE.md, "The task list across
//! hosts"): the bucket `swarm_tasks_<team>` holds each task's file under `task.<id>` and the
//! highest id ever issued under `mark`. Every decision is a compare-and-set on the revision of the
//! key it read: a claim on two hosts at once is won by one, and the other is refused with Claude
//! Code's reason, as it would be on one host. Only once the server accepted a change is it written
//! into the local task files, through the one locked edit (`TaskList::adopt`).

use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Display;

use async_nats::jetstream::{self, kv};
use futures_util::StreamExt;

use crate::cluster::connection;
use crate::cluster::fleet::Fleet;
use crate::cluster::settings::{Settings, Sources};
use crate::cluster::subjects;
use crate::error::{Error, Result};
use crate::format::config::TeamConfig;
use crate::format::task::{Task, parse_mark};
use crate::store::node;
use crate::store::paths::Home;
use crate::store::tasks::{Board, Edit, TaskList};
use crate::store::team::Team;

/// How many times a change is decided again after losing a compare-and-set before giving up.
const ATTEMPTS: usize = 1000;

fn failed(url: &str, what: &str, err: impl Display) -> Error {
    Error::runtime(format!("the NATS server at {url} could not {what}: {err}"))
}

/// The team's task bucket, made when missing. One value per key: a task's history lives in the
/// team's messages, not here.
pub(crate) async fn bucket(js: &jetstream::Context, url: &str, team: &str) -> Result<kv::Store> {
    let name = subjects::tasks_bucket(team);
    if let Ok(store) = js.get_key_value(&name).await {
        return Ok(store);
    }
    // The stream a key-value bucket is, made directly: async-nats's `create_key_value` first
    // asks for the account's limits in a shape a 2.9 server does not answer in.
    let config = jetstream::stream::Config {
        name: subjects::bucket_stream(&name),
        subjects: vec![format!("$KV.{name}.>")],
        max_messages_per_subject: 1,
        storage: jetstream::stream::StorageType::File,
        allow_rollup: true,
        deny_delete: true,
        allow_direct: true,
        discard: jetstream::stream::DiscardPolicy::New,
        num_replicas: 1,
        ..jetstream::stream::Config::default()
    };
    let made = js.create_stream(config).await;
    // Made meanwhile by another host, or now by this one: either way it is opened by name.
    js.get_key_value(&name).await.map_err(|err| match made {
        Err(made) => failed(url, &format!("make the task bucket {name}"), made),
        Ok(_) => failed(url, &format!("open the task bucket {name}"), err),
    })
}

/// The tasks on the server, each with the revision it was read at, and the id mark.
pub(crate) struct Snapshot {
    pub(crate) tasks: BTreeMap<u64, (u64, Task)>,
    /// The highest id issued and the mark's revision (0: no mark yet).
    pub(crate) mark: (u64, u64),
}

impl Snapshot {
    fn board(&self) -> Board {
        let tasks = self
            .tasks
            .iter()
            .map(|(id, (_, task))| (*id, task.clone()))
            .collect();
        Board::new(tasks, self.mark.0)
    }
}

/// One task as the server holds it now, with its revision; `None` when it has none.
pub(crate) async fn entry(store: &kv::Store, url: &str, id: u64) -> Result<Option<(u64, Task)>> {
    let found = store
        .entry(subjects::task_key(id))
        .await
        .map_err(|err| failed(url, &format!("read task {id}"), err))?;
    Ok(found.and_then(|entry| {
        (entry.operation == kv::Operation::Put)
            .then(|| Task::parse(&entry.value, id).map(|task| (entry.revision, task)))
            .flatten()
    }))
}

/// Reads every task and the mark. Each key is read at its own revision; a change is then decided
/// on this board and accepted only if the keys it writes are still at those revisions.
///
/// The server's key listing can miss a key written while it runs (its consumer skips a message
/// superseded before delivery), so the tasks the change names (`named`), and every task a task
/// read refers to as a blocker or a blocked one, are read by key whether listed or not: a claim
/// racing another host's never finds its task missing, nor a blocker gone that is not.
pub(crate) async fn snapshot(
    store: &kv::Store,
    url: &str,
    named: &BTreeSet<u64>,
) -> Result<Snapshot> {
    let mark = mark(store, url).await?;
    let mut keys = store
        .keys()
        .await
        .map_err(|err| failed(url, "list the tasks", err))?;
    let mut ids: BTreeSet<u64> = named.clone();
    while let Some(key) = keys.next().await {
        let key = key.map_err(|err| failed(url, "list the tasks", err))?;
        ids.extend(subjects::task_id(&key));
    }
    let mut tasks = BTreeMap::new();
    let mut read = BTreeSet::new();
    while let Some(id) = ids.pop_first() {
        read.insert(id);
        if let Some(found) = entry(store, url, id).await? {
            let referred = found.1.blocked_by().into_iter().chain(found.1.blocks());
            ids.extend(referred.filter(|other| !read.contains(other)));
            tasks.insert(id, found);
        }
    }
    Ok(Snapshot { tasks, mark })
}

async fn mark(store: &kv::Store, url: &str) -> Result<(u64, u64)> {
    let found = store
        .entry(subjects::TASKS_MARK)
        .await
        .map_err(|err| failed(url, "read the task id mark", err))?;
    Ok(found
        .filter(|entry| entry.operation == kv::Operation::Put)
        .map_or((0, 0), |entry| {
            let value = std::str::from_utf8(&entry.value)
                .ok()
                .and_then(parse_mark)
                .unwrap_or(0);
            (value, entry.revision)
        }))
}

/// Moves the mark from `from` (value, revision) to `to`; `false` when another host moved it first.
async fn move_mark(store: &kv::Store, url: &str, from: (u64, u64), to: u64) -> Result<bool> {
    let value = to.to_string().into_bytes().into();
    if from.1 == 0 {
        match store.create(subjects::TASKS_MARK, value).await {
            Ok(_) => Ok(true),
            Err(err) if err.kind() == kv::CreateErrorKind::AlreadyExists => Ok(false),
            Err(err) => Err(failed(url, "issue a task id", err)),
        }
    } else {
        match store.update(subjects::TASKS_MARK, value, from.1).await {
            Ok(_) => Ok(true),
            Err(err) if err.kind() == kv::UpdateErrorKind::WrongLastRevision => Ok(false),
            Err(err) => Err(failed(url, "issue a task id", err)),
        }
    }
}

/// Writes `task` at `revision` (the one its change was decided on); `None` when the key moved on
/// meanwhile, else the new revision.
pub(crate) async fn update(
    store: &kv::Store,
    url: &str,
    task: &Task,
    revision: u64,
) -> Result<Option<u64>> {
    let id = task.id();
    match store
        .update(subjects::task_key(id), task.to_bytes().into(), revision)
        .await
    {
        Ok(revision) => Ok(Some(revision)),
        Err(err) if err.kind() == kv::UpdateErrorKind::WrongLastRevision => Ok(None),
        Err(err) => Err(failed(url, &format!("write task {id}"), err)),
    }
}

/// Deletes task `id` at `revision` (the one this host's file last held): `false` when its key
/// moved on meanwhile (another host changed the task first, and the change stands).
pub(crate) async fn delete(store: &kv::Store, url: &str, id: u64, revision: u64) -> Result<bool> {
    match store
        .delete_expect_revision(subjects::task_key(id), Some(revision))
        .await
    {
        Ok(()) => Ok(true),
        Err(err) if err.kind() == kv::UpdateErrorKind::WrongLastRevision => Ok(false),
        Err(err) => Err(failed(url, &format!("delete task {id}"), err)),
    }
}

/// Puts a task first written on this host (by a tool writing the files directly) on the server.
/// Its id stands when the mark has not issued it yet; else another host may have issued it, and
/// the task takes the next free id. Returns the task as the server holds it and its revision.
pub(crate) async fn publish_new(store: &kv::Store, url: &str, task: &Task) -> Result<(u64, Task)> {
    for _ in 0..ATTEMPTS {
        let mark = mark(store, url).await?;
        let mut task = task.clone();
        let id = if task.id() > mark.0 {
            task.id()
        } else {
            mark.0 + 1
        };
        if id != task.id() {
            task = task.with_id(id);
        }
        if !move_mark(store, url, mark, id).await? {
            continue;
        }
        let revision = store
            .create(subjects::task_key(id), task.to_bytes().into())
            .await
            .map_err(|err| failed(url, &format!("write task {id}"), err))?;
        return Ok((revision, task));
    }
    Err(contended(url))
}

fn contended(url: &str) -> Error {
    Error::runtime(format!(
        "the task list on the NATS server at {url} kept changing while swarm decided; nothing was changed"
    ))
    .with_hint("try again")
}

/// What a claimer key holds: the task an exclusive claim was decided on, and the revision of
/// that task's key it was decided at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Intent {
    task: u64,
    revision: u64,
}

/// Settles `owner`'s last exclusive claim before another is decided, and returns the claimer
/// key's revision (0: none yet). The claim it names either landed (its task's key moved on from
/// the revision it was decided at: what the board shows now counts) or has not: then the task is
/// written again as it is, at that revision, so the claim's own compare-and-set can never land
/// later. Either way the board read after this shows every exclusive claim of `owner` that will
/// ever land before this one.
async fn settle_claimer(store: &kv::Store, url: &str, owner: &str) -> Result<u64> {
    let found = store
        .entry(subjects::claimer_key(owner))
        .await
        .map_err(|err| failed(url, &format!("read {owner}'s last claim"), err))?;
    let Some(found) = found else {
        return Ok(0);
    };
    let intent = (found.operation == kv::Operation::Put)
        .then(|| serde_json::from_slice::<Intent>(&found.value).ok())
        .flatten();
    if let Some(intent) = intent {
        loop {
            match entry(store, url, intent.task).await? {
                Some((revision, task)) if revision == intent.revision => {
                    if update(store, url, &task, revision).await?.is_some() {
                        break;
                    }
                }
                _ => break,
            }
        }
    }
    Ok(found.revision)
}

/// Moves `owner`'s claimer key from `revision` to `intent`; `false` when another claim of the
/// same owner moved it first.
async fn move_claimer(
    store: &kv::Store,
    url: &str,
    owner: &str,
    revision: u64,
    intent: Intent,
) -> Result<bool> {
    let key = subjects::claimer_key(owner);
    let value = serde_json::to_vec(&intent)
        .map_err(|err| Error::runtime(format!("could not write a claim: {err}")))?
        .into();
    let what = || format!("record {owner}'s claim");
    if revision == 0 {
        match store.create(key, value).await {
            Ok(_) => Ok(true),
            Err(err) if err.kind() == kv::CreateErrorKind::AlreadyExists => Ok(false),
            Err(err) => Err(failed(url, &what(), err)),
        }
    } else {
        match store.update(key, value, revision).await {
            Ok(_) => Ok(true),
            Err(err) if err.kind() == kv::UpdateErrorKind::WrongLastRevision => Ok(false),
            Err(err) => Err(failed(url, &what(), err)),
        }
    }
}

/// [`TaskList::edit`] decided on the server: the board read there, `change` applied with the
/// same rules, and what changed written at the revisions it was read at. A lost compare-and-set
/// reads again and decides again. New ids are taken first, by moving the mark; they stay this
/// change's when it is decided again. Returns `change`'s result and every task it wrote.
///
/// `exclusive` names the owner of an exclusive claim (`claim --exclusive`, whose `busy` reads
/// across tasks): its last exclusive claim is settled before the board is read
/// ([`settle_claimer`]), and the claim is recorded on its claimer key, by compare-and-set at the
/// revision settled, before the task is written. Two exclusive claims of one owner thus never
/// both land: the second to move the key reads again, after the first is settled.
pub(crate) async fn edit<R>(
    store: &kv::Store,
    url: &str,
    ids: &[u64],
    whole_list: bool,
    exclusive: Option<&str>,
    mut change: impl FnMut(&mut Edit) -> Result<R>,
) -> Result<(R, Vec<Task>)> {
    let locked: BTreeSet<u64> = ids.iter().copied().collect();
    // Ids this change took from the mark in an earlier round: (first, last).
    let mut issued: Option<(u64, u64)> = None;
    for _ in 0..ATTEMPTS {
        let claimer = match exclusive {
            Some(owner) => Some((owner, settle_claimer(store, url, owner).await?)),
            None => None,
        };
        let snapshot = snapshot(store, url, &locked).await?;
        let present: BTreeSet<u64> = locked
            .iter()
            .copied()
            .filter(|id| snapshot.tasks.contains_key(id))
            .collect();
        let mut edit = Edit::new(snapshot.board(), present, whole_list);
        if let Some((first, _)) = issued {
            edit.issue_from(first);
        }
        let result = change(&mut edit)?;
        let changes = edit.finish();
        if let Some(last) = changes.created.iter().map(Task::id).max() {
            let covered = issued.is_some_and(|(_, issued_last)| last <= issued_last);
            if !covered {
                let first = changes.created.iter().map(Task::id).min().unwrap_or(last);
                if !move_mark(store, url, snapshot.mark, last).await? {
                    issued = None;
                    continue;
                }
                issued = Some((first, last));
            }
        }
        debug_assert!(
            claimer.is_none() || (changes.changed.len() <= 1 && changes.created.is_empty()),
            "an exclusive claim changes one task"
        );
        if let Some((owner, revision)) = claimer
            && let Some(task) = changes.changed.first()
        {
            let intent = Intent {
                task: task.id(),
                revision: snapshot.tasks[&task.id()].0,
            };
            if !move_claimer(store, url, owner, revision, intent).await? {
                continue;
            }
        }
        let mut lost = false;
        for task in &changes.changed {
            let revision = snapshot.tasks[&task.id()].0;
            if update(store, url, task, revision).await?.is_none() {
                lost = true;
                break;
            }
        }
        if lost {
            continue;
        }
        for task in &changes.created {
            let id = task.id();
            store
                .create(subjects::task_key(id), task.to_bytes().into())
                .await
                .map_err(|err| failed(url, &format!("write task {id}"), err))?;
        }
        let written = changes.created.into_iter().chain(changes.changed).collect();
        return Ok((result, written));
    }
    Err(contended(url))
}

/// The NATS settings of a command acting on a clustered team: the environment's, else the URL
/// of the node running for this home with the environment's login.
pub(crate) fn settings(home: &Home, team: &str) -> Result<Settings> {
    let env = Sources::from_env();
    let sources = if env.nats.is_some() {
        env
    } else {
        match node::running(home)? {
            Some(record) => Sources {
                nats: Some(record.url),
                ..env
            },
            None => env,
        }
    };
    sources.settle()?.ok_or_else(|| {
        Error::runtime(format!(
            "team {team} spans hosts, and no NATS server is known to decide its tasks on"
        ))
        .with_hint("set SWARM_NATS_URL, or start `swarm node` on this host")
    })
}

impl Fleet {
    /// `team`'s task list (its roster `config`) as a command changes it, wherever its members
    /// run.
    pub fn tasks(&self, team: &Team, config: &TeamConfig) -> Tasks {
        Tasks {
            list: TaskList::new(self.home(), team.name()),
            team: config.spans_hosts().then(|| team.clone()),
            replica: OnceCell::new(),
        }
    }
}

/// A team's task list as a command changes it: its files here through the one locked edit
/// ([`TaskList::edit`]) for a team on one host; for a team across hosts, each change decided on
/// the NATS server by compare-and-set first ([`Replica`]), then written here.
pub struct Tasks {
    list: TaskList,
    /// The team, when it spans hosts.
    team: Option<Team>,
    /// The server its changes are decided on, once the first change needs it.
    replica: OnceCell<Replica>,
}

impl Tasks {
    /// The task files on this host, to read.
    pub fn list(&self) -> &TaskList {
        &self.list
    }

    /// The one way a task command changes the list: [`TaskList::edit`]'s arguments, the change
    /// made wherever the team runs.
    pub fn edit<R>(
        &self,
        ids: &[u64],
        whole_list: bool,
        change: impl FnMut(&mut Edit) -> Result<R>,
    ) -> Result<R> {
        match self.replica()? {
            Some(replica) => replica.edit(&self.list, ids, whole_list, change),
            None => self.list.edit(ids, whole_list, change),
        }
    }

    /// Claims task `id` for `claimer` ([`Edit::claim`]); an exclusive claim's `busy` holds on
    /// every host of the team.
    pub fn claim(&self, id: u64, claimer: &str, exclusive: bool) -> Result<Task> {
        match self.replica()? {
            Some(replica) => replica.claim(&self.list, id, claimer, exclusive),
            None => self.list.claim(id, claimer, exclusive),
        }
    }

    /// The server a team across hosts decides its changes on, opened once; `None` on one host.
    fn replica(&self) -> Result<Option<&Replica>> {
        let Some(team) = &self.team else {
            return Ok(None);
        };
        if let Some(replica) = self.replica.get() {
            return Ok(Some(replica));
        }
        let opened = Replica::open(team.home(), team.name())?;
        Ok(Some(self.replica.get_or_init(|| opened)))
    }
}

/// A clustered team's task list as a command reaches it: a connection to the server and the
/// team's bucket, driven from synchronous code.
struct Replica {
    runtime: tokio::runtime::Runtime,
    store: kv::Store,
    url: String,
}

impl Replica {
    /// Connects to the server (one line naming the URL when that fails) and opens the bucket.
    fn open(home: &Home, team: &str) -> Result<Self> {
        let settings = settings(home, team)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|err| Error::os("start a runtime for NATS", err))?;
        let store = runtime.block_on(async {
            let connection = connection::connect(&settings, "swarm task").await?;
            let js = jetstream::new(connection.client);
            bucket(&js, &connection.url, team).await
        })?;
        Ok(Self {
            runtime,
            store,
            url: settings.url,
        })
    }

    /// [`edit`] on the server, then what it wrote put in the local files (`list`) through the
    /// locked edit: a change is on this host's files only once the server accepted it. Under the
    /// local locks each task is read from the server once more and written as it is there now:
    /// a newer change another host made meanwhile, which this host's node may already have
    /// written, is never replaced by this one, and a task deleted meanwhile is not written back.
    fn edit<R>(
        &self,
        list: &TaskList,
        ids: &[u64],
        whole_list: bool,
        change: impl FnMut(&mut Edit) -> Result<R>,
    ) -> Result<R> {
        self.edit_as(list, ids, whole_list, None, change)
    }

    /// Claims task `id` for `claimer` by Claude Code's rules, as [`Edit::claim`] does on one
    /// host; with `exclusive`, its `busy` holds across hosts (see [`edit`]).
    fn claim(&self, list: &TaskList, id: u64, claimer: &str, exclusive: bool) -> Result<Task> {
        self.edit_as(
            list,
            &[id],
            exclusive,
            exclusive.then_some(claimer),
            |edit| edit.claim(id, claimer, exclusive),
        )
    }

    fn edit_as<R>(
        &self,
        list: &TaskList,
        ids: &[u64],
        whole_list: bool,
        exclusive: Option<&str>,
        change: impl FnMut(&mut Edit) -> Result<R>,
    ) -> Result<R> {
        let (result, written) = self.runtime.block_on(edit(
            &self.store,
            &self.url,
            ids,
            whole_list,
            exclusive,
            change,
        ))?;
        if written.is_empty() {
            return Ok(result);
        }
        list.ensure()?;
        let ids: Vec<u64> = written.iter().map(Task::id).collect();
        list.edit(&ids, true, |local| {
            for task in &written {
                let id = task.id();
                match self.runtime.block_on(entry(&self.store, &self.url, id))? {
                    Some((_, now)) => {
                        if local.task(id) != Some(&now) {
                            local.put(now);
                        }
                    }
                    // Deleted since this change was accepted: the deletion stands here too.
                    None => {
                        if local.task(id).is_some() {
                            local.remove(id);
                        }
                    }
                }
            }
            Ok(())
        })?;
        Ok(result)
    }
}
