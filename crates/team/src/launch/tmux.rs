//! The one place swarm runs tmux. It passes argv lists, never shell strings; learns pane ids with
//! `-P -F`; targets panes by id; passes no environment (a member's variables reach its supervisor
//! another way: docs/ARCHITECTURE.md, "Secrets and the environment"); and changes no global or
//! session option of the user's server, only options of the panes and window it creates
//! (docs/ARCHITECTURE.md, "Launching").

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::base::text::refuse_controls;
use crate::base::{clock, process};
use crate::error::{Error, Result};
use crate::launch::layout::Layout;

/// What a tmux client prints when the server it reached was on its way out.
const SERVER_EXITING: &str = "server exited unexpectedly";

/// How long a new session waits for an exiting server on its socket to be gone.
const SERVER_EXIT_PATIENCE: Duration = Duration::from_secs(10);

/// Which tmux server to talk to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Server {
    /// The server of `$TMUX` inside tmux, else tmux's default socket.
    Default,
    /// `tmux -L NAME`: a private server by name.
    Named(String),
    /// `tmux -S PATH`: a server by socket path.
    Path(PathBuf),
}

impl Server {
    /// `--socket NAME` names a private server; a value with a `/` is a socket path.
    pub fn from_arg(arg: Option<&str>) -> Self {
        match arg {
            None | Some("") => Self::Default,
            Some(arg) if arg.contains('/') => Self::Path(PathBuf::from(arg)),
            Some(name) => Self::Named(name.to_owned()),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Tmux {
    server: Server,
}

/// An environment as `show-environment` prints it: each name with its value, or `None` for a
/// variable it removes.
pub(crate) type Environment = Vec<(String, Option<String>)>;

/// What a new pane runs.
#[derive(Debug, Clone)]
pub(crate) struct PaneSpec<'a> {
    pub(crate) cwd: &'a Path,
    pub(crate) argv: &'a [OsString],
    /// Public variables tmux sets in the pane with `-e`, where they are on its command line for
    /// every local user to read: only the verify key (`launch::keys`), which swarm's readers in
    /// the pane take from its supervisor's own environment. Nothing secret ever goes here.
    pub(crate) public_env: &'a [(&'a str, &'a str)],
}

/// A pane tmux created, and where it lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneInfo {
    pub pane: String,
    pub(crate) window: String,
    pub(crate) session: String,
    pub(crate) socket: PathBuf,
}

/// Where the first pane of a team goes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Placement<'a> {
    /// A new window in the current session (inside tmux); `select` makes it the current window.
    NewWindow { name: &'a str, select: bool },
    /// A new detached session (outside tmux, or on a private server).
    NewSession { session: &'a str, window: &'a str },
}

/// A member's name in its colour on its pane's top border; other panes keep their title.
pub(crate) const BORDER_FORMAT: &str =
    " #[fg=#{@swarm-color},bold]#{?@swarm-member,#{@swarm-member},#{pane_title}}#[default] ";

const PANE_FORMAT: &str = "#{pane_id}\t#{window_id}\t#{session_name}\t#{socket_path}";

/// How long a tmux command may take before its server counts as not answering, unless
/// [`ANSWER_BOUND_VAR`] says otherwise. tmux answers in milliseconds; this is for a server that
/// was stopped or is stuck, never for a busy one.
const ANSWER_BOUND: Duration = Duration::from_secs(10);

/// The environment variable that sets [`ANSWER_BOUND`], in seconds.
pub(crate) const ANSWER_BOUND_VAR: &str = "SWARM_TMUX_TIMEOUT";

/// How long a tmux command may take.
fn answer_bound() -> Duration {
    clock::seconds_from_env(ANSWER_BOUND_VAR, ANSWER_BOUND)
}

/// How long a server that did not answer stays known as not answering in this process: a
/// command asks it again only after this (a long-lived supervisor or dashboard, which should see
/// a server that was resumed), and its other looks meanwhile fail at once with the same line
/// instead of each waiting out its own bound (`down` looked six times).
const UNANSWERED_FOR: Duration = Duration::from_secs(60);

/// The servers that did not answer in this process, each with when it was found so.
static UNANSWERED: Mutex<Vec<(Server, Instant)>> = Mutex::new(Vec::new());

/// A detached session's size; attaching resizes it to the client.
const DETACHED_SIZE: (&str, &str) = ("240", "70");

impl Tmux {
    pub fn new(server: Server) -> Self {
        Self { server }
    }

    /// The server whose socket is at `path`.
    pub fn at(path: &Path) -> Self {
        Self::new(Server::Path(path.to_path_buf()))
    }

