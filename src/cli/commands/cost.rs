//! `swarm cost [TEAM] [--since DUR] [--all]`: what each member spent, per model, and the team's
//! total and rate over the last 10 minutes, from the team's usage ledger (docs/ARCHITECTURE.md,
//! "Costs and budgets"). Money is at the team's `[prices]` over the list swarm ships; a model
//! with no price shows its tokens and `?`.

use std::fmt::Write as _;
use std::time::Duration;

use clap_complete::engine::ArgValueCandidates;
use serde::Serialize;

use crate::base::clock;
use crate::cli::args::parse_duration;
use crate::cli::complete;
use crate::cli::context::Context;
use crate::cli::output::{self, Report, Table};
use crate::error::Result;
use crate::format::usage::{Limit, Spend, Tokens, token_count};
use crate::policy::{self, Action};
use crate::store::team::{Team, list_teams};
use crate::store::usage::{RATE_WINDOW_MS, Tally};

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one document:
  {"team", "since", "sinceMs", "members": [{"name", "models": [{"model", "tokens": {"input",
    "output", "cacheWrite", "cacheRead"}, "usd", "unpriced"}], "total": SPEND, "lastTenMinutes":
    SPEND, "budget": {"usd", "tokens"}}], "total": SPEND, "lastTenMinutes": SPEND, "budget":
    {"usd", "tokens"}}
