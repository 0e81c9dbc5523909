//! The signing agent of a team, seen from the lead's side (docs/ARCHITECTURE.md, "Signed lead
//! messages"): where its socket is, what is said on it, starting it on demand, and making sure
//! the process that answers is the lead's side's own. The agent itself is `agent.rs`.
//!
//! One agent per team holds each keyed teammate's private key in its memory only. It answers one
//! JSON line per connection: `{"op": "create", …}` makes a teammate's key pair and answers its
//! public key; `{"op": "sign", …}` answers the `lead_sig` of a message from the lead's side.
//! Both ends judge the other by where it runs ("Identity"): only a process outside every pane, or
//! in the pane of the team's lead, may ask, and only such a process is trusted to answer.

pub mod agent;
mod alert;
mod rules;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::base::process::Pinned;
use crate::error::{Error, ErrorKind, Result};
use crate::format::message::{InboxMessage, MAX_ANSWER_BYTES};
use crate::format::notify::Notify;
use crate::format::permission_rule::Rules;
use crate::member::identity;
use crate::peer::runtime_dir;
use crate::policy::{self, Action, Role, Whereabouts};
use crate::store::paths::Home;

/// The longest line either side reads: a request to sign the largest message swarm sends (an
/// answer to a permission ask), its text escaped again inside the line, which can make a byte six.
pub(crate) const MAX_LINE: u64 = 8 * MAX_ANSWER_BYTES as u64;

/// How long either side waits for the other to say its line.
pub(crate) const PATIENCE: Duration = Duration::from_secs(30);

/// What a client asks, for one team's agent.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(crate) enum Ask {
    /// A new key pair for `member`, launched at `since_ms`, which works in `cwd` and whose
    /// permission asks `rules` answer; replaces any it had.
    Create {
        team: String,
        member: String,
        since_ms: u64,
        #[serde(default, skip_serializing_if = "Rules::is_empty")]
        rules: Rules,
        #[serde(default)]
        cwd: PathBuf,
        /// The team's alerts, given at `up`; none keeps those the agent holds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        notify: Option<Notify>,
    },
    /// The `lead_sig` of `message` for `member`, whose public key is `key`.
    Sign {
        team: String,
        member: String,
        key: String,
        message: Value,
    },
}

impl Ask {
    pub(crate) fn team(&self) -> &str {
        match self {
            Self::Create { team, .. } | Self::Sign { team, .. } => team,
        }
    }
}

/// What the agent answers: `{"ok": true, "value": …}` or `{"ok": false, "error": …}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Answer {
    pub(crate) ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
}

/// `<runtime>/signer-<home>-<team>.sock`, with the home as its device and inode (one agent per
/// home directory, however it is spelled), and the home's real path and the team hashed (a socket
/// path must fit in 108 bytes). The path is in it because an inode outlives its name: a home
/// moved elsewhere keeps its inode, and one removed frees its inode for the next directory made,
/// while the agent stays pinned to the path it was started for and refuses every other.
pub(crate) fn socket_path(home: &Home, team: &str) -> Result<PathBuf> {
    Ok(runtime_dir()?.signer_socket(&agent_id(home, team)?))
}

/// The agent's lock file: held for its whole life, so two never serve one team.
pub(crate) fn lock_path(home: &Home, team: &str) -> Result<PathBuf> {
    Ok(runtime_dir()?.signer_lock(&agent_id(home, team)?))
}

fn agent_id(home: &Home, team: &str) -> Result<String> {
    let meta =
        std::fs::metadata(home.root()).map_err(|err| Error::io("inspect", home.root(), err))?;
    let real =
        std::fs::canonicalize(home.root()).map_err(|err| Error::io("inspect", home.root(), err))?;
    // FNV-1a: a stable name, not a secret. A NUL cannot be in a path, so the two cannot run into
    // one another.
    let named = real
        .as_os_str()
        .as_bytes()
        .iter()
        .chain(b"\0")
        .chain(team.as_bytes());
    let hash = named.fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    });
    Ok(format!("{:x}-{:x}-{hash:016x}", meta.dev(), meta.ino()))
}

