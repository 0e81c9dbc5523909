//! One member's inbox (`inboxes/<name>.json`) and history (`history/<name>.jsonl`).
//!
//! Every change goes through [`Mailbox::update`]: all three locks, an exclusive create of `[]` when
//! the file is missing, repair of a corrupt file or invalid elements (moved aside, never dropped),
//! then an atomic, durable rewrite (docs/ARCHITECTURE.md, "The path of one message").
//!
//! Concurrent writers share rewrites (group commit). A writer that finds the inbox locked makes its
//! messages durable in a spool file (`inboxes/.spool/<name>/`) while it waits; whoever holds the lock
//! merges every spooled message into its one rewrite, then removes the spool files. A writer whose
//! messages were merged by another only has to see that; it still returns only once they are in the
//! inbox. A writer that fails withdraws its spool file under the flock, so a failed append is never
//! delivered later. A spool file left by a writer that died is merged by the next update.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::base::{clock, process};
use crate::error::{Error, Result};
use crate::format::message::InboxMessage;
use crate::store::durable::{
    self, append_lines_durably, atomic_write, create_exclusive, private_dir,
};
use crate::store::lock::{FileLock, Flock, Incomplete, Queue, STALE_AFTER};
use crate::store::paths::{MailboxPaths, SetAsideKind, SpoolEntry, SpoolFile, TeamPaths};

#[derive(Debug, Clone)]
pub struct Mailbox {
    paths: MailboxPaths,
}

/// Files moved aside from an inbox, for `status` to report.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SetAside {
    pub path: PathBuf,
    pub reason: &'static str,
}

impl Mailbox {
    pub fn new(team: &TeamPaths, member: &str) -> Self {
        Self {
            paths: team.mailbox(member),
        }
    }

    pub fn inbox_path(&self) -> &Path {
        &self.paths.inbox
    }

    pub fn history_path(&self) -> &Path {
        &self.paths.history
    }

    /// The inbox's file name, which is what the directory watcher reports.
    pub fn file_name(&self) -> &std::ffi::OsStr {
        self.paths.inbox.file_name().unwrap_or_default()
    }

    /// Creates the inbox as `[]` unless it exists; returns whether it created it.
    pub fn ensure(&self) -> Result<bool> {
        private_dir(&self.paths.root, durable::parent(&self.paths.inbox))?;
        create_exclusive(&self.paths.inbox, b"[]")
    }

    /// Removes the inbox file if it holds no message at all, read or not: the undoing of an
    /// [`Mailbox::ensure`] that created it. Under the inbox locks, so no append is lost: one that
    /// comes after finds no file and creates it again.
    pub fn remove_if_empty(&self) -> Result<bool> {
        let _lock = FileLock::acquire(&self.paths.lock)?;
        let Some(bytes) = durable::read_if_exists(&self.paths.inbox)? else {
            return Ok(false);
        };
        let empty = serde_json::from_slice::<Vec<Value>>(&bytes).is_ok_and(|all| all.is_empty());
        if !empty || !self.merge_spool(&mut Vec::new())?.is_empty() {
            return Ok(false);
        }
        fs::remove_file(&self.paths.inbox)
            .map_err(|err| Error::io("remove", &self.paths.inbox, err))?;
        Ok(true)
    }

    /// Adds messages to the end of the inbox. Durable, and in the inbox, when it returns; on an
    /// error, they are not in the inbox and never will be.
    pub fn append(&self, messages: &[InboxMessage]) -> Result<()> {
        private_dir(&self.paths.root, durable::parent(&self.paths.inbox))?;
        let busy = match Queue::open(&self.paths.lock)?.try_lock()? {
            Ok(flock) => {
                let lock = FileLock::complete_deferring_atm(flock, &self.paths.lock)
                    .map_err(|e| e.error)?;
                return self.update_locked(&lock, |unread| {
                    unread.extend_from_slice(messages);
                    Ok(((), true))
                });
            }
            Err(busy) => busy,
        };
        // Another writer holds the inbox, or others wait for it: spool, so one rewrite can commit
        // us all, and wait our turn. If a holder has merged our spool file by the time we get the
        // flock, our messages are durable already.
        let spooled = self.spool(messages)?;
        let flock = match busy.lock() {
            Ok(flock) => flock,
            Err(err) => return Self::withdraw(&spooled, err),
        };
        if !spooled.exists() {
            return Ok(());
        }
        let lock = match FileLock::complete_deferring_atm(flock, &self.paths.lock) {
            Ok(lock) => lock,
            // `_flock` keeps the flock held while we withdraw.
            Err(Incomplete {
                flock: _flock,
                error,
            }) => return Self::withdraw(&spooled, error),
        };
        match self.update_locked(&lock, |_| Ok(((), false))) {
            Ok(()) => Ok(()),
            Err(err) => Self::withdraw(&spooled, err),
        }
    }

    /// Takes back the spool file of an append that failed, so that a failed send is never
    /// delivered by a later one. Called while holding swarm's flock, where no merger is at work:
    /// a merger removes the spool files it took only once the inbox is durable, so a file already
    /// gone was committed, and the append succeeded after all. (Only if waiting for the flock
    /// itself failed, an OS error on a file already open, is this done without it.)
    fn withdraw(spooled: &Path, err: Error) -> Result<()> {
        match fs::remove_file(spooled) {
            Ok(()) => Err(err),
            Err(gone) if gone.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(stuck) => {
                tracing::error!(
                    spool = %spooled.display(),
                    "cannot withdraw the spool file of a failed send: {stuck}"
                );
                Err(err)
            }
        }
    }

