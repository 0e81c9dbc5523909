//! Worktree isolation: a member with `isolation = "worktree"` works in its own git worktree on
//! branch `swarm/<team>/<name>`, at the repository's `.swarm/worktrees/<team>/<name>`. At its end,
//! a worktree with no new commits and no changes is removed with its branch; any other is kept,
//! and the next run of that member works in it again, wherever it is.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::base::process;
use crate::error::{Error, Result};
use crate::store::durable;
use crate::store::lock::Flock;
use crate::store::paths::RepoPaths;

#[derive(Debug, Clone)]
pub(crate) struct Worktree {
    pub(crate) repo: PathBuf,
    pub(crate) path: PathBuf,
    pub(crate) branch: String,
    /// The commit the worktree started from.
    pub(crate) base: String,
    /// `.swarm/worktrees/<team>`, when the worktree is in it: removed with the team's last
    /// worktree. A kept worktree found elsewhere leaves its folder alone.
    team_dir: Option<PathBuf>,
}

/// The top of the git repository containing `dir`, or a refusal naming the member.
pub fn require_repo(dir: &Path, member: &str) -> Result<PathBuf> {
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

/// Where [`create`] makes the member's worktree (a worktree an earlier run kept may be elsewhere).
pub(crate) fn foreseen_path(dir: &Path, team: &str, member: &str) -> Result<PathBuf> {
    let repo = require_repo(dir, member)?;
    Ok(RepoPaths::new(repo.clone(), common_dir(&repo)?).worktree(team, member))
}

/// Creates (or reuses, after an earlier run kept it) the member's worktree.
pub(crate) fn create(dir: &Path, team: &str, member: &str) -> Result<Worktree> {
    let repo = require_repo(dir, member)?;
    let paths = RepoPaths::new(repo.clone(), common_dir(&repo)?);
    let _serial = lock_repo(&paths)?;
    let branch = format!("swarm/{team}/{member}");
    exclude_swarm_dir(&paths)?;
    // A worktree an earlier run kept is the member's, even at the path an older swarm chose.
    let path = match checked_out_at(&repo, &branch)? {
        Some(path) if path.join(".git").exists() => path,
        found => {
            if found.is_some() {
                // Its directory was deleted by hand: git still counts the branch as checked out.
                git(&repo, ["worktree", "prune"])?;
            }
            let path = paths.worktree(team, member);
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
            path
        }
    };
    let base = git(&path, ["rev-parse", "HEAD"])?.trim().to_owned();
    let team_dir = (path == paths.worktree(team, member)).then(|| paths.team_worktrees(team));
    Ok(Worktree {
        repo,
        path,
        branch,
        base,
        team_dir,
    })
}

/// Where `branch` is checked out in a linked worktree of `repo`, if it is. The main worktree
/// (listed first) is the user's own checkout and never the member's: a branch checked out there
/// is left to `git worktree add` to refuse.
fn checked_out_at(repo: &Path, branch: &str) -> Result<Option<PathBuf>> {
    let listing = git(repo, ["worktree", "list", "--porcelain"])?;
    let wanted = format!("branch refs/heads/{branch}");
    let mut path = None;
    let mut linked = false;
    for line in listing.lines() {
        if let Some(worktree) = line.strip_prefix("worktree ") {
            linked = path.is_some();
            path = Some(PathBuf::from(worktree));
        } else if line == wanted && linked {
            return Ok(path);
        }
    }
    Ok(None)
}

impl Worktree {
    /// Removes the worktree and its branch when nothing was committed or changed; returns the path
    /// when it is kept.
    pub(crate) fn finish(&self) -> Result<Option<PathBuf>> {
        let _serial = lock_repo(&RepoPaths::new(self.repo.clone(), common_dir(&self.repo)?))?;
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
        // The team's directory goes with its last worktree; one still in use is not empty.
        if let Some(team_dir) = &self.team_dir {
            let _ = fs::remove_dir(team_dir);
        }
        Ok(None)
    }
}

/// A member's worktree as the dashboard shows it: the branch checked out there, and the lines its
/// uncommitted changes add and remove (`git diff --numstat HEAD`). `None` when it is no worktree.
pub fn changes(path: &Path) -> Option<(String, u64, u64)> {
    let branch = git(path, ["rev-parse", "--abbrev-ref", "HEAD"]).ok()?;
    let numstat = git(path, ["diff", "--numstat", "HEAD"]).ok()?;
    let (mut added, mut removed) = (0, 0);
    for line in numstat.lines() {
        let mut fields = line.split('\t');
        // A binary file counts `-` lines.
        added += fields
            .next()
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0);
        removed += fields
            .next()
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0);
    }
    Some((branch.trim().to_owned(), added, removed))
}

/// swarm's git commands on one repository run one at a time, across supervisors. git fails rather
/// than waits on a lock another git process holds, and `branch -D` reads every worktree, including
/// one that a concurrent `worktree add` has only half created.
fn lock_repo(paths: &RepoPaths) -> Result<Flock> {
    Flock::wait(&paths.git_lock())
}

/// The git directory that the repository's worktrees share.
fn common_dir(repo: &Path) -> Result<PathBuf> {
    let common = git(repo, ["rev-parse", "--git-common-dir"])?;
    Ok(repo.join(common.trim()))
}

