//! Permission rules in Claude Code's syntax (docs/ARCHITECTURE.md, "Permission rules"): `Bash`,
//! `Bash(git status:*)`, `Bash(npm run *)`, `Read`, `Edit(src/**)`, `WebFetch(domain:docs.rs)`,
//! `mcp__server`. The one matcher for the team file's `[permissions]`; matched as Claude Code
//! 2.1.332 matches them, and more narrowly where it parses the shell and this does not:
//!
//! - `Bash(PREFIX:*)` matches the command `PREFIX` and every command that starts `PREFIX `;
//!   `Bash(PATTERN)` with an unescaped `*` matches with `*` standing for any text (spaces too),
//!   and a single trailing ` *` also matches nothing (`git *` matches `git`); any other content
//!   matches the command exactly. Runs of spaces and tabs count as one space, as Claude Code
//!   normalises them. An allow rule never matches a compound command (one with `;`, `&`, `|`,
//!   `<`, `>`, `` ` ``, `$(` or a newline): Claude Code splits those and needs a rule for every
//!   part, swarm asks instead. A deny rule matches the whole command or any of its parts.
//! - File rules are gitignore-style globs over the path the tool names (`file_path`,
//!   `notebook_path`, or `path`): `**` any depth, `*` and `?` within a name, a pattern with no
//!   `/` at any depth. `//abs` is an absolute path, `~/` the home directory, and any other
//!   pattern is relative to the member's working directory. `Edit` rules cover every tool that
//!   changes files (`Edit`, `MultiEdit`, `Write`, `NotebookEdit`), `Read` rules every tool that
//!   reads them (`Read`, `Glob`, `Grep`, `NotebookRead`, `LS`).
//! - `WebFetch(domain:HOST)` matches a URL on HOST; `domain:*.HOST` any of its subdomains.
//! - `mcp__server` and `mcp__server__*` match every tool of that MCP server.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The tools a file rule written for the first covers.
const FILE_FAMILIES: &[(&str, &[&str])] = &[
    ("Edit", &["Edit", "MultiEdit", "Write", "NotebookEdit"]),
    ("Write", &["Write"]),
    ("MultiEdit", &["MultiEdit"]),
    ("NotebookEdit", &["NotebookEdit"]),
    ("Read", &["Read", "Glob", "Grep", "NotebookRead", "LS"]),
    ("Glob", &["Glob"]),
    ("Grep", &["Grep"]),
    ("NotebookRead", &["NotebookRead"]),
    ("LS", &["LS"]),
];

