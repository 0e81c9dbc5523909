//! The TOML team file (docs/ARCHITECTURE.md, "Launching"). Unknown keys are refused with the line
//! they are on, and every value is checked before anything is created.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::base::names::Name;
use crate::error::{Error, Result};
use crate::format::config::DEFAULT_LEAD;
use crate::format::settings::{Color, EnvPolicy, Profile};
use crate::format::settings::{Delivery, Isolation, Protocol};
use crate::launch::argv::{default_inherit, detect_profile};
use crate::launch::environment::check_policy;
use crate::launch::layout::Layout;
use crate::policy::PERSON;
use crate::store::paths::absolute;

#[derive(Debug, Clone)]
pub(crate) struct TeamFile {
    pub(crate) path: PathBuf,
    pub(crate) name: Name,
    pub(crate) description: Option<String>,
    pub(crate) layout: Option<Layout>,
    pub(crate) max_concurrent: Option<u32>,
    /// The team-wide `log_max`, as written; members without their own use it.
    pub(crate) log_max: Option<u64>,
    /// The team-wide `env_clear`, `env_keep` and `env_remove`, as written.
    pub(crate) env_policy: EnvPolicy,
    pub(crate) lead: LeadSpec,
    pub(crate) members: Vec<MemberSpec>,
}

#[derive(Debug, Clone)]
pub(crate) struct LeadSpec {
    pub(crate) name: Name,
    /// Absent when the lead is whoever runs `swarm` from their own terminal or script.
    pub(crate) command: Option<Vec<String>>,
    pub(crate) profile: Profile,
    pub(crate) inherit: Vec<String>,
    pub(crate) env: BTreeMap<String, String>,
    /// The team's rules for what its program inherits, with its own over them.
    pub(crate) env_policy: EnvPolicy,
    pub(crate) cwd: PathBuf,
    /// The bound of its log, in bytes.
    pub(crate) log_max: u64,
}

#[derive(Debug, Clone)]
pub(crate) struct MemberSpec {
    pub(crate) name: Name,
    pub(crate) command: Option<Vec<String>>,
    pub(crate) profile: Profile,
    pub(crate) agent_type: Option<String>,
    pub(crate) model: Option<String>,
    pub(crate) color: Option<Color>,
    pub(crate) plan_mode_required: bool,
    pub(crate) isolation: Isolation,
    pub(crate) prompt: Option<String>,
    pub(crate) protocol: Protocol,
    pub(crate) delivery: Delivery,
    pub(crate) run_timeout_s: u64,
    pub(crate) env: BTreeMap<String, String>,
    /// The team's rules for what its program inherits, with its own over them.
    pub(crate) env_policy: EnvPolicy,
    pub(crate) cwd: PathBuf,
    /// The bound of its log, in bytes.
    pub(crate) log_max: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTeam {
    name: String,
    description: Option<String>,
    layout: Option<String>,
    max_concurrent: Option<u32>,
    log_max: Option<Size>,
    cwd: Option<PathBuf>,
    env_clear: Option<bool>,
    #[serde(default)]
    env_keep: BTreeSet<String>,
    #[serde(default)]
    env_remove: BTreeSet<String>,
    #[serde(default)]
    lead: RawLead,
    #[serde(default)]
    member: Vec<RawMember>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawLead {
    name: Option<String>,
    command: Option<Command>,
    profile: Option<Profile>,
    inherit: Option<Vec<String>>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    env_clear: Option<bool>,
    #[serde(default)]
    env_keep: BTreeSet<String>,
    #[serde(default)]
    env_remove: BTreeSet<String>,
    cwd: Option<PathBuf>,
    log_max: Option<Size>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMember {
    name: String,
    command: Option<Command>,
    profile: Option<Profile>,
    agent_type: Option<String>,
    model: Option<String>,
    color: Option<Color>,
    #[serde(default)]
    plan_mode_required: bool,
    #[serde(default)]
    isolation: Isolation,
    prompt: Option<String>,
    #[serde(default)]
    protocol: Protocol,
    #[serde(default)]
    delivery: Delivery,
    #[serde(default)]
    run_timeout_s: u64,
    #[serde(default)]
    env: BTreeMap<String, String>,
    env_clear: Option<bool>,
    #[serde(default)]
    env_keep: BTreeSet<String>,
    #[serde(default)]
    env_remove: BTreeSet<String>,
    cwd: Option<PathBuf>,
    log_max: Option<Size>,
}

/// `log_max = 1048576` or `log_max = "64MiB"`.
#[derive(Deserialize)]
#[serde(untagged)]
enum Size {
    Bytes(u64),
    Text(String),
}

/// How large a member's log grows before it is rotated, unless the team file says.
pub(crate) const DEFAULT_LOG_MAX: u64 = 64 * 1024 * 1024;

/// The smallest `log_max`: a bound so small would rotate on almost every write.
const MIN_LOG_MAX: u64 = 1024;

/// A size in bytes: a number, optionally followed by a unit: `KiB`, `MiB`, `GiB` (or `K`, `M`,
/// `G`), `KB`, `MB`, `GB` (powers of 1000), `B`. Units are read case-insensitively.
pub(crate) fn parse_size(text: &str) -> std::result::Result<u64, String> {
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a size like 1048576 or \"64MiB\""))?;
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        other => {
            return Err(format!(
                "{text:?} has an unknown unit {other:?}; use KiB, MiB or GiB"
            ));
        }
    };
    let bytes = number
        .checked_mul(scale)
        .ok_or_else(|| format!("{text:?} is too large"))?;
    if bytes < MIN_LOG_MAX {
        return Err(format!("{text:?} is below the smallest log bound, 1KiB"));
    }
    Ok(bytes)
}

