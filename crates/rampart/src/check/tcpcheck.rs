//! The tcp-check rule engine: `option tcp-check` with its `tcp-check` rules, and the
//! protocol checks built on it (`option redis-check`, `option smtpchk`, and those of
//! [`super::proto`]: `mysql-check`, `pgsql-check`, `ldap-check`, `spop-check`). Rules run in
//! order on one connection (a `connect` rule opens a new one); the first failing rule
//! ends the check with HAProxy's status and message.
//! HAProxy counterpart: `tcpcheck_main()`, `tcpcheck_eval_connect()`,
//! `tcpcheck_eval_send()`, `tcpcheck_eval_expect()` and the `*-check` rule sets of
//! `proxy_parse_redis_check_opt()` / `proxy_parse_smtpchk_opt()` (src/tcpcheck.c).

use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use rampart_cfg::model::{HealthCheck, ProtoCheck, TcpCheckAction, TcpExpectMatch};
use regex::bytes::Regex;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

use super::http::Outcome;
use super::proto::{self, Custom, Eval};
use super::status::CheckStatus;

/// A compiled rule list.
#[derive(Debug)]
pub struct TcpChk {
    rules: Vec<Rule>,
    /// `option tcp-check` (generic messages naming the step) rather than a protocol
    /// check (its own messages).
    generic: bool,
    /// The rules do not start with `connect`: the check connects first (step 0).
    implicit_connect: bool,
}

/// Rules as configured, before steps are numbered: `None` is a comment rule (whose
/// text names the next rule).
type RuleList = Vec<(Option<Action>, Option<String>)>;

#[derive(Debug)]
struct Rule {
    /// HAProxy's step number (the implicit connect is step 0).
    step: usize,
    action: Action,
    comment: Option<String>,
}

#[derive(Debug)]
enum Action {
    Connect {
        port: Option<u16>,
        addr: Option<IpAddr>,
    },
    Send(Vec<u8>),
    Expect(Expect),
    /// An expect rule decoding a protocol's reply (`tcp-check expect custom`).
    Custom(Custom),
}

#[derive(Debug)]
struct Expect {
    inverse: bool,
    matcher: Matcher,
    min_recv: Option<usize>,
    err_status: CheckStatus,
    on_success: Msg,
    on_error: Msg,
    /// The status code is the number the reply starts with (SMTP).
    status_code: bool,
}

#[derive(Debug)]
enum Matcher {
    String(Vec<u8>),
    Binary(Vec<u8>),
    Rstring(Regex),
    Rbinary(Regex),
}

/// The `info` of a result.
#[derive(Debug, Clone, Copy)]
enum Msg {
    /// The generic text (`option tcp-check`), none for protocol checks.
    Default,
    Fixed(&'static str),
    /// The reply from byte `skip`, leading spaces trimmed when `ltrim`, up to the
    /// first CR or LF when `crlf` (`res.payload(skip,0),ltrim(' '),cut_crlf`), and
    /// always up to the first NUL (HAProxy's message is a C string).
    Payload {
        skip: usize,
        ltrim: bool,
        crlf: bool,
    },
}

/// Bounds of one run.
#[derive(Debug, Clone, Copy)]
pub struct Limits<'a> {
    /// The server's check address (`addr`/`port` applied).
    pub addr: SocketAddr,
    /// The longest a connect may take.
    pub connect: Duration,
    /// `timeout check`: the time left after each connect, when set.
    pub check: Option<Duration>,
    /// The end of the check without `timeout check` (start + `inter`).
    pub deadline: Instant,
    /// Most bytes read for an `expect`.
    pub bufsize: usize,
    /// The PROXY header a new connection starts with (`check-send-proxy`).
    pub proxy_header: Option<&'a [u8]>,
    /// `check-via-socks4`: the proxy the implicit connect and the protocol checks'
    /// `connect default` go through (an explicit `tcp-check connect` does not).
    pub socks4: Option<SocketAddr>,
}

