//! How paste delivery types a message into a member's pane (docs/ARCHITECTURE.md, "Paste
//! delivery"): `framed` (`[from <sender>] <text>`), `raw` (the text exactly), or a template with
//! the placeholders `{from}`, `{text}` and `{summary}`, where `{{` and `}}` stand for a literal
//! brace. One spelling serves the team file's `paste_format`, `spawn --paste-format` and
//! config.json's `pasteFormat`.

use std::fmt;

use crate::format::message::framed;
use crate::format::settings::Delivery;

/// How a message is typed into a pane.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum PasteFormat {
    /// `[from <sender>] <text>`.
    #[default]
    Framed,
    /// The text exactly as sent.
    Raw,
    /// A template, as written, and what it is made of.
    Template(String, Vec<Piece>),
}

/// One part of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Literal(String),
    From,
    Text,
    Summary,
    /// How many messages one paste tells of: 1, but for an MCP member's nudge.
    Count,
}

/// What an MCP member's pane is typed when mail comes, unless its `paste_format` says otherwise:
/// the text waits to be read once, through the `receive` tool (docs/ARCHITECTURE.md, "MCP").
pub const NUDGE: &str = "{n} new message(s) from {from}: use the receive tool";

/// Every placeholder, as a template spells it.
const PLACEHOLDERS: [(&str, Piece); 4] = [
    ("from", Piece::From),
    ("text", Piece::Text),
    ("summary", Piece::Summary),
    ("n", Piece::Count),
];

/// Says what a template may hold, after a refusal.
const GRAMMAR: &str = "a paste format is framed, raw, or a template with {from}, {text}, \
                       {summary} or {n}, with {{ and }} for a literal brace";

impl PasteFormat {
    /// `framed`, `raw`, or a template with at least one placeholder. A brace that opens or closes
    /// no known placeholder is refused, so a typo never reaches a pane.
    pub fn parse(written: &str) -> Result<Self, String> {
        match written {
            "framed" => return Ok(Self::Framed),
            "raw" => return Ok(Self::Raw),
            _ => {}
        }
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut chars = written.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            match c {
                '{' if chars.peek().map(|(_, c)| *c) == Some('{') => {
                    chars.next();
                    literal.push('{');
                }
                '}' if chars.peek().map(|(_, c)| *c) == Some('}') => {
                    chars.next();
                    literal.push('}');
                }
                '{' => {
                    let rest = &written[at + 1..];
                    let Some(end) = rest
                        .find(['}', '{'])
                        .filter(|end| rest[*end..].starts_with('}'))
                    else {
                        return Err(format!(
                            "{written:?} has a {{ that opens no placeholder; {GRAMMAR}"
                        ));
                    };
                    let name = &rest[..end];
                    let piece = PLACEHOLDERS
                        .iter()
                        .find(|(known, _)| *known == name)
                        .map(|(_, piece)| piece.clone())
                        .ok_or_else(|| {
                            format!("{written:?} has an unknown placeholder {{{name}}}; {GRAMMAR}")
                        })?;
                    if !literal.is_empty() {
                        pieces.push(Piece::Literal(std::mem::take(&mut literal)));
                    }
                    pieces.push(piece);
                    // Past the name and its closing brace.
                    for _ in 0..=name.chars().count() {
                        chars.next();
                    }
                }
                '}' => {
                    return Err(format!(
                        "{written:?} has a }} that closes no placeholder; {GRAMMAR}"
                    ));
                }
                c => literal.push(c),
            }
        }
        if !literal.is_empty() {
            pieces.push(Piece::Literal(literal));
        }
        if !pieces.iter().any(|p| !matches!(p, Piece::Literal(_))) {
            return Err(format!("{written:?} is not a paste format: {GRAMMAR}"));
        }
        Ok(Self::Template(written.to_owned(), pieces))
    }

    /// As written: `framed`, `raw`, or the template.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Framed => "framed",
            Self::Raw => "raw",
            Self::Template(written, _) => written,
        }
    }

    /// What is typed into the pane for a message from `from` (already marked when forged), before
    /// the Enter that follows it. A placeholder is replaced once: braces in the message are text.
    pub fn render(&self, from: &str, text: &str, summary: &str) -> String {
        self.render_count(1, from, text, summary)
    }

    /// [`PasteFormat::render`] for `count` messages at once (an MCP member's nudge), `from`
    /// naming their senders.
    pub fn render_count(&self, count: usize, from: &str, text: &str, summary: &str) -> String {
        let count = count.to_string();
        match self {
            Self::Framed => framed(from, text),
            Self::Raw => text.to_owned(),
            Self::Template(_, pieces) => pieces
                .iter()
                .map(|piece| match piece {
                    Piece::Literal(literal) => literal.as_str(),
                    Piece::From => from,
                    Piece::Text => text,
                    Piece::Summary => summary,
                    Piece::Count => count.as_str(),
                })
                .collect(),
        }
    }

    /// Whether a lead message that does not verify may be pasted, marked as forged: only the
    /// framed format always shows its sender. Raw text and a template (which may leave the sender
    /// out) would show it as the lead's words, so there it is not pasted at all.
    pub fn shows_forgery(&self) -> bool {
        matches!(self, Self::Framed)
    }
}

