//! What a program printed to its terminal, as lines a person can read (docs/ARCHITECTURE.md,
//! "Logs a person can read" under "Decisions"). A pane's log holds the program's bytes exactly:
//! prompts that turn bracketed paste on (`\e[?2004h`), colours (`\e[7m`), progress bars redrawn
//! after `\r`, lines erased and written again. Rather than strip them by hand, each line of the log (up to a `\n`)
//! is played on a terminal emulator (the `vt100` crate) [`COLUMNS`] wide and tall enough to hold
//! it, and what that screen shows is the line: what a terminal showed last, with the rows a long
//! line wrapped onto joined again. Colours and other attributes are dropped: the text is plain.
//!
//! Each line starts on a fresh screen, so a sequence that spans lines (a mode, a character set)
//! does not carry over; a line is what it shows by itself. Full-screen programs that draw with
//! the cursor (an editor) read best with `swarm log --raw` or in their pane.

use std::num::NonZeroU16;

use crate::base::text::for_terminal;

/// How wide the emulated terminal is. Wider than any pane, so a line wraps (and is joined again)
/// only when it is very long, and a program that moves its cursor past it is rare.
const COLUMNS: u16 = 512;

/// The most rows a line gets: a longer line (half a megabyte of text) shows its end.
const MAX_ROWS: u16 = 1024;

/// A line is shown once this long even if it has not ended (a progress bar redrawn after `\r`
/// for hours), so what waits for its end stays bounded.
const MAX_LINE_BYTES: usize = COLUMNS as usize * MAX_ROWS as usize;

/// Turns what a program printed, fed as it comes, into finished lines.
#[derive(Debug, Default)]
pub(crate) struct Screen {
    /// The bytes of the line being printed, not ended by `\n` yet.
    partial: Vec<u8>,
}

impl Screen {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Feeds what the program printed next; returns the lines it finished, in order.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut lines = Vec::new();
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|b| *b == b'\n') {
            self.partial.extend_from_slice(&rest[..end]);
            lines.extend(render_line(&std::mem::take(&mut self.partial)));
            rest = &rest[end + 1..];
        }
        self.partial.extend_from_slice(rest);
        if self.partial.len() >= MAX_LINE_BYTES {
            lines.extend(render_line(&std::mem::take(&mut self.partial)));
        }
        lines
    }

    /// The line being printed, not finished yet (a prompt waiting for input), if it shows
    /// anything.
    pub(crate) fn pending(&self) -> Option<String> {
        let shown = render_line(&self.partial).join(" ");
        let shown = shown.trim_end();
        (!shown.is_empty()).then(|| shown.to_owned())
    }
}

/// What one line of output shows on a terminal: one line of text, or more when it moved the
/// cursor down (a vertical tab, a form feed).
fn render_line(bytes: &[u8]) -> Vec<String> {
    let needed = bytes.len() / usize::from(COLUMNS) + 2;
    let rows = u16::try_from(needed).unwrap_or(MAX_ROWS).min(MAX_ROWS);
    let mut parser = vt100::Parser::new(
        NonZeroU16::new(rows).unwrap_or(NonZeroU16::MIN),
        NonZeroU16::new(COLUMNS).unwrap_or(NonZeroU16::MAX),
        0,
    );
    parser.process(bytes);
    let contents = parser.screen().contents();
    contents
        .split('\n')
        .map(|line| visible(line.trim_end()))
        .collect()
}

/// What the emulator keeps of a cell is text, never a control; any that slipped through would act
/// on the reader's terminal, so it is written out visibly by the one rule for everything swarm
/// prints, [`for_terminal`] (docs/ARCHITECTURE.md, "Terminal output"). The same for a name shown
/// beside a line.
pub(crate) fn visible(text: &str) -> String {
    for_terminal(text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Everything `bytes` shows: the lines it finished, then the one being printed.
    fn render(bytes: &[u8]) -> Vec<String> {
        let mut screen = Screen::new();
        let mut lines = screen.feed(bytes);
        lines.extend(screen.pending());
        lines
    }

    #[test]
    fn a_shell_session_reads_as_the_terminal_showed_it() {
        // What bash in a tmux pane printed, as swarm's log holds it.
        let bash = b"\x1b[?2004hbash-5.2# \r\x1b[K\rbash-5.2# echo hello; printf '\\e[31mred\\e[0m\\n'\r\n\
\x1b[?2004l\rhello\r\n\x1b[31mred\x1b[0m\r\n\x1b[?2004hbash-5.2# ";
        assert_eq!(
            render(bash),
            [
                r"bash-5.2# echo hello; printf '\e[31mred\e[0m\n'",
                "hello",
                "red",
                "bash-5.2#",
            ]
        );
    }

    #[test]
    fn overwritten_and_erased_text_is_gone() {
        assert_eq!(
            render(
                b"progress 10%\rprogress 50%\rdone\x1b[K\r\nab\x08c\r\n\x1b[7mreverse\x1b[27m\r\n"
            ),
            ["done", "ac", "reverse"]
        );
        assert_eq!(render(b"\ttab\r\n"), ["        tab"]);
        assert_eq!(render(b"\x1b]0;a title\x07title set\r\n"), ["title set"]);
    }

    #[test]
    fn a_long_line_is_one_line_and_a_blank_one_stays() {
        let long = "x".repeat(usize::from(COLUMNS) * 2 + 7);
        let lines = render(format!("{long}\r\n\r\nafter\r\n").as_bytes());
        assert_eq!(lines, [long.as_str(), "", "after"]);
    }

    #[test]
    fn lines_come_out_as_they_are_finished() {
        let mut screen = Screen::new();
        assert!(screen.feed(b"half").is_empty());
        assert_eq!(screen.pending().as_deref(), Some("half"));
        assert_eq!(screen.feed(b" and half\r\nnext"), ["half and half"]);
        assert_eq!(screen.pending().as_deref(), Some("next"));
        // A sequence cut between two reads is still one sequence.
        assert!(screen.feed(b"\x1b[").is_empty());
        assert_eq!(screen.feed(b"31m!\r\n"), ["next!"]);
        assert_eq!(screen.pending(), None);
    }

    #[test]
    fn a_line_that_never_ends_is_shown_all_the_same() {
        let mut screen = Screen::new();
        let mut shown = Vec::new();
        for percent in 0..200_000 {
            shown.extend(screen.feed(format!("\r{:>3}%", percent % 100).as_bytes()));
        }
        assert!(
            !shown.is_empty() && shown.iter().all(|l| l.ends_with('%')),
            "{shown:?}"
        );
        assert!(screen.partial.len() < MAX_LINE_BYTES);
    }

    #[test]
    fn nothing_that_acts_on_a_terminal_comes_out() {
        let nasty = b"\x1b[2J\x1b[H\x1b]52;c;cGF3bmVk\x07\x1bP+q\x1b\\\x9b31m\xc2\x9b0m\x07text\x1b[?1049h\r\n";
        for line in render(nasty) {
            assert!(!line.chars().any(char::is_control), "{line:?}");
        }
    }
}
