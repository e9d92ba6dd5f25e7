//! rampart: an HAProxy-compatible TCP and HTTP/1 load balancer.
//!
//! Modules, in the order a connection meets them (DESIGN.md, STYLE.md):
//! - `cli`, `process`, `version`: haproxy-compatible command line; daemon, pidfile, limits,
//!   privileges; `-v`/`-vv`
//! - `worker`: one current-thread runtime per thread, signals, soft stop
//! - `listener`: bind / adopt listening sockets, accept loop, maxconn
//! - `proxy`: runtime frontends and backends built from the configuration model
//! - `mux`: per-connection drivers: `h1` (HTTP/1), `pt` (TCP passthrough)
//! - `stream`: one request/response exchange through the analysers
//! - `backend`, `lb`, `conn_pool`: pick a server, connect or reuse, retry
//! - `errors`: HAProxy's synthetic responses (400, 408, 502, 503, 504 ...)
//! - `buf`: per-thread buffer pool

pub mod cli;
pub mod listener;
pub mod process;
pub mod version;
pub mod worker;
