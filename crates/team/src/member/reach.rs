//! What this layer asks the one above about a team that may span machines (docs/ARCHITECTURE.md,
//! "Layers"): where each member runs, and which signing agent signs a lead-side message for a
//! teammate. The answer is
//! `cluster::Fleet`; this layer never reaches another machine itself. A caller hands it
//! down, so there is no answer a caller could forget to set: nothing here compiles without one.

use std::collections::BTreeMap;

use crate::error::Result;
use crate::format::config::{Member, TeamConfig};
use crate::format::message::InboxMessage;
use crate::store::team::Team;

/// Where a member runs, as this machine can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Site {
    /// On this machine: what it is doing is judged by its processes and its pane, which are this
    /// machine's to signal and kill.
    Here,
    /// On another machine: its record is what that machine last said, and holds while that
    /// machine is `heard` from; its pids and pane mean nothing here.
    Away { heard: bool },
}

/// Where each member of a team runs, as one look tells: one answer for a whole observation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sites {
    /// The members on other machines, each with whether that machine is heard from.
    away: BTreeMap<String, bool>,
}

impl Sites {
    /// Every member here but those `away` names, each with whether its machine is heard from.
    pub fn with_away(away: impl IntoIterator<Item = (String, bool)>) -> Self {
        Self {
            away: away.into_iter().collect(),
        }
    }

    pub fn of(&self, member: &Member) -> Site {
        match self.away.get(&member.name) {
            Some(&heard) => Site::Away { heard },
            None => Site::Here,
        }
    }

    pub(crate) fn is_here(&self, member: &Member) -> bool {
        self.of(member) == Site::Here
    }
}

/// What of a team lies beyond this layer's reach, answered by the layer above.
pub trait Reach: Send + Sync {
    /// Where the members of `config` run, looked at now.
    fn sites(&self, config: &TeamConfig) -> Sites;

    /// The `lead_sig` of `message`, which speaks for the lead, for teammate `to` of `team`
    /// (`config` is its roster), whose record carries its verify key: made by the signing agent
    /// that holds the key. Fails with one line saying why and that nothing was sent.
    fn sign(
        &self,
        team: &Team,
        config: &TeamConfig,
        to: &Member,
        key: &str,
        message: &InboxMessage,
    ) -> Result<String>;
}

/// A team on this machine alone, for this layer's own tests: every member here, signed for by
/// this machine's agent.
#[cfg(test)]
pub(crate) struct Alone;

#[cfg(test)]
impl Reach for Alone {
    fn sites(&self, _config: &TeamConfig) -> Sites {
        Sites::default()
    }

    fn sign(
        &self,
        team: &Team,
        config: &TeamConfig,
        to: &Member,
        key: &str,
        message: &InboxMessage,
    ) -> Result<String> {
        crate::member::signer::sign(
            team.home(),
            team.name(),
            config.lead_name(),
            &to.name,
            key,
            message,
        )
    }
}