/// One parsed rule, kept with the text it was written as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    text: String,
    tool: String,
    content: Option<Content>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Content {
    Command(Command),
    Path(String),
    Domain(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Command {
    Prefix(String),
    Wildcard(String),
    Exact(String),
}

impl Rule {
    /// Parses `text`, or says in one line why it cannot.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let trimmed = text.trim();
        let (tool, content) = match trimmed.find('(') {
            None => (trimmed, None),
            Some(open) => {
                let Some(inner) = trimmed[open + 1..].strip_suffix(')') else {
                    return Err(format!("{text:?} opens a ( it does not close at its end"));
                };
                (&trimmed[..open], Some(inner))
            }
        };
        if tool.is_empty()
            || !tool
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '*')
        {
            return Err(format!(
                "{text:?} does not start with a tool name (Bash, Read, Edit, WebFetch, mcp__server…)"
            ));
        }
        if tool.contains('*') && !(tool.starts_with("mcp__") && tool.ends_with("__*")) {
            return Err(format!(
                "{text:?}: a tool name has no wildcard but mcp__server__*"
            ));
        }
        let content = match content.map(str::trim) {
            None | Some("*") => None,
            Some("") => return Err(format!("{text:?} has nothing between its parentheses")),
            Some(inner) => Some(Self::content(text, tool, inner)?),
        };
        Ok(Self {
            text: trimmed.to_owned(),
            tool: tool.to_owned(),
            content,
        })
    }

    fn content(text: &str, tool: &str, inner: &str) -> Result<Content, String> {
        if tool == "Bash" {
            if let Some(prefix) = inner.strip_suffix(":*") {
                if prefix.trim().is_empty() {
                    return Err(format!("{text:?}: the prefix before :* is empty"));
                }
                return Ok(Content::Command(Command::Prefix(spaces(prefix.trim()))));
            }
            if has_wildcard(inner) {
                return Ok(Content::Command(Command::Wildcard(spaces(inner))));
            }
            return Ok(Content::Command(Command::Exact(spaces(inner))));
        }
        if FILE_FAMILIES.iter().any(|(name, _)| *name == tool) {
            if inner.contains(":*") {
                return Err(format!(
                    "{text:?}: a file rule is a glob like src/**, without :*"
                ));
            }
            return Ok(Content::Path(inner.to_owned()));
        }
        if tool == "WebFetch" {
            let Some(host) = inner.strip_prefix("domain:").map(str::trim) else {
                return Err(format!(
                    "{text:?}: a WebFetch rule is WebFetch(domain:HOST)"
                ));
            };
            if host.is_empty() || host.contains(['/', ' ']) {
                return Err(format!("{text:?}: {host:?} is no host name"));
            }
            return Ok(Content::Domain(host.to_ascii_lowercase()));
        }
        Err(format!(
            "{text:?}: swarm matches no content for {tool}; write {tool} alone to cover all of it"
        ))
    }

    /// The rule as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the rule covers `tool` called with `input`, by a member working in `cwd`; `deny`
    /// says which list it is in (a compound command matches a deny rule by any part).
    pub(crate) fn matches(&self, tool: &str, input: &Value, cwd: &Path, deny: bool) -> bool {
        if !self.covers(tool) {
            return false;
        }
        match &self.content {
            None => true,
            Some(Content::Command(pattern)) => {
                let Some(command) = input.get("command").and_then(Value::as_str) else {
                    return false;
                };
                let command = spaces(command.trim());
                if deny {
                    command_parts(&command)
                        .iter()
                        .chain(std::iter::once(&command))
                        .any(|part| pattern.matches(part))
                } else {
                    !is_compound(&command) && pattern.matches(&command)
                }
            }
            Some(Content::Path(glob)) => {
                let path = ["file_path", "notebook_path", "path"]
                    .iter()
                    .find_map(|key| input.get(*key).and_then(Value::as_str))
                    .map_or_else(|| cwd.to_path_buf(), PathBuf::from);
                path_matches(glob, &path, cwd)
            }
            Some(Content::Domain(host)) => input
                .get("url")
                .and_then(Value::as_str)
                .and_then(url_host)
                .is_some_and(|found| match host.strip_prefix("*.") {
                    Some(parent) => found.ends_with(&format!(".{parent}")),
                    None => found == *host,
                }),
        }
    }

    fn covers(&self, tool: &str) -> bool {
        if let Some(server) = self.tool.strip_prefix("mcp__") {
            let server = server.strip_suffix("__*").unwrap_or(server);
            if !server.contains("__") {
                return tool.strip_prefix("mcp__").is_some_and(|rest| {
                    rest.strip_prefix(server)
                        .is_some_and(|after| after.starts_with("__"))
                }) || tool == self.tool;
            }
        }
        match FILE_FAMILIES.iter().find(|(name, _)| *name == self.tool) {
            Some((_, family)) => family.contains(&tool),
            None => tool == self.tool,
        }
    }
}

impl Command {
    fn matches(&self, command: &str) -> bool {
        match self {
            Self::Prefix(prefix) => {
                command == prefix
                    || command
                        .strip_prefix(prefix.as_str())
                        .is_some_and(|rest| rest.starts_with(' '))
            }
            Self::Exact(exact) => command == exact,
            Self::Wildcard(pattern) => wildcard_matches(pattern, command),
        }
    }
}

