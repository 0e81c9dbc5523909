//! A window layout, checked before tmux sees it (docs/ARCHITECTURE.md, "Launching"). tmux 3.3a
//! dies on some strings it does not know (`select-layout grid` takes the whole server down, with
//! every session on it), so only two kinds of layout get through: one of the named layouts every
//! tmux since 3.2 has, or a custom layout string as tmux itself prints it in `#{window_layout}`,
//! whose syntax and checksum are checked here exactly as tmux's `layout_parse` checks them.

use std::fmt;

/// The layouts tmux 3.2 and later know by name. The `-mirrored` variants came with tmux 3.5, so
/// they are not among them: swarm supports tmux from 3.2.
pub(crate) const NAMED: [&str; 5] = [
    "even-horizontal",
    "even-vertical",
    "main-horizontal",
    "main-vertical",
    "tiled",
];

/// A layout tmux will accept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// One of [`NAMED`].
    Named(&'static str),
    /// `checksum,WxH,X,Y{…}`: a layout string for exactly `cells` panes.
    Custom { text: String, cells: usize },
}

/// The layout of a team file that names none.
pub const DEFAULT: Layout = Layout::Named("tiled");

impl Layout {
    /// A named layout or a well-formed layout string; otherwise why not, in one line.
    pub fn parse(text: &str) -> Result<Self, String> {
        if let Some(name) = NAMED.iter().find(|name| **name == text) {
            return Ok(Self::Named(name));
        }
        let refuse = |why: String| {
            format!(
                "layout {text:?} {why}; use one of {} or a layout string tmux printed \
                 (`tmux display -p '#{{window_layout}}'`)",
                NAMED.join(", ")
            )
        };
        let Some((checksum, body)) = text.split_once(',') else {
            return Err(refuse("is not a layout tmux knows".into()));
        };
        if checksum.len() != 4 || !checksum.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(refuse("is not a layout tmux knows".into()));
        }
        let cells = Cells::count(body).map_err(|at| {
            refuse(format!(
                "is not a well-formed layout string (at byte {})",
                checksum.len() + 1 + at
            ))
        })?;
        let expected = u16::from_str_radix(checksum, 16).unwrap_or_default();
        let actual = checksum_of(body);
        if expected != actual {
            return Err(refuse(format!(
                "has checksum {checksum} but its cells sum to {actual:04x}"
            )));
        }
        Ok(Self::Custom {
            text: text.to_owned(),
            cells,
        })
    }

    pub fn as_str(&self) -> &str {
        match self {
            Self::Named(name) => name,
            Self::Custom { text, .. } => text,
        }
    }

    /// The layout to apply while a window is still growing. A custom layout fits only the number
    /// of panes it describes, so until the last one is placed (and for a pane `spawn` adds beyond
    /// them) the window is tiled.
    pub(crate) fn while_growing(&self) -> &Self {
        match self {
            Self::Named(_) => self,
            Self::Custom { .. } => &DEFAULT,
        }
    }

    /// How many panes a custom layout describes; a named layout fits any number.
    pub(crate) fn cells(&self) -> Option<usize> {
        match self {
            Self::Named(_) => None,
            Self::Custom { cells, .. } => Some(*cells),
        }
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// tmux's `layout_checksum`: a 16-bit rotate-right-and-add over the bytes after `checksum,`.
fn checksum_of(body: &str) -> u16 {
    body.bytes().fold(0u16, |sum, byte| {
        sum.rotate_right(1).wrapping_add(u16::from(byte))
    })
}

/// A recursive-descent reading of tmux's `layout_construct`:
/// `cell = W "x" H "," X "," Y ["," PANE] [("{" cell ("," cell)* "}") | ("[" cell ("," cell)* "]")]`.
struct Cells<'a> {
    bytes: &'a [u8],
    at: usize,
    leaves: usize,
}

