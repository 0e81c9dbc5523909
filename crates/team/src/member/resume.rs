//! Resuming an interrupted team (docs/ARCHITECTURE.md, "Resuming a team"): the members whose runs
//! were cut short start again from config.json's records, with the same settings, each Claude Code
//! member in its own conversation again, with a new verify key, and the lead's unread messages
//! signed again for it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::base::secrets;
use crate::base::{clock, ids};
use crate::error::{Error, Result};
use crate::format::config::{Member, TeamConfig};
use crate::format::message::InboxMessage;
use crate::format::permission_rule::Rules;
use crate::format::settings::{Color, Isolation};
use crate::format::signature::{Judge, VerifyKey};
use crate::format::structured::Structured;
use crate::format::usage::token_count;
use crate::launch::argv::{self, Role, TeamLaunch};
use crate::launch::keys;
use crate::launch::prepare::PanePlan;
use crate::launch::teamfile::{DEFAULT_LOG_MAX, TeamFile};
use crate::member::ending;
use crate::member::liveness::Observed;
use crate::member::reach::Reach;
use crate::member::seal;
use crate::store::relaunch;
use crate::store::team::Team;
use crate::store::usage::Tally;

/// A team ready to be placed again: its panes, and what could not be brought back as it was.
#[derive(Debug)]
pub struct Resumed {
    /// The panes of this host's members.
    pub panes: Vec<PanePlan>,
    /// The plans of the members other hosts run, keyed here (a new key each, in its variables):
    /// each host's node resumes its own ([`resume_handed`]), making its command there, where its
    /// session's files are.
    pub away: Vec<PanePlan>,
    /// One line for each thing said on stderr: a member that starts a new conversation, a
    /// variable whose value config.json does not keep.
    pub notes: Vec<String>,
}

/// What a member resumes with: its record made ready to run again, and its pane.
struct Relaunch {
    member: Member,
    plan: PanePlan,
    /// The key it verified the lead's messages with until now.
    old_key: Option<String>,
    /// Its run was ended by `down`, whose shutdown request it may not have read.
    brought_down: bool,
}

/// Refuses to resume a team whose own budget is spent (docs/ARCHITECTURE.md, "Costs and
/// budgets"): it would be stopped again at its first reply.
fn refuse_if_spent(team: &Team, config: &TeamConfig) -> Result<()> {
    let Some(limit) = config.budget.as_ref().map(|budget| budget.team) else {
        return Ok(());
    };
    let mut tally = Tally::default();
    tally.read_on(team.paths())?;
    let spend = tally.total(&config.prices);
    if limit.used(&spend).is_some_and(|used| used >= 1.0) {
        return Err(Error::usage(format!(
            "team {} has spent its budget: {} ({} tokens) of {}",
            config.name,
            spend.money(),
            token_count(spend.tokens.total()),
            limit.describe()
        ))
        .with_hint(format!(
            "raise it with `swarm budget {} USD`, then resume",
            config.name
        )));
    }
    Ok(())
}

/// The refusal of a resume of team `name` on a host other than its lead's, `host`.
pub fn led_elsewhere(name: &str, host: &str) -> Error {
    Error::usage(format!(
        "team {name} is led from host {host}: resume it there"
    ))
    .with_hint("its node there asks this host's node to resume the members here")
}

