//! The rest of the program's one way to a team's members wherever they run (docs/ARCHITECTURE.md,
//! "Layers" and "Across machines"), and the one answer to what the member layer asks of a team
//! that may span hosts (`member::reach::Reach`): where each member runs, and which host's signing
//! agent signs for a teammate. Every process hands it down: commands, supervisors, the signing
//! agent, the dashboard and the node alike.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use serde::Serialize;

use crate::base::names::Name;
use crate::cluster::control::{self, DownReply, DownRequest, StopReply, StopRequest};
use crate::cluster::sign;
use crate::error::{Error, Result};
use crate::format::config::{Member, TeamConfig};
use crate::format::message::InboxMessage;
use crate::launch::lock::LaunchLock;
pub use crate::member::down::{self, Down, Outcome, Report};
pub use crate::member::liveness::{Observed, Seen};
pub use crate::member::reach::{Reach, Sites};
use crate::member::signer;
use crate::member::{ending, stop};
use crate::policy::Caller;
use crate::store::node;
use crate::store::paths::Home;
use crate::store::team::Team;

/// Every host the members of this home's teams run on, as this host reaches them: itself, and
/// the others through their nodes (one node serves one home). A team on one host only ever meets
/// this host's part.
#[derive(Debug, Clone)]
pub struct Fleet {
    home: Home,
}

impl Fleet {
    pub fn of(home: &Home) -> Self {
        Self { home: home.clone() }
    }

    /// The home whose teams it reaches.
    pub(crate) fn home(&self) -> &Home {
        &self.home
    }

    /// The team and what its members are doing, observed once wherever they run; with this host's
    /// node as the same look saw it, for a team across hosts.
    pub fn observe(&self, team: &Team) -> Result<Observation> {
        let looked = Looked {
            fleet: self,
            sight: OnceLock::new(),
        };
        let observed = Observed::take(team, &looked)?;
        let node = looked.sight.into_inner().map(|sight| NodeSeen {
            host: sight.here,
            connected: sight.connected,
        });
        Ok(Observation { observed, node })
    }

    /// `stop NAME` (`all` without a name: every live member but the lead) as `caller_of` the
    /// team's config asks it, under the policy, wherever each member runs (docs/ARCHITECTURE.md,
    /// "Roster, control and status across hosts"): this host's members through `member::stop`,
    /// each other host's through its node, asked once per host. Returns each one's final state
    /// label.
    pub fn stop(
        &self,
        team: &Team,
        name: Option<&Name>,
        caller_of: impl FnOnce(&TeamConfig) -> Result<Caller>,
    ) -> Result<BTreeMap<String, String>> {
        let (observed, names) = stop::chosen(team, self, name, caller_of)?;
        // Members on other hosts are stopped by their own nodes: their pids mean nothing here.
        let mut here = Vec::new();
        let mut elsewhere: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for name in names {
            match observed
                .config
                .member(&name)
                .filter(|m| !observed.is_here(m))
            {
                Some(member) => elsewhere
                    .entry(member.host.clone().unwrap_or_default())
                    .or_default()
                    .push(name),
                None => here.push(name),
            }
        }
        let mut stopped = stop::stop(team, self, &here, ending::STOP)?;
        for (host, members) in elsewhere {
            let request = StopRequest {
                team: team.name().to_owned(),
                members,
                reason: ending::STOP.to_owned(),
            };
            let reply: StopReply = control::ask(
                team.home(),
                &host,
                control::STOP,
                &request,
                control::stop_wait(),
            )?;
            stopped.extend(reply.stopped);
        }
        Ok(stopped)
    }

