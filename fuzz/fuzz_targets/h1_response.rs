//! Arbitrary bytes as a response head (the first byte picks the request method).
//! Parsing must not panic, a complete head must stay inside the bytes and the limit and
//! parse the same on its own, and a prefix must agree with the whole input.
//!
//! Differential: a head the codec accepts is written as rampart forwards it
//! (`common::forward`) and read again by a second strict parser
//! (`rampart_testkit::strict`), which must accept it and see the same status, headers
//! and framing; a chunked body that follows must decode the same with the strict
//! chunk decoder.

#![no_main]

#[path = "common/forward.rs"]
mod forward;

use libfuzzer_sys::fuzz_target;
use rampart_proto::h1::{parse_response, ChunkedState, Framing, HdrKind, Head, Method};
use rampart_testkit::strict::{self, Parsed};

const MAX: usize = 2048;

const METHODS: [Method; 4] = [Method::Get, Method::Head, Method::Connect, Method::Post];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, data)) = data.split_first() else { return };
    let method = METHODS[usize::from(selector) % METHODS.len()];
    let mut head = Head::default();
    let whole = parse_response(data, MAX, method, &mut head);
    if whole == Ok(true) {
        check_head(data, method, &head);
        let mut again = Head::default();
        assert_eq!(parse_response(&data[..head.len], MAX, method, &mut again), Ok(true));
        assert_eq!(again, head, "the head alone parses the same");
        differential(data, &head);
    }
    let cut = usize::from(selector) * data.len() / 256;
    let mut part = Head::default();
    match (parse_response(&data[..cut], MAX, method, &mut part), whole) {
        (Ok(false), Ok(true)) => assert!(cut < head.len, "incomplete prefix {cut} holds the head"),
        (Ok(false), _) => {}
        (Ok(true), Ok(true)) => assert_eq!(part, head, "prefix {cut}"),
        (Err(a), Err(b)) => assert_eq!(a, b, "prefix {cut}"),
        (a, b) => panic!("prefix {cut}: {a:?}, whole input: {b:?}"),
    }
});

fn differential(data: &[u8], head: &Head) {
    let forwarded = forward::response_head(data, head);
    let m = match strict::response_head(&forwarded) {
        Parsed::Complete(m) => m,
        other => {
            panic!("rampart would forward {:?}, the strict parser says {other:?}", String::from_utf8_lossy(&forwarded))
        }
    };
    assert_eq!(m.first, head.status.to_string(), "status");
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

fn check_head(data: &[u8], method: Method, head: &Head) {
    assert!(head.len <= data.len() && head.len <= MAX);
    assert!((100..=999).contains(&head.status));
    let end = head.len as u32;
    for s in std::iter::once(&head.reason).chain(head.headers.iter().flat_map(|h| [&h.name, &h.value])) {
        assert!(s.start <= s.end && s.end <= end, "slice {s:?} outside the head ({end})");
    }
    for h in &head.headers {
        assert!(!h.value.get(data).iter().any(|b| matches!(b, b'\r' | b'\n' | 0)), "CR, LF or NUL in a value");
    }
    let bodyless = method == Method::Head || head.status < 200 || head.status == 204 || head.status == 304;
    if bodyless {
        assert_eq!(head.framing, Framing::None);
    }
    if head.status < 200 || head.status == 204 {
        let framing_kinds =
            |h: &&rampart_proto::h1::Header| matches!(h.kind, HdrKind::ContentLength | HdrKind::TransferEncoding);
        assert!(head.headers.iter().filter(framing_kinds).all(|h| h.drop));
    }
    if head.framing == Framing::UntilClose {
        assert!(!head.wants_keep_alive());
    }
}
