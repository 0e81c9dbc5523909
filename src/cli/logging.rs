//! Diagnostics on stderr through `tracing`. `-v`/`-q` pick the level; `RUST_LOG` overrides it.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

pub(crate) fn init(verbose: u8, quiet: u8) {
    let level = match (verbose, quiet) {
        (0, 0) => "warn",
        (_, 1) => "error",
        (_, q) if q >= 2 => "off",
        (1, _) => "info",
        (2, _) => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(format!("swarm={level}")));
    // A vanished pane makes stderr fail with EIO; the subscriber drops such writes instead of panicking.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .without_time()
        .try_init();
}
