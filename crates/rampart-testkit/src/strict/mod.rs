//! A second strict HTTP/1.1 parser, independent of rampart-proto: httparse for the
//! head, and a chunk decoder, target and Host checks written here from RFC 9112 and
//! RFC 9110 (not from rampart's code). The `http_strictness` black-box tests and the
//! `h1_*` fuzz targets use it to judge what rampart forwards: a message rampart accepts
//! must be one this parser accepts too, and what reaches the other side must parse
//! here as the same message. [`variants`] generates malformed framing elements.
//!
//! Stricter than the RFC where rampart documents it is (docs/COMPATIBILITY.md, "Stricter than HAProxy"):
//! no BWS anywhere in chunk lines, no empty list elements in Transfer-Encoding, no
//! quoted transfer-parameters, no `identity` coding, at most 16 hex digits (and a value
//! below 2^52) per chunk size, no Transfer-Encoding in an HTTP/1.0 request, no comma
//! in Host.
pub mod variants;

/// One parsed message: the start line, fields (names as sent), the decoded body and
/// trailers, and how many bytes it took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Msg {
    /// Method of a request, or the status code (as text) of a response.
    pub first: String,
    /// Target of a request, reason of a response.
    pub second: String,
    /// Minor version (`HTTP/1.x`).
    pub minor: u8,
    /// Header fields in order: name as sent, value trimmed.
    pub headers: Vec<(String, Vec<u8>)>,
    /// The body, decoded from chunks if chunked.
    pub body: Vec<u8>,
    /// Trailer fields of a chunked body.
    pub trailers: Vec<(String, Vec<u8>)>,
    /// How the body was framed: "none", "length", "chunked" or "close".
    pub framing: &'static str,
    /// Bytes taken by the message.
    pub len: usize,
}

impl Msg {
    /// The values of every header named `name` (case-insensitive).
    pub fn all(&self, name: &str) -> Vec<&[u8]> {
        self.headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_slice()).collect()
    }
}

/// What parsing a buffer gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// A whole message (see [`Msg::len`] for where it ends).
    Complete(Msg),
    /// More bytes are needed.
    Incomplete,
    /// Not a valid message; says why.
    Invalid(String),
}

/// Why parsing stopped short of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// More bytes are needed.
    Incomplete,
    /// Not valid; says why.
    Invalid(String),
}

impl From<Stop> for Parsed {
    fn from(s: Stop) -> Parsed {
        match s {
            Stop::Incomplete => Parsed::Incomplete,
            Stop::Invalid(why) => Parsed::Invalid(why),
        }
    }
}

type R<T> = Result<T, Stop>;

fn invalid<T>(why: impl Into<String>) -> R<T> {
    Err(Stop::Invalid(why.into()))
}

fn tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn is_token(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(|&b| tchar(b))
}

fn ows(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn trim(v: &[u8]) -> &[u8] {
    let s = v.iter().position(|&b| !ows(b)).unwrap_or(v.len());
    let e = v.iter().rposition(|&b| !ows(b)).map_or(s, |e| e + 1);
    &v[s..e]
}

// === heads ===

/// Parses a request from the start of `buf`.
pub fn request(buf: &[u8]) -> Parsed {
    match request_inner(buf) {
        Ok(m) => Parsed::Complete(m),
        Err(s) => s.into(),
    }
}

fn request_inner(buf: &[u8]) -> R<Msg> {
    let mut m = request_head_inner(buf)?;
    if m.first != "CONNECT" {
        let framing = m.framing;
        read_body(&mut m, buf, framing, false)?;
    }
    Ok(m)
}

/// Parses and checks a request head only: [`Msg::framing`] says how a body would
/// follow, [`Msg::len`] is the head's length, the body is left empty.
pub fn request_head(buf: &[u8]) -> Parsed {
    match request_head_inner(buf) {
        Ok(m) => Parsed::Complete(m),
        Err(s) => s.into(),
    }
}

fn request_head_inner(buf: &[u8]) -> R<Msg> {
    let mut slots = [httparse::EMPTY_HEADER; 100];
    let mut req = httparse::Request::new(&mut slots);
    let head_len = match req.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Err(Stop::Incomplete),
        Err(e) => return invalid(format!("httparse: {e}")),
    };
    // httparse takes a bare LF for a line end; rampart rewrites heads, so it matters not
    let minor = req.version.unwrap_or(1);
    let mut m = Msg {
        first: req.method.unwrap_or_default().to_string(),
        second: req.path.unwrap_or_default().to_string(),
        minor,
        headers: req.headers.iter().map(|h| (h.name.to_string(), h.value.to_vec())).collect(),
        body: Vec::new(),
        trailers: Vec::new(),
        framing: "none",
        len: head_len,
    };
    let authority = check_target(&m.first, &m.second)?;
    check_host(&m, authority.as_deref())?;
    m.framing = if m.first == "CONNECT" { "none" } else { framing(&m, true, minor)? };
    Ok(m)
}

