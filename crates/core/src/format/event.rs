//! One line of a team's event stream (docs/ARCHITECTURE.md, "Activity and events"): a member's
//! process state or activity changed, a decision was asked or answered, or the whole team ended.
//! `swarm events`, `top` and the alerts read the same lines.

use serde::{Deserialize, Serialize};

use crate::format::config::State;

/// What an agent is doing, beside its process state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Activity {
    /// Launched; no sign yet of a turn or of a prompt.
    Starting,
    /// In a turn: output or tool calls in the last few seconds.
    Working,
    /// Its turn is over; it waits for input.
    Idle,
    /// It waits on a decision: a permission, a plan, or a question to the person.
    NeedsYou,
    /// No output and no message for `stall_after` while it holds a task or owes an answer.
    Stalled,
}

impl Activity {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Starting => "starting",
            Self::Working => "working",
            Self::Idle => "idle",
            Self::NeedsYou => "needs-you",
            Self::Stalled => "stalled",
        }
    }
}

/// The `budget` of a [`What::Cost`] that is the whole team's.
pub const COST_TEAM: &str = "team";

/// One event: when, whose (none for the whole team), and what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// RFC 3339, milliseconds, UTC.
    pub at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
    #[serde(flatten)]
    pub what: What,
}

/// What happened. `kind` names it on the line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum What {
    /// The member's process state changed (config.json's `state`).
    Process {
        state: State,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from: Option<State>,
    },
    /// The member's activity changed; `why` says what it waits on or what was seen.
    Activity {
        state: Activity,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from: Option<Activity>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        why: Option<String>,
    },
    /// The member asked for a decision: a permission (`tool`), a plan, a shutdown.
    Asked {
        #[serde(rename = "requestId")]
        request_id: String,
        what: String,
    },
    /// A decision was given.
    Answered {
        #[serde(rename = "requestId")]
        request_id: String,
        allowed: bool,
        by: String,
    },
    /// The member kept failing: its restart policy would start it again, but it has already
    /// been restarted `restarts` times in a row, so its ending stands (docs/ARCHITECTURE.md,
    /// "Restart policies").
    GaveUp { restarts: u32 },
    /// A budget reached a threshold: `percent` (80, then 100) of `budget` (a member's name, or
    /// `team`), `spent` of `limit` as a person reads them (docs/ARCHITECTURE.md, "Costs and
    /// budgets").
    Cost {
        percent: u32,
        budget: String,
        spent: String,
        limit: String,
    },
    /// A fenced member's program asked its proxy for `target` (`host:port`), which its
    /// allow-list does not name: refused (docs/ARCHITECTURE.md, "Fencing members"). Told once a
    /// run for each target.
    NetRefused { target: String },
    /// Every member of the team has ended.
    TeamDone,
}

impl Event {
    /// What happened, for a person: `needs-you (permission (Bash)) ← working`, `asks Bash
    /// (perm-1)`, `team done`.
    pub fn summary(&self) -> String {
        let from = |from: Option<&str>| from.map(|f| format!(" ← {f}")).unwrap_or_default();
        match &self.what {
            What::Process { state, from: was } => {
                format!("{}{}", state.as_str(), from(was.map(State::as_str)))
            }
            What::Activity {
                state,
                from: was,
                why,
            } => {
                let why = why.as_ref().map(|w| format!(" ({w})")).unwrap_or_default();
                format!("{}{why}{}", state.as_str(), from(was.map(Activity::as_str)))
            }
            What::Asked { request_id, what } => format!("asks {what} ({request_id})"),
            What::Answered {
                request_id,
                allowed,
                by,
            } => {
                let verdict = if *allowed { "allowed" } else { "denied" };
                format!("{verdict} {request_id} by {by}")
            }
            What::GaveUp { restarts } => {
                format!("gave up: failed again after {restarts} restarts in a row")
            }
            What::Cost {
                percent,
                budget,
                spent,
                limit,
            } => {
                let whose = if budget == COST_TEAM {
                    "the team's".to_owned()
                } else {
                    format!("{budget}'s")
                };
                format!("cost {percent}% of {whose} budget ({spent} of {limit})")
            }
            What::NetRefused { target } => {
                format!("network refused: {target} is not on its allow-list")
            }
            What::TeamDone => "team done".to_owned(),
        }
    }

    /// `08:01:02 bob needs-you (permission (Bash)) ← working`: the time of day (UTC) it
    /// happened, whose, and what.
    pub fn line(&self) -> String {
        let time = self.at.get(11..19).unwrap_or(&self.at);
        match &self.member {
            Some(member) => format!("{time} {member} {}", self.summary()),
            None => format!("{time} {}", self.summary()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_one_flat_json_object() {
        let event = Event {
            at: "2026-11-26T08:00:00.000Z".into(),
            member: Some("bob".into()),
            what: What::Activity {
                state: Activity::NeedsYou,
                from: Some(Activity::Working),
                why: Some("permission (Bash)".into()),
            },
        };
        let line = serde_json::to_string(&event).unwrap();
        assert_eq!(
            line,
            r#"{"at":"2026-11-26T08:00:00.000Z","member":"bob","kind":"activity","state":"needs-you","from":"working","why":"permission (Bash)"}"#
        );
        assert_eq!(serde_json::from_str::<Event>(&line).unwrap(), event);
        assert_eq!(
            event.line(),
            "08:00:00 bob needs-you (permission (Bash)) ← working"
        );
        let done = r#"{"at":"2026-11-26T08:00:00.000Z","kind":"team-done"}"#;
        let parsed: Event = serde_json::from_str(done).unwrap();
        assert_eq!(parsed.what, What::TeamDone);
        assert_eq!(serde_json::to_string(&parsed).unwrap(), done);
        assert_eq!(parsed.line(), "08:00:00 team done");
        let cost = r#"{"at":"2026-11-26T08:00:00.000Z","member":"bob","kind":"cost","percent":80,"budget":"bob","spent":"$0.40","limit":"$0.50"}"#;
        let parsed: Event = serde_json::from_str(cost).unwrap();
        assert_eq!(serde_json::to_string(&parsed).unwrap(), cost);
        assert_eq!(
            parsed.line(),
            "08:00:00 bob cost 80% of bob's budget ($0.40 of $0.50)"
        );
    }
}
