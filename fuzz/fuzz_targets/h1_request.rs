//! Arbitrary bytes as a request head. Parsing must not panic, a complete head must
//! stay inside the bytes and the limit and parse the same on its own, and a prefix
//! (cut where the first byte says) must agree with the whole input.
//!
//! Differential: a head the codec accepts is written as rampart forwards it
//! (`common::forward`) and read again by a second strict parser
//! (`rampart_testkit::strict`, httparse plus RFC 9112 target, Host and framing checks
//! written apart from rampart-proto), which must accept it and see the same message:
//! method, target, headers, framing. A chunked body that follows is scanned and must
//! decode the same with the strict chunk decoder.

#![no_main]

#[path = "common/forward.rs"]
mod forward;

use libfuzzer_sys::fuzz_target;
use rampart_proto::h1::{parse_request, ChunkedState, Framing, HdrKind, Head, Method};
use rampart_testkit::strict::{self, Parsed};

const MAX: usize = 2048;

fuzz_target!(|data: &[u8]| {
    let mut head = Head::default();
    let whole = parse_request(data, MAX, &mut head);
    if whole == Ok(true) {
        check_head(data, &head);
        let mut again = Head::default();
        assert_eq!(parse_request(&data[..head.len], MAX, &mut again), Ok(true));
        assert_eq!(again, head, "the head alone parses the same");
        differential(data, &head);
    }
    if let Some(&first) = data.first() {
        let cut = first as usize * data.len() / 256;
        let mut part = Head::default();
        match (parse_request(&data[..cut], MAX, &mut part), whole) {
            (Ok(false), Ok(true)) => assert!(cut < head.len, "incomplete prefix {cut} holds the head"),
            (Ok(false), _) => {}
            (Ok(true), Ok(true)) => assert_eq!(part, head, "prefix {cut}"),
            (Err(a), Err(b)) => assert_eq!(a, b, "prefix {cut}"),
            (a, b) => panic!("prefix {cut}: {a:?}, whole input: {b:?}"),
        }
    }
});

fn differential(data: &[u8], head: &Head) {
    let forwarded = forward::request_head(data, head);
    let m = match strict::request_head(&forwarded) {
        Parsed::Complete(m) => m,
        other => {
            panic!("rampart would forward {:?}, the strict parser says {other:?}", String::from_utf8_lossy(&forwarded))
        }
    };
    assert_eq!(m.first.as_bytes(), head.method_raw.get(data), "method");
    assert_eq!(m.second.as_bytes(), forward::target(data, head), "target");
    forward::assert_same_head(data, head, &m, &forwarded);
    if head.framing == Framing::Chunked {
        let body = &data[head.len..];
        if let Ok((n, true)) = ChunkedState::new().scan(body) {
            let decoded = strict::dechunk(&body[..n]);
            assert!(
                matches!(&decoded, Ok(b) if b.len == n),
                "body {:?}: {decoded:?}",
                String::from_utf8_lossy(body)
            );
        }
    }
}

fn check_head(data: &[u8], head: &Head) {
    assert!(head.len <= data.len() && head.len <= MAX);
    let end = head.len as u32;
    for s in [head.method_raw, head.uri].iter().chain(head.headers.iter().flat_map(|h| [&h.name, &h.value])) {
        assert!(s.start <= s.end && s.end <= end, "slice {s:?} outside the head ({end})");
    }
    assert!(!head.method_raw.is_empty() && !head.uri.is_empty());
    for h in &head.headers {
        let value = h.value.get(data);
        assert!(!value.iter().any(|b| matches!(b, b'\r' | b'\n' | 0)), "CR, LF or NUL in a value");
        assert!(!value.first().is_some_and(|b| matches!(b, b' ' | b'\t')), "value not trimmed");
    }
    if head.cl_and_te {
        assert_eq!(head.framing, Framing::Chunked);
        assert!(head.force_close);
        assert!(head.headers.iter().filter(|h| h.kind == HdrKind::ContentLength).all(|h| h.drop));
    }
    if head.method == Method::Connect {
        assert_eq!(head.framing, Framing::None);
    }
    if let Some(i) = head.upgrade {
        assert!(head.conn.upgrade && head.headers[i as usize].kind == HdrKind::Upgrade);
    }
    assert_ne!(head.framing, Framing::UntilClose, "requests always have a known length");
}
