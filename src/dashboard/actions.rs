//! What the person does from the dashboard, through the paths the commands use and under the same
//! policy: `s` and `S` are `swarm send`, `a` and `r` are `plan approve|reject` (or `shutdown
//! approve|reject`, or `permission allow|deny`), `A` is `permission allow --always`, `x` is
//! `swarm stop`, wherever the member runs. The caller is resolved from config.json for each
//! action, as every command resolves it (docs/ARCHITECTURE.md, "Who may do what").

use crate::base::names::Name;
use crate::cluster::fleet::Fleet;
use crate::error::Result;
use crate::member::answer::{self, PlanVerdict};
use crate::member::permission::{self, Verdict};
use crate::member::send::{self, Outgoing};
use crate::policy::{Asked, Caller, Whereabouts};
use crate::protocol::rules::Recipient;
use crate::store::team::Team;

use super::decisions::{Decision, Kind};

/// Who the dashboard acts as: where it runs and the name it was asked to act as, if any.
#[derive(Debug, Clone)]
pub(crate) struct ActingAs {
    pub(crate) whereabouts: Whereabouts,
    pub(crate) asked: Option<Asked>,
}

/// One thing the person asked for.
#[derive(Debug, Clone)]
pub(crate) enum Action {
    Send {
        to: String,
        text: String,
    },
    Broadcast {
        text: String,
    },
    Answer {
        decision: Decision,
        approve: bool,
        /// A permission ask's rules kept (`A`).
        always: bool,
        /// The feedback or reason of a rejection.
        why: Option<String>,
    },
    Stop {
        name: String,
    },
}

/// Does `action` as `who`; returns what happened, in a line.
pub(crate) fn perform(
    team: &Team,
    fleet: &Fleet,
    who: &ActingAs,
    action: Action,
) -> Result<String> {
    let caller = |config: &_| Caller::resolve(config, &who.whereabouts, who.asked.as_ref());
    match action {
        Action::Send { to, text } => {
            Name::parse("member", &to)?;
            deliver(team, fleet, who, Recipient::Member(&to), &text)
        }
        Action::Broadcast { text } => deliver(team, fleet, who, Recipient::Broadcast, &text),
        Action::Answer {
            decision,
            approve,
            always,
            why,
        } => {
            let config = team.load()?;
            let caller = caller(&config)?;
            let verdict = if approve { "approved" } else { "rejected" };
            let id = &decision.request_id;
            match decision.kind {
                Kind::Plan => {
                    let to = answer::plan(
                        team,
                        fleet,
                        &config,
                        &caller,
                        id,
                        PlanVerdict {
                            approved: approve,
                            permission_mode: None,
                            feedback: why,
                        },
                    )?;
                    Ok(format!("{verdict} {to}'s plan ({id})"))
                }
                Kind::Shutdown => {
                    let rejection = (!approve).then(|| why.unwrap_or_default());
                    answer::shutdown(team, fleet, &config, &caller, id, rejection)?;
                    Ok(format!("{verdict} shutdown request {id}"))
                }
                Kind::Permission => {
                    let verdict = if approve {
                        Verdict::Allow { always }
                    } else {
                        Verdict::Deny { reason: why }
                    };
                    let answer = permission::answer(team, fleet, &config, &caller, id, verdict)?;
                    let word = match (answer.allowed, answer.always) {
                        (true, true) => "allowed always",
                        (true, false) => "allowed",
                        (false, _) => "denied",
                    };
                    Ok(format!("{word} {}'s {} ({id})", answer.member, answer.tool))
                }
            }
        }
        Action::Stop { name } => {
            let name = Name::parse("member", &name)?;
            let stopped = fleet.stop(team, Some(&name), caller)?;
            let states: Vec<String> = stopped
                .iter()
                .map(|(name, state)| format!("{name} {state}"))
                .collect();
            Ok(if states.is_empty() {
                format!("{name} had already ended")
            } else {
                states.join(", ")
            })
        }
    }
}

/// `send TO TEXT` as `who`: what `s` and `S` do.
fn deliver(
    team: &Team,
    fleet: &Fleet,
    who: &ActingAs,
    recipient: Recipient<'_>,
    text: &str,
) -> Result<String> {
    let config = team.load()?;
    let caller = Caller::resolve(&config, &who.whereabouts, who.asked.as_ref())?;
    let outgoing = Outgoing {
        text,
        structured: send::classify(text)?,
        summary: None,
    };
    let sent = send::send(team, fleet, &config, &caller, recipient, outgoing)?;
    Ok(format!("sent {} to {}", sent.id, sent.to.join(", ")))
}
