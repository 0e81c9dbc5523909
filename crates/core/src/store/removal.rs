//! Taking a team's files away (docs/ARCHITECTURE.md, "Removing a team"): everything swarm keeps
//! of a team, its folder and its task list, is moved aside by two `rename`s (the folder to
//! `teams/.<team>.removing-<pid>`, then the list into it as `tasks/`), and then deleted, or moved
//! into the archive whole (`.archiving-<pid>` while it goes there). The node's record of the
//! list's copies (`node/tasks-<team>.json`, in a team across hosts) goes with the list.
//!
//! A removal killed half-way leaves that folder behind, perhaps with the list still in place.
//! [`finish_interrupted`], which every command that lists or picks teams runs first, finishes
//! what a dead process left: it brings the list in unless a team of that name exists again, then
//! deletes the folder, or moves it into the archive, never deleting what was to be archived.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};

use crate::base::{clock, process};
use crate::error::{Error, Result};
use crate::store::archive;
use crate::store::durable::{real_dirs, sync_dir};
use crate::store::node;
use crate::store::paths::{Aside, Home, Leaving, TeamPaths};
use crate::store::tasks::TaskList;

/// Removes team `name`: its folder and its task list are taken aside, then deleted. A link where
/// either belongs, or where `teams/` or `tasks/` does, is refused before anything is done.
pub fn remove(home: &Home, name: &str) -> Result<()> {
    let aside = take_aside(home, name, Leaving::Removed)?;
    delete(home, &aside)
}

/// Moves team `name`, its folder with its task list as `tasks/`, into the archive as a folder
/// stamped with `now_ms`; returns where. An archive on another file system is refused before
/// anything moves, and a move that fails puts the team back as it was.
pub fn archive_folder(home: &Home, name: &str, now_ms: u64) -> Result<PathBuf> {
    archive::require_same_file_system(home)?;
    let aside = take_aside(home, name, Leaving::Archived)?;
    archive::place_folder(home, &aside, name, now_ms)
        .map_err(|err| put_back(home, name, &aside, err))
}

/// A removal a killed process left, which this one finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    pub team: String,
    /// Where it was archived, when it was being archived.
    pub archived: Option<PathBuf>,
}

/// Finishes every removal whose process died half-way (`teams/.<team>.removing-<pid>` or
/// `.archiving-<pid>` with no process `<pid>`): deleted, or moved into the archive. Each one is
/// said in a line on stderr, as is one that cannot be finished (it is tried again next time).
/// Nothing here fails the command that asked.
pub fn finish_interrupted(home: &Home) -> Vec<Finished> {
    let teams = home.teams_dir();
    let Ok(entries) = fs::read_dir(&teams) else {
        return Vec::new();
    };
    let own = process::own_pid();
    let mut finished = Vec::new();
    for entry in entries.flatten() {
        let Some(left) = Aside::of(&entry.file_name()) else {
            continue;
        };
        if left.pid == own || process::alive(left.pid) {
            continue;
        }
        let path = entry.path();
        match finish(home, &left, &path) {
            Ok(archived) => {
                match &archived {
                    Some(to) => tracing::warn!(
                        "archived team {} to {}: a `swarm rm` (pid {}) was killed while archiving it",
                        left.team,
                        to.display(),
                        left.pid
                    ),
                    None => tracing::warn!(
                        "finished removing team {}: a `swarm rm` (pid {}) was killed while removing it",
                        left.team,
                        left.pid
                    ),
                }
                finished.push(Finished {
                    team: left.team,
                    archived,
                });
            }
            Err(err) => tracing::warn!(
                "cannot finish removing team {} ({}): {err}",
                left.team,
                path.display()
            ),
        }
    }
    finished
}

fn finish(home: &Home, left: &Aside, path: &Path) -> Result<Option<PathBuf>> {
    // Only a link-free folder is ours to finish; what it holds is removed with std's
    // remove_dir_all, which follows no link.
    real_dirs(&home.teams_dir(), path, "remove")?;
    // A team made again under the name since owns whatever list is there now.
    if !home.team(&left.team).config().exists() {
        bring_task_list(home, &left.team, path)?;
        forget_task_copies(home, &left.team);
    }
    match left.leaving {
        Leaving::Removed => delete(home, path).map(|()| None),
        Leaving::Archived => {
            archive::place_folder(home, path, &left.team, clock::now_ms()).map(Some)
        }
    }
}