impl fmt::Display for PasteFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A member's delivery, from its `delivery` and `paste_format` as written: a paste format alone
/// means paste delivery; with `delivery = "pull"` it is refused, as it would never be used.
pub fn delivery_with(
    delivery: Option<Delivery>,
    format: Option<&PasteFormat>,
) -> Result<Delivery, String> {
    match (delivery, format) {
        (Some(Delivery::Pull), Some(format)) => Err(format!(
            "{:?} needs delivery = \"paste\", not \"pull\"",
            format.as_str()
        )),
        (Some(delivery), _) => Ok(delivery),
        (None, Some(_)) => Ok(Delivery::Paste),
        (None, None) => Ok(Delivery::default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(format: &str, from: &str, text: &str, summary: &str) -> String {
        PasteFormat::parse(format)
            .unwrap()
            .render(from, text, summary)
    }

    #[test]
    fn framed_and_raw_are_keywords() {
        assert_eq!(render("framed", "bob", "hi", "hi"), "[from bob] hi");
        assert_eq!(render("raw", "bob", "print(6*7)", "x"), "print(6*7)");
        assert_eq!(PasteFormat::default(), PasteFormat::Framed);
        for keyword in ["framed", "raw"] {
            assert_eq!(PasteFormat::parse(keyword).unwrap().as_str(), keyword);
        }
    }

    #[test]
    fn templates_fill_each_placeholder_once() {
        assert_eq!(
            render("# {from}: {summary}\n{text}", "bob", "a {text} b", "sum"),
            "# bob: sum\na {text} b"
        );
        assert_eq!(render("{text}{text}", "b", "x", "s"), "xx");
        // Doubled braces are literal ones, around a placeholder too.
        assert_eq!(
            render("{{\"from\": \"{from}\"}} }}{{", "bob", "t", "s"),
            "{\"from\": \"bob\"} }{"
        );
        assert_eq!(render("é{from}ü", "bob", "t", "s"), "ébobü");
        let template = "echo {text}";
        assert_eq!(PasteFormat::parse(template).unwrap().as_str(), template);
    }

    #[test]
    fn the_nudge_tells_how_many_came_and_from_whom_never_the_text() {
        let nudge = PasteFormat::parse(NUDGE).unwrap();
        assert_eq!(
            nudge.render_count(3, "lead, bob", "secret text", "s"),
            "3 new message(s) from lead, bob: use the receive tool"
        );
        assert_eq!(render("{n}: {text}", "bob", "hi", "s"), "1: hi");
    }

    #[test]
    fn a_brace_that_is_no_placeholder_is_refused() {
        for (bad, why) in [
            ("{frm}: {text}", "unknown placeholder {frm}"),
            ("{Text}", "unknown placeholder {Text}"),
            ("{ text }", "unknown placeholder { text }"),
            ("{}", "unknown placeholder {}"),
            ("{text", "opens no placeholder"),
            ("{te{text}", "opens no placeholder"),
            ("text}", "closes no placeholder"),
            ("{text}}", "closes no placeholder"),
            ("Raw", "is not a paste format"),
            ("plain words {{from}}", "is not a paste format"),
            ("", "is not a paste format"),
        ] {
            let err = PasteFormat::parse(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
            assert!(err.contains("{from}, {text}, {summary} or {n}"), "{err}");
        }
    }

    #[test]
    fn only_the_framed_format_shows_a_forgery() {
        assert!(PasteFormat::Framed.shows_forgery());
        assert!(!PasteFormat::Raw.shows_forgery());
        assert!(
            !PasteFormat::parse("{from}: {text}")
                .unwrap()
                .shows_forgery()
        );
    }

    #[test]
    fn a_paste_format_means_paste_delivery() {
        let raw = PasteFormat::Raw;
        assert_eq!(delivery_with(None, None), Ok(Delivery::Pull));
        assert_eq!(delivery_with(None, Some(&raw)), Ok(Delivery::Paste));
        assert_eq!(
            delivery_with(Some(Delivery::Paste), Some(&raw)),
            Ok(Delivery::Paste)
        );
        assert_eq!(
            delivery_with(Some(Delivery::Paste), None),
            Ok(Delivery::Paste)
        );
        let err = delivery_with(Some(Delivery::Pull), Some(&raw)).unwrap_err();
        assert!(err.contains("needs delivery = \"paste\""), "{err}");
    }
}