    /// Writes messages to a spool file of their own, atomically (a merger never sees part of it)
    /// but without syncing it: the writer returns only once its messages are in the durably
    /// rewritten inbox, so the spool file never has to survive a crash on its own. The staging
    /// name starts with a dot and carries the writer's pid, for [`Mailbox::merge_spool`] to
    /// clean up after a writer killed in between.
    fn spool(&self, messages: &[InboxMessage]) -> Result<PathBuf> {
        private_dir(&self.paths.root, &self.paths.spool)?;
        // The real clock, not `clock::now_ms`: spool files of all processes sort by it.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_nanos());
        let SpoolFile { staging, path } = self.paths.spool_file(
            nanos,
            std::process::id(),
            &crate::base::ids::fresh().simple().to_string(),
        );
        let bytes = serde_json::to_vec(messages).map_err(|err| Error::runtime(err.to_string()))?;
        let written = durable::create_unsynced(&staging, &bytes).and_then(|()| {
            fs::rename(&staging, &path).map_err(|err| Error::io("rename", &path, err))
        });
        if written.is_err() {
            let _ = fs::remove_file(&staging);
        }
        written.map(|()| path)
    }

    /// Moves every spooled message not already unread into `unread`, oldest spool file first.
    /// Returns the files merged, to remove once the inbox is durable.
    fn merge_spool(&self, unread: &mut Vec<InboxMessage>) -> Result<Vec<PathBuf>> {
        let entries = match fs::read_dir(&self.paths.spool) {
            Ok(entries) => entries,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(Error::io("list", &self.paths.spool, err)),
        };
        let mut files = Vec::new();
        for entry in entries.filter_map(std::result::Result::ok) {
            let path = entry.path();
            // A link is no spool file of swarm's: what it points at is never read, nor the link
            // removed, which is left for the user to look at.
            if entry.file_type().is_ok_and(|kind| kind.is_symlink()) {
                tracing::error!(
                    "spool file {} is a symlink; leaving it unread",
                    path.display()
                );
                continue;
            }
            match SpoolEntry::of(path.file_name().unwrap_or_default()) {
                SpoolEntry::Staging { writer } => remove_if_abandoned(&path, writer),
                SpoolEntry::Ready => files.push(path),
            }
        }
        files.sort();
        let mut present: HashSet<String> = unread.iter().map(|m| m.id().into_owned()).collect();
        let mut merged = Vec::with_capacity(files.len());
        for file in files {
            let Some(bytes) = durable::read_if_exists(&file)? else {
                continue;
            };
            let Ok(messages) = serde_json::from_slice::<Vec<InboxMessage>>(&bytes) else {
                // Not returned, so not removed with the merged ones: it stays for the user.
                tracing::error!(
                    "spool file {} is unreadable; leaving it in place",
                    file.display()
                );
                continue;
            };
            for message in messages {
                if present.insert(message.id().into_owned()) {
                    unread.push(message);
                }
            }
            merged.push(file);
        }
        Ok(merged)
    }

    /// Removes up to `max` unread messages that `pick` accepts, oldest first, after appending them to
    /// history, and returns those it removed. A crash between the two delivers them again with the
    /// same `msg_id`; it never loses one.
    pub fn consume(
        &self,
        max: Option<usize>,
        pick: impl FnMut(&InboxMessage) -> bool,
    ) -> Result<Vec<InboxMessage>> {
        self.take(max, pick, Record::BeforeDelivery, |_| Ok(()))
            .map(|(_, taken)| taken)
    }

    /// [`Mailbox::consume`] for a consumer that shows what it takes (`recv`, `watch --consume`):
    /// `deliver` gets the chosen messages once they are in history and before they leave the
    /// inbox, and they leave it only if `deliver` succeeded. A failed delivery (a closed stdout)
    /// leaves them unread, and returns its error; their history record is harmless, as every
    /// reader of history shows each `msg_id` once. Returns what was delivered.
    ///
    /// A message another tool took from the inbox between the choice and the rewrite is delivered
    /// by both: at least once, never lost.
    pub fn consume_delivering(
        &self,
        max: Option<usize>,
        pick: impl FnMut(&InboxMessage) -> bool,
        deliver: impl FnOnce(&[InboxMessage]) -> Result<()>,
    ) -> Result<Vec<InboxMessage>> {
        self.take(max, pick, Record::BeforeDelivery, deliver)
            .map(|(chosen, _)| chosen)
    }

    /// [`Mailbox::consume_delivering`] for a consumer that hands messages on rather than showing
    /// them (the node sending them to another host): history records them only once `forward`
    /// succeeded, as what left; then they leave the inbox. A failed forward leaves them unread and
    /// unrecorded. Returns what was forwarded.
    pub fn consume_forwarding(
        &self,
        max: Option<usize>,
        forward: impl FnOnce(&[InboxMessage]) -> Result<()>,
    ) -> Result<Vec<InboxMessage>> {
        self.take(max, |_| true, Record::AfterDelivery, forward)
            .map(|(chosen, _)| chosen)
    }

    /// Appends those of `messages` this member has not seen: one whose `msg_id` the inbox holds
    /// (read or not), or history records, is skipped, as is a second copy within `messages`.
    /// History is read under the inbox locks: a consumer records a message in history before it
    /// removes it from the inbox under those locks, so a message consumed by then is found in
    /// one or the other. `delivered` carries what was read of history from one call to the next.
    /// Durable when it returns; returns how many were appended.
    pub fn append_unseen(
        &self,
        messages: &[InboxMessage],
        delivered: &mut Delivered,
    ) -> Result<usize> {
        self.update(|inbox| {
            delivered.catch_up(self)?;
            let mut present: HashSet<String> = inbox
                .iter()
                .map(|message| message.id().into_owned())
                .collect();
            let mut added = 0;
            for message in messages {
                let id = message.id();
                if delivered.ids.contains(id.as_ref()) || !present.insert(id.into_owned()) {
                    continue;
                }
                inbox.push(message.clone());
                added += 1;
            }
            Ok((added, added > 0))
        })
    }