/// A rule's text and the allow and deny lists of one scope, parsed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RuleTexts", into = "RuleTexts")]
pub struct Rules {
    allow: Vec<Rule>,
    deny: Vec<Rule>,
}

/// How [`Rules`] is written: `{"allow": [...], "deny": [...]}`, in the team file and on the wire.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleTexts {
    #[serde(default)]
    pub(crate) allow: Vec<String>,
    #[serde(default)]
    pub(crate) deny: Vec<String>,
}

impl TryFrom<RuleTexts> for Rules {
    type Error = String;

    fn try_from(texts: RuleTexts) -> Result<Self, String> {
        let parse = |list: &[String], which: &str| {
            list.iter()
                .map(|text| Rule::parse(text).map_err(|why| format!("{which} rule {why}")))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(Self {
            allow: parse(&texts.allow, "allow")?,
            deny: parse(&texts.deny, "deny")?,
        })
    }
}

impl From<Rules> for RuleTexts {
    fn from(rules: Rules) -> Self {
        let texts = |list: &[Rule]| list.iter().map(|r| r.text.clone()).collect();
        Self {
            allow: texts(&rules.allow),
            deny: texts(&rules.deny),
        }
    }
}

/// What the rules say of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision<'a> {
    Allow(&'a Rule),
    Deny(&'a Rule),
}

impl Rules {
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.deny.is_empty()
    }

    /// These rules and then `more`'s (a member's own after the team's).
    #[must_use]
    pub fn and(&self, more: &Self) -> Self {
        let mut all = self.clone();
        all.allow.extend(more.allow.iter().cloned());
        all.deny.extend(more.deny.iter().cloned());
        all
    }

    /// The first deny rule that matches, else the first allow rule, else nothing: it is asked.
    pub fn decide(&self, tool: &str, input: &Value, cwd: &Path) -> Option<Decision<'_>> {
        if let Some(rule) = self.deny.iter().find(|r| r.matches(tool, input, cwd, true)) {
            return Some(Decision::Deny(rule));
        }
        self.allow
            .iter()
            .find(|r| r.matches(tool, input, cwd, false))
            .map(Decision::Allow)
    }
}

/// Runs of spaces and tabs as one space, as Claude Code compares commands.
fn spaces(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = false;
    for c in text.chars() {
        if c == ' ' || c == '\t' {
            blank = true;
            continue;
        }
        if blank && !out.is_empty() {
            out.push(' ');
        }
        blank = false;
        out.push(c);
    }
    if blank && !out.is_empty() && text.ends_with([' ', '\t']) {
        out.push(' ');
    }
    out
}

fn has_wildcard(text: &str) -> bool {
    let bytes = text.as_bytes();
    (0..bytes.len()).any(|i| bytes[i] == b'*' && !escaped(bytes, i))
}

/// Whether the byte at `at` follows an odd run of backslashes.
fn escaped(bytes: &[u8], at: usize) -> bool {
    bytes[..at]
        .iter()
        .rev()
        .take_while(|b| **b == b'\\')
        .count()
        % 2
        == 1
}

fn is_compound(command: &str) -> bool {
    command.contains([';', '&', '|', '<', '>', '`', '\n', '\r']) || command.contains("$(")
}

/// The simple commands of a compound one, split at `;`, `&`, `|` and newlines.
fn command_parts(command: &str) -> Vec<String> {
    command
        .split([';', '&', '|', '\n', '\r'])
        .map(|part| part.trim().trim_start_matches(['(', '{', '!']).trim())
        .filter(|part| !part.is_empty())
        .map(str::to_owned)
        .collect()
}

/// One piece of a Bash wildcard pattern.
#[derive(Debug, PartialEq)]
enum Piece {
    Text(char),
    Any,
}

