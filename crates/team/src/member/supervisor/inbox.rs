//! What the supervisor does with the member's inbox: for `protocol = "wrapper"` it answers the
//! lead's shutdown request on the program's behalf; for `delivery = "paste"` it pastes each plain
//! message into the pane in the member's paste format (`[from <sender>] <text>`, the text alone,
//! or a template), made safe for a terminal (docs/ARCHITECTURE.md, "Terminal output"), and moves
//! it to history (docs/ARCHITECTURE.md, "Paste delivery"); for a member that reads through
//! `swarm mcp`, it pastes one nudge for what came and leaves the messages unread ("MCP").

use std::collections::HashSet;
use std::ffi::OsString;
use std::sync::{Arc, Mutex, PoisonError};

use crate::base::clock;
pub(super) use crate::base::runtime::OffRuntime;
use crate::base::text::{derive_summary, for_terminal, keystrokes};
use crate::error::Result;
use crate::format::message::InboxMessage;
pub(super) use crate::format::paste::PasteFormat;
pub(super) use crate::format::settings::{Delivery, Protocol};
pub(super) use crate::format::signature::{Judge, Verdict};
pub(super) use crate::format::structured::{ShutdownApproved, Structured};
use crate::member::ending;
use crate::member::seal;
use crate::member::verify;
use crate::policy::Caller;
use crate::protocol::exchange;
use crate::store::watcher::{AsyncWatcher, POLL_INTERVAL, named};

use super::seat::Supervisor;

pub(crate) struct InboxFeed {
    /// `None` if the member needs no inbox handling.
    watcher: Option<Following>,
    file: OsString,
    /// The first look is due at once: messages may have arrived before the watch was armed.
    look_now: bool,
    /// A look that failed (the lead's inbox held by another tool, say) is tried again after a
    /// pause, not only when the inbox next changes: what it left unread is still to handle.
    look_again: bool,
    handling: Handling,
    /// Judges the lead's messages with the key the member was launched with (this process's
    /// own environment); what was taken is seen from then on.
    judge: Arc<Mutex<Verifier>>,
}

/// The judge, and the forged messages already reported in the pane.
struct Verifier {
    judge: Judge,
    reported: HashSet<String>,
    /// The messages an MCP member's pane was nudged about: each is told of once, and stays
    /// unread for its `receive` tool.
    nudged: HashSet<String>,
}

/// What the supervisor does with the member's inbox.
#[derive(Clone)]
struct Handling {
    wrapper: bool,
    paste: bool,
    /// How a message is pasted.
    format: PasteFormat,
    /// Its program reads messages through `swarm mcp`: one nudge is pasted for what came, and
    /// the messages stay in the inbox.
    nudge: bool,
}

/// How changes to the inbox are noticed.
enum Following {
    Events(AsyncWatcher),
    /// The watch failed: looking again at the polling interval, so nothing waits for ever.
    Polling,
}

