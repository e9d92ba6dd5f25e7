//! Request heads: bytes in, `Head` out, each input also parsed as all its prefixes.
//! Expected answers were taken from haproxy 2.6.12 fed the same bytes (400, 413, 422
//! or forwarded), except where a test name says `deviation`.

mod common;

use common::*;
use rampart_proto::h1::{
    is_h2_preface, parse_request, ConnTokens, Framing, H1Error, HdrKind, Head, Method, Version, H2_PREFACE, MAX_HEADERS,
};

// === request line ===

#[test]
fn simple_get() {
    let buf = b"GET /index.html?q=1 HTTP/1.1\r\nHost: example.com\r\nUser-Agent: t\r\n\r\nbody";
    let h = req_ok(buf);
    assert_eq!(h.method, Method::Get);
    assert_eq!(h.method_raw.get(buf), b"GET");
    assert_eq!(h.uri.get(buf), b"/index.html?q=1");
    assert_eq!(h.version, Version::Http11);
    assert_eq!(h.len, buf.len() - 4);
    assert_eq!(kept(&h, buf), [("Host", "example.com"), ("User-Agent", "t")]);
    assert_eq!(h.headers[0].kind, HdrKind::Host);
    assert_eq!(h.headers[1].kind, HdrKind::Other);
    assert_eq!(h.framing, Framing::None);
    assert!(h.wants_keep_alive());
}

#[test]
fn empty_lines_before_request_are_skipped() {
    let buf = b"\r\n\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n";
    let h = req_ok(buf);
    assert_eq!(h.method_raw.get(buf), b"GET");
    assert_eq!(h.len, buf.len());
    assert_eq!(req_err(b"\r\rGET / HTTP/1.1\r\n\r\n"), H1Error::StartLine);
    assert_eq!(req_err(b" GET / HTTP/1.1\r\n\r\n"), H1Error::StartLine);
}

#[test]
fn bare_lf_line_endings() {
    let buf = b"GET / HTTP/1.1\nHost: a\n\n";
    let h = req_ok(buf);
    assert_eq!(kept(&h, buf), [("Host", "a")]);
    assert_eq!(h.len, buf.len());
}

#[test]
fn cr_without_lf_ends_nothing() {
    assert_eq!(req_err(b"GET / HTTP/1.1\rHost: a\r\n\r\n"), H1Error::StartLine);
    assert_eq!(req_err(b"GET / HTTP/1.1\r\nHost: a\r\r\n"), H1Error::HeaderSyntax);
}

#[test]
fn versions_as_haproxy() {
    let v = |s: &[u8]| req_ok(s).version;
    assert_eq!(v(b"GET / HTTP/1.0\r\n\r\n"), Version::Http10);
    assert_eq!(v(b"GET / HTTP/0.9\r\n\r\n"), Version::Http10);
    // any version from 1.1 up is HTTP/1.1 on an HTTP/1 connection
    assert_eq!(v(b"GET / HTTP/1.2\r\nHost: a\r\n\r\n"), Version::Http11);
    assert_eq!(v(b"GET / HTTP/2.0\r\nHost: a\r\n\r\n"), Version::Http11);
}

#[test]
fn not_http1_request_lines() {
    for bad in [
        &b"GET /\r\n\r\n"[..], // HTTP/0.9, no version
        b"GET / \r\n\r\n",
        b"GET\r\n\r\n",
        b"GET / http/1.1\r\n\r\n",
        b"GET / HTTP/10\r\n\r\n",
        b"GET / HTTP/1.1x\r\n\r\n",
        b"GET / HTTP/1.1 \r\n\r\n",
        b"GET / HTTPS/1.1\r\n\r\n",
        b"GET / HTTP/1.1 extra\r\n\r\n",
        b"\x16\x03\x01\x00\xa5\x01", // a TLS ClientHello on a clear port
    ] {
        assert_eq!(req_err(bad), H1Error::StartLine, "{:?}", String::from_utf8_lossy(bad));
    }
}

#[test]
fn blanks_between_request_line_parts() {
    let buf = b"GET  \t/x\t \tHTTP/1.1\r\nHost: a\r\n\r\n";
    let h = req_ok(buf);
    assert_eq!(h.uri.get(buf), b"/x");
}

#[test]
fn request_target_bytes() {
    req_ok(b"GET /a%20b?c=d&e!$'()*+,;=:@-._~ HTTP/1.1\r\nHost: a\r\n\r\n");
    for bad in [
        &b"GET /\xc3\xa9 HTTP/1.1\r\nHost: a\r\n\r\n"[..],
        b"GET /\x01 HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET /\x7f HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET /\x00 HTTP/1.1\r\nHost: a\r\n\r\n",
    ] {
        assert_eq!(req_err(bad), H1Error::StartLine, "{:?}", String::from_utf8_lossy(bad));
    }
}

