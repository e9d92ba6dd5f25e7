//! Health-check settings of a proxy: the check option in effect (`option httpchk`,
//! `option tcp-check`, the protocol checks) and the `http-check` / `tcp-check` rules
//! (the server side, `check`, `inter`, `rise`..., is [`super::CheckOptions`]).
//! HAProxy counterpart: `struct tcpcheck_rules` / `struct tcpcheck_rule`
//! (include/haproxy/tcpcheck-t.h): since HAProxy 2.2 an HTTP check is a tcp-check
//! rule list whose `send` and `expect` rules speak HTTP.

use std::sync::Arc;

use crate::span::Span;

use super::{ExprSrc, FmtSrc, VarAction};

/// The checks a backend runs on its servers with `check`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HealthCheck {
    /// `option httpchk` is in effect (else a TCP connect check, or `proto`).
    pub httpchk: bool,
    /// The `http-check` rules in the order they run, the request of `option httpchk`
    /// included (a `send` rule marked [`HttpSend::from_opt`]). Empty when neither was
    /// written.
    pub http_rules: Vec<CheckRule>,
    /// The line of the section that wrote `http_rules` (a proxy that writes its own
    /// rules starts over instead of adding to those of its `defaults`).
    pub http_owner: Option<(Arc<str>, u32)>,
    /// `http-check disable-on-404`: a 404 reply puts an UP server in NOLB (stopping).
    pub disable_on_404: bool,
    /// `http-check send-state`: add `X-Haproxy-Server-State` to the check request.
    pub send_state: bool,
    /// `option tcp-check`, `option redis-check`, `option smtpchk`... (exclusive with
    /// `httpchk`: the last option wins).
    pub proto: Option<ProtoCheck>,
    /// `tcp-check` rules, run with `option tcp-check`.
    pub tcp_rules: Vec<CheckRule>,
    /// The line of the section that wrote `tcp_rules` (as `http_owner`).
    pub tcp_owner: Option<(Arc<str>, u32)>,
    /// `option external-check`: the `external-check command` is the check (exclusive
    /// with `httpchk` and `proto`: the last option wins).
    pub external: bool,
}

/// A check built on the tcp-check rule engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProtoCheck {
    /// `option tcp-check`: the `tcp-check` rules.
    TcpCheck,
    /// `option redis-check`: PING, expect `+PONG`.
    Redis,
    /// `option smtpchk [EHLO|HELO <domain>]`: banner, the greeting, QUIT.
    Smtp { hello: String },
    /// `option mysql-check [user <name> [post-41|pre-41]]`: the server greeting, and
    /// with a user an authentication packet answered by an OK packet.
    Mysql { user: Option<MysqlUser> },
    /// `option pgsql-check user <name>`: a startup message, expect an authentication
    /// request.
    Pgsql { user: String },
    /// `option ldap-check`: an anonymous bind, expect a successful bind response.
    Ldap,
    /// `option spop-check`: an SPOP HAPROXY-HELLO frame, expect an AGENT-HELLO.
    Spop,
    /// `option ssl-hello-chk`: an SSLv3 ClientHello, expect a handshake or alert record.
    SslHello,
}

/// The user of `option mysql-check user <name> [post-41|pre-41]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MysqlUser {
    pub name: String,
    /// `post-41` (the default) rather than `pre-41`: the MySQL 4.1 packet format.
    pub post41: bool,
}

/// One `tcp-check` or `http-check` rule with its `comment` (for `Comment`, the text
/// itself) and its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRule {
    pub action: CheckAction,
    pub comment: Option<String>,
    /// HAProxy's index of the rule, as its parser numbers them (the step of messages
    /// is `index + 1`): one more than the rule written before, except after the
    /// request of `option httpchk`.
    pub index: usize,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckAction {
    /// `comment <text>`: names the rules after it.
    Comment,
    /// `connect [default] [port <p>] [addr <a>] [ssl] [sni <s>] [alpn <l>] ...`.
    Connect(CheckConnect),
    /// `tcp-check send`, `send-binary`, `send-lf`, `send-binary-lf`.
    Send(SendData),
    /// `http-check send` (and the request of `option httpchk`).
    SendHttp(HttpSend),
    /// `expect [min-recv <n>] [!] <match> <pattern> [options]`.
    Expect(CheckExpect),
    /// `set-var(<var>[,<cond>...]) <expr>`, `set-var-fmt(...) <fmt>`, `unset-var(<var>)`.
    Var(VarAction),
}

/// The options of a `connect` rule.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckConnect {
    /// `default`: the server's check settings (`check-ssl`, `check-sni`,
    /// `check-alpn`, `check-send-proxy`, `check-via-socks4`) apply.
    pub default: bool,
    pub port: Option<ConnectPort>,
    /// `addr <ip[:port]>`, as written.
    pub addr: Option<String>,
    pub send_proxy: bool,
    pub via_socks4: bool,
    /// `linger`: close cleanly rather than with a reset.
    pub linger: bool,
    pub ssl: bool,
    pub sni: Option<String>,
    /// `alpn <list>`: the protocols, in order.
    pub alpn: Option<Vec<String>>,
    /// `proto <name>`: the mux protocol.
    pub proto: Option<String>,
}

