//! `swarm node --print-unit`: a systemd user unit that runs this host's node, restarted when it
//! fails (docs/ARCHITECTURE.md, "Across machines"), or without `--name` one that runs `swarm
//! resume --all` at login ("Resuming a team"). Secrets never go into a unit: a password or token
//! belongs in the environment file it reads.

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::path::Path;

use crate::base::text::refuse_controls;
use crate::cluster::settings::{Auth, Settings};
use crate::error::Result;

/// What a value in the unit is written into, as a refusal says it.
const INTO: &str = "a systemd unit";

/// The unit's text, for `~/.config/systemd/user/swarm-node.service`; `socket` is the tmux server
/// the node places members on (`--socket`, `SWARM_TMUX_SOCKET`), when not the default one. A unit
/// is lines, so a value with a control character (a line break would add a line such as
/// `ExecStartPre=`) is refused, exit 2.
pub fn text(
    exe: &Path,
    home: &Path,
    name: &str,
    settings: &Settings,
    socket: Option<&str>,
) -> Result<String> {
    refuse_controls("swarm's own path", exe.as_os_str(), INTO)?;
    refuse_controls("the home", home.as_os_str(), INTO)?;
    refuse_controls("the host name", OsStr::new(name), INTO)?;
    refuse_controls("the NATS server URL", OsStr::new(&settings.url), INTO)?;
    if let Some(socket) = socket {
        refuse_controls("the tmux socket", OsStr::new(socket), INTO)?;
    }
    match &settings.auth {
        Auth::Creds(path) => refuse_controls("the .creds file", path.as_os_str(), INTO)?,
        Auth::UserPassword { user, .. } => {
            refuse_controls("the NATS user", OsStr::new(user), INTO)?;
        }
        Auth::None | Auth::Token(_) => {}
    }
    // systemd takes `Environment=` quoted as a whole, and only when it must be.
    let env = |name: &str, value: &str| {
        format!(
            "Environment={}",
            systemd_word(&format!("{name}={value}"), false)
        )
    };
    let mut unit = String::new();
    let _ = writeln!(unit, "[Unit]");
    let _ = writeln!(
        unit,
        "Description=swarm node {}: this host's part of every swarm team",
        name.replace('%', "%%")
    );
    let _ = writeln!(unit, "Wants=network-online.target");
    let _ = writeln!(unit, "After=network-online.target");
    let _ = writeln!(unit);
    let _ = writeln!(unit, "[Service]");
    let _ = writeln!(unit, "Type=simple");
    let _ = writeln!(unit, "{}", env("SWARM_HOME", &home.display().to_string()));
    let _ = writeln!(unit, "{}", env("SWARM_NATS_URL", &settings.url));
    if let Some(socket) = socket {
        let _ = writeln!(unit, "{}", env("SWARM_TMUX_SOCKET", socket));
    }
    match &settings.auth {
        Auth::None => {}
        Auth::Creds(path) => {
            let _ = writeln!(
                unit,
                "{}",
                env("SWARM_NATS_CREDS", &path.display().to_string())
            );
        }
        Auth::UserPassword { user, .. } => {
            let _ = writeln!(unit, "{}", env("SWARM_NATS_USER", user));
            let _ = writeln!(
                unit,
                "# SWARM_NATS_PASSWORD=... goes in this file, mode 0600:"
            );
        }
        Auth::Token(_) => {
            let _ = writeln!(unit, "# SWARM_NATS_TOKEN=... goes in this file, mode 0600:");
        }
    }
    let _ = writeln!(unit, "EnvironmentFile=-%h/.config/swarm/node.env");
    let _ = writeln!(
        unit,
        "ExecStart={} node --name {}",
        systemd_word(&exe.display().to_string(), true),
        systemd_word(name, true)
    );
    let _ = writeln!(unit, "Restart=on-failure");
    let _ = writeln!(unit, "RestartSec=2");
    let _ = writeln!(unit);
    let _ = writeln!(unit, "[Install]");
    let _ = writeln!(unit, "WantedBy=default.target");
    Ok(unit)
}

/// The unit's text for `~/.config/systemd/user/swarm-resume.service`: `swarm resume --all` once
/// at login (or at boot, with lingering), for the home `home`, on the tmux server `socket` when a
/// team recorded none, with `path` (the PATH of the shell that printed it) so each member's program
/// is found as it was when the team was launched. The tmux server the resume starts lives in the
/// unit's cgroup: `RemainAfterExit` keeps the unit active once the command is done, so systemd
/// does not end what it started, and `KillMode=process` keeps it when the unit is stopped or
/// started again.
pub fn resume_text(exe: &Path, home: &Path, socket: Option<&str>, path: &OsStr) -> Result<String> {
    refuse_controls("swarm's own path", exe.as_os_str(), INTO)?;
    refuse_controls("the home", home.as_os_str(), INTO)?;
    refuse_controls("PATH", path, INTO)?;
    if let Some(socket) = socket {
        refuse_controls("the tmux socket", OsStr::new(socket), INTO)?;
    }
    let env = |name: &str, value: &str| {
        format!(
            "Environment={}",
            systemd_word(&format!("{name}={value}"), false)
        )
    };
    let mut unit = String::new();
    let _ = writeln!(unit, "[Unit]");
    let _ = writeln!(
        unit,
        "Description=swarm: resume every team a reboot interrupted"
    );
    // Ordering only: on a host in a team across hosts, its node (README's swarm-node.service)
    // starts first, and a resume waits a moment for the other hosts' nodes to be seen.
    let _ = writeln!(unit, "After=swarm-node.service");
    let _ = writeln!(unit);
    let _ = writeln!(unit, "[Service]");
    let _ = writeln!(unit, "Type=oneshot");
    let _ = writeln!(unit, "RemainAfterExit=yes");
    let _ = writeln!(unit, "KillMode=process");
    let _ = writeln!(unit, "{}", env("SWARM_HOME", &home.display().to_string()));
    let _ = writeln!(unit, "{}", env("PATH", &path.to_string_lossy()));
    if let Some(socket) = socket {
        let _ = writeln!(unit, "{}", env("SWARM_TMUX_SOCKET", socket));
    }
    let _ = writeln!(
        unit,
        "# Variables the members need that no team file gives again:"
    );
    let _ = writeln!(unit, "EnvironmentFile=-%h/.config/swarm/resume.env");
    let _ = writeln!(
        unit,
        "ExecStart={} resume --all",
        systemd_word(&exe.display().to_string(), true)
    );
    let _ = writeln!(unit);
    let _ = writeln!(unit, "[Install]");
    let _ = writeln!(unit, "WantedBy=default.target");
    Ok(unit)
}

