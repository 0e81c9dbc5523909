//! Secrets are where the user expects (docs/ARCHITECTURE.md, "Secrets and the environment"): a
//! member's variables reach its program and nothing else, on a private tmux server per test.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::harness::{Sandbox, TmuxServer, eventually};

/// Puts a `tmux` first on PATH that appends its arguments, one a line, to the returned file
/// before it runs the real tmux: what every local user could read in `ps` while it ran.
fn recording_tmux(sandbox: &mut Sandbox) -> PathBuf {
    let record = sandbox.root().join("tmux-argv");
    sandbox.tmux_shim(&format!("printf '%s\\n' \"$@\" >> {}\n", record.display()));
    record
}

/// A program that writes its environment to `<dir>/<name>.env`, then waits.
fn env_recorder(dir: &Path, name: &str) -> String {
    let out = dir.join(name);
    format!(
        "command = [\"sh\", \"-c\", \"env > {out}.tmp && mv {out}.tmp {out}.env; exec sleep 600\"]",
        out = out.display()
    )
}

/// What a member's program saw, as `env` printed it.
fn seen(dir: &Path, name: &str) -> BTreeMap<String, String> {
    let file = dir.join(format!("{name}.env"));
    eventually(&format!("{name} to record its environment"), || {
        file.exists()
    });
    fs::read_to_string(&file)
        .unwrap()
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(key, value)| (key.to_owned(), value.to_owned()))
        .collect()
}

/// Every file under `dir`, read as text where it can be.
fn files_under(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else if let Ok(bytes) = fs::read(&path) {
            found.push((path, String::from_utf8_lossy(&bytes).into_owned()));
        }
    }
    found
}

#[test]
fn a_members_own_variables_reach_its_program_and_nothing_else() {
    let mut sandbox = Sandbox::new();
    let record = recording_tmux(&mut sandbox);
    let dir = sandbox.root().join("seen");
    fs::create_dir_all(&dir).unwrap();
    let server = TmuxServer::unstarted(&sandbox);
    let file = sandbox.write(
        "own.toml",
        format!(
            "name = \"own\"\n[lead]\n{}\nenv = {{ LEAD_TOKEN = \"lead-token-value\" }}\n\
             [[member]]\nname = \"bob\"\n{}\nenv = {{ BOB_API_KEY = \"bob-key-value\" }}\n",
            env_recorder(&dir, "team-lead"),
            env_recorder(&dir, "bob"),
        ),
    );
    sandbox
        .swarm()
        .arg("up")
        .arg(&file)
        .arg("--socket")
        .arg(server.socket())
        .run()
        .success();
    let lead = seen(&dir, "team-lead");
    let bob = seen(&dir, "bob");
    assert_eq!(lead["LEAD_TOKEN"], "lead-token-value");
    assert_eq!(bob["BOB_API_KEY"], "bob-key-value");
    assert_eq!(bob["SWARM_AGENT"], "bob");
    assert!(
        !bob.contains_key("LEAD_TOKEN"),
        "the lead's variable reached bob through the tmux session"
    );
    assert!(!lead.contains_key("BOB_API_KEY"));

    let secrets = ["lead-token-value", "bob-key-value"];
    let argv = fs::read_to_string(&record).unwrap();
    let session = server.run(&["show-environment", "-t", "swarm-own"]);
    let global = server.run(&["show-environment", "-g"]);
    for secret in secrets {
        assert!(
            !argv.contains(secret),
            "{secret} was on tmux's command line:\n{argv}"
        );
        assert!(
            !session.contains(secret) && !global.contains(secret),
            "{secret} is in the tmux server's environment:\n{session}\n{global}"
        );
    }
    // config.json names the variables, never their values; the runtime directory keeps nothing.
    let config = fs::read_to_string(sandbox.team_dir("own").join("config.json")).unwrap();
    assert!(
        sandbox.member("own", "bob")["envKeys"]
            .as_array()
            .unwrap()
            .contains(&"BOB_API_KEY".into())
    );
    for (path, text) in files_under(&sandbox.home())
        .into_iter()
        .chain(files_under(&sandbox.root().join("run")))
    {
        for secret in secrets {
            assert!(!text.contains(secret), "{secret} is in {}", path.display());
        }
    }
    assert!(!config.contains("-value"));
    sandbox
        .swarm()
        .args(["down", "own", "--force"])
        .run()
        .success();
}

