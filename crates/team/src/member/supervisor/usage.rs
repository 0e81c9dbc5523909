//! The supervisor's follow of its member's Claude Code transcript (docs/ARCHITECTURE.md, "Costs
//! and budgets"): the session's `<id>.jsonl` and its subagents' `<id>/subagents/agent-*.jsonl`,
//! each read on from the last offset, whole lines only, through the one watcher. Each model reply
//! is counted once (by its `message.id`) into the team's usage ledger, with where it was read, so
//! a supervisor started again reads on from there. A file that shrank or was replaced is read
//! again from its start; the ids already counted keep it from counting a reply twice.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::ffi::{OsStr, OsString};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::base::clock;
use crate::format::usage::{Place, Source, UsageLine, claude_reply};
use crate::store::durable::{LineOffset, whole_lines_from};
use crate::store::paths::ClaudePaths;
use crate::store::usage;
use crate::store::watcher::AsyncWatcher;

use super::seat::{OffRuntime, Supervisor};

/// The variable that names a project's folder when Claude Code's config folder is given.
const PROJECT_DIR_NAME_VAR: &str = "CLAUDE_CODE_PROJECT_DIR_NAME";

/// How many reply ids are remembered against counting one twice: the blocks of one reply are
/// written one after another.
const REMEMBERED_IDS: usize = 4096;

/// Where a member's session writes its transcript.
pub(super) struct Transcript {
    claude: ClaudePaths,
    /// Where Claude Code first looks: the folder of the member's working directory.
    expected: PathBuf,
    id: String,
}

impl Transcript {
    /// The transcript of the member's Claude Code session, run in `cwd` with `env`: none for a
    /// member that is not a Claude Code session swarm gave an id.
    pub(super) fn of(
        session_id: Option<&str>,
        cwd: &Path,
        env: &BTreeMap<OsString, OsString>,
    ) -> Option<Self> {
        let id = session_id?.to_owned();
        let var = |name: &str| env.get(OsStr::new(name)).map(OsString::as_os_str);
        let claude = ClaudePaths::new(var("CLAUDE_CONFIG_DIR"), var("HOME"))?;
        // Claude Code names the folder after its cwd with symlinks resolved.
        let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
        let expected = claude.transcript(&cwd, var(PROJECT_DIR_NAME_VAR), &id);
        Some(Self {
            claude,
            expected,
            id,
        })
    }

    /// The session's file: where Claude Code first looks, or, for a session resumed from
    /// another folder, the one folder that holds it.
    fn main_file(&self) -> PathBuf {
        if self.expected.exists() {
            return self.expected.clone();
        }
        self.claude
            .find_transcript(&self.id)
            .unwrap_or_else(|| self.expected.clone())
    }
}

/// The folders to watch for session file `main`: its own, and its subagents' once they exist;
/// else the nearest folder above that exists, to see them made.
fn folders(main: &Path) -> Vec<PathBuf> {
    let project = crate::store::durable::parent(main).to_path_buf();
    let subagents = subagents_dir(main);
    let mut folders: Vec<PathBuf> = [project.clone(), subagents]
        .into_iter()
        .filter(|dir| dir.is_dir())
        .collect();
    if folders.is_empty() {
        folders.extend(
            project
                .ancestors()
                .skip(1)
                .find(|dir| dir.is_dir())
                .map(Path::to_path_buf),
        );
    }
    folders
}

impl Transcript {
    /// Whether a file the watch reports is one of the session's, or a folder on the way to
    /// them: other sessions in the same folder write beside it.
    fn names(&self, name: &OsStr) -> bool {
        let id = OsStr::new(&self.id);
        let Some(text) = name.to_str() else {
            return false;
        };
        name == id
            || text.strip_suffix(".jsonl") == Some(self.id.as_str())
            || text == "subagents"
            || text == "projects"
            || text.starts_with("agent-")
            || self
                .expected
                .parent()
                .and_then(Path::file_name)
                .is_some_and(|project| project == name)
    }
}

/// `<project>/<id>/subagents`: where the session's subagents write theirs.
fn subagents_dir(main: &Path) -> PathBuf {
    main.with_extension("").join("subagents")
}

