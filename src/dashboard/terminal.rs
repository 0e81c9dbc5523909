//! The terminal, taken for the dashboard and given back as it was: raw mode off, the main screen
//! back, the cursor shown. On a normal exit, an error, Ctrl-C (a key in raw mode), a signal, and a
//! panic, whose message then prints on the restored screen.

use std::io::{IsTerminal, Stdout};
use std::sync::Once;

use crossterm::cursor::Show;
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

use crate::error::{Error, Result};

/// The dashboard's terminal; dropping it gives the terminal back.
pub(crate) struct Guard {
    pub(crate) terminal: Terminal<CrosstermBackend<Stdout>>,
}

/// Whether stdin and stdout are both a terminal.
pub(crate) fn present() -> bool {
    std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

impl Guard {
    pub(crate) fn take() -> Result<Self> {
        install_panic_hook();
        enable_raw_mode().map_err(|err| Error::os("put the terminal in raw mode", err))?;
        if let Err(err) = execute!(std::io::stdout(), EnterAlternateScreen) {
            restore();
            return Err(Error::os("open the alternate screen", err));
        }
        match Terminal::new(CrosstermBackend::new(std::io::stdout())) {
            Ok(terminal) => Ok(Self { terminal }),
            Err(err) => {
                restore();
                Err(Error::os("draw on the terminal", err))
            }
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

/// Gives the terminal back; harmless when it was never taken, or already given back.
pub(crate) fn restore() {
    let _ = disable_raw_mode();
    let _ = execute!(std::io::stdout(), LeaveAlternateScreen, Show);
}

/// A panic gives the terminal back before its message prints, so the message can be read.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
}
