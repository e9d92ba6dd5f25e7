//! The watchdog: each worker thread's event loop stores a heartbeat (its turn count) as
//! it wakes up and on each timer-wheel tick, one relaxed store each; a monitor thread
//! compares it with the CPU time the thread used since the heartbeat stopped moving. A
//! thread that burnt 100 ms of CPU without coming back to its loop is reported on
//! stderr; one stuck for 1 s aborts the process, as HAProxy's watchdog kills it. An idle
//! thread uses no CPU, so a quiet loop is never reported. Also what `show threads` and
//! `show activity` print.
//!
//! HAProxy counterparts: src/wdt.c (`wdt_handler`), `ha_thread_dump()` and
//! `cli_io_handler_show_threads` (src/debug.c), `cli_io_handler_show_activity`
//! (src/activity.c). Not here: the per-thread task counters HAProxy shows beside.
//!
//! What a reported thread was running: code that may run long without coming back to
//! the loop (a Lua script, a CLI command, the test trigger) labels itself with
//! [`doing`] for as long as it runs (one relaxed store on entry and one on exit; the
//! per-request code of a configuration without Lua stores nothing), and the report
//! names the label it finds. Unlabelled code is reported as such.
//!
//! The test-only trigger (`debug dev loop`, a task that keeps a worker loop busy) exists
//! only when [`DEBUG_DEV_ENV`] is set when the process starts.

use std::cell::Cell;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI32, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::OnceLock;
use std::time::Duration;

/// CPU time without coming back to the loop after which a thread is reported.
pub const WARN_AFTER: Duration = Duration::from_millis(100);
/// CPU time without coming back to the loop after which the process aborts.
pub const KILL_AFTER: Duration = Duration::from_secs(1);
/// How often the monitor looks.
const CHECK_EVERY: Duration = Duration::from_millis(20);
/// Set (to anything) in the environment of a test: enables `debug dev loop`.
pub const DEBUG_DEV_ENV: &str = "RAMPART_TEST_DEBUG_DEV";

/// One worker thread's heartbeat.
#[derive(Debug, Default)]
struct Beat {
    /// Loop turns and wheel ticks so far (only the thread itself stores it).
    turns: AtomicU64,
    /// The thread's kernel id, 0 until it registered.
    tid: AtomicI32,
    /// 1 while the monitor sees it stuck (for `show threads`).
    stuck: AtomicU64,
    /// What it runs now ([`Doing`] as a number; only the thread itself stores it).
    doing: AtomicU8,
}

/// Labels for what a worker thread runs, named in the watchdog's report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Doing {
    /// Nothing labelled: the event loop itself or a task without a label.
    Other = 0,
    /// A Lua script (an action, fetch, converter, service, task or CLI command).
    Lua,
    /// A command of the stats socket.
    Cli,
    /// The test trigger `debug dev loop`.
    DebugLoop,
}

impl Doing {
    fn from_u8(v: u8) -> Doing {
        match v {
            1 => Doing::Lua,
            2 => Doing::Cli,
            3 => Doing::DebugLoop,
            _ => Doing::Other,
        }
    }

    /// The words of the report.
    pub fn describe(self) -> &'static str {
        match self {
            Doing::Other => "no labelled code (a connection's stream, a health check, a timer or the loop itself)",
            Doing::Lua => "a Lua script",
            Doing::Cli => "a command of the stats socket",
            Doing::DebugLoop => "the test trigger 'debug dev loop'",
        }
    }
}

