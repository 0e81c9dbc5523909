//! The lead's side's keys and signatures (docs/ARCHITECTURE.md, "Signed lead messages"): a key
//! pair for each teammate at launch, and the one way a message goes into a member's inbox from
//! the commands. A message from the lead, `user` or `system` to a member that verifies the lead's
//! messages is signed by the team's signing agent on the way, or not written at all. Every such
//! write goes through here: plain messages and broadcasts, prompts, shutdown requests (`down`'s
//! too), plan answers, task assignments. A member that has ended reads nothing more: a write from
//! the lead's side to it is refused saying so (exit 3), before its signing could say something
//! less to the point about the signing agent, which leaves once no member it signs for is live.
//!
//! Which agent signs is the caller's [`Reach`] to say (the layer above answers it: in a team across
//! machines a teammate's key may be held by another machine's agent); every function here that
//! writes takes one, so no lead-side write can go out without it.

use std::cell::LazyCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::base::clock;
use crate::base::text::derive_summary;
use crate::error::{Error, Result};
pub use crate::format::config::{Member, State, TeamConfig};
use crate::format::message::{InboxMessage, check_text_size};
use crate::format::notify::Notify;
use crate::format::permission_rule::Rules;
use crate::format::signature::{self, FIELD};
pub use crate::format::structured::Structured;
use crate::launch::keys;
use crate::member::liveness::{self, Observed, Seen};
use crate::member::processes::Snapshot;
use crate::member::reach::Reach;
use crate::member::signer;
use crate::peer::Request;
use crate::policy::{Caller, PERSON};
use crate::protocol::exchange;
use crate::store::paths::Home;
use crate::store::team::Team;

/// A new key pair for teammate `member` of `team` (led by `lead`), made now, at its launch: the
/// team's signing agent keeps the private key, and answers the member's permission asks `rules`
/// match (paths in `cwd`); the public key is returned, for [`keys::apply`]. Fails when no key
/// pair can be made: a teammate is never launched without one.
pub fn make_key(
    home: &Home,
    team: &str,
    lead: &str,
    member: &str,
    rules: &Rules,
    cwd: &Path,
    notify: Option<&Notify>,
) -> Result<String> {
    let ask = signer::Ask::Create {
        team: team.to_owned(),
        member: member.to_owned(),
        // Claude Code refuses entries older than this less 2 minutes: the moment of launch.
        since_ms: clock::now_ms(),
        rules: rules.clone(),
        cwd: cwd.to_path_buf(),
        notify: notify.cloned(),
    };
    signer::create_key(home, lead, &ask)
}

/// Gives teammate `member` a new key pair ([`make_key`]): its public key goes into its argv,
/// `env` and config.json's copy.
pub fn give_key(
    home: &Home,
    team: &str,
    lead: &str,
    member: &mut Member,
    env: &mut BTreeMap<String, String>,
) -> Result<()> {
    // A spawned member has no rules: every ask it makes is asked.
    let cwd = PathBuf::from(&member.cwd);
    let key = make_key(
        home,
        team,
        lead,
        &member.name,
        &Rules::default(),
        &cwd,
        None,
    )?;
    keys::apply(member, env, &key);
    Ok(())
}

/// Signs `message` for member `to` if it must be: it speaks for the lead and `to` has a key.
/// The agent that holds the key signs, as `reach` finds it. Fails when it must be signed and
/// cannot be (the agent is gone, holds no key for `to`, or cannot be reached); when `to` has gone
/// meanwhile without a record of its ending, that it has ended is what is said.
pub fn seal(
    team: &Team,
    reach: &dyn Reach,
    config: &TeamConfig,
    to: &str,
    message: &mut InboxMessage,
) -> Result<()> {
    let Some(member) = config.member(to) else {
        return Ok(());
    };
    let Some(key) = member.lead_verify_key.as_deref() else {
        return Ok(());
    };
    let lead = config.lead_name();
    if !signature::speaks_for_lead(message.from(), lead) {
        return Ok(());
    }
    let lead_sig = reach
        .sign(team, config, member, key, message)
        .map_err(|err| gone_unrecorded(team, reach, to).unwrap_or(err))?;
    message.set_field(FIELD, lead_sig.into());
    Ok(())
}

/// Signs a message for a peer socket served in member `member`'s pane of `team` (its supervisor's,
/// or a listener there: the connection says which, never a registry entry) if it must be: it is
/// from the lead's side and that member verifies the lead's messages. The member's supervisor
/// stores it as this same entry (its id, time, sender, text and summary), and only if the
/// signature checks.
pub(crate) fn seal_peer_request(
    team: &Team,
    reach: &dyn Reach,
    member: &str,
    request: &mut Request,
) -> Result<()> {
    let config = team.load()?;
    let summary = request
        .summary
        .clone()
        .unwrap_or_else(|| derive_summary(&request.text));
    let mut message = InboxMessage::new(&request.from, &request.text, Some(&summary), None);
    message.set_id(&request.msg_id);
    seal(team, reach, &config, member, &mut message)?;
    if let Some(lead_sig) = message.fields().get(FIELD).and_then(Value::as_str) {
        request.summary = Some(summary);
        request.timestamp = Some(message.timestamp().to_owned());
        request.lead_sig = Some(lead_sig.to_owned());
    }
    Ok(())
}

/// Refuses a message from `from` to member `to` when `to` has ended, as config.json records it
/// and no process of its run is seen running (`liveness::has_ended`: a recorded end is a claim any
/// member can write), and `from` speaks for the lead (every sender, for `send`): nobody will read
/// it (exit 3, how and when it ended). Asked before anything the message would change is changed
/// (a task assigned).
pub fn refuse_if_ended(team: &Team, config: &TeamConfig, from: &str, to: &str) -> Result<()> {
    if !signature::speaks_for_lead(from, config.lead_name()) {
        return Ok(());
    }
    refuse_any_if_ended(team, config, to)
}

