//! The node's copy of each clustered team's task list (docs/ARCHITECTURE.md, "The task list
//! across hosts"): every task on the server is written into this host's task files, and every
//! task a tool wrote into those files directly (Claude Code) is put on the server, at the revision
//! this host last saw, so a direct write that lost a race gives way to the one that won. A task
//! deleted on either side is deleted on the other, by the same rule; which tasks this host's files
//! held, and at which revision, is kept in `node/tasks-<team>.json`, so a file removed while the
//! node was down counts as deleted, and one never copied here does not. The record names the
//! bucket it is about: a bucket made since holds another board (the team was removed on its lead's
//! host, and its board with it), and this host's copies of the old one go.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_nats::jetstream::kv;
use futures_util::StreamExt;
use tokio::sync::mpsc;

use crate::base::runtime::OffRuntime;
use crate::cluster::node::shared::Node;
use crate::cluster::node::teams::{self, Clustered};
use crate::cluster::tasks as replica;
use crate::error::{Error, Result};
use crate::format::task::Task;
use crate::store::node::{self as record, TaskCopies};
use crate::store::tasks::TaskList;
use crate::store::watcher::Watcher;

/// Runs one copy per clustered team for as long as the node runs.
pub(crate) async fn serve(node: Arc<Node>) -> Result<()> {
    teams::supervise(
        node,
        "task list",
        |_| true,
        |node, team: Clustered| async move { copy(&node, &team.team).await },
    )
    .await
}

/// What this host knows of one team's tasks: each task as last seen on the server, with its
/// revision, and which revision each of its files last held (kept on disk).
struct Mirror {
    node: Arc<Node>,
    team: String,
    list: TaskList,
    known: BTreeMap<u64, (u64, Task)>,
    copies: TaskCopies,
}

