//! `swarm watch [NAME|--all]`: follow messages as they arrive, until interrupted. It only looks,
//! unless `--consume` is given for your own inbox.

use std::collections::{BTreeMap, HashSet};
use std::ffi::OsStr;
use std::fs;

use serde_json::json;

use crate::config::{Team, TeamConfig};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::message::InboxMessage;
use crate::names::{Name, path_component};
use crate::output;
use crate::render;
use crate::watcher::Watcher;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Whose inbox to follow [default: yours]
    #[arg(value_name = "NAME", conflicts_with = "all")]
    pub name: Option<String>,

    /// Follow every inbox of the team
    #[arg(long)]
    pub all: bool,

    /// Consume what arrives (your own inbox only), as `recv` does
    #[arg(long)]
    pub consume: bool,
}

/// Which inbox files are followed, by file name.
enum Scope {
    One(String),
    All,
}

impl Scope {
    fn covers(&self, file: &OsStr) -> bool {
        let file = file.to_string_lossy();
        match self {
            Self::One(name) => *file == format!("{name}.json"),
            Self::All => file.ends_with(".json") && !file.starts_with('.'),
        }
    }
}

pub fn run(ctx: &Context, args: Args) -> Result<()> {
    let team = ctx.team()?;
    let config = team.load()?;
    let me = ctx.agent()?;
    let target = match (&args.name, args.all) {
        (_, true) => None,
        (Some(name), false) => Some(Name::parse("member", name)?),
        (None, false) => Some(ctx.member_of(&config)?),
    };
    if args.consume && target.as_ref() != Some(&me) {
        return Err(
            Error::usage("--consume applies to your own inbox only").with_hint(
                "drop --consume to follow someone else's inbox without taking their messages",
            ),
        );
    }
    let scope = match &target {
        Some(name) => {
            let member = config.require_member(name.as_str())?;
            team.mailbox(&member.name).ensure()?;
            Scope::One(path_component(&member.name))
        }
        None => Scope::All,
    };

    let inboxes = team.paths().inboxes();
    crate::fsutil::create_dir_all(&inboxes)?;
    let watcher = Watcher::arm(&inboxes)?;
    let mut seen: BTreeMap<String, HashSet<String>> = BTreeMap::new();
    let relevant = |file: &OsStr| scope.covers(file);
    watcher.wait_for(None, &relevant, || {
        for (owner, messages) in read_scope(&team, &config, &scope, args.consume)? {
            let ids = seen.entry(owner.clone()).or_default();
            let current: HashSet<String> = messages.iter().map(|m| m.id().into_owned()).collect();
            for message in &messages {
                if args.consume || !ids.contains(message.id().as_ref()) {
                    show(ctx, message, &owner)?;
                }
            }
            // Only what is still unread can show up again; forgetting the rest bounds memory.
            *ids = current;
        }
        Ok(None::<()>)
    })?;
    Ok(())
}

/// The messages of every inbox in scope, keyed by owner.
fn read_scope(
    team: &Team,
    config: &TeamConfig,
    scope: &Scope,
    consume: bool,
) -> Result<Vec<(String, Vec<InboxMessage>)>> {
    let owners: Vec<String> = match scope {
        Scope::One(component) => vec![component.clone()],
        Scope::All => {
            let dir = team.paths().inboxes();
            let mut owners: Vec<String> = fs::read_dir(&dir)
                .map_err(|err| Error::io("list", &dir, err))?
                .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
                .filter(|file| scope.covers(OsStr::new(file)))
                .filter_map(|file| file.strip_suffix(".json").map(str::to_owned))
                .collect();
            owners.sort();
            owners
        }
    };
    owners
        .into_iter()
        .map(|component| {
            let owner = config
                .members
                .iter()
                .find(|m| path_component(&m.name) == component)
                .map_or(component.clone(), |m| m.name.clone());
            let mailbox = team.mailbox(&owner);
            let messages = if consume {
                mailbox.consume(None, |_| true)?
            } else {
                mailbox.peek()?
            };
            Ok((owner, messages))
        })
        .collect()
}

fn show(ctx: &Context, message: &InboxMessage, to: &str) -> Result<()> {
    if ctx.json {
        output::json_line(&render::json(message, &[("to", json!(to))]))
    } else {
        output::line(render::arrival(message, to))
    }
}
