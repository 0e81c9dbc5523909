//! `swarm run NAME`: the pane supervisor. tmux starts it in each member's pane; it is not run by
//! hand. The supervisor itself lives in `member::supervisor`.

use std::path::PathBuf;

use crate::base::names::Name;
use crate::cli::context::Context;
use crate::error::Result;
use crate::launch::teamfile::parse_size;
use crate::member::supervisor;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The member whose program this pane runs
    #[arg(value_name = "NAME")]
    pub(crate) name: String,

    /// Rotate the member's log at this size
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "64MiB")]
    pub(crate) log_max: u64,

    /// The file the launcher left the member's variables in; it is read once and removed
    #[arg(long, value_name = "FILE")]
    pub(crate) env_file: PathBuf,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let name = Name::parse("member", &args.name)?;
    supervisor::run(
        ctx.team()?,
        Box::new(ctx.fleet()),
        name,
        args.log_max,
        args.env_file,
    )
}
