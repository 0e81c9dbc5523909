//! A fenced member's sandbox (docs/ARCHITECTURE.md, "Fencing members"): the bubblewrap argv its
//! program runs under, and the check `up` and `spawn` make that one can be built here at all.
//!
//! Inside: the file system read-only, its working directory (or worktree) and `sandbox_write`
//! read-write, a private `/tmp`, a fresh `/dev` and `/proc`; hidden (an empty read-only tmpfs over
//! a directory, `/dev/null` over a file or socket): `sandbox_hide`, `~/.ssh`, `~/.aws`,
//! `~/.config/gh`, swarm's home, the runtime directory (every peer socket and the signing agent),
//! the team's tmux socket and the other members' worktrees. Its own pid namespace, so it sees and
//! signals nothing outside; with `sandbox_network = "none"` a network namespace of its own, and
//! with an allow-list the same, its program started by [`BRIDGE_COMMAND`] with a way to the
//! supervisor's proxy (`member/proxy.rs`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::base::process;
use crate::error::{Error, Result};
use crate::format::settings::{Fence, SandboxNetwork};

/// The program that builds the sandbox.
pub const BWRAP: &str = "bwrap";

/// The hidden swarm command that starts an allow-listed member's program inside its sandbox:
/// `swarm fence-bridge PROXY_SOCKET -- PROGRAM ARGS…` (`member/proxy.rs`).
pub const BRIDGE_COMMAND: &str = "fence-bridge";

/// Set in a fenced program's environment: the socket its `swarm` reaches its supervisor at.
pub const SUPERVISOR_SOCKET_VAR: &str = "SWARM_SUPERVISOR_SOCKET";

/// What every fence hides in the person's home directory, besides `sandbox_hide`.
pub const HIDDEN_IN_HOME: &[&str] = &[".ssh", ".aws", ".config/gh"];

/// How long the check that a sandbox can be built may take.
const CHECK_LIMIT: Duration = Duration::from_secs(10);

/// One mount of the sandbox, applied shortest path first so that a deeper one wins.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Mount {
    /// Read-write, as outside.
    Write(PathBuf),
    /// Not visible: an empty tmpfs over a directory (read-only once every mount is made),
    /// `/dev/null` over anything else.
    Hide(PathBuf),
    /// A private, writable, empty directory (`/tmp`).
    Private(PathBuf),
    /// Read-only, as outside, wherever the walls above it put it: the swarm program, which
    /// the fenced member runs to reach its supervisor.
    Read(PathBuf),
}

impl Mount {
    fn path(&self) -> &Path {
        match self {
            Self::Write(path) | Self::Hide(path) | Self::Private(path) | Self::Read(path) => path,
        }
    }
}

/// Everything a member's sandbox is made of, with the paths already found.
#[derive(Debug, Clone)]
pub struct Walls {
    /// Where the program starts, read-write.
    pub workdir: PathBuf,
    /// More read-write paths: `sandbox_write`, and a worktree's shared git directory.
    pub write: Vec<PathBuf>,
    /// What it must not see.
    pub hide: Vec<PathBuf>,
    pub network: SandboxNetwork,
    /// The supervisor's socket for this sandbox, the one way out (`member/fence.rs`).
    pub supervisor_socket: PathBuf,
    /// With an allow-list, the socket of the supervisor's proxy (`member/proxy.rs`).
    pub proxy_socket: Option<PathBuf>,
    /// The swarm program, seen read-only where it is even under `/tmp` or a hidden folder:
    /// without it the member could not reach its supervisor.
    pub swarm: PathBuf,
}

/// What a member's fence must hide besides its own `sandbox_hide`, as the supervisor finds it.
#[derive(Debug, Clone, Default)]
pub struct Outside {
    /// swarm's home.
    pub home: PathBuf,
    /// The runtime directory's parent (`$XDG_RUNTIME_DIR`), else the runtime directory.
    pub runtime: PathBuf,
    /// The tmux server's socket the pane runs on.
    pub tmux_socket: Option<PathBuf>,
    /// The person's home directory.
    pub user_home: Option<PathBuf>,
    /// The other members' worktrees, and the folders they are made in.
    pub worktrees: Vec<PathBuf>,
}

