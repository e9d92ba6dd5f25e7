//! What a health check is: a server's check and agent settings, resolved from the
//! configuration ([`CheckRt`], [`AgentRt`]), and the protocols a probe speaks (HTTP
//! checks, the tcp-check engine and the protocol checks built on it, agent replies),
//! with their results. No proxy, no server state: `crate::health` runs the checks on
//! the servers and applies what they find.
//! HAProxy counterpart: check.c (settings, HTTP and agent checks), tcpcheck.c.
//!
//! - `status`: check result codes (`L4OK`, `L7STS`...) and a check's outcome
//! - `agent`: agent checks (`agent-check`): weight, health and admin words
//! - `health`: the rise/fall counter and the interval it implies
//! - `rules`: a check's rules, compiled (`tcp-check`, `http-check`, as HAProxy completes
//!   them)
//! - `tcpcheck`: the rule engine every check runs (plain, `option tcp-check`, `option
//!   httpchk`, protocol checks)
//! - `http`: HTTP requests and `http-check expect` evaluation
//! - `proto`: the protocol checks' rule sets (`redis-check`, `smtpchk`, `mysql-check`,
//!   `pgsql-check`, `ldap-check`, `spop-check`, `ssl-hello-chk`) and reply decoders
//! - `external`: the command of an external check and its fixed arguments
//! - `conn`: the connection a check opens (clear or TLS), and its error words
//! - `h2`: HTTP checks over HTTP/2: the request as a stream, the response read back

pub mod agent;
pub mod conn;
pub mod external;
mod h2;
pub mod health;
mod http;
mod proto;
mod rules;
pub mod status;
pub mod tcpcheck;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use rampart_cfg::model::{Config, Observe, OnError, Proxy, Server};
use rampart_cfg::{Diag, Span};

pub use crate::tls::client::CheckTls;
pub use agent::{AgentReply, AgentRt};
pub use health::Health;
pub use status::{CheckResult, CheckStatus, Outcome};
pub use tcpcheck::{TcpChk, TlsSet};

/// HAProxy's default `inter`.
const DEFAULT_INTER: Duration = Duration::from_millis(2000);

/// The check settings of one server, resolved.
#[derive(Debug)]
pub struct CheckRt {
    /// Where the probe connects: the server address with `addr` and `port` applied.
    pub addr: SocketAddr,
    pub inter: Duration,
    pub fastinter: Option<Duration>,
    pub downinter: Option<Duration>,
    pub rise: u32,
    pub fall: u32,
    /// `timeout check` of the backend.
    pub timeout_check: Option<Duration>,
    /// `option log-health-checks` of the backend.
    pub log_health_checks: bool,
    /// `spread-checks` of `global` (percent).
    pub spread: u32,
    /// The backend's check rules (a plain connect, `option httpchk`, `option
    /// tcp-check`, a protocol check), shared by its servers.
    pub rules: Arc<TcpChk>,
    /// `observe`, `error-limit`, `on-error` (passive checks).
    pub observe: Option<Observe>,
    pub error_limit: u32,
    pub on_error: OnError,
    /// `slowstart`: after going UP, the weight climbs from 1 to its value over this.
    pub slowstart: Option<Duration>,
    /// `check-via-socks4`: the server's `socks4` proxy the checks go through.
    pub socks4: Option<SocketAddr>,
    /// The PROXY header checks start with (`check-send-proxy`, or the server's
    /// `send-proxy*` when the check has no `port` nor `addr`): no client, so
    /// "PROXY UNKNOWN" (v1) or a LOCAL header (v2), as HAProxy sends.
    pub proxy_header: Option<Vec<u8>>,
    /// The PROXY header of a `connect send-proxy` rule: the server's version.
    pub rule_proxy_header: Vec<u8>,
    /// The server's `socks4` proxy, for a `connect via-socks4` rule.
    pub srv_socks4: Option<SocketAddr>,
    /// `port` and `addr` as configured (0 and `None` without), for `show servers state`.
    pub conf_port: u16,
    pub conf_addr: Option<IpAddr>,
    /// TLS for the checks (`check-ssl`, or `ssl` without `port` nor `addr`; `connect
    /// ssl` rules), set once the server's TLS side is built ([`attach_tls`]).
    pub tls: TlsSet,
    /// `option external-check`: the command that replaces the probe.
    pub external: Option<Box<external::ExternalCmd>>,
    /// Whether an HTTP check's default connection speaks HTTP/2: `check-proto`, else
    /// the server's `proto` (inherited by an HTTP check, as HAProxy does); `None`: as
    /// ALPN negotiates (`check-alpn` given, no `check-proto`).
    pub h2: Option<bool>,
}

