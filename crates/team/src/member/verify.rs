//! How swarm's readers judge the lead's messages (docs/ARCHITECTURE.md, "Signed lead messages"):
//! with which key, and which `msg_id`s count as seen.
//!
//! A reader in member M's own pane (its `recv`, `watch`, plan waits, its supervisor's wrapper and
//! paste delivery) takes M's key from what M was launched with: `SWARM_LEAD_VERIFY_KEY` in its
//! supervisor's environment, which tmux set and nothing M runs can change. Every other reader
//! only shows messages, and takes the copy in config.json.
//!
//! A message M's run has taken is seen for good: once a reader has taken it out of the inbox, M's
//! supervisor keeps its id in memory ([`took`]) and answers on its socket which of a reader's
//! were taken before ([`consult`]): one found unread again is a replay. History, a file any
//! process of the user can empty, only adds to that.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use crate::base::process;
use crate::error::{Error, Result};
use crate::format::config::TeamConfig;
use crate::format::message::InboxMessage;
pub use crate::format::signature::{Judge, Verdict, VerifyKey};
use crate::launch::keys::KEY_VAR;
use crate::member::{identity, processes};
use crate::peer::{self, TakenQuery};
use crate::store::follow::Arrival;
use crate::store::team::Team;

/// Why nothing of the lead's is verified when a member's supervisor cannot be asked.
const DOUBT: &str = "its member's supervisor cannot say whether it was taken before";

/// The key member `name` verifies the lead's messages with, as a reader here sees it.
pub(crate) fn verify_key(team: &Team, config: &TeamConfig, name: &str) -> Option<VerifyKey> {
    let text = match identity::own_supervisor(team.home(), team.name(), name) {
        Some(supervisor) => process::environment_value(supervisor, KEY_VAR),
        None => config.member(name)?.lead_verify_key.clone(),
    };
    let text = text.filter(|t| !t.is_empty())?;
    match VerifyKey::parse(&text) {
        Ok(key) => Some(key),
        Err(err) => {
            // A key that cannot be read verifies nothing: everything from the lead is forged.
            tracing::warn!("{name}'s verify key: {err}");
            Some(VerifyKey::unusable())
        }
    }
}

/// A judge of what arrives for member `name`. With `delivered`, every `msg_id` already in its
/// history counts as seen: an entry coming back is a replay.
pub fn judge(team: &Team, config: &TeamConfig, name: &str, delivered: bool) -> Result<Judge> {
    let mut judge = Judge::new(verify_key(team, config, name), config.lead_name());
    if delivered && judge.key.is_some() {
        for message in team.mailbox(name).history()? {
            judge.saw(&message.id());
        }
    }
    Ok(judge)
}

/// Asks member `name`'s supervisor which of `messages`, found unread in its inbox, that claim
/// the lead's side its run has taken before; tells `judge`, which from then on counts them as
/// seen. A member with no live supervisor has no run to ask about: history is all there is. One
/// whose supervisor runs but cannot be asked is doubted: nothing of the lead's is verified.
pub fn consult(
    judge: &mut Judge,
    team: &Team,
    config: &TeamConfig,
    name: &str,
    messages: &[&InboxMessage],
) {
    let ids = judge.claimed(messages.iter().copied());
    match taken_before(team, config, name, ids, false) {
        Ok(before) => replays(team, name, before)
            .iter()
            .for_each(|id| judge.saw(id)),
        Err(err) => {
            tracing::warn!("which of {name}'s messages were taken cannot be told: {err}");
            judge.doubt(DOUBT);
        }
    }
}

/// Of the ids member `name`'s run took before, those still unread in its inbox now: its
/// supervisor is told of one only once it has left the inbox, so one there now came back, a
/// replay; one gone was taken while the reader looked, from the copy it had read before. An inbox
/// that cannot be read leaves them all replays.
pub(crate) fn replays(team: &Team, name: &str, before: Vec<String>) -> Vec<String> {
    if before.is_empty() {
        return before;
    }
    let Ok(now) = team.mailbox(name).peek() else {
        return before;
    };
    let unread: HashSet<String> = now.iter().map(|m| m.id().into_owned()).collect();
    before
        .into_iter()
        .filter(|id| unread.contains(id))
        .collect()
}

