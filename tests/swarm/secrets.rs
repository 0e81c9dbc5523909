//! Secrets are where the user expects (docs/ARCHITECTURE.md, "Secrets and the environment"): a
//! member's variables reach its program and nothing else, on a private tmux server per test.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::harness::{Sandbox, TmuxServer, eventually, real_tmux};

/// Puts a `tmux` first on PATH that appends its arguments, one a line, to the returned file
/// before it runs the real tmux: what every local user could read in `ps` while it ran.
fn recording_tmux(sandbox: &mut Sandbox) -> PathBuf {
    let bin = sandbox.root().join("recording-bin");
    fs::create_dir_all(&bin).unwrap();
    let record = sandbox.root().join("tmux-argv");
    let script = bin.join("tmux");
    fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" >> {}\nexec {} \"$@\"\n",
            record.display(),
            real_tmux(sandbox).display()
        ),
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        sandbox.env_value("PATH").unwrap().to_string_lossy()
    );
    sandbox.set_env("PATH", path);
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
