//! A permission ask from any member's program (docs/ARCHITECTURE.md, "Asking from any CLI"): the
//! same `permission_request` Claude Code files, sent to the lead from the member's own name, and
//! a wait, on the one watcher, for the lead's side's answer, taken only when it is signed with
//! the key the member was launched with.

use std::cell::Cell;
use std::time::Instant;

use serde_json::{Map, Value};

use crate::base::{clock, ids};
use crate::error::Result;
pub use crate::format::signature::Verdict as Signature;
pub use crate::format::structured::{PermissionRequest, PermissionVerdict, Structured};
use crate::member::reach::Reach;
use crate::member::{seal, verify};
use crate::policy::Caller;
use crate::protocol::exchange::AnswerWatch;
use crate::store::team::Team;

/// What the lead's side answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Allowed, the tool to run with this input.
    Allowed(Value),
    /// Denied, saying why.
    Denied(String),
}

/// What a caller asks for.
pub struct Question {
    pub tool: String,
    pub input: Value,
    pub description: Option<String>,
}

/// Files `question` as `caller` (a teammate, in its own pane, by the protocol rules) with the
/// team's lead and waits until `deadline` for the answer: its request id, and the answer, `None`
/// when the deadline passed. An answer that is not signed for this member (forged, or for another
/// key) is never taken; `forged` is told of each.
pub fn ask(
    team: &Team,
    reach: &dyn Reach,
    caller: &Caller,
    question: Question,
    deadline: Option<Instant>,
    forged: &dyn Fn(&str),
) -> Result<(String, Option<Answer>)> {
    let config = team.load()?;
    let me = caller.name().to_string();
    let lead = config.lead_name().to_owned();
    let request_id = format!(
        "perm-{}-{}",
        clock::now_ms(),
        &ids::fresh().simple().to_string()[..8]
    );
    let request = Structured::PermissionRequest(PermissionRequest {
        request_id: request_id.clone(),
        agent_id: me.clone(),
        tool_name: question.tool,
        tool_use_id: Some(format!("swarm-{request_id}")),
        description: question.description,
        input: Some(question.input),
        permission_suggestions: Vec::new(),
        more: Map::new(),
    });
    // Armed before the ask goes out: an answer by a rule can come at once.
    let watch = AnswerWatch::arm(team, &me)?;
    seal::request(team, reach, &config, caller, &lead, &request)?;
    let judge = verify::judge(team, &config, &me, false)?;
    let warned = Cell::new(false);
    let answer = watch.wait(deadline, |message, structured| {
        let Structured::PermissionResponse(response) = structured else {
            return false;
        };
        if response.request_id != request_id {
            return false;
        }
        if judge.verdict(message) == Signature::Verified {
            return true;
        }
        if !warned.replace(true) {
            forged(&message.id());
        }
        false
    })?;
    let answer = answer.and_then(|(_, structured)| match structured {
        Structured::PermissionResponse(r) if r.subtype == PermissionVerdict::Success => {
            let input = r
                .response
                .and_then(|grant| grant.updated_input)
                .map_or(Value::Null, Value::Object);
            Some(Answer::Allowed(input))
        }
        Structured::PermissionResponse(r) => Some(Answer::Denied(
            r.error.unwrap_or_else(|| "Permission denied".to_owned()),
        )),
        _ => None,
    });
    Ok((request_id, answer))
}
