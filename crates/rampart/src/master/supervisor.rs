//! The master's event loop: spawns the worker, reaps workers and reports their exits,
//! forwards signals, tells the older workers to leave once a new one is ready, serves
//! the master CLI, and reloads by re-executing itself. HAProxy counterpart:
//! `mworker_loop()`, `mworker_reexec()` (src/haproxy.c) and the signal handlers of
//! src/mworker.c.

use std::collections::HashMap;
use std::ffi::OsString;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::Arc;

use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::mpsc;

use super::ipc::{self, Channel};
use super::mcli::{self, Request, Target};
use super::notify::Notifier;
use super::state::{self, Phase, State, Worker};

/// What the configuration and the command line ask of the master.
#[derive(Debug, Clone, Default)]
pub struct Opts {
    /// `master-worker no-exit-on-failure`.
    pub no_exit_on_failure: bool,
    /// `mworker-max-reloads`.
    pub max_reloads: Option<u32>,
}

/// Runs once the first worker is ready (the daemon's parent may exit then).
pub type OnReady = Box<dyn FnOnce() -> Result<(), String>>;

/// The master.
pub struct Supervisor {
    pub state: State,
    /// Program and arguments, for the workers and the re-exec.
    pub exe: PathBuf,
    pub argv: Vec<OsString>,
    /// Sockets passed to the workers and kept across re-execs (not close-on-exec),
    /// by key: listeners and master CLI sockets.
    pub held: Vec<(String, OwnedFd)>,
    pub opts: Opts,
    pub notifier: Notifier,
    /// This master loaded its configuration and starts a worker; `false` after a
    /// failed reload (the old workers keep serving).
    pub spawn_worker: bool,
    pub on_ready: Option<OnReady>,
    /// The `program` sections of the configuration this master loaded (`None` after
    /// a failed reload: the running programs stay as they are).
    pub programs: Option<Vec<rampart_cfg::model::Program>>,
    channels: HashMap<i32, Arc<Channel>>,
    /// A stop signal was received: exit once the workers are gone.
    stopping: bool,
    /// Status of the first current worker that failed (HAProxy's `exitcode`).
    exit_code: Option<i32>,
}

/// Something that happened, for the loop.
enum Event {
    Msg(i32, ipc::Msg),
    Cli(Request),
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// `[NOTICE]`/`[WARNING]`/`[ALERT]` lines of the master, on its stderr.
/// Until the load concluded, they are also the master's startup logs.
fn say(level: rampart_cfg::Level, msg: &str) {
    let line = format!("{}({}) : {msg}\n", level.tag(), std::process::id());
    crate::process::startup_log::record(&line);
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
}

fn notice(msg: &str) {
    say(rampart_cfg::Level::Notice, msg);
}

fn warning(msg: &str) {
    say(rampart_cfg::Level::Warning, msg);
}

fn alert(msg: &str) {
    say(rampart_cfg::Level::Alert, msg);
}

impl Supervisor {
    pub fn new(state: State, exe: PathBuf, argv: Vec<OsString>, held: Vec<(String, OwnedFd)>) -> Supervisor {
        Supervisor {
            state,
            exe,
            argv,
            held,
            opts: Opts::default(),
            notifier: Notifier::default(),
            spawn_worker: true,
            on_ready: None,
            programs: None,
            channels: HashMap::new(),
            stopping: false,
            exit_code: None,
        }
    }

    /// Runs the master until the last worker is gone; returns the exit status.
    pub fn run(mut self, mcli: Vec<mcli::Bound>) -> i32 {
        let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(rt) => rt,
            Err(e) => {
                alert(&format!("cannot start the master's event loop: {e}"));
                return 1;
            }
        };
        rt.block_on(async move { self.main_loop(mcli).await })
    }