    /// Takes `team` (its roster `config`) down wherever it runs (docs/ARCHITECTURE.md, "Roster,
    /// control and status across hosts"): every other host's node takes its members down, all at
    /// once, then this host's go as `member::down` takes them; `report` hears of each as it
    /// happens. A host that cannot be reached is said once this host's members are down too: exit
    /// 1 naming each, having ended everything it could. The caller has already been allowed to,
    /// and holds the team's launch lock (`held`).
    pub fn down(
        &self,
        team: &Team,
        config: &TeamConfig,
        held: &LaunchLock,
        how: Down,
        mut report: impl FnMut(DownEvent<'_>) -> Result<()>,
    ) -> Result<Outcome> {
        let unreached = self.down_elsewhere(team, config, how, &mut report)?;
        let outcome = down::down(team, self, held, how, |here| report(DownEvent::Here(here)))?;
        if !unreached.is_empty() {
            return Err(Error::runtime(format!(
                "team {} is down here, but not on {}",
                team.name(),
                unreached.join("; ")
            ))
            .with_hint(
                "once the NATS server and that host's node answer again, run `swarm down` once more",
            ));
        }
        Ok(outcome)
    }

    /// Asks the node of every other host with members of the team to take them down there,
    /// reporting what it says; returns each host that could not be reached, with why.
    fn down_elsewhere(
        &self,
        team: &Team,
        config: &TeamConfig,
        how: Down,
        report: &mut impl FnMut(DownEvent<'_>) -> Result<()>,
    ) -> Result<Vec<String>> {
        let sight = Sight::look(&self.home);
        let hosts: BTreeSet<&str> = config
            .members
            .iter()
            .filter_map(|m| m.host.as_deref())
            .filter(|host| sight.is_remote(Some(host)))
            .collect();
        let request = DownRequest {
            team: team.name().to_owned(),
            timeout_ms: u64::try_from(how.timeout.as_millis()).unwrap_or(u64::MAX),
            force: how.force,
        };
        let wait = how.timeout + control::stop_wait();
        // What the other hosts wait for is said before their answers, which come once they are
        // done.
        let elsewhere: Vec<String> = config
            .members
            .iter()
            .filter(|m| m.host.as_deref().is_some_and(|host| hosts.contains(host)))
            .filter(|m| {
                m.state.is_some_and(|state| !state.is_final()) && m.name != config.lead_name()
            })
            .map(|m| m.name.clone())
            .collect();
        if !how.force && !elsewhere.is_empty() {
            report(DownEvent::Here(Report::Waiting {
                names: &elsewhere,
                timeout: how.timeout,
            }))?;
        }
        // Every host at once: each gives its members the whole timeout, so the hosts' waits
        // overlap rather than add up.
        let answers: Vec<(&str, Result<DownReply>)> = std::thread::scope(|scope| {
            let asked: Vec<_> = hosts
                .iter()
                .map(|&host| {
                    let request = &request;
                    let home = &self.home;
                    (
                        host,
                        scope.spawn(move || control::ask(home, host, control::DOWN, request, wait)),
                    )
                })
                .collect();
            asked
                .into_iter()
                .map(|(host, asked)| {
                    let answer = asked.join().unwrap_or_else(|_| {
                        Err(Error::runtime(format!("asking host {host} failed")))
                    });
                    (host, answer)
                })
                .collect()
        });
        let mut unreached = Vec::new();
        for (host, answer) in answers {
            match answer {
                Ok(reply) => {
                    // What the host reported stands even if this host cannot write it down now;
                    // the roster brings the same records.
                    if let Err(err) = control::take_records(team, reply.members) {
                        tracing::warn!("cannot record what host {host} reported: {err}");
                    }
                    for line in &reply.lines {
                        report(DownEvent::Elsewhere { host, line })?;
                    }
                }
                Err(err) => unreached.push(format!("{host} ({})", err.message())),
            }
        }
        Ok(unreached)
    }

    /// Refuses reading the inbox of member `name` here when it runs on another host
    /// (docs/ARCHITECTURE.md, "Messages across hosts"): it is read there; the file here only
    /// holds what waits to cross. Only when this host's name is known (its node runs, or ran) is
    /// another host certain.
    pub fn inbox_is_here(&self, config: &TeamConfig, name: &str) -> Result<()> {
        let Some(host) = config.member(name).and_then(|m| m.host.as_deref()) else {
            return Ok(());
        };
        if Sight::look(&self.home)
            .here
            .is_none_or(|here| here.as_str() == host)
        {
            return Ok(());
        }
        Err(Error::usage(format!(
            "{name} runs on host {host}: its inbox is read there"
        ))
        .with_hint(format!(
            "run the command on {host}; here, `swarm send {name} …` reaches it"
        )))
    }

    /// The host a member added here (`spawn`, `join`) runs on, set in its record (docs/
    /// ARCHITECTURE.md, "Across machines"): none in a team on one host; in a team across hosts
    /// this host, so that its node puts the member in the roster and every other host forwards
    /// its messages. A member keyed here has its key held here too.
    pub fn place_new_member(&self, config: &TeamConfig, member: &mut Member) -> Result<()> {
        if !config.spans_hosts() {
            return Ok(());
        }
        let here = Sight::look(&self.home).here.ok_or_else(|| {
            Error::usage(format!(
                "team {} spans hosts, but no swarm node has run on this host",
                config.name
            ))
            .with_hint("start one with `swarm node --name NAME`, then add the member again")
        })?;
        if member.lead_verify_key.is_some() {
            member.key_host = Some(here.clone());
        }
        member.host = Some(here);
        Ok(())
    }
}

impl Reach for Fleet {
    /// A member whose record names another host than this one runs there; it is heard from while
    /// this host's node is connected and sees that host's node alive. A team that names no host
    /// runs here, and nothing of the node is looked at.
    fn sites(&self, config: &TeamConfig) -> Sites {
        if !config.spans_hosts() {
            return Sites::default();
        }
        Sight::look(&self.home).sites(config)
    }

    /// This host's agent signs, unless the teammate's record names another host as the one that
    /// keyed it (`keyHost`); that host's node then signs with its agent.
    fn sign(
        &self,
        team: &Team,
        config: &TeamConfig,
        to: &Member,
        key: &str,
        message: &InboxMessage,
    ) -> Result<String> {
        let elsewhere = to
            .key_host
            .as_deref()
            .filter(|host| Sight::look(&self.home).is_remote(Some(host)));
        match elsewhere {
            None => signer::sign(
                &self.home,
                team.name(),
                config.lead_name(),
                &to.name,
                key,
                message,
            ),
            Some(host) => sign::sign(&self.home, host, team.name(), &to.name, message),
        }
    }
}

/// What happens while a team is taken down wherever it runs, as it happens.
#[derive(Debug, Clone, Copy)]
pub enum DownEvent<'a> {
    /// On this host, or this host's word of whom the others wait for.
    Here(Report<'a>),
    /// One line another host's node reports of its members there.
    Elsewhere { host: &'a str, line: &'a str },
}

/// A team as one look from this host shows it.
#[derive(Debug, Clone)]
pub struct Observation {
    pub observed: Observed,
    /// This host's node as the look saw it; `None` for a team on one host, which has none to see.
    pub node: Option<NodeSeen>,
}

impl Observation {
    /// How many messages wait unread for `member`, where that can be told: `None` for a member on
    /// another host, whose inbox is read there; the file here only holds what waits to cross.
    pub fn unread(&self, team: &Team, member: &Member) -> Result<Option<usize>> {
        if !self.observed.is_here(member) {
            return Ok(None);
        }
        Ok(Some(team.mailbox(&member.name).peek()?.len()))
    }

    /// `name`, saying so when it is unreachable: its host's node is not seen, so it may have ended
    /// there unheard.
    pub fn described(&self, name: &str) -> String {
        match self.observed.config.member(name) {
            Some(member) if self.observed.seen(member) == Seen::Unreachable => format!(
                "{name} (unreachable: the node of host {} is not seen)",
                member.host.as_deref().unwrap_or("?")
            ),
            _ => name.to_owned(),
        }
    }
}

/// This host's node, as `status` reports it for a team across hosts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeSeen {
    /// This host's name: the running node's, else the last node's.
    pub host: Option<String>,
    /// Whether it runs and reaches the server now.
    pub connected: bool,
}

/// [`Fleet`] for one observation: the node's files looked at once, and kept to say what was seen.
struct Looked<'a> {
    fleet: &'a Fleet,
    sight: OnceLock<Sight>,
}

