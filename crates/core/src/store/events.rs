//! A team's event stream (docs/ARCHITECTURE.md, "Activity and events"): `teams/<team>/events.jsonl`,
//! one [`Event`] a line, appended durably by whoever saw the change. Readers keep the offset they
//! read to and read on from it, so following the stream never re-reads it; a stream that shrank
//! (removed and begun again) is read from its start.

use crate::base::clock;
use crate::error::{Error, Result};
use crate::format::event::{Event, What};
use crate::store::durable::{append_lines_durably, private_dir, whole_lines_from};
use crate::store::paths::TeamPaths;

/// Appends `event` to the team's stream.
pub fn append(paths: &TeamPaths, event: &Event) -> Result<()> {
    private_dir(paths.private_root(), paths.dir())?;
    let mut line = serde_json::to_vec(event).map_err(|err| Error::runtime(err.to_string()))?;
    line.push(b'\n');
    append_lines_durably(&paths.events(), &line)
}

/// Appends what happened now to `member` (none for the whole team). The change it tells is
/// already made and durable: a stream that cannot take the line is logged, not the change undone.
pub fn tell(paths: &TeamPaths, member: Option<&str>, what: What) {
    let event = Event {
        at: clock::timestamp_now(),
        member: member.map(str::to_owned),
        what,
    };
    if let Err(err) = append(paths, &event) {
        tracing::warn!(
            "cannot add to the event stream {}: {err}",
            paths.events().display()
        );
    }
}

/// Where a reader of the stream has got to: the one offset of a file of lines.
pub use crate::store::durable::LineOffset as Offset;

/// The events written since `from`, and the offset to read on from. A last line not yet ended
/// (a writer's append in flight) is left for the next read; a line that does not parse (torn by a
/// crash, then ended by the next append) is skipped.
pub fn read_from(paths: &TeamPaths, from: Offset) -> Result<(Vec<Event>, Offset)> {
    let (bytes, offset) = whole_lines_from(&paths.events(), from)?;
    let events = bytes
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .filter_map(|line| serde_json::from_slice(line).ok())
        .collect();
    Ok((events, offset))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::config::State;
    use crate::store::paths::Home;

    /// A team's paths in a home of its own: the stream needs no team written.
    fn team_paths() -> (tempfile::TempDir, TeamPaths) {
        let dir = tempfile::tempdir().unwrap();
        let paths = Home::new(dir.path().to_path_buf()).team("t");
        (dir, paths)
    }

    fn process(member: &str, state: State) -> Event {
        Event {
            at: "2026-11-26T08:00:00.000Z".into(),
            member: Some(member.into()),
            what: What::Process { state, from: None },
        }
    }

    #[test]
    fn a_reader_reads_on_from_its_offset_and_waits_for_a_whole_line() {
        let (_dir, paths) = team_paths();
        let paths = &paths;
        assert_eq!(
            read_from(paths, Offset::default()).unwrap(),
            (vec![], Offset(0))
        );
        append(paths, &process("bob", State::Running)).unwrap();
        let (first, offset) = read_from(paths, Offset::default()).unwrap();
        assert_eq!(first, [process("bob", State::Running)]);
        append(paths, &process("bob", State::Exited)).unwrap();
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(paths.events())
            .unwrap();
        std::io::Write::write_all(&mut file, b"{\"at\":\"2026").unwrap();
        let (next, offset) = read_from(paths, offset).unwrap();
        assert_eq!(next, [process("bob", State::Exited)]);
        let (none, same) = read_from(paths, offset).unwrap();
        assert!(none.is_empty());
        assert_eq!(same, offset);
        append(paths, &process("bob", State::Killed)).unwrap();
        let (after_torn, _) = read_from(paths, offset).unwrap();
        assert_eq!(after_torn, [process("bob", State::Killed)]);
    }

    #[test]
    fn a_stream_begun_again_is_read_from_its_start() {
        let (_dir, paths) = team_paths();
        let paths = &paths;
        append(paths, &process("bob", State::Running)).unwrap();
        append(paths, &process("bob", State::Exited)).unwrap();
        let (_, offset) = read_from(paths, Offset::default()).unwrap();
        std::fs::remove_file(paths.events()).unwrap();
        append(paths, &process("bob", State::Failed)).unwrap();
        let (events, _) = read_from(paths, offset).unwrap();
        assert_eq!(events, [process("bob", State::Failed)]);
    }
}