    /// The one consume: choose, record in history and deliver (in the order `record` says),
    /// rewrite. Returns the messages chosen and those of them still unread under the lock, which
    /// the rewrite removed.
    ///
    /// swarm's consumers of one inbox take turns on their own flock, held from the choice to the
    /// rewrite, so two of them never choose, record, or deliver the same message. Writers never
    /// take that lock: the messages are chosen from a lock-free read, recorded in history and
    /// delivered before the inbox locks are taken, so writers wait out neither the history fsync
    /// nor the delivery. Under those locks, the chosen messages still unread (another tool may have
    /// taken one meanwhile) are removed.
    fn take(
        &self,
        max: Option<usize>,
        mut pick: impl FnMut(&InboxMessage) -> bool,
        record: Record,
        deliver: impl FnOnce(&[InboxMessage]) -> Result<()>,
    ) -> Result<(Vec<InboxMessage>, Vec<InboxMessage>)> {
        private_dir(&self.paths.root, durable::parent(&self.paths.inbox))?;
        let _turn = Flock::wait(&self.paths.consumers)?;
        let chosen: Vec<InboxMessage> = self
            .peek()?
            .into_iter()
            .filter(|message| pick(message))
            .take(max.unwrap_or(usize::MAX))
            .collect();
        if chosen.is_empty() {
            return Ok((chosen, Vec::new()));
        }
        match record {
            Record::BeforeDelivery => {
                self.record_history(&chosen)?;
                deliver(&chosen)?;
            }
            Record::AfterDelivery => {
                deliver(&chosen)?;
                self.record_history(&chosen)?;
            }
            Record::Never => deliver(&chosen)?,
        }
        let ids: HashSet<String> = chosen.iter().map(|m| m.id().into_owned()).collect();
        let taken = self.update(|unread| {
            let mut taken = Vec::new();
            unread.retain(|message| {
                let take = ids.contains(message.id().as_ref());
                if take {
                    taken.push(message.clone());
                }
                !take
            });
            let changed = !taken.is_empty();
            Ok((taken, changed))
        })?;
        Ok((chosen, taken))
    }

    /// Takes back unread messages with these ids, from a send being undone, and returns the ids
    /// it removed. One already consumed, or marked read by another tool, stays where it is: it
    /// was delivered.
    pub fn retract(&self, ids: &HashSet<String>) -> Result<HashSet<String>> {
        self.update(|unread| {
            let mut removed = HashSet::new();
            unread.retain(|message| {
                let id = message.id();
                if message.is_read() || !ids.contains(id.as_ref()) {
                    return true;
                }
                removed.insert(id.into_owned());
                false
            });
            let changed = !removed.is_empty();
            Ok((removed, changed))
        })
    }

