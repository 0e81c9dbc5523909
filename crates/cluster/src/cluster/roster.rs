//! A team's roster on the server (docs/ARCHITECTURE.md, "Roster, control and status across
//! hosts"): the key-value bucket `swarm_<team>` holds the team as `up` made it (key `config`)
//! and each member's record as its own host's node last wrote it (key `member.<name>`). Every
//! node mirrors the records of the other hosts' members into its local config.json.

use std::time::Duration;

use async_nats::jetstream::{self, kv, stream};
use futures_util::StreamExt;

use crate::cluster::subjects;
use crate::error::{Error, Result};
use crate::format::config::{Member, TeamConfig};

/// Every revision of a key the bucket keeps: only the latest matters to a mirror.
const HISTORY: i64 = 1;

/// The team's roster bucket, made if missing.
pub(crate) async fn bucket(js: &jetstream::Context, url: &str, team: &str) -> Result<kv::Store> {
    key_value(
        js,
        url,
        &subjects::roster_bucket(team),
        &format!("swarm team {team}: its roster and member states"),
        Duration::ZERO,
    )
    .await
}

/// A key-value bucket, made if missing, keeping the latest value of each key, each for at most
/// `max_age` (`ZERO`: for ever). Made as the stream a bucket is, directly: the client's own
/// bucket maker first asks for account details a 2.9 server words differently.
pub(crate) async fn key_value(
    js: &jetstream::Context,
    url: &str,
    name: &str,
    description: &str,
    max_age: Duration,
) -> Result<kv::Store> {
    if let Ok(store) = js.get_key_value(name).await {
        return Ok(store);
    }
    let made = js
        .create_stream(stream::Config {
            name: subjects::bucket_stream(name),
            description: Some(description.to_owned()),
            subjects: vec![format!("$KV.{name}.>")],
            max_messages_per_subject: HISTORY,
            max_age,
            storage: stream::StorageType::File,
            allow_rollup: true,
            deny_delete: true,
            allow_direct: true,
            discard: stream::DiscardPolicy::New,
            num_replicas: 1,
            ..stream::Config::default()
        })
        .await;
    // Another host may have made it meanwhile.
    js.get_key_value(name).await.map_err(|err| {
        let why = made
            .err()
            .map_or_else(|| err.to_string(), |made| made.to_string());
        Error::runtime(format!(
            "cannot make the bucket {name} on the NATS server at {url}: {why}"
        ))
    })
}

/// Clears every member record an earlier run of a team of that name left, then puts the team as
/// `up` made it. In that order, so a node that sees the new run has seen the clearing; each node
/// puts its members again once its config.json is this run.
pub(crate) async fn put_config(store: &kv::Store, url: &str, config: &TeamConfig) -> Result<()> {
    let failed = |err: &dyn std::fmt::Display| {
        Error::runtime(format!(
            "cannot clear the roster of {} on the NATS server at {url}: {err}",
            config.name
        ))
    };
    let mut keys = store.keys().await.map_err(|err| failed(&err))?;
    let mut stale = Vec::new();
    while let Some(key) = keys.next().await {
        let key = key.map_err(|err| failed(&err))?;
        if subjects::roster_member_name(&key).is_some() {
            stale.push(key);
        }
    }
    for key in stale {
        store.purge(&key).await.map_err(|err| failed(&err))?;
    }
    put(store, url, subjects::ROSTER_CONFIG_KEY, config).await
}

/// The run of the team the bucket is for now: when `up` made it (`createdAt` of its key
/// `config`). `None` before the first `up`.
pub(crate) async fn run_of(store: &kv::Store, url: &str) -> Result<Option<u64>> {
    let entry = store
        .entry(subjects::ROSTER_CONFIG_KEY)
        .await
        .map_err(|err| {
            Error::runtime(format!(
                "cannot read the roster on the NATS server at {url}: {err}"
            ))
        })?;
    Ok(entry.as_ref().and_then(run_in))
}

/// The run a `config` entry names: the `createdAt` of the team it holds; `None` when purged.
pub(crate) fn run_in(entry: &kv::Entry) -> Option<u64> {
    (entry.operation == kv::Operation::Put)
        .then(|| serde_json::from_slice::<TeamConfig>(&entry.value).ok())
        .flatten()
        .map(|config| config.created_at)
}

/// Puts one member's record, as its own host's node sees it.
pub(crate) async fn put_member(store: &kv::Store, url: &str, member: &Member) -> Result<()> {
    put(
        store,
        url,
        &subjects::roster_member_key(&member.name),
        member,
    )
    .await
}

async fn put(store: &kv::Store, url: &str, key: &str, value: &impl serde::Serialize) -> Result<()> {
    let bytes = serde_json::to_vec(value)
        .map_err(|err| Error::runtime(format!("cannot encode {key}: {err}")))?;
    store.put(key, bytes.into()).await.map(drop).map_err(|err| {
        Error::runtime(format!(
            "cannot write {key} to the NATS server at {url}: {err}"
        ))
    })
}

/// A member's record from the bucket, if `entry` holds one.
pub(crate) fn member_of(entry: &kv::Entry) -> Option<Member> {
    if entry.operation != kv::Operation::Put {
        return None;
    }
    subjects::roster_member_name(&entry.key)?;
    serde_json::from_slice(&entry.value).ok()
}
