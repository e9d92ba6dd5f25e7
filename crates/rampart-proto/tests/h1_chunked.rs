//! Chunked bodies: each input scanned whole, split in two at every offset, and byte by
//! byte; all must agree. Expected answers come from haproxy 2.6.12 (400 or forwarded),
//! except where a test name says `deviation`: rampart forwards chunks as they came, so
//! it refuses every form two parsers could frame differently (RFC 9112 §7.1 to the
//! letter; see the module doc of `rampart_proto::h1::chunked`).

mod common;

use common::*;
use rampart_proto::h1::{ChunkedState, H1Error, MAX_HEADERS};

fn ok(input: &[u8]) -> usize {
    match chunked(input) {
        Ok((n, true)) => n,
        other => panic!("{:?}: {other:?}", String::from_utf8_lossy(input)),
    }
}

fn err(input: &[u8]) -> H1Error {
    match chunked(input) {
        Err(e) => e,
        other => panic!("{:?}: expected an error, got {other:?}", String::from_utf8_lossy(input)),
    }
}

#[test]
fn simple_body() {
    let body = b"3\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\n\r\n";
    assert_eq!(ok(body), body.len());
}

#[test]
fn bytes_after_the_end_are_not_taken() {
    let body = b"3\r\nabc\r\n0\r\n\r\n";
    let mut input = body.to_vec();
    input.extend_from_slice(b"GET / HTTP/1.1\r\n\r\n");
    assert_eq!(ok(&input), body.len());
    // once done, the scanner takes nothing more
    let mut st = ChunkedState::new();
    assert_eq!(st.scan(&input), Ok((body.len(), true)));
    assert_eq!(st.scan(b"more"), Ok((0, true)));
    assert!(st.is_done());
}

#[test]
fn incomplete_body_takes_everything() {
    assert_eq!(chunked(b"3\r\nab"), Ok((5, false)));
    assert_eq!(chunked(b"3\r\nabc\r\n0\r\n"), Ok((11, false)));
    assert_eq!(chunked(b""), Ok((0, false)));
}

#[test]
fn deviation_bare_lf_refused() {
    // COMPAT: haproxy 2.6 takes a bare LF for CRLF everywhere in a chunked body
    for body in
        [&b"3\nabc\r\n0\r\n\r\n"[..], b"3;a=b\nabc\r\n0\r\n\r\n", b"3\r\nabc\n0\r\n\r\n", b"3\r\nabc\r\n0\n\r\n"]
    {
        assert_eq!(err(body), H1Error::Chunk, "{:?}", String::from_utf8_lossy(body));
    }
    for body in [&b"3\r\nabc\r\n0\r\n\n"[..], b"0\r\nX: 1\n\r\n", b"0\r\nX: 1\r\n\n"] {
        assert_eq!(err(body), H1Error::HeaderSyntax, "{:?}", String::from_utf8_lossy(body));
    }
}

#[test]
fn bare_cr_refused() {
    for body in
        [&b"3\rabc\r\n0\r\n\r\n"[..], b"3;a\rb\r\nabc\r\n0\r\n\r\n", b"3\r\nabc\r0\r\n\r\n", b"3\r\nabc\r\r\n0\r\n\r\n"]
    {
        assert_eq!(err(body), H1Error::Chunk, "{:?}", String::from_utf8_lossy(body));
    }
    for body in [&b"0\r\n\r\r\n"[..], b"0\r\nX: 1\r2\r\n\r\n", b"0\r\nX: 1\r\r\n\r\n", b"0\r\n\rX"] {
        assert_eq!(err(body), H1Error::HeaderSyntax, "{:?}", String::from_utf8_lossy(body));
    }
}

#[test]
fn hex_sizes() {
    let body = b"A\r\n0123456789\r\na\r\n0123456789\r\n0\r\n\r\n";
    assert_eq!(ok(body), body.len());
    let body = b"0000000000000003\r\nabc\r\n000\r\n\r\n";
    assert_eq!(ok(body), body.len());
}

#[test]
fn deviation_more_than_16_hex_digits_refused() {
    // COMPAT: haproxy 2.6 skips leading zeros freely; a server reading the size into
    // 64 bits could wrap on 17 digits
    assert_eq!(err(b"00000000000000003\r\nabc\r\n0\r\n\r\n"), H1Error::Chunk);
    assert_eq!(err(b"3\r\nabc\r\n00000000000000000\r\n\r\n"), H1Error::Chunk);
    assert_eq!(err(b"10000000000000003\r\n"), H1Error::Chunk);
}

