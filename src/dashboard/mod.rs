//! `swarm top`'s live dashboard: one layer between a member's life (`member/`) and the command
//! line (`cli/`), one concern per file (docs/ARCHITECTURE.md, "Dashboard"). It only shows what
//! the layers below already know, and every action goes through the paths the commands use, as
//! the person at the keyboard.
//!
//! - `snapshot`: the team as one look shows it, a row per member;
//! - `feed`: the messages `watch --all` shows, structured ones in words;
//! - `decisions`: the requests waiting for an answer;
//! - `pane`: the selected member's pane, with its colours;
//! - `editor`: the one-line editor;
//! - `input`: what a key means;
//! - `view`: what is on the screen besides the data: selection, mode, filter, notes;
//! - `render`: drawing it all, at any size;
//! - `actions`: sending, answering and stopping, as the commands do;
//! - `terminal`: the terminal taken and given back, also on a panic;
//! - `app`: the loop, woken by the one watcher, a key, or the clock.

mod actions;
mod app;
mod decisions;
mod editor;
mod feed;
mod input;
mod pane;
mod render;
mod snapshot;
mod terminal;
mod view;

pub(crate) use actions::ActingAs;
pub(crate) use app::{Exit, run};
pub(crate) use feed::one_line;
pub(crate) use terminal::present as terminal_present;