    async fn main_loop(&mut self, mcli: Vec<mcli::Bound>) -> i32 {
        let sig = |k: i32| signal(SignalKind::from_raw(k));
        let signals = (|| {
            Ok::<_, std::io::Error>([
                sig(libc::SIGCHLD)?,
                sig(libc::SIGUSR2)?,
                sig(libc::SIGHUP)?,
                sig(libc::SIGTERM)?,
                sig(libc::SIGINT)?,
                sig(libc::SIGUSR1)?,
                sig(libc::SIGTTIN)?,
                sig(libc::SIGTTOU)?,
            ])
        })();
        // blocked by the master that re-executed this one, so that none was lost
        super::unblock_signals();
        let Ok([mut chld, mut usr2, mut hup, mut term, mut int, mut usr1, mut ttin, mut ttou]) = signals else {
            alert("cannot install the master's signal handlers");
            return 1;
        };
        let (tx, mut rx) = mpsc::unbounded_channel::<Event>();
        let (cli_tx, mut cli_rx) = mpsc::unbounded_channel::<Request>();
        for l in mcli {
            tokio::spawn(mcli::serve(l, cli_tx.clone()));
        }
        for w in self.state.workers.clone() {
            self.watch(w.pid, w.ipc, &tx);
        }
        if self.spawn_worker {
            self.spawn(&tx);
        }
        self.start_programs();
        self.reap();
        loop {
            if let Some(code) = self.finished() {
                return code;
            }
            tokio::select! {
                Some(ev) = rx.recv() => self.handle(ev),
                Some(req) = cli_rx.recv() => self.handle(Event::Cli(req)),
                _ = chld.recv() => self.reap(),
                _ = usr2.recv() => self.reload(),
                _ = hup.recv() => self.reload(),
                _ = term.recv() => self.stop(Signal::SIGTERM),
                _ = int.recv() => self.stop(Signal::SIGINT),
                _ = usr1.recv() => self.stop(Signal::SIGUSR1),
                _ = ttin.recv() => self.broadcast(Signal::SIGTTIN),
                _ = ttou.recv() => self.broadcast(Signal::SIGTTOU),
            }
        }
    }

    /// Reads the messages of a worker's channel into the loop.
    fn watch(&mut self, pid: i32, ipc_fd: i32, tx: &mpsc::UnboundedSender<Event>) {
        let fd = match crate::sys::adopt_inherited_fd(ipc_fd, |_| Ok(())) {
            Ok((fd, ())) => fd,
            Err(_) => return,
        };
        self.watch_fd(pid, fd, tx);
    }

    fn watch_fd(&mut self, pid: i32, fd: OwnedFd, tx: &mpsc::UnboundedSender<Event>) {
        let _ = ipc::set_cloexec(fd.as_fd(), true);
        let Ok(ch) = Channel::new(fd) else { return };
        let ch = Arc::new(ch);
        self.channels.insert(pid, ch.clone());
        let tx = tx.clone();
        tokio::spawn(async move {
            loop {
                let msg = ch.recv().await;
                let closed = msg.as_ref().map_or(true, |m| m.text.is_empty());
                if let Ok(m) = msg {
                    let _ = tx.send(Event::Msg(pid, m));
                }
                if closed {
                    return;
                }
            }
        });
    }

    /// Starts a worker: this program, same arguments, with its channel and the held
    /// sockets in its environment.
    fn spawn(&mut self, tx: &mpsc::UnboundedSender<Event>) {
        match super::spawn::worker(&self.exe, &self.argv, &self.held) {
            Ok((pid, fd)) => {
                notice(&format!("New worker ({pid}) forked"));
                let ipc = fd.as_raw_fd();
                self.state.workers.push(Worker { pid, ipc, reloads: 0, started: now(), phase: Phase::Starting });
                self.watch_fd(pid, fd, tx);
            }
            Err(e) => {
                alert(&format!("[{}.main()] Cannot fork: {e}.", self.argv0()));
                self.failed_load();
            }
        }
    }

    /// Starts the programs of the configuration: all of them on a first start; on a
    /// reload those with `start-on-reload` (the running one leaves) and those not
    /// running yet. Programs whose section is gone leave.
    fn start_programs(&mut self) {
        let Some(programs) = self.programs.take() else { return };
        for old in &mut self.state.programs {
            let kept = programs.iter().any(|p| p.name == old.name && !p.start_on_reload);
            if !kept {
                old.leaving = true;
            }
        }
        for prog in &programs {
            let running = self.state.programs.iter().any(|p| p.name == prog.name && !p.leaving);
            if running {
                continue;
            }
            match super::program::spawn(prog, &self.held, 0, now()) {
                Ok(p) => {
                    notice(&format!("New program '{}' ({}) forked", p.name, p.pid));
                    self.state.programs.push(p);
                }
                Err(msg) => alert(&msg),
            }
        }
    }

    fn argv0(&self) -> String {
        self.argv.first().map(|a| a.to_string_lossy().into_owned()).unwrap_or_default()
    }

