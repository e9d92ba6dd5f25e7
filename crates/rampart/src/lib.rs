//! rampart: an HAProxy-compatible TCP and HTTP/1 load balancer.
//!
//! Modules, in the order a connection meets them (DESIGN.md, STYLE.md); the layers
//! they form, and what each may import, are `docs/internals/layers.md`'s:
//! - `cli`, `process`, `version`: haproxy-compatible command line; daemon, pidfile, limits,
//!   privileges; `-v`/`-vv`
//! - `build`: the runtime model built from the configuration model (rules compiled,
//!   files read, counters sized)
//! - `worker`: one current-thread runtime per thread, signals, soft stop
//! - `watchdog`: per-thread heartbeats, the monitor that aborts a stuck process, `show threads`
//! - `master`: master-worker mode (`-W`): supervision, reloads, master CLI, systemd
//! - `listener`: bind / adopt listening sockets, accept loop, maxconn, pause; the
//!   receivers of `log-forward` sections
//! - `session`: one client connection: its maxconn slot, `tcp-request connection|session`
//!   rules, the mux that serves it (`session::types`: what the muxes hold of it)
//! - `tls`: TLS with rustls: PEM files, the TLS stream over a socket, handshakes
//!   (`tls::types`: what a handshake negotiated)
//! - `mux`: the client side of a connection: `h1` (HTTP/1), `pt` (TCP passthrough)
//! - `stream`: one HTTP request/response exchange (or one TCP-mode stream) through the
//!   analysers, and the forwarding step that drives the server side
//! - `back`: the server side of an HTTP exchange (`HttpBack`: HTTP/1 in the client role)
//! - `h1`: HTTP/1 bytes for both roles: body framing, heads on output, head to message
//! - `h2`: HTTP/2 messages for both roles: header fields to message and back
//! - `http`: the protocol-neutral message head (start line, headers, rewrites)
//! - `sample`: fetches, converters and sample expressions; `sample::Host`, what they read
//!   of the running process
//! - `pattern`: match methods and pattern sets, shared by ACLs and maps
//! - `acl`: ACLs and conditions
//! - `action`: what `http-request`, `tcp-request` ... rules do
//! - `cache`: the HTTP cache: objects in memory bounded by `total-max-size`, the
//!   cacheability rules
//! - `comp`: HTTP compression: negotiation, the head's edits, the compressors
//! - `lua`: Lua scripts (`lua-load`): HAProxy's Lua API, one Lua state per thread
//! - `mailers`: email alerts of server state changes (`mailers`, `email-alert`), sent
//!   over SMTP off the request path
//! - `filter`: the response body filters (compression, the cache's store) between
//!   the server side and the client
//! - `auth`: `userlist` sections at run time: users, groups, crypt(3) password checks
//! - `backend`, `lb`, `conn_pool`: pick a server, queue, connect, retry; balancers; idle
//!   server connections and their sockets
//! - `server`: server runtime state (UP/DOWN/NOLB, maintenance, effective weight), the
//!   queues of streams waiting for a server
//! - `dns`: name resolution at run time: `resolvers` sections, servers following DNS
//! - `peers`: stick-table replication between nodes (HAProxy's peers protocol), `show peers`
//!   (`dns::types`: what the model holds of it)
//! - `check`: what a health check is (settings, HTTP, tcp-check and agent protocols)
//! - `health`: health checks at run time (scheduling, probes, rise/fall, tracking)
//! - `proxy`: the runtime model: frontends, backends, servers, as every layer reads them
//! - `errors`: HAProxy's synthetic responses (400, 408, 502, 503, 504 ...)
//! - `io`, `splice`, `buf`, `timer`: socket primitives, zero-copy forwarding, pools,
//!   coarse per-thread timeouts
//! - `stick`: stick tables (keys, counters and rates, expiry, LRU purge), tracked counters
//! - `counters`: per-thread counters and what the stats count (per proxy and server,
//!   rates, latency histograms, captured errors)
//! - `stats`: the runtime API on the stats sockets (`show info`, `show stat` ...), the
//!   stats page, Prometheus
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
pub mod cache;
pub mod check;
pub mod cli;
pub mod comp;
pub mod conn_pool;
pub mod counters;
pub mod debug;
pub mod dns;
pub mod errors;
pub mod filter;
pub mod h1;
pub mod h2;
pub mod health;
pub mod http;
pub mod io;
pub mod lb;
pub mod listener;
pub mod log;
pub mod lua;
pub mod mailers;
pub mod master;
pub mod mux;
pub mod pattern;
pub mod peers;
pub mod process;
pub mod proxy;
pub mod sample;
pub mod server;
pub mod session;
pub mod splice;
pub mod spoe;
pub mod stats;
pub mod stick;
pub mod stream;
mod sys;
pub mod timer;
pub mod tls;
pub mod version;
pub mod watchdog;
pub mod worker;
