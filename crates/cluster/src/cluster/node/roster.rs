//! Keeps every clustered team's roster bucket and this host's config.json in step
//! (docs/ARCHITECTURE.md, "Roster, control and status across hosts"). Each node is the authority
//! for its own members: it watches its local config.json and puts their records in the bucket;
//! it watches the bucket and mirrors the other hosts' members into its config.json, through the
//! one locked update. Local readers (`status`, `wait`, `top`) then see every member without NATS.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_nats::jetstream::kv;
use futures_util::StreamExt;

use crate::base::runtime::OffRuntime;
use crate::cluster::fleet::Fleet;
use crate::cluster::node::shared::Node;
use crate::cluster::node::teams::{self, Clustered};
use crate::cluster::roster;
use crate::cluster::subjects;
use crate::error::{Error, ErrorKind, Result};
use crate::format::config::{Member, TeamConfig};
use crate::member::ending;
use crate::store::paths::TeamPaths;
use crate::store::team::Team;
use crate::store::watcher::AsyncWatcher;

/// Follows each clustered team of this home, a task per team, until the node stops.
pub(crate) async fn serve(node: Arc<Node>) -> Result<()> {
    teams::supervise(
        node,
        "roster",
        |_| true,
        |node, team: Clustered| async move { follow(&node, &team.team).await },
    )
    .await
}

/// Until the team is gone (`Ok`) or the server fails (`Err`). The node takes part only while its
/// config.json is the run the bucket is for (the same `createdAt` as its key `config`): a team
/// left here by an earlier run neither puts its ended members in a new run nor takes the new
/// run's members in.
async fn follow(node: &Arc<Node>, name: &str) -> Result<()> {
    let store = roster::bucket(&node.js, &node.url, name).await?;
    let Ok(team) = Team::open(&node.home, name) else {
        return Ok(());
    };
    let mut watcher = AsyncWatcher::arm(team.paths().dir())?;
    let mut changes = store
        .watch_all()
        .await
        .map_err(|err| Error::runtime(format!("cannot watch the roster of {name}: {err}")))?;
    // What the watch has before it is set up on the server may not reach it: what the bucket
    // holds now is read once, and each key's newest revision wins.
    let mut run = roster::run_of(&store, &node.url).await?;
    let mut applied: BTreeMap<String, u64> = BTreeMap::new();
    // Entries waiting for config.json to be the bucket's run, the newest of each key.
    let mut held: BTreeMap<String, kv::Entry> = BTreeMap::new();
    for entry in current(&store, name).await? {
        hold(&mut held, entry);
    }
    // What this node last put of each of its members, as JSON.
    let mut put: BTreeMap<String, serde_json::Value> = BTreeMap::new();
    // Whether this host's members were judged, once the node takes part in the run.
    let mut judged = false;
    loop {
        let team_name = name.to_owned();
        let here = node
            .off_runtime(move |node| this_run(node, &team_name))
            .await;
        let (created_at, own) = match here {
            Ok(here) => here,
            Err(err) if err.kind() == ErrorKind::NotFound => return Ok(()),
            Err(err) => return Err(err),
        };
        if run == Some(created_at) && !judged {
            judged = true;
            let team_name = name.to_owned();
            node.off_runtime(move |node| judge_own(node, &team_name))
                .await?;
            // Its records as judged are the ones put.
            continue;
        }
        if run == Some(created_at) {
            for entry in std::mem::take(&mut held).into_values() {
                take(node, name, &mut applied, entry).await?;
            }
            for member in own {
                let json = serde_json::to_value(&member).unwrap_or_default();
                if put.get(&member.name) != Some(&json) {
                    roster::put_member(&store, &node.url, &member).await?;
                    put.insert(member.name.clone(), json);
                }
            }
        }
        tokio::select! {
            woke = watcher.wait(None, &TeamPaths::is_config) => { woke?; }
            entry = changes.next() => match entry {
                Some(Ok(entry)) if entry.key == subjects::ROSTER_CONFIG_KEY => {
                    run = roster::run_in(&entry);
                }
                Some(Ok(entry)) => hold(&mut held, entry),
                Some(Err(err)) => {
                    return Err(Error::runtime(format!("lost the roster of {name}: {err}")));
                }
                None => return Err(Error::runtime(format!("lost the roster of {name}"))),
            },
        }
    }
}

