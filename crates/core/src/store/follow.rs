//! Following a team's messages as they arrive, for `watch` and the transcript of `up --wait`.
//!
//! Each message is shown once, however fast its reader is. A message is either still unread in an
//! inbox or, once consumed, in its owner's history file (consumers append there before they rewrite
//! the inbox). So every round reads the inboxes, then the history files on from where they ended
//! when following began. Ids shown are remembered only while they are still unread (or were found
//! in history at the last look), which keeps memory bounded by the unread messages, and shows a
//! message recorded twice (a consumer crashed between history and rewrite) once. A follower that
//! consumes shows exactly what it took, once, before it leaves the inbox (a failed show leaves it
//! unread), and reads no history: what another consumer took is that consumer's to show.
//!
//! A broadcast is one message with a copy in every other member's inbox, each with the same
//! `msg_id`: it is shown once, as a broadcast (docs/ARCHITECTURE.md, "Watching"). A copy is known
//! by its id: one marked `"broadcast": true` (swarm's `send '*'`), or one whose id turns up in
//! several inboxes at one look (another tool's broadcast) is shown as a broadcast, and a copy whose
//! id was shown lately for another inbox is not shown again.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

use crate::base::names::path_component;
use crate::error::{Error, Result};
use crate::format::config::TeamConfig;
use crate::format::message::InboxMessage;
use crate::store::durable::private_dir;
use crate::store::paths::TeamPaths;
use crate::store::team::Team;

/// Whose messages are followed.
#[derive(Debug, Clone)]
pub enum Scope {
    /// One member, by name.
    One(String),
    /// Every inbox of the team, including those created after following began.
    All,
}

impl Scope {
    /// Whether a change to `file` (an inbox or a history file) may mean a new arrival.
    pub fn covers(&self, file: &OsStr) -> bool {
        let Some(owner) = TeamPaths::inbox_owner(file).or_else(|| TeamPaths::history_owner(file))
        else {
            return false;
        };
        self.includes(owner)
    }

    /// Whether the member with this path component is in scope.
    fn includes(&self, component: &str) -> bool {
        match self {
            Self::One(name) => component == path_component(name),
            Self::All => true,
        }
    }
}

/// A message that arrived in `to`'s inbox.
#[derive(Debug, Clone)]
pub struct Arrival {
    /// The member in whose inbox it was found: for a broadcast, the first copy's.
    pub to: String,
    pub message: InboxMessage,
    /// One copy of a broadcast, standing for all of them.
    pub(crate) broadcast: bool,
    /// Found unread in the inbox (or taken from it now), not in history: a signed lead message
    /// its member's run took before is a replay there.
    pub unread: bool,
}

impl Arrival {
    fn new(to: &str, message: InboxMessage, unread: bool) -> Self {
        Self {
            to: to.to_owned(),
            broadcast: message.is_broadcast(),
            message,
            unread,
        }
    }

    /// Whom it is shown as addressed to: the member, or `*` for a broadcast.
    pub fn addressee(&self) -> &str {
        if self.broadcast { "*" } else { &self.to }
    }
}

/// How many ids shown lately a follower remembers to know a broadcast's later copies by: far more
/// than a team has members, and far more messages than arrive while one broadcast is written.
const RECENT_IDS: usize = 4096;

/// The ids shown lately, oldest forgotten first.
#[derive(Debug, Default)]
struct Recent {
    order: VecDeque<String>,
    ids: HashSet<String>,
}

impl Recent {
    /// Remembers `id`; false if it was remembered already.
    fn insert(&mut self, id: &str) -> bool {
        if self.ids.contains(id) {
            return false;
        }
        if self.order.len() == RECENT_IDS
            && let Some(oldest) = self.order.pop_front()
        {
            self.ids.remove(&oldest);
        }
        self.order.push_back(id.to_owned());
        self.ids.insert(id.to_owned());
        true
    }
}

pub struct Follower<'a> {
    team: &'a Team,
    scope: Scope,
    consume: bool,
    /// Member names by path component, for inbox files named after them.
    names: HashMap<String, String>,
    /// Per path component.
    owners: BTreeMap<String, Owner>,
    /// Ids shown lately, in any inbox: a broadcast's other copies are not shown again.
    recent: Recent,
}

