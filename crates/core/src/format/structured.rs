//! Structured messages: a JSON object serialised into an inbox message's `text`, with Claude Code's
//! field names (docs/ARCHITECTURE.md, "Messages"). Every type Claude Code 2.1.332 writes into a
//! mailbox is here, in its shape and casing (its permission messages in snake case, the others in
//! camel case), and swarm's own `task_notification`. Fields a type may carry beyond those Claude
//! Code names (a permission request's MCP skill fields) are kept as they came.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Structured {
    ShutdownRequest(ShutdownRequest),
    ShutdownApproved(ShutdownApproved),
    ShutdownRejected(ShutdownRejected),
    PlanApprovalRequest(PlanApprovalRequest),
    PlanApprovalResponse(PlanApprovalResponse),
    IdleNotification(IdleNotification),
    TaskAssignment(TaskAssignment),
    TaskNotification(TaskNotification),
    PermissionRequest(PermissionRequest),
    PermissionResponse(PermissionResponse),
    SandboxPermissionRequest(SandboxPermissionRequest),
    SandboxPermissionResponse(SandboxPermissionResponse),
    ModeSetRequest(ModeSetRequest),
    TeamPermissionUpdate(TeamPermissionUpdate),
    TeammateTerminated(TeammateTerminated),
    TaskCompleted(TaskCompleted),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShutdownRequest {
    pub request_id: String,
    pub from: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub timestamp: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShutdownApproved {
    pub request_id: String,
    pub from: String,
    pub timestamp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pane_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend_type: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShutdownRejected {
    pub request_id: String,
    pub from: String,
    pub reason: String,
    pub timestamp: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanApprovalRequest {
    pub from: String,
    pub timestamp: String,
    pub plan_file_path: String,
    pub plan_content: String,
    pub request_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanApprovalResponse {
    pub request_id: String,
    pub approved: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    pub timestamp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
    /// The SHA-256 (hex) of the plan approved: a teammate that verifies the lead's messages
    /// accepts an approval only of the plan it submitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_digest: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IdleNotification {
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

impl IdleNotification {
    /// Why its turn ended: `available`, `interrupted` or `failed`.
    pub fn idle_reason(&self) -> Option<&str> {
        self.idle_reason.as_deref()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskAssignment {
    pub task_id: String,
    pub subject: String,
    pub description: String,
    pub assigned_by: String,
    pub timestamp: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskNotification {
    /// The member's agent id, `<name>@<team>`.
    pub task_id: String,
    pub status: TaskStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_file: Option<String>,
    pub duration_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree_path: Option<String>,
    /// Why swarm ended the program: `stop`, `timeout`, `shutdown`, `hangup`, `signal`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub timestamp: String,
}

/// A teammate asks the lead to let it use a tool (Claude Code in `default` or `plan` mode): to
/// the lead's inbox, `agent_id` its own name. In snake case, as Claude Code writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionRequest {
    /// `perm-<ms>-<random>`.
    pub request_id: String,
    /// The name of the teammate that asks.
    pub agent_id: String,
    pub tool_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The tool's input: for Bash, `{"command", "description"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    #[serde(default)]
    pub permission_suggestions: Vec<Value>,
    /// What else it carries (an MCP skill's fields), as it came.
    #[serde(flatten)]
    pub more: Map<String, Value>,
}

/// The lead's answer to a [`PermissionRequest`]: `subtype` `success` (allowed, perhaps with a
/// changed input and rules to remember) or `error` (refused, `error` says why).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionResponse {
    pub request_id: String,
    pub subtype: PermissionVerdict,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// What exactly was allowed; without it Claude Code takes the answer as "approved (unbound)".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_request: Option<ApprovedRequest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<PermissionGrant>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionVerdict {
    Success,
    Error,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovedRequest {
    pub(crate) tool_use_id: String,
    pub(crate) tool_name: String,
    pub(crate) input_digest: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionGrant {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_updates: Option<Vec<Value>>,
}

/// A teammate asks the lead to let it reach a network host (Claude Code's sandbox).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxPermissionRequest {
    pub request_id: String,
    /// The teammate's agent id, `<name>@<team>`.
    pub(crate) worker_id: String,
    pub worker_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) worker_color: Option<String>,
    pub host_pattern: HostPattern,
    /// Epoch milliseconds.
    pub(crate) created_at: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostPattern {
    pub host: String,
}

/// The lead's answer to a [`SandboxPermissionRequest`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxPermissionResponse {
    pub request_id: String,
    pub host: String,
    pub allow: bool,
    pub timestamp: String,
}

/// A request that a teammate change its permission mode. Claude Code 2.1.332 writes none and
/// drops every one it reads ("permission mode changes are never accepted from the inbox"); its
/// fields are kept as they came, `mode` and `from` read where present.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeSetRequest {
    #[serde(flatten)]
    pub(crate) fields: Map<String, Value>,
}

/// Permission rules for a teammate to take on. Claude Code 2.1.332 writes none and drops every
/// one it reads ("permission rules are never accepted from the inbox"); kept as it came.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamPermissionUpdate {
    #[serde(flatten)]
    pub(crate) fields: Map<String, Value>,
}

/// A teammate's pane died: Claude Code's lead puts this into its own inbox, in memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeammateTerminated {
    pub(crate) message: String,
}

/// A teammate finished a task (Claude Code reads and shows it; 2.1.332 has no writer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskCompleted {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) from: Option<String>,
    pub(crate) task_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) task_subject: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) timestamp: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
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

    pub fn classify(text: &str) -> Classified {
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
        let parsed = serde_json::from_value::<Self>(Value::Object(object.clone()))
            .map_err(|err| err.to_string())
            .and_then(|message| message.check().map(|()| message));
        match parsed {
            Ok(message) => Classified::Structured(Box::new(message)),
            Err(reason) => Classified::Malformed {
                kind: kind.to_owned(),
                reason,
            },
        }
    }

    /// What a type's fields alone cannot say, checked as Claude Code checks it.
    fn check(&self) -> Result<(), String> {
        match self {
            Self::PermissionResponse(m) if m.request_id.is_empty() => {
                Err("request_id must not be empty".to_owned())
            }
            Self::PermissionResponse(m)
                if m.subtype == PermissionVerdict::Error && m.error.is_none() =>
            {
                Err("an error response needs `error`".to_owned())
            }
            _ => Ok(()),
        }
    }

    pub fn to_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Self::ShutdownRequest(_) => "shutdown_request",
            Self::ShutdownApproved(_) => "shutdown_approved",
            Self::ShutdownRejected(_) => "shutdown_rejected",
            Self::PlanApprovalRequest(_) => "plan_approval_request",
            Self::PlanApprovalResponse(_) => "plan_approval_response",
            Self::IdleNotification(_) => "idle_notification",
            Self::TaskAssignment(_) => "task_assignment",
            Self::TaskNotification(_) => "task_notification",
            Self::PermissionRequest(_) => "permission_request",
            Self::PermissionResponse(_) => "permission_response",
            Self::SandboxPermissionRequest(_) => "sandbox_permission_request",
            Self::SandboxPermissionResponse(_) => "sandbox_permission_response",
            Self::ModeSetRequest(_) => "mode_set_request",
            Self::TeamPermissionUpdate(_) => "team_permission_update",
            Self::TeammateTerminated(_) => "teammate_terminated",
            Self::TaskCompleted(_) => "task_completed",
        }
    }

    /// The request this message starts or answers, if any.
    pub fn request_id(&self) -> Option<&str> {
        match self {
            Self::ShutdownRequest(m) => Some(&m.request_id),
            Self::ShutdownApproved(m) => Some(&m.request_id),
            Self::ShutdownRejected(m) => Some(&m.request_id),
            Self::PlanApprovalRequest(m) => Some(&m.request_id),
            Self::PlanApprovalResponse(m) => Some(&m.request_id),
            Self::PermissionRequest(m) => Some(&m.request_id),
            Self::PermissionResponse(m) => Some(&m.request_id),
            Self::SandboxPermissionRequest(m) => Some(&m.request_id),
            Self::SandboxPermissionResponse(m) => Some(&m.request_id),
            _ => None,
        }
    }

    /// Messages only the lead may send.
    pub(crate) fn lead_only(&self) -> bool {
        matches!(
            self,
            Self::ShutdownRequest(_)
                | Self::PlanApprovalResponse(_)
                | Self::TaskAssignment(_)
                | Self::PermissionResponse(_)
                | Self::SandboxPermissionResponse(_)
                | Self::ModeSetRequest(_)
                | Self::TeamPermissionUpdate(_)
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
                | Self::PermissionRequest(_)
                | Self::SandboxPermissionRequest(_)
                | Self::TaskCompleted(_)
                | Self::TeammateTerminated(_)
        )
    }

    /// One line for people: `shutdown_request shutdown-…@bob: wrap up`.
    pub fn describe(&self) -> String {
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
            Self::PermissionRequest(m) => format!(
                "{kind} {}: {}",
                m.request_id,
                asks_permission(&m.agent_id, m)
            ),
            Self::PermissionResponse(m) => match m.subtype {
                PermissionVerdict::Success => {
                    format!("{kind} {} allowed{}", m.request_id, granted(m))
                }
                PermissionVerdict::Error => with_detail(
                    format!("{kind} {} refused", m.request_id),
                    m.error.as_deref(),
                ),
            },
            Self::SandboxPermissionRequest(m) => format!(
                "{kind} {}: {} asks to reach {}",
                m.request_id, m.worker_name, m.host_pattern.host
            ),
            Self::SandboxPermissionResponse(m) => format!(
                "{kind} {}: {} {}",
                m.request_id,
                m.host,
                if m.allow { "allowed" } else { "refused" }
            ),
            Self::ModeSetRequest(m) => match text_field(&m.fields, "mode") {
                Some(mode) => format!("{kind}: permission mode {mode}"),
                None => kind.to_owned(),
            },
            Self::TeamPermissionUpdate(m) => match text_field(&m.fields, "toolName") {
                Some(tool) => format!("{kind}: rules for {tool}"),
                None => kind.to_owned(),
            },
            Self::TeammateTerminated(m) => format!("{kind}: {}", m.message),
            Self::TaskCompleted(m) => {
                with_detail(format!("{kind} {}", m.task_id), m.task_subject.as_deref())
            }
        }
    }
}

