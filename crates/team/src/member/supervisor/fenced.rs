//! A fenced member's start (docs/ARCHITECTURE.md, "Fencing members"): its sandbox's walls, found
//! from where the supervisor runs, the socket its `swarm` reaches the supervisor at and, with an
//! allow-list, its proxy's (`member/proxy.rs`).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::error::{Error, Result};
use crate::format::config::Member;
use crate::format::event::What;
use crate::format::settings::{AllowedHost, Fence};
use crate::launch::sandbox::{Outside, SUPERVISOR_SOCKET_VAR, Walls};
use crate::launch::tmux;
use crate::member::fence::{self, Gate};
use crate::member::proxy::{self, Refusal};
use crate::store::events;
use crate::store::paths::RuntimePaths;

use super::AbortOnDrop;
use super::seat::Supervisor;

/// A sandbox ready to start: the argv to run, and the gate to open once it runs.
pub(super) struct Fenced {
    pub(super) argv: Vec<String>,
    socket: PathBuf,
    listener: UnixListener,
    gate: Arc<Gate>,
    proxy: Option<Proxy>,
}

/// The proxy of a sandbox with an allow-list, bound, not yet served.
struct Proxy {
    socket: PathBuf,
    listener: UnixListener,
    allowed: Vec<AllowedHost>,
    refusal: Arc<Refusal>,
}

/// A sandbox's ways out while its run lasts: its sockets go, and its proxy ends, when dropped.
pub(super) struct Opened {
    sockets: Vec<PathBuf>,
    _proxy: Option<AbortOnDrop>,
}

impl Drop for Opened {
    fn drop(&mut self) {
        for socket in &self.sockets {
            let _ = std::fs::remove_file(socket);
        }
    }
}

impl Fenced {
    /// The sandbox for `program` working in `workdir`, and its sockets bound (not yet served).
    pub(super) fn prepare(
        supervisor: &Supervisor,
        fence: &Fence,
        program: &[String],
        workdir: &Path,
        worktree: bool,
    ) -> Result<Self> {
        let program_path =
            std::env::current_exe().map_err(|err| Error::os("find the swarm program", err))?;
        let members = supervisor
            .team
            .load()
            .map(|config| config.members)
            .unwrap_or_default();
        let walls = Surroundings {
            home: supervisor.team.home().root(),
            name: &supervisor.name,
            members: &members,
            env: &|name| std::env::var_os(name),
            tmux_socket: tmux::current_socket(),
            pid: &std::process::id(),
            swarm: &program_path,
        }
        .walls(fence, workdir, worktree);
        let socket = walls.supervisor_socket.clone();
        let listener = fence::listen(&socket)?;
        let proxy = match (&walls.proxy_socket, fence.network.allowed()) {
            (Some(socket), allowed) => {
                let (paths, name) = (supervisor.team.paths().clone(), supervisor.name.clone());
                Some(Proxy {
                    listener: fence::listen(socket)?,
                    socket: socket.clone(),
                    allowed: allowed.to_vec(),
                    refusal: Refusal::new(move |target| {
                        events::tell(&paths, Some(&name), What::NetRefused { target });
                    }),
                })
            }
            (None, _) => None,
        };
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
            proxy,
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

    /// Opens the gate to the sandbox whose first process is `pid`, and serves its proxy; what
    /// is returned closes them when the run ends.
    pub(super) fn open(self, pid: i32) -> Opened {
        if let Some(stat) = crate::base::process::stat(pid) {
            let _ = self.gate.sandbox.set((pid, stat.start));
        }
        fence::serve(self.listener, self.gate);
        let mut sockets = vec![self.socket];
        let proxy = self.proxy.and_then(|proxy| {
            sockets.push(proxy.socket);
            match proxy::serve(proxy.listener, proxy.allowed, proxy.refusal) {
                Ok(task) => Some(AbortOnDrop(task)),
                // Its program then reaches nothing: the sandbox has no other way out.
                Err(err) => {
                    tracing::warn!("{err}");
                    None
                }
            }
        });
        Opened {
            sockets,
            _proxy: proxy,
        }
    }
}

/// What a member's sandbox is built from besides its fence: where its supervisor runs, or where
/// `up --dry-run` foresees it will.
pub(super) struct Surroundings<'a> {
    /// swarm's home.
    pub(super) home: &'a Path,
    /// The member's name.
    pub(super) name: &'a str,
    /// The team's members, as config.json records them.
    pub(super) members: &'a [Member],
    /// The supervisor's environment.
    pub(super) env: &'a dyn Fn(&str) -> Option<OsString>,
    /// The socket of the tmux server the pane runs on.
    pub(super) tmux_socket: Option<PathBuf>,
    /// The supervisor's pid, which names its sockets.
    pub(super) pid: &'a dyn std::fmt::Display,
    /// The swarm program.
    pub(super) swarm: &'a Path,
}

impl Surroundings<'_> {
    /// The walls of the sandbox `fence` makes around `workdir` (a worktree of the member's own
    /// when `worktree`).
    pub(super) fn walls(&self, fence: &Fence, workdir: &Path, worktree: bool) -> Walls {
        let mut fence = fence.clone();
        if worktree {
            // `<top>/.swarm/worktrees/<team>/<name>`: committing writes the shared git directory.
            if let Some(top) = workdir.ancestors().nth(4) {
                fence.write.push(top.join(".git").display().to_string());
            }
        }
        let runtime = RuntimePaths::current();
        let set = |name: &str| (self.env)(name).filter(|value| !value.is_empty());
        let outside = Outside {
            home: self.home.to_path_buf(),
            runtime: set("XDG_RUNTIME_DIR")
                .map_or_else(|| runtime.dir().to_path_buf(), PathBuf::from),
            tmux_socket: self.tmux_socket.clone(),
            user_home: set("HOME").map(PathBuf::from),
            worktrees: others_worktrees(self.name, self.members, workdir),
        };
        let proxy =
            (!fence.network.allowed().is_empty()).then(|| runtime.fence_proxy_socket(self.pid));
        Walls::new(
            &fence,
            workdir,
            &outside,
            &runtime.fence_socket(self.pid),
            proxy.as_deref(),
            self.swarm,
        )
    }
}

/// What the other members' worktrees are: each one recorded, and every `.swarm/worktrees`
/// folder above the member's directory, where those made later will be.
fn others_worktrees(name: &str, members: &[Member], workdir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = workdir
        .ancestors()
        .map(|dir| dir.join(".swarm").join("worktrees"))
        .filter(|dir| dir.is_dir())
        .collect();
    found.extend(
        members
            .iter()
            .filter(|member| member.name != name)
            .filter_map(|member| member.worktree_path.as_deref())
            .map(PathBuf::from),
    );
    found
}
