//! Startup: each proxy's `log` lines resolved and opened (`log global` standing for
//! the `global` ones, opened once and shared), its format compiled, its options
//! kept; and the `global` loggers that operational messages go to
//! ([`send_global`]). A proxy without `log` lines gets nothing: its streams pay
//! nothing for logging.
//! HAProxy counterpart: the log parts of `check_config_validity()` (src/cfgparse.c),
//! `send_log()` (src/log.c).

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use arc_swap::ArcSwapOption;
use rampart_cfg::model::{Config, LogTarget};
use rampart_cfg::Diag;

use super::format::{LfMode, LogFormat};
use super::sink::{self, Ident, Loggers, Sink};
use super::stream_log::ProxyLog;
use super::target;
use crate::sample::expr::{CompileCx, Place, Site};

/// The `global` loggers of the running configuration.
static GLOBAL: ArcSwapOption<Loggers> = ArcSwapOption::const_empty();

/// Makes `loggers` the ones [`send_global`] uses (at startup, after a successful build).
pub fn set_global(loggers: Loggers) {
    GLOBAL.store(Some(Arc::new(loggers)));
}

/// Sends an operational message (HAProxy's wording, no trailing newline) at `level`
/// (see [`super::level`]) to the `global` log targets; nothing without any.
pub fn send_global(level: u8, msg: &str) {
    if let Some(g) = GLOBAL.load().as_deref() {
        g.send(level, msg.as_bytes());
    }
}

/// HAProxy's line for a connection to frontend `fe_name` (`http`: it serves HTTP) that
/// logs with `pl` without a format: `Connect from <src> to <dst> (<frontend>/<MODE>)`,
/// at the accept.
pub fn log_connect(pl: &ProxyLog, fe_name: &str, http: bool, conn: &crate::sample::ctx::ConnInfo) {
    if pl.format.is_some() {
        return;
    }
    let mode = if http { "HTTP" } else { "TCP" };
    let addr = |a: Option<std::net::SocketAddr>| a.map_or_else(|| "unix".to_owned(), |a| a.to_string());
    let msg = format!("Connect from {} to {} ({fe_name}/{mode})", addr(conn.src), addr(conn.dst()));
    pl.loggers.send(super::level::INFO, msg.as_bytes());
}

/// HAProxy's line for a connection that failed before it became a stream (a missing
/// or bad PROXY header, a failed TLS handshake), as `session_kill_embryonic()` sends
/// it: `<src>:<port> [<accept date>] <frontend>/<listener>: <why>`, for a frontend
/// that logs with a format. With `option dontlognull`, a connection that closed or
/// timed out without sending anything (`null`) is not logged.
/// COMPAT: an `error-log-format` is not used for these lines (HAProxy renders it
/// without a stream); rampart always writes the default form.
///
/// `fe`: the frontend's log settings, its name and the `name` of the listener the
/// connection came through.
pub fn log_embryonic(
    fe: (&ProxyLog, &str, Option<&str>),
    conn: &crate::sample::ctx::ConnInfo,
    accepted: std::time::SystemTime,
    fail: &dyn std::fmt::Display,
    null: bool,
) {
    let (pl, fe_name, listener) = fe;
    if pl.format.is_none() || (pl.dontlognull && null) {
        return;
    }
    let mut line = match conn.src {
        Some(a) => format!("{}:{} [", a.ip(), a.port()),
        None => format!("unix:{} [", conn.listener + 1),
    };
    let mut date = Vec::with_capacity(24);
    let (secs, usec) = super::date::split(accepted);
    super::date::clf(&mut date, secs, true, Some(usec / 1000), false);
    line.push_str(&String::from_utf8_lossy(&date));
    match listener {
        Some(name) => line.push_str(&format!("] {fe_name}/{name}: {fail}")),
        None => line.push_str(&format!("] {fe_name}/{}: {fail}", conn.listener + 1)),
    }
    let level = if pl.separate_errors { super::level::ERR } else { super::level::INFO };
    pl.loggers.send(level, line.as_bytes());
}

