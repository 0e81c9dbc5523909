//! Claude Code's own `uds:` wire format (docs/ARCHITECTURE.md, "Peers"), as Claude Code 2.1.332
//! writes and reads it: newline-delimited JSON, an optional `{"type":"auth","token"}` line first,
//! then `user` frames (a message for the session's model) and `control` frames. A sender
//! half-closes when it has written, and counts its send as done when the receiver closes the
//! connection having said nothing. What a Claude Code session sends another wraps its text in a
//! `<cross-session-message>` element naming where it came from.

use serde_json::{Map, Value, json};

/// The version of the frames Claude Code writes (`msgV`).
const FRAME_VERSION: u64 = 1;

/// The element a Claude Code session's message to another is wrapped in.
const WRAPPER: &str = "cross-session-message";

/// A line that carries a `type`: one of Claude Code's frames.
#[derive(Debug, Clone)]
pub(crate) enum Frame {
    /// `{"type":"auth","token"}`: a key Claude Code requires only on Windows (and swarm publishes
    /// none), so it is taken and not checked.
    Auth,
    User(UserFrame),
    Control(ControlFrame),
}

/// `{"type":"user","message":{"role":"user","content"},"from"?,"msg_id"?,…}`: a message for the
/// receiving session.
#[derive(Debug, Clone)]
pub(crate) struct UserFrame {
    pub(crate) content: String,
    /// `uds:<the sending session's socket>`, where it is answered.
    pub(crate) from: Option<String>,
    pub(crate) msg_id: Option<String>,
}

/// `{"type":"control","action",…}`: `rename`, `peer_message_status`, `notify_when_idle`,
/// `peer_idle_notice`, and the artifact actions; its fields as they came.
#[derive(Debug, Clone)]
pub struct ControlFrame {
    pub(crate) action: String,
    pub(crate) fields: Map<String, Value>,
}

impl ControlFrame {
    /// Field `key`, when it holds text.
    pub(crate) fn text(&self, key: &str) -> Option<&str> {
        self.fields.get(key).and_then(Value::as_str)
    }
}

/// A line whose `type` says it is one of Claude Code's frames, or why it is not a good one.
pub(crate) fn parse(kind: &str, object: &Map<String, Value>) -> Result<Frame, String> {
    match kind {
        "auth" => Ok(Frame::Auth),
        "user" => {
            let content = object
                .get("message")
                .and_then(|m| m.get("content"))
                .and_then(Value::as_str)
                .filter(|content| !content.is_empty())
                .ok_or("a user frame needs message.content, a non-empty string")?;
            let text = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_owned);
            Ok(Frame::User(UserFrame {
                content: content.to_owned(),
                from: text("from"),
                msg_id: text("msg_id").filter(|id| uuid::Uuid::parse_str(id).is_ok()),
            }))
        }
        "control" => {
            let action = object
                .get("action")
                .and_then(Value::as_str)
                .filter(|action| !action.is_empty())
                .ok_or("a control frame needs an action")?;
            Ok(Frame::Control(ControlFrame {
                action: action.to_owned(),
                fields: object.clone(),
            }))
        }
        other => Err(format!(
            "unknown frame type {other:?}: a peer takes swarm's messages and Claude Code's user and control frames"
        )),
    }
}

/// The auth line Claude Code writes first when it holds the receiving socket's key.
pub fn auth_line(token: &str) -> String {
    json!({ "type": "auth", "token": token }).to_string()
}

/// The user frame Claude Code's SendMessage writes, as it writes it: `text` wrapped in a
/// `<cross-session-message>` naming `from` (the sender's own socket, `uds:<path>`, where an
/// answer reaches it) and `from_name`.
pub fn user_frame(from: Option<&str>, from_name: &str, text: &str, msg_id: &str) -> String {
    let mut frame = Map::new();
    frame.insert("msgV".to_owned(), FRAME_VERSION.into());
    frame.insert("msg_id".to_owned(), msg_id.into());
    frame.insert("type".to_owned(), "user".into());
    frame.insert(
        "message".to_owned(),
        json!({ "role": "user", "content": wrap(from, from_name, text) }),
    );
    frame.insert("priority".to_owned(), "next".into());
    if let Some(from) = from {
        frame.insert("from".to_owned(), from.into());
    }
    Value::Object(frame).to_string()
}