impl Structured {
    /// What happened, in words, for people watching a team (the dashboard's feed): "alice asks to
    /// approve a plan", "bob approved shutdown". `from` sent it to `to`.
    pub fn in_words(&self, from: &str, to: &str) -> String {
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
            Self::PermissionRequest(m) => asks_permission(from, m),
            Self::PermissionResponse(m) => match m.subtype {
                PermissionVerdict::Success => {
                    format!(
                        "{from} allowed {to}'s request {}{}",
                        m.request_id,
                        granted(m)
                    )
                }
                PermissionVerdict::Error => with_detail(
                    format!("{from} refused {to}'s request {}", m.request_id),
                    m.error.as_deref(),
                ),
            },
            Self::SandboxPermissionRequest(m) => {
                format!("{from} asks permission to reach {}", m.host_pattern.host)
            }
            Self::SandboxPermissionResponse(m) => format!(
                "{from} {} {to} to reach {}",
                if m.allow { "allowed" } else { "refused" },
                m.host
            ),
            Self::ModeSetRequest(m) => {
                let asked = match text_field(&m.fields, "mode") {
                    Some(mode) => format!("{from} asks {to} to switch to permission mode {mode}"),
                    None => format!("{from} asks {to} to switch permission mode"),
                };
                format!("{asked} (Claude Code takes no mode from an inbox)")
            }
            Self::TeamPermissionUpdate(m) => {
                let sent = match text_field(&m.fields, "toolName") {
                    Some(tool) => format!("{from} sends {to} permission rules for {tool}"),
                    None => format!("{from} sends {to} permission rules"),
                };
                format!("{sent} (Claude Code takes no rules from an inbox)")
            }
            Self::TeammateTerminated(m) => format!("{from}: {}", m.message),
            Self::TaskCompleted(m) => with_detail(
                format!("{from} completed task {}", m.task_id),
                m.task_subject.as_deref(),
            ),
        }
    }
}