impl TcpChk {
    /// Compiles the tcp-check based check of a backend (`None` for other kinds).
    pub fn compile(hc: &HealthCheck) -> Result<Option<TcpChk>, String> {
        let (generic, rules) = match &hc.proto {
            None => return Ok(None),
            Some(ProtoCheck::TcpCheck) => (true, configured(hc)?),
            Some(ProtoCheck::Redis) => (false, redis()),
            Some(ProtoCheck::Smtp { hello }) => (false, smtp(hello)),
            Some(ProtoCheck::Mysql { user }) => (false, mysql(user.as_ref())),
            Some(ProtoCheck::Pgsql { user }) => (false, pgsql(user)),
            Some(ProtoCheck::Ldap) => (false, ldap()),
            Some(ProtoCheck::Spop) => (false, spop()),
        };
        // steps count from 1 in the configured order, comments included (the implicit
        // connect is step 0); a comment names the rule after it
        let mut out: Vec<Rule> = Vec::with_capacity(rules.len());
        let mut pending = None;
        for (i, (action, comment)) in rules.into_iter().enumerate() {
            match action {
                None => pending = comment,
                Some(action) => out.push(Rule { step: i + 1, action, comment: comment.or_else(|| pending.take()) }),
            }
        }
        let implicit_connect = !matches!(out.first(), Some(Rule { action: Action::Connect { .. }, .. }));
        Ok(Some(TcpChk { rules: out, generic, implicit_connect }))
    }

    /// Runs the rules against the server.
    pub async fn run(&self, lim: Limits<'_>) -> Outcome {
        let mut run =
            Run { chk: self, lim, deadline: lim.deadline, stream: None, buf: Vec::new(), code: 0, verdict: None };
        if self.implicit_connect {
            if let Err(out) = run.connect(None, lim.addr, lim.socks4).await {
                return out;
            }
        }
        let mut last: Option<&Rule> = None;
        for rule in &self.rules {
            if let Err(out) = run.rule(rule).await {
                return out;
            }
            last = Some(rule);
        }
        run.success(last)
    }
}

/// The rules of `option tcp-check` (`None`: a comment).
fn configured(hc: &HealthCheck) -> Result<RuleList, String> {
    hc.tcp_rules
        .iter()
        .map(|r| {
            let action = match &r.action {
                TcpCheckAction::Comment => return Ok((None, r.comment.clone())),
                TcpCheckAction::Connect { port, addr } => {
                    let addr = match addr {
                        None => None,
                        Some(a) => Some(super::probe_ip(a).ok_or_else(|| {
                            format!("'tcp-check connect addr {a}' (only an IP address) is not supported yet")
                        })?),
                    };
                    Action::Connect { port: *port, addr }
                }
                TcpCheckAction::Send(data) => Action::Send(data.clone()),
                TcpCheckAction::Expect { inverse, matcher, min_recv } => Action::Expect(Expect {
                    inverse: *inverse,
                    matcher: compile_matcher(matcher)?,
                    min_recv: *min_recv,
                    err_status: CheckStatus::L7Rsp,
                    on_success: Msg::Default,
                    on_error: Msg::Default,
                    status_code: false,
                }),
            };
            Ok((Some(action), r.comment.clone()))
        })
        .collect()
}

fn compile_matcher(m: &TcpExpectMatch) -> Result<Matcher, String> {
    let re = |p: &str| Regex::new(p).map_err(|e| format!("'tcp-check expect' : regex '{p}' : {e}"));
    Ok(match m {
        TcpExpectMatch::String(s) => Matcher::String(s.clone()),
        TcpExpectMatch::Binary(b) => Matcher::Binary(b.clone()),
        TcpExpectMatch::Rstring(p) => Matcher::Rstring(re(p)?),
        TcpExpectMatch::Rbinary(p) => Matcher::Rbinary(re(p)?),
    })
}

fn proto_expect(
    pattern: &str,
    min_recv: Option<usize>,
    err_status: CheckStatus,
    on_success: Msg,
    on_error: Msg,
    status_code: bool,
) -> Action {
    let matcher = match Regex::new(pattern) {
        Ok(re) => Matcher::Rstring(re),
        Err(_) => Matcher::String(pattern.as_bytes().to_vec()),
    };
    Action::Expect(Expect { inverse: false, matcher, min_recv, err_status, on_success, on_error, status_code })
}

