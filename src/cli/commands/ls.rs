//! `swarm ls`: the teams under home.

use serde::Serialize;

use crate::base::clock;
use crate::cli::context::Context;
use crate::cli::output::{self, Report, Table};
use crate::cli::removal;
use crate::cli::render;
use crate::error::Result;
use crate::member::liveness::Observed;
use crate::store::team::{Team, list_teams};

/// What `--json` prints (docs/ARCHITECTURE.md, "JSON output").
const JSON: &str = r#"JSON output (--json), one document:
  [{"name", "description", "members", "live", "interrupted", "createdAt", "createdAtMs", "dir"}]
"interrupted": nothing of the team runs and a member's run was cut short (`swarm resume TEAM`);
the table shows it in LIVE."#;

#[derive(Debug, clap::Args)]
#[command(after_long_help = JSON)]
pub(crate) struct Args {}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct TeamSummary {
    name: String,
    description: Option<String>,
    members: usize,
    live: usize,
    interrupted: bool,
    /// When the team was created (RFC 3339), and in epoch milliseconds as config.json keeps it.
    created_at: Option<String>,
    created_at_ms: Option<u64>,
    dir: std::path::PathBuf,
}

pub(crate) fn run(ctx: &Context, _args: Args) -> Result<()> {
    removal::finish_interrupted(ctx);
    let mut teams = Vec::new();
    for name in list_teams(&ctx.home)? {
        let team = Team::open(&ctx.home, &name)?;
        // Live as `status` sees it: the same observation, panes and processes included.
        let observed = match Observed::take(&team, &ctx.fleet()) {
            Ok(observed) => observed,
            Err(err) => {
                tracing::warn!("skipping team {name}: {err}");
                continue;
            }
        };
        let live = observed.live().count();
        let interrupted = observed.interrupted();
        let config = observed.config;
        teams.push(TeamSummary {
            live,
            interrupted,
            members: config.members.len(),
            description: config.description,
            created_at: render::time(Some(config.created_at)),
            created_at_ms: Some(config.created_at).filter(|ms| *ms > 0),
            dir: team.paths().dir().to_path_buf(),
            name,
        });
    }
    ctx.report(&Teams {
        teams,
        teams_dir: ctx.home.teams_dir(),
    })
}

/// Every team under home.
#[derive(Serialize)]
#[serde(transparent)]
struct Teams {
    teams: Vec<TeamSummary>,
    #[serde(skip)]
    teams_dir: std::path::PathBuf,
}

impl Report for Teams {
    fn text(&self) -> Result<()> {
        if self.teams.is_empty() {
            return output::line(format!("no teams under {}", self.teams_dir.display()));
        }
        let now = clock::now_ms();
        let mut table = Table::new(&["TEAM", "MEMBERS", "LIVE", "CREATED", "DESCRIPTION"]);
        for team in &self.teams {
            table.row(vec![
                team.name.clone(),
                team.members.to_string(),
                if team.interrupted {
                    "interrupted".to_owned()
                } else {
                    team.live.to_string()
                },
                team.created_at_ms
                    .map_or_else(|| "-".into(), |ms| clock::ago(ms, now)),
                team.description.clone().unwrap_or_default(),
            ]);
        }
        table.print()
    }
}
