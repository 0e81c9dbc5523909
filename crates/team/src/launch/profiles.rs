//! The files a profile's program reads that swarm writes just before the program starts, for
//! every launch alike (`up`, `spawn`, a resume): Gemini CLI's system settings with swarm's hooks
//! added, and the folder of aider's history files (docs/ARCHITECTURE.md, "Launching").

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value, json};

use crate::error::{Error, Result};
use crate::format::config::Member;
use crate::format::settings::Profile;
use crate::launch::argv::{
    GEMINI_ACTIVITY_EVENTS, GEMINI_SETTINGS_VAR, GEMINI_SYSTEM_SETTINGS, MCP_SERVER, mcp_servers,
};
use crate::store::durable;
use crate::store::paths::Home;
use crate::store::team::Team;

/// Writes what `member`'s program reads before it starts. `env` is what its launch set;
/// `launcher_var` reads the pane's own environment.
pub fn prepare(
    team: &Team,
    member: &Member,
    env: &BTreeMap<String, String>,
    launcher_var: &dyn Fn(&str) -> Option<String>,
) -> Result<()> {
    let paths = team.paths();
    match member.profile {
        Some(Profile::Gemini) => {
            let ours = paths.gemini_settings();
            if env.get(GEMINI_SETTINGS_VAR).map(Path::new) != Some(ours.as_path()) {
                return Ok(());
            }
            // The file Gemini CLI would have read without swarm's: kept whole, hooks added.
            let theirs = launcher_var(GEMINI_SETTINGS_VAR)
                .filter(|path| Path::new(path) != ours)
                .unwrap_or_else(|| GEMINI_SYSTEM_SETTINGS.to_owned());
            let base = match std::fs::read(&theirs) {
                Ok(bytes) => Some(serde_json::from_slice::<Value>(&bytes).map_err(|err| {
                    Error::runtime(format!(
                        "Gemini CLI's system settings {theirs} are not JSON swarm can add its hooks to: {err}"
                    ))
                    .with_hint(format!(
                        "set {GEMINI_SETTINGS_VAR} in the member's env to run it without swarm's hooks"
                    ))
                })?),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
                Err(err) => return Err(Error::io("read", Path::new(&theirs), err)),
            };
            let mut settings = gemini_settings(base)?;
            if member.mcp() {
                add_mcp_server(
                    &mut settings,
                    mcp_servers(team.home().root(), team.name(), true),
                )?;
            }
            durable::private_dir(paths.private_root(), paths.dir())?;
            durable::atomic_write(&ours, |out| {
                serde_json::to_writer_pretty(&mut *out, &settings).map_err(std::io::Error::other)
            })
        }
        Some(Profile::Claude) if member.mcp() => {
            // The file `--mcp-config` names (`argv.rs`): the same for every member, as `swarm mcp`
            // tells who calls by where it runs.
            let config = json!({"mcpServers": mcp_servers(team.home().root(), team.name(), false)});
            durable::private_dir(paths.private_root(), paths.dir())?;
            durable::atomic_write(&paths.mcp_config(), |out| {
                serde_json::to_writer_pretty(&mut *out, &config).map_err(std::io::Error::other)
            })
        }
        Some(Profile::Aider) => {
            let (chat, _) = paths.aider_history(&member.name);
            durable::private_dir(paths.private_root(), durable::parent(&chat))
        }
        _ => Ok(()),
    }
}

/// Whether Gemini CLI would read a system settings file swarm writes in `home`'s teams folder.
/// Gemini CLI 0.61.0 skips one ("Security Warning: Skipping system settings file") unless the
/// file and every folder above it are owned by root and writable by neither group nor others
/// (`isFileAndDirectorySecureSync`): so only when swarm runs as root, in a home whose every
/// folder is root's and closed to others (never under `/tmp`).
pub fn gemini_reads_settings_of(home: &Home) -> bool {
    use std::os::unix::fs::MetadataExt;
    if !nix::unistd::geteuid().is_root() {
        return false;
    }
    home.teams_dir()
        .ancestors()
        .all(|dir| match std::fs::metadata(dir) {
            Ok(meta) => meta.uid() == 0 && meta.mode() & 0o022 == 0,
            // Made by swarm, as root, closed to others.
            Err(err) => err.kind() == std::io::ErrorKind::NotFound,
        })
}