#[test]
fn extensions() {
    for body in [
        &b"3;a=b\r\nabc\r\n0;x\r\n\r\n"[..],
        b"3;a=\"b;c\"\r\nabc\r\n0\r\n\r\n",
        b"3;a=\"b\\\"\\\\c\";d=e;f\r\nabc\r\n0\r\n\r\n",
        b"3;a=\"\"\r\nabc\r\n0\r\n\r\n",
        b"3;a=\"\t \xc3\xa9\\\t\"\r\nabc\r\n0\r\n\r\n",
        b"3;!#$%&'*+-.^_`|~=!#$%&'*+-.^_`|~\r\nabc\r\n0\r\n\r\n",
    ] {
        assert_eq!(ok(body), body.len(), "{:?}", String::from_utf8_lossy(body));
    }
}

#[test]
fn deviation_blanks_after_size_or_in_extensions_refused() {
    // COMPAT: haproxy 2.6 skips blanks after the size; RFC 9112 §7.1.1 calls them BWS,
    // which no sender may generate (RFC 9110 §5.6.3)
    for body in [
        &b"3  \r\nabc\r\n0\r\n\r\n"[..],
        b"3\t\r\nabc\r\n0\r\n\r\n",
        b"3 ;a=b\r\nabc\r\n0\r\n\r\n",
        b"3; a=b\r\nabc\r\n0\r\n\r\n",
        b"3;a =b\r\nabc\r\n0\r\n\r\n",
        b"3;a= b\r\nabc\r\n0\r\n\r\n",
        b"3;a=b \r\nabc\r\n0\r\n\r\n",
        b"3;a=\"b\" \r\nabc\r\n0\r\n\r\n",
        b"0 \r\n\r\n",
    ] {
        assert_eq!(err(body), H1Error::Chunk, "{:?}", String::from_utf8_lossy(body));
    }
}

#[test]
fn deviation_invalid_extensions_refused() {
    // COMPAT: haproxy 2.6 skips extensions blindly (3.4 checks the quoting); rampart
    // wants `;token[=token|quoted-string]`
    for body in [
        &b"3;\r\nabc\r\n0\r\n\r\n"[..],                  // no name
        b"3;=b\r\nabc\r\n0\r\n\r\n",                     // no name
        b"3;;a\r\nabc\r\n0\r\n\r\n",                     // empty extension
        b"3;a=\r\nabc\r\n0\r\n\r\n",                     // no value
        b"3;a=b=c\r\nabc\r\n0\r\n\r\n",                  // two `=`
        b"3;a(b\r\nabc\r\n0\r\n\r\n",                    // not a token
        b"3;a=b\"c\"\r\nabc\r\n0\r\n\r\n",               // quote inside a token
        b"3;a=\"b\"c\r\nabc\r\n0\r\n\r\n",               // text after the quoted string
        b"3;a=\xc3\xa9\r\nabc\r\n0\r\n\r\n",             // obs-text outside quotes
        b"1;a=\"\r\nX\r\n0\r\n\r\n\"\r\nY\r\n0\r\n\r\n", // quote open at the line end
        b"1;a=\"b\\\r\nX\r\n0\r\n\r\n",                  // escaped CR
        b"1;a=b\\c\r\nX\r\n0\r\n\r\n",                   // backslash outside quotes
        b"3;a\x01\x00b\r\nabc\r\n0\r\n\r\n",             // controls
        b"3;a=\"\x01\"\r\nabc\r\n0\r\n\r\n",             // control in quotes
        b"3;a=\"\x7f\"\r\nabc\r\n0\r\n\r\n",             // DEL in quotes
        b"3;a=\"\\\x01\"\r\nabc\r\n0\r\n\r\n",           // escaped control
    ] {
        assert_eq!(err(body), H1Error::Chunk, "{:?}", String::from_utf8_lossy(body));
    }
}

#[test]
fn largest_size_is_13_hex_digits() {
    let mut st = ChunkedState::new();
    assert_eq!(st.scan(b"fffffffffffff\r\n"), Ok((15, false)));
    assert_eq!(st.data_left(), (1 << 52) - 1);
    assert_eq!(err(b"10000000000000\r\nabc\r\n0\r\n\r\n"), H1Error::Chunk);
    assert_eq!(err(b"ffffffffffffffffffff\r\n"), H1Error::Chunk);
}

