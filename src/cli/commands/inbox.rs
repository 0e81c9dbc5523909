//! `swarm inbox [NAME] [--all]`: look at unread messages without consuming them. Outside every
//! pane, yours is `user`'s, which every team has.

use clap_complete::engine::ArgValueCandidates;
use serde_json::{Value, json};

use crate::cli::complete;
use crate::cli::context::Context;
use crate::cli::output::WithLines;
use crate::cli::render;
use crate::error::Result;
use crate::member::verify;
use crate::policy::{self, Action};

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one document, oldest first:
  [{"state": "delivered" | "unread", ...the message}]
A message is its object from the inbox, fields in their order, with "msg_id", "timestamp" in
RFC 3339, "structured" after "text" (the protocol message it holds, decoded, or null), and
"verified" when it claims to come from the lead's side (swarm(1), JSON OUTPUT)."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// Whose inbox [default: yours]
    #[arg(value_name = "NAME", add = ArgValueCandidates::new(complete::members))]
    pub(crate) name: Option<String>,

    /// Include delivered messages from history, oldest first
    #[arg(long)]
    pub(crate) all: bool,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let (team, named) = ctx.team_and_member(args.name.as_deref())?;
    let config = team.load()?;
    let name = match named {
        Some(name) => {
            ctx.fleet().inbox_is_here(&config, name.as_str())?;
            name
        }
        None => ctx.member_of(&config)?.name().clone(),
    };
    // `user`, the person at the keyboard, has an inbox in every team, on the roster or not.
    let owner = policy::require_inbox(&config, name.as_str())?.to_owned();
    policy::allow(&config, &ctx.caller(&config)?, Action::Read)?;
    let mailbox = team.mailbox(&owner);
    let (delivered, unread) = if args.all {
        mailbox.listing()?
    } else {
        (Vec::new(), mailbox.peek()?)
    };

    // Delivered first (with --all, else as seen from history): an unread entry whose msg_id was
    // delivered before is a replay.
    let mut judge = verify::judge(&team, &config, &owner, !args.all)?;
    let delivered: Vec<_> = delivered.iter().map(|m| (m, judge.judge(m))).collect();
    // An unread message its member's run took before is a replay, whatever history says.
    verify::consult(
        &mut judge,
        &team,
        &config,
        &owner,
        &unread.iter().collect::<Vec<_>>(),
    );
    let unread: Vec<_> = unread.iter().map(|m| (m, judge.judge(m))).collect();

    let json: Vec<Value> = delivered
        .iter()
        .map(|(m, v)| render::json(m, *v, &[("state", json!("delivered"))]))
        .chain(
            unread
                .iter()
                .map(|(m, v)| render::json(m, *v, &[("state", json!("unread"))])),
        )
        .collect();
    let mut lines = Vec::new();
    if args.all {
        lines.push(format!("# delivered to {} ({})", owner, delivered.len()));
        lines.extend(delivered.iter().map(|(m, v)| render::line(m, *v)));
        lines.push(format!("# unread ({})", unread.len()));
    }
    lines.extend(unread.iter().map(|(m, v)| render::line(m, *v)));
    ctx.report(&WithLines { json, lines })
}
