//! A member's processes (docs/ARCHITECTURE.md, "A member's processes"): the one way swarm finds
//! them, used by liveness, `stop`, `down` and the supervisor's own sweep. It needs no answer from
//! the supervisor, so it works as well after the supervisor was killed.
//!
//! A process is the member's when one of these holds for it or for a process above it:
//! - its environment carries the run's marker, `SWARM_RUN_ID=<run>`: the supervisor sets it for
//!   the program, and everything the program starts inherits it, through `setsid` and double forks;
//! - it is in the program's process group, in the pane's session (the supervisor leads it), and
//!   that session is shown to be the pane's;
//! - it is a child of the live supervisor outside the supervisor's own process group: the program,
//!   or an orphan reparented to the supervisor, which is a child subreaper. The supervisor's own
//!   helpers (tmux, git) stay in its group and are never the member's.
//!
//! config.json, where the pids come from, is a file every member can write, so a pid there is
//! only a claim: a supervisor counts only when its own command line and environment show it
//! supervises this member of this team under this home, and a session only when its leader is
//! that supervisor or a process in it carries the run's marker (a session cannot be joined: one
//! process of the run in it makes it the run's). Nothing else is ever signalled on config.json's
//! word (docs/ARCHITECTURE.md, "A member's processes").
//!
//! Only processes of this user count; the caller and its ancestors never do.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use crate::base::process::{self, ProcStat};
use crate::format::config::Member;
use crate::store::team::Team;

/// The variable that marks every process a member's program starts during one run.
pub(crate) use process::RUN_ID_VAR;

/// Whether process `pid` is member `name`'s supervisor of team `team` under the home whose
/// directory is `home` (device and inode): the one place that decides it, for liveness, `stop`,
/// identity and the readers that ask a supervisor what its run took.
pub(crate) fn is_supervisor_of(pid: i32, home: (u64, u64), team: &str, name: &str) -> bool {
    process::supervisor(pid).is_some_and(|found| found.serves(home, team, name))
}

/// One run of a member: what its processes are found by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Run {
    pub(crate) name: String,
    /// Its team, and its home's device and inode: what its supervisor must show it serves.
    team: String,
    home: Option<(u64, u64)>,
    /// The supervisor's pid; under tmux also the pane's session id.
    pub(crate) supervisor: i32,
    /// The program's pid, which is also its process group id, once it started.
    pub(crate) program: Option<i32>,
    /// The value of [`RUN_ID_VAR`] in the program's environment.
    pub(crate) id: String,
}

impl Run {
    /// The run config.json records for `member` of `team`, if a supervisor ever registered for
    /// it: a claim, which [`Snapshot`] checks against the processes themselves.
    pub(crate) fn of(team: &Team, member: &Member) -> Option<Self> {
        let supervisor = member.supervisor_pid.filter(|pid| *pid > 1)?;
        Some(Self::new(team, member, supervisor, member.pid))
    }

    /// The run of `member` of `team` under `supervisor`. Its id is the member's name and team,
    /// when it joined the team (each `up` writes the team anew) and the supervisor's pid: what
    /// anyone reading config.json can tell, and unique among runs. Made of the member's own name,
    /// never the `agentId` config.json records, so no edit makes one member's id another's.
    pub(crate) fn new(team: &Team, member: &Member, supervisor: i32, program: Option<i32>) -> Self {
        Self {
            name: member.name.clone(),
            team: team.name().to_owned(),
            home: team.home().id(),
            supervisor,
            program: program.filter(|pid| *pid > 1),
            id: format!(
                "{}@{}/{}/{supervisor}",
                member.name,
                team.name(),
                member.joined_at
            ),
        }
    }

    /// The team of the run.
    pub(crate) fn team(&self) -> &str {
        &self.team
    }

