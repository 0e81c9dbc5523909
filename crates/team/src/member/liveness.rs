//! What state a member is really in. config.json records what the supervisor last wrote; a member
//! whose supervisor or pane has vanished since is shown as vanished, never as running, and one
//! whose supervisor has gone while its processes live on is shown as orphaned, still live and
//! stoppable.

use std::cell::LazyCell;
use std::collections::HashSet;
use std::ffi::OsStr;
use std::path::PathBuf;
use std::time::Instant;

use crate::error::{Error, Result};
pub use crate::format::config::{Member, State, TeamConfig};
use crate::member::processes::{Run, Snapshot};
use crate::member::reach::{Reach, Site, Sites};
use crate::store::follow::{Arrival, Follower};
use crate::store::paths::TeamPaths;
use crate::store::team::Team;
pub use crate::store::watcher::{Wake, Watcher};

/// A member's state as `status` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// Never launched: a member added by `init` or `join`.
    NotStarted,
    Recorded(State),
    /// Recorded as live, but its supervisor process is gone.
    ProcessVanished,
    /// Recorded as live; its supervisor is gone, but processes it started still run.
    Orphaned,
    /// Recorded as live with no supervisor registered yet, but its tmux pane is gone.
    PaneVanished,
    /// Recorded as live on another machine not heard from now (docs/ARCHITECTURE.md, "Roster,
    /// control and status across hosts"); it may still be running there.
    Unreachable,
}

impl Seen {
    pub fn label(self) -> &'static str {
        match self {
            Self::NotStarted => "-",
            Self::Recorded(state) => state.as_str(),
            Self::ProcessVanished => "vanished",
            Self::Orphaned => "orphaned",
            Self::PaneVanished => "pane-gone",
            Self::Unreachable => "unreachable",
        }
    }

    /// The member's program may still be running.
    pub fn is_live(self) -> bool {
        matches!(self, Self::Recorded(state) if !state.is_final())
            || matches!(self, Self::Orphaned | Self::Unreachable)
    }
}

/// What `member` is seen to be: `panes` is the set of live pane ids on the team's tmux server,
/// when it could be listed; `processes` one look at every process. A member away is what its
/// machine last said, mirrored into config.json, never judged by this machine's panes and
/// processes; unreachable while that machine is not heard from.
fn judge<P, S>(
    team: &Team,
    member: &Member,
    panes: &LazyCell<Option<HashSet<String>>, P>,
    processes: &LazyCell<Snapshot, S>,
    site: Site,
) -> Seen
where
    P: FnOnce() -> Option<HashSet<String>>,
    S: FnOnce() -> Snapshot,
{
    let Some(state) = member.state else {
        return Seen::NotStarted;
    };
    if let Site::Away { heard } = site {
        return if state.is_final() || heard {
            Seen::Recorded(state)
        } else {
            Seen::Unreachable
        };
    }
    if state.is_final() {
        if let Some(state) = recorded_end(team, member, processes) {
            return Seen::Recorded(state);
        }
        // An end recorded while the run still runs: config.json is a file any member can write.
        return match Run::of(team, member) {
            Some(run) if run.supervisor_proven() => Seen::Recorded(State::Running),
            _ => Seen::Orphaned,
        };
    }
    if let Some(run) = Run::of(team, member) {
        // A proven supervisor is running, whatever the panes show: config.json's pane and
        // socket are a claim anyone can rewrite, and a supervisor's pane closing ends it.
        if run.supervisor_proven() {
            return Seen::Recorded(state);
        }
        // Its processes are looked for by what they carry, not by asking the supervisor.
        return if processes.of(&run).is_empty() {
            Seen::ProcessVanished
        } else {
            Seen::Orphaned
        };
    }
    // No supervisor has registered yet: the pane `up` recorded is all there is to go by.
    if !member.tmux_pane_id.is_empty()
        && let Some(panes) = panes.as_ref()
        && !panes.contains(&member.tmux_pane_id)
    {
        return Seen::PaneVanished;
    }
    Seen::Recorded(state)
}

