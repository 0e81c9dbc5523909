//! The protocol rules, enforced for every structured message however it is sent (`send` with raw
//! JSON, `shutdown`, `plan`, the supervisor): who may send each kind comes from `policy`, where it
//! may go and what it must name from here. Each refusal is exit status 2 with a clear message.

use crate::base::names::Name;
use crate::error::{Error, Result};
use crate::format::config::TeamConfig;
use crate::format::message::{InboxMessage, MAX_ANSWER_BYTES, MAX_TEXT_BYTES};
use crate::format::settings::Protocol;
use crate::format::signature::{Verdict, VerifyKey};
use crate::format::structured::{Structured, request_subject};
use crate::policy::{Action, Caller, PERSON, allow, allow_own};
use crate::store::team::Team;

/// Where a message is going.
#[derive(Debug, Clone, Copy)]
pub enum Recipient<'a> {
    Member(&'a str),
    Broadcast,
    Peer,
}

/// The id of member `member`'s task in team `team`, `<member>@<team>`: what a `task_notification`
/// about it names as `taskId`. Made of the member's own name, never of config.json's `agentId`,
/// which any member can rewrite: every notice swarm writes on a member's behalf, and every one a
/// sender writes, must name this.
pub fn task_id(member: &str, team: &str) -> String {
    format!("{member}@{team}")
}