/// A new key pair, as `ask` (an [`Ask::Create`]) describes it, made by the agent of the team of
/// lead `lead`, started if it is not running; the agent answers the member's permission asks that
/// its rules match (their paths relative to its `cwd`). Its public key, `<ms>.<base64url SPKI>`.
pub(crate) fn create_key(home: &Home, lead: &str, ask: &Ask) -> Result<String> {
    let (Ask::Create { team, member, .. } | Ask::Sign { team, member, .. }) = ask;
    let team = team.as_str();
    let made = match call(home, team, lead, ask) {
        Err(err) if err.kind() == ErrorKind::NotFound => {
            start(home, team, lead)?;
            call(home, team, lead, ask)
        }
        other => other,
    };
    made.map_err(|err| {
        Error::runtime(format!(
            "cannot make a key pair for {member}: {}",
            err.message()
        ))
        .with_hint(
            "the team's signing agent (`swarm key-agent`) holds the teammates' private keys; \
             nothing is launched without one",
        )
    })
}

/// The `lead_sig` of `message` for `member`, whose recorded public key is `key`, from this host's
/// agent; fails saying why, as a cause ([`sign`] says what it means). The agent is not started
/// for this: a new one would hold no key.
pub fn sign_here(
    home: &Home,
    team: &str,
    lead: &str,
    member: &str,
    key: &str,
    message: &InboxMessage,
) -> Result<String> {
    let ask = Ask::Sign {
        team: team.to_owned(),
        member: member.to_owned(),
        key: key.to_owned(),
        message: serde_json::to_value(message).map_err(|err| Error::runtime(err.to_string()))?,
    };
    call(home, team, lead, &ask)
}

/// [`sign_here`], failing with what it means for the message: nothing was sent.
pub fn sign(
    home: &Home,
    team: &str,
    lead: &str,
    member: &str,
    key: &str,
    message: &InboxMessage,
) -> Result<String> {
    sign_here(home, team, lead, member, key, message).map_err(|err| {
        Error::runtime(format!(
            "cannot sign the lead's message to {member}: {}; nothing was sent",
            err.message()
        ))
        .with_hint(format!(
            "{member} accepts the lead's messages only when signed with the key it was launched \
             with, which only the team's signing agent held; launch the team again to give every \
             teammate a new key: `swarm down`, then `swarm up TEAMFILE`"
        ))
    })
}

/// One request, one answer, from an agent that runs where the lead's side runs. Not found: no
/// agent is listening.
fn call(home: &Home, team: &str, lead: &str, ask: &Ask) -> Result<String> {
    let path = socket_path(home, team)?;
    let gone = || Error::not_found("the team's signing agent is not running");
    let mut stream = UnixStream::connect(&path).map_err(|_| gone())?;
    trust(home, team, lead, &stream, &path)?;
    stream
        .set_read_timeout(Some(PATIENCE))
        .and_then(|()| stream.set_write_timeout(Some(PATIENCE)))
        .map_err(|err| Error::io("configure", &path, err))?;
    let mut line = serde_json::to_vec(ask).map_err(|err| Error::runtime(err.to_string()))?;
    line.push(b'\n');
    stream.write_all(&line).map_err(|_| gone())?;
    let mut reply = String::new();
    BufReader::new(&stream)
        .take(MAX_LINE)
        .read_line(&mut reply)
        .map_err(|_| gone())?;
    if reply.trim().is_empty() {
        return Err(gone());
    }
    let answer: Answer = serde_json::from_str(reply.trim())
        .map_err(|_| Error::runtime("the signing agent answered garbage"))?;
    match (answer.ok, answer.value) {
        (true, Some(value)) => Ok(value),
        _ => Err(Error::runtime(
            answer.error.unwrap_or_else(|| "no reason given".to_owned()),
        )),
    }
}