/// Restores the label that was there before [`doing`] when dropped.
#[must_use = "the label lasts as long as the guard"]
pub struct DoingGuard(Option<(&'static Beat, u8)>);

impl Drop for DoingGuard {
    fn drop(&mut self) {
        if let Some((b, prev)) = self.0 {
            b.doing.store(prev, Relaxed);
        }
    }
}

/// Labels what the calling worker thread runs until the guard drops. Only around code
/// that does not give the loop back meanwhile (no `.await` while the guard lives).
/// Nothing on a thread that is not a worker.
pub fn doing(what: Doing) -> DoingGuard {
    DoingGuard(MINE.with(Cell::get).map(|b| (b, b.doing.swap(what as u8, Relaxed))))
}

static BEATS: OnceLock<Box<[Beat]>> = OnceLock::new();
/// The worker loops' handles, kept only with [`DEBUG_DEV_ENV`] (for `debug dev loop`).
static HANDLES: OnceLock<Box<[OnceLock<tokio::runtime::Handle>]>> = OnceLock::new();

thread_local! {
    static MINE: Cell<Option<&'static Beat>> = const { Cell::new(None) };
    static TURNS: Cell<u64> = const { Cell::new(0) };
}

/// Sizes the heartbeats for `nbthread` worker threads and starts the monitor thread.
/// Call once, before the worker threads start.
pub fn start(nbthread: usize) {
    let beats = BEATS.get_or_init(|| (0..nbthread).map(|_| Beat::default()).collect());
    if std::env::var_os(DEBUG_DEV_ENV).is_some() {
        let _ = HANDLES.set((0..nbthread).map(|_| OnceLock::new()).collect());
    }
    let spawned = std::thread::Builder::new().name("watchdog".into()).spawn(move || monitor(beats));
    if let Err(e) = spawned {
        eprintln!("[WARNING]  ({}) : watchdog: cannot start its thread: {e}", std::process::id());
    }
}

/// Called by worker thread `thread` (0-based) from inside its event loop.
pub fn register(thread: usize) {
    let Some(beat) = BEATS.get().and_then(|b| b.get(thread)) else { return };
    beat.tid.store(nix::unistd::gettid().as_raw(), Relaxed);
    MINE.with(|m| m.set(Some(beat)));
    if let (Some(slot), Ok(handle)) = (HANDLES.get().and_then(|h| h.get(thread)), tokio::runtime::Handle::try_current())
    {
        let _ = slot.set(handle);
    }
}

/// The heartbeat: one relaxed store. Called as the loop wakes up and on each wheel tick.
pub fn beat() {
    if let Some(b) = MINE.with(Cell::get) {
        let n = TURNS.with(|t| {
            let n = t.get() + 1;
            t.set(n);
            n
        });
        b.turns.store(n, Relaxed);
    }
}

/// What the monitor remembers of a thread.
#[derive(Clone, Copy, Default)]
struct Seen {
    turns: u64,
    /// The thread's CPU time at the first look that found `turns` unchanged (`None`
    /// while it moves: a healthy thread, woken by its wheel every tick, costs the
    /// monitor no `/proc` read).
    cpu_at_stop: Option<Duration>,
    warned: bool,
}

fn monitor(beats: &'static [Beat]) {
    let mut seen = vec![Seen::default(); beats.len()];
    loop {
        std::thread::sleep(CHECK_EVERY);
        for (i, (b, s)) in beats.iter().zip(&mut seen).enumerate() {
            let (tid, turns) = (b.tid.load(Relaxed), b.turns.load(Relaxed));
            if turns != s.turns || tid == 0 {
                *s = Seen { turns, cpu_at_stop: None, warned: false };
                b.stuck.store(0, Relaxed);
                continue;
            }
            let Some(cpu) = thread_cpu(tid) else { continue };
            // COMPAT: the CPU used before the first look (under CHECK_EVERY) is not counted
            let stuck = cpu.saturating_sub(*s.cpu_at_stop.get_or_insert(cpu));
            if stuck >= KILL_AFTER {
                report(format!(
                    "[ALERT]    ({}) : watchdog: thread {} (tid {tid}) stuck for {} ms of CPU without coming back to \
                     its event loop (turn {turns}), running {}: aborting the process.",
                    std::process::id(),
                    i + 1,
                    stuck.as_millis(),
                    running(b)
                ));
                std::process::abort();
            }
            if stuck >= WARN_AFTER && !s.warned {
                s.warned = true;
                b.stuck.store(1, Relaxed);
                report(format!(
                    "[WARNING]  ({}) : watchdog: thread {} (tid {tid}) has not come back to its event loop for {} ms \
                     of CPU (turn {turns}), running {}.",
                    std::process::id(),
                    i + 1,
                    stuck.as_millis(),
                    running(b)
                ));
            }
        }
    }
}

/// What thread `b` runs, as its label says.
fn running(b: &Beat) -> &'static str {
    Doing::from_u8(b.doing.load(Relaxed)).describe()
}

/// Writes a report line with one system call, so that it reaches a log scraper whole.
fn report(mut line: String) {
    use std::io::Write;
    line.push('\n');
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// The CPU time thread `tid` of this process used (user + system), from
/// `/proc/self/task/<tid>/stat`.
fn thread_cpu(tid: i32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    // fields after "(comm) ": state is the 1st, utime the 12th, stime the 13th
    let mut f = stat.rsplit_once(") ")?.1.split(' ').skip(11);
    let ticks = f.next()?.parse::<u64>().ok()? + f.next()?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 1000 / clock_ticks()))
}