/// `option redis-check`: PING, expect `+PONG`.
fn redis() -> RuleList {
    let expect = Expect {
        inverse: false,
        matcher: Matcher::String(b"+PONG\r\n".to_vec()),
        min_recv: None,
        err_status: CheckStatus::L7Sts,
        on_success: Msg::Fixed("Redis server is ok"),
        on_error: Msg::Payload { skip: 0, ltrim: false, crlf: true },
        status_code: false,
    };
    vec![(Some(Action::Send(b"*1\r\n$4\r\nPING\r\n".to_vec())), None), (Some(Action::Expect(expect)), None)]
}

/// `option smtpchk`: the banner, the greeting, QUIT, each answered by a 2xx.
fn smtp(hello: &str) -> RuleList {
    let reply = Msg::Payload { skip: 4, ltrim: true, crlf: true };
    let rules = vec![
        (Action::Connect { port: None, addr: None }, None),
        (
            proto_expect(
                "^[0-9]{3}[ \r]",
                Some(4),
                CheckStatus::L7Rsp,
                Msg::Default,
                Msg::Payload { skip: 0, ltrim: false, crlf: true },
                false,
            ),
            None,
        ),
        (proto_expect("^2[0-9]{2}[ \r]", Some(4), CheckStatus::L7Sts, Msg::Default, reply, true), None),
        (Action::Send(format!("{hello}\r\n").into_bytes()), None),
        (proto_expect("^(2[0-9]{2}-[^\r]*\r\n)*2[0-9]{2}[ \r]", None, CheckStatus::L7Sts, reply, reply, true), None),
        (Action::Send(b"QUIT\r\n".to_vec()), None),
        (proto_expect("^2[0-9]{2}[- \r]", Some(4), CheckStatus::L7Sts, reply, reply, true), None),
    ];
    rules.into_iter().map(|(a, c)| (Some(a), c)).collect()
}

/// `option mysql-check [user <name> [post-41|pre-41]]`: the greeting, then with a user
/// an authentication packet and the reply to it.
fn mysql(user: Option<&rampart_cfg::model::MysqlUser>) -> RuleList {
    let mut rules = vec![Action::Connect { port: None, addr: None }];
    if let Some(u) = user {
        rules.push(Action::Send(proto::mysql_request(u)));
    }
    rules.push(Action::Custom(Custom::MysqlGreeting));
    if user.is_some() {
        rules.push(Action::Custom(Custom::MysqlOk));
    }
    rules.into_iter().map(|a| (Some(a), None)).collect()
}

/// `option pgsql-check user <name>`: a startup message; an error reply (`E`) fails
/// with its text, anything but an authentication request fails.
fn pgsql(user: &str) -> RuleList {
    let not_error = Expect {
        inverse: true,
        matcher: Matcher::String(b"E".to_vec()),
        min_recv: Some(5),
        err_status: CheckStatus::L7Rsp,
        on_success: Msg::Default,
        on_error: Msg::Payload { skip: 6, ltrim: false, crlf: false },
        status_code: false,
    };
    let auth = Expect {
        inverse: false,
        matcher: Matcher::Rbinary(constant_regex("^52000000[A-Z0-9]{2}000000(00|02|03|04|05|06|07|09|0A)")),
        min_recv: Some(9),
        err_status: CheckStatus::L7Sts,
        on_success: Msg::Fixed("PostgreSQL server is ok"),
        on_error: Msg::Fixed("PostgreSQL unknown error"),
        status_code: false,
    };
    let rules = vec![
        Action::Connect { port: None, addr: None },
        Action::Send(proto::pgsql_request(user)),
        Action::Expect(not_error),
        Action::Expect(auth),
    ];
    rules.into_iter().map(|a| (Some(a), None)).collect()
}

/// A pattern written in this file (a test compiles each one).
fn constant_regex(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| unreachable!("constant pattern {pattern}: {e}"))
}