/// Copies one team's list both ways until the connection fails.
async fn copy(node: &Arc<Node>, team: &str) -> Result<()> {
    // A team removed meanwhile has no list to make again; its task ends with the team's.
    let config = node.home.team(team).config();
    if !node.off_runtime(move |_| config.exists()).await {
        return Ok(());
    }
    let store = replica::bucket(&node.js, &node.url, team).await?;
    let list = TaskList::new(&node.home, team);
    let ensure = list.clone();
    // A list folder made afresh holds no copies: a host whose whole list was removed while its
    // node was down starts over from the server, deleting nothing there.
    let made = node
        .off_runtime(move |_| {
            let missing = !ensure.dir().is_dir();
            ensure.ensure().map(|()| missing)
        })
        .await?;
    let mut touched = watch_files(&list)?;
    // The bucket keeps one value per key, so reading it from its first revision gives every task
    // as it is now (or its deletion), then each change as it comes.
    let status = store.status().await.map_err(|err| {
        Error::runtime(format!(
            "the NATS server at {} could not say how far the task list of {team} goes: {err}",
            node.url
        ))
    })?;
    let last = status.info.state.last_sequence;
    let bucket = status.info.created.unix_timestamp_nanos().to_string();
    let (home, name) = (node.home.clone(), team.to_owned());
    let copies = node
        .off_runtime(move |_| record::read_task_copies(&home, &name))
        .await;
    let copies = if copies.bucket.as_ref().is_some_and(|seen| *seen != bucket) {
        // The board these were copies of was removed with its team: they go too.
        let (gone, list) = (
            copies.held.keys().copied().collect::<Vec<_>>(),
            list.clone(),
        );
        let discarded = node.off_runtime(move |_| list.discard(&gone)).await?;
        if !discarded.is_empty() {
            eprintln!(
                "swarm node {}: the task list of {team} on the server was made anew (its team \
                 was removed on its lead's host); removed this host's copies of tasks {}",
                node.name,
                discarded
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        TaskCopies::default()
    } else if made {
        // A list folder made afresh holds no copies.
        TaskCopies::default()
    } else {
        copies
    };
    let copies = TaskCopies {
        bucket: Some(bucket),
        ..copies
    };
    let (home, name, record) = (node.home.clone(), team.to_owned(), copies.clone());
    node.off_runtime(move |_| record::write_task_copies(&home, &name, &record))
        .await?;
    let mut mirror = Mirror {
        node: Arc::clone(node),
        team: team.to_owned(),
        list,
        known: BTreeMap::new(),
        copies,
    };
    let mut changes = store.watch_all_from_revision(1).await.map_err(|err| {
        Error::runtime(format!(
            "the NATS server at {} could not follow the task list of {team}: {err}",
            node.url
        ))
    })?;
    let mut caught_up = last == 0;
    if caught_up {
        mirror.publish(&store).await?;
    }
    loop {
        tokio::select! {
            change = changes.next() => {
                let Some(change) = change else {
                    return Err(Error::runtime(format!("the NATS server at {} stopped following the task list of {team}", node.url)));
                };
                let entry = change.map_err(|err| Error::runtime(format!("the NATS server at {} lost the task list of {team}: {err}", node.url)))?;
                mirror.take(&entry).await?;
                if !caught_up && entry.revision >= last {
                    caught_up = true;
                }
                if caught_up {
                    mirror.publish(&store).await?;
                }
            }
            woke = touched.recv() => {
                woke.unwrap_or_else(|| Err(Error::runtime(format!("the watch on {} ended", mirror.list.dir().display()))))?;
                if caught_up {
                    mirror.publish(&store).await?;
                }
            }
        }
    }
}

/// The one watcher on the list's folder, waited on by a thread of its own: each wake-up (a task
/// file changed, or the watcher's safety re-scan) is one message. The thread ends with the
/// receiver.
fn watch_files(list: &TaskList) -> Result<mpsc::Receiver<Result<()>>> {
    let watcher = Watcher::arm(list.dir())?;
    let (tell, told) = mpsc::channel(1);
    std::thread::spawn(move || {
        let relevant = |file: &std::ffi::OsStr| TaskList::is_task_file(file);
        loop {
            let woke = watcher.wait(None, &relevant).map(|_| ());
            let failed = woke.is_err();
            match tell.try_send(woke) {
                Err(mpsc::error::TrySendError::Closed(_)) => return,
                // One wake-up already waits: the reader reads everything anyway.
                Ok(()) | Err(mpsc::error::TrySendError::Full(_)) => {}
            }
            if failed {
                return;
            }
        }
    });
    Ok(told)
}

impl Mirror {
    /// Writes `node/tasks-<team>.json` as it is now; called only once the files hold what it
    /// says (a file written, a deletion done), so a crash between the two leaves a task whose
    /// file this host is not sure of, and such a task is kept, never deleted.
    async fn save(&self) -> Result<()> {
        let (home, team, copies) = (
            self.node.home.clone(),
            self.team.clone(),
            self.copies.clone(),
        );
        self.node
            .off_runtime(move |_| record::write_task_copies(&home, &team, &copies))
            .await
    }

    /// This host's file of task `id` holds the server's value at `revision` now.
    async fn hold(&mut self, id: u64, revision: u64, task: Task) -> Result<()> {
        self.known.insert(id, (revision, task));
        if self.copies.held.insert(id, revision) != Some(revision) {
            self.save().await?;
        }
        Ok(())
    }

    /// Takes one change from the server into the local files, unless it is older than what is
    /// known. A task is written unless this host's file already held it at that very revision
    /// (then a newer local change made while the node was down, or the file's removal, is put on
    /// the server by [`Mirror::publish`]). A deletion removes the file, under the list lock, only
    /// when that file was a copy of the task (this host held it): a file never copied here is
    /// another task, which [`Mirror::publish`] gives an id of its own.
    async fn take(&mut self, entry: &kv::Entry) -> Result<()> {
        let Some(id) = crate::cluster::subjects::task_id(&entry.key) else {
            return Ok(());
        };
        if self
            .known
            .get(&id)
            .is_some_and(|(revision, _)| *revision >= entry.revision)
        {
            return Ok(());
        }
        if entry.operation != kv::Operation::Put {
            self.known.remove(&id);
            if self.copies.held.contains_key(&id) {
                let list = self.list.clone();
                node_discard(&self.node, list, id).await?;
                self.copies.held.remove(&id);
                self.save().await?;
            }
            return Ok(());
        }
        let Some(task) = Task::parse(&entry.value, id) else {
            tracing::warn!(task = id, "a task on the server is no task; left alone");
            return Ok(());
        };
        if self.copies.held.get(&id) != Some(&entry.revision) {
            let (list, copy) = (self.list.clone(), task.clone());
            self.node.off_runtime(move |_| list.adopt(&[copy])).await?;
        }
        self.hold(id, entry.revision, task).await
    }

    /// Puts on the server every local change against what this host last saw there: a task that
    /// differs at that revision; a task this host held whose file is gone, deleted at that
    /// revision; a task not known there as a new one. A change whose key moved on meanwhile lost
    /// the race: the winner comes through the watch and replaces the local file (or writes it
    /// again, for a deletion that lost).
    async fn publish(&mut self, store: &kv::Store) -> Result<()> {
        let reader = self.list.clone();
        let board = self.node.off_runtime(move |_| reader.read()).await?;
        let url = self.node.url.clone();
        let gone: Vec<(u64, u64, Task)> = self
            .known
            .iter()
            .filter(|(id, _)| !board.tasks.contains_key(id) && !board.unreadable.contains(id))
            .filter(|(id, _)| self.copies.held.contains_key(id))
            .map(|(id, (revision, task))| (*id, *revision, task.clone()))
            .collect();
        for (id, revision, task) in gone {
            let list = self.list.clone();
            let set_aside = self
                .node
                .off_runtime(move |_| list.was_set_aside(id))
                .await?;
            if set_aside {
                // Moved aside as no task, not deleted: written again as the server has it.
                let list = self.list.clone();
                self.node.off_runtime(move |_| list.adopt(&[task])).await?;
                continue;
            }
            let list = self.list.clone();
            self.node
                .off_runtime(move |_| list.raise_high_water_mark(id))
                .await?;
            if replica::delete(store, &url, id, revision).await? {
                self.known.remove(&id);
                self.copies.held.remove(&id);
                self.save().await?;
            }
        }
        for (id, task) in board.tasks {
            match self.known.get(&id) {
                Some((_, seen)) if *seen == task => {}
                Some((revision, _)) => {
                    if let Some(revision) = replica::update(store, &url, &task, *revision).await? {
                        self.hold(id, revision, task).await?;
                    }
                }
                None => self.publish_new(store, id, task).await?,
            }
        }
        Ok(())
    }

    /// A local task the server does not hold as this host knows it: the same task when its key
    /// holds one with the same subject (the server's stands), else a new one, renumbered when
    /// its id was issued elsewhere.
    async fn publish_new(&mut self, store: &kv::Store, id: u64, task: Task) -> Result<()> {
        let url = self.node.url.clone();
        if let Some((revision, found)) = replica::entry(store, &url, id).await?
            && found.subject() == task.subject()
        {
            // The same task, on the server already (this host's own change ahead of the watch,
            // or another host's newer one): the server's stands.
            if found != task {
                let (list, newer) = (self.list.clone(), found.clone());
                self.node.off_runtime(move |_| list.adopt(&[newer])).await?;
            }
            return self.hold(id, revision, found).await;
        }
        let (revision, published) = replica::publish_new(store, &url, &task).await?;
        if published.id() != id {
            tracing::info!(target: "swarm::node",
                "swarm node {}: task {id} ({}) was also issued on another host; it is task {} now",
                self.node.name,
                task.subject(),
                published.id()
            );
            let (list, moved) = (self.list.clone(), published.clone());
            self.node
                .off_runtime(move |_| list.renumber(id, &moved))
                .await?;
        }
        self.hold(published.id(), revision, published).await
    }
}

/// Removes this host's file of task `id`, deleted on the server, under the list lock.
async fn node_discard(node: &Arc<Node>, list: TaskList, id: u64) -> Result<()> {
    node.off_runtime(move |_| list.discard(&[id]).map(drop))
        .await
}
