//! Alerts (docs/ARCHITECTURE.md, "Alerts"): the one path by which a person who is not looking
//! hears that a member needs them. Two threads of the signing agent, the one process on the
//! lead's side that lives as long as the team:
//!
//! - the *look* thread, nudged by the rules thread after it answered what it could, counts the
//!   asks that wait on the team window's `@swarm-asks` and appends each ask or plan newly seen to
//!   the event stream as `asked`, once per request id (the ids already in the stream are read at
//!   its start, so an agent started again does not ask again);
//! - the *dispatch* thread follows the event stream from its end when it starts (old events do
//!   not alert again), turns each change into at most one alert per member, holds back a member
//!   that flaps, and sends each alert every way `[notify]` names: the window's flag and its
//!   clients (bell), a desktop notification, a webhook (a queue and thread of its own, retried
//!   with backoff), a command.
//!
//! A tmux server that is gone or stuck, a webhook that does not answer, a command that hangs:
//! each delays no answer to an ask and no other alert, and its failure is only logged.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::base::secrets::shown_url;
use crate::error::Result;
use crate::format::event::{Event, What};
use crate::format::notify::{AlertOn, Notify, WebhookFormat};
use crate::format::structured::Structured;
use crate::launch::tmux::Tmux;
use crate::member::activity;
use crate::member::liveness::Observed;
use crate::member::permission::{self, AskFeed};
use crate::member::reach::Reach;
use crate::store::events::{self, Offset};
use crate::store::paths::Home;
use crate::store::team::Team;
use crate::store::watcher::{Watcher, named};

/// The team's alerts as `up` last gave them to the agent.
pub(super) type Settings = Arc<Mutex<Notify>>;

/// More alerts than this for one member within [`FLAP_WINDOW`] and the rest are held back, to be
/// told as one when the window is over.
const FLAP_LIMIT: usize = 3;
const FLAP_WINDOW: Duration = Duration::from_secs(60);

/// The pauses between a webhook's tries: five tries in all.
const BACKOFF: [Duration; 4] = [
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
    Duration::from_secs(8),
];

/// How long one try of a webhook may take.
const WEBHOOK_PATIENCE: Duration = Duration::from_secs(10);

/// Starts both threads for team `team`, and returns how to nudge the look thread.
pub(super) fn start(
    home: Home,
    team: String,
    reach: Arc<dyn Reach>,
    settings: Settings,
) -> Sender<()> {
    let (sender, receiver) = mpsc::channel();
    {
        let (home, team) = (home.clone(), team.clone());
        std::thread::spawn(move || look_at_nudges(&home, &team, reach.as_ref(), &receiver));
    }
    std::thread::spawn(move || dispatch(&home, &team, &settings));
    sender
}

/// The window's flag as last set, the requests already in the stream, and the asks read so far.
#[derive(Default)]
struct Shown {
    flagged: Option<(PathBuf, String, usize)>,
    asked: HashSet<String>,
    feed: AskFeed,
}

/// Looks again at each nudge until the rules thread ends.
fn look_at_nudges(home: &Home, team: &str, reach: &dyn Reach, nudges: &Receiver<()>) {
    let asked = events::read_from(&home.team(team), Offset::default())
        .map(|(told, _)| told)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|event| match event.what {
            What::Asked { request_id, .. } => Some(request_id),
            _ => None,
        })
        .collect();
    let mut shown = Shown {
        asked,
        ..Shown::default()
    };
    while nudges.recv().is_ok() {
        // One look answers every nudge that came meanwhile.
        nudges.try_iter().for_each(drop);
        if let Err(err) = look(home, team, reach, &mut shown) {
            tracing::warn!("cannot show the asks that wait: {err}");
        }
    }
}

