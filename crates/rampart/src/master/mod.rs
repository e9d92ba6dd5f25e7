//! Master-worker mode (`-W`, `-Ws`, `master-worker`): a master process that binds the
//! listening sockets, starts the worker that serves on them, supervises it, and on a
//! reload (SIGUSR2, SIGHUP, the master CLI's `reload`) re-executes itself to load the
//! configuration again and start a new worker on the same sockets; only once the new
//! worker is ready are the old ones told to finish (SIGUSR1). A configuration that
//! does not load leaves the old workers serving. HAProxy counterpart: src/mworker.c and
//! the master parts of src/haproxy.c.
//!
//! The listening sockets are the master's: a reload never closes one (connections
//! waiting in its backlog would be reset), the new worker inherits the very sockets
//! the old one accepts on. HAProxy passes them from the old worker (`-x`, `_getsocks`);
//! rampart's master keeps them, which needs no stats socket.
//!
//! - `state`: the records kept across re-executions, `show proc`'s uptime
//! - `ipc`: the master-worker channel (SOCK_SEQPACKET, SCM_RIGHTS)
//! - `notify`: systemd notifications (`-Ws`)
//! - `spawn`: starting a worker, re-executing the master
//! - `program`: the processes of `program` sections
//! - `supervisor`: the master's event loop
//! - `mcli`: the master CLI (`-S`)
//! - `child`: the worker's side
//! - `handover`: the new worker takes over the state of the serving one (beyond HAProxy)

pub mod child;
pub mod handover;
pub mod ipc;
pub mod mcli;
pub mod notify;
pub mod program;
pub mod spawn;
pub mod state;
pub mod supervisor;

use std::ffi::OsString;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::sys::signal::{SigSet, SigmaskHow, Signal};
use rampart_cfg::Config;

pub use child::Role;
use state::{State, MCLI_KEY};
use supervisor::{OnReady, Opts, Supervisor};

use crate::listener::{self, Pooled};
use crate::process::msg::Reporter;

/// What the master starts with.
pub struct Launch {
    pub argv: Vec<OsString>,
    /// Where the first master started (to find a relative `argv[0]` again).
    pub start_dir: Option<PathBuf>,
    /// `Fresh` or `Reexec`.
    pub role: Role,
    /// `-S` arguments.
    pub master_cli: Vec<String>,
    /// `-Ws`.
    pub systemd: bool,
    pub nbthread: usize,
    /// Run once the first worker serves (daemon mode: detach then).
    pub on_ready: Option<OnReady>,
    /// Listening sockets fetched from an old process (`-x`), offered to the `bind`
    /// lines as the previous master's are.
    pub fetched: Vec<Pooled>,
}

/// The signals the master handles, blocked across its re-exec.
fn master_signals() -> SigSet {
    let mut set = SigSet::empty();
    for sig in [
        Signal::SIGCHLD,
        Signal::SIGUSR1,
        Signal::SIGUSR2,
        Signal::SIGHUP,
        Signal::SIGTERM,
        Signal::SIGINT,
        Signal::SIGTTIN,
        Signal::SIGTTOU,
    ] {
        set.add(sig);
    }
    set
}

pub(crate) fn block_signals() {
    let _ = nix::sys::signal::sigprocmask(SigmaskHow::SIG_BLOCK, Some(&master_signals()), None);
}

pub(crate) fn unblock_signals() {
    let _ = nix::sys::signal::sigprocmask(SigmaskHow::SIG_UNBLOCK, Some(&master_signals()), None);
}