    fn handle(&mut self, ev: Event) {
        match ev {
            Event::Msg(pid, msg) if msg.text == ipc::READY => self.ready(pid),
            Event::Msg(pid, msg) if msg.text == ipc::STATE => self.hand_over(pid),
            Event::Msg(pid, msg) if msg.text.is_empty() => {
                self.channels.remove(&pid);
            }
            Event::Msg(..) => {}
            Event::Cli(Request::ShowProc(reply)) => {
                let _ = reply.send(mcli::show_proc(&self.state, now(), &crate::version::version_string()));
            }
            Event::Cli(Request::Reload) => self.reload(),
            Event::Cli(Request::StartupLogs(reply)) => {
                let _ = reply.send(crate::process::startup_log::text());
            }
            Event::Cli(Request::Route(target, reply)) => {
                let pid = match target {
                    Target::Pid(pid) => self.state.workers.iter().find(|w| w.pid == pid).map(|w| w.pid),
                    // COMPAT: as in HAProxy, a worker counts from its start: a command
                    // for a worker still starting waits in its channel until it serves.
                    Target::Relative(n) => {
                        self.state.workers.iter().rev().filter(|w| w.phase != Phase::Leaving).nth(n - 1).map(|w| w.pid)
                    }
                };
                let _ = reply.send(pid.and_then(|p| self.channels.get(&p).cloned()));
            }
        }
    }

    /// New worker `pid` asks for the state of the serving one: the master opens a CLI
    /// session to the newest serving worker and passes its other end to `pid` (nothing
    /// when no worker serves). Sent from a task: the master's loop never waits on a
    /// worker.
    fn hand_over(&mut self, pid: i32) {
        let Some(new) = self.channels.get(&pid).cloned() else { return };
        let serving = self.state.workers.iter().rev().find(|w| w.pid != pid && w.phase == Phase::Current);
        let old = serving.and_then(|w| self.channels.get(&w.pid).cloned());
        tokio::spawn(async move {
            let pair = old.as_ref().and_then(|_| ipc::session_pair().ok());
            if let (Some(old), Some((ours, theirs))) = (old, pair) {
                if old.send(ipc::CLI, Some(theirs.as_fd())).await.is_ok() {
                    let _ = new.send(ipc::STATE, Some(ours.as_fd())).await;
                    return;
                }
            }
            let _ = new.send(ipc::STATE, None).await;
        });
    }

    /// Worker `pid` serves: the others leave, systemd and the daemon's parent are told.
    fn ready(&mut self, pid: i32) {
        let Some(w) = self.state.workers.iter_mut().find(|w| w.pid == pid) else { return };
        if w.phase != Phase::Starting {
            return;
        }
        w.phase = Phase::Current;
        for old in self.state.workers.iter_mut().filter(|w| w.pid != pid && w.phase != Phase::Leaving) {
            old.phase = Phase::Leaving;
            let _ = kill(Pid::from_raw(old.pid), Signal::SIGUSR1);
        }
        // COMPAT: as the old workers, the programs a reload replaced are told to stop
        // (HAProxy passes them to the new process's `-sf`)
        for old in self.state.programs.iter().filter(|p| p.leaving) {
            let _ = kill(Pid::from_raw(old.pid), Signal::SIGUSR1);
        }
        if let Some(max) = self.opts.max_reloads {
            for old in self.state.workers.iter().filter(|w| w.reloads > max) {
                let _ = kill(Pid::from_raw(old.pid), Signal::SIGTERM);
            }
        }
        notice("Loading success.");
        crate::process::startup_log::close();
        self.state.failed_reloads = 0;
        self.notifier.ready("Ready.");
        if let Some(hook) = self.on_ready.take() {
            if let Err(msg) = hook() {
                alert(&msg);
            }
        }
    }

    /// A reload did not give a worker: the current ones keep serving.
    pub fn failed_load(&mut self) {
        warning("Loading failure!");
        crate::process::startup_log::close();
        self.state.failed_reloads += 1;
        let serving = self.state.workers.iter().any(|w| w.phase == Phase::Current);
        let status = if serving {
            "Reload failed: the previous worker keeps serving; see the logs."
        } else {
            "Reload failed: no worker is serving; see the logs."
        };
        self.notifier.ready(status);
    }

