//! `swarm send TO [TEXT|-]`: a message to a member, to `user` (the person at the keyboard, in
//! every team), to every member but yourself (`*`), or to a `uds:` peer (`uds:user`: the person's
//! listener, else their inbox; a Claude Code session's socket, in Claude Code's own frame). Text
//! that is a protocol message obeys the protocol rules.

use std::io::Write;

use clap_complete::engine::ArgValueCandidates;
use serde::Serialize;

use crate::base::text::derive_summary;
use crate::cli::args;
use crate::cli::complete;
use crate::cli::context::Context;
use crate::cli::output::{self, Report};
use crate::error::{Error, ErrorKind, Result};
use crate::format::message::{InboxMessage, check_text_size};
use crate::member::identity;
use crate::member::seal;
use crate::member::send::{self, Outgoing};
use crate::peer;
use crate::policy::{self, Action, PERSON, Whereabouts};
use crate::protocol::rules::Recipient;
use crate::store::team::Team;

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one document:
  {"msg_id", "from", "to": [every member the message was written to, or the uds: address]}"#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// A member's name ('user': the person at the keyboard, in every team), '*' for every member
    /// except you, or a peer: uds:PATH, uds:LABEL for the live peer with that label (or that
    /// agent@team), or uds:user for your terminal running `swarm listen` without a label (else
    /// your inbox)
    #[arg(value_name = "TO", add = ArgValueCandidates::new(complete::recipients))]
    pub(crate) to: String,

    /// The message; '-' or nothing reads it from stdin (a pipe or file, not a terminal). An empty
    /// message is refused
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
    if text.trim().is_empty() {
        return Err(Error::usage(format!(
            "the message to {} is empty; nothing was sent",
            args.to
        ))
        .with_hint(
            "give the text as an argument, or pipe it in: `echo hello | swarm send NAME -`",
        ));
    }
    check_text_size(&text)?;
    let structured = send::classify(&text)?;

    let recipient = if args.to == "*" {
        Recipient::Broadcast
    } else if args.to.starts_with("uds:") {
        Recipient::Peer
    } else {
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
    // A member as NAME or as NAME@TEAM, the way swarm shows one.
    let (team, member) = match recipient {
        Recipient::Member(named) => ctx.team_and_member(Some(named))?,
        _ => (ctx.team()?, None),
    };
    let recipient = member
        .as_ref()
        .map_or(recipient, |name| Recipient::Member(name.as_str()));
    let config = team.load()?;
    let caller = ctx.caller(&config)?;
    let sent = send::send(
        &team,
        &ctx.fleet(),
        &config,
        &caller,
        recipient,
        Outgoing {
            text: &text,
            structured,
            summary: args.summary.as_deref(),
        },
    )?;
    ctx.report(&Sent {
        msg_id: &sent.id,
        from: &sent.from,
        to: To::Members(&sent.to),
        delivered: None,
        team: None,
        inbox: None,
    })
}

/// A message sent: its id (all the text says), from whom, to whom, and where it went when that
/// was not a team's inboxes.
#[derive(Serialize)]
struct Sent<'a> {
    msg_id: &'a str,
    from: &'a str,
    to: To<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delivered: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    team: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    inbox: Option<&'static str>,
}

