//! The signals a supervisor acts on. Once installed they never kill the supervisor, so it always
//! gets to record the ending, even when signalled while it writes.

use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::error::{Error, Result};

pub(crate) struct Signals {
    interrupt: Signal,
    terminate: Signal,
    hangup: Signal,
    stop: Signal,
    child: Signal,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SupervisorSignal {
    /// SIGINT: passed on to the program.
    Interrupt,
    /// SIGTERM: passed on; SIGKILL follows after the grace period.
    Terminate,
    /// SIGHUP: the pane was closed; passed on, then SIGKILL after the grace period.
    Hangup,
    /// SIGUSR1: `swarm stop` or `swarm down` asks the supervisor to end the program.
    Stop,
    /// SIGCHLD: a child ended; among them orphans the supervisor adopted, which it reaps.
    Child,
}

impl Signals {
    pub(crate) fn install() -> Result<Self> {
        let install = |kind: SignalKind| {
            signal(kind).map_err(|err| Error::os("install a signal handler", err))
        };
        Ok(Self {
            interrupt: install(SignalKind::interrupt())?,
            terminate: install(SignalKind::terminate())?,
            hangup: install(SignalKind::hangup())?,
            stop: install(SignalKind::user_defined1())?,
            child: install(SignalKind::child())?,
        })
    }

    pub(crate) async fn next(&mut self) -> SupervisorSignal {
        tokio::select! {
            _ = self.interrupt.recv() => SupervisorSignal::Interrupt,
            _ = self.terminate.recv() => SupervisorSignal::Terminate,
            _ = self.hangup.recv() => SupervisorSignal::Hangup,
            _ = self.stop.recv() => SupervisorSignal::Stop,
            _ = self.child.recv() => SupervisorSignal::Child,
        }
    }
}