    /// The unread messages, read without taking the lock (writers replace the file atomically).
    /// A message another tool marked `"read": true` is not unread: it stays in the file, untouched,
    /// but is never counted, consumed, pasted or shown as unread.
    ///
    /// One bad inbox hides no one else's (docs/ARCHITECTURE.md, "Messages"): what is no regular
    /// file where the inbox belongs (a FIFO, a folder: looked at, never opened), or a file that
    /// cannot be read, holds nothing unread, with one warning line.
    pub fn peek(&self) -> Result<Vec<InboxMessage>> {
        if let Some(kind) = self.irregular() {
            durable::warn_passed_over(
                &self.paths.inbox,
                format_args!("{kind}, not an inbox; swarm leaves it alone"),
            );
            return Ok(Vec::new());
        }
        let bytes = match durable::read_if_exists(&self.paths.inbox) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(Vec::new()),
            Err(err) => {
                durable::warn_passed_over(&self.paths.inbox, format_args!("{err}"));
                return Ok(Vec::new());
            }
        };
        let mut unread = self.parsed(&bytes)?;
        unread.retain(|message| !message.is_read());
        Ok(unread)
    }

    /// What is where the inbox belongs when it is no regular file ("a FIFO", "a folder"), which
    /// no read or write of swarm's touches; `None` for a file or nothing.
    pub fn irregular(&self) -> Option<&'static str> {
        durable::irregular(&self.paths.inbox)
    }

    /// Whether the inbox reads whole now (or is absent): no writer is half-way through it. Takes
    /// no lock: a watcher that only looks waits for the next change rather than for the lock.
    pub fn reads_whole(&self) -> bool {
        match durable::read_if_exists(&self.paths.inbox) {
            Ok(Some(bytes)) => parse_clean(&bytes).is_some(),
            Ok(None) => true,
            Err(_) => false,
        }
    }

    /// The unread messages as the file holds them now, taking no lock and repairing nothing: for
    /// completing a request id, which must write nothing and wait for no one. A file that cannot
    /// be read, or holds anything invalid, gives none.
    pub fn peek_as_is(&self) -> Vec<InboxMessage> {
        let Ok(Some(bytes)) = durable::read_if_exists(&self.paths.inbox) else {
            return Vec::new();
        };
        let mut unread = parse_clean(&bytes).unwrap_or_default();
        unread.retain(|message| !message.is_read());
        unread
    }

    /// Every message in the inbox file, read or not, for lookups such as a protocol request.
    /// A file that does not parse, or holds invalid elements, is repaired under the lock first.
    pub fn messages(&self) -> Result<Vec<InboxMessage>> {
        match durable::read_if_exists(&self.paths.inbox)? {
            Some(bytes) => self.parsed(&bytes),
            None => Ok(Vec::new()),
        }
    }

    /// The messages in `bytes`, read from the inbox; when they do not parse, or hold invalid
    /// elements, the inbox is repaired under the lock and read there.
    fn parsed(&self, bytes: &[u8]) -> Result<Vec<InboxMessage>> {
        if let Some(messages) = parse_clean(bytes) {
            return Ok(messages);
        }
        // A foreign writer may have been mid-write; decide under the lock.
        self.update(|messages| Ok((messages.clone(), false)))
    }

    /// Messages already delivered, oldest first, each `msg_id` once (a consumer that crashed
    /// between its history append and its inbox rewrite leaves a message recorded twice). Lines
    /// that do not parse are skipped with a warning; a torn last line is possible after a crash.
    pub fn history(&self) -> Result<Vec<InboxMessage>> {
        let (mut delivered, _) = self.history_since(0)?;
        let mut seen = HashSet::new();
        delivered.retain(|message| seen.insert(message.id().into_owned()));
        Ok(delivered)
    }

    /// What `inbox --all` lists: the delivered messages, then the unread ones, each message once.
    /// The inbox is read first: a message consumed after that read is in the history read next,
    /// and one found in both (recorded, not yet removed) is listed as delivered.
    pub fn listing(&self) -> Result<(Vec<InboxMessage>, Vec<InboxMessage>)> {
        let mut unread = self.peek()?;
        let delivered = self.history()?;
        let recorded: HashSet<Cow<'_, str>> = delivered.iter().map(InboxMessage::id).collect();
        unread.retain(|message| !recorded.contains(&message.id()));
        Ok((delivered, unread))
    }

    /// The history file's length now: where [`Mailbox::history_since`] picks up later.
    pub(crate) fn history_len(&self) -> Result<u64> {
        match fs::metadata(&self.paths.history) {
            Ok(meta) => Ok(meta.len()),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(0),
            Err(err) => Err(Error::io("read", &self.paths.history, err)),
        }
    }

    /// Messages delivered since byte `offset` of the history file, and the offset to resume from.
    /// Only complete lines count: a line still being appended is read next time.
    pub fn history_since(&self, offset: u64) -> Result<(Vec<InboxMessage>, u64)> {
        let Some(mut file) = durable::open_existing(&self.paths.history)? else {
            return Ok((Vec::new(), 0));
        };
        let len = file
            .metadata()
            .map_err(|err| Error::io("read", &self.paths.history, err))?
            .len();
        // A history file replaced by a shorter one starts over from its end.
        if len < offset {
            return Ok((Vec::new(), len));
        }
        let mut bytes = Vec::new();
        std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(offset))
            .and_then(|_| std::io::Read::read_to_end(&mut file, &mut bytes))
            .map_err(|err| Error::io("read", &self.paths.history, err))?;
        let complete = bytes
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |end| end + 1);
        let mut delivered = Vec::new();
        for line in bytes[..complete].split(|b| *b == b'\n') {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<InboxMessage>(line) {
                Ok(message) => delivered.push(message),
                Err(err) => tracing::warn!(
                    file = %self.paths.history.display(),
                    "skipping unreadable history line: {err}"
                ),
            }
        }
        Ok((delivered, offset + complete as u64))
    }

    /// Corrupt files and invalid elements that were moved aside from this inbox.
    pub fn set_aside(&self) -> Vec<SetAside> {
        let dir = durable::parent(&self.paths.inbox);
        let Ok(entries) = fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut found: Vec<SetAside> = entries
            .filter_map(|entry| {
                let name = entry.ok()?.file_name();
                let reason = match self.paths.aside_kind(&name)? {
                    SetAsideKind::Corrupt => "corrupt inbox file",
                    SetAsideKind::Invalid => "invalid messages",
                    SetAsideKind::TooLarge => "messages too large to cross hosts",
                };
                Some(SetAside {
                    path: dir.join(&name),
                    reason,
                })
            })
            .collect();
        found.sort_by(|a, b| a.path.cmp(&b.path));
        found
    }

    /// The one read-modify-write of an inbox. `change` returns its result and whether it changed
    /// the messages; the file is rewritten only when something changed or was repaired.
    /// `change` may run more than once: again on what the inbox holds then, when atm wrote it
    /// between the read and the rename.
    pub fn update<R>(
        &self,
        change: impl FnMut(&mut Vec<InboxMessage>) -> Result<(R, bool)>,
    ) -> Result<R> {
        private_dir(&self.paths.root, durable::parent(&self.paths.inbox))?;
        self.update_locked(&FileLock::acquire_deferring_atm(&self.paths.lock)?, change)
    }

    /// The read-modify-write itself, for a caller that holds `lock` (and keeps holding it after,
    /// to undo what it did if this fails). swarm's flock and the lock directory keep swarm and
    /// Claude Code out throughout; atm's flock is taken only to check that atm did not write
    /// since the read and to rename (docs/ARCHITECTURE.md, "Locks"). When it did, the change is
    /// made again on what it wrote; after a few such turns, atm's flock is held from the read on.
    fn update_locked<R>(
        &self,
        lock: &FileLock,
        mut change: impl FnMut(&mut Vec<InboxMessage>) -> Result<(R, bool)>,
    ) -> Result<R> {
        /// Turns in which atm may write between a read and its rename before swarm holds atm's
        /// flock from the read on.
        const CHECKED_TURNS: u32 = 3;
        create_exclusive(&self.paths.inbox, b"[]")?;
        let mut turn = 0;
        loop {
            turn += 1;
            let held = if turn > CHECKED_TURNS {
                lock.atm()?
            } else {
                None
            };
            // Missing again only if another tool removed it meanwhile: then it holds nothing.
            let read = durable::read_to_rewrite(&self.paths.inbox)?;
            let bytes = read.clone().unwrap_or_else(|| b"[]".to_vec());
            let (mut unread, repaired) = self.load_repairing(&bytes)?;
            let merged = self.merge_spool(&mut unread)?;
            let (result, changed) = change(&mut unread)?;
            if changed || repaired || !merged.is_empty() {
                // Pretty-printed with a 2-space indent, as Claude Code writes it.
                let next = durable::replacement(&self.paths.inbox, |out: &mut dyn Write| {
                    serde_json::to_writer_pretty(out, &unread)?;
                    Ok(())
                })?;
                let atm = match held {
                    Some(held) => Some(held),
                    None => lock.atm()?,
                };
                if turn <= CHECKED_TURNS && durable::read_to_rewrite(&self.paths.inbox)? != read {
                    // atm wrote meanwhile: its message is in the file, not in `unread`.
                    continue;
                }
                let renamed = next.rename()?;
                drop(atm);
                renamed.sync();
            }
            // Only now are the spooled messages durable in the inbox. A crash before these
            // removals merges them again next time; their ids keep them from appearing twice.
            for file in merged {
                let _ = fs::remove_file(file);
            }
            return Ok(result);
        }
    }

    /// Parses inbox bytes held under the lock, moving aside whatever cannot be kept.
    fn load_repairing(&self, bytes: &[u8]) -> Result<(Vec<InboxMessage>, bool)> {
        let Ok(elements) = serde_json::from_slice::<Vec<Value>>(bytes) else {
            let aside = self.aside_path(SetAsideKind::Corrupt);
            fs::rename(&self.paths.inbox, &aside)
                .map_err(|err| Error::io("move aside corrupt inbox", &self.paths.inbox, err))?;
            tracing::error!(
                inbox = %self.paths.inbox.display(),
                moved_to = %aside.display(),
                "inbox was not a JSON array; moved it aside and started a fresh one"
            );
            create_exclusive(&self.paths.inbox, b"[]")?;
            return Ok((Vec::new(), false));
        };
        let mut unread = Vec::with_capacity(elements.len());
        let mut invalid = Vec::new();
        for element in elements {
            match InboxMessage::from_value(element) {
                Ok(message) => unread.push(message),
                Err(element) => invalid.push(element),
            }
        }
        if invalid.is_empty() {
            return Ok((unread, false));
        }
        let aside = self.aside_path(SetAsideKind::Invalid);
        atomic_write(&aside, |out| {
            serde_json::to_writer_pretty(&mut *out, &invalid)?;
            Ok(())
        })?;
        tracing::error!(
            inbox = %self.paths.inbox.display(),
            moved_to = %aside.display(),
            count = invalid.len(),
            "inbox held messages without string from/text/timestamp; moved them aside"
        );
        Ok((unread, true))
    }

    /// Moves the unread messages `pick` chooses to a file of their own beside the inbox, for
    /// `status` to report: what a consumer cannot hand on (a message larger than the NATS server
    /// carries). In the consumers' turn, like a consume; the file is durable before they leave
    /// the inbox, and history does not record them: they were neither shown nor sent. Returns the
    /// file and what it holds, `None` when nothing was chosen.
    pub fn set_aside_where(
        &self,
        kind: SetAsideKind,
        pick: impl FnMut(&InboxMessage) -> bool,
    ) -> Result<Option<(PathBuf, Vec<InboxMessage>)>> {
        let mut kept = None;
        let (chosen, _) = self.take(None, pick, Record::Never, |chosen| {
            let aside = self.aside_path(kind);
            atomic_write(&aside, |out| {
                serde_json::to_writer_pretty(&mut *out, chosen)?;
                Ok(())
            })?;
            kept = Some(aside);
            Ok(())
        })?;
        Ok(kept.map(|aside| (aside, chosen)))
    }

    /// Where to move something aside now, never an existing file.
    fn aside_path(&self, kind: SetAsideKind) -> PathBuf {
        let ms = clock::now_ms();
        let mut attempt = 0;
        loop {
            let candidate = self.paths.aside(kind, ms, attempt);
            if !candidate.exists() {
                return candidate;
            }
            attempt += 1;
        }
    }

    fn record_history(&self, delivered: &[InboxMessage]) -> Result<()> {
        private_dir(&self.paths.root, durable::parent(&self.paths.history))?;
        let mut lines = Vec::new();
        for message in delivered {
            // Delivered is read, as Claude Code marks a message it has shown.
            let mut message = message.clone();
            message.set_field("read", Value::Bool(true));
            serde_json::to_writer(&mut lines, &message)
                .map_err(|err| Error::runtime(err.to_string()))?;
            lines.push(b'\n');
        }
        append_lines_durably(&self.paths.history, &lines)
    }
}

