//! The request line a frontend keeps for its log line (`%r`) and `capture.req.uri`.
//!
//! HAProxy counterpart: `http_fmt_req_line` (src/http_htx.c), called on the HTX start
//! line once the H1 mux has parsed (and normalized) it.

use rampart_proto::h1::Head;

/// The first line of `buf`, without its end of line.
pub(super) fn first_line(buf: &[u8]) -> &[u8] {
    let line = &buf[..memchr::memchr(b'\n', buf).unwrap_or(buf.len())];
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Keeps the request line of `head` (parsed from `buf`) for `%r` and
/// `capture.req.uri` as HAProxy's `http_fmt_req_line` writes it: method, target and
/// version one space apart (the blanks between them as received do not count), the
/// target without the default port the mux leaves out (`uri_cut`); then cut as
/// `tune.http.logurilen` cuts it (`max` bytes).
///
/// PERF: a line as it should be (one space apart, nothing cut) is one copy, as before.
pub(super) fn keep_req_line(to: &mut Vec<u8>, head: &Head, buf: &[u8], max: usize) {
    to.clear();
    let (method, uri) = (head.method_raw, head.uri);
    let line = first_line(&buf[method.start as usize..]);
    let after_uri = &line[(uri.end - method.start) as usize..];
    let vsn = after_uri.trim_ascii();
    let one_space = |at: usize| buf.get(at) == Some(&b' ');
    let canonical = uri.start == method.end + 1
        && one_space(method.end as usize)
        && vsn.len() + 1 == after_uri.len()
        && one_space(uri.end as usize)
        && head.uri_cut.is_empty();
    if canonical {
        to.extend_from_slice(&line[..line.len().min(max)]);
        return;
    }
    let (cut_from, cut_to) =
        if head.uri_cut.is_empty() { (uri.end, uri.end) } else { (head.uri_cut.start, head.uri_cut.end) };
    let parts: [&[u8]; 6] = [
        method.get(buf),
        b" ",
        &buf[uri.start as usize..cut_from as usize],
        &buf[cut_to as usize..uri.end as usize],
        b" ",
        vsn,
    ];
    for part in parts {
        let room = max - to.len();
        to.extend_from_slice(&part[..part.len().min(room)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(raw: &[u8], max: usize) -> Vec<u8> {
        let mut head = Head::default();
        assert!(rampart_proto::h1::parse_request(raw, 8192, &mut head).unwrap());
        let mut to = b"stale".to_vec();
        keep_req_line(&mut to, &head, raw, max);
        to
    }

    #[test]
    fn the_line_as_received_when_it_is_canonical() {
        assert_eq!(kept(b"GET /a?b HTTP/1.1\r\nHost: x\r\n\r\n", 1024), b"GET /a?b HTTP/1.1");
        assert_eq!(kept(b"GET /a?b HTTP/1.1\r\nHost: x\r\n\r\n", 6), b"GET /a");
    }

    #[test]
    fn blanks_between_the_parts_become_one_space() {
        assert_eq!(kept(b"POST /1  HTTP/1.1\r\nHost: x\r\n\r\n", 1024), b"POST /1 HTTP/1.1");
        assert_eq!(kept(b"GET \t /x \t HTTP/1.0\n\n", 1024), b"GET /x HTTP/1.0");
        assert_eq!(kept(b"GET\t/x\tHTTP/1.0\n\n", 1024), b"GET /x HTTP/1.0");
        assert_eq!(kept(b"POST   /1  HTTP/1.1\r\nHost: x\r\n\r\n", 9), b"POST /1 H");
    }

    #[test]
    fn empty_lines_before_the_request_are_skipped() {
        assert_eq!(kept(b"\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n", 1024), b"GET / HTTP/1.1");
    }

    #[test]
    fn the_default_port_the_mux_cuts_is_left_out() {
        let raw = b"GET http://h:80/c20 HTTP/1.1\r\nHost: h\r\n\r\n";
        assert_eq!(kept(raw, 1024), b"GET http://h/c20 HTTP/1.1");
        assert_eq!(kept(raw, 14), b"GET http://h/c");
        assert_eq!(kept(b"GET https://h:443 HTTP/1.1\r\nHost: h\r\n\r\n", 1024), b"GET https://h HTTP/1.1");
        assert_eq!(kept(b"GET http://h:8080/ HTTP/1.1\r\nHost: h:8080\r\n\r\n", 1024), b"GET http://h:8080/ HTTP/1.1");
    }
}