/// Parses the response to a `method` request from the start of `buf`; `eof` says the
/// sender closed after these bytes (ends a body read until close).
pub fn response(buf: &[u8], method: &str, eof: bool) -> Parsed {
    match response_inner(buf, method, eof) {
        Ok(m) => Parsed::Complete(m),
        Err(s) => s.into(),
    }
}

fn response_inner(buf: &[u8], method: &str, eof: bool) -> R<Msg> {
    let mut m = response_head_inner(buf)?;
    let status: u16 = m.first.parse().unwrap_or_default();
    let bodyless = method == "HEAD" || status < 200 || status == 204 || status == 304;
    if bodyless {
        m.framing = "none";
    } else {
        let framing = m.framing;
        read_body(&mut m, buf, framing, eof)?;
    }
    Ok(m)
}

/// Parses and checks a response head only: [`Msg::framing`] is what its headers say
/// (whatever the status and the request method), [`Msg::len`] the head's length.
pub fn response_head(buf: &[u8]) -> Parsed {
    match response_head_inner(buf) {
        Ok(m) => Parsed::Complete(m),
        Err(s) => s.into(),
    }
}

fn response_head_inner(buf: &[u8]) -> R<Msg> {
    let mut slots = [httparse::EMPTY_HEADER; 100];
    let mut resp = httparse::Response::new(&mut slots);
    let head_len = match resp.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Err(Stop::Incomplete),
        Err(e) => return invalid(format!("httparse: {e}")),
    };
    let mut m = Msg {
        first: resp.code.unwrap_or_default().to_string(),
        second: resp.reason.unwrap_or_default().to_string(),
        minor: resp.version.unwrap_or(1),
        headers: resp.headers.iter().map(|h| (h.name.to_string(), h.value.to_vec())).collect(),
        body: Vec::new(),
        trailers: Vec::new(),
        framing: "none",
        len: head_len,
    };
    m.framing = framing(&m, false, m.minor)?;
    Ok(m)
}

/// The body framing RFC 9112 §6.3 gives the head, refusing the ambiguous cases.
fn framing(m: &Msg, is_request: bool, minor: u8) -> R<&'static str> {
    let te = m.all("transfer-encoding");
    let cl = m.all("content-length");
    let mut chunked = false;
    for value in &te {
        for element in value.split(|&b| b == b',') {
            let coding = trim(element);
            let name = coding.split(|&b| b == b';').next().unwrap_or_default();
            let name = trim(name);
            if !is_token(name) || !params_ok(&coding[name.len()..]) {
                return invalid("bad transfer-coding");
            }
            if chunked {
                return invalid("coding after chunked");
            }
            // RFC 2616's "no coding", removed by RFC 7230: not a transfer coding
            if name.eq_ignore_ascii_case(b"identity") {
                return invalid("identity coding");
            }
            if name.eq_ignore_ascii_case(b"chunked") {
                if coding.len() != name.len() {
                    return invalid("chunked with parameters");
                }
                chunked = true;
            }
        }
    }
    let mut length: Option<u64> = None;
    for value in &cl {
        for item in value.split(|&b| b == b',') {
            let item = trim(item);
            if item.is_empty() || !item.iter().all(u8::is_ascii_digit) {
                return invalid("bad content-length");
            }
            // any number of digits (RFC 9110 §8.6), a value a signed 64-bit integer holds
            let digits = std::str::from_utf8(item).unwrap_or("x").trim_start_matches('0');
            let n: u64 = if digits.is_empty() { 0 } else { digits.parse().map_err(|_| Stop::Invalid("cl".into()))? };
            if n > i64::MAX as u64 {
                return invalid("content-length too large");
            }
            if length.is_some_and(|l| l != n) {
                return invalid("content-lengths differ");
            }
            length = Some(n);
        }
    }
    // RFC 9112 §6.3: Transfer-Encoding overrides Content-Length (which must be valid)
    if !te.is_empty() {
        if is_request && minor == 0 {
            return invalid("transfer-encoding in HTTP/1.0");
        }
        if is_request && !chunked {
            return invalid("request not ending in chunked");
        }
        return Ok(if chunked { "chunked" } else { "close" });
    }
    Ok(match length {
        Some(_) => "length",
        None if is_request => "none",
        None => "close",
    })
}

