//! `swarm init TEAMFILE`: create a team without launching anything.

use std::path::PathBuf;

use serde_json::json;

use crate::base::text::count;
use crate::cli::context::Context;
use crate::cli::output;
use crate::error::Result;
use crate::launch::prepare;
use crate::launch::tasks::{self, Made};
use crate::launch::teamfile::TeamFile;
use crate::member::seal;

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one document:
  {"team", "dir", "members", "tasks"?}
"tasks", when the team file's [[task]] entries were made: {key: id}."#;

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
    let team = seal::create(&ctx.home, &ctx.fleet(), &prepared.config, false)?;
    let made = tasks::create(&ctx.home, &file)?;
    let names: Vec<&str> = prepared.config.roster();
    if ctx.json {
        let mut out = json!({
            "team": team.name(),
            "dir": team.paths().dir(),
            "members": names,
        });
        if let Made::Created(made) = &made {
            out["tasks"] = made
                .iter()
                .map(|(key, id)| (key.clone(), json!(id)))
                .collect();
        }
        return output::json(&out);
    }
    if let Made::Created(made) = &made {
        output::line(format!(
            "put {} on the board",
            count(made.len(), "task", "tasks")
        ))?;
    }
    output::line(format!(
        "created team {} with {} ({}) in {}",
        team.name(),
        count(names.len(), "member", "members"),
        names.join(", "),
        team.paths().dir().display()
    ))
}
