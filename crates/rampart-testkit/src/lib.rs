//! rampart-testkit: black-box test harness for rampart and, identically, for haproxy.
//!
//! Everything is std threads and blocking sockets on loopback, no fixed ports, so tests run
//! in parallel and the crate builds fast. The models are VTest (`fd@${name}` listeners,
//! `${s1_addr}` macros), linkerd's fluent test servers and hyper's exact-bytes backends
//! (STYLE.md §5).
//!
//! Modules, in the order a test uses them:
//! - `proxy`: [`Proxy`] starts the binary (`-db -f`), passing pre-bound listeners as `fd@N`;
//!   [`Running`] is the live process; [`check`] runs `-c`; [`haproxy_path`] finds the reference
//! - `backend`: [`HttpBackend`] (+ [`Reply`]), [`RawBackend`] (+ [`Step`]),
//!   [`TcpEchoBackend`], [`closed_port`]
//! - `client`: [`RawClient`] (exact bytes out, parsed [`Response`] in), [`http_get`]
//! - `http`: the message records both sides produce ([`Request`], [`Response`], [`Headers`])
//! - `dns`: [`DnsServer`], a scripted DNS server (UDP and TCP) whose records change at run time,
//!   answers spoiled on purpose too; `dnsmasq`: [`Dnsmasq`], Debian's DNS server started by the test
//! - `eventually`: [`patience`] and [`eventually!`]
//! - `diff`: [`Differential`] runs one scenario against haproxy and rampart and compares
//! - `sync`: poison-tolerant lock and the request/connection recorders (internal)
//! - `strict`: a second, independent strict HTTP/1 parser and malformed-message
//!   generators, to judge what rampart forwards (black-box tests and fuzz targets)
//!
//! ```no_run
//! use rampart_testkit::{HttpBackend, Proxy, RawClient};
//!
//! // In crates/rampart/tests: env!("CARGO_BIN_EXE_rampart"); or rampart_testkit::haproxy_path().
//! let rampart = "target/debug/rampart";
//! let s1 = HttpBackend::start("s1");
//! let proxy = Proxy::new(rampart)
//!     .listener("fe1")
//!     .backend("s1", s1.addr())
//!     .config("defaults\n mode http\n timeout client 5s\n timeout server 5s\n timeout connect 1s\n\
//!              listen fe1\n bind fd@${fe1}\n server s1 ${s1_addr}:${s1_port}\n")
//!     .start()
//!     .unwrap();
//! let mut client = RawClient::connect(proxy.addr("fe1")).unwrap();
//! client.send("GET /hello HTTP/1.1\r\nHost: x\r\nX-Case: 1\r\n\r\n").unwrap();
//! assert_eq!(client.read_response().unwrap().body, b"s1");
//! assert_eq!(s1.wait_requests(1)[0].raw_head_str(), "GET /hello HTTP/1.1\r\nhost: x\r\nx-case: 1\r\n\r\n");
//! ```

// The testkit is test infrastructure, never on the request path: std mutexes are fine.
#![allow(clippy::disallowed_types)]
#![warn(missing_docs)]

mod backend;
mod client;
mod diff;
mod dns;
mod dnsmasq;
mod eventually;
mod http;
mod proxy;
pub mod strict;
mod sync;

pub use backend::{
    closed_port, HttpBackend, HttpBackendBuilder, RawBackend, RawConn, Reply, ReplyFraming, Seen, Step, TcpEchoBackend,
    TestBackend,
};
pub use client::{http_get, socat, stats_command, RawClient};
pub use diff::{Attempt, Comparison, Differential, Normalize, Normalizer, Observed};
pub use dns::{DnsFlaw, DnsServer, Srv};
pub use dnsmasq::Dnsmasq;
pub use eventually::{patience, PATIENCE_ENV};
pub use http::{Framing, Headers, Interim, Request, Response, TimedPiece, TimedResponse};
pub use proxy::{
    binary_under_test, check, haproxy_or_skip, haproxy_path, haproxy_required, spawn_guarded, testing_another_binary,
    CheckOutput, Output, Proxy, Running, StartError, BINARY_ENV, HAPROXY_ENV, REQUIRE_HAPROXY_ENV,
};

/// Re-exported so tests can name signals for [`Running::signal`] without their own `nix`.
pub use nix::sys::signal::Signal;