    /// The path of the server's socket, as tmux makes it: `-S PATH`'s path; inside tmux, the
    /// default server is the current one; else `${TMUX_TMPDIR:-/tmp}/tmux-<uid>/<name or
    /// default>`.
    pub fn socket_path(&self) -> PathBuf {
        let in_tmux_dir = |name: &str| {
            let dir = std::env::var_os("TMUX_TMPDIR")
                .filter(|dir| !dir.is_empty())
                .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
            dir.join(format!("tmux-{}", nix::unistd::getuid()))
                .join(name)
        };
        match &self.server {
            Server::Path(path) => path.clone(),
            Server::Named(name) => in_tmux_dir(name),
            Server::Default => current_socket().unwrap_or_else(|| in_tmux_dir("default")),
        }
    }

    /// The server this process runs under: `$TMUX` names its socket.
    pub(crate) fn current() -> Option<Self> {
        current_socket().map(|socket| Self::at(&socket))
    }

    /// tmux with the server chosen and `args` as one command, each escaped as [`escape`] says.
    /// tmux reads every argument before a `--` itself (names, options, directories, formats, the
    /// shell command of `pipe-pane`), so one with a control character is refused before tmux
    /// sees it (docs/ARCHITECTURE.md, "Control characters"); a program's argv after `--` is
    /// exec'd as it is.
    fn command<I, S>(&self, args: I) -> Result<Command>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut command = Command::new("tmux");
        match &self.server {
            Server::Default => {}
            Server::Named(name) => {
                refuse_controls("the tmux server's name", OsStr::new(name), "a tmux command")?;
                command.arg("-L").arg(name);
            }
            Server::Path(path) => {
                refuse_controls("the tmux socket", path.as_os_str(), "a tmux command")?;
                command.arg("-S").arg(path);
            }
        }
        let args: Vec<S> = args.into_iter().collect();
        // Without a UTF-8 locale (a systemd unit, cron, `env -i`) tmux prints the tab between the
        // fields of `-F` formats as `_` and mangles names beyond ASCII: `-u` keeps its output
        // exact. Not for attach, whose output is the person's terminal.
        if !args
            .first()
            .is_some_and(|verb| verb.as_ref() == "attach" || verb.as_ref() == "attach-session")
        {
            command.arg("-u");
        }
        let mut own = true;
        for arg in args {
            let arg = arg.as_ref();
            if own {
                if arg == "--" {
                    own = false;
                } else if !OWN_FORMATS.iter().any(|format| arg == *format) {
                    refuse_controls("a tmux argument", arg, "a tmux command")?;
                }
            }
            command.arg(escape(arg));
        }
        // A server started here passes its environment on to every pane.
        for hook in crate::base::TEST_HOOKS {
            command.env_remove(hook);
        }
        Ok(command)
    }

    /// Runs one tmux command and returns its stdout.
    fn run(&self, args: &[OsString]) -> Result<String> {
        let verb = args
            .first()
            .map(|a| a.to_string_lossy().into_owned())
            .unwrap_or_default();
        let output = self.execute(self.command(args)?, &verb, None)?.output;
        if output.status.success() {
            return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
        }
        let stderr = String::from_utf8_lossy(&output.stderr)
            .trim()
            .replace('\n', "; ");
        let error = Error::runtime(format!("tmux {verb} failed: {stderr}"));
        Err(
            if stderr.contains("no space for new pane") || stderr.contains("too small") {
                error.with_hint("the window has no room for another pane; use a larger terminal or layout = \"tiled\"")
            } else {
                error
            },
        )
    }

    /// Runs tmux `command` to its end, with `input` on its stdin, within [`answer_bound`]: a
    /// server that stopped answering (stopped, or stuck) is one clear error naming it, never a
    /// hang (docs/ARCHITECTURE.md, "External programs").
    fn execute(
        &self,
        mut command: Command,
        verb: &str,
        input: Option<&[u8]>,
    ) -> Result<process::Ran> {
        let bound = answer_bound();
        if self.did_not_answer() {
            return Err(self.no_answer(verb, bound));
        }
        match process::run_within(&mut command, input, bound) {
            Ok(Some(ran)) => Ok(ran),
            Ok(None) => {
                if let Ok(mut unanswered) = UNANSWERED.lock() {
                    unanswered.retain(|(server, _)| *server != self.server);
                    unanswered.push((self.server.clone(), Instant::now()));
                }
                Err(self.no_answer(verb, bound))
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                Err(Error::runtime("tmux is not installed")
                    .with_hint("install it, e.g. `apt-get install tmux`"))
            }
            Err(err) => Err(Error::os(&format!("run tmux {verb}"), err)),
        }
    }

