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
pub struct Screen {
    /// The bytes of the line being printed, not ended by `\n` yet.
    partial: Vec<u8>,
}

impl Screen {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds what the program printed next; returns the lines it finished, in order.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<String> {
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
    pub fn pending(&self) -> Option<String> {
        let shown = render_line(&self.partial).join(" ");
        let shown = shown.trim_end();
        (!shown.is_empty()).then(|| shown.to_owned())
    }
}

/// What one line of output shows on a terminal: one line of text, or more when it moved the
/// cursor down (a vertical tab, a form feed).
///
/// A screen as tall as the line is erased whole by every clear, so a program that clears and
/// draws again, over and over in one line (a TUI's redraws), would cost the line's length for each
/// clear. Everything before the line's last clear is erased by it, so that part is played on one
/// row, cheap to erase, for the modes it sets, and the screen gets its height only for what
/// follows: linear in the line's length.
fn render_line(bytes: &[u8]) -> Vec<String> {
    let cut = last_clear(bytes);
    let rest = &bytes[cut..];
    let needed = rest.len() / usize::from(COLUMNS) + 2;
    let rows = u16::try_from(needed).unwrap_or(MAX_ROWS).min(MAX_ROWS);
    let columns = NonZeroU16::new(COLUMNS).unwrap_or(NonZeroU16::MAX);
    let mut parser = vt100::Parser::new(NonZeroU16::MIN, columns, 0);
    parser.process(&bytes[..cut]);
    // What scrolled off the one row is forgotten, or growing the screen would bring it back
    // as blank rows above (vt100 keeps their count, as an unbounded terminal would).
    parser.process(ERASE_SCROLLBACK);
    parser
        .screen_mut()
        .set_size(NonZeroU16::new(rows).unwrap_or(NonZeroU16::MIN), columns);
    parser.process(rest);
    let contents = parser.screen().contents();
    contents
        .split('\n')
        .map(|line| visible(line.trim_end()))
        .collect()
}

const ERASE_SCROLLBACK: &[u8] = b"\x1b[3J";

/// Where the last clear of the whole screen in `bytes` ends, 0 when there is none: a reset
/// (`ESC c`), or an erase of the whole display (`CSI 2 J`) run together with a move of the cursor
/// home (`CSI H`, before or after it, with `CSI 3 J` allowed in the run), which is how programs
/// clear (`clear` prints `\e[H\e[2J\e[3J`). After one, the screen is blank and the cursor home
/// whatever came before, however tall the screen. An `ESC` always starts a new sequence for the
/// emulator, even inside another one, so looking for these bytes finds exactly what it does.
fn last_clear(bytes: &[u8]) -> usize {
    #[derive(Clone, Copy, PartialEq)]
    enum Step {
        Home,
        EraseAll,
        EraseScrollback,
    }
    let mut cut = 0;
    // The run of clearing steps that ends where the last one ended: whether it homed and erased.
    let mut run: Option<(usize, bool, bool)> = None;
    let mut at = 0;
    while let Some(offset) = bytes[at..].iter().position(|b| *b == 0x1b) {
        let start = at + offset;
        let (step, end) = match bytes.get(start + 1) {
            Some(b'c') => {
                cut = start + 2;
                run = None;
                at = start + 2;
                continue;
            }
            Some(b'[') => {
                let params_end = bytes[start + 2..]
                    .iter()
                    .position(|b| !(b.is_ascii_digit() || *b == b';'))
                    .map_or(bytes.len(), |p| start + 2 + p);
                let params = &bytes[start + 2..params_end];
                let step = match bytes.get(params_end) {
                    Some(b'H' | b'f') if is_home(params) => Some(Step::Home),
                    Some(b'J') if params == b"2" => Some(Step::EraseAll),
                    Some(b'J') if params == b"3" => Some(Step::EraseScrollback),
                    _ => None,
                };
                (step, params_end + 1)
            }
            _ => (None, start + 1),
        };
        at = end.min(bytes.len());
        let Some(step) = step else {
            run = None;
            continue;
        };
        let (homed, erased) = match run {
            Some((run_end, homed, erased)) if run_end == start => (homed, erased),
            _ => (false, false),
        };
        let homed = homed || step == Step::Home;
        let erased = erased || step == Step::EraseAll;
        if homed && erased {
            cut = at;
        }
        run = Some((at, homed, erased));
    }
    cut
}

/// Whether `CSI params H` moves the cursor to the first row and column (a missing or 0
/// parameter is 1).
fn is_home(params: &[u8]) -> bool {
    let mut count = 0;
    params.split(|b| *b == b';').all(|param| {
        count += 1;
        count <= 2
            && std::str::from_utf8(param)
                .ok()
                .is_some_and(|p| p.is_empty() || p.parse::<u32>().is_ok_and(|n| n <= 1))
    })
}

/// What the emulator keeps of a cell is text, never a control; any that slipped through would act
/// on the reader's terminal, so it is written out visibly by the one rule for everything swarm
/// prints, [`for_terminal`] (docs/ARCHITECTURE.md, "Terminal output"). The same for a name shown
/// beside a line.
pub fn visible(text: &str) -> String {
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

    /// A line played whole on a screen as tall as it, as before the cut at the last clear.
    fn render_whole(bytes: &[u8]) -> Vec<String> {
        let rows = u16::try_from(bytes.len() / usize::from(COLUMNS) + 2)
            .unwrap_or(MAX_ROWS)
            .min(MAX_ROWS);
        let mut parser = vt100::Parser::new(
            NonZeroU16::new(rows).unwrap(),
            NonZeroU16::new(COLUMNS).unwrap(),
            0,
        );
        parser.process(bytes);
        parser
            .screen()
            .contents()
            .split('\n')
            .map(|line| visible(line.trim_end()))
            .collect()
    }

    #[test]
    fn a_line_shows_what_it_showed_whole_however_it_clears() {
        let long = "y".repeat(usize::from(COLUMNS) + 9);
        let cases: Vec<String> = vec![
            "a\x1b[2J\x1b[Hb".into(),
            "a\x1b[H\x1b[2J\x1b[3Jb".into(),
            "a\x1b[2J\x1b[3J\x1b[Hb".into(),
            "a\x1b[1;1H\x1b[2Jb\x0bc".into(),
            "first\x1b[2Jnot home\x1b[5;5Hthere".into(),
            "a\x1b[2Jb\x1b[H".into(),
            "x\x1bcreset".into(),
            format!("{long}\x1b[2J\x1b[H{long}\x1b[1Bend"),
            "\x1b[?25l\x1b[2J\x1b[H\x1b[7mframe\x1b[27m\x1b[?25h".into(),
            "\x1b[?1049h\x1b[2J\x1b[Halt\x1b[?1049l".into(),
            "a\x1b[2J\x1b[2;1Hb".into(),
            "a\x1b[2J\x1b[0;0Hb".into(),
            "a\x1b[2\x1b[2J\x1b[Hb".into(),
            "a\x1b]0;\x1b[2J\x1b[H\x07b".into(),
            "a\x1b[2J\x1b[".into(),
        ];
        for case in &cases {
            assert_eq!(
                render_line(case.as_bytes()),
                render_whole(case.as_bytes()),
                "{case:?}"
            );
        }
        assert_eq!(last_clear(b"a\x1b[2J\x1b[Hb"), 8);
        assert_eq!(last_clear(b"a\x1b[2Jb\x1b[Hb"), 0, "not run together");
        assert_eq!(last_clear(b"a\x1b[2J\x1b[2;1Hb"), 0, "not home");
    }

    /// Many clears in one line cost no more than the line's length: the screen the part after
    /// the last clear is played on is as tall as that part alone.
    #[test]
    fn a_line_of_many_clears_is_played_from_its_last() {
        let mut line = Vec::new();
        for frame in 0..50_000 {
            line.extend_from_slice(format!("\x1b[2J\x1b[Hframe {frame}").as_bytes());
        }
        let cut = last_clear(&line);
        assert_eq!(&line[cut..], b"frame 49999");
        assert_eq!(render_line(&line)[0], "frame 49999");
    }

    #[test]
    fn nothing_that_acts_on_a_terminal_comes_out() {
        let nasty = b"\x1b[2J\x1b[H\x1b]52;c;cGF3bmVk\x07\x1bP+q\x1b\\\x9b31m\xc2\x9b0m\x07text\x1b[?1049h\r\n";
        for line in render(nasty) {
            assert!(!line.chars().any(char::is_control), "{line:?}");
        }
    }
}