/// "`who` asks permission to use Bash: echo hi > x": what the tool would do, from the field of its
/// input that says it (a command, a path, an address), else the request's description.
fn asks_permission(who: &str, request: &PermissionRequest) -> String {
    with_detail(
        format!("{who} asks permission to use {}", request.tool_name),
        request.what().as_deref(),
    )
}

impl PermissionRequest {
    /// What the tool would do, on one short line: the input's command, path, URL, pattern or
    /// query, else the description; cut short however long the input is.
    pub fn what(&self) -> Option<String> {
        const SAYS_WHAT: [&str; 7] = [
            "command",
            "file_path",
            "notebook_path",
            "path",
            "url",
            "pattern",
            "query",
        ];
        let input = self.input.as_ref().and_then(Value::as_object);
        SAYS_WHAT
            .iter()
            .find_map(|key| input.and_then(|input| text_field(input, key)))
            .or(self.description.as_deref())
            .map(crate::base::text::derive_summary)
    }
}

/// What an allowed permission request came with: rules to keep. `updated_input` says nothing by
/// itself: every answer carries the input the tool is to run with, changed or not (Claude Code's
/// own lead and `swarm permission allow` send the request's input back).
fn granted(response: &PermissionResponse) -> String {
    let Some(grant) = &response.response else {
        return String::new();
    };
    let mut with = Vec::new();
    match grant.permission_updates.as_ref().map(Vec::len) {
        Some(0) | None => {}
        Some(1) => with.push("a rule to keep".to_owned()),
        Some(n) => with.push(format!("{n} rules to keep")),
    }
    if with.is_empty() {
        String::new()
    } else {
        format!(" with {}", with.join(" and "))
    }
}

