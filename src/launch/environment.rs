//! A member's environment (docs/ARCHITECTURE.md, "Secrets and the environment"): how the variables
//! the launch sets for it reach its supervisor without passing through tmux.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::peer::runtime_dir;

/// The variables the launch sets for one member, on their way to its supervisor: a file of mode
/// 0600 in the private runtime directory, named on the supervisor's command line. tmux's command
/// line (`-e`) would show their values to every local user, and `new-session -e` would keep them
/// in the session's environment, where every later pane of the session inherits them.
///
/// Dropped before [`Handoff::deliver`], the file is removed: no pane will read it.
pub(crate) struct Handoff {
    path: PathBuf,
    delivered: bool,
}

impl Handoff {
    pub(crate) fn write(env: &BTreeMap<String, String>) -> Result<Self> {
        Self::write_in(&runtime_dir()?, env)
    }

    fn write_in(dir: &Path, env: &BTreeMap<String, String>) -> Result<Self> {
        let mut file = tempfile::Builder::new()
            .prefix("env-")
            .suffix(".json")
            .permissions(fs::Permissions::from_mode(0o600))
            .tempfile_in(dir)
            .map_err(|err| Error::io("create a file in", dir, err))?;
        let json = serde_json::to_vec(env).map_err(std::io::Error::from)?;
        file.write_all(&json)
            .and_then(|()| file.flush())
            .map_err(|err| Error::io("write", file.path(), err))?;
        let (_, path) = file
            .keep()
            .map_err(|err| Error::io("keep", err.file.path(), err.error))?;
        Ok(Self {
            path,
            delivered: false,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The pane exists: its supervisor reads the file and removes it.
    pub(crate) fn deliver(mut self) {
        self.delivered = true;
    }
}

impl Drop for Handoff {
    fn drop(&mut self) {
        if !self.delivered {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// What the supervisor reads from a [`Handoff`]; the file is removed first, so the values stay on
/// disk no longer than it takes to start.
pub(crate) fn take_handoff(path: &Path) -> Result<BTreeMap<String, String>> {
    let bytes = fs::read(path).map_err(|err| {
        Error::io("read the member's environment from", path, err)
            .with_hint("a member's environment can be read once; start it again with `swarm up` or `swarm spawn`")
    })?;
    fs::remove_file(path).map_err(|err| Error::io("remove", path, err))?;
    serde_json::from_slice(&bytes).map_err(|err| {
        Error::runtime(format!(
            "the member's environment in {} is not a JSON object of strings: {err}",
            path.display()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handoff_is_private_read_once_and_removed_when_not_delivered() {
        let dir = tempfile::tempdir().unwrap();
        let env = BTreeMap::from([("API_KEY".to_owned(), "sk-1".to_owned())]);
        let written = Handoff::write_in(dir.path(), &env).unwrap();
        let path = written.path().to_path_buf();
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        written.deliver();
        assert_eq!(take_handoff(&path).unwrap(), env);
        assert!(!path.exists(), "read once, then gone");
        assert!(take_handoff(&path).is_err());

        let unused = Handoff::write_in(dir.path(), &env).unwrap();
        let path = unused.path().to_path_buf();
        drop(unused);
        assert!(!path.exists(), "a handoff no pane will read is removed");
    }
}
