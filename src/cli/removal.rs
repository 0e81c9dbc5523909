//! Removing teams, for `rm`, `prune` and `down --rm`: the `--archive` option they share, the
//! removal itself (`member/remove.rs`) and how it is reported; and the team's launch lock, which
//! every command that ends a whole team takes first (`down`, `stop all` and the removals).

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use crate::base::clock;
use crate::base::text::for_terminal;
use crate::cli::context::Context;
use crate::cli::output::{self, Report as Printed};
use crate::cli::render::{self, Ending};
use crate::cluster::fleet::DownEvent;
use crate::error::{Error, Result};
use crate::launch::lock::{Holder, LaunchLock};
use crate::member::down::Report;
use crate::member::remove::{self, Removal};
use crate::store::archive;
use crate::store::paths::ArchiveFormat;
use crate::store::removal::{self, Finished};
use crate::store::team::Team;

#[derive(Debug, Clone, Copy, clap::Args)]
pub(crate) struct ArchiveArgs {
    /// Archive the team into <home>/archive before it is removed: <team>-<time>.tar.zst, or with
    /// --archive=dir the team's folder itself, moved to <team>-<time>/
    ///
    /// The archive is complete and on disk before anything is deleted; if it cannot be made, the
    /// team is left as it was. Either holds the team's folder as it was under <home>/teams, with
    /// its task list as tasks/: a tarball unpacks to <team>/.
    #[arg(
        long,
        value_name = "FORMAT",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "tar.zst"
    )]
    pub(crate) archive: Option<ArchiveChoice>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ArchiveChoice {
    /// One file, <team>-<time>.tar.zst: a tar archive compressed with zstd
    #[value(name = "tar.zst")]
    TarZst,
    /// The team's folder, moved to <team>-<time>/
    Dir,
}

impl ArchiveArgs {
    pub(crate) fn format(self) -> Option<ArchiveFormat> {
        self.archive.map(|choice| match choice {
            ArchiveChoice::TarZst => ArchiveFormat::TarZst,
            ArchiveChoice::Dir => ArchiveFormat::Folder,
        })
    }

    /// Checks, before anything is done to a team, that its archive can be made where it goes.
    pub(crate) fn prepare(self, ctx: &Context) -> Result<()> {
        if self.archive.is_some() {
            archive::prepare(&ctx.home)?;
        }
        Ok(())
    }
}

/// Finishes what removals killed half-way left behind (`store/removal.rs`), before teams are
/// listed; each is said in a line on stderr.
pub(crate) fn finish_interrupted(ctx: &Context) -> Vec<Finished> {
    removal::finish_interrupted(&ctx.home)
}

/// The team's launch lock, taken before anything of the team is stopped or removed; a team that
/// another command holds (an `up` starting it) is refused (exit 2), with nothing done.
pub(crate) fn claim(team: &Team) -> Result<LaunchLock> {
    remove::claim(team)?.map_err(|holder| busy(team.name(), &holder))
}

/// The team's launch lock, taken before anything of the team is stopped by `down` or `stop all`
/// (`doing`: "taking it down"): one that another command holds (an `up` placing the team's panes)
/// is waited for up to `bound`, said once first, on stderr (with `--json`, a `held` event); still
/// held then, nothing is stopped and the wait ran out (exit 4).
pub(crate) fn wait_to_take_down(
    ctx: &Context,
    team: &Team,
    bound: Duration,
    doing: &str,
) -> Result<LaunchLock> {
    let name = team.name();
    let said = |holder: &Holder| {
        ctx.event(&Progress::Held {
            by: holder.command(),
            pid: holder.pid.as_deref(),
            timeout_ms: millis(bound),
            said: format!(
                "team {name} is {}; waiting up to {}s for it to finish, then {doing}",
                holder.doing(),
                bound.as_secs_f64()
            ),
        })
    };
    LaunchLock::wait_to_take_down(team.home(), name, bound, said)?.map_err(|holder| {
        Error::timeout(format!(
            "team {name} is still {} after {}s; nothing of it was stopped",
            holder.doing(),
            bound.as_secs_f64()
        ))
        .with_hint(format!(
            "once that has finished, run this again (`swarm status {name}` shows the team)"
        ))
    })
}

/// Removes `team`, whose launch lock `held` is, archived as asked, and says so; a team that still
/// runs is refused (exit 2) with `hint`.
pub(crate) fn remove_claimed(
    ctx: &Context,
    team: &Team,
    held: &LaunchLock,
    archive: ArchiveArgs,
    hint: &str,
) -> Result<()> {
    match ctx.fleet().remove_claimed(team, held, archive.format())? {
        Removal::Running(live) => Err(still_running(team.name(), &live).with_hint(hint)),
        Removal::Busy(holder) => Err(busy(team.name(), &holder)),
        Removal::Removed(archived) => report(ctx, team.name(), archived.as_deref(), None),
    }
}

/// What becomes of each member while `down`, `down --rm` or `rm --force` takes a team down: a
/// line, or with `--json` an event: `ended` and `stopped` with the member's ending, `warning` for a
/// teammate that could not be asked to shut down, `remote` for what another host's node reports.
/// Whom it waits for, and how long, is said on stderr, as what is under way rather than what
/// became of anyone; `waiting` with `--json`.
pub(crate) fn report_down(ctx: &Context, event: DownEvent<'_>) -> Result<()> {
    let report = match event {
        DownEvent::Here(report) => report,
        DownEvent::Elsewhere { host, line } => {
            return ctx.event(&Progress::Remote { host, line });
        }
    };
    let said = report.line();
    ctx.event(&match report {
        Report::Waiting { names, timeout } => Progress::Waiting {
            names,
            timeout_ms: millis(timeout),
            said,
        },
        Report::NotAsked { name, .. } => Progress::Warning {
            name,
            message: said,
        },
        Report::Ended(member, seen) => Progress::Ended {
            ending: Ending::of(member, seen.label()),
            said,
        },
        Report::Stopped(member, state) => Progress::Stopped {
            ending: Ending::of(member, state),
            said,
        },
    })
}

