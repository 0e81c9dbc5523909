//! Sending a message to a member of the team, or a broadcast to every other member: what `send`
//! does inside a team, and what the dashboard's `s` and `S` do. Text that is a protocol message
//! obeys the protocol rules; plain text needs the `send` permission (docs/ARCHITECTURE.md, "The
//! path of one message"). And sending to a `uds:` peer, once the connection shows who serves it
//! ("Peers").

use std::cell::LazyCell;
use std::collections::HashSet;
use std::path::Path;

use crate::base::text::derive_summary;
use crate::error::{Error, Result};
use crate::format::config::{Member, TeamConfig};
use crate::format::message::InboxMessage;
pub use crate::format::structured::{Classified, Structured};
use crate::member::liveness;
use crate::member::processes::Snapshot;
use crate::member::reach::Reach;
use crate::member::{identity, permission, seal};
use crate::peer::{self, PeerEntry, Request};
use crate::policy::{self, Action, Caller, Whereabouts};
pub use crate::protocol::rules::{self, Recipient};
use crate::store::paths::Home;
use crate::store::team::Team;

/// Delivers `request` to the peer socket at `path`, found by the registry entry `entry` (none for
/// an address that is a path), and returns its id once acknowledged. Who serves the socket comes
/// from the connection, before anything is said on it: the entry is a file any process of the
/// user can write, so a socket served anywhere but where its entry says (a member's pane, or
/// outside every pane for the person's listener) is refused, as is one whose server cannot be
/// told. What goes to a member's pane is signed for that member first, when it must be.
pub fn to_peer(
    home: &Home,
    reach: &dyn Reach,
    path: &Path,
    entry: Option<&PeerEntry>,
    request: &mut Request,
) -> Result<String> {
    let connection = peer::connect(path)?;
    let what = format!("who serves {}", path.display());
    let serving = match connection.server() {
        Ok(server) => identity::whereabouts(home, &server),
        Err(why) => Whereabouts::Unknown(why),
    };
    if let Some(refusal) = serving.refusal(&what) {
        return Err(refusal);
    }
    if let Some(entry) = entry {
        let claimed = match (&entry.team, &entry.agent) {
            (Some(team), Some(agent)) => Some(format!("{agent}@{team}")),
            _ => None,
        };
        let genuine = match (&claimed, &serving) {
            (Some(claimed), Whereabouts::Pane { team, member, .. }) => {
                *claimed == format!("{member}@{team}")
            }
            (None, Whereabouts::Outside) => true,
            _ => false,
        };
        if !genuine {
            let whose = claimed.map_or_else(|| "the person's".to_owned(), |c| format!("{c}'s"));
            let runs = match &serving {
                Whereabouts::Pane { team, member, .. } => {
                    format!("in {member}'s pane of team {team}")
                }
                Whereabouts::Elsewhere { team, member } => {
                    format!("in {member}'s pane of team {team} of another home")
                }
                Whereabouts::Outside | Whereabouts::Unknown(_) => "outside every pane".to_owned(),
            };
            return Err(Error::runtime(format!(
                "the peer at {} is not {whose}: it runs {runs}; nothing was sent",
                path.display()
            ))
            .with_hint("its registry entry says otherwise; `swarm peers` lists live peers"));
        }
    }
    if let Whereabouts::Pane { team, member, .. } = &serving {
        seal::seal_peer_request(&Team::open(home, team)?, reach, member, request)?;
    }
    connection.deliver(request)
}

