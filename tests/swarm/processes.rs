//! A member's processes: found without its supervisor, stopped after the supervisor was killed,
//! and ended even when they left the program's process group, on a private tmux server per test.

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;

use crate::harness::{Sandbox, Team, eventually, processes_in, state};

fn status_of(sandbox: &Sandbox, team: &str, name: &str) -> Value {
    let row = sandbox.status_row(team, name);
    assert!(!row.is_null(), "{name} has no row in status of {team}");
    row
}

fn pid_of(member: &Value, field: &str) -> i64 {
    member[field]
        .as_i64()
        .unwrap_or_else(|| panic!("no {field} in {member:#}"))
}

/// A program that ignores the hang-up its pane's end sends, and SIGTERM, as does its child. It
/// sleeps for a number no other test uses, so a stray one is easy to tell.
const STUBBORN: &str = r#"["bash", "-c", "trap '' HUP TERM; sleep 2719 & wait"]"#;

#[test]
fn a_member_whose_supervisor_was_killed_is_orphaned_stoppable_and_taken_down() {
    let sandbox = Sandbox::new();
    let team = Team::up(
        &sandbox,
        &format!(
            r#"
name = "o"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "a"
command = {STUBBORN}
[[member]]
name = "b"
command = {STUBBORN}
"#,
        ),
    );
    for name in ["team-lead", "a", "b"] {
        eventually(&format!("{name} to run"), || {
            state(&sandbox, "o", name) == "running"
        });
    }
    let config = sandbox.config("o");
    let members = config["members"].as_array().unwrap();
    let groups: Vec<i64> = members.iter().map(|m| pid_of(m, "pid")).collect();
    let supervisors: Vec<i64> = members.iter().map(|m| pid_of(m, "supervisorPid")).collect();
    let panes: Vec<String> = members
        .iter()
        .map(|m| m["tmuxPaneId"].as_str().unwrap().to_owned())
        .collect();
    let a = sandbox.member("o", "a");
    let b = sandbox.member("o", "b");
    for member in [&a, &b] {
        let supervisor = i32::try_from(pid_of(member, "supervisorPid")).unwrap();
        kill(Pid::from_raw(supervisor), Signal::SIGKILL).unwrap();
    }
    // Their panes close with their supervisors; their programs live on.
    eventually("a and b to show as orphaned", || {
        status_of(&sandbox, "o", "a")["state"] == "orphaned"
            && status_of(&sandbox, "o", "b")["state"] == "orphaned"
    });
    let a_group = pid_of(&a, "pid");
    assert!(!processes_in(&[], &[a_group]).is_empty());

    sandbox
        .swarm()
        .args(["stop", "a"])
        .team("o")
        .run()
        .success()
        .stdout_has("a was killed (stop)");
    assert!(
        processes_in(&[], &[a_group]).is_empty(),
        "stop left a's processes: {:?}",
        processes_in(&[], &[a_group])
    );
    assert_eq!(state(&sandbox, "o", "a"), "killed");

    sandbox
        .swarm()
        .args(["down", "o", "--timeout", "1"])
        .run()
        .success()
        .stdout_is(
            "cannot ask b to shut down: its supervisor is gone, so nothing answers for it\n\
             b stopped: killed\nteam-lead stopped: killed\nteam o is down\n",
        );
    let left = processes_in(&supervisors, &groups);
    assert!(left.is_empty(), "down left processes: {left:#?}");
    let live_panes = team.server().panes();
    for pane in &panes {
        assert!(!live_panes.contains(pane), "down left pane {pane}");
    }
    assert_eq!(state(&sandbox, "o", "b"), "killed");
    assert_eq!(sandbox.member("o", "b")["reason"], "shutdown");
}

/// How long escapees sleep: a number no other test uses, so a stray one is easy to tell.
const ESCAPEE_SLEEP: &str = "2718";

/// A shell command that starts three processes that leave the program behind, each writing its
/// pid to `<dir>/<tag>-<kind>.pid`: one in its own session; one double-forked; one that clears
/// its environment, leaves the session and is double-forked too. Then it waits until all three
/// have written their pids.
fn escapees(dir: &std::path::Path, tag: &str) -> String {
    let at = |kind: &str| format!("{}/{tag}-{kind}.pid", dir.display());
    format!(
        "setsid sh -c 'echo $$ > {setsid}.tmp && mv {setsid}.tmp {setsid}; exec sleep {ESCAPEE_SLEEP}' & \
         (sh -c 'echo $$ > {forked}.tmp && mv {forked}.tmp {forked}; exec sleep {ESCAPEE_SLEEP}' &); \
         (env -i PATH=/usr/bin:/bin setsid sh -c 'echo $$ > {hidden}.tmp && mv {hidden}.tmp {hidden}; exec sleep {ESCAPEE_SLEEP}' &); \
         while [ ! -e {setsid} ] || [ ! -e {forked} ] || [ ! -e {hidden} ]; do sleep 0.05; done",
        setsid = at("setsid"),
        forked = at("forked"),
        hidden = at("hidden"),
    )
}

fn read_pids(dir: &std::path::Path, tag: &str) -> Vec<i64> {
    ["setsid", "forked", "hidden"]
        .iter()
        .map(|kind| {
            let path = dir.join(format!("{tag}-{kind}.pid"));
            std::fs::read_to_string(&path)
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        })
        .collect()
}

