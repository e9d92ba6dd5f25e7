//! The result of a check run (HAProxy's `info` and status): a failed expect with the
//! rule's own message, its comment and its `status-code`, a passed run decided by its
//! last rule, and the words `option tcp-check` adds to connection errors (the step and
//! what the rule was). A child module of `tcpcheck`, whose run state it reads.
//! HAProxy counterparts: `tcpcheck_expect_onerror_message()`,
//! `tcpcheck_expect_onsuccess_message()` (src/tcpcheck.c), `chk_report_conn_err()`
//! (src/check.c).

use std::fmt::Write as _;

use super::http::{self, Resp};
use super::rules::{Action, Expect, Matcher, Msg, Rule, StatusCode};
use super::{CheckConn, CheckStatus, MsgHead, MsgView, Outcome, Run, Sample};

impl Run<'_> {
    /// The result of a failed expect (HAProxy's `tcpcheck_expect_onerror_message()`):
    /// `desc` if any, else the rule's `on-error`, else the generic text of `option
    /// tcp-check`; then the rule's comment; the code from `status-code`.
    pub(super) fn expect_failed(
        &self,
        rule: &Rule,
        e: &Expect,
        matched: bool,
        status: CheckStatus,
        desc: String,
    ) -> Outcome {
        self.expect_failed_in(rule, e, matched, status, desc, None)
    }

    pub(super) fn expect_failed_in(
        &self,
        rule: &Rule,
        e: &Expect,
        matched: bool,
        status: CheckStatus,
        desc: String,
        res: Option<MsgView<'_>>,
    ) -> Outcome {
        let mut desc = desc;
        if desc.is_empty() {
            desc = match &e.on_error {
                Msg::Default if self.chk.generic => generic_mismatch(rule, e, matched),
                other => self.message(other, res),
            };
        }
        if let Some(c) = &rule.comment {
            let _ = write!(desc, " comment: {c}");
        }
        let code = self.status_code(e, res).unwrap_or(self.code);
        Outcome { status, code, desc }
    }

    /// The text of an `on-success` / `on-error` message.
    pub(super) fn message(&self, m: &Msg, res: Option<MsgView<'_>>) -> String {
        match m {
            Msg::Default => String::new(),
            Msg::Fixed(s) => (*s).to_owned(),
            Msg::Payload { skip, ltrim, crlf } => payload(&self.buf, *skip, *ltrim, *crlf),
            Msg::Lf(f) => {
                let mut out = Vec::new();
                self.ctx_with(res, |ctx| f.render(ctx, &mut out));
                String::from_utf8_lossy(&out).into_owned()
            }
        }
    }

    /// The code the rule's `status-code` expression gives, if any.
    pub(super) fn status_code(&self, e: &Expect, res: Option<MsgView<'_>>) -> Option<u16> {
        let StatusCode::Expr(x) = &e.status_code else { return None };
        self.ctx_with(res, |ctx| {
            let smp = x.eval(ctx)?;
            match crate::sample::cast::cast(smp, crate::sample::types::SmpType::Sint)? {
                Sample::Sint(n) => Some(n as u16),
                _ => None,
            }
        })
    }

    /// The result once every rule passed: decided by the last rule run.
    pub(super) fn success(&self) -> Outcome {
        if let Some(out) = &self.verdict {
            return out.clone();
        }
        let rule = self.current.and_then(|i| self.chk.rules.get(i));
        match rule.map(|r| &r.action) {
            Some(Action::Expect(e)) => self.expect_passed(e),
            Some(Action::Connect(c)) => {
                let tls = self.conn.as_ref().is_some_and(CheckConn::is_tls);
                let status = if tls { CheckStatus::L6Ok } else { CheckStatus::L4Ok };
                Outcome::new(status, if c.implicit { "" } else { "(tcp-check)" })
            }
            _ => Outcome::new(CheckStatus::L7Ok, "(tcp-check)"),
        }
    }

    /// HAProxy's `tcpcheck_expect_onsuccess_message()` and final status.
    pub(super) fn expect_passed(&self, e: &Expect) -> Outcome {
        if self.chk.disable_on_404 && self.env.running && self.code == 404 {
            return Outcome { status: CheckStatus::L7OkC, code: 404, desc: String::new() };
        }
        let mut msg = MsgHead::default();
        let res = if self.chk.http { self.response_view(&mut msg) } else { None };
        let desc = match &e.on_success {
            Msg::Default if self.chk.generic => "(tcp-check)".to_owned(),
            other => self.message(other, res),
        };
        let code = self.status_code(e, res).unwrap_or(self.code);
        Outcome { status: e.ok_status.unwrap_or(CheckStatus::L7Ok), code, desc }
    }

    pub(super) fn response_view<'m>(&'m self, msg: &'m mut MsgHead) -> Option<MsgView<'m>> {
        match http::parse_response(&self.buf, self.method, true, msg) {
            Resp::Ready { .. } => Some(MsgView { head: msg, buf: &self.buf }),
            _ => None,
        }
    }

    /// A timeout after the connection was up: `tout-status` of an expect, else L7TOUT.
    pub(super) fn timed_out(&self, rule: &Rule) -> Outcome {
        let status = match &rule.action {
            Action::Expect(e) => e.tout_status.unwrap_or(CheckStatus::L7Tout),
            _ => CheckStatus::L7Tout,
        };
        self.conn_error(rule, status, "")
    }

    /// A connection-level error: `err`, and for `option tcp-check` where it happened
    /// (HAProxy's `chk_report_conn_err()`).
    pub(super) fn conn_error(&self, rule: &Rule, status: CheckStatus, err: &str) -> Outcome {
        let mut out = err.to_owned();
        if self.chk.generic {
            where_(&mut out, rule);
        }
        Outcome::new(status, out)
    }
}

