//! The on-disk layout under swarm's home (DESIGN §2). Every path swarm touches is spelled here once.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::names::path_component;

#[derive(Debug, Clone)]
pub struct Home {
    root: PathBuf,
}

impl Home {
    pub fn new(root: PathBuf) -> Self {
        Self { root }
    }

    /// `--home`/`SWARM_HOME`, else `~/.swarm`.
    pub fn resolve(explicit: Option<PathBuf>) -> Result<Self> {
        if let Some(root) = explicit {
            return Ok(Self::new(absolute(&root)?));
        }
        let home = std::env::var_os("HOME")
            .filter(|home| !home.is_empty())
            .ok_or_else(|| {
                Error::usage("cannot find your home directory: HOME is not set")
                    .with_hint("set SWARM_HOME or pass --home DIR")
            })?;
        Ok(Self::new(PathBuf::from(home).join(".swarm")))
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn teams_dir(&self) -> PathBuf {
        self.root.join("teams")
    }

    pub fn team(&self, team: &str) -> TeamPaths {
        TeamPaths {
            dir: self.teams_dir().join(path_component(team)),
        }
    }

    pub fn peers_dir(&self) -> PathBuf {
        self.root.join("peers")
    }
}

/// Paths inside `teams/<team>/`.
#[derive(Debug, Clone)]
pub struct TeamPaths {
    dir: PathBuf,
}

impl TeamPaths {
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn config(&self) -> PathBuf {
        self.dir.join(CONFIG_FILE)
    }

    /// swarm's flock for config.json; never renamed, so every writer locks the same inode.
    pub fn config_flock(&self) -> PathBuf {
        self.dir.join(".config.flock")
    }

    pub fn inboxes(&self) -> PathBuf {
        self.dir.join("inboxes")
    }

    pub fn history(&self) -> PathBuf {
        self.dir.join("history")
    }

    pub fn logs(&self) -> PathBuf {
        self.dir.join("logs")
    }

    pub fn log(&self, member: &str) -> PathBuf {
        self.logs().join(format!("{}.log", path_component(member)))
    }
}

pub const CONFIG_FILE: &str = "config.json";

/// Makes a relative path absolute against the current directory, without resolving symlinks.
pub fn absolute(path: &Path) -> Result<PathBuf> {
    std::path::absolute(path).map_err(|err| Error::io("resolve", path, err))
}
