//! Requests and answers: sending a protocol message under the rules, waiting for the answer to a
//! request, and retiring a request once it has been answered.

use std::time::Instant;

use crate::error::{Error, Result};
use crate::format::config::TeamConfig;
use crate::format::message::{InboxMessage, check_text_size};
use crate::format::structured::Structured;
use crate::policy::Caller;
use crate::protocol::rules::{self, Recipient};
use crate::store::team::Team;
use crate::store::watcher::{Watcher, named};

/// Sends `message` from `caller` to `to` after checking every protocol rule. The envelope is from
/// the name the rules send it under.
pub(crate) fn send(
    team: &Team,
    config: &TeamConfig,
    caller: &Caller,
    to: &str,
    message: &Structured,
) -> Result<InboxMessage> {
    if config.member(to).is_none() {
        return Err(Error::usage(format!(
            "{to} is not on team {}'s roster: {}",
            config.name,
            config.roster().join(", ")
        )));
    }
    let sender = rules::check(team, config, caller, Recipient::Member(to), message)?;
    let text = message.to_text();
    check_text_size(&text)?;
    let color = config.member(sender.as_str()).and_then(|m| m.color.clone());
    let envelope = InboxMessage::new(sender.as_str(), &text, None, color.as_deref());
    team.mailbox(to).append(std::slice::from_ref(&envelope))?;
    Ok(envelope)
}

/// A watch on the team's inboxes, armed before the request goes out so no answer is missed.
pub(crate) struct AnswerWatch<'a> {
    team: &'a Team,
    me: &'a str,
    watcher: Watcher,
}

impl<'a> AnswerWatch<'a> {
    pub(crate) fn arm(team: &'a Team, me: &'a str) -> Result<Self> {
        team.mailbox(me).ensure()?;
        Ok(Self {
            team,
            me,
            watcher: Watcher::arm(&team.paths().inboxes())?,
        })
    }

    /// Consumes and returns the first message in `me`'s inbox that `is_answer` accepts.
    /// `None` when the deadline passes.
    pub(crate) fn wait(
        &self,
        deadline: Option<Instant>,
        is_answer: impl Fn(&InboxMessage, &Structured) -> bool,
    ) -> Result<Option<(InboxMessage, Structured)>> {
        let mailbox = self.team.mailbox(self.me);
        let accept =
            |message: &InboxMessage| message.structured().is_some_and(|s| is_answer(message, &s));
        self.watcher
            .wait_for(deadline, &named(mailbox.file_name()), || {
                let taken = mailbox.consume(Some(1), accept)?;
                Ok(taken.into_iter().next().and_then(|m| {
                    let structured = m.structured()?;
                    Some((m, structured))
                }))
            })
    }
}

/// Moves an answered request from `holder`'s unread messages to history.
pub(crate) fn retire(team: &Team, holder: &str, request_id: &str) -> Result<()> {
    team.mailbox(holder)
        .consume(None, |m| {
            m.structured().is_some_and(|s| {
                s.request_id() == Some(request_id)
                    && matches!(
                        s,
                        Structured::ShutdownRequest(_) | Structured::PlanApprovalRequest(_)
                    )
            })
        })
        .map(drop)
}
