//! Running out of inotify instances or watches: waiting keeps working by polling.

use std::fs;
use std::process::{Command, Stdio};

use crate::harness::{Background, PATIENCE, Sandbox, bin, eventually, skip};

/// Whether this process may make a user namespace of its own (`unshare -U -r`); when it may not,
/// the test is skipped.
fn user_namespaces() -> bool {
    let allowed = Command::new("unshare")
        .args(["-U", "-r", "true"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !allowed {
        skip(
            "userns",
            "cannot make a user namespace of its own (unshare -U -r true fails)",
        );
    }
    allowed
}

/// `swarm ARGS` in a user namespace of its own whose inotify limit `user.LIMIT` is 0: the kernel
/// refuses it what a user who ran out would be refused (EMFILE for instances, ENOSPC for watches),
/// and no limit outside changes.
fn swarm_without_inotify(sandbox: &Sandbox, limit: &str, args: &[&str]) -> Command {
    let mut command = sandbox.command("unshare");
    command
        .args(["-U", "-r", "sh", "-c"])
        .arg(format!(
            "echo 0 > /proc/sys/user/{limit} && exec \"$0\" \"$@\""
        ))
        .arg(bin())
        .args(args)
        .env("SWARM_TEAM", "t")
        .env("SWARM_AGENT", "bob");
    command
}

fn send(sandbox: &Sandbox, text: &str) -> String {
    sandbox
        .swarm()
        .args(["send", "bob", text])
        .team("t")
        .run()
        .success()
        .stdout_line()
}

/// Whether process `pid` runs notify's polling thread: it has armed its watch, without inotify.
fn polling(pid: u32) -> bool {
    fs::read_dir(format!("/proc/{pid}/task")).is_ok_and(|tasks| {
        tasks.filter_map(Result::ok).any(|task| {
            // The kernel keeps 15 bytes of a thread's name: "notify-rs poll loop" is cut short.
            fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|comm| comm.starts_with("notify-rs poll"))
        })
    })
}

/// One warning, naming the sysctl to raise.
fn assert_one_warning(stderr: &str, sysctl: &str) {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one warning expected:\n{stderr}");
    assert!(lines[0].contains(sysctl), "{stderr}");
}

#[test]
fn watch_and_recv_wait_keep_working_when_inotify_runs_out() {
    if !user_namespaces() {
        return;
    }
    for (limit, sysctl) in [
        ("max_inotify_instances", "fs.inotify.max_user_instances"),
        ("max_inotify_watches", "fs.inotify.max_user_watches"),
    ] {
        let sandbox = Sandbox::new();
        sandbox.team("t", &["bob"]);
        let watch = swarm_without_inotify(&sandbox, limit, &["watch", "bob", "--json"]);
        send(&sandbox, "ready");
        let watch = Background::spawn(watch);
        assert_eq!(watch.next_json()["text"], "ready", "{limit}");
        let later = send(&sandbox, "later");
        assert_eq!(watch.next_json()["msg_id"], later.as_str(), "{limit}");
        watch.signal(nix::sys::signal::Signal::SIGTERM);
        let (_, stderr) = watch.finish();
        assert_one_warning(&stderr, sysctl);

        let recv = swarm_without_inotify(
            &sandbox,
            limit,
            &["recv", "--wait", "--json", "--timeout", "60"],
        );
        // "ready" and "later" were only looked at; take them first.
        sandbox
            .swarm()
            .args(["recv"])
            .team("t")
            .as_("bob")
            .run()
            .success();
        let recv = Background::spawn(recv);
        // Sent once recv watches the inbox: the message wakes it, whether or not its first look
        // has come and gone.
        eventually("recv to watch the inbox by polling", || polling(recv.pid()));
        let id = send(&sandbox, "wake up");
        let mut document = String::new();
        while let Some(line) = recv.lines.next_within(PATIENCE) {
            document.push_str(&line);
        }
        let (status, stderr) = recv.finish();
        assert!(status.success(), "{limit}: {stderr}");
        let received: serde_json::Value = serde_json::from_str(&document).unwrap();
        assert_eq!(received[0]["msg_id"], id.as_str(), "{limit}");
        assert_one_warning(&stderr, sysctl);
    }
}