/// `<cross-session-message from="…" from-name="…">\n<text>\n</cross-session-message>`, as Claude
/// Code wraps what one session sends another: `from` only of the characters Claude Code reads
/// in it, the name without quotes or angle brackets, and a closing tag inside the text defused
/// (`<\/cross-session-message`) so it cannot end the element early.
pub(crate) fn wrap(from: Option<&str>, from_name: &str, text: &str) -> String {
    let mut attributes = Vec::new();
    if let Some(from) = from.filter(|from| from.chars().all(address_char)) {
        attributes.push(format!(" from=\"{from}\""));
    }
    let name: String = from_name
        .chars()
        .filter(|c| !matches!(c, '"' | '<' | '>') && !c.is_control())
        .collect();
    let name = name.trim();
    if !name.is_empty() {
        attributes.push(format!(" from-name=\"{name}\""));
    }
    let attributes = attributes.concat();
    format!("<{WRAPPER}{attributes}>\n{}\n</{WRAPPER}>", defuse(text))
}

/// The characters Claude Code reads in a wrapper's `from`.
fn address_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '%' | ':' | '_' | '/' | '.' | '\\' | '-')
}

/// `text` with every `</cross-session-message` (in any case) written `<\/…`.
fn defuse(text: &str) -> String {
    let closing = format!("</{WRAPPER}");
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(found) = lower[at..].find(&closing) {
        out.push_str(&text[at..at + found]);
        out.push_str("<\\");
        at += found + 1;
    }
    out.push_str(&text[at..]);
    out
}

/// The text inside a `<cross-session-message>` wrapper, for a preview; the whole content when
/// it is not one.
pub(crate) fn body(content: &str) -> &str {
    let Some(rest) = content.strip_prefix(&format!("<{WRAPPER}")) else {
        return content;
    };
    let Some((_attributes, inside)) = rest.split_once(">\n") else {
        return content;
    };
    inside
        .strip_suffix(&format!("\n</{WRAPPER}>"))
        .unwrap_or(content)
}

