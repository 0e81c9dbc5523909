//! What the supervisor does with the member's inbox: for `protocol = "wrapper"` it answers the
//! lead's shutdown request on the program's behalf; for `delivery = "paste"` it pastes each plain
//! message into the pane as `[from <sender>] <text>`, made safe for a terminal
//! (docs/ARCHITECTURE.md, "Terminal output"), and moves it to history.

use std::collections::HashSet;
use std::ffi::OsString;
use std::sync::Arc;

use crate::base::clock;
use crate::base::text::for_terminal;
use crate::error::Result;
use crate::format::settings::{Delivery, Protocol};
use crate::format::structured::{ShutdownApproved, Structured};
use crate::policy::Caller;
use crate::protocol::exchange;
use crate::store::watcher::{AsyncWatcher, named};

use super::seat::Supervisor;

pub(crate) struct InboxFeed {
    /// `None` if the member needs no inbox handling, or the watch failed.
    watcher: Option<AsyncWatcher>,
    file: OsString,
    /// The first look is due at once: messages may have arrived before the watch was armed.
    look_now: bool,
    handling: Handling,
}

/// What the supervisor does with the member's inbox.
#[derive(Clone, Copy)]
struct Handling {
    wrapper: bool,
    paste: bool,
}

impl InboxFeed {
    /// Starts following the inbox if the member needs it. The watch is armed before the first look.
    pub(crate) async fn start(supervisor: &Arc<Supervisor>) -> Result<Self> {
        let wrapper = supervisor.member.protocol() == Protocol::Wrapper;
        let paste = supervisor.member.delivery() == Delivery::Paste
            && supervisor.pane.is_some()
            && supervisor.tmux.is_some();
        if supervisor.member.delivery() == Delivery::Paste && !paste {
            tracing::warn!(
                "{} has delivery = \"paste\" but runs outside tmux; messages stay in its inbox",
                supervisor.name
            );
        }
        let mailbox = supervisor.team.mailbox(&supervisor.name);
        let mut feed = Self {
            watcher: None,
            file: mailbox.file_name().to_owned(),
            look_now: true,
            handling: Handling { wrapper, paste },
        };
        if !wrapper && !paste {
            return Ok(feed);
        }
        supervisor.off_runtime(move |_| mailbox.ensure()).await?;
        feed.watcher = Some(AsyncWatcher::arm(&supervisor.team.paths().inboxes())?);
        Ok(feed)
    }

    /// Resolves when the inbox may have changed; never, if the member needs no inbox handling.
    pub(crate) async fn changed(&mut self) {
        let Some(watcher) = &mut self.watcher else {
            return std::future::pending().await;
        };
        if std::mem::take(&mut self.look_now) {
            return;
        }
        if let Err(err) = watcher.wait(None, &named(&self.file)).await {
            tracing::warn!("stopped following the inbox: {err}");
            self.watcher = None;
            std::future::pending::<()>().await;
        }
    }

    /// Handles what arrived; returns a reason when the program must now end.
    pub(crate) async fn handle(&self, supervisor: &Arc<Supervisor>) -> Option<String> {
        let handling = self.handling;
        supervisor
            .off_runtime(move |this| match handling.try_handle(this) {
                Ok(reason) => reason,
                Err(err) => {
                    tracing::warn!("inbox of {}: {err}", this.name);
                    None
                }
            })
            .await
    }
}

impl Handling {
    fn try_handle(self, supervisor: &Supervisor) -> Result<Option<String>> {
        let mailbox = supervisor.team.mailbox(&supervisor.name);
        if self.wrapper {
            let lead = supervisor.lead.as_str();
            let requests = mailbox.consume(Some(1), |m| {
                m.from() == lead && matches!(m.structured(), Some(Structured::ShutdownRequest(_)))
            })?;
            if let Some(Structured::ShutdownRequest(request)) = requests
                .first()
                .and_then(crate::format::message::InboxMessage::structured)
            {
                let config = supervisor.team.load()?;
                let answer = Structured::ShutdownApproved(ShutdownApproved {
                    request_id: request.request_id.clone(),
                    from: supervisor.name.clone(),
                    timestamp: clock::timestamp_now(),
                    pane_id: supervisor.pane.clone(),
                    backend_type: Some("tmux".to_owned()),
                });
                let caller = Caller::member(&config, &supervisor.name)?;
                exchange::send(&supervisor.team, &config, &caller, lead, &answer)?;
                supervisor.say(&format!(
                    "approved {} on behalf of {}; ending it",
                    request.request_id, supervisor.name
                ));
                return Ok(Some("shutdown".to_owned()));
            }
        }
        if self.paste
            && let (Some(tmux), Some(pane)) = (&supervisor.tmux, &supervisor.pane)
        {
            let plain: Vec<_> = mailbox
                .peek()?
                .into_iter()
                .filter(|m| m.structured().is_none())
                .collect();
            let buffer = format!("swarm-{}-{}", supervisor.team.name(), supervisor.name);
            let mut pasted = HashSet::new();
            let mut failure = None;
            for message in &plain {
                // Escaped as for any terminal: a control character in a paste would reach the
                // program as a keystroke, and ESC could end a bracketed paste early.
                let framed = crate::format::message::framed(message.from(), message.text());
                match tmux.paste(pane, &buffer, for_terminal(&framed).as_bytes()) {
                    Ok(()) => {
                        pasted.insert(message.id().into_owned());
                    }
                    Err(err) => {
                        failure = Some(err);
                        break;
                    }
                }
            }
            // Whatever reached the pane leaves the inbox, even if a later paste failed.
            mailbox.consume(None, |m| pasted.contains(m.id().as_ref()))?;
            if let Some(err) = failure {
                return Err(err);
            }
        }
        Ok(None)
    }
}