/// Runs the master. `cfg` is `None` when a re-executed master could not load the
/// configuration: it then keeps the old workers and their sockets (HAProxy's wait
/// mode). Returns the exit status.
pub fn start(launch: Launch, cfg: Option<&Config>, rep: &mut Reporter) -> i32 {
    let (state, pool, exe) = match launch.role {
        Role::Reexec { state, pool, exe } => (Some(state), pool, exe.map(PathBuf::from)),
        _ => (None, Vec::new(), None),
    };
    let reexec = state.is_some();
    let exe = exe.unwrap_or_else(|| program(&launch.argv, launch.start_dir.as_deref()));
    let state = state.unwrap_or_else(|| State { started: now(), ..State::default() });
    let (mcli_pool, mut pool): (Vec<Pooled>, Vec<Pooled>) =
        listener::adopt_pool(&pool).into_iter().partition(|(k, _, _)| k.starts_with(MCLI_KEY));
    pool.extend(launch.fetched);
    let mut held = Vec::new();
    let mut loaded = false;
    if let Some(cfg) = cfg {
        match bind(cfg, launch.nbthread, std::mem::take(&mut pool), rep) {
            Ok(bound) => {
                held = bound;
                loaded = true;
            }
            Err(kept) if reexec => pool = kept,
            Err(_) => return 1,
        }
    }
    if !loaded {
        held = pool.into_iter().map(|(k, _, fd)| (k, fd)).collect();
    }
    let (mcli, mcli_held) = match bind_master_cli(&launch.master_cli, mcli_pool) {
        Ok(bound) => bound,
        Err(msg) if !reexec => {
            rep.alert(&msg);
            return 1;
        }
        Err(msg) => {
            rep.alert(&msg);
            (Vec::new(), Vec::new())
        }
    };
    held.extend(mcli_held);
    for (_, fd) in &held {
        let _ = ipc::set_cloexec(fd.as_fd(), false);
    }
    let mut sup = Supervisor::new(state, exe, launch.argv, held);
    sup.notifier = notify::Notifier::from_env(launch.systemd);
    sup.on_ready = launch.on_ready;
    if let Some(cfg) = cfg {
        sup.opts = Opts {
            no_exit_on_failure: cfg.global.mworker_no_exit_on_failure,
            max_reloads: cfg.global.mworker_max_reloads,
        };
        sup.programs = Some(cfg.programs.clone());
    }
    if !loaded {
        sup.spawn_worker = false;
        sup.failed_load();
    }
    sup.run(mcli)
}

/// Binds the listeners, taking the pooled sockets of the addresses still configured.
/// `Err` gives the pool back (alerts printed).
fn bind(
    cfg: &Config,
    nbthread: usize,
    pool: Vec<Pooled>,
    rep: &mut Reporter,
) -> Result<Vec<(String, OwnedFd)>, Vec<Pooled>> {
    if crate::process::limits::listener_count(cfg) == 0 {
        rep.alert("[master] No enabled listener found (check for 'bind' directives) ! Exiting.");
        return Err(pool);
    }
    let keep: Vec<Pooled> = pool.iter().filter_map(|(k, f, fd)| Some((k.clone(), *f, fd.try_clone().ok()?))).collect();
    let inherited = listener::adopt_inherited(cfg, pool, true);
    match listener::bind_all(cfg, nbthread, &inherited) {
        Ok(bound) => Ok(bound
            .sockets
            .into_iter()
            .filter_map(|s| Some((s.key?, s.fds)))
            .flat_map(|(k, fds)| fds.into_iter().map(move |fd| (k.clone(), fd)))
            .collect()),
        Err(err) => {
            err.0.iter().for_each(|m| rep.alert(m));
            rep.alert("[master] Some protocols failed to start their listeners! Exiting.");
            Err(keep)
        }
    }
}

/// Sockets the master passes on, by key.
type Held = Vec<(String, OwnedFd)>;

/// Binds the `-S` sockets, or takes them from the previous master.
fn bind_master_cli(specs: &[String], mut pool: Vec<Pooled>) -> Result<(Vec<mcli::Bound>, Held), String> {
    let (mut bound, mut held) = (Vec::new(), Vec::new());
    for text in specs {
        let spec = mcli::parse_spec(text)?;
        let key = format!("{MCLI_KEY}{}", spec.addr);
        let sock = match pool.iter().position(|(k, _, _)| *k == key) {
            Some(i) => mcli::Bound::adopt(pool.swap_remove(i).2),
            None => {
                mcli::bind(&spec).map_err(|e| format!("Cannot bind the master CLI socket '{}' : {e}", spec.addr))?
            }
        };
        let dup = sock.fd().try_clone_to_owned().map_err(|e| format!("master CLI: {e}"))?;
        held.push((key, dup));
        bound.push(sock);
    }
    Ok((bound, held))
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// The program to run for workers and reloads: `argv[0]` as the shell found it (so
/// that a reload after an upgrade runs the new binary, as HAProxy's execvp does),
/// made absolute, else this process's executable.
fn program(argv: &[OsString], start_dir: Option<&Path>) -> PathBuf {
    let current = || std::env::current_exe().unwrap_or_else(|_| PathBuf::from("/proc/self/exe"));
    let Some(arg0) = argv.first().map(PathBuf::from) else { return current() };
    if arg0.is_absolute() {
        return arg0;
    }
    if arg0.components().count() > 1 {
        return start_dir.map_or_else(current, |d| d.join(&arg0));
    }
    let found = std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|p| p.join(&arg0)).find(|p| p.is_file()));
    found.unwrap_or_else(current)
}
