//! The hash key of a hashing backend (`balance source | uri | url_param | hdr |
//! rdp-cookie | hash`), read from the stream when the server is picked and hashed the way the
//! backend's `hash-type` says. A request without the key gets `None`: the balancer
//! then falls back to round robin, as HAProxy does.
//! HAProxy counterpart: the key-reading half of `get_server_sh/uh/ph/hh/expr()` and
//! their dispatch in `assign_server()` (src/backend.c).

use crate::lb::{hash, KeySource};
use crate::proxy::ProxyRt;
use crate::sample::types::SmpType;
use crate::sample::SampleCtx;

/// The hash key of the stream `ctx` describes for backend `be`, or `None` when the
/// backend does not hash or the key is missing. Costs one branch for other backends.
pub fn lb_key(be: &ProxyRt, ctx: &SampleCtx<'_>) -> Option<u32> {
    let lb = &be.be.lb;
    let hasher = lb.config().hasher;
    match lb.key_source()? {
        KeySource::Source => Some(hasher.finish(hash::source_key(ctx.conn.src?.ip()))),
        KeySource::Uri(o) => {
            let req = ctx.req?;
            let uri = if o.path_only { req.target().pathq } else { req.uri() };
            Some(lb.hash(hash::uri_part(uri, *o)))
        }
        KeySource::UrlParam(name) => {
            // TODO(#10): `check_post` (the parameter in a form body) is refused at startup.
            let v = hash::url_param(ctx.req?.uri(), name.as_bytes())?;
            Some(lb.hash(v))
        }
        KeySource::Hdr { name, domain_only } => {
            let v = ctx.req?.values(name.as_bytes()).next().filter(|v| !v.is_empty())?;
            Some(lb.hash(if *domain_only { hash::domain_only(v) } else { v }))
        }
        KeySource::RdpCookie(name) => {
            // as HAProxy: no key while the cookie line is incomplete, nor for an empty value
            let v = crate::sample::fetch::rdp::cookie(ctx.payload?, name.as_bytes()).ok()?;
            (!v.is_empty()).then(|| lb.hash(v))
        }
        KeySource::Expr => {
            let smp = be.be.lb_expr.as_ref()?.eval(ctx)?;
            match crate::sample::cast::cast(smp, SmpType::Bin)? {
                crate::sample::types::Sample::Bin(b) => match lb.prefix_len() {
                    // `prefix-affinity`: an empty body is no key (least loaded server)
                    Some(len) => Some(lb.hash(&b[..b.len().min(len)])).filter(|_| !b.is_empty()),
                    None => Some(lb.hash(&b)),
                },
                _ => None,
            }
        }
    }
}
