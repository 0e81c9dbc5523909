//! swarm's benchmark harness (run it with `scripts/bench`). It measures delivery latency through the
//! CLI and the library, throughput with concurrent writers, send latency against inbox size, team
//! start on a private tmux server, a polling reader as the baseline, task claims against the
//! board's size and from concurrent claimers, `swarm top`'s delay and idle CPU, permission asks
//! listed and answered by a person and by a rule, and delivery
//! latency and throughput across two hosts through a private nats-server, all in one run. It
//! prints a table and writes the same figures to target/bench/results.json (and, with --record,
//! to BENCHMARKS.md). Nothing here asserts a time: the figures are reported, and compared with
//! targets.

#![allow(clippy::print_stdout, clippy::cast_precision_loss)]

use std::collections::HashSet;
use std::fmt::Write as _;
use std::fs;
use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use swarm::{Home, InboxMessage, Mailbox, Watcher, named};

const SWARM: &str = env!("CARGO_BIN_EXE_swarm");
const TEAM: &str = "bench";
const WAIT: Duration = Duration::from_secs(60);
/// How many members race to claim tasks (g); they are members `c0`…
const CLAIMERS: usize = 4;

struct Options {
    quick: bool,
    record: bool,
    /// `--only a,c`: run just these figures.
    only: Option<Vec<String>>,
}

impl Options {
    fn runs(&self, id: &str) -> bool {
        self.only
            .as_ref()
            .is_none_or(|only| only.iter().any(|wanted| wanted == id))
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(at) = args.iter().position(|a| a == "--writer") {
        return writer_process(&args[at + 1..]);
    }
    let options = Options {
        quick: args.iter().any(|a| a == "--quick"),
        record: args.iter().any(|a| a == "--record"),
        only: args
            .iter()
            .position(|a| a == "--only")
            .and_then(|at| args.get(at + 1))
            .map(|ids| ids.split(',').map(str::to_owned).collect()),
    };
    assert!(
        !(options.record && options.only.is_some()),
        "--record writes BENCHMARKS.md, which needs every figure; drop --only"
    );
    let scale = |full: usize, quick: usize| if options.quick { quick } else { full };
    let started = Instant::now();
    let mut report = Report::default();

    println!(
        "swarm benchmarks: {} cores; {} samples per latency figure",
        cores(),
        scale(1000, 200)
    );

    let bench = Bench::new();
    if options.runs("a") {
        report.latency(
            "a",
            "CLI delivery: swarm send exec → swarm watch prints",
            bench.cli_latency(scale(1000, 200)),
        );
    }
    // The same send through a fenced member's supervisor, against the member unfenced: both from
    // a member's shell loop, so the difference is what the fence's socket costs.
    if options.runs("a") && bwrap_runs() {
        for fenced in [false, true] {
            report.latency(
                "a",
                if fenced {
                    "CLI delivery, fenced: member's swarm send → watch prints"
                } else {
                    "CLI delivery, unfenced: member's swarm send → watch prints"
                },
                relay_latency(fenced, scale(200, 40)),
            );
        }
    }
    if options.runs("b") {
        report.latency(
            "b",
            "library delivery: Mailbox::append → watcher sees it",
            bench.library_latency(scale(2000, 400)),
        );
    }
    // Each throughput figure is run THROUGHPUT_RUNS times and reported as the minimum and the
    // median: one run is at the mercy of whatever else the machine does, and a stall is a tail.
    for writers in [1, 4, 16].into_iter().filter(|_| options.runs("c")) {
        let total = scale(480, 160);
        let each = total / writers;
        report.throughput(
            "c",
            &format!("CLI throughput, {writers} writer processes"),
            writers,
            writers * each,
            runs(|| bench.cli_throughput(writers, each)),
        );
    }
    for writers in [1, 4, 16].into_iter().filter(|_| options.runs("c")) {
        let total = scale(4800, 960);
        let each = total / writers;
        report.throughput(
            "c",
            &format!("long-lived writer processes: {writers}"),
            writers,
            writers * each,
            runs(|| bench.process_throughput(writers, each)),
        );
    }
    for threads in [1, 4, 16].into_iter().filter(|_| options.runs("c")) {
        let total = scale(4800, 960);
        let each = total / threads;
        report.throughput(
            "c",
            &format!("library throughput, {threads} writer threads"),
            threads,
            threads * each,
            runs(|| bench.library_throughput(threads, each)),
        );
    }
    for unread in [10, 100, 1000, 10_000]
        .into_iter()
        .filter(|_| options.runs("d"))
    {
        let samples = scale(100, 20);
        report.latency(
            "d",
            &format!("swarm send with {unread} unread"),
            bench.send_with_unread(unread, samples),
        );
    }
    for members in [1, 4, 8, 16].into_iter().filter(|_| options.runs("e")) {
        report.latency(
            "e",
            &format!("team start: up → {members} members running"),
            team_start(members, false, scale(20, 3)),
        );
    }
    for members in [1, 4]
        .into_iter()
        .filter(|_| options.runs("e") && bwrap_runs())
    {
        report.latency(
            "e",
            &format!("team start, fenced: up → {members} members running"),
            team_start(members, true, scale(20, 3)),
        );
    }
    if options.runs("e") {
        report.latency("e", TEAM_RESUME, team_resume(RESUMED_MEMBERS, scale(20, 3)));
    }
    if options.runs("f") {
        report.latency(
            "f",
            "polling baseline: re-read every 1000 ms",
            bench.polling_latency(Duration::from_secs(1), scale(20, 6)),
        );
        report.latency(
            "f",
            "polling baseline: re-read every 100 ms",
            bench.polling_latency(Duration::from_millis(100), scale(100, 20)),
        );
    }

    for tasks in [10, 1000].into_iter().filter(|_| options.runs("g")) {
        report.latency(
            "g",
            &format!("swarm task claim with {tasks} tasks on the board"),
            bench.claim_latency(tasks, scale(200, 40)),
        );
    }
    if options.runs("g") {
        let tasks = scale(200, 80);
        report.throughput(
            "g",
            &format!("task claims, {CLAIMERS} claimer processes"),
            CLAIMERS,
            tasks,
            runs(|| bench.claim_throughput(tasks)),
        );
    }

    for kib in [100, 300, 1024].into_iter().filter(|_| options.runs("n")) {
        report.latency(
            "n",
            &format!("swarm log of {kib} KiB of redrawn screens"),
            bench.log_latency(kib, scale(10, 3)),
        );
    }

    if options.runs("h") {
        let (latencies, own, with_children) = dashboard(scale(200, 40), Duration::from_secs(10));
        report.latency(
            "h",
            "dashboard: swarm send exec → swarm top's frame shows it",
            latencies,
        );
        report.cpu(
            "h",
            "dashboard: swarm top's CPU over 10 s with nothing happening",
            own,
            with_children,
        );
    }

    if options.runs("k") {
        let asks = Asks::new();
        let samples = scale(200, 40);
        let (listed, allowed) = asks.listed_and_allowed(samples);
        report.latency("k", ASK_LISTED, listed);
        report.latency("k", ASK_ALLOWED, allowed);
        report.latency("k", ASK_RULED, asks.ruled(samples));
    }

    if options.runs("l") {
        let acts = Activities::new();
        report.latency("l", HOOK_SHOWN, acts.hook_shown(scale(200, 40)));
        let ((top_own, top_all), (screens_own, screens_all)) =
            acts.idle_cpu(Duration::from_secs(10));
        report.cpu("l", TOP_IDLE_TEN, top_own, top_all);
        report.cpu("l", SCREEN_CHECKS, screens_own, screens_all);
    }

    if options.runs("m") {
        let lines = scale(200, 40);
        let mut small = Transcripts::start("small", 0);
        let (ledgered, shown) = small.latency(lines);
        report.latency("m", TRANSCRIPT_LATENCY, ledgered);
        report.latency("m", TRANSCRIPT_SHOWN, shown);
        report.cpu_each("m", TRANSCRIPT_CPU_SMALL, small.cpu_per_line(lines));
        let big = Transcripts::start("big", 100);
        report.cpu_each("m", TRANSCRIPT_CPU_BIG, big.cpu_per_line(lines));
    }

    if options.runs("i") || options.runs("j") {
        let hosts = CrossHost::new();
        if options.runs("i") {
            report.latency("i", CROSS_LATENCY, hosts.latency(scale(1000, 200)));
        }
        if options.runs("j") {
            let each = scale(1200, 300);
            report.throughput(
                "j",
                CROSS_THROUGHPUT,
                4,
                4 * each,
                runs(|| hosts.throughput(4, each)),
            );
        }
    }

    // One TCP connection from a member's program to a loopback server and one byte each way:
    // unfenced and direct, against fenced with an allow-list, through its bridge and proxy.
    if options.runs("p") && bwrap_runs() && runs_here("python3") {
        for fenced in [false, true] {
            report.latency(
                "p",
                if fenced {
                    "connection through a fenced member's allow-list proxy"
                } else {
                    "connection, unfenced and direct"
                },
                proxied_connection(fenced, scale(1000, 200)),
            );
        }
    }

    if options.runs("o") {
        let samples = scale(500, 200);
        let (base, version, inbox) = bench.startup(samples);
        report.startup("o", STARTUP_VERSION, &version, &base);
        report.startup("o", STARTUP_INBOX, &inbox, &base);
    }

    // What bounds the figures above on this machine, measured in the same run: every target is a
    // multiple of these, so it means the same on a faster or a slower machine. Always measured.
    report.latency("ref", DURABLE_WRITE, bench.durable_write(scale(500, 100)));
    let (starts, cpu_each) = process_start(scale(1000, 500));
    report.latency("ref", PROCESS_START, starts);
    report.cpu_each("ref", PROCESS_START_CPU, cpu_each);

    report.finish(started.elapsed(), &options);
}

/// How many times each throughput figure is measured.
const THROUGHPUT_RUNS: usize = 5;

/// `THROUGHPUT_RUNS` runs of one throughput measurement: (messages delivered, time taken) each.
fn runs(mut run: impl FnMut() -> (usize, Duration)) -> Vec<(usize, Duration)> {
    (0..THROUGHPUT_RUNS).map(|_| run()).collect()
}

/// One sandboxed home with a team whose member `sink` receives everything.
struct Bench {
    _dir: tempfile::TempDir,
    home: PathBuf,
}

impl Bench {
    fn new() -> Self {
        let dir = scratch("swbench");
        let home = dir.path().join("home");
        let file = dir.path().join("bench.toml");
        fs::write(
            &file,
            format!(
                "name = \"{TEAM}\"\n[[member]]\nname = \"sink\"\ncommand = [\"true\"]\n{}",
                (0..CLAIMERS).fold(String::new(), |mut members, n| {
                    let _ = writeln!(members, "[[member]]\nname = \"c{n}\"\ncommand = [\"true\"]");
                    members
                })
            ),
        )
        .unwrap();
        init(&home, &file);
        Self { _dir: dir, home }
    }

    fn swarm(&self) -> Command {
        swarm_in(&self.home, TEAM)
    }

    fn mailbox(&self) -> Mailbox {
        Mailbox::new(&Home::new(self.home.clone()).team(TEAM), "sink")
    }

    fn send(&self, text: &str) {
        send_in(&self.home, TEAM, "sink", text);
    }

    fn drain(&self) {
        self.mailbox().consume(None, |_| true).unwrap();
    }

    /// The cost of one durable file replacement, the unit of every inbox write.
    fn durable_write(&self, samples: usize) -> Vec<Duration> {
        let dir = self.home.join("reference");
        fs::create_dir_all(&dir).unwrap();
        let target = dir.join("file.json");
        let bytes = [b'x'; 300];
        (0..samples)
            .map(|_| {
                let start = Instant::now();
                swarm::atomic_write(&target, |out| out.write_all(&bytes)).unwrap();
                start.elapsed()
            })
            .collect()
    }

    /// (a) A `swarm watch` is already waiting; time from just before `swarm send` is exec'd to the
    /// moment the watcher's line is read here.
    fn cli_latency(&self, samples: usize) -> Vec<Duration> {
        self.drain();
        let mut watch = self.swarm();
        watch.args(["watch", "sink", "--json"]);
        watch_latency(watch, samples, "a", |text| self.send(text), || self.drain())
    }

