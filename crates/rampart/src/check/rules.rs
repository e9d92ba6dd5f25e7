//! A check's rules, compiled: what each step does (connect, send, expect, set a
//! variable), with its patterns, log-format strings and sample expressions ready to
//! run. Built once per backend from its `tcp-check` / `http-check` rules as HAProxy
//! completes them (an implicit `connect` first, the request of `option httpchk` after
//! a first `connect`, an implicit `expect status 200-399` after a last `send`, comments
//! given to the rules they name), or from a protocol check's rule set (`proto`).
//! HAProxy counterparts: `check_proxy_tcpcheck()`, the `parse_tcpcheck_*()` builders
//! (src/tcpcheck.c); `struct tcpcheck_rule` (include/haproxy/tcpcheck-t.h).

use std::net::IpAddr;

use rampart_cfg::model::{
    CheckAction, CheckConnect, CheckExpect, CheckRule, CheckStatusName, ConnectPort, ExpectMatch, HdrExpect, HdrMeth,
    HttpSend, SendData, VarAction,
};
use rampart_cfg::Diag;
use regex::bytes::Regex;

use super::proto::Custom;
use super::status::CheckStatus;
use crate::log::format::{LfMode, LogFormat};
use crate::sample::expr::{self, CompileCx, Expr, Place};
use crate::sample::vars::{SetCond, VarRef};

/// One step of a check.
#[derive(Debug)]
pub(super) struct Rule {
    /// HAProxy's step number: the rule's index plus one, 0 for the implicit connect.
    pub step: usize,
    pub action: Action,
    pub comment: Option<String>,
    /// For an expect: the rule evaluation resumes at when more bytes arrive (the
    /// first inverted expect of the run of expects it ends, else itself).
    pub head: usize,
}

#[derive(Debug)]
pub(super) enum Action {
    Connect(Connect),
    Send(Send),
    Expect(Expect),
    /// An expect rule decoding a protocol's reply (HAProxy's `expect custom`).
    Custom(Custom),
    SetVar {
        var: VarRef,
        value: VarValue,
        cond: SetCond,
    },
    UnsetVar(VarRef),
}

#[derive(Debug)]
pub(super) enum VarValue {
    Expr(Expr),
    Fmt(LogFormat),
}

/// A `connect` rule.
#[derive(Debug, Default)]
pub(super) struct Connect {
    /// The connect HAProxy adds when the rules do not start with one.
    pub implicit: bool,
    /// `default` (and the implicit connect): the server's check settings apply.
    pub default: bool,
    pub port: Option<u16>,
    pub port_expr: Option<Expr>,
    /// `addr`, with the port it may carry.
    pub addr: Option<(IpAddr, Option<u16>)>,
    pub send_proxy: bool,
    pub via_socks4: bool,
    pub linger: bool,
    pub ssl: bool,
    pub sni: Option<String>,
    pub alpn: Option<Vec<String>>,
    /// `proto <mux>`: whether the connection speaks HTTP/2 (`h2`) or not (`h1`,
    /// `none`); `None`: as the server's check settings or ALPN say.
    pub h2: Option<bool>,
}

/// What a `send` rule sends.
#[derive(Debug)]
pub(super) enum Send {
    Bytes(Vec<u8>),
    Lf(LogFormat),
    /// A format rendering hex.
    BinaryLf(LogFormat),
    Http(super::http::HttpReq),
    /// The ClientHello of `option ssl-hello-chk` (it carries the time).
    SslHello,
}

/// An `expect` rule.
#[derive(Debug)]
pub(super) struct Expect {
    pub inverse: bool,
    pub matcher: Matcher,
    pub min_recv: Option<usize>,
    pub ok_status: Option<CheckStatus>,
    pub err_status: Option<CheckStatus>,
    pub tout_status: Option<CheckStatus>,
    pub on_success: Msg,
    pub on_error: Msg,
    pub status_code: StatusCode,
}

impl Expect {
    /// A protocol check's rule: no option but its statuses and messages.
    pub fn proto(
        matcher: Matcher,
        min_recv: Option<usize>,
        err: CheckStatus,
        on_success: Msg,
        on_error: Msg,
    ) -> Expect {
        Expect {
            inverse: false,
            matcher,
            min_recv,
            ok_status: None,
            err_status: Some(err),
            tout_status: None,
            on_success,
            on_error,
            status_code: StatusCode::None,
        }
    }
}

