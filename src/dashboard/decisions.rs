//! The requests waiting for an answer: a teammate's plan waiting for the lead, whom the person at
//! the keyboard stands for, and a shutdown request the lead sent that its teammate has not yet
//! answered. A request is pending while it is unread in the inbox of whoever must answer it: an
//! answer retires it (`protocol/exchange.rs`).

use crate::format::message::InboxMessage;
use crate::format::structured::Structured;

use super::feed::one_line;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Plan,
    Shutdown,
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
}

impl Decision {
    /// The member the request is about: the teammate whose plan or shutdown it is.
    pub(crate) fn subject(&self) -> &str {
        match self.kind {
            Kind::Plan => &self.asker,
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
        });
    }
}