impl InboxFeed {
    /// A feed that handles nothing: for a member whose feed could not start.
    pub(crate) fn none() -> Self {
        Self {
            watcher: None,
            file: OsString::new(),
            look_now: false,
            look_again: false,
            handling: Handling {
                wrapper: false,
                paste: false,
                format: PasteFormat::Framed,
                nudge: false,
            },
            judge: Arc::new(Mutex::new(Verifier {
                judge: Judge::new(None, ""),
                reported: HashSet::new(),
                nudged: HashSet::new(),
            })),
        }
    }

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
        let format = supervisor.member.paste_format().unwrap_or_else(|err| {
            // config.json was edited since launch: framed still shows who sent what.
            supervisor.say(&format!("{}; pasting framed instead", err.message()));
            PasteFormat::Framed
        });
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
            look_again: false,
            handling: Handling {
                wrapper,
                paste,
                format,
                nudge: supervisor.member.mcp(),
            },
            judge: Arc::new(Mutex::new(Verifier {
                judge,
                reported: HashSet::new(),
                nudged: HashSet::new(),
            })),
        };
        if !wrapper && !paste {
            return Ok(feed);
        }
        supervisor.off_runtime(move |_| mailbox.ensure()).await?;
        feed.watcher = Some(Following::Events(AsyncWatcher::arm(
            &supervisor.team.paths().inboxes(),
        )?));
        Ok(feed)
    }

    /// Resolves when the inbox may have changed; never, if the member needs no inbox handling.
    pub(crate) async fn changed(&mut self) {
        let Some(following) = &mut self.watcher else {
            return std::future::pending().await;
        };
        if std::mem::take(&mut self.look_now) {
            return;
        }
        if std::mem::take(&mut self.look_again) {
            return tokio::time::sleep(RETRY_AFTER).await;
        }
        match following {
            Following::Events(watcher) => {
                if let Err(err) = watcher.wait(None, &named(&self.file)).await {
                    tracing::warn!(
                        "stopped following the inbox: {err}; looking every {} ms instead",
                        POLL_INTERVAL.as_millis()
                    );
                    self.watcher = Some(Following::Polling);
                }
            }
            Following::Polling => tokio::time::sleep(POLL_INTERVAL).await,
        }
    }

    /// Handles what arrived; returns a reason when the program must now end: only ever
    /// [`ending::SHUTDOWN`], a shutdown request it approved (wrapper).
    pub(crate) async fn handle(&mut self, supervisor: &Arc<Supervisor>) -> Option<String> {
        let handling = self.handling.clone();
        let judge = Arc::clone(&self.judge);
        let handled = supervisor
            .off_runtime(move |this| {
                let mut verifier = judge.lock().unwrap_or_else(PoisonError::into_inner);
                handling.try_handle(this, &mut verifier).map_err(|err| {
                    tracing::warn!(
                        "inbox of {}: {err}; trying again in {}s",
                        this.name,
                        RETRY_AFTER.as_secs()
                    );
                })
            })
            .await;
        self.look_again = handled.is_err();
        handled.ok().flatten()
    }
}

/// The pause before a failed look at the inbox is tried again.
const RETRY_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

