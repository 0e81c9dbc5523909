//! What the screen shows besides the team: which member is selected, what the person is typing
//! or confirming, the feed's filter, which view is open, and the note the last action left.

use ratatui::text::Line;

use super::decisions::Decision;
use super::editor::Editor;
use super::snapshot::{Row, Snapshot};

/// What the keys do now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mode {
    Normal,
    /// The one-line editor is open, for this.
    Editing {
        purpose: Purpose,
        editor: Editor,
    },
    /// "stop bob? y/n"
    ConfirmStop(String),
}

/// What the editor's line is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Purpose {
    Send(String),
    Broadcast,
    /// The feedback (for a plan) or reason (for a shutdown request or permission ask) of a
    /// rejection.
    Reject(Decision),
    Filter,
}

impl Purpose {
    /// The prompt before the editor's line.
    pub(crate) fn prompt(&self) -> String {
        match self {
            Self::Send(name) => format!("to {name}: "),
            Self::Broadcast => "to everyone: ".to_owned(),
            Self::Reject(decision) => match &decision.tool {
                Some(tool) => format!("deny {}'s {tool}, because: ", decision.asker),
                None => format!("reject {}'s request, because: ", decision.asker),
            },
            Self::Filter => "filter: ".to_owned(),
        }
    }
}

/// The outcome of the last action, shown on the bottom line until the next key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Note {
    pub(crate) text: String,
    pub(crate) error: bool,
}

/// The selected member's pane, as last captured.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct PaneView {
    pub(crate) member: String,
    pub(crate) lines: Vec<Line<'static>>,
    /// The pane was not there at the last look.
    pub(crate) gone: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct View {
    /// The selected member, by name, so a row that moves keeps its selection.
    pub(crate) selected: Option<String>,
    pub(crate) mode: Mode,
    /// Only feed lines holding this are shown.
    pub(crate) filter: String,
    /// The task board replaces the pane and the feed.
    pub(crate) board: bool,
    pub(crate) help: bool,
    pub(crate) note: Option<Note>,
    pub(crate) pane: PaneView,
    /// Messages in the last minute.
    pub(crate) rate: usize,
}

impl Default for View {
    fn default() -> Self {
        Self {
            selected: None,
            mode: Mode::Normal,
            filter: String::new(),
            board: false,
            help: false,
            note: None,
            pane: PaneView::default(),
            rate: 0,
        }
    }
}

impl View {
    /// The selected row's index: the selected member's, else the first row.
    pub(crate) fn index(&self, snapshot: &Snapshot) -> Option<usize> {
        if snapshot.rows.is_empty() {
            return None;
        }
        let at = self
            .selected
            .as_ref()
            .and_then(|name| snapshot.rows.iter().position(|row| &row.name == name));
        Some(at.unwrap_or(0))
    }

    pub(crate) fn row<'a>(&self, snapshot: &'a Snapshot) -> Option<&'a Row> {
        self.index(snapshot).map(|at| &snapshot.rows[at])
    }

    /// Moves the selection by `by` rows, stopping at either end.
    pub(crate) fn select_by(&mut self, snapshot: &Snapshot, by: isize) {
        let Some(at) = self.index(snapshot) else {
            return;
        };
        let last = snapshot.rows.len() - 1;
        let to = at.saturating_add_signed(by).min(last);
        self.selected = Some(snapshot.rows[to].name.clone());
    }

    /// The decision `a` and `r` answer: the selected member's, else the oldest pending.
    pub(crate) fn decision<'a>(&self, snapshot: &'a Snapshot) -> Option<&'a Decision> {
        let selected = self.row(snapshot).map(|row| row.name.as_str());
        snapshot
            .decisions
            .iter()
            .find(|d| Some(d.subject()) == selected)
            .or_else(|| snapshot.decisions.first())
    }

    pub(crate) fn noted(&mut self, text: impl Into<String>, error: bool) {
        self.note = Some(Note {
            text: text.into(),
            error,
        });
    }
}
