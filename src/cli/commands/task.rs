//! `swarm task add|list|show|claim|start|done|update|assign|release|wait`: the team's shared task
//! list, in Claude Code's format (docs/ARCHITECTURE.md, "Task list").

use std::collections::BTreeSet;
use std::io::Read;
use std::time::Duration;

use clap_complete::engine::ArgValueCandidates;
use serde::Serialize;
use serde_json::Value;

use crate::base::clock;
use crate::base::names::Name;
use crate::cli::args::parse_duration;
use crate::cli::complete;
use crate::cli::context::Context;
use crate::cli::output::{Report, WithLines};
use crate::cli::render;
use crate::cluster::fleet::Fleet;
use crate::cluster::tasks::Tasks;
use crate::error::{Error, Result};
use crate::format::config::TeamConfig;
use crate::format::structured::{Structured, TaskAssignment};
use crate::format::task::{MAX_DESCRIPTION_BYTES, Status, Task};
use crate::member::{ending, seal};
use crate::policy::{self, Action, Caller};
use crate::protocol::exchange;
use crate::store::tasks::{Board, Refusal, TaskList, parse_id};
use crate::store::team::Team;
use crate::store::watcher::Watcher;

const JSON_TASK: &str = r#"JSON output (--json), one document: the task as its file holds it,
  {"id", "subject", "description", "activeForm"?, "owner"?, "status", "blocks", "blockedBy",
   "metadata"?, ...}
A refused claim is an error object with "reason": task_not_found, already_claimed,
already_resolved, blocked or busy (exit 3 for task_not_found, else 2)."#;

const JSON_CLAIM: &str = r#"JSON output (--json), one document: the task claimed, as its file holds it,
  {"id", "subject", "description", "activeForm"?, "owner"?, "status", "blocks", "blockedBy",
   "metadata"?, ...}
A refused claim is an error object with "reason": task_not_found, already_claimed,
already_resolved, blocked or busy (exit 3 for task_not_found, else 2). Without an ID, when no
task is available, nothing is found: "reason" none_available (exit 3)."#;

const JSON_TASKS: &str = r#"JSON output (--json), one document, by id: [task, ...], each task as
its file holds it ({"id", "subject", "description", "owner"?, "status", "blocks", "blockedBy", ...})."#;