    /// Whether this server did not answer a command of this process within the last
    /// [`UNANSWERED_FOR`].
    fn did_not_answer(&self) -> bool {
        UNANSWERED.lock().is_ok_and(|unanswered| {
            unanswered
                .iter()
                .any(|(server, at)| *server == self.server && at.elapsed() < UNANSWERED_FOR)
        })
    }

    /// The error of a command the server did not answer within `bound`.
    fn no_answer(&self, verb: &str, bound: Duration) -> Error {
        Error::runtime(format!(
            "tmux {verb} got no answer within {}s from {}: it is stopped or stuck",
            bound.as_secs_f64(),
            self.describe()
        ))
        .with_hint(format!(
            "resume or end that tmux server (`kill -CONT` if it was stopped); {ANSWER_BOUND_VAR}=<seconds> waits longer"
        ))
    }

    /// The server, as an error names it.
    fn describe(&self) -> String {
        match &self.server {
            Server::Default => "tmux's default server".to_owned(),
            Server::Named(name) => format!("the tmux server -L {name}"),
            Server::Path(path) => format!("the tmux server at {}", path.display()),
        }
    }

    /// Runs tmux `command` with `input` on its stdin and waits for it, whatever happens to the
    /// input: a tmux that exits without reading it all (its server is gone) is reaped, never left
    /// a zombie of the supervisor, and its own complaint is the error.
    fn feed(&self, command: Command, verb: &str, input: &[u8]) -> Result<()> {
        let ran = self.execute(command, verb, Some(input))?;
        if !ran.output.status.success() {
            return Err(Error::runtime(format!(
                "tmux {verb} failed: {}",
                String::from_utf8_lossy(&ran.output.stderr).trim()
            )));
        }
        ran.input
            .map_err(|err| Error::os(&format!("write to tmux {verb}"), err))
    }

    /// Refuses tmux older than 3.2, which lacks `new-session -e` and per-pane options.
    pub fn check_version(&self) -> Result<String> {
        let version = self.run(&args(["-V"]))?.trim().to_owned();
        let number = version
            .trim_start_matches("tmux ")
            .trim_start_matches("next-");
        let mut parts = number
            .split(|c: char| !c.is_ascii_digit())
            .filter(|p| !p.is_empty());
        let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        if (major, minor) < (3, 2) && major != 0 {
            return Err(
                Error::runtime(format!("swarm needs tmux 3.2 or later; found {version}"))
                    .with_hint("upgrade tmux"),
            );
        }
        Ok(version)
    }

