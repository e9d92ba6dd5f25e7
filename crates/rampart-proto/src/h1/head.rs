//! Request and response heads: the start line (`startline`), the header fields on
//! httparse, then the checks httparse leaves to us: framing headers, `Connection`
//! tokens and hop-by-hop headers, Host against the target, WebSocket handshake, size
//! limit. The result decides how the body is delimited ([`Framing`]).
//!
//! HAProxy counterpart: `h1_headers_to_hdr_list` (src/h1.c), `h1_postparse_req_hdrs`
//! and `h1_postparse_res_hdrs` (src/h1_htx.c), and the checks `h1_handle_headers`
//! (src/mux_h1.c) makes before accepting a message. Behaviours were checked against
//! haproxy 2.6.12 with raw requests; where rampart differs, a `COMPAT:` note says so.
//!
//! COMPAT: header values follow httparse, stricter than HAProxy: control characters
//! other than HTAB (NUL included) are refused where HAProxy forwards them, and obsolete
//! line folding is refused (RFC 9112 §5.2 allows it) where HAProxy replaces it by
//! spaces, since the codec does not rewrite the buffer.
//!
//! Not here: HTTP/2 preface detection (see [`is_h2_preface`]), lowercasing and
//! rewriting headers on output (`write`), the `Connection` header the runtime emits.

use super::fields::{self, TransferCodings};
use super::startline::{self, RequestLine, StatusLine};
use super::target::{self, Form, Target};
use super::types::{max_headers, Framing, H1Error, HdrKind, Head, Header, Method, Slice, Version, MAX_HEADERS};

/// The HTTP/2 connection preface: a client that starts with it speaks h2 directly.
pub const H2_PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Whether `buf` starts with the HTTP/2 preface: `None` while `buf` is a strict
/// prefix of it. HAProxy's H1 mux upgrades to h2 on it (when the bind has no `proto`).
pub fn is_h2_preface(buf: &[u8]) -> Option<bool> {
    let n = buf.len().min(H2_PREFACE.len());
    if buf[..n] != H2_PREFACE[..n] {
        Some(false)
    } else if n < H2_PREFACE.len() {
        None
    } else {
        Some(true)
    }
}

/// Parses the request head at the start of `buf` into `head` (reset first).
/// `Ok(true)`: complete, `head.len` bytes consumed. `Ok(false)`: more bytes needed.
/// A head that is not complete within `max_len` bytes is [`H1Error::TooLarge`].
///
/// Empty lines before the request line are skipped (they count in `head.len`). Only
/// the first `max_len` bytes are read, so a complete head is never longer than that,
/// and an error is the same whether the bytes arrive at once or piecewise. Unless
/// `Ok(true)` is returned, what `head` holds is unspecified.
pub fn parse_request(buf: &[u8], max_len: usize, head: &mut Head) -> Result<bool, H1Error> {
    head.reset();
    let (window, full) = window(buf, max_len);
    let Some(start) = startline::skip_empty_lines(window)? else { return incomplete(full) };
    let (relax, mut err_pos) = (head.relax, None);
    let Some(line) = startline::parse_request_line(window, start, relax, &mut err_pos)? else {
        return incomplete(full);
    };
    head.err_pos = err_pos;
    set_request_line(head, &line);
    if !parse_fields(window, line.end, head)? {
        return incomplete(full);
    }
    finish_request(window, head)?;
    Ok(true)
}

/// Parses a response head; `req_method` decides whether a body may follow (HEAD,
/// CONNECT). Same contract as [`parse_request`]. An interim (1xx) response is a
/// complete head of its own: parse again after it for the final response.
pub fn parse_response(buf: &[u8], max_len: usize, req_method: Method, head: &mut Head) -> Result<bool, H1Error> {
    head.reset();
    let (window, full) = window(buf, max_len);
    let Some(start) = startline::skip_empty_lines(window)? else { return incomplete(full) };
    let Some(line) = startline::parse_status_line(window, start, head.relax)? else { return incomplete(full) };
    set_status_line(head, &line);
    if !parse_fields(window, line.end, head)? {
        return incomplete(full);
    }
    finish_response(window, req_method, head)?;
    Ok(true)
}

