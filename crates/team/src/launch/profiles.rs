//! The files a profile's program reads that swarm writes just before the program starts, for
//! every launch alike (`up`, `spawn`, a resume, a restart): a Gemini CLI home whose settings are
//! the person's with swarm's hooks added, Claude Code's `--mcp-config` file, and the folder of
//! aider's history files; and the variables that tell an MCP member's program where `swarm mcp`
//! is when its command line cannot (docs/ARCHITECTURE.md, "Launching", "MCP").

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;

use serde_json::{Map, Value, json};

use crate::error::{Error, Result};
use crate::format::config::Member;
use crate::format::settings::Profile;
use crate::launch::argv::{
    GEMINI_ACTIVITY_EVENTS, GEMINI_HOME_VAR, MCP_SERVER, mcp_args, mcp_servers,
};
use crate::store::durable;
use crate::store::paths::{GeminiPaths, TeamPaths};
use crate::store::team::Team;

/// The variable opencode reads a configuration from, merged over the person's own files
/// (opencode 1.18.33).
pub const OPENCODE_CONFIG_VAR: &str = "OPENCODE_CONFIG_CONTENT";

/// How long opencode waits for a call of `swarm mcp`'s tools, in ms: a day, as for a person's
/// answer (`plan_submit` and `permission_ask` wait for one), where its default is 5 s.
const OPENCODE_TOOL_TIMEOUT_MS: u64 = 86_400_000;

