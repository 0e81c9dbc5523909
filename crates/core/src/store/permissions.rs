//! The record of answered permission asks (docs/ARCHITECTURE.md, "Permission asks"):
//! `teams/<team>/permissions.jsonl`, one answer a line, appended under `.permissions.flock` by the
//! one process answering, so an ask is answered once however many answer it at the same moment.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::format::event::What;
use crate::store::durable::{
    LineOffset, append_lines_durably, private_dir, read_if_exists, whole_lines_from,
};
use crate::store::events;
use crate::store::lock::Flock;
use crate::store::paths::TeamPaths;

/// One answer given to a permission ask.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionAnswer {
    pub request_id: String,
    /// The member that asked.
    pub member: String,
    /// The tool it asked for (`Bash`), or `network` for a sandbox host.
    pub tool: String,
    pub allowed: bool,
    /// Allowed with the ask's suggestions kept as rules (`allow --always`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub always: bool,
    /// The permission mode the answer set the teammate in (`allow --mode`, `swarm mode`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Who answered: the name the answer went out under, and who gave it when that differs.
    pub by: String,
    /// RFC 3339.
    pub at: String,
}

/// Every answer recorded, oldest first. A line that does not parse (torn by a crash) is skipped.
pub fn answers(paths: &TeamPaths) -> Result<Vec<PermissionAnswer>> {
    let Some(bytes) = read_if_exists(&paths.permission_answers())? else {
        return Ok(Vec::new());
    };
    Ok(parse(&bytes))
}

/// The answers recorded since `from`, oldest first, and where to read on from: a reader that
/// keeps looking (the rules thread) reads each line once. A line still being appended is read
/// next time; a record begun again is read from its start.
pub fn answers_since(
    paths: &TeamPaths,
    from: LineOffset,
) -> Result<(Vec<PermissionAnswer>, LineOffset)> {
    let (bytes, next) = whole_lines_from(&paths.permission_answers(), from)?;
    Ok((parse(&bytes), next))
}

fn parse(bytes: &[u8]) -> Vec<PermissionAnswer> {
    bytes
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .filter_map(|line| serde_json::from_slice(line).ok())
        .collect()
}

/// Answers ask `request_id` once: under the lock, refuses (exit 2) an ask already answered, else
/// runs `send`, which sends the answer and says what it was, and records that. Nothing is recorded
/// when `send` fails.
pub fn answer_once<R>(
    paths: &TeamPaths,
    request_id: &str,
    send: impl FnOnce() -> Result<(R, PermissionAnswer)>,
) -> Result<R> {
    private_dir(paths.private_root(), paths.dir())?;
    let _lock = Flock::wait(&paths.permission_answers_lock())?;
    if let Some(earlier) = answers(paths)?
        .into_iter()
        .find(|a| a.request_id == request_id)
    {
        return Err(already_answered(&earlier));
    }
    let (sent, answer) = send()?;
    let mut line = serde_json::to_vec(&answer).map_err(|err| Error::runtime(err.to_string()))?;
    line.push(b'\n');
    append_lines_durably(&paths.permission_answers(), &line)?;
    events::tell(
        paths,
        Some(&answer.member),
        What::Answered {
            request_id: answer.request_id,
            allowed: answer.allowed,
            by: answer.by,
        },
    );
    Ok(sent)
}

/// The refusal of a second answer.
pub(crate) fn already_answered(earlier: &PermissionAnswer) -> Error {
    let verdict = match (earlier.allowed, earlier.always) {
        (true, true) => "allowed always",
        (true, false) => "allowed",
        (false, _) => "denied",
    };
    Error::usage(format!(
        "permission request {} was already answered: {verdict} by {} at {}",
        earlier.request_id, earlier.by, earlier.at
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::store::team::fixture;

    fn answer(id: &str) -> PermissionAnswer {
        PermissionAnswer {
            request_id: id.into(),
            member: "bob".into(),
            tool: "Bash".into(),
            allowed: true,
            always: false,
            mode: None,
            reason: None,
            by: "team-lead".into(),
            at: "2026-01-01T00:00:00.000Z".into(),
        }
    }

    #[test]
    fn an_ask_is_answered_once_and_a_failed_send_records_nothing() {
        let (_dir, team) = fixture::team(&["bob"]);
        let paths = team.paths();
        let err =
            answer_once::<()>(paths, "perm-1", || Err(Error::runtime("no agent"))).unwrap_err();
        assert_eq!(err.message(), "no agent");
        assert!(answers(paths).unwrap().is_empty());
        answer_once(paths, "perm-1", || Ok(((), answer("perm-1")))).unwrap();
        let mut sent = false;
        let err = answer_once(paths, "perm-1", || {
            sent = true;
            Ok(((), answer("perm-1")))
        })
        .unwrap_err();
        assert!(!sent);
        assert_eq!(err.kind(), ErrorKind::Usage);
        assert_eq!(
            err.message(),
            "permission request perm-1 was already answered: allowed by team-lead at 2026-01-01T00:00:00.000Z"
        );
        answer_once(paths, "perm-2", || Ok(((), answer("perm-2")))).unwrap();
        let ids: Vec<String> = answers(paths)
            .unwrap()
            .into_iter()
            .map(|a| a.request_id)
            .collect();
        assert_eq!(ids, ["perm-1", "perm-2"]);
        let (told, _) = events::read_from(paths, events::Offset::default()).unwrap();
        let answered: Vec<(Option<String>, What)> =
            told.into_iter().map(|e| (e.member, e.what)).collect();
        let event = |id: &str| {
            let what = What::Answered {
                request_id: id.into(),
                allowed: true,
                by: "team-lead".into(),
            };
            (Some("bob".to_owned()), what)
        };
        assert_eq!(answered, [event("perm-1"), event("perm-2")]);
    }
}