#[derive(Debug, clap::Subcommand)]
#[command(defer = true)]
pub(crate) enum Command {
    /// Add a task; prints its id
    Add(AddArgs),
    /// List the tasks
    List(ListArgs),
    /// Show one task
    Show(IdArgs),
    /// Claim a task for yourself: the one named, else the first available
    Claim(ClaimArgs),
    /// Start a task: claim it if need be and mark it in_progress
    Start(IdArgs),
    /// Mark a task completed
    Done(DoneArgs),
    /// Change a task's fields
    Update(UpdateArgs),
    /// Give a task to a member and send it a task_assignment (lead only)
    Assign(AssignArgs),
    /// Give a task back: no owner, pending again
    Release(IdArgs),
    /// Block until tasks are completed
    Wait(WaitArgs),
}

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON_TASK)]
pub(crate) struct AddArgs {
    /// What is to be done, in a line
    #[arg(value_name = "SUBJECT")]
    pub(crate) subject: String,
    /// The details (at most 1 MiB); '-' reads them from stdin
    #[arg(long, value_name = "D", default_value = "")]
    pub(crate) description: String,
    /// Tasks that must be completed first
    #[arg(long, value_name = "ID", num_args = 1..)]
    pub(crate) blocked_by: Vec<String>,
    /// Who owns it from the start
    #[arg(long, value_name = "NAME", add = ArgValueCandidates::new(complete::members))]
    pub(crate) owner: Option<String>,
    /// What the owner is doing while it is in progress ("Writing the parser")
    #[arg(long, value_name = "F")]
    pub(crate) active_form: Option<String>,
}

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON_TASKS)]
pub(crate) struct ListArgs {
    /// Only tasks with this status
    #[arg(long, value_name = "S")]
    pub(crate) status: Option<Status>,
    /// Only tasks this member owns
    #[arg(long, value_name = "NAME", add = ArgValueCandidates::new(complete::members))]
    pub(crate) owner: Option<String>,
    /// Only tasks that can be claimed now: pending, no owner, no open blocker
    #[arg(long)]
    pub(crate) available: bool,
    /// Include Claude Code's internal tasks (metadata._internal)
    #[arg(long)]
    pub(crate) all: bool,
}

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON_TASK)]
pub(crate) struct IdArgs {
    /// The task's id
    #[arg(value_name = "ID")]
    pub(crate) id: String,
}

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON_CLAIM)]
pub(crate) struct ClaimArgs {
    /// The task's id [default: the first available]
    #[arg(value_name = "ID")]
    pub(crate) id: Option<String>,
    /// Refuse (busy) when you already own an open task
    #[arg(long)]
    pub(crate) exclusive: bool,
}

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON_TASK)]
pub(crate) struct DoneArgs {
    /// The task's id
    #[arg(value_name = "ID")]
    pub(crate) id: String,
    /// A closing note, kept as metadata.note
    #[arg(long, value_name = "TEXT")]
    pub(crate) note: Option<String>,
}

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON_TASK)]
pub(crate) struct UpdateArgs {
    /// The task's id
    #[arg(value_name = "ID")]
    pub(crate) id: String,
    #[arg(long, value_name = "S")]
    /// A new subject
    pub(crate) subject: Option<String>,
    /// A new description (at most 1 MiB); '-' reads it from stdin
    #[arg(long, value_name = "D")]
    pub(crate) description: Option<String>,
    /// A new active form
    #[arg(long, value_name = "F")]
    pub(crate) active_form: Option<String>,
    /// A new status
    #[arg(long, value_name = "S")]
    pub(crate) status: Option<Status>,
    /// A new owner
    #[arg(long, value_name = "NAME", conflicts_with = "no_owner", add = ArgValueCandidates::new(complete::members))]
    pub(crate) owner: Option<String>,
    /// No owner
    #[arg(long)]
    pub(crate) no_owner: bool,
    /// Exactly these tasks must be completed first (replacing the ones before)
    #[arg(long, value_name = "ID", num_args = 1..)]
    pub(crate) blocked_by: Option<Vec<String>>,
}

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON_TASK)]
pub(crate) struct AssignArgs {
    /// The task's id
    #[arg(value_name = "ID")]
    pub(crate) id: String,
    /// The member to give it to
    #[arg(value_name = "NAME", add = ArgValueCandidates::new(complete::members))]
    pub(crate) name: String,
}

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON_TASKS)]
pub(crate) struct WaitArgs {
    /// The tasks to wait for
    #[arg(
        value_name = "ID",
        required_unless_present = "all",
        conflicts_with = "all"
    )]
    pub(crate) ids: Vec<String>,
    /// Wait until every task is completed
    #[arg(long)]
    pub(crate) all: bool,
    /// Give up after DURATION (seconds, or 30s, 2m, 1h; exit status 4)
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) timeout: Option<Duration>,
}

pub(crate) fn run(ctx: &Context, command: Command) -> Result<()> {
    match command {
        Command::Add(args) => add(ctx, args),
        Command::List(args) => list(ctx, args),
        Command::Show(args) => show(ctx, &args.id),
        Command::Claim(args) => claim(ctx, args),
        Command::Start(args) => start(ctx, &args.id),
        Command::Done(args) => done(ctx, args),
        Command::Update(args) => update(ctx, args),
        Command::Assign(args) => assign(ctx, args),
        Command::Release(args) => release(ctx, &args.id),
        Command::Wait(args) => wait(ctx, args),
    }
}

/// The team, its config, the caller, and its task list, once the policy allows `action`.
struct Scope {
    team: Team,
    fleet: Fleet,
    config: TeamConfig,
    caller: Caller,
    /// The task list, changed wherever the team runs.
    tasks: Tasks,
}

