//! The node's copy of each clustered team's task list (docs/ARCHITECTURE.md, "The task list
//! across hosts"): every task on the server is written into this host's task files, and every
//! task a tool wrote into those files directly (Claude Code) is put on the server, at the revision
//! this host last saw, so a direct write that lost a race gives way to the one that won.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_nats::jetstream::kv;
use futures_util::StreamExt;
use tokio::sync::mpsc;

use crate::cluster::node::shared::Node;
use crate::cluster::node::teams::{self, Clustered};
use crate::cluster::tasks as replica;
use crate::error::{Error, Result};
use crate::format::task::Task;
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

/// What this host knows of one team's tasks on the server: each task as last seen there, with
/// its revision.
type Known = BTreeMap<u64, (u64, Task)>;

/// Copies one team's list both ways until the connection fails.
async fn copy(node: &Arc<Node>, team: &str) -> Result<()> {
    let store = replica::bucket(&node.js, &node.url, team).await?;
    let list = TaskList::new(&node.home, team);
    let ensure = list.clone();
    node.off_runtime(move |_| ensure.ensure()).await?;
    let mut touched = watch_files(&list)?;
    // The bucket keeps one value per key, so reading it from its first revision gives every task
    // as it is now, then each change as it comes.
    let last = store
        .status()
        .await
        .map_err(|err| {
            Error::runtime(format!(
                "the NATS server at {} could not say how far the task list of {team} goes: {err}",
                node.url
            ))
        })?
        .info
        .state
        .last_sequence;
    let mut changes = store.watch_all_from_revision(1).await.map_err(|err| {
        Error::runtime(format!(
            "the NATS server at {} could not follow the task list of {team}: {err}",
            node.url
        ))
    })?;
    let mut known = Known::new();
    let mut caught_up = last == 0;
    if caught_up {
        publish(node, &store, &list, &mut known).await?;
    }
    loop {
        tokio::select! {
            change = changes.next() => {
                let Some(change) = change else {
                    return Err(Error::runtime(format!("the NATS server at {} stopped following the task list of {team}", node.url)));
                };
                let entry = change.map_err(|err| Error::runtime(format!("the NATS server at {} lost the task list of {team}: {err}", node.url)))?;
                take(node, &list, &mut known, &entry).await?;
                if !caught_up && entry.revision >= last {
                    caught_up = true;
                }
                if caught_up {
                    publish(node, &store, &list, &mut known).await?;
                }
            }
            woke = touched.recv() => {
                woke.unwrap_or_else(|| Err(Error::runtime(format!("the watch on {} ended", list.dir().display()))))?;
                if caught_up {
                    publish(node, &store, &list, &mut known).await?;
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

/// Writes one task from the server into the local files, unless it is older than what is known.
async fn take(
    node: &Arc<Node>,
    list: &TaskList,
    known: &mut Known,
    entry: &kv::Entry,
) -> Result<()> {
    let Some(id) = crate::cluster::subjects::task_id(&entry.key) else {
        return Ok(());
    };
    if entry.operation != kv::Operation::Put
        || known
            .get(&id)
            .is_some_and(|(revision, _)| *revision >= entry.revision)
    {
        return Ok(());
    }
    let Some(task) = Task::parse(&entry.value, id) else {
        tracing::warn!(task = id, "a task on the server is no task; left alone");
        return Ok(());
    };
    known.insert(id, (entry.revision, task.clone()));
    let list = list.clone();
    node.off_runtime(move |_| list.adopt(&[task])).await?;
    Ok(())
}

/// Puts on the server every local task that differs from what this host last saw there: at that
/// revision when the task is known, as a new task when not. A task whose key moved on meanwhile
/// lost the race: the winner comes through the watch and replaces the local file.
async fn publish(
    node: &Arc<Node>,
    store: &kv::Store,
    list: &TaskList,
    known: &mut Known,
) -> Result<()> {
    let reader = list.clone();
    let board = node.off_runtime(move |_| reader.read()).await?;
    for (id, task) in board.tasks {
        match known.get(&id) {
            Some((_, seen)) if *seen == task => {}
            Some((revision, _)) => {
                if let Some(revision) = replica::update(store, &node.url, &task, *revision).await? {
                    known.insert(id, (revision, task));
                }
            }
            None => {
                if let Some(found) = replica::entry(store, &node.url, id).await?
                    && found.1.subject() == task.subject()
                {
                    // The same task, on the server already (this host's own change ahead of the
                    // watch, or another host's newer one): the server's stands.
                    let newer = found.1.clone();
                    known.insert(id, found);
                    if newer != task {
                        let list = list.clone();
                        node.off_runtime(move |_| list.adopt(&[newer])).await?;
                    }
                    continue;
                }
                let (revision, published) = replica::publish_new(store, &node.url, &task).await?;
                if published.id() != id {
                    eprintln!(
                        "swarm node {}: task {id} ({}) was also issued on another host; it is task {} now",
                        node.name,
                        task.subject(),
                        published.id()
                    );
                    let list = list.clone();
                    let moved = published.clone();
                    node.off_runtime(move |_| list.renumber(id, &moved)).await?;
                }
                known.insert(published.id(), (revision, published));
            }
        }
    }
    Ok(())
}
