//! How things look on stdout: a message as one line of text for people and `read`, or as its JSON
//! object; a member's ending; a time in JSON (docs/ARCHITECTURE.md, "JSON output").

use serde::Serialize;
use serde_json::{Map, Value};

use crate::base::clock;
use crate::base::screen::visible;
use crate::format::config::Member;
use crate::format::message::InboxMessage;
use crate::format::settings::Color;
use crate::format::signature::Verdict;
use crate::format::structured::Structured;

/// The body as a person reads it: a protocol message described in one line, else the text.
pub(crate) fn body(message: &InboxMessage) -> String {
    match message.structured() {
        Some(structured) => structured.describe(),
        None => message.text().to_owned(),
    }
}

/// The sender as shown: marked `(forged)` when the message claims to come from the lead's side
/// and does not prove it (docs/ARCHITECTURE.md, "Signed lead messages").
pub(crate) fn sender(message: &InboxMessage, verdict: Verdict) -> String {
    if verdict.is_forged() {
        format!("{}(forged)", message.from())
    } else {
        message.from().to_owned()
    }
}

/// `<msg_id>  <from>  <body>`: what `recv` and `inbox` print, easy to split with `read -r id from body`.
pub(crate) fn line(message: &InboxMessage, verdict: Verdict) -> String {
    format!(
        "{}  {}  {}",
        message.id(),
        sender(message, verdict),
        body(message)
    )
}

/// `08:43:40  bob → alice  <body>`: what `watch` prints; `to` is `*` for a broadcast.
pub(crate) fn arrival(message: &InboxMessage, to: &str, verdict: Verdict) -> String {
    let time = message
        .timestamp()
        .get(11..19)
        .filter(|time| time.len() == 8)
        .unwrap_or("--:--:--");
    format!(
        "{time}  {} → {to}  {}",
        sender(message, verdict),
        body(message)
    )
}

/// The message's own JSON object, with `msg_id` filled in, extra keys first, `structured` after
/// `text` (the protocol message it holds, decoded, or `null`), its `timestamp` in the one format
/// times have in JSON, and `verified` (`true`, or `false` for a forged one) when it claims to come
/// from the lead's side.
pub(crate) fn json(message: &InboxMessage, verdict: Verdict, extra: &[(&str, Value)]) -> Value {
    let mut object = Map::new();
    for (key, value) in extra {
        object.insert((*key).to_owned(), value.clone());
    }
    for (key, value) in message.fields() {
        if key == "timestamp" {
            object.insert(key.clone(), timestamp(value));
        } else {
            object.insert(key.clone(), value.clone());
        }
        if key == "text" {
            let decoded = message.structured().map_or(Value::Null, |s| structured(&s));
            object.insert("structured".to_owned(), decoded);
        }
    }
    object
        .entry("msg_id")
        .or_insert_with(|| Value::String(message.id().into_owned()));
    if let Some(verified) = verdict.verified() {
        object.insert("verified".to_owned(), Value::Bool(verified));
    }
    Value::Object(object)
}

/// A protocol message as its JSON object, `type` first, with Claude Code's field names, its
/// `timestamp` in the one format.
pub(crate) fn structured(message: &Structured) -> Value {
    let mut value = serde_json::to_value(message).unwrap_or(Value::Null);
    if let Some(stamp) = value.get_mut("timestamp") {
        *stamp = timestamp(stamp);
    }
    value
}

/// A time in JSON: RFC 3339, UTC, with milliseconds; `null` for none, or for 0, which config.json
/// uses for a time it does not know.
pub(crate) fn time(ms: Option<u64>) -> Option<String> {
    ms.filter(|ms| *ms > 0).map(clock::format_ms)
}

/// A time read from a file that keeps it in epoch milliseconds, as JSON shows it: `key` as
/// RFC 3339 and `keyMs` as the integer, each `null` when there is none.
pub(crate) fn put_time(object: &mut Map<String, Value>, key: &str, ms: Option<u64>) {
    let ms = ms.filter(|ms| *ms > 0);
    object.insert(key.to_owned(), time(ms).into());
    object.insert(format!("{key}Ms"), ms.into());
}

/// `value`, an object, with each of `keys` that holds epoch milliseconds shown as [`put_time`]
/// shows it, in its place; other fields are kept in their order.
pub(crate) fn with_times(value: Value, keys: &[&str]) -> Value {
    let Value::Object(fields) = value else {
        return value;
    };
    let mut object = Map::new();
    for (key, value) in fields {
        if keys.contains(&key.as_str()) && (value.is_u64() || value.is_null()) {
            put_time(&mut object, &key, value.as_u64());
        } else {
            object.insert(key, value);
        }
    }
    Value::Object(object)
}

