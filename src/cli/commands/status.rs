//! `swarm status [TEAM]`: every member with its pane, pid, state, exit code, unread count, whether
//! it verifies the lead's messages, and last activity, plus anything moved aside from an inbox.

use std::fs;
use std::path::Path;

use clap_complete::engine::ArgValueCandidates;
use serde::Serialize;

use crate::base::clock;
use crate::base::text::count;
use crate::cli::complete;
use crate::cli::context::Context;
use crate::cli::output::{self, Table};
use crate::cli::render;
use crate::error::Result;
use crate::format::config::{Member, TeamConfig};
use crate::member::liveness::{Observed, Seen};
use crate::store::mailbox::SetAside;
use crate::store::team::Team;

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one document:
  {"team", "description", "lead", "members": [{"name", "agentId", "pane", "pid", "state",
    "exitCode", "unread", "lastActivity", "lastActivityMs", "verifies", "setAside": [{"path",
    "reason"}]}]}
"state" is as the table shows it ("-" for never launched); "pane" is null before there is one.
Times are RFC 3339 with their epoch milliseconds beside (swarm(1), JSON OUTPUT)."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// The team [default: --team, SWARM_TEAM, the only team, or the only one running]
    // Its own id: sharing the global --team's would let an empty SWARM_TEAM fill it.
    #[arg(id = "team_arg", value_name = "TEAM", add = ArgValueCandidates::new(complete::teams))]
    pub(crate) team: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MemberStatus {
    pub(crate) name: String,
    pub(crate) agent_id: String,
    /// The tmux pane id, `null` before the member has one.
    pub(crate) pane: Option<String>,
    pub(crate) pid: Option<i32>,
    pub(crate) state: &'static str,
    pub(crate) exit_code: Option<i32>,
    pub(crate) unread: usize,
    /// The last message, output or state change (RFC 3339), and in epoch milliseconds.
    pub(crate) last_activity: Option<String>,
    pub(crate) last_activity_ms: Option<u64>,
    /// Whether the member verifies the lead's messages: it was launched with a key.
    pub(crate) verifies: bool,
    pub(crate) set_aside: Vec<SetAside>,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let team = ctx.team_or(args.team.as_deref())?;
    let observed = Observed::take(&team)?;
    let config = &observed.config;
    let rows = observed
        .members()
        .map(|(member, seen)| member_status(&team, member, seen))
        .collect::<Result<Vec<_>>>()?;
    if ctx.json {
        return output::json(&serde_json::json!({
            "team": config.name,
            "description": config.description,
            "lead": config.lead_name(),
            "members": rows,
        }));
    }
    let launched = observed
        .members()
        .filter(|(_, seen)| *seen != Seen::NotStarted)
        .count();
    print(config, launched, &rows)
}

pub(crate) fn member_status(team: &Team, member: &Member, seen: Seen) -> Result<MemberStatus> {
    let mailbox = team.mailbox(&member.name);
    let unread = mailbox.peek()?.len();
    let file_times = [
        mailbox.inbox_path().to_path_buf(),
        mailbox.history_path().to_path_buf(),
        team.paths().log(&member.name),
    ]
    .into_iter()
    .filter_map(|path| modified_ms(&path));
    let record_times = [Some(member.joined_at), member.started_at, member.ended_at]
        .into_iter()
        .flatten();
    let last_activity = file_times.chain(record_times).filter(|ms| *ms > 0).max();
    Ok(MemberStatus {
        name: member.name.clone(),
        agent_id: member.agent_id.clone(),
        pane: Some(member.tmux_pane_id.clone()).filter(|pane| !pane.is_empty()),
        pid: member.pid,
        state: seen.label(),
        exit_code: member.exit_code,
        unread,
        last_activity: render::time(last_activity),
        last_activity_ms: last_activity,
        verifies: member.lead_verify_key.is_some(),
        set_aside: mailbox.set_aside(),
    })
}

fn modified_ms(path: &Path) -> Option<u64> {
    fs::metadata(path).ok()?.modified().ok().map(clock::to_ms)
}

fn print(config: &TeamConfig, launched: usize, rows: &[MemberStatus]) -> Result<()> {
    let mut heading = format!(
        "team {} · {}",
        config.name,
        count(rows.len(), "member", "members")
    );
    if launched > 0 {
        heading = format!("{heading} · {launched} launched");
    }
    if let Some(description) = &config.description {
        heading = format!("{heading} · {description}");
    }
    output::line(heading)?;
    let now = clock::now_ms();
    let mut table = Table::new(&[
        "NAME",
        "PANE",
        "PID",
        "STATE",
        "EXIT",
        "UNREAD",
        "VERIFIES",
        "LAST ACTIVITY",
    ]);
    for row in rows {
        table.row(vec![
            row.name.clone(),
            row.pane.clone().unwrap_or_else(|| "-".into()),
            row.pid.map_or_else(|| "-".into(), |pid| pid.to_string()),
            row.state.to_owned(),
            row.exit_code
                .map_or_else(|| "-".into(), |code| code.to_string()),
            row.unread.to_string(),
            if row.verifies { "yes" } else { "no" }.to_owned(),
            row.last_activity_ms
                .map_or_else(|| "-".into(), |ms| clock::ago(ms, now)),
        ]);
    }
    table.print()?;
    for row in rows {
        for aside in &row.set_aside {
            output::line(format!(
                "! {}: {} moved aside to {}",
                row.name,
                aside.reason,
                aside.path.display()
            ))?;
        }
    }
    Ok(())
}
