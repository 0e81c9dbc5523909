//! How swarm's readers judge the lead's messages (docs/ARCHITECTURE.md, "Signed lead messages"):
//! with which key, and which `msg_id`s count as seen.
//!
//! A reader in member M's own pane (its `recv`, `watch`, plan waits, its supervisor's wrapper and
//! paste delivery) takes M's key from what M was launched with: `SWARM_LEAD_VERIFY_KEY` in its
//! supervisor's environment, which tmux set and nothing M runs can change. Every other reader
//! only shows messages, and takes the copy in config.json.

use std::collections::HashMap;

use crate::base::process;
use crate::error::Result;
use crate::format::config::TeamConfig;
use crate::format::message::InboxMessage;
use crate::format::signature::{Judge, Verdict, VerifyKey};
use crate::launch::keys::KEY_VAR;
use crate::member::identity;
use crate::store::team::Team;

/// The key member `name` verifies the lead's messages with, as a reader here sees it.
pub(crate) fn verify_key(team: &Team, config: &TeamConfig, name: &str) -> Option<VerifyKey> {
    let text = match identity::own_supervisor(team.home(), team.name(), name) {
        Some(supervisor) => process::environment_value(supervisor, KEY_VAR),
        None => config.member(name)?.lead_verify_key.clone(),
    };
    let text = text.filter(|t| !t.is_empty())?;
    match VerifyKey::parse(&text) {
        Ok(key) => Some(key),
        Err(err) => {
            // A key that cannot be read verifies nothing: everything from the lead is forged.
            tracing::warn!("{name}'s verify key: {err}");
            Some(VerifyKey::unusable())
        }
    }
}

/// A judge of what arrives for member `name`. With `delivered`, every `msg_id` already in its
/// history counts as seen: an entry coming back is a replay.
pub(crate) fn judge(
    team: &Team,
    config: &TeamConfig,
    name: &str,
    delivered: bool,
) -> Result<Judge> {
    let mut judge = Judge::new(verify_key(team, config, name), config.lead_name());
    if delivered && judge.key.is_some() {
        for message in team.mailbox(name).history()? {
            judge.saw(&message.id());
        }
    }
    Ok(judge)
}

/// One judge per member, made when first needed: for readers that follow several inboxes.
pub(crate) struct Judges<'a> {
    team: &'a Team,
    config: &'a TeamConfig,
    by_member: HashMap<String, Judge>,
}

impl<'a> Judges<'a> {
    pub(crate) fn new(team: &'a Team, config: &'a TeamConfig) -> Self {
        Self {
            team,
            config,
            by_member: HashMap::new(),
        }
    }

    /// The verdict on `message` in `to`'s inbox or history.
    pub(crate) fn judge(&mut self, to: &str, message: &InboxMessage) -> Verdict {
        self.by_member
            .entry(to.to_owned())
            .or_insert_with(|| {
                Judge::new(
                    verify_key(self.team, self.config, to),
                    self.config.lead_name(),
                )
            })
            .judge(message)
    }
}
