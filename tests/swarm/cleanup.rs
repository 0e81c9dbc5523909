//! Teams do not pile up: `rm`, `prune`, `down --rm`, archives, and the one running team as the
//! default team.

use std::fs;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::harness::{
    Background, Sandbox, TmuxServer, eventually, gated_tmux, gated_tmux_answer, state, up, up_on,
};

/// A team whose lead and `worker` sleep until stopped, once both run.
fn running(sandbox: &Sandbox, server: &TmuxServer, name: &str) {
    up(
        sandbox,
        server,
        name,
        &format!(
            "name = \"{name}\"\n[lead]\ncommand = [\"sleep\", \"1000\"]\n[[member]]\nname = \"worker\"\ncommand = [\"sleep\", \"1000\"]\n"
        ),
    );
    for member in ["team-lead", "worker"] {
        eventually(&format!("{member} of {name} to run"), || {
            state(sandbox, name, member) == "running"
        });
    }
}

/// A team whose lead and member exit at once, once both have ended.
fn ended(sandbox: &Sandbox, server: &TmuxServer, name: &str) {
    up(
        sandbox,
        server,
        name,
        &format!(
            "name = \"{name}\"\n[lead]\ncommand = [\"true\"]\n[[member]]\nname = \"quick\"\ncommand = [\"true\"]\n"
        ),
    );
    for member in ["team-lead", "quick"] {
        eventually(&format!("{member} of {name} to end"), || {
            state(sandbox, name, member) == "exited"
        });
    }
}

fn pid_of(sandbox: &Sandbox, team: &str, member: &str, field: &str) -> i32 {
    i32::try_from(sandbox.member(team, member)[field].as_i64().unwrap()).unwrap()
}

fn alive(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            stat.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
}

/// The pid of a process that has exited and been reaped.
fn dead_pid() -> i32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = i32::try_from(child.id()).unwrap();
    child.wait().unwrap();
    pid
}

/// A registry entry of team `team` for a peer that died without removing it.
fn stale_entry(sandbox: &Sandbox, team: &str) -> PathBuf {
    let pid = dead_pid();
    let peers = sandbox.home().join("peers");
    fs::create_dir_all(&peers).unwrap();
    let entry = peers.join(format!("{pid}.json"));
    let socket = sandbox.root().join(format!("run/swarm/{pid}.sock"));
    fs::write(
        &entry,
        serde_json::json!({
            "pid": pid, "socket": socket, "team": team, "agent": "worker", "cwd": "/", "startedAt": 0
        })
        .to_string(),
    )
    .unwrap();
    entry
}

fn now_ms() -> u64 {
    u64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

/// Each entry of a tar.zst as `<path> <size>`, and the mode of each.
fn tar_listing(path: &Path) -> Vec<(String, u32)> {
    let file = fs::File::open(path).unwrap();
    let mut archive = tar::Archive::new(zstd::Decoder::new(file).unwrap());
    archive
        .entries()
        .unwrap()
        .map(|entry| {
            let mut entry = entry.unwrap();
            let mode = entry.header().mode().unwrap();
            let mut data = Vec::new();
            entry.read_to_end(&mut data).unwrap();
            (
                format!("{} {}", entry.path().unwrap().display(), data.len()),
                mode,
            )
        })
        .collect()
}

/// The file of a tar.zst at `inner`, as text.
fn tar_file(path: &Path, inner: &str) -> String {
    let file = fs::File::open(path).unwrap();
    let mut archive = tar::Archive::new(zstd::Decoder::new(file).unwrap());
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        if entry.path().unwrap() == Path::new(inner) {
            let mut text = String::new();
            entry.read_to_string(&mut text).unwrap();
            return text;
        }
    }
    panic!("{inner} is not in {}", path.display())
}

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
}

