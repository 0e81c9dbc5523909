//! Stopping members wherever they run, for `stop` and the dashboard's `x` (docs/ARCHITECTURE.md,
//! "Roster, control and status across hosts"): this host's members through `member::stop`, each
//! other host's through its node, asked once per host with a `stop` request.

use std::collections::BTreeMap;

use crate::base::names::Name;
use crate::cluster::control::{self, StopReply, StopRequest};
use crate::error::Result;
use crate::format::config::TeamConfig;
use crate::member::{ending, stop};
use crate::policy::Caller;
use crate::store::team::Team;

/// `stop NAME` (`all` without a name: every live member but the lead) as `caller_of` the team's
/// config asks it, under the policy, wherever each member runs; returns each one's final state
/// label.
pub(crate) fn stop_as(
    team: &Team,
    name: Option<&Name>,
    caller_of: impl FnOnce(&TeamConfig) -> Result<Caller>,
) -> Result<BTreeMap<String, String>> {
    let (observed, names) = stop::chosen(team, name, caller_of)?;
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
    let mut stopped = stop::stop(team, &here, ending::STOP)?;
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
