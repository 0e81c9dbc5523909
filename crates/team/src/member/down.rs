//! Taking a whole team down (docs/ARCHITECTURE.md, "Ending and stopping"): every live teammate is
//! asked to shut down; those that have not ended by the timeout are stopped, the lead last; then
//! whatever any member still runs is ended and the remaining panes are killed. `down`, `down --rm`
//! and `rm --force` all end a team this one way, holding the team's launch lock (`launch/lock.rs`):
//! nothing is stopped while an `up` places the team's panes.

use std::time::Duration;

use crate::base::clock;
use crate::error::Result;
use crate::format::config::Member;
pub use crate::format::settings::Protocol;
pub use crate::format::structured::{ShutdownRequest, Structured, shutdown_request_id};
use crate::launch::lock::LaunchLock;
use crate::launch::tmux::Tmux;
use crate::member::GRACE;
use crate::member::ending;
use crate::member::liveness::{self, Awaited, Observed, Seen};
use crate::member::pane;
use crate::member::processes::{self, Run};
use crate::member::reach::Reach;
use crate::member::seal;
use crate::member::stop;
use crate::policy::Caller;
use crate::store::team::Team;

/// How a team is taken down.
#[derive(Debug, Clone, Copy)]
pub struct Down {
    /// How long teammates get to answer a shutdown request and exit before they are stopped.
    pub timeout: Duration,
    /// Skip the shutdown requests and stop everyone at once.
    pub force: bool,
}

/// What became of a team taken down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing of the team runs any more.
    Down,
    /// Run from inside the lead's process tree: everything but the lead was ended; the lead ends
    /// when its program exits.
    LeadSpared,
}

/// What happens to each member while a team is taken down, as it happens.
#[derive(Debug, Clone, Copy)]
pub enum Report<'a> {
    /// The teammates asked to shut down, and how long they get before they are stopped: said once,
    /// before the wait.
    Waiting {
        names: &'a [String],
        timeout: Duration,
    },
    /// A teammate could not be asked to shut down (its request could not be signed); it is
    /// stopped with the rest.
    NotAsked { name: &'a str, why: &'a str },
    /// A member asked to shut down has ended (or vanished).
    Ended(&'a Member, Seen),
    /// A member was stopped: its record once stopped, and its final state.
    Stopped(&'a Member, &'a str),
}

impl Report<'_> {
    /// One line for people.
    pub fn line(&self) -> String {
        match self {
            Self::Waiting { names, timeout } => format!(
                "waiting up to {}s for {} to answer the shutdown request and exit; then whoever is \
                 left is stopped, with {}s to exit after SIGTERM before SIGKILL ({}s in all)",
                timeout.as_secs_f64(),
                names.join(", "),
                GRACE.as_secs_f64(),
                (*timeout + GRACE).as_secs_f64()
            ),
            Self::NotAsked { name, why } => format!("cannot ask {name} to shut down: {why}"),
            Self::Ended(member, seen) => liveness::ending_line(member, *seen),
            Self::Stopped(member, state) => format!("{} stopped: {state}", member.name),
        }
    }
}

