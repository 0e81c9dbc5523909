//! `swarm recv [--wait]`: consume messages from your own inbox. Each is appended to your history
//! and printed before it leaves the inbox, so a crash or a closed stdout can repeat a message but
//! never lose one.

use std::cell::RefCell;
use std::time::Duration;

use serde_json::Value;

use crate::base::clock;
use crate::cli::args::parse_duration;
use crate::cli::context::Context;
use crate::cli::output::WithLines;
use crate::cli::render;
use crate::error::{Error, Result};
use crate::format::message::InboxMessage;
use crate::format::signature::{Judge, Verdict};
use crate::member::verify;
use crate::policy::{self, Action};
use crate::store::watcher::{Watcher, named};

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one document: the messages taken, oldest first, each as `swarm inbox`
prints it, without "state":
  [{"from", "text", "structured", "summary", "timestamp", "color", "read", "msg_id", ...}]"#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// Block until at least one message arrives
    #[arg(long)]
    pub(crate) wait: bool,

    /// Give up waiting after DURATION (seconds, or 30s, 2m, 1h; exit status 4)
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, requires = "wait")]
    pub(crate) timeout: Option<Duration>,

    /// Consume at most N messages, oldest first
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) max: Option<u64>,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let team = ctx.team()?;
    let config = team.load()?;
    let caller = ctx.member_of(&config)?;
    policy::allow_own(&caller, Action::Consume, caller.name().as_str())?;
    let me = caller.name();
    // Before anything is consumed: what is already in history was seen.
    let judge = RefCell::new(verify::judge(&team, &config, me.as_str(), true)?);
    let mailbox = team.mailbox(me.as_str());
    let max = args
        .max
        .map(|max| usize::try_from(max).unwrap_or(usize::MAX));
    // Printed before they leave the inbox: a print that fails leaves them unread. What claims
    // the lead's side is judged by what its member's run took before (a replay), and told to
    // the member's supervisor once it has left the inbox.
    let consume = || -> Result<Vec<InboxMessage>> {
        let messages = mailbox.consume_delivering(
            max,
            |_| true,
            |messages| {
                let mut judge = judge.borrow_mut();
                let unread: Vec<&InboxMessage> = messages.iter().collect();
                verify::consult(&mut judge, &team, &config, me.as_str(), &unread);
                print(ctx, messages, &mut judge)
            },
        )?;
        let taken: Vec<&InboxMessage> = messages.iter().collect();
        verify::took(&judge.borrow(), &team, &config, me.as_str(), &taken);
        Ok(messages)
    };

    if args.wait {
        mailbox.ensure()?;
        let watcher = Watcher::arm(&team.paths().inboxes())?;
        let deadline = args.timeout.and_then(clock::deadline);
        let found = watcher.wait_for(deadline, &named(mailbox.file_name()), || {
            let messages = consume()?;
            Ok((!messages.is_empty()).then_some(messages))
        })?;
        found.map(drop).ok_or_else(|| {
            Error::timeout(format!(
                "no message arrived for {me} within {}s",
                args.timeout.unwrap_or_default().as_secs_f64()
            ))
        })
    } else {
        let messages = consume()?;
        if messages.is_empty() {
            // Nothing to consume: `--json` still prints its empty list.
            print(ctx, &messages, &mut judge.borrow_mut())?;
        }
        Ok(())
    }
}

fn print(ctx: &Context, messages: &[InboxMessage], judge: &mut Judge) -> Result<()> {
    let judged: Vec<(&InboxMessage, Verdict)> =
        messages.iter().map(|m| (m, judge.judge(m))).collect();
    ctx.report(&WithLines {
        json: judged
            .iter()
            .map(|(m, verdict)| render::json(m, *verdict, &[]))
            .collect::<Vec<Value>>(),
        lines: judged
            .iter()
            .map(|(m, verdict)| render::line(m, *verdict))
            .collect(),
    })
}
