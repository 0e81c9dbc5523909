//! Permission asks (docs/ARCHITECTURE.md, "Permission asks"): what the team's teammates asked the
//! lead to let them do (Claude Code's `permission_request` and `sandbox_permission_request`, in the
//! lead's inbox or history) and nobody has answered yet, and the lead's side's answer to one,
//! sent signed as every lead message is (`member/seal.rs`) and recorded once
//! (`store/permissions.rs`).

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use crate::base::clock;
use crate::error::{Error, Result};
use crate::format::config::TeamConfig;
use crate::format::message::InboxMessage;
use crate::format::settings::PermissionMode;
use crate::format::structured::{
    PermissionGrant, PermissionRequest, PermissionResponse, PermissionVerdict,
    SandboxPermissionRequest, SandboxPermissionResponse, Structured,
};
use crate::member::liveness::{Observed, Seen};
use crate::member::reach::Reach;
use crate::member::seal;
use crate::policy::{self, Action, Caller};
use crate::protocol::exchange;
use crate::store::durable::LineOffset;
use crate::store::permissions::{self, PermissionAnswer};
use crate::store::team::Team;

/// The tool name a sandbox host ask is listed under.
pub(crate) const NETWORK: &str = "network";

/// The `permission_updates` entry that sets the teammate's permission mode.
const SET_MODE: &str = "setMode";

/// What a teammate asked for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Request {
    /// To use a tool.
    Tool(PermissionRequest),
    /// To reach a network host from its sandbox.
    Host(SandboxPermissionRequest),
}

/// One ask, as the lead's inbox or history holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Ask {
    pub(crate) request: Request,
    /// When the message arrived, as its envelope says (RFC 3339).
    pub asked_at: String,
}

impl Ask {
    pub fn request_id(&self) -> &str {
        match &self.request {
            Request::Tool(r) => &r.request_id,
            Request::Host(r) => &r.request_id,
        }
    }

    /// The member that asks.
    pub fn member(&self) -> &str {
        match &self.request {
            Request::Tool(r) => &r.agent_id,
            Request::Host(r) => &r.worker_name,
        }
    }

    /// The tool it asks for; [`NETWORK`] for a host.
    pub fn tool(&self) -> &str {
        match &self.request {
            Request::Tool(r) => &r.tool_name,
            Request::Host(_) => NETWORK,
        }
    }

    /// The tool's input whole (`{"host"}` for a host).
    pub fn input(&self) -> Value {
        match &self.request {
            Request::Tool(r) => r.input.clone().unwrap_or(Value::Null),
            Request::Host(r) => json!({"host": r.host_pattern.host}),
        }
    }

    pub fn description(&self) -> Option<&str> {
        match &self.request {
            Request::Tool(r) => r.description.as_deref(),
            Request::Host(_) => None,
        }
    }

    /// The rules Claude Code suggests keeping, so it is not asked again.
    pub fn suggestions(&self) -> &[Value] {
        match &self.request {
            Request::Tool(r) => &r.permission_suggestions,
            Request::Host(_) => &[],
        }
    }

    /// What it would do, on one short line, however large the input.
    pub fn summary(&self) -> String {
        match &self.request {
            Request::Tool(r) => r.what().unwrap_or_default(),
            Request::Host(r) => format!("reach {}", r.host_pattern.host),
        }
    }

    pub fn asked_at_ms(&self) -> Option<u64> {
        clock::parse_ms(&self.asked_at)
    }

    /// The ask in `message`, a message in the lead's mailbox, if it is one. An ask whose envelope
    /// is not from the member it names is no ask: Claude Code's lead drops it too.
    fn of(message: &InboxMessage) -> Option<Self> {
        let request = match message.structured()? {
            Structured::PermissionRequest(r) => Request::Tool(r),
            Structured::SandboxPermissionRequest(r) => Request::Host(r),
            _ => return None,
        };
        let ask = Self {
            request,
            asked_at: message.timestamp().to_owned(),
        };
        (ask.member() == message.from()).then_some(ask)
    }
}

/// Every ask in the lead's inbox (read or not) and history, oldest first, each once.
fn every_ask(team: &Team, config: &TeamConfig) -> Result<Vec<Ask>> {
    let mailbox = team.mailbox(config.lead_name());
    let mut messages = mailbox.history()?;
    messages.extend(mailbox.messages()?);
    let mut seen = HashSet::new();
    Ok(messages
        .iter()
        .filter_map(Ask::of)
        .filter(|ask| seen.insert(ask.request_id().to_owned()))
        .collect())
}

