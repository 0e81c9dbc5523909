//! `swarm man DIR`: write the man pages (swarm.1 and one page per command) into DIR.

use std::path::PathBuf;

use crate::context::Context;
use crate::error::Result;
use crate::manual;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The directory to write the pages into (created if missing)
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

pub fn run(ctx: &Context, args: Args) -> Result<()> {
    let written = manual::write_pages(&args.dir)?;
    if ctx.json {
        return output::json(&written);
    }
    for page in written {
        output::line(page.display().to_string())?;
    }
    Ok(())
}