/// `option ldap-check`: an anonymous bind, expect a successful bind response.
fn ldap() -> RuleList {
    let ber = Expect {
        inverse: false,
        matcher: Matcher::Rbinary(constant_regex("^30")),
        min_recv: Some(14),
        err_status: CheckStatus::L7Rsp,
        on_success: Msg::Default,
        on_error: Msg::Fixed("Not LDAPv3 protocol"),
        status_code: false,
    };
    let rules = vec![Action::Send(proto::LDAP_BIND.to_vec()), Action::Expect(ber), Action::Custom(Custom::LdapBind)];
    rules.into_iter().map(|a| (Some(a), None)).collect()
}

/// `option spop-check`: a HAPROXY-HELLO frame, expect an AGENT-HELLO.
fn spop() -> RuleList {
    vec![(Some(Action::Send(proto::SPOP_HELLO.to_vec())), None), (Some(Action::Custom(Custom::SpopHello)), None)]
}

/// The state of one run.
struct Run<'a> {
    chk: &'a TcpChk,
    lim: Limits<'a>,
    deadline: Instant,
    stream: Option<TcpStream>,
    buf: Vec<u8>,
    /// Status code found by an expect (SMTP).
    code: u16,
    /// The result a protocol decoder passed the check with.
    verdict: Option<Outcome>,
}

