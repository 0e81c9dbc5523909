//! Who may do what. Every command that acts on a team asks [`allow`] (or [`allow_own`]) before it
//! does anything; [`RULES`] is the one statement of the policy, printed in docs/ARCHITECTURE.md
//! ("Who may do what") and in swarm(1), and tests hold both to it.
//!
//! A caller's role comes from where it runs ([`Whereabouts`], docs/ARCHITECTURE.md, "Identity"):
//! - the **lead**, the member named by `leadAgentId`, in its own pane;
//! - a **teammate**, a member that runs a program, in its own pane;
//! - the **person** at the keyboard, outside every pane: as itself (`user`), a member added with
//!   `swarm join`, or, with `--as`, any member;
//! - a **stranger**: a member of another team, in its own pane.
//!
//! The person has the lead's authority: what only the lead may do, the person may do too, and it
//! goes out under the lead's name, so teammates see the lead's requests as they always do.

use std::fmt;

use crate::base::names::Name;
use crate::error::{Error, Result};
use crate::format::config::TeamConfig;
use crate::format::task::Task;
use crate::store::tasks::Refusal;

/// The name of the person at the keyboard when they give no other.
pub const PERSON: &str = "user";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Lead,
    Person,
    Teammate,
    /// A member of another team, acting on this one from its own pane.
    Stranger,
}

/// Where a command runs, as its ancestry shows it: the one thing a member cannot choose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Whereabouts {
    /// Outside every member's pane under this home: the person at the keyboard.
    Outside,
    /// Inside member `member`'s pane of team `team` (or among what its program left running).
    /// `lead`: its team's lead as the pane's supervisor was launched with (`SWARM_LEAD`), which
    /// config.json, a file every member can write, cannot change; the pane is the lead's when it
    /// names `member`. `None` where no supervisor says (what a killed supervisor left running).
    Pane {
        team: String,
        member: String,
        lead: Option<String>,
    },
    /// Inside member `member`'s pane of team `team` of another home: a stranger here, never the
    /// person at the keyboard.
    Elsewhere { team: String, member: String },
    /// Where it runs cannot be established, and why: the process has exited, cannot be read, or
    /// changed while it was read. Nobody: every decision refuses it (docs/ARCHITECTURE.md,
    /// "Identity").
    Unknown(String),
}

impl Whereabouts {
    /// Whether this is a pane launched as its team's lead's.
    fn is_lead_pane(&self) -> bool {
        matches!(self, Self::Pane { member, lead: Some(lead), .. } if lead == member)
    }

    /// The one line that refuses a process whose whereabouts cannot be told, `what` saying what
    /// was to be told ("where this command runs"); `None` for one that can be.
    pub fn refusal(&self, what: &str) -> Option<Error> {
        match self {
            Self::Unknown(why) => Some(Error::runtime(format!("cannot tell {what}: {why}"))),
            Self::Outside | Self::Pane { .. } | Self::Elsewhere { .. } => None,
        }
    }
}

/// The name a command was asked to act as: typed with `--as`, or inherited from `SWARM_AGENT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
    pub name: Name,
    pub typed: bool,
}

/// Who runs a command: the name it acts as, and that name's role in the team.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    name: Name,
    role: Role,
    /// In a pane of the team: its lead, as the pane's own supervisor was launched with, for a
    /// refusal to name whom to ask (never config.json's, which a teammate can rewrite).
    lead: Option<String>,
}

