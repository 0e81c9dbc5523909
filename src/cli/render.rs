//! How things look on stdout: a message as one line of text for people and `read`, or as its JSON
//! object; a member's ending; a time in JSON (docs/ARCHITECTURE.md, "JSON output").

use serde::Serialize;
use serde_json::{Map, Value};

use crate::base::clock;
use crate::base::screen::visible;
use crate::base::secrets;
use crate::base::text::derive_summary;
use crate::cli::output::{Report, Table};
use crate::format::config::Member;
use crate::format::message::InboxMessage;
use crate::format::settings::{Color, Delivery, EnvPolicy};
use crate::format::signature::Verdict;
use crate::format::structured::Structured;
use crate::format::structured::TaskNotification;
use crate::format::task::Task;
use crate::store::tasks::Board;

/// The body as a person reads it: a protocol message described in one line, else the text.
pub(crate) fn body(message: &InboxMessage) -> String {
    match message.structured() {
        Some(structured) => structured.describe(),
        None => message.text().to_owned(),
    }
}

/// The sender as shown: marked `(forged)` when it does not prove it speaks for the lead.
pub(crate) fn sender(message: &InboxMessage, verdict: Verdict) -> String {
    verdict.sender(message)
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

/// A member's ending, as `wait`, `stop`, `down` and `up --wait` print it with `--json`: `state` as
/// `status` shows it (`exited`, `failed`, `killed`, `vanished`, `pane-gone`), and `notice`, the
/// completion notice the lead was sent, or `null`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Ending<'a> {
    pub(crate) name: &'a str,
    agent_id: &'a str,
    pub(crate) state: &'a str,
    exit_code: Option<i32>,
    reason: Option<&'a str>,
    ended_at: Option<String>,
    ended_at_ms: Option<u64>,
    pub(crate) notice: Option<&'a TaskNotification>,
}

impl<'a> Ending<'a> {
    pub(crate) fn of(member: &'a Member, state: &'a str) -> Self {
        let ended_at_ms = member.ended_at.filter(|ms| *ms > 0);
        Self {
            name: &member.name,
            agent_id: &member.agent_id,
            state,
            exit_code: member.exit_code,
            reason: member.reason.as_deref(),
            ended_at: time(ended_at_ms),
            ended_at_ms,
            notice: member.notice.as_ref(),
        }
    }

    /// The line `stop`, `down` and `wait` show for it: the notice's summary, else name and state.
    pub(crate) fn line(&self) -> String {
        self.notice.map_or_else(
            || format!("{} {}", self.name, self.state),
            |notice| notice.summary.clone(),
        )
    }
}

/// One object of a stream that mixes kinds: `event` first, then the fields of what happened.
#[derive(Serialize)]
pub(crate) struct Tagged<'a, T> {
    pub(crate) event: &'a str,
    #[serde(flatten)]
    pub(crate) fields: T,
}

impl<T: Report> Report for Tagged<'_, T> {
    fn text(&self) -> crate::error::Result<()> {
        self.fields.text()
    }
}

/// Anything swarm's own types hold, as JSON (they always serialise).
pub(crate) fn to_value(value: impl Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// An argv as a person would type it.
pub(crate) fn shell_words(argv: &[String]) -> String {
    shlex::try_join(argv.iter().map(String::as_str)).unwrap_or_else(|_| format!("{argv:?}"))
}

/// One effective setting of a member, as `info` and `up --dry-run` show it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Setting {
    /// Its name for people: `paste format`.
    pub(crate) label: &'static str,
    /// Its name in JSON, config.json's: `pasteFormat`.
    pub(crate) field: &'static str,
    /// Its value for people, on one line: `-` for none.
    pub(crate) text: String,
    pub(crate) value: Value,
}