/// The part of `buf` the parser may read (offsets must fit a `u32`), and whether the
/// caller can give no more bytes (so incomplete means too large).
fn window(buf: &[u8], max_len: usize) -> (&[u8], bool) {
    let max_len = max_len.min(u32::MAX as usize);
    (&buf[..buf.len().min(max_len)], buf.len() >= max_len)
}

fn incomplete(full: bool) -> Result<bool, H1Error> {
    if full {
        Err(H1Error::TooLarge)
    } else {
        Ok(false)
    }
}

fn set_request_line(head: &mut Head, line: &RequestLine) {
    head.method = line.method;
    head.method_raw = line.method_raw;
    head.uri = line.uri;
    head.version = line.version;
}

fn set_status_line(head: &mut Head, line: &StatusLine) {
    head.status = line.status;
    head.reason = line.reason;
    head.version = line.version;
}

// === header fields ===

/// Header slots tried first: enough for nearly every message, and cheap to initialise.
const FIRST_SLOTS: usize = 24;

/// Parses the header fields starting at `from` into `head.headers` (offsets into
/// `buf`, kinds set) and sets `head.len`. `Ok(false)`: incomplete.
fn parse_fields(buf: &[u8], from: usize, head: &mut Head) -> Result<bool, H1Error> {
    // PERF: httparse wants initialised slots. Zeroing 24 costs little; a message with
    // more fields is parsed again with room for all MAX_HEADERS, out of line.
    let mut few = [httparse::EMPTY_HEADER; FIRST_SLOTS];
    match parse_fields_into(buf, from, &mut few, head) {
        Err(H1Error::TooManyHeaders) => parse_many_fields(buf, from, head),
        // `tune.http.maxhdr` below the first slots: one compare per complete head
        Ok(true) if head.headers.len() > max_headers() => Err(H1Error::TooManyHeaders),
        done => done,
    }
}

/// [`parse_fields`] again with room for [`max_headers`] fields. PERF: out of line so that
/// its 3 KiB of slots are not part of every parse's stack frame: a larger frame pushes
/// everything the parser calls onto stack lines the request has not touched yet (data
/// cache misses per request, `scripts/bench-instr.py --cache`).
#[cold]
#[inline(never)]
fn parse_many_fields(buf: &[u8], from: usize, head: &mut Head) -> Result<bool, H1Error> {
    head.headers.clear();
    let max = max_headers();
    if max <= MAX_HEADERS {
        let mut all = [httparse::EMPTY_HEADER; MAX_HEADERS];
        return parse_fields_into(buf, from, &mut all[..max], head);
    }
    // `tune.http.maxhdr` above the default: slots for the limit, only for a message
    // with more fields than the default allows
    let mut all = vec![httparse::EMPTY_HEADER; max];
    parse_fields_into(buf, from, &mut all, head)
}

/// [`parse_fields`] with the slots given.
fn parse_fields_into<'b>(
    buf: &'b [u8],
    from: usize,
    slots: &mut [httparse::Header<'b>],
    head: &mut Head,
) -> Result<bool, H1Error> {
    let (n, fields) = match httparse::parse_headers(&buf[from..], slots) {
        Ok(httparse::Status::Complete(done)) => done,
        Ok(httparse::Status::Partial) => return Ok(false),
        Err(httparse::Error::TooManyHeaders) => return Err(H1Error::TooManyHeaders),
        Err(httparse::Error::HeaderName) if head.relax => return super::relaxed::parse_fields(buf, from, head),
        Err(_) => return Err(H1Error::HeaderSyntax),
    };
    let base = buf.as_ptr() as usize;
    let offset = |part: &[u8]| (part.as_ptr() as usize - base) as u32;
    // grows only for a message with more fields than any before on this Head
    head.headers.reserve(fields.len());
    for f in fields {
        let name = f.name.as_bytes();
        let (start, vstart) = (offset(name), offset(f.value));
        head.headers.push(Header {
            name: Slice { start, end: start + name.len() as u32 },
            value: Slice { start: vstart, end: vstart + f.value.len() as u32 },
            kind: HdrKind::classify(name),
            drop: false,
        });
    }
    head.len = from + n;
    Ok(true)
}

