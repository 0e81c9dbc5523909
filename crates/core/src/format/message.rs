//! One inbox element. It is kept as the JSON object it was read as, so a rewrite preserves every
//! field (and the order of fields) that Claude Code or another tool wrote (docs/ARCHITECTURE.md,
//! "An inbox").

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::base::{clock, ids};
use crate::error::{Error, Result};
use crate::format::structured::Structured;

/// The field that marks one copy of a broadcast (swarm's own; other tools keep it as they keep
/// every field they do not know).
const BROADCAST: &str = "broadcast";

/// Message text above this many bytes is refused before anything is written.
pub const MAX_TEXT_BYTES: usize = 1024 * 1024;

/// The largest answer to a permission ask: it carries the ask's input back whole, as large as the
/// teammate made it, up to this.
pub const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;

/// An object with string `from`, `text` and `timestamp`; anything else it carries is kept as is.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct InboxMessage(Map<String, Value>);

impl InboxMessage {
    /// A new message with a fresh `msg_id`, fields in the order Claude Code writes them.
    pub fn new(from: &str, text: &str, summary: Option<&str>, color: Option<&str>) -> Self {
        let mut fields = Map::new();
        fields.insert("from".into(), from.into());
        fields.insert("text".into(), text.into());
        if let Some(summary) = summary {
            fields.insert("summary".into(), summary.into());
        }
        fields.insert("timestamp".into(), clock::timestamp_now().into());
        if let Some(color) = color {
            fields.insert("color".into(), color.into());
        }
        fields.insert("read".into(), false.into());
        fields.insert("msg_id".into(), ids::fresh().to_string().into());
        Self(fields)
    }

    /// Accepts `value` if it has the required string fields, else hands it back to be moved aside.
    pub fn from_value(value: Value) -> Result<Self, Value> {
        match value {
            Value::Object(fields) if is_valid(&fields) => Ok(Self(fields)),
            other => Err(other),
        }
    }

    pub fn from(&self) -> &str {
        self.str_field("from").unwrap_or_default()
    }

    pub fn text(&self) -> &str {
        self.str_field("text").unwrap_or_default()
    }

    /// The one-line preview the sender gave, if any.
    pub fn summary(&self) -> Option<&str> {
        self.str_field("summary")
    }

    pub fn timestamp(&self) -> &str {
        self.str_field("timestamp").unwrap_or_default()
    }

    /// Whether another tool marked it read (`"read": true`; agent-team-mail's reader does, and
    /// keeps it in the file). Such a message is not unread for swarm.
    pub fn is_read(&self) -> bool {
        self.0.get("read") == Some(&Value::Bool(true))
    }

    /// The `msg_id`, or for a message written without one (Claude Code's own), a stable id derived
    /// from its content, so it can still be named and deduplicated.
    pub fn id(&self) -> Cow<'_, str> {
        match self.str_field("msg_id") {
            Some(id) => Cow::Borrowed(id),
            None => {
                let key = format!("{}\0{}\0{}", self.from(), self.timestamp(), self.text());
                Cow::Owned(ids::derived(&key))
            }
        }
    }

    /// Replaces the `msg_id`, for messages whose id is derived from what they record.
    pub fn set_id(&mut self, id: &str) {
        self.0.insert("msg_id".into(), id.into());
    }

    /// Sets one field, keeping its place if it is already there.
    pub fn set_field(&mut self, key: &str, value: Value) {
        self.0.insert(key.into(), value);
    }

    /// Whether it is one copy of a broadcast: `send '*'` writes each member's copy with the same
    /// `msg_id` and `"broadcast": true`, so a reader of several inboxes shows it once.
    pub(crate) fn is_broadcast(&self) -> bool {
        self.0.get(BROADCAST) == Some(&Value::Bool(true))
    }

    /// Marks it as a broadcast, before its copies are made.
    pub fn mark_broadcast(&mut self) {
        self.set_field(BROADCAST, Value::Bool(true));
    }

    /// The protocol message inside `text`, if it is one.
    pub fn structured(&self) -> Option<Structured> {
        Structured::parse(self.text())
    }

    pub fn fields(&self) -> &Map<String, Value> {
        &self.0
    }

    fn str_field(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }
}

