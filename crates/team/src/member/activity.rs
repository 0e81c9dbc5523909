//! What a member is doing, from the signals its program gives (docs/ARCHITECTURE.md, "Activity and
//! events"): Claude Code's hooks, its screen, the decisions it waits on, the work it holds. Every
//! change is recorded through `store::activity::record`, the one place that dedupes it and appends
//! its event.

use regex::Regex;
use serde_json::Value;

use crate::base::clock;
use crate::base::screen::Screen;
use crate::error::Result;
use crate::format::config::TeamConfig;
use crate::format::event::Activity;
use crate::format::structured::Structured;
use crate::member::permission::AskFeed;
use crate::store::activity::{self, Expected};
use crate::store::paths::CodexPaths;
use crate::store::tasks::TaskList;
use crate::store::team::Team;

/// The activity a Claude Code hook's input tells, with why; `None` for an event that tells none
/// (it changes nothing). Read from Claude Code 2.1.332: every hook's input carries
/// `hook_event_name`; tool events `tool_name`; `Notification` its `notification_type` and
/// `message`.
pub fn from_claude_hook(input: &Value) -> Option<(Activity, String)> {
    let field = |key: &str| input.get(key).and_then(Value::as_str).unwrap_or_default();
    let tool = || format!("{} ({})", "tool", field("tool_name"));
    Some(match field("hook_event_name") {
        "SessionStart" => (Activity::Idle, "session started".to_owned()),
        "UserPromptSubmit" => (Activity::Working, "prompt".to_owned()),
        "PreToolUse" | "PostToolUse" | "PostToolUseFailure" => (Activity::Working, tool()),
        "PermissionRequest" => (Activity::NeedsYou, waits_for_permission(field("tool_name"))),
        "Notification" => match field("notification_type") {
            "permission_prompt" | "elicitation_dialog" => {
                (Activity::NeedsYou, field("message").to_owned())
            }
            "idle_prompt" => (Activity::Idle, field("message").to_owned()),
            _ => return None,
        },
        "Stop" => (Activity::Idle, "turn ended".to_owned()),
        "StopFailure" => (Activity::Idle, "turn failed".to_owned()),
        _ => return None,
    })
}

/// The activity a Gemini CLI hook's input tells, with why; `None` for an event that tells none.
/// Read from Gemini CLI 0.61.0: every hook's input carries `hook_event_name`; tool events
/// `tool_name`; `Notification` its `notification_type` (`ToolPermission` when an approval dialog
/// opens) and `message`.
pub fn from_gemini_hook(input: &Value) -> Option<(Activity, String)> {
    let field = |key: &str| input.get(key).and_then(Value::as_str).unwrap_or_default();
    Some(match field("hook_event_name") {
        "SessionStart" => (Activity::Idle, "session started".to_owned()),
        "BeforeAgent" => (Activity::Working, "prompt".to_owned()),
        "BeforeTool" | "AfterTool" => (Activity::Working, format!("tool ({})", field("tool_name"))),
        "Notification" if field("notification_type") == "ToolPermission" => {
            (Activity::NeedsYou, field("message").to_owned())
        }
        "AfterAgent" => (Activity::Idle, "turn ended".to_owned()),
        _ => return None,
    })
}

/// The activity Codex's `notify` program is told, with why: the JSON of its last argument
/// (Codex 0.169.0: `{"type":"agent-turn-complete","thread-id",…}`, at each turn's end).
pub fn from_codex_notify(payload: &Value) -> Option<(Activity, String)> {
    (payload.get("type").and_then(Value::as_str) == Some("agent-turn-complete"))
        .then(|| (Activity::Idle, "turn ended".to_owned()))
}

/// Whose signal a hook's input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookProgram {
    Claude,
    Codex,
    Gemini,
}

