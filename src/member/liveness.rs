//! What state a member is really in. config.json records what the supervisor last wrote; a member
//! whose supervisor or pane has vanished since is shown as vanished, never as running, and one
//! whose supervisor has gone while its processes live on is shown as orphaned, still live and
//! stoppable.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::path::PathBuf;
use std::time::Instant;

use crate::error::Result;
use crate::format::config::{Member, State, TeamConfig};
use crate::member::processes::{self, Run};
use crate::store::follow::{Arrival, Follower};
use crate::store::paths::TeamPaths;
use crate::store::team::Team;
use crate::store::watcher::{Wake, Watcher};

/// A member's state as `status` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seen {
    /// Never launched: a member added by `init` or `join`.
    NotStarted,
    Recorded(State),
    /// Recorded as live, but its supervisor process is gone.
    ProcessVanished,
    /// Recorded as live; its supervisor is gone, but processes it started still run.
    Orphaned,
    /// Recorded as live, but its tmux pane is gone.
    PaneVanished,
}

impl Seen {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Self::NotStarted => "-",
            Self::Recorded(state) => state.as_str(),
            Self::ProcessVanished => "vanished",
            Self::Orphaned => "orphaned",
            Self::PaneVanished => "pane-gone",
        }
    }

    /// The member's program may still be running.
    pub(crate) fn is_live(self) -> bool {
        matches!(self, Self::Recorded(state) if !state.is_final()) || self == Self::Orphaned
    }
}

/// `panes` is the set of live pane ids on the team's tmux server, when it could be listed.
pub(crate) fn seen(member: &Member, panes: Option<&HashSet<String>>) -> Seen {
    let Some(state) = member.state else {
        return Seen::NotStarted;
    };
    if state.is_final() {
        return Seen::Recorded(state);
    }
    if let Some(run) = Run::of(member)
        && !run.supervised()
    {
        // Its processes are looked for by what they carry, not by asking the supervisor.
        return if processes::alive(&run) {
            Seen::Orphaned
        } else {
            Seen::ProcessVanished
        };
    }
    if let Some(panes) = panes
        && !member.tmux_pane_id.is_empty()
        && !panes.contains(&member.tmux_pane_id)
    {
        return Seen::PaneVanished;
    }
    Seen::Recorded(state)
}

/// A team's config and what its members are doing, observed together.
///
/// Processes and panes are checked after config.json is read, so a member whose program ended in
/// between would look vanished. A supervisor records the ending before it exits, so a member that
/// looks vanished is judged again on a fresh read: only one still unrecorded has really vanished.
#[derive(Debug, Clone)]
pub(crate) struct Observed {
    pub(crate) config: TeamConfig,
    panes: Option<HashSet<String>>,
}

impl Observed {
    pub(crate) fn take(team: &Team) -> Result<Self> {
        let mut config = team.load()?;
        let panes = live_panes(&config);
        let looks_vanished: Vec<String> = config
            .members
            .iter()
            .filter(|m| {
                matches!(
                    seen(m, panes.as_ref()),
                    Seen::ProcessVanished | Seen::PaneVanished | Seen::Orphaned
                )
            })
            .map(|m| m.name.clone())
            .collect();
        if !looks_vanished.is_empty() {
            let fresh = team.load()?;
            for name in &looks_vanished {
                if let (Some(now), Some(then)) = (fresh.member(name), config.member_mut(name))
                    && now.state.is_some_and(State::is_final)
                {
                    *then = now.clone();
                }
            }
        }
        Ok(Self { config, panes })
    }

    pub(crate) fn seen(&self, member: &Member) -> Seen {
        seen(member, self.panes.as_ref())
    }

    /// Names of the members whose programs may still be running.
    pub(crate) fn live(&self) -> impl Iterator<Item = &str> {
        self.config
            .members
            .iter()
            .filter(|m| self.seen(m).is_live())
            .map(|m| m.name.as_str())
    }
}

/// Pane ids alive on the team's tmux server, or `None` when the team has no panes to check.
/// A server that is no longer running has no panes.
fn live_panes(config: &TeamConfig) -> Option<HashSet<String>> {
    let placement = config.tmux.as_ref()?;
    match crate::launch::tmux::Tmux::at(&placement.socket).panes() {
        Ok(panes) => Some(panes.unwrap_or_default()),
        Err(err) => {
            tracing::debug!("cannot list panes: {err}");
            None
        }
    }
}

/// What happens while waiting for members to end.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Event<'a> {
    /// A message arrived somewhere in the team (only with a transcript).
    Arrived(&'a Arrival),
    /// A member ended or vanished.
    Ended(&'a Member, Seen),
}

/// Blocks until every member named has ended or vanished, calling `ended` once for each, in the
/// order they end. Returns the members still live when the deadline passed.
pub(crate) fn wait_for_endings(
    team: &Team,
    names: &[String],
    deadline: Option<Instant>,
    mut ended: impl FnMut(&Member, Seen) -> Result<()>,
) -> Result<Vec<String>> {
    follow_endings(team, names, deadline, None, |event| match event {
        Event::Ended(member, seen) => ended(member, seen),
        Event::Arrived(_) => Ok(()),
    })
}

/// [`wait_for_endings`], also reporting every message the `transcript` follower sees arrive,
/// through the same watcher. A member's last messages are reported before its ending.
pub(crate) fn follow_endings(
    team: &Team,
    names: &[String],
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
            for arrival in follower.arrivals()? {
                on(Event::Arrived(&arrival))?;
            }
        }
        Ok(())
    };
    let mut reported = HashSet::new();
    let mut out_of_time = false;
    loop {
        report_arrivals(&mut on)?;
        let observed = Observed::take(team)?;
        let mut still_live = Vec::new();
        let mut ended = Vec::new();
        for name in names {
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
        if still_live.is_empty() {
            return Ok(still_live);
        }
        if out_of_time {
            report_arrivals(&mut on)?;
            return Ok(still_live);
        }
        out_of_time = watcher.wait(deadline, &relevant)? == Wake::Deadline;
    }
}