/// What one pass over the header fields found, beyond what goes into `Head`.
#[derive(Default)]
struct Found {
    content_length: Option<u64>,
    te: TransferCodings,
    /// Index of the `Host` header (requests; a second one is an error).
    host: Option<usize>,
    /// Index of the first `Upgrade` header.
    upgrade: Option<usize>,
    /// The last `Upgrade` header names `websocket` (as `h1_parse_upgrade_header`).
    upgrade_websocket: bool,
    /// A `Sec-WebSocket-Key` of 24 bytes (request) / a `Sec-WebSocket-Accept` (response).
    websocket_key: bool,
    /// Some `Connection` header names other headers.
    conn_names_headers: bool,
    /// The first `Expect` header was found; it asks for `100-continue`.
    expect: Option<bool>,
}

/// Reads the value of every header whose kind matters, in order; marks the
/// hop-by-hop ones and the duplicates to drop.
fn scan_fields(buf: &[u8], head: &mut Head, is_response: bool) -> Result<Found, H1Error> {
    let mut found = Found::default();
    for i in 0..head.headers.len() {
        let h = head.headers[i];
        let value = h.value.get(buf);
        match h.kind {
            HdrKind::Other | HdrKind::Trailer => {}
            HdrKind::ContentLength => {
                let first = found.content_length.is_none();
                let (s, e) = fields::content_length(value, &mut found.content_length)?;
                let hdr = &mut head.headers[i];
                hdr.value = Slice { start: h.value.start + s as u32, end: h.value.start + e as u32 };
                // HAProxy forwards the first Content-Length only
                hdr.drop = !first;
            }
            HdrKind::TransferEncoding => fields::transfer_encoding(value, &mut found.te)?,
            HdrKind::Connection => found.conn_names_headers |= fields::connection(value, &mut head.conn),
            HdrKind::KeepAlive | HdrKind::ProxyConnection => head.headers[i].drop = true,
            // COMPAT: as HAProxy, a request's `TE` survives only as `te: trailers`, when
            // it names `trailers` without parameters (the runtime writes that value).
            HdrKind::Te => head.headers[i].drop = is_response || !fields::has_token(value, b"trailers"),
            HdrKind::Upgrade => {
                found.upgrade.get_or_insert(i);
                found.upgrade_websocket = fields::has_token(value, b"websocket");
            }
            // RFC 9112 §3.2: several Host lines are a 400, even equal ones (HAProxy
            // merges equal ones; two parsers could pick different ones otherwise).
            HdrKind::Host if !is_response => match found.host {
                None => found.host = Some(i),
                Some(_) => return Err(H1Error::Host),
            },
            HdrKind::Host => {}
            HdrKind::Expect => {
                // HAProxy looks at the first item of the first Expect header only
                if found.expect.is_none() {
                    found.expect =
                        Some(fields::Items::new(value).next().is_some_and(|v| v.eq_ignore_ascii_case(b"100-continue")));
                }
            }
            HdrKind::SecWebSocketKey => found.websocket_key |= !is_response && value.len() == 24,
            HdrKind::SecWebSocketAccept => found.websocket_key |= is_response,
        }
    }
    if found.conn_names_headers {
        drop_named_by_connection(buf, head);
    }
    Ok(found)
}

/// Most `Connection` tokens naming headers that are honoured. Real messages name one
/// or two; the cap keeps a crafted head (thousands of tokens times 100 headers) from
/// costing more than a few thousand comparisons. Headers named past it are forwarded,
/// as HAProxy 2.6 forwards them all.
const MAX_NAMED_BY_CONNECTION: usize = 32;

/// Marks `drop` on the headers named by `Connection` tokens (RFC 9110 §7.6.1).
// COMPAT: HAProxy 2.6 forwards them; rampart removes them as the RFC asks a proxy to.
// Only headers of kind `Other` (and the hop-by-hop kinds, dropped anyway) can be named
// this way: a client must not be able to remove framing or Host headers.
fn drop_named_by_connection(buf: &[u8], head: &mut Head) {
    let mut named: [&[u8]; MAX_NAMED_BY_CONNECTION] = [&[]; MAX_NAMED_BY_CONNECTION];
    let mut n = 0;
    let connection = head.headers.iter().filter(|h| h.kind == HdrKind::Connection);
    for token in connection.flat_map(|h| fields::connection_others(h.value.get(buf))).take(named.len()) {
        named[n] = token;
        n += 1;
    }
    for h in head.headers.iter_mut() {
        let droppable = matches!(h.kind, HdrKind::Other | HdrKind::KeepAlive | HdrKind::ProxyConnection | HdrKind::Te);
        if droppable && named[..n].iter().any(|t| h.name.get(buf).eq_ignore_ascii_case(t)) {
            h.drop = true;
        }
    }
}

