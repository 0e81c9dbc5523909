//! Every id swarm makes: fresh ones (`msg_id`s, the lead's session id, spool file names) and ones
//! derived from what they name. One place, so a test can make the fresh ones deterministic.
//!
//! Test hook `SWARM_TEST_ID_SEED` (hidden, like jj's `JJ_RANDOMNESS_SEED`): when set and not
//! empty, the n-th fresh id of this process is the UUID v5 of `<seed>/<n>` instead of a random v4.
//! Two processes with one seed make the same ids, and a `msg_id` is what deduplication goes by, so
//! each process needs its own seed: the test harness gives every invocation a new one, and swarm
//! removes the hooks from the processes it starts (`base::TEST_HOOKS`).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use uuid::Uuid;

pub(crate) const SEED_VAR: &str = "SWARM_TEST_ID_SEED";

/// Fresh ids: random, or counted from a seed.
#[derive(Debug)]
pub(crate) struct Source {
    seed: Option<String>,
    made: AtomicU64,
}

impl Source {
    pub(crate) fn new(seed: Option<String>) -> Self {
        Self {
            seed,
            made: AtomicU64::new(0),
        }
    }

    pub(crate) fn next(&self) -> Uuid {
        match &self.seed {
            None => Uuid::new_v4(),
            Some(seed) => {
                let n = self.made.fetch_add(1, Ordering::Relaxed);
                Uuid::new_v5(&Uuid::NAMESPACE_OID, format!("{seed}/{n}").as_bytes())
            }
        }
    }
}

/// A new id, unique unless `SWARM_TEST_ID_SEED` was given to two processes.
pub fn fresh() -> Uuid {
    static SOURCE: OnceLock<Source> = OnceLock::new();
    SOURCE
        .get_or_init(|| Source::new(std::env::var(SEED_VAR).ok().filter(|s| !s.is_empty())))
        .next()
}

/// The id of whatever `key` names: the same key always gives the same id, across versions too,
/// since ids derived this way are already on disk.
pub fn derived(key: &str) -> String {
    Uuid::new_v5(&Uuid::NAMESPACE_OID, key.as_bytes()).to_string()
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn unseeded_ids_are_random_v4() {
        let source = Source::new(None);
        let (a, b) = (source.next(), source.next());
        assert_ne!(a, b);
        assert_eq!(a.get_version_num(), 4);
        assert_ne!(Source::new(None).next(), Source::new(None).next());
    }

    #[test]
    fn a_seed_gives_the_same_sequence_every_time() {
        let first: Vec<Uuid> = {
            let source = Source::new(Some("7".into()));
            (0..3).map(|_| source.next()).collect()
        };
        let again: Vec<Uuid> = {
            let source = Source::new(Some("7".into()));
            (0..3).map(|_| source.next()).collect()
        };
        assert_eq!(first, again);
        assert_eq!(first.iter().collect::<HashSet<_>>().len(), 3);
        assert_eq!(first[0].get_version_num(), 5);
    }

    #[test]
    fn different_seeds_never_share_an_id() {
        let ids: HashSet<Uuid> = ["1", "2", "11", "1/1"]
            .into_iter()
            .flat_map(|seed| {
                let source = Source::new(Some(seed.into()));
                (0..12).map(move |_| source.next())
            })
            .collect();
        assert_eq!(ids.len(), 4 * 12);
    }

    #[test]
    fn derived_ids_are_stable() {
        // Ids of messages written without one are on disk already: this value must never change.
        assert_eq!(derived("a"), "d720e32d-4765-5177-b65b-42dd7f6e6445");
        assert_eq!(derived("x\0y"), derived("x\0y"));
        assert_ne!(derived("x"), derived("y"));
    }
}
