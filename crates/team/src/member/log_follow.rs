//! Following one member's log until the member has ended (docs/ARCHITECTURE.md, "Roster, control
//! and status across hosts"): `swarm log -f NAME` on the member's machine, and the node answering
//! another machine's follow, take the same steps. The supervisor records a member's ending only
//! once its last line has reached the log ("The supervisor"), so a log read to its end after the
//! ending was seen holds everything the member printed. And following every log on this machine
//! at once, for `swarm log --all -f`.

use std::cell::RefCell;
use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::config::Member;
use crate::member::liveness::{Observed, Seen};
use crate::member::logfile::Follower;
use crate::member::reach::Reach;
use crate::store::durable::private_dir;
use crate::store::paths::TeamPaths;
use crate::store::team::Team;
use crate::store::watcher::Watcher;

/// What a look at a followed log found.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// Bytes appended since the last look; there may be more.
    Fresh(Vec<u8>),
    /// Nothing new, and the member may still print: wait for a change.
    Quiet,
    /// The member has ended, and these are the last bytes of its log.
    Ended(Vec<u8>),
}

/// One member's log, followed until the member has ended.
pub struct LogFollow {
    team: Team,
    /// Tells whether the member has ended wherever it runs.
    reach: Box<dyn Reach>,
    member: String,
    file: PathBuf,
}

impl LogFollow {
    pub fn new(team: Team, reach: Box<dyn Reach>, member: &str) -> Self {
        let file = team.paths().log(member);
        Self {
            team,
            reach,
            member: member.to_owned(),
            file,
        }
    }

    /// The log's path.
    pub fn log(&self) -> &Path {
        &self.file
    }

    /// The directories to watch, made if missing: the log's and the team's, where the member's
    /// ending is recorded.
    pub fn dirs(&self) -> Result<[PathBuf; 2]> {
        let paths = self.team.paths();
        let logs = paths.logs();
        private_dir(paths.private_root(), &logs)?;
        Ok([logs, paths.dir().to_path_buf()])
    }

    /// Whether a change to `file` may matter: the log (a rotation renames it too) or
    /// config.json.
    pub fn relevant(&self, file: &OsStr) -> bool {
        TeamPaths::is_config(file) || Some(file) == self.file.file_name()
    }

    /// Reads what `follower` has not read yet, at most `max` bytes; when there is nothing, looks
    /// whether the member has ended, and if so reads once more for whatever came in between.
    pub fn step(&self, follower: &mut Follower, max: usize) -> Result<Step> {
        let fresh = follower.fresh_upto(max)?;
        if !fresh.is_empty() {
            return Ok(Step::Fresh(fresh));
        }
        if !self.has_ended()? {
            return Ok(Step::Quiet);
        }
        let last = follower.fresh_upto(max)?;
        Ok(if last.len() < max {
            Step::Ended(last)
        } else {
            Step::Fresh(last)
        })
    }

    /// The member was started and is no longer live (ended, or vanished); one never started, or
    /// one away whose machine is not heard from, may still print.
    fn has_ended(&self) -> Result<bool> {
        let observed = Observed::take(&self.team, self.reach.as_ref())?;
        let Some(member) = observed.config.member(&self.member) else {
            return Ok(true); // it left the roster
        };
        let seen = observed.seen(member);
        Ok(seen != Seen::NotStarted && !seen.is_live())
    }
}

/// One member's log on this machine, as `swarm log NAME` reads it: its last lines, then, when
/// followed, what comes after, until the member has ended.
pub struct LocalLog {
    follow: LogFollow,
    follower: Follower,
    tail: Option<Vec<u8>>,
    /// Armed before the first read when the log is to be followed, so nothing written in between
    /// is missed.
    watcher: Option<Watcher>,
}

impl LocalLog {
    /// Opens `member`'s log of `team` (`reach` tells when it has ended), reading its last `lines`
    /// lines; with `follow`, ready to follow from their end.
    pub fn open(
        team: &Team,
        reach: Box<dyn Reach>,
        member: &str,
        lines: usize,
        follow: bool,
    ) -> Result<Self> {
        let log = LogFollow::new(team.clone(), reach, member);
        let watcher = if follow {
            let [logs, team_dir] = log.dirs()?;
            Some(Watcher::arm_all(&[&logs, &team_dir])?)
        } else {
            None
        };
        let (follower, tail) = Follower::start(log.log(), lines)?;
        Ok(Self {
            follow: log,
            follower,
            tail,
            watcher,
        })
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        self.follow.log()
    }

    /// The bytes of its last lines (`None` if nothing was ever logged), once.
    pub fn tail(&mut self) -> Option<Vec<u8>> {
        self.tail.take()
    }

