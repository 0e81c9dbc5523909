//! swarm follows no symlink under its home and deletes nothing outside the folders it owns
//! (docs/ARCHITECTURE.md, "Private files"): each test plants what an attacker would, then checks
//! that the command fails with one clear line and that the link's target is unchanged.

use std::fs;
use std::os::unix::fs::{FileTypeExt, symlink};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::Sandbox;
use crate::peers::listen;

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

/// The pid of a process that has exited.
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

fn crafted_entry(sandbox: &Sandbox, pid: u32, socket: &Path) -> PathBuf {
    let dir = sandbox.home().join("peers");
    fs::create_dir_all(&dir).unwrap();
    let entry = dir.join(format!("{pid}.json"));
    let json = serde_json::json!({
        "pid": pid, "socket": socket, "cwd": "/", "startedAt": 0,
    });
    fs::write(&entry, json.to_string()).unwrap();
    entry
}

fn is_socket(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_socket())
}

#[test]
fn a_crafted_registry_entry_cannot_make_peers_delete_a_socket_or_file_elsewhere() {
    let sandbox = Sandbox::new();
    // A socket and a file outside the runtime folder.
    let outside = sandbox.work().join("victim.sock");
    let _victim = UnixListener::bind(&outside).unwrap();
    let file = precious(&sandbox);
    // A live peer's socket inside it, named by an entry that is not that peer's.
    let (_listener, live_socket) = listen(&sandbox, &["--label", "alive"]);
    let entries = [
        crafted_entry(&sandbox, dead_pid(), &outside),
        crafted_entry(&sandbox, dead_pid(), &file),
        crafted_entry(&sandbox, dead_pid(), &live_socket),
    ];
    let peers = sandbox
        .swarm()
        .args(["peers", "--json"])
        .run()
        .success()
        .json();
    assert_eq!(peers.as_array().unwrap().len(), 1, "{peers:#}");
    assert!(is_socket(&outside), "a socket outside the runtime folder");
    unchanged(&file);
    assert!(is_socket(&live_socket), "another peer's socket");
    for entry in entries {
        assert!(!entry.exists(), "the stale entry {} stays", entry.display());
    }
    // The live peer still answers.
    sandbox
        .swarm()
        .args(["send", "uds:alive", "still here"])
        .run()
        .success();
}

/// What is no inbox where one belongs (a FIFO, a folder: any teammate can make one) is skipped
/// with one warning line by every reader of the team's inboxes, is never opened (a FIFO would
/// block), and leaves a broadcast to reach every member with a real inbox.
#[test]
fn junk_in_inboxes_is_skipped_with_a_warning() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob", "carol", "dave"]);
    let carol = sandbox.inbox_path("t", "carol");
    let dave = sandbox.inbox_path("t", "dave");
    let _ = fs::remove_file(&carol);
    let _ = fs::remove_file(&dave);
    nix::unistd::mkfifo(&carol, nix::sys::stat::Mode::S_IRWXU).unwrap();
    fs::create_dir(&dave).unwrap();
    let warned_once = |stderr: &str, path: &Path| {
        let lines = stderr
            .lines()
            .filter(|line| line.contains(&*path.to_string_lossy()))
            .count();
        assert_eq!(lines, 1, "{stderr}");
    };

    let status = sandbox.swarm().arg("status").team("t").run().success();
    warned_once(&status.stderr, &carol);
    warned_once(&status.stderr, &dave);
    let inbox = sandbox
        .swarm()
        .args(["inbox", "carol"])
        .team("t")
        .run()
        .success();
    warned_once(&inbox.stderr, &carol);

    let all = sandbox.swarm().args(["watch", "--all"]).team("t").spawn();
    let sent = sandbox
        .swarm()
        .args(["send", "*", "standup in 5"])
        .team("t")
        .as_("team-lead")
        .run()
        .success();
    warned_once(&sent.stderr, &carol);
    warned_once(&sent.stderr, &dave);
    assert_eq!(texts(&sandbox, "t", "bob"), ["standup in 5"]);
    assert!(
        all.next_line().ends_with("team-lead → *  standup in 5"),
        "watch --all carries on past the junk"
    );
    assert!(fs::symlink_metadata(&carol).unwrap().file_type().is_fifo());
    assert!(fs::symlink_metadata(&dave).unwrap().is_dir());
}
