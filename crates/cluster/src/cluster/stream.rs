//! A team's stream on the server: created by the first node or `up` that needs it, and checked,
//! never changed, when it is there already (docs/ARCHITECTURE.md, "Across machines").

use std::time::Duration;

use async_nats::jetstream::{
    self,
    context::GetStreamErrorKind,
    stream::{Config, RetentionPolicy, StorageType, Stream},
};

use crate::cluster::subjects;
use crate::error::{Error, Result};

/// How long the server remembers a `Nats-Msg-Id` to drop a second publish of it. A node that
/// publishes again after a crash does so within seconds; two minutes is the server's default.
pub(crate) const DUPLICATE_WINDOW: Duration = Duration::from_secs(120);

/// The configuration swarm gives a team's stream: one subject per member, each message kept until
/// the member's host has it in its inbox file (work queue), on disk.
pub(crate) fn config(team: &str) -> Config {
    Config {
        name: subjects::stream(team),
        subjects: vec![subjects::stream_subjects(team)],
        retention: RetentionPolicy::WorkQueue,
        storage: StorageType::File,
        duplicate_window: DUPLICATE_WINDOW,
        num_replicas: 1,
        ..Config::default()
    }
}

/// The team's stream, created if missing. One that someone else configured differently is
/// refused with one line saying what differs, rather than changed.
pub(crate) async fn ensure(js: &jetstream::Context, url: &str, team: &str) -> Result<Stream> {
    let wanted = config(team);
    match js.get_stream(&wanted.name).await {
        Ok(stream) => {
            check(url, &wanted, &stream.cached_info().config)?;
            Ok(stream)
        }
        Err(err) => match err.kind() {
            GetStreamErrorKind::JetStream(inner)
                if inner.error_code() == jetstream::ErrorCode::STREAM_NOT_FOUND =>
            {
                match js.create_stream(wanted.clone()).await {
                    Ok(stream) => Ok(stream),
                    // Another node may have created it in the meantime: then it is checked.
                    Err(err) => match js.get_stream(&wanted.name).await {
                        Ok(stream) => {
                            check(url, &wanted, &stream.cached_info().config)?;
                            Ok(stream)
                        }
                        Err(_) => Err(Error::runtime(format!(
                            "cannot create the stream {} on the NATS server at {url}: {err}",
                            wanted.name
                        ))),
                    },
                }
            }
            _ => Err(Error::runtime(format!(
                "cannot look up the stream {} on the NATS server at {url}: {err}",
                wanted.name
            ))),
        },
    }
}

/// Compares what matters to swarm's guarantees; limits someone raised are left alone.
fn check(url: &str, wanted: &Config, found: &Config) -> Result<()> {
    let differs = |what: &str, theirs: String, ours: String| {
        Err(Error::runtime(format!(
            "the stream {} on the NATS server at {url} was configured by someone else: {what} is {theirs}, swarm needs {ours}",
            wanted.name
        ))
        .with_hint(format!(
            "if nothing else uses it, delete it (`nats stream rm {}`) and swarm will make its own",
            wanted.name
        )))
    };
    if found.subjects != wanted.subjects {
        return differs(
            "subjects",
            format!("{:?}", found.subjects),
            format!("{:?}", wanted.subjects),
        );
    }
    if found.retention != wanted.retention {
        return differs(
            "retention",
            format!("{:?}", found.retention),
            format!("{:?}", wanted.retention),
        );
    }
    if found.storage != wanted.storage {
        return differs(
            "storage",
            format!("{:?}", found.storage),
            format!("{:?}", wanted.storage),
        );
    }
    if found.duplicate_window < wanted.duplicate_window {
        return differs(
            "the duplicate window",
            format!("{:?}", found.duplicate_window),
            format!("at least {:?}", wanted.duplicate_window),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_configured_differently_is_named_with_what_differs() {
        let wanted = config("t");
        assert!(check("nats://h", &wanted, &wanted).is_ok());
        let limits = Config {
            retention: RetentionPolicy::Limits,
            ..wanted.clone()
        };
        let err = check("nats://h", &wanted, &limits).unwrap_err();
        assert!(
            err.message().contains("retention is Limits"),
            "{}",
            err.message()
        );
        assert!(err.message().contains("SWARM_t"));
        let memory = Config {
            storage: StorageType::Memory,
            ..wanted.clone()
        };
        assert!(check("nats://h", &wanted, &memory).is_err());
    }
}