/// The end config.json records for `member`, if it holds: no process of its run is seen
/// running here. A teammate can write `state`, so an end recorded while the run runs is not
/// believed (a member of another host is judged by its node, never here).
fn recorded_end<S: FnOnce() -> Snapshot>(
    team: &Team,
    member: &Member,
    processes: &LazyCell<Snapshot, S>,
) -> Option<State> {
    let state = member.state.filter(|state| state.is_final())?;
    match Run::of(team, member) {
        Some(run) if !processes.of(&run).is_empty() => None,
        _ => Some(state),
    }
}

/// Whether `member` has ended, as the processes show it, not config.json alone: for `send` and
/// the lead-side writes (`seal::refuse_if_ended`), which refuse a member that will never read.
/// The processes are looked at only when config.json records an end.
pub(crate) fn has_ended<F: FnOnce() -> Snapshot>(
    team: &Team,
    member: &Member,
    processes: &LazyCell<Snapshot, F>,
) -> bool {
    member.state.is_some_and(State::is_final) && recorded_end(team, member, processes).is_some()
}

/// A team's config and what its members are doing, observed together, once: every question asked
/// of one observation gets the same answer, however the processes and panes change meanwhile.
///
/// Processes and panes are checked after config.json is read, so a member whose program ended in
/// between would look vanished. A supervisor records the ending before it exits, so a member that
/// looks vanished is judged again on a fresh read: only one still unrecorded has really vanished.
#[derive(Debug, Clone)]
pub struct Observed {
    pub config: TeamConfig,
    /// What each member of `config` is seen to be, in the same order.
    seen: Vec<Seen>,
    /// Where each member runs.
    sites: Sites,
}

impl Observed {
    /// Looks once, asking `reach` where the members run.
    pub fn take(team: &Team, reach: &dyn Reach) -> Result<Self> {
        Self::of(team, team.load()?, reach)
    }

    /// [`Observed::take`] of `config`, the team's as a command has just read it.
    pub fn of(team: &Team, mut config: TeamConfig, reach: &dyn Reach) -> Result<Self> {
        // Each looked at only when a member's judgement needs it: a member whose supervisor is
        // proven running needs neither, so a team that runs costs no tmux call and no /proc scan.
        let panes = LazyCell::new(|| live_panes(&config));
        let processes = LazyCell::new(Snapshot::take);
        let sites = reach.sites(&config);
        let mut seen: Vec<Seen> = config
            .members
            .iter()
            .map(|m| judge(team, m, &panes, &processes, sites.of(m)))
            .collect();
        drop(panes);
        let looks_vanished = |seen: &Seen| {
            matches!(
                seen,
                Seen::ProcessVanished | Seen::PaneVanished | Seen::Orphaned
            )
        };
        if seen.iter().any(looks_vanished) {
            let fresh = team.load()?;
            for (then, seen) in config.members.iter_mut().zip(&mut seen) {
                if looks_vanished(seen)
                    && let Some(now) = fresh.member(&then.name)
                    && let Some(state) = now.state.filter(|state| state.is_final())
                {
                    *then = now.clone();
                    *seen = Seen::Recorded(state);
                }
            }
        }
        Ok(Self {
            config,
            seen,
            sites,
        })
    }

    /// What `member`, one of `config`'s, was seen to be.
    pub fn seen(&self, member: &Member) -> Seen {
        self.config
            .members
            .iter()
            .position(|m| m.name == member.name)
            .map_or(Seen::NotStarted, |at| self.seen[at])
    }

    /// Each member with what it was seen to be.
    pub fn members(&self) -> impl Iterator<Item = (&Member, Seen)> {
        self.config.members.iter().zip(self.seen.iter().copied())
    }

    /// Whether anything of the team may still be running: a team is *running* while one of its
    /// members is live, and has *ended* when none is.
    pub fn running(&self) -> bool {
        self.live().next().is_some()
    }