#[test]
fn processes_that_leave_the_programs_group_end_with_the_member() {
    let sandbox = Sandbox::new();
    let dir = sandbox.root().join("pids");
    std::fs::create_dir_all(&dir).unwrap();
    let toml_string = |s: String| serde_json::to_string(&s).unwrap();
    // `leaver` starts its escapees and exits; `stayer` starts its own, and a short-lived adopted
    // orphan, and runs until the team is taken down.
    let short_lived = format!(
        "(env -i PATH=/usr/bin:/bin setsid sh -c 'echo $$ > {dir}/short.pid.tmp && mv {dir}/short.pid.tmp {dir}/short.pid' &)",
        dir = dir.display()
    );
    let team = Team::up(
        &sandbox,
        &format!(
            r#"
name = "e"
[lead]
command = ["sleep", "1000"]
[[member]]
name = "leaver"
command = ["bash", "-c", {leaver}]
[[member]]
name = "stayer"
command = ["bash", "-c", {stayer}]
"#,
            leaver = toml_string(format!("{}; exit 0", escapees(&dir, "leaver"))),
            stayer = toml_string(format!(
                "{}; {short_lived}; sleep 1000",
                escapees(&dir, "stayer")
            )),
        ),
    );
    eventually("leaver to end", || {
        state(&sandbox, "e", "leaver") == "exited"
    });
    let left_by_leaver = read_pids(&dir, "leaver");
    eventually("what leaver left behind to end with it", || {
        processes_in(&left_by_leaver, &[]).is_empty()
    });

    eventually("stayer to start everything", || {
        dir.join("short.pid").exists()
    });
    let short: i64 = std::fs::read_to_string(dir.join("short.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The supervisor adopted it as subreaper, and reaps it: no zombie stays behind.
    eventually("the adopted orphan to be reaped", || {
        !std::path::Path::new(&format!("/proc/{short}")).exists()
    });
    assert_eq!(state(&sandbox, "e", "stayer"), "running");
    let left_by_stayer = read_pids(&dir, "stayer");
    assert_eq!(processes_in(&left_by_stayer, &[]).len(), 3);
    let stayer_group = pid_of(&sandbox.member("e", "stayer"), "pid");
    let panes: Vec<String> = sandbox.config("e")["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["tmuxPaneId"].as_str().unwrap().to_owned())
        .collect();

    sandbox
        .swarm()
        .args(["down", "e", "--timeout", "1"])
        .run()
        .success();
    let left = processes_in(&left_by_stayer, &[stayer_group]);
    assert!(left.is_empty(), "down left processes: {left:#?}");
    let live_panes = team.server().panes();
    for pane in &panes {
        assert!(!live_panes.contains(pane), "down left pane {pane}");
    }
}

/// A process swarm did not start, in a session of its own: `setsid sh -c 'sleep N & wait'`,
/// whose shell leads both the session and the group the sleep is in. Killed when dropped.
struct Unrelated(std::process::Child);

impl Unrelated {
    fn start(sandbox: &Sandbox) -> Self {
        let child = sandbox
            .command("setsid")
            .args(["sh", "-c", "sleep 2741 & wait"])
            .stdin(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        eventually(
            "the unrelated shell to lead its session with a sleep in it",
            || processes_in(&[], &[i64::from(pid)]).len() == 2,
        );
        Self(child)
    }

    fn pid(&self) -> i64 {
        i64::from(self.0.id())
    }

    fn still_runs(&mut self) -> bool {
        self.0.try_wait().unwrap().is_none() && processes_in(&[], &[self.pid()]).len() == 2
    }
}

impl Drop for Unrelated {
    fn drop(&mut self) {
        let _ = kill(
            Pid::from_raw(-i32::try_from(self.pid()).unwrap()),
            Signal::SIGKILL,
        );
        let _ = self.0.wait();
    }
}

/// A teammate can edit config.json: pointing a member's `pid` and `supervisorPid` at a process
/// group swarm did not start, or its `supervisorPid` at a process whose command line ends in
/// `run NAME`, does not get those processes signalled by `stop` or `down`.
#[test]
fn stop_and_down_signal_nothing_swarm_did_not_start() {
    use std::os::unix::process::CommandExt;
    let sandbox = Sandbox::new();
    sandbox.team("sg", &["bob", "carol"]);
    let mut group = Unrelated::start(&sandbox);
    // Passes for carol's supervisor by its command line alone.
    let mut lookalike = sandbox
        .command("sh")
        .args(["-c", "sleep 2741; :", "run", "carol"])
        .process_group(0)
        .stdin(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lookalike_pid = i64::from(lookalike.id());
    eventually("the lookalike to show its command line", || {
        std::fs::read(format!("/proc/{lookalike_pid}/cmdline"))
            .is_ok_and(|bytes| bytes.ends_with(b"run\0carol\0"))
    });
    let path = sandbox.team_dir("sg").join("config.json");
    let mut config = sandbox.config("sg");
    for member in config["members"].as_array_mut().unwrap() {
        let (pid, supervisor) = match member["name"].as_str().unwrap() {
            "bob" => (group.pid(), group.pid()),
            "carol" => (lookalike_pid, lookalike_pid),
            _ => continue,
        };
        member["state"] = "running".into();
        member["pid"] = pid.into();
        member["supervisorPid"] = supervisor.into();
    }
    std::fs::write(&path, serde_json::to_vec_pretty(&config).unwrap()).unwrap();

    for name in ["bob", "carol"] {
        let stop = sandbox.swarm().args(["stop", name]).team("sg").run();
        eprintln!("stop {name}: {:?} {}", stop.status.code(), stop.stderr);
    }
    sandbox
        .swarm()
        .args(["down", "sg", "--force"])
        .run()
        .success();
    assert!(
        group.still_runs(),
        "stop or down ended a process group swarm did not start"
    );
    assert!(
        lookalike.try_wait().unwrap().is_none(),
        "stop or down signalled a process swarm did not start"
    );
    let _ = kill(
        Pid::from_raw(-i32::try_from(lookalike_pid).unwrap()),
        Signal::SIGKILL,
    );
    let _ = lookalike.wait();
}
