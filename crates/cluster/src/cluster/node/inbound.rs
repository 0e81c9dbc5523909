//! Messages arriving at this host (docs/ARCHITECTURE.md, "Messages across hosts"). For every
//! member this host runs in a team across hosts, the node reads the team's stream through a
//! durable pull consumer of the member's own (`inbox-<member>`), appends what arrives to the
//! member's inbox file under the locks, skipping a `msg_id` the inbox or history already holds,
//! and acks only once that write is durable. A node killed between the write and the ack gets the
//! messages again, and the skip keeps any reader from seeing one twice.

use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::{
    self, AckKind,
    consumer::{AckPolicy, pull},
};
use futures_util::StreamExt;
use tokio::task::JoinSet;

use crate::base::runtime::OffRuntime;
use crate::cluster::node::shared::Node;
use crate::cluster::node::teams::{self, Clustered};
use crate::cluster::{stream, subjects};
use crate::error::{Error, Result};
use crate::format::message::InboxMessage;
use crate::store::mailbox::{Delivered, Mailbox};

/// The most messages one pull asks for, and one durable write appends.
const BATCH: usize = 256;

/// How long a batch that came in several pieces waits for more before it is written.
const LINGER: Duration = Duration::from_millis(2);

/// How long the server waits for an ack before it delivers a message again: long enough for a
/// batch's durable write on a loaded machine, short enough that a node killed before its ack
/// gets the message again soon after it restarts.
const ACK_WAIT: Duration = Duration::from_secs(10);

/// How many messages may be delivered and not yet acked: a few batches.
const MAX_ACK_PENDING: i64 = 1024;

/// Receives for every member this host runs, in every team across hosts.
pub(crate) async fn serve(node: Arc<Node>) -> Result<()> {
    teams::supervise(
        node,
        "receiving",
        |team| !team.local.is_empty(),
        receive_team,
    )
    .await
}

/// One receiver per local member; the first to fail ends the others, to start again together.
async fn receive_team(node: Arc<Node>, team: Clustered) -> Result<()> {
    let mut members = JoinSet::new();
    for member in &team.local {
        members.spawn(receive(
            Arc::clone(&node),
            team.team.clone(),
            member.clone(),
        ));
    }
    match members.join_next().await {
        Some(Ok(result)) => result,
        Some(Err(err)) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
        Some(Err(_)) | None => std::future::pending().await,
    }
}

/// The consumer a member's messages are read through: durable, so what arrived while this node
/// was down waits on the server; filtered to the member's subject; acked one by one.
fn consumer_config(team: &str, member: &str) -> pull::Config {
    pull::Config {
        durable_name: Some(subjects::consumer(member)),
        filter_subject: subjects::inbox(team, member),
        ack_policy: AckPolicy::Explicit,
        ack_wait: ACK_WAIT,
        max_ack_pending: MAX_ACK_PENDING,
        ..pull::Config::default()
    }
}

/// Reads one member's messages until the connection or the consumer fails.
async fn receive(node: Arc<Node>, team: String, member: String) -> Result<()> {
    let mut connected = node.connected.clone();
    connected
        .wait_for(|now| *now)
        .await
        .map_err(|_| Error::runtime("the NATS connection closed"))?;
    let stream = stream::ensure(&node.js, &node.url, &team).await?;
    let name = subjects::consumer(&member);
    let failed = |what: &str, err: &dyn std::fmt::Display| {
        Error::runtime(format!(
            "{what} the consumer {name} of {} on the NATS server at {}: {err}",
            subjects::stream(&team),
            node.url
        ))
    };
    let consumer = stream
        .get_or_create_consumer(&name, consumer_config(&team, &member))
        .await
        .map_err(|err| failed("cannot create", &err))?;
    let mut messages = consumer
        .stream()
        .max_messages_per_batch(BATCH)
        .messages()
        .await
        .map_err(|err| failed("cannot read from", &err))?
        .ready_chunks(BATCH);
    let mailbox = Mailbox::new(&node.home.team(&team), &member);
    let mut delivered = Some(Delivered::default());
    while let Some(mut chunk) = messages.next().await {
        // Several at once means more are coming: wait a moment for them, so one durable write
        // carries them all. A lone message is written at once.
        if chunk.len() > 1 {
            let until = tokio::time::Instant::now() + LINGER;
            while chunk.len() < BATCH {
                match tokio::time::timeout_at(until, messages.next()).await {
                    Ok(Some(more)) => chunk.extend(more),
                    Ok(None) | Err(_) => break,
                }
            }
        }
        let mut arrived = Vec::with_capacity(chunk.len());
        let mut to_ack = Vec::with_capacity(chunk.len());
        let mut broken = None;
        for item in chunk {
            match item {
                Ok(message) => match serde_json::from_slice::<InboxMessage>(&message.payload) {
                    Ok(parsed) => {
                        arrived.push(parsed);
                        to_ack.push(message);
                    }
                    Err(err) => refuse(&node, &name, &message, &err).await,
                },
                Err(err) => broken = Some(err),
            }
        }
        if !arrived.is_empty() {
            let mailbox = mailbox.clone();
            let mut known = delivered.take().unwrap_or_default();
            let (known, written) = node
                .off_runtime(move |_| {
                    let written = mailbox.append_unseen(&arrived, &mut known);
                    (known, written)
                })
                .await;
            delivered = Some(known);
            written?;
            // Durable in the inbox: only now may the server forget them. An ack lost on the way
            // is a delivery again later, which the append skips.
            for message in to_ack {
                if let Err(err) = message.ack().await {
                    tracing::debug!("ack on {name} lost: {err}");
                }
            }
        }
        if let Some(err) = broken {
            return Err(failed("lost", &err));
        }
    }
    Err(failed("lost", &"the message stream ended"))
}

/// A message on the stream that is no inbox message (another program published it): said, and
/// ended on the server, as no member could ever read it.
async fn refuse(
    node: &Node,
    consumer: &str,
    message: &jetstream::Message,
    err: &serde_json::Error,
) {
    tracing::warn!(target: "swarm::node",
        "swarm node {}: {consumer} got something on {} that is no inbox message ({err}); dropping it",
        node.name, message.subject
    );
    if let Err(err) = message.ack_with(AckKind::Term).await {
        tracing::debug!("ending a message on {consumer}: {err}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_member_has_its_own_durable_consumer_on_its_own_subject() {
        let config = consumer_config("t", "bob");
        assert_eq!(config.durable_name.as_deref(), Some("inbox-bob"));
        assert_eq!(config.filter_subject, "swarm.t.inbox.bob");
        assert_eq!(config.ack_policy, AckPolicy::Explicit);
        assert!(usize::try_from(config.max_ack_pending).unwrap() >= BATCH);
    }
}
