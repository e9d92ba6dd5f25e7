//! The HTTP actions (`http-request`, `http-response`, `http-after-response`, and the
//! proxy `redirect` rules), compiled, and how each runs.
//! HAProxy counterpart: src/http_act.c, the HTTP parts of src/vars.c.

use regex::bytes::Regex;

use super::reply::{Redirect, Reply};
use super::rewrite::{self, UriPart};
use super::Flow;
use crate::http::{MsgHead, Synth};
use crate::log::format::LogFormat;
use crate::proxy::Runtime;
use crate::sample::ctx::{ConnInfo, Dir};
use crate::sample::expr::Expr;
use crate::sample::vars::{SetCond, VarRef, VarStore, Vars};
use crate::sample::SampleCtx;

/// How `del-header -m` compares names.
#[derive(Debug)]
pub enum NameMatch {
    Str,
    Beg,
    End,
    Sub,
    Reg(Regex),
}

impl NameMatch {
    fn matches(&self, pattern: &[u8], name: &[u8]) -> bool {
        match self {
            NameMatch::Str => name.eq_ignore_ascii_case(pattern),
            NameMatch::Beg => name.len() >= pattern.len() && name[..pattern.len()].eq_ignore_ascii_case(pattern),
            NameMatch::End => {
                name.len() >= pattern.len() && name[name.len() - pattern.len()..].eq_ignore_ascii_case(pattern)
            }
            NameMatch::Sub => {
                pattern.is_empty() || name.windows(pattern.len()).any(|w| w.eq_ignore_ascii_case(pattern))
            }
            NameMatch::Reg(re) => re.is_match(name),
        }
    }
}

/// A compiled HTTP action.
#[derive(Debug)]
pub enum HttpAct {
    Allow,
    /// `deny`: the reply (403 by default, 502 on responses).
    Deny(Reply),
    /// `tarpit`: the reply after `timeout tarpit`.
    Tarpit(Reply),
    Return(Reply),
    /// `auth`: 401 with `WWW-Authenticate: Basic realm="<realm>"`.
    Auth(Reply),
    Redirect(Redirect),
    SetHeader {
        name: Box<[u8]>,
        value: LogFormat,
    },
    AddHeader {
        name: Box<[u8]>,
        value: LogFormat,
    },
    DelHeader {
        name: Box<[u8]>,
        how: NameMatch,
    },
    ReplaceHeader {
        name: Box<[u8]>,
        re: Regex,
        with: LogFormat,
    },
    ReplaceValue {
        name: Box<[u8]>,
        re: Regex,
        with: LogFormat,
    },
    SetMethod(LogFormat),
    /// `set-path`, `set-pathq`, `set-query`, `set-uri`.
    SetUriPart(UriPart, LogFormat),
    /// `replace-path`, `replace-pathq`, `replace-uri`.
    ReplaceUriPart(UriPart, Regex, LogFormat),
    SetStatus {
        status: u16,
        reason: Box<[u8]>,
    },
    SetVar {
        var: VarRef,
        cond: SetCond,
        expr: Expr,
    },
    SetVarFmt {
        var: VarRef,
        cond: SetCond,
        fmt: LogFormat,
    },
    UnsetVar(VarRef),
    /// `strict-mode on|off`: whether a failed rewrite aborts the stream.
    StrictMode(bool),
    /// `reject`, `silent-drop`: close the connection without a response.
    Close,
    /// Actions accepted for what they do not need to do here (`set-log-level` until
    /// logs exist, `disable-l7-retry` as rampart has no L7 retries): nothing happens.
    Nothing,
}

/// What an action runs on: the stream's heads and where their slices point, the
/// response slot a reply is built in, and the sample context parts.
pub struct Exec<'x, 'rt> {
    /// The message the rules act on (the request in `http-request`, the response in
    /// `http-response` and `http-after-response`).
    pub msg: &'x mut MsgHead,
    pub buf: &'x [u8],
    /// Where a reply is built (the stream's response head) and its bytes.
    pub out: &'x mut MsgHead,
    pub reply: &'x mut Option<Synth<'rt>>,
    /// Error pages for default replies: those of the proxy holding the rule, then the
    /// frontend's.
    pub pages: [&'rt crate::errors::ErrorPages; 2],
    /// Scratch space for rendered values.
    pub scratch: &'x mut Vec<u8>,
    /// A failed rewrite aborts the stream (HAProxy's default `strict-mode on`).
    pub strict: &'x mut bool,
}

/// What a sample context is built from, besides the message a rule works on: the
/// stream's state and its variable stores. [`Env::ctx`] builds one per evaluation.
pub struct Env<'p> {
    pub rt: &'p Runtime,
    pub conn: &'p ConnInfo,
    pub fe: usize,
    pub be: Option<usize>,
    pub srv: Option<usize>,
    pub first_req: bool,
    /// The request (rules on the request) or the response (rules on a response).
    pub dir: Dir,
    pub sess: &'p VarStore,
    pub txn: &'p VarStore,
    pub reqres: &'p VarStore,
}

impl Env<'_> {
    /// The sample context over `msg` (its slices into `buf`).
    pub fn ctx<'m>(&'m self, msg: &'m MsgHead, buf: &'m [u8]) -> SampleCtx<'m> {
        let view = Some(msg.view(buf));
        let (req, res) = if self.dir == Dir::Request { (view, None) } else { (None, view) };
        SampleCtx {
            be: self.be,
            srv: self.srv,
            dir: self.dir,
            req,
            res,
            vars: Vars {
                proc: Some(&self.rt.proc_vars),
                sess: Some(self.sess),
                txn: Some(self.txn),
                reqres: Some(self.reqres),
                check: None,
            },
            first_req: self.first_req,
            ..SampleCtx::new(self.rt, self.conn, self.fe)
        }
    }
}

