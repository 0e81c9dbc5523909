//! `swarm peers`: live peers (listeners and member supervisors), and beside them the person's live
//! Claude Code sessions, found where Claude Code records them (docs/ARCHITECTURE.md, "Peers").
//! Entries whose process is gone are removed, with their sockets; Claude Code's stale records are
//! skipped and left to it.

use std::path::Path;

use serde::Serialize;

use crate::base::clock;
use crate::cli::context::Context;
use crate::cli::output::{self, Report, Table};
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
    let shown = peers
        .iter()
        .map(swarm_peer)
        .chain(sessions.iter().map(|session| claude_session(ctx, session)))
        .collect();
    ctx.report(&Peers {
        shown,
        entries: &peers,
        sessions: &sessions,
    })
}

/// The live peers and Claude Code sessions.
#[derive(Serialize)]
#[serde(transparent)]
struct Peers<'a> {
    shown: Vec<Peer<'a>>,
    #[serde(skip)]
    entries: &'a [PeerEntry],
    #[serde(skip)]
    sessions: &'a [Session],
}

/// One peer or session as JSON shows it; a field it does not have is null.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Peer<'a> {
    kind: &'static str,
    pid: i32,
    socket: &'a Path,
    label: Option<&'a str>,
    team: Option<String>,
    agent: Option<String>,
    cwd: Option<&'a Path>,
    started_at: Option<String>,
    started_at_ms: Option<u64>,
    tty: Option<&'a str>,
    name: Option<&'a str>,
    status: Option<&'a str>,
    session_id: Option<&'a str>,
    version: Option<&'a str>,
}

impl Report for Peers<'_> {
    fn text(&self) -> Result<()> {
        let (peers, sessions) = (self.entries, self.sessions);
        if peers.is_empty() && sessions.is_empty() {
            return output::line("no live peers");
        }
        let now = clock::now_ms();
        let dash = |value: Option<&str>| value.unwrap_or("-").to_owned();
        if !peers.is_empty() {
            let mut table =
                Table::new(&["PID", "LABEL", "TEAM", "AGENT", "ADDRESS", "CWD", "STARTED"]);
            for peer in peers {
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
            for session in sessions {
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
}

fn swarm_peer(peer: &PeerEntry) -> Peer<'_> {
    let started = Some(peer.started_at).filter(|ms| *ms > 0);
    Peer {
        kind: "swarm",
        pid: peer.pid,
        socket: &peer.socket,
        label: peer.label_as_reached(),
        team: peer.team.clone(),
        agent: peer.agent.clone(),
        cwd: Some(&peer.cwd),
        started_at: render::time(started),
        started_at_ms: started,
        tty: peer.tty.as_deref(),
        name: None,
        status: None,
        session_id: None,
        version: None,
    }
}

/// A Claude Code session, with the member whose pane it runs in, if it runs in one.
fn claude_session<'a>(ctx: &Context, session: &'a Session) -> Peer<'a> {
    let (team, agent) = match identity::whereabouts_of_pid(&ctx.home, session.pid) {
        Whereabouts::Pane { team, member, .. } => (Some(team), Some(member)),
        // A pane of another home's team is none of this home's.
        Whereabouts::Outside | Whereabouts::Elsewhere { .. } | Whereabouts::Unknown(_) => {
            (None, None)
        }
    };
    let started = session.started_at.filter(|ms| *ms > 0);
    Peer {
        kind: "claude",
        pid: session.pid,
        socket: &session.socket,
        label: None,
        team,
        agent,
        cwd: session.cwd.as_deref(),
        started_at: render::time(started),
        started_at_ms: started,
        tty: None,
        name: session.name.as_deref(),
        status: session.status.as_deref(),
        session_id: session.id.as_deref(),
        version: session.version.as_deref(),
    }
}
