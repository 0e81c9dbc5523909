//! `swarm stop NAME|all`: stop members now. SIGTERM to the program's process group, a grace
//! period, SIGKILL, and the pane killed; the member is recorded as killed and the lead notified.

use clap_complete::engine::ArgValueCandidates;

use crate::base::names::Name;
use crate::cli::complete;
use crate::cli::context::Context;
use crate::cli::{output, render};
use crate::error::{Error, Result};
use crate::member::liveness::Observed;
use crate::member::stop;
use crate::policy::{self, Action};

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one line per member stopped, its ending as `swarm wait` prints it:
  {"event": "stopped", "name", "agentId", "state", "exitCode", "reason", "endedAt",
   "endedAtMs", "notice"}"#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// The member to stop, or `all` for every running member but the lead
    #[arg(value_name = "NAME|all", add = ArgValueCandidates::new(complete::members))]
    pub(crate) name: String,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let team = ctx.team()?;
    let observed = Observed::take(&team)?;
    let config = &observed.config;
    // A misspelt name is not found, whoever asks.
    let named = if args.name == "all" {
        None
    } else {
        let name = Name::parse("member", &args.name)?;
        Some(config.require_member(name.as_str())?)
    };
    policy::allow(config, &ctx.caller(config)?, Action::Stop)?;
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
    let stopped = stop::stop(&team, &names, "stop")?;
    let config = team.load()?;
    for (name, state) in &stopped {
        let Some(member) = config.member(name) else {
            continue;
        };
        if ctx.json {
            output::json_line(&render::event("stopped", render::ending(member, state)))?;
        } else {
            output::line(member.notice.as_ref().map_or_else(
                || format!("{name} {state}"),
                |notice| notice.summary.clone(),
            ))?;
        }
    }
    Ok(())
}
