//! Signing a lead-side message on the host whose signing agent holds the member's key
//! (docs/ARCHITECTURE.md, "Signed lead messages"): the asking side of the `sign` request. The
//! node answering it is `node/sign.rs`; `member/seal.rs` reaches [`sign`] through
//! `cluster/fleet.rs`, for a member whose record names another host as its `keyHost`.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cluster::control::{self, Link, SIGN};
use crate::error::{Error, Result};
use crate::format::message::InboxMessage;
use crate::store::paths::Home;

/// How long a signature may take there and back.
pub(crate) const SIGN_WAIT: Duration = Duration::from_secs(15);

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct SignRequest {
    pub(crate) team: String,
    /// The member the message is for; its key is the one that host's config.json records.
    pub(crate) member: String,
    /// The inbox message as it will be written, every field but its `lead_sig`.
    pub(crate) message: Value,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SignReply {
    pub(crate) lead_sig: String,
}

/// The one connection a process asks for signatures over: a broadcast to many members keyed on
/// other hosts connects once, not once per member. Forgotten after a failure, so a long-lived
/// process (a node taking a team down) never keeps asking over a connection gone stale.
static LINK: Mutex<Option<Arc<Link>>> = Mutex::new(None);

fn link(home: &Home) -> Result<Arc<Link>> {
    let mut held = LINK.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(link) = held.as_ref() {
        return Ok(Arc::clone(link));
    }
    let link = Arc::new(Link::open(&control::settings_here(home)?, "swarm sign")?);
    *held = Some(Arc::clone(&link));
    Ok(link)
}

fn forget_link() {
    LINK.lock().unwrap_or_else(PoisonError::into_inner).take();
}

/// The `lead_sig` of `message` for `member` of `team`, made by `host`'s node with its signing
/// agent. Fails with one line naming the host: its node did not answer, or refused.
pub(crate) fn sign(
    home: &Home,
    host: &str,
    team: &str,
    member: &str,
    message: &InboxMessage,
) -> Result<String> {
    let request = SignRequest {
        team: team.to_owned(),
        member: member.to_owned(),
        message: serde_json::to_value(message).map_err(|err| Error::runtime(err.to_string()))?,
    };
    link(home)
        .and_then(|link| link.ask::<_, SignReply>(host, SIGN, &request, SIGN_WAIT))
        .inspect_err(|_| forget_link())
        .map(|reply| reply.lead_sig)
        .map_err(|err| {
            let failed = Error::runtime(format!(
                "cannot sign the lead's message to {member} on host {host}, which holds its key: \
                 {}; nothing was sent",
                err.message()
            ));
            match err.hint() {
                Some(hint) => failed.with_hint(hint.to_owned()),
                None => failed,
            }
        })
}
