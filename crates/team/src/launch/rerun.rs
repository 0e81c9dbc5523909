//! What a new run of a team does with what its previous run left unread (docs/ARCHITECTURE.md,
//! "Launching a team"): it goes to history, so no member starts with an old run's messages, such
//! as the shutdown request `down` sent it.

use crate::base::clock;
use crate::base::text::count;
use crate::error::Result;
use crate::format::config::Member;
use crate::format::message::InboxMessage;
use crate::store::team::Team;

/// Moves to history the unread messages of the members of `team` that `chosen` picks, when the
/// team ran before (some member has a recorded state). With `before`, only those written before that moment, in ms
/// since the epoch: on another host, this run's first messages (prompts) may be waiting already.
pub fn archive_previous_run(
    team: &Team,
    chosen: impl Fn(&Member) -> bool,
    before: Option<u64>,
) -> Result<()> {
    let Ok(config) = team.load() else {
        return Ok(());
    };
    if config.members.iter().all(|m| m.state.is_none()) {
        return Ok(());
    }
    let old = |message: &InboxMessage| {
        before.is_none_or(|before| {
            clock::parse_ms(message.timestamp()).is_none_or(|written| written < before)
        })
    };
    for member in config.members.iter().filter(|m| chosen(m)) {
        let archived = team.mailbox(&member.name).consume(None, old)?;
        if !archived.is_empty() {
            tracing::info!(
                "moved {} of {} from the previous run to history",
                count(archived.len(), "unread message", "unread messages"),
                member.name
            );
        }
    }
    Ok(())
}
