//! `swarm fence-bridge PROXY_SOCKET -- PROGRAM ARGS…`: the first program of a fenced member's
//! sandbox when its network is an allow-list (docs/ARCHITECTURE.md, "Fencing members"). It leaves
//! a bridge from a loopback port to its supervisor's proxy and becomes PROGRAM, told that port in
//! HTTP_PROXY, HTTPS_PROXY and ALL_PROXY. Not run by hand.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::error::Result;
use crate::member::proxy;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The supervisor's proxy socket, bound into the sandbox
    #[arg(value_name = "PROXY_SOCKET")]
    pub(crate) proxy: PathBuf,

    /// The member's program and its arguments
    #[arg(last = true, required = true, value_name = "CMD")]
    pub(crate) command: Vec<OsString>,
}

pub(crate) fn run(args: Args) -> Result<()> {
    match proxy::bridge_then_exec(&args.proxy, &args.command)? {}
}