/// `swarm mcp` added to the `mcpServers` of Gemini CLI's `settings` (which shallow-merges them
/// over the other layers'), in place of one of the same name.
fn add_mcp_server(settings: &mut Value, server: Value) -> Result<()> {
    let Value::Object(settings) = settings else {
        return Err(Error::runtime(
            "Gemini CLI's system settings are not a JSON object",
        ));
    };
    match settings
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()))
    {
        Value::Object(servers) => {
            servers.insert(MCP_SERVER.to_owned(), server[MCP_SERVER].clone());
            Ok(())
        }
        _ => Err(Error::runtime(
            "the mcpServers of Gemini CLI's system settings are not a JSON object",
        )),
    }
}

/// `base` (the system settings Gemini CLI would read, if any) with `swarm hook gemini` added to
/// each of [`GEMINI_ACTIVITY_EVENTS`]: Gemini CLI runs every layer's hooks, and this layer's with
/// no trust prompt. Its timeout is in milliseconds.
pub fn gemini_settings(base: Option<Value>) -> Result<Value> {
    let Value::Object(mut settings) = base.unwrap_or_else(|| json!({})) else {
        return Err(Error::runtime(
            "Gemini CLI's system settings are not a JSON object",
        ));
    };
    let hooks = settings
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(hooks) = hooks else {
        return Err(Error::runtime(
            "the hooks of Gemini CLI's system settings are not a JSON object",
        ));
    };
    let ours = json!({"matcher": "*", "hooks": [{
        "type": "command",
        "name": "swarm-activity",
        "command": "swarm hook gemini",
        "timeout": 10_000,
    }]});
    for event in GEMINI_ACTIVITY_EVENTS {
        match hooks
            .entry(*event)
            .or_insert_with(|| Value::Array(Vec::new()))
        {
            Value::Array(entries) => entries.push(ours.clone()),
            _ => {
                return Err(Error::runtime(format!(
                    "the {event} hooks of Gemini CLI's system settings are not a JSON array"
                )));
            }
        }
    }
    Ok(Value::Object(settings))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_system_settings_are_kept_and_swarms_hooks_added_beside_theirs() {
        let base = json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "theirs"}]}]},
        });
        let settings = gemini_settings(Some(base)).unwrap();
        assert_eq!(
            settings["security"]["auth"]["selectedType"],
            "gemini-api-key"
        );
        let before_tool = settings["hooks"]["BeforeTool"].as_array().unwrap();
        assert_eq!(before_tool[0]["hooks"][0]["command"], "theirs");
        assert_eq!(before_tool[1]["hooks"][0]["command"], "swarm hook gemini");
        for event in GEMINI_ACTIVITY_EVENTS {
            let entries = settings["hooks"][event].as_array().unwrap();
            assert_eq!(entries.last().unwrap()["hooks"][0]["timeout"], 10_000);
        }
        assert!(gemini_settings(Some(json!([]))).is_err());

        let mut with_theirs = json!({"mcpServers": {"theirs": {"command": "x"}}});
        add_mcp_server(&mut with_theirs, mcp_servers(Path::new("/h"), "t", true)).unwrap();
        assert_eq!(with_theirs["mcpServers"]["theirs"]["command"], "x");
        assert_eq!(
            with_theirs["mcpServers"]["swarm"],
            json!({"command": "swarm", "args": ["mcp", "--home", "/h", "--team", "t"], "trust": true})
        );
        assert!(gemini_settings(Some(json!({"hooks": {"AfterAgent": {}}}))).is_err());
    }
}