/// The compiled checks of proxy `idx` (`option httpchk`, `option tcp-check`...);
/// `cx` compiles their expressions and formats.
pub fn compile_backend(px: &Proxy, cx: &mut crate::sample::expr::CompileCx<'_>) -> Result<Arc<TcpChk>, Vec<Diag>> {
    TcpChk::compile(&px.options.health, cx).map(Arc::new)
}

/// Sets the TLS of server `srv`'s checks from its TLS side `tls`: the default
/// connection's, and one per `connect` rule with TLS options of its own.
pub fn attach_tls(
    c: &mut CheckRt,
    srv: &Server,
    tls: Option<&crate::tls::client::ServerTlsRt>,
    alerts: &mut Vec<Diag>,
) {
    c.tls.default = crate::tls::client::check_tls(srv, tls);
    let Some(tls) = tls else { return };
    for w in c.rules.tls_connects() {
        let base = if w.default { c.tls.default.as_ref() } else { None };
        match tls.rule_check_tls(base, w.ssl, w.sni, w.alpn) {
            Ok(Some(t)) => c.tls.rules.push((w.rule, t)),
            Ok(None) => {}
            Err(e) => alerts.push(Diag::alert(Some(srv.span.clone()), format!("'server {}' : {e}", srv.name))),
        }
    }
}

/// The check settings of server `srv` of `px`, `None` without `check`.
pub fn build(
    cfg: &Config,
    px: &Proxy,
    srv: &Server,
    addr: SocketAddr,
    rules: &Arc<TcpChk>,
) -> Result<Option<CheckRt>, Diag> {
    let c = &srv.check;
    if !c.enabled {
        return Ok(None);
    }
    let ip = match &c.addr {
        None => addr.ip(),
        Some(text) => probe_ip(text).ok_or_else(|| {
            not_yet(&srv.span, &format!("server {}/{}: check 'addr {text}' (only an IP address)", px.name, srv.name))
        })?,
    };
    let port = c.port.unwrap_or(addr.port());
    let h2 = check_mux(px, srv, rules)?;
    if let Some(end) = missing_port(port, ip, c.addr.is_some(), rules) {
        return Err(Diag::alert(
            None,
            format!(
                "{} '{}': server '{}' has neither service port nor check port{end}",
                proxy_type_str(px),
                px.name,
                srv.name
            ),
        ));
    }
    Ok(Some(CheckRt {
        addr: SocketAddr::new(ip, port),
        inter: c.inter.unwrap_or(DEFAULT_INTER),
        fastinter: c.fastinter,
        downinter: c.downinter,
        rise: c.rise.unwrap_or(2),
        fall: c.fall.unwrap_or(3),
        timeout_check: px.timeouts.check,
        log_health_checks: px.options.log_health_checks,
        spread: cfg.global.spread_checks,
        rules: rules.clone(),
        observe: c.observe,
        error_limit: c.error_limit.unwrap_or(10),
        on_error: c.on_error.unwrap_or(OnError::FailCheck),
        slowstart: c.slowstart,
        proxy_header: check_proxy_header(srv),
        rule_proxy_header: proxy_header(srv.proxy.version.unwrap_or(1), srv.proxy.crc32c),
        socks4: srv.socks4.filter(|_| c.via_socks4),
        srv_socks4: srv.socks4,
        conf_port: c.port.unwrap_or(0),
        conf_addr: c.addr.as_deref().and_then(probe_ip),
        tls: TlsSet::default(),
        external: external::ExternalCmd::build(px, srv, cfg.global.insecure_fork).map(Box::new),
        h2,
    }))
}

