//! Runtime frontends and backends, built once per configuration generation from the
//! cfg model: names become indices, responses are pre-rendered, and everything the
//! request path reads is immutable except the counters (atomics).
//! HAProxy counterpart: proxy.c, frontend.c, server.c (runtime parts).
//!
//! - `readers`: which code reads each accepted keyword (checked against the tables)

pub mod readers;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use rampart_cfg::model::{
    Cap, Config, ForwardFor, HttpConnMode, HttpRequestAction, HttpReuse, Mode, ReturnBody, ReturnSpec, ServerAddr,
};
use rampart_cfg::{Diag, Span};
use tokio::sync::Notify;

use crate::counters::Counter;
use crate::errors::ErrorPages;
use crate::lb::Lb;

/// Everything the worker threads share for one configuration generation.
#[derive(Debug)]
pub struct Runtime {
    pub proxies: Vec<ProxyRt>,
    /// `tune.bufsize`.
    pub bufsize: usize,
    /// `tune.bufsize - tune.maxrewrite`: the most a request or response head may take.
    pub max_head: usize,
    pub global: GlobalRt,
}

/// Process-wide connection accounting and stop state.
#[derive(Debug)]
pub struct GlobalRt {
    pub maxconn: u32,
    /// Client connections alive (all frontends, all threads).
    pub cur_conns: AtomicU32,
    /// Woken when a connection ends, so paused accept loops can resume.
    pub conn_released: Notify,
    /// Set once a soft stop (SIGUSR1) began: finish exchanges, accept nothing new.
    pub stopping: AtomicBool,
    /// Accept loops still holding their listening socket (all threads).
    pub listeners_open: AtomicU32,
    /// Woken when an accept loop closed its socket.
    pub listener_closed: Notify,
}

impl GlobalRt {
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Relaxed)
    }
}

/// A frontend, backend or listen section at run time.
#[derive(Debug)]
pub struct ProxyRt {
    pub name: String,
    /// `frontend`, `backend` or both (`listen`).
    pub cap: Cap,
    pub mode: Mode,
    pub timeouts: Timeouts,
    pub forwardfor: Option<ForwardFor>,
    pub http_conn_mode: HttpConnMode,
    pub http_reuse: HttpReuse,
    pub retries: u32,
    pub redispatch: bool,
    /// `option abortonclose`: a stream whose client closed is dropped while queued or
    /// connecting.
    pub abortonclose: bool,
    pub errors: ErrorPages,
    /// Front side (meaningful when the proxy has the frontend capability).
    pub fe: FrontendRt,
    /// Back side (meaningful when the proxy has the backend capability).
    pub be: BackendRt,
}

/// Timeouts with HAProxy's fallbacks already applied.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub client: Option<Duration>,
    pub server: Option<Duration>,
    pub connect: Option<Duration>,
    /// Waiting in the queue for a server below its `maxconn` (`queue`, else `connect`).
    pub queue: Option<Duration>,
    /// Waiting for a complete request head (`http-request`, else `client`).
    pub http_request: Option<Duration>,
    /// Waiting for the next request on a kept-alive connection
    /// (`http-keep-alive`, else `http-request`, else `client`).
    pub http_keep_alive: Option<Duration>,
    pub tunnel: Option<Duration>,
    pub client_fin: Option<Duration>,
    pub server_fin: Option<Duration>,
}

#[derive(Debug)]
pub struct FrontendRt {
    pub maxconn: u32,
    pub cur_conns: AtomicU32,
    pub conn_released: Notify,
    /// Backend chosen for every request/session (`use_backend` without condition, else
    /// `default_backend`, else the proxy itself for a `listen`).
    pub backend: Option<usize>,
    /// `http-request return` answering every request, pre-rendered.
    pub http_return: Option<Reply>,
    /// Connections are served as HTTP: the frontend is in `mode http`, or it is in
    /// `mode tcp` and its backend is in `mode http` (HAProxy then upgrades the stream to
    /// HTTP when it switches to the backend).
    pub http: bool,
    /// Connections accepted.
    pub cum_conn: Counter,
}

/// A pre-rendered response: head lines without the blank line, then the body.
/// The connection header and the final CRLF are added per request.
#[derive(Debug, Clone)]
pub struct Reply {
    pub head: Vec<u8>,
    pub body: Vec<u8>,
}

#[derive(Debug)]
pub struct BackendRt {
    pub servers: Vec<ServerRt>,
    pub lb: Lb,
    /// Woken when a server with a `maxconn` releases a connection, so that streams
    /// queued because every server was full try again (the backend queue).
    pub queue: Notify,
    /// Streams (HTTP exchanges, TCP connections) that chose this backend.
    pub cum_conn: Counter,
}