with --all: {"teams": [that document for each team]}.
SPEND is {"tokens": {"input", "output", "cacheWrite", "cacheRead"}, "usd", "unpriced"}: "usd"
adds up the tokens whose model has a price, and "unpriced" is true when some have none (the text
shows "?" for money then, or "$1.20+?"). "model" is null for tokens added without --model.
"since" is null without --since; "budget" is null without one."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// The team [default: --team, SWARM_TEAM, the only team, or the only one running]
    // Its own id: sharing the global --team's would let an empty SWARM_TEAM fill it.
    #[arg(id = "team_arg", value_name = "TEAM", add = ArgValueCandidates::new(complete::teams), conflicts_with = "all")]
    pub(crate) team: Option<String>,

    /// Only what was spent in the last DURATION (seconds, or 30s, 2m, 1h)
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) since: Option<Duration>,

    /// Every team under home
    #[arg(long)]
    pub(crate) all: bool,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ModelCost {
    model: Option<String>,
    #[serde(flatten)]
    spend: Spend,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct MemberCost {
    name: String,
    models: Vec<ModelCost>,
    total: Spend,
    last_ten_minutes: Spend,
    budget: Option<Limit>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct TeamCost {
    team: String,
    since: Option<String>,
    since_ms: Option<u64>,
    members: Vec<MemberCost>,
    total: Spend,
    last_ten_minutes: Spend,
    budget: Option<Limit>,
}

#[derive(Debug, Serialize)]
struct AllCosts {
    teams: Vec<TeamCost>,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let since_ms = args.since.map(|since| {
        clock::now_ms().saturating_sub(u64::try_from(since.as_millis()).unwrap_or(u64::MAX))
    });
    if args.all {
        let mut teams = Vec::new();
        for name in list_teams(&ctx.home)? {
            teams.push(team_cost(ctx, &Team::open(&ctx.home, &name)?, since_ms)?);
        }
        return ctx.report(&AllCosts { teams });
    }
    let team = ctx.team_or(args.team.as_deref())?;
    ctx.report(&team_cost(ctx, &team, since_ms)?)
}

fn team_cost(ctx: &Context, team: &Team, since_ms: Option<u64>) -> Result<TeamCost> {
    let config = team.load()?;
    policy::allow(&config, &ctx.caller(&config)?, Action::Read)?;
    let mut tally = Tally::new(since_ms);
    tally.read_on(team.paths())?;
    let recent = tally.recent(clock::now_ms());
    let prices = &config.prices;
    let budget = config.budget.as_ref();
    // Everyone on the roster, then anyone the ledger names who has left it.
    let mut names: Vec<String> = config.members.iter().map(|m| m.name.clone()).collect();
    names.extend(
        tally
            .members
            .keys()
            .filter(|name| !config.members.iter().any(|m| &m.name == *name))
            .cloned(),
    );
    let members: Vec<MemberCost> = names
        .into_iter()
        .map(|name| {
            let by_model = tally.of(&name);
            let models = by_model
                .iter()
                .map(|(model, tokens)| ModelCost {
                    model: model.clone(),
                    spend: Spend::of_model(model.as_deref(), *tokens, prices),
                })
                .collect();
            let last = recent
                .get(&name)
                .map(|by_model| Spend::of(by_model, prices))
                .unwrap_or_default();
            MemberCost {
                budget: budget.and_then(|b| b.members.get(&name)).copied(),
                total: Spend::of(&by_model, prices),
                last_ten_minutes: last,
                models,
                name,
            }
        })
        .collect();
    let total = members
        .iter()
        .fold(Spend::default(), |sum, member| sum + member.total);
    let last_ten_minutes = members.iter().fold(Spend::default(), |sum, member| {
        sum + member.last_ten_minutes
    });
    Ok(TeamCost {
        team: config.name.clone(),
        since: since_ms.map(clock::format_ms),
        since_ms,
        members,
        total,
        last_ten_minutes,
        budget: budget
            .map(|b| b.team)
            .filter(|l| l.usd.is_some() || l.tokens.is_some()),
    })
}

/// `12.3k`: all four kinds of a spend's tokens.
fn tokens(tokens: &Tokens) -> String {
    token_count(tokens.total())
}

impl TeamCost {
    fn header(&self) -> String {
        let window = RATE_WINDOW_MS / 60_000;
        let mut line = format!(
            "team {}: {} ({} tokens), last {window} min {}",
            self.team,
            self.total.money(),
            tokens(&self.total.tokens),
            self.last_ten_minutes.money()
        );
        if let Some(since) = &self.since {
            let _ = write!(line, ", since {since}");
        }
        if let Some(budget) = &self.budget {
            let _ = write!(line, ", budget {}", budget.describe());
        }
        line
    }

    fn table(&self) -> Table {
        let mut table = Table::new(&[
            "MEMBER", "MODEL", "INPUT", "OUTPUT", "CACHE-W", "CACHE-R", "COST", "LAST 10M",
            "BUDGET",
        ]);
        for member in &self.members {
            let budget = member.budget.map(|b| b.describe()).unwrap_or_default();
            if member.models.is_empty() {
                table.row(vec![
                    member.name.clone(),
                    "-".into(),
                    "0".into(),
                    "0".into(),
                    "0".into(),
                    "0".into(),
                    member.total.money(),
                    member.last_ten_minutes.money(),
                    budget,
                ]);
                continue;
            }
            for (index, model) in member.models.iter().enumerate() {
                let first = index == 0;
                let t = &model.spend.tokens;
                table.row(vec![
                    if first {
                        member.name.clone()
                    } else {
                        String::new()
                    },
                    model.model.clone().unwrap_or_else(|| "?".into()),
                    token_count(t.input),
                    token_count(t.output),
                    token_count(t.cache_write),
                    token_count(t.cache_read),
                    model.spend.money(),
                    if first {
                        member.last_ten_minutes.money()
                    } else {
                        String::new()
                    },
                    if first { budget.clone() } else { String::new() },
                ]);
            }
        }
        table
    }
}

impl Report for TeamCost {
    fn text(&self) -> Result<()> {
        output::line(self.header())?;
        self.table().print()
    }
}

impl Report for AllCosts {
    fn text(&self) -> Result<()> {
        for (index, team) in self.teams.iter().enumerate() {
            if index > 0 {
                output::line("")?;
            }
            team.text()?;
        }
        Ok(())
    }
}
