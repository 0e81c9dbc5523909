//! `swarm budget NAME USD [--tokens N]`: sets or raises a member's budget, or the team's (NAME the
//! team's own name), in config.json while the team runs (docs/ARCHITECTURE.md, "Costs and
//! budgets"). Each supervisor weighs its member's spending against config.json as it counts it,
//! so the new limit holds from the next reply on; the thresholds told for that budget are
//! forgotten, so they are told again when the new one is reached.

use serde::Serialize;

use crate::cli::context::Context;
use crate::cli::output::WithLine;
use crate::error::Result;
use crate::format::usage::{Budget, Limit};
use crate::policy::{self, Action};

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one document:
  {"team", "name", "usd", "tokens"}
"name" is the member, or the team's own name for the team's budget; "tokens" is null without
--tokens."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// The member, or the team's own name for the whole team's budget
    #[arg(value_name = "NAME")]
    pub(crate) name: String,

    /// The budget in US dollars
    #[arg(value_name = "USD", value_parser = parse_usd)]
    pub(crate) usd: f64,

    /// A limit in tokens as well (all four kinds added up)
    #[arg(long, value_name = "N")]
    pub(crate) tokens: Option<u64>,
}

fn parse_usd(raw: &str) -> std::result::Result<f64, String> {
    match raw.trim_start_matches('$').parse::<f64>() {
        Ok(usd) if usd.is_finite() && usd >= 0.0 => Ok(usd),
        _ => Err(format!(
            "{raw} is not an amount of dollars (0 or more, e.g. 20 or 2.50)"
        )),
    }
}

#[derive(Serialize)]
struct Set<'a> {
    team: &'a str,
    name: &'a str,
    usd: f64,
    tokens: Option<u64>,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let team = ctx.team()?;
    let config = team.load()?;
    policy::allow(&config, &ctx.caller(&config)?, Action::SetBudget)?;
    let whole_team = args.name == config.name;
    if !whole_team {
        config.require_member(&args.name)?;
    }
    let limit = Limit {
        usd: Some(args.usd),
        tokens: args.tokens,
    };
    team.update(|config| {
        let budget = config.budget.get_or_insert_with(Budget::default);
        if whole_team {
            budget.team = limit;
        } else {
            budget.members.insert(args.name.clone(), limit);
        }
        let scope = if whole_team {
            "team"
        } else {
            args.name.as_str()
        };
        config
            .budget_reached
            .retain(|told| told.split_once(':').is_none_or(|(whose, _)| whose != scope));
        Ok(())
    })?;
    let whose = if whole_team {
        format!("team {}", config.name)
    } else {
        args.name.clone()
    };
    ctx.report(&WithLine {
        line: format!("{whose}'s budget is now {}", limit.describe()),
        json: Set {
            team: &config.name,
            name: &args.name,
            usd: args.usd,
            tokens: args.tokens,
        },
    })
}