/// Makes `team`, which `observed` shows interrupted, ready to be placed again: every member whose
/// run was cut short gets its recorded command again (a Claude Code member `--resume` with its
/// session when its transcript is there, else a new `--session-id`), its environment rebuilt
/// (each variable's value from `file` when given: config.json keeps only names), a new key for a
/// teammate, and its record cleared of the old run. Unread messages from the lead's side that
/// verified with the old key are stamped now, given a new `msg_id` and signed with the new one,
/// as a new launch verifies nothing older. Nothing is started; the caller places the panes.
///
/// A member on another host gets its environment and new key here, in [`Resumed::away`], and its
/// record here only the new key (its host's node answers for the rest); the messages that wait
/// here to cross to it are signed again too. A team led from another host is resumed there.
pub fn prepare(
    team: &Team,
    reach: &dyn Reach,
    observed: &Observed,
    file: Option<&TeamFile>,
    launcher_env: &dyn Fn(&str) -> Option<String>,
) -> Result<Resumed> {
    let config = &observed.config;
    if let Some(lead) = config.member(config.lead_name())
        && !observed.is_here(lead)
    {
        return Err(led_elsewhere(
            &config.name,
            lead.host.as_deref().unwrap_or("?"),
        ));
    }
    refuse_if_spent(team, config)?;
    let names: Vec<String> = observed
        .to_resume()
        .into_iter()
        .filter(|member| member.argv.as_ref().is_some_and(|argv| !argv.is_empty()))
        .map(|member| member.name.clone())
        .collect();
    let lead = config.lead_name().to_owned();
    let launch_team = team_launch(team, config);
    // The new signing agent alerts as the team file says; without one, as the agent's defaults.
    let notify = file.map(TeamFile::notify).transpose()?;
    // Without a team file, what the launch recorded beside config.json.
    let recorded = match file {
        Some(_) => relaunch::Launches::new(),
        None => relaunch::read(team.paths())?,
    };
    let mut notes = Vec::new();
    let mut relaunches = Vec::new();
    let mut away = Vec::new();
    for name in &names {
        let member = config.require_member(name)?;
        let own = match file {
            Some(file) => own_env(Some(file), name, &lead),
            None => recorded_env(recorded.get(name.as_str()), member, launcher_env),
        };
        let env = environment(&launch_team, member, &own, launcher_env, &mut notes);
        let mut relaunch = if observed.is_here(member) {
            again(&launch_team, member, env, launcher_env, &mut notes)
        } else {
            // Its command is made on its own host; only its key changes in its record here.
            let argv = member.argv.clone().unwrap_or_default();
            Relaunch {
                member: member.clone(),
                plan: plan_of(member, argv, env),
                old_key: member.lead_verify_key.clone(),
                // Its inbox is on its host, whose node settles it there.
                brought_down: false,
            }
        };
        if *name != lead {
            let rules = match file {
                Some(file) => file
                    .members
                    .iter()
                    .find(|m| m.name.as_str() == name)
                    .map_or_else(Rules::default, |spec| spec.permissions.clone()),
                None => recorded
                    .get(name.as_str())
                    .map_or_else(Rules::default, |launch| launch.permissions.clone()),
            };
            let key = seal::make_key(
                team.home(),
                team.name(),
                &lead,
                name,
                &rules,
                &relaunch.plan.cwd,
                notify.as_ref(),
            )?;
            keys::apply(&mut relaunch.member, &mut relaunch.plan.env, &key);
            relaunch.plan.argv = relaunch.member.argv.clone().unwrap_or_default();
            relaunch.member.key_host = keyed_on(config);
        }
        if observed.is_here(member) {
            relaunches.push(relaunch);
        } else {
            away.push(relaunch);
        }
    }
    write_again(team, reach, relaunches.iter().chain(&away))?;
    Ok(Resumed {
        panes: relaunches.into_iter().map(|r| r.plan).collect(),
        away: away.into_iter().map(|r| r.plan).collect(),
        notes,
    })
}

