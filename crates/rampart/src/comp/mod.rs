//! HTTP compression (`compression algo|type|offload`, `filter compression`): which
//! algorithm a request accepts, whether its response may be compressed, the edits of
//! that response's head, and the compressors. The body itself is compressed by the
//! response filters (`crate::filter`) while it streams.
//!
//! The request side runs once the request analysers are done (HAProxy's
//! `AN_REQ_FLT_HTTP_HDRS`), so that rules see and may change `Accept-Encoding` first;
//! the response side decides before the `http-response` rules (`res.comp` is true in
//! them) and edits the head after them, as HAProxy's filter does.
//! HAProxy counterpart: src/flt_http_comp.c, src/compression.c.
//!
//! - `negotiate`: the decisions on the heads, the head's edits
//! - `encoder`: one compressor per algorithm (flate2 on zlib-rs, brotli, zstd)
//! - `limit`: `maxcomprate`, `maxcompcpuusage`, `maxzlibmem` and the process's rates
//! - `run`: one response being compressed, its level and its counting

pub mod encoder;
pub mod fast;
pub mod limit;
pub mod negotiate;
pub mod run;

use rampart_cfg::model::{CompAlgo, Compression};

use crate::http::{MsgHead, MsgView};

/// A list of the backend's `compression` lines if it has one, else the frontend's
/// (HAProxy looks the algorithms and the types up that way, each on its own).
fn pick<'c, T>(fe: Option<&'c Compression>, be: Option<&'c Compression>, list: fn(&Compression) -> &[T]) -> &'c [T] {
    match be.map(list).filter(|l| !l.is_empty()) {
        Some(l) => l,
        None => fe.map_or(&[], list),
    }
}

/// The request side: the algorithm the response may be compressed with, chosen from
/// the request's `Accept-Encoding`; with `offload` (the frontend's or the backend's),
/// the header is removed from a request whose response will be compressed.
pub fn on_request(
    fe: Option<&Compression>,
    be: Option<&Compression>,
    req: &mut MsgHead,
    buf: &[u8],
) -> Option<CompAlgo> {
    let algos = pick(fe, be, |c| &c.algos);
    if algos.is_empty() {
        return None;
    }
    let algo = negotiate::select_request(algos, req.view(buf))?;
    let offload = fe.is_some_and(|c| c.offload) || be.is_some_and(|c| c.offload);
    if offload && algo != CompAlgo::Identity {
        req.del_header(buf, b"accept-encoding");
    }
    Some(algo)
}

/// Whether the response `res` may be compressed (an algorithm was chosen on the
/// request): `until_close` when its body ends with the connection.
pub fn on_response(
    fe: Option<&Compression>,
    be: Option<&Compression>,
    req: negotiate::ReqFacts,
    res: MsgView<'_>,
    until_close: bool,
) -> bool {
    negotiate::response_allows(pick(fe, be, |c| &c.types), req, res, until_close)
}