/// Marks `drop` on every header of kind `kind`.
fn drop_all(head: &mut Head, kind: HdrKind) {
    for h in head.headers.iter_mut().filter(|h| h.kind == kind) {
        h.drop = true;
    }
}

/// Framing headers common to both directions: TE wins over CL, and the connection is
/// closed after a message framed both ways or chunked in HTTP/1.0.
fn resolve_te_and_cl(head: &mut Head, found: &Found) {
    if !found.te.present {
        return;
    }
    if found.content_length.is_some() {
        head.cl_and_te = true;
        head.force_close = true;
        drop_all(head, HdrKind::ContentLength);
    } else if head.version == Version::Http10 {
        head.force_close = true;
    }
}

/// Keeps the `Upgrade` headers (and points at the first) when `Connection: upgrade`
/// asks for it, else marks them to drop.
fn resolve_upgrade(head: &mut Head, found: &Found) {
    match found.upgrade {
        Some(i) if head.conn.upgrade => {
            head.upgrade = Some(i as u16);
            head.websocket = found.upgrade_websocket;
        }
        _ => drop_all(head, HdrKind::Upgrade),
    }
}

// === requests ===

/// The checks on a complete request head, in HAProxy's order (first error wins), then
/// rampart's stricter ones on the target, Host and Transfer-Encoding.
fn finish_request(buf: &[u8], head: &mut Head) -> Result<(), H1Error> {
    let target = target::classify(head.uri.get(buf), head.method, head.relax)?;
    let found = scan_fields(buf, head, false)?;
    check_host(buf, head, &found, &target)?;
    // RFC 9112 §6.3: a request whose last coding is not chunked cannot be framed (400);
    // then, as HAProxy, `identity, chunked` is a 422
    if found.te.present && !found.te.chunked {
        return Err(H1Error::TransferEncoding);
    }
    if found.te.identity {
        return Err(H1Error::Identity);
    }
    // RFC 9112 §6.1: Transfer-Encoding in HTTP/1.0 means an HTTP/1.0 hop may have
    // forwarded chunks it did not understand; the framing cannot be trusted.
    // COMPAT: HAProxy forwards such a request and closes afterwards.
    if found.te.present && head.version == Version::Http10 {
        return Err(H1Error::TransferEncoding);
    }
    resolve_te_and_cl(head, &found);
    head.framing = if head.method == Method::Connect {
        // a CONNECT request has no body: what follows is the tunnel
        drop_all(head, HdrKind::ContentLength);
        drop_all(head, HdrKind::TransferEncoding);
        Framing::None
    } else if found.te.present {
        Framing::Chunked
    } else {
        found.content_length.map_or(Framing::None, Framing::Length)
    };
    let has_body = matches!(head.framing, Framing::Chunked) || matches!(head.framing, Framing::Length(n) if n > 0);
    if head.version == Version::Http10 && has_body && matches!(head.method, Method::Get | Method::Head | Method::Delete)
    {
        return Err(H1Error::PayloadForbidden);
    }
    // `http_handle_expect_hdr`: only an HTTP/1.1 request with a length or chunks
    let framed = matches!(head.framing, Framing::Chunked | Framing::Length(_));
    head.expect_continue = found.expect == Some(true) && head.version == Version::Http11 && framed;
    if has_body {
        // HAProxy gives up the upgrade of a request that carries a body
        head.conn.upgrade = false;
    }
    resolve_upgrade(head, &found);
    if head.websocket && !found.websocket_key {
        return Err(H1Error::WebSocket);
    }
    Ok(())
}

