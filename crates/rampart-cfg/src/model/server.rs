//! `server` lines with `default-server` applied: address, options, what a server's
//! checks and errors do (`observe`, `on-error`), `retry-on` response statuses.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::span::Span;

use super::{BindProto, ServerFqdn, ServerResolve, ServerTls};

/// A server address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerAddr {
    Inet(SocketAddr),
    Unix(PathBuf),
}

/// `server ... ws <mode>`: the protocol a WebSocket stream is sent over (HAProxy 2.6's
/// `srv->ws`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ServerWs {
    /// `auto` (the default): as other streams (`proto`), except that over TLS with an
    /// `alpn` list naming `http/1.1`, only `http/1.1` is offered.
    #[default]
    Auto,
    /// `h1`: HTTP/1.1 (`Upgrade`), `http/1.1` offered by ALPN.
    H1,
    /// `h2`: HTTP/2 (extended CONNECT, RFC 8441), `h2` offered by ALPN.
    H2,
}

/// `server <name> <addr> [options]` with `default-server` applied.
#[derive(Debug, Clone)]
pub struct Server {
    pub name: String,
    pub addr: ServerAddr,
    /// `weight` 0..=256, default 1.
    pub weight: u32,
    /// `maxconn`, `None` = unlimited.
    pub maxconn: Option<u32>,
    /// `minconn`: the floor of the dynamic `maxconn` below the backend's `fullconn`
    /// (0: off).
    pub minconn: u32,
    /// `maxqueue`: streams that may wait in this server's own queue (0: no limit).
    pub maxqueue: u32,
    /// `pool-max-conn`: idle connections kept for reuse; `None` (-1, the default) =
    /// unlimited, 0 = none.
    pub pool_max_conn: Option<u32>,
    /// `pool-low-conn`: the idle connections to this server all threads must keep
    /// before one thread takes one over from another (0, the default: always).
    pub pool_low_conn: u32,
    /// `pool-purge-delay`: how long a connection may stay idle before it is closed
    /// (5 s by default); zero keeps no idle connection.
    pub pool_purge_delay: std::time::Duration,
    /// `max-reuse`: a connection to this server carries at most this many requests
    /// after its first (`None`: -1, no limit). As in HAProxy 2.6, only HTTP/2
    /// connections count their streams against it.
    pub max_reuse: Option<u32>,
    /// `redir <prefix>`: GET and HEAD requests sent to this server are answered with a
    /// 302 to `<prefix><path>` instead (`/` alone: the path only).
    pub redir: Option<String>,
    pub backup: bool,
    /// `non-stick`: the stick rules never store this server (`stick` undoes it).
    pub non_stick: bool,
    pub disabled: bool,
    /// `id` (HAProxy's `puid`, > 0, unique in the backend); `None`: assigned at startup.
    pub id: Option<u32>,
    /// Health-check settings.
    pub check: CheckOptions,
    /// `send-proxy`, `send-proxy-v2`, `proxy-v2-options`, `check-send-proxy`.
    pub proxy: SendProxy,
    /// `source <addr>[:<port>]`, else the backend's.
    pub source: Option<SocketAddr>,
    /// `socks4 <addr>:<port>`: connections go through this SOCKS4 proxy.
    pub socks4: Option<SocketAddr>,
    /// `tfo`: TCP_FASTOPEN_CONNECT on connections to the server (the request may ride
    /// in the SYN once the kernel holds a fast-open cookie for it).
    pub tfo: bool,
    /// An address without a port, or with `+N`/`-N`: the port is the one the client
    /// connected to plus this offset (the address's port is then 0).
    pub port_offset: Option<i32>,
    /// `ssl`, `verify`, `ca-file`, `sni`, `alpn`, `crt`, `check-ssl` ...
    ///
    /// PERF: shared with the `default-server` line it comes from until a TLS option
    /// of its own changes it (copy on write): 300 bytes per server otherwise, most of
    /// them without any TLS option (20 000 backends of five servers: 34 MB).
    pub tls: std::sync::Arc<ServerTls>,
    /// `cookie <value>`: the value of the backend's persistence cookie that names it.
    pub cookie: Option<String>,
    /// `proto <mux>`: the protocol spoken to the server whatever ALPN says (`h1` or
    /// `h2`); `None`: HTTP/1, or what ALPN negotiated over TLS.
    pub proto: Option<BindProto>,
    /// `ws auto|h1|h2`: the protocol a WebSocket upgrade goes over.
    pub ws: ServerWs,
    /// The DNS name of the address, when it is one (its address is then the one it
    /// resolved to at startup, or unset).
    pub fqdn: Option<ServerFqdn>,
    /// `resolvers`, `resolve-prefer`, `resolve-net`, `resolve-opts`, `init-addr`.
    pub resolve: ServerResolve,
    pub span: Span,
}