/// Whether `member` has ended (or left the roster): what it asked is withdrawn.
fn has_ended(observed: &Observed, member: &str) -> bool {
    match observed.config.member(member) {
        None => true,
        Some(m) => {
            let seen = observed.seen(m);
            seen != Seen::NotStarted && !seen.is_live()
        }
    }
}

/// The asks nobody has answered, of members that have not ended, oldest first.
pub fn pending(team: &Team, reach: &dyn Reach) -> Result<Vec<Ask>> {
    pending_as_seen(team, &Observed::take(team, reach)?)
}

/// [`pending`], by a look already taken (`status` and `top` take one for everything they show).
pub fn pending_as_seen(team: &Team, observed: &Observed) -> Result<Vec<Ask>> {
    Ok(of_live_members(
        unanswered(team, &observed.config)?,
        observed,
    ))
}

/// Of unanswered `asks`, those whose members have not ended, as `observed` sees them.
pub(crate) fn of_live_members(asks: Vec<Ask>, observed: &Observed) -> Vec<Ask> {
    asks.into_iter()
        .filter(|ask| !has_ended(observed, ask.member()))
        .collect()
}

/// The lead's side's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Allowed; `always` keeps the ask's suggestions as rules.
    Allow {
        always: bool,
    },
    /// Allowed, and the teammate's permission mode set to `mode` by the answer: Claude Code's
    /// `setMode` update, which a teammate applies from its lead's answer (it drops every
    /// `mode_set_request` from its inbox).
    AllowInMode {
        always: bool,
        mode: PermissionMode,
    },
    Deny {
        reason: Option<String>,
    },
}

impl Verdict {
    /// Whether it allows: the suggestions kept, and the mode set.
    fn allows(&self) -> Option<(bool, Option<PermissionMode>)> {
        match self {
            Self::Allow { always } => Some((*always, None)),
            Self::AllowInMode { always, mode } => Some((*always, Some(*mode))),
            Self::Deny { .. } => None,
        }
    }
}

/// Answers ask `request_id` as `caller`: refused (exit 2) to a teammate, for an ask already
/// answered or one whose member has ended; not found (exit 3) for an id no ask has. Sends Claude
/// Code's answer, signed, to the member that asked, and records it.
pub fn answer(
    team: &Team,
    reach: &dyn Reach,
    config: &TeamConfig,
    caller: &Caller,
    request_id: &str,
    verdict: Verdict,
) -> Result<PermissionAnswer> {
    policy::allow(config, caller, Action::AnswerPermission)?;
    let lead = config.lead_name().to_owned();
    let ask = every_ask(team, config)?
        .into_iter()
        .find(|ask| ask.request_id() == request_id)
        .ok_or_else(|| {
            Error::not_found(format!(
                "there is no permission request {request_id} in {lead}'s inbox or history"
            ))
            .with_hint("`swarm permission list` shows the asks waiting for an answer")
        })?;
    if let (Request::Host(_), Some((always, mode))) = (&ask.request, verdict.allows()) {
        if always {
            return Err(Error::usage(format!(
                "{request_id} asks to reach a host: there is nothing to allow always (allow it without --always)"
            )));
        }
        if mode.is_some() {
            return Err(Error::usage(format!(
                "{request_id} asks to reach a host: its answer carries no permission mode (allow it without --mode)"
            )));
        }
    }
    if let Verdict::AllowInMode {
        mode: PermissionMode::BypassPermissions,
        ..
    } = verdict
    {
        return Err(Error::usage(
            "Claude Code takes bypassPermissions from its lead only when it was launched in that mode, and then it is in it already: nothing would change",
        ));
    }
    let member = ask.member().to_owned();
    let observed = Observed::of(team, config.clone(), reach)?;
    if has_ended(&observed, &member) {
        return Err(Error::usage(format!(
            "{member} has ended: its permission request {request_id} is withdrawn"
        )));
    }
    send_answer(
        team,
        reach,
        &observed.config,
        caller,
        &ask,
        &verdict,
        caller.name().to_string(),
    )
}

