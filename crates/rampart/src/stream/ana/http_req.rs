//! `http-request` rules, then `option http-restrict-req-hdr-names`, then the proxy's
//! `redirect` rules: those of the frontend before backend switching, those of the
//! backend after it (a `listen` runs its own once, as a frontend).
//! HAProxy counterpart: `http_process_req_common()`, `http_req_get_intercept_rule()`
//! and `http_req_restrict_header_names()` (src/http_ana.c).

use rampart_cfg::model::RestrictHdrNames;

use super::Verdict;
use crate::action::http::{run_rules, run_rules_from, Exec};
use crate::action::reply::{build_default, start_head};
use crate::action::{Flow, Service};
use crate::http::{MsgHead, Synth};
use crate::sample::ctx::Dir;
use crate::sample::vars::VarStore;
use crate::stream::{Stream, TxnData};

/// Runs the `http-request` and `redirect` rules of proxy `px` on the request head;
/// `buf` is where its slices point, `body` the request body bytes in hand. A reply is
/// built in `txn.synth` and `reply`. After a [`Verdict::WaitBody`], calling again runs
/// the rules that follow the `wait-for-body`.
#[allow(clippy::too_many_arguments)]
pub fn run<'rt>(
    s: &Stream<'rt>,
    txn: &mut TxnData,
    buf: &[u8],
    body: Option<&[u8]>,
    px: usize,
    sess_vars: &VarStore,
    reply: &mut Option<Synth<'rt>>,
) -> Verdict {
    let proxy = &s.rt.proxies[px];
    let rules = &proxy.rules;
    let restrict = proxy.restrict_req_hdr_names;
    if rules.http_req.is_empty() && rules.redirects.is_empty() && restrict == RestrictHdrNames::Preserve {
        return Verdict::Continue;
    }
    let TxnData { req, synth, vars_txn, vars_reqres, scratch, strict, st, .. } = txn;
    let mut env = s.env(Dir::Request, sess_vars, vars_txn, vars_reqres);
    env.req_body = body;
    let pages = s.pages(px);
    let mut x = Exec { msg: req, buf, out: synth, reply, pages, scratch, strict, st };
    let start = std::mem::take(&mut x.st.resume);
    let (mut flow, at) = run_rules_from(&rules.http_req, start, &mut x, &env);
    if let Flow::WaitBody(w) = flow {
        x.st.resume = at + 1;
        return Verdict::WaitBody(w);
    }
    if let Flow::Resolve | Flow::Spoe = flow {
        // the same rule runs again with the answer
        x.st.resume = at;
        return if flow == Flow::Spoe { Verdict::Spoe } else { Verdict::Resolve };
    }
    if let Flow::LuaWait(w) = flow {
        // the same rule runs again, and resumes the script
        x.st.resume = at;
        return Verdict::LuaWait(w);
    }
    if let Flow::Service(svc) = flow {
        let v = serve(s, &mut x, &env, svc);
        // a Lua service waits (a sleep, more of the body): the same rule resumes it
        if let Verdict::LuaWait(_) | Verdict::WaitBody(_) = v {
            x.st.resume = at;
        }
        return v;
    }
    if matches!(flow, Flow::Continue | Flow::Allow) {
        if restrict_names(x.msg, buf, restrict) {
            build_default(&mut x, &env, 403);
            return Verdict::Reply;
        }
        flow = run_rules(&rules.redirects, &mut x, &env);
    }
    verdict(flow)
}

