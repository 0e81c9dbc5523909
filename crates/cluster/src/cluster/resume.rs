//! Resuming a team wherever its members run (docs/ARCHITECTURE.md, "Resuming a team"): a resume
//! on the lead's host places this host's members itself and hands the rest to `ResumeSpread`,
//! which first refuses a team whose other hosts cannot answer for their members, then asks each
//! other host's node to resume its interrupted members, their plans keyed on the lead's host.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::base::clock;
use crate::cluster::control::{
    self, Link, RESUME, ResumeReply, ResumeRequest, STOP, StopReply, StopRequest,
};
use crate::cluster::fleet::{Fleet, Seen, Sight};
use crate::error::{Error, Result};
use crate::launch::prepare::PanePlan;
use crate::member::ending;
use crate::store::team::Team;

/// How long a resume waits for another host's node to be seen: a node just started is seen
/// once it has beaten twice, a beat a second.
const SEEN_WAIT: Duration = Duration::from_secs(10);

/// How long, once every host is seen, a member elsewhere still recorded running is given to be
/// judged by its host's node before the team is taken as running.
const SETTLE: Duration = Duration::from_secs(3);

/// How often it looks again meanwhile.
const LOOK_AGAIN: Duration = Duration::from_millis(250);

impl Fleet {
    /// Before a resume of `team` makes anything: refuses (exit 2) a team across hosts whose
    /// members on another host cannot be answered for now, their host's node not seen from here
    /// (a member last heard running may be running still, or may have been interrupted), and
    /// connects to the server when another host has members to resume. Nothing for a team on one
    /// host.
    pub fn resume_spread(&self, team: &Team) -> Result<ResumeSpread> {
        if !team.load()?.spans_hosts() {
            return Ok(ResumeSpread { link: None });
        }
        // Nodes that start together (a reboot: the resume at login may run before this host's
        // node has seen the others beat) are given a moment to see each other, and each a moment
        // more to judge its members once seen.
        let deadline = Instant::now() + SEEN_WAIT;
        let mut said = false;
        let mut all_seen: Option<Instant> = None;
        let elsewhere = loop {
            let look = self.look_away(team)?;
            let now = Instant::now();
            if let Some((host, names)) = look.unheard.into_iter().next() {
                if now >= deadline {
                    return Err(Error::usage(format!(
                        "team {} cannot be resumed now: the swarm node of host {host} is not \
                         seen from here, so what became of {} there is not known",
                        team.name(),
                        names.join(", ")
                    ))
                    .with_hint(format!(
                        "start it there (`swarm node --name {host}`), which judges its members \
                         as it starts; then resume again"
                    )));
                }
                if !said {
                    said = true;
                    tracing::warn!(
                        "team {}: waiting up to {} s for the swarm node of host {host} to be seen",
                        team.name(),
                        SEEN_WAIT.as_secs()
                    );
                }
            } else if !look.unjudged || all_seen.get_or_insert(now).elapsed() >= SETTLE {
                // Still recorded running once judged: the caller refuses a running team.
                break look.elsewhere;
            }
            std::thread::sleep(LOOK_AGAIN);
        };
        if !elsewhere {
            return Ok(ResumeSpread { link: None });
        }
        let link = Link::open(
            &control::settings_here(self.home())?,
            &format!("swarm resume {}", team.name()),
        )?;
        Ok(ResumeSpread { link: Some(link) })
    }

    /// What this host can tell now of `team`'s members on other hosts. Nothing while a member
    /// runs here: the caller refuses a running team, with nothing to wait for.
    fn look_away(&self, team: &Team) -> Result<AwayLook> {
        let mut look = AwayLook::default();
        let observed = &self.observe(team)?.observed;
        if observed.live_here().next().is_some() {
            return Ok(look);
        }
        let sight = Sight::look(self.home());
        let to_resume = observed.to_resume();
        let interrupted: Vec<&str> = to_resume
            .iter()
            .map(|member| member.name.as_str())
            .collect();
        let interrupted_here = to_resume.iter().any(|member| observed.is_here(member));
        for (member, seen) in observed.members() {
            let Some(host) = member.host.as_deref().filter(|_| !observed.is_here(member)) else {
                continue;
            };
            let to_resume = interrupted.contains(&member.name.as_str());
            if seen == Seen::Unreachable || (to_resume && !sight.reaches(host)) {
                look.unheard
                    .entry(host.to_owned())
                    .or_default()
                    .push(member.name.clone());
            }
            look.unjudged |= interrupted_here && seen.is_live();
            look.elsewhere |= to_resume;
        }
        Ok(look)
    }
}