fn archives(sandbox: &Sandbox) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(sandbox.home().join("archive"))
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn rm_refuses_a_running_team_and_force_stops_it_first() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::start(&sandbox);
    running(&sandbox, &server, "r");
    let supervisor = pid_of(&sandbox, "r", "worker", "supervisorPid");
    let program = pid_of(&sandbox, "r", "worker", "pid");
    let stale = stale_entry(&sandbox, "r");

    let refused = sandbox
        .swarm()
        .args(["rm", "r"])
        .run()
        .refused(2, "team r is still running (team-lead, worker)");
    assert!(refused.stderr.contains("--force"), "{}", refused.stderr);
    assert!(sandbox.team_dir("r").join("config.json").exists());
    // A teammate may not remove its team.
    sandbox
        .swarm()
        .args(["rm", "r", "--force"])
        .as_("worker")
        .run()
        .refused(
            2,
            "only the lead or the person at the keyboard may remove a team",
        );
    assert_eq!(state(&sandbox, "r", "worker"), "running");

    sandbox
        .swarm()
        .args(["rm", "--force", "r"])
        .run()
        .success()
        .stdout_is("team-lead stopped: killed\nworker stopped: killed\nremoved team r\n");
    assert!(!sandbox.team_dir("r").exists(), "the team's folder is gone");
    assert!(!alive(supervisor) && !alive(program), "nothing of it runs");
    assert!(!stale.exists(), "its stale registry entry is gone");
    let teams: Vec<_> = fs::read_dir(sandbox.home().join("teams"))
        .unwrap()
        .collect();
    assert!(teams.is_empty(), "nothing is left in teams/: {teams:?}");
    sandbox
        .swarm()
        .args(["rm", "r"])
        .run()
        .refused(3, "no team named r");
}

#[test]
fn down_rm_takes_the_team_down_and_archives_it() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::start(&sandbox);
    running(&sandbox, &server, "d");
    sandbox
        .swarm()
        .args(["down", "--rm", "--archive", "--timeout", "1"])
        .env("SWARM_TEST_NOW", "2026-01-01T00:00:00Z")
        .run()
        .success()
        .stdout_is(&format!(
            "team-lead stopped: killed\nworker stopped: killed\nteam d is down\n\
             archived team d to {}/archive/d-20260101T000000Z.tar.zst and removed it\n",
            sandbox.home().display()
        ));
    assert!(!sandbox.team_dir("d").exists());
    assert_eq!(archives(&sandbox), ["d-20260101T000000Z.tar.zst"]);
    // --archive belongs to --rm.
    sandbox
        .swarm()
        .args(["down", "d", "--archive"])
        .run()
        .code(2)
        .stderr_is(
            "error: the following required arguments were not provided:\n  --rm\n\n\
             Usage: swarm down --rm --archive[=<FORMAT>] --home <DIR> <TEAM>\n\n\
             For more information, try '--help'.\n",
        );
}

#[test]
fn prune_removes_teams_that_ended_and_leaves_running_ones() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::start(&sandbox);
    ended(&sandbox, &server, "done");
    running(&sandbox, &server, "busy");
    sandbox.team("fresh", &["bob"]);

    // Everything ended moments ago.
    sandbox
        .swarm()
        .args(["prune", "--older-than", "1h"])
        .run()
        .success()
        .stdout_is("nothing to prune (running: busy; ended less than 1h ago: done, fresh)\n");
    // Two hours on, by the clock swarm reads.
    let later = (now_ms() + 2 * 3600 * 1000).to_string();
    let dry = sandbox
        .swarm()
        .args(["prune", "--older-than", "1h", "--dry-run"])
        .env("SWARM_TEST_NOW", &later)
        .run()
        .success();
    assert_eq!(
        dry.stdout,
        "would remove team done (ended 2h ago)\nwould remove team fresh (ended 2h ago)\n"
    );
    assert!(sandbox.team_dir("done").exists() && sandbox.team_dir("fresh").exists());
    let pruned = sandbox
        .swarm()
        .args(["prune", "--older-than", "90m"])
        .env("SWARM_TEST_NOW", &later)
        .run()
        .success();
    assert_eq!(
        pruned.stdout,
        "removed team done (ended 2h ago)\nremoved team fresh (ended 2h ago)\n"
    );
    assert!(!sandbox.team_dir("done").exists() && !sandbox.team_dir("fresh").exists());
    assert_eq!(state(&sandbox, "busy", "worker"), "running");
    sandbox
        .swarm()
        .args(["prune", "--older-than", "soon"])
        .run()
        .code(2)
        .stderr_is(
            "error: invalid value 'soon' for '--older-than <DURATION>': \"soon\" is not a duration \
             (expected number at 0): give seconds (20, 0.5) or units (30s, 2m, 1h 30m)\n\n\
             For more information, try '--help'.\n",
        );
    sandbox
        .swarm()
        .args(["down", "busy", "--force"])
        .run()
        .success();
    sandbox
        .swarm()
        .arg("prune")
        .run()
        .success()
        .stdout_has("removed team busy");
}