    /// (b) Append through the library; time until a library watcher has read the message.
    fn library_latency(&self, samples: usize) -> Vec<Duration> {
        self.drain();
        let seen = LibraryWatcher::start(self.mailbox());
        let mailbox = self.mailbox();
        let mut latencies = Vec::with_capacity(samples);
        for i in 0..samples {
            let message = InboxMessage::new("bench", &format!("b-{i}"), None, None);
            let id = message.id().into_owned();
            let start = Instant::now();
            mailbox.append(&[message]).unwrap();
            latencies.push(seen.wait_for(&id).duration_since(start));
            if i % 50 == 49 {
                self.drain();
            }
        }
        latencies
    }

    /// (c) `writers` processes each run `swarm send` `each` times while a `swarm watch --consume`
    /// drains the inbox; the figure counts messages delivered to the consumer.
    fn cli_throughput(&self, writers: usize, each: usize) -> (usize, Duration) {
        self.drain();
        let consumer = self
            .swarm()
            .args(["watch", "--consume", "--json"])
            .env("SWARM_AGENT", "sink")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let (arrivals, _reader) = read_lines(consumer);
        self.send("warm-up");
        wait_for_text(&arrivals, "warm-up");
        let start = Instant::now();
        let threads: Vec<_> = (0..writers)
            .map(|w| {
                let home = self.home.clone();
                thread::spawn(move || {
                    for n in 0..each {
                        let status = Command::new(SWARM)
                            .env("SWARM_HOME", &home)
                            .env("SWARM_TEAM", TEAM)
                            .args(["send", "sink", &format!("c-{w}-{n}")])
                            .stdout(Stdio::null())
                            .status()
                            .unwrap();
                        assert!(status.success());
                    }
                })
            })
            .collect();
        let delivered = count_distinct(&arrivals, writers * each, "c-");
        let elapsed = start.elapsed();
        for thread in threads {
            thread.join().unwrap();
        }
        (delivered, elapsed)
    }

    /// (c) `writers` long-lived processes, each appending `each` messages one durable append at a
    /// time, with a consuming watcher draining concurrently.
    fn process_throughput(&self, writers: usize, each: usize) -> (usize, Duration) {
        self.with_consumer(writers * each, || {
            write_from_processes(&self.home, (TEAM, "sink"), writers, each);
        })
    }

    /// (c) The same through the library: `threads` appenders and one consuming watcher.
    fn library_throughput(&self, threads: usize, each: usize) -> (usize, Duration) {
        self.with_consumer(threads * each, || {
            let writers: Vec<_> = (0..threads)
                .map(|_| {
                    let mailbox = self.mailbox();
                    thread::spawn(move || {
                        for n in 0..each {
                            mailbox
                                .append(&[InboxMessage::new(
                                    "bench",
                                    &format!("l-{n}"),
                                    None,
                                    None,
                                )])
                                .unwrap();
                        }
                    })
                })
                .collect();
            for writer in writers {
                writer.join().unwrap();
            }
        })
    }

    /// Runs `write` while a library watcher consumes the sink's inbox; returns how many messages
    /// the consumer received and the time until it had them all.
    fn with_consumer(&self, total: usize, write: impl FnOnce()) -> (usize, Duration) {
        consuming(&self.mailbox(), total, write)
    }

    /// (d) Wall time of one `swarm send` while the receiver has `unread` messages waiting.
    fn send_with_unread(&self, unread: usize, samples: usize) -> Vec<Duration> {
        self.drain();
        let mailbox = self.mailbox();
        let backlog: Vec<InboxMessage> = (0..unread)
            .map(|n| {
                InboxMessage::new(
                    "bench",
                    &format!("backlog message number {n}, about as long as a short instruction"),
                    Some("backlog"),
                    None,
                )
            })
            .collect();
        mailbox.append(&backlog).unwrap();
        let mut latencies = Vec::with_capacity(samples);
        for i in 0..samples {
            let text = format!("d-{unread}-{i}");
            let start = Instant::now();
            self.send(&text);
            latencies.push(start.elapsed());
            // Keep the backlog at exactly `unread` for the next sample.
            mailbox.consume(None, |m| m.text() == text).unwrap();
        }
        self.drain();
        latencies
    }

    /// (n) Wall time of `swarm log -n 1`, exec to exit, of a log of `kib` KiB in which a program
    /// clears its screen and draws again, over and over, with no line break (a TUI's redraws):
    /// linear in the log's size, where each clear once erased a screen as tall as the line.
    fn log_latency(&self, kib: usize, samples: usize) -> Vec<Duration> {
        let logs = self.home.join("teams").join(TEAM).join("logs");
        fs::create_dir_all(&logs).unwrap();
        let log = logs.join("sink.log");
        let mut bytes = Vec::with_capacity(kib << 10);
        let mut frame = 0;
        while bytes.len() < kib << 10 {
            bytes.extend_from_slice(format!("\x1b[2J\x1b[Hframe {frame} status ok").as_bytes());
            frame += 1;
        }
        bytes.extend_from_slice(b"\r\n");
        fs::write(&log, &bytes).unwrap();
        let latencies = (0..samples)
            .map(|_| {
                let start = Instant::now();
                let status = self
                    .swarm()
                    .args(["log", "sink", "-n", "1"])
                    .stdout(Stdio::null())
                    .status()
                    .unwrap();
                assert!(status.success(), "swarm log failed");
                start.elapsed()
            })
            .collect();
        fs::remove_file(&log).unwrap();
        latencies
    }

    /// A fresh task list of `tasks` pending tasks, written as Claude Code writes them.
    fn board(&self, tasks: usize) {
        let dir = self.home.join("tasks").join(TEAM);
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        for id in 1..=tasks {
            fs::write(dir.join(format!("{id}.json")), pending_task(id)).unwrap();
        }
    }

    /// (g) Wall time of one `swarm task claim` (the first available task, which reads the whole
    /// board to choose), exec to exit, with `tasks` pending tasks on the board. The claimed task
    /// is put back between samples, so every claim sees the same board.
    fn claim_latency(&self, tasks: usize, samples: usize) -> Vec<Duration> {
        self.board(tasks);
        let first = self.home.join("tasks").join(TEAM).join("1.json");
        let mut latencies = Vec::with_capacity(samples);
        for _ in 0..samples {
            let start = Instant::now();
            let status = self
                .swarm()
                .args(["task", "claim"])
                .env("SWARM_AGENT", "c0")
                .stdout(Stdio::null())
                .status()
                .unwrap();
            latencies.push(start.elapsed());
            assert!(status.success(), "swarm task claim failed");
            fs::write(&first, pending_task(1)).unwrap();
        }
        latencies
    }

    /// (g) `CLAIMERS` members each run `swarm task claim` in a loop, one process per claim, until
    /// no task is left on a board of `tasks`; the figure counts tasks claimed.
    fn claim_throughput(&self, tasks: usize) -> (usize, Duration) {
        self.board(tasks);
        let start = Instant::now();
        let claimers: Vec<_> = (0..CLAIMERS)
            .map(|n| {
                let home = self.home.clone();
                thread::spawn(move || {
                    let mut won = 0;
                    loop {
                        let status = Command::new(SWARM)
                            .env("SWARM_HOME", &home)
                            .env("SWARM_TEAM", TEAM)
                            .env("SWARM_AGENT", format!("c{n}"))
                            .args(["task", "claim"])
                            .stdout(Stdio::null())
                            .stderr(Stdio::null())
                            .status()
                            .unwrap();
                        match status.code() {
                            Some(0) => won += 1,
                            // Not found: no task is available any more.
                            Some(3) => return won,
                            other => panic!("swarm task claim exited {other:?}"),
                        }
                    }
                })
            })
            .collect();
        let claimed = claimers.into_iter().map(|c| c.join().unwrap()).sum();
        (claimed, start.elapsed())
    }

    /// (o) Start-up: `/bin/true`, `swarm --version` and `swarm inbox` (the person's inbox in the
    /// bench's team, outside every pane) run in turn, `samples` times, so that each sample of the
    /// three sees the same machine: their wall times, spawn to exit.
    fn startup(&self, samples: usize) -> (Vec<Duration>, Vec<Duration>, Vec<Duration>) {
        let mut version = self.swarm();
        version.arg("--version").stdout(Stdio::null());
        let mut inbox = self.swarm();
        inbox
            .arg("inbox")
            .env_remove("SWARM_AGENT")
            .stdout(Stdio::null());
        let (mut base, mut versions, mut inboxes) = (Vec::new(), Vec::new(), Vec::new());
        // The first runs read the binary from disk; they are not start-up.
        for sample in 0..samples + 20 {
            let times = (
                run_timed(&mut true_command()),
                run_timed(&mut version),
                run_timed(&mut inbox),
            );
            if sample >= 20 {
                base.push(times.0);
                versions.push(times.1);
                inboxes.push(times.2);
            }
        }
        (base, versions, inboxes)
    }