/// Secrets in the tmux server's own environment, as a server started from a shell that had them
/// would hold.
fn server_with_secrets(sandbox: &Sandbox) -> TmuxServer {
    let server = TmuxServer::start(sandbox);
    for (name, value) in SERVER_SECRETS {
        server.run(&["set-environment", "-g", name, value]);
    }
    server
}

const SERVER_SECRETS: [(&str, &str); 3] = [
    ("ANTHROPIC_API_KEY", "sk-ant-server-secret"),
    ("CLAUDE_CODE_OAUTH_TOKEN", "oauth-server-secret"),
    ("AWS_SECRET_ACCESS_KEY", "aws-server-secret"),
];

/// What `sh` adds to the environment it runs `env` in.
const SHELL_ADDS: [&str; 3] = ["PWD", "OLDPWD", "SHLVL"];

#[test]
fn env_remove_and_env_clear_hold_whatever_the_tmux_server_passes() {
    let sandbox = Sandbox::new();
    let dir = sandbox.root().join("seen");
    fs::create_dir_all(&dir).unwrap();
    let server = server_with_secrets(&sandbox);
    let file = sandbox.write(
        "pol.toml",
        format!(
            "name = \"pol\"\nenv_remove = [\"AWS_SECRET_ACCESS_KEY\"]\n\
             [lead]\ncommand = [\"sleep\", \"600\"]\n\
             [[member]]\nname = \"open\"\n{}\n\
             [[member]]\nname = \"removed\"\n{}\nenv_remove = [\"ANTHROPIC_API_KEY\"]\n\
             [[member]]\nname = \"cleared\"\n{}\nenv_clear = true\nenv_keep = [\"PATH\", \"HOME\"]\n",
            env_recorder(&dir, "open"),
            env_recorder(&dir, "removed"),
            env_recorder(&dir, "cleared"),
        ),
    );
    sandbox
        .swarm()
        .arg("up")
        .arg(&file)
        .arg("--socket")
        .arg(server.socket())
        .run()
        .success();

    // By default a member gets its pane's environment, keys and all: a teammate that talks to a
    // model needs its key. The team-wide env_remove holds for every member.
    let open = seen(&dir, "open");
    assert_eq!(open["ANTHROPIC_API_KEY"], "sk-ant-server-secret");
    assert_eq!(open["CLAUDE_CODE_OAUTH_TOKEN"], "oauth-server-secret");
    assert!(open.contains_key("TMUX_PANE"));
    assert!(!open.contains_key("AWS_SECRET_ACCESS_KEY"));

    let removed = seen(&dir, "removed");
    assert!(!removed.contains_key("ANTHROPIC_API_KEY"));
    assert!(!removed.contains_key("AWS_SECRET_ACCESS_KEY"));
    assert_eq!(removed["CLAUDE_CODE_OAUTH_TOKEN"], "oauth-server-secret");

    let cleared = seen(&dir, "cleared");
    let names: Vec<&str> = cleared
        .keys()
        .map(String::as_str)
        .filter(|name| !SHELL_ADDS.contains(name))
        .collect();
    assert!(
        names
            .iter()
            .all(|name| ["PATH", "HOME"].contains(name) || name.starts_with("SWARM_")),
        "env_clear let more through: {names:?}"
    );
    assert_eq!(
        cleared["HOME"],
        sandbox.root().join("user").to_str().unwrap()
    );
    assert!(cleared["PATH"].ends_with(sandbox.env_value("PATH").unwrap().to_str().unwrap()));
    assert_eq!(cleared["SWARM_AGENT"], "cleared");
    assert!(cleared.contains_key("SWARM_RUN_ID"));

    // config.json records the rules, names only, and `info` says them.
    sandbox
        .swarm()
        .args(["info", "removed", "--team", "pol"])
        .run()
        .success()
        .stdout_has("inherits        everything, never ANTHROPIC_API_KEY AWS_SECRET_ACCESS_KEY\n");
    sandbox
        .swarm()
        .args(["info", "cleared", "--team", "pol"])
        .run()
        .success()
        .stdout_has("inherits        only HOME PATH, never AWS_SECRET_ACCESS_KEY\n");
    let member = sandbox.member("pol", "cleared");
    assert_eq!(member["envClear"], true);
    assert_eq!(member["envKeep"], serde_json::json!(["HOME", "PATH"]));
    assert_eq!(
        sandbox.member("pol", "removed")["envRemove"],
        serde_json::json!(["ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY"])
    );
    let config = fs::read_to_string(sandbox.team_dir("pol").join("config.json")).unwrap();
    for (_, secret) in SERVER_SECRETS {
        assert!(!config.contains(secret), "{secret} is in config.json");
    }

    // spawn takes the same rules, over the team's.
    sandbox
        .swarm()
        .args([
            "spawn",
            "late",
            "--env-remove",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "--",
            "sh",
            "-c",
        ])
        .arg(format!(
            "env > {out}.tmp && mv {out}.tmp {out}.env; exec sleep 600",
            out = dir.join("late").display()
        ))
        .team("pol")
        .as_("team-lead")
        .run()
        .success();
    let late = seen(&dir, "late");
    assert_eq!(late["ANTHROPIC_API_KEY"], "sk-ant-server-secret");
    assert!(!late.contains_key("CLAUDE_CODE_OAUTH_TOKEN"));
    assert!(
        !late.contains_key("AWS_SECRET_ACCESS_KEY"),
        "the team's rule holds"
    );
    sandbox
        .swarm()
        .args(["spawn", "odd", "--env-keep", "PATH", "--", "true"])
        .team("pol")
        .as_("team-lead")
        .run()
        .refused(2, "--env-keep has no effect without --env-clear");
    sandbox
        .swarm()
        .args(["down", "pol", "--force"])
        .run()
        .success();
}