impl Reach for Looked<'_> {
    fn sites(&self, config: &TeamConfig) -> Sites {
        if !config.spans_hosts() {
            return Sites::default();
        }
        self.sight
            .get_or_init(|| Sight::look(&self.fleet.home))
            .sites(config)
    }

    fn sign(
        &self,
        team: &Team,
        config: &TeamConfig,
        to: &Member,
        key: &str,
        message: &InboxMessage,
    ) -> Result<String> {
        self.fleet.sign(team, config, to, key, message)
    }
}

/// What this host knows of the others, from its local files only: its own host name, whether its
/// node reaches the server, and which hosts' nodes that node sees alive. A command never asks
/// NATS for this.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Sight {
    /// This host's name: the running node's, else the last node's.
    pub(crate) here: Option<String>,
    /// Whether this host's node runs and reaches the server now.
    pub(crate) connected: bool,
    /// The hosts whose nodes are seen alive, when `connected`.
    pub(crate) alive: BTreeSet<String>,
}

impl Sight {
    /// Looks once. Files that cannot be read count as knowing nothing: every other host
    /// unreachable.
    pub(crate) fn look(home: &Home) -> Self {
        let running = node::running(home).ok().flatten();
        let here = running
            .as_ref()
            .map(|r| r.name.clone())
            .or_else(|| node::read(home).ok().flatten().map(|r| r.name));
        let connected = running.is_some_and(|r| r.connected);
        let alive = if connected {
            node::read_hosts(home)
                .ok()
                .flatten()
                .unwrap_or_default()
                .alive
        } else {
            BTreeSet::new()
        };
        Self {
            here,
            connected,
            alive,
        }
    }