/// Refuses a structured message that breaks a rule; else the name it is sent under (the lead's,
/// when the person at the keyboard sends what only the lead sends).
pub fn check(
    team: &Team,
    config: &TeamConfig,
    caller: &Caller,
    to: Recipient<'_>,
    message: &Structured,
) -> Result<Name> {
    let kind = message.kind();
    let to = match to {
        Recipient::Broadcast => {
            return Err(Error::usage(format!(
                "{kind} cannot be broadcast; protocol messages go to one member"
            )));
        }
        Recipient::Peer => {
            return Err(Error::usage(format!(
                "{kind} cannot be sent to a uds: peer; protocol messages stay inside a team"
            )));
        }
        Recipient::Member(to) => to,
    };
    // No phantom inboxes: `user`, whose inbox every team has, takes plain messages only.
    if config.member(to).is_none() {
        let error = Error::usage(format!(
            "{to} is not on team {}'s roster: {}",
            config.name,
            config.roster().join(", ")
        ));
        return Err(if to == PERSON {
            error.with_hint(format!(
                "{PERSON} takes plain messages only; {kind} and the other protocol messages go to members"
            ))
        } else {
            error
        });
    }
    if let Some(why) = never_sent(message) {
        return Err(Error::usage(format!(
            "{kind} is not sent: {why}; nothing was sent"
        )));
    }
    let lead = config.lead_name();
    let sender = match message {
        Structured::ShutdownRequest(_) => allow(config, caller, Action::RequestShutdown)?,
        Structured::PlanApprovalResponse(_) => allow(config, caller, Action::AnswerPlan)?,
        Structured::TaskAssignment(_) => allow(config, caller, Action::AssignTask)?,
        Structured::PermissionRequest(_) | Structured::SandboxPermissionRequest(_) => {
            allow(config, caller, Action::AskPermission)?
        }
        Structured::PermissionResponse(_) | Structured::SandboxPermissionResponse(_) => {
            allow(config, caller, Action::AnswerPermission)?
        }
        _ => allow(config, caller, Action::Send)?,
    };
    let me = sender.as_str();
    if message.lead_only() && to == lead {
        return Err(Error::usage(format!(
            "{kind} goes from the lead to a teammate, not to the lead"
        )));
    }
    if message.to_lead_only() && to != lead {
        return Err(Error::usage(format!(
            "{kind} goes to the lead ({lead}), not to {to}"
        )));
    }
    if let Some(claimed) = claimed_sender(message)
        && claimed != me
    {
        return Err(Error::usage(format!(
            "{kind} says it is from {claimed}, but you are {me}"
        )));
    }

    match message {
        Structured::ShutdownRequest(request) => {
            expect_subject(
                &request.request_id,
                to,
                "a shutdown request names its target",
            )?;
            if config
                .member(to)
                .is_some_and(|m| m.protocol() == Protocol::None)
            {
                return Err(Error::usage(format!(
                    "{to} cannot answer a shutdown request: its protocol is \"none\""
                ))
                .with_hint(format!("`swarm stop {to}` stops it")));
            }
        }
        Structured::ShutdownApproved(answer) => {
            answer_own_shutdown(team, config, caller, &answer.request_id)?;
        }
        Structured::ShutdownRejected(answer) => {
            answer_own_shutdown(team, config, caller, &answer.request_id)?;
        }
        Structured::PlanApprovalRequest(request) => {
            allow_own(caller, Action::SubmitPlan, me)?;
            expect_subject(
                &request.request_id,
                me,
                "a plan request names its submitter",
            )?;
        }
        Structured::PlanApprovalResponse(response) => {
            require_request(team, lead, &response.request_id, "plan_approval_request")?;
            expect_subject(
                &response.request_id,
                to,
                "a plan response goes to the teammate that submitted the plan",
            )?;
        }
        Structured::TaskNotification(notice) => {
            // It names whose task it reports, as `from` does elsewhere: the sender's own only.
            let own = task_id(me, &config.name);
            if notice.task_id != own {
                return Err(Error::usage(format!(
                    "{kind} reports on {}, but you are {me}",
                    notice.task_id
                )));
            }
        }
        Structured::PermissionRequest(request) => {
            allow_own(caller, Action::AskPermission, &request.agent_id)?;
        }
        Structured::SandboxPermissionRequest(request) => {
            allow_own(caller, Action::AskPermission, &request.worker_name)?;
        }
        Structured::PermissionResponse(response) => {
            let request = require_request(team, lead, &response.request_id, "permission_request")?;
            if let Some(Structured::PermissionRequest(asked)) = request.structured() {
                expect_asker(&response.request_id, &asked.agent_id, to)?;
            }
            // It may carry the ask's input back: as large as the ask and a message more, up to
            // the largest answer.
            let size = message.to_text().len();
            let limit = (MAX_TEXT_BYTES + request.text().len()).min(MAX_ANSWER_BYTES);
            if size > limit {
                return Err(Error::usage(format!(
                    "{kind} is {size} bytes; an answer to request {} may be at most {limit} bytes (its request's size and 1 MiB more, at most 16 MiB)",
                    response.request_id
                )));
            }
        }
        Structured::SandboxPermissionResponse(response) => {
            let request = require_request(
                team,
                lead,
                &response.request_id,
                "sandbox_permission_request",
            )?;
            if let Some(Structured::SandboxPermissionRequest(asked)) = request.structured() {
                expect_asker(&response.request_id, &asked.worker_name, to)?;
            }
        }
        Structured::IdleNotification(_)
        | Structured::TaskAssignment(_)
        | Structured::TaskCompleted(_)
        | Structured::ModeSetRequest(_)
        | Structured::TeamPermissionUpdate(_)
        | Structured::TeammateTerminated(_) => {}
    }
    Ok(sender)
}

/// Why nobody sends `message` through swarm, if so: what Claude Code never takes from an inbox,
/// and its own note of a pane that died (swarm reports a member's ending itself).
fn never_sent(message: &Structured) -> Option<&'static str> {
    match message {
        Structured::ModeSetRequest(_) => Some(
            "Claude Code takes no permission mode from an inbox (it drops every mode_set_request)",
        ),
        Structured::TeamPermissionUpdate(_) => Some(
            "Claude Code takes no permission rules from an inbox (it drops every team_permission_update)",
        ),
        Structured::TeammateTerminated(_) => Some(
            "it is Claude Code's own note of a pane that died; swarm tells the lead of a member's ending itself (task_notification)",
        ),
        _ => None,
    }
}