/// The response-based conditions of `retry-on`: when a request already sent is sent
/// again (if it can be replayed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RetryOnResponse {
    /// `empty-response`: the server closed without sending anything.
    pub empty_response: bool,
    /// `junk-response`: what came back is not a valid HTTP response head.
    pub junk_response: bool,
    /// `response-timeout`: `timeout server` struck before the response.
    pub response_timeout: bool,
    /// Status codes (`401`, `403`, `404`, `408`, `425`, `500` to `504`).
    pub statuses: Vec<u16>,
    /// A `retry-on` line was given (in the proxy or its `defaults`): only the listed
    /// conditions apply, as in HAProxy.
    pub explicit: bool,
}

impl RetryOnResponse {
    /// Whether any condition is set.
    pub fn any(&self) -> bool {
        self.empty_response || self.junk_response || self.response_timeout || !self.statuses.is_empty()
    }
}

/// The PROXY protocol header a server connection starts with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SendProxy {
    /// `None`: no header; `Some(1)`: `send-proxy`; `Some(2)`: `send-proxy-v2`.
    pub version: Option<u8>,
    /// `proxy-v2-options authority`: the AUTHORITY TLV received from the client.
    pub authority: bool,
    /// `proxy-v2-options unique-id`: the frontend's `unique-id-format` value.
    pub unique_id: bool,
    /// `proxy-v2-options crc32c`: a CRC32C TLV.
    pub crc32c: bool,
    /// `check-send-proxy`: health checks start with a header too.
    pub check: bool,
    /// `send-proxy-v2-ssl`, `proxy-v2-options ssl`: the SSL TLV (whether the client
    /// connection is TLS, its version, its certificate's verification).
    pub ssl: bool,
    /// `send-proxy-v2-ssl-cn`, `proxy-v2-options cert-cn`: the client certificate's
    /// common name in the SSL TLV.
    pub ssl_cn: bool,
    /// `proxy-v2-options ssl-cipher`: the cipher in the SSL TLV.
    pub ssl_cipher: bool,
    /// `proxy-v2-options cert-sig`: the signature algorithm of the certificate the
    /// frontend presented, in the SSL TLV.
    pub ssl_cert_sig: bool,
    /// `proxy-v2-options cert-key`: the key algorithm and size of that certificate.
    pub ssl_cert_key: bool,
}

/// `check`, `inter`, `rise`, `fall`, ... as written on a `server` line.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    pub enabled: bool,
    pub inter: Option<Duration>,
    pub fastinter: Option<Duration>,
    pub downinter: Option<Duration>,
    pub rise: Option<u32>,
    pub fall: Option<u32>,
    pub port: Option<u16>,
    pub addr: Option<String>,
    /// `agent-check` and its settings.
    pub agent: bool,
    /// `check-via-socks4`: health checks go through the server's `socks4` proxy.
    pub via_socks4: bool,
    pub agent_port: Option<u16>,
    pub agent_addr: Option<String>,
    pub agent_inter: Option<Duration>,
    pub agent_send: Option<String>,
    /// `observe layer4|layer7` (`None`: `none`, the default).
    pub observe: Option<Observe>,
    /// `error-limit` (HAProxy's default: 10).
    pub error_limit: Option<u32>,
    /// `on-error` (HAProxy's default: `fail-check`).
    pub on_error: Option<OnError>,
    /// `track [<backend>/]<server>`: follow that server's state instead of checking.
    pub track: Option<String>,
    /// `slowstart`, rounded up to whole seconds as HAProxy does (`None`: off).
    pub slowstart: Option<Duration>,
    /// `on-marked-down shutdown-sessions`: going DOWN cuts the server's connections.
    pub shutdown_on_down: bool,
    /// `on-marked-up shutdown-backup-sessions`: coming UP cuts the connections of the
    /// backend's backup servers.
    pub shutdown_backups_on_up: bool,
    /// `check-proto <mux>`: the protocol the checks speak on their default
    /// connection; `None`: the server's `proto` for an HTTP check, else ALPN or HTTP/1.
    pub proto: Option<BindProto>,
}

/// `observe`: which traffic errors count against a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Observe {
    /// Connection failures.
    Layer4,
    /// Connection failures and 5xx responses (but 501 and 505).
    Layer7,
}

/// `on-error`: what `error-limit` consecutive errors do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnError {
    FastInter,
    FailCheck,
    SuddenDeath,
    MarkDown,
}
