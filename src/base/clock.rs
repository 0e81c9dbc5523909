//! Wall-clock times in the two forms the format uses: epoch milliseconds (config.json) and
//! RFC 3339 UTC with milliseconds (messages).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use time::OffsetDateTime;
use time::format_description::FormatItem;
use time::macros::format_description;

const RFC3339_MILLIS: &[FormatItem<'static>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");

pub(crate) fn now_ms() -> u64 {
    to_ms(SystemTime::now())
}

pub(crate) fn to_ms(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |since| {
        u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
    })
}

/// `2026-11-21T08:27:54.622Z`
pub(crate) fn timestamp_now() -> String {
    format_ms(now_ms())
}

pub(crate) fn format_ms(ms: u64) -> String {
    let nanos = i128::from(ms) * 1_000_000;
    OffsetDateTime::from_unix_timestamp_nanos(nanos)
        .ok()
        .and_then(|time| time.format(RFC3339_MILLIS).ok())
        .unwrap_or_else(|| "1970-01-01T00:00:00.000Z".to_owned())
}

/// "3s ago", "5m ago", "2h ago", "4d ago".
pub(crate) fn ago(then_ms: u64, now_ms: u64) -> String {
    let secs = now_ms.saturating_sub(then_ms) / 1000;
    match secs {
        0..60 => format!("{secs}s ago"),
        60..3600 => format!("{}m ago", secs / 60),
        3600..86_400 => format!("{}h ago", secs / 3600),
        _ => format!("{}d ago", secs / 86_400),
    }
}

/// "850ms", "12.3s", "4m05s".
pub(crate) fn human_duration(duration: Duration) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_javascript_to_iso_string() {
        assert_eq!(format_ms(1_795_336_074_622), "2026-11-22T08:27:54.622Z");
        assert_eq!(format_ms(0), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(human_duration(Duration::from_millis(850)), "850ms");
        assert_eq!(human_duration(Duration::from_millis(12_340)), "12.3s");
        assert_eq!(human_duration(Duration::from_secs(245)), "4m05s");
        assert_eq!(ago(0, 61_000), "1m ago");
    }
}