/// `*( OWS ";" OWS token "=" token )`.
fn params_ok(mut rest: &[u8]) -> bool {
    while !rest.is_empty() {
        rest = &rest[rest.iter().take_while(|&&b| ows(b)).count()..];
        let Some(after) = rest.strip_prefix(b";") else { return false };
        let after = &after[after.iter().take_while(|&&b| ows(b)).count()..];
        let end = after.iter().position(|&b| b == b';' || ows(b)).unwrap_or(after.len());
        let param = &after[..end];
        let Some(eq) = param.iter().position(|&b| b == b'=') else { return false };
        if !is_token(&param[..eq]) || !is_token(&param[eq + 1..]) {
            return false;
        }
        rest = &after[end..];
    }
    true
}

fn read_body(m: &mut Msg, buf: &[u8], framing: &'static str, eof: bool) -> R<()> {
    let rest = &buf[m.len..];
    m.framing = framing;
    match framing {
        "length" => {
            let first = trim(m.all("content-length")[0].split(|&b| b == b',').next().unwrap_or(b""));
            let n = std::str::from_utf8(first)
                .ok()
                .map(|s| s.trim_start_matches('0'))
                .and_then(|s| if s.is_empty() { Some(0) } else { s.parse::<usize>().ok() })
                .unwrap_or(usize::MAX);
            if rest.len() < n {
                return Err(Stop::Incomplete);
            }
            m.body = rest[..n].to_vec();
            m.len += n;
        }
        "chunked" => {
            let body = dechunk(rest)?;
            m.body = body.data;
            m.trailers = body.trailers;
            m.len += body.len;
        }
        "close" => {
            if !eof {
                return Err(Stop::Incomplete);
            }
            m.body = rest.to_vec();
            m.len = buf.len();
        }
        _ => {}
    }
    Ok(())
}

// === chunked ===

/// The next line of `buf` from `at`, without its CRLF, and where the next one starts.
/// A bare LF or a CR not followed by LF makes the body invalid.
fn line(buf: &[u8], at: usize) -> R<(&[u8], usize)> {
    let rest = &buf[at..];
    match rest.iter().position(|&b| b == b'\r' || b == b'\n') {
        None => Err(Stop::Incomplete),
        Some(i) if rest[i] == b'\n' => invalid("bare LF"),
        Some(i) => match rest.get(i + 1) {
            None => Err(Stop::Incomplete),
            Some(b'\n') => Ok((&rest[..i], at + i + 2)),
            Some(_) => invalid("bare CR"),
        },
    }
}

/// A decoded chunked body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dechunked {
    /// The chunk data, joined.
    pub data: Vec<u8>,
    /// The trailer fields.
    pub trailers: Vec<(String, Vec<u8>)>,
    /// Bytes the body took, final CRLF included.
    pub len: usize,
}