impl Walls {
    pub fn new(
        fence: &Fence,
        workdir: &Path,
        outside: &Outside,
        supervisor_socket: &Path,
        proxy_socket: Option<&Path>,
        swarm: &Path,
    ) -> Self {
        let mut hide: Vec<PathBuf> = fence.hide.iter().map(PathBuf::from).collect();
        if let Some(user_home) = &outside.user_home {
            hide.extend(HIDDEN_IN_HOME.iter().map(|dir| user_home.join(dir)));
        }
        hide.push(outside.home.clone());
        hide.push(outside.runtime.clone());
        hide.extend(outside.tmux_socket.clone());
        hide.extend(outside.worktrees.iter().cloned());
        Self {
            workdir: workdir.to_path_buf(),
            write: fence.write.iter().map(PathBuf::from).collect(),
            hide,
            network: fence.network.clone(),
            supervisor_socket: supervisor_socket.to_path_buf(),
            proxy_socket: proxy_socket.map(Path::to_path_buf),
            swarm: swarm.to_path_buf(),
        }
    }

    /// The mounts in the order bubblewrap makes them: shortest path first, so a deeper path
    /// decides for what is below it; at one depth a hidden path after a writable one, so the
    /// same path named both ways is hidden.
    fn mounts(&self) -> Vec<Mount> {
        let mut mounts = vec![Mount::Private(PathBuf::from("/tmp"))];
        mounts.extend(self.write.iter().cloned().map(Mount::Write));
        mounts.extend(self.hide.iter().cloned().map(Mount::Hide));
        mounts.push(Mount::Write(self.workdir.clone()));
        // Its own way out, inside the hidden runtime directory.
        mounts.push(Mount::Write(self.supervisor_socket.clone()));
        mounts.extend(self.proxy_socket.clone().map(Mount::Write));
        mounts.push(Mount::Read(self.swarm.clone()));
        let rank = |mount: &Mount| match mount {
            Mount::Private(_) => 0,
            Mount::Write(_) | Mount::Read(_) => 1,
            Mount::Hide(_) => 2,
        };
        mounts.sort_by_key(|mount| (mount.path().components().count(), rank(mount)));
        mounts.dedup();
        mounts
    }

    /// `bwrap … -- PROGRAM ARGS…`: the argv that runs `program` in this sandbox; with an
    /// allow-list, `bwrap … -- swarm fence-bridge PROXY_SOCKET -- PROGRAM ARGS…`.
    pub fn argv(&self, program: &[String]) -> Vec<String> {
        let mut argv = vec![BWRAP.to_owned()];
        argv.extend(
            namespaces(&self.network)
                .iter()
                .map(|arg| (*arg).to_owned()),
        );
        let shown = |path: &Path| path.display().to_string();
        let mut read_only = Vec::new();
        for mount in self.mounts() {
            match mount {
                Mount::Private(path) => argv.extend(["--tmpfs".to_owned(), shown(&path)]),
                Mount::Write(path) => {
                    argv.extend(["--bind-try".to_owned(), shown(&path), shown(&path)]);
                }
                Mount::Read(path) => {
                    argv.extend(["--ro-bind-try".to_owned(), shown(&path), shown(&path)]);
                }
                Mount::Hide(path) => match std::fs::metadata(&path) {
                    Ok(meta) if meta.is_dir() => {
                        argv.extend(["--tmpfs".to_owned(), shown(&path)]);
                        read_only.push(path);
                    }
                    Ok(_) => {
                        argv.extend(["--ro-bind".to_owned(), "/dev/null".into(), shown(&path)]);
                    }
                    // Nothing there to hide now.
                    Err(_) => {}
                },
            }
        }
        // Last: a read-only tmpfs could not take the mount points made inside it.
        for path in read_only {
            argv.extend(["--remount-ro".to_owned(), shown(&path)]);
        }
        argv.extend(["--chdir".to_owned(), shown(&self.workdir), "--".to_owned()]);
        if let Some(proxy) = &self.proxy_socket {
            argv.extend([
                shown(&self.swarm),
                BRIDGE_COMMAND.to_owned(),
                shown(proxy),
                "--".to_owned(),
            ]);
        }
        argv.extend(program.iter().cloned());
        argv
    }
}

/// What every sandbox is made in: its namespaces, no capabilities, the file system read-only
/// and a fresh `/dev` and `/proc`; the walls go on top.
fn namespaces(network: &SandboxNetwork) -> &'static [&'static str] {
    const ALL: &[&str] = &[
        "--die-with-parent",
        // Run by root, bubblewrap keeps its capabilities, with which the program could unmount
        // its walls: none, whoever runs it.
        "--cap-drop",
        "ALL",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-cgroup-try",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--unshare-net",
    ];
    if network.own_namespace() {
        ALL
    } else {
        &ALL[..ALL.len() - 1]
    }
}

