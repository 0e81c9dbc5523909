//! Removing a team across hosts (docs/ARCHITECTURE.md, "Removing a team" and "The task list
//! across hosts"): `rm`, `prune` and `down --rm` remove a team on the host where they run, as
//! `member/remove.rs` does. Run on the team's lead's host, the removal is of the whole team, and
//! what the NATS server keeps of it goes too: its stream, its roster bucket and its task bucket, so
//! a new team of that name starts with an empty board and no message of the old one. That is done
//! after the archive is made and before anything here is deleted: a server that cannot be reached
//! leaves the team as it was, exit 1. Another host's removal takes only that host's files.

use async_nats::jetstream::{self, ErrorCode, context::GetStreamErrorKind};

use crate::cluster::control;
use crate::cluster::fleet::{Fleet, Sight};
use crate::cluster::subjects;
use crate::error::{Error, Result};
use crate::format::config::TeamConfig;
use crate::launch::lock::LaunchLock;
pub(crate) use crate::member::remove::{self, Removal};
use crate::store::paths::ArchiveFormat;
use crate::store::team::Team;

impl Fleet {
    /// Removes `team` unless something of it still runs, archiving it as `archive` first
    /// (`member::remove`), and off the server too when this is its lead's host
    /// (`cluster/removal.rs`). The caller has already been allowed to (`policy::Action::Remove`).
    pub fn remove(&self, team: &Team, archive: Option<ArchiveFormat>) -> Result<Removal> {
        match remove::claim(team)? {
            Ok(held) => self.remove_claimed(team, &held, archive),
            Err(holder) => Ok(Removal::Busy(holder)),
        }
    }

    /// [`Fleet::remove`], with the team's launch lock already held (`member::remove::claim`).
    pub fn remove_claimed(
        &self,
        team: &Team,
        held: &LaunchLock,
        archive: Option<ArchiveFormat>,
    ) -> Result<Removal> {
        let whole = whole_team_here(team, &team.load()?);
        remove::remove_claimed(team, self, held, archive, || {
            if whole { forget(team) } else { Ok(()) }
        })
    }
}

/// Whether removing `team` here removes the whole team: it spans hosts, and this host is its
/// lead's, where `up` made it (config.json's record of the lead names the host).
fn whole_team_here(team: &Team, config: &TeamConfig) -> bool {
    let here = Sight::look(team.home()).here;
    config.spans_hosts()
        && config
            .member(config.lead_name())
            .and_then(|lead| lead.host.as_deref())
            .is_some_and(|host| Some(host) == here.as_deref())
}

/// Deletes the team's stream, roster bucket and task bucket on the server this host knows
/// (`control::settings_here`). One that is not there is gone already; any other failure is one
/// line naming the server, and the team is left here as it was.
fn forget(team: &Team) -> Result<()> {
    let name = team.name();
    let settings = control::settings_here(team.home())?;
    let link = control::Link::open(&settings, &format!("swarm rm {name}")).map_err(|err| {
        err.with_note(format!(
            "team {name} is left as it was: removed on its lead's host, it takes its board and \
             messages off that server too"
        ))
    })?;
    let url = settings.url.as_str();
    let streams = [
        subjects::stream(name),
        subjects::bucket_stream(&subjects::roster_bucket(name)),
        subjects::bucket_stream(&subjects::tasks_bucket(name)),
    ];
    link.run(|client| async move {
        let js = jetstream::new(client);
        for stream in &streams {
            match js.delete_stream(stream).await {
                Ok(_) => {}
                Err(err)
                    if matches!(err.kind(), GetStreamErrorKind::JetStream(inner)
                        if inner.error_code() == ErrorCode::STREAM_NOT_FOUND) => {}
                Err(err) => {
                    return Err(Error::runtime(format!(
                        "cannot remove {stream} of team {name} from the NATS server at {url}: {err}"
                    ))
                    .with_hint(format!(
                        "team {name} is left as it was; once the server answers, remove it again"
                    )));
                }
            }
        }
        Ok(())
    })
}