/// Makes the members of `handed`, this host's part of a team the lead's host resumes
/// (docs/ARCHITECTURE.md, "Resuming a team"), ready to be placed again here: each plan, made
/// there with the member's new key among its variables, gets its command made here as
/// [`prepare`] makes it (a Claude Code member `--resume` while its transcript is on this host),
/// and the lead's unread messages here are signed again with the new key, by the host that holds
/// it. Refused (exit 2) for a member of this host whose run was not interrupted.
pub fn resume_handed(
    team: &Team,
    reach: &dyn Reach,
    observed: &Observed,
    handed: Vec<PanePlan>,
    launcher_env: &dyn Fn(&str) -> Option<String>,
) -> Result<Resumed> {
    let config = &observed.config;
    let launch_team = team_launch(team, config);
    let mut notes = Vec::new();
    let mut relaunches = Vec::new();
    let to_resume = observed.to_resume();
    for plan in handed {
        let member = to_resume
            .iter()
            .copied()
            .find(|m| m.name == plan.name && observed.is_here(m))
            .ok_or_else(|| {
                Error::usage(format!(
                    "{} of team {} was neither interrupted nor brought down here: there is nothing to resume",
                    plan.name, config.name
                ))
            })?;
        let key = plan.env.get(keys::KEY_VAR).cloned();
        let mut relaunch = again(&launch_team, member, plan.env, launcher_env, &mut notes);
        if let Some(key) = key {
            keys::apply(&mut relaunch.member, &mut relaunch.plan.env, &key);
            relaunch.plan.argv = relaunch.member.argv.clone().unwrap_or_default();
            relaunch.member.key_host = keyed_on(config);
        }
        relaunches.push(relaunch);
    }
    write_again(team, reach, relaunches.iter())?;
    Ok(Resumed {
        panes: relaunches.into_iter().map(|r| r.plan).collect(),
        away: Vec::new(),
        notes,
    })
}

/// The host a resume's new keys are made and held on, the lead's (`keyHost`): a member spawned on
/// another host was keyed there, and its new key is not. None for a team on one host.
fn keyed_on(config: &TeamConfig) -> Option<String> {
    if !config.spans_hosts() {
        return None;
    }
    config
        .member(config.lead_name())
        .and_then(|lead| lead.host.clone())
}

/// Writes each relaunch's record into config.json, the team marked as being placed, then signs
/// each member's unread messages from the lead's side again with its new key.
fn write_again<'a>(
    team: &Team,
    reach: &dyn Reach,
    relaunches: impl Iterator<Item = &'a Relaunch> + Clone,
) -> Result<()> {
    team.update(|config| {
        for relaunch in relaunches.clone() {
            *config.remaining_member_mut(&relaunch.member.name)? = relaunch.member.clone();
        }
        // The old window is gone with its server: the panes are placed as `up` places them.
        config.tmux = None;
        // Until every pane is placed, a member whose program ends at once keeps its pane.
        config.launching = true;
        Ok(())
    })?;
    let config = team.load()?;
    for relaunch in relaunches.clone() {
        if let Err(err) = sign_again(team, reach, &config, relaunch) {
            let names: Vec<String> = relaunches.map(|r| r.member.name.clone()).collect();
            return Err(ending::resume_failed(team, &names, err));
        }
    }
    Ok(())
}

/// How a member of a running team starts again when its restart policy brings it back: its
/// command, its session, and what to say of it.
#[derive(Debug)]
pub struct Restarted {
    pub argv: Vec<String>,
    pub session_id: Option<String>,
    pub notes: Vec<String>,
}

/// The command `member` of `team` starts again with when its restart policy brings it back
/// (docs/ARCHITECTURE.md, "Restart policies"): built as `up --resume` builds it, a Claude Code
/// member in its own conversation (`--resume`), with the verify key it was launched with, since
/// its team's signing agent still holds that key. `own` holds the variables its launch set.
pub fn restarted(
    team: &Team,
    config: &TeamConfig,
    member: &Member,
    own: &BTreeMap<String, String>,
    launcher_env: &dyn Fn(&str) -> Option<String>,
) -> Restarted {
    let launch_team = team_launch(team, config);
    let mut notes = Vec::new();
    let mut again = relaunch(&launch_team, member, own, launcher_env, &mut notes);
    if let Some(key) = again.old_key.as_deref() {
        keys::apply(&mut again.member, &mut again.plan.env, key);
    }
    Restarted {
        argv: again.member.argv.unwrap_or_default(),
        session_id: again.member.session_id,
        notes,
    }
}