/// `option http-restrict-req-hdr-names delete|reject`: headers whose name holds other
/// characters than letters, digits and `-` are removed (`delete`); `true` when the
/// request has one and must be refused (`reject`, answered with a 403). The
/// `:fcgi-` parameters of an `fcgi-app`'s `set-param` (rules of the backend, which no
/// client can send) are not headers and stay.
fn restrict_names(req: &mut MsgHead, buf: &[u8], how: RestrictHdrNames) -> bool {
    let bad =
        |name: &[u8]| name.iter().any(|&c| !c.is_ascii_alphanumeric() && c != b'-') && !name.starts_with(b":fcgi-");
    match how {
        RestrictHdrNames::Preserve => false,
        RestrictHdrNames::Delete => {
            req.del_header_if(buf, |n, _| bad(n));
            false
        }
        RestrictHdrNames::Reject => req.view(buf).headers().any(|(_, n, _)| bad(n)),
    }
}

/// Builds the answer of the stream for `status` (an `http-error` reply, an
/// `errorfile`, HAProxy's page) in `txn.synth` and `reply`, as the proxy the stream is
/// in (its backend once chosen) would send it. `buf` holds the request head's bytes
/// while the request is still there (formats of an `http-error` reply may read it),
/// `None` once it was sent to the server.
#[allow(clippy::too_many_arguments)]
pub fn error_reply<'rt>(
    s: &Stream<'rt>,
    txn: &mut TxnData,
    buf: Option<&[u8]>,
    sess_vars: &VarStore,
    status: u16,
    reply: &mut Option<Synth<'rt>>,
) {
    let TxnData { req, synth, vars_txn, vars_reqres, scratch, strict, st, .. } = txn;
    let env = s.env(Dir::Request, sess_vars, vars_txn, vars_reqres);
    let mut gone = MsgHead::default();
    let (msg, buf) = match buf {
        Some(b) => (req, b),
        None => (&mut gone, &[][..]),
    };
    let pages = s.pages(s.be.unwrap_or(s.fe));
    let mut x = Exec { msg, buf, out: synth, reply, pages, scratch, strict, st };
    build_default(&mut x, &env, status);
}

/// `http-request use-service`: the service answers in place of a server (HAProxy's
/// applet takes over the stream).
fn serve<'rt>(s: &Stream<'rt>, x: &mut Exec<'_, 'rt>, env: &crate::action::http::Env<'_>, svc: Service) -> Verdict {
    match svc {
        Service::Lua(id) => {
            s.rt.proxies[s.fe].stats.fe_intercepted.inc();
            match crate::action::lua::runner().map(|r| r.http_service(id, x, env)) {
                Some(Flow::LuaWait(w)) => Verdict::LuaWait(w),
                Some(Flow::WaitBody(w)) => Verdict::WaitBody(w),
                Some(Flow::Reply) => applet_response_rules(s, x, env),
                _ => Verdict::Close,
            }
        }
        Service::PrometheusExporter => {
            s.rt.proxies[s.fe].stats.fe_intercepted.inc();
            let uri = x.msg.view(x.buf).uri();
            let query = memchr::memchr(b'?', uri).map_or(&[][..], |i| &uri[i + 1..]);
            let Ok(scope) = crate::stats::prometheus::Scope::from_query(query) else {
                crate::action::reply::build_default(x, env, 400);
                return Verdict::Reply;
            };
            let body = crate::stats::prometheus::render(s.rt, scope).into_bytes();
            let out = &mut *x.out;
            start_head(out, 200, "OK");
            let _ = out.add_header(b"cache-control", b"no-cache");
            let _ = out.add_header(b"content-type", b"text/plain; version=0.0.4");
            let _ = out.add_header(b"content-length", body.len().to_string().as_bytes());
            *x.reply = Some(Synth::built(std::borrow::Cow::Owned(body)));
            Verdict::Reply
        }
    }
}

