//! A loopback stand-in for a model API, `tests/fixtures/<fixture>.py` (with `stand_in.py`): the
//! tests of MCP clients (`codex.rs`, `gemini.rs`) point a real agent CLI at it.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Child, Stdio};

use serde_json::Value;

use crate::harness::{Sandbox, eventually, require, skip};

/// The agent CLI `var` names (`SWARM_CODEX`, `SWARM_GEMINI`), and a sandbox whose PATH has this
/// build's `swarm` first, as its MCP server and hooks run `swarm`; `None`, having said why the
/// test is skipped, when `var` names none or python3 (the stand-in's language) is missing.
pub(crate) fn agent_and_sandbox(program: &str, var: &str) -> Option<(OsString, Sandbox)> {
    let Some(agent) = std::env::var_os(var).filter(|a| !a.is_empty()) else {
        skip(program, &format!("{var} names no {program}"));
        return None;
    };
    if !require("python3") {
        return None;
    }
    let mut sandbox = Sandbox::new();
    let path = sandbox.path_with_swarm();
    sandbox.set_env("PATH", path);
    Some((agent, sandbox))
}

/// A stand-in running: its port, and the file it logs each request to. Dropped, it is killed
/// and reaped.
pub(crate) struct StandIn {
    child: Child,
    pub(crate) port: u16,
    pub(crate) requests: PathBuf,
}

impl StandIn {
    /// Starts `tests/fixtures/<fixture>.py` on a free port of 127.0.0.1, playing `script` (its
    /// turns, as the fixture's docstring says), and waits until it listens.
    pub(crate) fn start(sandbox: &Sandbox, fixture: &str, script: &Value) -> Self {
        let work = sandbox.work();
        let script_file = sandbox.write("script.json", script.to_string());
        let port_file = work.join("port");
        let requests = work.join("requests.jsonl");
        let program = format!("{}/tests/fixtures/{fixture}.py", env!("CARGO_MANIFEST_DIR"));
        let child = sandbox
            .command("python3")
            // No __pycache__ beside the fixtures for the `stand_in` they import.
            .arg("-B")
            .arg(program)
            .args(["--port", "0", "--port-file"])
            .arg(&port_file)
            .arg("--log")
            .arg(&requests)
            .arg("--script")
            .arg(&script_file)
            .stdout(Stdio::null())
            .spawn()
            .expect("start the model stand-in");
        let mut port = String::new();
        eventually("the stand-in to listen", || {
            port = std::fs::read_to_string(&port_file).unwrap_or_default();
            !port.trim().is_empty()
        });
        Self {
            child,
            port: port.trim().parse().expect("the stand-in wrote its port"),
            requests,
        }
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