impl Run<'_> {
    async fn rule(&mut self, rule: &Rule) -> Result<(), Outcome> {
        match &rule.action {
            Action::Connect { port, addr } => {
                let addr = SocketAddr::new(addr.unwrap_or(self.lim.addr.ip()), port.unwrap_or(self.lim.addr.port()));
                let via = if self.chk.generic { None } else { self.lim.socks4 };
                self.connect(Some(rule), addr, via).await
            }
            Action::Send(data) => self.send(rule, data).await,
            Action::Expect(e) => self.expect(rule, e).await,
            Action::Custom(c) => self.custom(rule, *c).await,
        }
    }

    /// Opens a new connection (dropping the previous one and its buffer).
    async fn connect(&mut self, rule: Option<&Rule>, addr: SocketAddr, via: Option<SocketAddr>) -> Result<(), Outcome> {
        self.stream = None;
        self.buf.clear();
        let limit = self.lim.connect.min(self.deadline.saturating_duration_since(Instant::now()));
        match tokio::time::timeout(limit, super::conn::connect(addr, via)).await {
            Err(_) => Err(Outcome::new(CheckStatus::L4Tout, self.where_(rule, ""))),
            Ok(Err(e)) => Err(Outcome::new(CheckStatus::L4Con, self.where_(rule, &super::conn::strerror(&e)))),
            Ok(Ok(mut s)) => {
                if let Some(h) = self.lim.proxy_header {
                    if let Err(e) = s.write_all(h).await {
                        return Err(Outcome::new(CheckStatus::SockErr, self.where_(rule, &super::conn::strerror(&e))));
                    }
                }
                self.stream = Some(s);
                if let Some(t) = self.lim.check {
                    self.deadline = Instant::now() + t;
                }
                Ok(())
            }
        }
    }

    async fn send(&mut self, rule: &Rule, data: &[u8]) -> Result<(), Outcome> {
        self.buf.clear();
        let deadline = self.deadline;
        let Some(stream) = self.stream.as_mut() else { return Err(Outcome::new(CheckStatus::SockErr, "")) };
        match tokio::time::timeout_at(deadline, stream.write_all(data)).await {
            Err(_) => Err(Outcome::new(CheckStatus::L7Tout, self.where_(Some(rule), ""))),
            Ok(Err(e)) => Err(Outcome::new(CheckStatus::SockErr, self.where_(Some(rule), &super::conn::strerror(&e)))),
            Ok(Ok(())) => Ok(()),
        }
    }

    async fn expect(&mut self, rule: &Rule, e: &Expect) -> Result<(), Outcome> {
        let mut last = false;
        loop {
            // a string or binary pattern waits for at least its length, then min-recv
            let enough = self.buf.len() >= e.matcher.min_len() && e.min_recv.is_none_or(|m| self.buf.len() >= m);
            if !self.buf.is_empty() && (enough || last) {
                let matched = e.matcher.matches(&self.buf);
                // without min-recv, a mismatch waits for more data
                if matched || last || e.min_recv.is_some() {
                    if e.status_code {
                        self.code = leading_code(&self.buf);
                    }
                    if matched != e.inverse {
                        return Ok(());
                    }
                    return Err(self.expect_failed(rule, e, matched));
                }
            }
            if last {
                let mut d = format!("TCPCHK got an empty response at step {}", rule.step);
                if let Some(c) = &rule.comment {
                    let _ = write!(d, " comment: '{c}'");
                }
                return Err(Outcome::new(e.err_status, d));
            }
            last = self.read(rule).await?;
        }
    }

    /// Runs a protocol decoder on the bytes received, reading more while it asks.
    async fn custom(&mut self, rule: &Rule, c: Custom) -> Result<(), Outcome> {
        let final_rule = self.chk.rules.last().is_some_and(|r| std::ptr::eq(r, rule));
        let mut last = false;
        loop {
            if !self.buf.is_empty() {
                match c.eval(&self.buf, last, final_rule) {
                    Eval::Wait if !last => {}
                    Eval::Wait => return Err(Outcome::new(CheckStatus::L7Rsp, "")),
                    Eval::Continue => return Ok(()),
                    Eval::Pass(out) => {
                        self.verdict = Some(out);
                        return Ok(());
                    }
                    Eval::Fail(out) => return Err(out),
                }
            } else if last {
                return Err(Outcome::new(
                    CheckStatus::L7Rsp,
                    format!("TCPCHK got an empty response at step {}", rule.step),
                ));
            }
            last = self.read(rule).await?;
        }
    }

    /// Reads more; `true` when nothing more will come (closed, or the buffer is full).
    async fn read(&mut self, rule: &Rule) -> Result<bool, Outcome> {
        let deadline = self.deadline;
        let room = self.lim.bufsize.saturating_sub(self.buf.len());
        if room == 0 {
            return Ok(true);
        }
        let Some(stream) = self.stream.as_mut() else { return Ok(true) };
        let mut chunk = vec![0u8; room.min(4096)];
        match tokio::time::timeout_at(deadline, stream.read(&mut chunk)).await {
            Err(_) => Err(Outcome::new(CheckStatus::L7Tout, self.where_(Some(rule), ""))),
            Ok(Err(_)) if !self.buf.is_empty() => Ok(true),
            Ok(Err(err)) => {
                Err(Outcome::new(CheckStatus::SockErr, self.where_(Some(rule), &super::conn::strerror(&err))))
            }
            Ok(Ok(0)) => Ok(true),
            Ok(Ok(n)) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Ok(self.buf.len() >= self.lim.bufsize)
            }
        }
    }

    fn expect_failed(&self, rule: &Rule, e: &Expect, matched: bool) -> Outcome {
        let mut desc = match e.on_error {
            Msg::Payload { skip, ltrim, crlf } => payload(&self.buf, skip, ltrim, crlf),
            Msg::Fixed(s) => s.to_owned(),
            Msg::Default if self.chk.generic => generic_mismatch(rule, e, matched),
            Msg::Default => String::new(),
        };
        if let Some(c) = &rule.comment {
            let _ = write!(desc, " comment: {c}");
        }
        Outcome { status: e.err_status, code: self.code, desc }
    }

    fn success(&self, last: Option<&Rule>) -> Outcome {
        if let Some(out) = &self.verdict {
            return out.clone();
        }
        let msg = if self.chk.generic { "(tcp-check)" } else { "" };
        match last.map(|r| &r.action) {
            None => Outcome::new(CheckStatus::L4Ok, ""),
            Some(Action::Connect { .. }) => Outcome::new(CheckStatus::L4Ok, msg),
            Some(Action::Send(_) | Action::Custom(_)) => Outcome::new(CheckStatus::L7Ok, "(tcp-check)"),
            Some(Action::Expect(e)) => {
                let desc = match e.on_success {
                    Msg::Payload { skip, ltrim, crlf } => payload(&self.buf, skip, ltrim, crlf),
                    Msg::Fixed(s) => s.to_owned(),
                    Msg::Default => msg.to_owned(),
                };
                Outcome { status: CheckStatus::L7Ok, code: self.code, desc }
            }
        }
    }

    /// `<error> at step N of tcp-check (<rule>)[ comment: '<c>']` for `option
    /// tcp-check`; the error alone for protocol checks.
    fn where_(&self, rule: Option<&Rule>, err: &str) -> String {
        let mut out = err.to_owned();
        if !self.chk.generic {
            return out;
        }
        let Some(rule) = rule else {
            out.push_str(" at initial connection step of tcp-check");
            return out;
        };
        let _ = write!(out, " at step {} of tcp-check", rule.step);
        match &rule.action {
            Action::Connect { port: Some(p), .. } => {
                let _ = write!(out, " (connect port {p})");
            }
            Action::Connect { .. } => out.push_str(" (connect)"),
            Action::Send(_) => out.push_str(" (send)"),
            Action::Expect(e) => out.push_str(&e.matcher.describe()),
            Action::Custom(_) => out.push_str(" (expect custom function)"),
        }
        if let Some(c) = &rule.comment {
            let _ = write!(out, " comment: '{c}'");
        }
        out
    }
}