/// Keeps `.swarm/` out of the main worktree's `git status`: one line added to the repository's
/// `info/exclude`, which is the user's file, so it is replaced atomically and whatever it held is
/// kept byte for byte.
fn exclude_swarm_dir(paths: &RepoPaths) -> Result<()> {
    let exclude = paths.exclude();
    let current = durable::read_if_exists(&exclude)?.unwrap_or_default();
    if current
        .split(|b| *b == b'\n')
        .any(|line| line.trim_ascii() == RepoPaths::EXCLUDED.as_bytes())
    {
        return Ok(());
    }
    durable::create_dir_outside_home(durable::parent(&exclude))?;
    // The user's file keeps its mode; a new one gets git's usual 0644.
    let mode = fs::metadata(&exclude).map_or(0o644, |meta| meta.permissions().mode() & 0o7777);
    durable::atomic_write(&exclude, |out| {
        out.write_all(&current)?;
        if !current.is_empty() && !current.ends_with(b"\n") {
            out.write_all(b"\n")?;
        }
        writeln!(out, "{}", RepoPaths::EXCLUDED)
    })?;
    fs::set_permissions(&exclude, fs::Permissions::from_mode(mode))
        .map_err(|err| Error::io("restore the mode of", &exclude, err))
}

/// How long one git command may take: a worktree of a large repository takes a while to check out,
/// but a git that never ends must not hold up the supervisor, or the repository's lock, for ever
/// (docs/ARCHITECTURE.md, "External programs").
const GIT_BOUND: std::time::Duration = std::time::Duration::from_secs(300);

fn git<I, S>(dir: &Path, args: I) -> Result<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args: Vec<_> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
    let shown = || {
        args.iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut command = Command::new("git");
    command.arg("-C").arg(dir).args(&args);
    let output = match process::run_within(&mut command, None, GIT_BOUND) {
        Ok(Some(ran)) => ran.output,
        Ok(None) => {
            return Err(Error::runtime(format!(
                "git {} got no answer within {}s in {}",
                shown(),
                GIT_BOUND.as_secs(),
                dir.display()
            ))
            .with_hint("see what holds the repository up (a lock, a hook, a slow file system)"));
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::runtime("git is not installed")
                .with_hint("install git to use worktree isolation"));
        }
        Err(err) => return Err(Error::os("run git", err)),
    };
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
    }
    Err(Error::runtime(format!(
        "git {} failed in {}: {}",
        shown(),
        dir.display(),
        String::from_utf8_lossy(&output.stderr).trim()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository with one commit, in a temporary directory.
    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path();
        git(top, ["init", "-q", "-b", "main"]).unwrap();
        fs::write(top.join("README"), "hi\n").unwrap();
        git(top, ["add", "README"]).unwrap();
        git(
            top,
            [
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "start",
            ],
        )
        .unwrap();
        dir
    }

    #[test]
    fn team_and_member_names_that_join_alike_get_worktrees_of_their_own() {
        let repo = repo();
        let first = create(repo.path(), "a-b", "c").unwrap();
        let second = create(repo.path(), "a", "b-c").unwrap();
        assert_ne!(first.path, second.path);
        assert_eq!(
            first.path,
            repo.path().join(".swarm/worktrees/a-b/c"),
            "one directory per team"
        );
        assert_eq!(
            git(&second.path, ["branch", "--show-current"])
                .unwrap()
                .trim(),
            "swarm/a/b-c"
        );
        assert_eq!(first.finish().unwrap(), None);
        assert!(!repo.path().join(".swarm/worktrees/a-b").exists());
        assert_eq!(second.finish().unwrap(), None);
    }

    #[test]
    fn a_kept_worktree_is_used_again_wherever_it_is() {
        let repo = repo();
        // Kept by an earlier run of a swarm that joined team and member with a dash.
        let old = repo.path().join(".swarm/worktrees/t-m");
        git(
            repo.path(),
            [
                "worktree",
                "add",
                "-b",
                "swarm/t/m",
                old.to_str().unwrap(),
                "HEAD",
            ],
        )
        .unwrap();
        let again = create(repo.path(), "t", "m").unwrap();
        assert_eq!(again.path, old);
        assert_eq!(again.finish().unwrap(), None);
        assert!(
            repo.path().join(".swarm/worktrees").is_dir(),
            "only a team's own folder goes with its last worktree"
        );
    }

    #[test]
    fn a_branch_checked_out_in_the_main_worktree_is_not_taken_over() {
        let repo = repo();
        git(repo.path(), ["checkout", "-q", "-b", "swarm/t/m"]).unwrap();
        let err = create(repo.path(), "t", "m").unwrap_err();
        assert!(err.to_string().contains("worktree add"), "{err}");
    }

    #[test]
    fn the_exclude_file_keeps_what_it_held_and_gets_one_line() {
        let repo = repo();
        let exclude = repo.path().join(".git/info/exclude");
        // Not UTF-8, and no newline at the end.
        let mine = b"# mine\n*.\xff\nlast".to_vec();
        fs::write(&exclude, &mine).unwrap();
        create(repo.path(), "t", "a").unwrap();
        create(repo.path(), "t", "b").unwrap();
        let mut expected = mine;
        expected.extend_from_slice(b"\n/.swarm/\n");
        assert_eq!(fs::read(&exclude).unwrap(), expected);
    }
}
