//! How a message looks on stdout: one line of text for people and `read`, or its JSON object.

use serde_json::{Map, Value};

use crate::base::screen::visible;
use crate::format::config::Member;
use crate::format::message::InboxMessage;
use crate::format::settings::Color;
use crate::format::signature::Verdict;

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

/// `08:43:40  bob → alice  <body>`: what `watch` prints.
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

/// The message's own JSON object, with `msg_id` filled in, extra keys first, and `verified`
/// (`true`, or `false` for a forged one) when it claims to come from the lead's side.
pub(crate) fn json(message: &InboxMessage, verdict: Verdict, extra: &[(&str, Value)]) -> Value {
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
    if let Some(verified) = verdict.verified() {
        object.insert("verified".to_owned(), Value::Bool(verified));
    }
    Value::Object(object)
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
