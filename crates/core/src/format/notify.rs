//! `[notify]`: how a person who is not looking hears that a member needs them
//! (docs/ARCHITECTURE.md, "Alerts"). Written in a team file's `[notify]` table and in
//! `~/.config/swarm/notify.toml` for every team; the team file wins key by key.

use serde::{Deserialize, Serialize};

use crate::base::secrets::shown_url;
use crate::format::config::State;
use crate::format::event::{Activity, Event, What};

/// A change a person may be alerted to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AlertOn {
    /// A member waits on a decision: a permission, a plan, a question.
    NeedsYou,
    /// A member has gone quiet while it holds a task or owes an answer.
    Stalled,
    /// A member's program ended badly.
    Failed,
    /// A member finished its turn and waits for input (noisy: off unless chosen).
    Idle,
    /// Every member of the team has ended.
    Done,
    /// A budget reached 80 % or 100 % (docs/ARCHITECTURE.md, "Costs and budgets").
    Cost,
}

impl AlertOn {
    /// What is alerted when `events` is not given: all but `idle`, which comes at every turn.
    pub const DEFAULT: [Self; 5] = [
        Self::NeedsYou,
        Self::Stalled,
        Self::Failed,
        Self::Done,
        Self::Cost,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::NeedsYou => "needs-you",
            Self::Stalled => "stalled",
            Self::Failed => "failed",
            Self::Idle => "idle",
            Self::Done => "done",
            Self::Cost => "cost",
        }
    }

    /// The alert `event` is, if any: a decision asked or an activity that waits on the person
    /// is `needs-you`, a program that failed (or kept failing past its restarts) `failed`, the team's end `done`.
    pub fn of(event: &Event) -> Option<Self> {
        match &event.what {
            What::Asked { .. }
            | What::Activity {
                state: Activity::NeedsYou,
                ..
            } => Some(Self::NeedsYou),
            What::Activity {
                state: Activity::Stalled,
                ..
            } => Some(Self::Stalled),
            What::Activity {
                state: Activity::Idle,
                ..
            } => Some(Self::Idle),
            What::Process {
                state: State::Failed,
                ..
            }
            | What::GaveUp { .. } => Some(Self::Failed),
            What::TeamDone => Some(Self::Done),
            What::Cost { .. } => Some(Self::Cost),
            _ => None,
        }
    }
}

/// The body a webhook is sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WebhookFormat {
    /// `{"team", "text", "alert", "event"}`.
    #[default]
    Json,
    /// `{"text"}`, as a Slack incoming webhook takes it.
    Slack,
}

/// `[notify]` as one file writes it: each key may be absent, so two files merge key by key.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotifyKeys {
    pub bell: Option<bool>,
    pub desktop: Option<bool>,
    pub webhook: Option<String>,
    pub format: Option<WebhookFormat>,
    pub command: Option<Vec<String>>,
    pub events: Option<Vec<AlertOn>>,
}

impl NotifyKeys {
    /// These keys, and `under`'s where these have none.
    #[must_use]
    pub fn over(self, under: Self) -> Self {
        Self {
            bell: self.bell.or(under.bell),
            desktop: self.desktop.or(under.desktop),
            webhook: self.webhook.or(under.webhook),
            format: self.format.or(under.format),
            command: self.command.or(under.command),
            events: self.events.or(under.events),
        }
    }

    /// The settings these keys make, or what is wrong with them, in one line.
    pub fn settle(self) -> Result<Notify, String> {
        if let Some(url) = &self.webhook {
            check_url(url)?;
        }
        if self.command.as_ref().is_some_and(Vec::is_empty) {
            return Err("notify command is empty: give the program and its arguments".into());
        }
        Ok(Notify {
            bell: self.bell.unwrap_or(true),
            desktop: self.desktop.unwrap_or(false),
            webhook: self.webhook,
            format: self.format.unwrap_or_default(),
            command: self.command,
            events: self.events.unwrap_or_else(|| AlertOn::DEFAULT.to_vec()),
        })
    }
}

/// A webhook is `http://` or `https://` and a host, with nothing a request line cannot carry.
fn check_url(url: &str) -> Result<(), String> {
    let bad = |why: &str| Err(format!("notify webhook {} {why}", shown_url(url)));
    let Some(rest) = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
    else {
        return bad("is not an http:// or https:// URL");
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = host.rsplit('@').next().unwrap_or_default();
    if host.is_empty() || host.starts_with(':') {
        return bad("names no host");
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return bad("has a space or a control character in it");
    }
    Ok(())
}

/// The alerts of a team, settled: the defaults where neither file gave a key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notify {
    /// The team's tmux window flagged (`@swarm-needs-you`) and every attached client told.
    pub bell: bool,
    /// `notify-send`, or OSC 9 to the terminals attached to the team's session.
    pub desktop: bool,
    /// A JSON POST per alert.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<String>,
    #[serde(default)]
    pub format: WebhookFormat,
    /// Run with the alert as JSON on stdin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// Which changes alert.
    pub events: Vec<AlertOn>,
}

impl Default for Notify {
    fn default() -> Self {
        NotifyKeys::default()
            .settle()
            .unwrap_or_else(|_| unreachable!("no keys, nothing wrong"))
    }
}

impl Notify {
    /// One line for a person, the webhook's secret masked: `bell, webhook https://host/<masked>
    /// (slack); on needs-you, failed`.
    pub fn summary(&self) -> String {
        let mut ways = Vec::new();
        if self.bell {
            ways.push("bell".to_owned());
        }
        if self.desktop {
            ways.push("desktop".to_owned());
        }
        if let Some(url) = &self.webhook {
            let slack = if self.format == WebhookFormat::Slack {
                " (slack)"
            } else {
                ""
            };
            ways.push(format!("webhook {}{slack}", shown_url(url)));
        }
        if let Some(argv) = &self.command {
            ways.push(format!("command {}", argv.join(" ")));
        }
        let ways = if ways.is_empty() {
            "none".to_owned()
        } else {
            ways.join(", ")
        };
        let on: Vec<&str> = self.events.iter().map(|e| e.as_str()).collect();
        format!("{ways}; on {}", on.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_team_file_wins_key_by_key_and_bad_keys_are_one_line() {
        let team = NotifyKeys {
            webhook: Some("https://hooks.example/T/secret".into()),
            format: Some(WebhookFormat::Slack),
            ..NotifyKeys::default()
        };
        let user = NotifyKeys {
            bell: Some(false),
            webhook: Some("https://other/x".into()),
            events: Some(vec![AlertOn::Idle]),
            ..NotifyKeys::default()
        };
        let notify = team.over(user).settle().unwrap();
        assert_eq!(
            notify.summary(),
            "webhook https://hooks.example/<masked> (slack); on idle"
        );
        assert_eq!(
            Notify::default().summary(),
            "bell; on needs-you, stalled, failed, done, cost"
        );
        let bad = NotifyKeys {
            webhook: Some("ftp://host/secret".into()),
            ..NotifyKeys::default()
        };
        assert_eq!(
            bad.settle().unwrap_err(),
            "notify webhook ftp://host/<masked> is not an http:// or https:// URL"
        );
    }
}
