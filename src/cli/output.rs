//! Everything swarm prints to stdout goes through here, so a closed pipe (`swarm inbox | head -1`)
//! surfaces as an error the caller turns into a quiet exit, `--json` stays in one place, and no
//! text reaches a terminal unescaped (docs/ARCHITECTURE.md, "Terminal output"): lines and table
//! cells go through [`for_terminal`]; JSON escapes control characters itself and keeps the exact
//! text.
//!
//! A command builds one [`Report`] of what it did and hands it to [`Printer::report`] (or, for
//! each event of a stream, [`Printer::event`]): the printer is the one place that knows whether
//! `--json` was given (docs/ARCHITECTURE.md, "JSON output").

#![allow(clippy::print_stdout)]

use std::io::{self, IsTerminal, Write};

use serde::Serialize;
use unicode_width::UnicodeWidthStr;

use crate::base::text::for_terminal;
use crate::error::{Error, Result};

/// One line of text, made safe for a terminal: controls shown, later lines marked as continuing.
pub(crate) fn line(text: impl AsRef<str>) -> Result<()> {
    verbatim_line(for_terminal(text.as_ref()))
}

/// One line exactly as given: only for a pane's own output (`swarm log`), which the pane showed
/// as it is.
pub(crate) fn verbatim_line(text: impl AsRef<str>) -> Result<()> {
    let mut line = Vec::with_capacity(text.as_ref().len() + 1);
    line.extend_from_slice(text.as_ref().as_bytes());
    line.push(b'\n');
    bytes(&line)
}

/// Bytes exactly as given, flushed: a pane's own output (`swarm log --raw`), and the one write to
/// stdout everything else here ends in, so its failure is the one [`Error::output`].
pub(crate) fn bytes(bytes: &[u8]) -> Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(Error::output)
}

/// Whether stdout is a pipe whose reader has gone (`swarm events -f | head -1`): a follower that
/// prints nothing for a while learns it here, not at its next write, and ends quietly.
pub(crate) fn reader_gone() -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let stdout = io::stdout();
    let mut fds = [PollFd::new(
        std::os::fd::AsFd::as_fd(&stdout),
        PollFlags::POLLOUT,
    )];
    poll(&mut fds, PollTimeout::ZERO).is_ok()
        && fds[0]
            .revents()
            .is_some_and(|seen| seen.intersects(PollFlags::POLLERR | PollFlags::POLLHUP))
}

/// What a command prints: serialized as it is for `--json`, shown by [`Report::text`] otherwise.
/// Fields only the text needs are `#[serde(skip)]`.
pub(crate) trait Report: Serialize {
    /// The rendering for a person, through [`line`] and [`Table`].
    fn text(&self) -> Result<()>;
}

/// A document, and the one line a person is shown for it instead.
#[derive(Serialize)]
pub(crate) struct WithLine<T> {
    #[serde(flatten)]
    pub(crate) json: T,
    #[serde(skip)]
    pub(crate) line: String,
}

impl<T: Serialize> Report for WithLine<T> {
    fn text(&self) -> Result<()> {
        line(&self.line)
    }
}

/// A document, and the lines a person is shown for it instead.
#[derive(Serialize)]
#[serde(transparent)]
pub(crate) struct WithLines<T> {
    pub(crate) json: T,
    #[serde(skip)]
    pub(crate) lines: Vec<String>,
}

impl<T: Serialize> Report for WithLines<T> {
    fn text(&self) -> Result<()> {
        self.lines.iter().try_for_each(line)
    }
}

/// How a command's reports are printed: JSON or text, in colour or not. Only this type's methods
/// look at `--json` (`tests/swarm/reports.rs` holds every other file to it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Printer {
    json: bool,
    colour: bool,
}

impl Printer {
    pub(crate) fn new(json: bool, colour: Colour) -> Self {
        Self {
            json,
            colour: colour.on(io::stdout().is_terminal()),
        }
    }

    /// A command's one answer: a pretty-printed JSON document, or its text.
    pub(crate) fn report(self, report: &impl Report) -> Result<()> {
        if self.json {
            json(report)
        } else {
            report.text()
        }
    }

    /// One event of a stream: one JSON object on one line, flushed, or its text.
    pub(crate) fn event(self, event: &impl Report) -> Result<()> {
        if self.json {
            json_line(event)
        } else {
            event.text()
        }
    }