impl Matcher {
    /// Bytes needed before a match is tried.
    fn min_len(&self) -> usize {
        match self {
            Matcher::String(s) | Matcher::Binary(s) => s.len(),
            Matcher::Rstring(_) | Matcher::Rbinary(_) => 1,
        }
    }

    fn matches(&self, buf: &[u8]) -> bool {
        match self {
            Matcher::String(s) | Matcher::Binary(s) => memchr::memmem::find(buf, s).is_some(),
            Matcher::Rstring(re) => re.is_match(buf),
            Matcher::Rbinary(re) => re.is_match(hex(buf).as_bytes()),
        }
    }

    /// How `chk_report_conn_err()` names an expect rule.
    fn describe(&self) -> String {
        match self {
            Matcher::String(s) => format!(" (expect string '{}')", String::from_utf8_lossy(s)),
            Matcher::Binary(b) => format!(" (expect binary '{}')", hex(b)),
            Matcher::Rstring(_) => " (expect regex)".into(),
            Matcher::Rbinary(_) => " (expect binary regex)".into(),
        }
    }
}

/// `TCPCHK did not match content ...` / `TCPCHK matched unwanted content ...`.
fn generic_mismatch(rule: &Rule, e: &Expect, matched: bool) -> String {
    let head = if matched { "TCPCHK matched unwanted content" } else { "TCPCHK did not match content" };
    match &e.matcher {
        Matcher::String(s) => format!("{head} '{}' at step {}", String::from_utf8_lossy(s), rule.step),
        Matcher::Binary(_) => format!("{head} (binary) at step {}", rule.step),
        Matcher::Rstring(_) => format!("{head} (regex) at step {}", rule.step),
        Matcher::Rbinary(_) => format!("{head} (binary regex) at step {}", rule.step),
    }
}

/// `res.payload(skip,0)[,ltrim(' ')][,cut_crlf]`, up to the first NUL.
fn payload(buf: &[u8], skip: usize, ltrim: bool, crlf: bool) -> String {
    let mut p = buf.get(skip..).unwrap_or_default();
    if ltrim {
        while let [b' ', rest @ ..] = p {
            p = rest;
        }
    }
    let end = p.iter().position(|&b| b == 0 || (crlf && (b == b'\r' || b == b'\n'))).unwrap_or(p.len());
    String::from_utf8_lossy(&p[..end]).into_owned()
}

/// The number the reply starts with (`res.payload(0,3)` as an integer), 0 if none.
fn leading_code(buf: &[u8]) -> u16 {
    let digits = buf.iter().take(3).take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&buf[..digits]).ok().and_then(|d| d.parse().ok()).unwrap_or(0)
}