fn log_max(
    size: Option<Size>,
    who: &str,
    invalid: &dyn Fn(String) -> Error,
) -> Result<Option<u64>> {
    size.map(|size| match size {
        Size::Bytes(bytes) => parse_size(&bytes.to_string()),
        Size::Text(text) => parse_size(&text),
    })
    .transpose()
    .map_err(|why| invalid(format!("log_max of {who}: {why}")))
}

/// `command = ["claude", "--model", "opus"]`, or one string split the way a shell would.
#[derive(Deserialize)]
#[serde(untagged)]
enum Command {
    Argv(Vec<String>),
    Line(String),
}

impl TeamFile {
    pub(crate) fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|err| {
            let kind = if err.kind() == std::io::ErrorKind::NotFound {
                crate::error::ErrorKind::NotFound
            } else {
                crate::error::ErrorKind::Runtime
            };
            Error::io("read team file", path, err).with_kind(kind)
        })?;
        let path = absolute(path)?;
        let here =
            std::env::current_dir().map_err(|err| Error::os("find the current directory", err))?;
        Self::parse(&path, &text, &here)
    }

    /// Parses `text`. Members work in `here` (where `swarm up` runs) unless the file sets `cwd`;
    /// a relative `cwd` is relative to the team file's own directory.
    pub(crate) fn parse(path: &Path, text: &str, here: &Path) -> Result<Self> {
        let shown = path.display();
        let raw: RawTeam = toml::from_str(text).map_err(|err| {
            let line = err
                .span()
                .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
            let message = err.message().trim_end().replace('\n', " ");
            let at = line.map_or_else(|| shown.to_string(), |line| format!("{shown}:{line}"));
            Error::usage(format!("{at}: {message}"))
        })?;
        let invalid = |what: String| Error::usage(format!("{shown}: {what}"));
        let base = crate::store::durable::parent(path).to_path_buf();
        let team_cwd = raw
            .cwd
            .as_deref()
            .map_or_else(|| here.to_path_buf(), |cwd| resolve(&base, Some(cwd)));

        let name =
            Name::parse("team", &raw.name).map_err(|err| invalid(err.message().to_owned()))?;
        if raw.max_concurrent == Some(0) {
            return Err(invalid("max_concurrent must be at least 1".into()));
        }
        // Checked before tmux sees it: tmux 3.3a dies on a layout it does not know.
        let layout = raw
            .layout
            .as_deref()
            .map(Layout::parse)
            .transpose()
            .map_err(invalid)?;

        let team_log_max = log_max(raw.log_max, "the team", &invalid)?;
        let lead_command = argv(raw.lead.command, "lead", &invalid)?;
        let lead_profile = raw
            .lead
            .profile
            .or_else(|| detect_profile(lead_command.as_deref()))
            .unwrap_or_default();
        let team_policy = EnvPolicy {
            clear: raw.env_clear.unwrap_or(false),
            keep: raw.env_keep,
            remove: raw.env_remove,
        };
        check_policy(&team_policy, &BTreeMap::new())
            .map_err(|why| invalid(format!("the team: {why}")))?;
        let lead_env = checked_env(raw.lead.env, "lead", &invalid)?;
        let lead_policy = env_policy(
            EnvRules {
                clear: raw.lead.env_clear,
                keep: raw.lead.env_keep,
                remove: raw.lead.env_remove,
            },
            &team_policy,
            &lead_env,
            "the lead",
            &invalid,
        )?;
        let lead = LeadSpec {
            name: Name::parse("lead", raw.lead.name.as_deref().unwrap_or(DEFAULT_LEAD))
                .map_err(|err| invalid(err.message().to_owned()))?,
            command: lead_command,
            inherit: raw.lead.inherit.unwrap_or_else(|| {
                default_inherit(lead_profile)
                    .iter()
                    .map(|f| (*f).to_owned())
                    .collect()
            }),
            profile: lead_profile,
            env: lead_env,
            env_policy: lead_policy,
            cwd: raw
                .lead
                .cwd
                .as_deref()
                .map_or_else(|| team_cwd.clone(), |cwd| resolve(&base, Some(cwd))),
            log_max: log_max(raw.lead.log_max, "the lead", &invalid)?
                .or(team_log_max)
                .unwrap_or(DEFAULT_LOG_MAX),
        };
        for flag in &lead.inherit {
            if !flag.starts_with('-') || flag.contains('=') {
                return Err(invalid(format!(
                    "inherit entries are flag names like \"--model\", not {flag:?}"
                )));
            }
        }

        if lead.name.as_str() == PERSON {
            return Err(invalid(format!(
                "the lead cannot be called {PERSON}: that is the person at the keyboard"
            )));
        }
        let mut seen = BTreeSet::from([lead.name.clone()]);
        let mut members = Vec::with_capacity(raw.member.len());
        for member in raw.member {
            let name = Name::parse("member", &member.name)
                .map_err(|err| invalid(err.message().to_owned()))?;
            if !seen.insert(name.clone()) {
                return Err(invalid(format!("member name {name} is used twice")));
            }
            if name.as_str() == PERSON {
                return Err(invalid(format!(
                    "a member cannot be called {PERSON}: that is the person at the keyboard"
                )));
            }
            let command = argv(member.command, name.as_str(), &invalid)?;
            let profile = member
                .profile
                .or_else(|| detect_profile(command.as_deref()))
                .unwrap_or(lead_profile);
            if command.is_none() && profile == Profile::Generic {
                return Err(invalid(format!(
                    "member {name} needs a command: the generic profile has no default program"
                )));
            }
            let env = checked_env(member.env, name.as_str(), &invalid)?;
            let env_policy = env_policy(
                EnvRules {
                    clear: member.env_clear,
                    keep: member.env_keep,
                    remove: member.env_remove,
                },
                &team_policy,
                &env,
                name.as_str(),
                &invalid,
            )?;
            members.push(MemberSpec {
                log_max: log_max(member.log_max, name.as_str(), &invalid)?
                    .or(team_log_max)
                    .unwrap_or(DEFAULT_LOG_MAX),
                env,
                env_policy,
                cwd: member
                    .cwd
                    .as_deref()
                    .map_or_else(|| team_cwd.clone(), |cwd| resolve(&base, Some(cwd))),
                name,
                command,
                profile,
                agent_type: member.agent_type,
                model: member.model,
                color: member.color,
                plan_mode_required: member.plan_mode_required,
                isolation: member.isolation,
                prompt: member.prompt,
                protocol: member.protocol,
                delivery: member.delivery,
                run_timeout_s: member.run_timeout_s,
            });
        }

        let panes = members.len() + usize::from(lead.command.is_some());
        if let Some(cells) = layout.as_ref().and_then(Layout::cells)
            && cells != panes
        {
            return Err(invalid(format!(
                "the layout string describes {cells} panes but the team has {panes}"
            )));
        }

        let anyone_clears = (lead.command.is_some() && lead.env_policy.clear)
            || members.iter().any(|member| member.env_policy.clear);
        if !team_policy.keep.is_empty() && !anyone_clears {
            return Err(invalid(
                "env_keep has no effect: neither the team nor any member has env_clear = true"
                    .into(),
            ));
        }

        Ok(Self {
            path: path.to_path_buf(),
            name,
            description: raw.description,
            layout,
            max_concurrent: raw.max_concurrent,
            log_max: team_log_max,
            env_policy: team_policy,
            lead,
            members,
        })
    }
}

