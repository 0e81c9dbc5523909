//! Which hosts' nodes are alive (docs/ARCHITECTURE.md, "Roster, control and status across
//! hosts"). Each node puts its name in the bucket `swarm_nodes` every beat; a host whose key's
//! revision moved within the last few beats, as this node counts time, is alive. A 2.9 server has
//! no per-key expiry, so the bucket's maximum age clears hosts gone for good. The node mirrors
//! the answer into `node/hosts.json`, which local commands read: a member whose host is not in it
//! shows as unreachable.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, kv};
use futures_util::StreamExt;

use serde::{Deserialize, Serialize};

use crate::base::runtime::OffRuntime;
use crate::base::{clock, ids};
use crate::cluster::node::shared::Node;
use crate::cluster::roster;
use crate::cluster::subjects::NODES_BUCKET;
use crate::error::{Error, ErrorKind, Result};
use crate::store::node::{self as record, HostsRecord};

/// How often a node says it is alive.
const BEAT: Duration = Duration::from_secs(1);

/// A host whose key has not moved for this long is not alive.
const STALE: Duration = Duration::from_secs(5);

/// How long the server keeps a host's key after its last beat.
const MAX_AGE: Duration = Duration::from_secs(300);

/// What this node last saw of one host's key.
struct Sighting {
    revision: u64,
    /// When the revision last moved; `None` until it has moved once while watched, so a key a
    /// dead node left behind is not taken for a live one.
    moved: Option<Instant>,
}

/// What a node puts on its key every beat: its name, and which run of which node it is, so two
/// nodes given the same name find each other.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Beat {
    name: String,
    at_ms: u64,
    /// This run of the node: fresh at each start.
    instance: String,
    /// When this run started.
    since_ms: u64,
    pid: u32,
    home: String,
}

/// Beats and looks, every beat, until the node stops. Ends the node when an older node of
/// another home beats under the same name: a host name must be one host's.
pub(crate) async fn serve(node: Arc<Node>) -> Result<()> {
    let mut me = Beat {
        name: node.name.to_string(),
        at_ms: 0,
        instance: ids::fresh().to_string(),
        since_ms: clock::now_ms(),
        pid: std::process::id(),
        home: node.home.root().display().to_string(),
    };
    let mut store: Option<kv::Store> = None;
    let mut last_put: Option<u64> = None;
    let mut seen: BTreeMap<String, Sighting> = BTreeMap::new();
    let mut written: Option<BTreeSet<String>> = None;
    let mut beat = tokio::time::interval(BEAT);
    loop {
        beat.tick().await;
        me.at_ms = clock::now_ms();
        let alive = match look(&node, &me, &mut last_put, &mut store, &mut seen).await {
            Ok(alive) => alive,
            Err(err) if err.kind() == ErrorKind::Usage => return Err(err),
            Err(err) => {
                tracing::debug!("presence: {err}");
                store = None;
                BTreeSet::new()
            }
        };
        if written.as_ref() != Some(&alive) {
            let hosts = HostsRecord {
                alive: alive.clone(),
                written_ms: clock::now_ms(),
            };
            node.off_runtime(move |node| record::write_hosts(&node.home, &hosts))
                .await?;
            written = Some(alive);
        }
    }
}

async fn look(
    node: &Node,
    me: &Beat,
    last_put: &mut Option<u64>,
    store: &mut Option<kv::Store>,
    seen: &mut BTreeMap<String, Sighting>,
) -> Result<BTreeSet<String>> {
    let kv = match store {
        Some(kv) => kv,
        None => store.insert(bucket(&node.js, &node.url).await?),
    };
    let failed = |err: &dyn std::fmt::Display| {
        Error::runtime(format!("cannot use the bucket {NODES_BUCKET}: {err}"))
    };
    // Another node's beat under this name lands between two of ours.
    if let Some(last) = *last_put
        && let Some(entry) = kv
            .entry(node.name.as_str())
            .await
            .map_err(|err| failed(&err))?
        && entry.revision != last
    {
        same_name(me, &entry)?;
    }
    let beat = serde_json::to_vec(me).map_err(|err| failed(&err))?;
    *last_put = Some(
        kv.put(node.name.as_str(), beat.into())
            .await
            .map_err(|err| failed(&err))?,
    );
    let mut keys = kv.keys().await.map_err(|err| failed(&err))?;
    let mut hosts = Vec::new();
    while let Some(key) = keys.next().await {
        hosts.push(key.map_err(|err| failed(&err))?);
    }
    let now = Instant::now();
    let mut alive = BTreeSet::from([node.name.to_string()]);
    for host in hosts {
        let Some(entry) = kv.entry(&host).await.map_err(|err| failed(&err))? else {
            continue;
        };
        let sighting = seen.entry(host.clone()).or_insert(Sighting {
            revision: entry.revision,
            moved: None,
        });
        if sighting.revision != entry.revision {
            sighting.revision = entry.revision;
            sighting.moved = Some(now);
        }
        if sighting
            .moved
            .is_some_and(|moved| now.duration_since(moved) < STALE)
        {
            alive.insert(host);
        }
    }
    Ok(alive)
}

/// Before the node serves anything: refuses to start while another node beats under its name
/// (its key's revision moves within two beats). A key that does not move is a node that is gone,
/// such as this node's own last run.
pub(crate) async fn refuse_namesake(node: &Node) -> Result<()> {
    let Ok(kv) = bucket(&node.js, &node.url).await else {
        // Not reachable now: the beats find a namesake later.
        return Ok(());
    };
    let read = || async {
        kv.entry(node.name.as_str())
            .await
            .ok()
            .flatten()
            .map(|entry| (entry.revision, entry.value))
    };
    let Some((first, _)) = read().await else {
        return Ok(());
    };
    tokio::time::sleep(BEAT * 2).await;
    match read().await {
        Some((revision, value)) if revision != first => Err(namesake(
            node.name.as_str(),
            serde_json::from_slice(&value).ok().as_ref(),
        )),
        _ => Ok(()),
    }
}

/// Refuses to go on when `entry`, this host name's key, holds the beat of another node that
/// started first (the earlier start keeps the name; a tie goes to the smaller instance).
fn same_name(me: &Beat, entry: &kv::Entry) -> Result<()> {
    let Ok(other) = serde_json::from_slice::<Beat>(&entry.value) else {
        return Ok(());
    };
    if other.instance == me.instance {
        return Ok(());
    }
    let first = (other.since_ms, &other.instance) < (me.since_ms, &me.instance);
    if !first {
        tracing::warn!(target: "swarm::node",
            "swarm node {}: another node uses this name too (pid {}, home {}); it stops",
            me.name, other.pid, other.home
        );
        return Ok(());
    }
    Err(namesake(&me.name, Some(&other)))
}

/// The refusal of a node whose name `other` (its beat, when readable) already has.
fn namesake(name: &str, other: Option<&Beat>) -> Error {
    let (pid, home) = other.map_or((0, "?"), |o| (o.pid, o.home.as_str()));
    Error::usage(format!(
        "another swarm node named {name} runs already (pid {pid}, home {home})"
    ))
    .with_hint("give each host a name of its own: swarm node --name NAME")
}

async fn bucket(js: &jetstream::Context, url: &str) -> Result<kv::Store> {
    roster::key_value(
        js,
        url,
        NODES_BUCKET,
        "swarm nodes: each host's beat",
        MAX_AGE,
    )
    .await
}
