//! rampart: an HAProxy-compatible TCP and HTTP/1 load balancer.
//!
//! Modules, in the order a connection meets them (DESIGN.md, STYLE.md):
//! - `cli`, `process`, `version`: haproxy-compatible command line; daemon, pidfile, limits,
//!   privileges; `-v`/`-vv`
//! - `worker`: one current-thread runtime per thread, signals, soft stop
//! - `listener`: bind / adopt listening sockets, accept loop, maxconn, pause
//! - `session`: one client connection: its maxconn slot, `tcp-request connection|session`
//!   rules, the mux that serves it
//! - `tls`: TLS with rustls: PEM files, the TLS stream over a socket, handshakes
//! - `mux`: per-connection drivers: `h1` (HTTP/1), `pt` (TCP passthrough)
//! - `stream`: one HTTP request/response exchange (or one TCP-mode stream) through the
//!   analysers
//! - `http`: the protocol-neutral message head (start line, headers, rewrites)
//! - `sample`: fetches, converters and sample expressions
//! - `acl`: ACLs, conditions, pattern sets and maps
//! - `auth`: `userlist` sections at run time: users, groups, crypt(3) password checks
//! - `backend`, `lb`, `conn_pool`: pick a server, connect or reuse, retry
//! - `server`: server runtime state (UP/DOWN/NOLB, maintenance, effective weight)
//! - `check`: active health checks (TCP connect, `option httpchk`), rise/fall, messages
//! - `proxy`: runtime frontends and backends built from the configuration model
//! - `errors`: HAProxy's synthetic responses (400, 408, 502, 503, 504 ...)
//! - `io`, `splice`, `buf`, `timer`: socket primitives, zero-copy forwarding, pools,
//!   coarse per-thread timeouts
//! - `counters`: per-thread event counters (connections per frontend and backend)
//! - `stats`: the runtime API on the stats sockets (`show info`, `show stat` ...) and
//!   the counters only it reads
//! - `log`: log-format strings, log targets sent without blocking, the log line of each stream
//! - `debug`: `-d` traffic debug output
//! - `sys`: the few system-call wrappers that need `unsafe`

pub mod acl;
pub mod action;
pub mod auth;
pub mod back;
pub mod backend;
pub mod buf;
pub mod build;
pub mod check;
pub mod cli;
pub mod conn_pool;
pub mod counters;
pub mod debug;
pub mod errors;
pub mod h1;
pub mod health;
pub mod http;
pub mod io;
pub mod lb;
pub mod listener;
pub mod log;
pub mod mux;
pub mod pattern;
pub mod process;
pub mod proxy;
pub mod sample;
pub mod server;
pub mod session;
pub mod splice;
pub mod stats;
pub mod stream;
mod sys;
pub mod timer;
pub mod tls;
pub mod version;
pub mod worker;