/// Keeps `entry` unless a newer revision of its key is held.
fn hold(held: &mut BTreeMap<String, kv::Entry>, entry: kv::Entry) {
    if held
        .get(&entry.key)
        .is_none_or(|have| have.revision < entry.revision)
    {
        held.insert(entry.key.clone(), entry);
    }
}

/// Every member record the team's bucket holds now.
async fn current(store: &kv::Store, name: &str) -> Result<Vec<kv::Entry>> {
    let failed = |err: &dyn std::fmt::Display| {
        Error::runtime(format!("cannot read the roster of {name}: {err}"))
    };
    let mut keys = store.keys().await.map_err(|err| failed(&err))?;
    let mut entries = Vec::new();
    while let Some(key) = keys.next().await {
        let key = key.map_err(|err| failed(&err))?;
        if subjects::roster_member_name(&key).is_none() {
            continue;
        }
        if let Some(entry) = store.entry(key).await.map_err(|err| failed(&err))? {
            entries.push(entry);
        }
    }
    Ok(entries)
}

/// Mirrors `entry` unless a newer revision of its key was mirrored already.
async fn take(
    node: &Arc<Node>,
    name: &str,
    applied: &mut BTreeMap<String, u64>,
    entry: kv::Entry,
) -> Result<()> {
    if applied
        .get(&entry.key)
        .is_some_and(|seen| *seen >= entry.revision)
    {
        return Ok(());
    }
    applied.insert(entry.key.clone(), entry.revision);
    let Some(member) = roster::member_of(&entry) else {
        return Ok(());
    };
    let team_name = name.to_owned();
    node.off_runtime(move |node| mirror(node, &team_name, member))
        .await
}

/// Judges this host's members of team `name` as every command here judges them, once, when the
/// node starts taking part in the run (docs/ARCHITECTURE.md, "Resuming a team"): a member recorded
/// as live whose supervisor is gone (a reboot, a crash) is recorded interrupted here
/// (`ending::record_lost`), so the other hosts, which only see its record, no longer take it for
/// running. A start or resume under way here rewrites its members' records, and those are left
/// alone; the launch lock is not taken, so a command never finds it held by the node.
fn judge_own(node: &Node, name: &str) -> Result<()> {
    let Ok(team) = Team::open(&node.home, name) else {
        return Ok(());
    };
    let lost = ending::record_lost(&team, &Fleet::of(&node.home))?;
    if !lost.is_empty() {
        tracing::info!(target: "swarm::node",
            "swarm node {}: team {name}: {} had no supervisor any more: recorded as interrupted \
             ({}), to be resumed from the lead's host",
            node.name,
            lost.join(", "),
            ending::LOST
        );
    }
    Ok(())
}

/// The run of the team config.json holds (its `createdAt`) and this host's members of it.
fn this_run(node: &Node, name: &str) -> Result<(u64, Vec<Member>)> {
    let config = Team::open(&node.home, name)?.load()?;
    let created_at = config.created_at;
    Ok((created_at, config.members_on(node.name.as_str()).collect()))
}

/// Writes another host's member's record into the local config.json when it differs, adding a
/// member that host added after `up` (`spawn`, `join`); this host's own members are never
/// overwritten.
fn mirror(node: &Node, name: &str, member: Member) -> Result<()> {
    if member
        .host
        .as_deref()
        .is_none_or(|host| host == node.name.as_str())
    {
        return Ok(());
    }
    let Ok(team) = Team::open(&node.home, name) else {
        return Ok(());
    };
    let json = serde_json::to_value(&member).unwrap_or_default();
    let (name, host) = (member.name.clone(), member.host.clone());
    let differs = |config: &TeamConfig| {
        config.member(&name).is_none_or(|have| {
            have.host == host && serde_json::to_value(have).unwrap_or_default() != json
        })
    };
    if !differs(&team.load()?) {
        return Ok(());
    }
    team.update(|config| {
        if differs(config) {
            match config.member_mut(&name) {
                Some(slot) => *slot = member,
                None => config.members.push(member),
            }
        }
        Ok(())
    })
}