fn clock_ticks() -> u64 {
    static HZ: OnceLock<u64> = OnceLock::new();
    *HZ.get_or_init(|| {
        nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK).ok().flatten().map_or(100, |v| v.max(1) as u64)
    })
}

// === CLI ===

/// `show threads`: one block per worker thread, shaped like HAProxy's.
pub fn show_threads() -> String {
    let mut out = String::new();
    for (i, b) in BEATS.get().map_or(&[][..], |b| &b[..]).iter().enumerate() {
        let tid = b.tid.load(Relaxed);
        let cpu = thread_cpu(tid).unwrap_or_default();
        let _ = write!(
            out,
            "  Thread {} : id={tid} stuck={} loops={}\n             cpu_ns: now={}\n             running: {}\n",
            i + 1,
            b.stuck.load(Relaxed),
            b.turns.load(Relaxed),
            cpu.as_nanos(),
            running(b)
        );
    }
    out
}

/// `show activity`: totals then one value per thread, as HAProxy's rows.
pub fn show_activity() -> String {
    let beats = BEATS.get().map_or(&[][..], |b| &b[..]);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let mut out =
        format!("thread_id: 0 (1..{})\ndate_now: {}.{:06}\n", beats.len(), now.as_secs(), now.subsec_micros());
    let row = |out: &mut String, name: &str, vals: Vec<u128>| {
        let _ = write!(out, "{name}: {} [", vals.iter().sum::<u128>());
        for v in &vals {
            let _ = write!(out, " {v}");
        }
        out.push_str(" ]\n");
    };
    row(&mut out, "loops", beats.iter().map(|b| u128::from(b.turns.load(Relaxed))).collect());
    let cpu = beats.iter().map(|b| thread_cpu(b.tid.load(Relaxed)).unwrap_or_default().as_nanos()).collect();
    row(&mut out, "cpu_ns", cpu);
    row(&mut out, "stuck", beats.iter().map(|b| u128::from(b.stuck.load(Relaxed))).collect());
    out
}

/// `debug dev loop <ms> [<thread>]` (only with [`DEBUG_DEV_ENV`]): keeps worker thread
/// `thread` (1-based, default 1) busy for `ms` milliseconds without returning to its
/// loop. `None` when the command is not enabled.
pub fn debug_dev_loop(words: &[&str]) -> Option<String> {
    let handles = HANDLES.get()?;
    let ms: u64 = match words.first().and_then(|w| w.parse().ok()) {
        Some(ms) => ms,
        None => return Some("Usage: debug dev loop <ms> [<thread>]\n".into()),
    };
    let thread = words.get(1).and_then(|w| w.parse::<usize>().ok()).unwrap_or(1);
    let Some(h) = handles.get(thread.wrapping_sub(1)).and_then(OnceLock::get) else {
        return Some("No such thread.\n".into());
    };
    h.spawn(async move {
        let _doing = doing(Doing::DebugLoop);
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_millis(ms) {
            std::hint::spin_loop();
        }
    });
    Some(String::new())
}
