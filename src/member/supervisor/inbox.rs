//! What the supervisor does with the member's inbox: for `protocol = "wrapper"` it answers the
//! lead's shutdown request on the program's behalf; for `delivery = "paste"` it pastes each plain
//! message into the pane as `[from <sender>] <text>` and moves it to history.

use std::collections::HashSet;
use std::ffi::OsString;
use std::sync::{Arc, Mutex, PoisonError};

use crate::base::clock;
use crate::error::Result;
use crate::format::message::InboxMessage;
use crate::format::settings::{Delivery, Protocol};
use crate::format::signature::{Judge, Verdict};
use crate::format::structured::{ShutdownApproved, Structured};
use crate::member::seal;
use crate::member::verify;
use crate::policy::Caller;
use crate::store::watcher::{AsyncWatcher, named};

use super::seat::Supervisor;

pub(crate) struct InboxFeed {
    /// `None` if the member needs no inbox handling, or the watch failed.
    watcher: Option<AsyncWatcher>,
    file: OsString,
    /// The first look is due at once: messages may have arrived before the watch was armed.
    look_now: bool,
    handling: Handling,
    /// Judges the lead's messages with the key the member was launched with (this process's
    /// own environment); what was taken is seen from then on.
    judge: Arc<Mutex<Verifier>>,
}

/// The judge, and the forged requests already reported in the pane.
struct Verifier {
    judge: Judge,
    reported: HashSet<String>,
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
        let judge = if wrapper || paste {
            supervisor
                .off_runtime(|this| {
                    let config = this.team.load()?;
                    verify::judge(&this.team, &config, &this.name, true)
                })
                .await?
        } else {
            Judge::new(None, &supervisor.lead)
        };
        let mut feed = Self {
            watcher: None,
            file: mailbox.file_name().to_owned(),
            look_now: true,
            handling: Handling { wrapper, paste },
            judge: Arc::new(Mutex::new(Verifier {
                judge,
                reported: HashSet::new(),
            })),
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
        let judge = Arc::clone(&self.judge);
        supervisor
            .off_runtime(move |this| {
                let mut verifier = judge.lock().unwrap_or_else(PoisonError::into_inner);
                match handling.try_handle(this, &mut verifier) {
                    Ok(reason) => reason,
                    Err(err) => {
                        tracing::warn!("inbox of {}: {err}", this.name);
                        None
                    }
                }
            })
            .await
    }
}

impl Handling {
    /// A shutdown request the lead really sent ends the program (wrapper); a forged one is left
    /// unread and never acted on. Each plain message is pasted, a forged lead message marked so
    /// (paste).
    fn try_handle(
        self,
        supervisor: &Supervisor,
        verifier: &mut Verifier,
    ) -> Result<Option<String>> {
        let mailbox = supervisor.team.mailbox(&supervisor.name);
        let judge = &mut verifier.judge;
        if self.wrapper {
            let lead = supervisor.lead.as_str();
            let is_request = |m: &InboxMessage| {
                m.from() == lead && matches!(m.structured(), Some(Structured::ShutdownRequest(_)))
            };
            let requests =
                mailbox.consume(Some(1), |m| is_request(m) && !judge.verdict(m).is_forged())?;
            if let Some(taken) = requests.first() {
                judge.saw(&taken.id());
            } else {
                // A forged request stays unread, never acted on; the pane is told once.
                for forged in mailbox.peek()?.iter().filter(|m| is_request(m)) {
                    if let Verdict::Forged(why) = judge.verdict(forged)
                        && verifier.reported.insert(forged.id().into_owned())
                    {
                        supervisor.say(&format!(
                            "ignored a shutdown request that claims to come from {lead}: {why}"
                        ));
                    }
                }
            }
            if let Some(Structured::ShutdownRequest(request)) =
                requests.first().and_then(InboxMessage::structured)
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
                seal::request(&supervisor.team, &config, &caller, lead, &answer)?;
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
                let verdict = judge.verdict(message);
                let from = if verdict.is_forged() {
                    format!("{}(forged)", message.from())
                } else {
                    message.from().to_owned()
                };
                match tmux.paste(
                    pane,
                    &buffer,
                    crate::format::message::framed(&from, message.text()).as_bytes(),
                ) {
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
            for taken in mailbox.consume(None, |m| pasted.contains(m.id().as_ref()))? {
                judge.saw(&taken.id());
            }
            if let Some(err) = failure {
                return Err(err);
            }
        }
        Ok(None)
    }
}
