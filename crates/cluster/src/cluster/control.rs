//! What a command on one host asks of another host's node, and how the node answers
//! (docs/ARCHITECTURE.md, "Roster, control and status across hosts"): a NATS request on
//! `swarm.node.<host>.<verb>` carrying JSON, answered with `{"ok": ...}` or `{"refused": ...}`.
//! The caller's permission is checked on the caller's host, by the one policy table; the node
//! acts as the lead or the person who asked would.

use std::collections::BTreeMap;
use std::time::Duration;

use async_nats::RequestErrorKind;
use async_nats::jetstream;
use futures_util::StreamExt;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::cluster::connection::{self, Connection};
use crate::cluster::roster;
use crate::cluster::settings::{Settings, Sources};
use crate::cluster::stream;
use crate::cluster::subjects;
use crate::error::{Error, ErrorKind, Result};
use crate::format::config::{Member, TeamConfig};
use crate::launch::prepare::PanePlan;
use crate::member::logfile::Position;
use crate::store::node;
use crate::store::paths::Home;
use crate::store::team::Team;

/// Starts a team's members on the node's host.
pub(crate) const START: &str = "start";
/// Resumes a team's interrupted members on the node's host (`cluster/resume.rs`).
pub(crate) const RESUME: &str = "resume";
/// Stops some of a team's members there.
pub(crate) const STOP: &str = "stop";
/// Reads the end of a member's log there.
pub(crate) const LOG: &str = "log";
/// Takes down every member of a team there.
pub(crate) const DOWN: &str = "down";
/// Signs a lead-side message for a member keyed there (`cluster/sign.rs`).
pub(crate) const SIGN: &str = "sign";

/// How long `up` (and a resume) waits for a node to start its members and answer.
pub(crate) const START_WAIT: Duration = Duration::from_secs(60);

/// How long a read of a log's end may take, and a follow's request too.
pub(crate) const LOG_WAIT: Duration = Duration::from_secs(15);

/// How long a node holds a follow's request while the log does not grow: well under
/// [`LOG_WAIT`], so a quiet log is never taken for a node that does not answer.
pub(crate) const FOLLOW_HOLD: Duration = Duration::from_secs(5);

