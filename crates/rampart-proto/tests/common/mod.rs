//! Helpers shared by the h1 codec tests: every input is parsed whole, then again as
//! each of its prefixes (the way bytes arrive from a socket), and the answers must
//! agree: a prefix shorter than the head is "incomplete" (or already the same error),
//! a prefix holding the whole head gives the same head.

#![allow(dead_code)] // each test binary uses a part of these helpers

use rampart_proto::h1::{parse_request, parse_response, ChunkedState, H1Error, HdrKind, Head, Header, Method};

/// Room given to heads in tests unless a test is about the limit.
pub const MAX: usize = 16384;

/// Parses `input` as a request, checking every prefix agrees. `Ok(None)`: incomplete.
pub fn req(input: &[u8]) -> Result<Option<Head>, H1Error> {
    req_max(input, MAX)
}

pub fn req_max(input: &[u8], max: usize) -> Result<Option<Head>, H1Error> {
    checked(input, |b, h| parse_request(b, max, h))
}

/// Parses `input` as the response to a `method` request, checking every prefix.
pub fn resp(input: &[u8], method: Method) -> Result<Option<Head>, H1Error> {
    checked(input, |b, h| parse_response(b, MAX, method, h))
}

/// A complete request head, or a panic saying why not.
pub fn req_ok(input: &[u8]) -> Head {
    match req(input) {
        Ok(Some(h)) => h,
        other => panic!("{:?}: {other:?}", String::from_utf8_lossy(input)),
    }
}

/// The error a request gives, or a panic.
pub fn req_err(input: &[u8]) -> H1Error {
    match req(input) {
        Err(e) => e,
        other => panic!("{:?}: expected an error, got {other:?}", String::from_utf8_lossy(input)),
    }
}

pub fn resp_ok(input: &[u8], method: Method) -> Head {
    match resp(input, method) {
        Ok(Some(h)) => h,
        other => panic!("{:?}: {other:?}", String::from_utf8_lossy(input)),
    }
}

pub fn resp_err(input: &[u8], method: Method) -> H1Error {
    match resp(input, method) {
        Err(e) => e,
        other => panic!("{:?}: expected an error, got {other:?}", String::from_utf8_lossy(input)),
    }
}

fn checked(input: &[u8], parse: impl Fn(&[u8], &mut Head) -> Result<bool, H1Error>) -> Result<Option<Head>, H1Error> {
    let mut whole = Head::default();
    let result = parse(input, &mut whole).map(|done| done.then(|| whole.clone()));
    // one Head reused for every prefix, as the runtime reuses one per connection side
    let mut head = Head::default();
    let mut failed = false;
    for end in 0..=input.len() {
        let prefix = &input[..end];
        let got = parse(prefix, &mut head);
        let is_err = got.is_err();
        let what = || format!("prefix {end} of {:?}", String::from_utf8_lossy(input));
        match (&result, got) {
            (Err(e), Err(g)) => assert_eq!(*e, g, "{}", what()),
            (_, Err(g)) => panic!("{}: error {g:?}, whole input gives {result:?}", what()),
            (_, Ok(false)) => {
                assert!(!failed, "{}: incomplete after an error", what());
                if let Ok(Some(h)) = &result {
                    assert!(end < h.len, "{}: incomplete but the head is {} bytes", what(), h.len);
                }
            }
            (Ok(Some(h)), Ok(true)) => {
                assert!(end >= h.len, "{}: complete before {} bytes", what(), h.len);
                assert_eq!(&head, h, "{}", what());
            }
            (_, Ok(true)) => panic!("{}: complete, whole input gives {result:?}", what()),
        }
        failed |= is_err;
    }
    result
}

/// The header at `i`, its name and value as text.
pub fn field<'b>(head: &Head, buf: &'b [u8], i: usize) -> (&'b str, &'b str, Header) {
    let h = head.headers[i];
    (std::str::from_utf8(h.name.get(buf)).unwrap(), std::str::from_utf8(h.value.get(buf)).unwrap(), h)
}

/// The (name, value) pairs of the headers the proxy forwards (`drop` unset).
pub fn kept<'b>(head: &Head, buf: &'b [u8]) -> Vec<(&'b str, &'b str)> {
    (0..head.headers.len()).map(|i| field(head, buf, i)).filter(|(_, _, h)| !h.drop).map(|(n, v, _)| (n, v)).collect()
}

/// The names of the headers of kind `kind` and whether each is dropped.
pub fn of_kind<'b>(head: &Head, buf: &'b [u8], kind: HdrKind) -> Vec<(&'b str, bool)> {
    (0..head.headers.len())
        .map(|i| field(head, buf, i))
        .filter(|(_, _, h)| h.kind == kind)
        .map(|(_, v, h)| (v, h.drop))
        .collect()
}

/// Scans a chunked body whole, then split in two at every offset, then byte by byte;
/// all must agree. Returns (bytes of the body, body complete).
pub fn chunked(input: &[u8]) -> Result<(usize, bool), H1Error> {
    let whole = ChunkedState::new().scan(input);
    for cut in 0..=input.len() {
        assert_eq!(scan_pieces(input, &[cut]), whole, "split at {cut} of {:?}", String::from_utf8_lossy(input));
    }
    let every: Vec<usize> = (1..input.len()).collect();
    assert_eq!(scan_pieces(input, &every), whole, "byte by byte: {:?}", String::from_utf8_lossy(input));
    whole
}

/// Feeds `input` cut at `cuts` to one scanner, as successive reads would.
pub fn scan_pieces(input: &[u8], cuts: &[usize]) -> Result<(usize, bool), H1Error> {
    let mut st = ChunkedState::new();
    let mut total = 0;
    let mut from = 0;
    for &to in cuts.iter().chain(std::iter::once(&input.len())) {
        let piece = &input[from..to];
        let (n, done) = st.scan(piece)?;
        total += n;
        if done {
            return Ok((total, true));
        }
        assert_eq!(n, piece.len(), "an unfinished body must take every byte");
        from = to;
    }
    Ok((total, false))
}
