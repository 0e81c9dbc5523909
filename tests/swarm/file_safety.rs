//! swarm follows no symlink under its home and deletes nothing outside the folders it owns
//! (docs/ARCHITECTURE.md, "Private files"): each test plants what an attacker would, then checks
//! that the command fails with one clear line and that the link's target is unchanged.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use crate::harness::Sandbox;

const REFUSAL: &str = "refusing to write through a symlink";

/// A file outside swarm's home that a planted link points at.
fn precious(sandbox: &Sandbox) -> PathBuf {
    sandbox.write("precious.txt", "keep me\n")
}

fn unchanged(target: &Path) {
    assert_eq!(
        fs::read_to_string(target).unwrap(),
        "keep me\n",
        "the symlink's target was written through"
    );
}

fn texts(sandbox: &Sandbox, team: &str, member: &str) -> Vec<String> {
    sandbox
        .inbox(team, member)
        .iter()
        .map(|m| m["text"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_symlinked_lock_file_is_refused_and_its_target_not_truncated() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    let target = precious(&sandbox);
    let flock = sandbox.team_dir("t").join("inboxes/.bob.flock");
    let _ = fs::remove_file(&flock);
    symlink(&target, &flock).unwrap();
    sandbox
        .swarm()
        .args(["send", "bob", "hi"])
        .team("t")
        .run()
        .refused(1, &format!("{REFUSAL}: {}", flock.display()));
    unchanged(&target);
    assert!(texts(&sandbox, "t", "bob").is_empty(), "nothing was sent");
    assert!(
        fs::symlink_metadata(&flock).unwrap().is_symlink(),
        "the link is left for the user to look at"
    );
}

#[test]
fn a_symlinked_history_file_is_refused_and_the_message_stays_unread() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    sandbox
        .swarm()
        .args(["send", "bob", "take task 2"])
        .team("t")
        .run()
        .success();
    let target = precious(&sandbox);
    let history = sandbox.team_dir("t").join("history/bob.jsonl");
    symlink(&target, &history).unwrap();
    sandbox
        .swarm()
        .arg("recv")
        .team("t")
        .as_("bob")
        .run()
        .refused(1, &format!("{REFUSAL}: {}", history.display()));
    unchanged(&target);
    assert_eq!(
        texts(&sandbox, "t", "bob"),
        ["take task 2"],
        "nothing is lost"
    );
}

#[test]
fn a_symlinked_inbox_is_neither_read_nor_replaced() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    let target = sandbox.write(
        "other.json",
        r#"[{"from":"x","text":"secret","timestamp":"2026-01-01T00:00:00.000Z"}]"#,
    );
    let before = fs::read(&target).unwrap();
    let inbox = sandbox.inbox_path("t", "bob");
    fs::remove_file(&inbox).unwrap();
    symlink(&target, &inbox).unwrap();
    sandbox
        .swarm()
        .args(["send", "bob", "hi"])
        .team("t")
        .run()
        .refused(1, &format!("{REFUSAL}: {}", inbox.display()));
    assert_eq!(fs::read(&target).unwrap(), before);
    assert!(fs::symlink_metadata(&inbox).unwrap().is_symlink());
}
