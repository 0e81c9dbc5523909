//! What a key means, in the mode the screen is in (docs/ARCHITECTURE.md, "Dashboard").

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::editor::Key;
use super::view::Mode;

/// What the person asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Intent {
    Quit,
    Up,
    Down,
    /// Go to the selected member's pane.
    Goto,
    Send,
    Broadcast,
    Approve,
    /// Allow a permission ask and keep its suggested rules.
    ApproveAlways,
    Reject,
    Stop,
    Board,
    Filter,
    Help,
    Edit(Key),
    /// The answer to "are you sure?".
    Confirm(bool),
    Nothing,
}

pub(crate) fn intent(mode: &Mode, key: KeyEvent) -> Intent {
    if key.kind == KeyEventKind::Release {
        return Intent::Nothing;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    if ctrl && key.code == KeyCode::Char('c') {
        return Intent::Quit;
    }
    match mode {
        Mode::Editing { .. } => Intent::Edit(match key.code {
            KeyCode::Char('u') if ctrl => Key::KillBefore,
            KeyCode::Char('w') if ctrl => Key::KillWord,
            KeyCode::Char('a') if ctrl => Key::Home,
            KeyCode::Char('e') if ctrl => Key::End,
            KeyCode::Char(c) => Key::Char(c),
            KeyCode::Backspace => Key::Backspace,
            KeyCode::Delete => Key::Delete,
            KeyCode::Left => Key::Left,
            KeyCode::Right => Key::Right,
            KeyCode::Home => Key::Home,
            KeyCode::End => Key::End,
            KeyCode::Enter => Key::Enter,
            KeyCode::Esc => Key::Escape,
            _ => return Intent::Nothing,
        }),
        Mode::ConfirmStop(_) => match key.code {
            KeyCode::Char('y' | 'Y') => Intent::Confirm(true),
            _ => Intent::Confirm(false),
        },
        Mode::Normal => match key.code {
            KeyCode::Char('q') => Intent::Quit,
            KeyCode::Up | KeyCode::Char('k') => Intent::Up,
            KeyCode::Down | KeyCode::Char('j') => Intent::Down,
            KeyCode::Enter => Intent::Goto,
            KeyCode::Char('s') => Intent::Send,
            KeyCode::Char('S') => Intent::Broadcast,
            KeyCode::Char('a') => Intent::Approve,
            KeyCode::Char('A') => Intent::ApproveAlways,
            KeyCode::Char('r') => Intent::Reject,
            KeyCode::Char('x') => Intent::Stop,
            KeyCode::Char('t') => Intent::Board,
            KeyCode::Char('/') => Intent::Filter,
            KeyCode::Char('?') => Intent::Help,
            _ => Intent::Nothing,
        },
    }
}