#[test]
fn an_archive_holds_the_whole_team_and_one_that_fails_leaves_it() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    sandbox.team("u", &["carol"]);
    for (team, member) in [("t", "bob"), ("u", "carol")] {
        for text in ["first", "second"] {
            sandbox
                .swarm()
                .args(["send", member, text])
                .team(team)
                .run()
                .success();
        }
        // One read, into history; one left unread.
        sandbox
            .swarm()
            .args(["recv", "--max", "1"])
            .team(team)
            .as_(member)
            .run()
            .success();
    }
    let logs = sandbox.team_dir("t").join("logs");
    fs::write(logs.join("bob.log"), "what bob printed\n").unwrap();
    let config = fs::read_to_string(sandbox.team_dir("t").join("config.json")).unwrap();

    sandbox
        .swarm()
        .args(["rm", "t", "--archive"])
        .env("SWARM_TEST_NOW", "2026-01-01T00:00:00Z")
        .run()
        .success()
        .stdout_is(&format!(
            "archived team t to {}/archive/t-20260101T000000Z.tar.zst and removed it\n",
            sandbox.home().display()
        ));
    assert!(!sandbox.team_dir("t").exists());
    let archive = sandbox.home().join("archive/t-20260101T000000Z.tar.zst");
    assert_eq!(mode(&archive), 0o600);
    assert_eq!(mode(&sandbox.home().join("archive")), 0o700);
    let listing = tar_listing(&archive);
    let names: Vec<&str> = listing
        .iter()
        .map(|(entry, _)| entry.split(' ').next().unwrap())
        .collect();
    for expected in [
        "t",
        "t/config.json",
        "t/inboxes",
        "t/inboxes/bob.json",
        "t/inboxes/team-lead.json",
        "t/history",
        "t/history/bob.jsonl",
        "t/logs",
        "t/logs/bob.log",
    ] {
        assert!(names.contains(&expected), "{expected} is not in {names:?}");
    }
    for (entry, mode) in &listing {
        assert_eq!(mode & 0o077, 0, "{entry} is private in the archive");
    }
    assert_eq!(tar_file(&archive, "t/config.json"), config);
    assert!(tar_file(&archive, "t/history/bob.jsonl").contains("first"));
    assert!(tar_file(&archive, "t/inboxes/bob.json").contains("second"));
    assert_eq!(tar_file(&archive, "t/logs/bob.log"), "what bob printed\n");

    // An archive that cannot be written leaves the team as it was.
    let unread = fs::read(sandbox.inbox_path("u", "carol")).unwrap();
    fs::remove_file(&archive).unwrap();
    fs::remove_dir(sandbox.home().join("archive")).unwrap();
    fs::write(sandbox.home().join("archive"), "in the way").unwrap();
    for archive in ["--archive", "--archive=dir"] {
        let failed = sandbox.swarm().args(["rm", "u", archive]).run();
        assert_ne!(failed.status.code(), Some(0), "{}", failed.stdout);
        assert!(failed.stderr.starts_with("swarm: "), "{}", failed.stderr);
        assert_eq!(fs::read(sandbox.inbox_path("u", "carol")).unwrap(), unread);
        assert!(sandbox.team_dir("u").join("history/carol.jsonl").exists());
    }
    let failed = sandbox.swarm().args(["prune", "--archive"]).run();
    assert_ne!(failed.status.code(), Some(0));
    assert!(sandbox.team_dir("u").join("config.json").exists());

    // A folder archive is the team's folder, moved.
    fs::remove_file(sandbox.home().join("archive")).unwrap();
    sandbox
        .swarm()
        .args(["rm", "u", "--archive=dir"])
        .env("SWARM_TEST_NOW", "2026-01-01T00:00:00Z")
        .run()
        .success()
        .stdout_is(&format!(
            "moved team u to {}/archive/u-20260101T000000Z\n",
            sandbox.home().display()
        ));
    let moved = sandbox.home().join("archive/u-20260101T000000Z");
    assert_eq!(fs::read(moved.join("inboxes/carol.json")).unwrap(), unread);
    assert_eq!(mode(&moved), 0o700);
    assert!(!sandbox.team_dir("u").exists());
}

