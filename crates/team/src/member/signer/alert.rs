//! The asks that wait, seen in the team's tmux session (docs/ARCHITECTURE.md, "Permission asks",
//! "Seen where people look"): the window's `@swarm-asks` option counts them, unset when none
//! waits, and each new one is told to every client attached to the session. Its own thread,
//! nudged by the rules thread after it answered what it could: a tmux server that is gone or
//! stuck delays no answer, and its failure is only logged.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};

use crate::error::Result;
use crate::launch::tmux::Tmux;
use crate::member::permission;
use crate::member::reach::Reach;
use crate::store::paths::Home;
use crate::store::team::Team;

/// Starts the thread that shows what waits in team `team`, and returns how to nudge it to look.
pub(super) fn start(home: Home, team: String, reach: Arc<dyn Reach>) -> Sender<()> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || show(&home, &team, reach.as_ref(), &receiver));
    sender
}

/// The window's flag as last set, and the asks already told.
#[derive(Default)]
struct Shown {
    flagged: Option<(PathBuf, String, usize)>,
    told: HashSet<String>,
}

/// Looks again at each nudge until the rules thread ends.
fn show(home: &Home, team: &str, reach: &dyn Reach, nudges: &Receiver<()>) {
    let mut shown = Shown::default();
    while nudges.recv().is_ok() {
        // One look answers every nudge that came meanwhile.
        nudges.try_iter().for_each(drop);
        if let Err(err) = look(home, team, reach, &mut shown) {
            tracing::warn!("cannot show the asks that wait: {err}");
        }
    }
}

/// Shows on the team's window what waits now, as `permission list` would list it.
fn look(home: &Home, name: &str, reach: &dyn Reach, shown: &mut Shown) -> Result<()> {
    let team = Team::open(home, name)?;
    let config = team.load()?;
    let Some(placement) = &config.tmux else {
        return Ok(());
    };
    let waiting = permission::pending(&team, reach)?;
    let tmux = Tmux::at(&placement.socket);
    let flag = (
        placement.socket.clone(),
        placement.window.clone(),
        waiting.len(),
    );
    if shown.flagged.as_ref() != Some(&flag) {
        shown.flagged = None;
        tmux.flag_asks(&placement.window, waiting.len())?;
        shown.flagged = Some(flag);
    }
    let new: Vec<_> = waiting
        .iter()
        .filter(|ask| !shown.told.contains(ask.request_id()))
        .collect();
    shown.told = waiting
        .iter()
        .map(|ask| ask.request_id().to_owned())
        .collect();
    if let Some(ask) = new.first() {
        let more = match new.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        let text = format!(
            "swarm {name}: {} asks to use {}{more} - swarm permission list",
            ask.member(),
            ask.tool()
        );
        tmux.tell_clients(&placement.session, &text)?;
    }
    Ok(())
}
