//! Worker: `nbthread` OS threads, each running a single-threaded tokio runtime that
//! accepts on its own listening sockets and serves the connections it accepted (no
//! work stealing, no lock on the request path). The main thread handles signals:
//! SIGTERM/SIGINT stop now, SIGUSR1 soft stop (stop accepting, finish exchanges,
//! exit when the last connection closed or after `hard-stop-after`), SIGTTOU/SIGTTIN
//! pause/resume the listeners. HAProxy counterpart: haproxy.c (run_poll_loop,
//! signal handlers), thread.c.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::sync::watch;

use crate::conn_pool;
use crate::listener::accept::{self, ListenState};
use crate::listener::{ForwardSocket, Listeners, ThreadSocket};
use crate::proxy::Runtime;

/// Process-wide settings decided by the command line and `global`.
#[derive(Debug, Clone)]
pub struct Settings {
    pub nbthread: usize,
    /// Effective global maxconn.
    pub maxconn: u32,
    /// `hard-stop-after`: the longest a soft stop may take.
    pub hard_stop_after: Option<Duration>,
    /// Local peer name (`-L`, default: the host name), for the `peers` sections.
    pub localpeer: String,
    /// `cpu-map`: the CPUs of the process and of each thread.
    pub cpu_map: rampart_cfg::model::CpuMap,
}

/// Work the main thread serves besides the signals, away from the traffic threads
/// (the stats sockets).
pub type MainTask = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'static>>;

/// Runs the worker until it stops; returns the process exit status. `main_tasks` run
/// on the main thread's event loop, beside the signal handling.
pub fn run(rt: Arc<Runtime>, mut listeners: Listeners, settings: Settings, main_tasks: Vec<MainTask>) -> i32 {
    let nbthread = settings.nbthread.max(1);
    // `log-forward` receivers: one thread each, in turn
    let mut forwarders: Vec<Vec<ForwardSocket>> = (0..nbthread).map(|_| Vec::new()).collect();
    for (i, sock) in std::mem::take(&mut listeners.log_forward).into_iter().enumerate() {
        forwarders[i % nbthread].push(sock);
    }
    // the `peers` sections run on the first thread
    let mut peers = Some(std::mem::take(&mut listeners.peers));
    let per_thread = match listeners.into_threads(nbthread) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("[ALERT]    ({}) : cannot share listening sockets between threads: {e}", std::process::id());
            return 1;
        }
    };
    let main = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("[ALERT]    ({}) : cannot start the signal handler: {e}", std::process::id());
            return 1;
        }
    };
    // Signal handlers first: a signal must never find the process serving without them.
    let signals = match main.block_on(async { Signals::install() }) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("[ALERT]    ({}) : cannot install signal handlers: {e}", std::process::id());
            return 1;
        }
    };
    // the threads started from here on (the watchdog's too) inherit it
    if let Some(cpus) = settings.cpu_map.process {
        bind_thread(&cpus, "the process");
    }
    let (state_tx, state_rx) = watch::channel(ListenState::Running);
    crate::watchdog::start(nbthread);
    let sockets: usize = per_thread.iter().map(Vec::len).sum();
    rt.global.listeners_open.store(u32::try_from(sockets).unwrap_or(u32::MAX), Ordering::SeqCst);
    for ((t, socks), fwd) in per_thread.into_iter().enumerate().zip(forwarders) {
        let (rt, state_rx) = (rt.clone(), state_rx.clone());
        let peer_socks = peers.take().unwrap_or_default();
        // a thread without a map of its own keeps the process's binding
        let own_map = settings.cpu_map.threads.get(t).is_some_and(Option::is_some);
        let cpus = if own_map { settings.cpu_map.for_thread(t) } else { None };
        let spawned = std::thread::Builder::new().name(format!("rampart-{}", t + 1)).spawn(move || {
            if let Some(cpus) = cpus {
                bind_thread(&cpus, &format!("thread {}", t + 1));
            }
            crate::counters::set_thread_slot(t);
            thread_main((socks, fwd, peer_socks), rt, state_rx, (t, nbthread));
        });
        if let Err(e) = spawned {
            eprintln!("[ALERT]    ({}) : cannot start thread {}: {e}", std::process::id(), t + 1);
            return 1;
        }
    }
    for task in main_tasks {
        main.spawn(task);
    }
    main.block_on(handle_signals(signals, rt, state_tx, settings.hard_stop_after))
}

/// The signals rampart acts on.
struct Signals {
    term: Signal,
    int: Signal,
    usr1: Signal,
    ttou: Signal,
    ttin: Signal,
}

