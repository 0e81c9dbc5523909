//! The launch lock (docs/ARCHITECTURE.md, "Locks"): one `swarm up` at a time starts a team. It is
//! held from the "already running" check until every pane is placed, so two launches of one team
//! cannot both pass the check and start every member twice. A second launch does not wait for it:
//! by the time it could take the lock the team is running, so it is refused at once.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};

use crate::error::{Error, Result};
use crate::store::durable::{open_private, private_dir};
use crate::store::paths::Home;

/// The team's launch lock, held until drop; the kernel releases it if its holder dies.
#[derive(Debug)]
pub(crate) struct LaunchLock {
    file: File,
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

    /// Takes the lock on team `name`, or tells the pid of the launch that holds it, when it wrote
    /// one.
    pub(crate) fn try_take(
        home: &Home,
        name: &str,
    ) -> Result<std::result::Result<Self, Option<String>>> {
        let team = home.team(name);
        let path = team.launch_lock();
        private_dir(team.private_root(), team.dir())?;
        // It is written (the holder's pid), so never through a symlink.
        let mut file = open_private(
            &path,
            OpenOptions::new().read(true).write(true).truncate(false),
        )?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                return Ok(Err((!holder.is_empty()).then(|| holder.to_owned())));
            }
            Err(TryLockError::Error(err)) => return Err(Error::io("lock", &path, err)),
        }
        // Who holds it, for the refusal above; a stale pid left by a dead holder is overwritten.
        let written = file
            .set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| write!(file, "{}", std::process::id()));
        if let Err(err) = written {
            tracing::debug!("cannot record the launch lock's holder: {err}");
        }
        Ok(Ok(Self { file }))
    }
}

impl Drop for LaunchLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
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