/// Every file of the session: the main one and each subagent's.
fn session_files(main: &Path) -> Vec<PathBuf> {
    let mut files = vec![main.to_path_buf()];
    if let Ok(entries) = std::fs::read_dir(subagents_dir(main)) {
        let mut agents: Vec<PathBuf> = entries
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| {
                path.file_name()
                    .and_then(OsStr::to_str)
                    .is_some_and(|name| name.starts_with("agent-"))
                    && path.extension().is_some_and(|ext| ext == "jsonl")
            })
            .collect();
        agents.sort();
        files.extend(agents);
    }
    files
}

/// Where the follow of one file has got to.
#[derive(Default)]
struct Followed {
    offset: LineOffset,
    /// The file's device and inode when last read: another file under its name is read anew.
    identity: Option<(u64, u64)>,
}

/// What the follow remembers.
#[derive(Default)]
pub(super) struct Follow {
    files: BTreeMap<PathBuf, Followed>,
    ids: HashSet<String>,
    order: VecDeque<String>,
}

impl Follow {
    /// Where a follow by an earlier supervisor of `member` got to, from the ledger.
    fn resumed(paths: &crate::store::paths::TeamPaths, member: &str) -> Self {
        let mut follow = Self::default();
        let Ok((lines, _)) = usage::read_from(paths, LineOffset::default()) else {
            return follow;
        };
        for line in lines.iter().filter(|line| line.member == member) {
            if let Some(place) = &line.place {
                let followed = follow.files.entry(PathBuf::from(&place.file)).or_default();
                followed.offset = followed.offset.max(LineOffset(place.through));
            }
            if let Some(id) = &line.id {
                follow.remember(id);
            }
        }
        follow
    }

    /// Remembers `id` as counted; `false` when it already was.
    fn remember(&mut self, id: &str) -> bool {
        if !self.ids.insert(id.to_owned()) {
            return false;
        }
        self.order.push_back(id.to_owned());
        if self.order.len() > REMEMBERED_IDS
            && let Some(old) = self.order.pop_front()
        {
            self.ids.remove(&old);
        }
        true
    }

    /// Reads what `file` gained since the last read and returns the replies not yet counted.
    fn read(&mut self, file: &Path, member: &str) -> Vec<UsageLine> {
        let identity = std::fs::symlink_metadata(file)
            .ok()
            .map(|meta| (meta.dev(), meta.ino()));
        let Some(identity) = identity else {
            return Vec::new();
        };
        let followed = self.files.entry(file.to_path_buf()).or_default();
        if followed.identity.is_some_and(|was| was != identity) {
            tracing::info!("{} was replaced; reading it from its start", file.display());
            followed.offset = LineOffset::default();
        }
        followed.identity = Some(identity);
        let from = followed.offset;
        if std::fs::metadata(file).is_ok_and(|meta| meta.len() < from.0) {
            tracing::info!("{} shrank; reading it from its start", file.display());
        }
        // A file shorter than the offset is read from its start by the reader itself.
        let (bytes, offset) = match whole_lines_from(file, from) {
            Ok(read) => read,
            Err(err) => {
                tracing::warn!("cannot follow {}: {err}", file.display());
                return Vec::new();
            }
        };
        followed.offset = offset;
        let start = offset.0 - bytes.len() as u64;
        let mut through = start;
        let mut counted = Vec::new();
        let shown = file.display().to_string();
        for line in bytes.split_inclusive(|b| *b == b'\n') {
            through += line.len() as u64;
            let Some((id, model, tokens)) = claude_reply(line) else {
                continue;
            };
            if !self.remember(&id) {
                continue;
            }
            counted.push(UsageLine {
                at: clock::timestamp_now(),
                member: member.to_owned(),
                model: Some(model),
                tokens,
                source: Source::Claude,
                id: Some(id),
                place: Some(Place {
                    file: shown.clone(),
                    through,
                }),
            });
        }
        counted
    }
}

impl Supervisor {
    /// One look at the session's files: what they gained is added to the ledger; returns the
    /// folders to watch.
    fn count_usage(&self, follow: &mut Follow, transcript: &Transcript) -> Vec<PathBuf> {
        let main = transcript.main_file();
        let mut counted = Vec::new();
        for file in session_files(&main) {
            counted.extend(follow.read(&file, &self.name));
        }
        if let Err(err) = usage::append(self.team.paths(), &counted) {
            tracing::warn!("cannot add {}'s usage to the ledger: {err}", self.name);
        }
        folders(&main)
    }