/// Claude Code's wildcard match: `*` is any text, `\*` a star, `\\` a backslash, anchored at both
/// ends; a lone trailing ` *` may also match nothing.
fn wildcard_matches(pattern: &str, command: &str) -> bool {
    let mut pieces = Vec::new();
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if matches!(chars.peek(), Some('*' | '\\')) => {
                pieces.push(Piece::Text(chars.next().unwrap_or('\\')));
            }
            '*' => pieces.push(Piece::Any),
            c => pieces.push(Piece::Text(c)),
        }
    }
    let stars = pieces.iter().filter(|p| **p == Piece::Any).count();
    let optional_tail = stars == 1
        && pieces.len() >= 2
        && pieces[pieces.len() - 1] == Piece::Any
        && pieces[pieces.len() - 2] == Piece::Text(' ');
    let text: Vec<char> = command.chars().collect();
    star_match(&pieces, &text) || (optional_tail && star_match(&pieces[..pieces.len() - 2], &text))
}

/// Whether `pieces` match all of `text`, `*` standing for any run of characters.
fn star_match(pieces: &[Piece], text: &[char]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut retry: Option<(usize, usize)> = None;
    while t < text.len() {
        match pieces.get(p) {
            Some(Piece::Any) => {
                retry = Some((p, t));
                p += 1;
            }
            Some(Piece::Text(c)) if *c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match retry {
                Some((star, from)) => {
                    p = star + 1;
                    t = from + 1;
                    retry = Some((star, from + 1));
                }
                None => return false,
            },
        }
    }
    pieces[p..].iter().all(|piece| *piece == Piece::Any)
}

/// Whether file rule `glob` covers `path` (relative paths are in `cwd`).
fn path_matches(glob: &str, path: &Path, cwd: &Path) -> bool {
    let path = lexical(&cwd.join(path));
    let (root, pattern) = if let Some(absolute) = glob.strip_prefix("//") {
        (PathBuf::from("/"), absolute.to_owned())
    } else if let Some(home) = glob.strip_prefix("~/") {
        match std::env::var_os("HOME") {
            Some(dir) => (PathBuf::from(dir), home.to_owned()),
            None => return false,
        }
    } else {
        let relative = glob.trim_start_matches("./").trim_start_matches('/');
        (lexical(cwd), relative.to_owned())
    };
    let Ok(rest) = path.strip_prefix(&root) else {
        return false;
    };
    let mut pattern = pattern;
    if pattern.ends_with('/') {
        pattern.push_str("**");
    }
    if !pattern.trim_end_matches('/').contains('/') {
        pattern = format!("**/{pattern}");
    }
    let names: Vec<String> = rest
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let globs: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    segments_match(&globs, &names)
}

/// `path` with `.` and `..` taken out, without looking at the disk.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn segments_match(globs: &[&str], names: &[String]) -> bool {
    match globs.split_first() {
        None => names.is_empty(),
        Some((&"**", rest)) => (0..=names.len()).any(|skip| segments_match(rest, &names[skip..])),
        Some((glob, rest)) => names
            .split_first()
            .is_some_and(|(name, names)| name_matches(glob, name) && segments_match(rest, names)),
    }
}

/// One path name against one glob name: `*` any run, `?` one character.
fn name_matches(glob: &str, name: &str) -> bool {
    fn from(glob: &[char], name: &[char]) -> bool {
        match (glob.first(), name.first()) {
            (None, None) => true,
            (Some('*'), _) => (0..=name.len()).any(|skip| from(&glob[1..], &name[skip..])),
            (Some('?'), Some(_)) => from(&glob[1..], &name[1..]),
            (Some(g), Some(c)) if g == c => from(&glob[1..], &name[1..]),
            _ => false,
        }
    }
    let glob: Vec<char> = glob.chars().collect();
    let name: Vec<char> = name.chars().collect();
    from(&glob, &name)
}

