//! The filters' steps on the heads of an exchange: the compression algorithm chosen on
//! the request once its analysers ran (HAProxy's `AN_REQ_FLT_HTTP_HDRS`), the
//! response checked before the `http-response` rules and its head rewritten after
//! them, and the body filters ([`ResFilter`]) the forwarding step runs.
//! HAProxy counterpart: the `http_headers` / `channel_post_analyze` callbacks of the
//! filters (src/flt_http_comp.c, src/cache.c) as src/filters.c calls them.

use rampart_cfg::model::Compression;

use crate::action::state::StreamState;
use crate::comp::negotiate::ReqFacts;
use crate::filter::ResFilter;
use crate::http::{Method, MsgHead, Version};
use crate::stream::{Stream, TxnData};

/// The `compression` lines of the stream's frontend and backend.
fn comp<'rt>(s: &Stream<'rt>) -> (Option<&'rt Compression>, Option<&'rt Compression>) {
    let fe = s.rt.proxies[s.fe].comp.as_deref();
    let be = s.be.and_then(|b| s.rt.proxies[b].comp.as_deref());
    (fe, be)
}

/// Whether the frontend's compression filter runs before the cache filter of proxy
/// `px` (a backend's): the frontend's filters come first. COMPAT: as HAProxy's
/// `cache_store_post_analyze()`, a response being compressed is then not stored (the
/// cache would see compressed data); the order inside one proxy is checked at startup.
fn comp_precedes(s: &Stream<'_>, px: usize) -> bool {
    px != s.fe && s.rt.proxies[s.fe].comp.is_some()
}

/// The `filter trace` of the stream's frontend and backend (not `quiet`).
fn traces<'s>(s: &'s Stream<'_>) -> impl Iterator<Item = crate::filter::trace::Trace> + 's {
    let be = s.be.filter(|&b| b != s.fe);
    std::iter::once(s.fe).chain(be).filter_map(move |i| {
        let px = &s.rt.proxies[i];
        px.trace.as_deref().and_then(|t| crate::filter::trace::Trace::new(t, &px.name))
    })
}

/// The request side, once every request analyser ran: `filter trace` output, the
/// compression algorithm the request accepts (and `compression offload`).
pub fn request(s: &Stream<'_>, txn: &mut TxnData, buf: &[u8]) {
    for t in traces(s) {
        t.headers(txn.st.uniq_id, txn.req.view(buf), false, s.be.is_some());
    }
    let (fe, be) = comp(s);
    if fe.is_none() && be.is_none() {
        return;
    }
    txn.st.flt.comp_algo = crate::comp::on_request(fe, be, &mut txn.req, buf);
}

/// The response head as the server sent it, before the `http-response` rules:
/// whether it will be compressed (`res.comp` is true in the rules then).
pub fn response_head(s: &Stream<'_>, st: &mut StreamState, res: &MsgHead, buf: &[u8], until_close: bool) {
    for t in traces(s) {
        t.headers(st.uniq_id, res.view(buf), true, s.be.is_some());
    }
    let flt = &mut st.flt;
    if flt.comp_algo.is_none() {
        return;
    }
    let (fe, be) = comp(s);
    let req = ReqFacts { version: s.ver.unwrap_or(Version::Http11), method: s.meth.unwrap_or(Method::Get) };
    // the limits (`maxcomprate`, `maxcompcpuusage`) are checked last, as HAProxy does
    flt.compressing =
        crate::comp::on_response(fe, be, req, res.view(buf), until_close) && s.rt.comp_limits.allows_new();
}

/// After the `http-response` rules: the head's edits and the body filters (the
/// cache's store first, then compression, the only order HAProxy accepts in a proxy).
pub fn response_filters(s: &Stream<'_>, st: &mut StreamState, res: &mut MsgHead, buf: &[u8]) -> ResFilter {
    let mut f = ResFilter::default();
    if let Some(p) = st.cache.store.take() {
        match s.rt.caches.get(p.cache as usize) {
            Some(_) if st.flt.compressing && comp_precedes(s, p.px as usize) => {}
            Some(c) => f.taps.push(Box::new(crate::filter::store::StoreTap::new(c.clone(), p))),
            None => {}
        }
    }
    for t in traces(s) {
        f.taps.push(Box::new(crate::filter::trace::TraceTap { trace: t, uniq_id: st.uniq_id, offset: 0 }));
    }
    let flt = &mut st.flt;
    let Some(algo) = flt.comp_algo.filter(|_| flt.compressing) else { return f };
    let stats = [Some(s.rt.proxies[s.fe].stats.fe_comp.clone()), s.be.map(|b| s.rt.proxies[b].stats.be_comp.clone())];
    match crate::comp::run::Compressing::start(algo, s.rt.comp_level, &s.rt.comp_limits, stats) {
        Some(c) if crate::comp::negotiate::rewrite_head(res, buf, algo).is_ok() => f.comp = Some(c),
        // as HAProxy, a head that cannot take the edits goes uncompressed
        _ => flt.compressing = false,
    }
    f
}
