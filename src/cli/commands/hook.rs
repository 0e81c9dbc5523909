//! `swarm hook claude|gemini|codex`: what an agent CLI runs at each event its profile wires in
//! (docs/ARCHITECTURE.md, "Activity and events"): Claude Code's hooks (through `--settings`) and
//! Gemini CLI's (through the settings of the Gemini CLI home swarm gives it) give their JSON on stdin; Codex's
//! `notify` program gets the turn's JSON as its last argument. It records the member's activity
//! (and Codex's session id, for a resume) through the one recorder; it prints nothing, so the
//! program goes on as it would. It runs at every tool call: one read of the activity file when
//! nothing changed.

use std::io::Read;

use serde_json::Value;

use crate::cli::context::Context;
use crate::error::{Error, ErrorKind, Result};
use crate::member::activity::{self, HookProgram};
use crate::policy::Whereabouts;
use crate::store::paths::CodexPaths;
use crate::store::team::Team;

/// Which program's hook input this reads.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum Program {
    /// Claude Code: SessionStart, UserPromptSubmit, PreToolUse, PostToolUse,
    /// PostToolUseFailure, PermissionRequest, Notification, Stop, StopFailure (JSON on stdin)
    Claude,
    /// Codex: its notify program at each turn's end (agent-turn-complete, JSON as the last
    /// argument)
    Codex,
    /// Gemini CLI: SessionStart, BeforeAgent, BeforeTool, AfterTool, Notification, AfterAgent
    /// (JSON on stdin)
    Gemini,
}

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), none: it prints nothing on stdout, with --json or
without, since Claude Code and Gemini CLI read a hook's stdout as its decision; the change it
records is a line of the team's events.jsonl and shows in `swarm status --json` ("activity"). A
refusal is the error object every command prints, with exit status 1 where another command's
would be 2: Claude Code and Gemini CLI take a hook's exit 2 as "block this", and recording an
activity must never stop the agent (Codex does not wait for its notify program)."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// The program whose hook runs this
    #[arg(value_enum)]
    pub(crate) program: Program,

    /// codex: the turn, as the JSON Codex gives its notify program
    #[arg(value_name = "JSON")]
    pub(crate) payload: Option<String>,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    // Exit 2 from a hook blocks Claude Code's tool call (and Gemini CLI's): a refusal here is
    // exit 1, non-blocking.
    record(ctx, args).map_err(|err| match err.kind() {
        ErrorKind::Usage => Error::runtime(err.message()),
        _ => err,
    })
}

fn record(ctx: &Context, args: Args) -> Result<()> {
    let (program, name) = match args.program {
        Program::Claude => (HookProgram::Claude, "claude"),
        Program::Codex => (HookProgram::Codex, "codex"),
        Program::Gemini => (HookProgram::Gemini, "gemini"),
    };
    let text = match (args.program, args.payload) {
        (Program::Codex, Some(payload)) => payload,
        (Program::Codex, None) => {
            return Err(Error::usage(
                "swarm hook codex takes the JSON Codex gives its notify program as its last \
                 argument; none was given",
            ));
        }
        (_, Some(_)) => {
            return Err(Error::usage(format!(
                "swarm hook {name} reads the hook's input on stdin, not as an argument"
            )));
        }
        (_, None) => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|err| Error::os("read the hook's input from stdin", err))?;
            text
        }
    };
    let input: Value = serde_json::from_str(&text)
        .map_err(|err| Error::usage(format!("the hook's input is not JSON: {err}")))?;
    let key = match program {
        HookProgram::Codex => "type",
        HookProgram::Claude | HookProgram::Gemini => "hook_event_name",
    };
    if input.get(key).and_then(Value::as_str).is_none() {
        return Err(Error::usage(format!(
            "the hook's input has no {key}: swarm hook {name} reads what a {} hook is given",
            match program {
                HookProgram::Claude => "Claude Code",
                HookProgram::Codex => "Codex notify",
                HookProgram::Gemini => "Gemini CLI",
            }
        )));
    }
    let Whereabouts::Pane { team, member, .. } = ctx.whereabouts()? else {
        return Err(Error::usage(format!(
            "swarm hook {name} records the activity of the member whose pane it runs in; this \
             runs in none"
        )));
    };
    let team = Team::open(&ctx.home, team)?;
    if program == HookProgram::Codex {
        // Codex's own folder, as the process it runs this from has it.
        let codex = CodexPaths::new(
            std::env::var_os("CODEX_HOME").as_deref(),
            std::env::var_os("HOME").as_deref(),
        );
        if !activity::record_codex_session(&team, member, &input, codex.as_ref())? {
            return Ok(());
        }
    }
    activity::record_hook(&team, member, program, &input)?;
    Ok(())
}
