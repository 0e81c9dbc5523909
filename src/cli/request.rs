//! The one flow of a request a member answers, for `shutdown` and `plan`: the asker sends it and,
//! with `--wait`, waits for the answer (exit 0 if approved, 1 if rejected, 4 on timeout); the one
//! asked answers it. Each step is reported as one document (docs/ARCHITECTURE.md, "JSON output":
//! "A request and its answer"): `requestId` and `to`, answering adds `approved`, waiting for the
//! answer adds `approved` and `answer`.

use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::base::clock;
use crate::cli::context::Context;
use crate::cli::output::{self, Report};
use crate::cli::render;
use crate::error::{Error, ErrorKind, Result};
use crate::format::config::TeamConfig;
use crate::format::message::InboxMessage;
use crate::format::structured::Structured;
use crate::member::seal;
use crate::policy::Caller;
use crate::protocol::exchange::AnswerWatch;
use crate::store::team::Team;

/// A request, by its id, and whom it is addressed to (asking) or came from (answering).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Exchange<'a> {
    pub(crate) request_id: &'a str,
    pub(crate) to: &'a str,
}

/// How an asker waits: `None` sends and returns; `Some(timeout)` waits, for ever without one.
pub(crate) type Wait = Option<Option<Duration>>;

impl Exchange<'_> {
    /// Sends `message`, the request, as `caller` and reports it; with `wait`, waits in the inbox
    /// of `me` (who asks: the lead, for the person asking as the lead) for the answer `accepts`
    /// (made once the request is sent) takes, and reports it with the line
    /// `said` gives for it: whether it approved, and what a person is told. A timeout says
    /// `unanswered`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn ask<F>(
        &self,
        ctx: &Context,
        team: &Team,
        config: &TeamConfig,
        caller: &Caller,
        me: &str,
        message: &Structured,
        wait: Wait,
        accepts: impl FnOnce() -> Result<F>,
        unanswered: impl FnOnce() -> String,
        said: impl FnOnce(&Structured) -> (bool, String),
    ) -> Result<()>
    where
        F: Fn(&InboxMessage, &Structured) -> bool,
    {
        // Armed before the request goes, so an answer that comes at once is not missed.
        let watch = match wait {
            Some(_) => Some(AnswerWatch::arm(team, me)?),
            None => None,
        };
        seal::request(team, &ctx.fleet(), config, caller, self.to, message)?;
        let Some(watch) = watch else {
            return ctx.report(&Shown {
                request_id: self.request_id,
                to: self.to,
                approved: None,
                answer: None,
                line: self.request_id.to_owned(),
            });
        };
        let deadline = wait.flatten().and_then(clock::deadline);
        let accepts = accepts()?;
        let Some((_, answer)) = watch.wait(deadline, accepts)? else {
            return Err(Error::timeout(unanswered()));
        };
        let (approved, line) = said(&answer);
        ctx.report(&Shown {
            request_id: self.request_id,
            to: self.to,
            approved: Some(approved),
            answer: Some(render::structured(&answer)),
            line,
        })?;
        if approved {
            Ok(())
        } else {
            Err(Error::silent(ErrorKind::Runtime))
        }
    }

    /// Reports an answer sent: approved or not, and the line a person is told.
    pub(crate) fn answered(&self, ctx: &Context, approved: bool, line: String) -> Result<()> {
        ctx.report(&Shown {
            request_id: self.request_id,
            to: self.to,
            approved: Some(approved),
            answer: None,
            line,
        })
    }
}

/// A request or answer, as `--json` shows it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Shown<'a> {
    request_id: &'a str,
    to: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    approved: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    answer: Option<Value>,
    #[serde(skip)]
    line: String,
}

impl Report for Shown<'_> {
    fn text(&self) -> Result<()> {
        output::line(&self.line)
    }
}
