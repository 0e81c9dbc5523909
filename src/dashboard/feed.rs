//! The message feed: every message that arrives in the team, as `watch --all` follows it
//! (`store/follow.rs`), one line each, a protocol message in words ("alice asks to approve a
//! plan"). It also keeps what the rows show: when each member last sent or received a message,
//! when it last said it was idle, and how many messages arrived in the last minute.

use std::collections::{HashMap, VecDeque};

use crate::base::clock;
use crate::base::text::for_terminal;
use crate::format::signature::Verdict;
use crate::store::follow::Arrival;

/// How many lines the feed keeps; older ones are forgotten.
const KEPT: usize = 2000;

/// The window of "messages per minute".
const MINUTE_MS: u64 = 60_000;

/// One message as the feed shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line {
    pub(crate) id: String,
    /// `HH:MM:SS`, UTC, as `watch` prints it.
    pub(crate) time: String,
    /// The sender, marked `(forged)` when it does not prove it speaks for the lead.
    pub(crate) from: String,
    /// The member it reached, or `*` for a broadcast.
    pub(crate) to: String,
    /// The text on one line, or what a protocol message says, in words.
    pub(crate) words: String,
    pub(crate) structured: bool,
}

impl Line {
    pub(crate) fn of(arrival: &Arrival, verdict: Verdict) -> Self {
        let message = &arrival.message;
        let to = arrival.addressee();
        let (words, structured) = match message.structured() {
            Some(protocol) => (protocol.in_words(message.from(), to), true),
            None => (message.text().to_owned(), false),
        };
        let time = message
            .timestamp()
            .get(11..19)
            .filter(|time| time.len() == 8)
            .unwrap_or("--:--:--");
        Self {
            id: message.id().into_owned(),
            time: one_line(time),
            from: one_line(&verdict.sender(message)),
            to: one_line(to),
            words: one_line(&words),
            structured,
        }
    }

    /// Whether the line holds `filter`, ignoring case.
    pub(crate) fn matches(&self, filter: &str) -> bool {
        let filter = filter.to_lowercase();
        [&self.from, &self.to, &self.words]
            .iter()
            .any(|field| field.to_lowercase().contains(&filter))
    }
}

/// Text another program wrote, safe for the terminal and on one line.
pub(crate) fn one_line(text: &str) -> String {
    for_terminal(&text.replace(['\r', '\n'], " ")).into_owned()
}

#[derive(Debug, Default)]
pub(crate) struct Feed {
    lines: VecDeque<Line>,
    /// When each of the last minute's messages arrived (this process's clock).
    arrived_ms: VecDeque<u64>,
    /// Per member: when it last sent a message, and last received one.
    pub(crate) last_out: HashMap<String, u64>,
    pub(crate) last_in: HashMap<String, u64>,
}

impl Feed {
    /// A message that arrives now.
    pub(crate) fn push(&mut self, arrival: &Arrival, verdict: Verdict, now_ms: u64) {
        self.add(arrival, verdict, now_ms, false);
    }

    /// A message said before the dashboard opened: it counts towards the rate when it was sent,
    /// not now. Recalled in the order they were sent.
    pub(crate) fn recall(&mut self, arrival: &Arrival, verdict: Verdict, now_ms: u64) {
        self.add(arrival, verdict, now_ms, true);
    }

    fn add(&mut self, arrival: &Arrival, verdict: Verdict, now_ms: u64, earlier: bool) {
        let message = &arrival.message;
        let sent_ms = clock::parse_ms(message.timestamp()).unwrap_or(now_ms);
        self.last_out.insert(message.from().to_owned(), sent_ms);
        self.last_in.insert(arrival.to.clone(), sent_ms);
        self.lines.push_back(Line::of(arrival, verdict));
        if self.lines.len() > KEPT {
            self.lines.pop_front();
        }
        self.arrived_ms
            .push_back(if earlier { sent_ms.min(now_ms) } else { now_ms });
    }

    /// Messages that arrived in the minute before `now_ms`.
    pub(crate) fn per_minute(&mut self, now_ms: u64) -> usize {
        while self
            .arrived_ms
            .front()
            .is_some_and(|at| at.saturating_add(MINUTE_MS) < now_ms)
        {
            self.arrived_ms.pop_front();
        }
        self.arrived_ms.len()
    }

    pub(crate) fn lines(&self) -> impl DoubleEndedIterator<Item = &Line> {
        self.lines.iter()
    }

    /// A feed of these lines, for drawing without a team.
    #[cfg(test)]
    pub(crate) fn of_lines(lines: Vec<Line>) -> Self {
        Self {
            lines: lines.into(),
            ..Self::default()
        }
    }
}