/// Decodes the chunked body at the start of `buf`.
pub fn dechunk(buf: &[u8]) -> R<Dechunked> {
    let mut at = 0;
    let mut data = Vec::new();
    loop {
        let (size_line, next) = line(buf, at)?;
        let size = chunk_size(size_line)?;
        at = next;
        if size == 0 {
            break;
        }
        let end = at.checked_add(size as usize).ok_or(Stop::Invalid("size".into()))?;
        if buf.len() < end + 2 {
            return Err(Stop::Incomplete);
        }
        data.extend_from_slice(&buf[at..end]);
        if &buf[end..end + 2] != b"\r\n" {
            return invalid("chunk data not followed by CRLF");
        }
        at = end + 2;
    }
    let mut trailers = Vec::new();
    loop {
        let (field, next) = line(buf, at)?;
        at = next;
        if field.is_empty() {
            return Ok(Dechunked { data, trailers, len: at });
        }
        let colon = field.iter().position(|&b| b == b':').ok_or(Stop::Invalid("trailer without colon".into()))?;
        let (name, value) = (&field[..colon], trim(&field[colon + 1..]));
        if !is_token(name) || !value.iter().all(|&b| b == b'\t' || b == b' ' || (0x21..=0x7e).contains(&b) || b >= 0x80)
        {
            return invalid("bad trailer field");
        }
        trailers.push((String::from_utf8_lossy(name).into_owned(), value.to_vec()));
    }
}

/// `1*16HEXDIG *( ";" token [ "=" ( token / quoted-string ) ] )`, no blanks.
fn chunk_size(l: &[u8]) -> R<u64> {
    let digits = l.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if digits == 0 || digits > 16 {
        return invalid("chunk size digits");
    }
    let size = u64::from_str_radix(std::str::from_utf8(&l[..digits]).unwrap_or("x"), 16)
        .map_err(|_| Stop::Invalid("chunk size".into()))?;
    if size >= 1 << 52 {
        return invalid("chunk size too large");
    }
    let mut rest = &l[digits..];
    while let Some(ext) = rest.strip_prefix(b";") {
        let name = ext.iter().take_while(|&&b| tchar(b)).count();
        if name == 0 {
            return invalid("extension without a name");
        }
        rest = &ext[name..];
        if let Some(value) = rest.strip_prefix(b"=") {
            rest = match value.first() {
                Some(b'"') => after_quoted(&value[1..])?,
                _ => {
                    let n = value.iter().take_while(|&&b| tchar(b)).count();
                    if n == 0 {
                        return invalid("extension without a value");
                    }
                    &value[n..]
                }
            };
        }
    }
    if !rest.is_empty() {
        return invalid("junk in the chunk size line");
    }
    Ok(size)
}

/// What follows a quoted string whose opening quote was just read.
fn after_quoted(mut v: &[u8]) -> R<&[u8]> {
    let text = |b: u8| b == b'\t' || b == b' ' || (0x21..=0x7e).contains(&b) || b >= 0x80;
    loop {
        match v {
            [b'"', rest @ ..] => return Ok(rest),
            [b'\\', b, rest @ ..] if text(*b) => v = rest,
            [b, rest @ ..] if text(*b) && *b != b'\\' => v = rest,
            _ => return invalid("bad quoted string"),
        }
    }
}

// === target and Host ===

/// Checks the request target's form for `method` (RFC 9112 §3.2); returns the
/// authority (lowercase, default port of the scheme removed) when it has one.
fn check_target(method: &str, target: &str) -> R<Option<String>> {
    // RFC 9112 §3.2 / RFC 3986: a URI is visible ASCII
    if !target.bytes().all(|b| b.is_ascii_graphic()) {
        return invalid("target byte");
    }
    if target.contains('#') {
        return invalid("fragment");
    }
    if method == "CONNECT" {
        let (host, port) = host_port(target).ok_or(Stop::Invalid("connect target".into()))?;
        return match port {
            Some(p) if !p.is_empty() && !host.is_empty() => Ok(Some(target.to_ascii_lowercase())),
            _ => invalid("connect target"),
        };
    }
    if target == "*" {
        return if method == "OPTIONS" { Ok(None) } else { invalid("* without OPTIONS") };
    }
    if target.starts_with('/') {
        return Ok(None);
    }
    let Some(sep) = target.find("://") else { return invalid("no form") };
    let scheme = &target[..sep];
    if scheme.is_empty()
        || !scheme.as_bytes()[0].is_ascii_alphabetic()
        || !scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
    {
        return invalid("scheme");
    }
    let rest = &target[sep + 3..];
    let authority = &rest[..rest.find(['/', '?']).unwrap_or(rest.len())];
    if authority.contains('@') {
        return invalid("user info");
    }
    let (host, port) = host_port(authority).ok_or(Stop::Invalid("authority".into()))?;
    if host.is_empty() {
        return invalid("empty host");
    }
    Ok(Some(normalized(scheme, host, port)))
}