#[derive(Debug)]
pub(super) enum Matcher {
    String(Vec<u8>),
    Binary(Vec<u8>),
    Rstring(Regex),
    /// On the bytes written as upper-case hex.
    Rbinary(Regex),
    StringLf(LogFormat),
    BinaryLf(LogFormat),
    /// HTTP: the status code in one of the ranges.
    Status(Vec<(u16, u16)>),
    /// HTTP: a regex on the status code.
    Rstatus(Regex),
    /// HTTP: the body holds the bytes.
    Body(Vec<u8>),
    Rbody(Regex),
    BodyLf(LogFormat),
    Header(HdrRule),
}

/// `hdr` / `fhdr`, compiled.
#[derive(Debug)]
pub(super) struct HdrRule {
    pub full: bool,
    pub name: HdrPat,
    pub value: Option<HdrPat>,
}

/// One pattern of a header rule.
#[derive(Debug)]
pub(super) enum HdrPat {
    Text(HdrMeth, Vec<u8>),
    Lf(HdrMeth, LogFormat),
    Reg(Regex),
}

/// The `info` of a result.
#[derive(Debug)]
pub(super) enum Msg {
    /// The generic text (`option tcp-check`), none for other checks.
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
    /// `on-success` / `on-error`.
    Lf(LogFormat),
}

/// Where the `code` of a result comes from.
#[derive(Debug)]
pub(super) enum StatusCode {
    /// The HTTP status of an HTTP check, else none.
    None,
    /// The number the reply starts with (SMTP).
    Leading,
    /// `status-code <expr>`.
    Expr(Expr),
}

// === compiling configured rules ===

/// Which rule list is compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum List {
    Tcp,
    Http,
}

impl List {
    fn word(self) -> &'static str {
        match self {
            List::Tcp => "tcp-check",
            List::Http => "http-check",
        }
    }
}

/// Compiles the configured rules of `list` as HAProxy completes them; `Err` holds an
/// alert per rule that does not compile.
pub(super) fn compile(rules: &[CheckRule], list: List, cx: &mut CompileCx<'_>) -> Result<Vec<Rule>, Vec<Diag>> {
    let mut steps: Vec<(usize, Action, Option<String>)> = Vec::new();
    let mut alerts = Vec::new();
    let mut pending: Option<String> = None;
    let mut prev: Option<Kind> = None;
    for r in complete(rules, list) {
        // a comment names the rules after it, while they are of one kind
        let kind = Kind::of(&r.action);
        if prev.is_some_and(|p| p != Kind::Comment && p != kind) {
            pending = None;
        }
        prev = Some(kind);
        if kind == Kind::Comment {
            pending = r.comment.clone();
            continue;
        }
        let comment = r.comment.clone().or_else(|| pending.clone());
        if matches!(kind, Kind::Connect | Kind::Var) {
            pending = None;
        }
        match action(&r, list, cx) {
            Ok(a) => steps.push((r.index, a, comment)),
            Err(msg) => alerts.push(Diag::alert(Some(r.span.clone()), msg)),
        }
    }
    if !alerts.is_empty() {
        return Err(alerts);
    }
    let mut out = Vec::with_capacity(steps.len() + 1);
    if !matches!(
        steps.iter().find(|s| !matches!(s.1, Action::SetVar { .. } | Action::UnsetVar(_))),
        Some((_, Action::Connect(_), _))
    ) {
        let c = Connect { implicit: true, default: true, ..Connect::default() };
        out.push(Rule { step: 0, action: Action::Connect(c), comment: None, head: 0 });
    }
    out.extend(steps.into_iter().map(|(index, action, comment)| Rule { step: index + 1, action, comment, head: 0 }));
    set_heads(&mut out);
    Ok(out)
}

/// The rule kinds whose runs a comment follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Comment,
    Connect,
    Send,
    Expect,
    Var,
}