/// Moves the team's folder to `teams/.<name>.<why>-<pid>`, then its task list into that folder:
/// the team vanishes whole at the first `rename`, and the list goes with it at the second.
fn take_aside(home: &Home, name: &str, leaving: Leaving) -> Result<PathBuf> {
    let team = home.team(name);
    real_dirs(team.private_root(), team.dir(), "remove")?;
    let list = TaskList::new(home, name);
    list.real_dir("remove")?;
    let aside = team.aside(leaving);
    fs::rename(team.dir(), &aside).map_err(|err| Error::io("move away", team.dir(), err))?;
    sync_dir(team.private_root())?;
    if let Err(err) = bring_task_list(home, name, &aside) {
        return Err(put_back(home, name, &aside, err));
    }
    forget_task_copies(home, name);
    Ok(aside)
}

/// Moves team `name`'s task list, if it has one, into `folder` as `tasks/`. A folder that holds
/// one already keeps it (a removal killed after this step), and the list stays where it is.
fn bring_task_list(home: &Home, name: &str, folder: &Path) -> Result<()> {
    let list = TaskList::new(home, name);
    let Some(dir) = list.real_dir("remove")? else {
        return Ok(());
    };
    let inside = TeamPaths::task_list_in(folder);
    match renameat2(
        AT_FDCWD,
        &dir,
        AT_FDCWD,
        &inside,
        RenameFlags::RENAME_NOREPLACE,
    ) {
        Ok(()) => {
            sync_dir(&home.tasks_dir())?;
            sync_dir(folder)
        }
        Err(Errno::EEXIST | Errno::ENOTEMPTY) => {
            tracing::warn!(
                "leaving {}: {} holds a task list already",
                dir.display(),
                folder.display()
            );
            Ok(())
        }
        Err(Errno::ENOENT) => Ok(()),
        Err(errno) => Err(Error::io("move", &dir, io::Error::from(errno))),
    }
}

/// Removes the node's record of team `name`'s task copies, its list gone. One left behind is
/// harmless (a node starting on a list folder made afresh records no copies), so a failure is
/// only said.
fn forget_task_copies(home: &Home, name: &str) {
    if let Err(err) = node::remove_task_copies(home, name) {
        tracing::warn!("cannot remove the node's record of team {name}'s tasks: {err}");
    }
}

/// Deletes a folder taken aside, with std's `remove_dir_all`, which opens each folder with
/// `O_NOFOLLOW` and removes a link itself, never what it points to.
fn delete(home: &Home, aside: &Path) -> Result<()> {
    fs::remove_dir_all(aside).map_err(|err| {
        Error::io("remove", aside, err).with_hint(format!(
            "the team is gone; the next swarm command finishes removing it, or `rm -r {}`",
            aside.display()
        ))
    })?;
    sync_dir(&home.teams_dir())
}