#[derive(Debug, Default)]
struct Owner {
    /// Bytes of the history file already accounted for.
    history_at: u64,
    /// Ids shown that were still unread at the last look, or shown from history at the last look.
    shown_unread: HashSet<String>,
}

impl<'a> Follower<'a> {
    /// Starts following. Messages already unread are the first arrivals; messages already in
    /// history are not. With `consume`, the one member in scope has its messages taken as they come.
    pub fn start(team: &'a Team, config: &TeamConfig, scope: Scope, consume: bool) -> Result<Self> {
        let paths = team.paths();
        private_dir(paths.private_root(), &paths.inboxes())?;
        private_dir(paths.private_root(), &paths.history())?;
        let mut follower = Self {
            team,
            scope,
            consume,
            names: config
                .members
                .iter()
                .map(|m| (path_component(&m.name), m.name.clone()))
                .collect(),
            owners: BTreeMap::new(),
            recent: Recent::default(),
        };
        for component in follower.components(&paths.history(), TeamPaths::history_owner)? {
            let history_at = team.mailbox(&follower.name_of(&component)).history_len()?;
            follower.owners.insert(
                component,
                Owner {
                    history_at,
                    ..Owner::default()
                },
            );
        }
        Ok(follower)
    }

    /// What is already in history comes first too, before what is unread: everything said in the
    /// team so far, in the order it was sent, then what follows (`swarm top`).
    #[must_use]
    pub fn replaying_history(mut self) -> Self {
        for owner in self.owners.values_mut() {
            owner.history_at = 0;
        }
        self
    }

    /// The directories to watch: the team's inboxes and histories.
    pub fn dirs(&self) -> [PathBuf; 2] {
        let paths = self.team.paths();
        [paths.inboxes(), paths.history()]
    }

    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// Hands `show` what arrived since the last call, oldest first. A follower that consumes
    /// shows each message before it leaves the inbox ([`crate::store::mailbox::Mailbox::consume_delivering`]):
    /// when `show` fails, what it was given stays unread, and the error is returned.
    pub fn arrivals(&mut self, mut show: impl FnMut(&Arrival) -> Result<()>) -> Result<()> {
        let components = match &self.scope {
            Scope::One(name) => vec![path_component(name)],
            Scope::All => self.components(&self.team.paths().inboxes(), TeamPaths::inbox_owner)?,
        };
        let mut arrived = Vec::new();
        for component in components {
            let to = self.name_of(&component);
            let mailbox = self.team.mailbox(&to);
            let owner = self.owners.entry(component).or_default();
            if self.consume {
                // What it took, and only that: a message another consumer took is theirs to show.
                mailbox.consume_delivering(
                    None,
                    |_| true,
                    |taken| {
                        taken
                            .iter()
                            .try_for_each(|message| show(&Arrival::new(&to, message.clone(), true)))
                    },
                )?;
                continue;
            }
            // The inbox first: a message consumed after this read is in the history read next.
            let unread = mailbox.peek()?;
            for message in &unread {
                if owner.shown_unread.insert(message.id().into_owned()) {
                    arrived.push(Arrival::new(&to, message.clone(), true));
                }
            }
            let (delivered, history_at) = mailbox.history_since(owner.history_at)?;
            owner.history_at = history_at;
            // Ids shown from history are remembered too: a consumer records a message again
            // (after a crash) only while it is still unread, and a message recorded after the
            // inbox read above may still be in the inbox at the next look.
            let mut recorded_now = HashSet::new();
            for message in delivered {
                let id = message.id().into_owned();
                if owner.shown_unread.insert(id.clone()) {
                    recorded_now.insert(id);
                    arrived.push(Arrival::new(&to, message, false));
                }
            }
            // What left the inbox was either in the history just read, or removed by a reader
            // that keeps no history (Claude Code); either way it cannot come back.
            let still_unread: HashSet<String> =
                unread.iter().map(|m| m.id().into_owned()).collect();
            // A message shown from history now is forgotten only once a later inbox read finds it
            // gone: every record of it came before its removal, so before that read's history.
            owner
                .shown_unread
                .retain(|id| still_unread.contains(id) || recorded_now.contains(id));
        }
        // Several inboxes changed at once: show their messages in the order they were sent.
        // Timestamps are RFC 3339 UTC, so they sort as text; the sort is stable for equal ones.
        arrived.sort_by(|a, b| a.message.timestamp().cmp(b.message.timestamp()));
        let mut copies: HashMap<String, usize> = HashMap::new();
        for arrival in &arrived {
            *copies.entry(arrival.message.id().into_owned()).or_default() += 1;
        }
        let mut shown = Vec::with_capacity(arrived.len());
        for mut arrival in arrived {
            let id = arrival.message.id().into_owned();
            // The first copy stands for every copy: shown now, or lately for another inbox.
            if !self.recent.insert(&id) {
                continue;
            }
            arrival.broadcast |= copies.get(&id).is_some_and(|n| *n > 1);
            shown.push(arrival);
        }
        shown.iter().try_for_each(show)
    }