/// When a consume records the messages it takes in history: before it shows them (a reader), or
/// once it has handed them on (the node).
#[derive(Debug, Clone, Copy)]
enum Record {
    BeforeDelivery,
    AfterDelivery,
    /// Neither delivered nor sent: kept elsewhere ([`Mailbox::set_aside_where`]).
    Never,
}

/// The `msg_id`s one member's history holds, read as it grows: for [`Mailbox::append_unseen`].
#[derive(Debug, Default)]
pub struct Delivered {
    ids: HashSet<String>,
    /// How far the history file has been read.
    offset: u64,
}

impl Delivered {
    /// Reads what history gained since the last call; a history file replaced by a shorter one
    /// is read again from its start.
    fn catch_up(&mut self, mailbox: &Mailbox) -> Result<()> {
        if mailbox.history_len()? < self.offset {
            *self = Self::default();
        }
        let (recorded, offset) = mailbox.history_since(self.offset)?;
        self.ids
            .extend(recorded.iter().map(|message| message.id().into_owned()));
        self.offset = offset;
        Ok(())
    }
}

/// Removes a spool staging file whose writer was killed before it renamed it into place: its
/// pid (in the name) is gone, or it is older than a lock directory may be. Deleting the file of a
/// writer that is merely slow is safe too: its rename fails, and its send with it.
fn remove_if_abandoned(path: &Path, writer: Option<i32>) {
    let old = fs::symlink_metadata(path)
        .and_then(|meta| meta.modified())
        .ok()
        .and_then(|modified| modified.elapsed().ok())
        .is_some_and(|age| age > STALE_AFTER);
    if old || writer.is_none_or(|pid| !process::alive(pid)) {
        tracing::info!(file = %path.display(), "removing a spool file a killed writer left");
        let _ = fs::remove_file(path);
    }
}

