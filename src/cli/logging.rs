//! Diagnostics on stderr through `tracing`. `-v`/`-q` pick the level; `RUST_LOG` overrides it.
//! Every field is shown as [`for_terminal`] makes it: a log line names members and quotes what
//! tmux or a peer said, and must not act on the terminal (docs/ARCHITECTURE.md, "Terminal output").

use std::fmt;

use tracing::field::Field;
use tracing_subscriber::field::MakeExt;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::fmt::format::{Writer, debug_fn};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use crate::base::text::for_terminal;
use crate::cli::output::Colour;

/// While set, log lines are dropped: the dashboard holds the terminal, and a line on stderr would
/// land in the middle of its screen. What goes wrong there is shown on the screen instead.
static HELD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Holds log lines back (`true`) or lets them through again (`false`).
pub(crate) fn hold(held: bool) {
    HELD.store(held, std::sync::atomic::Ordering::Relaxed);
}

fn writer() -> Box<dyn std::io::Write> {
    if HELD.load(std::sync::atomic::Ordering::Relaxed) {
        Box::new(std::io::sink())
    } else {
        Box::new(std::io::stderr())
    }
}

/// `colour` is `--color`: log lines are coloured as stdout is, by the same rule.
pub(crate) fn init(verbose: u8, quiet: u8, colour: Colour) {
    let level = match (verbose, quiet) {
        (0, 0) => LevelFilter::WARN,
        (_, 1) => LevelFilter::ERROR,
        (_, q) if q >= 2 => LevelFilter::OFF,
        (1, _) => LevelFilter::INFO,
        (2, _) => LevelFilter::DEBUG,
        _ => LevelFilter::TRACE,
    };
    let fields = debug_fn(
        |writer: &mut Writer<'_>, field: &Field, value: &dyn fmt::Debug| {
            let value = format!("{value:?}");
            match field.name() {
                "message" => write!(writer, "{}", for_terminal(&value)),
                name => write!(writer, "{name}={}", for_terminal(&value)),
            }
        },
    )
    .delimited(" ");
    // A vanished pane makes stderr fail with EIO; the subscriber drops such writes instead of panicking.
    let lines = tracing_subscriber::fmt::layer()
        .fmt_fields(fields)
        .with_writer(writer)
        .with_ansi(colour.on(std::io::IsTerminal::is_terminal(&std::io::stderr())))
        .with_target(false)
        .without_time();
    let registry = tracing_subscriber::registry();
    // RUST_LOG is parsed only when it is set: building an EnvFilter is a cost every command's
    // start-up would pay (docs/ARCHITECTURE.md, "Start-up"). A RUST_LOG that does not parse is
    // ignored, as before.
    let from_env = std::env::var_os("RUST_LOG")
        .is_some()
        .then(EnvFilter::try_from_default_env)
        .and_then(Result::ok);
    let _ = match from_env {
        Some(filter) => registry.with(lines.with_filter(filter)).try_init(),
        None => {
            // `swarm node`'s own lines (connected, lost the server, trying again) are its output
            // in its pane or journal: shown at the default level, silenced by -q like every other
            // line. "swarm" covers the workspace's crates too (a target prefix).
            let node = if level == LevelFilter::WARN {
                LevelFilter::INFO
            } else {
                level
            };
            let targets = Targets::new()
                .with_target("swarm", level)
                .with_target("swarm::node", node);
            registry.with(lines.with_filter(targets)).try_init()
        }
    };
}
