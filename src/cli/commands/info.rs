//! `swarm info NAME`: a member's full record: command, every setting it runs with (as `up
//! --dry-run` shows them, what its program inherits among them), environment keys, pane, pids,
//! state, times, worktree and log.

use clap_complete::engine::ArgValueCandidates;
use serde::Serialize;

use crate::base::clock;
use crate::cli::complete;
use crate::cli::context::Context;
use crate::cli::output::{self, Report};
use crate::cli::render;
use crate::error::Result;
use crate::member::liveness::Observed;

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one document: the member's record in config.json, Claude Code's field
names and swarm's, with "joinedAt", "startedAt" and "endedAt" as RFC 3339 and "joinedAtMs",
"startedAtMs", "endedAtMs" beside, then "shownState" (the state as status shows it), "settings"
(every setting it runs with, defaults applied: {"profile", "agentType", "model", "color",
"planModeRequired", "prompt", "protocol", "delivery", "pasteFormat", "runTimeoutS", "isolation",
"cwd", "logMax", "envPolicy": {"envClear", "envKeep", "envRemove"}}), "logFile" and "inbox"."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// The member
    #[arg(value_name = "NAME", add = ArgValueCandidates::new(complete::members))]
    pub(crate) name: String,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let (team, name) = ctx.member_team(&args.name)?;
    let observed = Observed::take(&team, &ctx.fleet())?;
    let member = observed.config.require_member(name.as_str())?;
    let seen = observed.seen(member);
    let log = member
        .log_file
        .clone()
        .unwrap_or_else(|| team.paths().log(&member.name).display().to_string());
    let inbox = team
        .mailbox(&member.name)
        .inbox_path()
        .display()
        .to_string();
    // config.json's record, its times in the one format, the milliseconds beside.
    let mut record = render::with_times(
        render::to_value(member),
        &["joinedAt", "startedAt", "endedAt"],
    );
    record["shownState"] = seen.label().into();
    record["settings"] = render::settings_object(&render::settings(member));
    record["logFile"] = log.clone().into();
    record["inbox"] = inbox.clone().into();
    let time = |ms: Option<u64>| ms.map_or_else(|| "-".to_owned(), clock::format_ms);
    let or_dash = |value: Option<String>| {
        value
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| "-".to_owned())
    };
    let mut rows = vec![
        ("name", member.name.clone()),
        ("agent id", member.agent_id.clone()),
        ("session id", or_dash(member.session_id.clone())),
        ("state", seen.label().to_owned()),
        ("reason", or_dash(member.reason.clone())),
        (
            "exit code",
            or_dash(member.exit_code.map(|c| c.to_string())),
        ),
        (
            "argv",
            member
                .argv
                .as_deref()
                .map_or_else(|| "-".to_owned(), render::shell_words),
        ),
    ];
    rows.extend(
        render::settings(member)
            .into_iter()
            .map(|setting| (setting.label, setting.text)),
    );
    rows.extend([
        (
            "env keys",
            or_dash(member.env_keys.as_ref().map(|k| k.join(" "))),
        ),
        ("worktree", or_dash(member.worktree_path.clone())),
        ("pane", or_dash(Some(member.tmux_pane_id.clone()))),
        ("pid", or_dash(member.pid.map(|p| p.to_string()))),
        (
            "supervisor pid",
            or_dash(member.supervisor_pid.map(|p| p.to_string())),
        ),
        ("joined", time(Some(member.joined_at).filter(|t| *t > 0))),
        ("started", time(member.started_at)),
        ("ended", time(member.ended_at)),
        ("log", log),
        ("inbox", inbox),
    ]);
    ctx.report(&MemberInfo { record, rows })
}

/// A member's record as config.json keeps it, amended; and the rows a person is shown.
#[derive(Serialize)]
#[serde(transparent)]
struct MemberInfo {
    record: serde_json::Value,
    #[serde(skip)]
    rows: Vec<(&'static str, String)>,
}

impl Report for MemberInfo {
    fn text(&self) -> Result<()> {
        for (key, value) in &self.rows {
            output::line(format!("{key:<15} {value}"))?;
        }
        Ok(())
    }
}