/// Delivers `text` to the Claude Code session whose socket is at `path`, in the frame Claude
/// Code's own SendMessage writes (docs/ARCHITECTURE.md, "Peers"): wrapped in a
/// `<cross-session-message>` from `from_name`, answerable at `reply_to` (the sender's own swarm
/// socket, which takes Claude Code's frames), with the socket's key first when the session
/// published one. Returns the message's id once delivered as Claude Code counts delivery: the
/// session closed the connection after ours was half-closed.
pub fn to_claude(
    path: &Path,
    from_name: &str,
    reply_to: Option<&Path>,
    text: &str,
) -> Result<String> {
    let connection = peer::connect(path)?;
    let own_uid = nix::unistd::getuid().as_raw();
    match connection.server_uid() {
        Some(uid) if uid == own_uid => {}
        Some(uid) => {
            return Err(Error::runtime(format!(
                "the socket at {} is served by uid {uid}, not yours; nothing was sent",
                path.display()
            )));
        }
        None => {
            return Err(Error::runtime(format!(
                "cannot tell who serves {}; nothing was sent",
                path.display()
            )));
        }
    }
    let mut lines = Vec::new();
    if let Some((session, token)) = peer::key_of(path) {
        tracing::info!(
            "sending to {} with its key, as Claude Code's own sends do (session {session})",
            path.display()
        );
        lines.push(peer::auth_line(&token));
    }
    let msg_id = crate::base::ids::fresh().to_string();
    let from = reply_to.map(|socket| format!("uds:{}", socket.display()));
    lines.push(peer::user_frame(from.as_deref(), from_name, text, &msg_id));
    connection.deliver_frames(&lines)?;
    Ok(msg_id)
}

/// Whether registry entry `entry` checks out: the socket it names is its own process's
/// (`<runtime>/<pid>.sock`, where every listener and supervisor binds), and that process runs
/// where the entry says: in the pane of the member it names, or outside every pane for the
/// person's. An entry is a file any process of the user can write; one that does not check out is
/// passed over, so it cannot make a send fail.
pub fn checks_out(home: &Home, entry: &PeerEntry) -> bool {
    let own_socket = u32::try_from(entry.pid).is_ok_and(|pid| {
        peer::runtime_dir().is_ok_and(|runtime| runtime.socket(pid) == entry.socket)
    });
    own_socket
        && match (
            &entry.team,
            &entry.agent,
            identity::whereabouts_of_pid(home, entry.pid),
        ) {
            (None, None, Whereabouts::Outside) => true,
            (
                Some(team),
                Some(agent),
                Whereabouts::Pane {
                    team: at, member, ..
                },
            ) => *team == at && *agent == member,
            _ => false,
        }
}

/// A message written: its id, whom it is from, and every inbox it was written to.
#[derive(Debug, Clone)]
pub struct Sent {
    pub id: String,
    pub from: String,
    pub to: Vec<String>,
}

/// A message to send.
pub struct Outgoing<'a> {
    pub text: &'a str,
    /// The protocol message the text is ([`classify`]); `None` for plain text.
    pub structured: Option<Structured>,
    /// `None`: one derived from plain text.
    pub summary: Option<&'a str>,
}

/// Sends `outgoing` from `caller` to `recipient`, a member or every other member, each copy
/// signed as `reach` has it signed where it must be.
pub fn send(
    team: &Team,
    reach: &dyn Reach,
    config: &TeamConfig,
    caller: &Caller,
    recipient: Recipient<'_>,
    outgoing: Outgoing<'_>,
) -> Result<Sent> {
    let Outgoing {
        text,
        structured,
        summary,
    } = outgoing;
    // The processes, looked at only when config.json records an end: that is a claim any member
    // can write, believed only when no process of the run is seen running.
    let processes = LazyCell::new(Snapshot::take);
    let has_ended = |member: &Member| liveness::has_ended(team, member, &processes);
    if let Recipient::Member(to) = recipient {
        policy::require_inbox(config, to)?;
        // Nobody will read it, whoever sends it: said before anything else is checked.
        seal::refuse_any_if_ended(team, config, to)?;
    }
    let me = match &structured {
        Some(message) => rules::check(team, config, caller, recipient, message)?,
        None => policy::allow(config, caller, Action::Send)?,
    };
    let targets: Vec<String> = match recipient {
        // `user`, the person at the keyboard, has an inbox in every team, on the roster or not.
        Recipient::Member(to) => vec![policy::require_inbox(config, to)?.to_owned()],
        // Those that have ended are left out: nobody would read their copies.
        Recipient::Broadcast => config
            .members
            .iter()
            .filter(|m| m.name != me.as_str() && !has_ended(m))
            .map(|m| m.name.clone())
            .collect(),
        Recipient::Peer => {
            return Err(Error::usage(
                "a uds: peer is reached by `swarm send`, not in a team",
            ));
        }
    };
    if targets.is_empty() {
        let gone: Vec<&str> = config
            .members
            .iter()
            .filter(|m| m.name != me.as_str() && has_ended(m))
            .map(|m| m.name.as_str())
            .collect();
        return Err(Error::usage(if gone.is_empty() {
            format!("team {} has no other member to broadcast to", config.name)
        } else {
            format!(
                "team {} has no other member to broadcast to that has not ended (ended: {})",
                config.name,
                gone.join(", ")
            )
        }));
    }

    // What is no inbox where a member's belongs (a FIFO, a folder) keeps that member out of a
    // broadcast, which reaches everyone else ("Messages").
    let targets = if matches!(recipient, Recipient::Broadcast) {
        reachable(team, targets)
    } else {
        targets
    };
    let to = targets.first().cloned().unwrap_or_default();
    let outgoing = Outgoing {
        text,
        structured,
        summary,
    };
    permission::answering(team, caller, outgoing.structured.as_ref(), &to, || {
        write(
            team,
            reach,
            config,
            recipient,
            me.as_str(),
            &targets,
            &outgoing,
        )
    })
}