impl HttpAct {
    /// Runs the action. `ctx` builds the sample context over the current head.
    pub fn exec<'rt>(&'rt self, x: &mut Exec<'_, 'rt>, ctx: &Env<'_>) -> Flow {
        let before = x.msg.failed_rewrites;
        let flow = self.run(x, ctx);
        if x.msg.failed_rewrites != before && *x.strict {
            // COMPAT: HAProxy answers 500 to a failed rewrite in strict mode (a
            // request) or 502 (a response); rampart sends the error page of that status.
            let status = if x.msg.status == 0 { 500 } else { 502 };
            super::reply::build_default(x, status);
            return Flow::Reply;
        }
        flow
    }

    fn run<'rt>(&'rt self, x: &mut Exec<'_, 'rt>, ctx: &Env<'_>) -> Flow {
        match self {
            HttpAct::Allow => Flow::Allow,
            HttpAct::Deny(r) | HttpAct::Return(r) | HttpAct::Auth(r) => {
                r.build(x, ctx);
                Flow::Reply
            }
            HttpAct::Tarpit(r) => {
                r.build(x, ctx);
                Flow::Tarpit
            }
            HttpAct::Redirect(r) => {
                if r.build(x, ctx) {
                    Flow::Reply
                } else {
                    Flow::Continue
                }
            }
            HttpAct::SetHeader { name, value } => {
                render(value, x, ctx);
                let _ = x.msg.set_header(x.buf, name, x.scratch);
                Flow::Continue
            }
            HttpAct::AddHeader { name, value } => {
                render(value, x, ctx);
                let _ = x.msg.add_header(name, x.scratch);
                Flow::Continue
            }
            HttpAct::DelHeader { name, how } => {
                x.msg.del_header_if(x.buf, |n, _| how.matches(name, n));
                Flow::Continue
            }
            HttpAct::ReplaceHeader { name, re, with } => {
                render(with, x, ctx);
                rewrite::replace_header(x.msg, x.buf, name, re, x.scratch, false);
                Flow::Continue
            }
            HttpAct::ReplaceValue { name, re, with } => {
                render(with, x, ctx);
                rewrite::replace_header(x.msg, x.buf, name, re, x.scratch, true);
                Flow::Continue
            }
            HttpAct::SetMethod(fmt) => {
                render(fmt, x, ctx);
                let _ = x.msg.set_method(x.scratch);
                Flow::Continue
            }
            HttpAct::SetUriPart(part, fmt) => {
                render(fmt, x, ctx);
                rewrite::set_uri_part(x.msg, x.buf, *part, x.scratch);
                Flow::Continue
            }
            HttpAct::ReplaceUriPart(part, re, fmt) => {
                render(fmt, x, ctx);
                rewrite::replace_uri_part(x.msg, x.buf, *part, re, x.scratch);
                Flow::Continue
            }
            HttpAct::SetStatus { status, reason } => {
                let _ = x.msg.set_status(*status, reason);
                Flow::Continue
            }
            HttpAct::SetVar { var, cond, expr } => {
                let c = ctx.ctx(x.msg, x.buf);
                if let Some(smp) = expr.eval(&c) {
                    c.vars.set(var, &smp, *cond);
                }
                Flow::Continue
            }
            HttpAct::SetVarFmt { var, cond, fmt } => {
                render(fmt, x, ctx);
                let c = ctx.ctx(x.msg, x.buf);
                c.vars.set(var, &crate::sample::Sample::str(x.scratch), *cond);
                Flow::Continue
            }
            HttpAct::UnsetVar(var) => {
                ctx.ctx(x.msg, x.buf).vars.unset(var);
                Flow::Continue
            }
            HttpAct::StrictMode(on) => {
                *x.strict = *on;
                Flow::Continue
            }
            HttpAct::Close => Flow::Close,
            HttpAct::Nothing => Flow::Continue,
        }
    }
}

/// Renders a log-format over the current message into `x.scratch`.
pub(super) fn render(fmt: &LogFormat, x: &mut Exec<'_, '_>, ctx: &Env<'_>) {
    x.scratch.clear();
    fmt.render(&ctx.ctx(x.msg, x.buf), x.scratch);
}

/// Runs a rule list in order until an action ends it.
pub fn run_rules<'rt>(rules: &'rt [super::Rule<HttpAct>], x: &mut Exec<'_, 'rt>, ctx: &Env<'_>) -> Flow {
    for rule in rules {
        if let Some(cond) = &rule.cond {
            if !cond.eval(&ctx.ctx(x.msg, x.buf)) {
                continue;
            }
        }
        match rule.act.exec(x, ctx) {
            Flow::Continue => {}
            end => return end,
        }
    }
    Flow::Continue
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names_match_as_del_header_says() {
        assert!(NameMatch::Str.matches(b"x-a", b"X-A"));
        assert!(!NameMatch::Str.matches(b"x-a", b"X-AB"));
        assert!(NameMatch::Beg.matches(b"x-", b"X-Forwarded-For"));
        assert!(NameMatch::End.matches(b"-for", b"X-Forwarded-For"));
        assert!(NameMatch::Sub.matches(b"forw", b"X-Forwarded-For"));
        assert!(!NameMatch::Sub.matches(b"back", b"X-Forwarded-For"));
        assert!(NameMatch::Reg(Regex::new("^x-.*-for$").unwrap()).matches(b"", b"x-forwarded-for"));
    }
}
