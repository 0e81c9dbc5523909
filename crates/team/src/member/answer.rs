//! Answering a request: the lead's side approves or rejects a teammate's plan, a teammate approves
//! or rejects a shutdown request addressed to it. `plan approve|reject`, `shutdown
//! approve|reject` and the dashboard's decisions all answer here, under the same policy
//! (docs/ARCHITECTURE.md, "Who may do what").

use crate::base::clock;
use crate::error::{Error, Result};
use crate::format::config::TeamConfig;
use crate::format::event::What;
use crate::format::structured::{
    PlanApprovalResponse, ShutdownApproved, ShutdownRejected, Structured, request_subject,
};
use crate::member::reach::Reach;
use crate::member::seal;
use crate::policy::{self, Action, Caller};
use crate::protocol::exchange;
use crate::store::events;
use crate::store::team::Team;

/// The lead's side's answer to a plan.
pub struct PlanVerdict {
    pub approved: bool,
    /// The permission mode the teammate goes on in, once approved.
    pub permission_mode: Option<String>,
    pub feedback: Option<String>,
}

/// Answers plan request `request_id` as `caller`; returns the teammate that asked.
pub fn plan(
    team: &Team,
    reach: &dyn Reach,
    config: &TeamConfig,
    caller: &Caller,
    request_id: &str,
    verdict: PlanVerdict,
) -> Result<String> {
    let PlanVerdict {
        approved,
        permission_mode,
        feedback,
    } = verdict;
    let me = policy::allow(config, caller, Action::AnswerPlan)?;
    let subject = request_subject(request_id)
        .filter(|_| request_id.starts_with("plan_approval-"))
        .ok_or_else(|| {
            Error::usage(format!(
                "{request_id:?} is not a plan request id (plan_approval-<ms>@<name>@<team>)"
            ))
        })?
        .to_owned();
    let message = Structured::PlanApprovalResponse(PlanApprovalResponse {
        request_id: request_id.to_owned(),
        approved,
        feedback,
        timestamp: clock::timestamp_now(),
        permission_mode,
        plan_digest: None,
    });
    seal::request(team, reach, config, caller, &subject, &message)?;
    events::tell(
        team.paths(),
        Some(&subject),
        What::Answered {
            request_id: request_id.to_owned(),
            allowed: approved,
            by: me.to_string(),
        },
    );
    retire(team, me.as_str(), request_id);
    Ok(subject)
}

/// Answers shutdown request `request_id` as `caller`, the teammate it is addressed to: approved
/// without `rejection`, else rejected for that reason. Returns the lead, whom the answer went to.
pub fn shutdown(
    team: &Team,
    reach: &dyn Reach,
    config: &TeamConfig,
    caller: &Caller,
    request_id: &str,
    rejection: Option<String>,
) -> Result<String> {
    let subject = request_subject(request_id)
        .filter(|_| request_id.starts_with("shutdown-"))
        .ok_or_else(|| {
            Error::usage(format!(
                "{request_id:?} is not a shutdown request id (shutdown-<ms>@<name>)"
            ))
        })?;
    policy::allow_own(caller, Action::AnswerShutdown, subject)?;
    let me = caller.name();
    let lead = config.lead_name().to_owned();
    let timestamp = clock::timestamp_now();
    let message = match rejection {
        Some(reason) => Structured::ShutdownRejected(ShutdownRejected {
            request_id: request_id.to_owned(),
            from: me.to_string(),
            reason,
            timestamp,
        }),
        None => {
            let pane = config
                .member(me.as_str())
                .map(|m| m.tmux_pane_id.clone())
                .filter(|p| !p.is_empty());
            Structured::ShutdownApproved(ShutdownApproved {
                request_id: request_id.to_owned(),
                from: me.to_string(),
                timestamp,
                backend_type: pane.as_ref().map(|_| "tmux".to_owned()),
                pane_id: pane,
            })
        }
    };
    seal::request(team, reach, config, caller, &lead, &message)?;
    retire(team, me.as_str(), request_id);
    Ok(lead)
}

/// The answer is sent, and it is what counts: a request left unread is only clutter.
fn retire(team: &Team, holder: &str, request_id: &str) {
    if let Err(err) = exchange::retire(team, holder, request_id) {
        tracing::warn!("answered {request_id}, but it stays unread in {holder}'s inbox: {err}");
    }
}