#[test]
fn methods() {
    let m = |s: &[u8]| req_ok(s).method;
    assert_eq!(m(b"HEAD / HTTP/1.1\r\nHost: a\r\n\r\n"), Method::Head);
    assert_eq!(m(b"PATCH / HTTP/1.1\r\nHost: a\r\n\r\n"), Method::Patch);
    assert_eq!(m(b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n"), Method::Options);
    // case-sensitive, and any token is a method
    assert_eq!(m(b"get / HTTP/1.1\r\nHost: a\r\n\r\n"), Method::Other);
    let buf = b"G!T / HTTP/1.1\r\nHost: a\r\n\r\n";
    let h = req_ok(buf);
    assert_eq!((h.method, h.method_raw.get(buf)), (Method::Other, &b"G!T"[..]));
    assert_eq!(req_err(b"G(T / HTTP/1.1\r\n\r\n"), H1Error::StartLine);
    // PRI belongs to the HTTP/2 preface
    assert_eq!(req_err(H2_PREFACE), H1Error::StartLine);
    assert_eq!(req_err(b"pri / HTTP/1.1\r\nHost: a\r\n\r\n"), H1Error::StartLine);
}

#[test]
fn h2_preface_is_spotted_before_parsing() {
    assert_eq!(is_h2_preface(b"PRI * HT"), None);
    assert_eq!(is_h2_preface(H2_PREFACE), Some(true));
    assert_eq!(is_h2_preface(b"GET / HTTP/1.1\r\n"), Some(false));
    assert_eq!(is_h2_preface(b""), None);
}

// === size limits ===

#[test]
fn head_larger_than_max_len() {
    let buf = b"GET / HTTP/1.1\r\nX-Long: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\nHost: a\r\n\r\n";
    let mut h = Head::default();
    // exactly the limit passes
    assert_eq!(parse_request(buf, buf.len(), &mut h), Ok(true));
    assert_eq!(req_max(buf, buf.len()).map(|h| h.map(|h| h.len)), Ok(Some(buf.len())));
    // one byte less: complete in the buffer, but too large
    assert_eq!(req_max(buf, buf.len() - 1), Err(H1Error::TooLarge));
    // incomplete and no room left
    assert_eq!(parse_request(&buf[..30], 30, &mut h), Err(H1Error::TooLarge));
    assert_eq!(parse_request(&buf[..30], 31, &mut h), Ok(false));
    // junk is refused at once, not when the buffer is full
    assert_eq!(parse_request(b"\x00GET", 1000, &mut h), Err(H1Error::StartLine));
}

#[test]
fn too_many_headers() {
    let build = |n: usize| {
        let mut b = b"GET / HTTP/1.1\r\nHost: a\r\n".to_vec();
        for i in 0..n {
            b.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
        }
        b.extend_from_slice(b"\r\n");
        b
    };
    assert_eq!(req_ok(&build(MAX_HEADERS - 1)).headers.len(), 100);
    assert_eq!(req_err(&build(MAX_HEADERS)), H1Error::TooManyHeaders);
}

// === header syntax (smuggling through malformed fields) ===

#[test]
fn space_before_colon() {
    assert_eq!(req_err(b"GET / HTTP/1.1\r\nHost : a\r\n\r\n"), H1Error::HeaderSyntax);
    assert_eq!(req_err(b"GET / HTTP/1.1\r\nContent-Length\t: 3\r\nHost: a\r\n\r\nabc"), H1Error::HeaderSyntax);
}

#[test]
fn invalid_header_names() {
    for bad in [
        &b"GET / HTTP/1.1\r\nX(A: 1\r\nHost: a\r\n\r\n"[..],
        b"GET / HTTP/1.1\r\n: 1\r\nHost: a\r\n\r\n",
        b"GET / HTTP/1.1\r\nX\xe9: 1\r\nHost: a\r\n\r\n",
        b"GET / HTTP/1.1\r\nX-A\r\nHost: a\r\n\r\n",
        b"GET / HTTP/1.1\r\nX A: 1\r\nHost: a\r\n\r\n",
    ] {
        assert_eq!(req_err(bad), H1Error::HeaderSyntax, "{:?}", String::from_utf8_lossy(bad));
    }
}

#[test]
fn cr_lf_nul_in_names() {
    assert_eq!(req_err(b"GET / HTTP/1.1\r\nX\x00A: 1\r\nHost: a\r\n\r\n"), H1Error::HeaderSyntax);
    assert_eq!(req_err(b"GET / HTTP/1.1\r\nX\rA: 1\r\nHost: a\r\n\r\n"), H1Error::HeaderSyntax);
    // an LF inside a name ends a line that has no colon
    assert_eq!(req_err(b"GET / HTTP/1.1\r\nX\nA: 1\r\nHost: a\r\n\r\n"), H1Error::HeaderSyntax);
}

#[test]
fn bare_cr_in_value() {
    assert_eq!(req_err(b"GET / HTTP/1.1\r\nX-A: 1\r2\r\nHost: a\r\n\r\n"), H1Error::HeaderSyntax);
}

#[test]
fn deviation_nul_and_controls_in_values_are_refused() {
    // COMPAT: haproxy 2.6 forwards these bytes; httparse (and rampart) refuse them
    for bad in [
        &b"GET / HTTP/1.1\r\nX-A: 1\x002\r\nHost: a\r\n\r\n"[..],
        b"GET / HTTP/1.1\r\nX-A: 1\x012\r\nHost: a\r\n\r\n",
        b"GET / HTTP/1.1\r\nX-A: 1\x7f2\r\nHost: a\r\n\r\n",
    ] {
        assert_eq!(req_err(bad), H1Error::HeaderSyntax, "{:?}", String::from_utf8_lossy(bad));
    }
    let buf = b"GET / HTTP/1.1\r\nX-A: caf\xc3\xa9\t!\r\nHost: a\r\n\r\n";
    assert_eq!(kept(&req_ok(buf), buf).len(), 2);
}

#[test]
fn deviation_obs_fold_is_refused() {
    // COMPAT: haproxy 2.6 replaces the fold by spaces; the codec cannot rewrite
    assert_eq!(req_err(b"GET / HTTP/1.1\r\nX-A: 1\r\n 2\r\nHost: a\r\n\r\n"), H1Error::HeaderSyntax);
    assert_eq!(req_err(b"GET / HTTP/1.1\r\nX-A: 1\r\n\t2\r\nHost: a\r\n\r\n"), H1Error::HeaderSyntax);
    // a first line starting with a blank is refused by HAProxy too
    assert_eq!(req_err(b"GET / HTTP/1.1\r\n X: 1\r\nHost: a\r\n\r\n"), H1Error::HeaderSyntax);
}

#[test]
fn values_trimmed_of_blanks() {
    let buf = b"GET / HTTP/1.1\r\nX-A: \t 1 2 \t \r\nX-B:\r\nX-C:   \r\nHost: a\r\n\r\n";
    let h = req_ok(buf);
    assert_eq!(kept(&h, buf), [("X-A", "1 2"), ("X-B", ""), ("X-C", ""), ("Host", "a")]);
}

// === Content-Length ===

#[test]
fn content_length_frames_the_body() {
    let buf = b"POST / HTTP/1.1\r\nContent-Length: 3\r\nHost: a\r\n\r\nabc";
    let h = req_ok(buf);
    assert_eq!(h.framing, Framing::Length(3));
    assert_eq!(h.len, buf.len() - 3);
    assert_eq!(req_ok(b"POST / HTTP/1.1\r\nContent-Length: 0\r\nHost: a\r\n\r\n").framing, Framing::Length(0));
}

#[test]
fn content_length_equal_repeats_are_merged() {
    let buf = b"POST / HTTP/1.1\r\nContent-Length: 3 , 3\r\ncontent-length: 3\r\nHost: a\r\n\r\nabc";
    let h = req_ok(buf);
    assert_eq!(h.framing, Framing::Length(3));
    // the value forwarded is the single number, the repeat is dropped
    assert_eq!(kept(&h, buf), [("Content-Length", "3"), ("Host", "a")]);
}

#[test]
fn content_length_leading_zeros_kept() {
    let buf = b"POST / HTTP/1.1\r\nContent-Length: 003\r\nHost: a\r\n\r\nabc";
    let h = req_ok(buf);
    assert_eq!((h.framing, kept(&h, buf)), (Framing::Length(3), vec![("Content-Length", "003"), ("Host", "a")]));
}

#[test]
fn conflicting_content_length_list() {
    assert_eq!(req_err(b"POST / HTTP/1.1\r\nContent-Length: 3, 4\r\nHost: a\r\n\r\nabcd"), H1Error::ContentLength);
}

#[test]
fn conflicting_content_length_headers() {
    assert_eq!(
        req_err(b"POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\nHost: a\r\n\r\nabcd"),
        H1Error::ContentLength
    );
}

#[test]
fn malformed_content_length() {
    for v in [
        &b"+1"[..],
        b"1 2",
        b"0x1",
        b"",
        b" ",
        b"-1",
        b"1,",
        b",1",
        b"1,,1",
        b"1.0",
        b"1e3",
        b"\"1\"",
        b"99999999999999999999999",
        b"9223372036854775808",
    ] {
        let mut buf = b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: ".to_vec();
        buf.extend_from_slice(v);
        buf.extend_from_slice(b"\r\n\r\n");
        assert_eq!(req_err(&buf), H1Error::ContentLength, "{:?}", String::from_utf8_lossy(v));
    }
    let h = req_ok(b"POST / HTTP/1.1\r\nContent-Length: 9223372036854775807\r\nHost: a\r\n\r\n");
    assert_eq!(h.framing, Framing::Length(i64::MAX as u64));
}

#[test]
fn empty_content_length_before_a_valid_one() {
    assert_eq!(
        req_err(b"POST / HTTP/1.1\r\nContent-Length:\r\nContent-Length: 3\r\nHost: a\r\n\r\nabc"),
        H1Error::ContentLength
    );
}

// === Transfer-Encoding ===

#[test]
fn chunked_request() {
    let buf = b"POST / HTTP/1.1\r\nTransfer-Encoding: CHUNKED\r\nHost: a\r\n\r\n0\r\n\r\n";
    let h = req_ok(buf);
    assert_eq!(h.framing, Framing::Chunked);
    assert_eq!(h.headers[0].kind, HdrKind::TransferEncoding);
    assert!(!h.headers[0].drop && !h.force_close && !h.cl_and_te);
    assert_eq!(req_ok(b"POST / HTTP/1.1\r\nTransfer-Encoding:  chunked \r\nHost: a\r\n\r\n").framing, Framing::Chunked);
}

#[test]
fn te_not_ending_in_chunked() {
    for v in [&b"gzip"[..], b"identity", b"chunked, gzip", b"", b"xchunked", b"chunked;q=1"] {
        let mut buf = b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: ".to_vec();
        buf.extend_from_slice(v);
        buf.extend_from_slice(b"\r\n\r\n");
        assert_eq!(req_err(&buf), H1Error::TransferEncoding, "{:?}", String::from_utf8_lossy(v));
    }
}

#[test]
fn te_chunked_twice() {
    assert_eq!(
        req_err(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\nHost: a\r\n\r\n"),
        H1Error::TransferEncoding
    );
    assert_eq!(
        req_err(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\nHost: a\r\n\r\n"),
        H1Error::TransferEncoding
    );
}

#[test]
fn identity_coding_is_422() {
    // RFC 9112 §7: `identity` is not a transfer coding (RFC 7230 removed RFC 2616's)
    for buf in [
        &b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity, chunked\r\n\r\n"[..],
        b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Identity,Chunked\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, identity, chunked\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity, chunked\r\nContent-Length: 0\r\n\r\n",
        b"POST / HTTP/1.0\r\nHost: a\r\nTransfer-Encoding: identity, chunked\r\n\r\n",
    ] {
        let e = req_err(buf);
        assert_eq!((e, e.status(true)), (H1Error::Identity, 422), "{:?}", String::from_utf8_lossy(buf));
    }
    // a list that is invalid anyway keeps its 400, as in haproxy
    for v in [&b"identity"[..], b"chunked, identity", b"identity, gzip", b"identity,, chunked"] {
        let mut buf = b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: ".to_vec();
        buf.extend_from_slice(v);
        buf.extend_from_slice(b"\r\n\r\n");
        let e = req_err(&buf);
        assert_eq!((e, e.status(true)), (H1Error::TransferEncoding, 400), "{:?}", String::from_utf8_lossy(v));
    }
    // a coding merely named like it is none of these
    assert_eq!(
        req_ok(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: x-identity, chunked\r\n\r\n").framing,
        Framing::Chunked
    );
}

#[test]
fn deviation_te_other_coding_before_chunked_is_forwarded() {
    // COMPAT: haproxy 2.6 answers 422; RFC 9112 §6.1 allows any coding list ending in
    // chunked, and the header is forwarded as it came.
    let buf = b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n";
    let h = req_ok(buf);
    assert_eq!(h.framing, Framing::Chunked);
    assert_eq!(kept(&h, buf), [("Host", "a"), ("Transfer-Encoding", "gzip, chunked")]);
    let buf = b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n";
    assert_eq!(req_ok(buf).framing, Framing::Chunked);
}

#[test]
fn deviation_te_empty_elements_are_refused() {
    // COMPAT: haproxy 2.6 skips a trailing empty element and 422s a leading one; rampart
    // forwards the header as it came, so it refuses both (RFC 9110 §5.6.1: a sender
    // MUST NOT generate empty elements).
    for v in [&b",chunked"[..], b"chunked,", b"chunked , ", b" , chunked", b"gzip,,chunked", b""] {
        let mut buf = b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: ".to_vec();
        buf.extend_from_slice(v);
        buf.extend_from_slice(b"\r\n\r\n");
        let e = req_err(&buf);
        assert_eq!((e, e.status(true)), (H1Error::TransferEncoding, 400), "{:?}", String::from_utf8_lossy(v));
    }
    assert_eq!(
        req_err(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding:\r\n\r\n"),
        H1Error::TransferEncoding
    );
}

#[test]
fn deviation_te_codings_must_be_tokens() {
    for v in [&b"gzip;q=\"1\", chunked"[..], b"gzip chunked", b"gzip;q = 1, chunked", b"chunked;x=1"] {
        let mut buf = b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: ".to_vec();
        buf.extend_from_slice(v);
        buf.extend_from_slice(b"\r\n\r\n");
        assert_eq!(req_err(&buf), H1Error::TransferEncoding, "{:?}", String::from_utf8_lossy(v));
    }
    req_ok(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip;level=1, chunked\r\n\r\n");
}

#[test]
fn te_chunked_with_content_length() {
    for buf in [
        &b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\nHost: a\r\n\r\n"[..],
        b"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\nHost: a\r\n\r\n",
    ] {
        let h = req_ok(buf);
        assert_eq!(h.framing, Framing::Chunked);
        assert!(h.cl_and_te && h.force_close && !h.wants_keep_alive());
        assert_eq!(kept(&h, buf), [("Transfer-Encoding", "chunked"), ("Host", "a")]);
    }
    // the Content-Length is still checked
    assert_eq!(
        req_err(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: x\r\nHost: a\r\n\r\n"),
        H1Error::ContentLength
    );
}

#[test]
fn deviation_te_in_http10_is_refused() {
    // COMPAT: haproxy 2.6 frames it by chunks and closes afterwards; RFC 9112 §6.1 says
    // the framing of such a message cannot be trusted.
    for buf in [
        &b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n"[..],
        b"POST / HTTP/1.0\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
        b"HEAD / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"GET / HTTP/0.9\r\nTransfer-Encoding: chunked\r\n\r\n",
    ] {
        let e = req_err(buf);
        assert_eq!((e, e.status(true)), (H1Error::TransferEncoding, 400), "{:?}", String::from_utf8_lossy(buf));
    }
}

#[test]
fn http10_get_with_body_is_413() {
    let e = req_err(b"GET / HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc");
    assert_eq!((e, e.status(true)), (H1Error::PayloadForbidden, 413));
    assert_eq!(req_err(b"HEAD / HTTP/1.0\r\nContent-Length: 1\r\n\r\n"), H1Error::PayloadForbidden);
    assert_eq!(req_err(b"DELETE / HTTP/1.0\r\nContent-Length: 1\r\n\r\n"), H1Error::PayloadForbidden);
    assert_eq!(req_ok(b"GET / HTTP/1.0\r\nContent-Length: 0\r\n\r\n").framing, Framing::Length(0));
    assert_eq!(req_ok(b"GET / HTTP/1.1\r\nContent-Length: 3\r\nHost: a\r\n\r\nabc").framing, Framing::Length(3));
    assert_eq!(req_ok(b"POST / HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc").framing, Framing::Length(3));
}

// === Connection and hop-by-hop headers ===

#[test]
fn connection_tokens() {
    let h = req_ok(b"GET / HTTP/1.1\r\nConnection: Keep-Alive\r\nconnection: foo , CLOSE\r\nHost: a\r\n\r\n");
    assert_eq!(h.conn, ConnTokens { close: true, keep_alive: true, upgrade: false });
    assert!(h.headers[..2].iter().all(|f| f.kind == HdrKind::Connection && !f.drop));
}

#[test]
fn keep_alive_by_version() {
    let ka = |s: &[u8]| req_ok(s).wants_keep_alive();
    assert!(ka(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
    assert!(!ka(b"GET / HTTP/1.1\r\nConnection: close\r\nHost: a\r\n\r\n"));
    assert!(!ka(b"GET / HTTP/1.0\r\n\r\n"));
    assert!(ka(b"GET / HTTP/1.0\r\nConnection: KEEP-ALIVE\r\n\r\n"));
    assert!(!ka(b"GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n"));
}

#[test]
fn hop_by_hop_headers_are_dropped() {
    let buf = b"GET / HTTP/1.1\r\nConnection: foo, close\r\nFoo: 1\r\nKeep-Alive: 5\r\n\
        Proxy-Connection: x\r\nTE: gzip\r\nX-Other: y\r\nHost: a\r\n\r\n";
    let h = req_ok(buf);
    assert_eq!(kept(&h, buf), [("Connection", "foo, close"), ("X-Other", "y"), ("Host", "a")]);
}

#[test]
fn te_is_kept_only_when_it_names_trailers() {
    // As HAProxy 2.6 (reg-tests/http-messaging/http_transfer_encoding.vtc): the runtime
    // writes a kept TE as `te: trailers`.
    let te_kept = |v: &str| {
        let buf = format!("GET / HTTP/1.1\r\nTE: {v}\r\nHost: a\r\n\r\n");
        let h = req_ok(buf.as_bytes());
        h.headers.iter().any(|f| f.kind == HdrKind::Te && !f.drop)
    };
    assert!(te_kept("trailers"));
    assert!(te_kept("trailers, gzip"));
    assert!(te_kept("gzip, Trailers"));
    assert!(!te_kept("gzip"));
    assert!(!te_kept("trailers;q=0.5"));
}

#[test]
fn connection_cannot_drop_framing_headers() {
    let buf = b"POST http://a/ HTTP/1.1\r\nConnection: content-length, transfer-encoding, host, connection\r\n\
        Host: a\r\nContent-Length: 3\r\n\r\nabc";
    let h = req_ok(buf);
    assert_eq!(h.framing, Framing::Length(3));
    assert_eq!(kept(&h, buf).len(), 3);
}

#[test]
fn upgrade_without_connection_upgrade_is_dropped() {
    let buf = b"GET / HTTP/1.1\r\nUpgrade: h2c\r\nHost: a\r\n\r\n";
    let h = req_ok(buf);
    assert_eq!((h.upgrade, h.websocket), (None, false));
    assert_eq!(of_kind(&h, buf, HdrKind::Upgrade), [("h2c", true)]);
}

#[test]
fn upgrade_with_connection_upgrade() {
    let buf = b"GET / HTTP/1.1\r\nConnection: Upgrade\r\nX: 1\r\nUpgrade: foo/2\r\nHost: a\r\n\r\n";
    let h = req_ok(buf);
    assert!(h.conn.upgrade);
    assert_eq!((h.upgrade, h.websocket), (Some(2), false));
    assert_eq!(of_kind(&h, buf, HdrKind::Upgrade), [("foo/2", false)]);
}

#[test]
fn websocket_handshake() {
    let buf = b"GET /ws HTTP/1.1\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\
        Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nHost: a\r\n\r\n";
    let h = req_ok(buf);
    assert!(h.websocket);
    assert_eq!(h.upgrade, Some(1));
    assert_eq!(h.headers[2].kind, HdrKind::SecWebSocketKey);
}

#[test]
fn websocket_without_valid_key() {
    assert_eq!(
        req_err(b"GET / HTTP/1.1\r\nConnection: upgrade\r\nUpgrade: websocket\r\nHost: a\r\n\r\n"),
        H1Error::WebSocket
    );
    assert_eq!(
        req_err(
            b"GET / HTTP/1.1\r\nConnection: upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: abc\r\nHost: a\r\n\r\n"
        ),
        H1Error::WebSocket
    );
    // with a zero Content-Length the request is still bodyless: checked
    assert_eq!(
        req_err(
            b"POST / HTTP/1.1\r\nConnection: upgrade\r\nUpgrade: websocket\r\nContent-Length: 0\r\nHost: a\r\n\r\n"
        ),
        H1Error::WebSocket
    );
}

#[test]
fn upgrade_of_a_request_with_body_is_given_up() {
    let buf =
        b"POST / HTTP/1.1\r\nConnection: upgrade\r\nUpgrade: websocket\r\nContent-Length: 3\r\nHost: a\r\n\r\nabc";
    let h = req_ok(buf);
    assert!(!h.conn.upgrade && !h.websocket);
    assert_eq!(h.upgrade, None);
    assert_eq!(kept(&h, buf), [("Connection", "upgrade"), ("Content-Length", "3"), ("Host", "a")]);
}

// === Expect, Host, kinds ===

#[test]
fn expect_100_continue() {
    let expects = |s: &[u8]| req_ok(s).expect_continue;
    assert!(expects(b"POST / HTTP/1.1\r\nExpect: 100-Continue\r\nContent-Length: 1\r\nHost: a\r\n\r\n"));
    assert!(expects(b"POST / HTTP/1.1\r\nExpect: 100-continue, x\r\nTransfer-Encoding: chunked\r\nHost: a\r\n\r\n"));
    assert!(expects(b"POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 0\r\nHost: a\r\n\r\n"));
    assert!(!expects(b"POST / HTTP/1.1\r\nExpect: 100-continue-x\r\nContent-Length: 1\r\nHost: a\r\n\r\n"));
    // only the first Expect header counts
    assert!(!expects(b"POST / HTTP/1.1\r\nExpect: x\r\nExpect: 100-continue\r\nContent-Length: 1\r\nHost: a\r\n\r\n"));
    // not without a body length, not in HTTP/1.0
    assert!(!expects(b"POST / HTTP/1.1\r\nExpect: 100-continue\r\nHost: a\r\n\r\n"));
    assert!(!expects(b"POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n"));
}

#[test]
fn host_against_absolute_target() {
    req_ok(b"GET http://a/x HTTP/1.1\r\nHost: a\r\n\r\n");
    req_ok(b"GET http://A HTTP/1.1\r\nHost: a\r\n\r\n");
    req_ok(b"GET http://a:80/ HTTP/1.1\r\nHost: a\r\n\r\n");
    req_ok(b"GET https://a/ HTTP/1.1\r\nHost: a:443\r\n\r\n");
    req_ok(b"GET http://a/ HTTP/1.0\r\n\r\n");
    for bad in [
        &b"GET http://b/ HTTP/1.1\r\nHost: a\r\n\r\n"[..],
        b"GET http://a:8080/ HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET https://a:80/ HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET http://a/ HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        b"GET http://a/ HTTP/1.1\r\nHost:\r\n\r\n",
        b"GET http://a/ HTTP/1.1\r\n\r\n",
    ] {
        assert_eq!(req_err(bad), H1Error::Host, "{:?}", String::from_utf8_lossy(bad));
    }
}

#[test]
fn deviation_query_right_after_the_authority() {
    // COMPAT: haproxy 2.6 takes `a?x` for the authority and answers 400; RFC 3986 §3.2
    // ends the authority at `?`.
    let buf = b"GET http://a?x HTTP/1.1\r\nHost: a\r\n\r\n";
    assert_eq!(kept(&req_ok(buf), buf), [("Host", "a")]);
}

#[test]
fn deviation_absolute_authority_becomes_the_host() {
    // RFC 9112 §3.2.2: the target's authority wins; the Host value forwarded is it
    // (without a default port), whatever case or default port Host had.
    let buf = b"GET http://Example.COM/x HTTP/1.1\r\nHost: example.com:80\r\nX: 1\r\n\r\n";
    let h = req_ok(buf);
    assert_eq!(kept(&h, buf), [("Host", "Example.COM"), ("X", "1")]);
    assert!(h.uri_cut.is_empty());
    let buf = b"GET http://[::1]:8080/ HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n";
    assert_eq!(kept(&req_ok(buf), buf), [("Host", "[::1]:8080")]);
}

#[test]
fn deviation_host_is_required_once_and_valid() {
    // RFC 9112 §3.2: 400 for an HTTP/1.1 request without Host, with several Host lines
    // or with an invalid value. COMPAT: haproxy 2.6 accepts the first two (merging equal
    // lines) and forwards any value.
    let host = |v: &str| format!("GET / HTTP/1.1\r\nHost: {v}\r\n\r\n").into_bytes();
    for bad in [
        b"GET / HTTP/1.1\r\n\r\n".to_vec(),
        b"GET / HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n".to_vec(),
        b"GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n".to_vec(),
        host("a b"),
        host("a@b"),
        host("u@a"),
        host("a/b"),
        host("a,b"),
        host("a, a"),
        host("a:http"),
        host("a:65536"),
        host("a:-1"),
        host(":80"),
        host("[::1"),
        host("a\tb"),
        host("caf\u{e9}"),
    ] {
        assert_eq!(req_err(&bad), H1Error::Host, "{:?}", String::from_utf8_lossy(&bad));
    }
    for ok in ["a", "a:8080", "a:", "127.0.0.1:80", "[::1]:443", "xn--caf-dma.example", "a_b.c~d", "%41"] {
        req_ok(&host(ok));
    }
    // an empty Host is what a target without authority calls for (RFC 9112 §3.2)
    req_ok(b"GET / HTTP/1.1\r\nHost:\r\n\r\n");
    req_ok(b"GET / HTTP/1.0\r\n\r\n");
}

#[test]
fn deviation_request_target_forms() {
    // RFC 9112 §3.2: `*` only for OPTIONS, authority-form only for CONNECT, no
    // fragment, no user info. COMPAT: haproxy 2.6.12 forwards `*` with GET, `*x`, user
    // info, and `a/b` when Host is `a`; it refuses fragments too.
    for bad in [
        &b"GET * HTTP/1.1\r\nHost: a\r\n\r\n"[..],
        b"OPTIONS *x HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET /# HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET http://a/#x HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET http://u:p@a/x HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET http://u@a/x HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET a/b HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET a:80 HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET http:/a HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET http:///a HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET http://a:x/ HTTP/1.1\r\nHost: a\r\n\r\n",
    ] {
        let e = req_err(bad);
        assert_eq!((e, e.status(true)), (H1Error::Target, 400), "{:?}", String::from_utf8_lossy(bad));
    }
    req_ok(b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n");
    req_ok(b"OPTIONS http://a HTTP/1.1\r\nHost: a\r\n\r\n");
    req_ok(b"GET /x@y HTTP/1.1\r\nHost: a\r\n\r\n");
    req_ok(b"GET http://a/x@y HTTP/1.1\r\nHost: a\r\n\r\n");
}

#[test]
fn default_port_of_absolute_target_is_cut() {
    // The port is left out of the target, and Host takes the target's host (as haproxy).
    let buf = b"GET http://A:80/x HTTP/1.1\r\nHost: a:80\r\n\r\n";
    let h = req_ok(buf);
    assert_eq!(h.uri.get(buf), b"http://A:80/x");
    assert_eq!(h.uri_cut.get(buf), b":80");
    assert_eq!(kept(&h, buf), [("Host", "A")]);
    let buf = b"GET https://a:443 HTTP/1.1\r\nHost: a\r\n\r\n";
    assert_eq!(req_ok(buf).uri_cut.get(buf), b":443");
    // an empty port is a default one (haproxy 2.6.12, reg-test h1_host_normalization)
    for buf in [&b"GET http://a:/x HTTP/1.1\r\nHost: a:80\r\n\r\n"[..], b"GET https://a: HTTP/1.1\r\nHost: a:\r\n\r\n"]
    {
        let h = req_ok(buf);
        assert_eq!((h.uri_cut.get(buf), kept(&h, buf)), (&b":"[..], vec![("Host", "a")]));
    }
    for untouched in [
        &b"GET http://a:8080/ HTTP/1.1\r\nHost: a:8080\r\n\r\n"[..],
        b"GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a:80\r\n\r\n",
    ] {
        assert!(req_ok(untouched).uri_cut.is_empty(), "{:?}", String::from_utf8_lossy(untouched));
    }
}

#[test]
fn connect_target() {
    let buf = b"CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\nContent-Length: 3\r\n\r\nabc";
    let h = req_ok(buf);
    assert_eq!(h.method, Method::Connect);
    assert_eq!(h.framing, Framing::None);
    // the default port leaves the Host value; the Content-Length is not forwarded
    assert_eq!(kept(&h, buf), [("Host", "a")]);
    req_ok(b"CONNECT a:8443 HTTP/1.1\r\nHost: a:8443\r\n\r\n");
    req_ok(b"CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(req_err(b"CONNECT a:443 HTTP/1.1\r\nHost: b:443\r\n\r\n"), H1Error::Host);
    // RFC 9112 §3.2.3: authority-form, with a port, and nothing else
    for bad in [
        &b"CONNECT a HTTP/1.1\r\nHost: a\r\n\r\n"[..],
        b"CONNECT / HTTP/1.1\r\nHost: a\r\n\r\n",
        b"CONNECT http://a:443/ HTTP/1.1\r\nHost: a:443\r\n\r\n",
        b"CONNECT u@a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n",
        b"CONNECT a:70000 HTTP/1.1\r\nHost: a\r\n\r\n",
    ] {
        assert_eq!(req_err(bad), H1Error::Target, "{:?}", String::from_utf8_lossy(bad));
    }
    // HTTP/1.1 needs Host, CONNECT too
    assert_eq!(req_err(b"CONNECT a:443 HTTP/1.1\r\n\r\n"), H1Error::Host);
    req_ok(b"CONNECT a:443 HTTP/1.0\r\n\r\n");
}

#[test]
fn header_kinds() {
    let buf = b"GET / HTTP/1.1\r\nTE: trailers\r\nHOST: a\r\nExpect: x\r\nUpgrade: u\r\nTrailer: t\r\n\
        Connection: c\r\nKeep-Alive: k\r\nContent-Length: 0\r\nProxy-Connection: p\r\nSec-WebSocket-Key: s\r\n\
        Sec-WebSocket-Accept: s\r\nX-Transfer-Encodin: x\r\n\r\n";
    let h = req_ok(buf);
    let kinds: Vec<HdrKind> = h.headers.iter().map(|f| f.kind).collect();
    use HdrKind::*;
    assert_eq!(
        kinds,
        [
            Te,
            Host,
            Expect,
            Upgrade,
            Trailer,
            Connection,
            KeepAlive,
            ContentLength,
            ProxyConnection,
            SecWebSocketKey,
            SecWebSocketAccept,
            Other
        ]
    );
}

#[test]
fn head_is_reset_between_messages() {
    let first = b"POST / HTTP/1.1\r\nExpect: 100-continue\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\
        Content-Length: 3\r\nHost: a:80\r\n\r\n";
    let second = b"GET /b HTTP/1.1\r\nHost: a\r\n\r\n";
    let mut h = Head::default();
    assert_eq!(parse_request(first, MAX, &mut h), Ok(true));
    let cap = h.headers.capacity();
    assert_eq!(parse_request(second, MAX, &mut h), Ok(true));
    assert_eq!(h.headers.capacity(), cap);
    let mut fresh = Head::default();
    parse_request(second, MAX, &mut fresh).unwrap();
    assert_eq!(h, fresh);
}

#[test]
fn error_status_codes() {
    assert_eq!(H1Error::HeaderSyntax.status(true), 400);
    assert_eq!(H1Error::TooLarge.status(true), 400);
    assert_eq!(H1Error::PayloadForbidden.status(false), 502);
}

#[test]
fn connection_names_are_capped() {
    // 40 names: the first 32 are honoured, the rest forwarded (HAProxy forwards all)
    let mut buf = b"GET / HTTP/1.1\r\nHost: a\r\nConnection: ".to_vec();
    let names: Vec<String> = (0..40).map(|i| format!("x-{i}")).collect();
    buf.extend_from_slice(names.join(", ").as_bytes());
    buf.extend_from_slice(b"\r\n");
    for n in &names {
        buf.extend_from_slice(format!("{n}: v\r\n").as_bytes());
    }
    buf.extend_from_slice(b"\r\n");
    let h = req_ok(&buf);
    let dropped: Vec<bool> = h.headers[2..].iter().map(|f| f.drop).collect();
    assert_eq!(dropped, [vec![true; 32], vec![false; 8]].concat());
}

#[test]
fn header_name_longer_than_the_buffer_is_400() {
    // As HAProxy: a head that does not fit is refused with 400, whatever part of it
    // (here a name) is too long; nothing is cut.
    let mut buf = b"GET / HTTP/1.1\r\nHost: a\r\nX-".to_vec();
    buf.extend_from_slice(&[b'n'; 2000]);
    buf.extend_from_slice(b": v\r\n\r\n");
    let e = req_max(&buf, 1024).unwrap_err();
    assert_eq!((e, e.status(true)), (H1Error::TooLarge, 400));
    assert_eq!(req_max(&buf, 4096).map(|h| h.map(|h| h.headers.len())), Ok(Some(2)));
}
