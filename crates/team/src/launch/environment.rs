//! A member's environment (docs/ARCHITECTURE.md, "Secrets and the environment"): how the variables
//! the launch sets for it reach its supervisor without passing through tmux, and the one function
//! that builds what its program gets from what the pane inherits, those variables and the
//! member's rules.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::settings::EnvPolicy;
use crate::peer::runtime_dir;

/// The search path a program gets when nothing gives it one, after swarm's own directory: what
/// tmux gives a pane without PATH, and the C library searches when PATH is unset.
const DEFAULT_PATH: &str = "/usr/bin:/bin";

/// The member's own worktree, when it has one.
pub(crate) const WORKTREE_VAR: &str = "SWARM_WORKTREE";

/// The home a member's program works in: the one its host keeps the team in.
pub const HOME_VAR: &str = "SWARM_HOME";

/// What the supervisor adds once the program's run exists.
#[derive(Debug, Clone, Default)]
pub(crate) struct Started {
    /// The directory of the `swarm` that runs the member, first on its PATH.
    pub(crate) swarm_dir: Option<PathBuf>,
    /// `SWARM_*` variables of the run: its marker, its socket, its worktree.
    pub(crate) vars: Vec<(String, String)>,
}

/// A program's environment, and where each variable came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProgramEnv {
    pub vars: BTreeMap<OsString, OsString>,
    /// Names inherited from the pane that the program gets as they were.
    pub(crate) inherited: BTreeSet<OsString>,
    /// Names inherited from the pane that the member's rules removed and nothing sets again:
    /// the program does not have them.
    pub removed: BTreeSet<OsString>,
}

/// What a member's program gets (docs/ARCHITECTURE.md, "Secrets and the environment"): of what
/// its pane `inherited`, what its rules keep (the test hooks never); over that, the variables the
/// launch set for it (`own`), which no rule removes; then `swarm`'s own directory first on PATH;
/// then the run's variables. The supervisor starts the program with exactly this, and
/// `up --dry-run` shows it, from what the pane will inherit.
pub(crate) fn program_env(
    inherited: impl IntoIterator<Item = (OsString, OsString)>,
    own: &BTreeMap<String, String>,
    policy: &EnvPolicy,
    started: &Started,
) -> ProgramEnv {
    let mut env = ProgramEnv::default();
    for (name, value) in inherited {
        if crate::base::TEST_HOOKS
            .iter()
            .any(|hook| OsStr::new(hook) == name)
        {
            continue;
        }
        if name.to_str().is_some_and(|name| policy.keeps(name)) || kept_unnamed(&name, policy) {
            env.inherited.insert(name.clone());
            env.vars.insert(name, value);
        } else {
            env.removed.insert(name);
        }
    }
    for (name, value) in own {
        let name = OsString::from(name);
        env.inherited.remove(&name);
        env.removed.remove(&name);
        env.vars.insert(name, value.into());
    }
    if let Some(dir) = &started.swarm_dir {
        let mut path = dir.as_os_str().to_owned();
        path.push(":");
        match env.vars.get(OsStr::new("PATH")) {
            Some(rest) => path.push(rest),
            None => path.push(DEFAULT_PATH),
        }
        env.inherited.remove(OsStr::new("PATH"));
        env.removed.remove(OsStr::new("PATH"));
        env.vars.insert("PATH".into(), path);
    }
    for (name, value) in &started.vars {
        env.inherited.remove(OsStr::new(name));
        env.removed.remove(OsStr::new(name));
        env.vars.insert(name.into(), value.into());
    }
    env
}

/// A name that is not UTF-8 matches no rule: it stays unless the environment is cleared.
fn kept_unnamed(name: &OsStr, policy: &EnvPolicy) -> bool {
    name.to_str().is_none() && !policy.clear
}