/// `host` lowercased with `:port` unless it is empty or the scheme's default.
fn normalized(scheme: &str, host: &str, port: Option<&str>) -> String {
    let default = match scheme.to_ascii_lowercase().as_str() {
        "http" => "80",
        "https" => "443",
        _ => "",
    };
    match port {
        Some(p) if !p.is_empty() && p != default => format!("{}:{p}", host.to_ascii_lowercase()),
        _ => host.to_ascii_lowercase(),
    }
}

/// Splits `uri-host [ ":" port ]` if valid (RFC 3986 §3.2.2, no comma; port <= 65535).
pub fn host_port(v: &str) -> Option<(&str, Option<&str>)> {
    let (host, rest) = if v.starts_with('[') {
        let close = v.find(']')?;
        let inner = &v[1..close];
        let ok = inner.parse::<std::net::Ipv6Addr>().is_ok()
            || (inner.starts_with(['v', 'V'])
                && inner[1..].split_once('.').is_some_and(|(ver, tail)| {
                    !ver.is_empty()
                        && ver.bytes().all(|b| b.is_ascii_hexdigit())
                        && !tail.is_empty()
                        && tail.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~!$&'()*+;=:".contains(&b))
                }));
        if !ok {
            return None;
        }
        (&v[..close + 1], &v[close + 1..])
    } else {
        let end = v.find(':').unwrap_or(v.len());
        let host = &v[..end];
        let bytes = host.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if b == b'%' {
                if i + 2 >= bytes.len() || !bytes[i + 1].is_ascii_hexdigit() || !bytes[i + 2].is_ascii_hexdigit() {
                    return None;
                }
                i += 3;
                continue;
            }
            if !(b.is_ascii_alphanumeric() || b"-._~!$&'()*+;=".contains(&b)) {
                return None;
            }
            i += 1;
        }
        (host, &v[end..])
    };
    match rest.strip_prefix(':') {
        None if rest.is_empty() => Some((host, None)),
        None => None,
        Some(p)
            if p.bytes().all(|b| b.is_ascii_digit())
                && (p.is_empty() || p.parse::<u32>().is_ok_and(|n| n <= 65535)) =>
        {
            Some((host, Some(p)))
        }
        Some(_) => None,
    }
}

/// RFC 9112 §3.2: one Host in HTTP/1.1 (at most one in 1.0), a valid value, empty
/// only when the target has no authority, equal to the authority when it has one.
fn check_host(m: &Msg, authority: Option<&str>) -> R<()> {
    let hosts = m.all("host");
    if hosts.len() > 1 || (hosts.is_empty() && m.minor == 1) {
        return invalid("host count");
    }
    let Some(value) = hosts.first() else { return Ok(()) };
    let value = std::str::from_utf8(value).map_err(|_| Stop::Invalid("host utf-8".into()))?;
    if value.is_empty() {
        return if authority.is_some() { invalid("empty host with an authority") } else { Ok(()) };
    }
    let (host, port) = host_port(value).ok_or(Stop::Invalid("host syntax".into()))?;
    if host.is_empty() {
        return invalid("empty host name");
    }
    let Some(authority) = authority else { return Ok(()) };
    let scheme = m.second.split("://").next().unwrap_or_default();
    let scheme = if m.first == "CONNECT" { "" } else { scheme };
    let (a_host, a_port) = host_port(authority).unwrap_or((authority, None));
    let same = if m.first == "CONNECT" {
        // Host may leave out the port only when it is a default one
        host.eq_ignore_ascii_case(a_host)
            && match port {
                Some(p) if !p.is_empty() => Some(p) == a_port,
                _ => matches!(a_port, Some("80" | "443")),
            }
    } else {
        normalized(scheme, host, port) == normalized(scheme, a_host, a_port)
    };
    if same {
        Ok(())
    } else {
        invalid("host differs from the authority")
    }
}