/// Signs `outgoing` for every one of `targets` and writes it to each, or to none.
fn write(
    team: &Team,
    reach: &dyn Reach,
    config: &TeamConfig,
    recipient: Recipient<'_>,
    me: &str,
    targets: &[String],
    outgoing: &Outgoing<'_>,
) -> Result<Sent> {
    let Outgoing {
        text,
        structured,
        summary,
    } = outgoing;
    let summary = match (summary, structured) {
        (Some(summary), _) => Some((*summary).to_owned()),
        (None, None) => Some(derive_summary(text)),
        (None, Some(_)) => None,
    };
    let color = config.member(me).and_then(|m| m.color.clone());
    let mut message = InboxMessage::new(me, text, summary.as_deref(), color.as_deref());
    // Its copies share its msg_id and say they are one broadcast: a reader of several inboxes
    // (watch --all, up --wait) shows it once, to `*`.
    if matches!(recipient, Recipient::Broadcast) {
        message.mark_broadcast();
    }
    // Every copy is signed before any is written: one that cannot be stops them all.
    let mut sealed = Vec::with_capacity(targets.len());
    for target in targets {
        let mut copy = message.clone();
        seal::seal(team, reach, config, target, &mut copy)?;
        sealed.push(copy);
    }
    for (n, (target, copy)) in targets.iter().zip(&sealed).enumerate() {
        if let Err(err) = team.mailbox(target).append(std::slice::from_ref(copy)) {
            return Err(withdraw(team, &message, &targets[..n], err));
        }
    }
    Ok(Sent {
        id: message.id().into_owned(),
        from: me.to_string(),
        to: targets.to_vec(),
    })
}

/// The broadcast's `targets` whose inboxes swarm can write, saying once of each other one why
/// it is left out.
fn reachable(team: &Team, targets: Vec<String>) -> Vec<String> {
    targets
        .into_iter()
        .filter(|target| {
            let mailbox = team.mailbox(target);
            let Some(kind) = mailbox.irregular() else {
                return true;
            };
            tracing::warn!(
                "the broadcast leaves {target} out: {} is {kind}, not an inbox; swarm leaves it alone",
                mailbox.inbox_path().display()
            );
            false
        })
        .collect()
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

/// Protocol messages are checked; JSON that claims a protocol type without its fields is refused.
pub fn classify(text: &str) -> Result<Option<Structured>> {
    match Structured::classify(text) {
        Classified::Plain => Ok(None),
        Classified::Structured(message) => Ok(Some(*message)),
        Classified::Malformed { kind, reason } => Err(Error::usage(format!(
            "the text claims to be a {kind} message but is not a valid one: {reason}"
        ))),
    }
}
