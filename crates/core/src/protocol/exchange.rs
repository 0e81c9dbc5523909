//! Requests and answers: sending a protocol message under the rules, waiting for the answer to a
//! request, and retiring a request once it has been answered.

use std::time::Instant;

use crate::error::Result;
use crate::format::config::TeamConfig;
use crate::format::message::{InboxMessage, check_text_size};
use crate::format::structured::Structured;
use crate::policy::Caller;
use crate::protocol::rules::{self, Recipient};
use crate::store::team::Team;
use crate::store::watcher::{Watcher, named};

/// The envelope of `message` from `caller` to `to`, after checking every protocol rule: from the
/// name the rules send it under. `member::seal::request` signs it if it must be and writes it.
pub fn envelope(
    team: &Team,
    config: &TeamConfig,
    caller: &Caller,
    to: &str,
    message: &Structured,
) -> Result<InboxMessage> {
    config.require_member(to)?;
    let sender = rules::check(team, config, caller, Recipient::Member(to), message)?;
    let text = message.to_text();
    // An allowed permission ask carries the ask's input back whole, however large the teammate
    // made it: the rules bound it by the ask's own size instead.
    if !matches!(message, Structured::PermissionResponse(_)) {
        check_text_size(&text)?;
    }
    let color = config.member(sender.as_str()).and_then(|m| m.color.clone());
    Ok(InboxMessage::new(
        sender.as_str(),
        &text,
        None,
        color.as_deref(),
    ))
}

/// A watch on the team's inboxes, armed before the request goes out so no answer is missed.
pub struct AnswerWatch<'a> {
    team: &'a Team,
    me: &'a str,
    watcher: Watcher,
}

impl<'a> AnswerWatch<'a> {
    pub fn arm(team: &'a Team, me: &'a str) -> Result<Self> {
        team.mailbox(me).ensure()?;
        Ok(Self {
            team,
            me,
            watcher: Watcher::arm(&team.paths().inboxes())?,
        })
    }

    /// Consumes and returns the first message in `me`'s inbox that `is_answer` accepts.
    /// `None` when the deadline passes.
    pub fn wait(
        &self,
        deadline: Option<Instant>,
        is_answer: impl Fn(&InboxMessage, &Structured) -> bool,
    ) -> Result<Option<(InboxMessage, Structured)>> {
        let mailbox = self.team.mailbox(self.me);
        let accept =
            |message: &InboxMessage| message.structured().is_some_and(|s| is_answer(message, &s));
        self.watcher
            .wait_for(deadline, &named(mailbox.file_name()), || {
                let taken = mailbox.consume(Some(1), accept)?;
                Ok(taken.into_iter().next().and_then(|m| {
                    let structured = m.structured()?;
                    Some((m, structured))
                }))
            })
    }
}

