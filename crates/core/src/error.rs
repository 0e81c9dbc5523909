//! One error type for the whole program. Its kind decides the exit status (docs/ARCHITECTURE.md,
//! "Errors and exit statuses"); its message is one line for stderr, optionally followed by a hint
//! that says what to do.

use std::fmt;
use std::io;
use std::path::Path;

use nix::errno::Errno;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Exit 1: something failed at run time.
    Runtime,
    /// Exit 2: bad input, usage, or a protocol rule refused.
    Usage,
    /// Exit 3: a team, member, request or peer does not exist.
    NotFound,
    /// Exit 4: a `--wait` or `--timeout` ran out.
    Timeout,
}

impl ErrorKind {
    pub fn exit_code(self) -> u8 {
        match self {
            Self::Runtime => 1,
            Self::Usage => 2,
            Self::NotFound => 3,
            Self::Timeout => 4,
        }
    }

    /// Every kind: the statuses between 0 and [`INTERRUPTED`] in [`EXIT_STATUSES`].
    pub const ALL: [Self; 4] = [Self::Runtime, Self::Usage, Self::NotFound, Self::Timeout];

    /// The kind as `--json` names it in an error object: `runtime`, `usage`, `not_found`,
    /// `timeout`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Runtime => "runtime",
            Self::Usage => "usage",
            Self::NotFound => "not_found",
            Self::Timeout => "timeout",
        }
    }
}

/// Exit status after Ctrl-C ended `up --wait`'s waiting: 128 + SIGINT, as a shell reports it.
pub const INTERRUPTED: u8 = 130;

/// Every exit status swarm has and what it means: the one table swarm(1)'s EXIT STATUS and
/// docs/ARCHITECTURE.md's "Errors and exit statuses" are made from and tested against.
pub const EXIT_STATUSES: &[(u8, &str)] = &[
    (
        0,
        "Success, and durable. Writing to a closed stdout (swarm inbox piped into head -1) is a quiet success too: recv and watch --consume print what they take before it leaves the inbox, so what they could not print stays unread.",
    ),
    (
        1,
        "A runtime failure: an OS error, a peer that refused a message, a rejected plan or shutdown request, a member that did not complete, a symlink (or anything but a regular file) where swarm keeps a file of its own under its home: swarm refuses it and writes nothing through it.",
    ),
    (
        2,
        "Bad input or usage, or a protocol rule or the policy refused: an invalid name, an oversized message, a non-lead sending a lead-only message, an answer to a request that does not exist.",
    ),
    (
        3,
        "Not found: a team, a member (a misspelt name is this status, in the same words, from every command), a request, a file, or a peer socket with nobody listening.",
    ),
    (
        4,
        "A --wait or --timeout ran out, down or stop all waiting for an up placing the team's panes too.",
    ),
    (
        INTERRUPTED,
        "Ctrl-C ended up --wait's waiting. The team runs on in tmux, as after up without --wait; swarm down stops it.",
    ),
];