fn scope(ctx: &Context, action: Action) -> Result<Scope> {
    let team = ctx.team()?;
    let config = team.load()?;
    let caller = ctx.caller(&config)?;
    policy::allow(&config, &caller, action)?;
    let fleet = ctx.fleet();
    // A member that ended still holding tasks gives them back before anyone reads the board.
    if let Err(err) = ending::finish_releases(&team, &fleet, &config, false) {
        tracing::warn!("tasks of members that ended are not all returned yet: {err}");
    }
    let tasks = fleet.tasks(&team, &config);
    Ok(Scope {
        team,
        fleet,
        config,
        caller,
        tasks,
    })
}

impl Scope {
    /// The caller as a task owner: a member of the team, or the person at the keyboard.
    fn me(&self) -> Result<String> {
        Ok(policy::require_inbox(&self.config, self.caller.name().as_str())?.to_owned())
    }

    /// A member named as an owner: on the roster, or `user`.
    fn owner(&self, raw: &str) -> Result<String> {
        let name = Name::parse("member", raw)?;
        Ok(policy::require_inbox(&self.config, name.as_str())?.to_owned())
    }

    /// The one policy for every edit of a task ([`policy::allow_task_edit`]): whether the caller
    /// may change `task` (`None`: one it adds) so that `new_owner` holds it.
    fn may_edit(&self, task: Option<&Task>, new_owner: Option<&str>) -> Result<()> {
        policy::allow_task_edit(&self.config, &self.caller, task, new_owner)
    }
}

fn check_size(what: &str, text: &str) -> Result<()> {
    if text.len() > MAX_DESCRIPTION_BYTES {
        return Err(Error::usage(format!(
            "the {what} is {} bytes; at most {MAX_DESCRIPTION_BYTES} (1 MiB) are allowed",
            text.len()
        ))
        .with_hint("put the details in a file and name the file in the description"));
    }
    Ok(())
}

/// A description as given, or read from stdin for '-' (at most 1 MiB and a byte read, so a
/// larger one is refused, not cut).
fn description(raw: String) -> Result<String> {
    if raw != "-" {
        return Ok(raw);
    }
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(MAX_DESCRIPTION_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| Error::os("read the description from stdin", err))?;
    String::from_utf8(bytes).map_err(|_| Error::usage("the description on stdin is not UTF-8"))
}

fn ids(raw: &[String]) -> Result<Vec<u64>> {
    raw.iter().map(|id| parse_id(id)).collect()
}

fn print_task(ctx: &Context, task: &Task, said: &str) -> Result<()> {
    ctx.report(&WithLines {
        json: task,
        lines: vec![format!("{said} task {}: {}", task.id(), task.subject())],
    })
}

fn add(ctx: &Context, args: AddArgs) -> Result<()> {
    let scope = scope(ctx, Action::EditTasks)?;
    let args = AddArgs {
        description: description(args.description)?,
        ..args
    };
    check_size("subject", &args.subject)?;
    check_size("description", &args.description)?;
    let blockers = ids(&args.blocked_by)?;
    let owner = args.owner.as_deref().map(|o| scope.owner(o)).transpose()?;
    scope.may_edit(None, owner.as_deref())?;
    scope.tasks.list().ensure()?;
    let task = scope.tasks.edit(&blockers, true, |edit| {
        for &blocker in &blockers {
            if edit.task(blocker).is_none() {
                return Err(Refusal::NotFound.error(blocker));
            }
        }
        let id = edit.create(|id| {
            Task::new(
                id,
                &args.subject,
                &args.description,
                args.active_form.as_deref(),
                owner.as_deref(),
            )
        })?;
        edit.set_blockers(id, &blockers)?;
        Ok(edit.task(id).cloned().expect("just created"))
    })?;
    ctx.report(&WithLines {
        lines: vec![task.id().to_string()],
        json: task,
    })
}