/// Takes `team` down, reporting what becomes of each member through `report`. The caller has
/// already been allowed to (`policy::Action::Down`), and holds the team's launch lock (`_held`).
pub fn down(
    team: &Team,
    reach: &dyn Reach,
    _held: &LaunchLock,
    how: Down,
    mut report: impl FnMut(Report<'_>) -> Result<()>,
) -> Result<Outcome> {
    let observed = Observed::take(team, reach)?;
    let config = &observed.config;
    let lead = config.lead_name().to_owned();
    let lead_caller = Caller::member(config, &lead)?;
    // Members away are their own machines' to end (docs/ARCHITECTURE.md, "Roster, control and
    // status across hosts").
    let live: Vec<String> = observed.live_here().map(str::to_owned).collect();
    // Run from the lead's own program, stopping the lead would stop this command too: the lead
    // ends when its program exits.
    let lead_run: Vec<Run> = config
        .member(&lead)
        .and_then(|member| Run::of(team, member))
        .into_iter()
        .collect();
    let caller_is_lead =
        processes::owner_of(i32::try_from(std::process::id()).unwrap_or(0), &lead_run).is_some();
    let teammates: Vec<String> = live.iter().filter(|n| **n != lead).cloned().collect();
    let stop_now = |names: &[String], report: &mut dyn FnMut(Report<'_>) -> Result<()>| {
        if names.is_empty() {
            return Ok(());
        }
        let stopped = stop::stop(team, reach, names, ending::SHUTDOWN)?;
        if !stopped.is_empty() {
            let config = team.load()?;
            for (name, state) in &stopped {
                if let Some(member) = config.member(name) {
                    report(Report::Stopped(member, state))?;
                }
            }
        }
        Ok::<(), crate::error::Error>(())
    };

    if !how.force && !teammates.is_empty() {
        // A member whose protocol says it answers nothing is not asked, nor waited for; nor is
        // one whose supervisor is gone, which nothing answers for.
        let (answering, mut mute): (Vec<String>, Vec<String>) =
            teammates.iter().cloned().partition(|name| {
                config
                    .member(name)
                    .is_none_or(|m| m.protocol() != Protocol::None)
            });
        let (answering, orphaned): (Vec<String>, Vec<String>) =
            answering.into_iter().partition(|name| {
                config
                    .member(name)
                    .is_none_or(|m| observed.seen(m) != Seen::Orphaned)
            });
        for name in &orphaned {
            report(Report::NotAsked {
                name,
                why: "its supervisor is gone, so nothing answers for it",
            })?;
        }
        mute.extend(orphaned);
        let mut asked = Vec::new();
        for name in &answering {
            let request = Structured::ShutdownRequest(ShutdownRequest {
                request_id: shutdown_request_id(clock::now_ms(), name),
                from: lead.clone(),
                reason: Some("the team is shutting down".to_owned()),
                timestamp: clock::timestamp_now(),
            });
            // A teammate that cannot be asked (its request cannot be signed: the signing agent
            // is gone) is stopped with the rest below.
            match seal::request(team, reach, config, &lead_caller, name, &request) {
                Ok(_) => asked.push(name.clone()),
                Err(err) => report(Report::NotAsked {
                    name,
                    why: err.message(),
                })?,
            }
        }
        let deadline = clock::deadline(how.timeout);
        if !asked.is_empty() {
            report(Report::Waiting {
                names: &asked,
                timeout: how.timeout,
            })?;
        }
        stop_now(&mute, &mut report)?;
        liveness::wait_for_endings(
            team,
            reach,
            Awaited::Named(&asked),
            deadline,
            |member, seen| report(Report::Ended(member, seen)),
        )?;
    }

    let mut remaining: Vec<String> = Observed::take(team, reach)?
        .live_here()
        .filter(|name| *name != lead)
        .map(str::to_owned)
        .collect();
    if !caller_is_lead && live.contains(&lead) {
        remaining.push(lead.clone());
    }
    stop_now(&remaining, &mut report)?;
    // Nothing any member started outlives the team, whatever became of its supervisor.
    let runs: Vec<Run> = team
        .load()?
        .members
        .iter()
        .filter(|m| observed.is_here(m) && !(caller_is_lead && m.name == lead))
        .filter_map(|member| Run::of(team, member))
        .collect();
    processes::end(&runs, GRACE);
    // Panes of members that ended on their own close with their supervisors; any left go now.
    let config = team.load()?;
    if let Some(placement) = &config.tmux {
        let tmux = Tmux::at(&placement.socket);
        for member in &config.members {
            if (member.name == lead && caller_is_lead) || !observed.is_here(member) {
                continue;
            }
            pane::kill(team, &tmux, member)?;
        }
        // The dashboard `up` opened goes with the team.
        if let Some(dashboard) = &placement.dashboard_pane {
            pane::kill_dashboard(team, &tmux, dashboard)?;
        }
    }
    Ok(if caller_is_lead {
        Outcome::LeadSpared
    } else {
        Outcome::Down
    })
}
