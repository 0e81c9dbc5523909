//! Value parsers and argument helpers that several commands share.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, Result};

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