/// `value` as one word of a unit that systemd reads back as it is (systemd.syntax(7), "Quoting";
/// systemd.unit(5), "Specifiers"): every `%` doubled, since systemd expands specifiers such as
/// `%h` in every value; in `ExecStart=` (`exec`) every `$` doubled too, since systemd expands
/// variables there. A value with anything but letters, digits and `-_./:=@+,%$` goes in double
/// quotes, `\` and `"` escaped: systemd unquotes with C escapes, so a shell's quoting (`'...'`,
/// where `\` stays itself) would not read back the same.
fn systemd_word(value: &str, exec: bool) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./:=@+,%$".contains(c);
    let mut word = String::with_capacity(value.len() + 2);
    for c in value.chars() {
        match c {
            '%' => word.push_str("%%"),
            '$' if exec => word.push_str("$$"),
            '\\' | '"' => {
                word.push('\\');
                word.push(c);
            }
            c => word.push(c),
        }
    }
    if !value.is_empty() && value.chars().all(plain) {
        word
    } else {
        format!("\"{word}\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unit_runs_the_node_and_keeps_secrets_out() {
        let settings = Settings {
            url: "nats://hub:4222".into(),
            auth: Auth::Token("s3cret".into()),
        };
        let unit = text(
            Path::new("/usr/local/bin/swarm"),
            Path::new("/home/me/.swarm"),
            "gpu1",
            &settings,
            Some("/run/user/1000/tmux agents"),
        )
        .unwrap();
        assert!(
            unit.contains("ExecStart=/usr/local/bin/swarm node --name gpu1\n"),
            "{unit}"
        );
        assert!(
            unit.contains("Environment=SWARM_NATS_URL=nats://hub:4222\n"),
            "{unit}"
        );
        assert!(
            unit.contains("Environment=\"SWARM_TMUX_SOCKET=/run/user/1000/tmux agents\"\n"),
            "{unit}"
        );
        assert!(unit.contains("Restart=on-failure"));
        assert!(!unit.contains("s3cret"));
    }

    #[test]
    fn the_resume_unit_runs_resume_all_once_and_keeps_what_it_starts() {
        let unit = resume_text(
            Path::new("/usr/local/bin/swarm"),
            Path::new("/home/me/.swarm"),
            None,
            OsStr::new("/home/me/.local/bin:/usr/bin"),
        )
        .unwrap();
        assert!(
            unit.contains("ExecStart=/usr/local/bin/swarm resume --all\n"),
            "{unit}"
        );
        for line in [
            "Type=oneshot\n",
            "RemainAfterExit=yes\n",
            "KillMode=process\n",
            "Environment=SWARM_HOME=/home/me/.swarm\n",
            "Environment=PATH=/home/me/.local/bin:/usr/bin\n",
            "WantedBy=default.target\n",
        ] {
            assert!(unit.contains(line), "{line}: {unit}");
        }
        assert!(!unit.contains("SWARM_TMUX_SOCKET"), "{unit}");
        let err = resume_text(
            Path::new("/usr/local/bin/swarm"),
            Path::new("/home/me/.swarm"),
            None,
            OsStr::new("/bin\nExecStartPre=/tmp/x"),
        )
        .unwrap_err();
        assert_eq!(err.kind(), crate::error::ErrorKind::Usage);
    }

    #[test]
    fn what_systemd_would_expand_or_unquote_is_escaped() {
        assert_eq!(systemd_word("/usr/bin/swarm", true), "/usr/bin/swarm");
        assert_eq!(systemd_word("/opt/100%/swarm", true), "/opt/100%%/swarm");
        assert_eq!(systemd_word("/opt/$HOME/swarm", true), "/opt/$$HOME/swarm");
        assert_eq!(systemd_word("A=$HOME", false), "A=$HOME");
        assert_eq!(
            systemd_word("/opt/my tools/sw\\a\"rm", true),
            "\"/opt/my tools/sw\\\\a\\\"rm\""
        );
        assert_eq!(systemd_word("it's;", false), "\"it's;\"");
        assert_eq!(systemd_word("", false), "\"\"");
        let settings = Settings {
            url: "nats://u:p%40ss@hub:4222".into(),
            auth: Auth::None,
        };
        let unit = text(
            Path::new("/opt/100% swarm/swarm"),
            Path::new("/home/me/%h"),
            "gpu1",
            &settings,
            None,
        )
        .unwrap();
        assert!(
            unit.contains("ExecStart=\"/opt/100%% swarm/swarm\" node --name gpu1\n"),
            "{unit}"
        );
        assert!(
            unit.contains("Environment=SWARM_NATS_URL=nats://u:p%%40ss@hub:4222\n"),
            "{unit}"
        );
        assert!(
            unit.contains("Environment=SWARM_HOME=/home/me/%%h\n"),
            "{unit}"
        );
    }
}
