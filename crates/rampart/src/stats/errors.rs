//! `show errors`: the last invalid request each frontend refused (or let through with
//! `option accept-invalid-http-request`), kept as HAProxy
//! captures it (the bytes received, when, from whom, where the parser stopped), and
//! its dump in HAProxy's layout. Captured on the error path only (an atomic swap of
//! the proxy's last capture). HAProxy counterpart: proxy_capture_error() and
//! cli_io_handler_show_errors() (proxy.c).
//!
//! COMPAT: invalid responses are not captured yet (`show errors <px> response` lists
//! nothing), and the three lines of H1 parser flags HAProxy prints are left out.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use std::time::SystemTime;

use rampart_proto::h1::H1Error;

pub use crate::counters::capture::{Capture, Events, LastError, KEEP};
use crate::proxy::Runtime;

/// Keeps `buf`, a request head frontend `fe` refused with `e`.
pub fn capture(rt: &Runtime, fe: usize, src: Option<SocketAddr>, buf: &[u8], e: &H1Error) {
    let bytes = buf[..buf.len().min(KEEP)].to_vec();
    let at = error_position(&bytes, e);
    keep(rt, fe, src, bytes, at);
}

/// Keeps `head`, a request head frontend `fe` let through with `option
/// accept-invalid-http-request`, its first invalid byte at `at` (HAProxy captures
/// those too, `h1_capture_bad_message()` when `err_pos` >= 0).
pub fn capture_let_through(rt: &Runtime, fe: usize, src: Option<SocketAddr>, head: &[u8], at: usize) {
    keep(rt, fe, src, head[..head.len().min(KEEP)].to_vec(), at);
}

fn keep(rt: &Runtime, fe: usize, src: Option<SocketAddr>, bytes: Vec<u8>, at: usize) {
    let event = rt.stats.error_events.0.fetch_add(1, Ordering::Relaxed);
    let c = Capture { when: SystemTime::now(), src, event, at, bytes, bufsize: rt.bufsize };
    rt.proxies[fe].stats.last_error.0.store(Some(Arc::new(c)));
}

/// Where a parser stops in `head` for error `e`: the first byte a request line or a
/// header line cannot have for a syntax error, the start of the `Content-Length` or
/// `Transfer-Encoding` line for those, else the end of what arrived.
fn error_position(head: &[u8], e: &H1Error) -> usize {
    let header_line = |name: &[u8]| {
        let mut at = 0;
        for line in head.split_inclusive(|&c| c == b'\n') {
            if line.len() > name.len() && line[..name.len()].eq_ignore_ascii_case(name) && line[name.len()] == b':' {
                return Some(at);
            }
            at += line.len();
        }
        None
    };
    let found = match e {
        H1Error::StartLine | H1Error::HeaderSyntax => first_invalid(head),
        H1Error::ContentLength => header_line(b"content-length"),
        H1Error::TransferEncoding | H1Error::Identity => header_line(b"transfer-encoding"),
        _ => None,
    };
    found.unwrap_or(head.len())
}

fn is_tchar(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c)
}

/// The first byte a request line (`method SP target SP HTTP/d.d CRLF`) or a header
/// line (`token ":" value CRLF`) cannot have.
fn first_invalid(head: &[u8]) -> Option<usize> {
    let method = head.iter().position(|&c| !is_tchar(c))?;
    if method == 0 || head[method] != b' ' {
        return Some(method);
    }
    let target_start = method + 1;
    let target = target_start + head[target_start..].iter().position(|&c| c <= b' ' || c == 0x7f)?;
    if target == target_start || head[target] != b' ' {
        return Some(target);
    }
    let v = target + 1;
    let version = head.get(v..v + 8)?;
    let ok = version.starts_with(b"HTTP/")
        && version[5].is_ascii_digit()
        && version[6] == b'.'
        && version[7].is_ascii_digit();
    if !ok {
        return Some(v);
    }
    let mut at = v + 8;
    at += usize::from(head.get(at) == Some(&b'\r'));
    if head.get(at) != Some(&b'\n') {
        return Some(at);
    }
    at += 1;
    while at < head.len() && !head[at..].starts_with(b"\r\n") && head[at] != b'\n' {
        let name = head[at..].iter().position(|&c| !is_tchar(c)).map_or(head.len(), |n| at + n);
        if name == at || head.get(name) != Some(&b':') {
            return Some(name);
        }
        let end = head[name..].iter().position(|&c| c == b'\n').map_or(head.len(), |n| name + n);
        let bad = head[name + 1..end].iter().position(|&c| (c < b' ' && c != b'\t' && c != b'\r') || c == 0x7f);
        if let Some(b) = bad {
            return Some(name + 1 + b);
        }
        at = end + 1;
    }
    None
}

/// `show errors [<px>] [request|response]`.
pub fn show(rt: &Runtime, words: &[&str]) -> String {
    let mut proxy = None;
    let mut want_response = None;
    for w in words {
        match *w {
            "request" => want_response = Some(false),
            "response" => want_response = Some(true),
            "-1" => {}
            name => match super::find_proxy(rt, name) {
                Some(i) => proxy = Some(i),
                None => return "No such proxy.\n".to_owned(),
            },
        }
    }
    let mut out = String::new();
    let _ = write!(out, "Total events captured on [");
    date(&mut out, SystemTime::now());
    let _ = writeln!(out, "] : {}", rt.stats.error_events.0.load(Ordering::Relaxed));
    if want_response == Some(true) {
        return out;
    }
    for (i, px) in rt.proxies.iter().enumerate().filter(|(i, _)| proxy.is_none_or(|p| p == *i)) {
        if let Some(c) = px.stats.last_error.get() {
            dump(&mut out, rt, i, &c);
        }
    }
    out
}