/// Unread messages if the bytes are a well-formed inbox with only valid elements.
fn parse_clean(bytes: &[u8]) -> Option<Vec<InboxMessage>> {
    serde_json::from_slice::<Vec<Value>>(bytes)
        .ok()?
        .into_iter()
        .map(|element| InboxMessage::from_value(element).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::paths::Home;

    /// `messages` as history keeps them: marked read.
    fn read(messages: &[InboxMessage]) -> Vec<InboxMessage> {
        messages
            .iter()
            .cloned()
            .map(|mut message| {
                message.set_field("read", Value::Bool(true));
                message
            })
            .collect()
    }

    fn mailbox() -> (tempfile::TempDir, Mailbox) {
        let dir = tempfile::tempdir().unwrap();
        let team = Home::new(dir.path().to_path_buf()).team("t");
        let mailbox = Mailbox::new(&team, "bob");
        (dir, mailbox)
    }

    fn unread_texts(mailbox: &Mailbox) -> Vec<String> {
        let unread = mailbox.peek().unwrap();
        unread.iter().map(|m| m.text().to_owned()).collect()
    }

    /// Whether atm's lock on the inbox is free: what atm's `try_lock` would find.
    fn atm_lock_free(mailbox: &Mailbox) -> bool {
        let atm = mailbox.paths.lock.atm.as_ref().unwrap();
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(atm)
            .unwrap();
        file.try_lock().is_ok()
    }

    /// atm gives up on its lock after 1.55 s and queues the message where only its daemon
    /// delivers it; swarm writers that held the lock from their read to their rename, one after
    /// another, kept it from atm that long. While swarm reads, changes and writes the next
    /// version of an inbox, atm's lock is free; swarm takes it only to check and rename.
    #[test]
    fn atms_lock_is_free_while_swarm_reads_and_writes_an_inbox() {
        let (_dir, mailbox) = mailbox();
        mailbox
            .append(&[InboxMessage::new("a", "one", None, None)])
            .unwrap();
        let mut free = Vec::new();
        mailbox
            .update(|unread| {
                free.push(atm_lock_free(&mailbox));
                unread.push(InboxMessage::new("a", "two", None, None));
                Ok(((), true))
            })
            .unwrap();
        assert_eq!(free, [true]);
        assert_eq!(unread_texts(&mailbox), ["one", "two"]);
    }

    /// A message atm writes between swarm's read and its rename is kept: swarm sees the inbox
    /// changed under atm's lock, and makes its change again on what atm wrote.
    #[test]
    fn what_atm_writes_between_swarms_read_and_rename_is_kept() {
        let (_dir, mailbox) = mailbox();
        mailbox
            .append(&[InboxMessage::new("a", "one", None, None)])
            .unwrap();
        let mut turns = 0;
        mailbox
            .update(|unread| {
                turns += 1;
                if turns == 1 {
                    // atm's write, as its `inbox_append` does it: under its flock, a new file
                    // exchanged into place.
                    let atm = mailbox.paths.lock.atm.as_ref().unwrap();
                    let lock = fs::File::create(atm).unwrap();
                    lock.try_lock()
                        .expect("atm finds its lock free while swarm writes the next version");
                    let mut theirs: Vec<Value> =
                        serde_json::from_slice(&fs::read(&mailbox.paths.inbox).unwrap()).unwrap();
                    theirs.push(serde_json::json!({"from": "atm0", "text": "from atm",
                        "timestamp": "2026-01-01T00:00:00Z", "read": false}));
                    let tmp = mailbox.paths.inbox.with_extension("tmp");
                    fs::write(&tmp, serde_json::to_vec_pretty(&theirs).unwrap()).unwrap();
                    fs::rename(&tmp, &mailbox.paths.inbox).unwrap();
                    lock.unlock().unwrap();
                }
                unread.push(InboxMessage::new("a", "two", None, None));
                Ok(((), true))
            })
            .unwrap();
        assert_eq!(turns, 2, "the change was made again on what atm wrote");
        assert_eq!(unread_texts(&mailbox), ["one", "from atm", "two"]);
    }

    #[test]
    fn append_then_consume_moves_messages_to_history() {
        let (_dir, mailbox) = mailbox();
        let first = InboxMessage::new("a", "one", None, None);
        let second = InboxMessage::new("a", "two", None, None);
        mailbox.append(&[first.clone(), second.clone()]).unwrap();
        assert_eq!(mailbox.peek().unwrap(), [first.clone(), second.clone()]);
        let taken = mailbox.consume(Some(1), |_| true).unwrap();
        assert_eq!(taken, std::slice::from_ref(&first));
        assert_eq!(mailbox.peek().unwrap(), [second]);
        assert_eq!(mailbox.history().unwrap(), read(&[first]));
    }

    #[test]
    fn a_failed_delivery_leaves_the_messages_unread() {
        let (_dir, mailbox) = mailbox();
        let sent: Vec<InboxMessage> = (0..3)
            .map(|n| InboxMessage::new("a", &format!("m{n}"), None, None))
            .collect();
        mailbox.append(&sent).unwrap();
        let failed = mailbox.consume_delivering(
            None,
            |_| true,
            |chosen| {
                assert_eq!(chosen, sent.as_slice());
                Err(Error::runtime("stdout is closed"))
            },
        );
        assert_eq!(failed.unwrap_err().message(), "stdout is closed");
        assert_eq!(
            mailbox.peek().unwrap(),
            sent,
            "nothing shown, nothing taken"
        );

        let mut shown = Vec::new();
        let delivered = mailbox
            .consume_delivering(
                Some(2),
                |_| true,
                |chosen| {
                    shown.extend_from_slice(chosen);
                    Ok(())
                },
            )
            .unwrap();
        assert_eq!(
            (delivered.as_slice(), shown.as_slice()),
            (&sent[..2], &sent[..2])
        );
        assert_eq!(mailbox.peek().unwrap(), &sent[2..]);
        assert_eq!(
            mailbox.history().unwrap(),
            read(&sent),
            "recorded once each"
        );
    }

    #[test]
    fn append_unseen_skips_what_the_inbox_or_history_holds() {
        let (_dir, mailbox) = mailbox();
        let mut delivered = Delivered::default();
        let one = InboxMessage::new("a", "one", None, None);
        let two = InboxMessage::new("a", "two", None, None);
        let appended = mailbox.append_unseen(&[one.clone(), one.clone()], &mut delivered);
        assert_eq!(appended.unwrap(), 1, "a second copy in one batch");
        let again = mailbox.append_unseen(std::slice::from_ref(&one), &mut delivered);
        assert_eq!(again.unwrap(), 0, "still unread in the inbox");
        mailbox.consume(None, |_| true).unwrap();
        let after = mailbox.append_unseen(&[one.clone(), two.clone()], &mut delivered);
        assert_eq!(after.unwrap(), 1, "taken by a reader: in history");
        assert_eq!(mailbox.peek().unwrap(), std::slice::from_ref(&two));
        // A restarted node knows nothing yet, and reads history from its start.
        let mut fresh = Delivered::default();
        let restarted = mailbox.append_unseen(std::slice::from_ref(&one), &mut fresh);
        assert_eq!(restarted.unwrap(), 0);
        // Another tool marked `two` read and kept it in the file: it was shown.
        let mut shown = two.clone();
        shown.set_field("read", Value::Bool(true));
        atomic_write(mailbox.inbox_path(), |out| {
            serde_json::to_writer_pretty(out, &[shown])?;
            Ok(())
        })
        .unwrap();
        let marked = mailbox.append_unseen(std::slice::from_ref(&two), &mut fresh);
        assert_eq!(marked.unwrap(), 0);
    }

    #[test]
    fn a_forward_records_history_only_once_it_succeeded() {
        let (_dir, mailbox) = mailbox();
        let sent = [
            InboxMessage::new("a", "one", None, None),
            InboxMessage::new("a", "two", None, None),
        ];
        mailbox.append(&sent).unwrap();
        let failed = mailbox.consume_forwarding(None, |_| Err(Error::runtime("no server")));
        assert_eq!(failed.unwrap_err().message(), "no server");
        assert_eq!(mailbox.peek().unwrap(), sent);
        assert!(mailbox.history().unwrap().is_empty(), "nothing left");
        let forwarded = mailbox.consume_forwarding(Some(1), |_| Ok(())).unwrap();
        assert_eq!(forwarded, &sent[..1]);
        assert_eq!(mailbox.peek().unwrap(), &sent[1..]);
        assert_eq!(mailbox.history().unwrap(), read(&sent[..1]));
    }

    #[test]
    fn retract_takes_back_only_what_is_still_unread() {
        let (_dir, mailbox) = mailbox();
        let kept = InboxMessage::new("a", "kept", None, None);
        let undone = InboxMessage::new("a", "undone", None, None);
        let taken = InboxMessage::new("a", "taken", None, None);
        mailbox
            .append(&[taken.clone(), kept.clone(), undone.clone()])
            .unwrap();
        mailbox.consume(Some(1), |_| true).unwrap();
        let ids: HashSet<String> = [&undone, &taken]
            .iter()
            .map(|m| m.id().into_owned())
            .collect();
        let removed = mailbox.retract(&ids).unwrap();
        assert_eq!(removed, HashSet::from([undone.id().into_owned()]));
        assert_eq!(mailbox.peek().unwrap(), [kept]);
    }

    #[test]
    fn concurrent_consumers_record_each_message_in_history_once() {
        let (_dir, mailbox) = mailbox();
        let sent: Vec<InboxMessage> = (0..200)
            .map(|n| InboxMessage::new("a", &format!("m{n}"), None, None))
            .collect();
        mailbox.append(&sent).unwrap();
        let consumers: Vec<_> = (0..3)
            .map(|_| {
                let mailbox = mailbox.clone();
                std::thread::spawn(move || {
                    let mut taken = Vec::new();
                    loop {
                        let batch = mailbox.consume(Some(5), |_| true).unwrap();
                        if batch.is_empty() {
                            return taken;
                        }
                        taken.extend(batch.iter().map(|m| m.id().into_owned()));
                    }
                })
            })
            .collect();
        let taken: Vec<String> = consumers
            .into_iter()
            .flat_map(|c| c.join().unwrap())
            .collect();
        let distinct: HashSet<&String> = taken.iter().collect();
        assert_eq!((taken.len(), distinct.len()), (200, 200));
        let lines = fs::read_to_string(mailbox.history_path())
            .unwrap()
            .lines()
            .count();
        assert_eq!(lines, 200, "{} duplicate history lines", lines - 200);
    }

    #[test]
    fn history_readers_see_each_message_once() {
        let (_dir, mailbox) = mailbox();
        let first = InboxMessage::new("a", "one", None, None);
        let second = InboxMessage::new("a", "two", None, None);
        mailbox.append(&[first.clone(), second.clone()]).unwrap();
        mailbox.consume(Some(1), |_| true).unwrap();
        // A consumer that died after its history append: `one` again, and `two` recorded while
        // it is still unread.
        mailbox
            .record_history(&[first.clone(), second.clone()])
            .unwrap();
        assert_eq!(
            mailbox.history().unwrap(),
            read(&[first.clone(), second.clone()])
        );
        let (delivered, unread) = mailbox.listing().unwrap();
        assert_eq!(delivered, read(&[first, second]));
        assert!(unread.is_empty(), "{unread:?}");
    }

    #[test]
    fn written_inbox_is_pretty_with_two_spaces() {
        let (_dir, mailbox) = mailbox();
        mailbox
            .append(&[InboxMessage::new("a", "x", None, None)])
            .unwrap();
        let text = fs::read_to_string(mailbox.inbox_path()).unwrap();
        assert!(text.starts_with("[\n  {\n    \"from\": \"a\""), "{text}");
    }

    #[test]
    fn a_contended_append_is_spooled_and_merged_once() {
        let (_dir, mailbox) = mailbox();
        mailbox.ensure().unwrap();
        let held = FileLock::acquire(&mailbox.paths.lock).unwrap();
        let message = InboxMessage::new("a", "while locked", None, None);
        let writer = {
            let mailbox = mailbox.clone();
            let message = message.clone();
            std::thread::spawn(move || mailbox.append(&[message]).unwrap())
        };
        // The writer cannot take the lock, so its message waits durably in the spool.
        let spool = mailbox.paths.spool.clone();
        while fs::read_dir(&spool).map_or(0, Iterator::count) == 0 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        drop(held);
        writer.join().unwrap();
        assert_eq!(mailbox.peek().unwrap(), [message]);
        assert_eq!(
            fs::read_dir(&spool).unwrap().count(),
            0,
            "merged spool files are removed"
        );
    }

    #[test]
    fn a_spool_file_left_by_a_dead_writer_is_merged_without_duplicates() {
        let (_dir, mailbox) = mailbox();
        let message = InboxMessage::new("a", "orphan", None, None);
        mailbox.spool(std::slice::from_ref(&message)).unwrap();
        mailbox.spool(std::slice::from_ref(&message)).unwrap();
        let later = InboxMessage::new("b", "later", None, None);
        mailbox.append(std::slice::from_ref(&later)).unwrap();
        assert_eq!(mailbox.peek().unwrap(), [message, later]);
    }

    #[test]
    fn an_unreadable_spool_file_is_kept_when_the_others_are_merged() {
        let (_dir, mailbox) = mailbox();
        mailbox.ensure().unwrap();
        fs::create_dir_all(&mailbox.paths.spool).unwrap();
        let garbage = mailbox.paths.spool.join("000-1-garbage.json");
        fs::write(&garbage, b"not json").unwrap();
        let message = InboxMessage::new("a", "fine", None, None);
        mailbox.spool(std::slice::from_ref(&message)).unwrap();
        mailbox.append(&[]).unwrap();
        assert_eq!(mailbox.peek().unwrap(), [message]);
        assert_eq!(fs::read(&garbage).unwrap(), b"not json");
    }

    #[test]
    fn fresh_inboxes_created_while_others_write_are_never_moved_aside() {
        use std::sync::{Arc, Barrier};
        let dir = tempfile::tempdir().unwrap();
        let team = Home::new(dir.path().to_path_buf()).team("t");
        for round in 0..300 {
            let mailbox = Mailbox::new(&team, &format!("w{round}"));
            let start = Arc::new(Barrier::new(8));
            // As `spawn` creates an inbox while the lead sends to it and a reader looks.
            let workers: Vec<_> = (0..8)
                .map(|k| {
                    let (mailbox, start) = (mailbox.clone(), Arc::clone(&start));
                    std::thread::spawn(move || {
                        start.wait();
                        match k {
                            0..3 => drop(mailbox.ensure().unwrap()),
                            3..6 => mailbox
                                .append(&[InboxMessage::new("lead", "hi", None, None)])
                                .unwrap(),
                            _ => drop(mailbox.peek().unwrap()),
                        }
                    })
                })
                .collect();
            for worker in workers {
                worker.join().unwrap();
            }
            let aside = mailbox.set_aside();
            assert!(aside.is_empty(), "round {round}: {aside:?}");
            assert_eq!(mailbox.peek().unwrap().len(), 3, "round {round}");
        }
    }

    #[test]
    fn staging_files_left_by_killed_writers_are_cleaned_up() {
        let (_dir, mailbox) = mailbox();
        let spool = mailbox.paths.spool.clone();
        fs::create_dir_all(&spool).unwrap();
        let dead = {
            let mut child = std::process::Command::new("true").spawn().unwrap();
            let pid = child.id();
            child.wait().unwrap();
            pid
        };
        let me = std::process::id();
        let staging = |nanos, pid, id| mailbox.paths.spool_file(nanos, pid, id).staging;
        let killed = staging(1, dead, "a");
        let stalled = staging(2, me, "b");
        let writing = staging(3, me, "c");
        for staging in [&killed, &stalled, &writing] {
            fs::write(staging, "[{\"from\"").unwrap();
        }
        let long_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        fs::File::options()
            .write(true)
            .open(&stalled)
            .unwrap()
            .set_modified(long_ago)
            .unwrap();

        let message = InboxMessage::new("a", "after", None, None);
        mailbox.append(std::slice::from_ref(&message)).unwrap();
        assert!(!killed.exists(), "the file of a dead writer stays");
        assert!(!stalled.exists(), "a file older than a stale lock stays");
        assert!(writing.exists(), "a live writer's file was removed");
        assert_eq!(mailbox.peek().unwrap(), [message]);
    }

    #[test]
    fn corrupt_inbox_is_moved_aside_not_emptied() {
        let (_dir, mailbox) = mailbox();
        mailbox.ensure().unwrap();
        fs::write(mailbox.inbox_path(), "{ not json").unwrap();
        assert!(mailbox.peek().unwrap().is_empty());
        let aside = mailbox.set_aside();
        assert_eq!(aside.len(), 1);
        assert_eq!(fs::read_to_string(&aside[0].path).unwrap(), "{ not json");
        assert_eq!(fs::read_to_string(mailbox.inbox_path()).unwrap(), "[]");
    }

    #[test]
    fn invalid_elements_are_moved_aside_and_valid_ones_kept() {
        let (_dir, mailbox) = mailbox();
        mailbox.ensure().unwrap();
        fs::write(
            mailbox.inbox_path(),
            r#"[{"from":"a","text":"ok","timestamp":"t"}, {"from":"a"}, 7]"#,
        )
        .unwrap();
        let unread = mailbox.peek().unwrap();
        assert_eq!(unread.len(), 1);
        assert_eq!(unread[0].text(), "ok");
        let aside = mailbox.set_aside();
        assert_eq!(aside[0].reason, "invalid messages");
        let moved: Vec<Value> = serde_json::from_slice(&fs::read(&aside[0].path).unwrap()).unwrap();
        assert_eq!(
            moved,
            vec![serde_json::json!({"from":"a"}), serde_json::json!(7)]
        );
    }
}
