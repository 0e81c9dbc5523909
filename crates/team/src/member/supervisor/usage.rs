//! The supervisor's follow of its member's session files (docs/ARCHITECTURE.md, "Costs and
//! budgets"): a Claude Code session's `<id>.jsonl` and its subagents'
//! `<id>/subagents/agent-*.jsonl`, a Codex thread's rollout, a Gemini CLI session's
//! `chats/session-*.jsonl`; each read on from the last offset, whole lines only, through the one
//! watcher, each line read by its vendor's rule. Each model reply is counted once (by its id) into
//! the team's usage ledger, with where it was read, so a supervisor started again reads on from
//! there. A file that shrank or was replaced is read again from its start; the ids already counted
//! keep it from counting a reply twice.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::ffi::{OsStr, OsString};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::base::clock;
use crate::format::config::Member;
use crate::format::settings::Profile;
use crate::format::usage::{
    CodexLine, Place, Source, Tokens, UsageLine, claude_reply, codex_line, gemini_reply,
};
use crate::store::durable::{LineOffset, whole_lines_from};
use crate::store::paths::{ClaudePaths, CodexPaths, GeminiPaths, TeamPaths};
use crate::store::usage;
use crate::store::watcher::AsyncWatcher;

use super::seat::{OffRuntime, Supervisor};

/// The variable that names a project's folder when Claude Code's config folder is given.
const PROJECT_DIR_NAME_VAR: &str = "CLAUDE_CODE_PROJECT_DIR_NAME";

/// How many reply ids are remembered against counting one twice: the blocks of one reply are
/// written one after another.
const REMEMBERED_IDS: usize = 4096;

/// How many of a rollout's turns are remembered with their model: a response follows its turn's
/// `turn_context` closely.
const REMEMBERED_TURNS: usize = 256;

/// Where a member's program writes what its model replies used, by vendor.
pub(super) enum Sessions {
    /// A Claude Code session's transcript and its subagents'.
    Claude(Transcript),
    /// The rollout of the Codex thread config.json records as the member's session: Codex
    /// chooses the id, and `swarm hook codex` records it once a turn ends.
    Codex(CodexPaths),
    /// A Gemini CLI session's files.
    Gemini { gemini: GeminiPaths, id: String },
}

impl Sessions {
    /// Where `member`'s program, run in `cwd` with `env`, writes its usage: none for a program
    /// that writes none swarm knows (it may `swarm usage add`).
    pub(super) fn of(
        member: &Member,
        cwd: &Path,
        env: &BTreeMap<OsString, OsString>,
    ) -> Option<Self> {
        let var = |name: &str| env.get(OsStr::new(name)).map(OsString::as_os_str);
        match member.profile {
            // A member of an older config.json, without a profile, was followed as Claude Code.
            Some(Profile::Claude) | None => {
                Transcript::of(member.session_id.as_deref(), cwd, env).map(Self::Claude)
            }
            Some(Profile::Codex) => {
                CodexPaths::new(var("CODEX_HOME"), var("HOME")).map(Self::Codex)
            }
            Some(Profile::Gemini) => {
                let id = member.session_id.clone()?;
                let gemini = GeminiPaths::new(var("GEMINI_CLI_HOME"), var("HOME"))?;
                Some(Self::Gemini { gemini, id })
            }
            Some(_) => None,
        }
    }

    fn vendor(&self) -> Source {
        match self {
            Self::Claude(_) => Source::Claude,
            Self::Codex(_) => Source::Codex,
            Self::Gemini { .. } => Source::Gemini,
        }
    }

    /// Whether a file the watch reports may be one of the session's, or a folder on the way.
    fn names(&self, name: &OsStr, codex_thread: Option<&str>) -> bool {
        match self {
            Self::Claude(transcript) => transcript.names(name),
            Self::Codex(_) => {
                TeamPaths::is_config(name)
                    || name.to_str().is_some_and(|name| {
                        name.starts_with("rollout-")
                            && codex_thread.is_none_or(|id| name.ends_with(&format!("-{id}.jsonl")))
                    })
            }
            Self::Gemini { id, .. } => name.to_str().is_some_and(|name| {
                !name.starts_with("session-")
                    || id
                        .get(..8)
                        .is_some_and(|short| name.contains(&format!("-{short}.json")))
            }),
        }
    }
}

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
    /// The model of the last turn a rollout began, and of each recent turn by its id: a Codex
    /// response names only its turn.
    model: Option<String>,
    turns: HashMap<String, String>,
}

