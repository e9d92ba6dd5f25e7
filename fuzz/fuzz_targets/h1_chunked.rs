//! Arbitrary bytes as a chunked body, scanned whole and in three pieces (cut where the
//! first two bytes say): both must agree on the error, or on the bytes taken and
//! whether the body ended. A small line limit exercises the size checks.
//!
//! Differential: the body is forwarded as it came, so the scanner and a second strict
//! decoder (`rampart_testkit::strict::dechunk`, written apart from rampart-proto) must
//! agree: a body the scanner ends after `n` bytes decodes there, an unfinished one is
//! incomplete, a refused one is invalid (but for rampart's size limits).

#![no_main]

use libfuzzer_sys::fuzz_target;
use rampart_proto::h1::{ChunkedState, H1Error};
use rampart_testkit::strict::{dechunk, Stop};

const LIMIT: usize = 64;

fuzz_target!(|data: &[u8]| {
    let Some((cuts, body)) = data.split_first_chunk::<2>() else { return };
    let whole = ChunkedState::with_limit(LIMIT).scan(body);
    if let Ok((n, done)) = whole {
        assert!(n <= body.len());
        assert!(done || n == body.len(), "an unfinished body takes every byte");
    }
    let mut a = usize::from(cuts[0]) * body.len() / 256;
    let mut b = usize::from(cuts[1]) * body.len() / 256;
    if a > b {
        std::mem::swap(&mut a, &mut b);
    }
    assert_eq!(in_pieces(body, &[a, b]), whole, "cut at {a} and {b}");
    differential(body, whole);
});

fn differential(body: &[u8], scanned: Result<(usize, bool), H1Error>) {
    let strict = dechunk(body);
    match (scanned, &strict) {
        (Ok((n, true)), Ok(body)) => assert_eq!(body.len, n, "the strict decoder ends the body elsewhere"),
        (Ok((n, true)), _) => panic!("the scanner ends the body after {n} bytes, the strict decoder says {strict:?}"),
        (Ok((_, false)), Err(Stop::Incomplete)) => {}
        (Ok((_, false)), _) => panic!("the scanner wants more, the strict decoder says {strict:?}"),
        // a refusal may come before the line is over, when the strict decoder still
        // waits for it; it must never take the body as complete
        (Err(H1Error::Chunk | H1Error::HeaderSyntax), Ok(_)) => {
            panic!("the scanner refuses a body the strict decoder takes: {strict:?}")
        }
        // the line and trailer-count limits are rampart's, not the grammar's
        (Err(_), _) => {}
    }
}

fn in_pieces(body: &[u8], cuts: &[usize]) -> Result<(usize, bool), H1Error> {
    let mut st = ChunkedState::with_limit(LIMIT);
    let (mut total, mut from) = (0, 0);
    for &to in cuts.iter().chain(std::iter::once(&body.len())) {
        let (n, done) = st.scan(&body[from..to])?;
        total += n;
        if done {
            return Ok((total, true));
        }
        from = to;
    }
    Ok((total, false))
}
