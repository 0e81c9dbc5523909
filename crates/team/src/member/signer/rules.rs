//! The team's permission rules at work (docs/ARCHITECTURE.md, "Permission rules"): a thread of
//! the signing agent watches the lead's inbox with the one watcher and answers every ask a
//! teammate's rules match, signed with the key the agent holds for it and recorded once as
//! `rule: <rule>`, as `permission allow|deny` would. The agent is the one process on the lead's
//! side that lives as long as the team and holds what the answer must be signed with; the rules
//! live in its memory beside the keys, given at each member's launch, where a teammate cannot
//! rewrite them as it could a file.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::time::Duration;

use crate::error::{Error, ErrorKind, Result};
use crate::format::config::{Member, TeamConfig};
use crate::format::message::InboxMessage;
pub(super) use crate::format::permission_rule::{Decision, Rules};
use crate::member::permission::{self, AskFeed, Request};
use crate::member::reach::{Reach, Sites};
use crate::store::paths::Home;
use crate::store::team::Team;
use crate::store::watcher::{Watcher, named};

/// What the agent holds for each member: its rules and where it works, and its key to sign with.
pub(super) trait Holder: Sync {
    /// Member `member`'s rules and working directory, if the agent holds a key for it.
    fn rules(&self, member: &str) -> Option<(Rules, PathBuf)>;

    /// The `lead_sig` of `message` for `member`, with the key whose public half is `key`, if the
    /// agent holds it.
    fn sign(&self, member: &str, key: &str, message: &InboxMessage) -> Option<String>;
}

/// The team the agent serves.
pub(super) struct Served<'a> {
    pub(super) home: &'a Home,
    pub(super) team: &'a str,
    pub(super) lead: &'a str,
}

/// How long the thread rests after its watch failed before it arms another.
const REST: Duration = Duration::from_secs(1);

/// Answers the asks the rules match, now and after every change to the lead's inbox, for as long
/// as the agent runs, and shows in the team's tmux session what still waits (`alert.rs`).
pub(super) fn answer_asks(
    served: &Served<'_>,
    reach: &dyn Reach,
    held: &dyn Holder,
    alert: &Sender<()>,
) {
    let paths = served.home.team(served.team);
    let inboxes = paths.inboxes();
    let lead_file = paths
        .mailbox(served.lead)
        .inbox
        .file_name()
        .unwrap_or_default()
        .to_owned();
    let signer = HeldKeys { reach, held };
    // Asks a rule matched but could not answer (answered meanwhile, or its member gone): tried
    // once, not again at every change.
    let mut tried = HashSet::new();
    // What the lead's side holds, read on from the look before: the lead's history only grows.
    let mut feed = AskFeed::default();
    loop {
        let watched = appeared(&inboxes).and_then(|()| Watcher::arm(&inboxes));
        let watcher = match watched {
            Ok(watcher) => watcher,
            Err(err) => {
                tracing::warn!("cannot watch {}: {err}", inboxes.display());
                std::thread::sleep(REST);
                continue;
            }
        };
        loop {
            if let Err(err) = answer_pending(served, &signer, (&mut feed, &mut tried), alert)
                && err.kind() != ErrorKind::NotFound
            {
                tracing::warn!("permission rules: {err}");
            }
            if watcher.wait(None, &named(&lead_file)).is_err() || !inboxes.is_dir() {
                break;
            }
        }
    }
}

/// Returns once directory `dir` exists, woken by the one watcher on its nearest existing
/// ancestor (the team is written after its first key is made).
pub(super) fn appeared(dir: &Path) -> Result<()> {
    loop {
        if dir.is_dir() {
            return Ok(());
        }
        let Some(ancestor) = dir.ancestors().skip(1).find(|a| a.is_dir()) else {
            return Err(Error::not_found(format!("{} has no parent", dir.display())));
        };
        let watcher = Watcher::arm(ancestor)?;
        if dir.is_dir() {
            return Ok(());
        }
        watcher.wait(None, &|_| true)?;
    }
}

/// Answers each unanswered ask whose member's rules decide it, then nudges `alert` to show what still
/// waits.
fn answer_pending(
    served: &Served<'_>,
    signer: &HeldKeys<'_>,
    (feed, tried): (&mut AskFeed, &mut HashSet<String>),
    alert: &Sender<()>,
) -> Result<()> {
    let team = Team::open(served.home, served.team)?;
    let config = team.load()?;
    for ask in feed.unanswered(&team, &config)? {
        let Request::Tool(request) = &ask.request else {
            continue;
        };
        if tried.contains(ask.request_id()) {
            continue;
        }
        let decided = signer.held.rules(ask.member()).and_then(|(rules, cwd)| {
            let input = request.input.clone().unwrap_or_default();
            rules
                .decide(&request.tool_name, &input, &cwd)
                .map(|decision| match decision {
                    Decision::Allow(rule) => (true, rule.text().to_owned()),
                    Decision::Deny(rule) => (false, rule.text().to_owned()),
                })
        });
        let Some((allowed, rule)) = decided else {
            continue;
        };
        tried.insert(ask.request_id().to_owned());
        match permission::answer_by_rule(&team, signer, &config, &ask, allowed, &rule) {
            Ok(answer) => tracing::info!(
                "rule {rule} {} {} ({}) for {}",
                if answer.allowed { "allowed" } else { "denied" },
                answer.request_id,
                answer.tool,
                answer.member
            ),
            Err(err) => tracing::warn!(
                "rule {rule} matched {} of {}, but: {err}",
                ask.request_id(),
                ask.member()
            ),
        }
    }
    let _ = alert.send(());
    Ok(())
}

/// The agent's own keys sign its answers: it asks no agent, itself least of all.
struct HeldKeys<'a> {
    reach: &'a dyn Reach,
    held: &'a dyn Holder,
}

impl Reach for HeldKeys<'_> {
    fn sites(&self, config: &TeamConfig) -> Sites {
        self.reach.sites(config)
    }

    fn sign(
        &self,
        _team: &Team,
        _config: &TeamConfig,
        to: &Member,
        key: &str,
        message: &InboxMessage,
    ) -> Result<String> {
        self.held.sign(&to.name, key, message).ok_or_else(|| {
            Error::runtime(format!(
                "the signing agent holds no key for {} that its record names; nothing was sent",
                to.name
            ))
        })
    }
}