    /// (f) A reader that re-reads the inbox every `interval`, as polling tools do; time from just
    /// before `swarm send` to the poll that sees the message. Sends start at random phases.
    fn polling_latency(&self, interval: Duration, samples: usize) -> Vec<Duration> {
        self.drain();
        let (seen_tx, seen_rx) = mpsc::channel::<(String, Instant)>();
        let stop = Arc::new(AtomicBool::new(false));
        let poller = {
            let mailbox = self.mailbox();
            let stop = Arc::clone(&stop);
            thread::spawn(move || {
                let mut known = HashSet::new();
                while !stop.load(Ordering::Relaxed) {
                    thread::sleep(interval);
                    for message in mailbox.peek().unwrap() {
                        if known.insert(message.id().into_owned()) {
                            let _ = seen_tx.send((message.text().to_owned(), Instant::now()));
                        }
                    }
                }
            })
        };
        let mut latencies = Vec::with_capacity(samples);
        let mut phase = 0x2545_f491_4f6c_dd1d_u64;
        for i in 0..samples {
            phase ^= phase << 13;
            phase ^= phase >> 7;
            phase ^= phase << 17;
            thread::sleep(Duration::from_millis(
                phase % u64::try_from(interval.as_millis()).unwrap_or(1),
            ));
            let text = format!("f-{i}");
            let start = Instant::now();
            self.send(&text);
            loop {
                let (seen, at) = seen_rx
                    .recv_timeout(WAIT)
                    .expect("the poller never saw the message");
                if seen == text {
                    latencies.push(at.duration_since(start));
                    break;
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
        poller.join().unwrap();
        latencies
    }
}

/// The cost of starting any process here, which every CLI call pays before doing anything: the
/// wall time of each start, and the CPU time one start costs the started process (its children's
/// CPU from /proc, in clock ticks, over all of them: one start is below a tick).
fn process_start(samples: usize) -> (Vec<Duration>, Duration) {
    let before = cpu_ticks(std::process::id()).1;
    let walls = (0..samples)
        .map(|_| run_timed(&mut true_command()))
        .collect();
    let ticks = cpu_ticks(std::process::id()).1 - before;
    let cpu = Duration::from_secs_f64(ticks as f64 / clock_ticks() / samples as f64);
    (walls, cpu)
}

/// `/bin/true`, the program every start-up figure is compared with.
fn true_command() -> Command {
    let mut command = Command::new("/bin/true");
    command.stdout(Stdio::null());
    command
}

/// Runs `command` to its end, which must be a success; its wall time, spawn to exit.
fn run_timed(command: &mut Command) -> Duration {
    let start = Instant::now();
    let status = command.status().unwrap();
    let took = start.elapsed();
    assert!(status.success(), "{command:?} failed");
    took
}

/// `swarm` with home `home` and team `team`, outside tmux.
fn swarm_in(home: &Path, team: &str) -> Command {
    let mut command = swarm_at(home);
    command.env("SWARM_TEAM", team);
    command
}

/// One `swarm send`, waited for.
fn send_in(home: &Path, team: &str, to: &str, text: &str) {
    let status = swarm_in(home, team)
        .args(["send", to, text])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "swarm send failed");
}

/// Starts `watch` (a `swarm watch --json`), sends a warm-up, then times `samples` sends from
/// just before each is exec'd to the moment the watcher's line for it is read here, emptying the
/// inbox every 50.
fn watch_latency(
    mut watch: Command,
    samples: usize,
    prefix: &str,
    send: impl Fn(&str),
    drain: impl Fn(),
) -> Vec<Duration> {
    let watch = watch
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (arrivals, _reader) = read_lines(watch);
    send("warm-up");
    wait_for_text(&arrivals, "warm-up");
    let mut latencies = Vec::with_capacity(samples);
    for i in 0..samples {
        let text = format!("{prefix}-{i}");
        let start = Instant::now();
        send(&text);
        latencies.push(wait_for_text(&arrivals, &text).duration_since(start));
        if i % 50 == 49 {
            drain();
        }
    }
    latencies
}

/// Runs `write` while a library watcher consumes `mailbox`; returns how many messages the
/// consumer received and the time until it had them all.
fn consuming(mailbox: &Mailbox, total: usize, write: impl FnOnce()) -> (usize, Duration) {
    mailbox.consume(None, |_| true).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let (delivered_tx, delivered_rx) = mpsc::channel();
    let consumer = {
        let mailbox = mailbox.clone();
        let dir = mailbox.inbox_path().parent().unwrap().to_path_buf();
        let stop = Arc::clone(&stop);
        let watcher = Watcher::arm(&dir).unwrap();
        thread::spawn(move || {
            let file = mailbox.file_name().to_owned();
            let mut count = 0;
            while !stop.load(Ordering::Relaxed) && count < total {
                count += mailbox.consume(None, |_| true).unwrap().len();
                if count < total {
                    watcher
                        .wait(
                            Some(Instant::now() + Duration::from_millis(200)),
                            &named(&file),
                        )
                        .unwrap();
                }
            }
            let _ = delivered_tx.send(count);
        })
    };
    let start = Instant::now();
    write();
    let delivered = delivered_rx.recv_timeout(WAIT).unwrap_or(0);
    let elapsed = start.elapsed();
    stop.store(true, Ordering::Relaxed);
    consumer.join().unwrap();
    (delivered, elapsed)
}

const DURABLE_WRITE: &str = "reference: write, fsync, rename and fsync the directory";
const PROCESS_START: &str = "reference: start and wait for /bin/true";
const PROCESS_START_CPU: &str = "reference: CPU time of one /bin/true";
const STARTUP_VERSION: &str = "start-up: swarm --version";
const STARTUP_INBOX: &str = "start-up: swarm inbox (the bench team's, empty)";
const LOCAL_THROUGHPUT: &str = "long-lived writer processes: 4";
const CLAIM_FEW: &str = "swarm task claim with 10 tasks on the board";
const CLAIM_MANY: &str = "swarm task claim with 1000 tasks on the board";
const CROSS_LATENCY: &str = "across hosts: swarm send on A → swarm watch on B prints";
const CROSS_THROUGHPUT: &str = "across hosts: 4 writer processes on A → consumer on B";
/// The team of the figures across hosts: `team-lead` on host A, `far` on host B.
const CROSS_TEAM: &str = "xbench";

/// (i, j) Two hosts on this machine, as the tests make them: two homes, each with its own
/// `swarm node`, sharing one private nats-server with JetStream on loopback; team `xbench` has
/// `team-lead` on host A and `far` on host B in both homes' config.json.
struct CrossHost {
    _dir: tempfile::TempDir,
    a: PathBuf,
    b: PathBuf,
    _server: ChildGuard,
    _nodes: Vec<ChildGuard>,
}

impl CrossHost {
    fn new() -> Self {
        let dir = scratch("swcross");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = format!("nats://127.0.0.1:{port}");
        let mut server = Command::new("nats-server")
            .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
            .arg(dir.path().join("nats"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect(
                "nats-server is needed for the figures across hosts (apt-get install nats-server)",
            );
        let stderr = server.stderr.take().unwrap();
        let (ready, wait) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains("Server is ready") {
                    let _ = ready.send(());
                }
            }
        });
        wait.recv_timeout(WAIT).expect("nats-server did not start");
        let server = ChildGuard(server);
        let file = dir.path().join("xbench.toml");
        fs::write(
            &file,
            format!("name = \"{CROSS_TEAM}\"\n[[member]]\nname = \"far\"\ncommand = [\"true\"]\n"),
        )
        .unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        let mut nodes = Vec::new();
        for (home, host) in [(&a, "hosta"), (&b, "hostb")] {
            init(home, &file);
            let config = home.join("teams").join(CROSS_TEAM).join("config.json");
            let mut team: Value = serde_json::from_slice(&fs::read(&config).unwrap()).unwrap();
            for member in team["members"].as_array_mut().unwrap() {
                let on = if member["name"] == "far" {
                    "hostb"
                } else {
                    "hosta"
                };
                member["host"] = json!(on);
            }
            fs::write(&config, serde_json::to_vec_pretty(&team).unwrap()).unwrap();
            let node = Command::new(SWARM)
                .env("SWARM_HOME", home)
                .env("SWARM_NATS_URL", &url)
                .env_remove("TMUX")
                .env_remove("TMUX_PANE")
                .args(["node", "--name", host])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            nodes.push(ChildGuard(node));
        }
        Self {
            _dir: dir,
            a,
            b,
            _server: server,
            _nodes: nodes,
        }
    }

    fn far(&self) -> Mailbox {
        Mailbox::new(&Home::new(self.b.clone()).team(CROSS_TEAM), "far")
    }

    fn send(&self, text: &str) {
        send_in(&self.a, CROSS_TEAM, "far", text);
    }

    /// (i) A `swarm watch` on host B is waiting; time from just before `swarm send` is exec'd on
    /// host A to the moment B's watcher's line is read here. The warm-up waits for the nodes to
    /// connect and make the stream and the consumer.
    fn latency(&self, samples: usize) -> Vec<Duration> {
        let mut watch = swarm_in(&self.b, CROSS_TEAM);
        watch.args(["watch", "far", "--json"]);
        watch_latency(
            watch,
            samples,
            "i",
            |text| self.send(text),
            || {
                self.far().consume(None, |_| true).unwrap();
            },
        )
    }

    /// (j) `writers` long-lived processes on host A each append `each` messages for `far`, one
    /// durable append at a time; a library consumer on host B takes them as they arrive.
    fn throughput(&self, writers: usize, each: usize) -> (usize, Duration) {
        consuming(&self.far(), writers * each, || {
            write_from_processes(&self.a, (CROSS_TEAM, "far"), writers, each);
        })
    }
}

/// Runs `writers` writer processes (below), each appending `each` messages for `member` of
/// `team` in `home`, and waits for them all.
fn write_from_processes(home: &Path, (team, member): (&str, &str), writers: usize, each: usize) {
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..writers)
        .map(|_| {
            Command::new(&exe)
                .arg("--writer")
                .arg(home)
                .arg(each.to_string())
                .args([team, member])
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success(), "a writer process failed");
    }
}

/// A writer process of the throughput figure: `each` appends of one message, each durable.
fn writer_process(args: &[String]) {
    let home = PathBuf::from(&args[0]);
    let each: usize = args[1].parse().unwrap();
    let mailbox = Mailbox::new(&Home::new(home).team(&args[2]), &args[3]);
    let pid = std::process::id();
    for n in 0..each {
        mailbox
            .append(&[InboxMessage::new(
                "bench",
                &format!("p-{pid}-{n}"),
                None,
                None,
            )])
            .unwrap();
    }
}

/// A library watcher on the sink's inbox that reports when each message id is first seen.
struct LibraryWatcher {
    seen: mpsc::Receiver<(String, Instant)>,
}

impl LibraryWatcher {
    fn start(mailbox: Mailbox) -> Self {
        let dir = mailbox.inbox_path().parent().unwrap().to_path_buf();
        let watcher = Watcher::arm(&dir).unwrap();
        let (sender, seen) = mpsc::channel();
        thread::spawn(move || {
            let file = mailbox.file_name().to_owned();
            let mut known = HashSet::new();
            loop {
                for message in mailbox.peek().unwrap() {
                    if known.insert(message.id().into_owned())
                        && sender
                            .send((message.id().into_owned(), Instant::now()))
                            .is_err()
                    {
                        return;
                    }
                }
                watcher.wait(None, &named(&file)).unwrap();
            }
        });
        Self { seen }
    }

    fn wait_for(&self, id: &str) -> Instant {
        loop {
            let (seen, at) = self
                .seen
                .recv_timeout(WAIT)
                .expect("the watcher never saw the message");
            if seen == id {
                return at;
            }
        }
    }
}

/// Reads a child's JSON lines on a thread, timestamping each as it is read.
fn read_lines(mut child: std::process::Child) -> (mpsc::Receiver<(Value, Instant)>, ChildGuard) {
    let stdout = child.stdout.take().unwrap();
    let (sender, lines) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let at = Instant::now();
            let Ok(value) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if sender.send((value, at)).is_err() {
                break;
            }
        }
    });
    (lines, ChildGuard(child))
}

struct ChildGuard(std::process::Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_for_text(lines: &mpsc::Receiver<(Value, Instant)>, text: &str) -> Instant {
    loop {
        let (value, at) = lines
            .recv_timeout(WAIT)
            .unwrap_or_else(|_| panic!("{text} never arrived"));
        if value["text"] == text {
            return at;
        }
    }
}

fn count_distinct(
    lines: &mpsc::Receiver<(Value, Instant)>,
    expected: usize,
    prefix: &str,
) -> usize {
    let mut ids = HashSet::new();
    while ids.len() < expected {
        let Ok((value, _)) = lines.recv_timeout(WAIT) else {
            break;
        };
        if value["text"]
            .as_str()
            .is_some_and(|t| t.starts_with(prefix))
        {
            ids.insert(value["msg_id"].as_str().unwrap_or_default().to_owned());
        }
    }
    ids.len()
}

/// The team `up --resume` brings back in figure e.
const RESUMED_MEMBERS: usize = 8;

/// Figure e's resume row.
const TEAM_RESUME: &str = "team resume: up --resume → 8 members running";

/// (e) From `swarm up --resume` of a team of `members` generic members, its tmux server killed
/// as a reboot kills it, to every supervisor reporting `running` again.
fn team_resume(members: usize, samples: usize) -> Vec<Duration> {
    let mut times = Vec::with_capacity(samples);
    for _ in 0..samples {
        let dir = tempfile::Builder::new()
            .prefix("swresume")
            .tempdir_in(bench_dir())
            .unwrap();
        let server = PrivateTmux::start(dir.path(), "fixture", (250, 80), &[]);
        let team_file = sleeping_team(dir.path(), members, false);
        let home = dir.path().join("home");
        let swarm = || {
            let mut command = swarm_at(&home);
            command.stdout(Stdio::null());
            command
        };
        let team_dir = home.join("teams/start");
        let config_file = std::ffi::OsStr::new("config.json");
        // Every member in `state`, as config.json records it, and when that was first seen.
        let all_in = |state: &'static str| {
            let watcher = Watcher::arm(&team_dir).unwrap();
            watcher
                .wait_for(Some(Instant::now() + WAIT), &|f| f == config_file, || {
                    let config: Value =
                        serde_json::from_slice(&fs::read(team_dir.join("config.json")).unwrap())
                            .unwrap();
                    let all = config["members"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter(|m| m["state"] == state)
                        .count()
                        == members;
                    Ok(all.then(Instant::now))
                })
                .unwrap()
                .unwrap_or_else(|| panic!("members were not all {state}"))
        };
        let status = swarm()
            .arg("up")
            .arg(&team_file)
            .arg("--socket")
            .arg(&server.socket)
            .status()
            .unwrap();
        assert!(status.success(), "swarm up failed");
        all_in("running");
        // The reboot: the server goes, and each supervisor records its hangup.
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&server.socket)
            .arg("kill-server")
            .status();
        all_in("killed");
        let start = Instant::now();
        let status = swarm().args(["resume", "start"]).status().unwrap();
        assert!(status.success(), "swarm resume failed");
        times.push(all_in("running").duration_since(start));
        let _ = swarm()
            .args(["down", "start", "--force"])
            .stderr(Stdio::null())
            .status();
    }
    times
}

/// Writes `dir/start.toml`, team `start` of `members` members `m0`… that sleep, tiled, each in
/// its sandbox when `fenced`; returns its path.
fn sleeping_team(dir: &Path, members: usize, fenced: bool) -> PathBuf {
    let mut file = String::from("name = \"start\"\nlayout = \"tiled\"\n");
    for n in 0..members {
        let _ = writeln!(
            file,
            "[[member]]\nname = \"m{n}\"\ncommand = [\"sleep\", \"1000\"]\nsandbox = {fenced}"
        );
    }
    let team_file = dir.join("start.toml");
    fs::write(&team_file, file).unwrap();
    team_file
}

