//! Ending members from outside their panes, for `stop` and `down`. The supervisor is asked first
//! (SIGUSR1, with the reason in config.json), so it records the ending and notifies the lead as it
//! always does. A member whose supervisor is gone, or does not respond, has its processes ended
//! and its ending recorded here instead, found as `member/processes.rs` finds them. Either way
//! its pane is killed, and nothing the member started is left running.

use std::collections::BTreeMap;
use std::time::Duration;

use nix::sys::signal::Signal;

use crate::base::names::Name;
use crate::base::{clock, process};
use crate::error::{Error, Result};
use crate::format::config::TeamConfig;
pub use crate::format::config::{Member, State};
use crate::launch::tmux::Tmux;
use crate::member::ending::{self, Ending};
use crate::member::liveness::Observed;
use crate::member::pane;
use crate::member::processes::{self, Run};
use crate::member::reach::Reach;
use crate::member::{GRACE, ending_bound};
use crate::policy::{self, Action, Caller};
use crate::store::paths::TeamPaths;
use crate::store::team::Team;
use crate::store::watcher::Watcher;

/// Whom `stop NAME` (`all`: every live member but the lead) names, once the policy allows
/// `caller_of` to stop: the team as observed, and the names.
pub fn chosen(
    team: &Team,
    reach: &dyn Reach,
    name: Option<&Name>,
    caller_of: impl FnOnce(&TeamConfig) -> Result<Caller>,
) -> Result<(Observed, Vec<String>)> {
    let observed = Observed::take(team, reach)?;
    let config = &observed.config;
    // A misspelt name is not found, whoever asks.
    let named = name
        .map(|name| config.require_member(name.as_str()))
        .transpose()?;
    policy::allow(config, &caller_of(config)?, Action::Stop)?;
    let lead = config.lead_name().to_owned();
    let names: Vec<String> = match named {
        None => observed
            .live()
            .filter(|name| *name != lead)
            .map(str::to_owned)
            .collect(),
        Some(member) => {
            let seen = observed.seen(member);
            if !seen.is_live() {
                return Err(Error::usage(format!(
                    "{} is not running ({})",
                    member.name,
                    seen.label()
                )));
            }
            vec![member.name.clone()]
        }
    };
    Ok((observed, names))
}

/// Stops the named members at once, those this machine runs (`reach` tells); returns each
/// one's final state label.
pub fn stop(
    team: &Team,
    reach: &dyn Reach,
    names: &[String],
    reason: &str,
) -> Result<BTreeMap<String, String>> {
    let watcher = Watcher::arm(team.paths().dir())?;
    let targets: Vec<Member> = team.update(|config| {
        // A member away is its own machine's to stop: its pids mean nothing here.
        let sites = reach.sites(config);
        let mut targets = Vec::new();
        for name in names {
            if let Some(member) = config.member_mut(name)
                && sites.is_here(member)
                && member.state.is_some_and(|state| !state.is_final())
            {
                member.stop_requested = Some(reason.to_owned());
                targets.push(member.clone());
            }
        }
        Ok(targets)
    })?;

    let mut unsupervised = Vec::new();
    for member in &targets {
        // Signalled only when its own command line shows it is this member's supervisor.
        match Run::of(team, member).filter(Run::supervisor_proven) {
            Some(run) => {
                process::signal(run.supervisor, Signal::SIGUSR1);
            }
            None => unsupervised.push(member),
        }
    }
    // No supervisor will record these: end what they left running and record it here.
    let orphans: Vec<Run> = unsupervised
        .iter()
        .filter_map(|member| Run::of(team, member))
        .collect();
    processes::end(&orphans, GRACE);
    for member in &unsupervised {
        record_killed(team, member, reason)?;
    }

    // The supervisors end their programs and record the endings within their own bound.
    let pending = |names: &[String]| -> Result<Vec<String>> {
        let config = team.load()?;
        Ok(names
            .iter()
            .filter(|name| {
                config
                    .member(name)
                    .is_some_and(|m| m.state.is_some_and(|s| !s.is_final()))
            })
            .cloned()
            .collect())
    };
    let waiting_for: Vec<String> = targets
        .iter()
        .filter(|m| !unsupervised.iter().any(|u| u.name == m.name))
        .map(|m| m.name.clone())
        .collect();
    let deadline = clock::deadline(ending_bound());
    let left = watcher
        .wait_for(deadline, &TeamPaths::is_config, || {
            let left = pending(&waiting_for)?;
            Ok(left.is_empty().then_some(()))
        })?
        .map_or_else(|| pending(&waiting_for), |()| Ok(Vec::new()))?;

    for name in &left {
        let Some(member) = targets.iter().find(|m| &m.name == name) else {
            continue;
        };
        tracing::warn!("the supervisor of {name} did not record its end; killing its processes");
        if let Some(run) = Run::of(team, member) {
            // Found while the supervisor lives, so the orphans it adopted are among them.
            processes::end(std::slice::from_ref(&run), Duration::ZERO);
            if run.supervisor_proven() {
                process::signal(run.supervisor, Signal::SIGKILL);
            }
        }
        record_killed(team, member, reason)?;
    }

    // Whatever is still running of a member whose ending is recorded is ended too.
    let runs: Vec<Run> = targets
        .iter()
        .filter_map(|member| Run::of(team, member))
        .collect();
    processes::end(&runs, GRACE);

    let config = team.load()?;
    if let Some(placement) = &config.tmux {
        let tmux = Tmux::at(&placement.socket);
        for member in names.iter().filter_map(|name| config.member(name)) {
            pane::kill(team, &tmux, member)?;
        }
    }
    let observed = Observed::take(team, reach)?;
    Ok(names
        .iter()
        .filter_map(|name| {
            let member = observed.config.member(name)?;
            Some((name.clone(), observed.seen(member).label().to_owned()))
        })
        .collect())
}

/// Records the ending of a member that swarm ended itself, without its supervisor.
fn record_killed(team: &Team, member: &Member, reason: &str) -> Result<()> {
    let ending = Ending {
        state: State::Killed,
        exit_code: None,
        reason: Some(reason.to_owned()),
        worktree: member.worktree_path.clone(),
    };
    ending::record(team, &member.name, &ending).map(drop)
}
