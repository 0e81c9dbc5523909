//! How a message looks on stdout: one line of text for people and `read`, or its JSON object.

use serde_json::{Map, Value};

use crate::message::InboxMessage;

/// The body as a person reads it: a protocol message described in one line, else the text.
pub fn body(message: &InboxMessage) -> String {
    match message.structured() {
        Some(structured) => structured.describe(),
        None => message.text().to_owned(),
    }
}

/// `<msg_id>  <from>  <body>`: what `recv` and `inbox` print, easy to split with `read -r id from body`.
pub fn line(message: &InboxMessage) -> String {
    format!("{}  {}  {}", message.id(), message.from(), body(message))
}

/// `08:43:40  bob → alice  <body>`: what `watch` prints.
pub fn arrival(message: &InboxMessage, to: &str) -> String {
    let time = message
        .timestamp()
        .get(11..19)
        .filter(|time| time.len() == 8)
        .unwrap_or("--:--:--");
    format!("{time}  {} → {to}  {}", message.from(), body(message))
}

/// `[from <sender>] <text>`: how a message is pasted into a pane or printed by `listen`.
pub fn pasted(from: &str, text: &str) -> String {
    format!("[from {from}] {text}")
}

/// The message's own JSON object, with `msg_id` filled in and extra keys first.
pub fn json(message: &InboxMessage, extra: &[(&str, Value)]) -> Value {
    let mut object = Map::new();
    for (key, value) in extra {
        object.insert((*key).to_owned(), value.clone());
    }
    for (key, value) in message.fields() {
        object.insert(key.clone(), value.clone());
    }
    object
        .entry("msg_id")
        .or_insert_with(|| Value::String(message.id().into_owned()));
    Value::Object(object)
}