/// What every relaunch of a member of `config`'s team is built on: the lead as config.json
/// records it, with no argv of its own to pass on (each member's recorded argv is its own).
fn team_launch<'a>(team: &'a Team, config: &'a TeamConfig) -> TeamLaunch<'a> {
    TeamLaunch {
        home: team.home().root(),
        team: team.name(),
        lead: config.lead_name(),
        lead_session_id: config.lead_session_id.as_deref().unwrap_or_default(),
        lead_profile: config
            .launch
            .as_ref()
            .map(|launch| launch.profile)
            .unwrap_or_default(),
        lead_argv: None,
        inherit: &[],
    }
}

/// The values of a member's own variables when no team file is given: those its launch recorded
/// (`store/relaunch.rs`), and for each secret-looking name it was launched with, which is never
/// recorded, the value the resuming process has, if any.
fn recorded_env(
    recorded: Option<&relaunch::MemberLaunch>,
    member: &Member,
    launcher_env: &dyn Fn(&str) -> Option<String>,
) -> BTreeMap<String, String> {
    let mut env = recorded.map(|r| r.env.clone()).unwrap_or_default();
    for name in member.env_keys.iter().flatten() {
        if secrets::looks_secret(name)
            && !env.contains_key(name)
            && let Some(value) = launcher_env(name)
        {
            env.insert(name.clone(), value);
        }
    }
    env
}

/// The values of a member's own variables, from the team file when one is given.
fn own_env(file: Option<&TeamFile>, name: &str, lead: &str) -> BTreeMap<String, String> {
    let Some(file) = file else {
        return BTreeMap::new();
    };
    if name == lead {
        return file.lead.env.clone();
    }
    file.members
        .iter()
        .find(|m| m.name.as_str() == name)
        .map(|spec| spec.env.clone())
        .unwrap_or_default()
}

/// `member`'s command and environment once more, and its record cleared of the run that was
/// interrupted.
fn relaunch(
    launch_team: &TeamLaunch<'_>,
    member: &Member,
    own: &BTreeMap<String, String>,
    launcher_env: &dyn Fn(&str) -> Option<String>,
    notes: &mut Vec<String>,
) -> Relaunch {
    let env = environment(launch_team, member, own, launcher_env, notes);
    again(launch_team, member, env, launcher_env, notes)
}

/// The variables `member` resumes with, its `own` values among them; a name it was launched with
/// whose value is not known now is said in `notes`.
fn environment(
    launch_team: &TeamLaunch<'_>,
    member: &Member,
    own: &BTreeMap<String, String>,
    launcher_env: &dyn Fn(&str) -> Option<String>,
    notes: &mut Vec<String>,
) -> BTreeMap<String, String> {
    let profile = member.profile.unwrap_or_default();
    let role = if member.name == launch_team.lead {
        Role::Lead
    } else {
        Role::Teammate {
            name: &member.name,
            profile,
            plan_mode_required: member.plan_mode_required == Some(true),
            color: member.color.as_deref().and_then(Color::parse),
        }
    };
    let env = launch_team.environment(&role, own, &member.env_policy, launcher_env);
    let withheld: Vec<&str> = member
        .env_keys
        .iter()
        .flatten()
        .map(String::as_str)
        .filter(|key| *key != keys::KEY_VAR && !env.contains_key(*key))
        .collect();
    if !withheld.is_empty() {
        notes.push(format!(
            "{} resumes without {}: swarm keeps no secret's value; set it where you resume, or \
             give the team file (`swarm up --resume TEAMFILE`)",
            member.name,
            withheld.join(", ")
        ));
    }
    env
}

