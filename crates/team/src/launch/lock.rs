//! The launch lock (docs/ARCHITECTURE.md, "Locks"): one `swarm up` at a time starts a team. It is
//! held from the "already running" check until every pane is placed, so two launches of one team
//! cannot both pass the check and start every member twice. A second launch does not wait for it:
//! by the time it could take the lock the team is running, so it is refused at once. Every
//! command that ends a whole team takes it before it stops anything, so an `up` placing the
//! team's panes wins: `down` and `stop all` wait for it, a bounded while; a removal refuses.

use std::sync::mpsc;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::store::durable::private_dir;
use crate::store::lock::{Flock, FlockFile};
use crate::store::paths::Home;

/// What the holder of a team's launch lock is doing, recorded after its pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// `up`, or a node starting the team's members on its host.
    Start,
    /// `spawn` opening the team's window.
    OpenWindow,
    /// `rm`, `prune` or `down --rm` taking the team down and away.
    Remove,
    /// `down` or `stop all` ending every member (a node's `down` on its host too).
    TakeDown,
}

impl Purpose {
    fn word(self) -> &'static str {
        match self {
            Self::Start => "up",
            Self::OpenWindow => "spawn",
            Self::Remove => "rm",
            Self::TakeDown => "down",
        }
    }
}

/// Who holds a team's launch lock, as far as its record says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Holder {
    pub pid: Option<String>,
    pub(crate) purpose: Option<Purpose>,
}

impl Holder {
    /// A record `<pid> <purpose>` read back; an older swarm recorded the pid alone, and only `up`
    /// held the lock long enough to be found.
    fn parse(record: Option<String>) -> Self {
        let Some(record) = record else {
            return Self::default();
        };
        let (pid, word) = record.split_once(' ').unwrap_or((record.as_str(), "up"));
        let purpose = [
            Purpose::Start,
            Purpose::OpenWindow,
            Purpose::Remove,
            Purpose::TakeDown,
        ]
        .into_iter()
        .find(|purpose| purpose.word() == word);
        Self {
            pid: Some(pid.to_owned()),
            purpose,
        }
    }

    /// What the holder does to the team, in words: "being started by `swarm up` (pid 42)".
    pub fn doing(&self) -> String {
        let pid = self
            .pid
            .as_ref()
            .map(|pid| format!(" (pid {pid})"))
            .unwrap_or_default();
        match self.purpose {
            Some(Purpose::Start) | None => format!("being started by `swarm up`{pid}"),
            Some(Purpose::OpenWindow) => {
                format!("having its window opened by `swarm spawn`{pid}")
            }
            Some(Purpose::Remove) => format!("being removed by another swarm command{pid}"),
            Some(Purpose::TakeDown) => {
                format!("being taken down by another swarm command{pid}")
            }
        }
    }

    /// The holder's command, as its record names it: `up`, `spawn`, `rm` or `down`.
    pub fn command(&self) -> Option<&'static str> {
        self.purpose.map(Purpose::word)
    }
}

/// How long `stop all` waits for an `up` placing the team's panes (`down` waits its own
/// `--timeout`, 20 s by default, as well).
pub const TAKE_DOWN_WAIT: Duration = Duration::from_secs(20);

/// The team's launch lock, held until drop; the kernel releases it if its holder dies.
#[derive(Debug)]
pub struct LaunchLock {
    flock: Flock,
}