/// Tells the stream of each ask and plan newly waiting, and flags on the team's window how many
/// asks `permission list` would list.
fn look(home: &Home, name: &str, reach: &dyn Reach, shown: &mut Shown) -> Result<()> {
    let team = Team::open(home, name)?;
    // Of the lead's history and the answers, only what they gained since the last look is read.
    let observed = Observed::take(&team, reach)?;
    let waiting =
        permission::of_live_members(shown.feed.unanswered(&team, &observed.config)?, &observed);
    let config = observed.config;
    for ask in &waiting {
        if shown.asked.insert(ask.request_id().to_owned()) {
            let what = What::Asked {
                request_id: ask.request_id().to_owned(),
                what: ask.tool().to_owned(),
            };
            events::tell(team.paths(), Some(ask.member()), what);
        }
    }
    for message in team.mailbox(config.lead_name()).peek()? {
        if let Some(plan @ Structured::PlanApprovalRequest(_)) = message.structured() {
            let id = plan.request_id().unwrap_or_default();
            if !id.is_empty() && shown.asked.insert(id.to_owned()) {
                let what = What::Asked {
                    request_id: id.to_owned(),
                    what: PLAN.to_owned(),
                };
                events::tell(team.paths(), Some(message.from()), what);
            }
        }
    }
    let Some(placement) = &config.tmux else {
        return Ok(());
    };
    let flag = (
        placement.socket.clone(),
        placement.window.clone(),
        waiting.len(),
    );
    if shown.flagged.as_ref() != Some(&flag) {
        shown.flagged = None;
        Tmux::at(&placement.socket).flag_asks(&placement.window, waiting.len())?;
        shown.flagged = Some(flag);
    }
    Ok(())
}

/// What an `asked` event names for a plan, where a permission names its tool.
const PLAN: &str = "plan";

/// Follows the stream from its end, and sends each alert it makes.
fn dispatch(home: &Home, team: &str, settings: &Settings) {
    let paths = home.team(team);
    let stream = paths.events();
    let stream_name = stream.file_name().unwrap_or_default().to_owned();
    let watcher = loop {
        match super::rules::appeared(paths.dir()).and_then(|()| Watcher::arm(paths.dir())) {
            Ok(watcher) => break watcher,
            Err(err) => {
                tracing::warn!("alerts cannot watch {}: {err}", paths.dir().display());
                std::thread::sleep(BACKOFF[0]);
            }
        }
    };
    // From the end: what happened before the agent started has had its alert, or is old news.
    let mut offset = events::read_from(&paths, Offset::default())
        .map(|(_, end)| end)
        .unwrap_or_default();
    let mut alerts = Alerts::default();
    let mut senders = Senders::default();
    loop {
        if let Err(err) = watcher.wait(alerts.next_due(), &named(&stream_name)) {
            // Read on all the same, but not in a loop that spins.
            tracing::warn!("alerts cannot wait on {}: {err}", stream.display());
            std::thread::sleep(BACKOFF[0]);
        }
        let notify = settings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let now = Instant::now();
        let mut made = Vec::new();
        match events::read_from(&paths, offset) {
            Ok((read, next)) => {
                offset = next;
                made.extend(
                    read.iter()
                        .filter_map(|event| alerts.consider(team, event, now, &notify.events)),
                );
            }
            Err(err) => tracing::warn!("alerts cannot read {}: {err}", stream.display()),
        }
        made.extend(alerts.due(now));
        for alert in &made {
            senders.send(home, &notify, alert, &alerts.waiting_on_you());
        }
    }
}

/// One alert: what kind, whose, the line a person reads, and the event that made it.
#[derive(Debug, Clone, PartialEq)]
struct Alert {
    kind: AlertOn,
    team: String,
    member: Option<String>,
    text: String,
    event: Event,
}

impl Alert {
    fn new(team: &str, kind: AlertOn, event: &Event) -> Self {
        let who = event.member.as_deref().unwrap_or("the team");
        let plan = || format!("{who} asks for a plan's approval - swarm wait --decision");
        let ask = |tool: &str| format!("{who} asks to use {tool} - swarm permission list");
        // An ask's event and the member's activity that it waits on it race to be first: either
        // way the person reads the same line.
        let text = match (&event.what, kind) {
            (What::Asked { what, .. }, _) if what == PLAN => plan(),
            (What::Asked { what, .. }, _) => ask(what),
            (What::Activity { why: Some(why), .. }, AlertOn::NeedsYou) => {
                match activity::permission_waited_for(why) {
                    Some(tool) => ask(tool),
                    None if why == activity::WAITS_FOR_PLAN => plan(),
                    None => format!("{who} needs you: {why}"),
                }
            }
            (_, AlertOn::NeedsYou) => format!("{who} needs you"),
            (_, AlertOn::Stalled) => format!("{who} has stalled"),
            (_, AlertOn::Idle) => format!("{who} is idle"),
            (What::GaveUp { restarts }, _) => {
                format!("{who} keeps failing: no more restarts after {restarts} in a row")
            }
            (_, AlertOn::Failed) => format!("{who} failed"),
            (_, AlertOn::Done) => "every member has ended".to_owned(),
            (_, AlertOn::Cost) => format!("{who}: {}", event.summary()),
        };
        Self {
            kind,
            team: team.to_owned(),
            member: event.member.clone(),
            text,
            event: event.clone(),
        }
    }