#[test]
fn impossible_env_rules_are_refused_before_anything_starts() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::unstarted(&sandbox);
    for (rules, why) in [
        (
            "env_keep = [\"PATH\"]",
            "env_keep of a has no effect without env_clear = true",
        ),
        (
            "env = { API_KEY = \"x\" }\nenv_remove = [\"API_KEY\"]",
            "API_KEY is set in env and removed by env_remove",
        ),
    ] {
        let file = sandbox.write(
            "bad.toml",
            format!("name = \"bad\"\n[[member]]\nname = \"a\"\ncommand = [\"true\"]\n{rules}\n"),
        );
        sandbox
            .swarm()
            .arg("up")
            .arg(&file)
            .arg("--socket")
            .arg(server.socket())
            .run()
            .refused(2, why);
        assert!(!sandbox.team_dir("bad").exists());
        assert!(!server.is_running());
    }
}

/// `up --dry-run --json --socket <server>`: what each pane's program would get.
fn dry_run(sandbox: &Sandbox, server: &TmuxServer, file: &Path) -> serde_json::Value {
    sandbox
        .swarm()
        .args(["up", "--dry-run", "--json"])
        .arg(file)
        .arg("--socket")
        .arg(server.socket())
        .run()
        .success()
        .json()
}

fn planned<'a>(plan: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    plan["panes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|pane| pane["name"] == name)
        .unwrap_or_else(|| panic!("{name} is not in the dry run: {plan:#}"))
}

/// What `sh` sets itself when it runs `env`, whatever it was given.
fn set_by_the_shell(name: &str) -> bool {
    SHELL_ADDS.contains(&name) || name == "_"
}

