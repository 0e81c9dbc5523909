//! Who may do what. Every command that acts on a team asks [`allow`] (or [`allow_own`]) before it
//! does anything; [`RULES`] is the one statement of the policy, printed in docs/ARCHITECTURE.md
//! ("Who may do what") and in swarm(1), and tests hold both to it.
//!
//! A caller has one of three roles:
//! - the **lead**, the member named by `leadAgentId`;
//! - a **teammate**, a member that runs a program (an agent in a pane);
//! - the **person** at the keyboard: anyone else, a member added with `swarm join`, or `user`.
//!
//! The person has the lead's authority: what only the lead may do, the person may do too, and it
//! goes out under the lead's name, so teammates see the lead's requests as they always do.

use std::fmt;

use crate::base::names::Name;
use crate::error::{Error, Result};
use crate::format::config::TeamConfig;

/// The name of the person at the keyboard when they give no other.
pub(crate) const PERSON: &str = "user";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Lead,
    Person,
    Teammate,
}

/// Who runs a command: the name it acts as, and that name's role in the team.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Caller {
    name: Name,
    role: Role,
}

impl Caller {
    /// The caller named `asked` (`--as`), or the person at the keyboard when no name was given.
    pub(crate) fn resolve(config: &TeamConfig, asked: Option<Name>) -> Self {
        let Some(name) = asked else {
            return Self::person();
        };
        let role = if name.as_str() == config.lead_name() {
            Role::Lead
        } else if config
            .member(name.as_str())
            .is_some_and(|m| m.argv.is_some())
        {
            Role::Teammate
        } else {
            // `user`, a member added with `swarm join`, or a name the team does not know.
            Role::Person
        };
        Self { name, role }
    }

    /// Member `name` acting for itself: the lead, or a teammate's supervisor answering for it.
    pub(crate) fn member(config: &TeamConfig, name: &str) -> Result<Self> {
        Ok(Self::resolve(config, Some(Name::parse("member", name)?)))
    }

    /// The person at the keyboard, as `user`.
    pub(crate) fn person() -> Self {
        Self {
            name: Name::parse("member", PERSON).expect("`user` is a valid name"),
            role: Role::Person,
        }
    }

    pub(crate) fn name(&self) -> &Name {
        &self.name
    }
}

impl fmt::Display for Caller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name.as_str())
    }
}

/// What a caller asks to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    Send,
    Read,
    Consume,
    Join,
    Spawn,
    Stop,
    Down,
    Remove,
    RequestShutdown,
    AnswerShutdown,
    SubmitPlan,
    AnswerPlan,
    AssignTask,
}

/// What one role may do with an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Grant {
    /// Allowed, under the caller's own name.
    Yes,
    /// Allowed, under the lead's name.
    AsLead,
    /// Allowed only on what is the caller's own: its inbox, a request addressed to it.
    Own,
    No,
}

impl Grant {
    fn word(self) -> &'static str {
        match self {
            Self::Yes => "yes",
            Self::AsLead => "yes, as the lead",
            Self::Own => "its own only",
            Self::No => "no",
        }
    }
}

/// One line of the policy.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rule {
    pub(crate) action: Action,
    /// What the action is, in words: "spawn a teammate".
    pub(crate) doing: &'static str,
    /// The commands that do it.
    pub(crate) commands: &'static str,
    /// For an action on what is one's own, that thing, with `{owner}` for whose it is.
    own: &'static str,
    pub(crate) lead: Grant,
    pub(crate) person: Grant,
    pub(crate) teammate: Grant,
}

impl Rule {
    fn grant(&self, role: Role) -> Grant {
        match role {
            Role::Lead => self.lead,
            Role::Person => self.person,
            Role::Teammate => self.teammate,
        }
    }
}