    /// Whether the team was interrupted (docs/ARCHITECTURE.md, "Resuming a team"): nothing of it
    /// runs, and a member was running when its run was cut short, its tmux server or supervisor
    /// gone (a reboot, a crash) without an ending, or ended by a hangup or a signal from outside.
    pub fn interrupted(&self) -> bool {
        !self.running() && self.interrupted_members().next().is_some()
    }

    /// The members whose runs were cut short, whatever runs now: those a resume starts again.
    pub fn interrupted_members(&self) -> impl Iterator<Item = &Member> {
        self.members()
            .filter(|(member, seen)| match seen {
                Seen::ProcessVanished | Seen::PaneVanished => true,
                Seen::Recorded(state) if state.is_final() => member.was_interrupted(),
                _ => false,
            })
            .map(|(member, _)| member)
    }

    /// Whether this machine's part of the team was interrupted: nothing runs here, and a member
    /// here was cut short. The same as [`Observed::interrupted`] for a team on one machine; for a
    /// team across hosts right after a reboot, true before the other hosts' nodes have judged
    /// their members (a resume waits for them).
    pub fn interrupted_here(&self) -> bool {
        self.live_here().next().is_none()
            && self
                .interrupted_members()
                .any(|member| self.is_here(member))
    }

    /// The members a resume starts again (docs/ARCHITECTURE.md, "Resuming a team"): those whose
    /// runs were cut short; or, of a team `down` brought down (nothing runs, nothing was cut
    /// short), those whose runs ended in a shutdown.
    pub fn to_resume(&self) -> Vec<&Member> {
        let interrupted: Vec<&Member> = self.interrupted_members().collect();
        if !interrupted.is_empty() || self.running() {
            return interrupted;
        }
        self.members()
            .filter(|(member, seen)| {
                matches!(seen, Seen::Recorded(state) if state.is_final())
                    && member.ended_in_shutdown()
            })
            .map(|(member, _)| member)
            .collect()
    }

    /// Whether a resume has members to start again: nothing of the team runs, and it was
    /// interrupted or brought down.
    pub fn resumable(&self) -> bool {
        !self.running() && !self.to_resume().is_empty()
    }

    /// Whether `member` runs on this machine (every member of a team on one machine does).
    pub fn is_here(&self, member: &Member) -> bool {
        self.sites.is_here(member)
    }

    /// Names of the members on this machine whose programs may still be running.
    pub fn live_here(&self) -> impl Iterator<Item = &str> {
        self.members()
            .filter(|(member, seen)| seen.is_live() && self.is_here(member))
            .map(|(m, _)| m.name.as_str())
    }

    /// Names of the members whose programs may still be running.
    pub fn live(&self) -> impl Iterator<Item = &str> {
        self.members()
            .filter(|(_, seen)| seen.is_live())
            .map(|(m, _)| m.name.as_str())
    }
}

/// Pane ids alive on the team's tmux server, or `None` when the team has no panes to check.
/// A server that is no longer running has no panes.
fn live_panes(config: &TeamConfig) -> Option<HashSet<String>> {
    let placement = config.tmux.as_ref()?;
    match crate::launch::tmux::Tmux::at(&placement.socket).panes() {
        Ok(panes) => Some(panes.unwrap_or_default()),
        // Said once, not fatal: members are then judged by their processes alone.
        Err(err) => {
            crate::base::text::warn_once(err.message().to_owned());
            None
        }
    }
}

