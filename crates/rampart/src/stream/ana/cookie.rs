//! Cookie-based persistence and `capture cookie`, on both sides of an exchange:
//!
//! - request: once `use-server` ran, the backend's persistence cookie in the `Cookie`
//!   headers picks the server it names if that one can take the request, and is taken
//!   out of the request (`insert indirect`) or loses its server prefix (`prefix`); the
//!   frontend's `capture cookie` keeps the first matching cookie (`%CC`);
//! - response: after the `http-response` rules, the server's own `Set-Cookie` of that
//!   name is deleted, rewritten or prefixed, `capture cookie` keeps the first matching
//!   one (`%CS`), and `insert` adds rampart's `Set-Cookie` (with `Cache-control:
//!   private` for `nocache` on a cacheable response).
//!
//! The walks themselves are in [`crate::http::cookie`]; what happened goes to the log
//! record ([`crate::log::stream_log::CookieLog`]).
//! HAProxy counterpart: `http_manage_client_side_cookies()`, called from
//! `http_process_request()`, and `http_manage_server_side_cookies()` with the insertion
//! in `http_process_res_common()` (src/http_ana.c).
//!
//! The request walk also runs on a request the `http-request` rules deny or tarpit, for
//! the log, as HAProxy does.
//!
//! COMPAT: `Set-Cookie2` headers are not looked at.

use rampart_cfg::model::{CookieMode, CookiePersist};

use crate::action::state::Persist;
use crate::http::cookie::{self, Capture, CkReq, CkRes, Dates, Edit, Lookup, ReqPersist, ResPersist};
use crate::http::MsgHead;
use crate::proxy::ServerRt;
use crate::server::SrvList;
use crate::stream::Stream;
use crate::stream::TxnData;

/// Walks the request's `Cookie` headers (slices into `buf`); returns the server the
/// persistence cookie chose, if any. Before backend switching, the frontend's own
/// `cookie` applies (HAProxy's `s->be` is the frontend until then).
pub fn request(s: &Stream<'_>, txn: &mut TxnData, buf: &[u8]) -> Option<usize> {
    let be = Some(&s.rt.proxies[s.be.unwrap_or(s.fe)]);
    let ck = be.and_then(|be| be.be.cookie.as_deref());
    let cap = s.rt.proxies[s.fe].fe.capture_cookie.as_ref();
    if ck.is_none() && cap.is_none() {
        return None;
    }
    let servers = &s.rt.proxies[s.be.unwrap_or(s.fe)].be.servers;
    let TxnData { req, scratch, st, .. } = txn;
    let prst = st.persist;
    // `ignore-persist`: the cookie is not read for persistence (captured still)
    let ck = ck.filter(|_| prst != Persist::Ignore);
    let persists = |sv: &ServerRt| be.is_some_and(|be| super::switching::persists(be, sv, prst));
    let log = &mut st.log.cookie;
    let mut persist = ck.map(|ck| ReqPersist {
        name: ck.name.as_bytes(),
        prefix: ck.mode == CookieMode::Prefix,
        strip: ck.mode == CookieMode::Insert && ck.indirect,
        assigned: s.srv.is_some_and(|i| servers.get(i).is_some_and(persists)),
        state: CkReq::None,
        srv: None,
        maxidle: ck.maxidle,
        maxlife: ck.maxlife,
        // PERF: the clock is read only when dates are judged
        now: if ck.maxidle != 0 || ck.maxlife != 0 { unix_now() } else { 0 },
        dates: Dates::default(),
    });
    let mut capture = cap.map(|(name, len)| Capture { name: &name[..], len: *len, out: &mut log.cli, done: false });
    let mut lookup = |id: &[u8]| find_server(servers, id, &persists);
    let mut from = 0;
    while let Some(i) = next_header(req, buf, from, b"cookie", scratch) {
        from = i + 1;
        let edit = cookie::client_side(scratch, persist.as_mut(), capture.as_mut(), &mut lookup);
        apply(req, i, edit, scratch);
    }
    let p = persist?;
    log.req = p.state;
    st.cookie_dates = p.dates;
    p.srv
}

/// The current date in Unix seconds (HAProxy's `date.tv_sec`).
fn unix_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// The first server (in order) whose cookie is `id` and that can take a request (up,
/// or persistence forced: `persists`), else whether one that is down carries it.
fn find_server(servers: &SrvList<ServerRt>, id: &[u8], persists: &dyn Fn(&ServerRt) -> bool) -> Lookup {
    let mut found = Lookup::None;
    for (i, srv) in servers.iter().enumerate() {
        if srv.cookie.as_deref() != Some(id) {
            continue;
        }
        if persists(srv) {
            return Lookup::Up(i);
        }
        found = Lookup::Down;
    }
    found
}

