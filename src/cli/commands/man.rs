//! `swarm man DIR`: write the man pages (swarm.1, one page per command, and the team file's
//! swarm-team.5) into DIR.

use std::path::PathBuf;

use serde::Serialize;

use crate::cli::context::Context;
use crate::cli::manual;
use crate::cli::output::{self, Report};
use crate::error::Result;

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = "JSON output (--json), one document: the pages written, as paths.";

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// The directory to write the pages into (created if missing); when it is a man1 folder,
    /// swarm-team.5 goes to the man5 folder beside it
    #[arg(value_name = "DIR")]
    pub(crate) dir: PathBuf,
}

/// `command` is the whole command line, whose pages are written.
pub(crate) fn run(ctx: &Context, args: Args, command: clap::Command) -> Result<()> {
    let written = manual::write_pages(command, &args.dir)?;
    ctx.report(&Pages(written))
}

/// The pages written, by their paths.
#[derive(Serialize)]
struct Pages(Vec<PathBuf>);

impl Report for Pages {
    fn text(&self) -> Result<()> {
        for page in &self.0 {
            output::line(page.display().to_string())?;
        }
        Ok(())
    }
}