/// A field of `object` that holds text.
fn text_field<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    object.get(key).and_then(Value::as_str)
}

fn with_detail(head: String, detail: Option<&str>) -> String {
    match detail {
        Some(detail) if !detail.is_empty() => format!("{head}: {detail}"),
        _ => head,
    }
}

const KINDS: [&str; 16] = [
    "shutdown_request",
    "shutdown_approved",
    "shutdown_rejected",
    "plan_approval_request",
    "plan_approval_response",
    "idle_notification",
    "task_assignment",
    "task_notification",
    "permission_request",
    "permission_response",
    "sandbox_permission_request",
    "sandbox_permission_response",
    "mode_set_request",
    "team_permission_update",
    "teammate_terminated",
    "task_completed",
];

pub enum Classified {
    Plain,
    Structured(Box<Structured>),
    /// Claims a protocol `type` but does not have its fields.
    Malformed {
        kind: String,
        reason: String,
    },
}

/// `shutdown-<ms>@<target>`
pub fn shutdown_request_id(now_ms: u64, target: &str) -> String {
    format!("shutdown-{now_ms}@{target}")
}

/// `plan_approval-<ms>@<name>@<team>`
pub fn plan_request_id(now_ms: u64, name: &str, team: &str) -> String {
    format!("plan_approval-{now_ms}@{name}@{team}")
}