impl Caller {
    /// The caller at `whereabouts`, in the team of `config`. Inside a pane it is that pane's
    /// member, whatever `SWARM_AGENT` says; `--as` naming anyone else is refused. Outside every
    /// pane it is the member `asked` names, or the person at the keyboard.
    pub fn resolve(
        config: &TeamConfig,
        whereabouts: &Whereabouts,
        asked: Option<&Asked>,
    ) -> Result<Self> {
        let (team, member, is_lead) = match whereabouts {
            Whereabouts::Outside => return Ok(Self::named(config, asked.map(|a| a.name.clone()))),
            Whereabouts::Unknown(why) => {
                return Err(Error::runtime(format!(
                    "cannot tell where this command runs: {why}"
                )));
            }
            Whereabouts::Pane { team, member, .. } => (team, member, whereabouts.is_lead_pane()),
            Whereabouts::Elsewhere { team, member } => {
                if let Some(asked) = asked.filter(|a| a.typed) {
                    return Err(Error::usage(format!(
                        "this command runs in {member}'s pane of team {team} of another home, so \
                         it acts as {member}@{team}; --as {} is refused",
                        asked.name
                    )));
                }
                return Ok(Self {
                    name: Name::qualified(member, team),
                    role: Role::Stranger,
                    lead: None,
                });
            }
        };
        if let Some(asked) = asked.filter(|a| a.typed && a.name.as_str() != member) {
            return Err(Error::usage(format!(
                "this command runs in {member}'s pane of team {team}, so it acts as {member}; \
                 --as {} is refused",
                asked.name
            ))
            .with_hint(
                "a member acts only as itself; the person at the keyboard may use --as outside every pane",
            ));
        }
        if *team != config.name {
            return Ok(Self {
                name: Name::qualified(member, team),
                role: Role::Stranger,
                lead: None,
            });
        }
        let name = Name::parse("member", member)?;
        // The pane's own supervisor says whether it is the lead's, and who the lead is, never
        // config.json's `leadAgentId`, which any member can rewrite.
        let role = if is_lead { Role::Lead } else { Role::Teammate };
        let lead = match whereabouts {
            Whereabouts::Pane { lead, .. } => lead.clone(),
            Whereabouts::Outside | Whereabouts::Elsewhere { .. } | Whereabouts::Unknown(_) => None,
        };
        Ok(Self { name, role, lead })
    }

    /// The member `asked` names, with its role from the roster, or the person at the keyboard.
    fn named(config: &TeamConfig, asked: Option<Name>) -> Self {
        let Some(name) = asked else {
            // A team whose lead runs no program is run by a script or a person from outside
            // every pane: they are its lead, and read the lead's inbox (docs/ARCHITECTURE.md,
            // "Scripted teams").
            if let Some(lead) = scripted_lead(config) {
                return Self {
                    name: lead,
                    role: Role::Lead,
                    lead: None,
                };
            }
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
        Self {
            name,
            role,
            lead: None,
        }
    }

    /// Member `name` acting for itself: the lead, or a teammate's supervisor answering for it.
    pub fn member(config: &TeamConfig, name: &str) -> Result<Self> {
        Ok(Self::named(config, Some(Name::parse("member", name)?)))
    }

    /// The person at the keyboard, as `user`.
    pub(crate) fn person() -> Self {
        Self {
            name: Name::parse("member", PERSON).expect("`user` is a valid name"),
            role: Role::Person,
            lead: None,
        }
    }

    pub fn name(&self) -> &Name {
        &self.name
    }
}

impl fmt::Display for Caller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name.as_str())
    }
}

/// The lead of a team whose lead runs no program: whoever acts from outside every pane.
fn scripted_lead(config: &TeamConfig) -> Option<Name> {
    let lead = config.lead_name();
    config
        .member(lead)
        .is_none_or(|member| member.argv.is_none())
        .then(|| Name::parse("member", lead).ok())
        .flatten()
}

/// Whose inbox `name` is in the team of `config`: a member's on its roster (by the name the
/// roster spells), or the person at the keyboard's, `user`, which every team has whether or not
/// `swarm join` put it on the roster (docs/ARCHITECTURE.md, "The person's inbox").
/// In a scripted team (its lead runs no program) the person is the lead, and `user`'s messages
/// are the lead's.
pub fn inbox_owner<'a>(config: &'a TeamConfig, name: &'a str) -> Option<&'a str> {
    match config.member(name) {
        Some(member) => Some(member.name.as_str()),
        None if name == PERSON && scripted_lead(config).is_some() => Some(config.lead_name()),
        None => (name == PERSON).then_some(PERSON),
    }
}

