//! Removing a team that has ended (docs/ARCHITECTURE.md, "Removing a team"): everything swarm
//! keeps of it on this host, its folder (config.json, inboxes, spools, history, logs, locks), its
//! task list and the node's record of its task copies, and the registry entries its supervisors
//! left behind; archived first when asked. What a NATS server keeps of a team across hosts is the
//! cluster layer's (`cluster/removal.rs`), which removes it through the hook here.

use std::path::PathBuf;

use crate::base::clock;
use crate::error::Result;
use crate::launch::lock::{Holder, LaunchLock};
use crate::member::liveness::Observed;
use crate::member::reach::Reach;
use crate::peer;
use crate::store::archive;
pub use crate::store::paths::ArchiveFormat;
use crate::store::removal;
use crate::store::team::Team;

/// What became of a team asked to be removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Removal {
    /// The team is gone, archived at that path when an archive was asked for.
    Removed(Option<PathBuf>),
    /// These members may still be running: nothing was done.
    Running(Vec<String>),
    /// Another command holds the team's launch lock (a `swarm up` starting it): nothing was done.
    Busy(Holder),
}

/// The team's launch lock, taken to remove it, or who holds it. It is taken before anything of
/// the team is stopped and held until the team is gone: no `up` starts the team meanwhile, and an
/// `up` that is starting it makes the removal refuse before it stops anything.
pub fn claim(team: &Team) -> Result<std::result::Result<LaunchLock, Holder>> {
    LaunchLock::try_take_to_remove(team.home(), team.name())
}

/// Removes `team`, whose launch lock is held ([`claim`]), unless something of it still runs,
/// archiving it as `archive` first. The caller has already been allowed to
/// (`policy::Action::Remove`). An archive is complete and durable before anything is deleted;
/// then `elsewhere` removes what is kept of the team off this host, and only once it has are the
/// files here deleted. When either fails, the team is left here as it was.
pub fn remove_claimed(
    team: &Team,
    reach: &dyn Reach,
    _held: &LaunchLock,
    archive: Option<ArchiveFormat>,
    elsewhere: impl FnOnce() -> Result<()>,
) -> Result<Removal> {
    let observed = Observed::take(team, reach)?;
    let live: Vec<String> = observed.live().map(str::to_owned).collect();
    if !live.is_empty() {
        return Ok(Removal::Running(live));
    }
    let (home, name) = (team.home(), team.name());
    let archived = match archive {
        None => {
            elsewhere()?;
            removal::remove(home, name)?;
            None
        }
        Some(ArchiveFormat::TarZst) => {
            let path = archive::tarball(home, name, clock::now_ms())?;
            elsewhere()
                .map_err(|err| err.with_note(format!("the archive stays at {}", path.display())))?;
            removal::remove(home, name)?;
            Some(path)
        }
        // The archive and the removal in one move.
        Some(ArchiveFormat::Folder) => {
            elsewhere()?;
            Some(removal::archive_folder(home, name, clock::now_ms())?)
        }
    };
    // A supervisor that was killed left its registry entry and socket: they go with the sweep of
    // stale entries. A live entry is a live process's, and stays.
    peer::live_peers(home)?;
    Ok(Removal::Removed(archived))
}
