//! The signing agent of a team (docs/ARCHITECTURE.md, "Signed lead messages"): one process per
//! team that holds each keyed teammate's private key in its memory and nowhere else, and signs
//! the lead's side's messages with it. `mod.rs` is its clients' side.
//!
//! - It is made non-dumpable (`PR_SET_DUMPABLE` 0): processes of the same uid can neither ptrace
//!   it nor read its memory through `/proc/<pid>/mem`; only root can. It runs in a session of its
//!   own, with a clean environment.
//! - It serves a 0600 socket in the private runtime directory, and answers only connections whose
//!   `SO_PEERCRED` uid is ours and whose process, pinned as the connection is accepted, runs
//!   outside every pane, or in the pane of the team's lead ("Identity"), the lead it was started
//!   for. A caller that has exited by the time it asks, or that cannot be told, is refused.
//! - It signs only messages from the lead, `user` or `system`, for a teammate whose public key
//!   the caller names; it is no general signing oracle.
//! - It forgets a key once config.json no longer records it (the member was launched again, or
//!   removed), and exits when none of the members it holds keys for has been live for a minute,
//!   at once when its socket is removed, and once its newest key is a minute old when its team
//!   is gone. Its keys go with it: see "Signed lead messages" for what the lead's side does then.

use std::collections::HashMap;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::{Answer, Ask, MAX_LINE, PATIENCE, alert, lock_path, rules, socket_path};
use crate::base::clock;
use crate::base::process::Pinned;
use crate::error::{Error, ErrorKind, Result};
use crate::format::message::InboxMessage;
use crate::format::permission_rule::Rules;
use crate::format::signature::{KeyPair, VerifyKey, speaks_for_lead};
use crate::member::identity;
use crate::member::liveness::Observed;
use crate::member::reach::Reach;
use crate::policy::{self, Action, Role, Whereabouts};
use crate::store::paths::Home;
use crate::store::team::Team;

/// How long a key is kept whatever config.json says (a member still being written or placed),
/// and how long the agent lives on with no live member to sign for.
const GRACE: Duration = Duration::from_secs(60);

/// How often the agent looks at its team.
const SWEEP: Duration = Duration::from_secs(5);

struct Held {
    pair: KeyPair,
    made: Instant,
    /// The rules that answer the member's permission asks, as its launch gave them.
    rules: Rules,
    /// Where the member works: what its file rules are relative to.
    cwd: PathBuf,
}

/// Keys by member name.
type Keys = Arc<Mutex<HashMap<String, Held>>>;

impl rules::Holder for Keys {
    fn rules(&self, member: &str) -> Option<(Rules, PathBuf)> {
        let held = self.lock().unwrap_or_else(PoisonError::into_inner);
        held.get(member)
            .map(|held| (held.rules.clone(), held.cwd.clone()))
    }

    fn sign(&self, member: &str, key: &str, message: &InboxMessage) -> Option<String> {
        let held = self.lock().unwrap_or_else(PoisonError::into_inner);
        held.get(member)
            .filter(|held| held.pair.public().encode() == key)
            .map(|held| held.pair.sign(message))
    }
}

/// What the agent serves: its home, its team, and the lead it was started for.
#[derive(Clone)]
struct Served {
    home: Home,
    team: String,
    lead: String,
    /// When this agent started, in Unix ms: a key made for a launch before then is not here.
    started_ms: u64,
    /// The team's alerts, as `up` last gave them with a key.
    notify: alert::Settings,
}