/// Sets `member`'s permission mode to `mode` the one way Claude Code takes a mode from its lead:
/// with the answer to an ask. Allows `member`'s oldest pending ask to use a tool, its answer
/// carrying the mode ([`Verdict::AllowInMode`]); when none waits, nothing is sent and it is not
/// found (exit 3), as a `mode_set_request` would be dropped unread.
pub fn set_mode(
    team: &Team,
    reach: &dyn Reach,
    config: &TeamConfig,
    caller: &Caller,
    member: &str,
    mode: PermissionMode,
) -> Result<PermissionAnswer> {
    policy::allow(config, caller, Action::AnswerPermission)?;
    if config.member(member).is_none() {
        return Err(Error::not_found(format!(
            "{member} is not a member of team {}",
            config.name
        )));
    }
    let observed = Observed::of(team, config.clone(), reach)?;
    let oldest = pending_as_seen(team, &observed)?
        .into_iter()
        .find(|ask| ask.member() == member && matches!(ask.request, Request::Tool(_)))
        .ok_or_else(|| {
            Error::not_found(format!(
                "{member} has no permission ask waiting: Claude Code takes a new mode only with the answer to one, and drops a mode sent on its own"
            ))
            .with_hint(
                "`swarm wait --decision` returns when one waits; `swarm permission allow ID --mode MODE` answers a given one",
            )
            .with_reason("none_waiting")
        })?;
    answer(
        team,
        reach,
        config,
        caller,
        oldest.request_id(),
        Verdict::AllowInMode {
            always: false,
            mode,
        },
    )
}

/// The asks in the lead's inbox and history nobody has answered, oldest first, whether or not
/// their members still run: what a rule may answer.
pub(crate) fn unanswered(team: &Team, config: &TeamConfig) -> Result<Vec<Ask>> {
    let answered: HashSet<String> = permissions::answers(team.paths())?
        .into_iter()
        .map(|a| a.request_id)
        .collect();
    Ok(every_ask(team, config)?
        .into_iter()
        .filter(|ask| !answered.contains(ask.request_id()))
        .collect())
}

/// The unanswered asks for a reader that keeps looking (the signing agent's rules thread): each
/// look reads the lead's inbox, which holds only what nobody has taken from it, and of its history
/// and the record of answers only what they gained since the look before. A lead with a long
/// history costs no more to look at than one without.
#[derive(Debug, Default)]
pub(crate) struct AskFeed {
    history_at: u64,
    answers_at: LineOffset,
    answered: HashSet<String>,
    /// Every ask read so far, by request id.
    known: HashSet<String>,
    /// The asks read and not answered, in the order they were first read.
    waiting: Vec<Ask>,
}

impl AskFeed {
    /// What [`unanswered`] would return now, whether or not the members still run.
    pub(crate) fn unanswered(&mut self, team: &Team, config: &TeamConfig) -> Result<Vec<Ask>> {
        let mailbox = team.mailbox(config.lead_name());
        // The inbox first: a message taken from it after this read is in the history read next.
        let unread = mailbox.messages()?;
        let (mut delivered, next) = mailbox.history_since(self.history_at)?;
        self.history_at = if next < self.history_at {
            // Begun again: what it holds now is read whole; an ask read before is known.
            let (whole, next) = mailbox.history_since(0)?;
            delivered = whole;
            next
        } else {
            next
        };
        for ask in delivered.iter().chain(&unread).filter_map(Ask::of) {
            if self.known.insert(ask.request_id().to_owned()) {
                self.waiting.push(ask);
            }
        }
        let (answers, next) = permissions::answers_since(team.paths(), self.answers_at)?;
        if next < self.answers_at {
            // The record was begun again: only what it holds now is answered.
            self.answered.clear();
        }
        self.answers_at = next;
        self.answered
            .extend(answers.into_iter().map(|answer| answer.request_id));
        let answered = &self.answered;
        self.waiting
            .retain(|ask| !answered.contains(ask.request_id()));
        Ok(self.waiting.clone())
    }
}

/// Answers `ask` as team rule `rule` says, from the lead (docs/ARCHITECTURE.md, "Permission
/// rules"): the same signed answer and the same record as `permission allow|deny`, recorded as
/// given by `rule: <rule>`.
pub(crate) fn answer_by_rule(
    team: &Team,
    reach: &dyn Reach,
    config: &TeamConfig,
    ask: &Ask,
    allowed: bool,
    rule: &str,
) -> Result<PermissionAnswer> {
    let lead = Caller::member(config, config.lead_name())?;
    let verdict = if allowed {
        Verdict::Allow { always: false }
    } else {
        Verdict::Deny {
            reason: Some(format!("the team's rule {rule} denies it")),
        }
    };
    send_answer(
        team,
        reach,
        config,
        &lead,
        ask,
        &verdict,
        format!("rule: {rule}"),
    )
}

