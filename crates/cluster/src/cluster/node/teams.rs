//! Which teams of this home cross hosts, and which of their members this host runs
//! (docs/ARCHITECTURE.md, "Messages across hosts"). A team crosses hosts when its config.json
//! gives some member a `host`: a member whose host is this node's name is local, one on any other
//! host is remote, and one without a host is left alone. Teams appear, change and go while the
//! node runs; [`supervise`] follows them with the one watcher and keeps one task per team running
//! for a service, restarting it when what it serves changes or after it fails.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::task::{AbortHandle, JoinSet};

use crate::base::runtime::OffRuntime;
use crate::cluster::node::shared::Node;
use crate::error::Result;
use crate::store::durable::private_dir;
use crate::store::team::{Team, list_teams};
use crate::store::watcher::AsyncWatcher;

/// How long a team's task waits before it runs again after failing.
const RETRY: Duration = Duration::from_secs(1);

/// One team across hosts, as this host sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Clustered {
    pub(crate) team: String,
    /// The members this host runs, in the order config.json lists them.
    pub(crate) local: Vec<String>,
    /// The members other hosts run.
    pub(crate) remote: Vec<String>,
}

/// Every team of the home that crosses hosts. A config.json that cannot be read is skipped and
/// said once per change, by the caller comparing what it got.
fn scan(node: &Node) -> Result<BTreeMap<String, Clustered>> {
    let mut found = BTreeMap::new();
    for name in list_teams(&node.home)? {
        let Ok(config) = Team::open(&node.home, &name).and_then(|team| team.load()) else {
            continue;
        };
        let mut clustered = Clustered {
            team: name.clone(),
            local: Vec::new(),
            remote: Vec::new(),
        };
        for member in &config.members {
            match member.host.as_deref() {
                Some(host) if host == node.name.as_str() => {
                    clustered.local.push(member.name.clone());
                }
                Some(_) => clustered.remote.push(member.name.clone()),
                None => {}
            }
        }
        if !clustered.local.is_empty() || !clustered.remote.is_empty() {
            found.insert(name, clustered);
        }
    }
    Ok(found)
}

/// Runs `run` for every team across hosts that `wanted` accepts, one task per team, for as long
/// as the node runs. A team whose members or hosts change gets a fresh task; a team that goes, or
/// is no longer wanted, loses its task. A task that fails says why (once, until the reason
/// changes) and runs again a moment later: a server lost meanwhile, a stream someone else
/// configured, a full disk. Cancelling a task at any await loses nothing: every service leaves a
/// message where it was until its next step is durable.
pub(crate) async fn supervise<F, Fut>(
    node: Arc<Node>,
    service: &'static str,
    wanted: fn(&Clustered) -> bool,
    run: F,
) -> Result<()>
where
    F: Fn(Arc<Node>, Clustered) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<()>> + Send + 'static,
{
    let run = Arc::new(run);
    let teams_dir = node.home.teams_dir();
    {
        let dir = teams_dir.clone();
        node.off_runtime(move |_| private_dir(&dir, &dir)).await?;
    }
    let mut tasks: JoinSet<()> = JoinSet::new();
    let mut running: HashMap<String, (Clustered, AbortHandle)> = HashMap::new();
    let mut watched: Vec<PathBuf> = Vec::new();
    let mut watcher: Option<AsyncWatcher> = None;
    loop {
        // Armed before the read, over `teams/` (a team appearing) and each team's folder (its
        // config.json changing); armed again only when the set of teams changes.
        let mut dirs = vec![teams_dir.clone()];
        let names = {
            let node = Arc::clone(&node);
            node.off_runtime(|node| list_teams(&node.home)).await?
        };
        dirs.extend(
            names
                .iter()
                .map(|name| node.home.team(name).dir().to_path_buf()),
        );
        if watcher.is_none() || dirs != watched {
            let paths: Vec<&std::path::Path> = dirs.iter().map(PathBuf::as_path).collect();
            // A team removed between the listing and the arming: list again.
            match AsyncWatcher::arm_all(&paths) {
                Ok(armed) => {
                    watcher = Some(armed);
                    watched = dirs;
                }
                Err(_) if dirs.iter().any(|dir| !dir.is_dir()) => continue,
                Err(err) => return Err(err),
            }
        }
        let now = node.off_runtime(scan).await?;
        running.retain(|team, (served, task)| {
            let keep = now
                .get(team)
                .is_some_and(|now| now == served && wanted(now));
            if !keep {
                task.abort();
            }
            keep
        });
        for (team, clustered) in now {
            if running.contains_key(&team) || !wanted(&clustered) {
                continue;
            }
            tracing::info!(target: "swarm::node",
                "swarm node {}: {service} for team {team}: here {}; elsewhere {}",
                node.name,
                list(&clustered.local),
                list(&clustered.remote)
            );
            let task = tasks.spawn(keep_running(
                Arc::clone(&node),
                service,
                clustered.clone(),
                Arc::clone(&run),
            ));
            running.insert(team, (clustered, task));
        }
        // Finished tasks (only aborted ones finish) are reaped as they come.
        while let Some(done) = tasks.try_join_next() {
            if let Err(err) = done
                && err.is_panic()
            {
                std::panic::resume_unwind(err.into_panic());
            }
        }
        if let Some(watcher) = watcher.as_mut() {
            watcher.wait(None, &|_| true).await?;
        }
    }
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

/// Runs one team's task again and again after it fails, saying why once per new reason; a task
/// that ends well is done until its team changes, when [`supervise`] starts a fresh one.
async fn keep_running<F, Fut>(node: Arc<Node>, service: &'static str, team: Clustered, run: Arc<F>)
where
    F: Fn(Arc<Node>, Clustered) -> Fut,
    Fut: Future<Output = Result<()>>,
{
    let mut said: Option<String> = None;
    loop {
        // `Ok` means the task has nothing more to do until its team changes.
        let Err(why) = run(Arc::clone(&node), team.clone()).await else {
            return;
        };
        let line = why.message().to_owned();
        if said.as_deref() != Some(line.as_str()) {
            tracing::info!(target: "swarm::node",
                "swarm node {}: {service} for team {}: {line}; trying again",
                node.name, team.team
            );
            said = Some(line);
        }
        tokio::time::sleep(RETRY).await;
    }
}
