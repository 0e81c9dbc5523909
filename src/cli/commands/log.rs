//! `swarm log NAME [-n N] [-f]`: the last lines a member's pane printed; `-f` follows like `tail -f`,
//! across the log's rotation (docs/ARCHITECTURE.md, "The supervisor").

use crate::base::names::Name;
use crate::cli::context::Context;
use crate::cli::output;
use crate::error::{Error, Result};
use crate::member::logfile;
use crate::store::watcher::{Watcher, named};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The member
    #[arg(value_name = "NAME")]
    pub(crate) name: String,

    /// How many of the last lines to print
    #[arg(short = 'n', long = "lines", value_name = "N", default_value_t = 10)]
    pub(crate) lines: usize,

    /// Keep printing what the pane prints, until interrupted
    #[arg(short, long)]
    pub(crate) follow: bool,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let name = Name::parse("member", &args.name)?;
    let team = ctx.team()?;
    let config = team.load()?;
    let member = config.require_member(name.as_str())?;
    let path = team.paths().log(&member.name);
    let logs = team.paths().logs();
    crate::store::durable::create_dir_all(&logs)?;
    // Armed before the first read, so a follower misses nothing written in between.
    let watcher = if args.follow {
        Some(Watcher::arm(&logs)?)
    } else {
        None
    };
    // The log and the one it was rotated to, read as one.
    let (mut follower, lines) = logfile::Follower::start(&path, args.lines)?;
    if lines.is_none() && !args.follow {
        return Err(Error::not_found(format!(
            "no output captured for {name} yet ({})",
            path.display()
        )));
    }
    for line in lines.unwrap_or_default() {
        output::verbatim_line(line.trim_end_matches('\r'))?;
    }
    let Some(watcher) = watcher else {
        return Ok(());
    };

    let mut partial = String::new();
    let file_name = path.file_name().unwrap_or_default().to_owned();
    watcher.wait_for(None, &named(&file_name), || {
        partial.push_str(&String::from_utf8_lossy(&follower.fresh()?));
        while let Some(end) = partial.find('\n') {
            output::verbatim_line(partial[..end].trim_end_matches('\r'))?;
            partial.drain(..=end);
        }
        Ok(None::<()>)
    })?;
    Ok(())
}