/// Sends Claude Code's answer to `ask`, signed, from `caller`, and records it once as given by
/// `by`; the ask then leaves the lead's unread messages.
fn send_answer(
    team: &Team,
    reach: &dyn Reach,
    config: &TeamConfig,
    caller: &Caller,
    ask: &Ask,
    verdict: &Verdict,
    by: String,
) -> Result<PermissionAnswer> {
    let request_id = ask.request_id();
    let member = ask.member().to_owned();
    let answer = permissions::answer_once(team.paths(), request_id, || {
        let message = response(ask, verdict, caller);
        seal::request(team, reach, config, caller, &member, &message)?;
        let (allowed, always, reason) = match verdict {
            Verdict::Allow { always } | Verdict::AllowInMode { always, .. } => {
                (true, *always, None)
            }
            Verdict::Deny { reason } => (false, false, reason.clone()),
        };
        let answer = PermissionAnswer {
            request_id: request_id.to_owned(),
            member: member.clone(),
            tool: ask.tool().to_owned(),
            allowed,
            always,
            mode: verdict
                .allows()
                .and_then(|(_, mode)| mode)
                .map(|mode| mode.as_str().to_owned()),
            reason,
            by,
            at: clock::timestamp_now(),
        };
        Ok((answer.clone(), answer))
    })?;
    // The answer is sent, and it is what counts: an ask left unread is only clutter.
    let lead = config.lead_name();
    if let Err(err) = exchange::retire(team, lead, request_id) {
        tracing::warn!("answered {request_id}, but it stays unread in {lead}'s inbox: {err}");
    }
    Ok(answer)
}

/// Claude Code's answer to `ask`.
fn response(ask: &Ask, verdict: &Verdict, caller: &Caller) -> Structured {
    match (&ask.request, verdict) {
        (Request::Tool(request), Verdict::Allow { .. } | Verdict::AllowInMode { .. }) => {
            let updated_input = match &request.input {
                Some(Value::Object(input)) => input.clone(),
                _ => Map::new(),
            };
            let (always, mode) = verdict.allows().unwrap_or_default();
            let mut permission_updates = if always {
                request.permission_suggestions.clone()
            } else {
                Vec::new()
            };
            if let Some(mode) = mode {
                // The mode given, not one a suggestion names.
                permission_updates.retain(|update| update["type"] != SET_MODE);
                permission_updates.push(json!({
                    "type": SET_MODE, "mode": mode.as_str(), "destination": "session"
                }));
            }
            Structured::PermissionResponse(PermissionResponse {
                request_id: request.request_id.clone(),
                subtype: PermissionVerdict::Success,
                tool_use_id: request.tool_use_id.clone(),
                approved_request: None,
                response: Some(PermissionGrant {
                    updated_input: Some(updated_input),
                    permission_updates: Some(permission_updates),
                }),
                error: None,
            })
        }
        (Request::Tool(request), Verdict::Deny { reason }) => {
            let error = match reason {
                Some(reason) => format!("Permission denied by {caller}: {reason}"),
                None => format!("Permission denied by {caller}"),
            };
            Structured::PermissionResponse(PermissionResponse {
                request_id: request.request_id.clone(),
                subtype: PermissionVerdict::Error,
                tool_use_id: request.tool_use_id.clone(),
                approved_request: None,
                response: None,
                error: Some(error),
            })
        }
        (Request::Host(request), verdict) => {
            Structured::SandboxPermissionResponse(SandboxPermissionResponse {
                request_id: request.request_id.clone(),
                host: request.host_pattern.host.clone(),
                allow: verdict.allows().is_some(),
                timestamp: clock::timestamp_now(),
            })
        }
    }
}

