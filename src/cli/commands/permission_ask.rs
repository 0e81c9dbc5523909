//! `swarm permission ask` and `swarm permission hook`: any member's program asks the lead's side
//! through the same queue as Claude Code (docs/ARCHITECTURE.md, "Asking from any CLI").

use std::io::Read;
use std::time::Duration;

use serde_json::{Value, json};

use crate::base::clock;
use crate::cli::args::parse_duration;
use crate::cli::context::Context;
use crate::cli::output;
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
        Answer::Allowed(input) if ctx.json => output::json(&json!({
            "requestId": request_id,
            "allowed": true,
            "input": input,
        })),
        Answer::Allowed(_) => output::line(format!("allowed {request_id}")),
        Answer::Denied(reason) => Err(Error::runtime(format!("denied {request_id}: {reason}"))),
    }
}

/// Files `question` from this member's pane and waits for the answer: exit 4 when `timeout`
/// passes first.
fn filed(
    ctx: &Context,
    question: Question,
    timeout: Option<Duration>,
) -> Result<(String, Answer)> {
    let team = ctx.team()?;
    let config = team.load()?;
    let caller = ctx.caller(&config)?;
    let deadline = timeout.and_then(clock::deadline);
    let forged = |id: &str| {
        tracing::warn!("ignored an answer that is not signed for this member (message {id})");
    };
    let (request_id, answer) = permission_ask::ask(
        &team,
        &ctx.fleet(),
        &caller,
        question,
        deadline,
        &forged,
    )?;
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