/// Runs the agent of `team` until it is no longer needed (`reach` tells where its members run).
/// Returns at once when another agent already serves the team.
pub fn serve(home: &Home, reach: Box<dyn Reach>, team: &str, lead: &str) -> Result<()> {
    nix::sys::prctl::set_dumpable(false).map_err(|err| {
        Error::runtime(format!(
            "the signing agent cannot keep its memory from other processes: {err}"
        ))
    })?;
    // Callers are judged against the home it was started in, whatever its path names later.
    home.pin()?;
    // Its own session: no terminal's hang-up or Ctrl-C reaches it.
    let _ = nix::unistd::setsid();
    // The socket and lock file are born private.
    nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o077));
    let lock_path = lock_path(home, team)?;
    let lock = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(&lock_path)
        .map_err(|err| Error::io("open", &lock_path, err))?;
    if lock.try_lock().is_err() {
        // Another agent serves this team; clients talk to it.
        return Ok(());
    }
    let socket = socket_path(home, team)?;
    // Whatever is there was left by an agent that no longer holds the lock.
    let _ = fs::remove_file(&socket);
    let listener =
        UnixListener::bind(&socket).map_err(|err| Error::io("listen on", &socket, err))?;
    fs::set_permissions(&socket, fs::Permissions::from_mode(0o600))
        .map_err(|err| Error::io("restrict", &socket, err))?;
    let inode = fs::symlink_metadata(&socket)
        .map_err(|err| Error::io("inspect", &socket, err))?
        .ino();

    let served = Served {
        home: home.clone(),
        team: team.to_owned(),
        lead: lead.to_owned(),
        started_ms: clock::now_ms(),
        notify: Arc::default(),
    };
    let keys: Keys = Arc::default();
    let reach: Arc<dyn Reach> = Arc::from(reach);
    {
        let (served, keys, socket) = (served.clone(), Arc::clone(&keys), socket.clone());
        let reach = Arc::clone(&reach);
        std::thread::spawn(move || sweep(&served, reach.as_ref(), &keys, &socket, inode));
    }
    {
        let (served, keys) = (served.clone(), Arc::clone(&keys));
        let alert = alert::start(
            served.home.clone(),
            served.team.clone(),
            Arc::clone(&reach),
            Arc::clone(&served.notify),
        );
        std::thread::spawn(move || {
            let team = rules::Served {
                home: &served.home,
                team: &served.team,
                lead: &served.lead,
            };
            rules::answer_asks(&team, reach.as_ref(), &keys, &alert);
        });
    }
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        // Who asks is tied to the connection as it is accepted, never looked up by a bare pid.
        let caller = Pinned::peer(&stream);
        let (served, keys) = (served.clone(), Arc::clone(&keys));
        std::thread::spawn(move || {
            let _ = stream.set_read_timeout(Some(PATIENCE));
            let _ = stream.set_write_timeout(Some(PATIENCE));
            let answer = answer(&served, &keys, &stream, caller).unwrap_or_else(|err| Answer {
                ok: false,
                value: None,
                error: Some(err.message().to_owned()),
            });
            let mut line = serde_json::to_vec(&answer).unwrap_or_default();
            line.push(b'\n');
            let _ = (&stream).write_all(&line);
        });
    }
    drop(lock);
    Ok(())
}

/// Forgets keys config.json no longer records, and ends the agent when it is no longer needed.
fn sweep(served: &Served, reach: &dyn Reach, keys: &Keys, socket: &Path, inode: u64) {
    let mut needed_at = Instant::now();
    loop {
        std::thread::sleep(SWEEP);
        // Looked at without the keys' lock: the look runs tmux and waits for config.json's lock,
        // and requests are answered meanwhile. A key made since is younger than the grace.
        let observed =
            Team::open(&served.home, &served.team).and_then(|team| Observed::take(&team, reach));
        // Holding the keys' lock: no request is answered between a decision to leave and the exit.
        let mut held = keys.lock().unwrap_or_else(PoisonError::into_inner);
        let ours = fs::symlink_metadata(socket).is_ok_and(|meta| meta.ino() == inode);
        if !ours {
            // Removed (the runtime directory with it), or replaced: nobody can reach this agent.
            std::process::exit(0);
        }
        let observed = match observed {
            Ok(observed) => Some(observed),
            Err(err) if err.kind() == ErrorKind::NotFound => None,
            // Cannot look now (a lock held long): keep everything, look again.
            Err(_) => {
                needed_at = Instant::now();
                continue;
            }
        };
        held.retain(|member, held| {
            held.made.elapsed() < GRACE
                || observed.as_ref().is_some_and(|observed| {
                    observed
                        .config
                        .member(member)
                        .and_then(|m| m.lead_verify_key.as_deref())
                        == Some(held.pair.public().encode().as_str())
                })
        });
        let fresh = held.values().any(|held| held.made.elapsed() < GRACE);
        if observed.is_none() && !fresh {
            // The team is gone (a key younger than that may be for a team still being written).
            let _ = fs::remove_file(socket);
            std::process::exit(0);
        }
        let live = observed
            .as_ref()
            .is_some_and(|observed| observed.live().any(|name| held.contains_key(name)));
        if live || fresh {
            needed_at = Instant::now();
        } else if needed_at.elapsed() >= GRACE {
            let _ = fs::remove_file(socket);
            std::process::exit(0);
        }
    }
}