    /// Whether a member on `host` runs on another host: one with no host runs here.
    pub(crate) fn is_remote(&self, host: Option<&str>) -> bool {
        host.is_some_and(|host| Some(host) != self.here.as_deref())
    }

    /// Whether `host`'s node is seen alive through a connected node here.
    pub(crate) fn reaches(&self, host: &str) -> bool {
        self.connected && self.alive.contains(host)
    }

    /// Where the members of `config` run, as this look tells.
    fn sites(&self, config: &TeamConfig) -> Sites {
        Sites::with_away(config.members.iter().filter_map(|member| {
            let host = member.host.as_deref().filter(|h| self.is_remote(Some(h)))?;
            Some((member.name.clone(), self.reaches(host)))
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::member::reach::Site;

    /// A member on another host is heard from while this host's node is connected and sees that
    /// host's node alive; a member on this host is here, whatever the node sees.
    #[test]
    fn a_member_is_away_on_another_host_and_heard_while_its_node_is_seen() {
        let mut config = TeamConfig::default();
        let mut remote = Member::new("bob", "t", 1);
        remote.host = Some("gpu1".into());
        let mut local = Member::new("carol", "t", 1);
        local.host = Some("laptop".into());
        config.members.extend([remote.clone(), local.clone()]);
        let mut sight = Sight {
            here: Some("laptop".into()),
            connected: true,
            alive: ["laptop".to_owned(), "gpu1".to_owned()].into(),
        };
        let site = |sight: &Sight, member: &Member| sight.sites(&config).of(member);
        assert_eq!(site(&sight, &remote), Site::Away { heard: true });
        assert_eq!(site(&sight, &local), Site::Here);
        sight.alive.remove("gpu1");
        assert_eq!(site(&sight, &remote), Site::Away { heard: false });
        sight.alive.insert("gpu1".into());
        sight.connected = false;
        assert_eq!(site(&sight, &remote), Site::Away { heard: false });
        // On its own host the same record is here.
        sight.here = Some("gpu1".into());
        assert_eq!(site(&sight, &remote), Site::Here);
        assert_eq!(site(&sight, &local), Site::Away { heard: false });
    }
}
