//! Arbitrary bytes as a chunked body, scanned whole and in three pieces (cut where the
//! first two bytes say): both must agree on the error, or on the bytes taken and
//! whether the body ended. A small line limit exercises the size checks.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rampart_proto::h1::{ChunkedState, H1Error};

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
});

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
