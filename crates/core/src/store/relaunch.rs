//! What a resume given no team file needs and config.json does not keep (docs/ARCHITECTURE.md,
//! "Resuming a team"): `teams/<team>/relaunch.json`, mode 0600, each member's `env` values and its
//! permission rules, as its launch had them. A value whose name looks secret (`base/secrets.rs`)
//! is never written: its name is all config.json keeps, and a resume takes its value from its own
//! environment, or says it goes without.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::base::secrets::looks_secret;
use crate::error::{Error, Result};
use crate::format::permission_rule::Rules;
use crate::store::durable::{atomic_write, private_dir, read_if_exists};
use crate::store::lock::Flock;
use crate::store::paths::TeamPaths;

/// One member's launch, as far as config.json does not keep it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberLaunch {
    /// Its team file's `env` (or `spawn --env`), secret-looking names left out.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The rules that answer its permission asks: the team's `[permissions]` and its own.
    #[serde(default, skip_serializing_if = "Rules::is_empty")]
    pub permissions: Rules,
}

impl MemberLaunch {
    /// What is kept of a launch with `env` and `permissions`: every variable but those whose
    /// name looks secret.
    pub fn of(env: &BTreeMap<String, String>, permissions: &Rules) -> Self {
        Self {
            env: env
                .iter()
                .filter(|(name, _)| !looks_secret(name))
                .map(|(name, value)| (name.clone(), value.clone()))
                .collect(),
            permissions: permissions.clone(),
        }
    }
}

/// Every member's, by name.
pub type Launches = BTreeMap<String, MemberLaunch>;

/// What is recorded, by member; none for a team launched before this file was.
pub fn read(paths: &TeamPaths) -> Result<Launches> {
    let Some(bytes) = read_if_exists(&paths.relaunch())? else {
        return Ok(Launches::new());
    };
    serde_json::from_slice(&bytes)
        .map_err(|err| Error::runtime(format!("cannot read {}: {err}", paths.relaunch().display())))
}

/// Records `launches`: with `replace`, in place of everything (a team launched anew), else over
/// the records of the same members (a member `spawn` adds).
pub fn record(paths: &TeamPaths, launches: Launches, replace: bool) -> Result<()> {
    private_dir(paths.private_root(), paths.dir())?;
    let _lock = Flock::wait(&paths.relaunch_lock())?;
    let mut all = if replace {
        Launches::new()
    } else {
        read(paths).unwrap_or_default()
    };
    all.extend(launches);
    let bytes = serde_json::to_vec_pretty(&all).map_err(|err| Error::runtime(err.to_string()))?;
    atomic_write(&paths.relaunch(), |out| out.write_all(&bytes))
}

/// Forgets `member`'s record: a `spawn` that failed takes it back out, and the file with it when
/// that was the only one.
pub fn forget(paths: &TeamPaths, member: &str) -> Result<()> {
    let _lock = Flock::wait(&paths.relaunch_lock())?;
    let mut all = read(paths)?;
    if all.remove(member).is_none() {
        return Ok(());
    }
    if all.is_empty() {
        return std::fs::remove_file(paths.relaunch())
            .map_err(|err| Error::io("remove", &paths.relaunch(), err));
    }
    let bytes = serde_json::to_vec_pretty(&all).map_err(|err| Error::runtime(err.to_string()))?;
    atomic_write(&paths.relaunch(), |out| out.write_all(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::permission_rule::RuleTexts;
    use crate::store::paths::Home;

    #[test]
    fn a_secret_value_is_never_written_and_spawn_adds_to_what_up_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Home::new(dir.path().to_path_buf()).team("t");
        let env = BTreeMap::from([
            ("MODE".to_owned(), "fast".to_owned()),
            ("ANTHROPIC_API_KEY".to_owned(), "sk-ant-secret".to_owned()),
        ]);
        let rules = Rules::try_from(RuleTexts {
            allow: vec!["Bash(cargo test:*)".into()],
            deny: vec![],
        })
        .unwrap();
        let bob = MemberLaunch::of(&env, &rules);
        record(&paths, Launches::from([("bob".into(), bob.clone())]), true).unwrap();
        let text = std::fs::read_to_string(paths.relaunch()).unwrap();
        assert!(
            !text.contains("sk-ant-secret") && !text.contains("ANTHROPIC"),
            "{text}"
        );
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(paths.relaunch()).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o600);
        let carol = MemberLaunch::of(&BTreeMap::new(), &Rules::default());
        record(
            &paths,
            Launches::from([("carol".into(), carol.clone())]),
            false,
        )
        .unwrap();
        let read = read(&paths).unwrap();
        assert_eq!(
            read["bob"].env,
            BTreeMap::from([("MODE".into(), "fast".into())])
        );
        assert_eq!(read["bob"].permissions, rules);
        assert_eq!(read["carol"], carol);
        forget(&paths, "carol").unwrap();
        assert!(!super::read(&paths).unwrap().contains_key("carol"));
        forget(&paths, "carol").unwrap();
        // A team launched anew starts its records again.
        record(&paths, Launches::from([("carol".into(), carol)]), true).unwrap();
        assert!(!super::read(&paths).unwrap().contains_key("bob"));
    }
}