#[test]
fn rm_follows_no_symlink() {
    let sandbox = Sandbox::new();
    sandbox.team("real", &["bob"]);
    let elsewhere = sandbox.root().join("elsewhere");
    fs::rename(sandbox.team_dir("real"), &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, sandbox.team_dir("real")).unwrap();
    sandbox
        .swarm()
        .args(["rm", "real"])
        .run()
        .refused(1, "symlink");
    assert!(elsewhere.join("config.json").exists());
    assert!(elsewhere.join("inboxes/bob.json").exists());
}

#[test]
fn the_one_running_team_is_the_default_team() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::start(&sandbox);
    sandbox.team("idle", &["bob"]);
    running(&sandbox, &server, "live");
    sandbox
        .swarm()
        .arg("status")
        .run()
        .success()
        .stdout_has("team live");
    sandbox
        .swarm()
        .args(["send", "worker", "hi"])
        .run()
        .success();
    assert_eq!(sandbox.inbox("live", "worker").len(), 1);
    // --team and SWARM_TEAM still win.
    sandbox
        .swarm()
        .args(["status", "--team", "idle"])
        .run()
        .success()
        .stdout_has("team idle");
    sandbox
        .swarm()
        .arg("status")
        .team("idle")
        .run()
        .success()
        .stdout_has("team idle");
    // Two running teams: which one is for the caller to say.
    running(&sandbox, &server, "also");
    sandbox.swarm().arg("status").run().refused(
        2,
        "which team? pass --team or set SWARM_TEAM (teams: also (running), idle, live (running))",
    );
    for team in ["live", "also"] {
        sandbox
            .swarm()
            .args(["down", team, "--force"])
            .run()
            .success();
    }
    // None running: still the caller's to say.
    sandbox
        .swarm()
        .arg("status")
        .run()
        .refused(2, "(teams: also, idle, live)");
}

/// A team with a board of two tasks, made by `init`.
fn with_tasks(sandbox: &Sandbox, name: &str) {
    sandbox.team(name, &["bob"]);
    for subject in ["parse", "lex"] {
        sandbox
            .swarm()
            .args(["task", "add", subject])
            .team(name)
            .run()
            .success();
    }
}

fn task_list(sandbox: &Sandbox, team: &str) -> PathBuf {
    sandbox.home().join("tasks").join(team)
}

/// Everything swarm keeps of a team goes with it, its task list too: `rm`, `prune` and
/// `down --rm` remove it, an archive holds it, and a new team of the same name starts with no
/// board.
#[test]
fn removing_a_team_takes_its_task_list_and_an_archive_keeps_it() {
    let sandbox = Sandbox::new();
    let fresh_board = |team: &str| {
        sandbox.team(team, &["bob"]);
        sandbox
            .swarm()
            .args(["task", "list"])
            .team(team)
            .run()
            .refused(3, "has no task list yet");
        sandbox.swarm().args(["rm", team]).run().success();
    };
    with_tasks(&sandbox, "a");
    sandbox.swarm().args(["rm", "a"]).run().success();
    assert!(!task_list(&sandbox, "a").exists(), "rm takes the task list");
    fresh_board("a");

    with_tasks(&sandbox, "p");
    let later = (now_ms() + 3600 * 1000).to_string();
    sandbox
        .swarm()
        .arg("prune")
        .env("SWARM_TEST_NOW", &later)
        .run()
        .success()
        .stdout_has("removed team p");
    assert!(
        !task_list(&sandbox, "p").exists(),
        "prune takes the task list"
    );

    with_tasks(&sandbox, "d");
    sandbox.swarm().args(["down", "d", "--rm"]).run().success();
    assert!(
        !task_list(&sandbox, "d").exists(),
        "down --rm takes the task list"
    );
    fresh_board("d");

    let archived = |team: &str, how: &str| {
        with_tasks(&sandbox, team);
        sandbox
            .swarm()
            .args(["rm", team, how])
            .env("SWARM_TEST_NOW", "2026-01-01T00:00:00Z")
            .run()
            .success();
    };
    archived("t", "--archive");
    assert!(!task_list(&sandbox, "t").exists());
    let archive = sandbox.home().join("archive/t-20260101T000000Z.tar.zst");
    let names: Vec<String> = tar_listing(&archive)
        .into_iter()
        .map(|(entry, _)| entry.split(' ').next().unwrap().to_owned())
        .collect();
    for expected in [
        "t/config.json",
        "t/tasks",
        "t/tasks/1.json",
        "t/tasks/2.json",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} is not in {names:?}"
        );
    }
    assert!(tar_file(&archive, "t/tasks/1.json").contains("\"subject\": \"parse\""));
    fresh_board("t");

    archived("u", "--archive=dir");
    assert!(!task_list(&sandbox, "u").exists());
    let moved = sandbox.home().join("archive/u-20260101T000000Z");
    assert!(moved.join("config.json").exists());
    assert!(
        fs::read_to_string(moved.join("tasks/2.json"))
            .unwrap()
            .contains("\"subject\": \"lex\"")
    );
    fresh_board("u");
}