/// Every setting `member` runs with, its defaults applied: what it was launched with, from the
/// team file or spawn's flags, as config.json records it.
pub(crate) fn settings(member: &Member) -> Vec<Setting> {
    let setting = |label, field, text: String, value: Value| Setting {
        label,
        field,
        text: if text.is_empty() {
            "-".to_owned()
        } else {
            text
        },
        value,
    };
    let optional = |label, field, value: Option<&String>| {
        setting(
            label,
            field,
            value.map(|v| visible(v)).unwrap_or_default(),
            value.map_or(Value::Null, |v| Value::String(v.clone())),
        )
    };
    let paste = (member.delivery() == Delivery::Paste).then(|| member.paste_format());
    let paste_text = match &paste {
        None => String::new(),
        // A template may hold a newline: shown escaped, on its one line.
        Some(Ok(format)) => format
            .as_str()
            .chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_debug().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
        Some(Err(err)) => err.message().to_owned(),
    };
    let paste_value = match &paste {
        Some(Ok(format)) => Value::String(format.as_str().to_owned()),
        _ => Value::Null,
    };
    let profile = member.profile.unwrap_or_default();
    let plan_mode = member.plan_mode_required.unwrap_or(false);
    let isolation = member.isolation.unwrap_or_default();
    vec![
        setting(
            "profile",
            "profile",
            profile.as_str().to_owned(),
            profile.as_str().into(),
        ),
        // As config.json records them, defaults and all: `up --dry-run` shows what `info` will.
        setting(
            "agent type",
            "agentType",
            visible(member.agent_type()),
            member.agent_type().into(),
        ),
        setting(
            "model",
            "model",
            visible(member.model()),
            member.model().into(),
        ),
        optional("color", "color", member.color.as_ref()),
        setting(
            "plan mode",
            "planModeRequired",
            if plan_mode { "required" } else { "" }.to_owned(),
            plan_mode.into(),
        ),
        setting(
            "prompt",
            "prompt",
            member
                .prompt
                .as_deref()
                .map(|prompt| visible(&derive_summary(prompt)))
                .unwrap_or_default(),
            member.prompt.clone().map_or(Value::Null, Value::String),
        ),
        setting(
            "protocol",
            "protocol",
            member.protocol().as_str().to_owned(),
            member.protocol().as_str().into(),
        ),
        setting(
            "delivery",
            "delivery",
            member.delivery().as_str().to_owned(),
            member.delivery().as_str().into(),
        ),
        setting("paste format", "pasteFormat", paste_text, paste_value),
        setting(
            "run timeout",
            "runTimeoutS",
            member
                .run_timeout_s
                .map(|secs| format!("{secs}s"))
                .unwrap_or_default(),
            member.run_timeout_s.into(),
        ),
        setting(
            "isolation",
            "isolation",
            isolation.as_str().to_owned(),
            isolation.as_str().into(),
        ),
        setting(
            "cwd",
            "cwd",
            visible(&member.cwd),
            member.cwd.clone().into(),
        ),
        setting(
            "log max",
            "logMax",
            member.log_max.map(size).unwrap_or_default(),
            member.log_max.into(),
        ),
        setting(
            "inherits",
            "envPolicy",
            visible(&inherits(&member.env_policy)),
            serde_json::json!({
                "envClear": member.env_policy.clear,
                "envKeep": member.env_policy.keep,
                "envRemove": member.env_policy.remove,
            }),
        ),
    ]
}

