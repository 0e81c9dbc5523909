//! `swarm permission ask` and `swarm permission hook`: any member's program asks the lead's side
//! through the same queue as Claude Code (docs/ARCHITECTURE.md, "Asking from any CLI").

use std::io::Read;
use std::time::Duration;

use clap::ValueEnum;
use serde::Serialize;
use serde_json::{Value, json};

use crate::base::clock;
use crate::cli::args::parse_duration;
use crate::cli::context::Context;
use crate::cli::output::{self, WithLine};
use crate::error::{Error, Result};
use crate::member::permission_ask::{self, Answer, Question};

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON_ASK: &str = r#"Exit status: 0 allowed, 1 denied (the reason on stderr), 4 no answer in time.

JSON output (--json), one document, when allowed:
  {"requestId", "allowed": true, "input"}
"input" is what the tool is to run with, as the answer gave it."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON_ASK)]
pub(crate) struct AskArgs {
    /// The tool to use, as Claude Code names it (Bash, Edit, WebFetch, …)
    #[arg(value_name = "TOOL")]
    pub(crate) tool: String,

    /// Its input, a JSON object, or `-` to read it from stdin
    #[arg(long, value_name = "JSON|-")]
    pub(crate) input: Option<String>,

    /// What it is for, shown to whoever answers
    #[arg(long, value_name = "TEXT")]
    pub(crate) description: Option<String>,

    /// Give up after DURATION (seconds, or 30s, 2m, 1h; exit status 4); the ask stays listed
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) timeout: Option<Duration>,
}

pub(crate) fn ask(ctx: &Context, args: AskArgs) -> Result<()> {
    let input = match args.input.as_deref() {
        None => json!({}),
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|err| Error::os("read the input from stdin", err))?;
            object(&text)?
        }
        Some(text) => object(text)?,
    };
    let question = Question {
        tool: args.tool,
        input,
        description: args.description,
    };
    let (request_id, answer) = filed(ctx, question, args.timeout)?;
    match answer {
        Answer::Allowed(input) => ctx.report(&WithLine {
            line: format!("allowed {request_id}"),
            json: AllowedAsk {
                request_id,
                allowed: true,
                input,
            },
        }),
        Answer::Denied(reason) => Err(Error::runtime(format!("denied {request_id}: {reason}"))),
    }
}

/// An allowed ask, as `--json` shows it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AllowedAsk {
    request_id: String,
    allowed: bool,
    input: Value,
}

/// What `hook` prints (docs/ARCHITECTURE.md, "Asking from any CLI").
const HOOK_OUTPUT: &str = r#"Reads the vendor's pre-tool hook JSON on stdin, asks as `permission ask` does, and prints the
vendor's decision on stdout (exit 0):
  claude  PreToolUse:  {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                        "permissionDecision": "allow"|"deny", "permissionDecisionReason"}}
  codex   PreToolUse:  the same; PermissionRequest: {"hookSpecificOutput": {"hookEventName":
                        "PermissionRequest", "decision": {"behavior": "allow"|"deny", "message"}}}
  gemini  BeforeTool:  {"decision": "allow"|"deny", "reason"} (Gemini CLI still asks its own
                        question after an allow unless run with --approval-mode yolo)
No answer in time: exit 4 and nothing on stdout; anything else that fails: its exit status and
one line on stderr (Claude Code and Codex block the tool at exit 2)."#;

/// The CLI whose hook calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Vendor {
    Claude,
    Codex,
    Gemini,
}

#[derive(Debug, clap::Args)]
#[command(after_long_help = HOOK_OUTPUT)]
pub(crate) struct HookArgs {
    /// Whose hook format stdin and stdout are in
    #[arg(value_enum)]
    pub(crate) vendor: Vendor,

    /// Give up after DURATION (seconds, or 30s, 2m, 1h; exit status 4)
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) timeout: Option<Duration>,
}

pub(crate) fn hook(ctx: &Context, args: HookArgs) -> Result<()> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|err| Error::os("read the hook's input from stdin", err))?;
    let event: Value = serde_json::from_str(&text)
        .map_err(|err| Error::usage(format!("the hook's input is not JSON: {err}")))?;
    let field = |key: &str| event.get(key).and_then(Value::as_str).unwrap_or_default();
    let (name, tool) = (field("hook_event_name").to_owned(), field("tool_name"));
    let expected: &[&str] = match args.vendor {
        Vendor::Claude => &["PreToolUse"],
        Vendor::Codex => &["PreToolUse", "PermissionRequest"],
        Vendor::Gemini => &["BeforeTool"],
    };
    if !expected.contains(&name.as_str()) || tool.is_empty() {
        let vendor = args
            .vendor
            .to_possible_value()
            .expect("every vendor is a value of --vendor");
        return Err(Error::usage(format!(
            "swarm permission hook {} takes the {} hook's input (hook_event_name and tool_name); \
             this is {:?}",
            vendor.get_name(),
            expected.join(" or "),
            name
        )));
    }
    let input = event
        .get("tool_input")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let description = input
        .get("description")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let question = Question {
        tool: tool.to_owned(),
        input,
        description,
    };
    let (request_id, answer) = filed(ctx, question, args.timeout)?;
    let (allowed, reason) = match answer {
        Answer::Allowed(_) => (true, format!("allowed through swarm ({request_id})")),
        Answer::Denied(reason) => (false, reason),
    };
    let decision = if allowed { "allow" } else { "deny" };
    let printed = match (args.vendor, name.as_str()) {
        (Vendor::Gemini, _) => json!({"decision": decision, "reason": reason}),
        (Vendor::Codex, "PermissionRequest") => json!({"hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": if allowed {
                json!({"behavior": "allow"})
            } else {
                json!({"behavior": "deny", "message": reason})
            },
        }}),
        _ => json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }}),
    };
    output::json_line(&printed)
}

/// Files `question` from this member's pane and waits for the answer: exit 4 when `timeout`
/// passes first.
fn filed(ctx: &Context, question: Question, timeout: Option<Duration>) -> Result<(String, Answer)> {
    let team = ctx.team()?;
    let config = team.load()?;
    let caller = ctx.caller(&config)?;
    let deadline = timeout.and_then(clock::deadline);
    let forged = |id: &str| {
        tracing::warn!("ignored an answer that is not signed for this member (message {id})");
    };
    let (request_id, answer) =
        permission_ask::ask(&team, &ctx.fleet(), &caller, question, deadline, &forged)?;
    match answer {
        Some(answer) => Ok((request_id, answer)),
        None => Err(Error::timeout(format!(
            "no answer to {request_id} within {}",
            humantime::format_duration(timeout.unwrap_or_default())
        ))
        .with_hint("it stays in `swarm permission list` until it is answered")),
    }
}

/// `text` as a JSON object, or one line saying it is not.
fn object(text: &str) -> Result<Value> {
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(Error::usage("--input must be a JSON object")),
        Err(err) => Err(Error::usage(format!("--input is not JSON: {err}"))),
    }
}
