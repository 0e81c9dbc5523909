//! `swarm init TEAMFILE`: create a team without launching anything.

use std::path::PathBuf;

use serde::Serialize;

use crate::base::text::count;
use crate::cli::context::Context;
use crate::cli::output::{self, Report};
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
    ctx.report(&Created {
        team: team.name().to_owned(),
        dir: team.paths().dir().to_path_buf(),
        members: prepared
            .config
            .roster()
            .into_iter()
            .map(str::to_owned)
            .collect(),
        tasks: match made {
            Made::Created(made) => {
                Some(made.into_iter().map(|(key, id)| (key, id.into())).collect())
            }
            Made::None | Made::AlreadyThere => None,
        },
    })
}

/// The team made, its members and the tasks put on its board.
#[derive(Serialize)]
struct Created {
    team: String,
    dir: PathBuf,
    members: Vec<String>,
    /// Each `[[task]]`'s key and the id it was given, in the order they were made.
    #[serde(skip_serializing_if = "Option::is_none")]
    tasks: Option<serde_json::Map<String, serde_json::Value>>,
}

impl Report for Created {
    fn text(&self) -> Result<()> {
        if let Some(tasks) = &self.tasks {
            output::line(format!(
                "put {} on the board",
                count(tasks.len(), "task", "tasks")
            ))?;
        }
        output::line(format!(
            "created team {} with {} ({}) in {}",
            self.team,
            count(self.members.len(), "member", "members"),
            self.members.join(", "),
            self.dir.display()
        ))
    }
}
