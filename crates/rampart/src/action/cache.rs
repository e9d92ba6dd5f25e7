//! `http-request cache-use` and `http-response cache-store`: the lookup that lets the
//! stream answer from the cache, and the decision to store a response (its head as
//! this rule sees it; the body is added by the cache's filter as it streams).
//! HAProxy counterparts: `http_action_req_cache_use()` and `http_action_store_cache()`
//! (src/cache.c).

use crate::cache::rules::{self, VARY_ACCEPT_ENCODING, VARY_REFERER};
use crate::cache::{self, Pending};
use crate::http::{Method, Version};

use super::http::{Env, Exec};

/// `cache-use`: the request's keys, then the object that answers it, if any.
pub fn cache_use(idx: u32, x: &mut Exec<'_, '_>, env: &Env<'_>) {
    let Some(c) = env.rt.cache(idx) else { return };
    let req = x.msg.view(x.buf);
    let Some(key) = cache::primary_key(req.uri(), !req.target().authority.is_empty(), req.first(b"host")) else {
        return;
    };
    let st = &mut x.st.cache;
    st.key = Some(key);
    st.req = rules::request(req);
    if c.conf.process_vary {
        st.sec = rules::request_key(req, VARY_ACCEPT_ENCODING | VARY_REFERER);
    }
    // as HAProxy: GET and HEAD requests of HTTP/1.1 and later that the request's
    // cacheability rules do not exclude are lookups, counted on the side whose rule
    // ran (the backend's rules run with a backend other than the frontend)
    let version_ok = x.msg.version != Version::Http10;
    let counted = matches!(x.msg.method, Method::Get | Method::Head) && version_ok && !st.req.ignore;
    // a HEAD request is answered from a GET's object: its head, without the body (the
    // front muxes leave the body of a built reply out for HEAD)
    if !counted || st.hit.is_some() {
        if counted {
            env.rt.count_cache(env.fe, env.be.filter(|&b| b != env.fe), false);
        }
        return;
    }
    let sec = st.sec;
    let found = c.lookup(&key, cache::now(), |sig| sec.masked(sig));
    env.rt.count_cache(env.fe, env.be.filter(|&b| b != env.fe), found.is_some());
    if let Some(e) = found {
        st.hit = Some((idx, e));
    }
}

/// `cache-store`: whether the response may be stored, and what of it.
pub fn cache_store(idx: u32, px: u32, x: &mut Exec<'_, '_>, env: &Env<'_>) {
    let Some(c) = env.rt.cache(idx) else { return };
    let st = &x.st.cache;
    let Some(key) = st.key else { return };
    // a response the cache served is not stored again (HAProxy: "the response came
    // from a cache")
    if st.hit.is_some() || x.st.flt.cache_hit.is_some() || env.ver == Some(Version::Http10) {
        return;
    }
    let res = x.msg.view(x.buf);
    let status = res.head.status;
    if env.meth != Some(Method::Get) {
        // a successful unsafe request invalidates what was stored (RFC 7234 §4.4)
        let safe = matches!(env.meth, Some(Method::Head | Method::Options | Method::Trace));
        if (200..400).contains(&status) && !safe {
            c.invalidate(&key);
        }
        return;
    }
    // COMPAT (as HAProxy 2.6): a request's `no-cache` only keeps it from being served
    // from the cache, its response is still stored
    if status != 200 || st.req.no_store {
        return;
    }
    let Some(vary) = (if c.conf.process_vary { rules::vary_signature(res) } else { Some(0) }) else { return };
    if !c.conf.process_vary && res.first(b"vary").is_some() {
        return;
    }
    if !rules::response_storable(res) {
        return;
    }
    if let Some(p) = pending(c, idx, key, st.sec, vary, x) {
        x.st.cache.store = Some(Box::new(Pending { px, ..p }));
    }
}

/// The head of a response to store, its dates and keys; `None` when it cannot be
/// stored (a stale `Age`, an unknown encoding while varying on it, too big).
fn pending(
    c: &cache::Cache,
    idx: u32,
    key: cache::Key,
    sec: rules::SecKey,
    vary: u8,
    x: &Exec<'_, '_>,
) -> Option<Pending> {
    let res = x.msg.view(x.buf);
    let now = cache::now();
    let (effective, own) = rules::max_age(res, c.conf.max_age, now)?;
    let age = match res.first(b"age") {
        Some(a) => {
            let a: u32 = std::str::from_utf8(a).ok()?.trim().parse().ok()?;
            if a > own {
                return None;
            }
            a
        }
        None => 0,
    };
    let sec = if vary & VARY_ACCEPT_ENCODING != 0 { rules::stored_key(sec, res)? } else { sec }.masked(vary);
    let mut head = Vec::with_capacity(256);
    head.extend_from_slice(b"HTTP/1.1 ");
    head.extend_from_slice(res.head.status.to_string().as_bytes());
    head.push(b' ');
    head.extend_from_slice(res.reason());
    head.extend_from_slice(b"\r\n");
    for (_, n, v) in res.headers() {
        let skip: &[&[u8]] = &[b"content-length", b"transfer-encoding", b"connection", b"age", b"keep-alive"];
        if skip.iter().any(|s| n.eq_ignore_ascii_case(s)) {
            continue;
        }
        head.extend_from_slice(n);
        head.extend_from_slice(b": ");
        head.extend_from_slice(v);
        head.extend_from_slice(b"\r\n");
    }
    if head.len() as u64 > c.conf.object_limit() {
        return None;
    }
    Some(Pending {
        cache: idx,
        key,
        head,
        etag: res.first(b"etag").map(<[u8]>::to_vec),
        last_modified: rules::last_modified(res, now),
        stored: now,
        expire: now + i64::from(effective),
        age,
        vary,
        sec,
        px: 0,
    })
}