    /// What a webhook and a command are given: `{team, alert, text, event}`.
    fn body(&self) -> Value {
        json!({
            "team": self.team,
            "alert": self.kind.as_str(),
            "text": self.text,
            "event": self.event,
        })
    }

    /// The line shown in tmux and on the desktop.
    fn line(&self) -> String {
        format!("swarm {}: {}", self.team, self.text)
    }
}

/// What the alerts remember: each member's last alert kind (none once it moved on), and each
/// member's recent alerts and those held back while it flaps.
#[derive(Default)]
struct Alerts {
    last: HashMap<Option<String>, Option<AlertOn>>,
    recent: HashMap<String, VecDeque<Instant>>,
    held: HashMap<String, Held>,
}

/// The alerts held back for a member that flaps: how many, the latest, and when to tell them.
struct Held {
    count: usize,
    latest: Alert,
    until: Instant,
}

impl Alerts {
    /// The alert `event` makes at `now`, if any: one per member per change into a kind in
    /// `chosen`, none while nothing changed, none while the member is held back.
    fn consider(
        &mut self,
        team: &str,
        event: &Event,
        now: Instant,
        chosen: &[AlertOn],
    ) -> Option<Alert> {
        let kind = AlertOn::of(event);
        let was = self.last.insert(event.member.clone(), kind);
        // Any other change (working again, answered, running again) lets the next one through.
        let kind = kind?;
        if was == Some(Some(kind)) || !chosen.contains(&kind) {
            return None;
        }
        let alert = Alert::new(team, kind, event);
        let Some(member) = &event.member else {
            return Some(alert);
        };
        if let Some(held) = self.held.get_mut(member) {
            held.count += 1;
            held.latest = alert;
            return None;
        }
        let times = self.recent.entry(member.clone()).or_default();
        while times
            .front()
            .is_some_and(|at| now.duration_since(*at) >= FLAP_WINDOW)
        {
            times.pop_front();
        }
        if times.len() >= FLAP_LIMIT {
            let until = times.front().map_or(now, |first| *first + FLAP_WINDOW);
            let held = Held {
                count: 1,
                latest: alert,
                until,
            };
            self.held.insert(member.clone(), held);
            return None;
        }
        times.push_back(now);
        Some(alert)
    }

    /// When the next held-back member is to be told.
    fn next_due(&self) -> Option<Instant> {
        self.held.values().map(|held| held.until).min()
    }

    /// One alert for each member whose held-back alerts are due at `now`: how many, and the last.
    fn due(&mut self, now: Instant) -> Vec<Alert> {
        let due: Vec<String> = self
            .held
            .iter()
            .filter(|(_, held)| held.until <= now)
            .map(|(member, _)| member.clone())
            .collect();
        let mut told = Vec::new();
        for member in due {
            let Some(held) = self.held.remove(&member) else {
                continue;
            };
            let mut alert = held.latest;
            alert.text = format!(
                "{member} changed {} more times in a minute; last: {}",
                held.count, alert.text
            );
            self.recent.insert(member, VecDeque::from([now]));
            told.push(alert);
        }
        told
    }

    /// The members whose last alert was that they need the person, or stalled, sorted.
    fn waiting_on_you(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .last
            .iter()
            .filter(|(_, kind)| matches!(kind, Some(AlertOn::NeedsYou | AlertOn::Stalled)))
            .filter_map(|(member, _)| member.clone())
            .collect();
        names.sort();
        names
    }
}

/// The ways out, with the webhook's queue once it has one.
#[derive(Default)]
struct Senders {
    webhook: Option<(String, WebhookFormat, Sender<Value>)>,
}

impl Senders {
    /// Sends `alert` every way `notify` names; `waiting` is who the window's flag names.
    fn send(&mut self, home: &Home, notify: &Notify, alert: &Alert, waiting: &[String]) {
        if notify.bell
            && let Err(err) = bell(home, alert, waiting)
        {
            tracing::warn!("alert bell: {err}");
        }
        if notify.desktop {
            desktop(home, alert);
        }
        if let Some(url) = &notify.webhook {
            self.post(url, notify.format, alert);
        }
        if let Some(argv) = &notify.command {
            run_command(argv, alert);
        }
    }