impl Kind {
    fn of(a: &CheckAction) -> Kind {
        match a {
            CheckAction::Comment => Kind::Comment,
            CheckAction::Connect(_) => Kind::Connect,
            CheckAction::Send(_) | CheckAction::SendHttp(_) => Kind::Send,
            CheckAction::Expect(_) => Kind::Expect,
            CheckAction::Var(_) => Kind::Var,
        }
    }
}

/// The configured rules with HAProxy's additions for HTTP checks: the request of
/// `option httpchk` moved after a first `connect`, and `expect status 200-399` after
/// a last `send`.
fn complete(rules: &[CheckRule], list: List) -> Vec<CheckRule> {
    let mut out = rules.to_vec();
    if list != List::Http {
        return out;
    }
    let is_step = |r: &CheckRule| !matches!(r.action, CheckAction::Comment | CheckAction::Var(_));
    let steps: Vec<usize> = (0..out.len()).filter(|&i| is_step(&out[i])).collect();
    if let [first, second, ..] = steps[..] {
        let opt = matches!(&out[first].action, CheckAction::SendHttp(s) if s.from_opt);
        if opt && matches!(out[second].action, CheckAction::Connect(_)) {
            let mut send = out.remove(first);
            send.index = out[second - 1].index + 1;
            out.insert(second, send);
        }
    }
    if let Some(last) = out.iter().rev().find(|r| is_step(r)) {
        if matches!(last.action, CheckAction::SendHttp(_)) {
            let e = CheckExpect::new(false, ExpectMatch::Status(vec![(200, 399)]));
            let (index, span) = (last.index + 1, last.span.clone());
            out.push(CheckRule { action: CheckAction::Expect(e), comment: None, index, span });
        }
    }
    out
}

/// Where each expect resumes: the first inverted expect of the run of expects (and
/// variable actions) before it, else itself.
fn set_heads(rules: &mut [Rule]) {
    for i in 0..rules.len() {
        rules[i].head = i;
        if !matches!(rules[i].action, Action::Expect(_) | Action::Custom(_)) {
            continue;
        }
        for j in (0..i).rev() {
            match &rules[j].action {
                Action::Expect(e) if e.inverse => rules[i].head = j,
                Action::Expect(_) | Action::Custom(_) | Action::SetVar { .. } | Action::UnsetVar(_) => {}
                _ => break,
            }
        }
    }
}

fn action(r: &CheckRule, list: List, cx: &mut CompileCx<'_>) -> Result<Action, String> {
    Ok(match &r.action {
        CheckAction::Comment => unreachable!("comments are dropped before"),
        CheckAction::Connect(c) => Action::Connect(connect(c, list, cx)?),
        CheckAction::Send(SendData::Bytes(b)) => Action::Send(Send::Bytes(b.clone())),
        CheckAction::Send(SendData::Lf(f)) => Action::Send(Send::Lf(lf_fmt(&f.text, list, "send-lf", cx)?)),
        CheckAction::Send(SendData::BinaryLf(f)) => {
            Action::Send(Send::BinaryLf(lf_fmt(&f.text, list, "send-binary-lf", cx)?))
        }
        CheckAction::SendHttp(s) => Action::Send(Send::Http(http_req(s, cx)?)),
        CheckAction::Expect(e) => Action::Expect(expect(e, list, cx)?),
        CheckAction::Var(v) => var(v, list, cx)?,
    })
}

/// A log-format string of a rule; the error reads as HAProxy's.
fn lf_fmt(text: &str, list: List, what: &str, cx: &mut CompileCx<'_>) -> Result<LogFormat, String> {
    LogFormat::compile(text, cx, LfMode::Raw, &[Place::BeChkRul])
        .map_err(|e| format!("'{} {what}' : '{text}' invalid log-format string ({}).", list.word(), e.msg))
}

/// A sample expression of a rule, valid in checks.
fn sample(text: &str, list: List, what: &str, cx: &mut CompileCx<'_>) -> Result<Expr, String> {
    let e = expr::compile(text, cx).map_err(|e| format!("'{} {what}' : {e}.", list.word()))?;
    e.check_place(Place::BeChkRul).map_err(|needs| {
        format!(
            "'{} {what}' : fetch method '{text}' extracts information from '{needs}', none of which is available here.",
            list.word()
        )
    })?;
    Ok(e)
}

