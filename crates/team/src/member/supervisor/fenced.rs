//! A fenced member's start (docs/ARCHITECTURE.md, "Fencing members"): its sandbox's walls, found
//! from where the supervisor runs, and the socket its `swarm` reaches the supervisor at.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::error::{Error, Result};
use crate::format::settings::Fence;
use crate::launch::sandbox::{Outside, SUPERVISOR_SOCKET_VAR, Walls};
use crate::member::fence::{self, Gate};
use crate::store::paths::RuntimePaths;

use super::seat::Supervisor;

/// A sandbox ready to start: the argv to run, and the gate to open once it runs.
pub(super) struct Fenced {
    pub(super) argv: Vec<String>,
    socket: PathBuf,
    listener: UnixListener,
    gate: Arc<Gate>,
}

impl Fenced {
    /// The sandbox for `program` working in `workdir`, and its socket bound (not yet served).
    pub(super) fn prepare(
        supervisor: &Supervisor,
        fence: &Fence,
        program: &[String],
        workdir: &Path,
        worktree: bool,
    ) -> Result<Self> {
        let mut fence = fence.clone();
        if worktree {
            // `<top>/.swarm/worktrees/<team>/<name>`: committing writes the shared git directory.
            if let Some(top) = workdir.ancestors().nth(4) {
                fence.write.push(top.join(".git").display().to_string());
            }
        }
        let runtime = RuntimePaths::current();
        let socket = runtime.fence_socket(std::process::id());
        let listener = fence::listen(&socket)?;
        let program_path =
            std::env::current_exe().map_err(|err| Error::os("find the swarm program", err))?;
        let outside = Outside {
            home: supervisor.team.home().root().to_path_buf(),
            runtime: std::env::var_os("XDG_RUNTIME_DIR")
                .filter(|dir| !dir.is_empty())
                .map_or_else(|| runtime.dir().to_path_buf(), PathBuf::from),
            tmux_socket: tmux_socket(),
            user_home: std::env::var_os("HOME")
                .filter(|home| !home.is_empty())
                .map(PathBuf::from),
            worktrees: others_worktrees(supervisor, workdir),
        };
        let walls = Walls::new(&fence, workdir, &outside, &socket, &program_path);
        Ok(Self {
            argv: walls.argv(program),
            gate: Arc::new(Gate {
                home: supervisor.team.home().root().to_path_buf(),
                team: supervisor.team.name().to_owned(),
                member: supervisor.name.clone(),
                workdir: workdir.to_path_buf(),
                program: program_path,
                sandbox: OnceLock::new(),
            }),
            socket,
            listener,
        })
    }

    /// The program's environment, told where its supervisor is.
    pub(super) fn env(
        &self,
        mut env: BTreeMap<OsString, OsString>,
    ) -> BTreeMap<OsString, OsString> {
        env.insert(SUPERVISOR_SOCKET_VAR.into(), self.socket.clone().into());
        env
    }

    /// Opens the gate to the sandbox whose first process is `pid`; returns the socket's path, to
    /// remove when the member ends.
    pub(super) fn open(self, pid: i32) -> PathBuf {
        if let Some(stat) = crate::base::process::stat(pid) {
            let _ = self.gate.sandbox.set((pid, stat.start));
        }
        fence::serve(self.listener, self.gate);
        self.socket
    }
}

/// The tmux server's socket this pane runs on: the first field of `TMUX`.
fn tmux_socket() -> Option<PathBuf> {
    let tmux = std::env::var("TMUX").ok()?;
    let socket = tmux.split(',').next()?;
    (!socket.is_empty()).then(|| PathBuf::from(socket))
}

/// What the other members' worktrees are: each one recorded, and every `.swarm/worktrees`
/// folder above the member's directory, where those made later will be.
fn others_worktrees(supervisor: &Supervisor, workdir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = workdir
        .ancestors()
        .map(|dir| dir.join(".swarm").join("worktrees"))
        .filter(|dir| dir.is_dir())
        .collect();
    if let Ok(config) = supervisor.team.load() {
        found.extend(
            config
                .members
                .iter()
                .filter(|member| member.name != supervisor.name)
                .filter_map(|member| member.worktree_path.as_deref())
                .map(PathBuf::from),
        );
    }
    found
}
