//! Everything swarm prints to stdout goes through here, so a closed pipe (`swarm inbox | head -1`)
//! surfaces as an error the caller turns into a quiet exit, `--json` stays in one place, and no
//! text reaches a terminal unescaped (docs/ARCHITECTURE.md, "Terminal output"): lines and table
//! cells go through [`for_terminal`]; JSON escapes control characters itself and keeps the exact
//! text.

#![allow(clippy::print_stdout)]

use std::io::{self, IsTerminal, Write};

use serde::Serialize;

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

/// Whether to colour what is printed: only on a terminal, and not when NO_COLOR is set
/// (no-color.org: to anything but the empty string).
pub(crate) fn colour() -> bool {
    io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
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
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|column| {
                self.rows
                    .iter()
                    .filter_map(|row| row.get(column))
                    .map(|cell| cell.chars().count())
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
                    let pad = widths[column] - cell.chars().count() + 2;
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        bytes(out.as_bytes())
    }
}