/// What a resume sees of a team's members on other hosts.
#[derive(Default)]
struct AwayLook {
    /// The hosts whose node is not seen from here, with their members this host cannot answer
    /// for.
    unheard: BTreeMap<String, Vec<String>>,
    /// A member elsewhere still recorded running while this host's were interrupted: its host,
    /// rebooted too, may not have judged it yet.
    unjudged: bool,
    /// Another host has members to resume.
    elsewhere: bool,
}

impl Fleet {
    /// The host `team` is led from, when that is another host than this one: the team is resumed
    /// from there, and this host's node resumes its members here when asked.
    pub fn led_from_elsewhere(&self, team: &Team) -> Option<String> {
        let config = team.load().ok()?;
        if !config.spans_hosts() {
            return None;
        }
        let host = config.member(config.lead_name())?.host.clone();
        Sight::look(self.home())
            .is_remote(host.as_deref())
            .then_some(host)
            .flatten()
    }
}

/// The connection a resume asks other hosts' nodes over: none for a team whose members to resume
/// all run on this host.
pub struct ResumeSpread {
    link: Option<Link>,
}

/// What other hosts' nodes resumed.
#[derive(Debug, Default)]
pub struct ResumedElsewhere {
    /// The members each host resumed, by host, in roster order.
    pub hosts: Vec<(String, Vec<String>)>,
    /// What those nodes said of them (a member that starts a new conversation there).
    pub notes: Vec<String>,
}

impl ResumeSpread {
    /// Asks each other host's node to resume its members of `away` (plans made by
    /// `member::resume::prepare`, with their new keys), in the team's `layout`, and writes the
    /// records each answers with into config.json at once, as `up` does. A host that does not
    /// answer, or refuses, is one line naming it; what the hosts before it resumed is then
    /// stopped, as a failed launch's members are, and the caller stops what it placed here.
    pub fn start(
        &self,
        team: &Team,
        away: &[PanePlan],
        layout: Option<&str>,
    ) -> Result<ResumedElsewhere> {
        let mut resumed = ResumedElsewhere::default();
        let Some(link) = &self.link else {
            return Ok(resumed);
        };
        let config = team.load()?;
        let mut by_host: Vec<(String, Vec<PanePlan>)> = Vec::new();
        for member in &config.members {
            let Some(plan) = away.iter().find(|plan| plan.name == member.name) else {
                continue;
            };
            let host = member.host.clone().unwrap_or_default();
            match by_host.iter_mut().find(|(h, _)| *h == host) {
                Some((_, plans)) => plans.push(plan.clone()),
                None => by_host.push((host, vec![plan.clone()])),
            }
        }
        for (host, plans) in by_host {
            let names: Vec<String> = plans.iter().map(|plan| plan.name.clone()).collect();
            let request = ResumeRequest {
                team: team.name().to_owned(),
                panes: plans,
                layout: layout.map(str::to_owned),
                answer_by_ms: Some(
                    clock::now_ms()
                        + u64::try_from(control::START_WAIT.as_millis()).unwrap_or(u64::MAX),
                ),
            };
            let reply: ResumeReply = match link.ask(&host, RESUME, &request, control::START_WAIT) {
                Ok(reply) => reply,
                Err(err) => return Err(undo(link, team, &resumed.hosts, err)),
            };
            control::take_records(team, reply.members)?;
            resumed.notes.extend(reply.notes);
            resumed.hosts.push((host, names));
        }
        Ok(resumed)
    }
}

/// Stops what the hosts in `resumed` resumed, after `err`; says what it could not.
fn undo(link: &Link, team: &Team, resumed: &[(String, Vec<String>)], err: Error) -> Error {
    resumed.iter().fold(err, |err, (host, names)| {
        let request = StopRequest {
            team: team.name().to_owned(),
            members: names.clone(),
            reason: ending::RESUME_FAILED.to_owned(),
        };
        match link.ask::<_, StopReply>(host, STOP, &request, control::stop_wait()) {
            Ok(_) => err.with_note(format!(
                "stopped {}, already resumed on host {host}",
                names.join(", ")
            )),
            Err(stuck) => err.with_note(format!(
                "cannot stop {}, already resumed on host {host}: {stuck}",
                names.join(", ")
            )),
        }
    })
}
