//! `swarm log NAME [-n N] [-f] [--raw]` and `swarm log --all [-f]`: what members' panes printed
//! (docs/ARCHITECTURE.md, "Logs a person can read" under "Decisions"). By default as text: each
//! line is played on a terminal emulator (`base/screen.rs`), so prompts, colours and redrawn
//! progress read as the pane showed them; `--raw` gives the bytes exactly. `-f` follows like
//! `tail -f`, across the log's rotation, through the one watcher, until the member has ended;
//! `--all -f` interleaves every member's new lines, each after the member's name in its colour.
//! A member on another host is read, and followed, through its host's node.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use clap_complete::engine::ArgValueCandidates;
use serde_json::json;

use crate::base::names::Name;
use crate::base::screen::{Screen, visible};
use crate::cli::complete;
use crate::cli::context::Context;
use crate::cli::{output, render};
use crate::cluster::control::{self, Link, LogReply, LogRequest};
use crate::cluster::fleet::Sight as Reach;
use crate::error::{Error, Result};
use crate::format::config::{Member, TeamConfig};
use crate::member::log_follow::{LogFollow, Step};
use crate::member::logfile::Follower;
use crate::store::durable::private_dir;
use crate::store::paths::TeamPaths;
use crate::store::team::Team;
use crate::store::watcher::Watcher;

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one object per line of the log, as it is printed:
  {"name", "line"}"#;

#[derive(Debug, Clone, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// The team, when NAME follows, as status, top, down and attach take it; alone, the member
    /// whose log to print (or --all), also as NAME@TEAM
    // Their own ids: sharing the global --team's would let an empty SWARM_TEAM fill it.
    #[arg(
        id = "team_arg",
        value_name = "TEAM",
        required_unless_present = "all",
        conflicts_with = "all",
        add = ArgValueCandidates::new(complete::members_and_teams)
    )]
    pub(crate) first: Option<String>,

    /// The member whose log to print, of the TEAM before it
    #[arg(
        id = "member_arg",
        value_name = "NAME",
        add = ArgValueCandidates::new(complete::members_of_team_arg)
    )]
    pub(crate) second: Option<String>,

    /// How many of the last lines to print (of each member, with --all)
    #[arg(short = 'n', long = "lines", value_name = "N", default_value_t = 10)]
    pub(crate) lines: usize,

    /// Keep printing what the pane prints, until the member has ended (with --all, until
    /// interrupted)
    ///
    /// A member on another host is followed through its host's node. Should the node or the NATS
    /// server stop answering, one line on stderr says so and the follow goes on once it answers,
    /// from where it was. Ends with status 0 once the member's last line is shown.
    #[arg(short, long)]
    pub(crate) follow: bool,

    /// Every member's log, each line after the member's name in its colour
    ///
    /// With -f, the new lines of every member as they come, interleaved. Colour only on a
    /// terminal, and not when NO_COLOR is set.
    #[arg(long)]
    pub(crate) all: bool,

    /// The bytes exactly as the pane printed them, control sequences and all
    ///
    /// Without it, each line is shown as a terminal showed it last: colours, bracketed-paste
    /// switches and cursor moves are played on a terminal emulator and only the text is kept.
    #[arg(long, conflicts_with = "all")]
    pub(crate) raw: bool,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let (team, name) = match (args.first.as_deref(), args.second.as_deref()) {
        (Some(team), Some(name)) => (ctx.team_or(Some(team))?, Some(Name::parse("member", name)?)),
        (named, _) => ctx.team_and_member(named)?,
    };
    let config = team.load()?;
    let logs = team.paths().logs();
    private_dir(team.paths().private_root(), &logs)?;
    // Armed before the first read, so a follower misses nothing written in between; the team's
    // folder too, where a member's ending is recorded.
    let watcher = if args.follow {
        Some(Watcher::arm_all(&[&logs, team.paths().dir()])?)
    } else {
        None
    };
    match &name {
        Some(name) => one(ctx, &team, &config, name, &args, watcher),
        None => all(ctx, &team, config, &args, watcher),
    }
}

/// One member's log; followed, until the member has ended and its log is read to the end.
fn one(
    ctx: &Context,
    team: &Team,
    config: &TeamConfig,
    name: &Name,
    args: &Args,
    watcher: Option<Watcher>,
) -> Result<()> {
    let member = config.require_member(name.as_str())?;
    if let Some(host) = member
        .host
        .as_deref()
        .filter(|host| Reach::look(&ctx.home).is_remote(Some(host)))
    {
        return remote(ctx, team, member, host, args);
    }
    let path = team.paths().log(&member.name);
    // The log and the one it was rotated to, read as one.
    let (follower, tail) = Follower::start(&path, args.lines)?;
    if tail.is_none() && !args.follow {
        return Err(Error::not_found(format!(
            "no output captured for {name} yet ({})",
            path.display()
        )));
    }
    let mut source = Source::new(member, String::new(), follower, &path);
    source.show_tail(ctx, &tail.unwrap_or_default(), args)?;
    let Some(watcher) = watcher else {
        return Ok(());
    };
    let follow = LogFollow::new(team.clone(), Box::new(ctx.fleet()), &member.name);
    let relevant = |file: &OsStr| follow.relevant(file);
    loop {
        match follow.step(&mut source.follower, usize::MAX)? {
            Step::Fresh(fresh) => source.show(ctx, &fresh, args, false)?,
            Step::Ended(last) => return source.show(ctx, &last, args, true),
            Step::Quiet => {
                watcher.wait(None, &relevant)?;
            }
        }
    }
}