    /// Queues `alert` for the webhook's thread, started for this URL and format on first use.
    fn post(&mut self, url: &str, format: WebhookFormat, alert: &Alert) {
        let current = self
            .webhook
            .as_ref()
            .is_some_and(|(at, was, _)| at == url && *was == format);
        if !current {
            let (sender, queue) = mpsc::channel();
            let url_owned = url.to_owned();
            std::thread::spawn(move || post_each(&url_owned, &queue));
            self.webhook = Some((url.to_owned(), format, sender));
        }
        let body = match format {
            WebhookFormat::Json => alert.body(),
            WebhookFormat::Slack => json!({"text": alert.line()}),
        };
        if let Some((_, _, queue)) = &self.webhook {
            let _ = queue.send(body);
        }
    }
}

/// The team window's `@swarm-needs-you` set to `waiting`, and `alert` told to every client
/// attached to the team's session.
fn bell(home: &Home, alert: &Alert, waiting: &[String]) -> Result<()> {
    let config = Team::open(home, &alert.team)?.load()?;
    let Some(placement) = &config.tmux else {
        return Ok(());
    };
    let tmux = Tmux::at(&placement.socket);
    tmux.flag_needs_you(&placement.window, waiting)?;
    tmux.tell_clients(&placement.session, &alert.line())
}

/// `notify-send` where it is on PATH; else OSC 9 written to the terminal of each client attached
/// to the team's session, which the terminal shows as a notification.
fn desktop(home: &Home, alert: &Alert) {
    let shown: String = alert.text.chars().filter(|c| !c.is_control()).collect();
    let title = format!("swarm {}", alert.team);
    // The spawn looks it up on PATH: none there (or none runnable) is the terminal's turn.
    let started = Command::new("notify-send")
        .args(["--app-name=swarm", &title, &shown])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    match started {
        Ok(mut child) => {
            drop(std::thread::spawn(move || child.wait()));
            return;
        }
        Err(err)
            if matches!(
                err.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied
            ) => {}
        Err(err) => {
            tracing::warn!("alert notify-send: {err}");
            return;
        }
    }
    let ttys = Team::open(home, &alert.team)
        .and_then(|team| team.load())
        .ok()
        .and_then(|config| config.tmux)
        .map(|placement| Tmux::at(&placement.socket).client_ttys(&placement.session));
    let Some(Ok(ttys)) = ttys else { return };
    let sequence = format!("\x1b]9;swarm {}: {shown}\x07", alert.team);
    for tty in ttys {
        let written = std::fs::OpenOptions::new()
            .write(true)
            .open(&tty)
            .and_then(|mut terminal| terminal.write_all(sequence.as_bytes()));
        if let Err(err) = written {
            tracing::warn!("alert to {}: {err}", tty.display());
        }
    }
}

/// `argv` run with `alert`'s JSON on stdin, waited for on a thread of its own.
fn run_command(argv: &[String], alert: &Alert) {
    let Some((program, args)) = argv.split_first() else {
        return;
    };
    let started = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let mut child = match started {
        Ok(child) => child,
        Err(err) => {
            tracing::warn!("alert command {program}: {err}");
            return;
        }
    };
    let mut body = alert.body().to_string();
    body.push('\n');
    std::thread::spawn(move || {
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(body.as_bytes());
        }
        let _ = child.wait();
    });
}

/// POSTs each body queued to `url`, one after another, each tried again after a failure or a
/// 5xx with backoff. The URL is shown only masked.
fn post_each(url: &str, queue: &Receiver<Value>) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(WEBHOOK_PATIENCE))
        .http_status_as_error(false)
        .build()
        .into();
    let shown = shown_url(url);
    for body in queue {
        let bytes = body.to_string();
        let mut pauses = BACKOFF.iter();
        loop {
            let tried = agent
                .post(url)
                .header("Content-Type", "application/json")
                .send(bytes.as_bytes());
            let failure = match tried {
                Ok(answer) if answer.status().is_server_error() => {
                    format!("answered {}", answer.status())
                }
                Ok(answer) => {
                    if !answer.status().is_success() {
                        tracing::warn!("webhook {shown} refused an alert: {}", answer.status());
                    }
                    break;
                }
                // ureq's words may hold the URL: only its kind is told.
                Err(err) => masked(&err.to_string(), url, &shown),
            };
            let Some(pause) = pauses.next() else {
                tracing::warn!("webhook {shown} gave up on an alert: {failure}");
                break;
            };
            tracing::info!("webhook {shown} {failure}; trying again in {pause:?}");
            std::thread::sleep(*pause);
        }
    }
}

