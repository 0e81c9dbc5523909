//! Worktree isolation: a member with `isolation = "worktree"` works in its own git worktree on
//! branch `swarm/<team>/<name>`, under the repository's `.swarm/worktrees/`. At its end, a worktree
//! with no new commits and no changes is removed with its branch; any other is kept.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};
use crate::store::lock::Flock;

#[derive(Debug, Clone)]
pub(crate) struct Worktree {
    pub(crate) repo: PathBuf,
    pub(crate) path: PathBuf,
    pub(crate) branch: String,
    /// The commit the worktree started from.
    pub(crate) base: String,
}

/// The top of the git repository containing `dir`, or a refusal naming the member.
pub(crate) fn require_repo(dir: &Path, member: &str) -> Result<PathBuf> {
    git(dir, ["rev-parse", "--show-toplevel"])
        .map(|top| PathBuf::from(top.trim()))
        .map_err(|_| {
            Error::usage(format!(
                "{member} uses worktree isolation, but {} is not inside a git repository",
                dir.display()
            ))
            .with_hint("run it from a git checkout, set the member's cwd to one, or drop isolation = \"worktree\"")
        })
}

/// Creates (or reuses, after an earlier run kept it) the member's worktree.
pub(crate) fn create(dir: &Path, team: &str, member: &str) -> Result<Worktree> {
    let repo = require_repo(dir, member)?;
    let common = common_dir(&repo)?;
    let _serial = lock_repo(&common)?;
    let branch = format!("swarm/{team}/{member}");
    let path = repo
        .join(".swarm")
        .join("worktrees")
        .join(format!("{team}-{member}"));
    exclude_swarm_dir(&common)?;
    if !path.join(".git").exists() {
        let branch_exists = git(
            &repo,
            [
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("refs/heads/{branch}"),
            ],
        )
        .is_ok();
        let path_arg = path.to_string_lossy().into_owned();
        if branch_exists {
            git(&repo, ["worktree", "add", &path_arg, &branch])?;
        } else {
            git(&repo, ["worktree", "add", "-b", &branch, &path_arg, "HEAD"])?;
        }
    }
    let base = git(&path, ["rev-parse", "HEAD"])?.trim().to_owned();
    Ok(Worktree {
        repo,
        path,
        branch,
        base,
    })
}

impl Worktree {
    /// Removes the worktree and its branch when nothing was committed or changed; returns the path
    /// when it is kept.
    pub(crate) fn finish(&self) -> Result<Option<PathBuf>> {
        let _serial = lock_repo(&common_dir(&self.repo)?)?;
        let head = git(&self.path, ["rev-parse", "HEAD"])?.trim().to_owned();
        let changes = git(
            &self.path,
            ["status", "--porcelain", "--untracked-files=all"],
        )?;
        if head != self.base || !changes.trim().is_empty() {
            return Ok(Some(self.path.clone()));
        }
        let path_arg = self.path.to_string_lossy().into_owned();
        git(&self.repo, ["worktree", "remove", &path_arg])?;
        git(&self.repo, ["branch", "-D", &self.branch])?;
        Ok(None)
    }
}

/// swarm's git commands on one repository run one at a time, across supervisors. git fails rather
/// than waits on a lock another git process holds, and `branch -D` reads every worktree, including
/// one that a concurrent `worktree add` has only half created.
fn lock_repo(common_dir: &Path) -> Result<Flock> {
    Flock::wait(&common_dir.join("swarm-worktrees.lock"))
}

/// The git directory that the repository's worktrees share.
fn common_dir(repo: &Path) -> Result<PathBuf> {
    let common = git(repo, ["rev-parse", "--git-common-dir"])?;
    Ok(repo.join(common.trim()))
}

/// Keeps `.swarm/` out of the main worktree's `git status`.
fn exclude_swarm_dir(common_dir: &Path) -> Result<()> {
    let exclude = common_dir.join("info").join("exclude");
    let current = fs::read_to_string(&exclude).unwrap_or_default();
    if current.lines().any(|line| line.trim() == "/.swarm/") {
        return Ok(());
    }
    crate::store::durable::create_dir_outside_home(crate::store::durable::parent(&exclude))?;
    let separator = if current.is_empty() || current.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    fs::write(&exclude, format!("{current}{separator}/.swarm/\n"))
        .map_err(|err| Error::io("write", &exclude, err))
}

fn git<I, S>(dir: &Path, args: I) -> Result<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args: Vec<_> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(&args)
        .output()
        .map_err(|err| {
            if err.kind() == std::io::ErrorKind::NotFound {
                Error::runtime("git is not installed")
                    .with_hint("install git to use worktree isolation")
            } else {
                Error::os("run git", err)
            }
        })?;
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
    }
    let shown: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    Err(Error::runtime(format!(
        "git {} failed in {}: {}",
        shown.join(" "),
        dir.display(),
        String::from_utf8_lossy(&output.stderr).trim()
    )))
}
