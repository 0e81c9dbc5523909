//! Messages leaving this host (docs/ARCHITECTURE.md, "Messages across hosts"). A local writer
//! (swarm, Claude Code, any tool) writes a message for a member on another host into that
//! member's inbox file here, as for anyone. The node watches those files and, for each batch,
//! under the mailbox's consume: publishes every message to the team's stream with
//! `Nats-Msg-Id`, waits for every ack, records them in history, and only then removes them from
//! the file. A batch that cannot be sent stays in the file and goes when the server is back.

use std::collections::HashSet;
use std::ffi::OsString;
use std::sync::Arc;

use async_nats::HeaderMap;
use async_nats::header::NATS_MESSAGE_ID;
use async_nats::jetstream;
use tokio::sync::watch;

use crate::base::ids;
use crate::base::runtime::OffRuntime;
use crate::cluster::node::shared::Node;
use crate::cluster::node::teams::{self, Clustered};
use crate::cluster::{stream, subjects};
use crate::error::{Error, Result};
use crate::format::message::InboxMessage;
use crate::store::durable::private_dir_inside;
use crate::store::mailbox::Mailbox;
use crate::store::paths::SetAsideKind;

/// The most messages one consume takes from an inbox: all published at once, then every ack
/// awaited.
const BATCH: usize = 256;

/// A member on another host: its inbox file here, and the subject its messages go to.
#[derive(Clone)]
struct Remote {
    member: String,
    mailbox: Mailbox,
    subject: String,
}

/// Sends what local writers leave for remote members, for every team across hosts.
pub(crate) async fn serve(node: Arc<Node>) -> Result<()> {
    teams::supervise(node, "sending", |team| !team.remote.is_empty(), send_team).await
}

/// Watches the team's inboxes folder and sends whatever the remote members' inboxes hold, now,
/// after every change to one of them, and after every reconnection.
async fn send_team(node: Arc<Node>, team: Clustered) -> Result<()> {
    let paths = node.home.team(&team.team);
    let inboxes = paths.inboxes();
    let dir = inboxes.clone();
    if !node.off_runtime(move |_| private_dir_inside(&dir)).await? {
        return Ok(());
    }
    let mut watcher = crate::store::watcher::AsyncWatcher::arm(&inboxes)?;
    let remotes: Vec<Remote> = team
        .remote
        .iter()
        .map(|member| Remote {
            mailbox: Mailbox::new(&paths, member),
            subject: subjects::inbox(&team.team, member),
            member: member.clone(),
        })
        .collect();
    let files: HashSet<OsString> = remotes
        .iter()
        .map(|remote| remote.mailbox.file_name().to_owned())
        .collect();
    let relevant = |name: &std::ffi::OsStr| files.contains(name);
    let mut connected = node.connected.clone();
    connected_now(&mut connected).await?;
    stream::ensure(&node.js, &node.url, &team.team).await?;
    loop {
        connected.borrow_and_update();
        // A batch the server does not take stays in its file; this task ends with the reason and
        // runs again, once connected, from a fresh look at every file.
        for remote in &remotes {
            drain(&node, remote).await?;
        }
        tokio::select! {
            woke = watcher.wait(None, &relevant) => { woke?; }
            changed = connected.changed() => changed.map_err(|_| stopped())?,
        }
    }
}

/// Waits until the client reaches the server.
async fn connected_now(connected: &mut watch::Receiver<bool>) -> Result<()> {
    connected
        .wait_for(|now| *now)
        .await
        .map(|_| ())
        .map_err(|_| stopped())
}

fn stopped() -> Error {
    Error::runtime("the NATS connection closed")
}

/// Sends everything one inbox holds, batch by batch, through the mailbox's consume: it takes
/// the consumers' turn, publishes, records history once every ack is in, then removes the batch
/// from the file under the locks.
async fn drain(node: &Arc<Node>, remote: &Remote) -> Result<()> {
    let runtime = tokio::runtime::Handle::current();
    let (remote, js) = (remote.clone(), node.js.clone());
    let limit = node
        .client
        .server_info()
        .max_payload
        .saturating_sub(HEADERS_ROOM);
    node.off_runtime(move |node| {
        loop {
            let mut too_large = false;
            let sent = remote.mailbox.consume_forwarding(Some(BATCH), |batch| {
                let payloads = encode(batch, limit).ok_or_else(|| {
                    too_large = true;
                    Error::runtime("a message is too large for the NATS server")
                })?;
                runtime.block_on(publish(
                    &js,
                    &remote.subject,
                    &remote.member,
                    batch,
                    payloads,
                ))
            });
            let sent = match sent {
                Err(_) if too_large => {
                    set_aside_too_large(node, &remote, limit)?;
                    continue;
                }
                sent => sent?,
            };
            if sent.len() < BATCH {
                return Ok(());
            }
        }
    })
    .await
}