/// An answer goes to the teammate that asked.
fn expect_asker(request_id: &str, asker: &str, to: &str) -> Result<()> {
    if asker == to {
        return Ok(());
    }
    Err(Error::usage(format!(
        "request {request_id} is {asker}'s, not {to}'s: an answer goes to the teammate that asked"
    )))
}

/// The sender a message claims inside its JSON, which must be the real sender.
fn claimed_sender(message: &Structured) -> Option<&str> {
    match message {
        Structured::ShutdownRequest(m) => Some(&m.from),
        Structured::ShutdownApproved(m) => Some(&m.from),
        Structured::ShutdownRejected(m) => Some(&m.from),
        Structured::PlanApprovalRequest(m) => Some(&m.from),
        Structured::IdleNotification(m) => Some(&m.from),
        Structured::TaskAssignment(m) => Some(&m.assigned_by),
        Structured::PermissionRequest(m) => Some(&m.agent_id),
        Structured::SandboxPermissionRequest(m) => Some(&m.worker_name),
        Structured::TaskCompleted(m) => m.from.as_deref(),
        Structured::PlanApprovalResponse(_)
        | Structured::TaskNotification(_)
        | Structured::PermissionResponse(_)
        | Structured::SandboxPermissionResponse(_)
        | Structured::ModeSetRequest(_)
        | Structured::TeamPermissionUpdate(_)
        | Structured::TeammateTerminated(_) => None,
    }
}

fn answer_own_shutdown(
    team: &Team,
    config: &TeamConfig,
    caller: &Caller,
    request_id: &str,
) -> Result<()> {
    let subject = request_subject(request_id).ok_or_else(|| {
        Error::usage(format!(
            "{request_id:?} is not a shutdown request id (shutdown-<ms>@<name>)"
        ))
    })?;
    allow_own(caller, Action::AnswerShutdown, subject)?;
    let request = require_request(team, subject, request_id, "shutdown_request")?;
    // A member that verifies the lead's messages answers only a request the lead's side signed
    // (docs/ARCHITECTURE.md, "Signed lead messages"): a forged one is never acted on.
    let Some(key) = config
        .member(subject)
        .and_then(|m| m.lead_verify_key.as_deref())
    else {
        return Ok(());
    };
    let key = VerifyKey::parse(key).unwrap_or_else(|_| VerifyKey::unusable());
    let genuine = |m: &InboxMessage| key.check(m) == Verdict::Verified;
    if genuine(&request)
        || find_request(team, subject, request_id, "shutdown_request", genuine)?.is_some()
    {
        return Ok(());
    }
    let Verdict::Forged(why) = key.check(&request) else {
        return Ok(());
    };
    Err(Error::usage(format!(
        "shutdown request {request_id} does not come from the lead ({why}); it is not answered"
    )))
}

fn expect_subject(request_id: &str, expected: &str, rule: &str) -> Result<()> {
    match request_subject(request_id) {
        Some(subject) if subject == expected => Ok(()),
        Some(subject) => Err(Error::usage(format!(
            "request {request_id} is for {subject}, not {expected}: {rule}"
        ))),
        None => Err(Error::usage(format!(
            "{request_id:?} is not a valid request id"
        ))),
    }
}

/// The request `request_id` of type `kind`, found in `holder`'s inbox or history, or a refusal.
pub(crate) fn require_request(
    team: &Team,
    holder: &str,
    request_id: &str,
    kind: &str,
) -> Result<InboxMessage> {
    find_request(team, holder, request_id, kind, |_| true)?.ok_or_else(|| {
        Error::usage(format!(
            "there is no {kind} {request_id} in {holder}'s inbox or history"
        ))
        .with_hint(format!(
            "`swarm inbox {holder} --all` lists what {holder} received"
        ))
    })
}

