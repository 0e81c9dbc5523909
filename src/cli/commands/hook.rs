//! `swarm hook claude`: the hook Claude Code runs at each event the claude profile wires in
//! through `--settings` (docs/ARCHITECTURE.md, "Activity and events"). It reads the hook's JSON
//! on stdin and records the member's activity; it prints nothing, so Claude Code goes on as it
//! would. It runs at every tool call: one read of the activity file when nothing changed.

use std::io::Read;

use serde_json::Value;

use crate::cli::context::Context;
use crate::error::{Error, ErrorKind, Result};
use crate::member::activity;
use crate::policy::Whereabouts;
use crate::store::team::Team;

/// Which program's hook input this reads.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum Program {
    /// Claude Code: SessionStart, UserPromptSubmit, PreToolUse, PostToolUse,
    /// PostToolUseFailure, PermissionRequest, Notification, Stop, StopFailure
    Claude,
}

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), none: it prints nothing on stdout, with --json or
without, since Claude Code reads a hook's stdout as its decision; the change it records is a line
of the team's events.jsonl and shows in `swarm status --json` ("activity"). A refusal is the
error object every command prints, with exit status 1 where another command's would be 2:
Claude Code takes a hook's exit 2 as "block this tool call", and recording an activity must never
stop the agent."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// The program whose hook runs this
    #[arg(value_enum)]
    pub(crate) program: Program,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    // Exit 2 from a hook blocks Claude Code's tool call: a refusal here is exit 1, non-blocking.
    record(ctx, args).map_err(|err| match err.kind() {
        ErrorKind::Usage => Error::runtime(err.message()),
        _ => err,
    })
}

fn record(ctx: &Context, args: Args) -> Result<()> {
    let Program::Claude = args.program;
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|err| Error::os("read the hook's input from stdin", err))?;
    let input: Value = serde_json::from_str(&text)
        .map_err(|err| Error::usage(format!("the hook's input is not JSON: {err}")))?;
    if input
        .get("hook_event_name")
        .and_then(Value::as_str)
        .is_none()
    {
        return Err(Error::usage(
            "the hook's input has no hook_event_name: swarm hook claude reads what a Claude Code \
             hook is given on stdin",
        ));
    }
    let Whereabouts::Pane { team, member, .. } = ctx.whereabouts()? else {
        return Err(Error::usage(
            "swarm hook claude records the activity of the member whose pane it runs in; this \
             runs in none",
        ));
    };
    let team = Team::open(&ctx.home, team)?;
    activity::record_claude_hook(&team, member, &input)?;
    Ok(())
}