/// One line for a member that has ended: its notice's summary, or what became of it.
pub(crate) fn ending_line(member: &Member, seen: Seen) -> String {
    match (&member.notice, seen) {
        (Some(notice), Seen::Recorded(_)) => notice.summary.clone(),
        (_, Seen::ProcessVanished) => format!("{} vanished: its supervisor is gone", member.name),
        (_, Seen::PaneVanished) => format!("{} vanished: its pane is gone", member.name),
        _ => format!("{} {}", member.name, seen.label()),
    }
}

/// Whether a member ended well: completed with exit 0.
pub(crate) fn ended_well(seen: Seen) -> bool {
    seen == Seen::Recorded(State::Exited)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::store::team::fixture;

    /// The pid of a process that has exited and been reaped.
    fn dead_pid() -> i32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        child.wait().unwrap();
        pid
    }

    /// A live process that passes for `name`'s supervisor (`… run NAME`), killed when dropped.
    struct Supervisor(std::process::Child);

    impl Supervisor {
        fn of(name: &str) -> Self {
            use std::os::unix::process::CommandExt;
            // `; :` keeps the shell from exec'ing sleep, which would change its command line.
            // A group of its own, so dropping it ends its `sleep` too, which holds the test's
            // stdout.
            let child = std::process::Command::new("sh")
                .args(["-c", "sleep 600; :", "run", name])
                .process_group(0)
                .spawn()
                .unwrap();
            let supervisor = Self(child);
            // spawn returns once the child has begun its exec, which may not yet have set up
            // the command line /proc shows: until then it passes for nobody's supervisor.
            let deadline = Instant::now() + Duration::from_secs(30);
            while !crate::base::process::is_supervisor(supervisor.pid(), name) {
                assert!(Instant::now() < deadline, "sh did not start");
                std::thread::sleep(Duration::from_millis(5));
            }
            supervisor
        }

        fn pid(&self) -> i32 {
            i32::try_from(self.0.id()).unwrap()
        }
    }

    impl Drop for Supervisor {
        fn drop(&mut self) {
            crate::base::process::signal_group(self.pid(), nix::sys::signal::Signal::SIGKILL);
            let _ = self.0.wait();
        }
    }

    fn member(state: Option<State>, supervisor: Option<i32>, pane: &str) -> Member {
        Member {
            state,
            supervisor_pid: supervisor,
            tmux_pane_id: pane.to_owned(),
            ..Member::new("bob", "t", 1)
        }
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

    #[test]
    fn a_live_state_whose_pane_is_gone_has_vanished() {
        let supervisor = Supervisor::of("bob");
        let running = member(Some(State::Running), Some(supervisor.pid()), "%1");
        let others = HashSet::from(["%2".to_owned()]);
        assert_eq!(seen(&running, Some(&others)), Seen::PaneVanished);
        assert_eq!(Seen::PaneVanished.label(), "pane-gone");
        let with_it = HashSet::from(["%1".to_owned()]);
        assert_eq!(
            seen(&running, Some(&with_it)),
            Seen::Recorded(State::Running)
        );
        // Panes that could not be listed, or a member without a pane, prove nothing.
        assert_eq!(seen(&running, None), Seen::Recorded(State::Running));
        let paneless = member(Some(State::Idle), Some(supervisor.pid()), "");
        assert_eq!(seen(&paneless, Some(&others)), Seen::Recorded(State::Idle));
        assert!(seen(&paneless, Some(&others)).is_live());
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
        let bob = Supervisor::of("bob");
        set(&team, "bob", State::Running, bob.pid());
        set(&team, "carol", State::Running, dead_pid());
        set(&team, "dave", State::Exited, dead_pid());
        let observed = Observed::take(&team).unwrap();
        let seen_of = |name| observed.seen(observed.config.member(name).unwrap());
        assert_eq!(seen_of("team-lead"), Seen::NotStarted);
        assert_eq!(seen_of("bob"), Seen::Recorded(State::Running));
        assert_eq!(seen_of("carol"), Seen::ProcessVanished);
        assert_eq!(seen_of("dave"), Seen::Recorded(State::Exited));
        assert_eq!(observed.live().collect::<Vec<_>>(), ["bob"]);
    }

    #[test]
    fn waiting_reports_each_ending_once_and_the_members_still_live_at_the_deadline() {
        let (_dir, team) = fixture::team(&["bob", "carol", "dave"]);
        set(&team, "bob", State::Exited, dead_pid());
        set(&team, "carol", State::Running, dead_pid());
        let dave = Supervisor::of("dave");
        set(&team, "dave", State::Running, dave.pid());
        let names: Vec<String> = ["bob", "carol", "dave", "ghost"].map(str::to_owned).into();
        let mut ended = Vec::new();
        let deadline = Instant::now() + Duration::from_millis(50);
        let left = wait_for_endings(&team, &names, Some(deadline), |member, seen| {
            ended.push((member.name.clone(), seen));
            Ok(())
        })
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
        let bob = Supervisor::of("bob");
        set(&team, "bob", State::Running, bob.pid());
        let ender = {
            let team = team.clone();
            let pid = bob.pid();
            std::thread::spawn(move || set(&team, "bob", State::Killed, pid))
        };
        let mut ended = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        let left = wait_for_endings(
            &team,
            &["bob".to_owned()],
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
