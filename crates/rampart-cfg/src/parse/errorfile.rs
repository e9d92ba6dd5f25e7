//! `errorfile <code> <file>`: loads a raw HTTP response and checks it the way HAProxy
//! does before accepting it (status line, headers, announced length).
//!
//! HAProxy counterparts: `proxy_parse_errorfile()`, `http_parse_errorfile()`,
//! `http_load_errorfile()` and `http_str_to_htx()` (src/http_htx.c); the status codes
//! HAProxy can produce are `http_err_codes` (src/http.c).

use super::arg;
use super::ctx::{Ctx, ErrorConf, Page};
use super::value::atol;

/// The status codes `errorfile` accepts: those HAProxy itself can answer with.
pub(super) const HTTP_ERR_CODES: [u16; 19] =
    [200, 400, 401, 403, 404, 405, 407, 408, 410, 413, 421, 422, 425, 429, 500, 501, 502, 503, 504];

pub(super) fn parse_errorfile(cx: &mut Ctx<'_>, words: &[String]) {
    let (code, path) = (arg(words, 1), arg(words, 2));
    if code.is_empty() || path.is_empty() {
        cx.alert("errorfile : expects <status_code> and <file> as arguments.");
        return;
    }
    let status = atol(code);
    let Some(status) = HTTP_ERR_CODES.iter().copied().find(|&c| i64::from(c) == status) else {
        cx.alert(format!("errorfile : status code '{status}' not handled."));
        return;
    };
    let mut warnings = Vec::new();
    let loaded = load_error_file(path, cx.base_dir, cx.bufsize, &mut warnings);
    for w in warnings {
        cx.warning(w);
    }
    match loaded {
        Ok(bytes) => cx.pb.errors.push(ErrorConf::Page { status, page: Page::File(bytes) }),
        Err(e) => cx.alert(format!("errorfile : {e}")),
    }
}

/// `errorloc|errorloc302|errorloc303 <code> <url>`: the error page for `code` becomes a
/// redirect to `url` (302, or 303 for `errorloc303`), as HAProxy's
/// `http_parse_errorloc()` builds it; logged with the original status, as HAProxy.
pub(super) fn parse_errorloc(cx: &mut Ctx<'_>, words: &[String]) {
    let kw = words[0].as_str();
    let (code, url) = (arg(words, 1), arg(words, 2));
    if code.is_empty() || url.is_empty() {
        return cx.alert(format!("{kw} : expects <status_code> and <url> as arguments."));
    }
    let status = atol(code);
    let Some(status) = HTTP_ERR_CODES.iter().copied().find(|&c| i64::from(c) == status) else {
        return cx.alert(format!("{kw} : status code '{status}' not handled."));
    };
    let page = errorloc_page(kw == "errorloc303", url);
    cx.pb.errors.push(ErrorConf::Page { status, page: Page::File(page) });
}

/// The redirect response an `errorloc` line stands for.
pub(super) fn errorloc_page(see_other: bool, url: &str) -> Vec<u8> {
    let status = if see_other { "303 See Other" } else { "302 Found" };
    format!("HTTP/1.1 {status}\r\nCache-Control: no-cache\r\nContent-length: 0\r\nLocation: {url}\r\n\r\n").into_bytes()
}

/// Reads an error file (truncated to `bufsize` with a warning, as HAProxy does) and
/// checks it is a usable HTTP response. `Err` is HAProxy's message.
pub(super) fn load_error_file(
    path: &str,
    base: Option<&std::path::Path>,
    bufsize: usize,
    warnings: &mut Vec<String>,
) -> Result<Vec<u8>, String> {
    let file = super::default_path::resolve(base, path);
    let mut bytes = std::fs::read(file).map_err(|_| format!("error opening file '{path}'."))?;
    if bytes.len() > bufsize {
        warnings.push(format!("custom error message file '{path}' larger than {bufsize} bytes. Truncating."));
        bytes.truncate(bufsize);
    }
    check_http_response(&bytes).map_err(|e| format!("'{path}': {e}"))?;
    Ok(bytes)
}

/// Checks a raw HTTP/1 response the way HAProxy validates error messages. An empty file
/// is valid (HAProxy then sends nothing).
pub(super) fn check_http_response(raw: &[u8]) -> Result<(), String> {
    if raw.is_empty() {
        return Ok(());
    }
    let parse_err = |off: i64| format!("unable to parse headers (error offset: {off})");
    // Start line: version SP status [SP reason] EOL.
    let Some(eol) = raw.iter().position(|&b| b == b'\n') else { return Err(parse_err(0)) };
    let line = raw[..eol].strip_suffix(b"\r").unwrap_or(&raw[..eol]);
    let Some(sp) = line.iter().position(|&b| b == b' ') else { return Err(parse_err(0)) };
    let version = &line[..sp];
    let digits_end = line[sp + 1..].iter().position(|b| !b.is_ascii_digit()).map_or(line.len(), |p| sp + 1 + p);
    if digits_end == sp + 1 || (digits_end < line.len() && line[digits_end] != b' ') {
        return Err(parse_err(digits_end as i64));
    }
    if version.len() != 8 {
        return Err(format!("invalid http version ({})", String::from_utf8_lossy(version)));
    }
    let status: u32 = std::str::from_utf8(&line[sp + 1..digits_end]).ok().and_then(|s| s.parse().ok()).unwrap_or(0);
    if status < 200 && (status == 100 || status >= 102) {
        return Err(format!("invalid http status code for an error message ({status})"));
    }
    let (content_length, chunked, body_start) = parse_headers(raw, eol + 1).map_err(parse_err)?;
    let body_len = raw.len() - body_start;
    let bodyless_status = status == 204 || status == 304;
    if chunked && !bodyless_status {
        return Err("chunk-encoded payload not supported".to_owned());
    }
    let bodyless = bodyless_status || content_length == Some(0);
    if bodyless && body_len > 0 {
        return Err("message payload not expected".to_owned());
    }
    match content_length {
        Some(cl) if !bodyless_status && cl != body_len as u64 => {
            Err(format!("payload size does not match the announced content-length ({body_len} != {cl})"))
        }
        _ => Ok(()),
    }
}

