//! The node's answer to a `sign` request (docs/ARCHITECTURE.md, "Signed lead messages"): another
//! host's command asks this host's signing agent to sign a lead-side message for a member keyed
//! here. The asking side is `cluster/sign.rs`.
//!
//! The node signs only a message whose `from` speaks for the team's lead, for a member on this
//! host's roster of the team whose record names this host as its `keyHost` (a member without one,
//! of a team on one host, is never signed for from outside), with the key this host's config.json
//! records. Who may ask at all is whoever may publish on the NATS
//! server: across hosts that server's credentials are the boundary, as for every message.

use crate::cluster::node::shared::Node;
use crate::cluster::sign::{SignReply, SignRequest};
use crate::error::{Error, Result};
use crate::format::message::InboxMessage;
use crate::format::signature::speaks_for_lead;
use crate::member::signer;
use crate::store::team::Team;

pub(crate) fn sign(node: &Node, request: SignRequest) -> Result<SignReply> {
    let team = Team::open(&node.home, &request.team)?;
    let config = team.load()?;
    let here = node.name.as_str();
    let member = config.require_member(&request.member)?;
    let key = member.lead_verify_key.as_deref().ok_or_else(|| {
        Error::usage(format!(
            "{} of team {} verifies no lead's messages",
            request.member, request.team
        ))
    })?;
    // Only a member of a team across hosts whose record says this host holds its key: a team on
    // one host never has its keys used from outside it.
    match member.key_host.as_deref() {
        Some(host) if host == here => {}
        Some(elsewhere) => {
            return Err(Error::usage(format!(
                "{}'s key is held on host {elsewhere}, not here",
                request.member
            )));
        }
        None => {
            return Err(Error::usage(format!(
                "{}'s key is not one other hosts may use: it names no key host",
                request.member
            )));
        }
    }
    let message = InboxMessage::from_value(request.message)
        .map_err(|_| Error::usage("the message to sign is not an inbox message"))?;
    let lead = config.lead_name();
    if !speaks_for_lead(message.from(), lead) {
        return Err(Error::usage(format!(
            "only the lead's side's messages are signed; this one is from {}",
            message.from()
        )));
    }
    let lead_sig = signer::sign_here(
        &node.home,
        team.name(),
        lead,
        &request.member,
        key,
        &message,
    )?;
    Ok(SignReply { lead_sig })
}
