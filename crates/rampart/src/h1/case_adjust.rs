//! `h1-case-adjust` / `h1-case-adjust-file` (global) with `option
//! h1-case-adjust-bogus-client` (frontend: responses) and `-bogus-server` (backend:
//! requests): header names rampart writes in lower case get the spelling a client or
//! server that wrongly cares about case expects (`content-length` to
//! `Content-Length`). A spelling differs from its name by case only, so the written
//! head is adjusted in place, after it was written.
//! HAProxy counterpart: `h1_adjust_case_outgoing_hdr()` (src/mux_h1.c).
//!
//! PERF: nothing runs unless the proxy has the option and the map is not empty (the
//! proxy then holds the map); with it, each header line of the head is compared to
//! the map's names (a handful, compared by length first).

use std::sync::Arc;

/// A name as written (lower case) and the spelling it gets.
type Entry = (Box<[u8]>, Box<[u8]>);

/// The names to adjust.
#[derive(Debug, Default)]
pub struct CaseMap {
    entries: Vec<Entry>,
}

impl CaseMap {
    /// The map of the configuration's pairs; `None` when there are none. A name that
    /// is not in lower case never matches, as in HAProxy (names go out in lower case).
    pub fn new(pairs: &[(String, String)]) -> Option<Arc<CaseMap>> {
        let entries: Vec<_> = pairs
            .iter()
            .filter(|(from, to)| from.len() == to.len())
            .map(|(from, to)| (Box::from(from.as_bytes()), Box::from(to.as_bytes())))
            .collect();
        (!entries.is_empty()).then(|| Arc::new(CaseMap { entries }))
    }

    /// Adjusts the header names of the HTTP/1 head at the start of `head` (a start line,
    /// header lines, an empty line; what follows is left alone).
    pub fn apply(&self, head: &mut [u8]) {
        let Some(mut at) = find_crlf(head, 0).map(|e| e + 2) else { return };
        while let Some(end) = find_crlf(head, at) {
            if end == at {
                return;
            }
            if let Some(colon) = head[at..end].iter().position(|&b| b == b':') {
                self.adjust(&mut head[at..at + colon]);
            }
            at = end + 2;
        }
    }

    fn adjust(&self, name: &mut [u8]) {
        let found = self.entries.iter().find(|(from, _)| from.len() == name.len() && **from == *name);
        if let Some((_, to)) = found {
            name.copy_from_slice(to);
        }
    }
}

/// The position of the first CRLF at or after `from`.
fn find_crlf(buf: &[u8], from: usize) -> Option<usize> {
    memchr::memmem::find(buf.get(from..)?, b"\r\n").map(|i| from + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjusts_listed_names_only_and_stops_at_the_head_end() {
        let pairs =
            [("content-length".to_owned(), "Content-Length".to_owned()), ("X-Up".to_owned(), "x-up".to_owned())];
        let map = CaseMap::new(&pairs).unwrap();
        let mut head =
            b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nx-up: 1\r\ncontent-type: a\r\n\r\ncontent-length: body".to_vec();
        map.apply(&mut head);
        assert_eq!(
            &head[..],
            &b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nx-up: 1\r\ncontent-type: a\r\n\r\ncontent-length: body"[..]
        );
        assert!(CaseMap::new(&[]).is_none());
    }
}