/// `option httpslog`'s format as rampart compiles it: HAProxy's own (the TLS fields
/// come from the `ssl_*` fetches and `%sslv`/`%sslc`, `-` on a plain connection but
/// `ssl_fc_is_resumed`, 0), with `%[fc_err]` written as `0`.
/// COMPAT: `fc_err` is not a fetch here (connection error codes are not kept). HAProxy's
/// front connection codes are those of its handshakes (PROXY header, TLS), and a
/// connection that failed one never makes a stream's line, so its lines show 0 there
/// too (configuration.txt, `option httpslog`). Any other format is returned as is.
pub(crate) fn httpslog_format(text: &str) -> std::borrow::Cow<'_, str> {
    use rampart_cfg::model::HTTPS_LOG_FORMAT;
    if text == HTTPS_LOG_FORMAT {
        HTTPS_LOG_FORMAT.replacen("%[fc_err]", "0", 1).into()
    } else {
        text.into()
    }
}

/// Opened targets, shared between the proxies naming the same line.
pub struct Opener {
    opened: HashMap<Vec<String>, Arc<Sink>>,
    /// `buf0` and the `ring` sections, for `log ring@<name>`.
    pub rings: Vec<Arc<super::ring::Ring>>,
    /// The `global` section's targets.
    pub global: Vec<Arc<Sink>>,
    pub ident: Ident,
}

impl Opener {
    /// Opens the `global` targets; alerts name the ones that cannot be.
    pub fn new(cfg: &Config, alerts: &mut Vec<Diag>) -> Opener {
        let ident = Ident::new(cfg.global.log_tag.as_deref(), cfg.global.log_send_hostname.as_deref());
        let mut rings = vec![Arc::new(super::ring::Ring::buf0())];
        rings.extend(cfg.rings.iter().map(|r| Arc::new(super::ring::Ring::from_cfg_tls(r, cfg, alerts))));
        let mut o = Opener { opened: HashMap::new(), rings, global: Vec::new(), ident };
        for t in &cfg.global.logs {
            if let Some(s) = o.open(t, None, alerts) {
                o.global.push(s);
            }
        }
        o
    }

    /// Opens the target of `t`, a `log` line of proxy `owner` (`None`: `global`).
    fn open(&mut self, t: &LogTarget, owner: Option<&str>, alerts: &mut Vec<Diag>) -> Option<Arc<Sink>> {
        if let Some(s) = self.opened.get(&t.args) {
            return Some(s.clone());
        }
        let opened = target::parse(&t.args).and_then(|tgt| match &tgt.dest {
            target::Dest::Ring(name) => self.open_ring(tgt.clone(), name, t, owner),
            _ => sink::open(tgt),
        });
        match opened {
            Ok(s) => {
                let s = Arc::new(s);
                self.opened.insert(t.args.clone(), s.clone());
                Some(s)
            }
            Err(msg) => {
                // (HAProxy names the file and line of an unknown ring in the text)
                let ring = t.args.first().is_some_and(|a| a.starts_with("ring@"));
                alerts.push(Diag::alert((!ring).then(|| t.span.clone()), msg));
                None
            }
        }
    }

    /// The targets of `log` lines (`log global` standing for the `global` ones), as a
    /// proxy's; alerts name the ones that cannot be opened.
    /// `owner` names the section in messages.
    pub fn sinks(&mut self, owner: &str, logs: &[LogTarget], alerts: &mut Vec<Diag>) -> Vec<Arc<Sink>> {
        let mut sinks = Vec::new();
        for t in logs {
            if t.args.len() == 1 && t.args[0] == "global" {
                sinks.extend(self.global.iter().cloned());
            } else if let Some(s) = self.open(t, Some(owner), alerts) {
                sinks.push(s);
            }
        }
        sinks
    }

