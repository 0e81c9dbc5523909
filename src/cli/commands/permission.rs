//! `swarm permission list|allow|deny|log`: the asks of the team's teammates to use a tool or reach a
//! host, and the lead's side's answer to each (docs/ARCHITECTURE.md, "Permission asks"); and
//! `swarm mode`, which sets a teammate's permission mode with the answer to its oldest ask.

use clap_complete::engine::ArgValueCandidates;
use serde::Serialize;
use serde_json::Value;

use crate::base::clock;
use crate::cli::complete;
use crate::cli::context::Context;
use crate::cli::output::{self, Report, Table};
use crate::cli::permission_ask;
use crate::error::Result;
use crate::format::settings::PermissionMode;
use crate::member::permission::{self, Ask, Verdict};
use crate::policy::{self, Action};
use crate::store::permissions::{self, PermissionAnswer};

#[derive(Debug, clap::Subcommand)]
#[command(defer = true)]
pub(crate) enum Command {
    /// The asks waiting for an answer: id, member, tool, what it would do, age
    List(ListArgs),
    /// Let a teammate do what it asked (lead or person only)
    Allow(AllowArgs),
    /// Refuse what a teammate asked (lead or person only)
    Deny(DenyArgs),
    /// Every answer given, oldest first: when, to whom, what, by whom
    Log(LogArgs),
    /// From a member's pane: ask the lead's side to use a tool, and wait for the answer
    Ask(permission_ask::AskArgs),
    /// A pre-tool hook for Claude Code, Codex or Gemini CLI that asks as `ask` does
    Hook(permission_ask::HookArgs),
}

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON_LIST: &str = r#"JSON output (--json), one document, oldest ask first:
  [{"requestId", "member", "tool", "input", "description", "suggestions", "askedAt"}]
"input" whole, however large; "tool" is "network" for a sandbox host ({"host"})."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON_LIST)]
pub(crate) struct ListArgs {}

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON_ANSWER: &str = r#"JSON output (--json), one document:
  {"requestId", "member", "tool", "allowed", "always", "mode", "reason", "by", "at"}
"mode" is the permission mode the answer set, or null."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON_ANSWER)]
pub(crate) struct AllowArgs {
    /// The request id, as `permission list` shows it
    #[arg(value_name = "ID", add = ArgValueCandidates::new(complete::permission_requests))]
    pub(crate) request_id: String,

    /// Keep the rules the teammate's Claude Code suggests, so it is not asked again this session
    #[arg(long)]
    pub(crate) always: bool,

    /// Also set the teammate's permission mode for the rest of its session (Claude Code takes a
    /// mode from its lead only with an answer)
    #[arg(long, value_name = "MODE")]
    pub(crate) mode: Option<PermissionMode>,
}

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON_ANSWER)]
pub(crate) struct ModeArgs {
    /// The Claude Code teammate
    #[arg(value_name = "NAME", add = ArgValueCandidates::new(complete::members))]
    pub(crate) name: String,

    /// The mode it continues in
    #[arg(value_name = "MODE")]
    pub(crate) mode: PermissionMode,
}

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON_ANSWER)]
pub(crate) struct DenyArgs {
    /// The request id, as `permission list` shows it
    #[arg(value_name = "ID", add = ArgValueCandidates::new(complete::permission_requests))]
    pub(crate) request_id: String,

    /// Why, shown to the teammate
    #[arg(long, value_name = "TEXT")]
    pub(crate) reason: Option<String>,
}

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON_LOG: &str = r#"JSON output (--json), one document, oldest answer first:
  [{"requestId", "member", "tool", "allowed", "always", "mode", "reason", "by", "at"}]"#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON_LOG)]
pub(crate) struct LogArgs {}

pub(crate) fn run(ctx: &Context, command: Command) -> Result<()> {
    match command {
        Command::List(_) => list(ctx),
        Command::Log(_) => log(ctx),
        Command::Ask(args) => permission_ask::ask(ctx, args),
        Command::Hook(args) => permission_ask::hook(ctx, args),
        Command::Allow(args) => answer(
            ctx,
            &args.request_id,
            match args.mode {
                Some(mode) => Verdict::AllowInMode {
                    always: args.always,
                    mode,
                },
                None => Verdict::Allow {
                    always: args.always,
                },
            },
        ),
        Command::Deny(args) => answer(
            ctx,
            &args.request_id,
            Verdict::Deny {
                reason: args.reason,
            },
        ),
    }
}

fn list(ctx: &Context) -> Result<()> {
    let team = ctx.team()?;
    let config = team.load()?;
    policy::allow(&config, &ctx.caller(&config)?, Action::Read)?;
    let asks = permission::pending(&team, &ctx.fleet())?;
    ctx.report(&Asks(asks.iter().map(AskShown::of).collect()))
}

/// The asks waiting for an answer.
#[derive(Serialize)]
#[serde(transparent)]
struct Asks<'a>(Vec<AskShown<'a>>);

