//! The static table (RFC 7541 §2.3.1, Appendix A): 61 fields every HPACK context
//! starts with, at indexes 1 to 61, before the dynamic table.
//!
//! HAProxy counterpart: `hpack_sht[]` (src/hpack-tbl.c) and, for the encoder's
//! lookups, the generated tables of src/hpack-enc.c. Here tables built at compile time
//! give, by a name's length, the runs of indexes that share a name.

/// The entries, index 1 first: (name, value).
pub const STATIC_TABLE: [(&str, &str); 61] = [
    (":authority", ""),
    (":method", "GET"),
    (":method", "POST"),
    (":path", "/"),
    (":path", "/index.html"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "200"),
    (":status", "204"),
    (":status", "206"),
    (":status", "304"),
    (":status", "400"),
    (":status", "404"),
    (":status", "500"),
    ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", ""),
    ("accept-ranges", ""),
    ("accept", ""),
    ("access-control-allow-origin", ""),
    ("age", ""),
    ("allow", ""),
    ("authorization", ""),
    ("cache-control", ""),
    ("content-disposition", ""),
    ("content-encoding", ""),
    ("content-language", ""),
    ("content-length", ""),
    ("content-location", ""),
    ("content-range", ""),
    ("content-type", ""),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("expect", ""),
    ("expires", ""),
    ("from", ""),
    ("host", ""),
    ("if-match", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("if-range", ""),
    ("if-unmodified-since", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("max-forwards", ""),
    ("proxy-authenticate", ""),
    ("proxy-authorization", ""),
    ("range", ""),
    ("referer", ""),
    ("refresh", ""),
    ("retry-after", ""),
    ("server", ""),
    ("set-cookie", ""),
    ("strict-transport-security", ""),
    ("transfer-encoding", ""),
    ("user-agent", ""),
    ("vary", ""),
    ("via", ""),
    ("www-authenticate", ""),
];

/// Number of static entries; dynamic indexes start after them.
pub const STATIC_LEN: usize = STATIC_TABLE.len();

/// The entry at a 1-based static index.
pub(crate) fn get(index: usize) -> Option<(&'static [u8], &'static [u8])> {
    let (name, value) = STATIC_TABLE.get(index.checked_sub(1)?)?;
    Some((name.as_bytes(), value.as_bytes()))
}

/// Looks a field up: the index of an entry with this name and value, else of the
/// first entry with this name; the flag says whether the value matched.
pub(crate) fn find(name: &[u8], value: &[u8]) -> Option<(usize, bool)> {
    let (first, last) = name_range(name)?;
    let exact = (first..=last).find(|&i| STATIC_TABLE[i - 1].1.as_bytes() == value);
    Some(exact.map_or((first, false), |i| (i, true)))
}

/// The first and last index of the entries named `name`.
///
/// PERF: a look at the few names of the same length (at most 6), from tables built at
/// compile time; a `match` on the 52 names compiled to a long chain of comparisons whose
/// code was a measurable share of the instruction-cache misses of an HTTP/2 response.
fn name_range(name: &[u8]) -> Option<(usize, usize)> {
    let (runs, by_len) = &RUNS_BY_LEN;
    let &(from, to) = by_len.get(name.len())?;
    let first =
        runs[from as usize..to as usize].iter().map(|&i| i as usize).find(|&i| STATIC_TABLE[i].0.as_bytes() == name)?;
    let mut last = first;
    while last + 1 < STATIC_LEN && STATIC_TABLE[last + 1].0.as_bytes() == name {
        last += 1;
    }
    Some((first + 1, last + 1))
}

/// The longest name of the table (`access-control-allow-origin`).
const MAX_NAME: usize = 27;

/// The 0-based positions of the entries that start a run of one name, by the name's
/// length, and for each length `n` the range of those positions (`.1[n]`).
const RUNS_BY_LEN: ([u8; STATIC_LEN], [(u8, u8); MAX_NAME + 1]) = runs_by_len();

const fn runs_by_len() -> ([u8; STATIC_LEN], [(u8, u8); MAX_NAME + 1]) {
    let (mut runs, mut by_len) = ([0u8; STATIC_LEN], [(0u8, 0u8); MAX_NAME + 1]);
    let (mut n, mut len) = (0, 0);
    while len <= MAX_NAME {
        let from = n;
        let mut i = 0;
        while i < STATIC_LEN {
            let name = STATIC_TABLE[i].0.as_bytes();
            let starts_run = i == 0 || !same(STATIC_TABLE[i - 1].0.as_bytes(), name);
            if name.len() == len && starts_run {
                runs[n] = i as u8;
                n += 1;
            }
            i += 1;
        }
        by_len[len] = (from as u8, n as u8);
        len += 1;
    }
    assert!(n == 52, "every run of a name is indexed once (names longer than MAX_NAME?)");
    (runs, by_len)
}

const fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}