    /// Whether the recorded supervisor is this member's, as its own command line and environment
    /// show: a live `swarm run` of this member, this team and this home. What is signalled as the
    /// supervisor, or found as its children, must be.
    pub(crate) fn supervisor_proven(&self) -> bool {
        self.home
            .is_some_and(|home| is_supervisor_of(self.supervisor, home, &self.team, &self.name))
    }
}

/// Every process of this user at one moment, and what it takes to tell whose they are.
pub(crate) struct Snapshot {
    procs: HashMap<i32, ProcStat>,
    children: HashMap<i32, Vec<i32>>,
    /// This process and its ancestors: never anyone's to end.
    spared: HashSet<i32>,
    /// Run ids read from environments, filled as they are needed.
    run_ids: std::cell::RefCell<HashMap<i32, Option<String>>>,
    /// Whether each run's recorded session is shown to be the pane's, by run id.
    sessions: std::cell::RefCell<HashMap<String, bool>>,
}

impl Snapshot {
    pub(crate) fn take() -> Self {
        let procs: HashMap<i32, ProcStat> = process::own_processes()
            .into_iter()
            .map(|p| (p.pid, p))
            .collect();
        let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
        for p in procs.values() {
            children.entry(p.ppid).or_default().push(p.pid);
        }
        let mut spared = HashSet::new();
        let mut pid = i32::try_from(std::process::id()).unwrap_or(0);
        while pid > 1 && spared.insert(pid) {
            pid = procs
                .get(&pid)
                .map_or_else(|| process::stat(pid).map_or(0, |p| p.ppid), |p| p.ppid);
        }
        Self {
            procs,
            children,
            spared,
            run_ids: std::cell::RefCell::default(),
            sessions: std::cell::RefCell::default(),
        }
    }

    fn run_id(&self, pid: i32) -> Option<String> {
        self.run_ids
            .borrow_mut()
            .entry(pid)
            .or_insert_with(|| process::environment_value(pid, RUN_ID_VAR))
            .clone()
    }

    /// Whether `p` itself (not through a parent) is one of `run`'s, by the rules above;
    /// `supervised`: its supervisor is proven.
    fn marks(&self, run: &Run, p: &ProcStat, supervised: bool) -> bool {
        if p.pid == run.supervisor {
            return false;
        }
        if run
            .program
            .is_some_and(|pgid| p.pgid == pgid && p.sid == run.supervisor)
            && self.is_pane_session(run, supervised)
        {
            return true;
        }
        if supervised
            && p.ppid == run.supervisor
            && self
                .procs
                .get(&run.supervisor)
                .is_some_and(|s| s.pgid != p.pgid)
        {
            return true;
        }
        self.run_id(p.pid).as_deref() == Some(run.id.as_str())
    }

    /// Whether the session config.json names for `run` (its supervisor's pid) is the pane's:
    /// its leader is the run's proven supervisor, or a process in it, the program first, carries
    /// the run's marker.
    fn is_pane_session(&self, run: &Run, supervised: bool) -> bool {
        if supervised {
            return true;
        }
        if let Some(known) = self.sessions.borrow().get(&run.id) {
            return *known;
        }
        let marked = |pid: i32| self.run_id(pid).as_deref() == Some(run.id.as_str());
        let shown = run.program.is_some_and(|program| {
            process::stat(program).is_some_and(|p| p.sid == run.supervisor) && marked(program)
        }) || self
            .procs
            .values()
            .any(|p| p.sid == run.supervisor && marked(p.pid));
        self.sessions.borrow_mut().insert(run.id.clone(), shown);
        shown
    }