/// Why a check has no port to connect to, as HAProxy 2.6's `init_srv_check()` sees it:
/// no port from `port` nor the address, a server address that is an IP (a server at
/// `0.0.0.0` or on a unix socket checks its address as it is: HAProxy's check then
/// connects to port 0 and fails), and `connect` rules that do not all name a port.
fn missing_port(port: u16, ip: IpAddr, check_addr: bool, rules: &TcpChk) -> Option<&'static str> {
    if port != 0 || (!check_addr && ip.is_unspecified()) {
        return None;
    }
    rules.missing_port()
}

/// HAProxy's `proxy_type_str()`: a `listen` section is a "proxy".
fn proxy_type_str(px: &Proxy) -> &'static str {
    match (px.cap.frontend, px.cap.backend) {
        (true, true) => "proxy",
        (false, true) => "backend",
        _ => "frontend",
    }
}

/// The mux of the checks' default connection ([`CheckRt::h2`]), HAProxy's
/// `check->mux_proto` (`init_srv_check()`): `check-proto`, which must suit the check
/// (an HTTP mux for an HTTP check, `none` otherwise), else the server's `proto` when it
/// suits the check.
fn check_mux(px: &Proxy, srv: &Server, rules: &TcpChk) -> Result<Option<bool>, Diag> {
    use rampart_cfg::model::BindProto;
    let http = rules.is_http();
    let http_mux = |p: BindProto| matches!(p, BindProto::H1 | BindProto::H2 | BindProto::Fcgi);
    let picked = match srv.check.proto {
        Some(p) if http_mux(p) != http => {
            return Err(Diag::alert(
                Some(srv.span.clone()),
                format!(
                    "config : {} '{}': server '{}' uses an incompatible MUX protocol for the selected check type",
                    if px.cap.frontend { "proxy" } else { "backend" },
                    px.name,
                    srv.name
                ),
            ))
        }
        Some(p) => Some(p),
        None => srv.proto.filter(|&p| http_mux(p) == http),
    };
    let alpn = srv.tls.check_alpn.is_some();
    Ok(match picked {
        Some(p) => Some(p == BindProto::H2),
        None if alpn => None,
        None => Some(false),
    })
}

/// The PROXY header of the server's checks, if any.
fn check_proxy_header(srv: &Server) -> Option<Vec<u8>> {
    let p = &srv.proxy;
    let implied = p.version.is_some() && srv.check.port.is_none() && srv.check.addr.is_none();
    if !p.check && !implied {
        return None;
    }
    Some(proxy_header(p.version.unwrap_or(1), p.crc32c))
}

/// A PROXY header without a client: "PROXY UNKNOWN" (v1) or a LOCAL header (v2).
fn proxy_header(version: u8, crc32c: bool) -> Vec<u8> {
    let mut out = Vec::new();
    match version {
        1 => rampart_proto::pp::encode_v1(&mut out, None),
        _ => rampart_proto::pp::encode_v2(&mut out, None, &[], crc32c),
    }
    out
}

/// An `addr` value as an IP address (`ipv4@`/`ipv6@` prefixes and a port allowed).
pub(crate) fn probe_ip(text: &str) -> Option<IpAddr> {
    let t = text.strip_prefix("ipv4@").or_else(|| text.strip_prefix("ipv6@")).unwrap_or(text);
    if let Ok(ip) = t.parse() {
        return Some(ip);
    }
    if let Ok(sa) = t.parse::<SocketAddr>() {
        return Some(sa.ip());
    }
    let host = t.rsplit_once(':').map_or(t, |(h, _)| h);
    host.trim_start_matches('[').trim_end_matches(']').parse().ok()
}

fn not_yet(span: &Span, what: &str) -> Diag {
    Diag::alert(Some(span.clone()), format!("{what} is not supported yet"))
}

