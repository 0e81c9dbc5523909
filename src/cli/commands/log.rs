//! `swarm log NAME [-n N] [-f] [--raw]` and `swarm log --all [-f]`: what members' panes printed
//! (docs/ARCHITECTURE.md, "Logs a person can read" under "Decisions"). By default as text: each
//! line is played on a terminal emulator (`base/screen.rs`), so prompts, colours and redrawn
//! progress read as the pane showed them; `--raw` gives the bytes exactly. `-f` follows like
//! `tail -f`, across the log's rotation, through the one watcher, until the member has ended;
//! `--all -f` interleaves every member's new lines, each after the member's name in its colour.
//! Wherever a member runs, its log comes through `cluster::Fleet` (`cluster/logs.rs`).

use std::collections::HashMap;

use clap_complete::engine::ArgValueCandidates;
use serde::Serialize;

use crate::base::names::Name;
use crate::base::screen::{Screen, visible};
use crate::cli::complete;
use crate::cli::context::Context;
use crate::cli::output::{self, Report};
use crate::cli::render;
use crate::error::{Error, Result};
use crate::format::config::{Member, TeamConfig};
use crate::member::log_follow::LogEvent;
use crate::store::durable::private_dir;
use crate::store::team::Team;

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
    match &name {
        Some(name) => one(ctx, &team, &config, name, &args),
        None => all(ctx, &team, &config, &args),
    }
}

/// One member's log; followed, until the member has ended and its log is read to the end.
fn one(ctx: &Context, team: &Team, config: &TeamConfig, name: &Name, args: &Args) -> Result<()> {
    let member = config.require_member(name.as_str())?;
    let mut log = ctx.fleet().log(team, member, args.lines, args.follow)?;
    let tail = log.tail();
    if tail.is_none() && !args.follow {
        return Err(log.nothing_yet());
    }
    let mut source = Source::new(member, String::new());
    source.show_tail(ctx, &tail.unwrap_or_default(), args)?;
    if args.follow {
        log.follow(|fresh, ended| source.show(ctx, fresh, args, ended))?;
    }
    Ok(())
}

/// Every member's log, each line after the member's name.
fn all(ctx: &Context, team: &Team, config: &TeamConfig, args: &Args) -> Result<()> {
    let colour = ctx.printer().colour();
    let mut width = config
        .members
        .iter()
        .map(|m| visible(&m.name).chars().count())
        .max()
        .unwrap_or(0);
    let mut logs = ctx.fleet().logs(team, config, args.lines, args.follow)?;
    let mut sources = HashMap::new();
    let mut logged = false;
    for (member, tail) in logs.tails() {
        let mut source = Source::new(&member, render::member_prefix(&member, width, colour));
        if let Some(tail) = tail {
            logged = true;
            source.print_tail(ctx, &tail, args)?;
        }
        sources.insert(member.name, source);
    }
    if !args.follow {
        if !logged {
            return Err(Error::not_found(format!(
                "no output captured for any member of team {} yet",
                team.name()
            )));
        }
        return Ok(());
    }
    for event in logs.follow() {
        match event {
            LogEvent::Joined(member) => {
                width = width.max(visible(&member.name).chars().count());
                let prefix = render::member_prefix(&member, width, colour);
                sources
                    .entry(member.name.clone())
                    .or_insert_with(|| Source::new(&member, prefix));
            }
            LogEvent::Bytes { name, bytes, ended } => {
                if let Some(source) = sources.get_mut(&name) {
                    source.show(ctx, &bytes, args, ended)?;
                }
            }
            LogEvent::Failed(err) => return Err(err),
        }
    }
    Ok(())
}

/// One member's log being shown.
struct Source {
    name: String,
    screen: Screen,
    /// What each line starts with: with --all, the member's name.
    prefix: String,
}

impl Source {
    fn new(member: &Member, prefix: String) -> Self {
        Self {
            name: member.name.clone(),
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
        ctx.event(&LogLine {
            name: &self.name,
            line,
            prefix: &self.prefix,
        })
    }
}

/// One line of a member's log.
#[derive(Serialize)]
struct LogLine<'a> {
    name: &'a str,
    line: &'a str,
    #[serde(skip)]
    prefix: &'a str,
}

impl Report for LogLine<'_> {
    fn text(&self) -> Result<()> {
        // The line is already as it may reach a terminal (`screen::visible`), and the prefix
        // holds the member's colour, which `output::line` would write out.
        output::verbatim_line(format!("{}{}", self.prefix, self.line))
    }
}