impl Signals {
    fn install() -> std::io::Result<Signals> {
        Ok(Signals {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
            usr1: signal(SignalKind::user_defined1())?,
            ttou: signal(SignalKind::from_raw(libc::SIGTTOU))?,
            ttin: signal(SignalKind::from_raw(libc::SIGTTIN))?,
        })
    }
}

/// One worker thread: its accept loops and its idle-pool purge, forever (the process
/// exits from the main thread).
fn thread_main(
    (socks, forwarders, peers): (Vec<ThreadSocket>, Vec<ForwardSocket>, Vec<(usize, std::net::TcpListener)>),
    rt: Arc<Runtime>,
    state_rx: watch::Receiver<ListenState>,
    (thread, nbthread): (usize, usize),
) {
    // Log lines to datagram sockets are gathered during a loop turn and sent
    // together before the loop waits for events again.
    crate::log::batch::enable();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .on_thread_park(crate::log::batch::flush)
        .on_thread_unpark(crate::watchdog::beat)
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("[ALERT]    ({}) : cannot start a thread's event loop: {e}", std::process::id());
            std::process::exit(1);
        }
    };
    runtime.block_on(async move {
        let stop_rt = rt.clone();
        // a loop that never runs dry still sends its log lines each tick
        crate::watchdog::register(thread);
        let on_tick = || {
            crate::watchdog::beat();
            crate::log::batch::flush();
        };
        tokio::spawn(crate::timer::run_wheel(move || stop_rt.global.is_stopping(), on_tick));
        let park_rt = rt.clone();
        tokio::spawn(crate::mux::h1::park::run_parker(move || park_rt.global.is_stopping()));
        for sock in socks {
            tokio::spawn(accept::run(sock, rt.clone(), state_rx.clone()));
        }
        for sock in forwarders {
            crate::listener::log_forward::spawn(sock, rt.clone(), state_rx.clone());
        }
        crate::health::spawn_for_thread(&rt, thread, nbthread);
        // the thread's Lua state (scripts loaded, init functions run) and its tasks
        crate::lua::start_thread(thread);
        if thread == 0 {
            crate::dns::spawn(&rt);
            crate::dns::install_httpclient_resolver(&rt);
            crate::peers::spawn(&rt, peers);
            let ring_rt = rt.clone();
            crate::log::ring_fwd::spawn_all(std::sync::Arc::new(move || ring_rt.global.is_stopping()));
        }
        let mut watch = tokio::time::interval(conn_pool::WATCH_EVERY);
        let per_trim = (SPARES_TRIM_EVERY.as_millis() / conn_pool::WATCH_EVERY.as_millis()).max(1);
        for round in 1u128.. {
            watch.tick().await;
            conn_pool::release_closed();
            conn_pool::purge();
            if round % per_trim == 0 {
                trim_spares();
            }
        }
    });
}

/// How often a thread gives back the spares no stream needed since the last time.
const SPARES_TRIM_EVERY: Duration = Duration::from_secs(5);

/// Gives back the spare buffers, heads and transactions this thread kept that no
/// stream needed lately (`buf::Spares`).
fn trim_spares() {
    crate::buf::trim_spares();
    crate::buf::trim_pool::<crate::stream::TxnData>();
    crate::mux::h2::trim_spares();
}