    fn name_of(&self, component: &str) -> String {
        self.names
            .get(component)
            .cloned()
            .unwrap_or_else(|| component.to_owned())
    }

    /// Members in scope with a file in `dir` that `owner` recognises, sorted.
    fn components(&self, dir: &Path, owner: fn(&OsStr) -> Option<&str>) -> Result<Vec<String>> {
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(Error::io("list", dir, err)),
        };
        let mut found: Vec<String> = entries
            .filter_map(|entry| {
                let file = entry.ok()?.file_name();
                owner(&file)
                    .filter(|component| self.scope.includes(component))
                    .map(str::to_owned)
            })
            .collect();
        found.sort();
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;
    use crate::format::config::{Member, TeamConfig};
    use crate::store::paths::Home;

    fn team(dir: &Path) -> (Team, TeamConfig) {
        let config = TeamConfig {
            name: "t".into(),
            lead_agent_id: "team-lead@t".into(),
            members: vec![Member::new("team-lead", "t", 0), Member::new("bob", "t", 0)],
            ..TeamConfig::default()
        };
        let team = Team::create(&Home::new(dir.to_path_buf()), &config, false).unwrap();
        (team, config)
    }

    fn arrivals(follower: &mut Follower<'_>) -> Vec<Arrival> {
        let mut arrived = Vec::new();
        follower
            .arrivals(|arrival| {
                arrived.push(arrival.clone());
                Ok(())
            })
            .unwrap();
        arrived
    }

    fn texts(arrivals: &[Arrival]) -> Vec<&str> {
        arrivals.iter().map(|a| a.message.text()).collect()
    }

    #[test]
    fn a_message_consumed_before_anyone_looked_still_arrives_once() {
        let dir = tempfile::tempdir().unwrap();
        let (team, config) = team(dir.path());
        let bob = team.mailbox("bob");
        bob.append(&[InboxMessage::new("a", "old", None, None)])
            .unwrap();
        bob.consume(None, |_| true).unwrap();
        let mut follower = Follower::start(&team, &config, Scope::All, false).unwrap();
        assert!(
            arrivals(&mut follower).is_empty(),
            "history from before is not news"
        );

        bob.append(&[InboxMessage::new("a", "fast", None, None)])
            .unwrap();
        bob.consume(None, |_| true).unwrap();
        let arrived = arrivals(&mut follower);
        assert_eq!(texts(&arrived), ["fast"]);
        assert_eq!(arrived[0].to, "bob");
        assert!(arrivals(&mut follower).is_empty());
    }

    #[test]
    fn a_message_between_history_append_and_inbox_rewrite_is_not_shown_twice() {
        let dir = tempfile::tempdir().unwrap();
        let (team, config) = team(dir.path());
        let bob = team.mailbox("bob");
        let mut follower =
            Follower::start(&team, &config, Scope::One("bob".into()), false).unwrap();
        let message = InboxMessage::new("a", "slow reader", None, None);
        bob.append(std::slice::from_ref(&message)).unwrap();
        assert_eq!(texts(&arrivals(&mut follower)), ["slow reader"]);

        // A consumer's first step: the message is in history, and still in the inbox.
        let mut history = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(bob.history_path())
            .unwrap();
        writeln!(history, "{}", serde_json::to_string(&message).unwrap()).unwrap();
        assert!(arrivals(&mut follower).is_empty());
        assert!(arrivals(&mut follower).is_empty());
        // Its second step: the inbox is rewritten without it.
        bob.update(|unread| {
            unread.clear();
            Ok(((), true))
        })
        .unwrap();
        assert!(arrivals(&mut follower).is_empty());
    }