    /// The live processes of `run`, program first where it is among them.
    pub(crate) fn of(&self, run: &Run) -> Vec<i32> {
        let supervised = run.supervisor_proven();
        let mut found = Vec::new();
        let mut seen = HashSet::new();
        let mut roots: Vec<i32> = self
            .procs
            .values()
            .filter(|p| self.marks(run, p, supervised))
            .map(|p| p.pid)
            .collect();
        roots.sort_unstable();
        // Everything below a process of the run is the run's too.
        let mut stack = roots;
        stack.reverse();
        while let Some(pid) = stack.pop() {
            if !seen.insert(pid) || pid == run.supervisor {
                continue;
            }
            if let Some(p) = self.procs.get(&pid)
                && !p.dead
                && !self.spared.contains(&pid)
            {
                found.push(pid);
            }
            stack.extend(self.children.get(&pid).into_iter().flatten());
        }
        if let Some(program) = run.program
            && let Some(at) = found.iter().position(|pid| *pid == program)
        {
            found.swap(0, at);
        }
        found
    }

    /// The run whose processes `pid` is among, or which it runs under: the first of `runs` whose
    /// supervisor is one of its ancestors, or that marks it or an ancestor.
    pub(crate) fn owner<'a>(&self, pid: i32, runs: &'a [Run]) -> Option<&'a Run> {
        let supervised: Vec<bool> = runs.iter().map(Run::supervisor_proven).collect();
        let mut at = pid;
        let mut visited = HashSet::new();
        while at > 1 && visited.insert(at) {
            let p = self.procs.get(&at).copied().or_else(|| process::stat(at))?;
            for (run, supervised) in runs.iter().zip(&supervised) {
                if (at == run.supervisor && *supervised) || self.marks(run, &p, *supervised) {
                    return Some(run);
                }
            }
            at = p.ppid;
        }
        None
    }
}

impl Snapshot {
    /// Only the processes of `line` (a process and those above it): enough to tell whose run the
    /// first is in.
    fn of_line(line: &[ProcStat]) -> Self {
        Self {
            procs: line.iter().map(|p| (p.pid, *p)).collect(),
            children: HashMap::new(),
            spared: HashSet::new(),
            run_ids: std::cell::RefCell::default(),
            sessions: std::cell::RefCell::default(),
        }
    }
}

/// Whether any process of `run` is still running.
pub(crate) fn alive(run: &Run) -> bool {
    !Snapshot::take().of(run).is_empty()
}

/// Which of `runs` the process `pid` belongs to: its own processes, or ones they started. A
/// `swarm` command run in a member's pane belongs to that member.
pub(crate) fn owner_of(pid: i32, runs: &[Run]) -> Option<&Run> {
    Snapshot::take().owner(pid, runs)
}

/// The outermost process of `line` (a process and every process above it, nearest first, read
/// whole by `process::lineage`) that is one of `runs`' by the rules above, its proven supervisor
/// included: its index in `line` and its run. The outermost, because a marker is set by whoever
/// starts a process: a forged one sits below the run that forged it.
pub(crate) fn outermost_run<'a>(line: &[ProcStat], runs: &'a [Run]) -> Option<(usize, &'a Run)> {
    let snapshot = Snapshot::of_line(line);
    let supervised: Vec<bool> = runs.iter().map(Run::supervisor_proven).collect();
    line.iter().enumerate().rev().find_map(|(at, p)| {
        runs.iter()
            .zip(&supervised)
            .find(|(run, supervised)| {
                (p.pid == run.supervisor && **supervised) || snapshot.marks(run, p, **supervised)
            })
            .map(|(run, _)| (at, run))
    })
}

/// How often to look again while waiting for processes to exit.
const POLL: Duration = Duration::from_millis(25);

/// How long to keep sending SIGKILL to processes that have not gone yet.
pub(crate) const KILL_BOUND: Duration = Duration::from_secs(2);