#[derive(Debug)]
pub struct ServerRt {
    pub name: String,
    pub addr: SocketAddr,
    pub maxconn: Option<u32>,
    pub backup: bool,
    pub disabled: bool,
    /// Connections to this server in use (not counting idle pooled ones).
    pub cur_conns: AtomicU32,
    /// Index of this server across all backends, keying the idle connection pools.
    pub pool_key: usize,
}

impl ServerRt {
    /// Whether a new request may be sent to this server now.
    pub fn usable(&self) -> bool {
        !self.disabled && self.maxconn.is_none_or(|m| self.cur_conns.load(Ordering::Relaxed) < m)
    }
}

/// Builds the runtime from a parsed configuration. Features the model holds but the
/// runtime does not implement yet are reported as alerts with their line.
/// `threads` sizes the per-thread counters.
pub fn build(cfg: &Config, maxconn: u32, threads: usize) -> Result<Runtime, Vec<Diag>> {
    let mut alerts = Vec::new();
    let mut pool_key = 0;
    let mut proxies = Vec::with_capacity(cfg.proxies.len());
    for (idx, px) in cfg.proxies.iter().enumerate() {
        let servers = px
            .servers
            .iter()
            .filter_map(|srv| {
                let addr = match &srv.addr {
                    ServerAddr::Inet(a) => *a,
                    ServerAddr::Unix(_) => {
                        alerts.push(not_supported(&srv.span, "unix socket server addresses"));
                        return None;
                    }
                };
                pool_key += 1;
                Some(ServerRt {
                    name: srv.name.clone(),
                    addr,
                    maxconn: srv.maxconn,
                    backup: srv.backup,
                    disabled: srv.disabled,
                    cur_conns: AtomicU32::new(0),
                    pool_key: pool_key - 1,
                })
            })
            .collect::<Vec<_>>();
        let weights: Vec<u32> = px.servers.iter().map(|s| s.weight).collect();
        let backend = select_backend(cfg, idx, &mut alerts);
        let http_return = px.http_request_rules.iter().find_map(|rule| {
            if let Some(cond) = &rule.cond {
                alerts.push(not_supported(&cond.span, "conditions ('if'/'unless') on http-request rules"));
                return None;
            }
            match &rule.action {
                HttpRequestAction::Return(spec) => Some(render_return(spec)),
            }
        });
        proxies.push(ProxyRt {
            name: px.name.clone(),
            cap: px.cap,
            mode: px.mode,
            timeouts: timeouts(&px.timeouts),
            forwardfor: px.options.forwardfor.as_ref().map(forwardfor),
            http_conn_mode: px.options.http_conn_mode,
            http_reuse: px.http_reuse,
            retries: px.retries,
            redispatch: px.options.redispatch,
            abortonclose: px.options.abortonclose,
            errors: ErrorPages::new(&px.errorfiles),
            fe: FrontendRt {
                maxconn: px.maxconn.unwrap_or(maxconn),
                cur_conns: AtomicU32::new(0),
                conn_released: Notify::new(),
                backend,
                http_return,
                http: px.mode == Mode::Http || backend.is_some_and(|b| cfg.proxies[b].mode == Mode::Http),
                cum_conn: Counter::new(threads),
            },
            be: BackendRt {
                lb: Lb::new(px.balance, &weights),
                servers,
                queue: Notify::new(),
                cum_conn: Counter::new(threads),
            },
        });
    }
    if !alerts.is_empty() {
        return Err(alerts);
    }
    Ok(Runtime {
        proxies,
        bufsize: cfg.global.bufsize,
        max_head: cfg.global.bufsize.saturating_sub(cfg.global.maxrewrite).max(1024),
        global: GlobalRt {
            maxconn,
            cur_conns: AtomicU32::new(0),
            conn_released: Notify::new(),
            stopping: AtomicBool::new(false),
            listeners_open: AtomicU32::new(0),
            listener_closed: Notify::new(),
        },
    })
}

/// The alerts [`build`] would report, for `-c` and startup before binding.
pub fn check(cfg: &Config) -> Vec<Diag> {
    build(cfg, 1, 1).err().unwrap_or_default()
}

fn not_supported(span: &Span, what: &str) -> Diag {
    Diag::alert(Some(span.clone()), format!("{what} are not supported yet"))
}

/// The backend every request of frontend `idx` goes to.
fn select_backend(cfg: &Config, idx: usize, alerts: &mut Vec<Diag>) -> Option<usize> {
    let px = &cfg.proxies[idx];
    for ub in &px.use_backends {
        match &ub.cond {
            // TODO(#2 follow-up: ACL issue): evaluate conditions per request.
            Some(cond) => alerts.push(not_supported(&cond.span, "conditions ('if'/'unless') on use_backend")),
            None => return Some(ub.backend.index),
        }
    }
    if let Some(db) = &px.default_backend {
        return Some(db.index);
    }
    px.cap.backend.then_some(idx)
}