    /// An error, as the command's end reports it: one line on stderr, or one JSON object with
    /// `--json` (for a thread that ends the process itself).
    pub(crate) fn error(self, err: &Error) {
        crate::cli::report(err, self.json);
    }

    /// What only a person is told (why nothing was done): `text`, and nothing with `--json`.
    pub(crate) fn remark(self, text: impl FnOnce() -> Result<()>) -> Result<()> {
        if self.json { Ok(()) } else { text() }
    }

    /// Refuses `--json` for a command that has no JSON to print (`top`), with `refusal`.
    pub(crate) fn text_only(self, refusal: impl FnOnce() -> Error) -> Result<()> {
        if self.json { Err(refusal()) } else { Ok(()) }
    }

    /// Whether text on stdout is coloured (`--color`; never with `--json`).
    pub(crate) fn colour(self) -> bool {
        self.colour && !self.json
    }
}

/// `--color`: whether to colour stdout and the log lines on stderr.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Colour {
    /// Only on a terminal, and not when NO_COLOR is set
    #[default]
    Auto,
    /// Always, even into a pipe or a file
    Always,
    /// Never
    Never,
}

impl Colour {
    /// Whether to colour what goes to a stream, which is a `terminal` or not: `auto` only on a
    /// terminal, and not when NO_COLOR is set (no-color.org: to anything but the empty string; a
    /// flag on the command line wins).
    pub(crate) fn on(self, terminal: bool) -> bool {
        match self {
            Self::Always => true,
            Self::Never => false,
            Self::Auto => terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }
}

/// One JSON document, pretty-printed.
pub(crate) fn json(value: &impl Serialize) -> Result<()> {
    let mut document = serde_json::to_vec_pretty(value).map_err(unprintable)?;
    document.push(b'\n');
    bytes(&document)
}

/// One JSON object on one line, flushed at once: the element of a stream.
pub(crate) fn json_line(value: &impl Serialize) -> Result<()> {
    let mut buffer = serde_json::to_vec(value).map_err(unprintable)?;
    buffer.push(b'\n');
    bytes(&buffer)
}

/// A value serde cannot make JSON of (a map with keys that are not strings): a bug, not a pipe.
fn unprintable(err: serde_json::Error) -> Error {
    Error::runtime(format!("cannot print JSON: {err}"))
}

/// Aligned columns for people; `--json` bypasses it.
pub(crate) struct Table {
    rows: Vec<Vec<String>>,
}

impl Table {
    pub(crate) fn new(header: &[&str]) -> Self {
        Self {
            rows: vec![header.iter().map(|cell| (*cell).to_owned()).collect()],
        }
    }

    /// A row; each cell is made safe for a terminal as it is added.
    pub(crate) fn row(&mut self, cells: Vec<String>) {
        self.rows.push(
            cells
                .into_iter()
                .map(|cell| for_terminal(&cell).into_owned())
                .collect(),
        );
    }

    pub(crate) fn print(&self) -> Result<()> {
        bytes(self.render().as_bytes())
    }

    /// The rows as lines, each column as wide as its widest cell in terminal columns (a CJK
    /// character or an emoji takes two), two spaces between.
    fn render(&self) -> String {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|column| {
                self.rows
                    .iter()
                    .filter_map(|row| row.get(column))
                    .map(|cell| cell.width())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for row in &self.rows {
            let mut line = String::new();
            for (column, cell) in row.iter().enumerate() {
                line.push_str(cell);
                if column + 1 < row.len() {
                    let pad = widths[column] - cell.width() + 2;
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_auto_asks_the_stream_and_a_flag_overrides_it() {
        // NO_COLOR is left as the test's environment has it: `auto` off a terminal is off
        // either way, and `always`/`never` do not look at it.
        assert!(!Colour::Auto.on(false));
        assert!(Colour::Always.on(false));
        assert!(!Colour::Never.on(true));
        let json = Printer {
            json: true,
            colour: true,
        };
        assert!(!json.colour(), "JSON is never coloured");
    }

    #[test]
    fn columns_line_up_by_terminal_width_not_by_characters() {
        let mut table = Table::new(&["NAME", "STATE"]);
        table.row(vec!["漢字".to_owned(), "running".to_owned()]);
        table.row(vec!["bob".to_owned(), "exited".to_owned()]);
        assert_eq!(table.render(), "NAME  STATE\n漢字  running\nbob   exited\n");
    }
}