fn list(ctx: &Context, args: ListArgs) -> Result<()> {
    let scope = scope(ctx, Action::ReadTasks)?;
    scope.tasks.list().require()?;
    for moved in scope.tasks.list().repair()? {
        tracing::warn!(
            "task {} was no task; moved it aside to {}",
            moved.id,
            moved.path.display()
        );
    }
    let board = scope.tasks.list().read()?;
    let shown: Vec<&Task> = board
        .tasks
        .values()
        .filter(|t| args.all || !t.is_internal())
        .filter(|t| args.status.is_none_or(|s| t.status() == s))
        .filter(|t| args.owner.as_deref().is_none_or(|o| t.owner() == Some(o)))
        .filter(|t| !args.available || board.available(t))
        .collect();
    ctx.report(&Listed {
        shown: &shown,
        board: &board,
    })
}

/// The tasks of a board a listing shows.
#[derive(Serialize)]
#[serde(transparent)]
struct Listed<'a> {
    shown: &'a [&'a Task],
    #[serde(skip)]
    board: &'a Board,
}

impl Report for Listed<'_> {
    fn text(&self) -> Result<()> {
        render::board_table(self.board, self.shown).print()
    }
}

fn show(ctx: &Context, raw: &str) -> Result<()> {
    let scope = scope(ctx, Action::ReadTasks)?;
    let id = parse_id(raw)?;
    let board = scope.tasks.list().read()?;
    let Some(task) = board.tasks.get(&id) else {
        return Err(Refusal::NotFound.error(id));
    };
    let mut text = format!(
        "task {id}: {}\nstatus: {}\nowner: {}\nblocked by: {}\nblocks: {}",
        task.subject(),
        task.status(),
        task.owner().unwrap_or("-"),
        render::task_ids(&task.blocked_by()),
        render::task_ids(&task.blocks()),
    );
    if !task.description().is_empty() {
        text.push_str("\n\n");
        text.push_str(task.description());
    }
    ctx.report(&WithLines {
        json: task,
        lines: vec![text],
    })
}

fn claim(ctx: &Context, args: ClaimArgs) -> Result<()> {
    let scope = scope(ctx, Action::EditTasks)?;
    let me = scope.me()?;
    if let Some(raw) = &args.id {
        let id = parse_id(raw)?;
        let task = scope.tasks.claim(id, &me, args.exclusive)?;
        return print_task(ctx, &task, "claimed");
    }
    // The first available task; one another claimer takes first is passed over.
    let mut after = 0;
    while let Some(id) = scope.tasks.list().next_available(after)? {
        after = id;
        match scope.tasks.claim(id, &me, args.exclusive) {
            Ok(task) => return print_task(ctx, &task, "claimed"),
            Err(err) if err.reason() == Some(Refusal::Busy { owns: Vec::new() }.word()) => {
                return Err(err);
            }
            Err(err) if err.reason().is_some() => {}
            Err(err) => return Err(err),
        }
    }
    Err(
        Error::not_found("no task is available: every task is owned, blocked or completed")
            .with_hint("`swarm task list` shows the board")
            .with_reason("none_available"),
    )
}

fn start(ctx: &Context, raw: &str) -> Result<()> {
    let scope = scope(ctx, Action::EditTasks)?;
    let me = scope.me()?;
    let id = parse_id(raw)?;
    let task = scope.tasks.edit(&[id], false, |edit| {
        edit.claim(id, &me, false)?;
        let task = edit.task_mut(id).expect("claimed");
        task.set_status(Status::InProgress);
        Ok(task.clone())
    })?;
    print_task(ctx, &task, "started")
}

fn done(ctx: &Context, args: DoneArgs) -> Result<()> {
    let scope = scope(ctx, Action::EditTasks)?;
    let id = parse_id(&args.id)?;
    if let Some(note) = &args.note {
        check_size("note", note)?;
    }
    let (task, was_open) = scope.tasks.edit(&[id], false, |edit| {
        let task = edit
            .task_mut(id)
            .ok_or_else(|| Refusal::NotFound.error(id))?;
        scope.may_edit(Some(task), None)?;
        let was_open = task.is_open();
        task.set_status(Status::Completed);
        if let Some(note) = &args.note {
            task.set_metadata("note", Value::String(note.clone()));
        }
        Ok((task.clone(), was_open))
    })?;
    if was_open {
        tell_unblocked(&scope, &task);
    }
    print_task(ctx, &task, "completed")
}