/// The agent settings of server `srv` of `px`, `None` without `agent-check`.
pub fn build_agent(px: &Proxy, srv: &Server, addr: SocketAddr) -> Result<Option<AgentRt>, Diag> {
    let c = &srv.check;
    if !c.agent {
        return Ok(None);
    }
    let Some(port) = c.agent_port else {
        return Err(Diag::alert(
            Some(srv.span.clone()),
            format!(
                "'server {}/{}' : server {} does not have agent port. Agent check has been disabled.",
                px.name, srv.name, srv.name
            ),
        ));
    };
    let ip = match &c.agent_addr {
        None => c.addr.as_deref().and_then(probe_ip).unwrap_or(addr.ip()),
        Some(text) => probe_ip(text).ok_or_else(|| {
            not_yet(&srv.span, &format!("server {}/{}: 'agent-addr {text}' (only an IP address)", px.name, srv.name))
        })?,
    };
    Ok(Some(AgentRt {
        addr: SocketAddr::new(ip, port),
        inter: c.agent_inter.or(c.inter).unwrap_or(DEFAULT_INTER),
        send: c.agent_send.as_ref().map(|s| rampart_cfg::lexer::raw_bytes(s.as_bytes()).into_owned()),
        log_health_checks: px.options.log_health_checks,
        conf_addr: c.agent_addr.as_deref().and_then(probe_ip),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rampart_cfg::{parse_str, LexCtx};

    fn runtime(text: &str) -> Result<crate::proxy::Runtime, Vec<String>> {
        let ctx = LexCtx { env: &|_| None, version: "2.6.12", features: &[] };
        let loaded = parse_str("t.cfg", text, &ctx);
        let cfg = loaded.config.unwrap_or_else(|| panic!("config refused: {:?}", loaded.diags.list));
        crate::build::build(&cfg, 100, 1).map_err(|d| d.into_iter().map(|d| d.message).collect())
    }

    const T: &str = "defaults\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n";

    #[test]
    fn check_settings_and_their_defaults() {
        let rt = runtime(&format!(
            "{T} timeout check 3s\n option log-health-checks\nbackend b\n server s1 127.0.0.1:80 check\n\
             server s2 127.0.0.1:80 check addr 127.0.0.2 port 8080 inter 1s rise 4 fall 5\n"
        ))
        .expect("builds");
        let c = |i: usize| rt.proxies[0].be.servers[i].check.as_deref().expect("check");
        assert_eq!((c(0).inter, c(0).rise, c(0).fall), (DEFAULT_INTER, 2, 3));
        assert_eq!((c(0).timeout_check, c(0).log_health_checks), (Some(Duration::from_secs(3)), true));
        assert_eq!(c(1).addr, "127.0.0.2:8080".parse().expect("addr"));
        assert_eq!((c(1).inter, c(1).rise, c(1).fall), (Duration::from_secs(1), 4, 5));
    }

    #[test]
    fn checks_send_a_proxy_header_as_haproxy_decides() {
        let rt = runtime(&format!(
            "{T}backend b\n server s1 127.0.0.1:80 check send-proxy\n server s2 127.0.0.1:80 check send-proxy port 81\n\
             server s3 127.0.0.1:80 check check-send-proxy port 81\n server s4 127.0.0.1:80 check send-proxy-v2\n\
             server s5 127.0.0.1:80 check\n"
        ))
        .expect("builds");
        let h = |i: usize| rt.proxies[0].be.servers[i].check.as_deref().expect("check").proxy_header.clone();
        assert_eq!(h(0).as_deref(), Some(&b"PROXY UNKNOWN\r\n"[..]));
        assert_eq!(h(1), None, "a check port of its own: no header unless asked");
        assert_eq!(h(2).as_deref(), Some(&b"PROXY UNKNOWN\r\n"[..]));
        let v2 = h(3).expect("v2 header");
        assert_eq!(&v2[..12], b"\r\n\r\n\0\r\nQUIT\n");
        assert_eq!(v2[12], 0x20, "LOCAL command");
        assert_eq!(h(4), None);
    }

    #[test]
    fn refusals_at_startup() {
        let e = runtime(&format!("{T}backend b\n server s 127.0.0.1:80 agent-check\n")).unwrap_err();
        assert_eq!(e, ["'server b/s' : server s does not have agent port. Agent check has been disabled."]);
        let e = runtime(&format!(
            "{T}backend b\n option httpchk\n http-check expect rstring (\n server s 127.0.0.1:80 check\n"
        ))
        .unwrap_err();
        assert!(e[0].starts_with("'http-check expect' : regex '(' is invalid"), "{e:?}");
    }
}