/// Refuses an agent that does not run where the lead's side runs: a teammate that killed the real
/// one and listens in its place would hand out keys it knows, and read what the lead sends. The
/// process that serves is the one that listens, pinned from this connection; one that has exited
/// (its socket handed to another process), or that cannot be told, is refused too.
fn trust(home: &Home, team: &str, lead: &str, stream: &UnixStream, path: &Path) -> Result<()> {
    let cred = nix::sys::socket::getsockopt(stream, nix::sys::socket::sockopt::PeerCredentials)
        .map_err(|err| {
            Error::runtime(format!("cannot tell who serves {}: {err}", path.display()))
        })?;
    let refuse = |who: String| {
        Error::runtime(format!(
            "refusing the signing agent at {}: it is served by {who}",
            path.display()
        ))
        .with_hint("only a process outside every pane, or in the lead's, may hold the lead's keys; end that process")
    };
    if cred.uid() != nix::unistd::getuid().as_raw() {
        return Err(refuse(format!("uid {}", cred.uid())));
    }
    let cannot_tell = |why: &str| {
        Error::runtime(format!(
            "refusing the signing agent at {}: cannot tell who serves it: {why}",
            path.display()
        ))
        .with_hint(
            "the team's signing agent runs outside every pane; launch the team again if it is gone",
        )
    };
    let server = Pinned::peer(stream).map_err(|why| cannot_tell(&why))?;
    // The same rule as for the agent's callers: the policy's `Sign`.
    let whereabouts = identity::whereabouts(home, &server);
    if let Whereabouts::Unknown(why) = &whereabouts {
        return Err(cannot_tell(why));
    }
    if policy::permits(Role::of(&whereabouts, team, lead), Action::Sign) {
        return Ok(());
    }
    Err(refuse(match whereabouts {
        Whereabouts::Pane {
            team: at, member, ..
        } => {
            format!("pid {} in {member}'s pane of team {at}", server.pid)
        }
        Whereabouts::Elsewhere { team: at, member } => {
            format!(
                "pid {} in {member}'s pane of team {at} of another home",
                server.pid
            )
        }
        Whereabouts::Outside | Whereabouts::Unknown(_) => format!("pid {}", server.pid),
    }))
}

/// Starts the team's agent (`swarm key-agent TEAM LEAD`, detached, with a clean environment) and
/// waits until it answers. An agent that exits at once found another serving the team; if that
/// one was just leaving, a new one is started.
fn start(home: &Home, team: &str, lead: &str) -> Result<()> {
    let exe = std::env::current_exe().map_err(|err| Error::os("find the swarm executable", err))?;
    let path = socket_path(home, team)?;
    let deadline = Instant::now() + PATIENCE;
    loop {
        let mut command = Command::new(&exe);
        command
            .arg("--home")
            .arg(home.root())
            .args(["key-agent", team, lead])
            .env_clear()
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // Nothing else of the caller's environment: no LD_PRELOAD, no test hooks.
        // The desktop's own, for `notify-send` ("Alerts").
        for key in [
            "PATH",
            "HOME",
            "XDG_RUNTIME_DIR",
            "LANG",
            "RUST_LOG",
            "DISPLAY",
            "WAYLAND_DISPLAY",
            "DBUS_SESSION_BUS_ADDRESS",
        ] {
            if let Some(value) = std::env::var_os(key) {
                command.env(key, value);
            }
        }
        let mut child = command
            .spawn()
            .map_err(|err| Error::os("start the signing agent", err))?;
        loop {
            if UnixStream::connect(&path).is_ok() {
                // Reaped later, or by whoever adopts it: the agent outlives this process.
                drop(child);
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(Error::runtime(format!(
                    "the signing agent did not start within {}s",
                    PATIENCE.as_secs()
                )));
            }
            match child.try_wait() {
                Ok(Some(status)) if !status.success() => {
                    return Err(Error::runtime(format!(
                        "the signing agent could not start ({status})"
                    )));
                }
                // Another agent held the team: wait for its socket, or start again if it left.
                Ok(Some(_)) => {
                    std::thread::sleep(Duration::from_millis(50));
                    if UnixStream::connect(&path).is_ok() {
                        return Ok(());
                    }
                    break;
                }
                _ => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A home moved elsewhere keeps its inode, as a removed home's inode goes to the next
    /// directory made: the agent pinned to the old path must not be taken for the new one's.
    #[test]
    fn a_home_moved_elsewhere_has_an_agent_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let first = dir.path().join("first");
        std::fs::create_dir(&first).unwrap();
        let before = agent_id(&Home::new(first.clone()), "t").unwrap();
        let second = dir.path().join("second");
        std::fs::rename(&first, &second).unwrap();
        let after = agent_id(&Home::new(second), "t").unwrap();
        assert_ne!(before, after);
        // However it is spelled, one home has one agent.
        let spelled = dir.path().join(".").join("second");
        assert_eq!(agent_id(&Home::new(spelled), "t").unwrap(), after);
    }
}
