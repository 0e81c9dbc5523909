//! Each member's current activity (docs/ARCHITECTURE.md, "Activity and events"):
//! `teams/<team>/activity.json`, `{"<member>": {state, since, why}}`, swarm's own file (Claude Code
//! rewrites config.json as it likes, so the activity does not live there). [`record`] is the one
//! way a change is recorded, by the supervisor and by a hook process alike: under
//! `.activity.flock` it compares, writes the file durably and appends one `activity` event to the
//! team's stream; a state already recorded records nothing.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::base::clock;
use crate::error::{Error, Result};
use crate::format::event::{Activity, Event, What};
use crate::store::durable::{atomic_write, private_dir, read_if_exists};
use crate::store::events;
use crate::store::lock::Flock;
use crate::store::paths::TeamPaths;

/// A member's activity as recorded: what, since when (epoch ms), and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Current {
    pub state: Activity,
    pub since: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// Every member's activity as recorded; an unreadable file (edited by hand) reads as none.
pub fn read(paths: &TeamPaths) -> Result<BTreeMap<String, Current>> {
    Ok(read_if_exists(&paths.activity())?
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default())
}

/// One member's activity as recorded.
pub fn of(paths: &TeamPaths, member: &str) -> Result<Option<Current>> {
    Ok(read(paths)?.remove(member))
}

/// What a change was decided from: whatever is recorded, or the state the caller read (`None`:
/// no activity recorded), which must still be the one recorded for the change to be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    Any,
    Was(Option<Activity>),
}

/// Records that `member` is now `state`, because of `why`: `false`, and nothing written, when
/// that is already its state. A change writes the file and appends one event, in that order,
/// under the lock, so the stream holds the changes in the order they were recorded. With
/// `Expected::Was`, a change recorded meanwhile by someone else (a hook, while the supervisor
/// looked) wins, and this records nothing.
pub fn record(
    paths: &TeamPaths,
    member: &str,
    state: Activity,
    why: Option<&str>,
    expected: Expected,
) -> Result<bool> {
    // Most calls repeat what is recorded (a hook at every tool call): seen without the lock.
    let unchanged = |all: &BTreeMap<String, Current>| {
        all.get(member).map(|current| current.state) == Some(state)
    };
    if unchanged(&read(paths)?) {
        return Ok(false);
    }
    private_dir(paths.private_root(), paths.dir())?;
    let _lock = Flock::wait(&paths.activity_lock())?;
    let mut all = read(paths)?;
    let from = all.get(member).map(|current| current.state);
    if unchanged(&all) || matches!(expected, Expected::Was(was) if was != from) {
        return Ok(false);
    }
    let now = clock::now_ms();
    all.insert(
        member.to_owned(),
        Current {
            state,
            since: now,
            why: why.map(str::to_owned),
        },
    );
    write(paths, &all)?;
    let event = Event {
        at: clock::format_ms(now),
        member: Some(member.to_owned()),
        what: What::Activity {
            state,
            from,
            why: why.map(str::to_owned),
        },
    };
    events::append(paths, &event)?;
    Ok(true)
}

/// Forgets `member`'s activity: its program has ended (an ended member has none). No event: the
/// process state's change says it.
pub fn forget(paths: &TeamPaths, member: &str) -> Result<()> {
    if !read(paths)?.contains_key(member) {
        return Ok(());
    }
    let _lock = Flock::wait(&paths.activity_lock())?;
    let mut all = read(paths)?;
    if all.remove(member).is_some() {
        write(paths, &all)?;
    }
    Ok(())
}

fn write(paths: &TeamPaths, all: &BTreeMap<String, Current>) -> Result<()> {
    let bytes = serde_json::to_vec(all).map_err(|err| Error::runtime(err.to_string()))?;
    atomic_write(&paths.activity(), |out| out.write_all(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::events::{Offset, read_from};
    use crate::store::team::fixture;

    fn changes(paths: &TeamPaths) -> Vec<(String, Activity, Option<Activity>)> {
        read_from(paths, Offset::default())
            .unwrap()
            .0
            .into_iter()
            .filter_map(|event| match event.what {
                What::Activity { state, from, .. } => Some((event.member?, state, from)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_change_is_recorded_once_with_one_event_and_a_repeat_records_nothing() {
        let (_dir, team) = fixture::team(&["bob", "carol"]);
        let paths = team.paths();
        assert!(record(paths, "bob", Activity::Starting, None, Expected::Any).unwrap());
        assert!(record(paths, "bob", Activity::Working, Some("tool"), Expected::Any).unwrap());
        assert!(
            !record(
                paths,
                "bob",
                Activity::Working,
                Some("again"),
                Expected::Any
            )
            .unwrap()
        );
        assert!(record(paths, "carol", Activity::Idle, None, Expected::Any).unwrap());
        assert!(
            record(
                paths,
                "bob",
                Activity::NeedsYou,
                Some("permission (Bash)"),
                Expected::Any
            )
            .unwrap()
        );
        let bob = of(paths, "bob").unwrap().unwrap();
        assert_eq!(bob.state, Activity::NeedsYou);
        assert_eq!(bob.why.as_deref(), Some("permission (Bash)"));
        assert_eq!(
            changes(paths),
            [
                ("bob".into(), Activity::Starting, None),
                ("bob".into(), Activity::Working, Some(Activity::Starting)),
                ("carol".into(), Activity::Idle, None),
                ("bob".into(), Activity::NeedsYou, Some(Activity::Working)),
            ]
        );
    }

    #[test]
    fn a_change_decided_from_a_state_since_replaced_is_not_recorded() {
        let (_dir, team) = fixture::team(&["bob"]);
        let paths = team.paths();
        record(paths, "bob", Activity::Working, None, Expected::Any).unwrap();
        // The supervisor saw `working`; a hook recorded `needs-you` before it wrote.
        record(paths, "bob", Activity::NeedsYou, None, Expected::Any).unwrap();
        let stale = Expected::Was(Some(Activity::Working));
        assert!(!record(paths, "bob", Activity::Idle, None, stale).unwrap());
        assert_eq!(of(paths, "bob").unwrap().unwrap().state, Activity::NeedsYou);
        forget(paths, "bob").unwrap();
        assert_eq!(of(paths, "bob").unwrap(), None);
        assert_eq!(changes(paths).len(), 2);
    }
}
