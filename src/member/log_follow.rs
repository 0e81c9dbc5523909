//! Following one member's log until the member has ended (docs/ARCHITECTURE.md, "Roster, control
//! and status across hosts"): `swarm log -f NAME` on the member's host, and the node answering
//! another host's follow, take the same steps. The supervisor records a member's ending only once
//! its last line has reached the log ("The supervisor"), so a log read to its end after the ending
//! was seen holds everything the member printed.

use std::ffi::OsStr;
use std::path::PathBuf;

use crate::error::Result;
use crate::member::liveness::{Observed, Seen};
use crate::member::logfile::Follower;
use crate::member::reach::Reach;
use crate::store::durable::private_dir;
use crate::store::paths::TeamPaths;
use crate::store::team::Team;

/// What a look at a followed log found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Bytes appended since the last look; there may be more.
    Fresh(Vec<u8>),
    /// Nothing new, and the member may still print: wait for a change.
    Quiet,
    /// The member has ended, and these are the last bytes of its log.
    Ended(Vec<u8>),
}

/// One member's log, followed until the member has ended.
pub(crate) struct LogFollow {
    team: Team,
    /// Tells whether the member has ended wherever it runs.
    reach: Box<dyn Reach>,
    member: String,
    file: PathBuf,
}

impl LogFollow {
    pub(crate) fn new(team: Team, reach: Box<dyn Reach>, member: &str) -> Self {
        let file = team.paths().log(member);
        Self {
            team,
            reach,
            member: member.to_owned(),
            file,
        }
    }

    /// The log's path.
    pub(crate) fn log(&self) -> &std::path::Path {
        &self.file
    }

    /// The directories to watch, made if missing: the log's and the team's, where the member's
    /// ending is recorded.
    pub(crate) fn dirs(&self) -> Result<[PathBuf; 2]> {
        let paths = self.team.paths();
        let logs = paths.logs();
        private_dir(paths.private_root(), &logs)?;
        Ok([logs, paths.dir().to_path_buf()])
    }

    /// Whether a change to `file` may matter: the log (a rotation renames it too) or
    /// config.json.
    pub(crate) fn relevant(&self, file: &OsStr) -> bool {
        TeamPaths::is_config(file) || Some(file) == self.file.file_name()
    }

    /// Reads what `follower` has not read yet, at most `max` bytes; when there is nothing, looks
    /// whether the member has ended, and if so reads once more for whatever came in between.
    pub(crate) fn step(&self, follower: &mut Follower, max: usize) -> Result<Step> {
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