/// Tells the owner of each task that `done`'s completion unblocked (open, owned, no open blocker
/// left) that it may start, in a plain message from the caller. The completion is what counts:
/// a message that cannot be sent is a warning.
fn tell_unblocked(scope: &Scope, done: &Task) {
    let board = match scope.tasks.list().read() {
        Ok(board) => board,
        Err(err) => {
            tracing::warn!(
                "task {} is completed, but its blocked tasks' owners were not told: {err}",
                done.id()
            );
            return;
        }
    };
    let from = scope.caller.name().as_str();
    for task in board.unblocked_by(done.id()) {
        let owner = task.owner().expect("unblocked tasks have owners");
        if owner == from {
            continue;
        }
        let text = format!(
            "task {} ({}) is completed: your task {} ({}) is no longer blocked",
            done.id(),
            done.subject(),
            task.id(),
            task.subject()
        );
        let told = policy::require_inbox(&scope.config, owner).and_then(|owner| {
            seal::tell(&scope.team, &scope.fleet, &scope.config, from, owner, &text)
        });
        if let Err(err) = told {
            tracing::warn!(
                "task {} is unblocked, but its owner {owner} was not told: {err}",
                task.id()
            );
        }
    }
}

fn release(ctx: &Context, raw: &str) -> Result<()> {
    let scope = scope(ctx, Action::EditTasks)?;
    let id = parse_id(raw)?;
    let task = scope.tasks.edit(&[id], false, |edit| {
        let task = edit
            .task_mut(id)
            .ok_or_else(|| Refusal::NotFound.error(id))?;
        scope.may_edit(Some(task), None)?;
        if !task.is_open() {
            return Err(Refusal::AlreadyResolved.error(id));
        }
        task.set_owner(None);
        task.set_status(Status::Pending);
        Ok(task.clone())
    })?;
    print_task(ctx, &task, "released")
}

fn update(ctx: &Context, args: UpdateArgs) -> Result<()> {
    let scope = scope(ctx, Action::EditTasks)?;
    let id = parse_id(&args.id)?;
    let args = UpdateArgs {
        description: args.description.map(description).transpose()?,
        ..args
    };
    for (what, text) in [
        ("subject", &args.subject),
        ("description", &args.description),
    ] {
        if let Some(text) = text {
            check_size(what, text)?;
        }
    }
    let owner = args.owner.as_deref().map(|o| scope.owner(o)).transpose()?;
    let blockers = args.blocked_by.as_deref().map(ids).transpose()?;
    // Changing blockers locks the list, the task, and its blockers old and new; the old ones
    // are read first and checked again under the locks.
    let mut attempts = 0;
    let task = loop {
        let (lock, whole) = match &blockers {
            None => (vec![id], false),
            Some(new) => {
                let board = scope.tasks.list().read()?;
                let old = board
                    .tasks
                    .get(&id)
                    .map(Task::blocked_by)
                    .unwrap_or_default();
                let all: BTreeSet<u64> = [id].into_iter().chain(old).chain(new.clone()).collect();
                (all.into_iter().collect(), true)
            }
        };
        let changed = scope.tasks.edit(&lock, whole, |edit| {
            let Some(task) = edit.task(id) else {
                return Err(Refusal::NotFound.error(id));
            };
            scope.may_edit(Some(task), owner.as_deref())?;
            if let Some(new) = &blockers {
                if !task.blocked_by().iter().all(|old| lock.contains(old)) {
                    return Ok(None);
                }
                edit.set_blockers(id, new)?;
            }
            let task = edit.task_mut(id).expect("checked above");
            if let Some(subject) = &args.subject {
                task.set_subject(subject);
            }
            if let Some(description) = &args.description {
                task.set_description(description);
            }
            if let Some(form) = &args.active_form {
                task.set_active_form(form);
            }
            let was_open = task.is_open();
            if let Some(status) = args.status {
                task.set_status(status);
            }
            let completed = was_open && !task.is_open();
            if let Some(owner) = &owner {
                task.set_owner(Some(owner));
            } else if args.no_owner {
                task.set_owner(None);
            }
            Ok(Some((task.clone(), completed)))
        })?;
        if let Some((task, completed)) = changed {
            if completed {
                tell_unblocked(&scope, &task);
            }
            break task;
        }
        attempts += 1;
        if attempts > 10 {
            return Err(Error::runtime(format!(
                "task {id}'s blockers kept changing while swarm updated it; try again"
            )));
        }
    };
    print_task(ctx, &task, "updated")
}

