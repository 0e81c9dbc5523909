//! `swarm plan submit|approve|reject`: a teammate asks the lead to approve its plan; the lead answers.

use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

use clap_complete::engine::ArgValueCandidates;

use crate::base::clock;
use crate::cli::args::parse_duration;
use crate::cli::complete;
use crate::cli::context::Context;
use crate::cli::request::Exchange;
use crate::error::{Error, Result};
use crate::format::message::{InboxMessage, MAX_TEXT_BYTES};
use crate::format::settings::PermissionMode;
use crate::format::structured::{PlanApprovalRequest, Structured, plan_request_id};
use crate::member::answer::{self, PlanVerdict};
use crate::member::verify;
use crate::policy::{self, Action};

#[derive(Debug, clap::Subcommand)]
#[command(defer = true)]
pub(crate) enum Command {
    /// Send your plan to the lead for approval; prints the request id
    Submit(SubmitArgs),
    /// Approve a teammate's plan (lead only)
    Approve(ApproveArgs),
    /// Reject a teammate's plan (lead only)
    Reject(RejectArgs),
}

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON_SUBMIT: &str = r#"JSON output (--json), one document:
  {"requestId", "to"}
With --wait: {"requestId", "to", "approved", "answer"}, "answer" the lead's
plan_approval_response, decoded ({"type", "requestId", "approved", "feedback", ...})."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON_SUBMIT)]
pub(crate) struct SubmitArgs {
    /// The plan: a file, or '-' for stdin
    #[arg(value_name = "FILE|-")]
    pub(crate) file: String,

    /// Block until the lead answers: exit 0 if approved, 1 if rejected
    #[arg(long)]
    pub(crate) wait: bool,

    /// Give up waiting after DURATION (seconds, or 30s, 2m, 1h; exit status 4)
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, requires = "wait")]
    pub(crate) timeout: Option<Duration>,
}

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON_ANSWER: &str = r#"JSON output (--json), one document:
  {"requestId", "to", "approved"}"#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON_ANSWER)]
pub(crate) struct ApproveArgs {
    /// The request id, as in `plan_approval-<ms>@<name>@<team>`
    #[arg(value_name = "REQUEST_ID", add = ArgValueCandidates::new(complete::plan_requests))]
    pub(crate) request_id: String,

    /// The permission mode the teammate may continue in
    #[arg(long, value_name = "M")]
    pub(crate) permission_mode: Option<PermissionMode>,
}

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON_ANSWER)]
pub(crate) struct RejectArgs {
    /// The request id, as in `plan_approval-<ms>@<name>@<team>`
    #[arg(value_name = "REQUEST_ID", add = ArgValueCandidates::new(complete::plan_requests))]
    pub(crate) request_id: String,

    /// What to change, shown to the teammate
    #[arg(long, value_name = "F")]
    pub(crate) feedback: Option<String>,
}

pub(crate) fn run(ctx: &Context, command: Command) -> Result<()> {
    match command {
        Command::Submit(args) => submit(ctx, args),
        Command::Approve(args) => respond(
            ctx,
            &args.request_id,
            true,
            args.permission_mode.map(|mode| mode.as_str().to_owned()),
            None,
        ),
        Command::Reject(args) => respond(ctx, &args.request_id, false, None, args.feedback),
    }
}

fn submit(ctx: &Context, args: SubmitArgs) -> Result<()> {
    let team = ctx.team()?;
    let config = team.load()?;
    let caller = ctx.caller(&config)?;
    policy::allow_own(&caller, Action::SubmitPlan, caller.name().as_str())?;
    let me = caller.name();
    let lead = config.lead_name().to_owned();
    let (plan_file_path, plan_content) = read_plan(&args.file)?;
    let request_id = plan_request_id(clock::now_ms(), me.as_str(), team.name());
    let message = Structured::PlanApprovalRequest(PlanApprovalRequest {
        from: me.to_string(),
        timestamp: clock::timestamp_now(),
        plan_file_path,
        plan_content,
        request_id: request_id.clone(),
    });
    Exchange {
        request_id: &request_id,
        to: &lead,
    }
    .ask(
        ctx,
        &team,
        &config,
        &caller,
        me.as_str(),
        &message,
        args.wait.then_some(args.timeout),
        // Only the lead's answer counts, and for a member that verifies the lead's messages,
        // only a signed one; anything else claiming to answer stays unread, shown as forged.
        || {
            let judge = verify::judge(&team, &config, me.as_str(), true)?;
            let (lead, request_id) = (&lead, &request_id);
            Ok(move |envelope: &InboxMessage, s: &Structured| {
                envelope.from() == lead
                    && matches!(s, Structured::PlanApprovalResponse(r) if r.request_id == *request_id)
                    && !judge.verdict(envelope).is_forged()
            })
        },
        || format!("the lead did not answer plan request {request_id} in time"),
        |answer| match answer {
            Structured::PlanApprovalResponse(response) if response.approved => {
                let mode = response.permission_mode.as_deref().unwrap_or("default");
                (true, format!("approved {request_id}; permission mode: {mode}"))
            }
            Structured::PlanApprovalResponse(response) => {
                let feedback = response.feedback.as_deref().unwrap_or("no feedback given");
                (false, format!("rejected {request_id}: {feedback}"))
            }
            // The watch takes nothing but the response.
            _ => (false, format!("rejected {request_id}")),
        },
    )
}

fn respond(
    ctx: &Context,
    request_id: &str,
    approved: bool,
    permission_mode: Option<String>,
    feedback: Option<String>,
) -> Result<()> {
    let team = ctx.team()?;
    let config = team.load()?;
    let caller = ctx.caller(&config)?;
    let subject = answer::plan(
        &team,
        &ctx.fleet(),
        &config,
        &caller,
        request_id,
        PlanVerdict {
            approved,
            permission_mode,
            feedback,
        },
    )?;
    let verdict = if approved { "approved" } else { "rejected" };
    Exchange {
        request_id,
        to: &subject,
    }
    .answered(
        ctx,
        approved,
        format!("{verdict} {request_id} for {subject}"),
    )
}

/// The plan's path (`-` for stdin) and content, within the message size limit.
fn read_plan(file: &str) -> Result<(String, String)> {
    let limit = MAX_TEXT_BYTES as u64 + 1;
    let (path, bytes) = if file == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .take(limit)
            .read_to_end(&mut bytes)
            .map_err(|err| Error::os("read the plan from stdin", err))?;
        ("-".to_owned(), bytes)
    } else {
        let path = crate::store::paths::absolute(&PathBuf::from(file))?;
        let mut bytes = Vec::new();
        std::fs::File::open(&path)
            .and_then(|f| f.take(limit).read_to_end(&mut bytes))
            .map_err(|err| Error::io_on_named("read plan", &path, err))?;
        (path.display().to_string(), bytes)
    };
    if bytes.len() > MAX_TEXT_BYTES {
        return Err(Error::usage(format!(
            "the plan is over the message limit of {MAX_TEXT_BYTES} bytes (1 MiB)"
        )));
    }
    let content =
        String::from_utf8(bytes).map_err(|_| Error::usage("the plan is not valid UTF-8"))?;
    Ok((path, content))
}
