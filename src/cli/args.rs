//! Value parsers and argument helpers that several commands share.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::format::message::MAX_TEXT_BYTES;

/// A duration, in the one syntax every flag takes (`--timeout`, `prune --older-than`): a number
/// of seconds (`20`, `0.5`), or humantime's units
/// (`30s`, `2m`, `1h 30m`, `7d`).
pub(crate) fn parse_duration(raw: &str) -> Result<Duration, String> {
    if let Ok(secs) = raw.trim().parse::<f64>() {
        return Duration::try_from_secs_f64(secs).map_err(|_| {
            format!("{raw:?} is not a duration: seconds are a number from 0 to about 1.8e19")
        });
    }
    humantime::parse_duration(raw).map_err(|err| {
        format!(
            "{raw:?} is not a duration ({err}): give seconds (20, 0.5) or units (30s, 2m, 1h 30m)"
        )
    })
}

/// A `--cwd DIR` made absolute, or the current directory.
pub(crate) fn resolve_cwd(cwd: Option<&Path>) -> Result<PathBuf> {
    match cwd {
        Some(dir) => crate::store::paths::absolute(dir),
        None => std::env::current_dir().map_err(|err| Error::os("find the current directory", err)),
    }
}

/// What a command reads from stdin when its text is `-` or not given (`what`: "the message",
/// "the keys"), at most the size of a message. A terminal on stdin is refused: the command would
/// wait on it without a word, for text the person may not know is asked for.
pub(crate) fn read_stdin(what: &str, example: &str) -> Result<Vec<u8>> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Err(Error::usage(format!(
            "no text given, and stdin is a terminal: give {what} as an argument, or pipe it in"
        ))
        .with_hint(format!("e.g. {example}")));
    }
    let mut bytes = Vec::new();
    stdin
        .lock()
        .take(MAX_TEXT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| Error::os(&format!("read {what} from stdin"), err))?;
    if bytes.len() > MAX_TEXT_BYTES {
        return Err(Error::usage(format!(
            "{what} on stdin is over the limit of {MAX_TEXT_BYTES} bytes (1 MiB)"
        ))
        .with_hint("write large content to a file and send its path instead"));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_is_seconds_or_humantime_units_everywhere() {
        assert_eq!(parse_duration("20"), Ok(Duration::from_secs(20)));
        assert_eq!(parse_duration("0.5"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h 30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("7d"), Ok(Duration::from_secs(7 * 86_400)));
        for bad in ["-1", "NaN", "1e30", "soon", ""] {
            let err = parse_duration(bad).unwrap_err();
            assert!(err.contains("is not a duration"), "{bad}: {err}");
        }
    }
}
