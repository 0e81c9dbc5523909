//! `swarm info NAME`: a member's full record: command, environment keys and what its program
//! inherits, pane, pids, state, times, worktree and log.

use crate::base::clock;
use crate::base::names::Name;
use crate::cli::context::Context;
use crate::cli::output;
use crate::error::Result;
use crate::format::settings::EnvPolicy;
use crate::member::liveness::Observed;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The member
    #[arg(value_name = "NAME")]
    pub(crate) name: String,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let name = Name::parse("member", &args.name)?;
    let team = ctx.team()?;
    let observed = Observed::take(&team)?;
    let member = observed.config.require_member(name.as_str())?;
    let seen = observed.seen(member);
    let log = member
        .log_file
        .clone()
        .unwrap_or_else(|| team.paths().log(&member.name).display().to_string());
    if ctx.json {
        let mut record = serde_json::to_value(member)
            .map_err(|err| crate::error::Error::runtime(err.to_string()))?;
        record["shownState"] = seen.label().into();
        record["logFile"] = log.into();
        record["inbox"] = team
            .mailbox(&member.name)
            .inbox_path()
            .display()
            .to_string()
            .into();
        return output::json(&record);
    }
    let time = |ms: Option<u64>| ms.map_or_else(|| "-".to_owned(), clock::format_ms);
    let or_dash = |value: Option<String>| {
        value
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| "-".to_owned())
    };
    let rows = [
        ("name", member.name.clone()),
        ("agent id", member.agent_id.clone()),
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
                .map_or_else(|| "-".to_owned(), crate::cli::render::shell_words),
        ),
        (
            "env keys",
            or_dash(member.env_keys.as_ref().map(|k| k.join(" "))),
        ),
        ("inherits", inherits(&member.env_policy)),
        (
            "profile",
            or_dash(member.profile.map(|p| p.as_str().to_owned())),
        ),
        ("protocol", member.protocol().as_str().to_owned()),
        ("delivery", member.delivery().as_str().to_owned()),
        (
            "isolation",
            member.isolation.unwrap_or_default().as_str().to_owned(),
        ),
        (
            "run timeout",
            or_dash(member.run_timeout_s.map(|secs| format!("{secs}s"))),
        ),
        ("cwd", or_dash(Some(member.cwd.clone()))),
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
        (
            "inbox",
            team.mailbox(&member.name)
                .inbox_path()
                .display()
                .to_string(),
        ),
    ];
    for (key, value) in rows {
        output::line(format!("{key:<15} {value}"))?;
    }
    Ok(())
}

/// What a member's program inherits from its pane, by its rules (names only).
fn inherits(policy: &EnvPolicy) -> String {
    let join = |names: &std::collections::BTreeSet<String>| {
        names
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let kept = match (policy.clear, policy.keep.is_empty()) {
        (false, _) => "everything".to_owned(),
        (true, true) => "nothing".to_owned(),
        (true, false) => format!("only {}", join(&policy.keep)),
    };
    if policy.remove.is_empty() {
        kept
    } else {
        format!("{kept}, never {}", join(&policy.remove))
    }
}