fn resolve(base: &Path, cwd: Option<&Path>) -> PathBuf {
    match cwd {
        None => base.to_path_buf(),
        Some(cwd) => normalize(&base.join(cwd)),
    }
}

/// `/repo/teams/..` → `/repo`, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn argv(
    command: Option<Command>,
    who: &str,
    invalid: &dyn Fn(String) -> Error,
) -> Result<Option<Vec<String>>> {
    let argv = match command {
        None => return Ok(None),
        Some(Command::Argv(argv)) => argv,
        Some(Command::Line(line)) => shlex::split(&line)
            .ok_or_else(|| invalid(format!("the command of {who} has unbalanced quotes")))?,
    };
    if argv.first().is_none_or(String::is_empty) {
        return Err(invalid(format!("the command of {who} is empty")));
    }
    if argv.iter().any(|arg| arg.contains('\0')) {
        return Err(invalid(format!("the command of {who} contains a NUL byte")));
    }
    Ok(Some(argv))
}

/// A member's own `env_clear`, `env_keep` and `env_remove`, as written.
struct EnvRules {
    clear: Option<bool>,
    keep: BTreeSet<String>,
    remove: BTreeSet<String>,
}

/// A member's rules over the team's, checked.
fn env_policy(
    own: EnvRules,
    team: &EnvPolicy,
    env: &BTreeMap<String, String>,
    who: &str,
    invalid: &dyn Fn(String) -> Error,
) -> Result<EnvPolicy> {
    let policy = EnvPolicy {
        clear: false,
        keep: own.keep,
        remove: own.remove,
    };
    // Only its own rules can contradict each other or its own `env`: a name the team removes
    // and the member sets is the member's own, and a name the team keeps and the member
    // removes is removed.
    check_policy(&policy, env).map_err(|why| invalid(format!("{who}: {why}")))?;
    let kept_by_itself = !policy.keep.is_empty();
    let policy = policy.over(own.clear, team);
    if kept_by_itself && !policy.clear {
        return Err(invalid(format!(
            "env_keep of {who} has no effect without env_clear = true"
        )));
    }
    Ok(policy)
}