/// One ask, as JSON shows it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AskShown<'a> {
    request_id: &'a str,
    member: &'a str,
    tool: &'a str,
    input: Value,
    description: Option<&'a str>,
    suggestions: &'a [Value],
    asked_at: &'a str,
    #[serde(skip)]
    asked_at_ms: Option<u64>,
    #[serde(skip)]
    summary: String,
}

impl<'a> AskShown<'a> {
    fn of(ask: &'a Ask) -> Self {
        Self {
            request_id: ask.request_id(),
            member: ask.member(),
            tool: ask.tool(),
            input: ask.input(),
            description: ask.description(),
            suggestions: ask.suggestions(),
            asked_at: &ask.asked_at,
            asked_at_ms: ask.asked_at_ms(),
            summary: ask.summary(),
        }
    }
}

impl Report for Asks<'_> {
    fn text(&self) -> Result<()> {
        if self.0.is_empty() {
            return output::line("no permission asks waiting");
        }
        let now = clock::now_ms();
        let mut table = Table::new(&["ID", "MEMBER", "TOOL", "AGE", "WHAT"]);
        for ask in &self.0 {
            table.row(vec![
                ask.request_id.to_owned(),
                ask.member.to_owned(),
                ask.tool.to_owned(),
                ask.asked_at_ms
                    .map_or_else(|| "-".to_owned(), |ms| clock::ago(ms, now)),
                ask.summary.clone(),
            ]);
        }
        table.print()
    }
}

fn log(ctx: &Context) -> Result<()> {
    let team = ctx.team()?;
    let config = team.load()?;
    policy::allow(&config, &ctx.caller(&config)?, Action::Read)?;
    let answers = permissions::answers(team.paths())?;
    ctx.report(&Answers(answers.iter().map(AnswerShown::of).collect()))
}

/// Every permission ask answered, oldest first.
#[derive(Serialize)]
#[serde(transparent)]
struct Answers<'a>(Vec<AnswerShown<'a>>);

impl Report for Answers<'_> {
    fn text(&self) -> Result<()> {
        if self.0.is_empty() {
            return output::line("no permission ask has been answered");
        }
        let mut table = Table::new(&["AT", "ID", "MEMBER", "TOOL", "ANSWER", "BY", "REASON"]);
        for shown in &self.0 {
            let answer = shown.answer;
            table.row(vec![
                answer.at.clone(),
                answer.request_id.clone(),
                answer.member.clone(),
                answer.tool.clone(),
                match &answer.mode {
                    Some(mode) => format!("{}, mode {mode}", verdict_word(answer)),
                    None => verdict_word(answer).to_owned(),
                },
                answer.by.clone(),
                answer.reason.clone().unwrap_or_else(|| "-".to_owned()),
            ]);
        }
        table.print()
    }
}

/// An answer as JSON shows it: every key, always there, so a script can rely on it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AnswerShown<'a> {
    request_id: &'a str,
    member: &'a str,
    tool: &'a str,
    allowed: bool,
    always: bool,
    mode: Option<&'a str>,
    reason: Option<&'a str>,
    by: &'a str,
    at: &'a str,
    #[serde(skip)]
    answer: &'a PermissionAnswer,
}

impl<'a> AnswerShown<'a> {
    fn of(answer: &'a PermissionAnswer) -> Self {
        Self {
            request_id: &answer.request_id,
            member: &answer.member,
            tool: &answer.tool,
            allowed: answer.allowed,
            always: answer.always,
            mode: answer.mode.as_deref(),
            reason: answer.reason.as_deref(),
            by: &answer.by,
            at: &answer.at,
            answer,
        }
    }
}

impl Report for AnswerShown<'_> {
    fn text(&self) -> Result<()> {
        output::line(said(self.answer))
    }
}

fn verdict_word(answer: &PermissionAnswer) -> &'static str {
    match (answer.allowed, answer.always) {
        (true, true) => "allowed always",
        (true, false) => "allowed",
        (false, _) => "denied",
    }
}

fn answer(ctx: &Context, request_id: &str, verdict: Verdict) -> Result<()> {
    let team = ctx.team()?;
    let config = team.load()?;
    let caller = ctx.caller(&config)?;
    let answer = permission::answer(&team, &ctx.fleet(), &config, &caller, request_id, verdict)?;
    ctx.report(&AnswerShown::of(&answer))
}

/// `swarm mode NAME MODE`: allows NAME's oldest pending ask, its answer setting the mode.
pub(crate) fn mode(ctx: &Context, args: ModeArgs) -> Result<()> {
    let team = ctx.team()?;
    let config = team.load()?;
    let caller = ctx.caller(&config)?;
    let answer =
        permission::set_mode(&team, &ctx.fleet(), &config, &caller, &args.name, args.mode)?;
    ctx.report(&AnswerShown::of(&answer))
}

/// `allowed perm-1 (Bash) for bob`, and `, its mode now acceptEdits` when the answer set one.
fn said(answer: &PermissionAnswer) -> String {
    let mode = answer
        .mode
        .as_ref()
        .map(|mode| format!(", its mode now {mode}"))
        .unwrap_or_default();
    format!(
        "{} {} ({}) for {}{mode}",
        verdict_word(answer),
        answer.request_id,
        answer.tool,
        answer.member
    )
}
