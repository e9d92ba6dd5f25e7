//! Shared by the `http_*` black-box tests: the binary under test, a `global`/`defaults`
//! preamble with short timeouts, a launcher for the usual one-listener configurations,
//! and HAProxy 2.6's error pages as they appear on the wire (copied from haproxy 2.6.12
//! runs, not from rampart, so the tests judge rampart's bytes).
//!
//! Each test file includes this module and uses part of it.
//!
//! The expectations are HAProxy's: `RAMPART_TEST_BINARY=/usr/sbin/haproxy cargo test
//! --release -p rampart --test http_basic` runs a file against haproxy instead, which is
//! how they were checked. Tests of deliberate differences (`COMPAT:` notes) start with
//! [`rampart_only!`] and are skipped then.
#![allow(dead_code)] // each test file uses a different subset

use std::net::SocketAddr;
use std::time::Duration;

use rampart_testkit::{Proxy, RawClient, Running};

/// The binary under test.
pub const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");

/// One thread (each thread keeps its own idle server connections, so reuse is deterministic) and
/// timeouts short enough for tests that wait on them, long enough for a loaded machine.
pub const PREAMBLE: &str = "\
global
  nbthread 1
defaults
  mode http
  timeout client 5s
  timeout server 5s
  timeout connect 1s
";

/// `PREAMBLE` + `extra_defaults` + `listen fe1` on `fd@${fe1}` with `listen_lines`,
/// then one `server` line per name in `servers` (`server s1 ${s1_addr}:${s1_port}`).
pub fn listen_cfg(extra_defaults: &str, listen_lines: &str, servers: &[&str]) -> String {
    let mut cfg = format!("{PREAMBLE}{extra_defaults}listen fe1\n  bind fd@${{fe1}}\n{listen_lines}");
    for name in servers {
        cfg.push_str(&format!("  server {name} ${{{name}_addr}}:${{{name}_port}}\n"));
    }
    cfg
}

/// The binary the tests run: rampart, unless `RAMPART_TEST_BINARY`
/// ([`rampart_testkit::BINARY_ENV`]) names another one.
pub fn binary() -> std::path::PathBuf {
    rampart_testkit::binary_under_test(RAMPART)
}

/// Whether the tests run against another binary than rampart.
pub fn testing_reference() -> bool {
    rampart_testkit::testing_another_binary()
}

/// Returns from a test of a rampart-specific behaviour when the suite runs against haproxy.
#[macro_export]
macro_rules! rampart_only {
    () => {
        if $crate::http_common::testing_reference() {
            eprintln!("note: rampart-specific behaviour, skipped against the reference binary");
            return;
        }
    };
}

/// Starts the binary under test with `cfg`, listener `fe1` and the named backend addresses.
pub fn start(cfg: &str, backends: &[(&str, SocketAddr)]) -> Running {
    start_binary(binary(), cfg, backends)
}

/// Starts `binary` (rampart or haproxy) the same way as [`start`].
pub fn start_binary(binary: impl Into<std::path::PathBuf>, cfg: &str, backends: &[(&str, SocketAddr)]) -> Running {
    let mut proxy = Proxy::new(binary).listener("fe1");
    for (name, addr) in backends {
        proxy = proxy.backend(name, *addr);
    }
    proxy.config(cfg).start().expect("the proxy starts")
}

/// The binary under test and, when installed, haproxy 2.6 (required under
/// `RAMPART_REQUIRE_HAPROXY=1`), for tests that run the same configuration through both.
pub fn binaries(test: &str) -> Vec<std::path::PathBuf> {
    let mut out = vec![binary()];
    out.extend(rampart_testkit::haproxy_or_skip(test));
    out
}

