//! A team's usage ledger (docs/ARCHITECTURE.md, "Costs and budgets"): `teams/<team>/usage.jsonl`,
//! one [`UsageLine`] a model reply, appended durably by the member's supervisor as it follows the
//! member's transcript, or by `swarm usage add`. Readers keep a [`Tally`] and read on from its
//! offset, so a live view never re-reads the ledger.

use std::collections::{BTreeMap, VecDeque};

use crate::base::clock;
use crate::error::{Error, Result};
use crate::format::usage::{ByModel, Prices, Spend, Tokens, UsageLine};
use crate::store::durable::{LineOffset, append_lines_durably, private_dir, whole_lines_from};
use crate::store::paths::TeamPaths;

/// How far back the rate of spending looks.
pub const RATE_WINDOW_MS: u64 = 10 * 60 * 1000;

/// Appends `lines` to the team's ledger in one durable write.
pub fn append(paths: &TeamPaths, lines: &[UsageLine]) -> Result<()> {
    if lines.is_empty() {
        return Ok(());
    }
    private_dir(paths.private_root(), paths.dir())?;
    let mut bytes = Vec::new();
    for line in lines {
        serde_json::to_writer(&mut bytes, line).map_err(|err| Error::runtime(err.to_string()))?;
        bytes.push(b'\n');
    }
    append_lines_durably(&paths.usage(), &bytes)
}

/// The lines written since `from`, and the offset to read on from (see `events::read_from`).
pub fn read_from(paths: &TeamPaths, from: LineOffset) -> Result<(Vec<UsageLine>, LineOffset)> {
    let (bytes, offset) = whole_lines_from(&paths.usage(), from)?;
    let lines = bytes
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .filter_map(|line| serde_json::from_slice(line).ok())
        .collect();
    Ok((lines, offset))
}

/// What a reader of the ledger has added up: each member's tokens by model since `since`, and
/// the lines of the last [`RATE_WINDOW_MS`] for the rate.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    offset: LineOffset,
    /// Only lines counted at or after this (ms since the epoch) are added up.
    since: Option<u64>,
    pub members: BTreeMap<String, ByModel>,
    recent: VecDeque<(u64, String, Option<String>, Tokens)>,
}

impl Tally {
    pub fn new(since: Option<u64>) -> Self {
        Self {
            since,
            ..Self::default()
        }
    }

    /// Reads on from where the tally got to and adds what was written since; returns the new
    /// lines. A ledger begun again (the team removed and made anew) is added up from its start.
    pub fn read_on(&mut self, paths: &TeamPaths) -> Result<Vec<UsageLine>> {
        let len = std::fs::metadata(paths.usage()).map_or(0, |meta| meta.len());
        if len < self.offset.0 {
            *self = Self::new(self.since);
        }
        let (lines, offset) = read_from(paths, self.offset)?;
        self.offset = offset;
        for line in &lines {
            self.add(line);
        }
        Ok(lines)
    }

    fn add(&mut self, line: &UsageLine) {
        let at = clock::parse_ms(&line.at).unwrap_or(0);
        if self.since.is_some_and(|since| at < since) {
            return;
        }
        *self
            .members
            .entry(line.member.clone())
            .or_default()
            .entry(line.model.clone())
            .or_default() += line.tokens;
        self.recent
            .push_back((at, line.member.clone(), line.model.clone(), line.tokens));
    }

    /// Each member's tokens by model in the last [`RATE_WINDOW_MS`] before `now_ms`.
    pub fn recent(&mut self, now_ms: u64) -> BTreeMap<String, ByModel> {
        let start = now_ms.saturating_sub(RATE_WINDOW_MS);
        while self.recent.front().is_some_and(|(at, ..)| *at < start) {
            self.recent.pop_front();
        }
        let mut recent: BTreeMap<String, ByModel> = BTreeMap::new();
        for (_, member, model, tokens) in &self.recent {
            *recent
                .entry(member.clone())
                .or_default()
                .entry(model.clone())
                .or_default() += *tokens;
        }
        recent
    }

    /// `member`'s tokens by model.
    pub fn of(&self, member: &str) -> ByModel {
        self.members.get(member).cloned().unwrap_or_default()
    }

    /// What `member` spent, at `prices`.
    pub fn spend(&self, member: &str, prices: &Prices) -> Spend {
        self.members
            .get(member)
            .map(|by_model| Spend::of(by_model, prices))
            .unwrap_or_default()
    }

    /// What the whole team spent, at `prices`.
    pub fn total(&self, prices: &Prices) -> Spend {
        self.members
            .values()
            .map(|by_model| Spend::of(by_model, prices))
            .fold(Spend::default(), |a, b| a + b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::usage::Source;
    use crate::store::paths::Home;

    fn line(at: &str, member: &str, model: Option<&str>, input: u64) -> UsageLine {
        UsageLine {
            at: at.into(),
            member: member.into(),
            model: model.map(str::to_owned),
            tokens: Tokens {
                input,
                output: 1,
                ..Tokens::default()
            },
            source: Source::Added,
            id: None,
            place: None,
        }
    }

    #[test]
    fn a_tally_reads_on_adds_by_member_and_model_and_keeps_a_window_for_the_rate() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Home::new(dir.path().to_path_buf()).team("t");
        let mut tally = Tally::new(None);
        assert!(tally.read_on(&paths).unwrap().is_empty());
        append(
            &paths,
            &[
                line("2026-11-26T08:00:00.000Z", "bob", Some("m"), 10),
                line("2026-11-26T08:20:00.000Z", "bob", Some("m"), 5),
            ],
        )
        .unwrap();
        assert_eq!(tally.read_on(&paths).unwrap().len(), 2);
        append(&paths, &[line("2026-11-26T08:21:00.000Z", "ann", None, 7)]).unwrap();
        assert_eq!(tally.read_on(&paths).unwrap().len(), 1);
        assert_eq!(tally.of("bob")[&Some("m".to_owned())].input, 15);
        assert_eq!(tally.of("ann")[&None].input, 7);
        let now = clock::parse_ms("2026-11-26T08:25:00.000Z").unwrap();
        let recent = tally.recent(now);
        assert_eq!(recent["bob"][&Some("m".to_owned())].input, 5);
        assert_eq!(recent["ann"][&None].input, 7);

        let mut since = Tally::new(clock::parse_ms("2026-11-26T08:10:00.000Z"));
        since.read_on(&paths).unwrap();
        assert_eq!(since.of("bob")[&Some("m".to_owned())].input, 5);

        // Begun again: added up from its start, not on top of what was.
        std::fs::remove_file(paths.usage()).unwrap();
        append(
            &paths,
            &[line("2026-11-26T09:00:00.000Z", "bob", Some("m"), 1)],
        )
        .unwrap();
        tally.read_on(&paths).unwrap();
        assert_eq!(tally.of("bob")[&Some("m".to_owned())].input, 1);
        assert!(tally.of("ann").is_empty());
    }
}
