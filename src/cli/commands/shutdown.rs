//! `swarm shutdown request|approve|reject`: the lead asks a teammate to stop; the teammate answers.

use std::time::Duration;

use clap_complete::engine::ArgValueCandidates;

use crate::base::clock;
use crate::cli::args::parse_duration;
use crate::cli::complete;
use crate::cli::context::Context;
use crate::cli::request::Exchange;
use crate::error::Result;
use crate::format::message::InboxMessage;
use crate::format::structured::{ShutdownRequest, Structured, shutdown_request_id};
use crate::member::answer;
use crate::policy::{self, Action};

#[derive(Debug, clap::Subcommand)]
#[command(defer = true)]
pub(crate) enum Command {
    /// Ask a teammate to shut down (lead only); prints the request id
    Request(RequestArgs),
    /// Approve a shutdown request addressed to you, then exit
    Approve(ApproveArgs),
    /// Reject a shutdown request addressed to you, and keep working
    Reject(RejectArgs),
}

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON_REQUEST: &str = r#"JSON output (--json), one document:
  {"requestId", "to"}
With --wait: {"requestId", "to", "approved", "answer"}, "answer" the teammate's
shutdown_approved or shutdown_rejected, decoded ({"type", "requestId", "from", ...})."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON_REQUEST)]
pub(crate) struct RequestArgs {
    /// The teammate to stop
    #[arg(value_name = "NAME", add = ArgValueCandidates::new(complete::members))]
    pub(crate) name: String,

    /// Why, shown to the teammate
    #[arg(long, value_name = "R")]
    pub(crate) reason: Option<String>,

    /// Block until the teammate answers: exit 0 if it approved, 1 if it rejected
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
    /// The request id, as in `shutdown-<ms>@<you>`
    #[arg(value_name = "REQUEST_ID", add = ArgValueCandidates::new(complete::shutdown_requests))]
    pub(crate) request_id: String,
}

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON_ANSWER)]
pub(crate) struct RejectArgs {
    /// The request id, as in `shutdown-<ms>@<you>`
    #[arg(value_name = "REQUEST_ID", add = ArgValueCandidates::new(complete::shutdown_requests))]
    pub(crate) request_id: String,

    /// Why you keep working, shown to the lead
    #[arg(long, value_name = "R", required = true)]
    pub(crate) reason: String,
}

pub(crate) fn run(ctx: &Context, command: Command) -> Result<()> {
    match command {
        Command::Request(args) => request(ctx, args),
        Command::Approve(args) => answer(ctx, &args.request_id, None),
        Command::Reject(args) => answer(ctx, &args.request_id, Some(args.reason)),
    }
}

fn request(ctx: &Context, args: RequestArgs) -> Result<()> {
    let (team, name) = ctx.member_team(&args.name)?;
    let config = team.load()?;
    config.require_member(name.as_str())?;
    let caller = ctx.caller(&config)?;
    // The person at the keyboard asks as the lead, so the answer comes to the lead's inbox.
    let me = policy::allow(&config, &caller, Action::RequestShutdown)?;
    let request_id = shutdown_request_id(clock::now_ms(), name.as_str());
    let message = Structured::ShutdownRequest(ShutdownRequest {
        request_id: request_id.clone(),
        from: me.to_string(),
        reason: args.reason,
        timestamp: clock::timestamp_now(),
    });
    let exchange = Exchange {
        request_id: &request_id,
        to: name.as_str(),
    };
    exchange.ask(
        ctx,
        &team,
        &config,
        &caller,
        me.as_str(),
        &message,
        args.wait.then_some(args.timeout),
        || {
            Ok(|_: &InboxMessage, s: &Structured| {
                matches!(
                    s,
                    Structured::ShutdownApproved(_) | Structured::ShutdownRejected(_)
                ) && s.request_id() == Some(request_id.as_str())
            })
        },
        || format!("{name} did not answer shutdown request {request_id} in time"),
        |answer| match answer {
            Structured::ShutdownRejected(rejected) => (
                false,
                format!("{name} rejected {request_id}: {}", rejected.reason),
            ),
            _ => (true, format!("{name} approved {request_id}")),
        },
    )
}

fn answer(ctx: &Context, request_id: &str, rejection: Option<String>) -> Result<()> {
    let team = ctx.team()?;
    let config = team.load()?;
    let caller = ctx.caller(&config)?;
    let approved = rejection.is_none();
    let lead = answer::shutdown(&team, &ctx.fleet(), &config, &caller, request_id, rejection)?;
    let verdict = if approved { "approved" } else { "rejected" };
    Exchange {
        request_id,
        to: &lead,
    }
    .answered(ctx, approved, format!("{verdict} {request_id}"))
}