fn assign(ctx: &Context, args: AssignArgs) -> Result<()> {
    let scope = scope(ctx, Action::AssignTask)?;
    let sender = policy::allow(&scope.config, &scope.caller, Action::AssignTask)?;
    let id = parse_id(&args.id)?;
    let name = Name::parse("member", &args.name)?;
    let owner = scope.config.require_member(name.as_str())?.name.clone();
    let message = |task: &Task| {
        Structured::TaskAssignment(TaskAssignment {
            task_id: task.id().to_string(),
            subject: task.subject().to_owned(),
            description: task.description().to_owned(),
            assigned_by: sender.to_string(),
            timestamp: clock::timestamp_now(),
        })
    };
    // Every rule the message must obey is checked before the task changes.
    let board = scope.tasks.list().read()?;
    let before = board
        .tasks
        .get(&id)
        .ok_or_else(|| Refusal::NotFound.error(id))?;
    exchange::envelope(
        &scope.team,
        &scope.config,
        &scope.caller,
        &owner,
        &message(before),
    )?;
    // A member that has ended is told nothing, and is given no task.
    seal::refuse_if_ended(&scope.team, &scope.config, sender.as_str(), &owner)?;
    let task = scope.tasks.edit(&[id], false, |edit| {
        let task = edit
            .task_mut(id)
            .ok_or_else(|| Refusal::NotFound.error(id))?;
        if !task.is_open() {
            return Err(Refusal::AlreadyResolved.error(id));
        }
        task.set_owner(Some(&owner));
        Ok(task.clone())
    })?;
    seal::request(
        &scope.team,
        &scope.fleet,
        &scope.config,
        &scope.caller,
        &owner,
        &message(&task),
    )
    .map_err(|err| err.with_note(format!("task {id} is {owner}'s, but they were not told")))?;
    print_task(ctx, &task, &format!("assigned to {owner}:"))
}

fn wait(ctx: &Context, args: WaitArgs) -> Result<()> {
    let scope = scope(ctx, Action::ReadTasks)?;
    let wanted = ids(&args.ids)?;
    scope.tasks.list().require()?;
    let watcher = Watcher::arm(scope.tasks.list().dir())?;
    let deadline = args.timeout.and_then(clock::deadline);
    let pick = |board: &Board| -> Result<Vec<Task>> {
        if args.all {
            return Ok(board
                .tasks
                .values()
                .filter(|t| !t.is_internal())
                .cloned()
                .collect());
        }
        wanted
            .iter()
            .map(|id| {
                board
                    .tasks
                    .get(id)
                    .cloned()
                    .ok_or_else(|| Refusal::NotFound.error(*id))
            })
            .collect()
    };
    let relevant = |file: &std::ffi::OsStr| TaskList::is_task_file(file);
    let finished = watcher.wait_for(deadline, &relevant, || {
        let tasks = pick(&scope.tasks.list().read()?)?;
        Ok(tasks.iter().all(|t| !t.is_open()).then_some(tasks))
    })?;
    let Some(tasks) = finished else {
        let limit = args.timeout.unwrap_or_default().as_secs_f64();
        return Err(Error::timeout(format!(
            "the tasks are not all completed after {limit}s"
        )));
    };
    ctx.report(&WithLines {
        lines: tasks
            .iter()
            .map(|task| format!("completed task {}: {}", task.id(), task.subject()))
            .collect(),
        json: tasks,
    })
}