    /// Calls `on` with what the log gets after its last lines, and whether the member has ended
    /// with it, until it has. A log opened without following has nothing more.
    pub fn follow(&mut self, mut on: impl FnMut(&[u8], bool) -> Result<()>) -> Result<()> {
        let Some(watcher) = &self.watcher else {
            return Ok(());
        };
        let relevant = |file: &OsStr| self.follow.relevant(file);
        loop {
            match self.follow.step(&mut self.follower, usize::MAX)? {
                Step::Fresh(fresh) => on(&fresh, false)?,
                Step::Ended(last) => return on(&last, true),
                Step::Quiet => {
                    watcher.wait(None, &relevant)?;
                }
            }
        }
    }
}

/// What following members' logs brings.
#[derive(Debug)]
pub enum LogEvent {
    /// A member not followed before (one added meanwhile): its log is read from its beginning.
    Joined(Box<Member>),
    /// What member `name`'s log got; `ended`: the last of it, the member has ended.
    Bytes {
        name: String,
        bytes: Vec<u8>,
        ended: bool,
    },
    /// Following failed: nothing more comes.
    Failed(Error),
}

/// Every member's log on this machine, as `swarm log --all` reads them: their last lines, then,
/// when followed, what each gets, and the logs of members added meanwhile from their beginning,
/// all through one watcher.
pub struct LocalLogs {
    team: Team,
    followers: Vec<(String, Follower)>,
    /// Armed before the first read when the logs are to be followed.
    watcher: Option<Watcher>,
}

impl LocalLogs {
    /// Ready to read `team`'s logs, whose folder is there; with `follow`, the watcher armed
    /// first.
    pub fn arm(team: &Team, follow: bool) -> Result<Self> {
        let paths = team.paths();
        let watcher = if follow {
            Some(Watcher::arm_all(&[&paths.logs(), paths.dir()])?)
        } else {
            None
        };
        Ok(Self {
            team: team.clone(),
            followers: Vec::new(),
            watcher,
        })
    }

    /// The bytes of `member`'s last `lines` lines (`None` if nothing was ever logged); followed
    /// from their end.
    pub fn add(&mut self, member: &str, lines: usize) -> Result<Option<Vec<u8>>> {
        let (follower, tail) = Follower::start(&self.team.paths().log(member), lines)?;
        self.followers.push((member.to_owned(), follower));
        Ok(tail)
    }

    /// Calls `on` with what each log gets, for as long as `on` succeeds and reading does;
    /// without following, returns at once.
    pub fn follow(mut self, mut on: impl FnMut(LogEvent) -> Result<()>) -> Result<()> {
        let Some(watcher) = self.watcher.take() else {
            return Ok(());
        };
        let file_of = |name: &str| {
            self.team
                .paths()
                .log(name)
                .file_name()
                .unwrap_or_default()
                .to_owned()
        };
        // A member spawned while following has a log no follower reads yet: seeing one, the
        // roster is read again, and again at each change of config.json until it names the log's
        // member. Its supervisor may log before `spawn` has recorded it, and print nothing after.
        let known: RefCell<HashSet<OsString>> = RefCell::new(
            self.followers
                .iter()
                .map(|(name, _)| file_of(name))
                .collect(),
        );
        let unknown: RefCell<HashSet<OsString>> = RefCell::new(HashSet::new());
        let roster = self.team.paths().config();
        let roster = roster.file_name().unwrap_or_default().to_owned();
        let relevant = |file: &OsStr| {
            if known.borrow().contains(file) {
                return true;
            }
            if TeamPaths::log_owner(file).is_some() {
                unknown.borrow_mut().insert(file.to_owned());
                return true;
            }
            file == roster && !unknown.borrow().is_empty()
        };
        watcher.wait_for(None, &relevant, || {
            if !unknown.borrow().is_empty() {
                for member in self.team.load()?.members {
                    if known.borrow_mut().insert(file_of(&member.name)) {
                        let path = self.team.paths().log(&member.name);
                        self.followers
                            .push((member.name.clone(), Follower::from_beginning(&path)));
                        on(LogEvent::Joined(Box::new(member)))?;
                    }
                }
                let known = known.borrow();
                unknown.borrow_mut().retain(|file| !known.contains(file));
            }
            for (name, follower) in &mut self.followers {
                let bytes = follower.fresh()?;
                if !bytes.is_empty() {
                    on(LogEvent::Bytes {
                        name: name.clone(),
                        bytes,
                        ended: false,
                    })?;
                }
            }
            Ok(None::<()>)
        })?;
        Ok(())
    }
}
