//! `swarm join NAME`: add a member with no pane, such as a person in another terminal.

use serde::Serialize;

use crate::base::clock;
use crate::base::names::Name;
use crate::cli::context::Context;
use crate::cli::output::{self, Report};
use crate::error::{Error, Result};
use crate::format::config::Member;
use crate::format::settings::Color;
use crate::policy::{self, Action};

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one document:
  {"team", "name", "color"}"#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {
    /// The new member's name
    #[arg(value_name = "NAME")]
    pub(crate) name: String,

    /// Its colour [default: the next one in the team's rotation]
    #[arg(long, value_name = "COLOR")]
    pub(crate) color: Option<Color>,
}

pub(crate) fn run(ctx: &Context, args: Args) -> Result<()> {
    let name = Name::parse("member", &args.name)?;
    let team = ctx.team()?;
    let cwd = std::env::current_dir()
        .map(|dir| dir.display().to_string())
        .unwrap_or_default();
    let config = team.load()?;
    policy::allow(&config, &ctx.caller(&config)?, Action::Join)?;
    let color = team.update(|config| {
        if config.member(name.as_str()).is_some() {
            return Err(Error::usage(format!(
                "{name} is already a member of team {}",
                config.name
            )));
        }
        let teammates = config.members.len().saturating_sub(1);
        let color = args.color.unwrap_or_else(|| Color::round_robin(teammates));
        let mut member = Member::new(name.as_str(), &config.name, clock::now_ms());
        member.color = Some(color.as_str().to_owned());
        member.cwd = cwd;
        ctx.fleet().place_new_member(config, &mut member)?;
        config.members.push(member);
        Ok(color)
    })?;
    team.mailbox(name.as_str()).ensure()?;
    ctx.report(&Joined {
        team: team.name(),
        name: name.as_str(),
        color: color.as_str(),
    })
}

/// The member added, and the colour it was given.
#[derive(Serialize)]
struct Joined<'a> {
    team: &'a str,
    name: &'a str,
    color: &'a str,
}

impl Report for Joined<'_> {
    fn text(&self) -> Result<()> {
        output::line(format!("{} joined team {}", self.name, self.team))?;
        output::line(format!(
            "act as it with: export SWARM_TEAM={} SWARM_AGENT={}",
            self.team, self.name
        ))
    }
}
