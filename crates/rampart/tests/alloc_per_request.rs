//! Heap allocations per request on the real request path: the proxy runs in this
//! process (configuration loaded, runtime built, listeners bound and the worker
//! started the way `main` does), a counting global allocator counts what its traffic
//! thread (`rampart-1`) allocates, and a client and a server on other threads (not
//! counted) exchange keep-alive HTTP/1.1 requests through it. Counts, not timings:
//! once warm, a keep-alive request allocates nothing, plain or with two header rules
//! and an `httplog` line. A new connection must count some (its task at least), which
//! shows that the counter sees the traffic thread.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Allocations (and growing reallocations) made on the proxy's traffic threads.
static ALLOCS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// 0: not known yet, 1: a traffic thread (counted), 2: any other.
    static ROLE: Cell<u8> = const { Cell::new(0) };
}

/// Whether this thread is one of the proxy's traffic threads (named `rampart-N` by
/// `worker::run`). Decided once per thread, once its name is known; the name lookup's own allocations (if any)
/// are not counted, as the thread counts as "other" meanwhile.
fn traffic_thread() -> bool {
    ROLE.try_with(|r| match r.get() {
        0 => {
            r.set(2);
            let name = std::thread::current().name().map(|n| n.starts_with("rampart-"));
            // a thread allocates before its name is set: undecided until it is
            r.set(match name {
                Some(true) => 1,
                Some(false) => 2,
                None => 0,
            });
            name == Some(true)
        }
        v => v == 1,
    })
    .unwrap_or(false)
}

/// With `RAMPART_ALLOC_TRACE=N` set, the first N counted allocations of the measured
/// windows print a backtrace (to find them; the test fails meanwhile as it should).
static TRACE_LEFT: AtomicU64 = AtomicU64::new(0);

/// Counts one allocation of a traffic thread, with its backtrace when asked.
fn count() {
    ALLOCS.fetch_add(1, Ordering::Relaxed);
    if TRACE_LEFT.load(Ordering::Relaxed) > 0 {
        TRACE_LEFT.fetch_sub(1, Ordering::Relaxed);
        // the capture allocates: not counted, as the thread counts as "other" meanwhile
        ROLE.with(|r| r.set(2));
        eprintln!("allocation on the traffic thread:\n{}", std::backtrace::Backtrace::force_capture());
        ROLE.with(|r| r.set(1));
    }
}

struct Counting;

