//! Everything swarm keeps under its home is private to its owner: every directory 0700, every file
//! 0600, whatever the umask, and a home made before that is tightened by the next write
//! (docs/ARCHITECTURE.md, "Private files").

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::harness::{Sandbox, TmuxServer, eventually};
use crate::peers::listen;

/// Every directory and file below `dir` whose mode is not 0700 or 0600, with its mode. Entries
/// that vanish while they are looked at (temporary files, lock directories) are skipped.
fn not_private(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        let mode = meta.permissions().mode() & 0o7777;
        let wanted = if meta.is_dir() {
            found.extend(not_private(&path));
            0o700
        } else if meta.is_file() {
            0o600
        } else {
            found.push(format!("{} is neither a file nor a folder", path.display()));
            continue;
        };
        if mode != wanted {
            found.push(format!("{mode:04o} {}", path.display()));
        }
    }
    found
}

#[track_caller]
fn all_private(dir: &Path) {
    let loose = not_private(dir);
    assert!(loose.is_empty(), "not private:\n{}", loose.join("\n"));
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

/// The spool files of `member` (not the staging files, whose names start with a dot).
fn spooled(sandbox: &Sandbox, team: &str, member: &str) -> Vec<PathBuf> {
    let spool = sandbox.team_dir(team).join("inboxes/.spool").join(member);
    fs::read_dir(spool)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| !path.file_name().unwrap().to_string_lossy().starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn init_send_recv_listen_and_a_contended_send_leave_only_private_files() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    all_private(&sandbox.home());
    sandbox
        .swarm()
        .args(["send", "bob", "one"])
        .team("t")
        .run()
        .success();
    sandbox
        .swarm()
        .arg("recv")
        .team("t")
        .as_("bob")
        .run()
        .success();
    all_private(&sandbox.home());

    // A send that finds the inbox locked spools its message while it waits.
    let flock = sandbox.team_dir("t").join("inboxes/.bob.flock");
    let holder = OpenOptions::new().write(true).open(&flock).unwrap();
    holder.lock().unwrap();
    let waiting = sandbox
        .swarm()
        .args(["send", "bob", "two"])
        .team("t")
        .spawn();
    eventually("the waiting send to spool its message", || {
        !spooled(&sandbox, "t", "bob").is_empty()
    });
    for file in spooled(&sandbox, "t", "bob") {
        assert_eq!(mode(&file), 0o600, "{}", file.display());
    }
    all_private(&sandbox.home());
    holder.unlock().unwrap();
    let (status, stderr) = waiting.finish();
    assert!(status.success(), "{stderr}");
    assert_eq!(sandbox.inbox("t", "bob")[0]["text"], "two");

    let (_listener, _) = listen(&sandbox, &["--label", "here"]);
    all_private(&sandbox.home());
}

#[test]
fn up_leaves_only_private_files_and_a_private_log() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::start(&sandbox);
    let file = sandbox.write(
        "p.toml",
        "name = \"p\"\n[lead]\ncommand = [\"sleep\", \"1000\"]\n[[member]]\nname = \"talker\"\ncommand = [\"sh\", \"-c\", \"echo the secret; sleep 1000\"]\n",
    );
    sandbox
        .swarm()
        .arg("up")
        .arg(file)
        .arg("--socket")
        .arg(server.socket())
        .run()
        .success();
    let log = sandbox.team_dir("p").join("logs/talker.log");
    eventually("the pane's output in the log", || {
        fs::read_to_string(&log).is_ok_and(|text| text.contains("the secret"))
    });
    assert_eq!(mode(&log), 0o600);
    assert_eq!(mode(log.parent().unwrap()), 0o700);
    all_private(&sandbox.home());
    sandbox
        .swarm()
        .args(["down", "p", "--force"])
        .run()
        .success();
    all_private(&sandbox.home());
}

/// Opens every directory and file below `dir` to others, as swarm made them before.
fn loosen(dir: &Path) {
    for entry in fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        let path = entry.path();
        let meta = fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            loosen(&path);
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        } else if meta.is_file() {
            fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        }
    }
}

#[test]
fn a_home_made_before_is_tightened_by_the_next_write() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob", "carol"]);
    sandbox
        .swarm()
        .args(["send", "bob", "one"])
        .team("t")
        .run()
        .success();
    sandbox
        .swarm()
        .arg("recv")
        .team("t")
        .as_("bob")
        .run()
        .success();
    let (listener, _) = listen(&sandbox, &[]);
    drop(listener);
    loosen(&sandbox.home());
    assert!(!not_private(&sandbox.home()).is_empty());
    let before = mode(&sandbox.home());

    // One send to carol tightens the whole team folder, not only what it writes.
    sandbox
        .swarm()
        .args(["send", "carol", "two"])
        .team("t")
        .run()
        .success();
    all_private(&sandbox.home().join("teams"));
    // The registry is tightened by the next peer that registers.
    let (_listener, _) = listen(&sandbox, &[]);
    all_private(&sandbox.home());
    assert_eq!(
        mode(&sandbox.home()),
        before,
        "the home itself is left alone"
    );
    // Nothing was lost on the way.
    assert_eq!(sandbox.inbox("t", "carol")[0]["text"], "two");
    File::open(sandbox.team_dir("t").join("history/bob.jsonl")).unwrap();
}