/// `member`'s command once more, made on the host it runs on (`launch::argv::resume`: its
/// session's files are there), with variables `env`, and its record cleared of the run that was
/// interrupted.
fn again(
    launch_team: &TeamLaunch<'_>,
    member: &Member,
    env: BTreeMap<String, String>,
    launcher_env: &dyn Fn(&str) -> Option<String>,
    notes: &mut Vec<String>,
) -> Relaunch {
    // The lead's id is the team's, which its teammates name as their parent.
    let fresh_id = if member.name == launch_team.lead {
        launch_team.lead_session_id.to_owned()
    } else {
        ids::fresh().to_string()
    };
    let var = |key: &str| env.get(key).cloned().or_else(|| launcher_env(key));
    let argv::Resumption {
        argv,
        session_id,
        note,
    } = argv::resume(member, &fresh_id, &var);
    notes.extend(note);
    let mut record = member.clone();
    record.session_id = session_id;
    record.argv = Some(argv.clone());
    // What the interrupted run left: its supervisor records the new run's own as it starts.
    record.state = None;
    record.pid = None;
    record.supervisor_pid = None;
    record.exit_code = None;
    record.reason = None;
    record.started_at = None;
    record.ended_at = None;
    record.stop_requested = None;
    record.notice = None;
    record.queue_seq = None;
    record.socket = None;
    record.tmux_pane_id = String::new();
    Relaunch {
        member: record,
        plan: plan_of(member, argv, env),
        old_key: member.lead_verify_key.clone(),
        brought_down: member.reason.as_deref() == Some(ending::SHUTDOWN),
    }
}

/// `member`'s pane, running `argv` with variables `env`.
fn plan_of(member: &Member, argv: Vec<String>, env: BTreeMap<String, String>) -> PanePlan {
    PanePlan {
        name: member.name.clone(),
        argv,
        env,
        env_policy: member.env_policy.clone(),
        worktree: member.isolation == Some(Isolation::Worktree),
        cwd: PathBuf::from(&member.cwd),
        log_max: member.log_max.unwrap_or(DEFAULT_LOG_MAX),
    }
}

/// Signs again, with the member's new key, every unread message from the lead's side that its old
/// key verified (never one it did not: a forgery stays one): stamped now and with a new `msg_id`,
/// since a launch verifies nothing older than itself less 2 minutes, nor an id seen before.
fn sign_again(
    team: &Team,
    reach: &dyn Reach,
    config: &TeamConfig,
    relaunch: &Relaunch,
) -> Result<()> {
    let name = relaunch.member.name.as_str();
    if relaunch.brought_down {
        // `down` ended the run its shutdown request asked to end: the member resumed must not
        // read it and end again. Taken into history, as a message read.
        let lead = config.lead_name();
        team.mailbox(name).consume(None, |message| {
            message.from() == lead
                && matches!(message.structured(), Some(Structured::ShutdownRequest(_)))
        })?;
    }
    let Some(old_key) = relaunch.old_key.as_deref() else {
        return Ok(());
    };
    let Ok(old_key) = VerifyKey::parse(old_key) else {
        return Ok(());
    };
    let mailbox = team.mailbox(name);
    let mut judge = Judge::new(Some(old_key), config.lead_name());
    for message in mailbox.history()? {
        judge.saw(&message.id());
    }
    let mut renewed: BTreeMap<String, InboxMessage> = BTreeMap::new();
    for message in mailbox.peek()? {
        if message.is_read() || judge.judge(&message).verified() != Some(true) {
            continue;
        }
        let mut fresh = message.clone();
        fresh.set_field("timestamp", clock::timestamp_now().into());
        fresh.set_id(&ids::fresh().to_string());
        seal::seal(team, reach, config, name, &mut fresh)?;
        renewed.insert(message.id().into_owned(), fresh);
    }
    if renewed.is_empty() {
        return Ok(());
    }
    mailbox.update(|unread| {
        let mut changed = false;
        for message in unread.iter_mut() {
            if let Some(fresh) = renewed.get(message.id().as_ref()) {
                *message = fresh.clone();
                changed = true;
            }
        }
        Ok(((), changed))
    })
}