/// What happens while waiting for members to end.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// A message arrived somewhere in the team (only with a transcript).
    Arrived(&'a Arrival),
    /// A member ended or vanished.
    Ended(&'a Member, Seen),
}

/// Whom a wait is for.
#[derive(Debug, Clone, Copy)]
pub enum Awaited<'a> {
    /// These members. One never launched is waited for until it is; one that leaves the roster
    /// counts as ended.
    Named(&'a [String]),
    /// Every member launched so far, and each one launched while the wait goes on, but `except`
    /// (the caller's own member, which would wait for itself). A member never launched (added by
    /// `init` or `join` and not started) is not waited for. With `first`, the wait lasts at least
    /// until one member has been launched.
    Launched {
        except: Option<&'a str>,
        first: bool,
    },
}

impl Awaited<'_> {
    /// The members this wait is for, as `observed` shows the team: names, and whether any is.
    fn members(&self, observed: &Observed, launched_before: bool) -> (Vec<String>, bool) {
        match *self {
            Self::Named(names) => (names.to_vec(), false),
            Self::Launched { except, first } => {
                let launched: Vec<String> = observed
                    .members()
                    .filter(|(member, seen)| {
                        *seen != Seen::NotStarted && Some(member.name.as_str()) != except
                    })
                    .map(|(member, _)| member.name.clone())
                    .collect();
                let waiting = first && !launched_before && launched.is_empty();
                (launched, waiting)
            }
        }
    }
}

/// Blocks until every member awaited has ended or vanished, calling `ended` once for each, in
/// the order they end. Returns the members still live when the deadline passed.
pub fn wait_for_endings(
    team: &Team,
    reach: &dyn Reach,
    awaited: Awaited<'_>,
    deadline: Option<Instant>,
    mut ended: impl FnMut(&Member, Seen) -> Result<()>,
) -> Result<Vec<String>> {
    follow_endings(team, reach, awaited, deadline, None, |event| match event {
        Event::Ended(member, seen) => ended(member, seen),
        Event::Arrived(_) => Ok(()),
    })
}

