//! Structured messages: a JSON object serialised into an inbox message's `text`, with Claude Code's
//! field names (docs/ARCHITECTURE.md, "Messages").

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Structured {
    ShutdownRequest(ShutdownRequest),
    ShutdownApproved(ShutdownApproved),
    ShutdownRejected(ShutdownRejected),
    PlanApprovalRequest(PlanApprovalRequest),
    PlanApprovalResponse(PlanApprovalResponse),
    IdleNotification(IdleNotification),
    TaskAssignment(TaskAssignment),
    TaskNotification(TaskNotification),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ShutdownRequest {
    pub(crate) request_id: String,
    pub(crate) from: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<String>,
    pub(crate) timestamp: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ShutdownApproved {
    pub(crate) request_id: String,
    pub(crate) from: String,
    pub(crate) timestamp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) pane_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) backend_type: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ShutdownRejected {
    pub(crate) request_id: String,
    pub(crate) from: String,
    pub(crate) reason: String,
    pub(crate) timestamp: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PlanApprovalRequest {
    pub(crate) from: String,
    pub(crate) timestamp: String,
    pub(crate) plan_file_path: String,
    pub(crate) plan_content: String,
    pub(crate) request_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PlanApprovalResponse {
    pub(crate) request_id: String,
    pub(crate) approved: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) feedback: Option<String>,
    pub(crate) timestamp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) permission_mode: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct IdleNotification {
    pub(crate) from: String,
    pub(crate) timestamp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) idle_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) result: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) completed_task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) completed_status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) failure_reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskAssignment {
    pub(crate) task_id: String,
    pub(crate) subject: String,
    pub(crate) description: String,
    pub(crate) assigned_by: String,
    pub(crate) timestamp: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskNotification {
    /// The member's agent id, `<name>@<team>`.
    pub(crate) task_id: String,
    pub(crate) status: TaskStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) exit_code: Option<i32>,
    pub(crate) summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) output_file: Option<String>,
    pub(crate) duration_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) worktree_path: Option<String>,
    /// Why swarm ended the program: `stop`, `timeout`, `shutdown`, `hangup`, `signal`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<String>,
    pub(crate) timestamp: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TaskStatus {
    Completed,
    Failed,
    Killed,
}

