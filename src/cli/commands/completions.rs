//! `swarm completions SHELL`: print a completion script for bash, zsh, fish, elvish or PowerShell.
//! Dynamic completion of names (`COMPLETE=bash swarm`) is answered in `cli::run`, by `cli/complete.rs`.

use clap_complete::Shell;

use crate::cli::context::Context;
use crate::cli::output;
use crate::error::Result;

#[derive(Debug, clap::Args)]
#[command(after_help = "\
The script completes commands, options and fixed values. To complete the names of teams, members, \
pending requests and peers too, let the shell ask swarm itself on every Tab instead: \
`source <(COMPLETE=bash swarm)` in ~/.bashrc, `source <(COMPLETE=zsh swarm)` in ~/.zshrc (after \
compinit), `COMPLETE=fish swarm | source` in ~/.config/fish/config.fish. The names come from the \
home the command line points at (--home, else SWARM_HOME), and a home that cannot be read offers \
none.")]
pub(crate) struct Args {
    /// The shell to complete for
    #[arg(value_name = "SHELL")]
    pub(crate) shell: Shell,
}

/// `command` is the whole command line, which the script completes.
pub(crate) fn run(_ctx: &Context, args: Args, mut command: clap::Command) -> Result<()> {
    // Rendered into memory first: clap_complete panics on a failed write, and a closed pipe
    // must stay a quiet exit.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "swarm", &mut script);
    output::bytes(&script)
}