/// Upper-case hex, as HAProxy's `dump_binary()` for `rbinary`.
fn hex(buf: &[u8]) -> String {
    let mut out = String::with_capacity(buf.len() * 2);
    for b in buf {
        let _ = write!(out, "{b:02X}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_and_code_helpers() {
        assert_eq!(payload(b"220 mx ready\r\n", 4, true, true), "mx ready");
        assert_eq!(payload(b"-ERR nope\r\nmore", 0, false, true), "-ERR nope");
        assert_eq!(payload(b"ab", 4, true, true), "");
        assert_eq!(payload(b"E\0\0\0\x0bSFATAL\0C", 6, false, false), "FATAL");
        assert_eq!(leading_code(b"250-hello"), 250);
        assert_eq!(leading_code(b"xx"), 0);
        assert_eq!(hex(b"\x01\xab"), "01AB");
    }

    #[test]
    fn matchers() {
        assert!(Matcher::String(b"PONG".to_vec()).matches(b"+PONG\r\n"));
        assert!(!Matcher::Binary(b"\x00\x01".to_vec()).matches(b"\x00\x02"));
        assert!(Matcher::Rstring(Regex::new("^2[0-9]{2} ").unwrap()).matches(b"220 ok"));
        assert!(Matcher::Rbinary(Regex::new("^01AB").unwrap()).matches(b"\x01\xab\xcd"));
        assert_eq!(Matcher::String(b"+OK".to_vec()).describe(), " (expect string '+OK')");
    }

    #[test]
    fn steps_count_the_implicit_connect() {
        let hc = HealthCheck {
            proto: Some(ProtoCheck::TcpCheck),
            tcp_rules: vec![
                rampart_cfg::model::TcpCheckRule { action: TcpCheckAction::Send(b"x".to_vec()), comment: None },
                rampart_cfg::model::TcpCheckRule {
                    action: TcpCheckAction::Expect {
                        inverse: false,
                        matcher: TcpExpectMatch::String(b"y".to_vec()),
                        min_recv: None,
                    },
                    comment: Some("c".into()),
                },
            ],
            ..Default::default()
        };
        let chk = TcpChk::compile(&hc).unwrap().unwrap();
        assert!(chk.implicit_connect && chk.generic);
        assert_eq!(chk.rules.iter().map(|r| r.step).collect::<Vec<_>>(), [1, 2]);
        let Action::Expect(e) = &chk.rules[1].action else { panic!("expect") };
        assert_eq!(generic_mismatch(&chk.rules[1], e, false), "TCPCHK did not match content 'y' at step 2");
        let redis =
            TcpChk::compile(&HealthCheck { proto: Some(ProtoCheck::Redis), ..Default::default() }).unwrap().unwrap();
        assert!(redis.implicit_connect && !redis.generic);
        let smtp = TcpChk::compile(&HealthCheck {
            proto: Some(ProtoCheck::Smtp { hello: "HELO x".into() }),
            ..Default::default()
        })
        .unwrap()
        .unwrap();
        assert!(!smtp.implicit_connect);
        assert_eq!(smtp.rules.len(), 7);
    }

    #[test]
    fn protocol_rule_sets() {
        let chk = |p| TcpChk::compile(&HealthCheck { proto: Some(p), ..Default::default() }).unwrap().unwrap();
        let kinds = |c: &TcpChk| {
            c.rules
                .iter()
                .map(|r| match r.action {
                    Action::Connect { .. } => 'c',
                    Action::Send(_) => 's',
                    Action::Expect(_) => 'e',
                    Action::Custom(_) => 'x',
                })
                .collect::<String>()
        };
        let user = rampart_cfg::model::MysqlUser { name: "u".into(), post41: true };
        assert_eq!(kinds(&chk(ProtoCheck::Mysql { user: None })), "cx");
        assert_eq!(kinds(&chk(ProtoCheck::Mysql { user: Some(user) })), "csxx");
        let pg = chk(ProtoCheck::Pgsql { user: "pg".into() });
        assert_eq!(kinds(&pg), "csee");
        let Action::Expect(auth) = &pg.rules[3].action else { panic!("expect") };
        assert!(auth.matcher.matches(b"R\0\0\0\x08\0\0\0\0"));
        assert!(!auth.matcher.matches(b"Not a PostgreSQL response"));
        // SASL (10) with a longer message, as haproxy 2.6.12 accepts
        assert!(auth.matcher.matches(b"R\0\0\0\x17\0\0\0\x0aSCRAM-SHA-256\0\0"));
        let ldap = chk(ProtoCheck::Ldap);
        assert_eq!(kinds(&ldap), "sex");
        assert!(ldap.implicit_connect && !ldap.generic);
        assert_eq!(kinds(&chk(ProtoCheck::Spop)), "sx");
    }
}