/// What a removal killed half-way leaves (`teams/.<team>.removing-<pid>`, the task list perhaps
/// still in place) is finished by the next command that lists teams, in one line on stderr; one
/// killed while archiving is archived, never lost.
#[test]
fn a_removal_killed_half_way_is_finished_by_the_next_command() {
    let sandbox = Sandbox::new();
    with_tasks(&sandbox, "t");
    sandbox
        .swarm()
        .args(["send", "bob", "an unread message"])
        .team("t")
        .run()
        .success();
    let teams = sandbox.home().join("teams");
    // Killed right after the team's folder was moved aside, before anything was deleted.
    let aside = teams.join(format!(".t.removing-{}", dead_pid()));
    fs::rename(sandbox.team_dir("t"), &aside).unwrap();
    let listed = sandbox.swarm().arg("ls").run().success();
    assert_eq!(
        listed.stderr.lines().count(),
        1,
        "one line says what was finished:\n{}",
        listed.stderr
    );
    assert!(listed.stderr.contains("team t"), "{}", listed.stderr);
    assert!(!aside.exists(), "the removal was finished");
    assert!(
        !task_list(&sandbox, "t").exists(),
        "the task list went with it"
    );
    sandbox.team("t", &["bob"]);
    sandbox
        .swarm()
        .args(["task", "list"])
        .team("t")
        .run()
        .refused(3, "has no task list yet");
    sandbox.swarm().args(["rm", "t"]).run().success();

    // Killed while moving the team into the archive: the next command archives it.
    with_tasks(&sandbox, "u");
    let aside = teams.join(format!(".u.archiving-{}", dead_pid()));
    fs::rename(sandbox.team_dir("u"), &aside).unwrap();
    sandbox
        .swarm()
        .arg("prune")
        .env("SWARM_TEST_NOW", "2026-01-01T00:00:00Z")
        .run()
        .success();
    assert!(!aside.exists());
    let moved = sandbox.home().join("archive/u-20260101T000000Z");
    assert!(moved.join("inboxes/bob.json").exists(), "nothing was lost");
    assert!(moved.join("tasks/1.json").exists());
    assert!(!task_list(&sandbox, "u").exists());

    // A live process's removal is its own to finish.
    with_tasks(&sandbox, "v");
    let mut live = std::process::Command::new("sleep")
        .arg("1000")
        .spawn()
        .unwrap();
    let aside = teams.join(format!(".v.removing-{}", live.id()));
    fs::rename(sandbox.team_dir("v"), &aside).unwrap();
    sandbox.swarm().arg("ls").run().success();
    assert!(aside.join("config.json").exists());
    assert!(task_list(&sandbox, "v").exists());
    live.kill().unwrap();
    live.wait().unwrap();
    sandbox
        .swarm()
        .args(["rm", "v"])
        .run()
        .success()
        .stdout_is("removed team v\n");
    assert!(!aside.exists(), "rm finished it");
    assert!(!task_list(&sandbox, "v").exists());
}

/// A team `g` whose lead and members `first` and `last` sleep and answer no shutdown request (so
/// `down` stops them at once), started by `up` through a tmux that holds at `last`'s pane until
/// the returned gate is opened (written), once `first` runs: `up` is placing the team's panes.
fn up_held_at_last(sandbox: &mut Sandbox) -> (TmuxServer, PathBuf, Background) {
    gated_tmux(sandbox, "last");
    let server = TmuxServer::start(sandbox);
    let gate = sandbox.root().join("gate");
    let file = sandbox.write(
        "g.toml",
        "name = \"g\"\n[lead]\ncommand = [\"sleep\", \"1000\"]\n\
         [[member]]\nname = \"first\"\ncommand = [\"sleep\", \"1000\"]\nprotocol = \"none\"\n\
         [[member]]\nname = \"last\"\ncommand = [\"sleep\", \"1000\"]\nprotocol = \"none\"\n",
    );
    let up = up_on(sandbox, &server, &file)
        .env("TMUX_GATE", &gate)
        .spawn();
    eventually("up to reach the last pane", || {
        sandbox.root().join("gate.reached").exists()
    });
    eventually("first to run", || state(sandbox, "g", "first") == "running");
    (server, gate, up)
}