/// The file name of `bin`, to say which binary an assertion is about.
pub fn name(bin: &std::path::Path) -> String {
    bin.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Starts `bin` with `cfg`, the listeners named (`bind fd@${NAME}`) and the backend
/// addresses (`${NAME_addr}:${NAME_port}`).
pub fn start_with(bin: &std::path::Path, cfg: &str, listeners: &[&str], backends: &[(&str, SocketAddr)]) -> Running {
    let mut proxy = Proxy::new(bin);
    for l in listeners {
        proxy = proxy.listener(l);
    }
    for (name, addr) in backends {
        proxy = proxy.backend(name, *addr);
    }
    proxy.config(cfg).start().expect("the proxy starts")
}

/// A client connected to listener `fe1`.
pub fn client(proxy: &Running) -> RawClient {
    RawClient::connect(proxy.addr("fe1")).expect("connect to fe1")
}

/// Reads until the proxy closes and returns everything received.
pub fn read_all(c: &mut RawClient) -> Vec<u8> {
    match c.read_to_end() {
        Ok(bytes) => bytes,
        Err(e) => panic!("the connection was not closed: {e}; received so far: {:?}", show(c.buffered())),
    }
}

/// Bytes as readable text for assertion messages.
pub fn show(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Whether the proxy closes the client connection within a short while.
pub fn closes_soon(c: &mut RawClient) -> bool {
    c.is_closed_within(Duration::from_millis(1500))
}

/// Whether the client connection stays open for `d` (nothing closes it).
pub fn stays_open(c: &mut RawClient, d: Duration) -> bool {
    !c.is_closed_within(d)
}

// === HAProxy 2.6.12's pages, as received by a client ===

/// The H1 mux's 400 (mixed-case names, `Connection: close`).
pub const PAGE_400: &[u8] = b"HTTP/1.1 400 Bad request\r\nContent-length: 90\r\nCache-Control: no-cache\r\nConnection: close\r\nContent-Type: text/html\r\n\r\n<html><body><h1>400 Bad request</h1>\nYour browser sent an invalid request.\n</body></html>\n";

/// The H1 mux's 422 (`identity` in a request's `Transfer-Encoding`): no `Connection`
/// header, though the connection closes after it.
pub const PAGE_422: &[u8] = b"HTTP/1.1 422 Unprocessable Content\r\nContent-length: 116\r\nCache-Control: no-cache\r\nContent-Type: text/html\r\n\r\n<html><body><h1>422 Unprocessable Content</h1>\nThe server cannot process the contained instructions.\n</body></html>\n";

/// The H1 mux's 408.
pub const PAGE_408: &[u8] = b"HTTP/1.1 408 Request Time-out\r\nContent-length: 110\r\nCache-Control: no-cache\r\nConnection: close\r\nContent-Type: text/html\r\n\r\n<html><body><h1>408 Request Time-out</h1>\nYour browser didn't send a complete request in time.\n</body></html>\n";

/// The stream's 502 head lines (lowercase; the `connection` header, if any, follows).
pub const HEAD_502: &str =
    "HTTP/1.1 502 Bad Gateway\r\ncontent-length: 107\r\ncache-control: no-cache\r\ncontent-type: text/html\r\n";
pub const BODY_502: &str =
    "<html><body><h1>502 Bad Gateway</h1>\nThe server returned an invalid or incomplete response.\n</body></html>\n";

pub const HEAD_503: &str =
    "HTTP/1.1 503 Service Unavailable\r\ncontent-length: 107\r\ncache-control: no-cache\r\ncontent-type: text/html\r\n";
pub const BODY_503: &str =
    "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n</body></html>\n";

pub const HEAD_504: &str =
    "HTTP/1.1 504 Gateway Time-out\r\ncontent-length: 92\r\ncache-control: no-cache\r\ncontent-type: text/html\r\n";
pub const BODY_504: &str =
    "<html><body><h1>504 Gateway Time-out</h1>\nThe server didn't respond in time.\n</body></html>\n";

/// A stream error page as sent on a connection that stays open (no `connection` header).
pub fn page_kept(head: &str, body: &str) -> Vec<u8> {
    format!("{head}\r\n{body}").into_bytes()
}

/// A stream error page on a connection that closes after it (`connection: close`).
pub fn page_closing(head: &str, body: &str) -> Vec<u8> {
    format!("{head}connection: close\r\n\r\n{body}").into_bytes()
}

/// A scratch directory for files a configuration names before the proxy starts
/// (`errorfile`, `http-request return file`), removed on drop.
pub struct Files(std::path::PathBuf);

impl Files {
    pub fn new(tag: &str) -> Files {
        use std::sync::atomic::{AtomicU32, Ordering};
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("rampart-http-{tag}-{}-{seq}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create a scratch directory");
        Files(dir)
    }

    /// Writes `name` with `bytes`; returns its absolute path.
    pub fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, bytes).expect("write a scratch file");
        path.display().to_string()
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
