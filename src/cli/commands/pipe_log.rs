//! `swarm pipe-log --max BYTES LOG`: the log writer the supervisor has tmux pipe a member's pane
//! into (docs/ARCHITECTURE.md, "The supervisor"). It appends what it reads to LOG, rotating it to
//! LOG.1 before it would grow past BYTES. Not run by hand.

use std::path::PathBuf;

use crate::cli::context::Context;
use crate::error::Result;
use crate::launch::teamfile::parse_size;
use crate::member::logfile::Writer;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Rotate the log before it grows past this size
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub(crate) max: u64,

    /// The log to append to
    #[arg(value_name = "LOG")]
    pub(crate) log: PathBuf,
}

pub(crate) fn run(_ctx: &Context, args: Args) -> Result<()> {
    Writer::open(&args.log, args.max)?.copy_from(std::io::stdin().lock())
}