/// Puts team `name`, taken aside to `aside`, back where it was after `err`, its task list too;
/// returns `err`, saying what could not be put back.
fn put_back(home: &Home, name: &str, aside: &Path, err: Error) -> Error {
    let team = home.team(name);
    let list = TaskList::new(home, name);
    let inside = TeamPaths::task_list_in(aside);
    let mut err = err;
    if inside.exists()
        && let Err(stuck) = renameat2(
            AT_FDCWD,
            &inside,
            AT_FDCWD,
            list.dir(),
            RenameFlags::RENAME_NOREPLACE,
        )
    {
        err = err.with_note(format!(
            "its task list is left in {}: {stuck}",
            inside.display()
        ));
    }
    if let Err(stuck) = renameat2(
        AT_FDCWD,
        aside,
        AT_FDCWD,
        team.dir(),
        RenameFlags::RENAME_NOREPLACE,
    ) {
        return err.with_note(format!("the team is left in {}: {stuck}", aside.display()));
    }
    let _ = sync_dir(team.private_root());
    err
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Team `t` with an inbox, and its task list with one task file.
    fn team(dir: &Path) -> Home {
        let home = Home::new(dir.join("home"));
        let team = home.team("t");
        fs::create_dir_all(team.inboxes()).unwrap();
        fs::write(team.config(), "{}").unwrap();
        fs::write(team.inboxes().join("bob.json"), "[]").unwrap();
        let list = TaskList::new(&home, "t");
        list.ensure().unwrap();
        fs::write(list.dir().join("1.json"), "{}").unwrap();
        home
    }

    /// Whether team `t`, as [`team`] made it, is where it was, its task list too.
    fn left_as_it_was(home: &Home) -> bool {
        home.team("t").config().exists() && TaskList::new(home, "t").dir().join("1.json").exists()
    }

    #[test]
    fn a_removed_team_takes_its_task_list_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let home = team(dir.path());
        remove(&home, "t").unwrap();
        assert!(!home.team("t").dir().exists());
        assert!(!TaskList::new(&home, "t").dir().exists());
        assert_eq!(fs::read_dir(home.teams_dir()).unwrap().count(), 0);
        // A team with no list yet goes as well.
        let home = Home::new(dir.path().join("other"));
        fs::create_dir_all(home.team("u").dir()).unwrap();
        remove(&home, "u").unwrap();
        assert!(!home.team("u").dir().exists());
    }

    #[test]
    fn a_folder_archive_is_the_team_folder_moved_with_its_task_list() {
        let dir = tempfile::tempdir().unwrap();
        let home = team(dir.path());
        let outside = dir.path().join("outside");
        fs::write(&outside, "secret").unwrap();
        std::os::unix::fs::symlink(&outside, home.team("t").dir().join("link")).unwrap();
        let path = archive_folder(&home, "t", 0).unwrap();
        assert_eq!(path, home.archive_dir().join("t-19700101T000000Z"));
        assert!(!home.team("t").dir().exists());
        assert!(!TaskList::new(&home, "t").dir().exists());
        assert_eq!(
            fs::read_to_string(path.join("inboxes/bob.json")).unwrap(),
            "[]"
        );
        assert_eq!(fs::read_to_string(path.join("tasks/1.json")).unwrap(), "{}");
        assert!(
            fs::symlink_metadata(path.join("link"))
                .unwrap()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&outside).unwrap(), "secret");
    }

    #[test]
    fn a_folder_archive_that_cannot_be_made_leaves_the_team() {
        let dir = tempfile::tempdir().unwrap();
        let home = team(dir.path());
        fs::write(home.archive_dir(), "not a folder").unwrap();
        assert!(archive_folder(&home, "t", 0).is_err());
        assert!(left_as_it_was(&home));
    }

    #[test]
    fn a_team_taken_aside_is_put_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let home = team(dir.path());
        let aside = take_aside(&home, "t", Leaving::Archived).unwrap();
        assert!(!home.team("t").dir().exists());
        assert!(TeamPaths::task_list_in(&aside).join("1.json").exists());
        let err = put_back(&home, "t", &aside, Error::runtime("the move failed"));
        assert_eq!(err.message(), "the move failed");
        assert!(!aside.exists());
        assert!(left_as_it_was(&home));
    }

    #[test]
    fn what_a_killed_removal_left_is_finished_and_a_live_ones_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let home = team(dir.path());
        let dead = {
            let mut child = std::process::Command::new("true").spawn().unwrap();
            let pid = child.id();
            child.wait().unwrap();
            pid
        };
        let aside = home.teams_dir().join(format!(".t.removing-{dead}"));
        fs::rename(home.team("t").dir(), &aside).unwrap();
        let mut live = std::process::Command::new("sleep")
            .arg("1000")
            .spawn()
            .unwrap();
        let theirs = home.teams_dir().join(format!(".u.archiving-{}", live.id()));
        fs::create_dir(&theirs).unwrap();
        let finished = finish_interrupted(&home);
        live.kill().unwrap();
        live.wait().unwrap();
        assert_eq!(
            finished,
            [Finished {
                team: "t".into(),
                archived: None
            }]
        );
        assert!(!aside.exists());
        assert!(
            !TaskList::new(&home, "t").dir().exists(),
            "its list went too"
        );
        assert!(theirs.exists(), "a live process's removal is its own");
        let finished = finish_interrupted(&home);
        assert_eq!(finished.len(), 1);
        let archived = finished[0].archived.clone().unwrap();
        assert!(archived.starts_with(home.archive_dir()));
        assert!(!theirs.exists());
    }

    #[test]
    fn a_team_made_again_keeps_its_new_list() {
        let dir = tempfile::tempdir().unwrap();
        let home = team(dir.path());
        let aside = home.teams_dir().join(".t.removing-999999999");
        fs::rename(home.team("t").dir(), &aside).unwrap();
        fs::create_dir_all(home.team("t").dir()).unwrap();
        fs::write(home.team("t").config(), "{}").unwrap();
        finish_interrupted(&home);
        assert!(!aside.exists());
        assert!(TaskList::new(&home, "t").dir().join("1.json").exists());
    }
}