/// One event of taking a team down or removing teams, `event` first: a line for people (on stderr
/// for what is under way: `held`, `waiting`), or with `--json` one object on stdout.
#[derive(Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub(crate) enum Progress<'a> {
    /// Another command holds the team's launch lock, and is waited for.
    Held {
        by: Option<&'static str>,
        pid: Option<&'a str>,
        #[serde(rename = "timeoutMs")]
        timeout_ms: u64,
        #[serde(skip)]
        said: String,
    },
    /// What another host's node reports.
    Remote { host: &'a str, line: &'a str },
    /// The teammates asked to shut down, and how long they get.
    Waiting {
        names: &'a [String],
        #[serde(rename = "timeoutMs")]
        timeout_ms: u64,
        #[serde(skip)]
        said: String,
    },
    /// A teammate that could not be asked to shut down.
    Warning { name: &'a str, message: String },
    /// A member asked to shut down has ended.
    Ended {
        #[serde(flatten)]
        ending: Ending<'a>,
        #[serde(skip)]
        said: String,
    },
    /// A member was stopped.
    Stopped {
        #[serde(flatten)]
        ending: Ending<'a>,
        #[serde(skip)]
        said: String,
    },
    /// A team removed (`prune` says when it had ended), or one `prune --dry-run` would remove.
    Removed(Removed<'a>),
    WouldRemove {
        team: &'a str,
        #[serde(rename = "endedAt")]
        ended_at: Option<String>,
        #[serde(rename = "endedAtMs")]
        ended_at_ms: Option<u64>,
        #[serde(skip)]
        said: String,
    },
}

/// A team removed, or to be: where it was archived to, and for `prune` when it had ended.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Removed<'a> {
    team: &'a str,
    archive: Option<&'a Path>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    ended: Option<EndedAt>,
    #[serde(skip)]
    said: String,
}

/// When a pruned team had ended (`null` for a time of 0, which means unknown).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EndedAt {
    ended_at: Option<String>,
    ended_at_ms: Option<u64>,
}

impl<'a> Removed<'a> {
    /// `team`, archived to `archived`; `ended` says when it had ended (epoch ms), for `prune`.
    pub(crate) fn new(team: &'a str, archived: Option<&'a Path>, ended: Option<u64>) -> Self {
        let ago = ended
            .map(|at| format!(" (ended {})", clock::ago(at, clock::now_ms())))
            .unwrap_or_default();
        let said = match archived {
            None => format!("removed team {team}{ago}"),
            Some(path) if path.is_dir() => {
                format!("moved team {team} to {}{ago}", path.display())
            }
            Some(path) => format!(
                "archived team {team} to {} and removed it{ago}",
                path.display()
            ),
        };
        Self {
            team,
            archive: archived,
            ended: ended.map(|at| {
                let known = Some(at).filter(|ms| *ms > 0);
                EndedAt {
                    ended_at: render::time(known),
                    ended_at_ms: known,
                }
            }),
            said,
        }
    }
}

impl Printed for Progress<'_> {
    fn text(&self) -> Result<()> {
        match self {
            Self::Held { said, .. } | Self::Waiting { said, .. } => {
                let _ = writeln!(std::io::stderr().lock(), "swarm: {}", for_terminal(said));
                Ok(())
            }
            Self::Remote { host, line } => output::line(format!("{host}: {line}")),
            Self::Warning { message: said, .. }
            | Self::Ended { said, .. }
            | Self::Stopped { said, .. }
            | Self::Removed(Removed { said, .. })
            | Self::WouldRemove { said, .. } => output::line(said),
        }
    }
}

/// A bound as JSON's integer milliseconds.
fn millis(bound: Duration) -> u64 {
    u64::try_from(bound.as_millis()).unwrap_or(u64::MAX)
}

/// Refuses to remove a team that still runs, naming what runs.
pub(crate) fn still_running(team: &str, live: &[String]) -> Error {
    Error::usage(format!(
        "team {team} is still running ({}); `swarm rm --force {team}` stops it first",
        live.join(", ")
    ))
}

/// Refuses to remove a team whose launch lock another command holds: a `swarm up` starting it
/// wins, and nothing of it was stopped.
pub(crate) fn busy(team: &str, holder: &Holder) -> Error {
    Error::usage(format!(
        "team {team} is {}; it is not removed, and nothing of it was stopped",
        holder.doing()
    ))
    .with_hint(format!(
        "once it is up, remove it with `swarm rm --force {team}` or `swarm down --rm {team}`"
    ))
}

/// A team taken down from inside its lead's program: the lead is spared, and so is its team.
pub(crate) fn lead_runs_this(team: &str) -> Error {
    Error::usage(format!(
        "team {team} is down but for its lead, which runs this command; it is not removed"
    ))
    .with_hint(format!("run `swarm rm {team}` once the lead has exited"))
}

/// One line (or JSON object) for a team removed; `ended` says when it had ended (epoch ms), for
/// `prune`.
pub(crate) fn report(
    ctx: &Context,
    team: &str,
    archived: Option<&Path>,
    ended: Option<u64>,
) -> Result<()> {
    ctx.event(&Progress::Removed(Removed::new(team, archived, ended)))
}
