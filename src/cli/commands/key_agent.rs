//! `swarm key-agent TEAM LEAD`: the signing agent of a team (docs/ARCHITECTURE.md, "Signed lead
//! messages"). The lead's side starts it on demand; not run by hand.

use crate::cli::context::Context;
use crate::error::Result;
use crate::member::signer::agent;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The team whose keys it holds
    // Not the id `team`: that is the global `--team`'s, which every subcommand takes.
    #[arg(id = "team_arg", value_name = "TEAM")]
    pub(crate) team: String,

    /// The team's lead: the only member whose pane it serves
    #[arg(value_name = "LEAD")]
    pub(crate) lead: String,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    agent::serve(&ctx.home, Box::new(ctx.fleet()), &args.team, &args.lead)
}