    /// The last look, once the program has ended: what it wrote as it ended is counted too.
    pub(super) fn count_last_usage(&self, transcript: &Transcript) {
        let mut follow = Follow::resumed(self.team.paths(), &self.name);
        self.count_usage(&mut follow, transcript);
    }
}

/// Follows the member's transcript while its program runs, adding each reply to the ledger.
pub(super) async fn follow(supervisor: Arc<Supervisor>, transcript: Arc<Transcript>) {
    let mut follow = supervisor
        .off_runtime(|this| Follow::resumed(this.team.paths(), &this.name))
        .await;
    let mut armed: Option<(Vec<PathBuf>, AsyncWatcher)> = None;
    loop {
        let looked = {
            let transcript = Arc::clone(&transcript);
            supervisor
                .off_runtime(move |this| {
                    let folders = this.count_usage(&mut follow, &transcript);
                    (follow, folders)
                })
                .await
        };
        follow = looked.0;
        let folders = looked.1;
        if armed
            .as_ref()
            .is_none_or(|(watched, _)| *watched != folders)
        {
            let refs: Vec<&Path> = folders.iter().map(PathBuf::as_path).collect();
            armed = match AsyncWatcher::arm_all(&refs) {
                Ok(watcher) => Some((folders, watcher)),
                Err(err) => {
                    tracing::warn!("cannot watch {}'s transcript: {err}", supervisor.name);
                    None
                }
            };
            // What changed before the watch was armed is read at once.
            continue;
        }
        let Some((_, watcher)) = armed.as_mut() else {
            tokio::time::sleep(crate::store::watcher::SAFETY_RESCAN).await;
            continue;
        };
        let relevant = |name: &OsStr| transcript.names(name);
        if let Err(err) = watcher.wait(None, &relevant).await {
            tracing::warn!("{}'s transcript watch failed: {err}", supervisor.name);
            armed = None;
            tokio::time::sleep(crate::store::watcher::SAFETY_RESCAN).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two blocks of one real reply and a subagent's reply, as Claude Code 2.1.332 writes them
    /// (usage only; the rest of each entry trimmed).
    fn reply(id: &str, input: u64) -> String {
        format!(
            r#"{{"type":"assistant","message":{{"id":"{id}","model":"claude-opus-5-5","usage":{{"input_tokens":{input},"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5}}}}}}"#
        ) + "\n"
    }

    #[test]
    fn a_follow_counts_each_reply_once_reads_whole_lines_and_notices_a_new_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.jsonl");
        let mut follow = Follow::default();
        std::fs::write(&file, reply("msg_1", 10) + &reply("msg_1", 10)).unwrap();
        let first = follow.read(&file, "bob");
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].tokens.input, 10);
        let len = std::fs::metadata(&file).unwrap().len();
        assert_eq!(first[0].place.as_ref().unwrap().through, len / 2);
        // Half a line is left for the next read.
        let second = reply("msg_2", 7);
        let (head, tail) = second.split_at(20);
        let mut grown = std::fs::read_to_string(&file).unwrap() + head;
        std::fs::write(&file, &grown).unwrap();
        assert!(follow.read(&file, "bob").is_empty());
        grown.push_str(tail);
        std::fs::write(&file, &grown).unwrap();
        let read = follow.read(&file, "bob");
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].place.as_ref().unwrap().through, grown.len() as u64);
        // Replaced by another file: read from its start; what was counted stays counted once.
        std::fs::remove_file(&file).unwrap();
        std::fs::write(&file, reply("msg_2", 7) + &reply("msg_3", 1)).unwrap();
        let again = follow.read(&file, "bob");
        assert_eq!(again.len(), 1);
        assert_eq!(again[0].id.as_deref(), Some("msg_3"));
    }

    #[test]
    fn a_session_is_its_file_and_its_subagents_files() {
        let dir = tempfile::tempdir().unwrap();
        let main = dir.path().join("sid.jsonl");
        std::fs::write(&main, "").unwrap();
        let agents = dir.path().join("sid").join("subagents");
        std::fs::create_dir_all(&agents).unwrap();
        std::fs::write(agents.join("agent-a1.jsonl"), "").unwrap();
        std::fs::write(agents.join("agent-a1.meta.json"), "{}").unwrap();
        assert_eq!(
            session_files(&main),
            [main.clone(), agents.join("agent-a1.jsonl")]
        );
    }
}