/// How long a follower waits before asking again a node that did not answer.
const FOLLOW_RETRY: Duration = Duration::from_secs(1);

/// The log of a member on another host, read by that host's node.
fn remote(ctx: &Context, team: &Team, member: &Member, host: &str, args: &Args) -> Result<()> {
    let mut log = RemoteLog::open(ctx, team, member, host, args.lines)?;
    let tail = log.tail()?;
    if tail.is_none() && !args.follow {
        return Err(Error::not_found(format!(
            "no output captured for {} on host {host} yet",
            member.name
        )));
    }
    let path = team.paths().log(&member.name);
    let mut source = Source::new(
        member,
        String::new(),
        Follower::from_beginning(&path),
        &path,
    );
    source.show_tail(ctx, &tail.unwrap_or_default(), args)?;
    if args.follow {
        log.follow(ctx, &mut source, args)?;
    }
    Ok(())
}

/// A member's log on another host, read through that host's node (docs/ARCHITECTURE.md,
/// "Roster, control and status across hosts"): its end, then, following, what comes after, asked
/// for again and again, each request held by the node until there is some. A node or server
/// that stops answering is said once on stderr and asked again every second; the follow goes on
/// from where it was when it answers again.
struct RemoteLog {
    link: Link,
    host: String,
    request: LogRequest,
}

impl RemoteLog {
    fn open(ctx: &Context, team: &Team, member: &Member, host: &str, lines: usize) -> Result<Self> {
        Ok(Self {
            link: Link::open(&control::settings_here(&ctx.home)?, "swarm log")?,
            host: host.to_owned(),
            request: LogRequest {
                team: team.name().to_owned(),
                member: member.name.clone(),
                lines,
                after: None,
            },
        })
    }

    /// The log's last lines, as bytes (`None` if nothing was captured); a follow goes on from
    /// their end.
    fn tail(&mut self) -> Result<Option<Vec<u8>>> {
        let reply: LogReply =
            self.link
                .ask(&self.host, control::LOG, &self.request, control::LOG_WAIT)?;
        self.request.after = Some(reply.position.unwrap_or_default());
        Ok(reply.tail)
    }

    /// Shows what the log gets until the member has ended and its log is read to the end.
    fn follow(&mut self, ctx: &Context, source: &mut Source, args: &Args) -> Result<()> {
        let mut lost = false;
        loop {
            let answer =
                self.link
                    .request(&self.host, control::LOG, &self.request, control::LOG_WAIT);
            let reply: LogReply = match answer {
                Ok(answer) => answer?,
                Err(err) => {
                    if !std::mem::replace(&mut lost, true) {
                        tracing::warn!(
                            "{}; still following {}, asking again every second",
                            err.message(),
                            self.request.member
                        );
                    }
                    std::thread::sleep(FOLLOW_RETRY);
                    continue;
                }
            };
            if std::mem::take(&mut lost) {
                tracing::warn!(
                    "host {} answers again; following {}",
                    self.host,
                    self.request.member
                );
            }
            self.request.after = reply.position.or(self.request.after);
            let bytes = reply.tail.unwrap_or_default();
            source.show(ctx, &bytes, args, reply.ended)?;
            if reply.ended {
                return Ok(());
            }
        }
    }
}

