//! `swarm send TO [TEXT|-]`: a message to a member, to every member but yourself (`*`), or to a
//! `uds:` peer. Text that is a protocol message obeys the protocol rules.

use std::collections::HashSet;
use std::io::Read;

use serde_json::json;

use crate::base::names::Name;
use crate::base::text::derive_summary;
use crate::cli::context::Context;
use crate::cli::output;
use crate::error::{Error, Result};
use crate::format::message::{InboxMessage, check_text_size};
use crate::format::structured::{Classified, Structured};
use crate::member::identity;
use crate::member::seal;
use crate::peer;
use crate::policy::{self, Action, PERSON, Whereabouts};
use crate::protocol::rules::{self, Recipient};
use crate::store::team::Team;

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one document:
  {"msg_id", "from", "to": [every member the message was written to, or the uds: address]}"#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// A member's name, '*' for every member except you, or a peer: uds:PATH, or uds:LABEL for
    /// the live peer with that label (or that agent@team)
    #[arg(value_name = "TO")]
    pub(crate) to: String,

    /// The message; '-' or nothing reads it from stdin
    #[arg(value_name = "TEXT")]
    pub(crate) text: Option<String>,

    /// A short preview shown by agents and `swarm watch` [default: derived from the text]
    #[arg(long, value_name = "S")]
    pub(crate) summary: Option<String>,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let text = match args.text.as_deref() {
        None | Some("-") => read_stdin()?,
        Some(text) => text.to_owned(),
    };
    check_text_size(&text)?;
    let structured = classify(&text)?;

    let recipient = if args.to == "*" {
        Recipient::Broadcast
    } else if args.to.starts_with("uds:") {
        Recipient::Peer
    } else {
        Name::parse("member", &args.to)?;
        Recipient::Member(&args.to)
    };
    if let (Recipient::Peer, Some(message)) = (recipient, &structured) {
        return Err(Error::usage(format!(
            "{} cannot be sent to a uds: peer; protocol messages stay inside a team",
            message.kind()
        )));
    }
    if matches!(recipient, Recipient::Peer) {
        return send_to_peer(ctx, &args.to, &text, args.summary.as_deref());
    }

    let team = ctx.team()?;
    let config = team.load()?;
    if let Recipient::Member(to) = recipient {
        config.require_member(to)?;
    }
    let caller = ctx.caller(&config)?;
    let me = match &structured {
        Some(message) => rules::check(&team, &config, &caller, recipient, message)?,
        None => policy::allow(&config, &caller, Action::Send)?,
    };
    let targets: Vec<String> = match recipient {
        Recipient::Member(to) => vec![config.require_member(to)?.name.clone()],
        Recipient::Broadcast => config
            .members
            .iter()
            .filter(|m| m.name != me.as_str())
            .map(|m| m.name.clone())
            .collect(),
        Recipient::Peer => unreachable!("handled above"),
    };
    if targets.is_empty() {
        return Err(Error::usage(format!(
            "team {} has no other member to broadcast to",
            config.name
        )));
    }

    let summary = match (&args.summary, &structured) {
        (Some(summary), _) => Some(summary.clone()),
        (None, None) => Some(derive_summary(&text)),
        (None, Some(_)) => None,
    };
    let color = config.member(me.as_str()).and_then(|m| m.color.clone());
    let mut message = InboxMessage::new(me.as_str(), &text, summary.as_deref(), color.as_deref());
    // Its copies share its msg_id and say they are one broadcast: a reader of several inboxes
    // (watch --all, up --wait) shows it once, to `*`.
    if matches!(recipient, Recipient::Broadcast) {
        message.mark_broadcast();
    }
    // Every copy is signed before any is written: one that cannot be stops them all.
    let mut sealed = Vec::with_capacity(targets.len());
    for target in &targets {
        let mut copy = message.clone();
        seal::seal(&team, &config, target, &mut copy)?;
        sealed.push(copy);
    }
    for (n, (target, copy)) in targets.iter().zip(&sealed).enumerate() {
        if let Err(err) = team.mailbox(target).append(std::slice::from_ref(copy)) {
            return Err(withdraw(&team, &message, &targets[..n], err));
        }
    }
    if ctx.json {
        return output::json(&json!({"msg_id": message.id(), "from": me.as_str(), "to": targets}));
    }
    output::line(message.id())
}