impl<'de> Deserialize<'de> for InboxMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Self::from_value(Value::deserialize(deserializer)?).map_err(|_| {
            serde::de::Error::custom(
                "an inbox message needs string fields from, text and timestamp",
            )
        })
    }
}

fn is_valid(fields: &Map<String, Value>) -> bool {
    ["from", "text", "timestamp"]
        .iter()
        .all(|key| fields.get(*key).is_some_and(Value::is_string))
}

/// Refuses text over the size limit, before anything is written.
pub fn check_text_size(text: &str) -> Result<()> {
    if text.len() > MAX_TEXT_BYTES {
        return Err(Error::usage(format!(
            "message text is {} bytes; the limit is {MAX_TEXT_BYTES} bytes (1 MiB)",
            text.len()
        ))
        .with_hint("write large content to a file and send its path instead"));
    }
    Ok(())
}

/// `[from <sender>] <text>`: how a message is pasted into a pane or printed by `listen`. It is
/// raw: what shows it makes it safe for a terminal (docs/ARCHITECTURE.md, "Terminal output").
pub fn framed(from: &str, text: &str) -> String {
    format!("[from {from}] {text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLAUDE_CODE_ENTRY: &str = r#"{"from": "bob", "text": "{\"type\":\"idle_notification\",\"from\":\"bob\",\"timestamp\":\"2026-11-22T08:43:40.970Z\",\"idleReason\":\"available\",\"result\":\"…\"}",
 "timestamp": "2026-11-22T08:43:40.970Z", "color": "blue", "msgV": 1,
 "msg_id": "f3f1d56c-4527-4d9e-a7d4-5783b9f0726d", "type": "message", "read": false}"#;

    #[test]
    fn claude_code_entry_round_trips_every_field_in_order() {
        let message: InboxMessage = serde_json::from_str(CLAUDE_CODE_ENTRY).unwrap();
        assert_eq!(message.from(), "bob");
        assert_eq!(message.id(), "f3f1d56c-4527-4d9e-a7d4-5783b9f0726d");
        let original: Value = serde_json::from_str(CLAUDE_CODE_ENTRY).unwrap();
        let written = serde_json::to_string(&message).unwrap();
        assert_eq!(written, serde_json::to_string(&original).unwrap());
        assert!(matches!(
            message.structured(),
            Some(Structured::IdleNotification(_))
        ));
    }

    #[test]
    fn messages_without_msg_id_get_a_stable_derived_id() {
        let raw = r#"{"from":"a","text":"hi","timestamp":"2026-11-22T08:43:40.970Z"}"#;
        let one: InboxMessage = serde_json::from_str(raw).unwrap();
        let two: InboxMessage = serde_json::from_str(raw).unwrap();
        assert_eq!(one.id(), two.id());
        assert!(!serde_json::to_string(&one).unwrap().contains("msg_id"));
    }

    #[test]
    fn elements_missing_required_strings_are_rejected() {
        for bad in [
            r#"{"from":"a","text":"hi"}"#,
            r#"{"from":1,"text":"hi","timestamp":"t"}"#,
            r#""just a string""#,
            "[]",
        ] {
            let value: Value = serde_json::from_str(bad).unwrap();
            assert!(InboxMessage::from_value(value).is_err(), "{bad}");
        }
    }

    #[test]
    fn new_messages_carry_ids_and_unread_flag() {
        let message = InboxMessage::new("lead", "hello", Some("greeting"), Some("blue"));
        let keys: Vec<_> = message.fields().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "from",
                "text",
                "summary",
                "timestamp",
                "color",
                "read",
                "msg_id"
            ]
        );
        assert_ne!(
            message.id(),
            InboxMessage::new("lead", "hello", None, None).id()
        );
    }

    #[test]
    fn size_limit_is_exact() {
        assert!(check_text_size(&"x".repeat(MAX_TEXT_BYTES)).is_ok());
        let err = check_text_size(&"x".repeat(MAX_TEXT_BYTES + 1)).unwrap_err();
        assert_eq!(err.kind(), crate::error::ErrorKind::Usage);
    }
}