/// Moves an answered request from `holder`'s unread messages to history.
pub fn retire(team: &Team, holder: &str, request_id: &str) -> Result<()> {
    team.mailbox(holder)
        .consume(None, |m| {
            m.structured().is_some_and(|s| {
                s.request_id() == Some(request_id)
                    && matches!(
                        s,
                        Structured::ShutdownRequest(_)
                            | Structured::PlanApprovalRequest(_)
                            | Structured::PermissionRequest(_)
                            | Structured::SandboxPermissionRequest(_)
                    )
            })
        })
        .map(drop)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::error::ErrorKind;
    use crate::format::message::MAX_TEXT_BYTES;
    use crate::format::structured::{
        IdleNotification, PlanApprovalRequest, ShutdownApproved, ShutdownRequest,
    };
    use crate::store::team::fixture;

    /// What history holds, by id: it keeps messages as delivered, marked read.
    fn ids(messages: &[InboxMessage]) -> Vec<String> {
        messages.iter().map(|m| m.id().into_owned()).collect()
    }

    fn request(id: &str) -> Structured {
        Structured::ShutdownRequest(ShutdownRequest {
            request_id: id.into(),
            from: "team-lead".into(),
            reason: None,
            timestamp: "t".into(),
        })
    }

    fn approval(id: &str) -> Structured {
        Structured::ShutdownApproved(ShutdownApproved {
            request_id: id.into(),
            from: "bob".into(),
            timestamp: "t".into(),
            pane_id: None,
            backend_type: None,
        })
    }

    fn idle() -> Structured {
        Structured::IdleNotification(IdleNotification {
            from: "bob".into(),
            timestamp: "t".into(),
            idle_reason: Some("available".into()),
            summary: None,
            result: None,
            completed_task_id: None,
            completed_status: None,
            failure_reason: None,
        })
    }

    fn plan(content: String) -> Structured {
        Structured::PlanApprovalRequest(PlanApprovalRequest {
            from: "bob".into(),
            timestamp: "t".into(),
            plan_file_path: "plan.md".into(),
            plan_content: content,
            request_id: "plan_approval-1@bob@t".into(),
        })
    }

    /// `super::send` as member `me`.
    fn send(
        team: &Team,
        config: &TeamConfig,
        me: &str,
        to: &str,
        message: &Structured,
    ) -> Result<InboxMessage> {
        let envelope = envelope(team, config, &Caller::member(config, me)?, to, message)?;
        team.mailbox(to).append(std::slice::from_ref(&envelope))?;
        Ok(envelope)
    }

    fn texts(messages: &[InboxMessage]) -> Vec<&str> {
        messages.iter().map(InboxMessage::text).collect()
    }

    /// A shutdown request for bob from the lead, in bob's inbox, as the lead sends it.
    fn ask_bob(team: &Team, id: &str) -> InboxMessage {
        send(
            team,
            &team.load().unwrap(),
            "team-lead",
            "bob",
            &request(id),
        )
        .unwrap()
    }

    #[test]
    fn send_refuses_a_recipient_off_the_roster_and_writes_nothing() {
        let (_dir, team) = fixture::team(&["bob"]);
        let config = team.load().unwrap();
        let err = send(
            &team,
            &config,
            "team-lead",
            "ghost",
            &request("shutdown-1@ghost"),
        )
        .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotFound);
        assert_eq!(
            err.message(),
            "ghost is not a member of team t; members: team-lead, bob"
        );
        assert!(!team.mailbox("ghost").inbox_path().exists());
    }

    #[test]
    fn send_applies_every_rule_before_writing() {
        let (_dir, team) = fixture::team(&["bob", "carol"]);
        let config = team.load().unwrap();
        let err = send(&team, &config, "carol", "bob", &request("shutdown-1@bob")).unwrap_err();
        assert!(
            err.message().starts_with("only the lead"),
            "{}",
            err.message()
        );
        let err = send(
            &team,
            &config,
            "bob",
            "team-lead",
            &approval("shutdown-1@bob"),
        )
        .unwrap_err();
        assert!(
            err.message().starts_with("there is no shutdown_request"),
            "{}",
            err.message()
        );
        assert!(team.mailbox("bob").peek().unwrap().is_empty());
        assert!(team.mailbox("team-lead").peek().unwrap().is_empty());
    }

    #[test]
    fn send_delivers_one_envelope_in_the_senders_color() {
        let (_dir, team) = fixture::team(&["bob"]);
        team.update(|config| {
            config.member_mut("bob").unwrap().color = Some("blue".into());
            Ok(())
        })
        .unwrap();
        let config = team.load().unwrap();
        let envelope = send(&team, &config, "bob", "team-lead", &idle()).unwrap();
        assert_eq!(envelope.from(), "bob");
        assert_eq!(envelope.fields()["color"], "blue");
        assert_eq!(envelope.structured(), Some(idle()));
        assert_eq!(team.mailbox("team-lead").peek().unwrap(), [envelope]);
    }

    #[test]
    fn send_refuses_text_over_the_limit() {
        let (_dir, team) = fixture::team(&["bob"]);
        let config = team.load().unwrap();
        let err = send(
            &team,
            &config,
            "bob",
            "team-lead",
            &plan("x".repeat(MAX_TEXT_BYTES)),
        )
        .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Usage);
        assert!(err.message().ends_with("(1 MiB)"), "{}", err.message());
        assert!(team.mailbox("team-lead").peek().unwrap().is_empty());
    }

    #[test]
    fn retire_moves_only_the_answered_request_to_history() {
        let (_dir, team) = fixture::team(&["bob"]);
        let first = ask_bob(&team, "shutdown-1@bob");
        let second = ask_bob(&team, "shutdown-2@bob");
        let bob = team.mailbox("bob");
        // Neither a plain message naming the request nor an answer to it is the request.
        let answer = approval("shutdown-1@bob").to_text();
        bob.append(&[
            InboxMessage::new("team-lead", "shutdown-1@bob", None, None),
            InboxMessage::new("team-lead", &answer, None, None),
        ])
        .unwrap();

        retire(&team, "bob", "shutdown-1@bob").unwrap();
        assert_eq!(
            texts(&bob.peek().unwrap()),
            [second.text(), "shutdown-1@bob", answer.as_str()]
        );
        assert_eq!(ids(&bob.history().unwrap()), ids(&[first]));
        // Nothing left to retire is not an error, and changes nothing.
        retire(&team, "bob", "shutdown-1@bob").unwrap();
        retire(&team, "bob", "shutdown-9@bob").unwrap();
        assert_eq!(bob.peek().unwrap().len(), 3);
        assert_eq!(bob.history().unwrap().len(), 1);
    }

    #[test]
    fn an_answer_watch_takes_the_answer_and_leaves_the_rest() {
        let (_dir, team) = fixture::team(&["bob"]);
        ask_bob(&team, "shutdown-1@bob");
        let watch = AnswerWatch::arm(&team, "team-lead").unwrap();
        let config = team.load().unwrap();
        send(&team, &config, "bob", "team-lead", &idle()).unwrap();
        let lead = team.mailbox("team-lead");
        lead.append(&[InboxMessage::new("bob", "shutdown-1@bob", None, None)])
            .unwrap();
        let answer = send(
            &team,
            &config,
            "bob",
            "team-lead",
            &approval("shutdown-1@bob"),
        )
        .unwrap();

        let is_answer = |_: &InboxMessage, s: &Structured| matches!(s, Structured::ShutdownApproved(a) if a.request_id == "shutdown-1@bob");
        let (taken, structured) = watch.wait(None, is_answer).unwrap().unwrap();
        assert_eq!(taken, answer);
        assert_eq!(structured, approval("shutdown-1@bob"));
        assert_eq!(
            texts(&lead.peek().unwrap()),
            [idle().to_text().as_str(), "shutdown-1@bob"]
        );
        assert_eq!(ids(&lead.history().unwrap()), ids(&[answer]));
    }

    #[test]
    fn an_answer_sent_after_arming_is_never_missed() {
        let (_dir, team) = fixture::team(&["bob"]);
        ask_bob(&team, "shutdown-1@bob");
        let watch = AnswerWatch::arm(&team, "team-lead").unwrap();
        let answerer = {
            let team = team.clone();
            std::thread::spawn(move || {
                let config = team.load().unwrap();
                send(
                    &team,
                    &config,
                    "bob",
                    "team-lead",
                    &approval("shutdown-1@bob"),
                )
                .unwrap()
            })
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        let found = watch
            .wait(Some(deadline), |_, s| {
                s.request_id() == Some("shutdown-1@bob")
            })
            .unwrap();
        let sent = answerer.join().unwrap();
        assert_eq!(found.map(|(message, _)| message), Some(sent));
    }

    #[test]
    fn an_answer_watch_gives_up_at_its_deadline_and_consumes_nothing() {
        let (_dir, team) = fixture::team(&["bob"]);
        let watch = AnswerWatch::arm(&team, "team-lead").unwrap();
        let config = team.load().unwrap();
        send(&team, &config, "bob", "team-lead", &idle()).unwrap();
        let deadline = Instant::now() + Duration::from_millis(50);
        let found = watch
            .wait(Some(deadline), |_, s| {
                matches!(s, Structured::ShutdownApproved(_))
            })
            .unwrap();
        assert!(found.is_none());
        assert_eq!(team.mailbox("team-lead").peek().unwrap().len(), 1);
    }
}
