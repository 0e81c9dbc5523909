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

use crate::base::clock;
use crate::cluster::node::shared::Node;
use crate::cluster::roster;
use crate::cluster::subjects::NODES_BUCKET;
use crate::error::{Error, Result};
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

/// Beats and looks, every beat, until the node stops.
pub(crate) async fn serve(node: Arc<Node>) -> Result<()> {
    let mut store: Option<kv::Store> = None;
    let mut seen: BTreeMap<String, Sighting> = BTreeMap::new();
    let mut written: Option<BTreeSet<String>> = None;
    let mut beat = tokio::time::interval(BEAT);
    loop {
        beat.tick().await;
        let alive = match look(&node, &mut store, &mut seen).await {
            Ok(alive) => alive,
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
    let beat = serde_json::json!({"name": node.name.as_str(), "atMs": clock::now_ms()});
    kv.put(node.name.as_str(), beat.to_string().into())
        .await
        .map_err(|err| failed(&err))?;
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