/// Records what a hook's input (a notify program's argument, for Codex) tells of `member`:
/// `false` when it tells nothing new. A session's start says idle only while nothing else has
/// been seen: a teammate may already be on the prompt waiting in its inbox by the time the hook
/// runs.
pub fn record_hook(team: &Team, member: &str, program: HookProgram, input: &Value) -> Result<bool> {
    let told = match program {
        HookProgram::Claude => from_claude_hook(input),
        HookProgram::Codex => from_codex_notify(input),
        HookProgram::Gemini => from_gemini_hook(input),
    };
    let Some((state, why)) = told else {
        return Ok(false);
    };
    let expected = if input.get("hook_event_name").and_then(Value::as_str) == Some("SessionStart") {
        Expected::Was(Some(Activity::Starting))
    } else {
        Expected::Any
    };
    activity::record(team.paths(), member, state, Some(&why), expected)
}

/// Records the session Codex's turn was in as `member`'s `sessionId`, which `codex resume` takes
/// up (docs/ARCHITECTURE.md, "Resuming a team"), when it is new and its rollout is in `codex`'s
/// folder: a thread without one is not the person's conversation (Codex 0.169.0 tells `notify`
/// of the thread that names the conversation too, and writes that one no rollout). `false` when
/// the turn is not the member's conversation's, so it tells nothing of its activity either.
pub fn record_codex_session(
    team: &Team,
    member: &str,
    payload: &Value,
    codex: Option<&CodexPaths>,
) -> Result<bool> {
    let Some(thread) = payload.get("thread-id").and_then(Value::as_str) else {
        return Ok(true);
    };
    let config = team.load()?;
    if config.member(member).and_then(|m| m.session_id.as_deref()) == Some(thread) {
        return Ok(true);
    }
    if !codex.is_some_and(|codex| codex.has_rollout(thread)) {
        return Ok(false);
    }
    team.update(|config| {
        if let Some(record) = config.members.iter_mut().find(|m| m.name == member) {
            record.session_id = Some(thread.to_owned());
        }
        Ok(())
    })?;
    Ok(true)
}

/// What a member's screen is matched against: its `idle_pattern` and `needs_you_pattern`.
#[derive(Debug, Default)]
pub struct ScreenRules {
    idle: Option<Regex>,
    needs_you: Option<Regex>,
}

impl ScreenRules {
    /// The member's patterns; one that does not compile (config.json edited by hand) is left out
    /// with a warning: `up` checked them.
    pub fn new(idle: Option<&str>, needs_you: Option<&str>) -> Self {
        let compile = |pattern: Option<&str>| {
            pattern.and_then(|pattern| match Regex::new(pattern) {
                Ok(regex) => Some(regex),
                Err(err) => {
                    tracing::warn!("pattern {pattern:?} is not a regex: {err}");
                    None
                }
            })
        };
        Self {
            idle: compile(idle),
            needs_you: compile(needs_you),
        }
    }

    /// What the screen's last line tells, once output has stopped: `needs_you_pattern` first,
    /// then `idle_pattern`, then a prompt (the cursor on a line not ended) is idle. `None` when
    /// it tells nothing: the program runs quietly.
    pub fn judge(&self, screen: &LastLine) -> Option<(Activity, String)> {
        let line = screen.text()?;
        if self.needs_you.as_ref().is_some_and(|r| r.is_match(line)) {
            return Some((Activity::NeedsYou, format!("screen: {}", clip(line))));
        }
        if self.idle.as_ref().is_some_and(|r| r.is_match(line)) {
            return Some((Activity::Idle, format!("screen: {}", clip(line))));
        }
        screen
            .at_prompt()
            .then(|| (Activity::Idle, format!("prompt: {}", clip(line))))
    }

    /// Whether either pattern is set.
    pub fn any(&self) -> bool {
        self.idle.is_some() || self.needs_you.is_some()
    }
}

/// The last line a pane's output shows, as `swarm log` renders it: the line the cursor is on
/// (not ended by a newline: a prompt), else the last line ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LastLine {
    pending: Option<String>,
    ended: Option<String>,
}