#[test]
fn invalid_chunk_sizes() {
    for body in [
        &b"0x3\r\nabc\r\n0\r\n\r\n"[..],
        b"-3\r\nabc\r\n0\r\n\r\n",
        b"+3\r\nabc\r\n0\r\n\r\n",
        b"\r\nabc\r\n0\r\n\r\n",
        b" 3\r\nabc\r\n0\r\n\r\n",
        b"g\r\n",
        b"3 4\r\nabc\r\n0\r\n\r\n",
        b"3\rabc\r\n0\r\n\r\n",
        b"3\x00\r\nabc\r\n0\r\n\r\n",
        b";x\r\n",
    ] {
        assert_eq!(err(body), H1Error::Chunk, "{:?}", String::from_utf8_lossy(body));
    }
}

#[test]
fn data_not_followed_by_crlf() {
    assert_eq!(err(b"3\r\nabcX\r\n0\r\n\r\n"), H1Error::Chunk);
    assert_eq!(err(b"3\r\nabc\r0\r\n\r\n"), H1Error::Chunk);
    assert_eq!(err(b"3\r\nabcd\r\n0\r\n\r\n"), H1Error::Chunk);
}

#[test]
fn trailers() {
    let body = b"3\r\nabc\r\n0\r\nX-T: 1\r\nY:\r\nZ: a b\t\xc3\xa9\r\n\r\n";
    let mut st = ChunkedState::new();
    assert_eq!(st.scan(&body[..13]), Ok((13, false)));
    assert!(st.in_trailers());
    assert_eq!(ok(body), body.len());
}

#[test]
fn malformed_trailers() {
    for body in [
        &b"0\r\nX T: 1\r\n\r\n"[..],
        b"0\r\nXT\r\n\r\n",
        b"0\r\nXT : 1\r\n\r\n",
        b"0\r\n: 1\r\n\r\n",
        b"0\r\nXT: 1\r2\r\n\r\n",
        b"0\r\n\r\r\n",
    ] {
        assert_eq!(err(body), H1Error::HeaderSyntax, "{:?}", String::from_utf8_lossy(body));
    }
}

#[test]
fn deviation_trailer_folding_and_controls() {
    // COMPAT: haproxy 2.6 forwards these; rampart applies the head's rules
    assert_eq!(err(b"0\r\nXT: 1\r\n 2\r\n\r\n"), H1Error::HeaderSyntax);
    assert_eq!(err(b"0\r\nXT: 1\x012\r\n\r\n"), H1Error::HeaderSyntax);
    assert_eq!(err(b"0\r\nXT: 1\x002\r\n\r\n"), H1Error::HeaderSyntax);
}

#[test]
fn too_many_trailers() {
    let mut body = b"0\r\n".to_vec();
    for i in 0..MAX_HEADERS {
        body.extend_from_slice(format!("T{i}: v\r\n").as_bytes());
    }
    let mut more = body.clone();
    body.extend_from_slice(b"\r\n");
    assert_eq!(ChunkedState::new().scan(&body), Ok((body.len(), true)));
    more.extend_from_slice(b"X: y\r\n\r\n");
    assert_eq!(ChunkedState::new().scan(&more), Err(H1Error::TooManyHeaders));
}

#[test]
fn size_line_and_trailers_are_bounded() {
    let mut st = ChunkedState::with_limit(16);
    assert_eq!(st.scan(b"3;0123456789\r\nabc\r\n"), Ok((19, false)));
    assert_eq!(st.scan(b"3;01234567890123\r\n"), Err(H1Error::TooLarge));
    // the error sticks
    assert_eq!(st.scan(b"0\r\n\r\n"), Err(H1Error::TooLarge));
    let mut st = ChunkedState::with_limit(16);
    assert_eq!(st.scan(b"0\r\nX: 01234567890123\r\n"), Err(H1Error::TooLarge));
}

#[test]
fn data_can_be_passed_without_scanning() {
    let mut st = ChunkedState::new();
    assert_eq!(st.scan(b"1000\r\n"), Ok((6, false)));
    assert_eq!(st.data_left(), 4096);
    st.skip_data(4000);
    assert_eq!(st.data_left(), 96);
    assert_eq!(st.scan(&[b'x'; 50]), Ok((50, false)));
    st.skip_data(46);
    assert_eq!(st.data_left(), 0);
    assert_eq!(st.scan(b"\r\n0\r\n\r\n"), Ok((7, true)));
}

#[test]
fn large_chunk_in_one_call() {
    let mut body = b"100000\r\n".to_vec();
    body.resize(body.len() + 0x100000, b'z');
    body.extend_from_slice(b"\r\n0\r\n\r\n");
    assert_eq!(ChunkedState::new().scan(&body), Ok((body.len(), true)));
}
