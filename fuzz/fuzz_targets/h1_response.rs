//! Arbitrary bytes as a response head (the first byte picks the request method).
//! Parsing must not panic, a complete head must stay inside the bytes and the limit and
//! parse the same on its own, and a prefix must agree with the whole input.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rampart_proto::h1::{parse_response, Framing, HdrKind, Head, Method};

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