/// The `http-response` rules (backend, then frontend) on the response a Lua service
/// built: HAProxy runs them on what an applet answers, as on a server's response.
fn applet_response_rules<'rt>(
    s: &Stream<'rt>,
    x: &mut Exec<'_, 'rt>,
    req_env: &crate::action::http::Env<'_>,
) -> Verdict {
    // the applet's answer is built within the request analysers, which cannot hold it
    // while a response rule waits
    let env = crate::action::http::Env { dir: Dir::Response, req_body: None, lua_wait: false, ..req_env.clone() };
    let mut res = std::mem::take(&mut *x.out);
    let (mut out, mut reply) = (MsgHead::default(), None);
    let be = s.be.filter(|&b| b != s.fe);
    for px in be.into_iter().chain(std::iter::once(s.fe)) {
        let rules = &s.rt.proxies[px].rules.http_res;
        if rules.is_empty() {
            continue;
        }
        let mut y = Exec {
            msg: &mut res,
            buf: &[],
            out: &mut out,
            reply: &mut reply,
            pages: s.pages(px),
            scratch: &mut *x.scratch,
            strict: &mut *x.strict,
            st: &mut *x.st,
        };
        // the service's answer is whole: a `wait-for-body` has nothing to wait for
        let mut from = 0;
        let flow = loop {
            match run_rules_from(rules, from, &mut y, &env) {
                (Flow::WaitBody(_), at) => from = at + 1,
                (flow, _) => break flow,
            }
        };
        match flow {
            Flow::Continue | Flow::Allow => {}
            Flow::Reply | Flow::Tarpit => {
                // a rule answered in place of the service (`deny`, `return`)
                x.st.lua.stream = None;
                *x.out = out;
                *x.reply = reply;
                return Verdict::Reply;
            }
            flow => {
                x.st.lua.stream = None;
                return verdict(flow);
            }
        }
    }
    *x.out = res;
    Verdict::Reply
}

/// The stream's verdict for what a rule list decided.
pub fn verdict(flow: Flow) -> Verdict {
    match flow {
        Flow::Continue | Flow::Allow => Verdict::Continue,
        Flow::Reply => Verdict::Reply,
        Flow::Tarpit => Verdict::Tarpit,
        Flow::Close => Verdict::Close,
        Flow::SilentDrop => Verdict::SilentDrop,
        Flow::WaitBody(w) => Verdict::WaitBody(w),
        Flow::Resolve => Verdict::Resolve,
        Flow::Spoe => Verdict::Spoe,
        Flow::LuaWait(w) => Verdict::LuaWait(w),
        // only `http-request` rules name a service, and [`run`] serves it
        Flow::Service(_) => {
            debug_assert!(false, "a service outside http-request rules");
            Verdict::Close
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rampart_proto::http::{HdrKind, Header, Slice};

    fn head(buf: &[u8]) -> MsgHead {
        let mut h = MsgHead { arena_max: 64, ..MsgHead::default() };
        let mut at = 0;
        for line in buf.split(|&c| c == b'\n').filter(|l| !l.is_empty()) {
            let colon = line.iter().position(|&c| c == b':').unwrap();
            let (ns, vs) = (at, at + colon + 2);
            h.headers.push(Header {
                name: Slice { start: ns as u32, end: (ns + colon) as u32 },
                value: Slice { start: vs as u32, end: (at + line.len()) as u32 },
                kind: HdrKind::classify(&line[..colon]),
                drop: false,
            });
            at += line.len() + 1;
        }
        h
    }

    #[test]
    fn header_names_are_restricted_to_letters_digits_and_dashes() {
        let buf = b"Host: a\nX_A: 1\nX.B: 2\nx-c-9: 3\nx__d: 4\nx-e: 5\n";
        let mut h = head(buf);
        assert!(!restrict_names(&mut h, buf, RestrictHdrNames::Preserve));
        assert!(restrict_names(&mut h, buf, RestrictHdrNames::Reject));
        assert!(!restrict_names(&mut h, buf, RestrictHdrNames::Delete));
        let kept: Vec<_> = h.view(buf).headers().map(|(_, n, _)| n.to_vec()).collect();
        assert_eq!(kept, [b"Host".to_vec(), b"x-c-9".to_vec(), b"x-e".to_vec()]);
        assert!(!restrict_names(&mut h, buf, RestrictHdrNames::Reject));
    }
}