/// A message's timestamp in the one format, when it is a time; as it was written when it is not.
fn timestamp(value: &Value) -> Value {
    value
        .as_str()
        .and_then(clock::parse_ms)
        .map_or_else(|| value.clone(), |ms| clock::format_ms(ms).into())
}

/// One JSON object of a stream whose lines are of several kinds: `event` first, then `fields`.
pub(crate) fn event(event: &str, fields: Map<String, Value>) -> Value {
    let mut object = Map::new();
    object.insert("event".to_owned(), event.into());
    object.extend(fields);
    Value::Object(object)
}

/// A member's ending, as `wait`, `stop`, `down` and `up --wait` print it with `--json`: `state` as
/// `status` shows it (`exited`, `failed`, `killed`, `vanished`, `pane-gone`), and `notice`, the
/// completion notice the lead was sent, or `null`.
pub(crate) fn ending(member: &Member, state: &str) -> Map<String, Value> {
    let mut object = Map::new();
    object.insert("name".to_owned(), member.name.clone().into());
    object.insert("agentId".to_owned(), member.agent_id.clone().into());
    object.insert("state".to_owned(), state.into());
    object.insert("exitCode".to_owned(), member.exit_code.into());
    object.insert("reason".to_owned(), member.reason.clone().into());
    put_time(&mut object, "endedAt", member.ended_at);
    object.insert("notice".to_owned(), to_value(member.notice.as_ref()));
    object
}

/// Anything swarm's own types hold, as JSON (they always serialise).
pub(crate) fn to_value(value: impl Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// An argv as a person would type it.
pub(crate) fn shell_words(argv: &[String]) -> String {
    shlex::try_join(argv.iter().map(String::as_str)).unwrap_or_else(|_| format!("{argv:?}"))
}

/// `bob    | `: what each line of a member's output starts with when several members' lines are
/// shown together (`log --all`): its name padded to `width`, in the member's colour when `colour`.
pub(crate) fn member_prefix(member: &Member, width: usize, colour: bool) -> String {
    let name = visible(&member.name);
    let padded = format!("{name:<width$}");
    let style = member
        .color
        .as_deref()
        .and_then(Color::parse)
        .filter(|_| colour)
        .map(|color| anstyle::Style::new().fg_color(Some(color.ansi())));
    match style {
        Some(style) => format!("{style}{padded}{style:#} | "),
        None => format!("{padded} | "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc_3339_with_their_milliseconds_beside() {
        let shown = with_times(
            serde_json::json!({"name": "bob", "joinedAt": 1_767_225_600_250_u64, "startedAt": 0, "endedAt": null, "pid": 7}),
            &["joinedAt", "startedAt", "endedAt"],
        );
        assert_eq!(
            serde_json::to_string(&shown).unwrap(),
            r#"{"name":"bob","joinedAt":"2026-01-01T00:00:00.250Z","joinedAtMs":1767225600250,"startedAt":null,"startedAtMs":null,"endedAt":null,"endedAtMs":null,"pid":7}"#
        );
    }

    #[test]
    fn a_message_shows_its_protocol_message_decoded_beside_its_text() {
        let text = r#"{"type":"shutdown_request","requestId":"shutdown-1@bob","from":"team-lead","timestamp":"2026-01-01T01:00:00+01:00"}"#;
        let mut message = InboxMessage::new("team-lead", text, None, None);
        message.set_field("timestamp", "2026-01-01T00:00:00Z".into());
        let shown = json(&message, Verdict::NotClaimed, &[("to", "bob".into())]);
        let keys: Vec<&str> = shown
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "to",
                "from",
                "text",
                "structured",
                "timestamp",
                "read",
                "msg_id"
            ]
        );
        assert_eq!(shown["text"], text, "the raw text stays");
        assert_eq!(
            shown["structured"],
            serde_json::json!({"type": "shutdown_request", "requestId": "shutdown-1@bob", "from": "team-lead", "timestamp": "2026-01-01T00:00:00.000Z"})
        );
        assert_eq!(shown["timestamp"], "2026-01-01T00:00:00.000Z");
        let plain = json(
            &InboxMessage::new("bob", "hi", None, None),
            Verdict::NotClaimed,
            &[],
        );
        assert_eq!(plain["structured"], Value::Null);
    }

    #[test]
    fn a_prefix_is_the_padded_name_in_its_colour() {
        let mut bob = Member::new("bob", "t", 0);
        bob.color = Some("red".into());
        assert_eq!(member_prefix(&bob, 5, false), "bob   | ");
        assert_eq!(member_prefix(&bob, 5, true), "\x1b[31mbob  \x1b[0m | ");
        bob.color = Some("mauve".into());
        assert_eq!(
            member_prefix(&bob, 3, true),
            "bob | ",
            "a colour swarm lacks is none"
        );
    }
}