/// Whom a message went to: members of a team, a peer's address, or the person for a peer.
#[derive(Serialize)]
#[serde(untagged)]
enum To<'a> {
    Members(&'a [String]),
    Peer([&'a str; 1]),
    Person(&'a str),
}

impl Report for Sent<'_> {
    fn text(&self) -> Result<()> {
        output::line(self.msg_id)
    }
}

/// `send uds:PATH`, `send uds:LABEL` or `send uds:user`: one line to a peer socket, acknowledged
/// once the receiver has it. When no terminal listens as `uds:user`, the message waits in `user`'s
/// inbox of the sender's team instead, and stderr says so.
fn send_to_peer(ctx: &Context, to: &str, text: &str, summary: Option<&str>) -> Result<()> {
    let target = peer::address_path(to).ok_or_else(|| {
        Error::usage(
            "a peer address is uds:PATH or uds:LABEL, e.g. uds:/run/user/1000/swarm/4242.sock",
        )
    })?;
    // The receiver tells who sent it from the connection itself; this claim must agree with that.
    let checks_out = |entry: &peer::PeerEntry| send::checks_out(&ctx.home, entry);
    let from = match ctx.whereabouts()? {
        Whereabouts::Outside => peer::own_address(&ctx.home, &checks_out),
        pane => identity::sender_name(pane).unwrap_or_default(),
    };
    let delivered = peer::resolve(&ctx.home, target, &checks_out).and_then(|(path, entry)| {
        if entry.is_none() && peer::is_claude_socket(&path) {
            // A Claude Code session's: in its own frame, answerable at a socket of ours.
            let reply_to = reply_socket(ctx, &checks_out)?;
            let name = from.strip_prefix("uds:").unwrap_or(&from);
            let msg_id = send::to_claude(&path, name, reply_to.as_deref(), text)?;
            return Ok((msg_id, from.clone()));
        }
        let mut request = peer::Request {
            from,
            text: text.to_owned(),
            summary: summary.map(str::to_owned),
            msg_id: crate::base::ids::fresh().to_string(),
            timestamp: None,
            lead_sig: None,
        };
        // To a member's socket from the lead's side, signed as its inbox would have it.
        let msg_id = send::to_peer(&ctx.home, &ctx.fleet(), &path, entry.as_ref(), &mut request)?;
        Ok((msg_id, request.from))
    });
    let (msg_id, from) = match delivered {
        Ok(delivered) => delivered,
        // Nobody listens as `user` (or the listener went before it could answer): nothing was
        // delivered, and the person reads it from their inbox.
        Err(err) if target == PERSON && err.kind() == ErrorKind::NotFound => {
            return leave_for_person(ctx, to, text, summary, err);
        }
        Err(err) => return Err(err),
    };
    ctx.report(&Sent {
        msg_id: &msg_id,
        from: &from,
        to: To::Peer([to]),
        delivered: Some("peer"),
        team: None,
        inbox: None,
    })
}

/// The socket of ours a Claude Code session answers at: a member's own (its supervisor's), or
/// outside every pane the person's listener on this terminal (`SWARM_SOCKET`'s, else the newest
/// here); none without one.
fn reply_socket(
    ctx: &Context,
    checks_out: &dyn Fn(&peer::PeerEntry) -> bool,
) -> Result<Option<std::path::PathBuf>> {
    Ok(match ctx.whereabouts()? {
        Whereabouts::Pane { team, member, .. } => Team::open(&ctx.home, team)?
            .load()?
            .member(member)
            .and_then(|m| m.socket.as_deref())
            .map(std::path::PathBuf::from),
        Whereabouts::Outside => {
            peer::own_listener(&ctx.home, checks_out).map(|listener| listener.socket)
        }
        Whereabouts::Elsewhere { .. } | Whereabouts::Unknown(_) => None,
    })
}

/// `send uds:user` with no terminal listening: into `user`'s inbox of the team the sender is a
/// member of (its pane's), else of the team the command acts on, as `send user` would put it.
/// Without a team to put it in, `unreachable` is the error.
fn leave_for_person(
    ctx: &Context,
    to: &str,
    text: &str,
    summary: Option<&str>,
    unreachable: Error,
) -> Result<()> {
    let team = match ctx.whereabouts()? {
        Whereabouts::Pane { team, .. } => Team::open(&ctx.home, team),
        Whereabouts::Outside | Whereabouts::Elsewhere { .. } | Whereabouts::Unknown(_) => {
            ctx.team()
        }
    };
    let Ok(team) = team else {
        return Err(unreachable);
    };
    let config = team.load()?;
    let me = policy::allow(&config, &ctx.caller(&config)?, Action::Send)?;
    let summary = summary.map_or_else(|| derive_summary(text), str::to_owned);
    let color = config.member(me.as_str()).and_then(|m| m.color.clone());
    let mut message = InboxMessage::new(me.as_str(), text, Some(&summary), color.as_deref());
    seal::seal(&team, &ctx.fleet(), &config, PERSON, &mut message)?;
    team.mailbox(PERSON)
        .append(std::slice::from_ref(&message))?;
    {
        let mut stderr = std::io::stderr().lock();
        let _ = writeln!(
            stderr,
            "swarm: no terminal listens as {to}; the message waits in {PERSON}'s inbox of team {} \
             (swarm inbox --team {})",
            team.name(),
            team.name()
        );
    }
    ctx.report(&Sent {
        msg_id: &message.id(),
        from: me.as_str(),
        to: To::Person(to),
        delivered: Some("inbox"),
        team: Some(team.name()),
        inbox: Some(PERSON),
    })
}

/// The message on stdin, when no text was given or it is `-`.
fn read_stdin() -> Result<String> {
    let bytes = args::read_stdin(
        "the message",
        "`swarm send bob \"take task 2\"`, or `git diff | swarm send bob -`",
    )?;
    String::from_utf8(bytes).map_err(|_| Error::usage("the message on stdin is not valid UTF-8"))
}