/// The lower-cased host of `url` (`https://user@docs.rs:443/x` → `docs.rs`).
fn url_host(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = host.split(':').next()?;
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(text: &str) -> Rule {
        Rule::parse(text).unwrap()
    }

    fn bash(text: &str, command: &str, deny: bool) -> bool {
        rule(text).matches(
            "Bash",
            &json!({ "command": command }),
            Path::new("/w"),
            deny,
        )
    }

    #[test]
    fn a_prefix_rule_matches_the_command_and_what_follows_a_space() {
        assert!(bash("Bash(git status:*)", "git status", false));
        assert!(bash("Bash(git status:*)", "git status --short", false));
        assert!(bash("Bash(git status:*)", "git  status\t-s", false));
        assert!(!bash("Bash(git status:*)", "git statusx", false));
        assert!(!bash("Bash(git status:*)", "git log", false));
        assert!(!bash("Bash(git:*)", "gitk", false));
    }

    #[test]
    fn an_allow_rule_never_covers_a_compound_command_but_a_deny_rule_does() {
        for command in [
            "git status && rm -rf /",
            "git status; rm -rf /",
            "git status | sh",
            "git status > /etc/passwd",
            "git status $(rm -rf /)",
            "git status `rm -rf /`",
            "git status\nrm -rf /",
        ] {
            assert!(!bash("Bash(git status:*)", command, false), "{command}");
        }
        assert!(bash("Bash(rm:*)", "git status && rm -rf /", true));
        assert!(bash("Bash(rm:*)", "ls | (rm x)", true));
        assert!(!bash("Bash(rm:*)", "git status && ls", true));
    }

    #[test]
    fn a_wildcard_is_any_text_and_a_trailing_one_may_be_nothing() {
        assert!(bash("Bash(npm run *)", "npm run build", false));
        assert!(bash("Bash(npm run *)", "npm run", false));
        assert!(!bash("Bash(npm run *)", "npm runner", false));
        assert!(bash("Bash(git * main)", "git push origin main", false));
        assert!(!bash("Bash(git * main)", "git push origin main2", false));
        assert!(bash("Bash(echo \\* *)", "echo * x", false));
        assert!(!bash("Bash(echo \\* *)", "echo hi x", false));
        // No unescaped star: matched exactly, backslash and all, as Claude Code does.
        assert!(bash("Bash(echo \\*)", "echo \\*", false));
        assert!(!bash("Bash(echo \\*)", "echo *", false));
        assert!(bash("Bash(ls)", "ls", false));
        assert!(!bash("Bash(ls)", "ls -la", false));
    }

    #[test]
    fn a_tool_rule_covers_every_input_and_only_its_tool() {
        let any = rule("Bash");
        assert!(any.matches("Bash", &json!({"command": "a && b"}), Path::new("/"), false));
        assert!(!any.matches("Read", &json!({}), Path::new("/"), false));
        assert!(rule("Bash(*)").matches("Bash", &json!({"command": "x"}), Path::new("/"), false));
        let mcp = rule("mcp__github");
        assert!(mcp.matches(
            "mcp__github__create_issue",
            &json!({}),
            Path::new("/"),
            false
        ));
        assert!(!mcp.matches("mcp__githubx__a", &json!({}), Path::new("/"), false));
        assert!(rule("mcp__github__*").matches(
            "mcp__github__x",
            &json!({}),
            Path::new("/"),
            false
        ));
    }

    #[test]
    fn file_rules_are_globs_in_the_working_directory_for_the_whole_family() {
        let cwd = Path::new("/w/repo");
        let edit = rule("Edit(src/**)");
        let at =
            |tool: &str, path: &str| edit.matches(tool, &json!({ "file_path": path }), cwd, false);
        assert!(at("Edit", "/w/repo/src/main.rs"));
        assert!(at("Write", "/w/repo/src/a/b/c.rs"));
        assert!(at("MultiEdit", "src/lib.rs"));
        assert!(!at("Edit", "/w/repo/srcx/main.rs"));
        assert!(!at("Edit", "/w/repo/src/../Cargo.toml"));
        assert!(!at("Edit", "/elsewhere/src/main.rs"));
        assert!(!at("Read", "/w/repo/src/main.rs"));
        let rs = rule("Read(*.rs)");
        assert!(rs.matches("Read", &json!({"file_path": "/w/repo/a/b.rs"}), cwd, false));
        assert!(rs.matches("Grep", &json!({"path": "/w/repo/x.rs"}), cwd, false));
        assert!(!rs.matches("Read", &json!({"file_path": "/w/repo/a/b.rsx"}), cwd, false));
        let abs = rule("Read(//etc/*.conf)");
        assert!(abs.matches("Read", &json!({"file_path": "/etc/a.conf"}), cwd, false));
        assert!(!abs.matches("Read", &json!({"file_path": "/etc/x/a.conf"}), cwd, false));
        let one = rule("Edit(docs/?.md)");
        assert!(one.matches(
            "Edit",
            &json!({"file_path": "/w/repo/docs/a.md"}),
            cwd,
            false
        ));
        assert!(!one.matches(
            "Edit",
            &json!({"file_path": "/w/repo/docs/ab.md"}),
            cwd,
            false
        ));
        assert!(rule("Read").matches("Glob", &json!({"pattern": "*"}), cwd, false));
    }

    #[test]
    fn web_fetch_rules_match_the_host_or_its_subdomains() {
        let fetch = |text: &str, url: &str| {
            rule(text).matches("WebFetch", &json!({ "url": url }), Path::new("/"), false)
        };
        assert!(fetch("WebFetch(domain:docs.rs)", "https://docs.rs/serde"));
        assert!(fetch("WebFetch(domain:docs.rs)", "https://u@DOCS.rs:443/x"));
        assert!(!fetch(
            "WebFetch(domain:docs.rs)",
            "https://docs.rs.evil.com/"
        ));
        assert!(!fetch(
            "WebFetch(domain:docs.rs)",
            "https://evil.com/?docs.rs"
        ));
        assert!(fetch(
            "WebFetch(domain:*.google.com)",
            "https://maps.google.com/"
        ));
        assert!(!fetch(
            "WebFetch(domain:*.google.com)",
            "https://google.com.au/"
        ));
    }

    #[test]
    fn what_cannot_parse_says_why_in_one_line() {
        for (text, why) in [
            ("Bash(git status", "opens a ( it does not close"),
            ("Bash()", "nothing between its parentheses"),
            ("Bash(:*)", "the prefix before :* is empty"),
            ("WebFetch(docs.rs)", "WebFetch(domain:HOST)"),
            ("Edit(src:*)", "without :*"),
            ("Task(x)", "swarm matches no content for Task"),
            ("ba sh", "does not start with a tool name"),
            ("", "does not start with a tool name"),
            ("Ba*sh", "no wildcard"),
        ] {
            let err = Rule::parse(text).unwrap_err();
            assert!(err.contains(why), "{text}: {err}");
            assert!(!err.contains('\n'));
        }
    }

    #[test]
    fn deny_wins_over_allow() {
        let rules = Rules::try_from(RuleTexts {
            allow: vec!["Bash".into(), "Read".into()],
            deny: vec!["Bash(rm:*)".into()],
        })
        .unwrap();
        let cwd = Path::new("/");
        let decide = |command: &str| rules.decide("Bash", &json!({ "command": command }), cwd);
        assert_eq!(
            decide("rm -rf x").map(|d| matches!(d, Decision::Deny(_))),
            Some(true)
        );
        assert!(matches!(decide("ls"), Some(Decision::Allow(r)) if r.text() == "Bash"));
        assert_eq!(rules.decide("Edit", &json!({}), cwd), None);
        let err = Rules::try_from(RuleTexts {
            allow: vec![],
            deny: vec!["Bash(".into()],
        })
        .unwrap_err();
        assert!(err.starts_with("deny rule \"Bash(\""), "{err}");
    }
}
