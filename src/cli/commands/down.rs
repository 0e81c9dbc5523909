//! `swarm down [TEAM]`: a graceful shutdown of the whole team. Every live teammate is asked to shut
//! down; those that have not ended by the timeout are stopped, the lead last; then their panes go.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::base::clock;
use crate::cli::args::parse_seconds;
use crate::cli::context::Context;
use crate::cli::output;
use crate::error::Result;
use crate::format::structured::{ShutdownRequest, Structured, shutdown_request_id};
use crate::member::GRACE;
use crate::member::liveness::{self, Observed};
use crate::member::processes::{self, Run};
use crate::member::seal;
use crate::member::stop;
use crate::policy::{self, Action, Caller};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The team [default: --team, SWARM_TEAM, or the only team]
    // Its own id: sharing the global --team's would let an empty SWARM_TEAM fill it.
    #[arg(id = "team_arg", value_name = "TEAM")]
    pub(crate) team: Option<String>,

    /// How long teammates get to answer and exit before they are stopped
    #[arg(long, value_name = "SECS", value_parser = parse_seconds, default_value = "20")]
    pub(crate) timeout: Duration,

    /// Skip the shutdown requests and stop everyone at once
    #[arg(long)]
    pub(crate) force: bool,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let team = ctx.team_or(args.team.as_deref())?;
    let observed = Observed::take(&team)?;
    let config = &observed.config;
    let lead = config.lead_name().to_owned();
    policy::allow(config, &ctx.caller(config)?, Action::Down)?;
    let lead_caller = Caller::member(config, &lead)?;
    let live: Vec<String> = observed.live().map(str::to_owned).collect();
    // Run from the lead's own program, stopping the lead would stop this command too: the lead
    // ends when its program exits.
    let lead_run: Vec<Run> = config.member(&lead).and_then(Run::of).into_iter().collect();
    let caller_is_lead =
        processes::owner_of(i32::try_from(std::process::id()).unwrap_or(0), &lead_run).is_some();
    let teammates: Vec<String> = live.iter().filter(|n| **n != lead).cloned().collect();

    if !args.force && !teammates.is_empty() {
        let mut asked = Vec::new();
        for name in &teammates {
            let request = Structured::ShutdownRequest(ShutdownRequest {
                request_id: shutdown_request_id(clock::now_ms(), name),
                from: lead.clone(),
                reason: Some("the team is shutting down".to_owned()),
                timestamp: clock::timestamp_now(),
            });
            // A teammate that cannot be asked (its request cannot be signed: the signing agent
            // is gone) is stopped with the rest below.
            match seal::request(&team, config, &lead_caller, name, &request) {
                Ok(_) => asked.push(name.clone()),
                Err(err) => report(
                    ctx,
                    &format!("cannot ask {name} to shut down: {}", err.message()),
                )?,
            }
        }
        let deadline = Instant::now() + args.timeout;
        liveness::wait_for_endings(&team, &asked, Some(deadline), |member, seen| {
            report(ctx, &liveness::ending_line(member, seen))
        })?;
    }

    let mut remaining: Vec<String> = Observed::take(&team)?
        .live()
        .filter(|name| *name != lead)
        .map(str::to_owned)
        .collect();
    if !caller_is_lead && live.contains(&lead) {
        remaining.push(lead.clone());
    }
    let stopped = stop::stop(&team, &remaining, "shutdown")?;
    for (name, state) in &stopped {
        report(ctx, &format!("{name} stopped: {state}"))?;
    }
    // Nothing any member started outlives the team, whatever became of its supervisor.
    let runs: Vec<Run> = team
        .load()?
        .members
        .iter()
        .filter(|m| !(caller_is_lead && m.name == lead))
        .filter_map(Run::of)
        .collect();
    processes::end(&runs, GRACE);
    // Panes of members that ended on their own close with their supervisors; any left go now.
    let config = team.load()?;
    if let Some(placement) = &config.tmux {
        let tmux = crate::launch::tmux::Tmux::at(&placement.socket);
        for member in &config.members {
            if member.name == lead && caller_is_lead {
                continue;
            }
            if !member.tmux_pane_id.is_empty() {
                tmux.kill_pane(&member.tmux_pane_id)?;
            }
        }
    }
    if ctx.json {
        return output::json_line(&json!({"team": config.name, "down": true}));
    }
    if caller_is_lead {
        output::line(format!(
            "team {} is down; the lead ends when its program exits",
            config.name
        ))
    } else {
        output::line(format!("team {} is down", config.name))
    }
}

fn report(ctx: &Context, line: &str) -> Result<()> {
    if ctx.json {
        output::json_line(&json!({"event": line}))
    } else {
        output::line(line)
    }
}
