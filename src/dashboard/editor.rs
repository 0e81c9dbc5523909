//! The one-line editor: what `s`, `S`, `r` and `/` open. Characters go in at the cursor; a
//! pasted line break ends nothing, it is a space.

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Editor {
    text: String,
    /// The cursor, as a char index.
    cursor: usize,
}

/// What a key did to the editor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Edit {
    Changed,
    Submit,
    Cancel,
    Ignored,
}

/// An editing key, as the input layer names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Key {
    Char(char),
    Backspace,
    Delete,
    Left,
    Right,
    Home,
    End,
    /// Ctrl-U: everything before the cursor goes.
    KillBefore,
    /// Ctrl-W: the word before the cursor goes.
    KillWord,
    Enter,
    Escape,
}

impl Editor {
    pub(crate) fn with(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            cursor: text.chars().count(),
        }
    }

    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The cursor's column, in chars from the start.
    pub(crate) fn cursor(&self) -> usize {
        self.cursor
    }

    fn byte(&self, at: usize) -> usize {
        self.text
            .char_indices()
            .nth(at)
            .map_or(self.text.len(), |(i, _)| i)
    }

    pub(crate) fn key(&mut self, key: Key) -> Edit {
        let len = self.text.chars().count();
        match key {
            Key::Char(c) => {
                let c = if c.is_control() { ' ' } else { c };
                let at = self.byte(self.cursor);
                self.text.insert(at, c);
                self.cursor += 1;
            }
            Key::Backspace if self.cursor > 0 => {
                let at = self.byte(self.cursor - 1);
                self.text.remove(at);
                self.cursor -= 1;
            }
            Key::Delete if self.cursor < len => {
                let at = self.byte(self.cursor);
                self.text.remove(at);
            }
            Key::Left if self.cursor > 0 => self.cursor -= 1,
            Key::Right if self.cursor < len => self.cursor += 1,
            Key::Home => self.cursor = 0,
            Key::End => self.cursor = len,
            Key::KillBefore => {
                let at = self.byte(self.cursor);
                self.text.replace_range(..at, "");
                self.cursor = 0;
            }
            Key::KillWord => {
                let before: Vec<char> = self.text.chars().take(self.cursor).collect();
                let mut start = before.len();
                while start > 0 && before[start - 1] == ' ' {
                    start -= 1;
                }
                while start > 0 && before[start - 1] != ' ' {
                    start -= 1;
                }
                let (from, to) = (self.byte(start), self.byte(self.cursor));
                self.text.replace_range(from..to, "");
                self.cursor = start;
            }
            Key::Enter => return Edit::Submit,
            Key::Escape => return Edit::Cancel,
            _ => return Edit::Ignored,
        }
        Edit::Changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(keys: &[Key]) -> Editor {
        let mut editor = Editor::default();
        for key in keys {
            editor.key(*key);
        }
        editor
    }

    #[test]
    fn keys_edit_at_the_cursor() {
        let editor = typed(&[
            Key::Char('h'),
            Key::Char('i'),
            Key::Left,
            Key::Char('é'),
            Key::End,
            Key::Char('!'),
            Key::Home,
            Key::Delete,
        ]);
        assert_eq!(editor.text(), "éi!");
        let mut editor = Editor::with("hello big world");
        editor.key(Key::KillWord);
        assert_eq!(editor.text(), "hello big ");
        editor.key(Key::Backspace);
        editor.key(Key::KillWord);
        assert_eq!(editor.text(), "hello ");
        editor.key(Key::KillBefore);
        assert_eq!((editor.text(), editor.cursor()), ("", 0));
        assert_eq!(editor.key(Key::Enter), Edit::Submit);
    }
}