    /// A `log ring@<name>` target; `Err`: HAProxy's alert for an unknown ring (which
    /// HAProxy prints when it starts, not with `-c`; rampart does in both cases).
    fn open_ring(&self, tgt: target::Target, name: &str, t: &LogTarget, owner: Option<&str>) -> Result<Sink, String> {
        if let Some(ring) = self.rings.iter().find(|r| r.name == name) {
            return Ok(sink::open_ring(tgt, ring.clone()));
        }
        let (file, line) = (&t.span.file, t.span.line);
        let fd_sink = name == "stdout" || name == "stderr";
        // HAProxy's texts, the misspelt one included (log scrapers may match it)
        Err(match (owner, fd_sink) {
            (None, false) => format!("global log server declared in file '{file}' at line {line} uses unknown ring named '{name}'."),
            (None, true) => format!("global log server declared in file '{file}' at line {line} uses incompatible ring '{name}'."),
            (Some(px), false) => format!(
                "log server declared in proxy section '{px}' in file '{file}' at line {line} uses unknown ring named '{name}'."
            ),
            (Some(px), true) => format!(
                "log server declared in proxy section '{px}' in file '{file}' at line {line} uses incomatible ring named '{name}'."
            ),
        })
    }

    /// The `global` loggers, for [`set_global`].
    pub fn global_loggers(&self) -> Loggers {
        Loggers { sinks: self.global.clone(), ident: self.ident.clone() }
    }