    /// Reaps every exited child and reports it as HAProxy does.
    fn reap(&mut self) {
        loop {
            let (pid, status) = match waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::Exited(pid, code)) => (pid.as_raw(), code),
                Ok(WaitStatus::Signaled(pid, sig, _)) => (pid.as_raw(), 128 + sig as i32),
                Ok(WaitStatus::StillAlive) | Err(_) => return,
                Ok(_) => continue,
            };
            self.exited(pid, status);
        }
    }

    fn exited(&mut self, pid: i32, status: i32) {
        let what = if status >= 128 { signal_name(status - 128) } else { "Exit".to_owned() };
        if let Some(i) = self.state.programs.iter().position(|p| p.pid == pid) {
            let p = self.state.programs.remove(i);
            if p.leaving {
                warning(&format!("Former program '{}' ({pid}) exited with code {status} ({what})", p.name));
            } else {
                alert(&format!("Current program '{}' ({pid}) exited with code {status} ({what})", p.name));
                self.on_failure(status);
            }
            return;
        }
        let Some(i) = self.state.workers.iter().position(|w| w.pid == pid) else {
            warning(&format!("Process {pid} exited with code {status} ({what})"));
            return;
        };
        let w = self.state.workers.remove(i);
        self.channels.remove(&pid);
        let others = self.state.workers.iter().any(|o| o.phase != Phase::Leaving);
        match w.phase {
            Phase::Leaving => warning(&format!("Former worker ({pid}) exited with code {status} ({what})")),
            Phase::Starting if others => {
                alert(&format!("New worker ({pid}) exited with code {status} ({what}) before it was ready"));
                self.failed_load();
            }
            _ => self.current_exited(pid, status, &what),
        }
    }

    fn current_exited(&mut self, pid: i32, status: i32, what: &str) {
        let msg = format!("Current worker ({pid}) exited with code {status} ({what})");
        if status < 128 {
            warning(&msg);
        } else {
            alert(&msg);
        }
        self.on_failure(status);
    }

    /// A current worker or program exited with `status`: unless it is a normal exit,
    /// everything is stopped (`exit-on-failure`), and the first such status is the
    /// master's.
    fn on_failure(&mut self, status: i32) {
        if ![0, 130, 143].contains(&status) && !self.opts.no_exit_on_failure {
            alert("exit-on-failure: killing every processes with SIGTERM");
            self.broadcast(Signal::SIGTERM);
        }
        if self.exit_code.is_none() && status != 0 && status != 143 {
            self.exit_code = Some(status);
        }
    }

    /// The exit status once no worker is left.
    fn finished(&self) -> Option<i32> {
        if !self.state.workers.is_empty() || !self.state.programs.is_empty() {
            return None;
        }
        let code = self.exit_code.filter(|&c| c > 0).unwrap_or(0);
        warning(&format!("All workers exited. Exiting... ({code})"));
        Some(code)
    }

    fn stop(&mut self, sig: Signal) {
        if !self.stopping {
            self.notifier.send("STOPPING=1");
            warning("Exiting Master process...");
        }
        self.stopping = true;
        // COMPAT: HAProxy's workers die by SIGINT, and its master then exits with
        // 130; rampart's workers exit 0 on it, so the master says 130 itself.
        if sig == Signal::SIGINT && self.exit_code.is_none() {
            self.exit_code = Some(130);
        }
        self.broadcast(sig);
    }

    fn broadcast(&self, sig: Signal) {
        for w in &self.state.workers {
            let _ = kill(Pid::from_raw(w.pid), sig);
        }
        for p in &self.state.programs {
            let _ = kill(Pid::from_raw(p.pid), sig);
        }
    }

    /// Re-executes the master with the same arguments; its records, its sockets and
    /// its workers' channels go through the exec.
    fn reload(&mut self) {
        if self.stopping {
            return;
        }
        notice("Reloading rampart");
        self.state.reloads += 1;
        for w in &mut self.state.workers {
            w.reloads += 1;
        }
        for p in &mut self.state.programs {
            p.reloads += 1;
        }
        self.notifier.reloading();
        let channels: Vec<(i32, Arc<Channel>)> = self.channels.iter().map(|(p, c)| (*p, c.clone())).collect();
        for w in &mut self.state.workers {
            w.ipc = channels.iter().find(|(p, _)| *p == w.pid).map_or(-1, |(_, c)| c.as_fd().as_raw_fd());
        }
        for (_, ch) in &channels {
            let _ = ipc::set_cloexec(ch.as_fd(), false);
        }
        let fds: Vec<(i32, String)> = self.held.iter().map(|(k, fd)| (fd.as_raw_fd(), k.clone())).collect();
        let err = super::spawn::reexec(&self.exe, &self.argv, &self.state.encode(), &state::encode_fds(&fds));
        for (_, ch) in &channels {
            let _ = ipc::set_cloexec(ch.as_fd(), true);
        }
        warning(&format!("Failed to reexecute the master process [{}]: {err}", std::process::id()));
        self.state.reloads -= 1;
    }
}

/// `strsignal()`'s text for the usual signals.
fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "Hangup",
        libc::SIGINT => "Interrupt",
        libc::SIGQUIT => "Quit",
        libc::SIGILL => "Illegal instruction",
        libc::SIGABRT => "Aborted",
        libc::SIGBUS => "Bus error",
        libc::SIGFPE => "Floating point exception",
        libc::SIGKILL => "Killed",
        libc::SIGUSR1 => "User defined signal 1",
        libc::SIGSEGV => "Segmentation fault",
        libc::SIGUSR2 => "User defined signal 2",
        libc::SIGPIPE => "Broken pipe",
        libc::SIGALRM => "Alarm clock",
        libc::SIGTERM => "Terminated",
        _ => return format!("Unknown signal {sig}"),
    };
    name.to_owned()
}