/// Checks that nothing of team `g` was stopped while `up` was held, then lets it go on: it places
/// the whole team and exits 0.
fn let_up_finish(sandbox: &Sandbox, gate: &Path, up: Background) {
    assert_eq!(
        state(sandbox, "g", "first"),
        "running",
        "nothing was stopped"
    );
    assert_eq!(state(sandbox, "g", "team-lead"), "running");
    fs::write(gate, "").unwrap();
    let (status, stderr) = up.finish();
    assert!(status.success(), "{stderr}");
}

/// `down` while `up` is placing the team's panes: `up` wins, and `down` waits for it (saying so,
/// here as a `held` event) with nothing stopped, then takes the whole team down.
#[test]
fn down_during_up_waits_for_it_then_takes_the_whole_team_down() {
    let mut sandbox = Sandbox::new();
    let (_server, gate, up) = up_held_at_last(&mut sandbox);
    let down = sandbox.swarm().args(["down", "g", "--json"]).spawn();
    let held = down.next_json();
    assert_eq!(held["event"], "held", "{held}");
    assert_eq!(held["by"], "up", "{held}");
    assert_eq!(held["timeoutMs"], 20_000, "{held}");
    let_up_finish(&sandbox, &gate, up);
    let mut stopped = Vec::new();
    loop {
        let event = down.next_json();
        if event["event"] == "down" {
            break;
        }
        assert_eq!(event["event"], "stopped", "{event}");
        stopped.push(event["name"].as_str().unwrap().to_owned());
    }
    stopped.sort();
    assert_eq!(stopped, ["first", "last", "team-lead"]);
    let (status, stderr) = down.finish();
    assert!(status.success(), "{stderr}");
    for member in ["team-lead", "first", "last"] {
        assert_eq!(state(&sandbox, "g", member), "killed", "{member}");
    }
}

/// `stop all` while `up` is placing the team's panes waits for it too, saying so on stderr, and
/// then stops every member but the lead; `stop NAME` does not wait, and `up` then says the team
/// is not whole and exits 1.
#[test]
fn stop_during_up_waits_for_all_and_makes_up_say_the_team_is_not_whole() {
    let mut sandbox = Sandbox::new();
    let (_server, gate, up) = up_held_at_last(&mut sandbox);
    let all = sandbox.swarm().args(["stop", "all"]).spawn();
    let lock = sandbox.team_dir("g").join(".launch.flock");
    eventually("stop all to wait for the launch lock", || {
        opened(all.pid(), &lock)
    });
    sandbox
        .swarm()
        .args(["stop", "first"])
        .run()
        .success()
        .stdout_has("first");
    assert_eq!(state(&sandbox, "g", "team-lead"), "running");
    fs::write(&gate, "").unwrap();
    let (status, stderr) = up.finish();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("team g is not whole: first stopped while `swarm up` placed the team"),
        "{stderr}"
    );
    let line = all.next_line();
    assert!(
        line.starts_with("last was killed (stop)"),
        "stop all waited for last to be placed: {line}"
    );
    let (status, stderr) = all.finish();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains("team g is being started by `swarm up` (pid ")
            && stderr.contains("waiting up to 20s for it to finish, then stopping its members"),
        "{stderr}"
    );
    assert_eq!(state(&sandbox, "g", "team-lead"), "running");
    sandbox
        .swarm()
        .args(["down", "g", "--force"])
        .run()
        .success();
}

/// Whether process `pid` has `path` open.
fn opened(pid: u32, path: &Path) -> bool {
    fs::read_dir(format!("/proc/{pid}/fd")).is_ok_and(|fds| {
        fds.flatten()
            .any(|fd| fs::read_link(fd.path()).is_ok_and(|target| target == path))
    })
}

