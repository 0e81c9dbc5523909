//! `swarm init TEAMFILE`: create a team without launching anything.

use std::path::PathBuf;

use serde_json::json;

use crate::context::Context;
use crate::error::Result;
use crate::output;
use crate::setup;
use crate::teamfile::TeamFile;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The TOML team file (see teams/ for examples)
    #[arg(value_name = "TEAMFILE")]
    pub teamfile: PathBuf,
}

pub fn run(ctx: &Context, args: Args) -> Result<()> {
    let file = TeamFile::load(&args.teamfile)?;
    let prepared = setup::prepare(&ctx.home, &file, &|key| std::env::var(key).ok());
    let team = setup::create(&ctx.home, &prepared.config, false)?;
    let names: Vec<&str> = prepared.config.roster();
    if ctx.json {
        return output::json(&json!({
            "team": team.name(),
            "dir": team.paths().dir(),
            "members": names,
        }));
    }
    output::line(format!(
        "created team {} with {} members ({}) in {}",
        team.name(),
        names.len(),
        names.join(", "),
        team.paths().dir().display()
    ))
}
