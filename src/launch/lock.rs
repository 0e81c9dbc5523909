//! The launch lock (docs/ARCHITECTURE.md, "Locks"): one `swarm up` at a time starts a team. It is
//! held from the "already running" check until every pane is placed, so two launches of one team
//! cannot both pass the check and start every member twice. A second launch does not wait for it:
//! by the time it could take the lock the team is running, so it is refused at once.

use crate::error::{Error, Result};
use crate::store::durable::private_dir;
use crate::store::lock::{Flock, FlockFile};
use crate::store::paths::Home;

/// The team's launch lock, held until drop; the kernel releases it if its holder dies.
#[derive(Debug)]
pub(crate) struct LaunchLock {
    flock: Flock,
}

impl LaunchLock {
    /// Takes the lock on team `name`, or refuses (exit 2) naming the launch that holds it.
    pub(crate) fn take(home: &Home, name: &str) -> Result<Self> {
        Self::try_take(home, name)?.map_err(|holder| {
            Error::usage(format!(
                "team {name} is already being started by another `swarm up`{}",
                holder
                    .map(|pid| format!(" (pid {pid})"))
                    .unwrap_or_default()
            ))
            .with_hint(format!(
                "wait for it, then see `swarm status {name}`; stop it with `swarm down {name}`"
            ))
        })
    }

    /// Waits for the lock on team `name`: `spawn` opening the team's window takes its turn with
    /// other spawns and with `up`, which hold it for moments.
    pub(crate) fn wait(home: &Home, name: &str) -> Result<Self> {
        let team = home.team(name);
        private_dir(team.private_root(), team.dir())?;
        let mut flock = FlockFile::open(&team.launch_lock())?.lock()?;
        flock.record(&std::process::id().to_string());
        Ok(Self { flock })
    }

    /// Takes the lock on team `name`, or tells the pid of the launch that holds it, when it wrote
    /// one.
    pub(crate) fn try_take(
        home: &Home,
        name: &str,
    ) -> Result<std::result::Result<Self, Option<String>>> {
        let team = home.team(name);
        let path = team.launch_lock();
        private_dir(team.private_root(), team.dir())?;
        let mut flock = match FlockFile::open(&path)?.try_lock()? {
            Ok(flock) => flock,
            Err(mut held) => return Ok(Err(held.recorded())),
        };
        // Who holds it, for the refusal above; a stale pid left by a dead holder is overwritten.
        flock.record(&std::process::id().to_string());
        Ok(Ok(Self { flock }))
    }
}

impl Drop for LaunchLock {
    fn drop(&mut self) {
        // Emptied while still held; the flock is released after.
        self.flock.forget();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_launch_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path().to_path_buf());
        let first = LaunchLock::take(&home, "t").unwrap();
        let err = LaunchLock::take(&home, "t").unwrap_err();
        assert_eq!(err.kind(), crate::error::ErrorKind::Usage);
        assert_eq!(
            err.message(),
            format!(
                "team t is already being started by another `swarm up` (pid {})",
                std::process::id()
            )
        );
        assert!(
            LaunchLock::take(&home, "other").is_ok(),
            "one lock per team"
        );
        drop(first);
        assert!(LaunchLock::take(&home, "t").is_ok());
    }
}
