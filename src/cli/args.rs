//! Value parsers and argument helpers that several commands share.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::format::message::MAX_TEXT_BYTES;

/// Seconds as a duration: `30`, `0.5`.
pub(crate) fn parse_seconds(raw: &str) -> Result<Duration, String> {
    let secs: f64 = raw
        .parse()
        .map_err(|_| format!("{raw:?} is not a number of seconds"))?;
    Duration::try_from_secs_f64(secs)
        .map_err(|_| format!("{raw:?} is not a valid number of seconds"))
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