/// Reads header lines from `at` to the empty line. Returns the content-length, whether
/// the body is chunked, and where the body starts; `Err` is the error offset (-2 when
/// the headers never end, as HAProxy reports an incomplete message).
fn parse_headers(raw: &[u8], mut at: usize) -> Result<(Option<u64>, bool, usize), i64> {
    let (mut cl, mut chunked) = (None, false);
    loop {
        let Some(len) = raw[at..].iter().position(|&b| b == b'\n') else { return Err(-2) };
        let line = raw[at..at + len].strip_suffix(b"\r").unwrap_or(&raw[at..at + len]);
        if line.is_empty() {
            return Ok((cl, chunked, at + len + 1));
        }
        let is_tchar = |b: &u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(b);
        let name_len = line.iter().position(|b| !is_tchar(b)).unwrap_or(line.len());
        if name_len == 0 || line.get(name_len) != Some(&b':') {
            return Err((at + name_len) as i64);
        }
        let name = String::from_utf8_lossy(&line[..name_len]).to_ascii_lowercase();
        let value = String::from_utf8_lossy(&line[name_len + 1..]).trim().to_ascii_lowercase();
        match name.as_str() {
            "content-length" => cl = Some(value.parse().map_err(|_| at as i64)?),
            "transfer-encoding" => chunked |= value.split(',').any(|t| t.trim() == "chunked"),
            _ => {}
        }
        at += len + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::check_http_response as check;
    use crate::parse::tests::{alerts, parse_ok};

    #[test]
    fn errorloc_builds_haproxys_redirects() {
        let cfg = parse_ok("frontend f\n errorloc 503 http://a/x\n errorloc303 403 /y\n errorloc302 400 /z\n");
        let pages = &cfg.proxies[0].errorfiles;
        let page = |c: u16| pages.iter().find(|p| p.0 == c).map(|p| String::from_utf8_lossy(&p.1).into_owned());
        assert_eq!(
            page(503).unwrap(),
            "HTTP/1.1 302 Found\r\nCache-Control: no-cache\r\nContent-length: 0\r\nLocation: http://a/x\r\n\r\n"
        );
        assert!(page(403).unwrap().starts_with("HTTP/1.1 303 See Other\r\n"));
        assert!(page(400).unwrap().ends_with("Location: /z\r\n\r\n"));
        assert_eq!(check(page(503).unwrap().as_bytes()), Ok(()));
        assert_eq!(alerts("frontend f\n errorloc 503\n"), ["errorloc : expects <status_code> and <url> as arguments."]);
        assert_eq!(alerts("frontend f\n errorloc303 299 /x\n"), ["errorloc303 : status code '299' not handled."]);
    }

    #[test]
    fn valid_responses() {
        assert_eq!(check(b""), Ok(()));
        assert_eq!(check(b"HTTP/1.0 503 Service Unavailable\r\nContent-Length: 3\r\n\r\nabc"), Ok(()));
        assert_eq!(check(b"HTTP/1.0 503 X\nA: b\n\nbody"), Ok(()), "bare LF and no length");
        assert_eq!(check(b"HTTP/1.0 503\r\n\r\n"), Ok(()), "no reason");
        assert_eq!(check(b"HTTP/1.0 101 X\r\n\r\n"), Ok(()));
    }

    #[test]
    fn invalid_responses_worded_as_haproxy() {
        assert_eq!(check(b"hello").unwrap_err(), "unable to parse headers (error offset: 0)");
        assert_eq!(check(b"HTTP/1.0 503 X\r\nA: b\r\n").unwrap_err(), "unable to parse headers (error offset: -2)");
        assert_eq!(
            check(b"HTTP/1.0 503 X\r\nbad header\r\n\r\n").unwrap_err(),
            "unable to parse headers (error offset: 19)"
        );
        assert_eq!(check(b"HTTP/1.0 abc X\r\n\r\n").unwrap_err(), "unable to parse headers (error offset: 9)");
        assert_eq!(check(b"HTTP/10 503 X\r\n\r\n").unwrap_err(), "invalid http version (HTTP/10)");
        assert_eq!(
            check(b"HTTP/1.0 503 X\r\nContent-Length: 3\r\n\r\nab").unwrap_err(),
            "payload size does not match the announced content-length (2 != 3)"
        );
        assert_eq!(
            check(b"HTTP/1.0 503 X\r\nContent-Length: 0\r\n\r\nab").unwrap_err(),
            "message payload not expected"
        );
        assert_eq!(check(b"HTTP/1.0 204 X\r\n\r\nabc").unwrap_err(), "message payload not expected");
        assert_eq!(
            check(b"HTTP/1.1 503 X\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n").unwrap_err(),
            "chunk-encoded payload not supported"
        );
        assert_eq!(
            check(b"HTTP/1.0 100 X\r\n\r\n").unwrap_err(),
            "invalid http status code for an error message (100)"
        );
    }
}
