//! `swarm usage add --input N --output N [--model M]`: a member adds tokens to its own usage
//! (docs/ARCHITECTURE.md, "Costs and budgets"), for a program whose files swarm does not follow:
//! from its pane, or a hook of its program. The tokens go to the team's usage ledger, where
//! `cost`, `status`, `top` and the budgets count them.

use serde::Serialize;

use crate::base::clock;
use crate::cli::context::Context;
use crate::cli::output::WithLine;
use crate::error::{Error, Result};
use crate::format::usage::{Source, Spend, Tokens, UsageLine};
use crate::policy::{self, Action};
use crate::store::usage;

#[derive(Debug, clap::Subcommand)]
#[command(defer = true)]
pub(crate) enum Command {
    /// Add tokens to your own usage: from your pane, or a hook of your program
    Add(AddArgs),
}

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one document:
  {"team", "member", "model", "tokens": {"input", "output", "cacheWrite", "cacheRead"}, "usd",
   "unpriced"}
"usd" is what the tokens cost at the team's prices; "unpriced" is true when the model has none."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct AddArgs {
    /// Input tokens (neither read from nor written to a cache)
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub(crate) input: u64,

    /// Output tokens
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub(crate) output: u64,

    /// Input tokens written to the prompt cache
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub(crate) cache_write: u64,

    /// Input tokens read from the prompt cache
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub(crate) cache_read: u64,

    /// The model that used them, for its price; without it the money shows `?`
    #[arg(long, value_name = "M")]
    pub(crate) model: Option<String>,
}

#[derive(Serialize)]
struct Added<'a> {
    team: &'a str,
    member: &'a str,
    model: Option<&'a str>,
    #[serde(flatten)]
    spend: Spend,
}

pub(crate) fn run(ctx: &Context, command: Command) -> Result<()> {
    let Command::Add(args) = command;
    let tokens = Tokens {
        input: args.input,
        output: args.output,
        cache_write: args.cache_write,
        cache_read: args.cache_read,
    };
    if tokens.is_zero() {
        return Err(Error::usage(
            "nothing to add: give --input, --output, --cache-write or --cache-read",
        ));
    }
    if args
        .model
        .as_deref()
        .is_some_and(|model| model.trim().is_empty())
    {
        return Err(Error::usage("--model needs a model name"));
    }
    let team = ctx.team()?;
    let config = team.load()?;
    let caller = ctx.member_of(&config)?;
    policy::allow(&config, &caller, Action::AddUsage)?;
    let member = caller.name().as_str();
    usage::append(
        team.paths(),
        &[UsageLine {
            at: clock::timestamp_now(),
            member: member.to_owned(),
            model: args.model.clone(),
            tokens,
            source: Source::Added,
            id: None,
            place: None,
        }],
    )?;
    let spend = Spend::of_model(args.model.as_deref(), tokens, &config.prices);
    ctx.report(&WithLine {
        line: format!(
            "added {} tokens ({}) to {member}'s usage in {}",
            tokens.total(),
            spend.money(),
            config.name
        ),
        json: Added {
            team: &config.name,
            member,
            model: args.model.as_deref(),
            spend,
        },
    })
}