    /// The log settings of proxy `idx`; `None` without any `log` line.
    pub fn proxy(&mut self, cfg: &Config, idx: usize, alerts: &mut Vec<Diag>) -> Option<Box<ProxyLog>> {
        let px = &cfg.proxies[idx];
        let mut sinks = Vec::new();
        for t in &px.logs {
            if t.args.len() == 1 && t.args[0] == "global" {
                sinks.extend(self.global.iter().cloned());
            } else if let Some(s) = self.open(t, Some(&px.name), alerts) {
                sinks.push(s);
            }
        }
        if sinks.is_empty() {
            return None;
        }
        let o = &px.options;
        // (`option httplog` in a TCP frontend already fell back to tcplog, with
        // HAProxy's warning, in rampart-cfg's checks)
        let text = o.log_format.as_deref();
        let mut compile = |text: &str, span: &Option<rampart_cfg::Span>, what: &str| -> Option<LogFormat> {
            let mut cx = CompileCx::new(cfg, idx, Site::Log);
            match LogFormat::compile(text, &mut cx, LfMode::Log, &[Place::FeLogEnd]) {
                Ok(f) => Some(f),
                Err(e) => {
                    let span = span.clone().unwrap_or_else(|| px.span.clone());
                    alerts.push(Diag::alert(Some(span), format!("failed to parse {what} : {}", e.msg)));
                    None
                }
            }
        };
        let format =
            text.filter(|t| !t.is_empty()).and_then(|t| compile(&httpslog_format(t), &o.log_format_span, "log-format"));
        let error_format =
            o.error_log_format.as_deref().and_then(|t| compile(t, &o.error_log_format_span, "error-log-format"));
        let sd_format = o.log_format_sd.as_deref().and_then(|t| compile(t, &o.log_format_sd_span, "log-format-sd"));
        Some(Box::new(ProxyLog {
            loggers: Loggers { sinks, ident: self.ident.with_tag(px.log_tag.as_deref()) },
            format,
            error_format,
            sd_format,
            dontlognull: o.dontlognull,
            dontlog_normal: o.dontlog_normal,
            separate_errors: o.log_separate_errors,
            logasap: o.logasap,
            back_src: [text, o.error_log_format.as_deref()]
                .iter()
                .flatten()
                .any(|t| t.contains("bi") || t.contains("bp")),
            count: AtomicU64::new(0),
        }))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::sample::testutil::config;

    fn build(text: &str) -> (Result<crate::proxy::Runtime, Vec<Diag>>, Vec<Diag>) {
        crate::build::build_with_warnings(&config(text), 100, 1)
    }

    use rampart_cfg::Diag;

    const D: &str = "defaults\n  mode http\n  timeout client 1s\n  timeout server 1s\n  timeout connect 1s\n";

    #[test]
    fn log_global_shares_the_global_sockets_and_proxies_without_log_pay_nothing() {
        let text = format!(
            "global\n  log 127.0.0.1:9 local0\n{D}frontend fe\n  bind 127.0.0.1:18001\n  log global\n\
             \x20 log 127.0.0.1:9 local0\n  option httplog\n  default_backend be\nbackend be\n  server s 127.0.0.1:1\n"
        );
        let rt = build(&text).0.unwrap();
        let fe = rt.proxies[0].log.as_deref().unwrap();
        assert_eq!(fe.loggers.sinks.len(), 2);
        assert!(Arc::ptr_eq(&fe.loggers.sinks[0], &fe.loggers.sinks[1]), "the same line opens one socket");
        assert!(fe.format.is_some());
        assert!(rt.proxies[1].log.is_none(), "a backend without log lines");
    }

    #[test]
    fn httplog_in_a_tcp_frontend_falls_back_to_tcplog() {
        let text = "defaults\n  mode tcp\n  timeout client 1s\n  timeout server 1s\n  timeout connect 1s\n\
                    frontend fe\n  bind 127.0.0.1:18001\n  log 127.0.0.1:9 local0\n  option httplog\n\
                    \x20 default_backend be\nbackend be\n  server s 127.0.0.1:1\n";
        let cfg = config(text);
        assert_eq!(cfg.proxies[0].options.log_format.as_deref(), Some(rampart_cfg::model::TCP_LOG_FORMAT));
        assert!(build(text).0.unwrap().proxies[0].log.as_deref().unwrap().format.is_some());
    }

    #[test]
    fn httpslog_compiles_haproxys_format_with_fc_err_as_zero() {
        use rampart_cfg::model::{HTTPS_LOG_FORMAT, HTTP_LOG_FORMAT};
        let f = super::httpslog_format(HTTPS_LOG_FORMAT);
        assert_eq!(
            f,
            format!(
                "{HTTP_LOG_FORMAT} 0/%[ssl_fc_err,hex]/%[ssl_c_err]/%[ssl_c_ca_err]/%[ssl_fc_is_resumed] \
                 %[ssl_fc_sni]/%sslv/%sslc"
            )
        );
        assert_eq!(super::httpslog_format("%[fc_err] %ci"), "%[fc_err] %ci", "only the option's format");
        let text = format!(
            "{D}frontend fe\n  bind 127.0.0.1:18001\n  log 127.0.0.1:9 local0\n  option httpslog\n\
             \x20 default_backend be\nbackend be\n  server s 127.0.0.1:1\n"
        );
        let (rt, warnings) = build(&text);
        assert!(rt.unwrap().proxies[0].log.as_deref().unwrap().format.is_some());
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn unopenable_targets_and_bad_formats_are_alerts() {
        let text = format!(
            "{D}frontend fe\n  bind 127.0.0.1:18001\n  log ring@buf local0\n  log-format \"%Tx\"\n  default_backend be\n\
             backend be\n  server s 127.0.0.1:1\n"
        );
        let alerts = build(&text).0.unwrap_err();
        let msgs: Vec<&str> = alerts.iter().map(|d| d.message.as_str()).collect();
        assert!(
            msgs.iter().any(|m| m
                == &"log server declared in proxy section 'fe' in file 'test.cfg' at line 8 uses unknown ring named 'buf'."),
            "{msgs:?}"
        );
        let text = text.replace("ring@buf", "127.0.0.1:9");
        let alerts = build(&text).0.unwrap_err();
        assert!(alerts[0].message.starts_with("failed to parse log-format : no such format variable 'Tx'"));
    }

    #[test]
    fn ring_targets_resolve_by_name_and_unknown_ones_are_haproxys_alerts() {
        let text = format!(
            "global\n  log ring@nope local0\n{D}frontend fe\n  bind 127.0.0.1:18001\n  log ring@stdout local0\n\
             \x20 default_backend be\nbackend be\n  server s 127.0.0.1:1\n"
        );
        let alerts = build(&text).0.unwrap_err();
        let msgs: Vec<&str> = alerts.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            msgs,
            [
                "global log server declared in file 'test.cfg' at line 2 uses unknown ring named 'nope'.",
                "log server declared in proxy section 'fe' in file 'test.cfg' at line 10 uses incomatible ring named \
                 'stdout'."
            ]
        );
        assert!(alerts.iter().all(|d| d.span.is_none()), "HAProxy prints no 'parsing [...]' for these");
        // a declared ring and the built-in buf0; the target's own `format` gives way
        // to the ring's
        let text = format!(
            "{D}frontend fe\n  bind 127.0.0.1:18001\n  log ring@r format rfc5424 local0\n  log ring@buf0 local1\n\
             \x20 default_backend be\nbackend be\n  server s 127.0.0.1:1\nring r\n  format short\n"
        );
        let rt = build(&text).0.unwrap();
        let pl = rt.proxies[0].log.as_deref().unwrap();
        pl.loggers.send(crate::log::level::WARNING, b"hello");
        // (through the targets: other tests replace the process' ring list)
        let ring =
            |name: &str| pl.loggers.sinks.iter().filter_map(|s| s.ring()).find(|r| r.name == name).unwrap().clone();
        let mut out = Vec::new();
        ring("r").dump(&mut out);
        assert_eq!(String::from_utf8(out).unwrap(), "<4>hello\n");
        let mut out = Vec::new();
        ring("buf0").dump(&mut out);
        let line = String::from_utf8(out).unwrap();
        assert!(line.starts_with("<4>20") && line.ends_with(" hello\n"), "{line}");
    }

    #[test]
    fn a_bad_proxy_header_is_logged_as_haproxy_kills_an_embryonic_session() {
        use crate::session::pp::PpFail;
        let rx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_read_timeout(Some(std::time::Duration::from_millis(500))).unwrap();
        let text = format!(
            "{D}frontend fe\n  bind 127.0.0.1:18001\n  bind 127.0.0.1:18002 name second\n\
             \x20 log {} format raw local0\n  option httplog\n  option dontlognull\n  default_backend be\n\
             backend be\n  server s 127.0.0.1:1\n",
            rx.local_addr().unwrap()
        );
        let rt = build(&text).0.unwrap();
        let conn = crate::sample::ctx::ConnInfo::new(Some("10.0.0.1:4242".parse().unwrap()), -1);
        let now = std::time::SystemTime::now();
        let px = &rt.proxies[0];
        let fe = |c: &crate::sample::ctx::ConnInfo| {
            (px.log.as_deref().unwrap(), px.name.as_str(), px.fe.listeners[c.listener as usize].name.as_deref())
        };
        super::log_embryonic(fe(&conn), &conn, now, &PpFail::Truncated, false);
        let mut buf = [0u8; 512];
        let n = rx.recv(&mut buf).unwrap();
        let line = std::str::from_utf8(&buf[..n]).unwrap();
        let mut date = Vec::new();
        let (secs, usec) = crate::log::date::split(now);
        crate::log::date::clf(&mut date, secs, true, Some(usec / 1000), false);
        let date = String::from_utf8(date).unwrap();
        assert_eq!(line, format!("10.0.0.1:4242 [{date}] fe/1: Truncated PROXY protocol header received\n"));
        // the listener's name when it has one
        let second = crate::sample::ctx::ConnInfo { listener: 1, ..conn.clone() };
        super::log_embryonic(fe(&second), &second, now, &PpFail::Timeout, true);
        // `option dontlognull`: a client that sent nothing is not logged
        super::log_embryonic(fe(&conn), &conn, now, &PpFail::Empty, true);
        super::log_embryonic(fe(&second), &second, now, &PpFail::Truncated, false);
        let n = rx.recv(&mut buf).unwrap();
        let line = std::str::from_utf8(&buf[..n]).unwrap();
        assert!(line.ends_with("] fe/second: Truncated PROXY protocol header received\n"), "{line}");
        assert!(rx.recv(&mut buf).is_err(), "nothing more");
    }
}
