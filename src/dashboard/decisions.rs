//! The requests waiting for an answer: a teammate's plan waiting for the lead, whom the person at
//! the keyboard stands for, a shutdown request the lead sent that its teammate has not yet
//! answered, and a teammate's permission ask. A plan or shutdown request is pending while it is
//! unread in the inbox of whoever must answer it: an answer retires it (`protocol/exchange.rs`);
//! a permission ask while `member/permission.rs` finds it unanswered.

use crate::format::message::InboxMessage;
use crate::format::structured::Structured;
use crate::member::permission::Ask;

use super::feed::one_line;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Plan,
    Shutdown,
    /// To use a tool (or reach a host).
    Permission,
}

/// One request waiting for an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Decision {
    pub(crate) kind: Kind,
    pub(crate) request_id: String,
    /// Who asks.
    pub(crate) asker: String,
    /// Who must answer: the lead for a plan, the teammate for a shutdown request.
    pub(crate) answerer: String,
    /// What it asks, in words, on one line.
    pub(crate) words: String,
    /// The tool a permission ask is for.
    pub(crate) tool: Option<String>,
}

impl Decision {
    /// The member the request is about: the teammate whose plan or shutdown it is.
    pub(crate) fn subject(&self) -> &str {
        match self.kind {
            Kind::Plan | Kind::Permission => &self.asker,
            Kind::Shutdown => &self.answerer,
        }
    }
}

/// The requests among `owner`'s unread messages that `owner` must answer.
pub(crate) fn among(owner: &str, unread: &[InboxMessage], found: &mut Vec<Decision>) {
    for message in unread {
        let (kind, request_id) = match message.structured() {
            Some(Structured::PlanApprovalRequest(request)) => (Kind::Plan, request.request_id),
            Some(Structured::ShutdownRequest(request)) => (Kind::Shutdown, request.request_id),
            _ => continue,
        };
        let words = message
            .structured()
            .map(|s| s.in_words(message.from(), owner))
            .unwrap_or_default();
        found.push(Decision {
            kind,
            request_id,
            asker: message.from().to_owned(),
            answerer: owner.to_owned(),
            words: one_line(&words),
            tool: None,
        });
    }
}

/// The permission asks `lead`'s side must answer.
pub(crate) fn asks(lead: &str, asks: &[Ask], found: &mut Vec<Decision>) {
    found.extend(asks.iter().map(|ask| Decision {
        kind: Kind::Permission,
        request_id: ask.request_id().to_owned(),
        asker: ask.member().to_owned(),
        answerer: lead.to_owned(),
        words: one_line(&format!(
            "{} asks to use {}: {}",
            ask.member(),
            ask.tool(),
            ask.summary()
        )),
        tool: Some(ask.tool().to_owned()),
    }));
}