impl LastLine {
    /// Reads the end of a pane's output (the tail of its log).
    pub fn of(tail: &[u8]) -> Self {
        let mut screen = Screen::new();
        let ended = screen
            .feed(tail)
            .into_iter()
            .rev()
            .find(|line| !line.trim().is_empty());
        Self {
            pending: screen.pending(),
            ended,
        }
    }

    fn text(&self) -> Option<&str> {
        self.pending.as_deref().or(self.ended.as_deref())
    }

    fn at_prompt(&self) -> bool {
        self.pending.is_some()
    }
}

fn clip(line: &str) -> String {
    let line = line.trim();
    match line.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    }
}

/// Why a member waits on its permission ask to use `tool`: `permission (Bash)`.
pub fn waits_for_permission(tool: &str) -> String {
    format!("permission ({tool})")
}

/// The tool a member waits to use, by the why [`waits_for_permission`] made; an alert made from
/// it reads as the ask's own (`carol asks to use Bash`), whichever of the two comes first.
pub fn permission_waited_for(why: &str) -> Option<&str> {
    why.strip_prefix("permission (")?.strip_suffix(')')
}

/// Why a member waits on its plan, unread in the lead's inbox.
pub const WAITS_FOR_PLAN: &str = "plan";

/// What the lead's side shows of `member`: what it waits on there, and its last word.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct LeadSide {
    /// A permission ask not yet answered (`permission (Bash)`), or a plan unread in the lead's
    /// inbox (`plan`).
    pub waits_on: Option<String>,
    /// Its last message unread in the lead's inbox is Claude Code's `idle_notification`: when it
    /// was sent (epoch ms) and why (`idle_notification (available)`).
    pub told_idle: Option<(u64, String)>,
}

/// Looks at the lead's side for `member`: the asks nobody answered (read on from `asks`'s last
/// look) and the lead's unread messages.
pub(crate) fn lead_side(
    team: &Team,
    config: &TeamConfig,
    member: &str,
    asks: &mut AskFeed,
) -> Result<LeadSide> {
    let mut side = LeadSide::default();
    if let Some(ask) = asks
        .unanswered(team, config)?
        .into_iter()
        .find(|ask| ask.member() == member)
    {
        side.waits_on = Some(waits_for_permission(ask.tool()));
    }
    let unread = team.mailbox(config.lead_name()).peek()?;
    let from_member = || unread.iter().filter(|message| message.from() == member);
    if side.waits_on.is_none()
        && from_member().any(|message| {
            matches!(
                message.structured(),
                Some(Structured::PlanApprovalRequest(_))
            )
        })
    {
        side.waits_on = Some(WAITS_FOR_PLAN.to_owned());
    }
    if let Some(message) = from_member().next_back()
        && let Some(Structured::IdleNotification(idle)) = message.structured()
    {
        let sent = clock::parse_ms(message.timestamp()).unwrap_or_default();
        let reason = idle.idle_reason().unwrap_or("available");
        side.told_idle = Some((sent, format!("idle_notification ({reason})")));
    }
    Ok(side)
}

