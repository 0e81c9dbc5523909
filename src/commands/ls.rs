//! `swarm ls`: the teams under home.

use serde::Serialize;

use crate::clock;
use crate::config::{Team, list_teams};
use crate::context::Context;
use crate::error::Result;
use crate::liveness;
use crate::output::{self, Table};

#[derive(Debug, clap::Args)]
pub struct Args {}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct TeamSummary {
    name: String,
    description: Option<String>,
    members: usize,
    live: usize,
    created_at: u64,
    dir: std::path::PathBuf,
}

pub fn run(ctx: &Context, _args: Args) -> Result<()> {
    let mut teams = Vec::new();
    for name in list_teams(&ctx.home)? {
        let team = Team::open(&ctx.home, &name)?;
        let config = match team.load() {
            Ok(config) => config,
            Err(err) => {
                tracing::warn!("skipping team {name}: {err}");
                continue;
            }
        };
        teams.push(TeamSummary {
            live: config
                .members
                .iter()
                .filter(|m| liveness::seen(m, None).is_live())
                .count(),
            members: config.members.len(),
            description: config.description,
            created_at: config.created_at,
            dir: team.paths().dir().to_path_buf(),
            name,
        });
    }
    if ctx.json {
        return output::json(&teams);
    }
    if teams.is_empty() {
        return output::line(format!("no teams under {}", ctx.home.teams_dir().display()));
    }
    let now = clock::now_ms();
    let mut table = Table::new(&["TEAM", "MEMBERS", "LIVE", "CREATED", "DESCRIPTION"]);
    for team in &teams {
        table.row(vec![
            team.name.clone(),
            team.members.to_string(),
            team.live.to_string(),
            if team.created_at > 0 {
                clock::ago(team.created_at, now)
            } else {
                "-".into()
            },
            team.description.clone().unwrap_or_default(),
        ]);
    }
    table.print()
}