/// The port of a `connect` rule: a number or a sample expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectPort {
    Num(u16),
    Expr(ExprSrc),
}

/// What a `tcp-check send*` rule sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendData {
    /// `send <string>` / `send-binary <hex>`.
    Bytes(Vec<u8>),
    /// `send-lf <fmt>`.
    Lf(FmtSrc),
    /// `send-binary-lf <fmt>`: the rendering is a hex string.
    BinaryLf(FmtSrc),
}

/// An HTTP check request (`http-check send`, `option httpchk <meth> <uri> <ver>`): what
/// is not set falls back to `OPTIONS / HTTP/1.0`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpSend {
    pub meth: Option<String>,
    pub uri: Option<String>,
    /// `uri-lf`: `uri` is a log-format string.
    pub uri_lf: bool,
    pub ver: Option<String>,
    /// Headers in order; each value is a log-format string.
    pub hdrs: Vec<(String, String)>,
    pub body: Option<String>,
    /// `body-lf`: `body` is a log-format string.
    pub body_lf: bool,
    /// The request of `option httpchk` (an explicit `send` merges into it).
    pub from_opt: bool,
}

impl HttpSend {
    /// Overwrites what `other` sets (HAProxy's `tcpcheck_overwrite_send_http_rule()`).
    pub fn overwrite_with(&mut self, other: HttpSend) {
        if other.meth.is_some() {
            self.meth = other.meth;
        }
        if other.uri.is_some() {
            self.uri = other.uri;
            self.uri_lf = other.uri_lf;
        }
        if other.ver.is_some() {
            self.ver = other.ver;
        }
        if !other.hdrs.is_empty() {
            self.hdrs = other.hdrs;
        }
        if other.body.is_some() {
            self.body = other.body;
            self.body_lf = other.body_lf;
        }
    }
}

/// One `expect` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckExpect {
    /// `!`: the rule passes when the pattern does not match.
    pub inverse: bool,
    pub matcher: ExpectMatch,
    /// `min-recv <n>`: bytes to wait for before matching; a mismatch is then final.
    pub min_recv: Option<usize>,
    pub ok_status: Option<CheckStatusName>,
    pub err_status: Option<CheckStatusName>,
    pub tout_status: Option<CheckStatusName>,
    /// `on-success <fmt>` / `on-error <fmt>`: the `info` of the result.
    pub on_success: Option<FmtSrc>,
    pub on_error: Option<FmtSrc>,
    /// `status-code <expr>`: the `code` of the result.
    pub status_code: Option<ExprSrc>,
}

impl CheckExpect {
    /// A rule with only its matcher.
    pub fn new(inverse: bool, matcher: ExpectMatch) -> CheckExpect {
        CheckExpect {
            inverse,
            matcher,
            min_recv: None,
            ok_status: None,
            err_status: None,
            tout_status: None,
            on_success: None,
            on_error: None,
            status_code: None,
        }
    }
}

/// What an `expect` rule looks for. `String`, `Rstring` and `StringLf` look at the
/// bytes received in a tcp-check and at the body in an http-check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExpectMatch {
    String(Vec<u8>),
    Rstring(String),
    StringLf(FmtSrc),
    Binary(Vec<u8>),
    /// On the received bytes written as upper-case hex.
    Rbinary(String),
    /// A log-format string rendering hex.
    BinaryLf(FmtSrc),
    /// `status <codes>`: inclusive ranges (`200`, `200-299`, comma lists).
    Status(Vec<(u16, u16)>),
    /// `rstatus <regex>`, on the status code text.
    Rstatus(String),
    /// `hdr` / `fhdr name ... [value ...]`.
    Header(HdrExpect),
}

/// `hdr|fhdr name [-m <meth>] <pattern> [value [-m <meth>] <pattern>]`, with
/// `name-lf` / `value-lf` for log-format patterns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HdrExpect {
    /// `fhdr`: a value is the whole line, not split at commas.
    pub full: bool,
    pub name: HdrPattern,
    pub value: Option<HdrPattern>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HdrPattern {
    pub how: HdrMeth,
    pub text: String,
    /// A log-format string (`name-lf`, `value-lf`).
    pub lf: bool,
}

/// The `-m` method of a header pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HdrMeth {
    Str,
    Beg,
    End,
    Sub,
    Reg,
}

/// The check statuses an `expect` rule may name (`ok-status`, `error-status`,
/// `tout-status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckStatusName {
    L4Ok,
    L4Tout,
    L4Con,
    L6Ok,
    L6Tout,
    L6Rsp,
    L7Ok,
    L7OkC,
    L7Tout,
    L7Rsp,
    L7Sts,
}
