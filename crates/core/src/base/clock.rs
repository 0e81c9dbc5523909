//! Wall-clock times in the two forms the format uses: epoch milliseconds (config.json) and
//! RFC 3339 UTC with milliseconds (messages). Every time swarm writes or shows is read here.
//!
//! Test hook `SWARM_TEST_NOW` (hidden, like jj's `JJ_TIMESTAMP`): epoch milliseconds
//! (`1767225600000`) or RFC 3339 (`2026-01-01T00:00:00Z`). When set and not empty, every read of
//! the clock in this process returns that time; an unreadable value is a panic, not a silently
//! real clock. Durations measured with `Instant` and file modification times are not affected.
//!
//! [`deadline`] is the one way a timeout becomes an `Instant`: a timeout too long to represent is
//! no deadline at all, never an overflow.

use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use time::OffsetDateTime;
use time::format_description::FormatItem;
use time::format_description::well_known::Rfc3339;
use time::macros::format_description;

const RFC3339_MILLIS: &[FormatItem<'static>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");

const COMPACT: &[FormatItem<'static>] =
    format_description!("[year][month][day]T[hour][minute][second]Z");

pub(crate) const NOW_VAR: &str = "SWARM_TEST_NOW";

pub fn now_ms() -> u64 {
    static FIXED: OnceLock<Option<u64>> = OnceLock::new();
    let fixed = FIXED.get_or_init(|| {
        let value = std::env::var(NOW_VAR).ok().filter(|v| !v.is_empty())?;
        Some(parse_fixed(&value).unwrap_or_else(|err| panic!("{err}")))
    });
    fixed.unwrap_or_else(|| to_ms(SystemTime::now()))
}

/// A `SWARM_TEST_NOW` value as epoch milliseconds.
fn parse_fixed(value: &str) -> Result<u64, String> {
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return value
            .parse()
            .map_err(|err| format!("{NOW_VAR}={value}: {err}"));
    }
    let time = OffsetDateTime::parse(value, &Rfc3339).map_err(|err| {
        format!("{NOW_VAR}={value} is neither epoch milliseconds nor RFC 3339: {err}")
    })?;
    u64::try_from(time.unix_timestamp_nanos() / 1_000_000)
        .map_err(|_| format!("{NOW_VAR}={value} is before 1970"))
}

pub fn to_ms(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |since| {
        u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
    })
}

/// The instant `after` from now, or `None`, no deadline, when that is too far to represent: a
/// timeout of `1e19` seconds (or `Duration::MAX`) waits for ever rather than overflowing.
pub fn deadline(after: Duration) -> Option<Instant> {
    Instant::now().checked_add(after)
}

/// A bound in seconds from the environment variable `var` (`SWARM_LOCK_TIMEOUT`,
/// `SWARM_TMUX_TIMEOUT`), else `default`; one too long to represent is `Duration::MAX`, which
/// [`deadline`] makes no deadline. A value that is not a number of seconds is the default.
pub fn seconds_from_env(var: &str, default: Duration) -> Duration {
    std::env::var(var)
        .ok()
        .and_then(|secs| secs.trim().parse::<f64>().ok())
        .filter(|secs| !secs.is_nan() && *secs >= 0.0)
        .map_or(default, |secs| {
            Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX)
        })
}

/// Whether `deadline` has passed; never, without one.
pub(crate) fn passed(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|deadline| Instant::now() >= deadline)
}

/// An RFC 3339 time as epoch milliseconds; `None` when it is not one, or before 1970.
pub fn parse_ms(timestamp: &str) -> Option<u64> {
    let time = OffsetDateTime::parse(timestamp, &Rfc3339).ok()?;
    u64::try_from(time.unix_timestamp_nanos() / 1_000_000).ok()
}

/// `2026-11-21T08:27:54.622Z`
pub fn timestamp_now() -> String {
    format_ms(now_ms())
}

pub fn format_ms(ms: u64) -> String {
    let nanos = i128::from(ms) * 1_000_000;
    OffsetDateTime::from_unix_timestamp_nanos(nanos)
        .ok()
        .and_then(|time| time.format(RFC3339_MILLIS).ok())
        .unwrap_or_else(|| "1970-01-01T00:00:00.000Z".to_owned())
}