/// A broadcast that failed part-way is taken back from the inboxes it reached, where it is still
/// unread, so that nothing happened and a retry cannot duplicate it. The error says what could not
/// be taken back: a copy already taken was delivered.
fn withdraw(team: &Team, message: &InboxMessage, reached: &[String], err: Error) -> Error {
    if reached.is_empty() {
        return err;
    }
    let id = HashSet::from([message.id().into_owned()]);
    let (mut withdrawn, mut taken, mut stuck) = (Vec::new(), Vec::new(), Vec::new());
    for name in reached {
        match team.mailbox(name).retract(&id) {
            Ok(removed) if removed.is_empty() => taken.push(name.as_str()),
            Ok(_) => withdrawn.push(name.as_str()),
            Err(why) => {
                tracing::error!("cannot withdraw the broadcast from {name}: {why}");
                stuck.push(name.as_str());
            }
        }
    }
    let mut notes = Vec::new();
    if !withdrawn.is_empty() {
        notes.push(format!("withdrawn from {}", withdrawn.join(", ")));
    }
    if !taken.is_empty() {
        notes.push(format!("already taken by {}", taken.join(", ")));
    }
    if !stuck.is_empty() {
        notes.push(format!("still unread in {}", stuck.join(", ")));
    }
    let note = format!("broadcast {}: {}", message.id(), notes.join("; "));
    if taken.is_empty() && stuck.is_empty() {
        err.with_note(format!("{note}, so nobody has it"))
    } else {
        err.with_note(note)
    }
}

/// `send uds:PATH` or `send uds:LABEL`: one line to a peer socket, acknowledged once the
/// receiver has it.
fn send_to_peer(ctx: &Context, to: &str, text: &str, summary: Option<&str>) -> Result<()> {
    let target = peer::address_path(to).ok_or_else(|| {
        Error::usage(
            "a peer address is uds:PATH or uds:LABEL, e.g. uds:/run/user/1000/swarm/4242.sock",
        )
    })?;
    let path = peer::resolve(&ctx.home, target)?;
    // The receiver tells who sent it from the connection itself; this claim must agree with that.
    let mut request = peer::Request {
        from: match ctx.whereabouts() {
            Whereabouts::Outside => peer::own_address(&ctx.home, PERSON),
            pane @ Whereabouts::Pane { .. } => identity::sender_name(pane),
        },
        text: text.to_owned(),
        summary: summary.map(str::to_owned),
        msg_id: crate::base::ids::fresh().to_string(),
        timestamp: None,
        lead_sig: None,
    };
    // To a member's socket from the lead's side, signed as its inbox would have it.
    seal::seal_peer_request(&ctx.home, &path, &mut request)?;
    let msg_id = peer::deliver(&path, &request)?;
    if ctx.json {
        return output::json(&json!({"msg_id": msg_id, "from": request.from, "to": [to]}));
    }
    output::line(msg_id)
}

/// Protocol messages are checked; JSON that claims a protocol type without its fields is refused.
fn classify(text: &str) -> Result<Option<Structured>> {
    match Structured::classify(text) {
        Classified::Plain => Ok(None),
        Classified::Structured(message) => Ok(Some(*message)),
        Classified::Malformed { kind, reason } => Err(Error::usage(format!(
            "the text claims to be a {kind} message but is not a valid one: {reason}"
        ))),
    }
}

fn read_stdin() -> Result<String> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(crate::format::message::MAX_TEXT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| Error::os("read the message from stdin", err))?;
    if bytes.len() > crate::format::message::MAX_TEXT_BYTES {
        return Err(Error::usage(format!(
            "message text on stdin is over the limit of {} bytes (1 MiB)",
            crate::format::message::MAX_TEXT_BYTES
        ))
        .with_hint("write large content to a file and send its path instead"));
    }
    String::from_utf8(bytes).map_err(|_| Error::usage("the message on stdin is not valid UTF-8"))
}