/// The whole policy.
pub(crate) const RULES: [Rule; 13] = [
    rule(
        Action::Send,
        "send a message, or broadcast one",
        "send",
        [Grant::Yes, Grant::Yes, Grant::Yes],
    ),
    rule(
        Action::Read,
        "look at any member's inbox or history",
        "inbox, watch, status",
        [Grant::Yes, Grant::Yes, Grant::Yes],
    ),
    rule(
        Action::Consume,
        "consume messages from an inbox",
        "recv, watch --consume",
        [Grant::Own, Grant::Own, Grant::Own],
    )
    .own("consume messages from {owner}'s inbox"),
    rule(
        Action::Join,
        "add a member with no pane",
        "join",
        [Grant::Yes, Grant::Yes, Grant::No],
    ),
    rule(
        Action::Spawn,
        "spawn a teammate",
        "spawn",
        [Grant::Yes, Grant::Yes, Grant::No],
    ),
    rule(
        Action::Stop,
        "stop a member",
        "stop",
        [Grant::Yes, Grant::Yes, Grant::No],
    ),
    rule(
        Action::Down,
        "take the team down",
        "down",
        [Grant::Yes, Grant::Yes, Grant::No],
    ),
    rule(
        Action::Remove,
        "remove a team that ended, or archive it",
        "rm, prune, down --rm",
        [Grant::Yes, Grant::Yes, Grant::No],
    ),
    rule(
        Action::RequestShutdown,
        "ask a teammate to shut down",
        "shutdown request",
        [Grant::Yes, Grant::AsLead, Grant::No],
    ),
    rule(
        Action::AnswerShutdown,
        "answer a shutdown request",
        "shutdown approve, shutdown reject",
        [Grant::No, Grant::No, Grant::Own],
    )
    .own("answer {owner}'s shutdown request"),
    rule(
        Action::SubmitPlan,
        "submit a plan for approval",
        "plan submit",
        [Grant::No, Grant::No, Grant::Own],
    )
    .own("submit a plan as {owner}"),
    rule(
        Action::AnswerPlan,
        "answer a plan",
        "plan approve, plan reject",
        [Grant::Yes, Grant::AsLead, Grant::No],
    ),
    rule(
        Action::AssignTask,
        "assign a task",
        "send (task_assignment)",
        [Grant::Yes, Grant::AsLead, Grant::No],
    ),
];

const fn rule(
    action: Action,
    doing: &'static str,
    commands: &'static str,
    [lead, person, teammate]: [Grant; 3],
) -> Rule {
    Rule {
        action,
        doing,
        commands,
        own: "",
        lead,
        person,
        teammate,
    }
}

impl Rule {
    const fn own(mut self, own: &'static str) -> Self {
        self.own = own;
        self
    }
}

fn rule_for(action: Action) -> &'static Rule {
    RULES
        .iter()
        .find(|rule| rule.action == action)
        .expect("every action has a rule")
}

/// Whether `caller` may do `action` in the team of `config`: the name the action goes out under
/// (the lead's, when the person acts with the lead's authority), or a refusal with exit status 2.
/// For [`Grant::Own`] actions, use [`allow_own`].
pub(crate) fn allow(config: &TeamConfig, caller: &Caller, action: Action) -> Result<Name> {
    let rule = rule_for(action);
    match rule.grant(caller.role) {
        Grant::Yes | Grant::Own => Ok(caller.name.clone()),
        Grant::AsLead => Name::parse("lead", config.lead_name()),
        Grant::No => Err(refusal(config, caller, rule)),
    }
}

/// Whether `caller` may do an [`Grant::Own`] action on what belongs to `owner` (a request's
/// subject, an inbox's member).
pub(crate) fn allow_own(
    config: &TeamConfig,
    caller: &Caller,
    action: Action,
    owner: &str,
) -> Result<()> {
    let rule = rule_for(action);
    match rule.grant(caller.role) {
        Grant::Own if caller.name.as_str() != owner => Err(Error::usage(format!(
            "only {owner} may {}; you are {caller}",
            rule.own.replace("{owner}", owner)
        ))),
        Grant::No => Err(refusal(config, caller, rule)),
        Grant::Yes | Grant::AsLead | Grant::Own => Ok(()),
    }
}

fn refusal(config: &TeamConfig, caller: &Caller, rule: &Rule) -> Error {
    let lead = config.lead_name();
    let allowed: Vec<&str> = [
        (rule.lead, "the lead"),
        (rule.person, "the person at the keyboard"),
        (rule.teammate, "a teammate"),
    ]
    .into_iter()
    .filter(|(grant, _)| *grant != Grant::No)
    .map(|(_, who)| who)
    .collect();
    let who = match caller.role {
        Role::Lead => format!("{caller} is the lead"),
        Role::Person => format!("{caller} is not a teammate"),
        Role::Teammate => format!("{caller} is a teammate"),
    };
    let error = Error::usage(format!(
        "only {} may {}; {who}",
        allowed.join(" or "),
        rule.doing
    ));
    match caller.role {
        Role::Teammate if rule.lead != Grant::No => {
            error.with_hint(format!("ask the lead ({lead}) to do it"))
        }
        _ => error,
    }
}

