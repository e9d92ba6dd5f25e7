//! Beyond HAProxy: a new worker takes over the state of the worker it replaces on a
//! master-worker reload, without any configuration: servers' administrative states
//! (maintenance, drain), weights and checks set at run time, operational states, and
//! stick-table entries. HAProxy 2.6 needs a `server-state-file` written before the
//! reload for the servers, and a local peer for the tables.
//!
//! How: before it starts its threads, the new worker sends `STATE` to the master on
//! its channel; the master opens a CLI session to the serving worker (as for `@1`) and
//! passes the other end back with `STATE`. The new worker runs `_getstate` on it
//! (`stats::handover` dumps the servers as `show servers state` and the tables'
//! entries) and applies what it reads: the servers' lines as a `server-state-file`
//! with `load-server-state-from-file global` would (`build::server_state`), the
//! entries to the tables of the same name and key type.
//!
//! It never blocks a reload: the whole exchange has [`DEADLINE`]; past it, or on any
//! error (no serving worker, an old worker that does not know `_getstate`, a cut
//! dump), the new worker starts fresh and says why on stderr. The old worker keeps
//! serving meanwhile (it leaves only once the new one is ready), so nothing is lost
//! but the few changes made during the exchange.

use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use rampart_cfg::Config;

use super::ipc;
use crate::proxy::Runtime;
use crate::stats::handover::{DONE, MAGIC};

/// The longest the new worker waits for the old one's state.
pub const DEADLINE: Duration = Duration::from_secs(3);
/// The most a dump may hold (a bound for a broken peer; a table of a million
/// entries takes about 100 MB).
const MAX_DUMP: u64 = 1 << 30;

/// What the takeover gave.
#[derive(Debug, Default)]
pub struct Outcome {
    /// CLI sessions the master routed to this worker meanwhile, to serve once it runs.
    pub cli: Vec<OwnedFd>,
}

/// Asks the master for the serving worker's state and applies it (see the module's
/// doc); warnings and failures go to stderr.
pub fn take_over(ch: &OwnedFd, cfg: &Config, rt: &Runtime) -> Outcome {
    let mut out = Outcome::default();
    let start = Instant::now();
    match fetch(ch, start, &mut out.cli) {
        Ok(None) => {}
        Ok(Some(text)) => {
            for w in apply(cfg, rt, &text) {
                warn(&w);
            }
        }
        Err(why) => warn(&format!("could not take over the state of the previous worker ({why}); starting fresh.")),
    }
    out
}

/// The dump of the serving worker; `None` when no worker serves.
fn fetch(ch: &OwnedFd, start: Instant, cli: &mut Vec<OwnedFd>) -> Result<Option<String>, String> {
    ipc::send_now(ch.as_fd(), ipc::STATE, None).map_err(|e| format!("master channel: {e}"))?;
    let sess = loop {
        let left = DEADLINE.checked_sub(start.elapsed()).ok_or("no answer from the master in time")?;
        let mut fds = [PollFd::new(ch.as_fd(), PollFlags::POLLIN)];
        let ms = PollTimeout::try_from(left.as_millis().min(60_000) as i32).unwrap_or(PollTimeout::ZERO);
        match poll(&mut fds, ms) {
            Ok(0) => continue,
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(format!("master channel: {e}")),
        }
        let mut buf = [0u8; 64];
        let (n, fd) = match crate::sys::recv_with_fd(ch.as_fd(), &mut buf) {
            Ok(got) => got,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock || e.kind() == std::io::ErrorKind::Interrupted => {
                continue
            }
            Err(e) => return Err(format!("master channel: {e}")),
        };
        match (&buf[..n], fd) {
            ([], _) => return Err("the master is gone".into()),
            (t, fd) if t == ipc::STATE.as_bytes() => match fd {
                Some(fd) => break fd,
                None => return Ok(None),
            },
            (t, Some(fd)) if t == ipc::CLI.as_bytes() => cli.push(fd),
            _ => {}
        }
    };
    let mut conn = std::os::unix::net::UnixStream::from(sess);
    let left = |start: Instant| DEADLINE.checked_sub(start.elapsed()).filter(|d| !d.is_zero());
    let timeout = |e: std::io::Error| {
        if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) {
            "the previous worker did not answer in time".to_owned()
        } else {
            format!("previous worker: {e}")
        }
    };
    conn.set_nonblocking(false).map_err(|e| e.to_string())?;
    conn.set_write_timeout(left(start)).map_err(|e| e.to_string())?;
    conn.write_all(b"_getstate\n").map_err(timeout)?;
    let mut text = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    loop {
        let Some(d) = left(start) else { return Err("the previous worker did not answer in time".into()) };
        conn.set_read_timeout(Some(d)).map_err(|e| e.to_string())?;
        match conn.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => text.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(timeout(e)),
        }
        if text.len() as u64 > MAX_DUMP {
            return Err("its state is too large".into());
        }
    }
    let text = String::from_utf8(text).map_err(|_| "its state is not text".to_owned())?;
    if !text.starts_with(MAGIC) {
        return Err("it does not hand its state over (an older version?)".into());
    }
    // (the CLI ends every answer with an empty line)
    if !text.trim_end_matches('\n').ends_with(&format!("\n{DONE}")) {
        return Err("its state was cut".into());
    }
    Ok(Some(text))
}

/// Applies a dump; returns the warnings.
fn apply(cfg: &Config, rt: &Runtime, text: &str) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut lines = text.lines().skip(1);
    while let Some(head) = lines.next() {
        if head == DONE {
            break;
        }
        let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "end").collect();
        if head == "servers" {
            let mut file = body.join("\n");
            file.push('\n');
            match rampart_cfg::state_file::parse(&file) {
                Ok(parsed) => warnings.extend(crate::build::server_state::apply_lines(cfg, rt, parsed)),
                Err(e) => warnings.push(format!("the previous worker's servers were not taken over: {e:?}")),
            }
        } else if head.starts_with("table ") {
            if let Err(why) = crate::stats::handover::apply_table(rt, head, &body) {
                warnings.push(format!("stick-table entries of the previous worker not taken over: {why}."));
            }
        }
    }
    warnings
}

fn warn(msg: &str) {
    let line = format!("{}({}) : {msg}\n", rampart_cfg::Level::Warning.tag(), std::process::id());
    let _ = std::io::stderr().write_all(line.as_bytes());
}
