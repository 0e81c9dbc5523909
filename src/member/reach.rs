//! What this layer asks the one above about a team that may span machines (docs/ARCHITECTURE.md,
//! "Layers"): which signing agent signs a lead-side message for a teammate. The answer is
//! `cluster::Fleet`; this layer never reaches another machine itself. A caller hands it
//! down, so there is no answer a caller could forget to set: nothing here compiles without one.

use crate::error::Result;
use crate::format::config::{Member, TeamConfig};
use crate::format::message::InboxMessage;
use crate::store::team::Team;

/// What of a team lies beyond this layer's reach, answered by the layer above.
pub(crate) trait Reach: Send + Sync {
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