/// The newest request `request_id` of type `kind` in `holder`'s inbox or history that `accept`
/// takes.
fn find_request(
    team: &Team,
    holder: &str,
    request_id: &str,
    kind: &str,
    accept: impl Fn(&InboxMessage) -> bool,
) -> Result<Option<InboxMessage>> {
    let mailbox = team.mailbox(holder);
    let matches = |message: &InboxMessage| {
        message
            .structured()
            .is_some_and(|s| s.kind() == kind && s.request_id() == Some(request_id))
            && accept(message)
    };
    // A request another tool marked read is still a request.
    if let Some(found) = mailbox.messages()?.into_iter().find(|m| matches(m)) {
        return Ok(Some(found));
    }
    Ok(mailbox.history()?.into_iter().rev().find(|m| matches(m)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::format::structured::{
        IdleNotification, PlanApprovalRequest, PlanApprovalResponse, ShutdownApproved,
        ShutdownRejected, ShutdownRequest, TaskAssignment, TaskNotification, TaskStatus,
    };
    use crate::store::team::fixture;

    fn request(id: &str, from: &str) -> Structured {
        Structured::ShutdownRequest(ShutdownRequest {
            request_id: id.into(),
            from: from.into(),
            reason: None,
            timestamp: "t".into(),
        })
    }

    fn approval(id: &str, from: &str) -> Structured {
        Structured::ShutdownApproved(ShutdownApproved {
            request_id: id.into(),
            from: from.into(),
            timestamp: "t".into(),
            pane_id: None,
            backend_type: None,
        })
    }

    fn rejection(id: &str, from: &str) -> Structured {
        Structured::ShutdownRejected(ShutdownRejected {
            request_id: id.into(),
            from: from.into(),
            reason: "busy".into(),
            timestamp: "t".into(),
        })
    }

    fn plan(id: &str, from: &str) -> Structured {
        Structured::PlanApprovalRequest(PlanApprovalRequest {
            from: from.into(),
            timestamp: "t".into(),
            plan_file_path: "plan.md".into(),
            plan_content: "do it".into(),
            request_id: id.into(),
        })
    }

    fn verdict(id: &str) -> Structured {
        Structured::PlanApprovalResponse(PlanApprovalResponse {
            request_id: id.into(),
            approved: true,
            feedback: None,
            timestamp: "t".into(),
            permission_mode: None,
            plan_digest: None,
        })
    }

    fn idle(from: &str) -> Structured {
        Structured::IdleNotification(IdleNotification {
            from: from.into(),
            timestamp: "t".into(),
            idle_reason: None,
            summary: None,
            result: None,
            completed_task_id: None,
            completed_status: None,
            failure_reason: None,
        })
    }

    fn assignment(by: &str) -> Structured {
        Structured::TaskAssignment(TaskAssignment {
            task_id: "1".into(),
            subject: "tests".into(),
            description: "write them".into(),
            assigned_by: by.into(),
            timestamp: "t".into(),
        })
    }

    fn notice() -> Structured {
        Structured::TaskNotification(TaskNotification {
            task_id: "bob@t".into(),
            status: TaskStatus::Completed,
            exit_code: Some(0),
            summary: "bob completed".into(),
            output_file: None,
            duration_ms: 1,
            worktree_path: None,
            reason: None,
            timestamp: "t".into(),
        })
    }

    fn checked(team: &Team, me: &str, to: Recipient<'_>, message: &Structured) -> Result<()> {
        let config = team.load().unwrap();
        let caller = Caller::member(&config, me).unwrap();
        check(team, &config, &caller, to, message).map(drop)
    }

    /// The refusal's message; every refusal is a usage error (exit status 2).
    #[track_caller]
    fn refusal(result: Result<()>) -> String {
        let err = result.expect_err("refused");
        assert_eq!(err.kind(), ErrorKind::Usage, "{}", err.message());
        err.message().to_owned()
    }

    fn deliver(team: &Team, to: &str, from: &str, message: &Structured) {
        team.mailbox(to)
            .append(&[InboxMessage::new(from, &message.to_text(), None, None)])
            .unwrap();
    }

    #[test]
    fn nothing_structured_is_broadcast_or_sent_to_a_peer() {
        let (_dir, team) = fixture::team(&["bob"]);
        for message in [
            request("shutdown-1@bob", "team-lead"),
            idle("bob"),
            notice(),
        ] {
            let kind = message.kind();
            let me = if message.lead_only() {
                "team-lead"
            } else {
                "bob"
            };
            assert_eq!(
                refusal(checked(&team, me, Recipient::Broadcast, &message)),
                format!("{kind} cannot be broadcast; protocol messages go to one member")
            );
            assert_eq!(
                refusal(checked(&team, me, Recipient::Peer, &message)),
                format!(
                    "{kind} cannot be sent to a uds: peer; protocol messages stay inside a team"
                )
            );
        }
    }

    #[test]
    fn nothing_structured_goes_off_the_roster_not_even_to_user() {
        let (_dir, team) = fixture::team(&["bob"]);
        for to in ["user", "ghost"] {
            let err = checked(
                &team,
                "team-lead",
                Recipient::Member(to),
                &request(&format!("shutdown-1@{to}"), "team-lead"),
            )
            .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Usage);
            assert_eq!(
                err.message(),
                format!("{to} is not on team t's roster: team-lead, bob")
            );
            assert_eq!(err.hint().is_some(), to == "user");
        }
        let err = checked(&team, "bob", Recipient::Member("user"), &idle("bob")).unwrap_err();
        assert!(
            err.hint().unwrap().contains("takes plain messages only"),
            "{err:?}"
        );
    }

    #[test]
    fn only_the_lead_sends_requests_assignments_and_verdicts_to_a_teammate() {
        let (_dir, team) = fixture::team(&["bob", "carol"]);
        let err = checked(
            &team,
            "bob",
            Recipient::Member("carol"),
            &request("shutdown-1@carol", "bob"),
        )
        .unwrap_err();
        assert_eq!(
            err.message(),
            "only the lead or the person at the keyboard may ask a teammate to shut down; bob is a teammate"
        );
        // Acting as bob from outside its pane: no pane says who the lead is.
        assert_eq!(err.hint(), Some("ask the lead to do it"));
        assert!(
            refusal(checked(
                &team,
                "bob",
                Recipient::Member("carol"),
                &assignment("bob")
            ))
            .starts_with("only the lead or the person at the keyboard may assign a task")
        );
        assert!(
            refusal(checked(
                &team,
                "bob",
                Recipient::Member("carol"),
                &verdict("plan_approval-1@carol@t")
            ))
            .starts_with("only the lead or the person at the keyboard may answer a plan")
        );
        assert_eq!(
            refusal(checked(
                &team,
                "team-lead",
                Recipient::Member("team-lead"),
                &request("shutdown-1@team-lead", "team-lead")
            )),
            "shutdown_request goes from the lead to a teammate, not to the lead"
        );
        checked(
            &team,
            "team-lead",
            Recipient::Member("bob"),
            &request("shutdown-1@bob", "team-lead"),
        )
        .unwrap();
        checked(
            &team,
            "team-lead",
            Recipient::Member("bob"),
            &assignment("team-lead"),
        )
        .unwrap();
    }

    #[test]
    fn answers_and_notices_go_to_the_lead_and_no_one_else() {
        let (_dir, team) = fixture::team(&["bob", "carol"]);
        for message in [
            approval("shutdown-1@bob", "bob"),
            plan("plan_approval-1@bob@t", "bob"),
            idle("bob"),
            notice(),
        ] {
            assert_eq!(
                refusal(checked(&team, "bob", Recipient::Member("carol"), &message)),
                format!(
                    "{} goes to the lead (team-lead), not to carol",
                    message.kind()
                )
            );
        }
        checked(&team, "bob", Recipient::Member("team-lead"), &idle("bob")).unwrap();
        checked(&team, "bob", Recipient::Member("team-lead"), &notice()).unwrap();
    }

    #[test]
    fn a_message_cannot_claim_another_sender() {
        let (_dir, team) = fixture::team(&["bob", "carol"]);
        assert_eq!(
            refusal(checked(
                &team,
                "bob",
                Recipient::Member("team-lead"),
                &idle("carol")
            )),
            "idle_notification says it is from carol, but you are bob"
        );
        assert_eq!(
            refusal(checked(
                &team,
                "team-lead",
                Recipient::Member("bob"),
                &request("shutdown-1@bob", "bob")
            )),
            "shutdown_request says it is from bob, but you are team-lead"
        );
        // A task notification names whose task it reports: the sender's own only.
        assert_eq!(
            refusal(checked(
                &team,
                "carol",
                Recipient::Member("team-lead"),
                &notice()
            )),
            "task_notification reports on bob@t, but you are carol"
        );
    }

    #[test]
    fn a_shutdown_request_names_the_teammate_it_goes_to() {
        let (_dir, team) = fixture::team(&["bob", "carol"]);
        let to_bob = |id: &str| {
            checked(
                &team,
                "team-lead",
                Recipient::Member("bob"),
                &request(id, "team-lead"),
            )
        };
        assert_eq!(
            refusal(to_bob("shutdown-1@carol")),
            "request shutdown-1@carol is for carol, not bob: a shutdown request names its target"
        );
        assert_eq!(
            refusal(to_bob("nonsense")),
            "\"nonsense\" is not a valid request id"
        );
        to_bob("shutdown-1@bob").unwrap();
    }

    #[test]
    fn a_shutdown_request_is_answered_by_its_target_once_it_was_asked() {
        let (_dir, team) = fixture::team(&["bob", "carol"]);
        let answer = |me: &str, message: &Structured| {
            checked(&team, me, Recipient::Member("team-lead"), message)
        };
        assert_eq!(
            refusal(answer("bob", &approval("x", "bob"))),
            "\"x\" is not a shutdown request id (shutdown-<ms>@<name>)"
        );
        assert_eq!(
            refusal(answer("carol", &approval("shutdown-1@bob", "carol"))),
            "only bob may answer bob's shutdown request; you are carol"
        );
        let err = answer("bob", &approval("shutdown-1@bob", "bob")).unwrap_err();
        assert_eq!(
            err.message(),
            "there is no shutdown_request shutdown-1@bob in bob's inbox or history"
        );
        assert_eq!(
            err.hint(),
            Some("`swarm inbox bob --all` lists what bob received")
        );

        // A request with another id is not the one answered.
        deliver(
            &team,
            "bob",
            "team-lead",
            &request("shutdown-2@bob", "team-lead"),
        );
        refusal(answer("bob", &rejection("shutdown-1@bob", "bob")));

        deliver(
            &team,
            "bob",
            "team-lead",
            &request("shutdown-1@bob", "team-lead"),
        );
        answer("bob", &approval("shutdown-1@bob", "bob")).unwrap();
        answer("bob", &rejection("shutdown-1@bob", "bob")).unwrap();
        // Still answerable once read: it is in history then.
        let taken = team.mailbox("bob").consume(None, |_| true).unwrap();
        assert_eq!(taken.len(), 2);
        answer("bob", &approval("shutdown-1@bob", "bob")).unwrap();
    }

    #[test]
    fn a_member_that_verifies_answers_only_a_shutdown_request_the_lead_signed() {
        use crate::format::signature::{FIELD, KeyPair};
        let (_dir, team) = fixture::team(&["bob"]);
        let pair = KeyPair::generate(0);
        team.update(|config| {
            config.member_mut("bob").unwrap().lead_verify_key = Some(pair.public().encode());
            Ok(())
        })
        .unwrap();
        let answer = || {
            checked(
                &team,
                "bob",
                Recipient::Member("team-lead"),
                &approval("shutdown-1@bob", "bob"),
            )
        };
        deliver(
            &team,
            "bob",
            "team-lead",
            &request("shutdown-1@bob", "team-lead"),
        );
        assert_eq!(
            refusal(answer()),
            "shutdown request shutdown-1@bob does not come from the lead (it is not signed); it is not answered"
        );
        let mut signed = InboxMessage::new(
            "team-lead",
            &request("shutdown-1@bob", "team-lead").to_text(),
            None,
            None,
        );
        let lead_sig = pair.sign(&signed);
        signed.set_field(FIELD, lead_sig.into());
        team.mailbox("bob").append(&[signed]).unwrap();
        // The forged copy comes first; the signed one is the one answered.
        answer().unwrap();
    }

    #[test]
    fn a_plan_request_names_its_submitter() {
        let (_dir, team) = fixture::team(&["bob", "carol"]);
        assert_eq!(
            refusal(checked(
                &team,
                "bob",
                Recipient::Member("team-lead"),
                &plan("plan_approval-1@carol@t", "bob")
            )),
            "request plan_approval-1@carol@t is for carol, not bob: a plan request names its submitter"
        );
        checked(
            &team,
            "bob",
            Recipient::Member("team-lead"),
            &plan("plan_approval-1@bob@t", "bob"),
        )
        .unwrap();
    }

    #[test]
    fn a_plan_verdict_answers_a_plan_the_lead_received_and_goes_to_its_submitter() {
        let (_dir, team) = fixture::team(&["bob", "carol"]);
        let id = "plan_approval-1@bob@t";
        let to = |name| checked(&team, "team-lead", Recipient::Member(name), &verdict(id));
        assert_eq!(
            refusal(to("bob")),
            format!("there is no plan_approval_request {id} in team-lead's inbox or history")
        );
        // A shutdown request with the id does not stand in for the plan.
        deliver(&team, "team-lead", "bob", &request(id, "bob"));
        refusal(to("bob"));

        deliver(&team, "team-lead", "bob", &plan(id, "bob"));
        to("bob").unwrap();
        assert_eq!(
            refusal(to("carol")),
            format!(
                "request {id} is for bob, not carol: a plan response goes to the teammate that submitted the plan"
            )
        );
    }

    fn permission_request(id: &str, asker: &str) -> Structured {
        Structured::parse(
            &serde_json::json!({
                "type": "permission_request", "request_id": id, "agent_id": asker,
                "tool_name": "Bash", "tool_use_id": "toolu_1", "description": "run it",
                "input": {"command": "make"}, "permission_suggestions": [],
            })
            .to_string(),
        )
        .unwrap()
    }

    fn permission_response(id: &str) -> Structured {
        Structured::parse(
            &serde_json::json!({
                "type": "permission_response", "request_id": id, "subtype": "success",
            })
            .to_string(),
        )
        .unwrap()
    }

    fn sandbox_request(id: &str, asker: &str) -> Structured {
        Structured::parse(&serde_json::json!({
            "type": "sandbox_permission_request", "requestId": id, "workerId": format!("{asker}@t"),
            "workerName": asker, "hostPattern": {"host": "example.com"}, "createdAt": 1,
        }).to_string())
        .unwrap()
    }

    fn sandbox_response(id: &str) -> Structured {
        Structured::parse(
            &serde_json::json!({
                "type": "sandbox_permission_response", "requestId": id, "host": "example.com",
                "allow": true, "timestamp": "t",
            })
            .to_string(),
        )
        .unwrap()
    }

    #[test]
    fn a_teammate_asks_the_lead_for_permission_as_itself() {
        let (_dir, team) = fixture::team(&["bob", "carol"]);
        for asked in [
            permission_request("perm-1-a", "bob"),
            sandbox_request("s-1", "bob"),
        ] {
            let kind = asked.kind();
            checked(&team, "bob", Recipient::Member("team-lead"), &asked).unwrap();
            assert_eq!(
                refusal(checked(&team, "bob", Recipient::Member("carol"), &asked)),
                format!("{kind} goes to the lead (team-lead), not to carol")
            );
            assert_eq!(
                refusal(checked(
                    &team,
                    "carol",
                    Recipient::Member("team-lead"),
                    &asked
                )),
                format!("{kind} says it is from bob, but you are carol")
            );
            assert!(
                refusal(checked(
                    &team,
                    "team-lead",
                    Recipient::Member("bob"),
                    &asked
                ))
                .starts_with("only a teammate may ask the lead for a permission")
            );
        }
    }

    #[test]
    fn only_the_lead_answers_a_permission_request_and_to_whoever_asked() {
        let (_dir, team) = fixture::team(&["bob", "carol"]);
        for (asked, answer, kind) in [
            (
                permission_request("perm-1-a", "bob"),
                permission_response("perm-1-a"),
                "permission_request",
            ),
            (
                sandbox_request("s-1", "bob"),
                sandbox_response("s-1"),
                "sandbox_permission_request",
            ),
        ] {
            let id = answer.request_id().unwrap().to_owned();
            assert_eq!(
                refusal(checked(
                    &team,
                    "team-lead",
                    Recipient::Member("bob"),
                    &answer
                )),
                format!("there is no {kind} {id} in team-lead's inbox or history")
            );
            deliver(&team, "team-lead", "bob", &asked);
            checked(&team, "team-lead", Recipient::Member("bob"), &answer).unwrap();
            assert_eq!(
                refusal(checked(
                    &team,
                    "team-lead",
                    Recipient::Member("carol"),
                    &answer
                )),
                format!(
                    "request {id} is bob's, not carol's: an answer goes to the teammate that asked"
                )
            );
            assert!(
                refusal(checked(&team, "carol", Recipient::Member("bob"), &answer)).starts_with(
                    "only the lead or the person at the keyboard may answer a permission request"
                )
            );
            assert_eq!(
                refusal(checked(
                    &team,
                    "team-lead",
                    Recipient::Member("team-lead"),
                    &answer
                )),
                format!(
                    "{} goes from the lead to a teammate, not to the lead",
                    answer.kind()
                )
            );
        }
    }

    #[test]
    fn what_claude_code_never_takes_from_an_inbox_is_never_sent() {
        let (_dir, team) = fixture::team(&["bob"]);
        for (text, why) in [
            (
                r#"{"type":"mode_set_request","mode":"acceptEdits","from":"team-lead"}"#,
                "Claude Code takes no permission mode",
            ),
            (
                r#"{"type":"team_permission_update","toolName":"Bash"}"#,
                "Claude Code takes no permission rules",
            ),
            (
                r#"{"type":"teammate_terminated","message":"bob died"}"#,
                "it is Claude Code's own note",
            ),
        ] {
            let message = Structured::parse(text).unwrap();
            for (me, to) in [("team-lead", "bob"), ("bob", "team-lead")] {
                let refused = refusal(checked(&team, me, Recipient::Member(to), &message));
                assert!(
                    refused.starts_with(&format!("{} is not sent: {why}", message.kind()))
                        && refused.ends_with("; nothing was sent"),
                    "{refused}"
                );
            }
        }
    }

    #[test]
    fn a_task_completed_goes_to_the_lead_from_whoever_it_names() {
        let (_dir, team) = fixture::team(&["bob", "carol"]);
        let done =
            Structured::parse(r#"{"type":"task_completed","from":"bob","taskId":"1"}"#).unwrap();
        checked(&team, "bob", Recipient::Member("team-lead"), &done).unwrap();
        assert_eq!(
            refusal(checked(
                &team,
                "carol",
                Recipient::Member("team-lead"),
                &done
            )),
            "task_completed says it is from bob, but you are carol"
        );
        assert_eq!(
            refusal(checked(&team, "bob", Recipient::Member("carol"), &done)),
            "task_completed goes to the lead (team-lead), not to carol"
        );
    }
}
