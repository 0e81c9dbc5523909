//! Members' logs wherever they run (docs/ARCHITECTURE.md, "Roster, control and status across
//! hosts"): a member on this host's is read here (`member/log_follow.rs`); one on another host's
//! is read, and followed, through that host's node, by `log` requests.

use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

use crate::cluster::control::{self, Link, LogReply, LogRequest};
use crate::cluster::fleet::{Fleet, Sight};
use crate::error::{Error, Result};
use crate::format::config::{Member, TeamConfig};
pub(crate) use crate::member::log_follow::{LocalLog, LocalLogs, LogEvent};
use crate::store::paths::Home;
use crate::store::team::Team;

/// How long a follower waits before asking again a node that did not answer.
const FOLLOW_RETRY: Duration = Duration::from_secs(1);

impl Fleet {
    /// Member `member`'s log of `team` wherever it runs, its last `lines` lines read; with
    /// `follow`, ready to follow from their end.
    pub fn log(
        &self,
        team: &Team,
        member: &Member,
        lines: usize,
        follow: bool,
    ) -> Result<MemberLog> {
        let sight = Sight::look(self.home());
        let inner = match member.host.as_deref().filter(|h| sight.is_remote(Some(h))) {
            Some(host) => {
                let mut log = RemoteLog::open(self.home(), team, member, host, lines)?;
                let tail = log.tail()?;
                Inner::Away { log, tail }
            }
            None => Inner::Here(LocalLog::open(
                team,
                Box::new(self.clone()),
                &member.name,
                lines,
                follow,
            )?),
        };
        Ok(MemberLog {
            name: member.name.clone(),
            inner,
        })
    }

    /// Every member's log of `team` (its roster `config`) wherever each runs, their last `lines`
    /// lines read in roster order; with `follow`, ready to follow from their ends. A log on a host
    /// that cannot be reached is said on stderr and left out.
    pub fn logs(
        &self,
        team: &Team,
        config: &TeamConfig,
        lines: usize,
        follow: bool,
    ) -> Result<TeamLogs> {
        let sight = Sight::look(self.home());
        let mut here = LocalLogs::arm(team, follow)?;
        let mut away = Vec::new();
        let mut tails = Vec::new();
        for member in &config.members {
            let Some(host) = member.host.as_deref().filter(|h| sight.is_remote(Some(h))) else {
                tails.push((member.clone(), here.add(&member.name, lines)?));
                continue;
            };
            let opened = RemoteLog::open(self.home(), team, member, host, lines)
                .and_then(|mut log| Ok((log.tail()?, log)));
            match opened {
                Ok((tail, log)) => {
                    tails.push((member.clone(), tail));
                    away.push(log);
                }
                Err(err) => tracing::warn!("{}: {}", member.name, err.message()),
            }
        }
        Ok(TeamLogs {
            tails,
            here,
            away,
            follow,
        })
    }
}

/// One member's log wherever it runs, as `swarm log NAME` reads it.
pub struct MemberLog {
    name: String,
    inner: Inner,
}

enum Inner {
    Here(LocalLog),
    Away {
        log: RemoteLog,
        tail: Option<Vec<u8>>,
    },
}

impl MemberLog {
    /// The bytes of its last lines (`None` if nothing was ever logged), once.
    pub fn tail(&mut self) -> Option<Vec<u8>> {
        match &mut self.inner {
            Inner::Here(log) => log.tail(),
            Inner::Away { tail, .. } => tail.take(),
        }
    }

    /// That nothing was ever logged, and where it was looked for.
    pub fn nothing_yet(&self) -> Error {
        Error::not_found(match &self.inner {
            Inner::Here(log) => format!(
                "no output captured for {} yet ({})",
                self.name,
                log.path().display()
            ),
            Inner::Away { log, .. } => format!(
                "no output captured for {} on host {} yet",
                self.name, log.host
            ),
        })
    }

    /// Calls `on` with what the log gets after its last lines, and whether the member has ended
    /// with it, until it has.
    pub fn follow(&mut self, on: impl FnMut(&[u8], bool) -> Result<()>) -> Result<()> {
        match &mut self.inner {
            Inner::Here(log) => log.follow(on),
            Inner::Away { log, .. } => log.follow(on),
        }
    }
}