fn date(out: &mut String, t: SystemTime) {
    let (secs, usec) = crate::log::date::split(t);
    let mut b = Vec::with_capacity(24);
    crate::log::date::clf(&mut b, secs, true, Some(usec / 1000), false);
    out.push_str(&String::from_utf8_lossy(&b));
}

fn dump(out: &mut String, rt: &Runtime, idx: usize, c: &Capture) {
    out.push_str(" \n[");
    date(out, c.when);
    let name = &rt.proxies[idx].name;
    let _ = writeln!(out, "] frontend {name} (#{}): invalid request", super::iid(rt, idx));
    // HAProxy writes the address and the port apart: no brackets around IPv6
    let src = c.src.map_or_else(|| "unix:0".to_owned(), |a| format!("{}:{}", a.ip(), a.port()));
    let _ = writeln!(out, "  backend <NONE> (#-1), server <NONE> (#-1), event #{}, src {src}", c.event);
    // HAProxy's message buffer loses its 48-byte HTX header to the wrapping point
    let wraps = c.bufsize.saturating_sub(48);
    let _ = writeln!(out, "  buffer starts at 0 (including 0 out), {} free,", c.bufsize.saturating_sub(c.bytes.len()));
    let _ = writeln!(out, "  len {}, wraps at {wraps}, error at position {}", c.bytes.len(), c.at);
    out.push_str("  \n");
    dump_bytes(out, &c.bytes);
}

/// The bytes as HAProxy dumps them: a line per input line (and per 72 output
/// characters), each after its offset; `\r`, `\n`, `\t` and other non-printable bytes
/// escaped.
fn dump_bytes(out: &mut String, bytes: &[u8]) {
    let mut at = 0;
    while at < bytes.len() {
        let _ = write!(out, "  {at:05}  ");
        let mut width = 0;
        while at < bytes.len() && width < 72 {
            let c = bytes[at];
            at += 1;
            width += match c {
                b'\r' => push(out, "\\r"),
                b'\n' => push(out, "\\n"),
                b'\t' => push(out, "\\t"),
                b'\\' => push(out, "\\\\"),
                b' '..=b'~' => push(out, &(c as char).to_string()),
                _ => push(out, &format!("\\x{c:02x}")),
            };
            if c == b'\n' {
                break;
            }
        }
        out.push('\n');
    }
}

fn push(out: &mut String, s: &str) -> usize {
    out.push_str(s);
    s.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_position_is_the_first_byte_the_syntax_refuses() {
        let req = b"GET /a b HTTP/1.1\r\nHost: x\r\n\r\n";
        assert_eq!(first_invalid(req), Some(7));
        assert_eq!(first_invalid(b"GET / HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n"), Some(28));
        assert_eq!(first_invalid(b"G(T / HTTP/1.1\r\n\r\n"), Some(1));
        assert_eq!(first_invalid(b"GET / HTTP/1.1\r\nA: b\x01c\r\n\r\n"), Some(20));
        assert_eq!(first_invalid(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"), None);
        let cl = b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n";
        assert_eq!(error_position(cl, &H1Error::ContentLength), 25);
        assert_eq!(error_position(cl, &H1Error::TooManyHeaders), cl.len());
    }

    #[test]
    fn bytes_are_dumped_line_by_line_with_escapes() {
        let mut out = String::new();
        dump_bytes(&mut out, b"GET /a b HTTP/1.1\r\nHost: x\x01\r\n\r\n");
        assert_eq!(out, "  00000  GET /a b HTTP/1.1\\r\\n\n  00019  Host: x\\x01\\r\\n\n  00029  \\r\\n\n");
        let mut out = String::new();
        dump_bytes(&mut out, &[b'a'; 100]);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[1].starts_with("  00072  aaa"), "{out}");
    }

    #[test]
    fn the_last_refused_request_is_shown_per_frontend() {
        let ctx = rampart_cfg::LexCtx { env: &|_| None, version: "2.6", features: &[] };
        let text =
            "defaults\n mode http\nfrontend fe\n bind :80\n default_backend be\nbackend be\n server s 127.0.0.1:1\n";
        let cfg = rampart_cfg::parse_str("t.cfg", text, &ctx).config.expect("valid");
        let rt = crate::build::build(&cfg, 100, 1).expect("built");
        let src = "127.0.0.1:4000".parse().ok();
        assert!(show(&rt, &[]).ends_with("] : 0\n"), "{}", show(&rt, &[]));
        capture(&rt, 0, src, b"GET /a b HTTP/1.1\r\n\r\n", &H1Error::StartLine);
        let out = show(&rt, &[]);
        assert!(out.contains("] : 1\n \n["), "{out}");
        assert!(out.contains("] frontend fe (#1): invalid request\n"), "{out}");
        assert!(out.contains("  backend <NONE> (#-1), server <NONE> (#-1), event #0, src 127.0.0.1:4000\n"), "{out}");
        assert!(out.contains("  len 21, wraps at "), "{out}");
        assert!(out.contains(", error at position 7\n  \n  00000  GET /a b HTTP/1.1\\r\\n\n"), "{out}");
        assert!(!show(&rt, &["be"]).contains("invalid request"));
        assert!(!show(&rt, &["fe", "response"]).contains("invalid request"));
        assert_eq!(show(&rt, &["nope"]), "No such proxy.\n");
    }
}
