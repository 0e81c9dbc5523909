//! The rest of the program's one way to a team's members wherever they run (docs/ARCHITECTURE.md,
//! "Layers" and "Across machines"), and the one answer to what the member layer asks of a team
//! that may span hosts (`member::reach::Reach`): which host's signing agent signs for a teammate.
//! Every process hands it down: commands, supervisors, the dashboard and the node alike.

use crate::cluster::sign;
use crate::error::Result;
use crate::format::config::{Member, TeamConfig};
use crate::format::message::InboxMessage;
use crate::member::reach::Reach;
use crate::member::signer;
use crate::store::node::Reach as Sight;
use crate::store::paths::Home;
use crate::store::team::Team;

/// Every host the members of this home's teams run on, as this host reaches them: itself, and
/// the others through their nodes (one node serves one home). A team on one host only ever meets
/// this host's part.
#[derive(Debug, Clone)]
pub(crate) struct Fleet {
    home: Home,
}

impl Fleet {
    pub(crate) fn of(home: &Home) -> Self {
        Self { home: home.clone() }
    }
}

impl Reach for Fleet {
    /// This host's agent signs, unless the teammate's record names another host as the one that
    /// keyed it (`keyHost`); that host's node then signs with its agent.
    fn sign(
        &self,
        team: &Team,
        config: &TeamConfig,
        to: &Member,
        key: &str,
        message: &InboxMessage,
    ) -> Result<String> {
        let elsewhere = to
            .key_host
            .as_deref()
            .filter(|host| Sight::look(&self.home).is_remote(Some(host)));
        match elsewhere {
            None => signer::sign(
                &self.home,
                team.name(),
                config.lead_name(),
                &to.name,
                key,
                message,
            ),
            Some(host) => sign::sign(&self.home, host, team.name(), &to.name, message),
        }
    }
}
