//! `swarm peers`: live peers (listeners and member supervisors), and beside them the person's live
//! Claude Code sessions, found where Claude Code records them (docs/ARCHITECTURE.md, "Peers").
//! Entries whose process is gone are removed, with their sockets; Claude Code's stale records are
//! skipped and left to it.

use serde_json::{Map, Value};

use crate::base::clock;
use crate::cli::context::Context;
use crate::cli::output::{self, Table};
use crate::cli::render;
use crate::error::Result;
use crate::member::identity;
use crate::peer::{PeerEntry, Session, live_peers, live_sessions};
use crate::policy::Whereabouts;

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one document:
  [{"kind", "pid", "socket", "label", "team", "agent", "cwd", "startedAt", "startedAtMs", "tty",
    "name", "status", "sessionId", "version"}]
"kind" is `swarm` for swarm's peers and `claude` for a Claude Code session of yours, reached at
uds:<socket>. "label" is `user` for your listener without one, which uds:user reaches; "name",
"status" (`idle`, `busy`…), "sessionId" and "version" are a Claude Code session's, as it records
them. A field a peer does not have is null."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {}

pub(crate) fn run(ctx: &Context, _args: Args) -> Result<()> {
    let peers = live_peers(&ctx.home)?;
    let sessions = live_sessions();
    if ctx.json {
        let mut shown: Vec<Value> = peers
            .iter()
            .map(|peer| Value::Object(swarm_peer(peer)))
            .collect();
        shown.extend(
            sessions
                .iter()
                .map(|session| Value::Object(claude_session(ctx, session))),
        );
        return output::json(&shown);
    }
    if peers.is_empty() && sessions.is_empty() {
        return output::line("no live peers");
    }
    let now = clock::now_ms();
    let dash = |value: Option<&str>| value.unwrap_or("-").to_owned();
    if !peers.is_empty() {
        let mut table = Table::new(&["PID", "LABEL", "TEAM", "AGENT", "ADDRESS", "CWD", "STARTED"]);
        for peer in &peers {
            table.row(vec![
                peer.pid.to_string(),
                dash(peer.label_as_reached()),
                dash(peer.team.as_deref()),
                dash(peer.agent.as_deref()),
                peer.address(),
                peer.cwd.display().to_string(),
                clock::ago(peer.started_at, now),
            ]);
        }
        table.print()?;
    }
    if !sessions.is_empty() {
        if !peers.is_empty() {
            output::line("")?;
        }
        let mut table = Table::new(&[
            "PID", "CLAUDE", "NAME", "STATUS", "ADDRESS", "CWD", "STARTED",
        ]);
        for session in &sessions {
            table.row(vec![
                session.pid.to_string(),
                dash(session.version.as_deref()),
                dash(session.name.as_deref()),
                dash(session.status.as_deref()),
                session.address(),
                session
                    .cwd
                    .as_ref()
                    .map_or_else(|| "-".to_owned(), |cwd| cwd.display().to_string()),
                session
                    .started_at
                    .map_or_else(|| "-".to_owned(), |at| clock::ago(at, now)),
            ]);
        }
        table.print()?;
    }
    Ok(())
}

fn swarm_peer(peer: &PeerEntry) -> Map<String, Value> {
    let mut object = Map::new();
    object.insert("kind".to_owned(), "swarm".into());
    object.insert("pid".to_owned(), peer.pid.into());
    object.insert("socket".to_owned(), render::to_value(&peer.socket));
    object.insert("label".to_owned(), peer.label_as_reached().into());
    object.insert("team".to_owned(), peer.team.clone().into());
    object.insert("agent".to_owned(), peer.agent.clone().into());
    object.insert("cwd".to_owned(), render::to_value(&peer.cwd));
    render::put_time(&mut object, "startedAt", Some(peer.started_at));
    object.insert("tty".to_owned(), peer.tty.clone().into());
    for key in ["name", "status", "sessionId", "version"] {
        object.insert(key.to_owned(), Value::Null);
    }
    object
}

/// A Claude Code session, with the member whose pane it runs in, if it runs in one.
fn claude_session(ctx: &Context, session: &Session) -> Map<String, Value> {
    let (team, agent) = match identity::whereabouts_of_pid(&ctx.home, session.pid) {
        Whereabouts::Pane { team, member, .. } => (Some(team), Some(member)),
        // A pane of another home's team is none of this home's.
        Whereabouts::Outside | Whereabouts::Elsewhere { .. } | Whereabouts::Unknown(_) => {
            (None, None)
        }
    };
    let mut object = Map::new();
    object.insert("kind".to_owned(), "claude".into());
    object.insert("pid".to_owned(), session.pid.into());
    object.insert("socket".to_owned(), render::to_value(&session.socket));
    object.insert("label".to_owned(), Value::Null);
    object.insert("team".to_owned(), team.into());
    object.insert("agent".to_owned(), agent.into());
    object.insert(
        "cwd".to_owned(),
        session.cwd.as_ref().map_or(Value::Null, render::to_value),
    );
    render::put_time(&mut object, "startedAt", session.started_at);
    object.insert("tty".to_owned(), Value::Null);
    object.insert("name".to_owned(), session.name.clone().into());
    object.insert("status".to_owned(), session.status.clone().into());
    object.insert("sessionId".to_owned(), session.id.clone().into());
    object.insert("version".to_owned(), session.version.clone().into());
    object
}