/// Tells member `name`'s supervisor that `messages`, which claim the lead's side, have left its
/// inbox, taken by a reader judged by `judge`: from now on each is a replay if it comes back.
/// Told after they left, so a reader that found one still unread meanwhile saw no replay. A
/// supervisor that cannot be told is a warning: what was taken was taken.
pub fn took(
    judge: &Judge,
    team: &Team,
    config: &TeamConfig,
    name: &str,
    messages: &[&InboxMessage],
) {
    let ids = judge.claimed(messages.iter().copied());
    if let Err(err) = taken_before(team, config, name, ids, true) {
        tracing::warn!("{name}'s supervisor was not told what was taken: {err}");
    }
}

/// The answer of member `name`'s live supervisor to a [`TakenQuery`]; none when it has none, or
/// nothing is asked.
fn taken_before(
    team: &Team,
    config: &TeamConfig,
    name: &str,
    ids: Vec<String>,
    take: bool,
) -> Result<Vec<String>> {
    if ids.is_empty() {
        return Ok(ids);
    }
    let Some(pid) = live_supervisor(team, config, name) else {
        return Ok(Vec::new());
    };
    // Its socket as recorded, else where a supervisor with its pid binds one: either way, only
    // that supervisor serving it is asked.
    let recorded = config
        .member(name)
        .and_then(|m| m.socket.as_deref())
        .map(PathBuf::from);
    let bound = u32::try_from(pid)
        .ok()
        .and_then(|pid| Some(peer::runtime_dir().ok()?.socket(pid)));
    let query = TakenQuery { taken: ids, take };
    let paths: Vec<PathBuf> = recorded.into_iter().chain(bound).collect();
    for path in &paths {
        let Ok(connection) = peer::connect(path) else {
            continue;
        };
        if connection.server().is_ok_and(|server| server.pid == pid) {
            return connection.ask_taken(&query);
        }
    }
    // A supervisor that has not bound its socket yet has not started the program: its run has
    // taken nothing. One whose socket was removed, or is served by another, cannot be asked.
    if !paths.iter().any(|path| peer::is_bound(path)) {
        return Ok(Vec::new());
    }
    Err(Error::runtime(format!(
        "{name}'s supervisor (process {pid}) cannot be asked on its socket"
    )))
}

/// The pid of member `name`'s supervisor, the one its pane runs under, if one lives: this
/// process's own when it runs in that pane, else the one config.json records, else any found
/// among the processes; config.json is only a claim, so each is checked against the process
/// (`processes::is_supervisor_of`).
fn live_supervisor(team: &Team, config: &TeamConfig, name: &str) -> Option<i32> {
    let home = team.home();
    if let Some(pid) = identity::own_supervisor(home, team.name(), name) {
        return Some(pid);
    }
    let home_id = home.id()?;
    let serves = |pid: i32| processes::is_supervisor_of(pid, home_id, team.name(), name);
    if let Some(pid) = config.member(name).and_then(|m| m.supervisor_pid)
        && serves(pid)
    {
        return Some(pid);
    }
    process::own_processes()
        .into_iter()
        .map(|p| p.pid)
        .find(|pid| serves(*pid))
}

/// One judge per member, made when first needed: for readers that follow several inboxes.
pub struct Judges<'a> {
    team: &'a Team,
    config: &'a TeamConfig,
    by_member: HashMap<String, Judge>,
}

impl<'a> Judges<'a> {
    pub fn new(team: &'a Team, config: &'a TeamConfig) -> Self {
        Self {
            team,
            config,
            by_member: HashMap::new(),
        }
    }

    fn of(&mut self, to: &str) -> &mut Judge {
        let (team, config) = (self.team, self.config);
        self.by_member
            .entry(to.to_owned())
            .or_insert_with(|| Judge::new(verify_key(team, config, to), config.lead_name()))
    }

    /// The verdict on what arrived: a message still unread, its member's run may have taken
    /// before (a replay), which its supervisor is asked.
    pub fn judge(&mut self, arrival: &Arrival) -> Verdict {
        let (team, config) = (self.team, self.config);
        let judge = self.of(&arrival.to);
        if arrival.unread {
            consult(judge, team, config, &arrival.to, &[&arrival.message]);
        }
        judge.judge(&arrival.message)
    }

    /// [`took`], for arrivals a reader has taken out of their inboxes.
    pub fn took(&mut self, arrivals: &[Arrival]) {
        let (team, config) = (self.team, self.config);
        for arrival in arrivals {
            let judge = self.of(&arrival.to);
            took(judge, team, config, &arrival.to, &[&arrival.message]);
        }
    }
}
