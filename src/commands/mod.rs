//! One file per command, each with its `Args` and a `run` function.

pub mod completions;
pub mod down;
pub mod inbox;
pub mod info;
pub mod init;
pub mod join;
pub mod listen;
pub mod log;
pub mod ls;
pub mod man;
pub mod peers;
pub mod plan;
pub mod recv;
pub mod send;
pub mod shutdown;
pub mod spawn;
pub mod status;
pub mod stop;
pub mod up;
pub mod wait;
pub mod watch;

use crate::cli::{Cli, Command};
use crate::context::Context;
use crate::error::Result;

pub fn dispatch(cli: Cli) -> Result<()> {
    let global = cli.global;
    let ctx = Context::new(global.home, global.team, global.agent, global.json)?;
    match cli.command {
        Command::Up(args) => up::run(&ctx, args),
        Command::Spawn(args) => spawn::run(&ctx, args),
        Command::Down(args) => down::run(&ctx, args),
        Command::Info(args) => info::run(&ctx, args),
        Command::Log(args) => log::run(&ctx, args),
        Command::Wait(args) => wait::run(&ctx, args),
        Command::Stop(args) => stop::run(&ctx, args),
        Command::Listen(args) => listen::run(&ctx, args),
        Command::Peers(args) => peers::run(&ctx, args),
        Command::Completions(args) => completions::run(&ctx, args),
        Command::Man(args) => man::run(&ctx, args),
        Command::Run(args) => crate::supervisor::run(&ctx, args),
        Command::Init(args) => init::run(&ctx, args),
        Command::Join(args) => join::run(&ctx, args),
        Command::Ls(args) => ls::run(&ctx, args),
        Command::Status(args) => status::run(&ctx, args),
        Command::Send(args) => send::run(&ctx, args),
        Command::Inbox(args) => inbox::run(&ctx, args),
        Command::Recv(args) => recv::run(&ctx, args),
        Command::Watch(args) => watch::run(&ctx, args),
        Command::Shutdown(command) => shutdown::run(&ctx, command),
        Command::Plan(command) => plan::run(&ctx, command),
    }
}
