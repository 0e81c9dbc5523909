//! One task of a team's task list, in Claude Code's format (docs/ARCHITECTURE.md, "Task list").
//! It is kept as the JSON object it was read as, so a rewrite preserves every field (and the
//! order of fields) that Claude Code or another tool wrote.

use std::fmt;

use serde::Serialize;
use serde_json::{Map, Value};

/// A description above this many bytes is refused before anything is written, as message text is.
pub const MAX_DESCRIPTION_BYTES: usize = 1024 * 1024;

/// The largest task id: the largest integer JavaScript, Claude Code's language, holds exactly.
/// A file name or high-water mark beyond it is no id (docs/ARCHITECTURE.md, "Task list"): ids
/// are issued one at a time, so only a hand-made file gets there, and counting on from it would
/// leave no id to issue.
pub(crate) const MAX_ID: u64 = (1 << 53) - 1;

/// A high-water mark as Claude Code writes it (decimal text), or `None` when it is no mark or
/// beyond [`MAX_ID`].
pub fn parse_mark(text: &str) -> Option<u64> {
    text.trim().parse().ok().filter(|mark| *mark <= MAX_ID)
}

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pending,
    InProgress,
    Completed,
}

impl Status {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::InProgress => "in_progress",
            Self::Completed => "completed",
        }
    }

    fn parse(raw: &str) -> Option<Self> {
        match raw {
            "pending" => Some(Self::Pending),
            "in_progress" => Some(Self::InProgress),
            "completed" => Some(Self::Completed),
            _ => None,
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A task: an object with string `id`, `subject` and a known `status`; anything else it carries
/// is kept as is.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Task(Map<String, Value>);

impl Task {
    /// A new pending task, fields in the order Claude Code writes them.
    pub fn new(
        id: u64,
        subject: &str,
        description: &str,
        active_form: Option<&str>,
        owner: Option<&str>,
    ) -> Self {
        let mut fields = Map::new();
        fields.insert("id".into(), id.to_string().into());
        fields.insert("subject".into(), subject.into());
        fields.insert("description".into(), description.into());
        if let Some(form) = active_form {
            fields.insert("activeForm".into(), form.into());
        }
        if let Some(owner) = owner {
            fields.insert("owner".into(), owner.into());
        }
        fields.insert("status".into(), Status::Pending.as_str().into());
        fields.insert("blocks".into(), Value::Array(Vec::new()));
        fields.insert("blockedBy".into(), Value::Array(Vec::new()));
        Self(fields)
    }

    /// Parses a task file; `None` when it is no task (to be moved aside). `id` is the number its
    /// file name gives, which the `id` field must match.
    pub fn parse(bytes: &[u8], id: u64) -> Option<Self> {
        let Value::Object(fields) = serde_json::from_slice(bytes).ok()? else {
            return None;
        };
        let task = Self(fields);
        let valid = task.str_field("id") == Some(id.to_string().as_str())
            && task.str_field("subject").is_some()
            && task.str_field("status").and_then(Status::parse).is_some()
            && ["blocks", "blockedBy"].iter().all(|key| {
                task.0.get(*key).is_none_or(|v| {
                    v.as_array()
                        .is_some_and(|ids| ids.iter().all(Value::is_string))
                })
            });
        valid.then_some(task)
    }

    /// Pretty-printed with a 2-space indent, as Claude Code writes it.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec_pretty(&self.0).expect("a JSON object always serialises")
    }

    fn str_field(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    pub fn id(&self) -> u64 {
        self.str_field("id")
            .and_then(|id| id.parse().ok())
            .unwrap_or_default()
    }

    pub fn subject(&self) -> &str {
        self.str_field("subject").unwrap_or_default()
    }

    pub fn description(&self) -> &str {
        self.str_field("description").unwrap_or_default()
    }

    pub fn owner(&self) -> Option<&str> {
        self.str_field("owner").filter(|owner| !owner.is_empty())
    }

    pub fn status(&self) -> Status {
        self.str_field("status")
            .and_then(Status::parse)
            .unwrap_or(Status::Pending)
    }

    pub fn is_open(&self) -> bool {
        self.status() != Status::Completed
    }

    /// Claude Code's hidden per-teammate tracker tasks (`metadata._internal: true`).
    pub fn is_internal(&self) -> bool {
        self.0
            .get("metadata")
            .and_then(|m| m.get("_internal"))
            .is_some_and(|v| v == &Value::Bool(true))
    }

    fn ids(&self, key: &str) -> Vec<u64> {
        self.0
            .get(key)
            .and_then(Value::as_array)
            .map(|ids| {
                ids.iter()
                    .filter_map(Value::as_str)
                    .filter_map(|id| id.parse().ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The tasks this one blocks.
    pub fn blocks(&self) -> Vec<u64> {
        self.ids("blocks")
    }

    /// The tasks that must be completed before this one can be claimed.
    pub fn blocked_by(&self) -> Vec<u64> {
        self.ids("blockedBy")
    }

    fn set_ids(&mut self, key: &str, ids: &[u64]) {
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        let ids = ids.iter().map(|id| Value::String(id.to_string())).collect();
        self.0.insert(key.into(), Value::Array(ids));
    }

    pub(crate) fn set_blocks(&mut self, ids: &[u64]) {
        self.set_ids("blocks", ids);
    }

    pub(crate) fn set_blocked_by(&mut self, ids: &[u64]) {
        self.set_ids("blockedBy", ids);
    }

    /// The same task under another id.
    #[must_use]
    pub fn with_id(mut self, id: u64) -> Self {
        self.0.insert("id".into(), id.to_string().into());
        self
    }

    pub fn set_subject(&mut self, subject: &str) {
        self.0.insert("subject".into(), subject.into());
    }

    pub fn set_description(&mut self, description: &str) {
        self.0.insert("description".into(), description.into());
    }

    pub fn set_active_form(&mut self, form: &str) {
        self.0.insert("activeForm".into(), form.into());
    }

    pub fn set_status(&mut self, status: Status) {
        self.0.insert("status".into(), status.as_str().into());
    }

    /// Sets the owner, or removes the field (Claude Code writes no owner as none at all).
    pub fn set_owner(&mut self, owner: Option<&str>) {
        match owner {
            Some(owner) => {
                self.0.insert("owner".into(), owner.into());
            }
            None => {
                self.0.shift_remove("owner");
            }
        }
    }

    /// `metadata.<key>`, when the task has it.
    pub fn metadata(&self, key: &str) -> Option<&Value> {
        self.0.get("metadata").and_then(|m| m.get(key))
    }

    /// Sets `metadata.<key>`, keeping what else metadata holds.
    pub fn set_metadata(&mut self, key: &str, value: Value) {
        let metadata = self
            .0
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()));
        if !metadata.is_object() {
            *metadata = Value::Object(Map::new());
        }
        if let Some(map) = metadata.as_object_mut() {
            map.insert(key.into(), value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_tasks_round_trip_every_field_in_order() {
        let raw = r#"{"id":"3","subject":"S","description":"D","activeForm":"Doing","owner":"bob","status":"in_progress","blocks":["4"],"blockedBy":["1"],"metadata":{"_internal":true},"extra":{"x":1}}"#;
        let mut task = Task::parse(raw.as_bytes(), 3).unwrap();
        assert!(task.is_internal());
        assert_eq!(task.blocks(), [4]);
        assert_eq!(task.blocked_by(), [1]);
        task.set_status(Status::Completed);
        let back: Value = serde_json::from_slice(&task.to_bytes()).unwrap();
        let keys: Vec<&String> = back.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "id",
                "subject",
                "description",
                "activeForm",
                "owner",
                "status",
                "blocks",
                "blockedBy",
                "metadata",
                "extra"
            ]
        );
        assert_eq!(back["extra"]["x"], 1);
        assert_eq!(back["status"], "completed");
    }

    #[test]
    fn files_that_are_no_task_are_refused() {
        for bad in [
            "[]",
            "{",
            r#"{"id":"4","subject":"S","status":"pending"}"#,
            r#"{"id":"3","status":"pending"}"#,
            r#"{"id":"3","subject":"S","status":"done"}"#,
            r#"{"id":"3","subject":"S","status":"pending","blocks":[1]}"#,
        ] {
            assert!(Task::parse(bad.as_bytes(), 3).is_none(), "{bad}");
        }
    }

    #[test]
    fn new_tasks_are_pretty_with_two_spaces_and_no_owner_field_when_unowned() {
        let task = Task::new(1, "S", "D", None, None);
        let text = String::from_utf8(task.to_bytes()).unwrap();
        assert!(
            text.starts_with("{\n  \"id\": \"1\",\n  \"subject\": \"S\""),
            "{text}"
        );
        assert!(!text.contains("owner"));
    }
}