/// (e) From `swarm up` of `members` generic members to every supervisor reporting `running`, on a
/// private tmux server; `fenced`, each in its sandbox (`up` builds a trial one first).
fn team_start(members: usize, fenced: bool, samples: usize) -> Vec<Duration> {
    let mut times = Vec::with_capacity(samples);
    for _ in 0..samples {
        let dir = tempfile::Builder::new()
            .prefix("swstart")
            .tempdir_in(bench_dir())
            .unwrap();
        let server = PrivateTmux::start(dir.path(), "fixture", (250, 80), &[]);
        let team_file = sleeping_team(dir.path(), members, fenced);
        let home = dir.path().join("home");
        let swarm = || {
            let mut command = swarm_at(&home);
            command.stdout(Stdio::null());
            command
        };
        let team_dir = home.join("teams/start");
        let start = Instant::now();
        let status = swarm()
            .arg("up")
            .arg(&team_file)
            .arg("--socket")
            .arg(&server.socket)
            .status()
            .unwrap();
        assert!(status.success(), "swarm up failed");
        let watcher = Watcher::arm(&team_dir).unwrap();
        let config_file = std::ffi::OsStr::new("config.json");
        let running = watcher
            .wait_for(Some(Instant::now() + WAIT), &|f| f == config_file, || {
                let config: Value =
                    serde_json::from_slice(&fs::read(team_dir.join("config.json")).unwrap())
                        .unwrap();
                let all = config["members"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|m| m["state"] == "running")
                    .count()
                    == members;
                Ok(all.then(Instant::now))
            })
            .unwrap()
            .expect("members did not all start");
        times.push(running.duration_since(start));
        let _ = swarm()
            .args(["down", "start", "--force"])
            .stderr(Stdio::null())
            .status();
    }
    times
}

/// Whether bubblewrap runs here, for the fenced rows.
fn bwrap_runs() -> bool {
    runs_here("bwrap")
}

/// Whether `program --version` runs here.
fn runs_here(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Figure p's member program: `samples` times, a connection to the server at `port` (through
/// the proxy `HTTPS_PROXY` names, by CONNECT, when there is one) and one byte each way, each
/// timed; the times in nanoseconds, one a line, written to `out`.
const CONNECTION_LOOP: &str = r#"
import os, socket, sys, time
port, samples, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
proxy = os.environ.get("HTTPS_PROXY")
times = []
for _ in range(samples):
    start = time.perf_counter_ns()
    if proxy:
        host, proxy_port = proxy.rsplit("/", 1)[1].rsplit(":", 1)
        s = socket.create_connection((host, int(proxy_port)))
        s.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n" % port)
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            head += s.recv(1)
        assert b" 200 " in head, head
    else:
        s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"x")
    assert s.recv(1) == b"x"
    s.close()
    times.append(time.perf_counter_ns() - start)
with open(out + ".tmp", "w") as f:
    f.write("\n".join(map(str, times)))
os.rename(out + ".tmp", out)
"#;

/// (p) A member's program connects to a loopback server outside any sandbox `samples` times and
/// exchanges a byte: unfenced, directly; `fenced`, in its sandbox with the server's `host:port`
/// on its allow-list, through the bridge on its loopback and its supervisor's proxy.
fn proxied_connection(fenced: bool, samples: usize) -> Vec<Duration> {
    use std::io::Read as _;
    let dir = tempfile::Builder::new()
        .prefix("swproxy")
        .tempdir_in(bench_dir())
        .unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut byte = [0u8; 1];
            if stream.read_exact(&mut byte).is_ok() {
                let _ = stream.write_all(&byte);
            }
        }
    });
    let script = dir.path().join("connect.py");
    fs::write(&script, CONNECTION_LOOP).unwrap();
    let out = dir.path().join("times");
    let network = if fenced {
        format!("sandbox = true\nsandbox_network = [\"127.0.0.1:{port}\"]\n")
    } else {
        String::new()
    };
    let team_file = dir.path().join("proxy.toml");
    fs::write(
        &team_file,
        format!(
            "name = \"proxy\"\ncwd = \"{dir}\"\n[[member]]\nname = \"client\"\n{network}\
             command = [\"python3\", \"{script}\", \"{port}\", \"{samples}\", \"{out}\"]\n",
            dir = dir.path().display(),
            script = script.display(),
            out = out.display(),
        ),
    )
    .unwrap();
    let server = PrivateTmux::start(dir.path(), "fixture", (200, 50), &[]);
    let home = dir.path().join("home");
    up(&home, &team_file, &server);
    let deadline = Instant::now() + Duration::from_secs(300);
    while !out.exists() {
        assert!(
            Instant::now() < deadline,
            "figure p's member wrote no times"
        );
        thread::sleep(Duration::from_millis(50));
    }
    let _ = swarm_at(&home)
        .args(["down", "proxy", "--force"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|line| Duration::from_nanos(line.parse().unwrap()))
        .collect()
}