/// What makes the rules of one place (the team file's top, a member's own, `spawn`'s flags)
/// impossible to follow, before anything starts: a name no variable can have, a name both kept
/// and removed, a variable the member sets and removes. Between places there is no
/// contradiction: a name removed anywhere is removed, and a member's own variables are set
/// whatever the rules remove.
pub(crate) fn check_policy(
    policy: &EnvPolicy,
    own: &BTreeMap<String, String>,
) -> std::result::Result<(), String> {
    for (list, names) in [("env_keep", &policy.keep), ("env_remove", &policy.remove)] {
        if let Some(bad) = names
            .iter()
            .find(|name| name.is_empty() || name.as_bytes().iter().any(|b| *b == b'=' || *b == 0))
        {
            return Err(format!(
                "{list} names {bad:?}, which no variable can be called"
            ));
        }
    }
    if let Some(both) = policy.keep.intersection(&policy.remove).next() {
        return Err(format!("{both} is both in env_keep and in env_remove"));
    }
    if let Some(set) = own.keys().find(|name| policy.remove.contains(*name)) {
        return Err(format!(
            "{set} is set in env and removed by env_remove; drop one"
        ));
    }
    Ok(())
}

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
        Self::write_in(runtime_dir()?.dir(), env)
    }

    fn write_in(dir: &Path, env: &BTreeMap<String, String>) -> Result<Self> {
        let mut file = tempfile::Builder::new()
            .prefix("env-")
            .suffix(".json")
            .permissions(fs::Permissions::from_mode(0o600))
            .tempfile_in(dir)
            .map_err(|err| Error::io("create a file in", dir, err))?;
        let json = serde_json::to_vec(env)
            .map_err(|err| Error::runtime(format!("cannot write the environment: {err}")))?;
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

    fn os(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(name, value)| ((*name).into(), (*value).into()))
            .collect()
    }

    fn names(set: &BTreeSet<OsString>) -> Vec<&str> {
        set.iter().map(|name| name.to_str().unwrap()).collect()
    }

    const PANE: &[(&str, &str)] = &[
        ("PATH", "/usr/bin"),
        ("HOME", "/home/me"),
        ("TERM", "tmux-256color"),
        ("ANTHROPIC_API_KEY", "sk-ant"),
        ("AWS_SECRET_ACCESS_KEY", "aws"),
        ("SWARM_AGENT", "someone-else"),
        ("SWARM_TEST_NOW", "0"),
    ];

    fn started() -> Started {
        Started {
            swarm_dir: Some(PathBuf::from("/opt/swarm")),
            vars: vec![("SWARM_RUN_ID".to_owned(), "bob@t/1/2".to_owned())],
        }
    }

    #[test]
    fn without_rules_the_program_inherits_everything_but_the_test_hooks() {
        let own = BTreeMap::from([("SWARM_AGENT".to_owned(), "bob".to_owned())]);
        let env = program_env(os(PANE), &own, &EnvPolicy::default(), &started());
        let get = |name: &str| env.vars[OsStr::new(name)].to_str().unwrap().to_owned();
        assert_eq!(get("ANTHROPIC_API_KEY"), "sk-ant");
        assert_eq!(get("SWARM_AGENT"), "bob", "what the launch sets wins");
        assert_eq!(get("PATH"), "/opt/swarm:/usr/bin");
        assert_eq!(get("SWARM_RUN_ID"), "bob@t/1/2");
        assert!(!env.vars.contains_key(OsStr::new("SWARM_TEST_NOW")));
        assert_eq!(
            names(&env.inherited),
            ["ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "HOME", "TERM"]
        );
        assert!(env.removed.is_empty());
    }

    #[test]
    fn rules_remove_and_clear_what_is_inherited_never_what_the_launch_sets() {
        let remove = EnvPolicy {
            remove: BTreeSet::from(["ANTHROPIC_API_KEY".to_owned()]),
            ..EnvPolicy::default()
        };
        let env = program_env(os(PANE), &BTreeMap::new(), &remove, &started());
        assert!(!env.vars.contains_key(OsStr::new("ANTHROPIC_API_KEY")));
        assert!(env.vars.contains_key(OsStr::new("AWS_SECRET_ACCESS_KEY")));
        assert_eq!(names(&env.removed), ["ANTHROPIC_API_KEY"]);

        let clear = EnvPolicy {
            clear: true,
            keep: BTreeSet::from(["HOME".to_owned(), "PATH".to_owned()]),
            remove: BTreeSet::new(),
        };
        let own = BTreeMap::from([("SWARM_AGENT".to_owned(), "bob".to_owned())]);
        let env = program_env(os(PANE), &own, &clear, &started());
        let kept: Vec<&str> = env.vars.keys().map(|k| k.to_str().unwrap()).collect();
        assert_eq!(kept, ["HOME", "PATH", "SWARM_AGENT", "SWARM_RUN_ID"]);

        // Without PATH, the program still finds swarm, and what the C library would search.
        let bare = EnvPolicy {
            clear: true,
            ..EnvPolicy::default()
        };
        let env = program_env(os(PANE), &BTreeMap::new(), &bare, &started());
        assert_eq!(env.vars[OsStr::new("PATH")], "/opt/swarm:/usr/bin:/bin");
        assert_eq!(
            names(&env.removed),
            [
                "ANTHROPIC_API_KEY",
                "AWS_SECRET_ACCESS_KEY",
                "HOME",
                "SWARM_AGENT",
                "TERM"
            ],
            "PATH is set again, so not withheld"
        );
    }

    #[test]
    fn impossible_rules_are_refused() {
        let rules = |keep: &[&str], remove: &[&str]| EnvPolicy {
            clear: true,
            keep: keep.iter().map(|n| (*n).to_owned()).collect(),
            remove: remove.iter().map(|n| (*n).to_owned()).collect(),
        };
        let none = BTreeMap::new();
        assert!(check_policy(&rules(&["PATH"], &["API_KEY"]), &none).is_ok());
        for (bad, own) in [
            (rules(&["A=B"], &[]), &none),
            (rules(&[], &[""]), &none),
            (rules(&["X"], &["X"]), &none),
            (
                rules(&[], &["TOKEN"]),
                &BTreeMap::from([("TOKEN".to_owned(), "t".to_owned())]),
            ),
        ] {
            assert!(check_policy(&bad, own).is_err(), "{bad:?}");
        }
    }

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
