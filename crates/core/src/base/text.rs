//! Text for people: one-line previews, counts, and text made safe to show on a terminal.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `1 member`, `2 members`, `0 members`: a count with its noun in the number it takes.
pub fn count(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// A one-line preview: the first non-empty line, whitespace collapsed, at most 60 characters.
pub fn derive_summary(text: &str) -> String {
    const MAX_CHARS: usize = 60;
    let line = text
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("");
    let collapsed = line.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() <= MAX_CHARS {
        collapsed
    } else {
        let cut: String = collapsed.chars().take(MAX_CHARS - 1).collect();
        format!("{}…", cut.trim_end())
    }
}

/// How every line after the first of a text shown on a terminal begins: indented and marked, so
/// it can never pass for a line of its own, even after `read` strips the indentation.
pub(crate) const CONTINUATION: &str = "  | ";

/// `text` as it may reach a terminal (docs/ARCHITECTURE.md, "Terminal output"). Every character
/// a terminal would act on instead of showing is written out visibly: `\e`, `\a`, `\r`, `\b`,
/// `\f`, `\v` and `\0` by name, other C0 controls and DEL as `\x01`…`\x7f`, C1 controls, bidi
/// overrides, embeddings, isolates and marks, and the Unicode line and paragraph separators as
/// `\u{9b}`, `\u{202e}`. Tabs stay. A line break (`\n`, or `\r\n`) stays but starts the next line
/// with [`CONTINUATION`]; line breaks that end the text are dropped. Backslashes are not doubled:
/// this is for eyes, and `--json` carries the exact text.
pub fn for_terminal(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c == '\n' || hidden(c)) {
        return Cow::Borrowed(text);
    }
    let mut text = text;
    while let Some(rest) = text.strip_suffix('\n') {
        text = rest.strip_suffix('\r').unwrap_or(rest);
    }
    let mut shown = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => {
                shown.push('\n');
                shown.push_str(CONTINUATION);
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            c if hidden(c) => escape(c, &mut shown),
            c => shown.push(c),
        }
    }
    Cow::Owned(shown)
}

/// `text` as it may be typed into a program (a paste in its raw form or a template): as
/// [`for_terminal`] has it, but its line breaks kept as they are, with no continuation mark, for
/// the program reads them as the sender wrote them. A `\r` before a `\n` is dropped.
pub fn keystrokes(text: &str) -> Cow<'_, str> {
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut typed = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => {}
            c if hidden(c) => escape(c, &mut typed),
            c => typed.push(c),
        }
    }
    Cow::Owned(typed)
}

/// Refuses `value`, called `what` ("the NATS server URL"), when it holds a control character (C0,
/// tab and line breaks included, DEL, C1), since it is about to be written `into` something that
/// is read as lines or words: a systemd unit, a tmux command, a file format swarm writes by hand
/// (docs/ARCHITECTURE.md, "Control characters"). A line break there would start a line of its own
/// (`ExecStartPre=` in a unit). The one check for all of them; exit status 2.
pub fn refuse_controls(
    what: &str,
    value: &std::ffi::OsStr,
    into: &str,
) -> crate::error::Result<()> {
    let text = value.to_string_lossy();
    let Some(control) = text.chars().find(|c| c.is_control()) else {
        return Ok(());
    };
    let mut named = String::new();
    match control {
        '\t' => named.push_str("\\t"),
        '\n' => named.push_str("\\n"),
        c => escape(c, &mut named),
    }
    Err(crate::error::Error::usage(format!(
        "{what} {text:?} has a control character ({named}), which cannot go into {into}"
    ))
    .with_hint(format!("give {what} without control characters")))
}

/// Whether a terminal would act on `c` rather than show it, or show it reordering its
/// neighbours: controls (C0 but tab and newline, DEL, C1), bidi formatting characters, and the
/// Unicode line and paragraph separators.
fn hidden(c: char) -> bool {
    (c.is_control() && c != '\t' && c != '\n')
        || matches!(
            c,
            '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{2028}'
                | '\u{2029}'
        )
}

fn escape(c: char, shown: &mut String) {
    match c {
        '\0' => shown.push_str("\\0"),
        '\x07' => shown.push_str("\\a"),
        '\x08' => shown.push_str("\\b"),
        '\x0b' => shown.push_str("\\v"),
        '\x0c' => shown.push_str("\\f"),
        '\r' => shown.push_str("\\r"),
        '\x1b' => shown.push_str("\\e"),
        c if c.is_ascii() => {
            let _ = write!(shown, "\\x{:02x}", u32::from(c));
        }
        c => {
            let _ = write!(shown, "\\u{{{:x}}}", u32::from(c));
        }
    }
}

