//! The selected member's pane, as tmux shows it: its last lines with their colours
//! (`capture-pane -e`, through the one tmux runner), read by a terminal emulator into styled
//! lines. What the pane holds is another program's output: every character shown is made visible
//! by the one rule (`base::screen::visible`), never acted on.

use std::num::NonZeroU16;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use crate::base::screen::visible;
use crate::error::Result;
use crate::launch::tmux::Tmux;

/// How many lines of the pane are read: more than any preview shows.
pub(crate) const LINES: u16 = 200;

/// The widest line kept.
const COLUMNS: u16 = 400;

/// The pane's last lines, styled; `None` when the pane is gone.
pub(crate) fn capture(tmux: &Tmux, pane: &str) -> Result<Option<Vec<Line<'static>>>> {
    Ok(tmux.capture(pane, LINES)?.map(|text| styled(&text)))
}

/// Text with escape sequences as styled lines, trailing blank lines dropped.
pub(crate) fn styled(text: &str) -> Vec<Line<'static>> {
    let rows = text.lines().count().clamp(1, usize::from(u16::MAX - 1));
    let mut parser = vt100::Parser::new(
        NonZeroU16::new(u16::try_from(rows + 1).unwrap_or(u16::MAX)).unwrap_or(NonZeroU16::MIN),
        NonZeroU16::new(COLUMNS).unwrap_or(NonZeroU16::MAX),
        0,
    );
    // tmux ends each line with a bare newline; a terminal wants a carriage return too.
    parser.process(text.replace('\n', "\r\n").as_bytes());
    let screen = parser.screen();
    let mut lines: Vec<Line<'static>> = (0..u16::try_from(rows).unwrap_or(u16::MAX))
        .map(|row| line(screen, row))
        .collect();
    while lines.last().is_some_and(|line| line.width() == 0) {
        lines.pop();
    }
    lines
}

fn line(screen: &vt100::Screen, row: u16) -> Line<'static> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut run = String::new();
    let mut run_style = Style::default();
    // Columns past the last one with text are not shown.
    let last = (0..COLUMNS)
        .rev()
        .find(|col| {
            screen
                .cell(row, *col)
                .is_some_and(vt100::Cell::has_contents)
        })
        .map_or(0, |col| col + 1);
    for col in 0..last {
        let Some(cell) = screen.cell(row, col) else {
            break;
        };
        if cell.is_wide_continuation() {
            continue;
        }
        let style = style(cell);
        if style != run_style && !run.is_empty() {
            spans.push(Span::styled(visible(&run), run_style));
            run.clear();
        }
        run_style = style;
        if cell.has_contents() {
            run.push_str(cell.contents());
        } else {
            run.push(' ');
        }
    }
    if !run.is_empty() {
        spans.push(Span::styled(visible(&run), run_style));
    }
    Line::from(spans)
}

fn style(cell: &vt100::Cell) -> Style {
    let mut style = Style::default()
        .fg(color(cell.fgcolor()))
        .bg(color(cell.bgcolor()));
    for (on, modifier) in [
        (cell.bold(), Modifier::BOLD),
        (cell.dim(), Modifier::DIM),
        (cell.italic(), Modifier::ITALIC),
        (cell.underline(), Modifier::UNDERLINED),
        (cell.inverse(), Modifier::REVERSED),
    ] {
        if on {
            style = style.add_modifier(modifier);
        }
    }
    style
}

fn color(color: vt100::Color) -> Color {
    match color {
        vt100::Color::Default => Color::Reset,
        vt100::Color::Idx(index) => Color::Indexed(index),
        vt100::Color::Rgb(r, g, b) => Color::Rgb(r, g, b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_are_kept_and_controls_are_not_acted_on() {
        let lines = styled("\u{1b}[31mred\u{1b}[0m plain\nsecond\n\n");
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].spans[0].content, "red");
        assert_eq!(lines[0].spans[0].style.fg, Some(Color::Indexed(1)));
        assert_eq!(lines[1].to_string(), "second");
    }
}
