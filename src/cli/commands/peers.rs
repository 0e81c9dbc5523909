//! `swarm peers`: live peers (listeners and member supervisors). Entries whose process is gone are
//! removed, with their sockets.

use crate::base::clock;
use crate::cli::context::Context;
use crate::cli::output::{self, Table};
use crate::cli::render;
use crate::error::Result;
use crate::peer::live_peers;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(ctx: &Context, _args: Args) -> Result<()> {
    let peers = live_peers(&ctx.home)?;
    if ctx.json {
        let shown: Vec<_> = peers
            .iter()
            .map(|peer| render::with_times(render::to_value(peer), &["startedAt"]))
            .collect();
        return output::json(&shown);
    }
    if peers.is_empty() {
        return output::line("no live peers");
    }
    let now = clock::now_ms();
    let dash = |value: &Option<String>| value.clone().unwrap_or_else(|| "-".to_owned());
    let mut table = Table::new(&["PID", "LABEL", "TEAM", "AGENT", "ADDRESS", "CWD", "STARTED"]);
    for peer in &peers {
        table.row(vec![
            peer.pid.to_string(),
            dash(&peer.label),
            dash(&peer.team),
            dash(&peer.agent),
            peer.address(),
            peer.cwd.display().to_string(),
            clock::ago(peer.started_at, now),
        ]);
    }
    table.print()
}