/// `20261122T082754Z`: a time in a file name (ISO 8601's basic format, UTC, to the second), which
/// sorts as the times do.
pub(crate) fn compact_ms(ms: u64) -> String {
    let nanos = i128::from(ms) * 1_000_000;
    OffsetDateTime::from_unix_timestamp_nanos(nanos)
        .ok()
        .and_then(|time| time.format(COMPACT).ok())
        .unwrap_or_else(|| "19700101T000000Z".to_owned())
}

/// "3s ago", "5m ago", "2h ago", "4d ago".
pub fn ago(then_ms: u64, now_ms: u64) -> String {
    let secs = now_ms.saturating_sub(then_ms) / 1000;
    match secs {
        0..60 => format!("{secs}s ago"),
        60..3600 => format!("{}m ago", secs / 60),
        3600..86_400 => format!("{}h ago", secs / 3600),
        _ => format!("{}d ago", secs / 86_400),
    }
}

/// "850ms", "12.3s", "4m05s".
pub fn human_duration(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis < 1000 {
        format!("{millis}ms")
    } else if millis < 60_000 {
        format!("{:.1}s", duration.as_secs_f64())
    } else {
        let secs = duration.as_secs();
        format!("{}m{:02}s", secs / 60, secs % 60)
    }
}

/// "7d", "1h30m", "45s": a span as `--older-than` takes one, in whole seconds.
pub fn span(duration: Duration) -> String {
    let secs = duration.as_secs();
    if secs == 0 {
        return "0s".to_owned();
    }
    [(86_400, "d"), (3600, "h"), (60, "m"), (1, "s")]
        .iter()
        .scan(secs, |left, &(unit, name)| {
            let count = *left / unit;
            *left %= unit;
            Some((count > 0).then(|| format!("{count}{name}")))
        })
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_javascript_to_iso_string() {
        assert_eq!(format_ms(1_795_336_074_622), "2026-11-22T08:27:54.622Z");
        assert_eq!(format_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(compact_ms(1_795_336_074_622), "20261122T082754Z");
    }

    #[test]
    fn a_fixed_time_is_epoch_milliseconds_or_rfc_3339() {
        assert_eq!(parse_fixed("1767225600000"), Ok(1_767_225_600_000));
        assert_eq!(parse_fixed("2026-01-01T00:00:00Z"), Ok(1_767_225_600_000));
        assert_eq!(
            parse_fixed("2026-01-01T01:00:00.250+01:00"),
            Ok(1_767_225_600_250)
        );
        assert_eq!(format_ms(parse_fixed("0").unwrap()), format_ms(0));
        for bad in ["", "yesterday", "2026-01-01", "-5", "1969-12-31T23:59:59Z"] {
            let err = parse_fixed(bad).unwrap_err();
            assert!(err.starts_with("SWARM_TEST_NOW="), "{err}");
        }
    }

    #[test]
    fn a_timeout_too_long_to_represent_is_no_deadline() {
        assert_eq!(deadline(Duration::MAX), None);
        assert_eq!(
            deadline(Duration::from_secs(10_000_000_000_000_000_000)),
            None
        );
        assert!(!passed(None));
        let soon = deadline(Duration::ZERO);
        assert!(soon.is_some());
        assert!(passed(soon));
        assert!(!passed(deadline(Duration::from_secs(3600))));
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(human_duration(Duration::from_millis(850)), "850ms");
        assert_eq!(human_duration(Duration::from_millis(12_340)), "12.3s");
        assert_eq!(human_duration(Duration::from_secs(245)), "4m05s");
        assert_eq!(ago(0, 61_000), "1m ago");
        assert_eq!(span(Duration::from_secs(7 * 86_400)), "7d");
        assert_eq!(span(Duration::from_secs(5400)), "1h30m");
        assert_eq!(span(Duration::from_secs(86_400 + 61)), "1d1m1s");
        assert_eq!(span(Duration::ZERO), "0s");
    }
}