impl Structured {
    /// Reads `text` as a protocol message. Plain text, JSON without a known `type`, and a known
    /// type with missing fields all give `None`; [`Structured::classify`] tells these apart.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        match Self::classify(text) {
            Classified::Structured(message) => Some(*message),
            Classified::Plain | Classified::Malformed { .. } => None,
        }
    }

    pub(crate) fn classify(text: &str) -> Classified {
        let trimmed = text.trim_start();
        if !trimmed.starts_with('{') {
            return Classified::Plain;
        }
        let Ok(Value::Object(object)) = serde_json::from_str::<Value>(trimmed) else {
            return Classified::Plain;
        };
        let Some(kind) = object.get("type").and_then(Value::as_str) else {
            return Classified::Plain;
        };
        if !KINDS.contains(&kind) {
            return Classified::Plain;
        }
        match serde_json::from_value(Value::Object(object.clone())) {
            Ok(message) => Classified::Structured(Box::new(message)),
            Err(err) => Classified::Malformed {
                kind: kind.to_owned(),
                reason: err.to_string(),
            },
        }
    }

    pub(crate) fn to_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Self::ShutdownRequest(_) => "shutdown_request",
            Self::ShutdownApproved(_) => "shutdown_approved",
            Self::ShutdownRejected(_) => "shutdown_rejected",
            Self::PlanApprovalRequest(_) => "plan_approval_request",
            Self::PlanApprovalResponse(_) => "plan_approval_response",
            Self::IdleNotification(_) => "idle_notification",
            Self::TaskAssignment(_) => "task_assignment",
            Self::TaskNotification(_) => "task_notification",
        }
    }

    /// The request this message starts or answers, if any.
    pub(crate) fn request_id(&self) -> Option<&str> {
        match self {
            Self::ShutdownRequest(m) => Some(&m.request_id),
            Self::ShutdownApproved(m) => Some(&m.request_id),
            Self::ShutdownRejected(m) => Some(&m.request_id),
            Self::PlanApprovalRequest(m) => Some(&m.request_id),
            Self::PlanApprovalResponse(m) => Some(&m.request_id),
            _ => None,
        }
    }

    /// Messages only the lead may send.
    pub(crate) fn lead_only(&self) -> bool {
        matches!(
            self,
            Self::ShutdownRequest(_) | Self::PlanApprovalResponse(_) | Self::TaskAssignment(_)
        )
    }

    /// Messages a teammate (or its supervisor) sends to the lead, and to no one else.
    pub(crate) fn to_lead_only(&self) -> bool {
        matches!(
            self,
            Self::ShutdownApproved(_)
                | Self::ShutdownRejected(_)
                | Self::PlanApprovalRequest(_)
                | Self::IdleNotification(_)
                | Self::TaskNotification(_)
        )
    }

    /// One line for people: `shutdown_request shutdown-…@bob: wrap up`.
    pub(crate) fn describe(&self) -> String {
        let kind = self.kind();
        match self {
            Self::ShutdownRequest(m) => {
                with_detail(format!("{kind} {}", m.request_id), m.reason.as_deref())
            }
            Self::ShutdownApproved(m) => format!("{kind} {}", m.request_id),
            Self::ShutdownRejected(m) => format!("{kind} {}: {}", m.request_id, m.reason),
            Self::PlanApprovalRequest(m) => with_detail(
                format!("{kind} {}", m.request_id),
                Some(&crate::base::text::derive_summary(&m.plan_content)),
            ),
            Self::PlanApprovalResponse(m) => {
                let verdict = if m.approved { "approved" } else { "rejected" };
                let mut line = format!("{kind} {} {verdict}", m.request_id);
                if let Some(mode) = &m.permission_mode {
                    line = format!("{line} (permission mode {mode})");
                }
                with_detail(line, m.feedback.as_deref())
            }
            Self::IdleNotification(m) => with_detail(
                format!("{kind} {}", m.idle_reason.as_deref().unwrap_or("idle")),
                m.summary.as_deref().or(m.result.as_deref()),
            ),
            Self::TaskAssignment(m) => format!("{kind} {}: {}", m.task_id, m.subject),
            Self::TaskNotification(m) => format!("{kind} {}: {}", m.task_id, m.summary),
        }
    }
}

impl Structured {
    /// What happened, in words, for people watching a team (the dashboard's feed): "alice asks to
    /// approve a plan", "bob approved shutdown". `from` sent it to `to`.
    pub(crate) fn in_words(&self, from: &str, to: &str) -> String {
        match self {
            Self::ShutdownRequest(m) => with_detail(
                format!("{from} asks {to} to shut down"),
                m.reason.as_deref(),
            ),
            Self::ShutdownApproved(_) => format!("{from} approved shutdown"),
            Self::ShutdownRejected(m) => format!("{from} rejected shutdown: {}", m.reason),
            Self::PlanApprovalRequest(m) => with_detail(
                format!("{from} asks to approve a plan"),
                Some(&crate::base::text::derive_summary(&m.plan_content)),
            ),
            Self::PlanApprovalResponse(m) => {
                let verdict = if m.approved { "approved" } else { "rejected" };
                with_detail(
                    format!("{from} {verdict} {to}'s plan"),
                    m.feedback.as_deref(),
                )
            }
            Self::IdleNotification(m) => with_detail(
                format!("{from} is idle"),
                m.summary.as_deref().or(m.result.as_deref()),
            ),
            Self::TaskAssignment(m) => {
                format!("{from} assigned task {} to {to}: {}", m.task_id, m.subject)
            }
            Self::TaskNotification(m) => {
                let status = match m.status {
                    TaskStatus::Completed => "completed",
                    TaskStatus::Failed => "failed",
                    TaskStatus::Killed => "was killed",
                };
                with_detail(
                    format!("{from}: task {} {status}", m.task_id),
                    Some(&m.summary),
                )
            }
        }
    }
}

