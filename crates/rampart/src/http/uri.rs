//! The parts of a request target, and the comma-separated items of a header value:
//! what the `path`, `query`, `url`, `base` ... fetches and the path rewrites read.
//! HAProxy counterpart: `http_parse_path()`, `http_get_path()` (src/http.c) and the
//! `http_find_header()` value iteration (src/http_htx.c).

/// A request target split in place (no copy).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Target<'a> {
    /// `http` for `http://host/p` (without `://`); empty in origin form.
    pub scheme: &'a [u8],
    /// `host:port` of an absolute or authority-form target (user info left out).
    pub authority: &'a [u8],
    /// From the first `/` after the authority up to `?` (origin form: from the start);
    /// empty for `*` or an authority-form target.
    pub path: &'a [u8],
    /// What follows the first `?` of the path part, without it; `None` without `?`.
    pub query: Option<&'a [u8]>,
    /// The path and the query with its `?` (HAProxy's `pathq`).
    pub pathq: &'a [u8],
}

/// Splits a request target into its parts.
pub fn split(uri: &[u8]) -> Target<'_> {
    let mut t = Target::default();
    let rest = match uri.first() {
        None | Some(b'*') => return t,
        Some(b'/') => uri,
        Some(_) => match memchr::memmem::find(uri, b"://") {
            Some(n) if uri[..n].iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')) => {
                t.scheme = &uri[..n];
                let after = &uri[n + 3..];
                let end = after.iter().position(|&b| matches!(b, b'/' | b'?')).unwrap_or(after.len());
                let at = memchr::memrchr(b'@', &after[..end]).map_or(0, |i| i + 1);
                t.authority = &after[at..end];
                &after[end..]
            }
            // authority form (CONNECT host:port)
            _ => {
                t.authority = uri;
                return t;
            }
        },
    };
    t.pathq = rest;
    match memchr::memchr(b'?', rest) {
        Some(q) => {
            t.path = &rest[..q];
            t.query = Some(&rest[q + 1..]);
        }
        None => t.path = rest,
    }
    t
}

/// The comma-separated items of a header value, each trimmed of spaces and tabs;
/// commas inside double quotes do not separate (HAProxy's `http_find_header` walk).
pub fn comma_items(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = Some(value);
    std::iter::from_fn(move || {
        let v = rest?;
        let mut quoted = false;
        let mut end = v.len();
        let mut i = 0;
        while i < v.len() {
            match v[i] {
                b'"' => quoted = !quoted,
                b'\\' if quoted => i += 1,
                b',' if !quoted => {
                    end = i;
                    break;
                }
                _ => {}
            }
            i += 1;
        }
        rest = if end < v.len() { Some(&v[end + 1..]) } else { None };
        Some(trim(&v[..end]))
    })
}

/// `v` without leading and trailing spaces and tabs.
pub fn trim(v: &[u8]) -> &[u8] {
    let start = v.iter().position(|&b| b != b' ' && b != b'\t').unwrap_or(v.len());
    let end = v.iter().rposition(|&b| b != b' ' && b != b'\t').map_or(start, |e| e + 1);
    &v[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_split_in_every_form() {
        let t = split(b"/a/b?x=1&y");
        assert_eq!((t.path, t.query, t.pathq), (&b"/a/b"[..], Some(&b"x=1&y"[..]), &b"/a/b?x=1&y"[..]));
        assert!(t.scheme.is_empty() && t.authority.is_empty());
        let t = split(b"http://u@h.example:8080/p?q");
        assert_eq!(
            (t.scheme, t.authority, t.path, t.query),
            (&b"http"[..], &b"h.example:8080"[..], &b"/p"[..], Some(&b"q"[..]))
        );
        let t = split(b"https://h?q");
        assert_eq!((t.authority, t.path, t.query), (&b"h"[..], &b""[..], Some(&b"q"[..])));
        let t = split(b"h:443");
        assert_eq!((t.authority, t.path, t.query), (&b"h:443"[..], &b""[..], None));
        assert_eq!(split(b"*"), Target::default());
        assert_eq!(split(b"/").query, None);
        assert_eq!(split(b"/?").query, Some(&b""[..]));
    }

    #[test]
    fn comma_items_respect_quotes() {
        let items: Vec<_> = comma_items(b" a , \"b,c\" ,,d").collect();
        assert_eq!(items, [&b"a"[..], b"\"b,c\"", b"", b"d"]);
        assert_eq!(comma_items(b"").collect::<Vec<_>>(), [&b""[..]]);
    }
}