/// `text` with every `url` in it shown as `shown`.
fn masked(text: &str, url: &str, shown: &str) -> String {
    text.replace(url, shown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::event::Activity;

    fn activity(member: &str, state: Activity) -> Event {
        Event {
            at: "2026-11-26T08:00:00.000Z".into(),
            member: Some(member.into()),
            what: What::Activity {
                state,
                from: None,
                why: None,
            },
        }
    }

    #[test]
    fn one_alert_per_change_and_a_member_that_flaps_is_told_once_when_its_minute_is_over() {
        let mut alerts = Alerts::default();
        let chosen = AlertOn::DEFAULT;
        let start = Instant::now();
        let told = |alerts: &mut Alerts, state, after: u64| {
            let at = start + Duration::from_secs(after);
            alerts
                .consider("t", &activity("bob", state), at, &chosen)
                .map(|alert| alert.text)
        };
        assert_eq!(
            told(&mut alerts, Activity::NeedsYou, 0).unwrap(),
            "bob needs you"
        );
        assert_eq!(
            told(&mut alerts, Activity::NeedsYou, 1),
            None,
            "nothing changed"
        );
        assert_eq!(
            told(&mut alerts, Activity::Idle, 2),
            None,
            "idle is not chosen"
        );
        assert_eq!(alerts.waiting_on_you(), Vec::<String>::new());
        assert_eq!(
            told(&mut alerts, Activity::Stalled, 3).unwrap(),
            "bob has stalled"
        );
        assert_eq!(told(&mut alerts, Activity::Working, 4), None);
        assert_eq!(
            told(&mut alerts, Activity::NeedsYou, 5).unwrap(),
            "bob needs you"
        );
        // A fourth alert within the minute, and more: held back.
        for after in 6..10 {
            told(&mut alerts, Activity::Working, after);
            assert_eq!(told(&mut alerts, Activity::Stalled, after), None);
        }
        assert_eq!(alerts.next_due(), Some(start + FLAP_WINDOW));
        assert!(alerts.due(start + Duration::from_secs(59)).is_empty());
        let summary: Vec<String> = alerts
            .due(start + FLAP_WINDOW)
            .into_iter()
            .map(|alert| alert.text)
            .collect();
        assert_eq!(
            summary,
            ["bob changed 4 more times in a minute; last: bob has stalled"]
        );
        assert_eq!(alerts.next_due(), None);
        assert_eq!(alerts.waiting_on_you(), ["bob"]);
    }

    /// The ask's event and the activity that waits on it race: whichever is first, the line reads
    /// the same, and the other is no second alert.
    #[test]
    fn an_ask_reads_the_same_from_its_event_or_from_the_activity_that_waits_on_it() {
        let asked = |member: &str| Event {
            at: "2026-11-26T08:00:00.000Z".into(),
            member: Some(member.into()),
            what: What::Asked {
                request_id: "perm-1".into(),
                what: "Bash".into(),
            },
        };
        let waiting = |member: &str, why: String| Event {
            what: What::Activity {
                state: Activity::NeedsYou,
                from: None,
                why: Some(why),
            },
            ..activity(member, Activity::NeedsYou)
        };
        let chosen = AlertOn::DEFAULT;
        let now = Instant::now();
        let mut alerts = Alerts::default();
        let from_ask = alerts.consider("t", &asked("bob"), now, &chosen).unwrap();
        let by_activity = waiting("bob", activity::waits_for_permission("Bash"));
        assert_eq!(alerts.consider("t", &by_activity, now, &chosen), None);
        let mut alerts = Alerts::default();
        let from_activity = alerts.consider("t", &by_activity, now, &chosen).unwrap();
        assert_eq!(alerts.consider("t", &asked("bob"), now, &chosen), None);
        assert_eq!(
            from_ask.text,
            "bob asks to use Bash - swarm permission list"
        );
        assert_eq!(from_activity.text, from_ask.text);
        let plan = waiting("carol", activity::WAITS_FOR_PLAN.into());
        assert_eq!(
            alerts.consider("t", &plan, now, &chosen).unwrap().text,
            "carol asks for a plan's approval - swarm wait --decision"
        );
    }
}
