//! The cookie walks of persistence and `capture cookie`: a request's `Cookie` header
//! value (many cookies, `;` or `,` separated) and a response's `Set-Cookie` value (one
//! cookie and its attributes), edited in a work buffer the way HAProxy edits them in
//! place: blanks around `=` removed, the persistence cookie (or its server prefix)
//! taken out of requests, a server's `Set-Cookie` deleted, rewritten or prefixed. Also
//! the `Set-Cookie` value rampart inserts, and the cacheability test of `nocache`.
//!
//! HAProxy counterparts: `http_manage_client_side_cookies()`,
//! `http_manage_server_side_cookies()`, the insertion in `http_process_res_common()`,
//! `http_check_response_for_cacheability()` (src/http_ana.c), `http_del_hdr_value()`.
//!
//! No I/O and no server state: the stream's analyser (`stream::ana::cookie`) finds the
//! headers and the servers.

use rampart_cfg::model::CookiePersist;

/// The persistence cookie's state in the request (the 3rd character of `%tsc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CkReq {
    /// `N`: no persistence cookie.
    #[default]
    None,
    /// `I`: it names no server.
    Invalid,
    /// `D`: it names a server that is down.
    Down,
    /// `V`: it names a usable server, which gets the request.
    Valid,
    /// `E`: not seen for longer than `maxidle` (or dated too far ahead).
    Expired,
    /// `O`: first issued longer ago than `maxlife` (or dated too far ahead).
    Old,
    /// `U`: present, but a rule had chosen the server already.
    Unused,
}

impl CkReq {
    pub fn code(self) -> u8 {
        match self {
            CkReq::None => b'N',
            CkReq::Invalid => b'I',
            CkReq::Down => b'D',
            CkReq::Valid => b'V',
            CkReq::Expired => b'E',
            CkReq::Old => b'O',
            CkReq::Unused => b'U',
        }
    }
}

/// What became of the persistence cookie in the response (the 4th character).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CkRes {
    /// `N`: none.
    #[default]
    None,
    /// `P`: the server set it and it went through untouched.
    Passive,
    /// `D`: the server's was deleted.
    Deleted,
    /// `I`: rampart inserted one.
    Inserted,
    /// `R`: the server's was rewritten or prefixed.
    Rewritten,
    /// `U`: the client's was valid; inserted again with a new date (`maxidle`).
    Updated,
}

impl CkRes {
    pub fn code(self) -> u8 {
        match self {
            CkRes::None => b'N',
            CkRes::Passive => b'P',
            CkRes::Deleted => b'D',
            CkRes::Inserted => b'I',
            CkRes::Rewritten => b'R',
            CkRes::Updated => b'U',
        }
    }
}

/// What a walk did to the header value it was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    Keep,
    /// The work buffer holds the new value.
    Changed,
    /// The header goes.
    Remove,
}

/// `capture cookie <name> len <n>`: the first cookie whose `name=value` starts with
/// `name`, cut to `len` bytes, goes into `out` (which stays empty until then).
#[derive(Debug)]
pub struct Capture<'a> {
    pub name: &'a [u8],
    pub len: usize,
    pub out: &'a mut Vec<u8>,
    /// A cookie was captured already (only the first one is kept).
    pub done: bool,
}

impl Capture<'_> {
    /// Captures `item` (`name=value`) if it is the first to match.
    fn offer(&mut self, item: &[u8]) {
        if !self.done && item.len() >= self.name.len() && item.starts_with(self.name) {
            self.out.clear();
            self.out.extend_from_slice(&item[..item.len().min(self.len)]);
            self.done = true;
        }
    }
}

/// The servers a cookie value may name, as the request walk asks about them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// A server with this cookie can take the request.
    Up(usize),
    /// Only servers that are down carry it.
    Down,
    /// No server carries it.
    None,
}