/// Ends every process of `runs`: SIGTERM, up to `grace` for them to exit, then SIGKILL. Processes
/// a run starts meanwhile are found on the next look and signalled too. Blocks; returns how many
/// processes it signalled.
pub(crate) fn end(runs: &[Run], grace: Duration) -> usize {
    let mut signalled: HashSet<i32> = HashSet::new();
    let find = || {
        let snapshot = Snapshot::take();
        let mut all: Vec<i32> = runs.iter().flat_map(|run| snapshot.of(run)).collect();
        all.sort_unstable();
        all.dedup();
        all
    };
    let term_until = Instant::now() + grace;
    let kill_until = term_until + KILL_BOUND;
    loop {
        let left = find();
        if left.is_empty() {
            break;
        }
        let now = Instant::now();
        if now >= kill_until {
            tracing::warn!("processes {left:?} did not end after SIGKILL");
            break;
        }
        let signal = if now < term_until {
            Signal::SIGTERM
        } else {
            Signal::SIGKILL
        };
        for pid in left {
            // SIGTERM once per process; SIGKILL on every look until it is gone.
            if signal == Signal::SIGKILL || !signalled.contains(&pid) {
                signalled.insert(pid);
                process::signal(pid, signal);
            }
        }
        std::thread::sleep(POLL);
    }
    signalled.len()
}

/// For the supervisor: reaps the children it adopted as subreaper that have exited. Its own
/// helpers (in its process group) and the program (which the runtime waits for) are left alone.
pub(crate) fn reap_adopted(program: Option<i32>) {
    let me = i32::try_from(std::process::id()).unwrap_or(0);
    let group = nix::unistd::getpgrp().as_raw();
    for p in process::own_processes() {
        if p.ppid == me && p.dead && p.pgid != group && Some(p.pid) != program {
            process::reap(p.pid);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::process::{Command, Stdio};

    use super::*;

    fn member() -> Member {
        let mut member = Member::new("bob", "t", 7);
        member.pid = Some(100);
        member.supervisor_pid = Some(99);
        member
    }

    #[test]
    fn a_run_is_named_by_what_config_json_records() {
        let (_dir, team) = crate::store::team::fixture::team(&["bob"]);
        let run = Run::of(&team, &member()).unwrap();
        assert_eq!(run.id, "bob@t/7/99");
        assert_eq!(run.program, Some(100));
        // The id is the member's own name, whatever agent id config.json records.
        let mut renamed = member();
        renamed.agent_id = "team-lead@t".into();
        assert_eq!(Run::of(&team, &renamed).unwrap().id, "bob@t/7/99");
        let mut never = member();
        never.supervisor_pid = None;
        assert_eq!(Run::of(&team, &never), None);
    }

    /// A marked process that leaves its session and whose parent exits is still found, ended,
    /// and never confused with this process.
    #[test]
    fn marked_processes_are_found_through_setsid_and_ended() {
        let run = Run {
            name: "bob".into(),
            team: "t".into(),
            home: None,
            supervisor: i32::MAX,
            program: None,
            id: format!("unit-test/{}", uuid::Uuid::new_v4()),
        };
        let pid_file = tempfile::NamedTempFile::new().unwrap();
        let status = Command::new("sh")
            .args([
                "-c",
                "setsid sh -c 'trap \"\" TERM; echo $$ > \"$1\"; exec sleep 1000' sh \"$1\" &",
                "sh",
            ])
            .arg(pid_file.path())
            .env(RUN_ID_VAR, &run.id)
            .stdin(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(30);
        let pid: i32 = loop {
            let text = std::fs::read_to_string(pid_file.path()).unwrap();
            if let Ok(pid) = text.trim().parse() {
                break pid;
            }
            assert!(
                Instant::now() < deadline,
                "the marked process did not start"
            );
            std::thread::sleep(POLL);
        };
        assert_eq!(Snapshot::take().of(&run), vec![pid]);
        assert!(alive(&run));
        let me = i32::try_from(std::process::id()).unwrap();
        assert_eq!(owner_of(pid, std::slice::from_ref(&run)), Some(&run));
        assert_eq!(owner_of(me, std::slice::from_ref(&run)), None);
        // It ignores SIGTERM: SIGKILL follows the grace.
        assert_eq!(
            end(std::slice::from_ref(&run), Duration::from_millis(100)),
            1
        );
        assert!(!alive(&run));
    }
}