/// `rm --force` while `up` is placing the team's panes: `up` wins. `rm` refuses before it stops
/// anything, and `up` places a team that runs whole.
#[test]
fn rm_force_during_up_refuses_before_stopping_anything() {
    let mut sandbox = Sandbox::new();
    let (_server, gate, up) = up_held_at_last(&mut sandbox);
    sandbox
        .swarm()
        .args(["rm", "--force", "g"])
        .run()
        .refused(2, "team g is being started by `swarm up`");
    let_up_finish(&sandbox, &gate, up);
    for member in ["team-lead", "first", "last"] {
        eventually(&format!("{member} to run"), || {
            state(&sandbox, "g", member) == "running"
        });
    }
    sandbox
        .swarm()
        .args(["rm", "--force", "g"])
        .run()
        .success()
        .stdout_is(
            "first stopped: killed\nlast stopped: killed\nteam-lead stopped: killed\nremoved team g\n",
        );
}

/// Temporary files a killed writer left beside the files swarm replaces (`task add`, `send`
/// SIGKILLed mid-write) are removed the next time swarm writes in that folder, once they are
/// older than a few minutes and their writer is gone; a recent one, or one whose writer still
/// runs, is left alone.
#[test]
fn temporary_files_killed_writers_left_are_cleaned_when_the_folder_is_next_written() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    let tasks = sandbox.home().join("tasks").join("t");
    let inboxes = sandbox.team_dir("t").join("inboxes");
    fs::create_dir_all(&tasks).unwrap();
    let hour_ago = SystemTime::now() - std::time::Duration::from_secs(3600);
    let plant = |dir: &Path, name: &str, old: bool| -> PathBuf {
        let path = dir.join(name);
        let file = fs::File::create(&path).unwrap();
        if old {
            file.set_modified(hour_ago).unwrap();
        }
        path
    };
    let dead = {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    };
    let alive = std::process::id();
    // Left by an older swarm (no pid in the name), by a dead writer, and by one that lives.
    let stale = [
        plant(&tasks, ".1.json.Ab3xYz.tmp", true),
        plant(&tasks, "..highwatermark.Qw9eRt.tmp", true),
        plant(&tasks, &format!(".2.json.{dead}.Zx8cVb.tmp"), true),
        plant(&inboxes, ".bob.json.Lk2jHg.tmp", true),
    ];
    let kept = [
        plant(&tasks, ".3.json.Mn4bVc.tmp", false),
        plant(&tasks, &format!(".4.json.{alive}.Po0iUy.tmp"), true),
        plant(&inboxes, &format!(".bob.json.{dead}.Df5gHj.tmp"), false),
    ];

    sandbox
        .swarm()
        .args(["task", "add", "one"])
        .team("t")
        .run()
        .success();
    sandbox
        .swarm()
        .args(["send", "bob", "hi"])
        .team("t")
        .run()
        .success();
    for path in &stale {
        assert!(!path.exists(), "{} was left", path.display());
    }
    for path in &kept {
        assert!(path.exists(), "{} was removed", path.display());
    }
}

/// Rewrites team `team`'s config.json as a teammate could, with `edit`.
fn edit_config(sandbox: &Sandbox, team: &str, edit: impl FnOnce(&mut serde_json::Value)) {
    let mut config = sandbox.config(team);
    edit(&mut config);
    let path = sandbox.team_dir(team).join("config.json");
    let staged = path.with_extension("edited");
    fs::write(&staged, config.to_string()).unwrap();
    fs::rename(&staged, &path).unwrap();
}

/// Sets member `name`'s `field` in team `team`'s config.json.
fn edit_member(sandbox: &Sandbox, team: &str, name: &str, field: &str, value: serde_json::Value) {
    edit_config(sandbox, team, |config| {
        let member = config["members"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|m| m["name"] == name)
            .unwrap();
        member[field] = value;
    });
}