/// (a, fenced rows) A member `relay` sends each line written to a FIFO in its directory to
/// `sink` with `swarm send`; time from the line written to `swarm watch sink` printing it.
/// `fenced`: `relay` runs in its sandbox, so each send goes through its supervisor.
fn relay_latency(fenced: bool, samples: usize) -> Vec<Duration> {
    let dir = tempfile::Builder::new()
        .prefix("swrelay")
        .tempdir_in(bench_dir())
        .unwrap();
    let server = PrivateTmux::start(dir.path(), "fixture", (200, 50), &[]);
    let fifo = dir.path().join("lines");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let team_file = dir.path().join("relay.toml");
    fs::write(
        &team_file,
        format!(
            "name = \"relay\"\ncwd = \"{dir}\"\n[[member]]\nname = \"sink\"\ncommand = [\"sleep\", \"1000\"]\n\
             [[member]]\nname = \"relay\"\nsandbox = {fenced}\n\
             command = [\"sh\", \"-c\", \"while read -r line; do swarm send sink \\\"$line\\\" >/dev/null; done < lines\"]\n",
            dir = dir.path().display()
        ),
    )
    .unwrap();
    let home = dir.path().join("home");
    up(&home, &team_file, &server);
    // Opening blocks until the relay has opened its end.
    let lines = std::cell::RefCell::new(fs::OpenOptions::new().write(true).open(&fifo).unwrap());
    let mut watch = swarm_at(&home);
    watch.args(["--team", "relay", "watch", "sink", "--json"]);
    let drain = || {
        let _ = swarm_at(&home)
            .args(["--team", "relay", "--as", "sink", "recv"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    };
    let latencies = watch_latency(
        watch,
        samples,
        if fenced { "a-fenced" } else { "a-direct" },
        |text| {
            let mut lines = lines.borrow_mut();
            std::io::Write::write_all(&mut *lines, format!("{text}\n").as_bytes()).unwrap();
        },
        drain,
    );
    let _ = swarm_at(&home)
        .args(["down", "relay", "--force"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    latencies
}

/// A private tmux server (`tmux -S <dir>/tmux.sock -f /dev/null`) with a first session `session`
/// of `size` running `command` (the shell when empty), outside any tmux; killed when dropped.
struct PrivateTmux {
    socket: PathBuf,
}

impl PrivateTmux {
    fn start(dir: &Path, session: &str, size: (u16, u16), command: &[&str]) -> Self {
        let server = Self {
            socket: dir.join("tmux.sock"),
        };
        let (width, height) = (size.0.to_string(), size.1.to_string());
        let mut args = vec![
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            session,
            "-x",
            &width,
            "-y",
            &height,
        ];
        args.extend(command);
        assert!(
            server.output(&args).is_some(),
            "tmux is needed for the figures on a tmux server (e, h)"
        );
        server
    }

    /// Runs a tmux command on this server: its stdout, `None` when it failed.
    fn output(&self, args: &[&str]) -> Option<String> {
        Command::new("tmux")
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|out| out.status.success())
            .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

impl Drop for PrivateTmux {
    fn drop(&mut self) {
        let _ = self.output(&["kill-server"]);
    }
}

/// `swarm up FILE` in `home` on tmux server `server`, waited for.
fn up(home: &Path, file: &Path, server: &PrivateTmux) {
    let status = swarm_at(home)
        .arg("up")
        .arg(file)
        .arg("--socket")
        .arg(&server.socket)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "swarm up failed");
}

/// `swarm` on `home`, outside any tmux.
fn swarm_at(home: &Path) -> Command {
    let mut command = Command::new(SWARM);
    command
        .env("SWARM_HOME", home)
        .env_remove("TMUX")
        .env_remove("TMUX_PANE");
    command
}

const TRANSCRIPT_LATENCY: &str = "transcript line appended → its usage in the ledger";
const TRANSCRIPT_SHOWN: &str = "transcript line appended → swarm status shows the new total";
const TRANSCRIPT_CPU_SMALL: &str = "supervisors' CPU per line, following ten new transcripts";
const TRANSCRIPT_CPU_BIG: &str = "supervisors' CPU per line, following ten 100 MB transcripts";
/// How many claude members (m) follow a transcript each.
const FOLLOWED: usize = 10;

/// A `claude` that writes its session's transcript where Claude Code does, under
/// `$CLAUDE_CONFIG_DIR`, first copying `$BENCH_PREFILL` into it when given, says where in
/// `$BENCH_PATH_FILE`, and waits.
const FAKE_CLAUDE: &str = r#"#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = --session-id ] && sid="$2"; shift; done
d="$CLAUDE_CONFIG_DIR/projects/$(pwd -P | sed 's/[^a-zA-Z0-9]/-/g')"
mkdir -p "$d"
f="$d/$sid.jsonl"
if [ -n "$BENCH_PREFILL" ]; then cat "$BENCH_PREFILL" > "$f"; else : > "$f"; fi
echo "$f" > "$BENCH_PATH_FILE.partial" && mv "$BENCH_PATH_FILE.partial" "$BENCH_PATH_FILE"
exec sleep 100000
"#;

/// One claude member of (m): its transcript and its supervisor, and how many replies the bench
/// appended to it.
struct Followed {
    name: String,
    transcript: PathBuf,
    supervisor: u32,
    replies: u64,
}

/// (m) `FOLLOWED` claude members (a fake that writes where Claude Code writes) on a private tmux
/// server, each transcript `mb` MB of user entries before it starts; the bench appends replies to
/// them in turn.
struct Transcripts {
    // Dropped first: its socket is in `_dir`, which goes last. In the other order the server
    // outlived the run, its socket gone with `dir`.
    _server: PrivateTmux,
    home: PathBuf,
    team: String,
    members: Vec<Followed>,
    next: usize,
    _dir: tempfile::TempDir,
}

impl Transcripts {
    fn start(team: &str, mb: usize) -> Self {
        let dir = scratch("swcost");
        let home = dir.path().join("home");
        let fake = dir.path().join("claude");
        fs::write(&fake, FAKE_CLAUDE).unwrap();
        fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let prefill = dir.path().join("prefill.jsonl");
        if mb > 0 {
            let line = format!(
                "{}\n",
                json!({"type": "user", "message": {"role": "user", "content": "x".repeat(1000)}})
            );
            let mut file = std::io::BufWriter::new(fs::File::create(&prefill).unwrap());
            for _ in 0..(mb * 1_000_000 / line.len()) {
                file.write_all(line.as_bytes()).unwrap();
            }
            file.flush().unwrap();
        }
        let path_file = |n: usize| dir.path().join(format!("transcript-path-{n}"));
        let mut toml = format!("name = \"{team}\"\n");
        for n in 0..FOLLOWED {
            let _ = write!(
                toml,
                "[[member]]\nname = \"m{n}\"\nprofile = \"claude\"\ncommand = [\"{}\"]\n\
                 env = {{ CLAUDE_CONFIG_DIR = \"{}\", BENCH_PATH_FILE = \"{}\", BENCH_PREFILL = \"{}\" }}\n",
                fake.display(),
                dir.path().join("claude-config").display(),
                path_file(n).display(),
                if mb > 0 {
                    prefill.display().to_string()
                } else {
                    String::new()
                },
            );
        }
        let team_file = dir.path().join("team.toml");
        fs::write(&team_file, toml).unwrap();
        let server = PrivateTmux::start(dir.path(), "fixture", (200, 60), &[]);
        up(&home, &team_file, &server);
        let config: Value = serde_json::from_slice(
            &fs::read(home.join("teams").join(team).join("config.json")).unwrap(),
        )
        .unwrap();
        // Up to ten 100 MB copies to make before the fakes say where.
        let deadline = Instant::now() + WAIT * 4;
        let members = (0..FOLLOWED)
            .map(|n| {
                let name = format!("m{n}");
                let transcript = loop {
                    if let Ok(path) = fs::read_to_string(path_file(n)) {
                        break PathBuf::from(path.trim());
                    }
                    assert!(
                        Instant::now() < deadline,
                        "the fake claude {name} never started"
                    );
                    thread::sleep(Duration::from_millis(20));
                };
                let supervisor = config["members"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|m| m["name"] == name.as_str())
                    .and_then(|m| m["supervisorPid"].as_u64())
                    .and_then(|pid| u32::try_from(pid).ok())
                    .expect("the member's supervisor");
                Followed {
                    name,
                    transcript,
                    supervisor,
                    replies: 0,
                }
            })
            .collect();
        let mut transcripts = Self {
            _dir: dir,
            home,
            team: team.to_owned(),
            members,
            next: 0,
            _server: server,
        };
        // Each prefill is read once at the start; the figures are of what follows.
        for _ in 0..FOLLOWED {
            transcripts.append_and_wait();
        }
        transcripts
    }

    fn ledger(&self) -> PathBuf {
        self.home.join("teams").join(&self.team).join("usage.jsonl")
    }

    /// Appends one reply to the next member's transcript, in turn; returns that member's index,
    /// when the reply was appended and when the ledger had it.
    fn append_and_wait(&mut self) -> (usize, Instant, Instant) {
        let at = self.next % FOLLOWED;
        self.next += 1;
        let id = format!("msg_bench_{}", self.next);
        let line = format!(
            "{}\n",
            json!({"type": "assistant", "message": {"id": id, "model": "claude-opus-5-5",
                "usage": {"input_tokens": 10, "output_tokens": 5,
                          "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})
        );
        let ledger = self.ledger();
        let folder = ledger.parent().unwrap().to_path_buf();
        let watcher = Watcher::arm(&folder).unwrap();
        let member = &mut self.members[at];
        let start = Instant::now();
        let mut file = fs::OpenOptions::new()
            .append(true)
            .open(&member.transcript)
            .unwrap();
        file.write_all(line.as_bytes()).unwrap();
        drop(file);
        member.replies += 1;
        let name = ledger.file_name().unwrap().to_owned();
        watcher
            .wait_for(Some(start + WAIT), &|f| f == name, || {
                Ok(fs::read_to_string(&ledger)
                    .unwrap_or_default()
                    .contains(&format!("\"{id}\""))
                    .then(Instant::now))
            })
            .unwrap()
            .map(|seen| (at, start, seen))
            .expect("the reply never reached the ledger")
    }

    /// From each reply appended to the moment it reached the ledger, and to the end of the first
    /// `swarm status --json` (each run from exec, one after another) that shows the member's new
    /// total.
    fn latency(&mut self, lines: usize) -> (Vec<Duration>, Vec<Duration>) {
        let (mut ledgered, mut shown) = (Vec::new(), Vec::new());
        for _ in 0..lines {
            let (at, start, seen) = self.append_and_wait();
            ledgered.push(seen - start);
            let member = &self.members[at];
            loop {
                let out = swarm_in(&self.home, &self.team)
                    .args(["status", "--json"])
                    .output()
                    .unwrap();
                let end = Instant::now();
                assert!(out.status.success(), "swarm status failed");
                let status: Value = serde_json::from_slice(&out.stdout).unwrap();
                let output = status["members"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|m| m["name"] == member.name.as_str())
                    .and_then(|m| m["cost"]["tokens"]["output"].as_u64())
                    .unwrap_or(0);
                if output == member.replies * 5 {
                    shown.push(end - start);
                    break;
                }
                assert!(end < start + WAIT, "status never showed the new total");
            }
        }
        (ledgered, shown)
    }

    /// Every supervisor's CPU time, together, per line followed, over `lines` appended one after
    /// another to the transcripts in turn. Counted in nanoseconds (schedstat): ten processes
    /// counted in 10 ms ticks would each round away more than a line costs.
    fn cpu_per_line(mut self, lines: usize) -> Duration {
        let spent_ns =
            |members: &[Followed]| -> u64 { members.iter().map(|m| cpu_ns(m.supervisor)).sum() };
        let before = spent_ns(&self.members);
        for _ in 0..lines {
            self.append_and_wait();
        }
        let spent = spent_ns(&self.members) - before;
        let _ = swarm_at(&self.home)
            .args(["down", &self.team, "--force"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        Duration::from_nanos(spent / lines as u64)
    }
}

/// The CPU time every thread of process `pid` has run, in nanoseconds (the first field of each
/// thread's /proc schedstat).
fn cpu_ns(pid: u32) -> u64 {
    fs::read_dir(format!("/proc/{pid}/task"))
        .expect("the supervisor is running")
        .filter_map(Result::ok)
        .filter_map(|task| fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|stat| stat.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// How many members the dashboard's team has (h); messages go to each in turn.
const WATCHED: usize = 4;

/// (h) `swarm top` at 120×40 in a pane of a private tmux server, watching a team of `WATCHED`
/// members running there: the time from just before `swarm send` is exec'd to the moment top has
/// flushed the first frame showing the message (its `SWARM_TEST_FRAME_TRACE`), then top's CPU
/// over `idle` with nothing happening, from /proc/<pid>/stat: its own (utime+stime), and with the
/// children it ran and reaped meanwhile (tmux commands), in percent of one core.
fn dashboard(samples: usize, idle: Duration) -> (Vec<Duration>, f64, f64) {
    let dir = tempfile::Builder::new()
        .prefix("swtop")
        .tempdir_in(bench_dir())
        .unwrap();
    let home = dir.path().join("home");
    let trace = dir.path().join("frames");
    let mut file = String::from("name = \"watched\"\n[lead]\ncommand = [\"sleep\", \"1000\"]\n");
    for n in 0..WATCHED {
        let _ = writeln!(
            file,
            "[[member]]\nname = \"m{n}\"\ncommand = [\"sleep\", \"1000\"]"
        );
    }
    let team_file = dir.path().join("watched.toml");
    fs::write(&team_file, file).unwrap();
    let (home_arg, trace_arg) = (
        format!("SWARM_HOME={}", home.display()),
        format!("SWARM_TEST_FRAME_TRACE={}", trace.display()),
    );
    let server = PrivateTmux::start(dir.path(), "fixture", (200, 60), &[]);
    up(&home, &team_file, &server);
    let pid = open_top(&server, "watched", &[&home_arg, &trace_arg]);

    let watcher = Watcher::arm(dir.path()).unwrap();
    let frames = trace.file_name().unwrap().to_owned();
    let shown = |id: &str| -> u128 {
        watcher
            .wait_for(Some(Instant::now() + WAIT), &|f| f == frames, || {
                Ok(fs::read_to_string(&trace)
                    .unwrap_or_default()
                    .lines()
                    .find_map(|line| {
                        let (traced, at) = line.split_once('\t')?;
                        (traced == id).then(|| at.parse().ok()).flatten()
                    }))
            })
            .unwrap()
            .expect("top never showed the message")
    };
    let send = |to: &str, text: &str| -> (u128, String) {
        let start = epoch_ns();
        let out = swarm_at(&home)
            .args(["send", "--team", "watched", "--json", to, text])
            .output()
            .unwrap();
        assert!(out.status.success(), "swarm send failed");
        let sent: Value = serde_json::from_slice(&out.stdout).unwrap();
        (start, sent["msg_id"].as_str().unwrap().to_owned())
    };
    let (_, warm_up) = send("m0", "warm-up");
    shown(&warm_up);
    let mut latencies = Vec::with_capacity(samples);
    for i in 0..samples {
        let (start, id) = send(&format!("m{}", i % WATCHED), &format!("h-{i}"));
        latencies.push(Duration::from_nanos(
            u64::try_from(shown(&id).saturating_sub(start)).unwrap_or(u64::MAX),
        ));
    }

    // Past the look that follows the last message, nothing happens.
    thread::sleep(Duration::from_secs(2));
    let (own, with_children) = cpu_over(&[pid], idle);
    let _ = swarm_at(&home)
        .args(["down", "watched", "--force"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    (latencies, own, with_children)
}

/// Opens `swarm top TEAM` at 120×40 in a new session `top` of `server`, with `env` settings
/// `vars` (`NAME=value`), outside any tmux; returns top's pid.
fn open_top(server: &PrivateTmux, team: &str, vars: &[&str]) -> u32 {
    let mut args = vec![
        "new-session",
        "-d",
        "-s",
        "top",
        "-x",
        "120",
        "-y",
        "40",
        "env",
        "-u",
        "TMUX",
        "-u",
        "TMUX_PANE",
    ];
    args.extend_from_slice(vars);
    args.extend_from_slice(&[SWARM, "top", team]);
    assert!(server.output(&args).is_some(), "cannot open swarm top");
    // `env` execs swarm: the pane's process is top's.
    server
        .output(&["display-message", "-p", "-t", "top", "#{pane_pid}"])
        .and_then(|out| out.trim().parse().ok())
        .expect("top's pid")
}

/// The CPU that processes `pids` use together over `idle`, in percent of one core: their own
/// (utime+stime), and with the children they reaped meanwhile.
fn cpu_over(pids: &[u32], idle: Duration) -> (f64, f64) {
    let total = || {
        pids.iter()
            .map(|pid| cpu_ticks(*pid))
            .fold((0, 0), |(own, reaped), (o, r)| (own + o, reaped + r))
    };
    let before = total();
    let started = Instant::now();
    thread::sleep(idle);
    let took = started.elapsed().as_secs_f64();
    let after = total();
    let percent = |ticks: u64| ticks as f64 / clock_ticks() / took * 100.0;
    (
        percent(after.0 - before.0),
        percent(after.0 + after.1 - before.0 - before.1),
    )
}

const HOOK_SHOWN: &str = "swarm hook claude fires → swarm status shows the activity";
const TOP_IDLE_TEN: &str = "swarm top's CPU over 10 s, 10 members idle at a prompt";
const SCREEN_CHECKS: &str = "10 idle members' supervisors' CPU over 10 s (screen checks)";
/// The team of the activity figures (l): `hooked` runs the hook, `idle0`… sit at a prompt.
const ACTIVITY_TEAM: &str = "acts";
/// How many members of the activity figures sit at a prompt (l).
const AT_PROMPT: usize = 10;

/// (l) A team on a private tmux server whose member `hooked` runs `swarm hook claude`, as Claude
/// Code would, with each event the bench writes into its FIFO, and whose `AT_PROMPT` members are
/// shells waiting at their prompt, which their supervisors' screen checks judge idle.
struct Activities {
    // Dropped first: its socket is in `dir`, which goes last.
    server: PrivateTmux,
    home: PathBuf,
    trigger: PathBuf,
    dir: tempfile::TempDir,
}

impl Activities {
    fn new() -> Self {
        let dir = scratch("swacts");
        let home = dir.path().join("home");
        let trigger = dir.path().join("trigger");
        nix::unistd::mkfifo(&trigger, nix::sys::stat::Mode::S_IRWXU).unwrap();
        // `swarm` is first on a member's PATH: the one that launched it.
        let script = format!(
            "while read -r event < '{trigger}'; do \
             printf '{{\"hook_event_name\": \"%s\", \"session_id\": \"s\"}}' \"$event\" \
             | swarm hook claude 2>>'{errors}'; done",
            trigger = trigger.display(),
            errors = dir.path().join("hook.err").display(),
        );
        let mut file = format!(
            "name = \"{ACTIVITY_TEAM}\"\ncwd = {cwd}\n[lead]\n[[member]]\nname = \"hooked\"\n\
             command = [\"sh\", \"-c\", {script}]\n",
            cwd = Value::from(dir.path().display().to_string()),
            script = Value::from(script),
        );
        for n in 0..AT_PROMPT {
            let _ = writeln!(file, "[[member]]\nname = \"idle{n}\"\ncommand = [\"sh\"]");
        }
        let path = dir.path().join("acts.toml");
        fs::write(&path, file).unwrap();
        let server = PrivateTmux::start(dir.path(), "fixture", (200, 60), &[]);
        up(&home, &path, &server);
        let acts = Self {
            server,
            home,
            trigger,
            dir,
        };
        let every_idle = || {
            let status = acts.status();
            (0..AT_PROMPT).all(|n| Self::activity_of(&status, &format!("idle{n}")) == "idle")
        };
        let deadline = Instant::now() + WAIT;
        while !every_idle() {
            assert!(Instant::now() < deadline, "the shells never showed idle");
            thread::sleep(Duration::from_millis(200));
        }
        acts
    }

    fn status(&self) -> Value {
        let out = swarm_at(&self.home)
            .args(["status", ACTIVITY_TEAM, "--json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "swarm status failed");
        serde_json::from_slice(&out.stdout).unwrap()
    }

    fn activity_of(status: &Value, member: &str) -> String {
        status["members"]
            .as_array()
            .and_then(|members| members.iter().find(|m| m["name"] == member))
            .and_then(|m| m["activity"].as_str())
            .unwrap_or_default()
            .to_owned()
    }

    /// From the hook's event written into the FIFO to the end of the first `swarm status` begun
    /// after the activity file changed that shows `hooked` in the event's state, `samples` times,
    /// alternating a prompt submitted (working) and a turn's end (idle).
    fn hook_shown(&self, samples: usize) -> Vec<Duration> {
        let team = self.home.join("teams").join(ACTIVITY_TEAM);
        let watcher = Watcher::arm(&team).unwrap();
        let mut latencies = Vec::with_capacity(samples);
        for i in 0..=samples {
            let (event, state) = if i % 2 == 0 {
                ("UserPromptSubmit", "working")
            } else {
                ("Stop", "idle")
            };
            let start = Instant::now();
            fs::write(&self.trigger, format!("{event}\n")).unwrap();
            let deadline = start + WAIT;
            loop {
                watcher
                    .wait(
                        Some(deadline),
                        &named(std::ffi::OsStr::new("activity.json")),
                    )
                    .unwrap();
                if Self::activity_of(&self.status(), "hooked") == state {
                    break;
                }
            }
            // The first makes the hook's state differ from the starting one.
            if i > 0 {
                latencies.push(start.elapsed());
            }
        }
        latencies
    }

    /// `swarm top`'s CPU, then that of every idle member's supervisor, over `idle` each.
    fn idle_cpu(&self, idle: Duration) -> ((f64, f64), (f64, f64)) {
        let home_arg = format!("SWARM_HOME={}", self.home.display());
        let top = open_top(&self.server, ACTIVITY_TEAM, &[&home_arg]);
        // Past top's first looks and the screens' last change, nothing happens.
        thread::sleep(Duration::from_secs(3));
        let top_cpu = cpu_over(&[top], idle);
        let _ = self.server.output(&["kill-session", "-t", "top"]);
        let config: Value = serde_json::from_slice(
            &fs::read(
                self.home
                    .join("teams")
                    .join(ACTIVITY_TEAM)
                    .join("config.json"),
            )
            .unwrap(),
        )
        .unwrap();
        let supervisors: Vec<u32> = (0..AT_PROMPT)
            .map(|n| {
                let member = format!("idle{n}");
                config["members"]
                    .as_array()
                    .and_then(|members| members.iter().find(|m| m["name"] == member))
                    .and_then(|m| m["supervisorPid"].as_u64())
                    .and_then(|pid| u32::try_from(pid).ok())
                    .expect("an idle member's supervisor pid")
            })
            .collect();
        (top_cpu, cpu_over(&supervisors, idle))
    }
}

impl Drop for Activities {
    fn drop(&mut self) {
        let _ = swarm_at(&self.home)
            .args(["down", ACTIVITY_TEAM, "--force"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = &self.dir;
    }
}

const ASK_LISTED: &str = "permission ask writes its request → swarm permission list shows it";
const ASK_ALLOWED: &str = "swarm permission allow exec → the asking permission ask exits 0";
const ASK_RULED: &str =
    "permission ask writes its request → a [permissions] rule's answer recorded";
/// The team of the permission figures (k): `asker` asks, the person outside every pane answers.
const ASK_TEAM: &str = "asks";

/// (k) A team on a private tmux server whose member `asker` runs `swarm permission ask Bash` in
/// its pane, signed and judged as any teammate's, each time the bench writes a command into its
/// FIFO, and appends the command and the ask's exit status to a file when the ask has ended. The
/// team's rule allows `git status`; every other command waits for `permission allow`.
struct Asks {
    // Dropped first: its socket is in `dir`, which goes last.
    _server: PrivateTmux,
    home: PathBuf,
    trigger: PathBuf,
    ended: PathBuf,
    dir: tempfile::TempDir,
}

impl Asks {
    fn new() -> Self {
        let dir = scratch("swasks");
        let home = dir.path().join("home");
        let (trigger, ended) = (dir.path().join("trigger"), dir.path().join("ended"));
        nix::unistd::mkfifo(&trigger, nix::sys::stat::Mode::S_IRWXU).unwrap();
        // `swarm` is first on a member's PATH: the one that launched it.
        let script = format!(
            "while read -r cmd < '{trigger}'; do \
             swarm permission ask Bash --input \"{{\\\"command\\\": \\\"$cmd\\\"}}\" >/dev/null 2>>'{errors}'; \
             echo \"$cmd $?\" >> '{ended}'; done",
            trigger = trigger.display(),
            ended = ended.display(),
            errors = dir.path().join("ask.err").display(),
        );
        let file = dir.path().join("asks.toml");
        fs::write(
            &file,
            format!(
                "name = \"{ASK_TEAM}\"\ncwd = {cwd}\n[permissions]\nallow = [\"Bash(git status:*)\"]\n[lead]\n\
                 [[member]]\nname = \"asker\"\ncommand = [\"sh\", \"-c\", {script}]\n",
                cwd = Value::from(dir.path().display().to_string()),
                script = Value::from(script),
            ),
        )
        .unwrap();
        let server = PrivateTmux::start(dir.path(), "fixture", (200, 60), &[]);
        up(&home, &file, &server);
        let asks = Self {
            dir,
            home,
            trigger,
            ended,
            _server: server,
        };
        // The first ask waits for the member to start and its pane's shell to read the FIFO.
        let (id, _) = asks.ask("warm-up");
        asks.allow(&id);
        asks.wait_ended("warm-up");
        asks
    }

    fn lead(&self) -> Mailbox {
        Mailbox::new(&Home::new(self.home.clone()).team(ASK_TEAM), "team-lead")
    }

    /// Has the asker ask for `command`: waits until its request is in the lead's inbox and returns
    /// its id and the moment the lead's inbox changed to hold it, seen by a watcher armed before.
    fn ask(&self, command: &str) -> (String, Instant) {
        let lead = self.lead();
        let inboxes = lead.inbox_path().parent().unwrap().to_path_buf();
        let file = lead.file_name().to_owned();
        let watcher = Watcher::arm(&inboxes).unwrap();
        fs::write(&self.trigger, format!("{command}\n")).unwrap();
        let deadline = Instant::now() + WAIT;
        loop {
            watcher.wait(Some(deadline), &named(&file)).unwrap();
            let changed = Instant::now();
            // A rule may have answered and retired it already: history holds it then.
            let found = request_for(&lead.messages().unwrap(), command)
                .or_else(|| request_for(&lead.history().unwrap(), command));
            if let Some(id) = found {
                return (id, changed);
            }
            assert!(
                Instant::now() < deadline,
                "the ask for {command} never arrived"
            );
        }
    }

    fn allow(&self, id: &str) {
        let status = swarm_in(&self.home, ASK_TEAM)
            .args(["permission", "allow", id])
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "swarm permission allow failed");
    }

    /// The moment the asker's line for `command` is in the file of ended asks, exit status 0.
    fn wait_ended(&self, command: &str) -> Instant {
        let watcher = Watcher::arm(self.dir.path()).unwrap();
        let file = self.ended.file_name().unwrap().to_owned();
        let line = format!("{command} 0");
        watcher
            .wait_for(Some(Instant::now() + WAIT), &named(&file), || {
                let ended = fs::read_to_string(&self.ended).unwrap_or_default();
                if let Some(other) = ended
                    .lines()
                    .find(|l| l.starts_with(&format!("{command} ")) && *l != line)
                {
                    panic!(
                        "the ask for {command} ended {other}: {}",
                        fs::read_to_string(self.dir.path().join("ask.err")).unwrap_or_default()
                    );
                }
                Ok(ended.lines().any(|l| l == line).then(Instant::now))
            })
            .unwrap()
            .unwrap_or_else(|| panic!("the ask for {command} never ended"))
    }

    /// Until the lead's inbox holds no ask unanswered: the answer retires it after it is sent.
    fn settle(&self) {
        let lead = self.lead();
        let watcher = Watcher::arm(lead.inbox_path().parent().unwrap()).unwrap();
        let file = lead.file_name().to_owned();
        watcher
            .wait_for(Some(Instant::now() + WAIT), &named(&file), || {
                let waiting = lead.peek().unwrap().iter().any(|m| {
                    serde_json::from_str::<Value>(m.text())
                        .is_ok_and(|t| t["type"] == "permission_request")
                });
                Ok((!waiting).then_some(()))
            })
            .unwrap()
            .expect("an answered ask stayed in the lead's inbox");
    }

    /// (k) For each sample the asker asks for a command no rule decides: the time from the lead's
    /// inbox holding the request to the first `swarm permission list --json` that shows it
    /// exiting (each run from exec), and from `swarm permission allow` exec to the ask's exit 0.
    fn listed_and_allowed(&self, samples: usize) -> (Vec<Duration>, Vec<Duration>) {
        let (mut listed, mut allowed) = (Vec::new(), Vec::new());
        for n in 0..samples {
            let command = format!("make k-{n}");
            let (id, written) = self.ask(&command);
            loop {
                let out = swarm_in(&self.home, ASK_TEAM)
                    .args(["permission", "list", "--json"])
                    .output()
                    .unwrap();
                let shown = Instant::now();
                assert!(out.status.success(), "swarm permission list failed");
                let list: Value = serde_json::from_slice(&out.stdout).unwrap();
                if list
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|ask| ask["requestId"] == id.as_str())
                {
                    listed.push(shown.duration_since(written));
                    break;
                }
            }
            let start = Instant::now();
            self.allow(&id);
            allowed.push(self.wait_ended(&command).duration_since(start));
            self.settle();
        }
        (listed, allowed)
    }

    /// (k) For each sample the asker asks for a command the team's rule allows: the time from the
    /// lead's inbox holding the request to the rule's answer recorded in permissions.jsonl.
    fn ruled(&self, samples: usize) -> Vec<Duration> {
        let team = self.home.join("teams").join(ASK_TEAM);
        let record = team.join("permissions.jsonl");
        let record_name = record.file_name().unwrap().to_owned();
        (0..samples)
            .map(|n| {
                let command = format!("git status k-{n}");
                let watcher = Watcher::arm(&team).unwrap();
                let (id, written) = self.ask(&command);
                let recorded = watcher
                    .wait_for(Some(Instant::now() + WAIT), &named(&record_name), || {
                        let answers = fs::read_to_string(&record).unwrap_or_default();
                        Ok(answers
                            .lines()
                            .any(|line| {
                                serde_json::from_str::<Value>(line).is_ok_and(|answer| {
                                    answer["requestId"] == id.as_str()
                                        && answer["by"] == "rule: Bash(git status:*)"
                                })
                            })
                            .then(Instant::now))
                    })
                    .unwrap()
                    .expect("no rule answered the ask");
                self.wait_ended(&command);
                self.settle();
                recorded.duration_since(written)
            })
            .collect()
    }
}

impl Drop for Asks {
    fn drop(&mut self) {
        let _ = swarm_at(&self.home)
            .args(["down", ASK_TEAM, "--force"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// The id of the `permission_request` among `messages` for Bash command `command`.
fn request_for(messages: &[InboxMessage], command: &str) -> Option<String> {
    messages.iter().find_map(|message| {
        let request: Value = serde_json::from_str(message.text()).ok()?;
        (request["type"] == "permission_request" && request["input"]["command"] == command)
            .then(|| request["request_id"].as_str().map(str::to_owned))
            .flatten()
    })
}

fn epoch_ns() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// Process `pid`'s CPU time in clock ticks: its own (utime+stime), and that of the children it
/// has reaped (cutime+cstime).
fn cpu_ticks(pid: u32) -> (u64, u64) {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).expect("top is running");
    // The fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<u64> = stat[stat.rfind(')').unwrap() + 2..]
        .split(' ')
        .map(|field| field.parse().unwrap_or(0))
        .collect();
    // Fields 14 to 17 of proc(5), counted from the state, field 3.
    (fields[11] + fields[12], fields[13] + fields[14])
}

/// The kernel's clock ticks per second, in which /proc counts CPU time.
fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|out| String::from_utf8_lossy(&out.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

/// Task `id`, pending and unowned, in Claude Code's shape.
fn pending_task(id: usize) -> String {
    serde_json::to_string_pretty(&json!({
        "id": id.to_string(), "subject": format!("task {id}"),
        "description": "a task on the bench's board, about as long as a short description",
        "status": "pending", "blocks": [], "blockedBy": [],
    }))
    .unwrap()
}

/// Where the homes under test live: `SWARM_BENCH_DIR` (to measure another file system), else
/// /tmp, short enough for tmux and peer socket paths.
/// A temporary folder under [`bench_dir`], removed when dropped.
fn scratch(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(bench_dir())
        .unwrap()
}

/// `swarm init TEAMFILE` in `home`.
fn init(home: &Path, file: &Path) {
    let status = Command::new(SWARM)
        .env("SWARM_HOME", home)
        .arg("init")
        .arg(file)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "swarm init failed");
}

fn bench_dir() -> PathBuf {
    std::env::var_os("SWARM_BENCH_DIR").map_or_else(|| PathBuf::from("/tmp"), PathBuf::from)
}

fn cores() -> usize {
    thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

#[derive(Default)]
struct Report {
    rows: Vec<Value>,
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

impl Report {
    fn latency(&mut self, id: &str, name: &str, mut samples: Vec<Duration>) {
        samples.sort();
        // The nearest-rank percentile, in thousandths.
        let at = |permille: usize| {
            samples[(samples.len() * permille)
                .div_ceil(1000)
                .clamp(1, samples.len())
                - 1]
        };
        let row = json!({
            "id": id, "name": name, "kind": "latency", "samples": samples.len(),
            "median_ms": millis(at(500)), "p99_ms": millis(at(990)), "max_ms": millis(*samples.last().unwrap()),
        });
        println!(
            "  {id}  {name:<55} median {:>8.2} ms  p99 {:>8.2} ms  max {:>8.2} ms  (n={})",
            millis(at(500)),
            millis(at(990)),
            millis(*samples.last().unwrap()),
            samples.len()
        );
        self.rows.push(row);
    }

    fn throughput(
        &mut self,
        id: &str,
        name: &str,
        writers: usize,
        expected: usize,
        runs: Vec<(usize, Duration)>,
    ) {
        let mut rates: Vec<f64> = runs
            .iter()
            .map(|(delivered, elapsed)| *delivered as f64 / elapsed.as_secs_f64())
            .collect();
        rates.sort_by(f64::total_cmp);
        let min = rates[0];
        // The lower median of an even count: never flattering.
        let median = rates[(rates.len() - 1) / 2];
        let fewest = runs
            .iter()
            .map(|(delivered, _)| *delivered)
            .min()
            .unwrap_or(0);
        let shown: Vec<String> = runs
            .iter()
            .map(|(delivered, elapsed)| format!("{:.0}", *delivered as f64 / elapsed.as_secs_f64()))
            .collect();
        let unit = if id == "g" { "claims/s" } else { "msg/s" };
        println!(
            "  {id}  {name:<55} min {min:>6.0}  median {median:>6.0} {unit}  (runs: {}; fewest delivered {fewest}/{expected})",
            shown.join(", ")
        );
        self.rows.push(json!({
            "id": id, "name": name, "kind": "throughput", "writers": writers, "runs": runs.len(),
            "delivered": fewest, "expected": expected,
            "min_per_second": min, "median_per_second": median,
            "per_second_runs": runs.iter().map(|(d, e)| *d as f64 / e.as_secs_f64()).collect::<Vec<_>>(),
            "seconds_runs": runs.iter().map(|(_, e)| e.as_secs_f64()).collect::<Vec<_>>(),
        }));
    }

    /// A process's CPU use, in percent of one core: its own, and with its reaped children.
    fn cpu(&mut self, id: &str, name: &str, own: f64, with_children: f64) {
        println!(
            "  {id}  {name:<55} {own:>6.2}% of a core  ({with_children:.2}% with the tmux commands it runs)"
        );
        self.rows.push(json!({
            "id": id, "name": name, "kind": "cpu", "own_percent": own,
            "with_children_percent": with_children,
        }));
    }

    /// A start-up figure: the wall times of one command, `samples`, each run beside one of `base`
    /// (`/bin/true`); the median of the paired ratios is what the target reads.
    fn startup(&mut self, id: &str, name: &str, samples: &[Duration], base: &[Duration]) {
        let median = |times: &[Duration]| {
            let mut sorted = times.to_vec();
            sorted.sort();
            sorted[(sorted.len() - 1) / 2]
        };
        let mut ratios: Vec<f64> = samples
            .iter()
            .zip(base)
            .map(|(swarm, base)| swarm.as_secs_f64() / base.as_secs_f64())
            .collect();
        ratios.sort_by(f64::total_cmp);
        let ratio = ratios[(ratios.len() - 1) / 2];
        let (own, base) = (millis(median(samples)), millis(median(base)));
        println!(
            "  {id}  {name:<55} median {own:>8.2} ms  /bin/true {base:.2} ms  {ratio:.2}× paired  (n={})",
            samples.len()
        );
        let command = name.split_once(": ").map_or(name, |(_, command)| command);
        let command = command.split(" (").next().unwrap_or(command);
        self.rows.push(json!({
            "id": id, "name": name, "kind": "startup", "command": command, "samples": samples.len(),
            "median_ms": own, "base_median_ms": base, "paired_ratio": ratio,
        }));
    }

    /// The CPU time one operation costs, measured over many.
    fn cpu_each(&mut self, id: &str, name: &str, each: Duration) {
        println!("  {id}  {name:<55} {:>8.3} ms of CPU", millis(each));
        self.rows
            .push(json!({"id": id, "name": name, "kind": "cpu_each", "cpu_ms": millis(each)}));
    }

    fn find(&self, name: &str) -> Option<&Value> {
        self.rows.iter().find(|row| row["name"] == name)
    }

    /// The issue's targets, checked against this run's figures; those whose figures were not
    /// run (`--only`) are left out. Each is a multiple of something the same run measured (the
    /// `ref` rows, or another figure), never a time or a rate on its own: see READING.
    fn targets(&self) -> Vec<Value> {
        let value = |name: &str, field: &str| self.find(name).and_then(|row| row[field].as_f64());
        let durable = value(DURABLE_WRITE, "median_ms").unwrap_or(f64::NAN);
        // The least a command that writes costs: a process start and one durable write.
        let floor = durable + value(PROCESS_START, "median_ms").unwrap_or(f64::NAN);
        let floors = |ms: f64| format!("{:.1}× ({ms:.2} ms)", ms / floor);
        let mut targets = Vec::new();
        let cli = "CLI delivery: swarm send exec → swarm watch prints";
        if let (Some(p50), Some(p99)) = (value(cli, "median_ms"), value(cli, "p99_ms")) {
            targets.push(target(
                "a",
                "CLI p50 ≤ 5 F and p99 ≤ 20 F",
                format!("p50 {}, p99 {}", floors(p50), floors(p99)),
                p50 <= 5.0 * floor && p99 <= 20.0 * floor,
            ));
        }
        let lib = "library delivery: Mailbox::append → watcher sees it";
        if let Some(p50) = value(lib, "median_ms") {
            targets.push(target(
                "b",
                "library p50 ≤ 3 W",
                format!("p50 {:.1}× ({p50:.3} ms)", p50 / durable),
                p50 <= 3.0 * durable,
            ));
        }
        // Back to back, durable writes would come at this rate.
        let writes_per_second = 1000.0 / durable;
        if let Some(four) = self.find(LOCAL_THROUGHPUT) {
            targets.push(throughput_target(
                "c",
                "from 4 writer processes ≥ ⅓ of 1/W (minimum of the runs), all delivered",
                four,
                (writes_per_second / 3.0, writes_per_second),
            ));
        }
        if let (Some(many), Some(few)) = (
            value("swarm send with 1000 unread", "median_ms"),
            value("swarm send with 10 unread", "median_ms"),
        ) {
            let ratio = many / few;
            targets.push(target(
                "d",
                "send at 1,000 unread ≤ 3× send at 10 unread",
                format!("{ratio:.2}×"),
                ratio <= 3.0,
            ));
        }
        if let Some(few) = value(CLAIM_FEW, "median_ms") {
            targets.push(target(
                "g",
                "claim on 10 tasks ≤ 4 F",
                floors(few),
                few <= 4.0 * floor,
            ));
        }
        if let (Some(many), Some(few)) = (
            value(CLAIM_MANY, "median_ms"),
            value(CLAIM_FEW, "median_ms"),
        ) {
            let ratio = many / few;
            targets.push(target(
                "g",
                "claim on 1,000 tasks ≤ 3× claim on 10 tasks",
                format!("{ratio:.2}×"),
                ratio <= 3.0,
            ));
        }
        // Issue 24's 50, 20 and 20 ms, at the F of the run that first recorded k (1.97 ms).
        for (name, what, limit) in [
            (
                ASK_LISTED,
                "an ask listed by permission list ≤ 25 F (median)",
                25.0,
            ),
            (
                ASK_ALLOWED,
                "allow → the asking process exits ≤ 10 F (median)",
                10.0,
            ),
            (ASK_RULED, "an ask answered by a rule ≤ 10 F (median)", 10.0),
        ] {
            if let Some(p50) = value(name, "median_ms") {
                targets.push(target(
                    "k",
                    what,
                    format!("p50 {}", floors(p50)),
                    p50 <= limit * floor,
                ));
            }
        }
        if let Some(p50) = value(HOOK_SHOWN, "median_ms") {
            targets.push(target(
                "l",
                "a hook's activity shown by status ≤ 25 F (median)",
                format!("p50 {}", floors(p50)),
                p50 <= 25.0 * floor,
            ));
        }
        if let Some(start_ms) = value(PROCESS_START_CPU, "cpu_ms") {
            for (name, what) in [
                (TOP_IDLE_TEN, "top idle with 10 members"),
                (SCREEN_CHECKS, "10 idle members' screen checks"),
            ] {
                if let Some(percent) = value(name, "with_children_percent") {
                    // Percent of a core is ten milliseconds of CPU a second.
                    let starts = percent * 10.0 / start_ms;
                    targets.push(target(
                        "l",
                        &format!("{what} ≤ the CPU of 20 process starts a second"),
                        format!("{starts:.1} a second ({percent:.2}% of a core)"),
                        starts <= 20.0,
                    ));
                }
            }
        }
        if let Some(p50) = value(CROSS_LATENCY, "median_ms") {
            targets.push(target(
                "i",
                "across hosts p50 ≤ 10 F",
                format!("p50 {}", floors(p50)),
                p50 <= 10.0 * floor,
            ));
        }
        if let (Some(cross), Some(local)) = (
            self.find(CROSS_THROUGHPUT),
            value(LOCAL_THROUGHPUT, "min_per_second"),
        ) {
            targets.push(throughput_target(
                "j",
                "across hosts from 4 writers ≥ ⅓ of c's 4 (minimum of the runs), all delivered",
                cross,
                (local / 3.0, local),
            ));
        }
        if let (Some(large), Some(small)) = (
            value("swarm log of 1024 KiB of redrawn screens", "median_ms"),
            value("swarm log of 300 KiB of redrawn screens", "median_ms"),
        ) {
            let ratio = large / small;
            targets.push(target(
                "n",
                "swarm log of 1 MiB of redraws ≤ 5× that of 300 KiB (linear: 3.4×)",
                format!("{ratio:.2}×"),
                ratio <= 5.0,
            ));
        }
        let shown = "dashboard: swarm send exec → swarm top's frame shows it";
        if let Some(p50) = value(shown, "median_ms") {
            targets.push(target(
                "h",
                "a message on the dashboard within 50 F (median)",
                format!("p50 {}", floors(p50)),
                p50 <= 50.0 * floor,
            ));
        }
        let idle = "dashboard: swarm top's CPU over 10 s with nothing happening";
        if let (Some(percent), Some(start_ms)) = (
            value(idle, "with_children_percent"),
            value(PROCESS_START_CPU, "cpu_ms"),
        ) {
            // Percent of a core is ten milliseconds of CPU a second.
            let starts = percent * 10.0 / start_ms;
            targets.push(target(
                "h",
                "an idle dashboard, its tmux commands included, ≤ the CPU of 20 process starts a second",
                format!("{starts:.1} a second ({percent:.2}% of a core)"),
                starts <= 20.0,
            ));
        }
        if let (Some(eight), Some(one)) = (
            value("team start: up → 8 members running", "median_ms"),
            value("team start: up → 1 members running", "median_ms"),
        ) {
            let ratio = eight / one;
            targets.push(target(
                "e",
                "8 members running in ≤ 8× the time of 1",
                format!("{ratio:.2}× (median {eight:.0} ms)"),
                ratio <= 8.0,
            ));
        }
        if let (Some(resumed), Some(started)) = (
            value(TEAM_RESUME, "median_ms"),
            value("team start: up → 8 members running", "median_ms"),
        ) {
            let ratio = resumed / started;
            targets.push(target(
                "e",
                "8 members resumed in ≤ 1.5× the time 8 take to start",
                format!("{ratio:.2}× (median {resumed:.0} ms)"),
                ratio <= 1.5,
            ));
        }
        for (name, limit) in [(STARTUP_VERSION, 1.5), (STARTUP_INBOX, 3.0)] {
            if let Some(row) = self.find(name) {
                let ratio = row["paired_ratio"].as_f64().unwrap_or(f64::NAN);
                targets.push(target(
                    "o",
                    &format!(
                        "{} ≤ {limit}× /bin/true (paired)",
                        row["command"].as_str().unwrap()
                    ),
                    format!("{ratio:.2}× ({:.2} ms)", row["median_ms"].as_f64().unwrap()),
                    ratio <= limit,
                ));
            }
        }
        targets
    }

    fn finish(&self, took: Duration, options: &Options) {
        let targets = self.targets();
        println!("\ntargets:");
        for target in &targets {
            println!(
                "  {}  {:<52} {:<28} {}",
                target["id"].as_str().unwrap(),
                target["target"].as_str().unwrap(),
                target["measured"].as_str().unwrap(),
                if target["met"] == true {
                    "met"
                } else {
                    "MISSED"
                }
            );
        }
        println!("\nfinished in {:.0} s", took.as_secs_f64());
        let machine = machine();
        let results = json!({"machine": machine, "quick": options.quick, "seconds": took.as_secs_f64(), "figures": self.rows, "targets": targets});
        let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench");
        fs::create_dir_all(&out).unwrap();
        fs::write(
            out.join("results.json"),
            serde_json::to_string_pretty(&results).unwrap(),
        )
        .unwrap();
        println!("wrote {}", out.join("results.json").display());
        if options.record {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("BENCHMARKS.md");
            fs::write(&path, self.markdown(&results)).unwrap();
            println!("wrote {}", path.display());
        }
    }

    fn markdown(&self, results: &Value) -> String {
        let machine = &results["machine"];
        let mut md = String::from("# Benchmarks\n\n");
        let _ = writeln!(
            md,
            "Produced by `scripts/bench --record` (`cargo bench --bench swarm -- --record`); the same figures are in `target/bench/results.json`.\n"
        );
        let _ = writeln!(
            md,
            "Machine: {} cores, {}, Linux {}, {}, swarm {}. Run on {} in {:.0} s; load average at the end {} (1, 5, 15 minutes): other work slows every figure, and the floors each target is a multiple of with them.\n",
            machine["cores"],
            machine["cpu"].as_str().unwrap_or("?"),
            machine["kernel"].as_str().unwrap_or("?"),
            machine["tmux"].as_str().unwrap_or("?"),
            machine["swarm"].as_str().unwrap_or("?"),
            machine["date"].as_str().unwrap_or("?"),
            results["seconds"].as_f64().unwrap_or(0.0),
            machine["load"].as_str().unwrap_or("?"),
        );
        md.push_str("| | figure | median | p99 | max | samples |\n|---|---|---:|---:|---:|---:|\n");
        for row in self.rows.iter().filter(|r| r["kind"] == "latency") {
            let _ = writeln!(
                md,
                "| {} | {} | {:.2} ms | {:.2} ms | {:.2} ms | {} |",
                row["id"].as_str().unwrap(),
                row["name"].as_str().unwrap(),
                row["median_ms"].as_f64().unwrap(),
                row["p99_ms"].as_f64().unwrap(),
                row["max_ms"].as_f64().unwrap(),
                row["samples"]
            );
        }
        md.push_str(
            "\n| | throughput | min messages/s | median messages/s | fewest delivered | runs |\n|---|---|---:|---:|---:|---:|\n",
        );
        for row in self.rows.iter().filter(|r| r["kind"] == "throughput") {
            let _ = writeln!(
                md,
                "| {} | {} | {:.0} | {:.0} | {}/{} | {} |",
                row["id"].as_str().unwrap(),
                row["name"].as_str().unwrap(),
                row["min_per_second"].as_f64().unwrap(),
                row["median_per_second"].as_f64().unwrap(),
                row["delivered"],
                row["expected"],
                row["runs"]
            );
        }
        let cpu: Vec<&Value> = self.rows.iter().filter(|r| r["kind"] == "cpu").collect();
        if !cpu.is_empty() {
            md.push_str("\n| | CPU | own | with its children |\n|---|---|---:|---:|\n");
            for row in cpu {
                let _ = writeln!(
                    md,
                    "| {} | {} | {:.2}% | {:.2}% |",
                    row["id"].as_str().unwrap(),
                    row["name"].as_str().unwrap(),
                    row["own_percent"].as_f64().unwrap(),
                    row["with_children_percent"].as_f64().unwrap()
                );
            }
        }
        let startup: Vec<&Value> = self
            .rows
            .iter()
            .filter(|r| r["kind"] == "startup")
            .collect();
        if !startup.is_empty() {
            md.push_str("\n| | start-up | median | /bin/true beside it | ratio (median of pairs) | samples |\n|---|---|---:|---:|---:|---:|\n");
            for row in startup {
                let _ = writeln!(
                    md,
                    "| {} | {} | {:.2} ms | {:.2} ms | {:.2}× | {} |",
                    row["id"].as_str().unwrap(),
                    row["name"].as_str().unwrap(),
                    row["median_ms"].as_f64().unwrap(),
                    row["base_median_ms"].as_f64().unwrap(),
                    row["paired_ratio"].as_f64().unwrap(),
                    row["samples"]
                );
            }
        }
        for row in self.rows.iter().filter(|r| r["kind"] == "cpu_each") {
            let _ = writeln!(
                md,
                "\n{} ({}): {:.3} ms.",
                row["name"].as_str().unwrap(),
                row["id"].as_str().unwrap(),
                row["cpu_ms"].as_f64().unwrap()
            );
        }
        md.push_str(READING);
        md.push_str("\n| | target | measured | |\n|---|---|---|---|\n");
        for target in results["targets"].as_array().unwrap() {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} |",
                target["id"].as_str().unwrap(),
                target["target"].as_str().unwrap(),
                target["measured"].as_str().unwrap(),
                if target["met"] == true {
                    "met"
                } else {
                    "missed"
                }
            );
        }
        md
    }
}

/// How to read the tables; the same on every machine, so it is part of the generator.
const READING: &str = "
Reading the figures:
- Every target is a multiple of something this run measured, so it means the same on a faster or
  a slower machine: W is one durable write (the first `ref` row), F the floor of a command that
  writes, one process start and one durable write (both `ref` rows), 1/W the rate of durable
  writes back to back; c's 4 long-lived writers bound j, the CPU of one /bin/true bounds an idle
  dashboard, one member's start bounds eight, and each start-up row (o) is the median of its
  ratios to /bin/true run beside it, pair by pair.
- Every inbox write replaces the file durably: temporary file, fsync, rename, directory fsync
  (the first `ref` row). A consume also appends to history with an fsync. Throughput is bound by
  the disk's fsync latency; writers that find the inbox busy spool their messages and share the
  holder's rewrite, which is why 4 and 16 writers beat 1.
- The CLI rows run one `swarm send` process per message, so each also pays a process start (the
  second `ref` row) before its write. Long-lived writer processes append through the library in
  a loop; target c is measured on them, and must hold for the slowest of the runs.
- Each throughput figure is measured in several runs, reported as the minimum and the median: a
  stall shows in the minimum. Another process writing heavily to the same file system makes every
  fsync wait for its data (ext4's ordered mode), and with each writer waiting for its own message
  the figures fall with the fsync latency: a loop of `dd bs=1M count=64 conv=fsync` beside the
  bench brings 4 writer processes to about 200 msg/s, as a single run once recorded.
- A task claim slowed 2.8× on a machine whose fsync was 2.2× and process start 1.4× slower
  because little of a claim is either. `strace -c` counts two fsyncs per claim (the task file and
  its directory), as many as W; on the machine first recorded here W was 0.34 ms of a 3.10 ms
  claim. The rest is swarm's own work: about 500 system calls (config, the board, the caller's
  processes in /proc, the mkdir, rename and rmdir of the lock Claude Code's proper-lockfile
  takes, whose rmdir can wait on the journal commit the directory's fsync began) and about 300 page
  faults, to /bin/true's 29 calls and 50 faults. A virtual machine slows system calls, page faults
  and journal waits more than the two floors show, so g's targets are multiples of F, and swarm's
  start is its own figure (o).
- Send latency grows with the unread backlog because the inbox is one JSON array that is read
  and rewritten whole: that is Claude Code's format, kept so both tools share a team.
- k is what a teammate's permission ask waits on. Listing it is one `permission list`: a process
  start, a look at the team (each member's supervisor checked by its pid; the panes, through tmux,
  and every process, in /proc, only when one looks gone), the lead's inbox and history.
  An allow is a process that looks the same way, has the answer signed by the team's agent,
  writes it into the member's inbox, records it and retires the ask, each durably; the asking
  process wakes on its inbox and takes the answer out of it (durably too) before it exits. A
  rule's answer starts no process, but makes the same writes from the agent's thread, which
  reads only what the lead's inbox, history and record gained since it last looked.
- l is what knowing each agent's activity costs. A hook runs at every tool call of a Claude Code
  teammate: a process start and one read of the team's activity file when nothing changed, one
  locked durable write and an event appended when something did; the row times a change, from
  the hook's event to a `swarm status` that shows it. Idle, each member's supervisor looks at its
  screen only when its output stops, and top redraws only when a file it watches changes: the CPU
  rows are what 10 members idle at a prompt cost, against the CPU of one /bin/true.
";

/// A throughput target: met when the slowest run reaches `wanted` messages a second and every
/// message arrived; the rates are shown as multiples of `reference`, the rate `wanted` is a part of.
fn throughput_target(id: &str, what: &str, row: &Value, (wanted, reference): (f64, f64)) -> Value {
    let min = row["min_per_second"].as_f64().unwrap_or(0.0);
    let median = row["median_per_second"].as_f64().unwrap_or(0.0);
    let all_delivered = row["delivered"] == row["expected"];
    target(
        id,
        what,
        format!(
            "min {:.2}× ({min:.0} msg/s), median {:.2}×, {}/{} delivered",
            min / reference,
            median / reference,
            row["delivered"],
            row["expected"]
        ),
        min >= wanted && all_delivered,
    )
}

fn target(id: &str, what: &str, measured: String, met: bool) -> Value {
    json!({"id": id, "target": what, "measured": measured, "met": met})
}

fn machine() -> Value {
    let cpu = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let output = |program: &str, args: &[&str]| {
        Command::new(program)
            .args(args)
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default()
    };
    json!({
        "cores": cores(),
        "cpu": cpu,
        "kernel": output("uname", &["-r"]),
        "tmux": output("tmux", &["-V"]),
        "swarm": env!("CARGO_PKG_VERSION"),
        "date": output("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        "load": fs::read_to_string("/proc/loadavg")
            .map(|load| load.split_whitespace().take(3).collect::<Vec<_>>().join(", "))
            .unwrap_or_default(),
    })
}
