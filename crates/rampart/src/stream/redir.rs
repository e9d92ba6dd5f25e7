//! `server ... redir <prefix>`: a GET or HEAD request for such a server is not
//! forwarded; the client gets `302 Found` to `<prefix>` followed by the request's path
//! (and query), so that it goes to the server itself (a static farm, another site in a
//! disaster). A prefix of `/` alone keeps the path as it is. The server is the one
//! persistence chose (cookie, stick table, `use-server`), else the balancer's pick.
//! HAProxy counterpart: `http_perform_server_redirect()` (src/http_ana.c), called once
//! the server is assigned (`SF_REDIRECTABLE`, src/stream.c).
//!
//! COMPAT: HAProxy assigns a balanced server through its queue first; rampart picks
//! among the servers with a free slot and, when the pick has no `redir`, sends the
//! request to that pick (it is not balanced again).

use std::borrow::Cow;

use crate::http::{Method, MsgHead, Synth};
use crate::stream::Stream;

/// The server a GET or HEAD request goes to when backend `be` has `redir` servers:
/// `Some((srv, true))` to redirect, `Some((srv, false))` to forward to the server
/// picked here; `None` when nothing was decided (other methods, no server).
pub(super) fn server(s: &Stream<'_>, be: usize, meth: Method, key: Option<u32>) -> Option<(usize, bool)> {
    if !matches!(meth, Method::Get | Method::Head) {
        return None;
    }
    let px = &s.rt.proxies[be];
    let srv = match s.srv {
        Some(i) => i,
        None => crate::backend::pick_server(px, None, key)?,
    };
    Some((srv, px.be.servers.get(srv)?.redir.is_some()))
}

/// Fills `out` with the 302 to server `srv`'s prefix and the path of request `req`
/// (slices into `buf`); `None` for a target with no path (`*`, authority form).
pub(super) fn reply<'rt>(
    s: &Stream<'rt>,
    be: usize,
    srv: usize,
    req: &MsgHead,
    buf: &[u8],
    out: &mut MsgHead,
) -> Option<Synth<'rt>> {
    let sv = s.rt.proxies[be].be.servers.get(srv)?;
    let prefix = sv.redir.as_deref()?;
    let path = req.view(buf).target().pathq;
    if path.is_empty() {
        return None;
    }
    let mut location = Vec::with_capacity(prefix.len() + path.len());
    if prefix != "/" {
        location.extend_from_slice(prefix.as_bytes());
    }
    location.extend_from_slice(path);
    crate::action::reply::start_head(out, 302, "Found");
    for (name, value) in
        [(&b"Cache-Control"[..], &b"no-cache"[..]), (b"Content-length", b"0"), (b"Location", &location)]
    {
        out.add_header(name, value).ok()?;
    }
    sv.stats.stot().inc();
    Some(Synth { close: true, ..Synth::built(Cow::Borrowed(&[])) })
}