/// The most of a log's end a node sends back: well under the server's default 1 MiB payload.
pub(crate) const LOG_TAIL_MAX: usize = 192 * 1024;

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct StartRequest {
    /// The team as `up` made it, every member's record with its host.
    pub(crate) config: TeamConfig,
    /// The plans of the members on the node's host.
    pub(crate) panes: Vec<PanePlan>,
    pub(crate) layout: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct StartReply {
    /// The records of the members started, as the node's config.json has them now.
    pub(crate) members: Vec<Member>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct ResumeRequest {
    pub(crate) team: String,
    /// The plans of the interrupted members on the node's host, made on the lead's host with
    /// their new keys; the node makes each one's command there.
    pub(crate) panes: Vec<PanePlan>,
    pub(crate) layout: Option<String>,
    /// When the lead's host stops waiting for the answer (ms since the epoch, its clock): a
    /// request read later (a node paused, a server slow to pass it on) was given up there, and
    /// is refused rather than carried out behind the lead's back.
    #[serde(default)]
    pub(crate) answer_by_ms: Option<u64>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct ResumeReply {
    /// The records of the members resumed, as the node's config.json has them now.
    pub(crate) members: Vec<Member>,
    /// What the node said of them: a member that starts a new conversation there.
    pub(crate) notes: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct StopRequest {
    pub(crate) team: String,
    pub(crate) members: Vec<String>,
    pub(crate) reason: String,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct StopReply {
    /// Each member stopped, with its final state.
    pub(crate) stopped: BTreeMap<String, String>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct LogRequest {
    pub(crate) team: String,
    pub(crate) member: String,
    pub(crate) lines: usize,
    /// Following: what comes after this place, once there is some (or the member has ended, or
    /// [`FOLLOW_HOLD`] passed); without it, the last `lines` lines at once.
    #[serde(default)]
    pub(crate) after: Option<Position>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct LogReply {
    /// The log's last bytes, as `member/logfile.rs` reads them; `None` when nothing was captured.
    /// Following, the bytes after the place asked for, at most [`LOG_TAIL_MAX`].
    pub(crate) tail: Option<Vec<u8>>,
    /// Where the bytes sent end: the next follow request asks for what comes after it.
    #[serde(default)]
    pub(crate) position: Option<Position>,
    /// The member has ended and `tail` ends its log: the follow is over.
    #[serde(default)]
    pub(crate) ended: bool,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DownRequest {
    pub(crate) team: String,
    pub(crate) timeout_ms: u64,
    pub(crate) force: bool,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct DownReply {
    /// What became of each member there, one line each, as `down` prints them.
    pub(crate) lines: Vec<String>,
    /// The records of the members there once down, as that node's config.json has them.
    pub(crate) members: Vec<Member>,
}

/// A node's answer.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Answer<T> {
    Ok(T),
    Refused {
        error: String,
        hint: Option<String>,
        exit_code: u8,
    },
}

impl<T> Answer<T> {
    pub(crate) fn of(result: Result<T>) -> Self {
        match result {
            Ok(value) => Self::Ok(value),
            Err(err) => Self::Refused {
                error: err.message().to_owned(),
                hint: err.hint().map(str::to_owned),
                exit_code: err.kind().exit_code(),
            },
        }
    }

    fn into_result(self, host: &str) -> Result<T> {
        match self {
            Self::Ok(value) => Ok(value),
            Self::Refused {
                error,
                hint,
                exit_code,
            } => {
                let kind = ErrorKind::ALL
                    .into_iter()
                    .find(|kind| kind.exit_code() == exit_code)
                    .unwrap_or(ErrorKind::Runtime);
                let err = Error::new(kind, format!("host {host}: {error}"));
                Err(match hint {
                    Some(hint) => err.with_hint(hint),
                    None => err,
                })
            }
        }
    }
}

/// Writes the records another host's node answered with into this host's config.json at once,
/// so a command that follows (`status`, `up` again) sees them before the roster carries them.
pub(crate) fn take_records(team: &Team, members: Vec<Member>) -> Result<()> {
    team.update(|config| {
        for member in members {
            if let Some(slot) = config.member_mut(&member.name) {
                *slot = member;
            }
        }
        Ok(())
    })
}

/// The server a command on this host talks to: the environment's, else the one this host's node
/// uses, with the login the environment gives.
pub(crate) fn settings_here(home: &Home) -> Result<Settings> {
    let node_url = node::read(home)?.map(|record| record.url);
    Sources::from_env()
        .or(Sources {
            nats: node_url,
            ..Sources::default()
        })
        .settle()?
        .ok_or_else(|| {
            Error::usage("this team spans hosts, but no NATS server is known here")
                .with_hint("set SWARM_NATS_URL, or start `swarm node --name HOST --nats URL` here")
        })
}

/// Asks `host`'s node to `verb` through the server this host knows ([`settings_here`]), for a
/// command about a member there.
pub(crate) fn ask<Q: Serialize, A: DeserializeOwned>(
    home: &Home,
    host: &str,
    verb: &str,
    request: &Q,
    timeout: Duration,
) -> Result<A> {
    let link = Link::open(&settings_here(home)?, &format!("swarm {verb}"))?;
    link.ask(host, verb, request, timeout)
}

/// How long a node may take to stop members: each supervisor's bound to record its ending, and
/// the way there and back.
pub(crate) fn stop_wait() -> Duration {
    crate::member::ending_bound() + Duration::from_secs(30)
}

/// A command's connection to the server, for the few requests it makes.
pub(crate) struct Link {
    runtime: tokio::runtime::Runtime,
    connection: Connection,
}

impl Link {
    /// Connects; a server that cannot be reached is one line naming its URL.
    pub(crate) fn open(settings: &Settings, name: &str) -> Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|err| Error::os("start a runtime for NATS", err))?;
        let connection = runtime.block_on(connection::connect(settings, name))?;
        Ok(Self {
            runtime,
            connection,
        })
    }

    /// Puts the team as `up` made it in its roster bucket.
    pub(crate) fn publish_roster(&self, config: &TeamConfig) -> Result<()> {
        let url = &self.connection.url;
        self.runtime.block_on(async {
            let js = jetstream::new(self.connection.client.clone());
            let store = roster::bucket(&js, url, &config.name).await?;
            roster::put_config(&store, url, config).await
        })
    }

    /// Makes the team's stream, or checks the one there: one someone configured differently is
    /// refused with one line before anything starts.
    pub(crate) fn ensure_stream(&self, team: &str) -> Result<()> {
        self.runtime
            .block_on(async {
                let js = jetstream::new(self.connection.client.clone());
                stream::ensure(&js, &self.connection.url, team).await
            })
            .map(drop)
    }

    /// Runs `work` with the link's client, on its runtime.
    pub(crate) fn run<T, F>(&self, work: impl FnOnce(async_nats::Client) -> F) -> Result<T>
    where
        F: Future<Output = Result<T>>,
    {
        self.runtime.block_on(work(self.connection.client.clone()))
    }

    /// Asks `host`'s node to `verb`, waiting at most `timeout` for its answer.
    pub(crate) fn ask<Q: Serialize, A: DeserializeOwned>(
        &self,
        host: &str,
        verb: &str,
        request: &Q,
        timeout: Duration,
    ) -> Result<A> {
        self.request(host, verb, request, timeout)?
    }

    /// The hosts whose nodes have beaten on this server lately (the bucket `swarm_nodes` keeps a
    /// host for minutes after its last beat), in name order; none when that cannot be read.
    async fn known_hosts(&self) -> Vec<String> {
        let js = jetstream::new(self.connection.client.clone());
        let Ok(store) = js.get_key_value(subjects::NODES_BUCKET).await else {
            return Vec::new();
        };
        let Ok(keys) = store.keys().await else {
            return Vec::new();
        };
        let mut hosts: Vec<String> = keys.filter_map(|key| async { key.ok() }).collect().await;
        hosts.sort();
        hosts
    }

    /// [`Link::ask`], telling apart no answer (the outer error: the node or the server cannot be
    /// reached now) from the node's answer, a refusal or one this swarm cannot read (the inner one).
    pub(crate) fn request<Q: Serialize, A: DeserializeOwned>(
        &self,
        host: &str,
        verb: &str,
        request: &Q,
        timeout: Duration,
    ) -> Result<Result<A>> {
        let payload = serde_json::to_vec(request)
            .map_err(|err| Error::runtime(format!("cannot encode a {verb} request: {err}")))?;
        let subject = subjects::control(host, verb);
        let url = &self.connection.url;
        let answer = self.runtime.block_on(async {
            self.connection
                .client
                .send_request(
                    subject,
                    async_nats::Request::new()
                        .payload(payload.into())
                        .timeout(Some(timeout)),
                )
                .await
        });
        let message = answer.map_err(|err| match err.kind() {
            RequestErrorKind::NoResponders => {
                let known = self.runtime.block_on(self.known_hosts());
                Error::runtime(format!(
                    "no swarm node answers for host {host} on the NATS server at {url}{}",
                    if known.is_empty() {
                        String::new()
                    } else {
                        format!(" (hosts with a node there: {})", known.join(", "))
                    }
                ))
                .with_hint(format!("start it there with `swarm node --name {host}`"))
            }
            RequestErrorKind::TimedOut => Error::runtime(format!(
                "the swarm node of host {host} did not answer a {verb} request within {}s",
                timeout.as_secs()
            )),
            _ => Error::runtime(format!(
                "cannot ask host {host} to {verb} through the NATS server at {url}: {err}"
            )),
        })?;
        let answer: Answer<A> = match serde_json::from_slice(&message.payload) {
            Ok(answer) => answer,
            Err(err) => {
                return Ok(Err(Error::runtime(format!(
                    "the swarm node of host {host} answered a {verb} request with something else: {err}"
                ))
                .with_hint("run the same swarm version on every host")));
            }
        };
        Ok(answer.into_result(host))
    }
}
