//! The names swarm uses on the NATS server, spelled in one place (docs/ARCHITECTURE.md, "Across
//! machines"). Team, member and host names are `[A-Za-z0-9][A-Za-z0-9_-]*`
//! (`base::names`), which is valid in a subject token, a stream, bucket, consumer and key name.

/// The stream that carries a team's messages between hosts.
pub(crate) fn stream(team: &str) -> String {
    format!("SWARM_{team}")
}

/// Every subject of a team's stream.
pub(crate) fn stream_subjects(team: &str) -> String {
    format!("swarm.{team}.inbox.*")
}

/// The subject a message for `member` is published on.
#[allow(dead_code, reason = "the message forwarding uses it")]
pub(crate) fn inbox(team: &str, member: &str) -> String {
    format!("swarm.{team}.inbox.{member}")
}

/// The durable consumer the node hosting `member` reads that member's messages through.
#[allow(dead_code, reason = "the message forwarding uses it")]
pub(crate) fn consumer(member: &str) -> String {
    format!("inbox-{member}")
}

/// The key-value bucket holding a team's roster and member states.
pub(crate) fn roster_bucket(team: &str) -> String {
    format!("swarm_{team}")
}

/// The key of a roster bucket holding the team as `up` made it.
pub(crate) const ROSTER_CONFIG_KEY: &str = "config";

/// The key of a roster bucket holding one member's record.
pub(crate) fn roster_member_key(member: &str) -> String {
    format!("member.{member}")
}

/// The member a roster key holds the record of, if it holds one.
pub(crate) fn roster_member_name(key: &str) -> Option<&str> {
    key.strip_prefix("member.")
}

/// The key-value bucket holding a team's task list, one key per task.
pub(crate) fn tasks_bucket(team: &str) -> String {
    format!("swarm_tasks_{team}")
}

/// The stream a key-value bucket named `bucket` is kept in.
pub(crate) fn bucket_stream(bucket: &str) -> String {
    format!("KV_{bucket}")
}

/// The key of task `id` in a team's task bucket; its value is the task's file, as Claude Code
/// writes it.
pub(crate) fn task_key(id: u64) -> String {
    format!("task.{id}")
}

/// The id a key of a team's task bucket names, if it names a task.
pub(crate) fn task_id(key: &str) -> Option<u64> {
    key.strip_prefix("task.")
        .and_then(crate::store::paths::parse_task_id)
}

/// The key of a team's task bucket holding the highest task id ever issued: every id is taken by
/// a compare-and-set on it, so two hosts never issue the same one.
pub(crate) const TASKS_MARK: &str = "mark";

/// The key of a team's task bucket holding `owner`'s last exclusive claim (`claim --exclusive`):
/// every such claim of one owner moves it by compare-and-set first, so two hosts never both let
/// one owner take a second task. A character a key may not hold is written `=` and two hex digits.
pub(crate) fn claimer_key(owner: &str) -> String {
    let spelled: String = owner
        .bytes()
        .map(|byte| {
            if byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_' {
                char::from(byte).to_string()
            } else {
                format!("={byte:02X}")
            }
        })
        .collect();
    format!("claimer.{spelled}")
}

/// The key-value bucket where every node says it is alive.
pub(crate) const NODES_BUCKET: &str = "swarm_nodes";

/// The request subject of a node's `verb` (start, stop, log, down, ...).
pub(crate) fn control(host: &str, verb: &str) -> String {
    format!("swarm.node.{host}.{verb}")
}

/// Every request subject of one node.
pub(crate) fn control_all(host: &str) -> String {
    format!("swarm.node.{host}.*")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_documented_shapes() {
        assert_eq!(stream("t-1"), "SWARM_t-1");
        assert_eq!(inbox("t", "bob"), "swarm.t.inbox.bob");
        assert_eq!(stream_subjects("t"), "swarm.t.inbox.*");
        assert_eq!(consumer("bob"), "inbox-bob");
        assert_eq!(roster_bucket("t"), "swarm_t");
        assert_eq!(tasks_bucket("t"), "swarm_tasks_t");
        assert_eq!(bucket_stream(&tasks_bucket("t")), "KV_swarm_tasks_t");
        assert_eq!(task_key(12), "task.12");
        assert_eq!(task_id("task.12"), Some(12));
        assert_eq!(task_id(TASKS_MARK), None);
        assert_eq!(claimer_key("bob-2"), "claimer.bob-2");
        assert_eq!(claimer_key("bob@t"), "claimer.bob=40t");
        assert_eq!(task_id(&claimer_key("7")), None);
        assert_eq!(control("gpu1", "start"), "swarm.node.gpu1.start");
        assert_eq!(roster_member_name(&roster_member_key("bob")), Some("bob"));
        assert_eq!(roster_member_name(ROSTER_CONFIG_KEY), None);
    }
}
