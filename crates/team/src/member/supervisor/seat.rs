//! The supervisor's seat: which member it runs, in which pane of which team, and the small
//! helpers every part of the supervisor shares (printing in the pane).

use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::base::names::Name;
use crate::base::process::LEAD_VAR;
pub(super) use crate::base::runtime::OffRuntime;
use crate::base::text::for_terminal;
use crate::error::Result;
use crate::format::config::Member;
use crate::launch::tmux::Tmux;
use crate::member::ending;
use crate::member::notify::Subscribers;
use crate::member::reach::Reach;
use crate::store::team::Team;

pub(super) struct Supervisor {
    pub(super) team: Team,
    /// Who signs what it sends for the lead's side.
    pub(super) reach: Box<dyn Reach>,
    pub(super) name: String,
    pub(super) lead: String,
    pub(super) member: Member,
    pub(super) max_concurrent: Option<u32>,
    pub(super) pane: Option<String>,
    pub(super) tmux: Option<Tmux>,
    pub(super) log: PathBuf,
    /// The bound of the log, in bytes.
    pub(super) log_max: u64,
    /// Where the launcher left the member's variables, to be read once.
    pub(super) env_file: PathBuf,
    /// The ids of the lead's signed messages this run has taken (docs/ARCHITECTURE.md, "Signed
    /// lead messages"): in this process's memory, which nothing the member runs can rewrite, and
    /// asked by the member's readers on its socket. One taken again is a replay.
    taken: Mutex<HashSet<String>>,
    /// The pane's terminal is gone; nothing more can be printed to it. Shared with the blocking
    /// threads that print on the supervisor's behalf.
    pub(super) hung_up: AtomicBool,
    /// Claude Code sessions waiting to be told the member is idle.
    pub(super) subscribers: Subscribers,
}

impl Supervisor {
    pub(super) fn new(
        team: Team,
        reach: Box<dyn Reach>,
        name: Name,
        log_max: u64,
        env_file: PathBuf,
    ) -> Result<Self> {
        let config = team.load()?;
        let member = config.require_member(name.as_str())?.clone();
        Ok(Self {
            log: team.paths().log(&member.name),
            log_max,
            env_file,
            // As it was launched (tmux set it in this process's own environment), not as
            // config.json, which any member can rewrite, says now.
            lead: std::env::var(LEAD_VAR)
                .ok()
                .filter(|lead| !lead.is_empty())
                .unwrap_or_else(|| config.lead_name().to_owned()),
            max_concurrent: config.launch.as_ref().and_then(|l| l.max_concurrent),
            pane: std::env::var("TMUX_PANE")
                .ok()
                .filter(|p| p.starts_with('%')),
            tmux: Tmux::current(),
            name: member.name.clone(),
            member,
            team,
            reach,
            hung_up: AtomicBool::new(false),
            taken: Mutex::default(),
            subscribers: Subscribers::default(),
        })
    }

    /// Which of `ids` this run took before; with `take`, it takes them now.
    pub(super) fn taken(&self, ids: &[String], take: bool) -> Vec<String> {
        let mut taken = self.taken.lock().unwrap_or_else(PoisonError::into_inner);
        let before = ids
            .iter()
            .filter(|id| taken.contains(*id))
            .cloned()
            .collect();
        if take {
            taken.extend(ids.iter().cloned());
        }
        before
    }

    /// [`Self::say`] from the runtime: a write to the pane's terminal blocks while tmux is not
    /// reading it.
    pub(super) async fn print(self: &Arc<Self>, text: String) {
        self.off_runtime(move |this| this.say(&text)).await;
    }

    pub(super) fn hang_up(&self) {
        self.hung_up.store(true, Ordering::Relaxed);
    }

    pub(super) fn hung_up(&self) -> bool {
        self.hung_up.load(Ordering::Relaxed)
    }

    /// Why `stop` or `down` asked for the program to end.
    pub(super) fn stop_reason(&self) -> String {
        self.team
            .load()
            .ok()
            .and_then(|config| {
                config
                    .member(&self.name)
                    .and_then(|m| m.stop_requested.clone())
            })
            .unwrap_or_else(|| ending::STOP.to_owned())
    }

    /// A line in the pane from swarm itself. A vanished pane makes this fail; that is fine.
    pub(super) fn say(&self, text: &str) {
        if !self.hung_up() {
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "[swarm] {}", for_terminal(text));
            let _ = stdout.flush();
        }
    }
}
