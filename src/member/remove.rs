//! Removing a team that has ended (docs/ARCHITECTURE.md, "Removing a team"): its folder, which
//! holds everything of it swarm keeps (config.json, inboxes, spools, history, logs, locks), and
//! the registry entries its supervisors left behind; archived first when asked.

use std::path::PathBuf;

use crate::base::clock;
use crate::error::Result;
use crate::launch::lock::LaunchLock;
use crate::member::liveness::Observed;
use crate::peer;
use crate::store::archive;
use crate::store::paths::ArchiveFormat;
use crate::store::team::Team;

/// What became of a team asked to be removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Removal {
    /// The team is gone, archived at that path when an archive was asked for.
    Removed(Option<PathBuf>),
    /// These members may still be running: nothing was done.
    Running(Vec<String>),
    /// A `swarm up` is starting the team (its pid, when known): nothing was done.
    Starting(Option<String>),
}

/// Removes `team` unless something of it still runs, archiving it as `archive` first. The caller
/// has already been allowed to (`policy::Action::Remove`).
///
/// It holds the team's launch lock throughout, so no `swarm up` starts the team while it goes
/// (and one starting it now leaves it be). An archive is complete and durable before
/// anything is deleted; when it fails, the team is left as it was.
pub(crate) fn remove(team: &Team, archive: Option<ArchiveFormat>) -> Result<Removal> {
    let _launch = match LaunchLock::try_take(team.home(), team.name())? {
        Ok(lock) => lock,
        Err(holder) => return Ok(Removal::Starting(holder)),
    };
    let observed = Observed::take(team)?;
    let live: Vec<String> = observed.live().map(str::to_owned).collect();
    if !live.is_empty() {
        return Ok(Removal::Running(live));
    }
    let archived = archive
        .map(|format| {
            archive::archive(
                team.home(),
                team.paths(),
                team.name(),
                format,
                clock::now_ms(),
            )
        })
        .transpose()?;
    // A folder archive moved the team's folder away whole; a tarball is a copy of it.
    if archive != Some(ArchiveFormat::Folder) {
        team.remove()?;
    }
    // A supervisor that was killed left its registry entry and socket: they go with the sweep of
    // stale entries. A live entry is a live process's, and stays.
    peer::live_peers(team.home())?;
    Ok(Removal::Removed(archived))
}