/// Every member's log wherever each runs, as `swarm log --all` reads them.
pub struct TeamLogs {
    /// Each member's last lines, in roster order.
    tails: Vec<(Member, Option<Vec<u8>>)>,
    here: LocalLogs,
    away: Vec<RemoteLog>,
    follow: bool,
}

impl TeamLogs {
    /// Each member's last lines, in roster order, once.
    pub fn tails(&mut self) -> Vec<(Member, Option<Vec<u8>>)> {
        std::mem::take(&mut self.tails)
    }

    /// Follows every log from the end of its last lines, each log elsewhere and this host's all
    /// together on threads of their own, until the receiver is dropped; what they get comes
    /// through it as it comes. A log that cannot be followed any more ends it all with
    /// [`LogEvent::Failed`]. Without following, nothing comes.
    pub fn follow(self) -> Receiver<LogEvent> {
        let (events, received) = mpsc::channel();
        if !self.follow {
            return received;
        }
        for mut log in self.away {
            let events = events.clone();
            std::thread::spawn(move || {
                let name = log.request.member.clone();
                let followed = log.follow(|bytes, ended| {
                    send(
                        &events,
                        LogEvent::Bytes {
                            name: name.clone(),
                            bytes: bytes.to_vec(),
                            ended,
                        },
                    )
                });
                if let Err(err) = followed {
                    let _ = events.send(LogEvent::Failed(err));
                }
            });
        }
        let here = self.here;
        std::thread::spawn(move || {
            if let Err(err) = here.follow(|event| send(&events, event)) {
                let _ = events.send(LogEvent::Failed(err));
            }
        });
        received
    }
}

/// Hands `event` on; nobody reading any more ends the follower.
fn send(events: &Sender<LogEvent>, event: LogEvent) -> Result<()> {
    events
        .send(event)
        .map_err(|_| Error::runtime("nobody follows the logs any more"))
}

/// A member's log on another host, read through that host's node: its end, then, following, what
/// comes after, asked for again and again, each request held by the node until there is some. A
/// node or server that stops answering is said once on stderr and asked again every second; the
/// follow goes on from where it was when it answers again.
struct RemoteLog {
    link: Link,
    host: String,
    request: LogRequest,
}

impl RemoteLog {
    fn open(home: &Home, team: &Team, member: &Member, host: &str, lines: usize) -> Result<Self> {
        Ok(Self {
            link: Link::open(&control::settings_here(home)?, "swarm log")?,
            host: host.to_owned(),
            request: LogRequest {
                team: team.name().to_owned(),
                member: member.name.clone(),
                lines,
                after: None,
            },
        })
    }

    /// The log's last lines, as bytes (`None` if nothing was captured); a follow goes on from
    /// their end.
    fn tail(&mut self) -> Result<Option<Vec<u8>>> {
        let reply: LogReply =
            self.link
                .ask(&self.host, control::LOG, &self.request, control::LOG_WAIT)?;
        self.request.after = Some(reply.position.unwrap_or_default());
        Ok(reply.tail)
    }

    /// Calls `on` with what the log gets until the member has ended and its log is read to the
    /// end.
    fn follow(&mut self, mut on: impl FnMut(&[u8], bool) -> Result<()>) -> Result<()> {
        let mut lost = false;
        loop {
            let answer =
                self.link
                    .request(&self.host, control::LOG, &self.request, control::LOG_WAIT);
            let reply: LogReply = match answer {
                Ok(answer) => answer?,
                Err(err) => {
                    if !std::mem::replace(&mut lost, true) {
                        tracing::warn!(
                            "{}; still following {}, asking again every second",
                            err.message(),
                            self.request.member
                        );
                    }
                    std::thread::sleep(FOLLOW_RETRY);
                    continue;
                }
            };
            if std::mem::take(&mut lost) {
                tracing::warn!(
                    "host {} answers again; following {}",
                    self.host,
                    self.request.member
                );
            }
            self.request.after = reply.position.or(self.request.after);
            let bytes = reply.tail.unwrap_or_default();
            on(&bytes, reply.ended)?;
            if reply.ended {
                return Ok(());
            }
        }
    }
}