/// [`inbox_owner`], or the not-found error every command gives for a name not on the roster.
pub fn require_inbox<'a>(config: &'a TeamConfig, name: &'a str) -> Result<&'a str> {
    match inbox_owner(config, name) {
        Some(owner) => Ok(owner),
        None => config
            .require_member(name)
            .map(|member| member.name.as_str()),
    }
}

/// What a caller asks to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
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
    /// Ask the lead to let one use a tool or reach a host (`permission_request`,
    /// `sandbox_permission_request`).
    AskPermission,
    /// Answer a teammate's permission request (`permission_response`,
    /// `sandbox_permission_response`).
    AnswerPermission,
    /// Look at the task list.
    ReadTasks,
    /// Add a task, or change one in any way: claim, start, finish, release, update.
    EditTasks,
    /// Type keys into a member's pane, as if at its keyboard.
    Type,
    /// Add tokens to one's own usage (`swarm usage add`).
    AddUsage,
    /// Set or raise a budget while the team runs (`swarm budget`).
    SetBudget,
    /// Use the team's signing agent: have a message from the lead's side signed, or a
    /// teammate's key pair made (docs/ARCHITECTURE.md, "Signed lead messages").
    Sign,
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
    /// Allowed on what is the caller's own or no one's: a task it owns, or one without owner.
    OwnOrFree,
    No,
}

impl Grant {
    fn word(self) -> &'static str {
        match self {
            Self::Yes => "yes",
            Self::AsLead => "yes, as the lead",
            Self::Own => "its own only",
            Self::OwnOrFree => "its own, or one nobody owns",
            Self::No => "no",
        }
    }
}

/// One line of the policy.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
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
    pub(crate) stranger: Grant,
}

impl Rule {
    fn grant(&self, role: Role) -> Grant {
        match role {
            Role::Lead => self.lead,
            Role::Person => self.person,
            Role::Teammate => self.teammate,
            Role::Stranger => self.stranger,
        }
    }
}