/// Writes what `member`'s program reads before it starts. `env` is what its launch set, to which
/// an MCP member's program gets what its command line cannot say: a Gemini CLI lead, the team's
/// Gemini CLI home (a teammate's launch gives it one); opencode, `OPENCODE_CONFIG_CONTENT`.
/// `launcher_var` reads the pane's own environment.
pub fn prepare(
    team: &Team,
    member: &Member,
    env: &mut BTreeMap<String, String>,
    launcher_var: &dyn Fn(&str) -> Option<String>,
) -> Result<()> {
    let paths = team.paths();
    match member.profile {
        Some(Profile::Gemini) => {
            let ours = paths.gemini_home();
            if member.mcp() && !env.contains_key(GEMINI_HOME_VAR) {
                env.insert(GEMINI_HOME_VAR.to_owned(), ours.display().to_string());
            }
            if env.get(GEMINI_HOME_VAR).map(Path::new) != Some(ours.as_path()) {
                return Ok(());
            }
            // The person's own: the pane's GEMINI_CLI_HOME, else HOME.
            let own_home = launcher_var(GEMINI_HOME_VAR).filter(|home| Path::new(home) != ours);
            let home = launcher_var("HOME");
            let theirs = GeminiPaths::new(
                own_home.as_deref().map(OsStr::new),
                home.as_deref().map(OsStr::new),
            );
            let mcp = member
                .mcp()
                .then(|| mcp_servers(team.home().root(), team.name(), true));
            gemini_home(team.paths(), &ours, theirs.as_ref(), mcp)
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
        Some(Profile::Opencode) if member.mcp() => {
            // The person's own, when its program would have it, is kept under swarm's.
            let theirs = env.get(OPENCODE_CONFIG_VAR).cloned().or_else(|| {
                member
                    .env_policy
                    .keeps(OPENCODE_CONFIG_VAR)
                    .then(|| launcher_var(OPENCODE_CONFIG_VAR))
                    .flatten()
            });
            let config = opencode_config(theirs.as_deref(), team.home().root(), team.name())?;
            env.insert(OPENCODE_CONFIG_VAR.to_owned(), config);
            Ok(())
        }
        Some(Profile::Aider) => {
            let (chat, _) = paths.aider_history(&member.name);
            durable::private_dir(paths.private_root(), durable::parent(&chat))
        }
        _ => Ok(()),
    }
}

/// opencode's inline configuration with `swarm mcp` as its local MCP server `swarm`, over
/// `theirs` (a configuration of the person's, JSON): opencode merges it over their files.
fn opencode_config(theirs: Option<&str>, home: &Path, team: &str) -> Result<String> {
    let mut config = match theirs {
        Some(text) => serde_json::from_str::<Value>(text).map_err(|err| {
            Error::runtime(format!(
                "{OPENCODE_CONFIG_VAR} is not JSON swarm can add its MCP server to: {err}"
            ))
            .with_hint(format!(
                "set mcp = false for the member, or {OPENCODE_CONFIG_VAR} to a JSON object"
            ))
        })?,
        None => json!({}),
    };
    let mut command = vec!["swarm".to_owned()];
    command.extend(mcp_args(home, team));
    let server = json!({
        "type": "local",
        "command": command,
        "enabled": true,
        "timeout": OPENCODE_TOOL_TIMEOUT_MS,
    });
    let servers = match &mut config {
        Value::Object(config) => config
            .entry("mcp")
            .or_insert_with(|| Value::Object(Map::new())),
        _ => {
            return Err(Error::runtime(format!(
                "{OPENCODE_CONFIG_VAR} is not a JSON object"
            )));
        }
    };
    let Value::Object(servers) = servers else {
        return Err(Error::runtime(format!(
            "the mcp of {OPENCODE_CONFIG_VAR} is not a JSON object"
        )));
    };
    servers.insert(MCP_SERVER.to_owned(), server);
    Ok(config.to_string())
}

/// Makes `ours` the Gemini CLI home a teammate runs in (`GEMINI_CLI_HOME`): its
/// `.gemini/settings.json` is the person's own settings (`theirs`) with swarm's hooks added, and
/// every other entry of the person's `.gemini` (credentials, trusted folders, sessions) a symlink
/// to it. Gemini CLI 0.61.0 reads the user's settings whoever owns them, where it skips a system
/// settings file unless root owns it and every folder above it. The person's files are never
/// written: an entry Gemini CLI made in `ours` before the person had one is left as it is.
fn gemini_home(
    paths: &TeamPaths,
    ours: &Path,
    theirs: Option<&GeminiPaths>,
    mcp: Option<Value>,
) -> Result<()> {
    let own = GeminiPaths::new(Some(ours.as_os_str()), None)
        .ok_or_else(|| Error::runtime("the team's Gemini CLI home has no path"))?;
    let base = match theirs.map(GeminiPaths::settings) {
        Some(file) => match std::fs::read(&file) {
            Ok(bytes) => Some(serde_json::from_slice::<Value>(&bytes).map_err(|err| {
                Error::runtime(format!(
                    "Gemini CLI's settings {} are not JSON swarm can add its hooks to: {err}",
                    file.display()
                ))
                .with_hint(format!(
                    "set {GEMINI_HOME_VAR} in the member's env to run it without swarm's hooks"
                ))
            })?),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
            Err(err) => return Err(Error::io("read", &file, err)),
        },
        None => None,
    };
    let mut settings = gemini_settings(base)?;
    if let Some(server) = mcp {
        add_mcp_server(&mut settings, server)?;
    }
    durable::private_dir(paths.private_root(), own.dir())?;
    if let Some(theirs) = theirs
        && let Ok(entries) = std::fs::read_dir(theirs.dir())
    {
        let settings_name = own.settings();
        for entry in entries.flatten() {
            let link = own.dir().join(entry.file_name());
            if link == settings_name || std::fs::symlink_metadata(&link).is_ok() {
                continue;
            }
            std::os::unix::fs::symlink(entry.path(), &link)
                .map_err(|err| Error::io("link", &link, err))?;
        }
    }
    durable::atomic_write(&own.settings(), |out| {
        serde_json::to_writer_pretty(&mut *out, &settings).map_err(std::io::Error::other)
    })
}

/// `swarm mcp` added to the `mcpServers` of a gemini teammate's `settings` (Gemini CLI
/// shallow-merges them over the other layers'), in place of one of the same name.
fn add_mcp_server(settings: &mut Value, server: Value) -> Result<()> {
    let Value::Object(settings) = settings else {
        return Err(Error::runtime(
            "Gemini CLI's settings are not a JSON object",
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
            "the mcpServers of Gemini CLI's settings are not a JSON object",
        )),
    }
}

/// The settings document a gemini teammate reads: `base` (the person's own settings, if any) with
/// `swarm hook gemini` added to each of [`GEMINI_ACTIVITY_EVENTS`]. Gemini CLI runs every layer's
/// hooks, and the user layer's with no trust prompt. Its timeout is in milliseconds.
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

    /// opencode's inline configuration keeps what the person's held, and a value that is not a
    /// JSON object, or whose `mcp` is not one, is refused, never replaced.
    #[test]
    fn opencodes_inline_configuration_is_theirs_with_swarm_mcp_added() {
        let theirs = r#"{"theme":"mine","mcp":{"theirs":{"type":"local","command":["x"]}}}"#;
        let config: Value =
            serde_json::from_str(&opencode_config(Some(theirs), Path::new("/h"), "t").unwrap())
                .unwrap();
        assert_eq!(config["theme"], "mine");
        assert_eq!(config["mcp"]["theirs"]["command"], json!(["x"]));
        assert_eq!(
            config["mcp"]["swarm"],
            json!({
                "type": "local",
                "command": ["swarm", "mcp", "--home", "/h", "--team", "t"],
                "enabled": true,
                "timeout": OPENCODE_TOOL_TIMEOUT_MS,
            })
        );
        let fresh: Value =
            serde_json::from_str(&opencode_config(None, Path::new("/h"), "t").unwrap()).unwrap();
        assert_eq!(fresh["mcp"]["swarm"]["type"], "local");
        for bad in ["{not json", "[]", r#"{"mcp": []}"#] {
            assert!(
                opencode_config(Some(bad), Path::new("/h"), "t").is_err(),
                "{bad}"
            );
        }
    }
}
