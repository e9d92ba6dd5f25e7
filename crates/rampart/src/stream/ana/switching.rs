//! Backend switching (`use_backend` rules, else `default_backend`, else the proxy
//! itself for a `listen`) and server rules (`use-server`).
//! HAProxy counterpart: `process_switching_rules()` and `process_server_rules()`
//! (src/stream.c).

use crate::action::state::{Persist, StreamState};
use crate::action::{BackendTarget, ServerTarget};
use crate::http::MsgHead;
use crate::sample::ctx::Dir;
use crate::sample::vars::VarStore;
use crate::sample::SampleCtx;
use crate::stream::Stream;

/// The vars and the request the switching rules read.
pub struct Input<'t> {
    pub req: &'t MsgHead,
    pub buf: &'t [u8],
    pub sess: &'t VarStore,
    pub txn: &'t VarStore,
    pub reqres: &'t VarStore,
    pub scratch: &'t mut Vec<u8>,
    pub st: &'t StreamState,
}

/// The backend of this stream; `None` when the frontend has none (503).
pub fn backend(s: &Stream<'_>, i: Input<'_>) -> Option<usize> {
    if s.rt.proxies[s.fe].rules.switching.is_empty() {
        return s.rt.proxies[s.fe].fe.backend;
    }
    let ctx = s.ctx(Dir::Request, Some((i.req, i.buf)), None, i.sess, i.txn, i.reqres, i.st);
    choose(s, &ctx, i.scratch)
}

/// The backend of a stream for the rules' view `ctx` (a TCP stream's: the
/// connection, the bytes the content rules waited for, the variables and captures).
pub fn choose(s: &Stream<'_>, ctx: &SampleCtx<'_>, scratch: &mut Vec<u8>) -> Option<usize> {
    let fe = &s.rt.proxies[s.fe];
    let rules = &fe.rules.switching;
    if !rules.is_empty() {
        for rule in rules {
            if !rule.applies(ctx) {
                continue;
            }
            match &rule.act {
                BackendTarget::Static(be) => return Some(*be),
                BackendTarget::Dynamic(fmt) => {
                    scratch.clear();
                    fmt.render(ctx, scratch);
                    // As HAProxy, a name that is no backend falls through to the
                    // default backend.
                    let name = &scratch[..];
                    if let Some(be) = s.rt.proxies.iter().position(|p| p.cap.backend && p.name.as_bytes() == name) {
                        return Some(be);
                    }
                    break;
                }
            }
        }
    }
    fe.fe.backend
}

/// The server a `use-server` rule of backend `be` chooses, if any.
pub fn server(s: &Stream<'_>, be: usize, i: Input<'_>) -> Option<usize> {
    if s.rt.proxies[be].rules.use_server.is_empty() {
        return None;
    }
    let ctx = s.ctx(Dir::Request, Some((i.req, i.buf)), None, i.sess, i.txn, i.reqres, i.st);
    server_in(s, be, &ctx, i.st.persist, i.scratch)
}

/// The first of backend `be`'s `force-persist`/`ignore-persist` rules that applies.
pub fn persist(s: &Stream<'_>, be: usize, i: Input<'_>) -> Persist {
    let rules = &s.rt.proxies[be].rules.persist;
    if rules.is_empty() {
        return Persist::Normal;
    }
    let ctx = s.ctx(Dir::Request, Some((i.req, i.buf)), None, i.sess, i.txn, i.reqres, i.st);
    persist_in(s, be, &ctx)
}

/// [`persist`] with the sample context built (a TCP stream's, say).
pub fn persist_in(s: &Stream<'_>, be: usize, ctx: &SampleCtx<'_>) -> Persist {
    match s.rt.proxies[be].rules.persist.iter().find(|r| r.applies(ctx)) {
        Some(r) if r.act => Persist::Force,
        Some(_) => Persist::Ignore,
        None => Persist::Normal,
    }
}

/// Whether a persistence rule (cookie, `use-server`, `stick`) may send a request to
/// server `sv` of backend `be`: it is up, or `option persist` or `force-persist` say
/// so (HAProxy: `cur_state != SRV_ST_STOPPED`, `PR_O_PERSIST`, `SF_FORCE_PRST`).
pub fn persists(be: &crate::proxy::ProxyRt, sv: &crate::proxy::ServerRt, persist: Persist) -> bool {
    !sv.state.is_deleted() && (sv.takes_persistent() || be.persist || persist == Persist::Force)
}

/// [`server`] with the sample context built (a TCP stream's, say).
pub fn server_in(
    s: &Stream<'_>,
    be: usize,
    ctx: &SampleCtx<'_>,
    persist: Persist,
    scratch: &mut Vec<u8>,
) -> Option<usize> {
    let px = &s.rt.proxies[be];
    let (rules, servers) = (&px.rules.use_server, &px.be.servers);
    for rule in rules.iter().filter(|r| r.applies(ctx)) {
        let srv = match &rule.act {
            ServerTarget::Static(srv) => *srv,
            ServerTarget::Dynamic(fmt) => {
                scratch.clear();
                fmt.render(ctx, scratch);
                // as HAProxy (`process_server_rules`): a name that is no server ends
                // the rules, the balancer decides
                servers.iter().position(|sv| sv.name.as_bytes() == &scratch[..] && !sv.state.is_deleted())?
            }
        };
        // a server that is down lets the next rules have their say
        if persists(px, &servers[srv], persist) {
            return Some(srv);
        }
    }
    None
}

/// The values of backend `be`'s `sni` expressions for this request (`server ... ssl
/// sni <expr>`), empty without any.
// PERF: one small allocation per request, only in backends with `sni`.
pub fn sni(s: &Stream<'_>, be: usize, i: Input<'_>) -> crate::tls::client::SniValues {
    let px = &s.rt.proxies[be];
    if !px.be.has_sni {
        return Vec::new();
    }
    let ctx = s.ctx(Dir::Request, Some((i.req, i.buf)), None, i.sess, i.txn, i.reqres, i.st);
    crate::tls::client::sni_values(px.be.servers.iter().map(|s| s.tls.as_deref()), |e| {
        crate::tls::client::sni_value(e.eval(&ctx)?)
    })
}

/// The hash key of a hashing backend `be` for this request (`balance source`, `uri`,
/// `url_param`, `hdr`, `hash`); `None` for other algorithms or a missing key.
pub fn lb_key(s: &Stream<'_>, be: usize, i: Input<'_>, body: Option<&[u8]>) -> Option<u32> {
    let px = &s.rt.proxies[be];
    px.be.lb.key_source()?;
    let mut ctx = s.ctx(Dir::Request, Some((i.req, i.buf)), None, i.sess, i.txn, i.reqres, i.st);
    // the body waited for (`option http-buffer-request`), for `req.body` keys
    ctx.req_body = body;
    crate::backend::key::lb_key(px, &ctx)
}