/// The whole policy.
pub(crate) const RULES: [Rule; 21] = [
    rule(
        Action::Send,
        "send a message, or broadcast one",
        "send",
        [Grant::Yes, Grant::Yes, Grant::Yes, Grant::Yes],
    ),
    rule(
        Action::Read,
        "look at any member's inbox or history, or the team's events or costs",
        "inbox, watch, status, events, cost, permission list, permission log",
        [Grant::Yes, Grant::Yes, Grant::Yes, Grant::Yes],
    ),
    rule(
        Action::Consume,
        "consume messages from an inbox",
        "recv, watch --consume",
        [Grant::Own, Grant::Own, Grant::Own, Grant::No],
    )
    .own("consume messages from {owner}'s inbox"),
    rule(
        Action::Join,
        "add a member with no pane",
        "join",
        [Grant::Yes, Grant::Yes, Grant::No, Grant::No],
    ),
    rule(
        Action::Spawn,
        "spawn a teammate",
        "spawn",
        [Grant::Yes, Grant::Yes, Grant::No, Grant::No],
    ),
    rule(
        Action::Stop,
        "stop a member",
        "stop",
        [Grant::Yes, Grant::Yes, Grant::No, Grant::No],
    ),
    rule(
        Action::Down,
        "take the team down",
        "down",
        [Grant::Yes, Grant::Yes, Grant::No, Grant::No],
    ),
    rule(
        Action::Remove,
        "remove a team that ended, or archive it",
        "rm, prune, down --rm",
        [Grant::Yes, Grant::Yes, Grant::No, Grant::No],
    ),
    rule(
        Action::RequestShutdown,
        "ask a teammate to shut down",
        "shutdown request",
        [Grant::Yes, Grant::AsLead, Grant::No, Grant::No],
    ),
    rule(
        Action::AnswerShutdown,
        "answer a shutdown request",
        "shutdown approve, shutdown reject",
        [Grant::No, Grant::No, Grant::Own, Grant::No],
    )
    .own("answer {owner}'s shutdown request"),
    rule(
        Action::SubmitPlan,
        "submit a plan for approval",
        "plan submit",
        [Grant::No, Grant::No, Grant::Own, Grant::No],
    )
    .own("submit a plan as {owner}"),
    rule(
        Action::AnswerPlan,
        "answer a plan",
        "plan approve, plan reject",
        [Grant::Yes, Grant::AsLead, Grant::No, Grant::No],
    ),
    rule(
        Action::AssignTask,
        "assign a task",
        "send (task_assignment), task assign, task add --owner, task update --owner",
        [Grant::Yes, Grant::AsLead, Grant::No, Grant::No],
    ),
    rule(
        Action::AskPermission,
        "ask the lead for a permission",
        "permission ask, permission hook, send (permission_request, sandbox_permission_request)",
        [Grant::No, Grant::No, Grant::Own, Grant::No],
    )
    .own("ask for a permission as {owner}"),
    rule(
        Action::AnswerPermission,
        "answer a permission request",
        "permission allow, permission deny, mode, send (permission_response, sandbox_permission_response)",
        [Grant::Yes, Grant::AsLead, Grant::No, Grant::No],
    ),
    rule(
        Action::ReadTasks,
        "look at the task list",
        "task list, task show, task wait",
        [Grant::Yes, Grant::Yes, Grant::Yes, Grant::No],
    ),
    rule(
        Action::EditTasks,
        "add a task, or change, claim, start, finish or release one",
        "task add, task update, task claim, task start, task done, task release",
        [Grant::Yes, Grant::Yes, Grant::OwnOrFree, Grant::No],
    )
    .own("change {owner}'s task"),
    rule(
        Action::Type,
        "type keys into a member's pane",
        "type",
        [Grant::Yes, Grant::Yes, Grant::No, Grant::No],
    ),
    rule(
        Action::AddUsage,
        "add tokens to one's own usage",
        "usage add",
        [Grant::Own, Grant::Own, Grant::Own, Grant::No],
    )
    .own("add to {owner}'s usage"),
    rule(
        Action::SetBudget,
        "set or raise a budget",
        "budget",
        [Grant::Yes, Grant::Yes, Grant::No, Grant::No],
    ),
    rule(
        Action::Sign,
        "sign the lead's messages to a teammate, or make its key",
        "key-agent, asked by send, shutdown, plan, down, spawn, up",
        [Grant::Yes, Grant::Yes, Grant::No, Grant::No],
    ),
];

const fn rule(
    action: Action,
    doing: &'static str,
    commands: &'static str,
    [lead, person, teammate, stranger]: [Grant; 4],
) -> Rule {
    Rule {
        action,
        doing,
        commands,
        own: "",
        lead,
        person,
        teammate,
        stranger,
    }
}

impl Rule {
    const fn own(mut self, own: &'static str) -> Self {
        self.own = own;
        self
    }
}

impl Role {
    /// The role of a process at `whereabouts` in team `team` led by `lead`, for a check that
    /// takes the lead's name from somewhere other than config.json (the signing agent): the lead
    /// only in a pane that is `lead`'s and was launched as the lead's. `None`: nobody, whose
    /// whereabouts cannot be told.
    pub fn of(whereabouts: &Whereabouts, team: &str, lead: &str) -> Option<Self> {
        Some(match whereabouts {
            Whereabouts::Unknown(_) => return None,
            Whereabouts::Outside => Self::Person,
            Whereabouts::Pane { team: at, .. } if at != team => Self::Stranger,
            Whereabouts::Elsewhere { .. } => Self::Stranger,
            Whereabouts::Pane { member, .. } if whereabouts.is_lead_pane() && member == lead => {
                Self::Lead
            }
            Whereabouts::Pane { .. } => Self::Teammate,
        })
    }
}