/// The teammate a request id names: the target of a shutdown request, the submitter of a plan.
pub fn request_subject(request_id: &str) -> Option<&str> {
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
            plan_digest: None,
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

    /// Each type as Claude Code 2.1.332 writes it (the permission request as a teammate in
    /// default mode wrote it in the conformance tier; the others in its builders' key order):
    /// decoded, then written back byte for byte, and shown in words.
    const WRITTEN_BY_CLAUDE_CODE: [(&str, &str, &str, &str); 12] = [
        (
            r#"{"type":"permission_request","request_id":"perm-1795654444711-vdysyix","agent_id":"worker","tool_name":"Bash","tool_use_id":"toolu_standin00000000000000012459","description":"write perm.txt","input":{"command":"echo PERM-H > perm.txt","description":"write perm.txt"},"permission_suggestions":[{"type":"addDirectories","directories":["/tmp/swDhJzyU/work"],"destination":"session"}]}"#,
            "permission_request perm-1795654444711-vdysyix: worker asks permission to use Bash: echo PERM-H > perm.txt",
            "worker asks permission to use Bash: echo PERM-H > perm.txt",
            "team-lead",
        ),
        (
            r#"{"type":"permission_response","request_id":"perm-1-a","subtype":"success","tool_use_id":"toolu_01AbC","approved_request":{"tool_use_id":"toolu_01AbC","tool_name":"Bash","input_digest":"9f86d0"},"response":{"updated_input":{"command":"echo ok"},"permission_updates":[{"type":"addRules"}]}}"#,
            "permission_response perm-1-a allowed with a rule to keep",
            "team-lead allowed worker's request perm-1-a with a rule to keep",
            "worker",
        ),
        (
            r#"{"type":"permission_response","request_id":"perm-1-a","subtype":"error","tool_use_id":"toolu_01AbC","error":"Permission denied"}"#,
            "permission_response perm-1-a refused: Permission denied",
            "team-lead refused worker's request perm-1-a: Permission denied",
            "worker",
        ),
        (
            r#"{"type":"sandbox_permission_request","requestId":"sandbox-1","workerId":"worker@conf","workerName":"worker","workerColor":"blue","hostPattern":{"host":"example.com"},"createdAt":1795650000000}"#,
            "sandbox_permission_request sandbox-1: worker asks to reach example.com",
            "worker asks permission to reach example.com",
            "team-lead",
        ),
        (
            r#"{"type":"sandbox_permission_response","requestId":"sandbox-1","host":"example.com","allow":false,"timestamp":"2026-11-25T10:00:00.000Z"}"#,
            "sandbox_permission_response sandbox-1: example.com refused",
            "team-lead refused worker to reach example.com",
            "worker",
        ),
        (
            r#"{"type":"plan_approval_response","requestId":"plan_approval-1@worker@conf","approved":true,"timestamp":"2026-11-25T10:00:00.000Z","permissionMode":"default","planDigest":"2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"}"#,
            "plan_approval_response plan_approval-1@worker@conf approved (permission mode default)",
            "team-lead approved worker's plan",
            "worker",
        ),
        (
            r#"{"type":"task_completed","from":"worker","taskId":"3","taskSubject":"Write the report","timestamp":"2026-11-25T10:00:00.000Z"}"#,
            "task_completed 3: Write the report",
            "worker completed task 3: Write the report",
            "team-lead",
        ),
        (
            r#"{"type":"teammate_terminated","message":"worker's pane closed"}"#,
            "teammate_terminated: worker's pane closed",
            "worker: worker's pane closed",
            "team-lead",
        ),
        (
            r#"{"type":"mode_set_request","mode":"acceptEdits","from":"team-lead"}"#,
            "mode_set_request: permission mode acceptEdits",
            "team-lead asks worker to switch to permission mode acceptEdits (Claude Code takes no mode from an inbox)",
            "worker",
        ),
        (
            r#"{"type":"team_permission_update","permissionUpdate":{"type":"addRules","rules":[{"toolName":"Bash"}],"behavior":"allow","destination":"session"},"directoryPath":"/w","toolName":"Bash"}"#,
            "team_permission_update: rules for Bash",
            "team-lead sends worker permission rules for Bash (Claude Code takes no rules from an inbox)",
            "worker",
        ),
        (
            r#"{"type":"idle_notification","from":"worker","timestamp":"2026-11-25T10:00:00.000Z","idleReason":"failed","summary":"stopped","failureReason":"API error"}"#,
            "idle_notification failed: stopped",
            "worker is idle: stopped",
            "team-lead",
        ),
        (
            r#"{"type":"task_assignment","taskId":"1","subject":"Write the report","description":"all of it","assignedBy":"worker","timestamp":"2026-11-25T10:00:00.000Z"}"#,
            "task_assignment 1: Write the report",
            "team-lead assigned task 1 to worker: Write the report",
            "worker",
        ),
    ];

    #[test]
    fn every_type_claude_code_writes_is_known_in_its_own_shape() {
        for (text, described, words, to) in WRITTEN_BY_CLAUDE_CODE {
            let message = Structured::parse(text).unwrap_or_else(|| panic!("not known: {text}"));
            assert_eq!(message.to_text(), text, "written back differently");
            assert_eq!(message.describe(), described, "{text}");
            let from = if to == "worker" {
                "team-lead"
            } else {
                "worker"
            };
            assert_eq!(message.in_words(from, to), words, "{text}");
        }
    }

    #[test]
    fn a_permission_request_keeps_what_else_it_carries() {
        let text = r#"{"type":"permission_request","request_id":"perm-2-b","agent_id":"worker","tool_name":"mcp__s__t","tool_use_id":"toolu_2","description":"run t","input":{},"permission_suggestions":[],"skill_name":"pdf","skill_path":"/s/pdf"}"#;
        let Some(Structured::PermissionRequest(request)) = Structured::parse(text) else {
            panic!("not a permission request");
        };
        assert_eq!(request.more["skill_name"], "pdf");
        assert_eq!(Structured::PermissionRequest(request).to_text(), text);
        // Without an input that says what, the description does.
        let bare = r#"{"type":"permission_request","request_id":"perm-3","agent_id":"w","tool_name":"Skill","description":"use the pdf skill"}"#;
        assert_eq!(
            Structured::parse(bare).unwrap().in_words("w", "team-lead"),
            "w asks permission to use Skill: use the pdf skill"
        );
    }

    #[test]
    fn claude_codes_malformed_frames_are_malformed() {
        for text in [
            r#"{"type":"permission_response","request_id":"perm-1","subtype":"error"}"#,
            r#"{"type":"permission_response","request_id":"","subtype":"success"}"#,
            r#"{"type":"permission_response","request_id":"perm-1","subtype":"maybe"}"#,
            r#"{"type":"permission_request","request_id":"perm-1","agent_id":"w"}"#,
            r#"{"type":"sandbox_permission_request","requestId":"s","workerName":"w"}"#,
            r#"{"type":"teammate_terminated"}"#,
            r#"{"type":"task_completed","from":"w"}"#,
        ] {
            assert!(
                matches!(Structured::classify(text), Classified::Malformed { .. }),
                "{text}"
            );
        }
        // A type no one knows stays text.
        assert!(matches!(
            Structured::classify(r#"{"type":"artifact_replies_yielded","n":1}"#),
            Classified::Plain
        ));
    }
}