impl<'a> Cells<'a> {
    /// The number of panes (leaf cells) in `body`, or the byte offset where it goes wrong.
    fn count(body: &'a str) -> Result<usize, usize> {
        let mut cells = Self {
            bytes: body.as_bytes(),
            at: 0,
            leaves: 0,
        };
        cells.cell()?;
        if cells.at != cells.bytes.len() {
            return Err(cells.at);
        }
        Ok(cells.leaves)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn expect(&mut self, byte: u8) -> Result<(), usize> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.at)
        }
    }

    fn number(&mut self) -> Result<(), usize> {
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        // tmux reads each number into an unsigned int.
        let digits = std::str::from_utf8(&self.bytes[start..self.at]).unwrap_or_default();
        match digits.parse::<u32>() {
            Ok(_) => Ok(()),
            Err(_) => Err(start),
        }
    }

    fn cell(&mut self) -> Result<(), usize> {
        self.number()?;
        self.expect(b'x')?;
        self.number()?;
        self.expect(b',')?;
        self.number()?;
        self.expect(b',')?;
        self.number()?;
        // An optional pane id: a number not followed by `x`, which would begin the next cell.
        if self.peek() == Some(b',') {
            let saved = self.at;
            self.at += 1;
            while self.peek().is_some_and(|b| b.is_ascii_digit()) {
                self.at += 1;
            }
            if self.peek() == Some(b'x') {
                self.at = saved;
            }
        }
        let close = match self.peek() {
            None | Some(b',' | b'}' | b']') => {
                self.leaves += 1;
                return Ok(());
            }
            Some(b'{') => b'}',
            Some(b'[') => b']',
            Some(_) => return Err(self.at),
        };
        loop {
            self.at += 1;
            self.cell()?;
            if self.peek() != Some(b',') {
                break;
            }
        }
        self.expect(close)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Printed by tmux 3.3a for a 200x60 window split once side by side.
    const SIDE_BY_SIDE: &str = "537b,200x60,0,0{100x60,0,0,0,99x60,101,0,1}";

    #[test]
    fn named_layouts_are_the_ones_every_supported_tmux_knows() {
        for name in NAMED {
            assert_eq!(Layout::parse(name), Ok(Layout::Named(name)));
        }
        for unknown in [
            "grid",
            "zzzz",
            "even",
            "ab",
            "",
            "main-vertical-mirrored",
            "Tiled",
        ] {
            assert!(Layout::parse(unknown).is_err(), "{unknown:?}");
        }
        assert_eq!(DEFAULT.as_str(), "tiled");
    }

    #[test]
    fn a_layout_string_tmux_printed_is_accepted_with_its_panes_counted() {
        let layout = Layout::parse(SIDE_BY_SIDE).unwrap();
        assert_eq!(layout.cells(), Some(2));
        assert_eq!(layout.as_str(), SIDE_BY_SIDE);
        assert_eq!(layout.while_growing(), &DEFAULT);
        // Nested, with pane ids, three panes.
        let nested = "200x60,0,0{100x60,0,0,3,99x60,101,0[99x30,101,0,4,99x29,101,31,5]}";
        let text = format!("{:04x},{nested}", checksum_of(nested));
        assert_eq!(Layout::parse(&text).unwrap().cells(), Some(3));
        // Pane ids may be left out; a single pane is a layout too.
        let bare = "80x24,0,0";
        let text = format!("{:04x},{bare}", checksum_of(bare));
        assert_eq!(Layout::parse(&text).unwrap().cells(), Some(1));
    }

    #[test]
    fn checksums_are_tmuxs() {
        assert_eq!(format!("{:04x}", checksum_of(&SIDE_BY_SIDE[5..])), "537b");
        let wrong = SIDE_BY_SIDE.replacen("537b", "537c", 1);
        let err = Layout::parse(&wrong).unwrap_err();
        assert!(
            err.contains("has checksum 537c but its cells sum to 537b"),
            "{err}"
        );
    }

    #[test]
    fn malformed_layout_strings_are_refused() {
        for body in [
            "200x60,0,0{",
            "200x60,0,0{100x60,0,0,0",
            "200x60,0,0{100x60,0,0,0]",
            "200x60,0,0{}",
            "200x60,0,0,1,2",
            "200x60,0",
            "x60,0,0",
            "200x60,0,0 ",
            "200x60,0,0;kill-server",
            "99999999999x60,0,0",
        ] {
            let text = format!("{:04x},{body}", checksum_of(body));
            let err = Layout::parse(&text).unwrap_err();
            assert!(
                err.contains("not a well-formed layout string"),
                "{body}: {err}"
            );
        }
        assert!(Layout::parse("53,200x60,0,0").is_err());
        assert!(Layout::parse("zzzz,200x60,0,0").is_err());
    }
}