/// The policy as (term, meaning) pairs, as the PERMISSIONS section of swarm(1) shows it.
pub(crate) fn definitions() -> Vec<(String, String)> {
    RULES
        .iter()
        .map(|rule| {
            (
                format!("{} ({})", rule.doing, rule.commands),
                format!(
                    "lead: {}; person at the keyboard: {}; teammate: {}.",
                    rule.lead.word(),
                    rule.person.word(),
                    rule.teammate.word()
                ),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::config::Member;

    fn team() -> TeamConfig {
        let mut bob = Member::new("bob", "t", 0);
        bob.argv = Some(vec!["claude".into()]);
        TeamConfig {
            name: "t".into(),
            lead_agent_id: "team-lead@t".into(),
            members: vec![
                Member::new("team-lead", "t", 0),
                bob,
                // Added with `swarm join`: no program, so a person.
                Member::new("alice", "t", 0),
            ],
            ..TeamConfig::default()
        }
    }

    fn caller(config: &TeamConfig, name: Option<&str>) -> Caller {
        Caller::resolve(config, name.map(|n| Name::parse("member", n).unwrap()))
    }

    #[test]
    fn roles_come_from_the_roster() {
        let config = team();
        assert_eq!(caller(&config, None).role, Role::Person);
        assert_eq!(caller(&config, None).name().as_str(), "user");
        assert_eq!(caller(&config, Some("team-lead")).role, Role::Lead);
        assert_eq!(caller(&config, Some("bob")).role, Role::Teammate);
        assert_eq!(caller(&config, Some("alice")).role, Role::Person);
        assert_eq!(caller(&config, Some("stranger")).role, Role::Person);
    }

    #[test]
    fn the_person_acts_with_the_leads_authority_under_its_name() {
        let config = team();
        for who in [None, Some("alice")] {
            let person = caller(&config, who);
            for action in [
                Action::Stop,
                Action::Down,
                Action::Remove,
                Action::Spawn,
                Action::Join,
            ] {
                assert_eq!(allow(&config, &person, action).unwrap(), *person.name());
            }
            for action in [
                Action::RequestShutdown,
                Action::AnswerPlan,
                Action::AssignTask,
            ] {
                assert_eq!(
                    allow(&config, &person, action).unwrap().as_str(),
                    "team-lead"
                );
            }
        }
    }

    #[test]
    fn teammates_are_refused_the_leads_actions_with_a_hint() {
        let config = team();
        let bob = caller(&config, Some("bob"));
        for rule in RULES.iter().filter(|rule| rule.teammate == Grant::No) {
            let err = allow(&config, &bob, rule.action).unwrap_err();
            assert_eq!(err.kind(), crate::error::ErrorKind::Usage);
            assert!(
                err.message().starts_with("only the lead"),
                "{}",
                err.message()
            );
            assert!(
                err.message().ends_with("bob is a teammate"),
                "{}",
                err.message()
            );
            assert!(err.hint().unwrap().contains("team-lead"));
        }
    }

    #[test]
    fn own_actions_need_the_owner() {
        let config = team();
        let bob = caller(&config, Some("bob"));
        assert!(allow_own(&config, &bob, Action::AnswerShutdown, "bob").is_ok());
        let err = allow_own(&config, &bob, Action::AnswerShutdown, "carol").unwrap_err();
        assert_eq!(
            err.message(),
            "only carol may answer carol's shutdown request; you are bob"
        );
        let lead = caller(&config, Some("team-lead"));
        let err = allow_own(&config, &lead, Action::SubmitPlan, "team-lead").unwrap_err();
        assert!(
            err.message()
                .starts_with("only a teammate may submit a plan"),
            "{}",
            err.message()
        );
    }

    /// The policy as a Markdown table, as docs/ARCHITECTURE.md shows it.
    fn markdown_table() -> String {
        let mut table = String::from(
            "| action | commands | lead | person at the keyboard | teammate |\n|---|---|---|---|---|\n",
        );
        for rule in &RULES {
            let cells = [
                rule.doing.to_owned(),
                format!("`{}`", rule.commands),
                rule.lead.word().to_owned(),
                rule.person.word().to_owned(),
                rule.teammate.word().to_owned(),
            ];
            table.push_str("| ");
            table.push_str(&cells.join(" | "));
            table.push_str(" |\n");
        }
        table
    }

    #[test]
    fn the_design_document_shows_this_policy() {
        let document = include_str!("../../docs/ARCHITECTURE.md");
        let table = markdown_table();
        assert!(
            document.contains(&table),
            "docs/ARCHITECTURE.md must hold, under \"Who may do what\":\n{table}"
        );
    }

    #[test]
    fn every_action_has_exactly_one_rule() {
        for rule in &RULES {
            let owns = [rule.lead, rule.person, rule.teammate].contains(&Grant::Own);
            assert_eq!(owns, rule.own.contains("{owner}"), "{:?}", rule.action);
            assert_eq!(
                RULES.iter().filter(|r| r.action == rule.action).count(),
                1,
                "{:?}",
                rule.action
            );
        }
    }
}