/// Whether a caller of `role` may do `action` at all; nobody (`None`) may do nothing.
pub fn permits(role: Option<Role>, action: Action) -> bool {
    role.is_some_and(|role| rule_for(action).grant(role) != Grant::No)
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
pub fn allow(config: &TeamConfig, caller: &Caller, action: Action) -> Result<Name> {
    let rule = rule_for(action);
    match rule.grant(caller.role) {
        Grant::Yes | Grant::Own | Grant::OwnOrFree => Ok(caller.name.clone()),
        Grant::AsLead => Name::parse("lead", config.lead_name()),
        Grant::No => Err(refusal(caller, rule)),
    }
}

/// Whether `caller` may do an [`Grant::Own`] action on what belongs to `owner` (a request's
/// subject, an inbox's member).
pub fn allow_own(caller: &Caller, action: Action, owner: &str) -> Result<()> {
    let rule = rule_for(action);
    match rule.grant(caller.role) {
        Grant::Own | Grant::OwnOrFree if caller.name.as_str() != owner => {
            Err(Error::usage(format!(
                "only {owner} may {}; you are {caller}",
                rule.own.replace("{owner}", owner)
            )))
        }
        Grant::No => Err(refusal(caller, rule)),
        Grant::Yes | Grant::AsLead | Grant::Own | Grant::OwnOrFree => Ok(()),
    }
}

/// The one check for every edit of a task (docs/ARCHITECTURE.md, "Who may do what"): whether
/// `caller` may change `task` (`None`: a task it creates) so that `new_owner` owns it (`None`:
/// the owner does not change). A teammate changes only a task it owns or one nobody owns, refused
/// as Claude Code refuses a claim (`already_claimed`); giving a task to anyone but oneself is
/// assigning it, the lead's.
pub fn allow_task_edit(
    config: &TeamConfig,
    caller: &Caller,
    task: Option<&Task>,
    new_owner: Option<&str>,
) -> Result<()> {
    let rule = rule_for(Action::EditTasks);
    let owner = task.and_then(Task::owner);
    match rule.grant(caller.role) {
        Grant::No => return Err(refusal(caller, rule)),
        Grant::OwnOrFree | Grant::Own => {
            if let (Some(task), Some(owner)) = (task, owner)
                && owner != caller.name.as_str()
            {
                return Err(Refusal::AlreadyClaimed {
                    owner: owner.to_owned(),
                }
                .error(task.id()));
            }
        }
        Grant::Yes | Grant::AsLead => {}
    }
    if let Some(new) = new_owner
        && new != caller.name.as_str()
        && Some(new) != owner
    {
        allow(config, caller, Action::AssignTask)?;
    }
    Ok(())
}

fn refusal(caller: &Caller, rule: &Rule) -> Error {
    let allowed: Vec<&str> = [
        (rule.lead, "the lead"),
        (rule.person, "the person at the keyboard"),
        (rule.teammate, "a teammate"),
        (rule.stranger, "another team's member"),
    ]
    .into_iter()
    .filter(|(grant, _)| *grant != Grant::No)
    .map(|(_, who)| who)
    .collect();
    let who = match caller.role {
        Role::Lead => format!("{caller} is the lead"),
        Role::Person => format!("{caller} is not a teammate"),
        Role::Teammate => format!("{caller} is a teammate"),
        Role::Stranger => format!("{caller} is a member of another team"),
    };
    let error = Error::usage(format!(
        "only {} may {}; {who}",
        allowed.join(" or "),
        rule.doing
    ));
    match caller.role {
        // Named only as the caller's own pane knows the lead.
        Role::Teammate if rule.lead != Grant::No => error.with_hint(match &caller.lead {
            Some(lead) => format!("ask the lead ({lead}) to do it"),
            None => "ask the lead to do it".to_owned(),
        }),
        _ => error,
    }
}

/// Who each column of the policy is, and from where it acts: the roles in the order of a
/// [`Rule`]'s grants.
pub(crate) const COLUMNS: [&str; 4] = [
    "lead, in its pane",
    "person at the keyboard, outside every pane",
    "teammate, in its pane",
    "another team's member, in its pane",
];

impl Rule {
    fn grants(&self) -> [Grant; 4] {
        [self.lead, self.person, self.teammate, self.stranger]
    }
}

/// The policy as (term, meaning) pairs, as the PERMISSIONS section of swarm(1) shows it.
pub fn definitions() -> Vec<(String, String)> {
    RULES
        .iter()
        .map(|rule| {
            let cells: Vec<String> = COLUMNS
                .iter()
                .zip(rule.grants())
                .map(|(who, grant)| format!("{who}: {}", grant.word()))
                .collect();
            (
                format!("{} ({})", rule.doing, rule.commands),
                format!("{}.", cells.join("; ")),
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
        let mut lead = Member::new("team-lead", "t", 0);
        lead.argv = Some(vec!["claude".into()]);
        TeamConfig {
            name: "t".into(),
            lead_agent_id: "team-lead@t".into(),
            members: vec![
                lead,
                bob,
                // Added with `swarm join`: no program, so a person.
                Member::new("alice", "t", 0),
            ],
            ..TeamConfig::default()
        }
    }

    fn caller(config: &TeamConfig, name: Option<&str>) -> Caller {
        let asked = name.map(|n| Asked {
            name: Name::parse("member", n).unwrap(),
            typed: true,
        });
        Caller::resolve(config, &Whereabouts::Outside, asked.as_ref()).unwrap()
    }

    fn in_pane(team: &str, member: &str) -> Whereabouts {
        Whereabouts::Pane {
            team: team.into(),
            member: member.into(),
            lead: Some("team-lead".into()),
        }
    }

    #[test]
    fn inside_a_pane_the_caller_is_that_member_whatever_it_asks() {
        let config = team();
        let bob = in_pane("t", "bob");
        let lead = |typed| Asked {
            name: Name::parse("member", "team-lead").unwrap(),
            typed,
        };
        // SWARM_AGENT naming someone else is not who runs the command.
        let caller = Caller::resolve(&config, &bob, Some(&lead(false))).unwrap();
        assert_eq!(
            (caller.name().as_str(), caller.role),
            ("bob", Role::Teammate)
        );
        // --as naming someone else is refused.
        let err = Caller::resolve(&config, &bob, Some(&lead(true))).unwrap_err();
        assert_eq!(err.kind(), crate::error::ErrorKind::Usage);
        assert!(
            err.message().contains("--as team-lead is refused"),
            "{}",
            err.message()
        );
        // The lead's pane is the lead.
        let caller = Caller::resolve(&config, &in_pane("t", "team-lead"), None).unwrap();
        assert_eq!(caller.role, Role::Lead);
        // Another team's member is a stranger: it may send and read, nothing more.
        let stranger = Caller::resolve(&config, &in_pane("other", "team-lead"), None).unwrap();
        assert_eq!(
            (stranger.name().as_str(), stranger.role),
            ("team-lead@other", Role::Stranger)
        );
        for rule in &RULES {
            let allowed = match rule.stranger {
                Grant::No => allow(&config, &stranger, rule.action).is_err(),
                _ => allow(&config, &stranger, rule.action).is_ok(),
            };
            assert!(allowed, "{:?}", rule.action);
            assert_eq!(
                rule.stranger != Grant::No,
                matches!(rule.action, Action::Send | Action::Read),
                "{:?}",
                rule.action
            );
        }
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
        // A team whose lead runs no program is a script's: outside every pane is its lead.
        let mut scripted = team();
        scripted.members[0].argv = None;
        assert_eq!(caller(&scripted, None).role, Role::Lead);
        assert_eq!(caller(&scripted, None).name().as_str(), "team-lead");
        assert_eq!(inbox_owner(&scripted, PERSON), Some("team-lead"));
        assert_eq!(inbox_owner(&config, PERSON), Some(PERSON));
    }

    #[test]
    fn the_person_has_an_inbox_in_every_team() {
        let config = team();
        assert_eq!(inbox_owner(&config, "user"), Some("user"));
        assert_eq!(inbox_owner(&config, "bob"), Some("bob"));
        assert_eq!(inbox_owner(&config, "ghost"), None);
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
                Action::Type,
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
        // Acting as bob from outside every pane: no pane names the lead.
        let outside = caller(&config, Some("bob"));
        let bob = Caller::resolve(&config, &in_pane("t", "bob"), None).unwrap();
        for rule in RULES.iter().filter(|rule| rule.teammate == Grant::No) {
            let err = allow(&config, &outside, rule.action).unwrap_err();
            assert_eq!(err.hint(), Some("ask the lead to do it"));
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
            assert_eq!(err.hint(), Some("ask the lead (team-lead) to do it"));
        }
    }

    #[test]
    fn own_actions_need_the_owner() {
        let config = team();
        let bob = caller(&config, Some("bob"));
        assert!(allow_own(&bob, Action::AnswerShutdown, "bob").is_ok());
        let err = allow_own(&bob, Action::AnswerShutdown, "carol").unwrap_err();
        assert_eq!(
            err.message(),
            "only carol may answer carol's shutdown request; you are bob"
        );
        let lead = caller(&config, Some("team-lead"));
        let err = allow_own(&lead, Action::SubmitPlan, "team-lead").unwrap_err();
        assert!(
            err.message()
                .starts_with("only a teammate may submit a plan"),
            "{}",
            err.message()
        );
    }

    #[test]
    fn only_the_leads_side_may_sign_whatever_config_json_says() {
        let role = |w: &Whereabouts| Role::of(w, "t", "team-lead");
        assert!(permits(role(&Whereabouts::Outside), Action::Sign));
        assert!(permits(role(&in_pane("t", "team-lead")), Action::Sign));
        assert!(!permits(role(&in_pane("t", "bob")), Action::Sign));
        // Another team's lead is a stranger here.
        assert!(!permits(role(&in_pane("u", "team-lead")), Action::Sign));
        // A pane not launched as the lead's is a teammate's, whatever it is called.
        let named_lead = Whereabouts::Pane {
            team: "t".into(),
            member: "team-lead".into(),
            lead: None,
        };
        assert!(!permits(role(&named_lead), Action::Sign));
        // Nobody may do anything.
        let nobody = Whereabouts::Unknown("process 7 has exited".into());
        assert!(!permits(role(&nobody), Action::Sign));
        assert!(!permits(role(&nobody), Action::Send));
    }

    #[test]
    fn the_lead_is_who_its_pane_was_launched_as_not_who_config_json_names() {
        let mut config = team();
        config.lead_agent_id = "bob@t".into();
        let bob = Caller::resolve(&config, &in_pane("t", "bob"), None).unwrap();
        assert_eq!(bob.role, Role::Teammate);
        // Whom a refusal tells bob to ask is its own pane's word too.
        let err = allow(&config, &bob, Action::Stop).unwrap_err();
        assert_eq!(err.hint(), Some("ask the lead (team-lead) to do it"));
        let lead = Caller::resolve(&config, &in_pane("t", "team-lead"), None).unwrap();
        assert_eq!(lead.role, Role::Lead);
        let err = Caller::resolve(&config, &Whereabouts::Unknown("gone".into()), None).unwrap_err();
        assert_eq!(err.kind(), crate::error::ErrorKind::Runtime);
        assert_eq!(err.message(), "cannot tell where this command runs: gone");
    }

    /// The policy as a Markdown table, as docs/ARCHITECTURE.md shows it.
    fn markdown_table() -> String {
        let mut table = format!(
            "| action | commands | {} |\n|---|---|---|---|---|---|\n",
            COLUMNS.join(" | ")
        );
        for rule in &RULES {
            let mut cells = vec![rule.doing.to_owned(), format!("`{}`", rule.commands)];
            cells.extend(rule.grants().iter().map(|grant| grant.word().to_owned()));
            table.push_str("| ");
            table.push_str(&cells.join(" | "));
            table.push_str(" |\n");
        }
        table
    }

    #[test]
    fn the_design_document_shows_this_policy() {
        let document = include_str!("../../../../docs/ARCHITECTURE.md");
        let table = markdown_table();
        assert!(
            document.contains(&table),
            "docs/ARCHITECTURE.md must hold, under \"Who may do what\":\n{table}"
        );
    }

    #[test]
    fn every_action_has_exactly_one_rule() {
        for rule in &RULES {
            let owns = rule
                .grants()
                .iter()
                .any(|grant| matches!(grant, Grant::Own | Grant::OwnOrFree));
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