/// Logs `line` as a warning unless this process said it before: for what a command meets again
/// and again (a file it passes over, a tmux server that does not answer) and should say once.
pub fn warn_once(line: String) {
    static SAID: std::sync::Mutex<std::collections::BTreeSet<String>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let first = SAID
        .lock()
        .map_or(true, |mut said| said.insert(line.clone()));
    if first {
        tracing::warn!("{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_control_character_is_refused_by_name() {
        let refuse = |value: &str| {
            refuse_controls("the URL", std::ffi::OsStr::new(value), "a systemd unit")
                .err()
                .map(|err| err.message().to_owned())
        };
        assert_eq!(refuse("nats://hub:4222 é"), None);
        assert_eq!(
            refuse("nats://a\nExecStartPre=x").as_deref(),
            Some(
                "the URL \"nats://a\\nExecStartPre=x\" has a control character (\\n), which cannot \
                 go into a systemd unit"
            )
        );
        for bad in ["a\tb", "a\rb", "\x1b[2J", "a\u{7f}", "a\u{9b}b", "\0"] {
            assert!(refuse(bad).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn counts_read_right() {
        assert_eq!(count(1, "pane", "panes"), "1 pane");
        assert_eq!(count(2, "member", "members"), "2 members");
        assert_eq!(count(0, "entry", "entries"), "0 entries");
    }

    #[test]
    fn summaries_are_one_short_line() {
        assert_eq!(derive_summary("\n  fix   the\tbug \nmore"), "fix the bug");
        let long = derive_summary(&"word ".repeat(40));
        assert!(long.ends_with('…') && long.chars().count() <= 60, "{long}");
    }

    #[test]
    fn keystrokes_keep_line_breaks_and_lose_controls() {
        assert!(matches!(keystrokes("a\nb\tc"), Cow::Borrowed(_)));
        assert_eq!(keystrokes("a\r\nb\x1b[201~c"), "a\nb\\e[201~c");
    }

    #[test]
    fn plain_text_is_shown_as_it_is() {
        for plain in ["", "take task 2", "tabs\tstay", "ünïcödé → ok ✓", "a \\e b"] {
            assert!(matches!(for_terminal(plain), Cow::Borrowed(_)), "{plain:?}");
        }
    }

    #[test]
    fn terminal_controls_are_made_visible() {
        assert_eq!(
            for_terminal("x\x1b]0;PWNED\x07\r\x1b[2Kfake"),
            "x\\e]0;PWNED\\a\\r\\e[2Kfake"
        );
        assert_eq!(
            for_terminal("\0\x01\x08\x0b\x0c\x1f\x7f"),
            "\\0\\x01\\b\\v\\f\\x1f\\x7f"
        );
        // C1 controls: CSI and OSC in their 8-bit form.
        assert_eq!(
            for_terminal("a\u{9b}2Jb\u{9d}52;c"),
            "a\\u{9b}2Jb\\u{9d}52;c"
        );
        // Trojan Source: an override that would show `admin` reversed, and an isolate.
        assert_eq!(
            for_terminal("user\u{202e}nimda\u{2066}x\u{2069}"),
            "user\\u{202e}nimda\\u{2066}x\\u{2069}"
        );
        assert_eq!(for_terminal("a\u{2028}b"), "a\\u{2028}b");
        let shown = for_terminal("\x1b\x07\r\x7f\u{85}\u{9b}\u{202e}");
        assert!(
            !shown.chars().any(|c| c.is_control() || hidden(c)),
            "{shown:?}"
        );
    }

    #[test]
    fn continuation_lines_never_pass_for_lines_of_their_own() {
        assert_eq!(
            for_terminal("first\nbbbb  lead  rm -rf /\r\nthird"),
            format!("first\n{CONTINUATION}bbbb  lead  rm -rf /\n{CONTINUATION}third")
        );
        assert_eq!(
            for_terminal("a\n\nb"),
            format!("a\n{CONTINUATION}\n{CONTINUATION}b")
        );
        for line in for_terminal("x\ny\n\nz").lines().skip(1) {
            assert!(line.starts_with(CONTINUATION), "{line:?}");
        }
    }

    #[test]
    fn line_breaks_that_end_the_text_are_dropped() {
        assert_eq!(for_terminal("hello\n"), "hello");
        assert_eq!(for_terminal("hello\r\n\n"), "hello");
        assert_eq!(for_terminal("hello\r"), "hello\\r");
        assert_eq!(for_terminal("\n"), "");
    }
}