    #[test]
    fn a_message_recorded_twice_is_shown_once() {
        let dir = tempfile::tempdir().unwrap();
        let (team, config) = team(dir.path());
        let bob = team.mailbox("bob");
        let mut follower = Follower::start(&team, &config, Scope::All, false).unwrap();
        let message = InboxMessage::new("a", "twice", None, None);
        bob.append(std::slice::from_ref(&message)).unwrap();
        // A consumer recorded it and died before it rewrote the inbox; the next one recorded it
        // again and took it. Nobody looked in between.
        let mut history = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(bob.history_path())
            .unwrap();
        writeln!(history, "{}", serde_json::to_string(&message).unwrap()).unwrap();
        bob.consume(None, |_| true).unwrap();
        assert_eq!(texts(&arrivals(&mut follower)), ["twice"]);
        assert!(arrivals(&mut follower).is_empty());
    }

    #[test]
    fn a_message_seen_in_history_before_it_leaves_the_inbox_is_shown_once() {
        let dir = tempfile::tempdir().unwrap();
        let (team, config) = team(dir.path());
        let bob = team.mailbox("bob");
        let mut follower =
            Follower::start(&team, &config, Scope::One("bob".into()), false).unwrap();
        assert!(arrivals(&mut follower).is_empty());
        // What the follower sees when a message lands and a consumer records it between the
        // follower's inbox read and its history read: not in the inbox, then in history, then (not
        // yet removed) in the inbox at the next look.
        let message = InboxMessage::new("a", "in between", None, None);
        let mut history = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(bob.history_path())
            .unwrap();
        writeln!(history, "{}", serde_json::to_string(&message).unwrap()).unwrap();
        assert_eq!(texts(&arrivals(&mut follower)), ["in between"]);
        // Its inbox read: the message, not yet removed.
        bob.append(std::slice::from_ref(&message)).unwrap();
        assert!(arrivals(&mut follower).is_empty());
    }

    #[test]
    fn consuming_shows_each_message_once() {
        let dir = tempfile::tempdir().unwrap();
        let (team, config) = team(dir.path());
        let bob = team.mailbox("bob");
        bob.append(&[InboxMessage::new("a", "one", None, None)])
            .unwrap();
        let mut follower = Follower::start(&team, &config, Scope::One("bob".into()), true).unwrap();
        assert_eq!(texts(&arrivals(&mut follower)), ["one"]);
        assert!(bob.peek().unwrap().is_empty(), "consumed");
        bob.append(&[InboxMessage::new("a", "two", None, None)])
            .unwrap();
        assert_eq!(texts(&arrivals(&mut follower)), ["two"]);
        assert!(arrivals(&mut follower).is_empty());
    }

    #[test]
    fn consuming_leaves_unread_what_it_failed_to_show() {
        let dir = tempfile::tempdir().unwrap();
        let (team, config) = team(dir.path());
        let bob = team.mailbox("bob");
        bob.append(&[
            InboxMessage::new("a", "one", None, None),
            InboxMessage::new("a", "two", None, None),
        ])
        .unwrap();
        let mut follower = Follower::start(&team, &config, Scope::One("bob".into()), true).unwrap();
        let failed = follower.arrivals(|_| Err(Error::runtime("stdout is closed")));
        assert!(failed.is_err());
        assert_eq!(bob.peek().unwrap().len(), 2, "nothing shown, nothing taken");
        assert_eq!(texts(&arrivals(&mut follower)), ["one", "two"]);
        assert!(bob.peek().unwrap().is_empty(), "consumed once shown");
    }

    #[test]
    fn consuming_shows_what_it_took_and_nothing_another_consumer_took() {
        let dir = tempfile::tempdir().unwrap();
        let (team, config) = team(dir.path());
        let bob = team.mailbox("bob");
        let mut follower = Follower::start(&team, &config, Scope::One("bob".into()), true).unwrap();
        bob.append(&[InboxMessage::new("a", "one", None, None)])
            .unwrap();
        assert_eq!(texts(&arrivals(&mut follower)), ["one"]);
        // `recv` takes this one first; it is recv's to show.
        bob.append(&[InboxMessage::new("a", "two", None, None)])
            .unwrap();
        bob.consume(None, |_| true).unwrap();
        bob.append(&[InboxMessage::new("a", "three", None, None)])
            .unwrap();
        assert_eq!(texts(&arrivals(&mut follower)), ["three"]);
        assert!(arrivals(&mut follower).is_empty());
    }