/// The request side of persistence: the backend's cookie and what was decided so far.
#[derive(Debug)]
pub struct ReqPersist<'a> {
    pub name: &'a [u8],
    /// `prefix` mode: the value is `<server>~<application value>`.
    pub prefix: bool,
    /// `insert indirect`: the cookie is removed before the request leaves.
    pub strip: bool,
    /// A server is already chosen (`use-server`, or an earlier cookie).
    pub assigned: bool,
    pub state: CkReq,
    /// The server the cookie chose.
    pub srv: Option<usize>,
    /// `maxidle`, `maxlife` in seconds (0: off), and the current date (Unix seconds).
    pub maxidle: u32,
    pub maxlife: u32,
    pub now: i64,
    /// The dates the cookie carried (`|<last seen>|<first issued>`, Unix seconds in
    /// 4-second steps; 0: none).
    pub dates: Dates,
}

/// The dates of a persistence cookie (Unix seconds; 0: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Dates {
    pub last: u32,
    pub first: u32,
}

fn is_sp(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

/// The end of a cookie value starting at `v[i]`: the first `,` or `;` outside double
/// quotes (a backslash escapes inside them), or the end.
fn value_end(v: &[u8], mut i: usize) -> usize {
    let (mut quoted, mut escaped) = (false, false);
    while i < v.len() {
        let c = v[i];
        if escaped {
            escaped = false;
        } else if quoted {
            escaped = c == b'\\';
            quoted = c != b'"';
        } else if c == b'"' {
            quoted = true;
        } else if c == b',' || c == b';' {
            return i;
        }
        i += 1;
    }
    i
}

/// One `name=value` of a header value, by offsets: the name is `att_beg..att_end`,
/// `equal` is the `=` (or the delimiter / end when there is none), the value is
/// `val_beg..val_end`, and `next` is the delimiter after it (or the end).
#[derive(Debug, Clone, Copy)]
struct Item {
    att_beg: usize,
    att_end: usize,
    equal: usize,
    val_beg: usize,
    val_end: usize,
    next: usize,
}

impl Item {
    /// The item starting at `prev` (the previous delimiter unless `first`). `comma`:
    /// a comma ends a name too (a `Cookie` header; not `Set-Cookie`).
    fn at(v: &[u8], prev: usize, first: bool, comma: bool) -> Item {
        let mut att_beg = if first { prev } else { prev + 1 };
        while att_beg < v.len() && is_sp(v[att_beg]) {
            att_beg += 1;
        }
        let (mut equal, mut att_end) = (att_beg, att_beg);
        while equal < v.len() {
            let c = v[equal];
            if c == b'=' || c == b';' || (comma && c == b',') {
                break;
            }
            equal += 1;
            if !is_sp(c) {
                att_end = equal;
            }
        }
        if equal < v.len() && v[equal] == b'=' {
            let mut val_beg = equal + 1;
            while val_beg < v.len() && is_sp(v[val_beg]) {
                val_beg += 1;
            }
            let next = value_end(v, val_beg);
            let mut val_end = next;
            while val_end > val_beg && is_sp(v[val_end - 1]) {
                val_end -= 1;
            }
            Item { att_beg, att_end, equal, val_beg, val_end, next }
        } else {
            Item { att_beg, att_end, equal, val_beg: equal, val_end: equal, next: equal }
        }
    }

    /// Removes the blanks around `=`, as HAProxy does before it captures or rewrites;
    /// `true` if there were some.
    fn tighten(&mut self, v: &mut Vec<u8>) -> bool {
        let before = self.equal - self.att_end;
        let after = self.val_beg - (self.equal + 1);
        if before == 0 && after == 0 {
            return false;
        }
        v.drain(self.equal + 1..self.val_beg);
        v.drain(self.att_end..self.equal);
        let cut = before + after;
        self.equal = self.att_end;
        self.val_beg = self.equal + 1;
        self.val_end -= cut;
        self.next -= cut;
        true
    }
}

/// Removes the cookies from the delimiter at `from` up to the delimiter at `next`,
/// keeping the separators tidy (`a=1; X=2; b=3` loses `X=2; `). Returns how many
/// bytes went (everything after `next` moved back by that much).
fn del_value(v: &mut Vec<u8>, from: usize, next: usize) -> usize {
    let (mut prev, mut next) = (from, next);
    if prev == 0 {
        // the first cookie: its delimiter and the blanks after it go too
        if next < v.len() {
            next += 1;
        }
        while next < v.len() && is_sp(v[next]) {
            next += 1;
        }
    } else {
        while prev > 0 && is_sp(v[prev - 1]) {
            prev -= 1;
        }
        if next < v.len() {
            // keep one delimiter and, if room, one space
            v[prev] = v[next];
            prev += 1;
            next += 1;
            if prev + 1 < next {
                v[prev] = b' ';
                prev += 1;
            }
            while next < v.len() && is_sp(v[next]) {
                next += 1;
            }
        }
    }
    v.drain(prev..next);
    next - prev
}

/// Walks one `Cookie` header value held in `v`: captures, finds the persistence
/// cookie (asking `lookup` which server its value names) and removes it or its prefix
/// as the mode wants.
pub fn client_side(
    v: &mut Vec<u8>,
    mut persist: Option<&mut ReqPersist<'_>>,
    mut capture: Option<&mut Capture<'_>>,
    lookup: &mut dyn FnMut(&[u8]) -> Lookup,
) -> Edit {
    let mut changed = false;
    let mut del_from: Option<usize> = None;
    let mut preserve = false;
    let (mut prev, mut first) = (0, true);
    while prev < v.len() {
        let mut it = Item::at(v, prev, first, true);
        first = false;
        if v.get(it.att_beg) == Some(&b'$') {
            // an RFC 2109 attribute: goes with the cookie before it
            prev = it.next;
            continue;
        }
        if it.equal == it.next {
            // no value: not a cookie of ours, kept
            preserve = true;
            if let Some(from) = del_from.take() {
                it.next -= del_value(v, from, prev);
                changed = true;
            }
            prev = it.next;
            continue;
        }
        changed |= it.tighten(v);
        if let Some(c) = capture.as_deref_mut() {
            c.offer(&v[it.att_beg..it.val_end]);
        }
        let ours = persist.as_deref().is_some_and(|p| &v[it.att_beg..it.att_end] == p.name);
        match persist.as_deref_mut().filter(|_| ours) {
            Some(p) => {
                let delim = server_id_end(v, &it, p.prefix);
                let fresh = p.prefix || read_dates(p, &v[delim..it.val_end]);
                let empty = delim == it.val_beg || !fresh;
                choose(p, &v[it.val_beg..delim], empty, lookup);
                if p.prefix && delim != it.val_end {
                    // the request goes on with the application's own value
                    v.drain(it.val_beg..=delim);
                    it.next -= delim + 1 - it.val_beg;
                    changed = true;
                    del_from = None;
                    preserve = true;
                } else if del_from.is_none() && p.strip {
                    del_from = Some(prev);
                }
            }
            None => {
                preserve = true;
                if let Some(from) = del_from.take() {
                    it.next -= del_value(v, from, prev);
                    changed = true;
                }
            }
        }
        prev = it.next;
    }
    if let Some(from) = del_from {
        v.truncate(if preserve { from } else { 0 });
        changed = true;
    }
    match (v.is_empty(), changed) {
        (true, _) => Edit::Remove,
        (false, true) => Edit::Changed,
        (false, false) => Edit::Keep,
    }
}

/// Where the server's part of the persistence cookie value ends: at the `~` of prefix
/// mode, else at a `|` (the dates of `maxidle`/`maxlife` follow it), else at the end.
fn server_id_end(v: &[u8], it: &Item, prefix: bool) -> usize {
    let sep = if prefix { b'~' } else { b'|' };
    memchr::memchr(sep, &v[it.val_beg..it.val_end]).map_or(it.val_end, |i| it.val_beg + i)
}

/// Reads the dates after the server part (`rest` starts at its `|`, if any), then
/// judges them against `maxlife` and `maxidle` (a date more than a day ahead is wrong
/// too); `false` when the cookie is too old or idle too long: it is then ignored.
fn read_dates(p: &mut ReqPersist<'_>, rest: &[u8]) -> bool {
    if let Some(after) = rest.strip_prefix(b"|") {
        if let Some(d) = after.get(..5).and_then(b64_to_s30) {
            p.dates.last = d << 2;
        }
        if let Some(bar) = memchr::memchr(b'|', after) {
            if let Some(d) = after.get(bar + 1..bar + 6).and_then(b64_to_s30) {
                p.dates.first = d << 2;
            }
        }
    }
    let (last, first) = (i64::from(p.dates.last), i64::from(p.dates.first));
    let off = |date: i64, max: u32| p.now - date > i64::from(max) || date - p.now > 86_400;
    let verdict = if first != 0 && p.maxlife != 0 && off(first, p.maxlife) {
        CkReq::Old
    } else if last != 0 && p.maxidle != 0 && off(last, p.maxidle) {
        CkReq::Expired
    } else {
        return true;
    };
    p.state = verdict;
    p.dates = Dates::default();
    false
}

/// The standard base64 alphabet, as HAProxy writes cookie dates.
const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// A 30-bit value from 5 base64 characters; `None` if one is not base64 or the value
/// is 0 (HAProxy's `b64tos30`, whose non-positive results are ignored).
fn b64_to_s30(s: &[u8]) -> Option<u32> {
    let v = s.iter().try_fold(0u32, |acc, &c| Some((acc << 6) | B64.iter().position(|&b| b == c)? as u32))?;
    (v > 0).then_some(v)
}

/// Appends `v` (30 bits) as 5 base64 characters (HAProxy's `s30tob64`).
pub fn s30_to_b64(out: &mut Vec<u8>, v: u32) {
    for shift in [24, 18, 12, 6, 0] {
        out.push(B64[((v >> shift) & 0x3F) as usize]);
    }
}

/// Records what the persistence cookie's value `id` says (`empty`: no server part).
fn choose(p: &mut ReqPersist<'_>, id: &[u8], empty: bool, lookup: &mut dyn FnMut(&[u8]) -> Lookup) {
    let found = if empty || p.assigned { Lookup::None } else { lookup(id) };
    match found {
        Lookup::Up(srv) => {
            p.state = CkReq::Valid;
            p.srv = Some(srv);
            p.assigned = true;
        }
        Lookup::Down => p.state = CkReq::Down,
        // as HAProxy (whose test of `TX_CK_DOWN|EXPIRED|OLD` matches every state but
        // none and invalid), a later cookie naming nobody changes only those two
        Lookup::None if !matches!(p.state, CkReq::None | CkReq::Invalid) => {}
        Lookup::None => p.state = if p.assigned { CkReq::Unused } else { CkReq::Invalid },
    }
}

/// The response side of persistence for one `Set-Cookie` of the server.
#[derive(Debug, Clone, Copy)]
pub struct ResPersist<'a> {
    pub name: &'a [u8],
    /// `preserve`: the server's cookie is left alone.
    pub preserve: bool,
    /// The server's cookie goes: rampart inserts its own (`insert` on a known server),
    /// or the client came through the cookie (`indirect`).
    pub delete: bool,
    /// `rewrite` (`false`) or `prefix` (`true`) with the chosen server's cookie.
    pub rewrite: Option<(&'a [u8], bool)>,
}

/// Walks one `Set-Cookie` header value held in `v`: captures, then deletes, rewrites
/// or prefixes the persistence cookie; `state` records what happened.
pub fn server_side(
    v: &mut Vec<u8>,
    persist: Option<ResPersist<'_>>,
    capture: Option<&mut Capture<'_>>,
    state: &mut CkRes,
) -> Edit {
    let mut it = Item::at(v, 0, true, false);
    if it.equal == it.val_end {
        // not `name=value`
        return Edit::Keep;
    }
    let changed = it.tighten(v);
    if let Some(c) = capture {
        c.offer(&v[it.att_beg..it.val_end]);
    }
    let Some(p) = persist.filter(|p| &v[it.att_beg..it.att_end] == p.name) else {
        return if changed { Edit::Changed } else { Edit::Keep };
    };
    *state = CkRes::Passive;
    if p.preserve {
    } else if p.delete {
        *state = CkRes::Deleted;
        return Edit::Remove;
    } else if let Some((srv, prefix)) = p.rewrite {
        *state = CkRes::Rewritten;
        if prefix {
            let at = it.val_beg;
            v.splice(at..at, srv.iter().copied().chain([b'~']));
        } else {
            v.splice(it.val_beg..it.val_end, srv.iter().copied());
        }
        return Edit::Changed;
    }
    if changed {
        Edit::Changed
    } else {
        Edit::Keep
    }
}

/// The value of the `Set-Cookie` rampart inserts for a server whose cookie is `srv`
/// (a server without one gets an expired, empty cookie, so the client forgets it).
/// With `maxidle` or `maxlife`, the value carries the date it was last seen (`now`,
/// Unix seconds) and with `maxlife` the date it was first issued (`first`, else now).
pub fn inserted_value(out: &mut Vec<u8>, ck: &CookiePersist, srv: Option<&[u8]>, now: i64, first: u32) {
    out.clear();
    out.extend_from_slice(ck.name.as_bytes());
    out.push(b'=');
    match srv {
        Some(v) => {
            out.extend_from_slice(v);
            if ck.maxidle != 0 || ck.maxlife != 0 {
                // 4-second steps, rounded up (HAProxy: `(date + 3) >> 2`)
                let quarter = ((now + 3) >> 2) as u32;
                out.push(b'|');
                s30_to_b64(out, quarter);
                if ck.maxlife != 0 {
                    out.push(b'|');
                    s30_to_b64(out, if first != 0 { first >> 2 } else { quarter });
                }
            }
            out.extend_from_slice(b"; path=/");
        }
        None => out.extend_from_slice(b"; Expires=Thu, 01-Jan-1970 00:00:01 GMT; path=/"),
    }
    if let Some(d) = &ck.domain {
        out.extend_from_slice(b"; domain=");
        out.extend_from_slice(d.as_bytes());
    }
    if ck.httponly {
        out.extend_from_slice(b"; HttpOnly");
    }
    if ck.secure {
        out.extend_from_slice(b"; Secure");
    }
    if let Some(a) = &ck.attrs {
        out.extend_from_slice(b"; ");
        out.extend_from_slice(a.as_bytes());
    }
}

/// Whether a shared cache could store this response (`nocache` then marks it
/// private), as HAProxy judges: a GET, HEAD, OPTIONS or TRACE request, a status
/// cacheable by default (RFC 7231 §6.1), no `Pragma: no-cache`, no `Cache-Control`
/// saying otherwise (`public` says yes whatever the method), and an expiry or a
/// validator (`max-age`, `Expires`, `ETag`, `Last-Modified`).
pub fn cacheable(meth: Option<rampart_proto::http::Method>, res: super::MsgView<'_>) -> bool {
    use rampart_proto::http::Method;
    let mut ok = matches!(meth, Some(Method::Get | Method::Head | Method::Options | Method::Trace))
        && matches!(res.head.status, 200 | 203 | 204 | 206 | 300 | 301 | 404 | 405 | 410 | 414 | 501);
    if res.first(b"pragma").is_some_and(|v| v.eq_ignore_ascii_case(b"no-cache")) {
        return false;
    }
    let mut fresh = false;
    for v in res.values(b"cache-control") {
        let starts = |p: &[u8]| v.len() >= p.len() && v[..p.len()].eq_ignore_ascii_case(p);
        if v.eq_ignore_ascii_case(b"public") {
            ok = true;
        } else if [&b"private"[..], b"no-cache", b"no-store", b"max-age=0", b"s-maxage=0"]
            .iter()
            .any(|p| v.eq_ignore_ascii_case(p))
        {
            ok = false;
        } else if starts(b"s-maxage") || starts(b"max-age") {
            fresh = true;
        }
    }
    fresh = fresh || res.first(b"expires").is_some();
    let validated = res.first(b"etag").is_some() || res.first(b"last-modified").is_some();
    ok && (fresh || validated)
}

/// Whether a shared cache could store this response with its `Set-Cookie` (`option
/// checkcache`): [`cacheable`], and no `Cache-Control: no-cache="set-cookie"` keeping
/// the cookie out of the cache.
pub fn cacheable_with_cookie(meth: Option<rampart_proto::http::Method>, res: super::MsgView<'_>) -> bool {
    let cookie_excluded = |v: &[u8]| {
        let p = b"no-cache=\"set-cookie";
        v.len() >= p.len() && v[..p.len()].eq_ignore_ascii_case(p)
    };
    cacheable(meth, res) && !res.values(b"cache-control").any(cookie_excluded)
}

#[cfg(test)]
#[path = "cookie_tests.rs"]
mod tests;