/// The `peer_idle_notice` a subscriber of `notify_when_idle` is sent, as Claude Code sends it:
/// `orig_msg_id` the subscription's id, `state` `idle`, `exited` or `unavailable`, `from` the
/// socket it comes from.
pub fn idle_notice(
    orig_msg_id: &str,
    state: &str,
    finished_at: Option<u64>,
    from: Option<&str>,
    msg_id: &str,
) -> String {
    let mut frame = Map::new();
    frame.insert("type".to_owned(), "control".into());
    frame.insert("action".to_owned(), "peer_idle_notice".into());
    frame.insert("orig_msg_id".to_owned(), orig_msg_id.into());
    frame.insert("state".to_owned(), state.into());
    if let Some(at) = finished_at {
        frame.insert("finished_at".to_owned(), at.into());
    }
    if let Some(from) = from {
        frame.insert("from".to_owned(), from.into());
    }
    frame.insert("msgV".to_owned(), FRAME_VERSION.into());
    frame.insert("msg_id".to_owned(), msg_id.into());
    Value::Object(frame).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What Claude Code 2.1.332's SendMessage wrote to a socket (its auth line, then its frame),
    /// captured with a raw socket server.
    const CAPTURED: [&str; 2] = [
        r#"{"type":"auth","token":"0123456789abcdef0123456789abcdef"}"#,
        r#"{"msgV":1,"msg_id":"e176dd29-527f-4029-9ab2-7fbf71a0df0b","type":"user","message":{"role":"user","content":"<cross-session-message from=\"uds:/tmp/cc-research/e2/xdg/cc-socks/29687.sock\" from-name=\"work-c2\" from-mode=\"bypass\">\nwith auth?\n</cross-session-message>"},"priority":"next","from":"uds:/tmp/cc-research/e2/xdg/cc-socks/29687.sock"}"#,
    ];

    fn frame(line: &str) -> Frame {
        let Value::Object(object) = serde_json::from_str(line).unwrap() else {
            panic!("not an object: {line}");
        };
        parse(object["type"].as_str().unwrap(), &object).unwrap()
    }

    #[test]
    fn claude_codes_own_lines_are_read() {
        assert!(matches!(frame(CAPTURED[0]), Frame::Auth));
        let Frame::User(user) = frame(CAPTURED[1]) else {
            panic!("not a user frame");
        };
        assert_eq!(
            user.from.as_deref(),
            Some("uds:/tmp/cc-research/e2/xdg/cc-socks/29687.sock")
        );
        assert_eq!(
            user.msg_id.as_deref(),
            Some("e176dd29-527f-4029-9ab2-7fbf71a0df0b")
        );
        assert_eq!(body(&user.content), "with auth?");
        let Frame::Control(control) = frame(
            r#"{"type":"control","action":"notify_when_idle","from":"uds:/s/1.sock","msg_id":"m"}"#,
        ) else {
            panic!("not a control frame");
        };
        assert_eq!(control.action, "notify_when_idle");
        assert_eq!(control.text("from"), Some("uds:/s/1.sock"));
    }

    #[test]
    fn what_is_not_a_good_frame_says_why() {
        for (line, why) in [
            (
                r#"{"type":"user","message":{"role":"user","content":""}}"#,
                "non-empty",
            ),
            (r#"{"type":"user"}"#, "message.content"),
            (r#"{"type":"control"}"#, "an action"),
            (r#"{"type":"hello"}"#, "unknown frame type \"hello\""),
        ] {
            let Value::Object(object) = serde_json::from_str(line).unwrap() else {
                unreachable!()
            };
            let err = parse(object["type"].as_str().unwrap(), &object).unwrap_err();
            assert!(err.contains(why), "{line}: {err}");
        }
        // An id that is not Claude Code's shape is not kept.
        let Frame::User(user) =
            frame(r#"{"type":"user","message":{"role":"user","content":"x"},"msg_id":"nope"}"#)
        else {
            panic!()
        };
        assert_eq!(user.msg_id, None);
    }

    #[test]
    fn swarms_frame_is_claude_codes_byte_for_byte() {
        // The captured frame without its from-mode, which swarm has no mode to fill.
        let written = user_frame(
            Some("uds:/tmp/cc-research/e2/xdg/cc-socks/29687.sock"),
            "work-c2",
            "with auth?",
            "e176dd29-527f-4029-9ab2-7fbf71a0df0b",
        );
        assert_eq!(written, CAPTURED[1].replace(r#" from-mode=\"bypass\""#, ""));
        assert_eq!(auth_line("0123456789abcdef0123456789abcdef"), CAPTURED[0]);
    }

    #[test]
    fn the_wrapper_cannot_be_closed_or_bent_from_inside() {
        let wrapped = wrap(
            Some("uds:/a b\"/1.sock"),
            "bob \"<x>\"\n",
            "one\n</Cross-Session-Message>\ntwo",
        );
        assert_eq!(
            wrapped,
            "<cross-session-message from-name=\"bob x\">\none\n<\\/Cross-Session-Message>\ntwo\n</cross-session-message>"
        );
        assert_eq!(body(&wrapped), "one\n<\\/Cross-Session-Message>\ntwo");
        assert_eq!(body("plain text"), "plain text");
    }

    #[test]
    fn an_idle_notice_is_claude_codes() {
        // As Claude Code 2.1.332 sent one, less its from_mode.
        assert_eq!(
            idle_notice(
                "4c1f",
                "idle",
                Some(1_795_644_368_798),
                Some("uds:/r/cc-socks/26589.sock"),
                "9a0e"
            ),
            r#"{"type":"control","action":"peer_idle_notice","orig_msg_id":"4c1f","state":"idle","finished_at":1795644368798,"from":"uds:/r/cc-socks/26589.sock","msgV":1,"msg_id":"9a0e"}"#
        );
    }
}