/// Runs `send`, which sends `message` to member `to`, and when `message` answers a permission ask
/// (a `permission_response` or `sandbox_permission_response` given to `swarm send` as it is),
/// records the answer as [`answer`] does: once, or refused as already answered.
pub(crate) fn answering<R>(
    team: &Team,
    caller: &Caller,
    message: Option<&Structured>,
    to: &str,
    send: impl FnOnce() -> Result<R>,
) -> Result<R> {
    let (request_id, allowed, updates, reason) = match message {
        Some(Structured::PermissionResponse(r)) => (
            &r.request_id,
            r.subtype == PermissionVerdict::Success,
            r.response
                .as_ref()
                .and_then(|grant| grant.permission_updates.as_deref())
                .unwrap_or_default(),
            r.error.clone(),
        ),
        Some(Structured::SandboxPermissionResponse(r)) => (&r.request_id, r.allow, &[][..], None),
        _ => return send(),
    };
    let always = updates.iter().any(|update| update["type"] != SET_MODE);
    let mode = updates
        .iter()
        .rev()
        .find(|update| update["type"] == SET_MODE)
        .and_then(|update| update["mode"].as_str())
        .map(str::to_owned);
    permissions::answer_once(team.paths(), request_id, || {
        let sent = send()?;
        let tool = team
            .load()
            .and_then(|config| every_ask(team, &config))
            .ok()
            .and_then(|asks| asks.into_iter().find(|a| a.request_id() == request_id))
            .map_or_else(|| "-".to_owned(), |ask| ask.tool().to_owned());
        let answer = PermissionAnswer {
            request_id: request_id.clone(),
            member: to.to_owned(),
            tool,
            allowed,
            always,
            mode,
            reason,
            by: caller.name().to_string(),
            at: clock::timestamp_now(),
        };
        Ok((sent, answer))
    })
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::store::team::fixture;

    /// `member`'s ask `id`, as Claude Code writes it into the lead's inbox.
    fn ask(member: &str, id: &str) -> InboxMessage {
        let request = json!({
            "type": "permission_request", "request_id": id, "agent_id": member,
            "tool_name": "Bash", "tool_use_id": format!("toolu_{id}"), "description": "",
            "input": {"command": "make"}, "permission_suggestions": []
        });
        InboxMessage::new(member, &request.to_string(), None, None)
    }

    fn ids(asks: &[Ask]) -> Vec<&str> {
        asks.iter().map(Ask::request_id).collect()
    }

    fn recorded(team: &Team, id: &str) {
        permissions::answer_once(team.paths(), id, || {
            let answer = PermissionAnswer {
                request_id: id.into(),
                member: "bob".into(),
                tool: "Bash".into(),
                allowed: true,
                always: false,
                mode: None,
                reason: None,
                by: "team-lead".into(),
                at: "2026-11-26T08:00:00.000Z".into(),
            };
            Ok(((), answer))
        })
        .unwrap();
    }

    /// The feed reads on from where it was, and misses no ask: one in the inbox, one the lead took
    /// into its history between two looks, one in a history begun again; an answered ask leaves it,
    /// and each agrees with a whole read (`unanswered`).
    #[test]
    fn the_feed_of_asks_reads_only_what_is_new_and_misses_none() {
        let (_dir, team) = fixture::team(&["bob"]);
        let config = team.load().unwrap();
        let lead = team.mailbox("team-lead");
        let mut feed = AskFeed::default();
        let look = |feed: &mut AskFeed| {
            let fed = feed.unanswered(&team, &config).unwrap();
            let whole = unanswered(&team, &config).unwrap();
            assert_eq!(ids(&fed), ids(&whole), "the feed and a whole read differ");
            fed
        };
        let look_on = |feed: &mut AskFeed| feed.unanswered(&team, &config).unwrap();
        assert!(look(&mut feed).is_empty());

        lead.append(&[ask("bob", "perm-1")]).unwrap();
        assert_eq!(ids(&look(&mut feed)), ["perm-1"]);

        // The lead takes perm-1 and perm-2 (which arrived meanwhile) into its history; perm-3
        // waits in the inbox.
        lead.append(&[ask("bob", "perm-2")]).unwrap();
        lead.consume(None, |_| true).unwrap();
        lead.append(&[ask("bob", "perm-3")]).unwrap();
        assert_eq!(ids(&look(&mut feed)), ["perm-1", "perm-2", "perm-3"]);

        recorded(&team, "perm-1");
        recorded(&team, "perm-3");
        assert_eq!(ids(&look(&mut feed)), ["perm-2"]);

        // A history emptied and begun again with an ask of its own, shorter than before: the
        // feed still holds perm-2, which a whole read no longer finds.
        fs::write(
            lead.history_path(),
            format!(
                "{}\n",
                serde_json::to_string(&ask("bob", "perm-4")).unwrap()
            ),
        )
        .unwrap();
        assert_eq!(ids(&look_on(&mut feed)), ["perm-2", "perm-4"]);
        // An ask whose envelope is not from the member it names is none.
        let forged = InboxMessage::new("carol", ask("bob", "perm-6").text(), None, None);
        lead.append(&[ask("bob", "perm-5"), forged]).unwrap();
        assert_eq!(ids(&look_on(&mut feed)), ["perm-2", "perm-4", "perm-5"]);
    }
}