impl LaunchLock {
    /// Takes the lock on team `name` to start it, or refuses (exit 2) naming what holds it.
    pub fn take(home: &Home, name: &str) -> Result<Self> {
        Self::try_take(home, name, Purpose::Start)?.map_err(|holder| {
            let doing = match holder.purpose {
                Some(Purpose::Start) | None => format!(
                    "already being started by another `swarm up`{}",
                    holder
                        .pid
                        .as_ref()
                        .map(|pid| format!(" (pid {pid})"))
                        .unwrap_or_default()
                ),
                Some(_) => holder.doing(),
            };
            Error::usage(format!("team {name} is {doing}")).with_hint(format!(
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
        flock.record(&record(Purpose::OpenWindow));
        Ok(Self { flock })
    }

    /// Takes the lock on team `name` to end every member of it (`down`, `stop all`), waiting up to
    /// `bound` for whoever holds it (an `up` placing the team's panes, which wins): `busy` is told
    /// who that is once, before the wait. Who still holds it when the bound passes is returned.
    /// The wait is in the kernel, on a thread of its own: one that outlives the bound takes the
    /// lock when it comes free and lets it go at once.
    pub fn wait_to_take_down(
        home: &Home,
        name: &str,
        bound: Duration,
        busy: impl FnOnce(&Holder) -> Result<()>,
    ) -> Result<std::result::Result<Self, Holder>> {
        let holder = match Self::try_take(home, name, Purpose::TakeDown)? {
            Ok(lock) => return Ok(Ok(lock)),
            Err(holder) => holder,
        };
        busy(&holder)?;
        let file = FlockFile::open(&home.team(name).launch_lock())?;
        let (took, taken) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = took.send(file.lock());
        });
        match taken.recv_timeout(bound) {
            Ok(flock) => {
                let mut flock = flock?;
                flock.record(&record(Purpose::TakeDown));
                Ok(Ok(Self { flock }))
            }
            // Whoever holds it now, as its record says; else whoever did.
            Err(_) => Ok(Err(FlockFile::open(&home.team(name).launch_lock())
                .ok()
                .and_then(|mut file| file.recorded())
                .map_or(holder, |record| Holder::parse(Some(record))))),
        }
    }

    /// Takes the lock on team `name` to end every member of it without waiting (a node asked to
    /// take its members down), or tells who holds it.
    pub fn try_take_to_take_down(
        home: &Home,
        name: &str,
    ) -> Result<std::result::Result<Self, Holder>> {
        Self::try_take(home, name, Purpose::TakeDown)
    }

    /// Takes the lock on team `name` to remove it, or tells who holds it.
    pub(crate) fn try_take_to_remove(
        home: &Home,
        name: &str,
    ) -> Result<std::result::Result<Self, Holder>> {
        Self::try_take(home, name, Purpose::Remove)
    }

    fn try_take(
        home: &Home,
        name: &str,
        purpose: Purpose,
    ) -> Result<std::result::Result<Self, Holder>> {
        let team = home.team(name);
        let path = team.launch_lock();
        private_dir(team.private_root(), team.dir())?;
        let mut flock = match FlockFile::open(&path)?.try_lock()? {
            Ok(flock) => flock,
            Err(mut held) => return Ok(Err(Holder::parse(held.recorded()))),
        };
        // Who holds it, for the refusals above; a stale record left by a dead holder is
        // overwritten.
        flock.record(&record(purpose));
        Ok(Ok(Self { flock }))
    }
}

/// This process's record in the lock file: `<pid> <purpose>`.
fn record(purpose: Purpose) -> String {
    format!("{} {}", std::process::id(), purpose.word())
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
        let removing = LaunchLock::try_take_to_remove(&home, "t").unwrap().unwrap();
        let err = LaunchLock::take(&home, "t").unwrap_err();
        assert_eq!(
            err.message(),
            format!(
                "team t is being removed by another swarm command (pid {})",
                std::process::id()
            )
        );
        let holder = LaunchLock::try_take_to_remove(&home, "t")
            .unwrap()
            .unwrap_err();
        assert_eq!(holder.purpose, Some(Purpose::Remove));
        drop(removing);
        assert!(LaunchLock::take(&home, "t").is_ok());
        // Taking a team down waits for a launch, a bounded while, having said so once.
        let up = LaunchLock::take(&home, "t").unwrap();
        let mut told = Vec::new();
        let holder = LaunchLock::wait_to_take_down(&home, "t", Duration::from_millis(50), |h| {
            told.push(h.clone());
            Ok(())
        })
        .unwrap()
        .unwrap_err();
        assert_eq!(holder.command(), Some("up"));
        assert_eq!(told, [holder]);
        let letting_go = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            drop(up);
        });
        let down = LaunchLock::wait_to_take_down(&home, "t", Duration::from_secs(60), |_| Ok(()))
            .unwrap()
            .unwrap();
        letting_go.join().unwrap();
        let err = LaunchLock::take(&home, "t").unwrap_err();
        assert_eq!(
            err.message(),
            format!(
                "team t is being taken down by another swarm command (pid {})",
                std::process::id()
            )
        );
        drop(down);
        // An older swarm's record: the pid alone, an `up`'s.
        assert_eq!(
            Holder::parse(Some("42".into())),
            Holder {
                pid: Some("42".into()),
                purpose: Some(Purpose::Start)
            }
        );
    }
}