/// Room left in a message for its headers (`Nats-Msg-Id` and the protocol's own), under the
/// server's `max_payload`, which counts them.
const HEADERS_ROOM: usize = 1024;

fn encoded_len(message: &InboxMessage) -> usize {
    serde_json::to_vec(message).map_or(usize::MAX, |bytes| bytes.len())
}

/// Each message of `batch` as the JSON object the file held; `None` when one is over `limit`.
fn encode(batch: &[InboxMessage], limit: usize) -> Option<Vec<Vec<u8>>> {
    batch
        .iter()
        .map(|message| {
            serde_json::to_vec(message)
                .ok()
                .filter(|p| p.len() <= limit)
        })
        .collect()
}

/// Keeps messages the server would refuse beside the inbox rather than let them hold up every
/// message after them; `status` reports the file, and the node says so once.
fn set_aside_too_large(node: &Node, remote: &Remote, limit: usize) -> Result<()> {
    let Some((kept, too_large)) = remote
        .mailbox
        .set_aside_where(SetAsideKind::TooLarge, |message| {
            encoded_len(message) > limit
        })?
    else {
        return Ok(());
    };
    for message in &too_large {
        tracing::warn!(target: "swarm::node",
            "swarm node {}: a message from {} to {} is {} bytes as JSON, over the {limit} the NATS server carries: kept in {}",
            node.name,
            message.from(),
            remote.member,
            encoded_len(message),
            kept.display()
        );
    }
    Ok(())
}

/// Publishes a batch for `member`, each message as the JSON object the file held, then awaits
/// every ack. The server drops a second copy of a `Nats-Msg-Id` within its duplicate window.
async fn publish(
    js: &jetstream::Context,
    subject: &str,
    member: &str,
    batch: &[InboxMessage],
    payloads: Vec<Vec<u8>>,
) -> Result<()> {
    let failed = |err: &dyn std::fmt::Display| {
        Error::runtime(format!("the NATS server did not take a message: {err}"))
    };
    let mut acks = Vec::with_capacity(batch.len());
    for (message, payload) in batch.iter().zip(payloads) {
        let mut headers = HeaderMap::new();
        headers.insert(NATS_MESSAGE_ID, header_id(member, &message.id()));
        let ack = js
            .publish_with_headers(subject.to_owned(), headers, payload.into())
            .await
            .map_err(|err| failed(&err))?;
        acks.push(ack);
    }
    for ack in acks {
        ack.await.map_err(|err| failed(&err))?;
    }
    Ok(())
}

/// The `Nats-Msg-Id` of a message for `member`: the member and the message id. The server drops
/// duplicates across the whole stream, and a broadcast gives every member's copy the same
/// `msg_id`, so the id alone would keep all copies but the first from crossing. An id another
/// tool wrote that cannot be in a header value (spaces, control characters, non-ASCII) is hashed
/// into one that can.
fn header_id(member: &str, id: &str) -> String {
    if !id.is_empty() && id.bytes().all(|b| b.is_ascii_graphic()) {
        format!("{member}/{id}")
    } else {
        format!("{member}/{}", ids::derived(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_ids_are_the_member_and_the_message_id_or_a_hash_of_it() {
        let id = "f3f1d56c-4527-4d9e-a7d4-5783b9f0726d";
        assert_eq!(header_id("bob", id), format!("bob/{id}"));
        assert_ne!(
            header_id("bob", id),
            header_id("alice", id),
            "broadcast copies"
        );
        let odd = header_id("bob", "two words\r\n");
        assert!(odd.bytes().all(|b| b.is_ascii_graphic()), "{odd}");
        assert_eq!(odd, header_id("bob", "two words\r\n"), "stable");
    }
}