fn with_detail(head: String, detail: Option<&str>) -> String {
    match detail {
        Some(detail) if !detail.is_empty() => format!("{head}: {detail}"),
        _ => head,
    }
}

const KINDS: [&str; 8] = [
    "shutdown_request",
    "shutdown_approved",
    "shutdown_rejected",
    "plan_approval_request",
    "plan_approval_response",
    "idle_notification",
    "task_assignment",
    "task_notification",
];

pub(crate) enum Classified {
    Plain,
    Structured(Box<Structured>),
    /// Claims a protocol `type` but does not have its fields.
    Malformed {
        kind: String,
        reason: String,
    },
}

/// `shutdown-<ms>@<target>`
pub(crate) fn shutdown_request_id(now_ms: u64, target: &str) -> String {
    format!("shutdown-{now_ms}@{target}")
}

/// `plan_approval-<ms>@<name>@<team>`
pub(crate) fn plan_request_id(now_ms: u64, name: &str, team: &str) -> String {
    format!("plan_approval-{now_ms}@{name}@{team}")
}

/// The teammate a request id names: the target of a shutdown request, the submitter of a plan.
pub(crate) fn request_subject(request_id: &str) -> Option<&str> {
    let (prefix, rest) = request_id.split_once('@')?;
    let millis = prefix
        .strip_prefix("shutdown-")
        .or_else(|| prefix.strip_prefix("plan_approval-"))?;
    if millis.is_empty() || !millis.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let subject = if prefix.starts_with("plan_approval-") {
        rest.split_once('@').map_or(rest, |(name, _team)| name)
    } else {
        rest
    };
    (!subject.is_empty()).then_some(subject)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_names_are_claude_codes() {
        let message = Structured::PlanApprovalResponse(PlanApprovalResponse {
            request_id: "plan_approval-1@bob@t".into(),
            approved: true,
            feedback: None,
            timestamp: "2026-11-22T08:43:40.970Z".into(),
            permission_mode: Some("acceptEdits".into()),
        });
        let text = message.to_text();
        assert_eq!(
            text,
            r#"{"type":"plan_approval_response","requestId":"plan_approval-1@bob@t","approved":true,"timestamp":"2026-11-22T08:43:40.970Z","permissionMode":"acceptEdits"}"#
        );
        assert_eq!(Structured::parse(&text), Some(message));
    }

    #[test]
    fn task_notification_serialises_status_in_lower_case() {
        let text = Structured::TaskNotification(TaskNotification {
            task_id: "bob@t".into(),
            status: TaskStatus::Killed,
            exit_code: Some(143),
            summary: "bob was stopped".into(),
            output_file: None,
            duration_ms: 5,
            worktree_path: None,
            reason: Some("stop".into()),
            timestamp: "t".into(),
        })
        .to_text();
        assert!(text.contains(r#""status":"killed""#), "{text}");
        assert!(
            text.contains(r#""exitCode":143"#) && text.contains(r#""durationMs":5"#),
            "{text}"
        );
    }

    #[test]
    fn plain_text_and_foreign_json_are_not_structured() {
        assert!(matches!(Structured::classify("hello"), Classified::Plain));
        assert!(matches!(
            Structured::classify(r#"{"type":"note"}"#),
            Classified::Plain
        ));
        assert!(matches!(
            Structured::classify("{not json"),
            Classified::Plain
        ));
        assert!(matches!(
            Structured::classify(r#"{"type":"shutdown_request"}"#),
            Classified::Malformed { .. }
        ));
    }

    #[test]
    fn request_ids_name_their_subject() {
        assert_eq!(shutdown_request_id(5, "bob"), "shutdown-5@bob");
        assert_eq!(plan_request_id(5, "bob", "t"), "plan_approval-5@bob@t");
        assert_eq!(request_subject("shutdown-5@bob"), Some("bob"));
        assert_eq!(request_subject("plan_approval-5@bob@t"), Some("bob"));
        assert_eq!(request_subject("shutdown-x@bob"), None);
        assert_eq!(request_subject("nonsense"), None);
        assert_eq!(request_subject("shutdown-5@"), None);
    }
}