/// [`refuse_if_ended`] whoever sends.
pub(crate) fn refuse_any_if_ended(team: &Team, config: &TeamConfig, to: &str) -> Result<()> {
    let Some(member) = config.member(to) else {
        return Ok(());
    };
    match member.state {
        Some(state) if liveness::has_ended(team, member, &LazyCell::new(Snapshot::take)) => {
            Err(ended(member, Seen::Recorded(state)))
        }
        _ => Ok(()),
    }
}

/// The refusal of a message to `member`, which has ended (`seen`): how, and when.
fn ended(member: &Member, seen: Seen) -> Error {
    let how = match (seen, member.exit_code) {
        (Seen::Recorded(State::Exited | State::Failed), Some(code)) => {
            format!("{} with status {code}", seen.label())
        }
        (Seen::ProcessVanished, _) => "vanished: its supervisor is gone".to_owned(),
        (Seen::PaneVanished, _) => "vanished: its pane is gone".to_owned(),
        _ => seen.label().to_owned(),
    };
    let when = member
        .ended_at
        .map(|at| format!(", {}", clock::ago(at, clock::now_ms())))
        .unwrap_or_default();
    Error::not_found(format!(
        "{} has ended: {how}{when}; nothing was sent",
        member.name
    ))
    .with_hint(format!(
        "`swarm log {}` shows what it printed; `swarm status` shows who still runs",
        member.name
    ))
}

/// Why a message to `to` could not be signed when its member has gone without a record of its
/// ending (its supervisor or pane vanished): the signing agent leaves once no member it signs for
/// is live. Looked at only once signing has failed, so a write costs no look at the processes.
fn gone_unrecorded(team: &Team, reach: &dyn Reach, to: &str) -> Option<Error> {
    let observed = Observed::take(team, reach).ok()?;
    let member = observed.config.member(to)?;
    let seen = observed.seen(member);
    (!seen.is_live() && seen != Seen::NotStarted).then(|| ended(member, seen))
}

/// Appends `message` to `to`'s inbox, signed if it must be; what was written. One from the
/// lead's side to a member that has ended is refused ([`refuse_if_ended`]).
fn post(
    team: &Team,
    reach: &dyn Reach,
    config: &TeamConfig,
    to: &str,
    message: &InboxMessage,
) -> Result<InboxMessage> {
    refuse_if_ended(team, config, message.from(), to)?;
    let mut message = message.clone();
    seal(team, reach, config, to, &mut message)?;
    team.mailbox(to).append(std::slice::from_ref(&message))?;
    Ok(message)
}

/// Sends a plain message from `from` (a member, the lead's side, or `user`) to member `to`,
/// signed if it must be: a notice swarm writes on the sender's behalf.
pub fn tell(
    team: &Team,
    reach: &dyn Reach,
    config: &TeamConfig,
    from: &str,
    to: &str,
    text: &str,
) -> Result<InboxMessage> {
    check_text_size(text)?;
    let color = config.member(from).and_then(|m| m.color.clone());
    let message = InboxMessage::new(from, text, Some(&derive_summary(text)), color.as_deref());
    post(team, reach, config, to, &message)
}

/// Sends protocol message `message` from `caller` to `to` under every protocol rule
/// ([`exchange::envelope`]), signed if it must be.
pub fn request(
    team: &Team,
    reach: &dyn Reach,
    config: &TeamConfig,
    caller: &Caller,
    to: &str,
    message: &Structured,
) -> Result<InboxMessage> {
    let envelope = exchange::envelope(team, config, caller, to, message)?;
    post(team, reach, config, to, &envelope)
}

/// Writes the team `launch/prepare.rs` made, with an inbox for each member and for `user`, and
/// queues each member's prompt as its first message, from the lead (`init`, `up`). `replace` rewrites an existing team's config; inboxes,
/// history and logs are kept.
pub fn create(home: &Home, reach: &dyn Reach, config: &TeamConfig, replace: bool) -> Result<Team> {
    // A removal of a team of this name that a killed `rm` left half-done is finished first, so
    // the new team inherits nothing of the old one, its task list least of all.
    crate::store::removal::finish_interrupted(home);
    let team = Team::create(home, config, replace)?;
    // The person at the keyboard has an inbox in every team, for replies to `user`.
    team.mailbox(PERSON).ensure()?;
    for member in &config.members {
        if let Some(prompt) = &member.prompt {
            deliver_prompt(&team, reach, config, &member.name, prompt)?;
        }
    }
    Ok(team)
}

/// Queues a prompt from the lead, signed for a member that verifies the lead's messages, unless
/// the same prompt is already waiting unread (an `init` before `up`). A member with a key gets it
/// signed with its new key, in place of any copy it could not verify. Returns the `msg_id` of the
/// message it queued, if it queued one.
pub fn deliver_prompt(
    team: &Team,
    reach: &dyn Reach,
    config: &TeamConfig,
    member: &str,
    prompt: &str,
) -> Result<Option<String>> {
    check_text_size(prompt)?;
    let lead = config.lead_name();
    let summary = derive_summary(prompt);
    let mut message = InboxMessage::new(lead, prompt, Some(&summary), None);
    seal(team, reach, config, member, &mut message)?;
    let keyed = message.fields().contains_key(FIELD);
    let id = message.id().into_owned();
    team.mailbox(member).update(|unread| {
        let same = |m: &InboxMessage| m.from() == lead && m.text() == prompt;
        if keyed {
            unread.retain(|m| !same(m));
        } else if unread.iter().any(same) {
            return Ok((None, false));
        }
        unread.push(message.clone());
        Ok((Some(id.clone()), true))
    })
}