/// What a member's program inherits from its pane, by its rules (names only).
pub(crate) fn inherits(policy: &EnvPolicy) -> String {
    let join = |names: &std::collections::BTreeSet<String>| {
        names
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let kept = match (policy.clear, policy.keep.is_empty()) {
        (false, _) => "everything".to_owned(),
        (true, true) => "nothing".to_owned(),
        (true, false) => format!("only {}", join(&policy.keep)),
    };
    if policy.remove.is_empty() {
        kept
    } else {
        format!("{kept}, never {}", join(&policy.remove))
    }
}

/// Settings as one JSON object, each under its config.json name.
pub(crate) fn settings_object(settings: &[Setting]) -> Value {
    Value::Object(
        settings
            .iter()
            .map(|setting| (setting.field.to_owned(), setting.value.clone()))
            .collect(),
    )
}

/// A size in bytes as a person writes it in a team file: `64MiB`, `1536KiB`, `1000B`.
pub(crate) fn size(bytes: u64) -> String {
    match bytes {
        0 => "0B".to_owned(),
        b if b % (1 << 30) == 0 => format!("{}GiB", b >> 30),
        b if b % (1 << 20) == 0 => format!("{}MiB", b >> 20),
        b if b % (1 << 10) == 0 => format!("{}KiB", b >> 10),
        b => format!("{b}B"),
    }
}

/// An environment variable's value as swarm shows it: masked by the one rule of
/// `base::secrets` (docs/ARCHITECTURE.md, "Secrets and the environment"). Every command that
/// shows a member's environment asks here.
pub(crate) fn env_value(name: &str, value: &str) -> String {
    visible(&secrets::shown(name, value))
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

/// The board as `swarm task list` and `up --wait` show it: one row a task of `shown`.
pub(crate) fn board_table(board: &Board, shown: &[&Task]) -> Table {
    let mut table = Table::new(&["ID", "STATUS", "OWNER", "BLOCKED-BY", "SUBJECT"]);
    for task in shown {
        table.row(vec![
            task.id().to_string(),
            task.status().to_string(),
            task.owner().unwrap_or("-").to_owned(),
            task_ids(&board.open_blockers(task)),
            task.subject().to_owned(),
        ]);
    }
    table
}

/// Task ids as a column shows them: `1,3`, or `-` for none.
pub(crate) fn task_ids(ids: &[u64]) -> String {
    if ids.is_empty() {
        return "-".to_owned();
    }
    ids.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_looking_values_are_hidden_and_sizes_read_as_written() {
        for secret in [
            "ANTHROPIC_API_KEY",
            "GITHUB_TOKEN",
            "db_password",
            "AWS_SECRET_ACCESS_KEY",
        ] {
            assert_eq!(env_value(secret, "sk-1"), secrets::MASK, "{secret}");
        }
        for plain in ["RUST_LOG", "PATH", "SWARM_LEAD_VERIFY_KEY", "HTTPS_PROXY"] {
            assert_eq!(env_value(plain, "v"), "v", "{plain}");
        }
        assert_eq!(
            env_value("LANG", "a\u{1b}[31mb"),
            "a\\e[31mb",
            "no control reaches the terminal"
        );
        assert_eq!(size(64 << 20), "64MiB");
        assert_eq!(size(1536 << 10), "1536KiB");
        assert_eq!(size(1000), "1000B");
        assert_eq!(size(2 << 30), "2GiB");
    }

    #[test]
    fn settings_show_the_defaults_a_member_runs_with() {
        let mut bob = Member::new("bob", "t", 0);
        bob.delivery = Some(Delivery::Paste);
        bob.paste_format = Some("# {from}\n{text}".into());
        bob.run_timeout_s = Some(60);
        bob.log_max = Some(4096);
        let shown: Vec<(&str, String)> = settings(&bob)
            .into_iter()
            .map(|setting| (setting.label, setting.text))
            .collect();
        for row in [
            ("profile", "generic"),
            ("protocol", "native"),
            ("delivery", "paste"),
            ("paste format", "# {from}\\n{text}"),
            ("run timeout", "60s"),
            ("isolation", "none"),
            ("log max", "4KiB"),
            // As config.json records them: what `up --dry-run` and `info` both show.
            ("agent type", "general-purpose"),
            ("model", "default"),
            ("plan mode", "-"),
        ] {
            assert!(
                shown.contains(&(row.0, row.1.to_owned())),
                "{row:?} in {shown:?}"
            );
        }
    }

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