/// After the tmux server restarts, the pane ids config.json still names are the person's new
/// panes: `down` kills none of them.
#[test]
fn down_after_tmux_restarts_leaves_the_persons_new_panes_alone() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::start(&sandbox);
    ended(&sandbox, &server, "d");
    let recorded: Vec<String> = ["team-lead", "quick"]
        .iter()
        .map(|m| {
            sandbox.member("d", m)["tmuxPaneId"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    server.run(&["kill-server"]);
    eventually("the tmux server to exit", || !server.is_running());
    drop(server);
    let server = TmuxServer::start(&sandbox);
    for _ in &recorded {
        server.run(&["split-window", "-d", "-t", "fixture", "sleep", "1000"]);
    }
    let before = server.panes();
    for pane in &recorded {
        assert!(
            before.contains(pane),
            "{pane} is the person's now: {before:?}"
        );
    }
    sandbox
        .swarm()
        .args(["down", "d"])
        .run()
        .success()
        .stdout_has("team d is down");
    assert_eq!(server.panes(), before, "the person's panes are all there");
}

/// A teammate points config.json at the person's pane: `stop` ends the member, whose own pane
/// closes, and leaves the named pane alone, saying so.
#[test]
fn stop_leaves_alone_a_pane_that_is_not_the_members() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::start(&sandbox);
    running(&sandbox, &server, "s");
    let own = sandbox.member("s", "worker")["tmuxPaneId"]
        .as_str()
        .unwrap()
        .to_owned();
    let persons = server.pane_format("fixture", "#{pane_id}");
    edit_member(
        &sandbox,
        "s",
        "worker",
        "tmuxPaneId",
        persons.clone().into(),
    );
    sandbox
        .swarm()
        .args(["stop", "worker", "--team", "s"])
        .run()
        .success()
        .stderr_has(&format!("left pane {persons} alone: it is not worker's"));
    assert_eq!(state(&sandbox, "s", "worker"), "killed");
    eventually("worker's own pane to close", || {
        !server.panes().contains(&own)
    });
    assert!(server.panes().contains(&persons), "the person's pane lives");
    crate::harness::down(&sandbox, "s");
}
/// A live, proven supervisor means running, whatever the panes show: with config.json pointing
/// at another tmux server, the team still runs, and `rm` without `--force` refuses.
#[test]
fn a_running_team_whose_panes_are_not_seen_is_still_running() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::start(&sandbox);
    running(&sandbox, &server, "m");
    let elsewhere = TmuxServer::unstarted_at(&sandbox, "elsewhere.sock");
    let started = sandbox
        .command("tmux")
        .arg("-S")
        .arg(elsewhere.socket())
        .args(["-f", "/dev/null", "new-session", "-d", "sleep", "1000"])
        .status()
        .unwrap();
    assert!(started.success());
    edit_config(&sandbox, "m", |config| {
        config["tmux"]["socket"] = elsewhere.socket().to_str().unwrap().into();
    });
    for member in ["team-lead", "worker"] {
        assert_eq!(sandbox.status_row("m", member)["state"], "running");
    }
    sandbox
        .swarm()
        .args(["rm", "m"])
        .run()
        .refused(2, "team m is still running (team-lead, worker)");
    assert!(sandbox.team_dir("m").join("config.json").exists());
    edit_config(&sandbox, "m", |config| {
        config["tmux"]["socket"] = server.socket().to_str().unwrap().into();
    });
    crate::harness::down(&sandbox, "m");
}

/// `up` killed (SIGKILL) once the lead's pane exists but before it heard of it: the supervisor
/// records where its pane is, so `down` finds and closes it, and the next `up` starts the team.
#[test]
fn down_after_up_was_killed_placing_a_pane_closes_it_and_up_starts_again() {
    let mut sandbox = Sandbox::new();
    gated_tmux_answer(&mut sandbox, "team-lead");
    let server = TmuxServer::start(&sandbox);
    let gate = sandbox.root().join("gate");
    let file = sandbox.write(
        "k.toml",
        "name = \"k\"\n[lead]\ncommand = [\"sleep\", \"1000\"]\n\
         [[member]]\nname = \"bob\"\ncommand = [\"sleep\", \"1000\"]\n",
    );
    let up = up_on(&sandbox, &server, &file)
        .env("TMUX_GATE", &gate)
        .spawn();
    eventually("the lead's pane to exist", || {
        sandbox.root().join("gate.reached").exists()
    });
    up.signal(nix::sys::signal::Signal::SIGKILL);
    let _ = up.finish();
    fs::write(&gate, "").unwrap();
    eventually("the lead to run", || {
        state(&sandbox, "k", "team-lead") == "running"
    });
    sandbox
        .swarm()
        .args(["down", "k"])
        .run()
        .success()
        .stdout_has("team k is down");
    assert!(
        !server
            .run(&["list-sessions", "-F", "#{session_name}"])
            .lines()
            .any(|session| session == "swarm-k"),
        "the team's session is gone"
    );
    up_on(&sandbox, &server, &file).run().success();
    for member in ["team-lead", "bob"] {
        eventually(&format!("{member} to run"), || {
            state(&sandbox, "k", member) == "running"
        });
    }
    crate::harness::down(&sandbox, "k");
}