// SAFETY: every call goes to the system allocator unchanged; the wrapper only counts
// (an atomic add and a thread-local read, neither of which allocates).
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if traffic_thread() {
            count();
        }
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if traffic_thread() {
            count();
        }
        System.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() && traffic_thread() {
            count();
        }
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The server: answers every request head with a 2-byte body, on as many keep-alive
/// connections as the proxy opens.
fn start_server() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in l.incoming() {
            let Ok(mut c) = conn else { continue };
            std::thread::spawn(move || {
                c.set_nodelay(true).unwrap();
                let mut buf = [0u8; 4096];
                let mut have = 0;
                while let Ok(n) = c.read(&mut buf[have..]) {
                    if n == 0 {
                        return;
                    }
                    have += n;
                    if buf[..have].ends_with(b"\r\n\r\n") {
                        have = 0;
                        if c.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok").is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    port
}

/// Starts the proxy in this process on `cfg`, returns once it accepts.
fn start_proxy(cfg: &str, port: u16) {
    let path: PathBuf = std::env::temp_dir().join(format!("rampart-alloc-{}.cfg", std::process::id()));
    std::fs::write(&path, cfg).unwrap();
    let env = |n: &str| std::env::var(n).ok();
    let ctx = rampart_cfg::LexCtx {
        env: &env,
        version: rampart_cfg::version::HAPROXY_COMPAT_VERSION,
        features: rampart_cfg::version::FEATURES,
    };
    let loaded = rampart_cfg::load_files(&[path], &ctx);
    let cfg = loaded.config.unwrap_or_else(|| panic!("configuration refused: {:?}", loaded.diags.list));
    let rt = Arc::new(rampart::build::build(&cfg, 1000, 1).unwrap_or_else(|d| panic!("build: {d:?}")));
    let inherited = rampart::listener::adopt_inherited(&cfg, Vec::new(), false);
    let listeners = rampart::listener::bind_all(&cfg, 1, &inherited).unwrap_or_else(|e| panic!("bind: {:?}", e.0));
    let settings = rampart::worker::Settings {
        nbthread: 1,
        maxconn: 1000,
        hard_stop_after: cfg.global.hard_stop_after,
        localpeer: cfg.localpeer.clone(),
        cpu_map: cfg.global.cpu_map.clone(),
    };
    std::thread::Builder::new()
        .name("proxy-main".into())
        .spawn(move || rampart::worker::run(rt, listeners, settings, Vec::new()))
        .unwrap();
    for _ in 0..200 {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("the proxy does not accept on {port}");
}

/// One keep-alive client connection.
struct Client {
    c: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    fn new(port: u16) -> Client {
        let c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        c.set_nodelay(true).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        Client { c, buf: vec![0; 8192] }
    }

    /// One request and its whole response.
    fn exchange(&mut self) {
        self.c.write_all(b"GET /alloc HTTP/1.1\r\nhost: test\r\nuser-agent: alloc\r\n\r\n").unwrap();
        let mut have = 0;
        while !self.buf[..have].ends_with(b"\r\n\r\nok") {
            let n = self.c.read(&mut self.buf[have..]).expect("response");
            assert!(n > 0, "the proxy closed: {:?}", String::from_utf8_lossy(&self.buf[..have]));
            have += n;
        }
        assert!(self.buf.starts_with(b"HTTP/1.1 200"), "{:?}", String::from_utf8_lossy(&self.buf[..have]));
    }

    /// Allocations of the proxy's traffic thread over `n` requests (the fewest of three
    /// runs: a background task of that thread, such as a timer tick, may allocate now
    /// and then, never once per request).
    fn allocs_over(&mut self, n: u64) -> u64 {
        let trace = std::env::var("RAMPART_ALLOC_TRACE").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
        (0..3)
            .map(|_| {
                TRACE_LEFT.store(trace, Ordering::SeqCst);
                let before = ALLOCS.load(Ordering::SeqCst);
                (0..n).for_each(|_| self.exchange());
                let after = ALLOCS.load(Ordering::SeqCst);
                TRACE_LEFT.store(0, Ordering::SeqCst);
                after - before
            })
            .min()
            .unwrap()
    }
}

const REQUESTS: u64 = 1000;
/// New connections of the counter's sanity check.
const CONNS: u64 = 50;

#[test]
fn keep_alive_requests_allocate_nothing_once_warm() {
    let srv = start_server();
    let (plain, rules) = (free_port(), free_port());
    let log = UdpSocket::bind("127.0.0.1:0").unwrap();
    let log_port = log.local_addr().unwrap().port();
    let cfg = format!(
        "global\n    nbthread 1\n\
         defaults\n    mode http\n    timeout client 10s\n    timeout server 10s\n    timeout connect 5s\n\
         frontend plain\n    bind 127.0.0.1:{plain}\n    default_backend be\n\
         frontend rules\n    bind 127.0.0.1:{rules}\n    log 127.0.0.1:{log_port} local0\n    option httplog\n\
         \x20   http-request set-header x-fwd-by rampart\n    http-response set-header x-served-by be\n\
         \x20   default_backend be\n\
         backend be\n    server s1 127.0.0.1:{srv}\n"
    );
    start_proxy(&cfg, rules);

    let mut c = Client::new(plain);
    (0..300).for_each(|_| c.exchange());
    let plain_allocs = c.allocs_over(REQUESTS);

    let mut c = Client::new(rules);
    (0..300).for_each(|_| c.exchange());
    let rules_allocs = c.allocs_over(REQUESTS);

    // the counter sees the traffic thread: a new connection allocates (its task at least)
    let before = ALLOCS.load(Ordering::SeqCst);
    (0..CONNS).for_each(|_| Client::new(plain).exchange());
    let conn_allocs = ALLOCS.load(Ordering::SeqCst) - before;
    println!(
        "allocations per keep-alive request: plain {:.2}, with two set-header rules and an httplog line {:.2}; \
         per new connection {:.2}",
        plain_allocs as f64 / REQUESTS as f64,
        rules_allocs as f64 / REQUESTS as f64,
        conn_allocs as f64 / CONNS as f64,
    );
    assert!(conn_allocs >= CONNS, "{CONNS} new connections counted {conn_allocs} allocations: the counter is blind");
    assert_eq!(rules_allocs, 0, "rules and a log line allocate ({rules_allocs} per {REQUESTS} requests)");
    assert_eq!(plain_allocs, 0, "a plain keep-alive request allocates ({plain_allocs} per {REQUESTS} requests)");
    drop(log);
}