/// `option forwardfor` with its header name lowercased, as HAProxy writes every header
/// name on HTTP/1 output (`header X-Client` arrives as `x-client`).
fn forwardfor(ff: &ForwardFor) -> ForwardFor {
    ForwardFor { header: ff.header.to_ascii_lowercase(), ..ff.clone() }
}

fn timeouts(t: &rampart_cfg::model::Timeouts) -> Timeouts {
    let http_request = t.http_request.or(t.client);
    Timeouts {
        client: t.client,
        server: t.server,
        connect: t.connect,
        queue: t.queue.or(t.connect),
        http_request,
        http_keep_alive: t.http_keep_alive.or(http_request),
        tunnel: t.tunnel,
        client_fin: t.client_fin,
        server_fin: t.server_fin,
    }
}

/// HAProxy's reason phrase for a status code (http_get_reason in HAProxy).
pub fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        101 => "Switching Protocols",
        102 => "Processing",
        103 => "Early Hints",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        203 => "Non-Authoritative Information",
        204 => "No Content",
        205 => "Reset Content",
        206 => "Partial Content",
        207 => "Multi-Status",
        208 => "Already Reported",
        226 => "IM Used",
        300 => "Multiple Choices",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        305 => "Use Proxy",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        407 => "Proxy Authentication Required",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        412 => "Precondition Failed",
        413 => "Payload Too Large",
        414 => "URI Too Long",
        415 => "Unsupported Media Type",
        416 => "Range Not Satisfiable",
        417 => "Expectation Failed",
        418 => "I'm a teapot",
        421 => "Misdirected Request",
        422 => "Unprocessable Content",
        423 => "Locked",
        424 => "Failed Dependency",
        425 => "Too Early",
        426 => "Upgrade Required",
        428 => "Precondition Required",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        451 => "Unavailable For Legal Reasons",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        506 => "Variant Also Negotiates",
        507 => "Insufficient Storage",
        508 => "Loop Detected",
        510 => "Not Extended",
        511 => "Network Authentication Required",
        _ => "Other",
    }
}

/// Pre-renders `http-request return`.
fn render_return(spec: &ReturnSpec) -> Reply {
    let body: Vec<u8> = match &spec.body {
        ReturnBody::None => Vec::new(),
        ReturnBody::Bytes(b) => b.clone(),
        ReturnBody::LogFormat(s) => s.as_bytes().to_vec(),
    };
    let mut head = format!("HTTP/1.1 {} {}\r\n", spec.status, reason(spec.status)).into_bytes();
    // As HAProxy (http_reply_to_htx): the `hdr` headers first, then the length and type.
    for (name, value) in &spec.headers {
        head.extend_from_slice(name.to_ascii_lowercase().as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value.as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    let has_body = !matches!(spec.body, ReturnBody::None);
    if has_body || !matches!(spec.status, 100..=199 | 204 | 304) {
        head.extend_from_slice(format!("content-length: {}\r\n", body.len()).as_bytes());
    }
    if let Some(ct) = &spec.content_type {
        head.extend_from_slice(format!("content-type: {ct}\r\n").as_bytes());
    }
    Reply { head, body }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn return_is_rendered_like_haproxy() {
        let spec = ReturnSpec {
            status: 200,
            content_type: Some("text/plain".into()),
            body: ReturnBody::Bytes(b"hello from app1\n".to_vec()),
            headers: vec![("X-Served-By".into(), "app1".into())],
        };
        let r = render_return(&spec);
        assert_eq!(
            r.head,
            b"HTTP/1.1 200 OK\r\nx-served-by: app1\r\ncontent-length: 16\r\ncontent-type: text/plain\r\n".to_vec()
        );
        assert_eq!(r.body, b"hello from app1\n");
    }

    #[test]
    fn keep_alive_timeout_falls_back_to_http_request_then_client() {
        let t = rampart_cfg::model::Timeouts { client: Some(Duration::from_secs(9)), ..Default::default() };
        assert_eq!(timeouts(&t).http_keep_alive, Some(Duration::from_secs(9)));
        let t = rampart_cfg::model::Timeouts {
            client: Some(Duration::from_secs(9)),
            http_request: Some(Duration::from_secs(2)),
            ..Default::default()
        };
        assert_eq!(timeouts(&t).http_keep_alive, Some(Duration::from_secs(2)));
    }
}
