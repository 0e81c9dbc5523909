//! Starting a team wherever its members run (docs/ARCHITECTURE.md, "Roster, control and status
//! across hosts"): `up` places this host's panes itself and hands the rest to `Spread`, which
//! takes the other hosts' plans out of the launch, keys their teammates here, and asks each
//! other host's node to start its members.

use crate::cluster::control::{self, DownReply, DownRequest, Link, StartReply, StartRequest};
use crate::cluster::fleet::Fleet;
use crate::cluster::settings::Sources;
use crate::error::{Error, Result};
use crate::launch::keys;
use crate::launch::prepare::{PanePlan, Prepared};
use crate::launch::teamfile::TeamFile;
use crate::store::node;
use crate::store::team::Team;

impl Fleet {
    /// Gives every member of `file` its host, this one's by default, and takes the other hosts'
    /// plans out of `prepared`. Refused, with nothing made, when the team spans hosts and no node
    /// runs here or the server cannot be reached.
    pub fn spread(&self, file: &TeamFile, prepared: &mut Prepared) -> Result<Spread> {
        if file.members.iter().all(|member| member.host.is_none()) {
            return Ok(Spread::here());
        }
        let here = node::running(self.home())?
            .ok_or_else(|| {
                Error::usage(format!(
                    "team {} names hosts, but no swarm node runs on this host",
                    file.name
                ))
                .with_hint("start one with `swarm node --name NAME`, in a tmux pane or as a unit (--print-unit)")
            })?
            .name;
        let mut remote: Vec<(String, Vec<PanePlan>)> = Vec::new();
        for member in &mut prepared.config.members {
            let host = member.host.get_or_insert_with(|| here.clone()).clone();
            if host == here {
                continue;
            }
            let Some(at) = prepared.panes.iter().position(|p| p.name == member.name) else {
                continue;
            };
            let plan = prepared.panes.remove(at);
            match remote.iter_mut().find(|(h, _)| *h == host) {
                Some((_, plans)) => plans.push(plan),
                None => remote.push((host, vec![plan])),
            }
        }
        if remote.is_empty() {
            return Ok(Spread::here());
        }
        let settings = Sources::from_env()
            .or(Sources {
                nats: file.cluster.nats.clone(),
                creds: file.cluster.creds.clone(),
                ..Sources::default()
            })
            .settle()?
            .ok_or_else(|| {
                Error::usage(format!(
                    "team {} has members on other hosts but no NATS server",
                    file.name
                ))
                .with_hint("set SWARM_NATS_URL, or `nats = \"nats://host:4222\"` under [cluster]")
            })?;
        let link = Link::open(&settings, &format!("swarm up {}", file.name))?;
        link.ensure_stream(file.name.as_str())?;
        Ok(Spread {
            elsewhere: Some(Elsewhere { link, here, remote }),
        })
    }
}

/// The members of a team being started that another host's node starts: none for a team on one
/// host.
pub struct Spread {
    elsewhere: Option<Elsewhere>,
}

/// The server, this host's name, and each other host with the plans of its members, in file
/// order.
struct Elsewhere {
    link: Link,
    here: String,
    remote: Vec<(String, Vec<PanePlan>)>,
}

/// The members another host's node started, by host, in file order.
pub(crate) type StartedElsewhere = Vec<(String, Vec<String>)>;

impl Spread {
    /// A team whose members all run on this host.
    pub fn here() -> Self {
        Self { elsewhere: None }
    }

    /// How many members other hosts start.
    pub fn elsewhere(&self) -> usize {
        self.elsewhere.as_ref().map_or(0, |elsewhere| {
            elsewhere.remote.iter().map(|(_, plans)| plans.len()).sum()
        })
    }

    /// Gives every teammate its verify key, made by `key` (docs/ARCHITECTURE.md, "Signed lead
    /// messages"): in its argv, its pane's environment and config.json. The lead gets none. A
    /// teammate another host's node starts is keyed here too, its key travelling in its plan,
    /// and its record names this host as the one holding its key.
    pub fn key_teammates(
        &mut self,
        prepared: &mut Prepared,
        mut key: impl FnMut(&str) -> Result<String>,
    ) -> Result<()> {
        let lead = prepared.config.lead_name().to_owned();
        let (here, remote): (Option<String>, Vec<&mut PanePlan>) = match &mut self.elsewhere {
            Some(elsewhere) => (
                Some(elsewhere.here.clone()),
                elsewhere
                    .remote
                    .iter_mut()
                    .flat_map(|(_, plans)| plans.iter_mut())
                    .collect(),
            ),
            None => (None, Vec::new()),
        };
        let mut plans: Vec<&mut PanePlan> = prepared.panes.iter_mut().chain(remote).collect();
        for member in &mut prepared.config.members {
            let Some(plan) = plans.iter_mut().find(|p| p.name == member.name) else {
                continue;
            };
            if member.name != lead {
                keys::apply(member, &mut plan.env, &key(&member.name)?);
                plan.argv = member.argv.clone().unwrap_or_default();
                member.key_host.clone_from(&here);
            }
        }
        Ok(())
    }

    /// Publishes the roster and asks each other host's node to start its members, mirroring the
    /// records it answers with. A host that fails ends what the hosts before it started. Nothing
    /// to do for a team on one host.
    pub fn start(&self, team: &Team, file: &TeamFile) -> Result<StartedElsewhere> {
        let Some(elsewhere) = &self.elsewhere else {
            return Ok(Vec::new());
        };
        let config = team.load()?;
        elsewhere.link.publish_roster(&config)?;
        let mut started: StartedElsewhere = Vec::new();
        for (host, plans) in &elsewhere.remote {
            let request = StartRequest {
                config: config.clone(),
                panes: plans.clone(),
                layout: file.layout.as_ref().map(|l| l.as_str().to_owned()),
            };
            let reply: StartReply =
                match elsewhere
                    .link
                    .ask(host, control::START, &request, control::START_WAIT)
                {
                    Ok(reply) => reply,
                    Err(err) => return Err(elsewhere.undo(team, &started, err)),
                };
            control::take_records(team, reply.members)?;
            started.push((host.clone(), plans.iter().map(|p| p.name.clone()).collect()));
        }
        Ok(started)
    }
}

impl Elsewhere {
    /// Takes down what `started` hosts started, after `err`; says what it could not.
    fn undo(&self, team: &Team, started: &StartedElsewhere, err: Error) -> Error {
        let request = DownRequest {
            team: team.name().to_owned(),
            timeout_ms: 0,
            force: true,
        };
        started.iter().fold(err, |err, (host, _)| {
            match self
                .link
                .ask::<_, DownReply>(host, control::DOWN, &request, control::START_WAIT)
            {
                Ok(_) => err.with_note(format!("ended what host {host} started")),
                Err(stuck) => {
                    err.with_note(format!("cannot end what host {host} started: {stuck}"))
                }
            }
        })
    }
}
