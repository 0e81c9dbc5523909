//! `swarm init TEAMFILE`: create a team without launching anything.

use std::path::PathBuf;

use serde_json::json;

use crate::base::text::count;
use crate::cli::context::Context;
use crate::cli::output;
use crate::error::Result;
use crate::launch::prepare;
use crate::launch::teamfile::TeamFile;
use crate::member::seal;

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one document:
  {"team", "dir", "members"}"#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// The TOML team file (see teams/ for examples)
    #[arg(value_name = "TEAMFILE")]
    pub(crate) teamfile: PathBuf,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let file = TeamFile::load(&args.teamfile)?;
    let prepared = prepare::prepare(&ctx.home, &file, &|key| std::env::var(key).ok());
    let team = seal::create(&ctx.home, &prepared.config, false)?;
    let names: Vec<&str> = prepared.config.roster();
    if ctx.json {
        return output::json(&json!({
            "team": team.name(),
            "dir": team.paths().dir(),
            "members": names,
        }));
    }
    output::line(format!(
        "created team {} with {} ({}) in {}",
        team.name(),
        count(names.len(), "member", "members"),
        names.join(", "),
        team.paths().dir().display()
    ))
}