impl Handling {
    /// A shutdown request the lead really sent ends the program (wrapper); a forged one is left
    /// unread and never acted on. Each plain message is pasted (paste): a forged lead message
    /// marked so when framed, else left unread with a word in the pane.
    fn try_handle(
        &self,
        supervisor: &Supervisor,
        verifier: &mut Verifier,
    ) -> Result<Option<String>> {
        let mailbox = supervisor.team.mailbox(&supervisor.name);
        let judge = &mut verifier.judge;
        // What this run took is a replay when it comes back, whoever emptied the history since.
        let unread = mailbox.peek()?;
        let before = supervisor.taken(&judge.claimed(&unread), false);
        for id in verify::replays(&supervisor.team, &supervisor.name, before) {
            judge.saw(&id);
        }
        if self.wrapper {
            let lead = supervisor.lead.as_str();
            let is_request = |m: &InboxMessage| {
                m.from() == lead && matches!(m.structured(), Some(Structured::ShutdownRequest(_)))
            };
            let genuine = unread
                .iter()
                .find(|m| is_request(m) && !judge.verdict(m).is_forged());
            if genuine.is_none() {
                // A forged request stays unread, never acted on; the pane is told once.
                for forged in unread.iter().filter(|m| is_request(m)) {
                    if let Verdict::Forged(why) = judge.verdict(forged)
                        && verifier.reported.insert(forged.id().into_owned())
                    {
                        supervisor.say(&format!(
                            "ignored a shutdown request that claims to come from {lead}: {why}"
                        ));
                    }
                }
            }
            if let Some(taken) = genuine
                && let Some(Structured::ShutdownRequest(request)) = taken.structured()
            {
                // The answer goes out first: a request is taken from the inbox only once it is
                // answered, so an answer that cannot be sent leaves it to be handled again.
                let config = supervisor.team.load()?;
                let answer = Structured::ShutdownApproved(ShutdownApproved {
                    request_id: request.request_id.clone(),
                    from: supervisor.name.clone(),
                    timestamp: clock::timestamp_now(),
                    pane_id: supervisor.pane.clone(),
                    backend_type: Some("tmux".to_owned()),
                });
                let caller = Caller::member(&config, &supervisor.name)?;
                seal::request(
                    &supervisor.team,
                    supervisor.reach.as_ref(),
                    &config,
                    &caller,
                    lead,
                    &answer,
                )?;
                judge.saw(&taken.id());
                if let Err(err) =
                    exchange::retire(&supervisor.team, &supervisor.name, &request.request_id)
                {
                    tracing::warn!(
                        "answered {}, but it stays unread in {}'s inbox: {err}",
                        request.request_id,
                        supervisor.name
                    );
                }
                // Once it has left the inbox: it is a replay if it comes back.
                supervisor.taken(&[taken.id().into_owned()], true);
                supervisor.say(&format!(
                    "approved {} on behalf of {}; ending it",
                    request.request_id, supervisor.name
                ));
                return Ok(Some(ending::SHUTDOWN.to_owned()));
            }
        }
        if self.paste
            && let (Some(tmux), Some(pane)) = (&supervisor.tmux, &supervisor.pane)
        {
            let plain: Vec<_> = unread.iter().filter(|m| m.structured().is_none()).collect();
            let buffer = format!("swarm-{}-{}", supervisor.team.name(), supervisor.name);
            if self.nudge {
                // Told once each; what `receive` took is forgotten.
                verifier
                    .nudged
                    .retain(|id| plain.iter().any(|m| m.id().as_ref() == id.as_str()));
                let fresh: Vec<&InboxMessage> = plain
                    .iter()
                    .copied()
                    .filter(|m| !verifier.nudged.contains(m.id().as_ref()))
                    .collect();
                let Some(last) = fresh.last() else {
                    return Ok(None);
                };
                let mut senders: Vec<String> = Vec::new();
                for message in &fresh {
                    let from = match judge.verdict(message) {
                        Verdict::Forged(_) => format!("{}(forged)", message.from()),
                        Verdict::Verified | Verdict::NotClaimed => message.from().to_owned(),
                    };
                    if !senders.contains(&from) {
                        senders.push(from);
                    }
                }
                let summary = last
                    .summary()
                    .map_or_else(|| derive_summary(last.text()), str::to_owned);
                let typed = self.format.render_count(
                    fresh.len(),
                    &senders.join(", "),
                    last.text(),
                    &summary,
                );
                let typed = match self.format {
                    PasteFormat::Framed => for_terminal(&typed),
                    _ => keystrokes(&typed),
                };
                tmux.paste(pane, &buffer, typed.as_bytes())?;
                verifier
                    .nudged
                    .extend(fresh.iter().map(|m| m.id().into_owned()));
                return Ok(None);
            }
            let mut pasted = HashSet::new();
            let mut failure = None;
            for message in plain {
                let verdict = judge.verdict(message);
                let from = match verdict {
                    Verdict::Forged(why) if !self.format.shows_forgery() => {
                        // Raw text or a template would pass it off as the lead's: it stays
                        // unread, never pasted, and the pane is told once.
                        if verifier.reported.insert(message.id().into_owned()) {
                            supervisor.say(&format!(
                                "did not paste a message that claims to come from {} ({why}); \
                                 it stays unread: swarm inbox {}",
                                message.from(),
                                supervisor.name
                            ));
                        }
                        continue;
                    }
                    Verdict::Forged(_) => format!("{}(forged)", message.from()),
                    Verdict::Verified | Verdict::NotClaimed => message.from().to_owned(),
                };
                let summary = message
                    .summary()
                    .map_or_else(|| derive_summary(message.text()), str::to_owned);
                let typed = self.format.render(&from, message.text(), &summary);
                // Made safe as for any terminal: a control character in a paste would reach the
                // program as a keystroke, and ESC could end a bracketed paste early. Framed text
                // is shown as everything swarm prints; raw text and a template keep their line
                // breaks, which the program reads as the sender wrote them.
                let typed = match self.format {
                    PasteFormat::Framed => for_terminal(&typed),
                    _ => keystrokes(&typed),
                };
                match tmux.paste(pane, &buffer, typed.as_bytes()) {
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
                supervisor.taken(&[taken.id().into_owned()], true);
            }
            if let Some(err) = failure {
                return Err(err);
            }
        }
        Ok(None)
    }
}