    #[test]
    fn a_half_written_history_line_waits_for_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let (team, config) = team(dir.path());
        let bob = team.mailbox("bob");
        let mut follower =
            Follower::start(&team, &config, Scope::One("bob".into()), false).unwrap();
        let line = serde_json::to_string(&InboxMessage::new("a", "split", None, None)).unwrap();
        let (head, tail) = line.split_at(line.len() / 2);
        fs::write(bob.history_path(), head).unwrap();
        assert!(arrivals(&mut follower).is_empty());
        let mut history = fs::OpenOptions::new()
            .append(true)
            .open(bob.history_path())
            .unwrap();
        writeln!(history, "{tail}").unwrap();
        assert_eq!(texts(&arrivals(&mut follower)), ["split"]);
    }

    #[test]
    fn a_broadcast_shows_once_whenever_its_copies_land() {
        let dir = tempfile::tempdir().unwrap();
        let (team, config) = team(dir.path());
        team.update(|config| {
            config.members.push(Member::new("carol", "t", 0));
            Ok(())
        })
        .unwrap();
        let mut follower = Follower::start(&team, &config, Scope::All, false).unwrap();
        let mut broadcast = InboxMessage::new("team-lead", "to all", None, None);
        broadcast.mark_broadcast();
        // The first copy lands, is shown to `*`, and is taken; the second lands a look later.
        team.mailbox("bob")
            .append(std::slice::from_ref(&broadcast))
            .unwrap();
        let arrived = arrivals(&mut follower);
        assert_eq!(texts(&arrived), ["to all"]);
        assert!(arrived[0].broadcast);
        assert_eq!(arrived[0].addressee(), "*");
        assert_eq!(arrived[0].to, "bob", "verified as the copy it is");
        team.mailbox("bob").consume(None, |_| true).unwrap();
        assert!(arrivals(&mut follower).is_empty());
        team.mailbox("carol")
            .append(std::slice::from_ref(&broadcast))
            .unwrap();
        assert!(
            arrivals(&mut follower).is_empty(),
            "a later copy is the same"
        );

        // Another tool's broadcast is not marked: copies found at one look show once, to `*`.
        let unmarked = InboxMessage::new("team-lead", "also to all", None, None);
        for name in ["bob", "carol"] {
            team.mailbox(name)
                .append(std::slice::from_ref(&unmarked))
                .unwrap();
        }
        let arrived = arrivals(&mut follower);
        assert_eq!(texts(&arrived), ["also to all"]);
        assert_eq!(arrived[0].addressee(), "*");

        // A message to one member is to that member.
        team.mailbox("carol")
            .append(&[InboxMessage::new("bob", "just you", None, None)])
            .unwrap();
        let arrived = arrivals(&mut follower);
        assert_eq!(arrived[0].addressee(), "carol");
        assert!(!arrived[0].broadcast);
    }

    #[test]
    fn the_ids_remembered_are_bounded() {
        let mut recent = Recent::default();
        for n in 0..=RECENT_IDS {
            assert!(recent.insert(&n.to_string()));
        }
        assert!(!recent.insert(&RECENT_IDS.to_string()));
        assert_eq!(recent.ids.len(), RECENT_IDS);
        assert!(recent.insert("0"), "the oldest was forgotten");
    }

    #[test]
    fn scope_covers_inbox_and_history_files_only() {
        let bob = Scope::One("bob".into());
        for yes in ["bob.json", "bob.jsonl"] {
            assert!(bob.covers(OsStr::new(yes)), "{yes}");
        }
        for no in [
            "alice.json",
            "bob.json.lock",
            ".bob.flock",
            "bob.json.corrupt-1",
        ] {
            assert!(!bob.covers(OsStr::new(no)), "{no}");
        }
        assert!(Scope::All.covers(OsStr::new("alice.json")));
        assert!(!Scope::All.covers(OsStr::new(".bob.json.x.tmp")));
    }
}