fn regex(text: &str, icase: bool, list: List) -> Result<Regex, String> {
    crate::pattern::reg::compile(text, icase).map_err(|e| format!("'{} expect' : {e}", list.word()))
}

fn connect(c: &CheckConnect, list: List, cx: &mut CompileCx<'_>) -> Result<Connect, String> {
    let (port, port_expr) = match &c.port {
        None => (None, None),
        Some(ConnectPort::Num(p)) => (Some(*p), None),
        Some(ConnectPort::Expr(e)) => (None, Some(sample(&e.text, list, "connect", cx)?)),
    };
    let addr = match &c.addr {
        None => None,
        Some(text) => Some(connect_addr(text).ok_or_else(|| {
            format!("'{} connect addr {text}' (only an IP address) is not supported yet", list.word())
        })?),
    };
    Ok(Connect {
        implicit: false,
        default: c.default,
        port,
        port_expr,
        addr,
        send_proxy: c.send_proxy,
        via_socks4: c.via_socks4,
        linger: c.linger,
        ssl: c.ssl,
        sni: c.sni.clone(),
        alpn: c.alpn.clone(),
        h2: c.proto.as_deref().map(|p| p == "h2"),
    })
}

/// `addr <ip>` or `<ip>:<port>` (`ipv4@`/`ipv6@` prefixes allowed).
fn connect_addr(text: &str) -> Option<(IpAddr, Option<u16>)> {
    let t = text.strip_prefix("ipv4@").or_else(|| text.strip_prefix("ipv6@")).unwrap_or(text);
    if let Ok(ip) = t.parse() {
        return Some((ip, None));
    }
    if let Ok(sa) = t.parse::<std::net::SocketAddr>() {
        return Some((sa.ip(), Some(sa.port()).filter(|&p| p != 0)));
    }
    let (host, port) = t.rsplit_once(':')?;
    let ip = host.trim_start_matches('[').trim_end_matches(']').parse().ok()?;
    Some((ip, port.parse().ok().filter(|&p| p != 0)))
}

fn http_req(s: &HttpSend, cx: &mut CompileCx<'_>) -> Result<super::http::HttpReq, String> {
    let mut lf = |text: &str, what: &str| lf_fmt(text, List::Http, what, cx);
    super::http::HttpReq::compile(s, &mut lf)
}

fn var(v: &VarAction, list: List, cx: &mut CompileCx<'_>) -> Result<Action, String> {
    let name = |n: &rampart_cfg::model::VarName| {
        let scope = scope_name(n.scope);
        crate::sample::vars::parse_name(format!("{scope}.{}", n.name).as_bytes())
            .map_err(|e| format!("'{} set-var' : {e}", list.word()))
    };
    Ok(match v {
        VarAction::Unset(n) => Action::UnsetVar(name(n)?),
        VarAction::Set { var, conds, expr } => {
            let value = VarValue::Expr(sample(&expr.text, list, "set-var", cx)?);
            Action::SetVar { var: name(var)?, value, cond: set_cond(conds) }
        }
        VarAction::SetFmt { var, conds, fmt } => {
            let value = VarValue::Fmt(lf_fmt(&fmt.text, list, "set-var-fmt", cx)?);
            Action::SetVar { var: name(var)?, value, cond: set_cond(conds) }
        }
    })
}

fn scope_name(s: rampart_cfg::model::VarScope) -> &'static str {
    use rampart_cfg::model::VarScope as S;
    match s {
        S::Proc => "proc",
        S::Sess => "sess",
        S::Txn => "txn",
        S::Req => "req",
        S::Res => "res",
        S::Check => "check",
    }
}

fn set_cond(conds: &[rampart_cfg::model::VarCond]) -> SetCond {
    use rampart_cfg::model::VarCond as C;
    SetCond(conds.iter().fold(0, |acc, c| {
        acc | match c {
            C::IfExists => SetCond::IFEXISTS,
            C::IfNotExists => SetCond::IFNOTEXISTS,
            C::IfEmpty => SetCond::IFEMPTY,
            C::IfNotEmpty => SetCond::IFNOTEMPTY,
            C::IfSet => SetCond::IFSET,
            C::IfNotSet => SetCond::IFNOTSET,
            C::IfGt => SetCond::IFGT,
            C::IfLt => SetCond::IFLT,
        }
    }))
}