    /// Creates a team's first pane.
    pub(crate) fn first_pane(
        &self,
        placement: Placement<'_>,
        spec: &PaneSpec<'_>,
    ) -> Result<PaneInfo> {
        let mut argv = match placement {
            Placement::NewWindow { name, select } => {
                let mut argv = args(["new-window", "-P", "-F", PANE_FORMAT, "-n", name]);
                if !select {
                    argv.push("-d".into());
                }
                argv
            }
            Placement::NewSession { session, window } => args([
                "new-session",
                "-d",
                "-P",
                "-F",
                PANE_FORMAT,
                "-s",
                session,
                "-n",
                window,
                "-x",
                DETACHED_SIZE.0,
                "-y",
                DETACHED_SIZE.1,
            ]),
        };
        push_spec(&mut argv, spec);
        let new_session = matches!(placement, Placement::NewSession { .. });
        let deadline = Instant::now() + SERVER_EXIT_PATIENCE;
        loop {
            match self.run(&argv) {
                // A server told to exit (`kill-server`, a reboot's shutdown) still holds its
                // socket until its last client has said it is leaving, and drops every client
                // that connects meanwhile. The new session wants a fresh server, which it gets
                // once that one is gone.
                Err(err) if new_session && err.to_string().contains(SERVER_EXITING) => {
                    if Instant::now() >= deadline {
                        return Err(err.with_hint(
                            "the tmux server on this socket is still shutting down; try again once it has exited",
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                ran => return parse_pane(&ran?),
            }
        }
    }

    /// Splits another pane into `window`, leaving the current pane selected.
    pub(crate) fn split(&self, window: &str, spec: &PaneSpec<'_>) -> Result<PaneInfo> {
        self.split_with(window, &[], spec)
    }

    /// Splits a pane across the whole width of `window`, below its other panes, whose layout
    /// stays as it was; the current pane stays selected.
    pub(crate) fn split_below(&self, window: &str, spec: &PaneSpec<'_>) -> Result<PaneInfo> {
        self.split_with(window, &["-f", "-v"], spec)
    }

    fn split_with(&self, window: &str, flags: &[&str], spec: &PaneSpec<'_>) -> Result<PaneInfo> {
        let mut argv = args(["split-window", "-d", "-P", "-F", PANE_FORMAT, "-t", window]);
        argv.extend(flags.iter().map(OsString::from));
        push_spec(&mut argv, spec);
        parse_pane(&self.run(&argv)?)
    }

    /// Sets the title `pane` shows on its border.
    pub(crate) fn title(&self, pane: &str, title: &str) -> Result<()> {
        self.run(&args(["select-pane", "-t", pane, "-T", title]))
            .map(drop)
    }

    /// Only a checked [`Layout`] reaches tmux, which dies on some layouts it does not know.
    pub(crate) fn select_layout(&self, window: &str, layout: &Layout) -> Result<()> {
        self.run(&args(["select-layout", "-t", window, layout.as_str()]))
            .map(drop)
    }

    /// Titles a member's pane and shows its name, in its colour, on the pane's border. tmux keeps
    /// border styles per window, so the colour travels in a pane option the border format reads.
    pub(crate) fn decorate(
        &self,
        pane: &str,
        window: &str,
        (home, team, name): (&Path, &str, &str),
        color: Option<&str>,
    ) -> Result<()> {
        self.title(pane, name)?;
        self.mark(pane, home, team)?;
        self.run(&args([
            "set-option",
            "-p",
            "-t",
            pane,
            "@swarm-member",
            name,
        ]))?;
        self.run(&args([
            "set-option",
            "-p",
            "-t",
            pane,
            "@swarm-color",
            color.unwrap_or("default"),
        ]))?;
        self.run(&args([
            "set-option",
            "-w",
            "-t",
            window,
            "pane-border-status",
            "top",
        ]))?;
        self.run(&args([
            "set-option",
            "-w",
            "-t",
            window,
            "pane-border-format",
            BORDER_FORMAT,
        ]))
        .map(drop)
    }

    /// Marks `pane` as one of team `team`'s of the home at `home` (`@swarm-team`, `@swarm-home`):
    /// part of what shows a pane is still the one swarm placed (`member::pane`).
    pub(crate) fn mark(&self, pane: &str, home: &Path, team: &str) -> Result<()> {
        let mut argv = args(["set-option", "-p", "-t", pane, "@swarm-home"]);
        argv.push(home.as_os_str().to_owned());
        self.run(&argv)?;
        self.run(&args(["set-option", "-p", "-t", pane, "@swarm-team", team]))
            .map(drop)
    }

    /// Shows on `window` how many permission asks wait, as its `@swarm-asks` option (a status
    /// line can show `#{@swarm-asks}`), unset when none does.
    pub(crate) fn flag_asks(&self, window: &str, waiting: usize) -> Result<()> {
        let count = (waiting > 0).then(|| waiting.to_string());
        self.flag(window, "@swarm-asks", count.as_deref())
    }

    /// Names on `window` the members an alert says need the person (`@swarm-needs-you`, space
    /// between names), unset when none does.
    pub(crate) fn flag_needs_you(&self, window: &str, members: &[String]) -> Result<()> {
        let names = (!members.is_empty()).then(|| members.join(" "));
        self.flag(window, "@swarm-needs-you", names.as_deref())
    }

    /// Sets window option `option` of `window` to `value`, or unsets it.
    fn flag(&self, window: &str, option: &str, value: Option<&str>) -> Result<()> {
        let argv = match value {
            Some(value) => args(["set-option", "-w", "-t", window, option, value]),
            None => args(["set-option", "-w", "-u", "-t", window, option]),
        };
        self.run(&argv).map(drop)
    }

    /// The terminals of the clients attached to `session` (`/dev/pts/3`): where a desktop
    /// notification goes as an escape sequence when nothing else can show it.
    pub(crate) fn client_ttys(&self, session: &str) -> Result<Vec<PathBuf>> {
        let ttys = self.run(&args([
            "list-clients",
            "-t",
            session,
            "-F",
            "#{client_tty}",
        ]))?;
        Ok(ttys
            .lines()
            .filter(|tty| !tty.is_empty())
            .map(PathBuf::from)
            .collect())
    }

    /// Shows `text` on the status line of every client attached to `session`; none attached,
    /// nobody sees it and nothing fails.
    pub(crate) fn tell_clients(&self, session: &str, text: &str) -> Result<()> {
        let clients = self.run(&args([
            "list-clients",
            "-t",
            session,
            "-F",
            "#{client_name}",
        ]))?;
        // tmux expands `#` in a message as a format; `##` is a plain `#`.
        let text = text.replace('#', "##");
        for client in clients.lines().filter(|c| !c.is_empty()) {
            self.run(&args(["display-message", "-c", client, &text]))?;
        }
        Ok(())
    }

    /// Kills a pane; a pane that is already gone is not an error.
    pub(crate) fn kill_pane(&self, pane: &str) -> Result<bool> {
        match self.run(&args(["kill-pane", "-t", pane])) {
            Ok(_) => Ok(true),
            Err(err) if is_gone(err.message()) => Ok(false),
            Err(err) => Err(err),
        }
    }

    /// Ids of every pane on the server; `None` when no server is running there.
    pub(crate) fn panes(&self) -> Result<Option<HashSet<String>>> {
        match self.run(&args(["list-panes", "-a", "-F", "#{pane_id}"])) {
            Ok(out) => Ok(Some(out.lines().map(str::to_owned).collect())),
            Err(err) if is_gone(err.message()) => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// The last `lines` lines `pane` shows, with its colours as escape sequences (`capture-pane
    /// -e`); `None` when the pane or the server is gone.
    pub fn capture(&self, pane: &str, lines: u16) -> Result<Option<String>> {
        let start = format!("-{lines}");
        match self.run(&args([
            "capture-pane",
            "-p",
            "-e",
            "-t",
            pane,
            "-S",
            &start,
        ])) {
            Ok(out) => Ok(Some(out)),
            Err(err) if is_gone(err.message()) => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// Pipes everything the pane prints into `writer`, an argv. pipe-pane only takes a shell
    /// command, so each argument is shell-quoted, and `#` doubled because tmux expands formats
    /// in it.
    pub(crate) fn pipe_pane(&self, pane: &str, writer: &[OsString]) -> Result<()> {
        let mut command = String::from("exec");
        for arg in writer {
            let arg = arg.to_string_lossy();
            let quoted = shlex::try_quote(&arg).map_err(|_| {
                Error::runtime(format!(
                    "cannot capture output with {arg:?}: it has a NUL byte"
                ))
            })?;
            command.push(' ');
            command.push_str(&quoted.replace('#', "##"));
        }
        self.run(&args(["pipe-pane", "-t", pane, &command]))
            .map(drop)
    }

    /// Pastes `text` into a pane exactly as given, then presses Enter. The text travels through a
    /// named buffer on stdin, so no byte of it is interpreted by tmux or a shell.
    pub(crate) fn paste(&self, pane: &str, buffer: &str, text: &[u8]) -> Result<()> {
        // -p: bracketed paste when the program asked for it; -r: newlines stay newlines.
        self.put(pane, buffer, text, &["-p", "-r"])?;
        self.press_enter(pane)
    }

    /// Types `keys` into a pane as a person at its keyboard would, each byte as it is (a newline
    /// is the Enter key), then Enter unless `enter` is false. Like [`Tmux::paste`], the bytes go
    /// through a named buffer on stdin: a control character, a key name or a leading `-` is never
    /// read by tmux as a key or an option.
    pub fn type_keys(&self, pane: &str, buffer: &str, keys: &[u8], enter: bool) -> Result<()> {
        if !keys.is_empty() {
            self.put(pane, buffer, keys, &[])?;
        }
        if enter {
            self.press_enter(pane)?;
        }
        Ok(())
    }

    /// Loads `bytes` into `buffer` from stdin and pastes it into `pane` with `flags`, deleting the
    /// buffer. A paste that fails takes the buffer away too, so no text is left on the server.
    fn put(&self, pane: &str, buffer: &str, bytes: &[u8], flags: &[&str]) -> Result<()> {
        self.feed(
            self.command(["load-buffer", "-b", buffer, "-"])?,
            "load-buffer",
            bytes,
        )?;
        let mut argv = args(["paste-buffer", "-d"]);
        argv.extend(flags.iter().map(OsString::from));
        argv.extend(args(["-b", buffer, "-t", pane]));
        self.run(&argv).map(drop).inspect_err(|_| {
            let _ = self.run(&args(["delete-buffer", "-b", buffer]));
        })
    }

    fn press_enter(&self, pane: &str) -> Result<()> {
        self.run(&args(["send-keys", "-t", pane, "Enter"]))
            .map(drop)
    }

    /// One of the server's environments as a new pane would meet it, hidden variables
    /// (`set-environment -h`) included: the global one, or, with `session`, the current
    /// session's (inside tmux, the caller's). A variable the environment removes (`-NAME`) has no
    /// value. `None` when no server runs there.
    pub(crate) fn environment(&self, session: bool) -> Result<Option<Environment>> {
        let mut found = Vec::new();
        for hidden in [false, true] {
            let mut argv = args(["show-environment"]);
            if !session {
                argv.push("-g".into());
            }
            if hidden {
                argv.push("-h".into());
            }
            match self.run(&argv) {
                Ok(out) => found.extend(parse_environment(&out)),
                Err(err) if is_gone(err.message()) => return Ok(None),
                Err(err) => return Err(err),
            }
        }
        Ok(Some(found))
    }

    /// The values of a global array option, such as `update-environment`, one a line. `None` when
    /// no server runs there.
    pub(crate) fn global_values(&self, option: &str) -> Result<Option<Vec<String>>> {
        match self.run(&args(["show-options", "-g", "-v", option])) {
            Ok(out) => Ok(Some(out.lines().map(str::to_owned).collect())),
            Err(err) if is_gone(err.message()) => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// How a person attaches to `session` on this server.
    pub fn attach_command(&self, session: &str) -> Vec<String> {
        let mut argv = vec!["tmux".to_owned()];
        match &self.server {
            Server::Default => {}
            Server::Named(name) => argv.extend(["-L".to_owned(), name.clone()]),
            Server::Path(path) => argv.extend(["-S".to_owned(), path.display().to_string()]),
        }
        argv.extend(["attach".to_owned(), "-t".to_owned(), session.to_owned()]);
        argv
    }

    /// Runs `tmux attach` in the foreground, returning when the user detaches.
    pub fn attach(&self, session: &str) -> Result<()> {
        let mut command = self.command(["attach", "-t", session])?;
        command.stdin(Stdio::inherit());
        let status = command
            .status()
            .map_err(|err| Error::os("run tmux attach", err))?;
        if status.success() {
            Ok(())
        } else {
            Err(Error::runtime(format!("tmux attach -t {session} failed")))
        }
    }

    /// Switches the current client to `window` (inside tmux).
    pub fn switch_to(&self, window: &str) -> Result<()> {
        self.run(&args(["switch-client", "-t", window])).map(drop)
    }

    /// Where `target` (a pane id, or a window id for its active pane) is now, and the member
    /// swarm placed in that pane; `None` when the pane, the window or the whole server is gone.
    pub fn locate(&self, target: &str) -> Result<Option<Located>> {
        let out = match self.run(&args([
            "display-message",
            "-p",
            "-t",
            target,
            LOCATE_FORMAT,
        ])) {
            Ok(out) => out,
            Err(err) if is_gone(err.message()) => return Ok(None),
            Err(err) => return Err(err),
        };
        // display-message may fall back to no target at all when its own is gone (tmux 3.3a
        // prints empty fields), so what it printed must be the target's.
        Ok(
            parse_located(&out)
                .filter(|located| located.pane == target || located.window == target),
        )
    }

    /// Makes `pane` the active pane of its window and that window the current one of its session.
    pub fn select(&self, pane: &str) -> Result<()> {
        self.run(&args(["select-pane", "-t", pane]))?;
        self.run(&args(["select-window", "-t", pane])).map(drop)
    }

    /// Inside tmux on this server: moves the caller's client (tmux finds it from `$TMUX_PANE`) to
    /// `target`'s session, window and pane.
    pub fn switch_client(&self, target: &str) -> Result<()> {
        self.run(&args(["switch-client", "-t", target])).map(drop)
    }

    /// Replaces this process with `tmux attach -t target`, handing it the terminal; returns only
    /// when tmux could not be run. `nest` runs it inside another tmux's pane: without `$TMUX`,
    /// which tmux would otherwise refuse.
    pub fn exec_attach(&self, target: &str, nest: bool) -> Error {
        let mut command = match self.command(["attach-session", "-t", target]) {
            Ok(command) => command,
            Err(err) => return err,
        };
        command
            .stdin(Stdio::inherit())
            .stdout(Stdio::inherit())
            .stderr(Stdio::inherit());
        if nest {
            command.env_remove("TMUX").env_remove("TMUX_PANE");
        }
        let err = std::os::unix::process::CommandExt::exec(&mut command);
        if err.kind() == std::io::ErrorKind::NotFound {
            Error::runtime("tmux is not installed")
                .with_hint("install it, e.g. `apt-get install tmux`")
        } else {
            Error::os("run tmux attach", err)
        }
    }
}

/// Where a pane is: what [`Tmux::locate`] finds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub pane: String,
    pub window: String,
    pub session: String,
    /// The pid of the pane's first process (for a member's pane, its supervisor's), while tmux
    /// knows one.
    pub(crate) pid: Option<i32>,
    /// The `@swarm-member` option swarm gave the pane; empty on a pane swarm did not place.
    pub(crate) member: String,
    /// The `@swarm-team` and `@swarm-home` options swarm gave the pane ([`Tmux::mark`]).
    pub(crate) team: String,
    pub(crate) home: String,
}

const LOCATE_FORMAT: &str = "#{pane_id}\t#{window_id}\t#{session_name}\t#{pane_pid}\t\
                             #{@swarm-member}\t#{@swarm-team}\t#{@swarm-home}";

/// swarm's own formats, whose fields a tab separates: the only control characters tmux is given.
const OWN_FORMATS: [&str; 2] = [PANE_FORMAT, LOCATE_FORMAT];

fn parse_located(out: &str) -> Option<Located> {
    let line = out.lines().next().unwrap_or_default();
    // The home, a path, comes last: a tab in it stays in it.
    let mut fields = line.splitn(7, '\t');
    let mut next = || fields.next().unwrap_or_default().to_owned();
    let located = Located {
        pane: next(),
        window: next(),
        session: next(),
        pid: next().parse().ok(),
        member: next(),
        team: next(),
        home: next(),
    };
    (located.pane.starts_with('%') && located.window.starts_with('@')).then_some(located)
}

/// The socket of the tmux server this process runs under, from `$TMUX`; `None` outside tmux.
pub fn current_socket() -> Option<PathBuf> {
    let tmux = std::env::var_os("TMUX").filter(|v| !v.is_empty())?;
    let socket = tmux.to_string_lossy().split(',').next()?.to_owned();
    (!socket.is_empty()).then(|| PathBuf::from(socket))
}

/// Whether two socket paths are one server's: the same file, or the same path when either is
/// gone.
pub fn same_socket(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => a == b,
    }
}

/// tmux splits the argv it is given into commands at every argument that ends with `;`, and reads
/// a trailing `\;` as a literal `;` (tmux 3.3a, `cmd_parse_from_arguments`). So an argument of
/// ours that ends with `;` (a directory, a value, a name) gets a backslash before that `;`, and
/// arrives whole. Nothing else in an argv argument is special to tmux.
fn escape(arg: &OsStr) -> OsString {
    let bytes = arg.as_bytes();
    match bytes.split_last() {
        Some((b';', head)) => {
            let mut escaped = head.to_vec();
            escaped.extend_from_slice(b"\\;");
            OsString::from_vec(escaped)
        }
        _ => arg.to_owned(),
    }
}

fn args<const N: usize>(items: [&str; N]) -> Vec<OsString> {
    items.iter().map(OsString::from).collect()
}

fn push_spec(argv: &mut Vec<OsString>, spec: &PaneSpec<'_>) {
    argv.push("-c".into());
    argv.push(spec.cwd.as_os_str().to_owned());
    for (key, value) in spec.public_env {
        argv.push("-e".into());
        argv.push(escape(OsStr::new(&format!("{key}={value}"))));
    }
    argv.push("--".into());
    argv.extend(spec.argv.iter().cloned());
}

fn parse_pane(out: &str) -> Result<PaneInfo> {
    let line = out.lines().next().unwrap_or_default();
    let mut fields = line.split('\t');
    let mut next = || fields.next().filter(|f| !f.is_empty()).map(str::to_owned);
    match (next(), next(), next(), next()) {
        (Some(pane), Some(window), Some(session), Some(socket)) if pane.starts_with('%') => {
            Ok(PaneInfo {
                pane,
                window,
                session,
                socket: PathBuf::from(socket),
            })
        }
        _ => Err(Error::runtime(format!("tmux printed no pane id: {line:?}"))),
    }
}

/// `show-environment`'s lines: `NAME=value`, or `-NAME` for a variable removed. A line that is
/// neither continues the value before it, which held a line break.
fn parse_environment(out: &str) -> Environment {
    let mut found = Environment::new();
    for line in out.lines() {
        if let Some((name, value)) = line.split_once('=') {
            found.push((name.to_owned(), Some(value.to_owned())));
        } else if let Some(name) = line.strip_prefix('-') {
            found.push((name.to_owned(), None));
        } else if let Some((_, Some(value))) = found.last_mut() {
            value.push('\n');
            value.push_str(line);
        }
    }
    found
}

/// tmux's ways of saying the server, session, window or pane does not exist. "no current target"
/// comes from a server whose last session has just ended, on its way out.
pub(crate) fn is_gone(message: &str) -> bool {
    [
        "no such pane",
        "no such window",
        "no server running",
        "no current target",
        "can't find",
        "error connecting",
        "No such file or directory",
        "server exited",
    ]
    .iter()
    .any(|needle| message.contains(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_argument_is_a_name_or_a_path() {
        assert_eq!(Server::from_arg(None), Server::Default);
        assert_eq!(Server::from_arg(Some("team")), Server::Named("team".into()));
        assert_eq!(
            Server::from_arg(Some("/tmp/x/sock")),
            Server::Path("/tmp/x/sock".into())
        );
    }

    #[test]
    fn attach_names_the_server_as_it_was_chosen() {
        let attach = |server| Tmux::new(server).attach_command("swarm-demo").join(" ");
        assert_eq!(attach(Server::Default), "tmux attach -t swarm-demo");
        assert_eq!(
            attach(Server::Named("team".into())),
            "tmux -L team attach -t swarm-demo"
        );
        assert_eq!(
            attach(Server::Path("/tmp/s".into())),
            "tmux -S /tmp/s attach -t swarm-demo"
        );
    }

    #[test]
    fn show_environment_is_parsed() {
        let found = parse_environment("A=1\n-DISPLAY\nB=x=y\nC=two\nlines\n");
        assert_eq!(
            found,
            [
                ("A".to_owned(), Some("1".to_owned())),
                ("DISPLAY".to_owned(), None),
                ("B".to_owned(), Some("x=y".to_owned())),
                ("C".to_owned(), Some("two\nlines".to_owned())),
            ]
        );
    }

    #[test]
    fn pane_format_is_parsed() {
        let info = parse_pane("%3\t@1\tswarm-demo\t/tmp/s\n").unwrap();
        assert_eq!(info.pane, "%3");
        assert_eq!(info.window, "@1");
        assert!(parse_pane("oops").is_err());
    }

    #[test]
    fn a_located_pane_names_its_window_session_and_member() {
        let located = parse_located("%3\t@1\tswarm-t\t42\tbob\tt\t/h/a\tb\n").unwrap();
        assert_eq!(
            located,
            Located {
                pane: "%3".into(),
                window: "@1".into(),
                session: "swarm-t".into(),
                pid: Some(42),
                member: "bob".into(),
                team: "t".into(),
                home: "/h/a\tb".into(),
            }
        );
        // A pane swarm did not place has no member; a target tmux did not find prints nothing.
        let unplaced = parse_located("%4\t@1\ts\t7\t\t\t").unwrap();
        assert_eq!(
            (unplaced.member, unplaced.team),
            (String::new(), String::new())
        );
        assert!(parse_located("\t\t\t\t\t\t\n").is_none());
    }

    #[test]
    fn a_server_on_its_way_out_has_no_panes() {
        for message in [
            "tmux kill-pane failed: can't find pane: %7",
            "tmux kill-pane failed: no current target",
            "tmux list-panes failed: no server running on /tmp/s",
        ] {
            assert!(is_gone(message), "{message}");
        }
        assert!(!is_gone("tmux split-window failed: no space for new pane"));
    }

    #[test]
    fn a_trailing_semicolon_is_escaped_so_tmux_does_not_split_the_command_there() {
        let escaped = |arg: &str| escape(OsStr::new(arg)).into_string().unwrap();
        assert_eq!(escaped("/w/dir;"), "/w/dir\\;");
        assert_eq!(escaped(";"), "\\;");
        // tmux turns `\\;` back into `;`, so `a\;` must become `a\\;` to arrive as `a\;`.
        assert_eq!(escaped("a\\;"), "a\\\\;");
        for unchanged in ["a;b", "x y; z", "", "plain"] {
            assert_eq!(escaped(unchanged), unchanged);
        }
        let command = Tmux::new(Server::Named("s".into()))
            .command(["new-window", "-c", "/w;"])
            .unwrap();
        let argv: Vec<&OsStr> = command.get_args().collect();
        assert_eq!(argv, ["-L", "s", "-u", "new-window", "-c", "/w\\;"]);
    }

    /// A tmux that exits without reading its input (its server is gone) is waited for, not left
    /// a zombie of the supervisor, which reaps only what its program left behind.
    #[test]
    fn a_command_that_does_not_read_its_input_is_reaped() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let mut command = Command::new("sh");
        command
            .args([
                "-c",
                "echo $$ > \"$1\"; exec 0<&-; echo gone >&2; exit 3",
                "sh",
            ])
            .arg(&pid_file);
        // More than a pipe holds, so the write fails however quickly the command exits.
        let err = Tmux::new(Server::Default)
            .feed(command, "load-buffer", &vec![b'x'; 4 << 20])
            .unwrap_err();
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        assert!(
            !Path::new("/proc").join(pid.trim()).exists(),
            "{} is left a zombie",
            pid.trim()
        );
        // tmux's own complaint says more than the broken pipe.
        assert_eq!(err.message(), "tmux load-buffer failed: gone");
    }

    #[test]
    fn pane_commands_are_argv_lists_with_no_environment() {
        let argv = [OsString::from("prog"), OsString::from("it's; x")];
        let mut out = Vec::new();
        push_spec(
            &mut out,
            &PaneSpec {
                cwd: Path::new("/w"),
                argv: &argv,
                public_env: &[],
            },
        );
        assert_eq!(out, args(["-c", "/w", "--", "prog", "it's; x"]));
    }
}