/// [`wait_for_endings`], also reporting every message the `transcript` follower sees arrive,
/// through the same watcher. A member's last messages are reported before its ending.
pub fn follow_endings(
    team: &Team,
    reach: &dyn Reach,
    awaited: Awaited<'_>,
    deadline: Option<Instant>,
    mut transcript: Option<&mut Follower<'_>>,
    mut on: impl FnMut(Event<'_>) -> Result<()>,
) -> Result<Vec<String>> {
    let team_dir = team.paths().dir().to_path_buf();
    let followed = transcript.as_ref().map(|follower| follower.dirs());
    let mut dirs = vec![team_dir.as_path()];
    dirs.extend(followed.iter().flatten().map(PathBuf::as_path));
    let watcher = Watcher::arm_all(&dirs)?;
    let scope = transcript.as_ref().map(|follower| follower.scope().clone());
    let relevant =
        |file: &OsStr| TeamPaths::is_config(file) || scope.as_ref().is_some_and(|s| s.covers(file));

    let mut report_arrivals = |on: &mut dyn FnMut(Event<'_>) -> Result<()>| -> Result<()> {
        if let Some(follower) = transcript.as_deref_mut() {
            follower.arrivals(|arrival| on(Event::Arrived(arrival)))?;
        }
        Ok(())
    };
    let mut reported = HashSet::new();
    let mut out_of_time = false;
    loop {
        report_arrivals(&mut on)?;
        let observed = Observed::take(team, reach)?;
        let (names, none_yet) = awaited.members(&observed, !reported.is_empty());
        let mut still_live = Vec::new();
        let mut ended = Vec::new();
        for name in &names {
            let Some(member) = observed.config.member(name) else {
                reported.insert(name.clone());
                continue;
            };
            let seen = observed.seen(member);
            if seen.is_live() || seen == Seen::NotStarted {
                still_live.push(name.clone());
            } else if reported.insert(name.clone()) {
                ended.push((member, seen));
            }
        }
        if !ended.is_empty() {
            // Whatever a member sent is on disk before its ending is: show it first.
            report_arrivals(&mut on)?;
            for (member, seen) in ended {
                on(Event::Ended(member, seen))?;
            }
        }
        if still_live.is_empty() && !none_yet {
            return Ok(still_live);
        }
        if out_of_time {
            report_arrivals(&mut on)?;
            if none_yet {
                return Err(Error::timeout(format!(
                    "no member of team {} was started",
                    team.name()
                )));
            }
            return Ok(still_live);
        }
        out_of_time = watcher.wait(deadline, &relevant)? == Wake::Deadline;
    }
}

/// One line for a member that has ended: its notice's summary, or what became of it.
pub fn ending_line(member: &Member, seen: Seen) -> String {
    match (&member.notice, seen) {
        (Some(notice), Seen::Recorded(_)) => notice.summary.clone(),
        (_, Seen::ProcessVanished) => format!("{} vanished: its supervisor is gone", member.name),
        (_, Seen::PaneVanished) => format!("{} vanished: its pane is gone", member.name),
        _ => format!("{} {}", member.name, seen.label()),
    }
}

/// Whether a member ended well: completed with exit 0.
pub fn ended_well(seen: Seen) -> bool {
    seen == Seen::Recorded(State::Exited)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::member::reach::Alone;
    pub(super) use crate::store::team::fixture;

    /// The pid of a process that has exited and been reaped.
    fn dead_pid() -> i32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        child.wait().unwrap();
        pid
    }

    /// A live process left of `name`'s run after its supervisor died: it carries the run's
    /// marker. Records the run as `state` under a supervisor that is gone; killed when dropped.
    struct Leftover(std::process::Child);

    impl Leftover {
        fn of(team: &Team, name: &str, state: State) -> Self {
            use std::os::unix::process::CommandExt;
            set(team, name, state, dead_pid());
            let config = team.load().unwrap();
            let run = Run::of(team, config.member(name).unwrap()).unwrap();
            // Its own group, so dropping it ends it; no inherited stdio to hold open. `spawn`
            // returns once it was exec'd, with the marker in its environment.
            let child = std::process::Command::new("sleep")
                .arg("600")
                .env(crate::member::processes::RUN_ID_VAR, &run.id)
                .process_group(0)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            Self(child)
        }

        fn pid(&self) -> i32 {
            i32::try_from(self.0.id()).unwrap()
        }
    }

    impl Drop for Leftover {
        fn drop(&mut self) {
            crate::base::process::signal_group(self.pid(), nix::sys::signal::Signal::SIGKILL);
            let _ = self.0.wait();
        }
    }

    fn seen(member: &Member, panes: Option<&HashSet<String>>) -> Seen {
        let (_dir, team) = fixture::team(&["bob"]);
        judge(
            &team,
            member,
            &LazyCell::new(|| panes.cloned()),
            &LazyCell::new(Snapshot::take),
            Site::Here,
        )
    }

    fn member(state: Option<State>, supervisor: Option<i32>, pane: &str) -> Member {
        Member {
            state,
            supervisor_pid: supervisor,
            tmux_pane_id: pane.to_owned(),
            ..Member::new("bob", "t", 1)
        }
    }

    /// A member away is what its machine said, never judged by this machine's pids or panes:
    /// running while its machine is heard from, unreachable (still live) while it is not.
    #[test]
    fn a_member_away_is_judged_by_its_own_machine_only() {
        let away = member(Some(State::Running), Some(dead_pid()), "%9");
        let panes = HashSet::new();
        let (_dir, team) = fixture::team(&["bob"]);
        let judged = |site| {
            judge(
                &team,
                &away,
                &LazyCell::new(|| Some(panes.clone())),
                &LazyCell::new(Snapshot::take),
                site,
            )
        };
        assert_eq!(
            judged(Site::Away { heard: true }),
            Seen::Recorded(State::Running)
        );
        assert_eq!(judged(Site::Away { heard: false }), Seen::Unreachable);
        assert!(Seen::Unreachable.is_live());
        // Here the same record is judged by pids: its supervisor is gone.
        assert_eq!(judged(Site::Here), Seen::ProcessVanished);
    }

    #[test]
    fn a_member_never_launched_is_not_started() {
        let seen = seen(&member(None, Some(dead_pid()), "%1"), Some(&HashSet::new()));
        assert_eq!(seen, Seen::NotStarted);
        assert_eq!(seen.label(), "-");
        assert!(!seen.is_live());
    }

    #[test]
    fn a_final_state_stands_whatever_became_of_the_process_and_pane() {
        for state in [State::Exited, State::Failed, State::Killed] {
            let seen = seen(
                &member(Some(state), Some(dead_pid()), "%1"),
                Some(&HashSet::new()),
            );
            assert_eq!(seen, Seen::Recorded(state));
            assert_eq!(seen.label(), state.as_str());
            assert!(!seen.is_live());
        }
    }

    #[test]
    fn a_live_state_with_a_dead_supervisor_has_vanished() {
        let panes = HashSet::from(["%1".to_owned()]);
        let seen = seen(
            &member(Some(State::Running), Some(dead_pid()), "%1"),
            Some(&panes),
        );
        assert_eq!(seen, Seen::ProcessVanished);
        assert_eq!(seen.label(), "vanished");
        assert!(!seen.is_live());
    }

    /// A member whose supervisor has not registered yet is judged by its pane.
    #[test]
    fn a_live_state_whose_pane_is_gone_before_its_supervisor_registered_has_vanished() {
        let unregistered = member(Some(State::Starting), None, "%1");
        let others = HashSet::from(["%2".to_owned()]);
        assert_eq!(seen(&unregistered, Some(&others)), Seen::PaneVanished);
        assert_eq!(Seen::PaneVanished.label(), "pane-gone");
        let with_it = HashSet::from(["%1".to_owned()]);
        assert_eq!(
            seen(&unregistered, Some(&with_it)),
            Seen::Recorded(State::Starting)
        );
        // Panes that could not be listed, or a member without a pane, prove nothing.
        assert_eq!(seen(&unregistered, None), Seen::Recorded(State::Starting));
        let paneless = member(Some(State::Idle), None, "");
        assert_eq!(seen(&paneless, Some(&others)), Seen::Recorded(State::Idle));
        assert!(seen(&paneless, Some(&others)).is_live());
    }

    /// A process that passes for the supervisor by its command line only proves nothing: the
    /// member is judged by what is left of its run.
    #[test]
    fn a_process_that_only_looks_like_the_supervisor_proves_nothing() {
        use std::os::unix::process::CommandExt;
        let (_dir, team) = fixture::team(&["bob"]);
        let mut looks = std::process::Command::new("sh")
            .args(["-c", "sleep 600; :", "swarm", "--home"])
            .arg(team.home().root())
            .args(["--team", team.name(), "run", "bob"])
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = i32::try_from(looks.id()).unwrap();
        set(&team, "bob", State::Running, pid);
        let observed = Observed::take(&team, &Alone).unwrap();
        let seen = observed.seen(observed.config.member("bob").unwrap());
        crate::base::process::signal_group(pid, nix::sys::signal::Signal::SIGKILL);
        let _ = looks.wait();
        assert_eq!(seen, Seen::ProcessVanished);
    }

    #[test]
    fn ending_lines_and_ended_well() {
        let mut bob = member(Some(State::Exited), None, "");
        assert_eq!(
            ending_line(&bob, Seen::ProcessVanished),
            "bob vanished: its supervisor is gone"
        );
        assert_eq!(
            ending_line(&bob, Seen::PaneVanished),
            "bob vanished: its pane is gone"
        );
        assert_eq!(
            ending_line(&bob, Seen::Recorded(State::Exited)),
            "bob exited"
        );
        bob.notice = Some(crate::format::structured::TaskNotification {
            task_id: "bob@t".into(),
            status: crate::format::structured::TaskStatus::Completed,
            exit_code: Some(0),
            summary: "bob completed (exit 0) after 1.0s".into(),
            output_file: None,
            duration_ms: 1000,
            worktree_path: None,
            reason: None,
            timestamp: "t".into(),
        });
        assert_eq!(
            ending_line(&bob, Seen::Recorded(State::Exited)),
            "bob completed (exit 0) after 1.0s"
        );
        assert!(ended_well(Seen::Recorded(State::Exited)));
        for seen in [
            Seen::Recorded(State::Failed),
            Seen::Recorded(State::Killed),
            Seen::ProcessVanished,
            Seen::NotStarted,
        ] {
            assert!(!ended_well(seen), "{seen:?}");
        }
    }

    fn set(team: &Team, name: &str, state: State, supervisor: i32) {
        team.update(|config| {
            let member = config.member_mut(name).unwrap();
            member.state = Some(state);
            member.supervisor_pid = Some(supervisor);
            Ok(())
        })
        .unwrap();
    }

    #[test]
    fn observed_shows_which_members_are_live() {
        let (_dir, team) = fixture::team(&["bob", "carol", "dave"]);
        let _bob = Leftover::of(&team, "bob", State::Running);
        set(&team, "carol", State::Running, dead_pid());
        set(&team, "dave", State::Exited, dead_pid());
        let observed = Observed::take(&team, &Alone).unwrap();
        let seen_of = |name| observed.seen(observed.config.member(name).unwrap());
        assert_eq!(seen_of("team-lead"), Seen::NotStarted);
        assert_eq!(seen_of("bob"), Seen::Orphaned);
        assert_eq!(seen_of("carol"), Seen::ProcessVanished);
        assert_eq!(seen_of("dave"), Seen::Recorded(State::Exited));
        assert_eq!(observed.live().collect::<Vec<_>>(), ["bob"]);
    }

    /// Every question asked of one observation gets the same answer: `status` shows the state it
    /// counted, and `stop all` stops the members it judged live.
    #[test]
    fn an_observation_does_not_change_after_it_is_taken() {
        let (_dir, team) = fixture::team(&["bob"]);
        let bob = Leftover::of(&team, "bob", State::Running);
        let observed = Observed::take(&team, &Alone).unwrap();
        drop(bob);
        let member = observed.config.member("bob").unwrap();
        assert_eq!(observed.seen(member), Seen::Orphaned);
        assert_eq!(observed.live().collect::<Vec<_>>(), ["bob"]);
        assert_eq!(
            Observed::take(&team, &Alone).unwrap().seen(member),
            Seen::ProcessVanished,
            "a new observation sees the change"
        );
    }

    #[test]
    fn waiting_reports_each_ending_once_and_the_members_still_live_at_the_deadline() {
        let (_dir, team) = fixture::team(&["bob", "carol", "dave"]);
        set(&team, "bob", State::Exited, dead_pid());
        set(&team, "carol", State::Running, dead_pid());
        let _dave = Leftover::of(&team, "dave", State::Running);
        let names: Vec<String> = ["bob", "carol", "dave", "ghost"].map(str::to_owned).into();
        let mut ended = Vec::new();
        let deadline = Instant::now() + Duration::from_millis(50);
        let left = wait_for_endings(
            &team,
            &Alone,
            Awaited::Named(&names),
            Some(deadline),
            |member, seen| {
                ended.push((member.name.clone(), seen));
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(left, ["dave"]);
        assert_eq!(
            ended,
            [
                ("bob".to_owned(), Seen::Recorded(State::Exited)),
                ("carol".to_owned(), Seen::ProcessVanished)
            ]
        );
    }

    #[test]
    fn an_ending_recorded_while_waiting_ends_the_wait() {
        let (_dir, team) = fixture::team(&["bob"]);
        let _bob = Leftover::of(&team, "bob", State::Running);
        let ender = {
            let team = team.clone();
            let supervisor = team
                .load()
                .unwrap()
                .member("bob")
                .unwrap()
                .supervisor_pid
                .unwrap();
            std::thread::spawn(move || set(&team, "bob", State::Killed, supervisor))
        };
        let mut ended = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        let left = wait_for_endings(
            &team,
            &Alone,
            Awaited::Named(&["bob".to_owned()]),
            Some(deadline),
            |member, seen| {
                ended.push(seen);
                assert_eq!(member.name, "bob");
                Ok(())
            },
        )
        .unwrap();
        ender.join().unwrap();
        assert!(left.is_empty());
        assert_eq!(ended, [Seen::Recorded(State::Killed)]);
    }
}