/// Every member's log, each line after the member's name.
fn all(
    ctx: &Context,
    team: &Team,
    config: TeamConfig,
    args: &Args,
    watcher: Option<Watcher>,
) -> Result<()> {
    let colour = output::colour() && !ctx.json;
    let width = config
        .members
        .iter()
        .map(|m| visible(&m.name).chars().count())
        .max()
        .unwrap_or(0);
    let mut sources = Vec::new();
    let mut logged = false;
    let reach = Reach::look(&ctx.home);
    // What a follower of a member on another host failed at, for this thread to report.
    let failed: Arc<Mutex<Option<Error>>> = Arc::default();
    for member in &config.members {
        let path = team.paths().log(&member.name);
        let prefix = render::member_prefix(member, width, colour);
        if let Some(host) = member.host.as_deref().filter(|h| reach.is_remote(Some(h))) {
            let follower = Follower::from_beginning(&path);
            let mut source = Source::new(member, prefix, follower, &path);
            let opened = RemoteLog::open(ctx, team, member, host, args.lines)
                .and_then(|mut log| Ok((log.tail()?, log)));
            let (tail, mut log) = match opened {
                Ok(opened) => opened,
                Err(err) => {
                    tracing::warn!("{}: {}", member.name, err.message());
                    continue;
                }
            };
            if let Some(tail) = tail {
                logged = true;
                source.print_tail(ctx, &tail, args)?;
            }
            if watcher.is_some() {
                let (ctx, args, failed) = (ctx.clone(), args.clone(), Arc::clone(&failed));
                std::thread::spawn(move || {
                    if let Err(err) = log.follow(&ctx, &mut source, &args) {
                        failed
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .get_or_insert(err);
                    }
                });
            }
            continue;
        }
        let (follower, tail) = Follower::start(&path, args.lines)?;
        let mut source = Source::new(member, prefix, follower, &path);
        if let Some(tail) = tail {
            logged = true;
            source.print_tail(ctx, &tail, args)?;
        }
        sources.push(source);
    }
    let Some(watcher) = watcher else {
        if !logged {
            return Err(Error::not_found(format!(
                "no output captured for any member of team {} yet",
                team.name()
            )));
        }
        return Ok(());
    };

    // A member spawned while following has a log no source reads yet: seeing one, the roster is
    // read again.
    let known: RefCell<HashSet<OsString>> =
        RefCell::new(sources.iter().map(|s| s.file.clone()).collect());
    let unknown = Cell::new(false);
    let relevant = |file: &OsStr| {
        if known.borrow().contains(file) {
            return true;
        }
        let new_log = TeamPaths::log_owner(file).is_some();
        if new_log {
            unknown.set(true);
        }
        new_log
    };
    // A follower of another host's member that fails ends the whole: seen here at the latest
    // at the watcher's safety re-scan.
    watcher.wait_for(None, &relevant, || {
        if let Some(err) = failed.lock().unwrap_or_else(PoisonError::into_inner).take() {
            return Err(err);
        }
        if unknown.take() {
            for member in team.load()?.members {
                let path = team.paths().log(&member.name);
                let file = path.file_name().unwrap_or_default().to_owned();
                if known.borrow_mut().insert(file) {
                    let follower = Follower::from_beginning(&path);
                    let width = width.max(visible(&member.name).chars().count());
                    let prefix = render::member_prefix(&member, width, colour);
                    sources.push(Source::new(&member, prefix, follower, &path));
                }
            }
        }
        for source in &mut sources {
            let fresh = source.follower.fresh()?;
            source.print_lines(ctx, &fresh)?;
        }
        Ok(None::<()>)
    })?;
    Ok(())
}

/// One member's log being shown.
struct Source {
    name: String,
    /// The log's file name in `logs/`, as the watcher reports it.
    file: OsString,
    follower: Follower,
    screen: Screen,
    /// What each line starts with: with --all, the member's name.
    prefix: String,
}

impl Source {
    fn new(member: &Member, prefix: String, follower: Follower, path: &Path) -> Self {
        Self {
            name: member.name.clone(),
            file: path.file_name().unwrap_or_default().to_owned(),
            follower,
            screen: Screen::new(),
            prefix,
        }
    }

    /// The last lines of `tail`, the bytes of the log's last lines; the line not finished yet
    /// too, unless following, which shows it once it is.
    fn print_tail(&mut self, ctx: &Context, tail: &[u8], args: &Args) -> Result<()> {
        let mut lines = self.screen.feed(tail);
        if !args.follow {
            lines.extend(self.screen.pending());
        }
        let from = lines.len().saturating_sub(args.lines);
        for line in &lines[from..] {
            self.print(ctx, line)?;
        }
        Ok(())
    }

    /// [`Source::print_tail`], or with `--raw` the bytes as they are.
    fn show_tail(&mut self, ctx: &Context, tail: &[u8], args: &Args) -> Result<()> {
        if args.raw {
            output::bytes(tail)
        } else {
            self.print_tail(ctx, tail, args)
        }
    }

    /// Bytes a follower read: the lines they finish, or with `--raw` the bytes as they are. The
    /// `last` bytes of a member that has ended end the line not finished yet too.
    fn show(&mut self, ctx: &Context, fresh: &[u8], args: &Args, last: bool) -> Result<()> {
        if args.raw {
            return output::bytes(fresh);
        }
        self.print_lines(ctx, fresh)?;
        match self.screen.pending().filter(|_| last) {
            Some(line) => self.print(ctx, &line),
            None => Ok(()),
        }
    }

    /// The lines `fresh` finishes.
    fn print_lines(&mut self, ctx: &Context, fresh: &[u8]) -> Result<()> {
        for line in self.screen.feed(fresh) {
            self.print(ctx, &line)?;
        }
        Ok(())
    }

    fn print(&self, ctx: &Context, line: &str) -> Result<()> {
        if ctx.json {
            output::json_line(&json!({"name": self.name, "line": line}))
        } else {
            // The line is already as it may reach a terminal (`screen::visible`), and the prefix
            // holds the member's colour, which `output::line` would write out.
            output::verbatim_line(format!("{}{line}", self.prefix))
        }
    }
}
