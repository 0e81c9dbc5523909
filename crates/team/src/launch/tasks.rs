//! A team file's `[[task]]` entries put on the team's board, at `up` and `init`.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::error::Result;
use crate::format::task::Task;
use crate::launch::teamfile::TeamFile;
use crate::store::paths::Home;
use crate::store::tasks::TaskList;

/// The metadata key a task made from a team file carries: its `key` there.
pub(crate) const TEAM_FILE_KEY: &str = "team_file_key";

/// What [`create`] did: each entry's key and id, or nothing because the board already has tasks
/// from the team file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Made {
    /// The team file has no `[[task]]`.
    None,
    /// The board already holds tasks made from the team file (an earlier `up` or `init`).
    AlreadyThere,
    /// Each entry's key and the id it was given, blockers first.
    Created(Vec<(String, u64)>),
}

/// Creates the team file's tasks, under the list lock, each blocked by the ids its keys were
/// given, unless a task on the board already carries [`TEAM_FILE_KEY`]. All or nothing: the
/// entries were checked when the file was read.
pub fn create(home: &Home, file: &TeamFile) -> Result<Made> {
    if file.tasks.is_empty() {
        return Ok(Made::None);
    }
    let list = TaskList::new(home, file.name.as_str());
    list.ensure()?;
    list.edit(&[], true, |edit| {
        if edit.tasks().any(|t| t.metadata(TEAM_FILE_KEY).is_some()) {
            return Ok(Made::AlreadyThere);
        }
        let mut ids: BTreeMap<&str, u64> = BTreeMap::new();
        let mut made = Vec::with_capacity(file.tasks.len());
        for spec in &file.tasks {
            let id = edit.create(|id| {
                let mut task = Task::new(
                    id,
                    &spec.subject,
                    &spec.description,
                    None,
                    spec.owner.as_deref(),
                );
                task.set_metadata(TEAM_FILE_KEY, Value::String(spec.key.clone()));
                task
            })?;
            let blockers: Vec<u64> = spec
                .blocked_by
                .iter()
                .map(|key| ids[key.as_str()])
                .collect();
            edit.set_blockers(id, &blockers)?;
            ids.insert(&spec.key, id);
            made.push((spec.key.clone(), id));
        }
        Ok(Made::Created(made))
    })
}