#[test]
fn dry_run_shows_every_variable_the_program_gets_with_secret_values_masked() {
    let sandbox = Sandbox::new();
    let dir = sandbox.root().join("seen");
    fs::create_dir_all(&dir).unwrap();
    let server = server_with_secrets(&sandbox);
    server.run(&[
        "set-environment",
        "-g",
        "HTTPS_PROXY",
        "http://me:proxy-pass@proxy:3128",
    ]);
    let file = sandbox.write(
        "dry.toml",
        format!(
            "name = \"dry\"\nenv_remove = [\"AWS_SECRET_ACCESS_KEY\"]\n\
             [[member]]\nname = \"open\"\n{}\nenv = {{ OWN_API_KEY = \"own-key-value\", PLAIN = \"plain-value\" }}\n\
             [[member]]\nname = \"removed\"\n{}\nenv_remove = [\"ANTHROPIC_API_KEY\"]\n\
             [[member]]\nname = \"cleared\"\n{}\nenv_clear = true\nenv_keep = [\"HOME\", \"TMUX_PANE\"]\n",
            env_recorder(&dir, "open"),
            env_recorder(&dir, "removed"),
            env_recorder(&dir, "cleared"),
        ),
    );
    let plan = dry_run(&sandbox, &server, &file);
    let text = sandbox
        .swarm()
        .args(["up", "--dry-run"])
        .arg(&file)
        .arg("--socket")
        .arg(server.socket())
        .run()
        .success();
    let secrets = [
        "sk-ant-server-secret",
        "oauth-server-secret",
        "aws-server-secret",
        "own-key-value",
        "proxy-pass",
    ];
    for secret in secrets {
        assert!(!text.stdout.contains(secret), "{secret}:\n{}", text.stdout);
        assert!(!plan.to_string().contains(secret), "{secret}:\n{plan:#}");
    }
    assert!(
        text.stdout
            .contains("  env           ANTHROPIC_API_KEY=<masked>\n"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout
            .contains("  drop          AWS_SECRET_ACCESS_KEY\n")
    );
    assert_eq!(plan["environmentFrom"], "the running tmux server");

    sandbox
        .swarm()
        .arg("up")
        .arg(&file)
        .arg("--socket")
        .arg(server.socket())
        .run()
        .success();
    for name in ["open", "removed", "cleared"] {
        let foreseen = planned(&plan, name)["env"].as_object().unwrap();
        let got = seen(&dir, name);
        let names = |keys: Vec<&String>| -> Vec<String> {
            keys.into_iter()
                .filter(|key| !set_by_the_shell(key))
                .cloned()
                .collect()
        };
        assert_eq!(
            names(foreseen.keys().collect()),
            names(got.keys().collect()),
            "{name}: the dry run's variables are not the program's"
        );
        for (key, shown) in foreseen {
            let shown = shown.as_str().unwrap();
            // What only the start knows: tmux's own, the run's, and the verify key a launch makes.
            if set_by_the_shell(key) || shown.starts_with("<set ") || shown == "<made-at-launch>" {
                continue;
            }
            if shown.contains("<masked>") {
                assert_ne!(shown, got[key], "{name}: {key} is not masked");
            } else {
                assert_eq!(shown, got[key], "{name}: {key}");
            }
        }
    }
    let open = planned(&plan, "open");
    assert_eq!(open["env"]["ANTHROPIC_API_KEY"], "<masked>");
    assert_eq!(open["env"]["OWN_API_KEY"], "<masked>");
    assert_eq!(open["env"]["PLAIN"], "plain-value");
    assert_eq!(open["env"]["HTTPS_PROXY"], "http://me:<masked>@proxy:3128");
    assert_eq!(open["env"]["TMUX_PANE"], "<set by tmux>");
    assert_eq!(open["env"]["SWARM_RUN_ID"], "<set when it starts>");
    assert_eq!(
        open["withheld"],
        serde_json::json!(["AWS_SECRET_ACCESS_KEY"])
    );
    let removed = planned(&plan, "removed");
    assert_eq!(
        removed["withheld"],
        serde_json::json!(["ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY"])
    );
    let cleared = planned(&plan, "cleared")["withheld"].to_string();
    assert!(cleared.contains("CLAUDE_CODE_OAUTH_TOKEN") && !cleared.contains("\"PATH\""));
    sandbox
        .swarm()
        .args(["down", "dry", "--force"])
        .run()
        .success();
}

#[test]
fn secrets_reach_no_file_argv_log_or_notice_of_swarms() {
    let mut sandbox = Sandbox::new();
    let record = recording_tmux(&mut sandbox);
    let server = server_with_secrets(&sandbox);
    // Whatever the supervisors log, at any level, goes into the pane logs under the home.
    server.run(&["set-environment", "-g", "RUST_LOG", "swarm=trace"]);
    // The test put the secrets there with tmux's command line; what swarm runs is recorded next.
    fs::write(&record, "").unwrap();
    let file = sandbox.write(
        "quiet.toml",
        "name = \"quiet\"\nenv_remove = [\"AWS_SECRET_ACCESS_KEY\"]\n\
         [lead]\ncommand = [\"sleep\", \"600\"]\nenv = { LEAD_TOKEN = \"lead-own-secret\" }\n\
         [[member]]\nname = \"done\"\ncommand = [\"true\"]\nenv = { DONE_API_KEY = \"done-own-secret\" }\n\
         [[member]]\nname = \"broke\"\ncommand = [\"sh\", \"-c\", \"exit 3\"]\nenv_clear = true\n\
         env = { BROKE_PASSWORD = \"broke-own-secret\" }\n",
    );
    let mut said = String::new();
    for dry in [true, false] {
        let mut up = sandbox.swarm().arg("-vvv").arg("up").arg(&file);
        if dry {
            up = up.arg("--dry-run");
        }
        let outcome = up.arg("--socket").arg(server.socket()).run().success();
        said.push_str(&outcome.stdout);
        said.push_str(&outcome.stderr);
    }
    let notices = || {
        fs::read_to_string(sandbox.inbox_path("quiet", "team-lead"))
            .ok()
            .and_then(|text| serde_json::from_str::<Vec<serde_json::Value>>(&text).ok())
            .unwrap_or_default()
            .iter()
            .filter(|m| m["text"].as_str().unwrap().contains("task_notification"))
            .count()
    };
    eventually("the lead to be told that done and broke ended", || {
        notices() == 2
    });
    for args in [
        &["status", "quiet"][..],
        &["inbox", "team-lead", "--team", "quiet"],
        &["log", "done", "--team", "quiet"],
    ] {
        let outcome = sandbox.swarm().arg("-vvv").args(args).run().success();
        said.push_str(&outcome.stdout);
        said.push_str(&outcome.stderr);
    }
    let logged = fs::read_to_string(sandbox.team_dir("quiet").join("logs/done.log")).unwrap();
    assert!(
        logged.contains("[swarm] done completed"),
        "the pane log holds what the supervisor said:\n{logged}"
    );

    let argv = fs::read_to_string(&record).unwrap();
    let secrets: Vec<&str> = SERVER_SECRETS
        .iter()
        .map(|(_, value)| *value)
        .chain(["lead-own-secret", "done-own-secret", "broke-own-secret"])
        .collect();
    for secret in &secrets {
        assert!(!said.contains(secret), "{secret} was printed:\n{said}");
        assert!(
            !argv.contains(secret),
            "{secret} was on tmux's command line"
        );
    }
    for (path, text) in files_under(&sandbox.home())
        .into_iter()
        .chain(files_under(&sandbox.root().join("run")))
    {
        for secret in &secrets {
            assert!(!text.contains(secret), "{secret} is in {}", path.display());
        }
    }
    sandbox
        .swarm()
        .args(["down", "quiet", "--force"])
        .run()
        .success();
}