/// The index of the first header named `name` at or after entry `from`, its value
/// copied into `work`.
fn next_header(head: &MsgHead, buf: &[u8], from: usize, name: &[u8], work: &mut Vec<u8>) -> Option<usize> {
    let (i, _, v) = head.view(buf).headers().find(|&(i, n, _)| i >= from && n.eq_ignore_ascii_case(name))?;
    work.clear();
    work.extend_from_slice(v);
    Some(i)
}

/// Applies a walk's outcome to header `i` (a rewrite that does not fit is counted as a
/// failed one by the head).
fn apply(head: &mut MsgHead, i: usize, edit: Edit, work: &[u8]) {
    match edit {
        Edit::Keep => {}
        Edit::Changed => {
            let _ = head.set_header_value(i, work);
        }
        Edit::Remove => head.headers[i].drop = true,
    }
}

/// What the response side needs to know about the exchange.
pub struct ResInfo<'a> {
    pub s: &'a Stream<'a>,
    /// The server was chosen for the client and got the request (`SF_DIRECT`).
    pub direct: bool,
    /// The dates the request's cookie carried.
    pub dates: Dates,
    /// `ignore-persist` applied: the server's cookie is neither read nor inserted.
    pub ignore: bool,
}

/// Walks the server's `Set-Cookie` headers of `res` (slices into `buf`), then inserts
/// the backend's cookie where it must. `work` is scratch space.
pub fn response(x: ResInfo<'_>, res: &mut MsgHead, buf: &[u8], work: &mut Vec<u8>, log: &mut CookieLogRef<'_>) {
    let s = x.s;
    if res.status < 200 && res.status != 101 {
        return;
    }
    let be = s.be.map(|b| &s.rt.proxies[b]);
    let ck = be.and_then(|be| be.be.cookie.as_deref()).filter(|_| !x.ignore);
    let cap = s.rt.proxies[s.fe].fe.capture_cookie.as_ref();
    if ck.is_none() && cap.is_none() {
        return;
    }
    // the hidden server of `dispatch`/`transparent` is no server to HAProxy
    let srv = be.zip(s.srv).and_then(|(be, i)| be.be.servers.get(i)).filter(|sv| sv.is_shown());
    let persist = ck.map(|ck| ResPersist {
        name: ck.name.as_bytes(),
        preserve: ck.preserve,
        delete: (srv.is_some() && ck.mode == CookieMode::Insert) || (x.direct && ck.indirect),
        rewrite: srv.and_then(|sv| sv.cookie.as_deref()).and_then(|v| match ck.mode {
            CookieMode::Rewrite => Some((v, false)),
            CookieMode::Prefix => Some((v, true)),
            _ => None,
        }),
    });
    let mut capture = cap.map(|(name, len)| Capture { name: &name[..], len: *len, out: &mut *log.srv, done: false });
    let mut from = 0;
    while let Some(i) = next_header(res, buf, from, b"set-cookie", work) {
        from = i + 1;
        let edit = cookie::server_side(work, persist, capture.as_mut(), &mut *log.res);
        apply(res, i, edit, work);
    }
    if let (Some(ck), Some(srv)) = (ck, srv) {
        insert(ck, srv, &x, res, buf, work, &mut *log.res);
    }
}

/// The parts of the log record the response side writes.
pub struct CookieLogRef<'a> {
    pub res: &'a mut CkRes,
    pub srv: &'a mut Vec<u8>,
}

/// `insert`: adds the server's cookie unless the client came through it (or, with
/// `preserve`, the server set its own), only for POST with `postonly`. A client that
/// came through it gets it again when its dates need a change: `maxidle` and a last
/// date gone by, `maxlife` without a first date, a first date without `maxlife`.
fn insert(
    ck: &CookiePersist,
    srv: &ServerRt,
    x: &ResInfo<'_>,
    res: &mut MsgHead,
    buf: &[u8],
    work: &mut Vec<u8>,
    state: &mut CkRes,
) {
    let post = x.s.meth == Some(crate::http::Method::Post);
    let server_set = *state != CkRes::None;
    if ck.mode != CookieMode::Insert || (server_set && ck.preserve) || (ck.postonly && !post) {
        return;
    }
    let Dates { last, first } = x.dates;
    let dated = ck.maxidle != 0 || ck.maxlife != 0 || last != 0 || first != 0;
    let now = if dated { unix_now() } else { 0 };
    let refresh = ((ck.maxidle != 0 || last != 0) && (last == 0 || i64::from(last) < now))
        || (ck.maxlife != 0 && first == 0)
        || (ck.maxlife == 0 && first != 0);
    if x.direct && !refresh {
        return;
    }
    let cacheable = ck.nocache && cookie::cacheable(x.s.meth, res.view(buf));
    cookie::inserted_value(work, ck, srv.cookie.as_deref(), now, first);
    // a failed rewrite is counted in the head (no room left for it)
    let _ = res.add_header(b"set-cookie", work);
    *state = if srv.cookie.is_some() && x.direct { CkRes::Updated } else { CkRes::Inserted };
    if cacheable {
        let _ = res.add_header(b"cache-control", b"private");
    }
}
