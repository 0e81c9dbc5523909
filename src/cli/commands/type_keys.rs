//! `swarm type NAME [TEXT|-]`: type keys into a member's pane by hand, as if at its keyboard,
//! then Enter (`--no-enter` leaves it out). Any bytes are safe: they reach tmux through a buffer
//! on its stdin, never as an argument it could read as a key name or an option.

use serde::Serialize;

use crate::cli::args;
use crate::cli::complete;
use crate::cli::context::Context;
use crate::cli::output::Report;
use crate::error::{Error, Result};
use crate::launch::tmux::Tmux;
use crate::member::pane::{self as member_pane, Found};
use crate::policy::{self, Action};
use clap_complete::engine::ArgValueCandidates;

const JSON: &str = r#"JSON output (--json), one document once the keys are typed: "name", "pane",
"bytes" (how many were typed) and "enter" (whether Enter followed)."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// The member whose pane to type into
    #[arg(value_name = "NAME", add = ArgValueCandidates::new(complete::members))]
    pub(crate) name: String,

    /// What to type, each character as a key; a newline is Enter. '-' or nothing reads the bytes
    /// from stdin (a pipe or file, not a terminal), control characters included
    #[arg(value_name = "TEXT", allow_hyphen_values = true)]
    pub(crate) text: Option<String>,

    /// Type the text without pressing Enter after it
    #[arg(long)]
    pub(crate) no_enter: bool,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let (team, name) = ctx.member_team(&args.name)?;
    let config = team.load()?;
    policy::allow(&config, &ctx.caller(&config)?, Action::Type)?;
    let member = config.require_member(name.as_str())?;
    let keys = match args.text {
        None => read_stdin()?,
        Some(text) if text == "-" => read_stdin()?,
        Some(text) => text.into_bytes(),
    };
    let gone = || {
        Error::not_found(format!(
            "{} has no pane to type into in team {}",
            member.name, config.name
        ))
    };
    let (Some(placement), false) = (&config.tmux, member.tmux_pane_id.is_empty()) else {
        return Err(gone().with_hint(format!(
            "only a member that runs a program has a pane; `swarm send {}` reaches its inbox",
            member.name
        )));
    };
    let pane = member.tmux_pane_id.as_str();
    let tmux = Tmux::at(&placement.socket);
    // The pane must still be this member's: tmux may have given its id to another pane since.
    if !matches!(member_pane::find(&team, &tmux, member)?, Found::Own(_)) {
        return Err(gone().with_hint(format!(
            "{}'s pane {pane} is gone; `swarm status` shows who still runs",
            member.name
        )));
    }
    let buffer = format!("swarm-type-{}", std::process::id());
    tmux.type_keys(pane, &buffer, &keys, !args.no_enter)?;
    ctx.report(&Typed {
        name: &member.name,
        pane,
        bytes: keys.len(),
        enter: !args.no_enter,
    })
}

/// The keys typed into a member's pane: only `--json` says anything.
#[derive(Serialize)]
struct Typed<'a> {
    name: &'a str,
    pane: &'a str,
    bytes: usize,
    enter: bool,
}

impl Report for Typed<'_> {
    fn text(&self) -> Result<()> {
        Ok(())
    }
}

/// The keys on stdin, as bytes: at most the size of a message.
fn read_stdin() -> Result<Vec<u8>> {
    args::read_stdin(
        "the keys",
        "`swarm type bob \"y\"`, or `printf 'y\\n' | swarm type bob - --no-enter`",
    )
}
