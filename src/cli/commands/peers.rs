//! `swarm peers`: live peers (listeners and member supervisors). Entries whose process is gone are
//! removed, with their sockets.

use serde_json::Map;

use crate::base::clock;
use crate::cli::context::Context;
use crate::cli::output::{self, Table};
use crate::cli::render;
use crate::error::Result;
use crate::peer::live_peers;

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one document:
  [{"pid", "socket", "label", "team", "agent", "cwd", "startedAt", "startedAtMs", "tty"}]
"label" is `user` for your listener without one, which uds:user reaches; "label", "team",
"agent" and "tty" are null when the peer has none."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {}

pub(crate) fn run(ctx: &Context, _args: Args) -> Result<()> {
    let peers = live_peers(&ctx.home)?;
    if ctx.json {
        let shown: Vec<_> = peers
            .iter()
            .map(|peer| {
                let mut object = Map::new();
                object.insert("pid".to_owned(), peer.pid.into());
                object.insert("socket".to_owned(), render::to_value(&peer.socket));
                object.insert("label".to_owned(), peer.label_as_reached().into());
                object.insert("team".to_owned(), peer.team.clone().into());
                object.insert("agent".to_owned(), peer.agent.clone().into());
                object.insert("cwd".to_owned(), render::to_value(&peer.cwd));
                render::put_time(&mut object, "startedAt", Some(peer.started_at));
                object.insert("tty".to_owned(), peer.tty.clone().into());
                object
            })
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
            peer.label_as_reached().unwrap_or("-").to_owned(),
            dash(&peer.team),
            dash(&peer.agent),
            peer.address(),
            peer.cwd.display().to_string(),
            clock::ago(peer.started_at, now),
        ]);
    }
    table.print()
}