/// Waits for signals and acts on them; returns the exit status.
async fn handle_signals(
    signals: Signals,
    rt: Arc<Runtime>,
    state: watch::Sender<ListenState>,
    hard_stop_after: Option<Duration>,
) -> i32 {
    let Signals { mut term, mut int, mut usr1, mut ttou, mut ttin } = signals;
    loop {
        tokio::select! {
            _ = term.recv() => return 0,
            _ = int.recv() => return 0,
            _ = usr1.recv() => break,
            _ = ttou.recv() => {
                let _ = state.send(ListenState::Paused);
                report_listening_proxies(&rt, "Paused");
            }
            _ = ttin.recv() => {
                let _ = state.send(ListenState::Running);
                report_listening_proxies(&rt, "Resumed");
            }
        }
    }
    if let Some(grace) = rt.global.grace {
        // `grace`: the `stopping` fetch says so now, traffic goes on until it ends
        rt.global.stop_announced.store(true, Ordering::SeqCst);
        let msg = format!("Scheduling a soft-stop in {} ms.", grace.as_millis());
        notice(&msg);
        crate::log::send_global(crate::log::level::WARNING, &format!("{msg}\n"));
        tokio::select! {
            _ = tokio::time::sleep(grace) => {}
            _ = term.recv() => return 0,
            _ = int.recv() => return 0,
        }
    }
    // Soft stop: no new connection, idle keep-alive connections close, exchanges in
    // flight finish (their responses announce the close).
    rt.global.begin_stop();
    // (Idle keep-alive connections notice it through their thread's timer wheel.)
    let _ = state.send(ListenState::Stopped);
    // The accept loops take what already waits in their backlog before closing (a
    // connection the kernel queued there would otherwise be reset), then the process
    // waits for every connection to end.
    let _ = tokio::time::timeout(LISTENER_CLOSE_WAIT, wait_for_listeners_closed(&rt)).await;
    report_stopped_proxies(&rt);
    let drained = wait_for_last_connection(&rt);
    let hard_stop = async {
        match hard_stop_after {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = drained => 0,
        _ = hard_stop => 0,
        _ = term.recv() => 0,
        _ = int.recv() => 0,
    }
}

/// HAProxy's `Paused <cap> <name>.` / `Resumed ...` warnings, one per proxy with
/// listeners (SIGTTOU / SIGTTIN). A `peers` section's listener is HAProxy's proxy named
/// after the local node (also to the section's `log` targets, the only messages 2.6
/// sends there).
/// COMPAT: HAProxy lists the listeners in the order they were declared; rampart lists the
/// `peers` sections first.
fn report_listening_proxies(rt: &Runtime, what: &str) {
    for (s, logs) in rt.peers.iter().zip(&rt.peers_logs) {
        let msg = format!("{what} proxy {}.", s.local);
        warn(&msg);
        logs.send(crate::log::level::WARNING, msg.as_bytes());
    }
    for px in rt.proxies.iter().filter(|px| px.cap.frontend) {
        let cap = if px.cap.backend { "proxy" } else { "frontend" };
        let msg = format!("{what} {cap} {}.", px.name);
        warn(&msg);
        px.send_log(crate::log::level::WARNING, &msg);
    }
}

/// HAProxy's soft-stop report, one line per proxy once the listeners are closed.
fn report_stopped_proxies(rt: &Runtime) {
    for px in &rt.proxies {
        let (fe, be) = (px.fe.cum_conn.get(), px.be.cum_conn.get());
        let msg = format!("Proxy {} stopped (cumulated conns: FE: {fe}, BE: {be}).", px.name);
        warn(&msg);
        // as HAProxy, also to the proxy's own logs
        px.send_log(crate::log::level::WARNING, &msg);
    }
}

/// Binds the calling thread to `cpus` (`cpu-map`); `who` names it in the warning when the
/// kernel refuses (HAProxy says nothing then).
fn bind_thread(cpus: &rampart_cfg::model::CpuSet, who: &str) {
    if let Err(e) = crate::sys::bind_current_thread(cpus.iter()) {
        warn(&format!("cpu-map: cannot bind {who} to CPU(s) {cpus}: {e}; its binding is left as it was."));
    }
}

/// A `[WARNING]` line on stderr (in quiet mode stderr is already /dev/null). A stderr
/// that is gone (a closed pipe) is ignored: the process goes on stopping.
fn warn(msg: &str) {
    let line = format!("{}({}) : {msg}\n", rampart_cfg::Level::Warning.tag(), std::process::id());
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
}

/// A `[NOTICE]` line on stderr (ignored when stderr is gone).
fn notice(msg: &str) {
    let line = format!("{}({}) : {msg}\n", rampart_cfg::Level::Notice.tag(), std::process::id());
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
}

/// How long a soft stop waits for the accept loops to drain their backlog and close.
const LISTENER_CLOSE_WAIT: Duration = Duration::from_secs(1);

/// Resolves once every accept loop closed its listening socket.
async fn wait_for_listeners_closed(rt: &Runtime) {
    let g = &rt.global;
    wait_until(&g.listener_closed, || g.listeners_open.load(Ordering::SeqCst) == 0, Duration::from_millis(10)).await;
}

/// Resolves once no client connection is left.
async fn wait_for_last_connection(rt: &Runtime) {
    let g = &rt.global;
    wait_until(&g.conn_released, || g.cur_conns.load(Ordering::SeqCst) == 0, Duration::from_millis(100)).await;
}

/// Resolves once `done()` holds, checked whenever `changed` is notified and at least
/// every `tick` (which covers a change racing with the start of the wait).
async fn wait_until(changed: &tokio::sync::Notify, done: impl Fn() -> bool, tick: Duration) {
    loop {
        let notified = changed.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if done() {
            return;
        }
        let _ = tokio::time::timeout(tick, notified).await;
    }
}
