//! Team and member names. A name typed on the command line must match
//! `[A-Za-z0-9][A-Za-z0-9_-]{0,63}`, so it can never escape the directory it names
//! (docs/ARCHITECTURE.md, "On disk").

use std::fmt;

use crate::error::{Error, Result};

pub(crate) const MAX_NAME_LEN: usize = 64;

/// A validated team or member name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Name(String);

impl Name {
    /// Validates `raw` as the name of a `what` ("team", "member").
    pub fn parse(what: &str, raw: &str) -> Result<Self> {
        match problem(raw) {
            None => Ok(Self(raw.to_owned())),
            Some(problem) => Err(Error::usage(format!(
                "invalid {what} name {}: {problem}",
                quoted(raw)
            ))
            .with_hint("names are 1-64 characters of letters, digits, '_' and '-', starting with a letter or digit")),
        }
    }

    /// The name of a `what` ("member", "team") typed to address one that exists: one of `known`
    /// (the roster, or the team folders under `teams/`) exactly as it is written there, whatever
    /// another tool put in it (`dot.name`, `a.b`, 300 characters), else a name as [`Name::parse`]
    /// takes it, which the caller then looks for. What another tool recorded can be reached by
    /// the name it has (docs/ARCHITECTURE.md, "On disk"); what swarm creates is named as `parse`
    /// says.
    pub fn of_existing<'a>(
        what: &str,
        raw: &str,
        mut known: impl Iterator<Item = &'a str>,
    ) -> Result<Self> {
        if known.any(|name| name == raw) {
            return Ok(Self(raw.to_owned()));
        }
        Self::parse(what, raw)
    }

    /// `<member>@<team>`: how a member of another team is named where it acts as a stranger. Both
    /// parts are valid names, so it holds no `/`; it never names a file.
    pub(crate) fn qualified(member: &str, team: &str) -> Self {
        Self(format!("{member}@{team}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

fn problem(raw: &str) -> Option<&'static str> {
    let Some(first) = raw.chars().next() else {
        return Some("it is empty");
    };
    if raw.contains('\0') {
        return Some("it contains a NUL byte");
    }
    if raw.contains('/') {
        return Some("it contains '/'");
    }
    if raw.len() > MAX_NAME_LEN {
        return Some("it is longer than 64 characters");
    }
    if !first.is_ascii_alphanumeric() {
        return Some("it must start with a letter or digit");
    }
    if !raw
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Some("only letters, digits, '_' and '-' are allowed");
    }
    None
}

/// The longest path component a name becomes. A file name has at most 255 bytes, and swarm adds
/// up to 40 around a member's (`.<name>.consume.flock`, `<name>.json.too-large-<ms>.<n>`, a
/// temporary file's `.<name>.json.<pid>.<random>.tmp`).
pub(crate) const MAX_COMPONENT: usize = 200;

/// The one of `known` that `name` most looks like, when it looks enough like one: the similarity
/// clap uses for a misspelt command, for a misspelt member, team or team-file key.
pub fn closest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    known
        .into_iter()
        .map(|candidate| (strsim::jaro(name, candidate), candidate))
        .filter(|(similarity, _)| *similarity > 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate)
}

/// The path component for a name another tool wrote (Claude Code derives it the same way):
/// every character outside `[A-Za-z0-9_-]` becomes `-`. One longer than [`MAX_COMPONENT`], which
/// no file name could hold with what swarm adds (nor Claude Code's own, with `.json`), keeps its
/// first characters and ends with a hash of the whole name, so two long names never share files.
pub(crate) fn path_component(name: &str) -> String {
    let component: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if component.is_empty() {
        return "-".to_owned();
    }
    if component.len() <= MAX_COMPONENT {
        return component;
    }
    // FNV-1a: the same on every build, as a file name must be.
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    let kept = MAX_COMPONENT - 17;
    format!("{}-{hash:016x}", &component[..kept])
}

/// A name shown inside an error message: quoted, with control characters escaped.
pub(crate) fn quoted(raw: &str) -> String {
    format!("{raw:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_ordinary_names() {
        for ok in ["a", "team-lead", "bob_2", "A1", &"x".repeat(64)] {
            assert!(Name::parse("member", ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn refuses_paths_and_oddities() {
        for bad in [
            "",
            "../x",
            "a/b",
            "a\0b",
            "-lead",
            "_x",
            ".hidden",
            "a b",
            "é",
            &"x".repeat(65),
        ] {
            let err = Name::parse("member", bad).unwrap_err();
            assert_eq!(err.kind(), crate::error::ErrorKind::Usage, "{bad:?}");
            assert!(err.message().starts_with("invalid member name"), "{bad:?}");
        }
    }

    #[test]
    fn a_team_folder_another_tool_named_is_taken_by_its_name() {
        assert_eq!(
            Name::of_existing("team", "a.b", ["a.b", "t"].into_iter())
                .unwrap()
                .as_str(),
            "a.b"
        );
        assert!(Name::of_existing("team", "a.b", ["t"].into_iter()).is_err());
        assert!(Name::of_existing("team", "t", std::iter::empty()).is_ok());
    }

    #[test]
    fn a_name_too_long_for_a_file_name_is_cut_and_told_apart_by_a_hash() {
        let long = "x".repeat(300);
        let other = format!("{}y", "x".repeat(299));
        let component = path_component(&long);
        assert_eq!(component.len(), MAX_COMPONENT);
        assert!(component.starts_with(&"x".repeat(150)));
        assert_ne!(component, path_component(&other));
        assert_eq!(component, path_component(&long), "the same on every call");
        let fits = "y".repeat(MAX_COMPONENT);
        assert_eq!(path_component(&fits), fits);
        // The roster finds the name by itself, as written.
        assert_eq!(
            Name::of_existing("member", "dot.name", ["bob", "dot.name"].into_iter())
                .unwrap()
                .as_str(),
            "dot.name"
        );
        assert!(Name::of_existing("member", "dot.name", ["bob"].into_iter()).is_err());
        assert_eq!(
            Name::of_existing("member", "carol", ["bob"].into_iter())
                .unwrap()
                .as_str(),
            "carol"
        );
    }

    #[test]
    fn path_components_of_foreign_names_are_flattened() {
        assert_eq!(path_component("my team"), "my-team");
        assert_eq!(path_component("../etc"), "---etc");
        assert_eq!(path_component("ok_name-1"), "ok_name-1");
        assert_eq!(path_component(""), "-");
    }
}