impl Followed {
    /// The reply `line` tells by `vendor`'s rule: its id, model and tokens.
    fn reply(&mut self, vendor: Source, line: &[u8]) -> Option<(String, Option<String>, Tokens)> {
        match vendor {
            Source::Codex => match codex_line(line)? {
                CodexLine::Turn { turn, model } => {
                    if self.turns.len() >= REMEMBERED_TURNS {
                        self.turns.clear();
                    }
                    self.turns.insert(turn, model.clone());
                    self.model = Some(model);
                    None
                }
                CodexLine::Reply { id, turn, tokens } => {
                    let model = turn
                        .and_then(|turn| self.turns.get(&turn))
                        .or(self.model.as_ref())
                        .cloned();
                    Some((id, model, tokens))
                }
            },
            Source::Gemini => {
                gemini_reply(line).map(|(id, model, tokens)| (id, Some(model), tokens))
            }
            Source::Claude | Source::Added => {
                claude_reply(line).map(|(id, model, tokens)| (id, Some(model), tokens))
            }
        }
    }
}

/// What the follow remembers.
#[derive(Default)]
pub(super) struct Follow {
    files: BTreeMap<PathBuf, Followed>,
    ids: HashSet<String>,
    order: VecDeque<String>,
    /// The Codex thread last followed and its rollout: found once, not at every look.
    rollout: Option<(String, PathBuf)>,
}