/// What `member` owes, in words, when it holds an open task or has unread messages; `None` when
/// it owes nothing, so being quiet is no stall.
pub fn owes(team: &Team, member: &str) -> Result<Option<String>> {
    let list = TaskList::new(team.home(), team.name());
    if !list.holders(&[member])?.is_empty() {
        return Ok(Some("holds a task".to_owned()));
    }
    let unread = team.mailbox(member).peek()?.len();
    Ok((unread > 0).then(|| format!("{unread} unread message(s)")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_claude_code_hook_tells_its_activity() {
        let cases = [
            (
                json!({"hook_event_name": "UserPromptSubmit", "prompt": "hi"}),
                Some(Activity::Working),
            ),
            (
                json!({"hook_event_name": "PreToolUse", "tool_name": "Bash"}),
                Some(Activity::Working),
            ),
            (
                json!({"hook_event_name": "Stop", "stop_hook_active": false}),
                Some(Activity::Idle),
            ),
            (
                json!({"hook_event_name": "Notification", "notification_type": "permission_prompt", "message": "Claude needs your permission to use Bash"}),
                Some(Activity::NeedsYou),
            ),
            (
                json!({"hook_event_name": "PermissionRequest", "tool_name": "Bash"}),
                Some(Activity::NeedsYou),
            ),
            (
                json!({"hook_event_name": "Notification", "notification_type": "auth_success"}),
                None,
            ),
            (json!({"hook_event_name": "SessionEnd"}), None),
            (json!({}), None),
        ];
        for (input, expected) in cases {
            assert_eq!(
                from_claude_hook(&input).map(|(a, _)| a),
                expected,
                "{input}"
            );
        }
        let (_, why) =
            from_claude_hook(&json!({"hook_event_name": "PermissionRequest", "tool_name": "Bash"}))
                .unwrap();
        assert_eq!(why, "permission (Bash)");
    }

    #[test]
    fn a_screen_at_a_prompt_is_idle_and_a_pattern_says_what_it_waits_on() {
        let plain = ScreenRules::default();
        // bash's prompt, with bracketed paste turned on: the cursor waits on it.
        let bash = LastLine::of(b"echo hi\r\nhi\r\n\x1b[?2004hme@box:~$ ");
        assert_eq!(plain.judge(&bash).map(|(a, _)| a), Some(Activity::Idle));
        // A command that runs quietly: its line ended, no prompt yet.
        let running = LastLine::of(b"\x1b[?2004l\rsleep 30\r\n");
        assert_eq!(plain.judge(&running), None);
        let rules = ScreenRules::new(Some("^>>> ?$"), Some(r"\[y/N\]"));
        let asks = LastLine::of(b"remove all? [y/N] ");
        assert_eq!(
            rules.judge(&asks),
            Some((Activity::NeedsYou, "screen: remove all? [y/N]".to_owned()))
        );
        let python = LastLine::of(b"42\r\n>>> ");
        assert_eq!(rules.judge(&python).map(|(a, _)| a), Some(Activity::Idle));
        assert!(rules.any() && !plain.any());
    }

    #[test]
    fn each_gemini_cli_hook_and_codex_notify_tells_its_activity() {
        let gemini = |input: Value| from_gemini_hook(&input);
        assert_eq!(
            gemini(json!({"hook_event_name": "BeforeAgent", "prompt": "do things"})),
            Some((Activity::Working, "prompt".to_owned()))
        );
        assert_eq!(
            gemini(json!({"hook_event_name": "BeforeTool", "tool_name": "run_shell_command"})),
            Some((Activity::Working, "tool (run_shell_command)".to_owned()))
        );
        assert_eq!(
            gemini(
                json!({"hook_event_name": "Notification", "notification_type": "ToolPermission", "message": "Tool Confirm Shell Command requires execution"})
            ),
            Some((
                Activity::NeedsYou,
                "Tool Confirm Shell Command requires execution".to_owned()
            ))
        );
        assert_eq!(
            gemini(json!({"hook_event_name": "AfterAgent", "prompt_response": "done"})),
            Some((Activity::Idle, "turn ended".to_owned()))
        );
        assert_eq!(gemini(json!({"hook_event_name": "BeforeModel"})), None);
        assert_eq!(gemini(json!({"hook_event_name": "SessionEnd"})), None);
        let turn = json!({"type": "agent-turn-complete", "thread-id": "t", "turn-id": "u"});
        assert_eq!(
            from_codex_notify(&turn),
            Some((Activity::Idle, "turn ended".to_owned()))
        );
        assert_eq!(from_codex_notify(&json!({"type": "other"})), None);
    }
}
