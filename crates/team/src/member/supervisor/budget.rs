//! The supervisor's weighing of its member's spending against the team's `[budget]`
//! (docs/ARCHITECTURE.md, "Costs and budgets"), each time the team's usage ledger grows (its
//! own follow of a transcript, `swarm usage add`, another member's spending): at 80 % of a
//! budget a `cost` event (the signing agent's alert thread alerts on it); at 100 % another, the
//! lead told, and, unless `on_exceed = "notify"`, the member (for the team's budget, every live
//! teammate) asked to shut down and then stopped as `swarm stop` does. Each threshold of each
//! budget is told once: the first supervisor to record it in config.json's `budgetReached`
//! tells it. The budget is read from config.json at each weighing, so `swarm budget` holds at once.

use std::sync::Arc;
use std::time::Duration;

use crate::base::clock;
use crate::format::event::{COST_TEAM, What};
use crate::format::structured::{ShutdownRequest, Structured, shutdown_request_id};
use crate::format::usage::{ALERT_PERCENT, Limit, OnExceed, Spend};
use crate::member::ending;
use crate::member::liveness::Observed;
use crate::member::{seal, stop};
use crate::policy::Caller;
use crate::store::events;
use crate::store::paths::TeamPaths;
use crate::store::usage::Tally;
use crate::store::watcher::AsyncWatcher;

use super::seat::{OffRuntime, Supervisor};

/// How long a member asked to shut down for its budget has before it is stopped.
const BUDGET_GRACE: Duration = Duration::from_secs(30);
const BUDGET_GRACE_VAR: &str = "SWARM_BUDGET_GRACE";

/// Weighs the budgets each time the ledger grows, while the member's program runs.
pub(super) async fn watch(supervisor: Arc<Supervisor>) {
    let Ok(mut watcher) = AsyncWatcher::arm(supervisor.team.paths().dir()) else {
        tracing::warn!(
            "{}'s budget is not watched: its team folder cannot be",
            supervisor.name
        );
        return;
    };
    let mut tally = Some(Tally::default());
    // The ledger's length at the last weighing: a safety re-scan with nothing new weighs nothing.
    let mut weighed: Option<Option<u64>> = None;
    loop {
        let ledger = supervisor.team.paths().usage();
        let length = std::fs::metadata(&ledger).map(|meta| meta.len()).ok();
        if weighed != Some(length) {
            weighed = Some(length);
            let mut held = tally.take().unwrap_or_default();
            tally = Some(
                supervisor
                    .off_runtime(move |this| {
                        this.weigh_budget(&mut held);
                        held
                    })
                    .await,
            );
        }
        if watcher.wait(None, &TeamPaths::is_usage).await.is_err() {
            return;
        }
    }
}

impl Supervisor {
    /// Weighs what the member, and the team, have spent (`tally`, read on here) against the
    /// budgets config.json holds now.
    pub(super) fn weigh_budget(&self, tally: &mut Tally) {
        let Ok(config) = self.team.load() else {
            return;
        };
        let Some(budget) = config.budget.clone() else {
            return;
        };
        if let Err(err) = tally.read_on(self.team.paths()) {
            tracing::warn!("cannot weigh {}'s budget: {err}", self.name);
            return;
        }
        if let Some(limit) = budget.members.get(&self.name) {
            let spend = tally.spend(&self.name, &config.prices);
            self.weigh(&self.name, limit, &spend, budget.on_exceed);
        }
        let spend = tally.total(&config.prices);
        self.weigh(COST_TEAM, &budget.team, &spend, budget.on_exceed);
    }

    /// Tells each threshold of budget `whose` that `spend` has reached, once.
    fn weigh(&self, whose: &str, limit: &Limit, spend: &Spend, on_exceed: OnExceed) {
        let Some(used) = limit.used(spend) else {
            return;
        };
        for percent in [ALERT_PERCENT, 100] {
            if used * 100.0 < f64::from(percent) {
                return;
            }
            let mark = format!("{whose}:{percent}");
            let first = self
                .team
                .update(|config| Ok(config.budget_reached.insert(mark.clone())));
            match first {
                Ok(true) => {}
                Ok(false) => continue,
                Err(err) => {
                    tracing::warn!("cannot record that {mark} of the budget was reached: {err}");
                    continue;
                }
            }
            let what = What::Cost {
                percent,
                budget: whose.to_owned(),
                spent: spend.money(),
                limit: limit.describe(),
            };
            let member = (whose != COST_TEAM).then_some(whose);
            let line = format!(
                "{}{}",
                member.map(|m| format!("{m}: ")).unwrap_or_default(),
                crate::format::event::Event {
                    at: String::new(),
                    member: None,
                    what: what.clone(),
                }
                .summary()
            );
            events::tell(self.team.paths(), member, what);
            if percent == 100 {
                self.budget_spent(whose, &line, on_exceed);
            }
        }
    }

    /// Budget `whose` is spent: the lead is told, and the members it covers asked to shut down,
    /// then stopped.
    fn budget_spent(&self, whose: &str, line: &str, on_exceed: OnExceed) {
        let Ok(config) = self.team.load() else {
            return;
        };
        let lead = self.lead.clone();
        let names: Vec<String> = if on_exceed == OnExceed::Notify {
            Vec::new()
        } else if whose == COST_TEAM {
            Observed::take(&self.team, self.reach.as_ref())
                .map(|observed| {
                    observed
                        .live_here()
                        .filter(|name| *name != lead)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        } else if whose != lead {
            vec![whose.to_owned()]
        } else {
            // The lead is told, not stopped: nothing would be left to tell.
            Vec::new()
        };
        let then = if names.is_empty() {
            "nothing is stopped".to_owned()
        } else {
            format!("asking {} to shut down, then stopping", names.join(", "))
        };
        let text = format!("[swarm] budget spent: {line}; {then}");
        let from = if self.name == lead {
            "user"
        } else {
            self.name.as_str()
        };
        if let Err(err) = seal::tell(&self.team, self.reach.as_ref(), &config, from, &lead, &text) {
            tracing::warn!("cannot tell {lead} that a budget is spent: {err}");
        }
        if names.is_empty() {
            return;
        }
        let Ok(lead_caller) = Caller::member(&config, &lead) else {
            return;
        };
        for name in &names {
            let request = Structured::ShutdownRequest(ShutdownRequest {
                request_id: shutdown_request_id(clock::now_ms(), name),
                from: lead.clone(),
                reason: Some(format!("budget spent: {line}")),
                timestamp: clock::timestamp_now(),
            });
            if let Err(err) = seal::request(
                &self.team,
                self.reach.as_ref(),
                &config,
                &lead_caller,
                name,
                &request,
            ) {
                tracing::warn!("cannot ask {name} to shut down for its budget: {err}");
            }
        }
        std::thread::sleep(clock::seconds_from_env(BUDGET_GRACE_VAR, BUDGET_GRACE));
        let still: Vec<String> = Observed::take(&self.team, self.reach.as_ref())
            .map(|observed| {
                names
                    .iter()
                    .filter(|name| observed.live_here().any(|live| live == name.as_str()))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        if still.is_empty() {
            return;
        }
        if let Err(err) = stop::stop(&self.team, self.reach.as_ref(), &still, ending::BUDGET) {
            tracing::warn!("cannot stop {} for the budget: {err}", still.join(", "));
        }
    }
}