impl Follow {
    /// Where a follow by an earlier supervisor of `member` got to, from the ledger.
    fn resumed(paths: &TeamPaths, member: &str) -> Self {
        let mut follow = Self::default();
        let Ok((lines, _)) = usage::read_from(paths, LineOffset::default()) else {
            return follow;
        };
        for line in lines.iter().filter(|line| line.member == member) {
            if let Some(place) = &line.place {
                let followed = follow.files.entry(PathBuf::from(&place.file)).or_default();
                followed.offset = followed.offset.max(LineOffset(place.through));
                // A rollout read on past its turn's `turn_context` keeps that turn's model.
                followed.model.clone_from(&line.model);
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

    /// Reads what `file` gained since the last read and returns the replies not yet counted, each
    /// line read by `vendor`'s rule.
    fn read(&mut self, file: &Path, member: &str, vendor: Source) -> Vec<UsageLine> {
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
            let Some(followed) = self.files.get_mut(file) else {
                break;
            };
            let Some((id, model, tokens)) = followed.reply(vendor, line) else {
                continue;
            };
            if !self.remember(&id) {
                continue;
            }
            counted.push(UsageLine {
                at: clock::timestamp_now(),
                member: member.to_owned(),
                model,
                tokens,
                source: vendor,
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

impl Follow {
    /// The rollout of Codex thread `id`, looked up once while it stays where it was.
    fn rollout_of(&mut self, codex: &CodexPaths, id: &str) -> Option<PathBuf> {
        if let Some((known, file)) = &self.rollout
            && known == id
            && file.is_file()
        {
            return Some(file.clone());
        }
        let file = codex.rollout(id)?;
        self.rollout = Some((id.to_owned(), file.clone()));
        Some(file)
    }

    /// The Codex thread being followed, once known.
    fn codex_thread(&self) -> Option<&str> {
        self.rollout.as_ref().map(|(id, _)| id.as_str())
    }
}

impl Supervisor {
    /// The files of the member's sessions to read now, and the folders to watch for them.
    fn session_files(
        &self,
        follow: &mut Follow,
        sessions: &Sessions,
    ) -> (Vec<PathBuf>, Vec<PathBuf>) {
        match sessions {
            Sessions::Claude(transcript) => {
                let main = transcript.main_file();
                (session_files(&main), folders(&main))
            }
            Sessions::Codex(codex) => {
                // config.json tells the thread once a turn ended, and a new one after `/new`.
                let team_dir = self.team.paths().dir().to_path_buf();
                let thread = self
                    .team
                    .load()
                    .ok()
                    .and_then(|config| config.member(&self.name)?.session_id.clone());
                let rollout = thread.and_then(|id| follow.rollout_of(codex, &id));
                let folders = std::iter::once(team_dir)
                    .chain(
                        rollout
                            .iter()
                            .map(|file| crate::store::durable::parent(file).to_path_buf()),
                    )
                    .collect();
                (rollout.into_iter().collect(), folders)
            }
            Sessions::Gemini { gemini, id } => {
                let files = gemini.session_files(id);
                let mut folders: Vec<PathBuf> = files
                    .iter()
                    .map(|file| crate::store::durable::parent(file).to_path_buf())
                    .collect();
                folders.dedup();
                if folders.is_empty() {
                    // Until the session's file is made: the projects' folder (or the nearest
                    // folder above it), and each project's chats.
                    let projects = gemini.projects();
                    folders.extend(
                        projects
                            .ancestors()
                            .find(|dir| dir.is_dir())
                            .map(Path::to_path_buf),
                    );
                    folders.extend(gemini.chats_folders());
                }
                (files, folders)
            }
        }
    }

    /// One look at the session's files: what they gained is added to the ledger; returns the
    /// folders to watch.
    fn count_usage(&self, follow: &mut Follow, sessions: &Sessions) -> Vec<PathBuf> {
        let (files, folders) = self.session_files(follow, sessions);
        let mut counted = Vec::new();
        for file in files {
            counted.extend(follow.read(&file, &self.name, sessions.vendor()));
        }
        if let Err(err) = usage::append(self.team.paths(), &counted) {
            tracing::warn!("cannot add {}'s usage to the ledger: {err}", self.name);
        }
        folders
    }

    /// The last look, once the program has ended: what it wrote as it ended is counted too.
    pub(super) fn count_last_usage(&self, sessions: &Sessions) {
        let mut follow = Follow::resumed(self.team.paths(), &self.name);
        self.count_usage(&mut follow, sessions);
    }
}

/// Follows the member's session files while its program runs, adding each reply to the ledger.
pub(super) async fn follow(supervisor: Arc<Supervisor>, sessions: Arc<Sessions>) {
    let mut follow = supervisor
        .off_runtime(|this| Follow::resumed(this.team.paths(), &this.name))
        .await;
    let mut armed: Option<(Vec<PathBuf>, AsyncWatcher)> = None;
    loop {
        let looked = {
            let sessions = Arc::clone(&sessions);
            supervisor
                .off_runtime(move |this| {
                    let folders = this.count_usage(&mut follow, &sessions);
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
                    tracing::warn!("cannot watch {}'s session files: {err}", supervisor.name);
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
        let thread = follow.codex_thread().map(str::to_owned);
        let relevant = |name: &OsStr| sessions.names(name, thread.as_deref());
        if let Err(err) = watcher.wait(None, &relevant).await {
            tracing::warn!("{}'s session files watch failed: {err}", supervisor.name);
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
        let first = follow.read(&file, "bob", Source::Claude);
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].tokens.input, 10);
        let len = std::fs::metadata(&file).unwrap().len();
        assert_eq!(first[0].place.as_ref().unwrap().through, len / 2);
        // Half a line is left for the next read.
        let second = reply("msg_2", 7);
        let (head, tail) = second.split_at(20);
        let mut grown = std::fs::read_to_string(&file).unwrap() + head;
        std::fs::write(&file, &grown).unwrap();
        assert!(follow.read(&file, "bob", Source::Claude).is_empty());
        grown.push_str(tail);
        std::fs::write(&file, &grown).unwrap();
        let read = follow.read(&file, "bob", Source::Claude);
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].place.as_ref().unwrap().through, grown.len() as u64);
        // Replaced by another file: read from its start; what was counted stays counted once.
        std::fs::remove_file(&file).unwrap();
        std::fs::write(&file, reply("msg_2", 7) + &reply("msg_3", 1)).unwrap();
        let again = follow.read(&file, "bob", Source::Claude);
        assert_eq!(again.len(), 1);
        assert_eq!(again[0].id.as_deref(), Some("msg_3"));
    }

    /// A turn's `turn_context` and a response's two usage records, as Codex 0.169.0 writes them
    /// (trimmed).
    fn turn(turn: &str, model: &str) -> String {
        format!(
            r#"{{"type":"turn_context","payload":{{"turn_id":"{turn}","cwd":"/w","model":"{model}"}}}}"#
        ) + "\n"
    }

    fn response(turn: &str, id: &str, input: u64) -> String {
        let usage = format!(
            r#"{{"input_tokens":{input},"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0,"total_tokens":{}}}"#,
            input + 1
        );
        format!(
            r#"{{"type":"token_usage_record","payload":{{"turn_id":"{turn}","response_id":"{id}","usage":{usage}}}}}"#
        ) + "\n"
            + &format!(
                r#"{{"type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{usage},"last_token_usage":{usage}}}}}}}"#
            )
            + "\n"
    }

    #[test]
    fn a_rollout_prices_each_response_by_its_turns_model_and_counts_it_once() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("rollout.jsonl");
        let mut follow = Follow::default();
        std::fs::write(
            &file,
            turn("t1", "gpt-a") + &response("t1", "resp_1", 10) + &turn("t2", "gpt-b"),
        )
        .unwrap();
        let first = follow.read(&file, "cx", Source::Codex);
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].model.as_deref(), Some("gpt-a"));
        assert_eq!(first[0].source, Source::Codex);
        // A response of the earlier turn after the next began keeps its own turn's model; the
        // same response told again is not counted again.
        let grown = std::fs::read_to_string(&file).unwrap()
            + &response("t2", "resp_2", 20)
            + &response("t1", "resp_3", 30)
            + &response("t2", "resp_2", 20);
        std::fs::write(&file, grown).unwrap();
        let read = follow.read(&file, "cx", Source::Codex);
        let models: Vec<_> = read
            .iter()
            .map(|line| (line.model.as_deref().unwrap(), line.tokens.input))
            .collect();
        assert_eq!(models, [("gpt-b", 20), ("gpt-a", 30)]);
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