fn checked_env(
    env: BTreeMap<String, String>,
    who: &str,
    invalid: &dyn Fn(String) -> Error,
) -> Result<BTreeMap<String, String>> {
    for (key, value) in &env {
        if key.is_empty() || key.contains(['=', '\0']) || value.contains('\0') {
            return Err(invalid(format!(
                "the env of {who} has an invalid variable {key:?}"
            )));
        }
    }
    Ok(env)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<TeamFile> {
        TeamFile::parse(Path::new("/repo/teams/t.toml"), text, Path::new("/work"))
    }

    #[test]
    fn full_example_parses() {
        let file = parse(
            r#"
name = "review"
description = "two reviewers and a fixer"
layout = "main-vertical"
max_concurrent = 8

[lead]
command = ["claude", "--model", "opus", "--permission-mode", "acceptEdits"]
profile = "claude"
inherit = ["--model", "--permission-mode", "--settings", "--plugin-dir"]

[[member]]
name = "security"
agent_type = "reviewer"
model = "sonnet"
plan_mode_required = true
isolation = "worktree"
prompt = "Review the auth changes for injection risks."
protocol = "native"
delivery = "pull"
run_timeout_s = 0
env = { RUST_LOG = "info" }
cwd = "sub"
"#,
        )
        .unwrap();
        assert_eq!(file.name.as_str(), "review");
        assert_eq!(file.lead.name.as_str(), "team-lead");
        assert_eq!(file.lead.profile, Profile::Claude);
        let member = &file.members[0];
        assert_eq!(member.isolation, Isolation::Worktree);
        assert_eq!(member.cwd, Path::new("/repo/teams/sub"));
        assert_eq!(
            file.lead.cwd,
            Path::new("/work"),
            "members default to where swarm up runs"
        );
        assert_eq!(member.env["RUST_LOG"], "info");
    }

    #[test]
    fn unknown_keys_are_refused_with_their_line() {
        let err = parse("name = \"t\"\n\n[[member]]\nname = \"a\"\ncommand = \"x\"\nbogus = 1\n")
            .unwrap_err();
        assert_eq!(err.kind(), crate::error::ErrorKind::Usage);
        assert!(
            err.message().starts_with("/repo/teams/t.toml:6:"),
            "{}",
            err.message()
        );
        assert!(err.message().contains("bogus"), "{}", err.message());
        assert!(!err.message().contains('\n'));
    }

    #[test]
    fn bad_names_and_duplicates_are_refused() {
        for text in [
            "name = \"../x\"",
            "name = \"t\"\n[[member]]\nname = \"a/b\"\ncommand = \"x\"",
            "name = \"t\"\n[[member]]\nname = \"a\"\ncommand = \"x\"\n[[member]]\nname = \"a\"\ncommand = \"x\"",
            "name = \"t\"\n[[member]]\nname = \"team-lead\"\ncommand = \"x\"",
            "name = \"t\"\n[lead]\nprofile = \"generic\"\n[[member]]\nname = \"a\"",
            "name = \"t\"\nmax_concurrent = 0",
            "name = \"t\"\n[[member]]\nname = \"a\"\ncommand = []",
            "name = \"t\"\n[[member]]\nname = \"user\"\ncommand = \"x\"",
            "name = \"t\"\n[lead]\nname = \"user\"",
        ] {
            let err = parse(text).unwrap_err();
            assert_eq!(err.kind(), crate::error::ErrorKind::Usage, "{text}");
        }
    }

    #[test]
    fn layouts_are_checked_before_tmux_sees_them() {
        let team = |layout: &str| {
            parse(&format!(
                "name = \"t\"\nlayout = \"{layout}\"\n[lead]\ncommand = \"x\"\n[[member]]\nname = \"a\"\ncommand = \"x\""
            ))
        };
        for bad in [
            "grid",
            "",
            "main-vertical-mirrored",
            "537c,200x60,0,0{100x60,0,0,0,99x60,101,0,1}",
        ] {
            let err = team(bad).unwrap_err();
            assert_eq!(err.kind(), crate::error::ErrorKind::Usage, "{bad}");
            assert!(
                err.message().starts_with("/repo/teams/t.toml: layout"),
                "{}",
                err.message()
            );
        }
        assert_eq!(
            team("main-vertical").unwrap().layout,
            Some(Layout::Named("main-vertical"))
        );
        let two = "537b,200x60,0,0{100x60,0,0,0,99x60,101,0,1}";
        assert_eq!(team(two).unwrap().layout.unwrap().cells(), Some(2));
        let err = parse(&format!(
            "name = \"t\"\nlayout = \"{two}\"\n[[member]]\nname = \"a\"\ncommand = \"x\""
        ))
        .unwrap_err();
        assert!(
            err.message()
                .ends_with("the layout string describes 2 panes but the team has 1"),
            "{}",
            err.message()
        );
    }

    #[test]
    fn log_bounds_are_sizes_team_wide_or_per_member() {
        let file = parse(
            "name = \"t\"\nlog_max = \"2MiB\"\n[lead]\ncommand = \"x\"\nlog_max = 4096\n\
             [[member]]\nname = \"a\"\ncommand = \"x\"\n[[member]]\nname = \"b\"\ncommand = \"x\"\nlog_max = \"64 KiB\"",
        )
        .unwrap();
        assert_eq!(file.log_max, Some(2 << 20));
        assert_eq!(file.lead.log_max, 4096);
        assert_eq!(file.members[0].log_max, 2 << 20);
        assert_eq!(file.members[1].log_max, 64 << 10);
        let plain = parse("name = \"t\"\n[[member]]\nname = \"a\"\ncommand = \"x\"").unwrap();
        assert_eq!(plain.members[0].log_max, DEFAULT_LOG_MAX);
        assert_eq!(plain.log_max, None);
        for bad in [
            "\"12 parsecs\"",
            "\"lots\"",
            "100",
            "\"99999999999999GiB\"",
            "-1",
        ] {
            let err = parse(&format!("name = \"t\"\nlog_max = {bad}")).unwrap_err();
            assert_eq!(err.kind(), crate::error::ErrorKind::Usage, "{bad}");
        }
        assert_eq!(parse_size("1MB"), Ok(1_000_000));
        assert_eq!(parse_size("3g"), Ok(3 << 30));
    }

    #[test]
    fn env_rules_are_team_wide_or_a_members_own_and_checked() {
        let file = parse(
            "name = \"t\"\nenv_remove = [\"AWS_SECRET_ACCESS_KEY\"]\nenv_keep = [\"PATH\"]\n\
             [lead]\ncommand = \"x\"\n\
             [[member]]\nname = \"a\"\ncommand = \"x\"\nenv_remove = [\"ANTHROPIC_API_KEY\"]\n\
             [[member]]\nname = \"b\"\ncommand = \"x\"\nenv_clear = true\nenv_keep = [\"HOME\"]\n",
        )
        .unwrap();
        let names = |set: &BTreeSet<String>| set.iter().cloned().collect::<Vec<_>>();
        assert!(!file.lead.env_policy.clear);
        assert_eq!(
            names(&file.lead.env_policy.remove),
            ["AWS_SECRET_ACCESS_KEY"]
        );
        let a = &file.members[0].env_policy;
        assert_eq!(
            names(&a.remove),
            ["ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY"]
        );
        let b = &file.members[1].env_policy;
        assert!(b.clear);
        assert_eq!(names(&b.keep), ["HOME", "PATH"]);
        assert_eq!(file.env_policy.remove.len(), 1);

        // Between the team and a member there is no contradiction: a name removed anywhere is
        // removed, and a member's own variable is set whatever the team removes.
        let file = parse(
            "name = \"t\"\nenv_clear = true\nenv_keep = [\"K\", \"PATH\"]\nenv_remove = [\"T\"]\n\
             [[member]]\nname = \"a\"\ncommand = \"x\"\nenv_remove = [\"K\"]\nenv = { T = \"own\" }\n",
        )
        .unwrap();
        let a = &file.members[0];
        assert!(!a.env_policy.keeps("K") && a.env_policy.keeps("PATH"));
        assert_eq!(a.env["T"], "own");

        for bad in [
            "name = \"t\"\n[[member]]\nname = \"a\"\ncommand = \"x\"\nenv_keep = [\"PATH\"]",
            "name = \"t\"\nenv_keep = [\"PATH\"]\n[[member]]\nname = \"a\"\ncommand = \"x\"",
            "name = \"t\"\n[[member]]\nname = \"a\"\ncommand = \"x\"\nenv = { K = \"v\" }\nenv_remove = [\"K\"]",
            "name = \"t\"\nenv_clear = true\nenv_keep = [\"X\"]\nenv_remove = [\"X\"]",
            "name = \"t\"\n[lead]\nenv_remove = [\"A=B\"]",
            "name = \"t\"\n[[member]]\nname = \"a\"\ncommand = \"x\"\nenv_clear = \"yes\"",
        ] {
            let err = parse(bad).unwrap_err();
            assert_eq!(err.kind(), crate::error::ErrorKind::Usage, "{bad}");
        }
    }

    #[test]
    fn relative_cwd_is_relative_to_the_team_file() {
        let file = parse("name = \"t\"\ncwd = \"..\"\n[[member]]\nname = \"a\"\ncommand = \"x\"\ncwd = \"../other\"").unwrap();
        assert_eq!(file.lead.cwd, Path::new("/repo"));
        assert_eq!(file.members[0].cwd, Path::new("/repo/other"));
    }

    #[test]
    fn command_strings_split_like_a_shell() {
        let file = parse(
            "name = \"t\"\n[[member]]\nname = \"a\"\ncommand = \"bash -c 'echo hi; exit 3'\"",
        )
        .unwrap();
        assert_eq!(
            file.members[0].command.as_deref().unwrap(),
            ["bash", "-c", "echo hi; exit 3"]
        );
    }
}