/// `Host` against the request target (RFC 9112 §3.2, §3.2.2, §3.2.3; see `target`):
/// required in HTTP/1.1, a valid `uri-host [ ":" port ]`, empty only when the target
/// has no authority, equal to the authority when it has one. Then the two are made
/// identical on output: a CONNECT to a default port makes the Host value lose its
/// `:port` (as HAProxy); an absolute-form target's authority (without a default port)
/// becomes the value of `Host`, since it is what a server must use (RFC 9112 §3.2.2).
fn check_host(buf: &[u8], head: &mut Head, found: &Found, target: &Target) -> Result<(), H1Error> {
    let host = found.host.map(|i| head.headers[i].value.get(buf));
    match host {
        None if head.version == Version::Http11 => return Err(H1Error::Host),
        Some(b"") if target.has_authority() => return Err(H1Error::Host),
        Some(v) if !v.is_empty() && !target::is_valid_host(v) => return Err(H1Error::Host),
        _ => {}
    }
    let uri = head.uri.get(buf);
    let authority = &uri[target.authority.clone()];
    match target.form {
        Form::Authority => {
            if let (Some(cut), Some(i)) = (target::check_connect_authority(authority, host)?, found.host) {
                let v = &mut head.headers[i].value;
                v.end = v.start + cut as u32;
            }
        }
        Form::Absolute => {
            if let Some(host) = host {
                target::check_absolute_authority(&uri[target.scheme.clone()], authority, host)?;
            }
            normalize_absolute(head, target);
        }
        Form::Origin | Form::Asterisk => {}
    }
    Ok(())
}

/// HAProxy's scheme-based normalization (`http_scheme_based_normalize`), extended: the
/// default (or empty, `http://a:/`) port of an absolute-form target is left out of the
/// target on output, and the `Host` value becomes the target's authority (without that
/// port).
///
/// COMPAT: HAProxy 2.6 rewrites `Host` only when it cuts a port: `http://a/` with
/// `Host: a:80` (or `a:`, or `A`) goes out with that `Host`; rampart sends `a`, as
/// RFC 9112 §3.2.2 asks a proxy to (reg-test `h1_host_normalization`, cases C22, C26).
fn normalize_absolute(head: &mut Head, target: &Target) {
    let at = |off: usize| head.uri.start + off as u32;
    let mut authority = Slice { start: at(target.authority.start), end: at(target.authority.end) };
    if let Some(port) = &target.default_port {
        head.uri_cut = Slice { start: at(port.start), end: at(port.end) };
        authority.end = head.uri_cut.start;
    }
    for h in head.headers.iter_mut().filter(|h| h.kind == HdrKind::Host) {
        h.value = authority;
    }
}

// === responses ===

/// The checks on a complete response head and its framing (RFC 9112 §6.3).
fn finish_response(buf: &[u8], req_method: Method, head: &mut Head) -> Result<(), H1Error> {
    let found = scan_fields(buf, head, true)?;
    // as HAProxy, whatever the status and the request method
    if found.te.identity {
        return Err(H1Error::Identity);
    }
    resolve_te_and_cl(head, &found);
    let status = head.status;
    let tunnel = status == 101 || (req_method == Method::Connect && (200..300).contains(&status));
    let bodyless = req_method == Method::Head || status < 200 || status == 204 || status == 304;
    head.framing = if tunnel || bodyless {
        Framing::None
    } else if found.te.chunked {
        Framing::Chunked
    } else if let (false, Some(n)) = (found.te.present, found.content_length) {
        Framing::Length(n)
    } else {
        // no length, or codings without chunked (`gzip`): until the server closes
        Framing::UntilClose
    };
    if status < 200 || status == 204 {
        // HAProxy never forwards framing headers on these
        drop_all(head, HdrKind::ContentLength);
        drop_all(head, HdrKind::TransferEncoding);
    }
    if status == 101 {
        resolve_upgrade(head, &found);
        if head.websocket && !found.websocket_key {
            return Err(H1Error::WebSocket);
        }
    } else if !head.conn.upgrade {
        // a 426 or an h2c advertisement with `Connection: upgrade` keeps its `Upgrade`
        // header, but only a 101 switches protocols (HAProxy clears its upgrade flags
        // on other responses since 2.6.8)
        drop_all(head, HdrKind::Upgrade);
    }
    Ok(())
}