fn expect(e: &CheckExpect, list: List, cx: &mut CompileCx<'_>) -> Result<Expect, String> {
    let msg = |f: &Option<rampart_cfg::model::FmtSrc>, what: &str, cx: &mut CompileCx<'_>| match f {
        Some(f) => lf_fmt(&f.text, list, what, cx).map(Msg::Lf),
        None => Ok(Msg::Default),
    };
    Ok(Expect {
        inverse: e.inverse,
        matcher: matcher(&e.matcher, list, cx)?,
        min_recv: e.min_recv,
        ok_status: e.ok_status.map(status),
        err_status: e.err_status.map(status),
        tout_status: e.tout_status.map(status),
        on_success: msg(&e.on_success, "expect", cx)?,
        on_error: msg(&e.on_error, "expect", cx)?,
        status_code: match &e.status_code {
            Some(x) => StatusCode::Expr(sample(&x.text, list, "expect", cx)?),
            None => StatusCode::None,
        },
    })
}

fn matcher(m: &ExpectMatch, list: List, cx: &mut CompileCx<'_>) -> Result<Matcher, String> {
    let http = list == List::Http;
    Ok(match m {
        ExpectMatch::String(s) if http => Matcher::Body(s.clone()),
        ExpectMatch::String(s) => Matcher::String(s.clone()),
        ExpectMatch::Rstring(p) if http => Matcher::Rbody(regex(p, false, list)?),
        ExpectMatch::Rstring(p) => Matcher::Rstring(regex(p, false, list)?),
        ExpectMatch::StringLf(f) if http => Matcher::BodyLf(lf_fmt(&f.text, list, "expect", cx)?),
        ExpectMatch::StringLf(f) => Matcher::StringLf(lf_fmt(&f.text, list, "expect", cx)?),
        ExpectMatch::Binary(b) => Matcher::Binary(b.clone()),
        ExpectMatch::Rbinary(p) => Matcher::Rbinary(regex(p, false, list)?),
        ExpectMatch::BinaryLf(f) => Matcher::BinaryLf(lf_fmt(&f.text, list, "expect", cx)?),
        ExpectMatch::Status(r) => Matcher::Status(r.clone()),
        ExpectMatch::Rstatus(p) => Matcher::Rstatus(regex(p, false, list)?),
        ExpectMatch::Header(h) => Matcher::Header(header(h, cx)?),
    })
}

fn header(h: &HdrExpect, cx: &mut CompileCx<'_>) -> Result<HdrRule, String> {
    // header names match without case, values with it (HAProxy's `regex_comp()` flags)
    let mut pat = |p: &rampart_cfg::model::HdrPattern, icase: bool| -> Result<HdrPat, String> {
        Ok(match (p.how, p.lf) {
            (HdrMeth::Reg, _) => HdrPat::Reg(regex(&p.text, icase, List::Http)?),
            (how, true) => HdrPat::Lf(how, lf_fmt(&p.text, List::Http, "expect", cx)?),
            (how, false) => HdrPat::Text(how, p.text.as_bytes().to_vec()),
        })
    };
    let name = pat(&h.name, true)?;
    let value = h.value.as_ref().map(|v| pat(v, false)).transpose()?;
    Ok(HdrRule { full: h.full, name, value })
}

pub(super) fn status(s: CheckStatusName) -> CheckStatus {
    use CheckStatusName as N;
    match s {
        N::L4Ok => CheckStatus::L4Ok,
        N::L4Tout => CheckStatus::L4Tout,
        N::L4Con => CheckStatus::L4Con,
        N::L6Ok => CheckStatus::L6Ok,
        N::L6Tout => CheckStatus::L6Tout,
        N::L6Rsp => CheckStatus::L6Rsp,
        N::L7Ok => CheckStatus::L7Ok,
        N::L7OkC => CheckStatus::L7OkC,
        N::L7Tout => CheckStatus::L7Tout,
        N::L7Rsp => CheckStatus::L7Rsp,
        N::L7Sts => CheckStatus::L7Sts,
    }
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