/// Whether a sandbox can be built here: bubblewrap on PATH, and the kernel lets it make the
/// namespaces a fence needs. The refusal is one line that says what is missing; a member is
/// never started unfenced in its place.
pub fn check_available(network: &SandboxNetwork) -> Result<()> {
    let mut command = std::process::Command::new(BWRAP);
    command.args(namespaces(network)).args(["--", "true"]);
    let refused = |what: String| {
        Error::usage(format!("sandbox = true cannot be honoured: {what}"))
            .with_hint("install bubblewrap (Debian: apt-get install bubblewrap), or leave sandbox out to run the member unfenced")
    };
    match process::run_within(&mut command, None, CHECK_LIMIT) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            Err(refused(format!("bubblewrap ({BWRAP}) is not on PATH")))
        }
        Err(err) => Err(refused(format!("{BWRAP} cannot be run: {err}"))),
        Ok(None) => Err(refused(format!(
            "{BWRAP} did not finish within {}s",
            CHECK_LIMIT.as_secs()
        ))),
        Ok(Some(ran)) if !ran.output.status.success() => {
            let said = String::from_utf8_lossy(&ran.output.stderr);
            let said = said.lines().next().unwrap_or("no reason given").trim();
            Err(refused(format!(
                "{BWRAP} cannot make a sandbox here (user namespaces off in the kernel?): {said}"
            )))
        }
        Ok(Some(_)) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deeper_paths_decide_and_a_path_named_both_ways_is_hidden() {
        let fence = Fence {
            write: vec!["/data".into(), "/repo/secret".into()],
            hide: vec!["/repo/secret".into()],
            network: SandboxNetwork::Full,
        };
        let outside = Outside {
            home: "/h/.swarm".into(),
            runtime: "/run/user/7".into(),
            tmux_socket: Some("/tmp/tmux-7/default".into()),
            user_home: Some("/h".into()),
            worktrees: vec!["/repo/.swarm/worktrees".into()],
        };
        let walls = Walls::new(
            &fence,
            Path::new("/repo"),
            &outside,
            Path::new("/run/user/7/swarm/fence-9.sock"),
            None,
            Path::new("/tmp/build/swarm"),
        );
        let order: Vec<Mount> = walls.mounts();
        let at = |mount: Mount| order.iter().position(|m| *m == mount).unwrap();
        assert!(at(Mount::Private("/tmp".into())) < at(Mount::Write("/repo".into())));
        assert!(
            at(Mount::Write("/repo".into())) < at(Mount::Hide("/repo/.swarm/worktrees".into()))
        );
        assert!(at(Mount::Write("/repo/secret".into())) < at(Mount::Hide("/repo/secret".into())));
        assert!(
            at(Mount::Hide("/run/user/7".into()))
                < at(Mount::Write("/run/user/7/swarm/fence-9.sock".into()))
        );
        // The swarm program under the private /tmp is seen there all the same.
        assert!(at(Mount::Private("/tmp".into())) < at(Mount::Read("/tmp/build/swarm".into())));
        assert!(order.contains(&Mount::Hide("/h/.ssh".into())));
        assert!(order.contains(&Mount::Hide("/h/.config/gh".into())));
        let argv = walls.argv(&["claude".into()]);
        assert!(!argv.contains(&"--unshare-net".to_owned()));
        assert_eq!(argv.last().map(String::as_str), Some("claude"));
        let none = Walls {
            network: SandboxNetwork::None,
            ..walls
        };
        assert!(
            none.argv(&["x".into()])
                .contains(&"--unshare-net".to_owned())
        );
        // An allow-list: no host network, the proxy's socket seen, and the program started by
        // the bridge.
        let listed = Walls {
            network: SandboxNetwork::Only(vec!["example.com:443".parse().unwrap()]),
            proxy_socket: Some("/run/user/7/swarm/fence-9-net.sock".into()),
            ..none
        };
        let argv = listed.argv(&["x".into()]);
        assert!(argv.contains(&"--unshare-net".to_owned()));
        let tail = &argv[argv.len() - 5..];
        assert_eq!(
            tail,
            [
                "/tmp/build/swarm",
                BRIDGE_COMMAND,
                "/run/user/7/swarm/fence-9-net.sock",
                "--",
                "x"
            ]
        );
        assert!(
            listed
                .mounts()
                .contains(&Mount::Write("/run/user/7/swarm/fence-9-net.sock".into()))
        );
    }
}