/// `at step N of tcp-check (<rule>)[ comment: '<c>']`, or `at initial connection step`.
fn where_(out: &mut String, rule: &Rule) {
    if rule.step == 0 {
        out.push_str(" at initial connection step of tcp-check");
        return;
    }
    let _ = write!(out, " at step {} of tcp-check", rule.step);
    match &rule.action {
        Action::Connect(c) => match c.port {
            Some(p) => {
                let _ = write!(out, " (connect port {p})");
            }
            None => out.push_str(" (connect)"),
        },
        Action::Send(_) => out.push_str(" (send)"),
        Action::Expect(e) => out.push_str(&e.matcher.describe()),
        Action::Custom(_) => out.push_str(" (expect custom function)"),
        Action::SetVar { .. } | Action::UnsetVar(_) => {}
    }
    if let Some(c) = &rule.comment {
        let _ = write!(out, " comment: '{c}'");
    }
}

impl Matcher {
    /// How `chk_report_conn_err()` names an expect rule.
    pub(super) fn describe(&self) -> String {
        match self {
            Matcher::String(s) => format!(" (expect string '{}')", String::from_utf8_lossy(s)),
            Matcher::Binary(b) => format!(" (expect binary '{}')", String::from_utf8_lossy(b)),
            Matcher::Rstring(_) => " (expect regex)".into(),
            Matcher::Rbinary(_) => " (expect binary regex)".into(),
            Matcher::StringLf(_) => " (expect log-format string)".into(),
            Matcher::BinaryLf(_) => " (expect log-format binary)".into(),
            Matcher::Status(_) => " (expect HTTP status codes)".into(),
            Matcher::Rstatus(_) => " (expect HTTP status regex)".into(),
            Matcher::Header(_) => " (expect HTTP header pattern)".into(),
            Matcher::Body(s) => format!(" (expect HTTP body content '{}')", String::from_utf8_lossy(s)),
            Matcher::Rbody(_) => " (expect HTTP body regex)".into(),
            Matcher::BodyLf(_) => " (expect log-format HTTP body)".into(),
        }
    }
}

/// `TCPCHK did not match content ...` / `TCPCHK matched unwanted content ...`.
fn generic_mismatch(rule: &Rule, e: &Expect, matched: bool) -> String {
    let head = if matched { "TCPCHK matched unwanted content" } else { "TCPCHK did not match content" };
    let what = match &e.matcher {
        Matcher::String(s) | Matcher::Body(s) => format!(" '{}'", String::from_utf8_lossy(s)),
        Matcher::Binary(_) => " (binary)".into(),
        Matcher::Rstring(_) | Matcher::Rstatus(_) | Matcher::Rbody(_) => " (regex)".into(),
        Matcher::Rbinary(_) => " (binary regex)".into(),
        Matcher::StringLf(_) | Matcher::BodyLf(_) => " (log-format string)".into(),
        Matcher::BinaryLf(_) => " (log-format binary)".into(),
        Matcher::Status(_) => "(status codes)".into(),
        Matcher::Header(_) => " (header pattern)".into(),
    };
    format!("{head}{what} at step {}", rule.step)
}

/// `res.payload(skip,0)[,ltrim(' ')][,cut_crlf]`, up to the first NUL.
pub(super) fn payload(buf: &[u8], skip: usize, ltrim: bool, crlf: bool) -> String {
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
pub(super) fn leading_code(buf: &[u8]) -> u16 {
    let digits = buf.iter().take(3).take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&buf[..digits]).ok().and_then(|d| d.parse().ok()).unwrap_or(0)
}