/// swarm's one error. An io error has no conversion into it, so a stray `?` cannot make a peer's
/// or a child's broken pipe the quiet exit 0 only stdout's gets ([`Error::output`]):
///
/// ```compile_fail
/// fn send() -> swarm::Result<()> {
///     Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe))?
/// }
/// ```
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    hint: Option<String>,
    /// Set only for failures writing swarm's own output, where a closed pipe is not an error.
    output: Option<io::ErrorKind>,
    /// A machine-readable word for a refusal that has one (a refused claim: `already_claimed`,
    /// Claude Code's words); `--json` errors carry it as `"reason"`.
    reason: Option<&'static str>,
}

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            hint: None,
            output: None,
            reason: None,
        }
    }

    pub fn runtime(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Runtime, message)
    }

    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Usage, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, message)
    }

    pub fn timeout(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Timeout, message)
    }

    /// A failure the command already explained on stdout (a rejected plan, a member that failed):
    /// only the exit status is left to report.
    pub fn silent(kind: ErrorKind) -> Self {
        Self::new(kind, String::new())
    }

    /// An OS error while doing `action` on `path`, with a hint chosen from the errno.
    pub fn io(action: &str, path: &Path, err: io::Error) -> Self {
        let hint = errno_hint(&err, path);
        Self {
            kind: ErrorKind::Runtime,
            message: format!("cannot {action} {}: {}", path.display(), describe(&err)),
            hint,
            output: None,
            reason: None,
        }
    }

    /// [`Self::io`] on a path the user named (a team file, a plan, a program to run): one that
    /// does not exist is not found (exit 3), any other failure a runtime one.
    pub fn io_on_named(action: &str, path: &Path, err: io::Error) -> Self {
        let kind = if err.kind() == io::ErrorKind::NotFound {
            ErrorKind::NotFound
        } else {
            ErrorKind::Runtime
        };
        Self::io(action, path, err).with_kind(kind)
    }

    /// A failure writing swarm's own output (stdout), the one error a closed pipe makes quiet.
    /// Nothing else becomes one: an io error has no conversion, so a `?` cannot turn a peer's or a
    /// child's broken pipe into a quiet success.
    pub fn output(err: io::Error) -> Self {
        let kind = err.kind();
        Self {
            output: Some(kind),
            ..Self::os("write output", err)
        }
    }

    /// An OS error with no single path involved (a pipe, a socket pair, a child process).
    pub fn os(action: &str, err: io::Error) -> Self {
        let hint = errno_hint(&err, Path::new(""));
        Self {
            kind: ErrorKind::Runtime,
            message: format!("cannot {action}: {}", describe(&err)),
            hint,
            output: None,
            reason: None,
        }
    }

    #[must_use]
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The same error, its message followed by what was done about it (an undo, a withdrawal).
    #[must_use]
    pub fn with_note(mut self, note: impl AsRef<str>) -> Self {
        self.message = format!("{}; {}", self.message, note.as_ref());
        self
    }

    #[must_use]
    pub(crate) fn with_kind(mut self, kind: ErrorKind) -> Self {
        self.kind = kind;
        self
    }

    #[must_use]
    pub fn with_reason(mut self, reason: &'static str) -> Self {
        self.reason = Some(reason);
        self
    }

    pub fn reason(&self) -> Option<&'static str> {
        self.reason
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    pub fn hint(&self) -> Option<&str> {
        self.hint.as_deref()
    }

    /// Writing output to a closed pipe (`swarm inbox | head -1`) is not an error worth reporting.
    /// A broken pipe anywhere else (a peer that hung up) is.
    pub fn is_broken_pipe(&self) -> bool {
        self.output == Some(io::ErrorKind::BrokenPipe)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

fn describe(err: &io::Error) -> String {
    // `Display` for io::Error appends "(os error N)"; the errno name is more useful to a person.
    match err.raw_os_error() {
        Some(code) => {
            let errno = Errno::from_raw(code);
            format!("{} ({errno:?})", errno.desc())
        }
        None => err.to_string(),
    }
}

fn errno_hint(err: &io::Error, path: &Path) -> Option<String> {
    let errno = Errno::from_raw(err.raw_os_error()?);
    let shown = path.display();
    let hint = match errno {
        Errno::EACCES | Errno::EPERM => {
            format!(
                "check that you own {shown} and may write to it, or point --home/SWARM_HOME elsewhere"
            )
        }
        Errno::ENOSPC => "the file system is full; free some space and retry".to_owned(),
        Errno::EDQUOT => "your disk quota is used up; free some space and retry".to_owned(),
        Errno::EROFS => format!(
            "{shown} is on a read-only file system; point --home/SWARM_HOME at a writable directory"
        ),
        Errno::EMFILE => {
            "this process has too many open files; raise the limit with `ulimit -n`".to_owned()
        }
        Errno::ENFILE => {
            "the system has too many open files; raise fs.file-max with sysctl".to_owned()
        }
        Errno::ENAMETOOLONG => format!(
            "{shown} is too long for a Unix socket (108 bytes); set XDG_RUNTIME_DIR to a shorter directory"
        ),
        Errno::ENOTDIR => format!("a component of {shown} is a file, not a directory"),
        Errno::ECONNREFUSED => {
            "no process is listening there any more; `swarm peers` lists live peers".to_owned()
        }
        _ => return None,
    };
    Some(hint)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_map_to_documented_exit_statuses() {
        assert_eq!(ErrorKind::Runtime.exit_code(), 1);
        assert_eq!(ErrorKind::Usage.exit_code(), 2);
        assert_eq!(ErrorKind::NotFound.exit_code(), 3);
        assert_eq!(ErrorKind::Timeout.exit_code(), 4);
        let documented: Vec<u8> = EXIT_STATUSES.iter().map(|(code, _)| *code).collect();
        let mut statuses = vec![0];
        statuses.extend(ErrorKind::ALL.map(ErrorKind::exit_code));
        statuses.push(INTERRUPTED);
        assert_eq!(documented, statuses, "one row per status, in order");
    }

    /// The table in docs/ARCHITECTURE.md, "Errors and exit statuses", as this one makes it.
    #[test]
    fn the_design_document_shows_these_exit_statuses() {
        use std::fmt::Write as _;
        let document = include_str!("../../../docs/ARCHITECTURE.md");
        let mut table = String::from("| status | meaning |\n|---|---|\n");
        for (code, meaning) in EXIT_STATUSES {
            writeln!(table, "| {code} | {meaning} |").unwrap();
        }
        assert!(
            document.contains(&table),
            "docs/ARCHITECTURE.md must hold, under \"Errors and exit statuses\":\n{table}"
        );
    }

    #[test]
    fn errno_becomes_an_actionable_hint() {
        let err = Error::io(
            "write",
            Path::new("/x/y"),
            io::Error::from_raw_os_error(libc_enospc()),
        );
        assert!(err.message().contains("/x/y"), "{}", err.message());
        assert!(err.message().contains("ENOSPC"), "{}", err.message());
        assert!(err.hint().unwrap().contains("free some space"));
    }

    fn libc_enospc() -> i32 {
        Errno::ENOSPC as i32
    }

    #[test]
    fn only_a_broken_output_pipe_is_quiet() {
        let err = Error::output(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(err.is_broken_pipe());
        let peer = Error::io(
            "send to",
            Path::new("/s"),
            io::Error::from(io::ErrorKind::BrokenPipe),
        );
        assert!(!peer.is_broken_pipe(), "a peer hanging up is an error");
    }
}