fn answer(
    served: &Served,
    keys: &Keys,
    stream: &UnixStream,
    caller: std::result::Result<Pinned, String>,
) -> Result<Answer> {
    let cred = nix::sys::socket::getsockopt(stream, nix::sys::socket::sockopt::PeerCredentials)
        .map_err(|err| Error::runtime(format!("cannot tell who is asking: {err}")))?;
    if cred.uid() != nix::unistd::getuid().as_raw() {
        return Err(Error::usage("only this user's processes may ask"));
    }
    // Read before any refusal, so the caller's line is not reset away with the answer.
    let mut line = String::new();
    BufReader::new(stream)
        .take(MAX_LINE)
        .read_line(&mut line)
        .map_err(|err| Error::runtime(format!("read failed: {err}")))?;
    authorize(served, caller)?;
    let ask: Ask = serde_json::from_str(line.trim())
        .map_err(|err| Error::usage(format!("invalid request: {err}")))?;
    if ask.team() != served.team {
        return Err(Error::usage(format!(
            "this agent serves team {}, not {}",
            served.team,
            ask.team()
        )));
    }
    let value = match ask {
        Ask::Create {
            member,
            since_ms,
            rules,
            cwd,
            notify,
            ..
        } => {
            if let Some(notify) = notify {
                *served.notify.lock().unwrap_or_else(PoisonError::into_inner) = notify;
            }
            let pair = KeyPair::generate(since_ms);
            let public = pair.public().encode();
            let held = Held {
                pair,
                made: Instant::now(),
                rules,
                cwd,
            };
            keys.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(member, held);
            public
        }
        Ask::Sign {
            member,
            key,
            message,
            ..
        } => {
            let message = InboxMessage::from_value(message)
                .map_err(|_| Error::usage("the message is not an inbox message"))?;
            if !speaks_for_lead(message.from(), &served.lead) {
                return Err(Error::usage(format!(
                    "only the lead's side's messages are signed; this one is from {}",
                    message.from()
                )));
            }
            let held = keys.lock().unwrap_or_else(PoisonError::into_inner);
            let held = held
                .get(&member)
                .filter(|held| held.pair.public().encode() == key)
                .ok_or_else(|| no_key(served, &member, &key))?;
            held.pair.sign(&message)
        }
    };
    Ok(Answer {
        ok: true,
        value: Some(value),
        error: None,
    })
}

/// Why the agent holds no key for `member`, whose key is `key`, said only as far as it is known:
/// an agent that started after the member's launch may have lost the key with its predecessor;
/// one that ran before then never made it, so another host's agent did.
fn no_key(served: &Served, member: &str, key: &str) -> Error {
    let launched = VerifyKey::parse(key).map(|key| key.since_ms).ok();
    let why = match launched {
        Some(at) if at >= served.started_ms => format!(
            "this agent ran before {member} was launched and did not make its key; another \
             host's agent did"
        ),
        _ => format!(
            "this agent started after {member} was launched; its key was made by an agent that \
             has since ended, or on another host"
        ),
    };
    Error::runtime(format!(
        "the signing agent holds no key for {member} of team {}: {why}",
        served.team
    ))
}

/// Whether the process that asks, pinned when its connection was accepted, may use the team's
/// keys, by the policy's `Sign` rule: from outside every pane, or from the pane of the lead the
/// agent was started for, launched as the lead's. The lead is the one the agent was started for,
/// so a teammate that edits config.json cannot make itself the lead here. A caller that has
/// exited, or whose whereabouts cannot be told, is nobody, and refused.
fn authorize(served: &Served, caller: std::result::Result<Pinned, String>) -> Result<()> {
    let cannot_tell = |why: &str| {
        Error::usage(format!(
            "the signing agent cannot tell where this request comes from: {why}"
        ))
    };
    let caller = caller.map_err(|why| cannot_tell(&why))?;
    let whereabouts = identity::whereabouts(&served.home, &caller);
    if let Whereabouts::Unknown(why) = &whereabouts {
        return Err(cannot_tell(why));
    }
    if policy::permits(
        Role::of(&whereabouts, &served.team, &served.lead),
        Action::Sign,
    ) {
        return Ok(());
    }
    let from = match whereabouts {
        Whereabouts::Pane { team, member, .. } if member == served.lead => {
            format!("{member}'s pane of team {team}, which was not launched as the lead's")
        }
        Whereabouts::Pane { team, member, .. } => format!("{member}'s pane of team {team}"),
        Whereabouts::Elsewhere { team, member } => {
            format!("{member}'s pane of team {team} of another home")
        }
        Whereabouts::Outside | Whereabouts::Unknown(_) => "outside every pane".to_owned(),
    };
    Err(Error::usage(format!(
        "the signing agent serves only the lead's side; this request comes from {from}"
    )))
}
