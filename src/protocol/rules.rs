//! The protocol rules, enforced for every structured message however it is sent (`send` with raw
//! JSON, `shutdown`, `plan`, the supervisor): who may send each kind comes from `policy`, where it
//! may go and what it must name from here. Each refusal is exit status 2 with a clear message.

use crate::base::names::Name;
use crate::error::{Error, Result};
use crate::format::config::TeamConfig;
use crate::format::message::InboxMessage;
use crate::format::structured::{Structured, request_subject};
use crate::policy::{Action, Caller, allow, allow_own};
use crate::store::team::Team;

/// Where a message is going.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Recipient<'a> {
    Member(&'a str),
    Broadcast,
    Peer,
}

/// Refuses a structured message that breaks a rule; else the name it is sent under (the lead's,
/// when the person at the keyboard sends what only the lead sends).
pub(crate) fn check(
    team: &Team,
    config: &TeamConfig,
    caller: &Caller,
    to: Recipient<'_>,
    message: &Structured,
) -> Result<Name> {
    let kind = message.kind();
    let to = match to {
        Recipient::Broadcast => {
            return Err(Error::usage(format!(
                "{kind} cannot be broadcast; protocol messages go to one member"
            )));
        }
        Recipient::Peer => {
            return Err(Error::usage(format!(
                "{kind} cannot be sent to a uds: peer; protocol messages stay inside a team"
            )));
        }
        Recipient::Member(to) => to,
    };
    let lead = config.lead_name();
    let sender = match message {
        Structured::ShutdownRequest(_) => allow(config, caller, Action::RequestShutdown)?,
        Structured::PlanApprovalResponse(_) => allow(config, caller, Action::AnswerPlan)?,
        Structured::TaskAssignment(_) => allow(config, caller, Action::AssignTask)?,
        _ => allow(config, caller, Action::Send)?,
    };
    let me = sender.as_str();
    if message.lead_only() && to == lead {
        return Err(Error::usage(format!(
            "{kind} goes from the lead to a teammate, not to the lead"
        )));
    }
    if message.to_lead_only() && to != lead {
        return Err(Error::usage(format!(
            "{kind} goes to the lead ({lead}), not to {to}"
        )));
    }
    if let Some(claimed) = claimed_sender(message)
        && claimed != me
    {
        return Err(Error::usage(format!(
            "{kind} says it is from {claimed}, but you are {me}"
        )));
    }

    match message {
        Structured::ShutdownRequest(request) => {
            expect_subject(
                &request.request_id,
                to,
                "a shutdown request names its target",
            )?;
        }
        Structured::ShutdownApproved(answer) => {
            answer_own_shutdown(team, config, caller, &answer.request_id)?;
        }
        Structured::ShutdownRejected(answer) => {
            answer_own_shutdown(team, config, caller, &answer.request_id)?;
        }
        Structured::PlanApprovalRequest(request) => {
            allow_own(config, caller, Action::SubmitPlan, me)?;
            expect_subject(
                &request.request_id,
                me,
                "a plan request names its submitter",
            )?;
        }
        Structured::PlanApprovalResponse(response) => {
            require_request(team, lead, &response.request_id, "plan_approval_request")?;
            expect_subject(
                &response.request_id,
                to,
                "a plan response goes to the teammate that submitted the plan",
            )?;
        }
        Structured::IdleNotification(_)
        | Structured::TaskAssignment(_)
        | Structured::TaskNotification(_) => {}
    }
    Ok(sender)
}

/// The sender a message claims inside its JSON, which must be the real sender.
fn claimed_sender(message: &Structured) -> Option<&str> {
    match message {
        Structured::ShutdownRequest(m) => Some(&m.from),
        Structured::ShutdownApproved(m) => Some(&m.from),
        Structured::ShutdownRejected(m) => Some(&m.from),
        Structured::PlanApprovalRequest(m) => Some(&m.from),
        Structured::IdleNotification(m) => Some(&m.from),
        Structured::TaskAssignment(m) => Some(&m.assigned_by),
        Structured::PlanApprovalResponse(_) | Structured::TaskNotification(_) => None,
    }
}

fn answer_own_shutdown(
    team: &Team,
    config: &TeamConfig,
    caller: &Caller,
    request_id: &str,
) -> Result<()> {
    let subject = request_subject(request_id).ok_or_else(|| {
        Error::usage(format!(
            "{request_id:?} is not a shutdown request id (shutdown-<ms>@<name>)"
        ))
    })?;
    allow_own(config, caller, Action::AnswerShutdown, subject)?;
    require_request(team, subject, request_id, "shutdown_request").map(drop)
}

fn expect_subject(request_id: &str, expected: &str, rule: &str) -> Result<()> {
    match request_subject(request_id) {
        Some(subject) if subject == expected => Ok(()),
        Some(subject) => Err(Error::usage(format!(
            "request {request_id} is for {subject}, not {expected}: {rule}"
        ))),
        None => Err(Error::usage(format!(
            "{request_id:?} is not a valid request id"
        ))),
    }
}

/// The request `request_id` of type `kind`, found in `holder`'s inbox or history, or a refusal.
pub(crate) fn require_request(
    team: &Team,
    holder: &str,
    request_id: &str,
    kind: &str,
) -> Result<InboxMessage> {
    find_request(team, holder, request_id, kind)?.ok_or_else(|| {
        Error::usage(format!(
            "there is no {kind} {request_id} in {holder}'s inbox or history"
        ))
        .with_hint(format!(
            "`swarm inbox {holder} --all` lists what {holder} received"
        ))
    })
}

fn find_request(
    team: &Team,
    holder: &str,
    request_id: &str,
    kind: &str,
) -> Result<Option<InboxMessage>> {
    let mailbox = team.mailbox(holder);
    let matches = |message: &InboxMessage| {
        message
            .structured()
            .is_some_and(|s| s.kind() == kind && s.request_id() == Some(request_id))
    };
    // A request another tool marked read is still a request.
    if let Some(found) = mailbox.messages()?.into_iter().find(|m| matches(m)) {
        return Ok(Some(found));
    }
    Ok(mailbox.history()?.into_iter().rev().find(|m| matches(m)))
}
