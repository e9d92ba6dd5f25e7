//! Malformed (and well-formed) variants of each HTTP/1 framing element, one element
//! changed at a time from a valid message: chunk size lines, extensions, line ends,
//! data terminators, last chunks, trailers, Transfer-Encoding lists, Content-Length
//! values, Host forms and request targets. Every request asks for `Connection: close`
//! and is complete or invalid by itself (none leaves a parser waiting for more).

/// Chunk-size line contents (before the line end) for a 5-byte chunk.
const SIZE_LINES: &[&str] = &[
    "5",
    "05",
    "0000000000000005",
    "00000000000000005",
    "5 ",
    "5\t",
    " 5",
    "+5",
    "-5",
    "0x5",
    "5\x00",
    "5;",
    "5;a",
    "5;a=b",
    "5;a=b;c",
    "5;a=\"b c\"",
    "5;a=\"b\\\"c\"",
    "5;a=\"\"",
    "5;a=\"\\\t\"",
    "5 ;a",
    "5; a",
    "5;a =b",
    "5;a= b",
    "5;a=b ",
    "5;a=\"b",
    "5;a=b\"c\"",
    "5;a=\"b\"c",
    "5;=b",
    "5;;a",
    "5;a=b@",
    "5;a(b",
    "5;a=\"\x01\"",
    "5;a=\"\x7f\"",
    "5;a=\"\u{e9}\"",
    "5;\u{e9}",
    "5;a=b\\c",
];

/// Line ends after the size line.
const LINE_ENDS: &[&str] = &["\r\n", "\n", "\r", "\r\r\n", "\n\r"];

/// What follows chunk data.
const DATA_ENDS: &[&str] = &["\r\n", "\n", "\r", "", "x\r\n", "\r\n\r\n"];

/// The last chunk's line (line end included).
const LAST_CHUNKS: &[&str] = &[
    "0\r\n",
    "00\r\n",
    "0000000000000000\r\n",
    "00000000000000000\r\n",
    "0;a=b\r\n",
    "0;a=\"b\"\r\n",
    "0 \r\n",
    "0;\r\n",
    "0\n",
    "0\r",
];

/// Trailer sections (each line ended), before the final line end.
const TRAILERS: &[&str] = &[
    "",
    "T: v\r\n",
    "T: v\r\nU: w\r\n",
    "T:v\r\n",
    "T: \tv \r\n",
    "T:\r\n",
    "T: v\n",
    "T: v\r",
    "T : v\r\n",
    "T\r\n",
    " T: v\r\n",
    "T: v\r\n w\r\n",
    "T: v\x01\r\n",
    "T: v\x00\r\n",
    "T: \u{e9}\r\n",
    ": v\r\n",
    "T(: v\r\n",
    "Content-Length: 5\r\n",
    "GET / HTTP/1.1\r\n",
];

/// Final line ends of a chunked body.
const FINAL: &[&str] = &["\r\n", "\n"];

/// Transfer-Encoding headers (each value is one header line) for a chunked body.
const TE_LISTS: &[&[&str]] = &[
    &["chunked"],
    &["Chunked"],
    &["CHUNKED"],
    &[" chunked "],
    &["gzip, chunked"],
    &["gzip,chunked"],
    &["gzip ,\tchunked"],
    &["gzip;level=1, chunked"],
    &["gzip ; level=1 , chunked"],
    &["identity, chunked"],
    &["x-custom, chunked"],
    &["gzip", "chunked"],
    &["chunked,"],
    &[", chunked"],
    &["chunked,,"],
    &["gzip,,chunked"],
    &["chunked", ""],
    &["", "chunked"],
    &["chunked, chunked"],
    &["chunked", "chunked"],
    &["chunked, gzip"],
    &["chunked", "gzip"],
    &["gzip"],
    &[""],
    &["chunked;q=1"],
    &["gzip;q=\"1\", chunked"],
    &["gzip;q = 1, chunked"],
    &["gzip;q, chunked"],
    &["\"chunked\""],
    &["chunk ed"],
    &["xchunked"],
    &["chunked\x0b"],
    &["gzip chunked"],
];

/// Content-Length headers (each value one line) for the body `hello`.
const CL_LISTS: &[&[&str]] = &[
    &["5"],
    &["05"],
    &["0000000000000000005"],
    &["5, 5"],
    &["5,5"],
    &["5", "5"],
    &["5", "5, 5"],
    &["5, 6"],
    &["5", "6"],
    &["+5"],
    &["-5"],
    &["0x5"],
    &["5.0"],
    &["5e0"],
    &[""],
    &["5,"],
    &[",5"],
    &["5 5"],
    &["\"5\""],
    &["99999999999999999999"],
];

/// Host header lines for `GET /v` (None: no Host header).
const HOSTS: &[&[&str]] = &[
    &["a"],
    &["a.example"],
    &["a:8080"],
    &["a:"],
    &["a:0"],
    &["a:65535"],
    &["a:65536"],
    &["a:8o"],
    &["a:-1"],
    &["127.0.0.1"],
    &["[::1]"],
    &["[::1]:80"],
    &["[::1"],
    &["[v1.a]"],
    &["[zz]"],
    &["a_b~c"],
    &["%41"],
    &["%4"],
    &["a b"],
    &["a@b"],
    &["u@a"],
    &["a/b"],
    &["a,b"],
    &["a, a"],
    &["a?b"],
    &["a#b"],
    &[":80"],
    &[""],
    &["\u{e9}"],
    &[],
    &["a", "a"],
    &["a", "b"],
];

/// (method, target, Host) request lines.
const TARGETS: &[(&str, &str, &str)] = &[
    ("GET", "/v", "a"),
    ("GET", "/v?q=1&r", "a"),
    ("GET", "//a/v", "a"),
    ("GET", "/v@w", "a"),
    ("GET", "/v%20w", "a"),
    ("GET", "/v#f", "a"),
    ("GET", "/v?q#f", "a"),
    ("GET", "*", "a"),
    ("OPTIONS", "*", "a"),
    ("OPTIONS", "*x", "a"),
    ("GET", "http://a/v", "a"),
    ("GET", "http://a", "a"),
    ("GET", "http://a?q", "a"),
    ("GET", "http://A/v", "a"),
    ("GET", "http://a:80/v", "a"),
    ("GET", "http://a/v", "a:80"),
    ("GET", "https://a/v", "a:443"),
    ("GET", "http://a:8080/v", "a:8080"),
    ("GET", "http://a:8080/v", "a"),
    ("GET", "http://b/v", "a"),
    ("GET", "http://u@a/v", "a"),
    ("GET", "http://u:p@a/v", "a"),
    ("GET", "http://a/v#f", "a"),
    ("GET", "http:///v", "a"),
    ("GET", "http://:80/v", "a"),
    ("GET", "http://a:x/v", "a"),
    ("GET", "http:/a/v", "a"),
    ("GET", "a/v", "a"),
    ("GET", "a:80", "a"),
    ("GET", "\u{e9}", "a"),
    ("GET", "/\u{e9}", "a"),
    ("CONNECT", "/v", "a"),
    ("CONNECT", "a", "a"),
    ("CONNECT", "http://a:443/", "a:443"),
    ("CONNECT", "u@a:443", "a:443"),
    ("CONNECT", "a:99999", "a"),
];

const CHUNKED_HEAD: &str = "POST /v HTTP/1.1\r\nHost: a\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n";

/// A chunked body from its parts.
fn body(size_line: &str, eol: &str, data_end: &str, last: &str, trailers: &str, fin: &str) -> String {
    format!("{size_line}{eol}hello{data_end}{last}{trailers}{fin}")
}

/// The valid body with one part replaced by each of its variants.
fn chunked_bodies() -> Vec<String> {
    let mut out = Vec::new();
    let ok = ("5", "\r\n", "\r\n", "0\r\n", "", "\r\n");
    for s in SIZE_LINES {
        out.push(body(s, ok.1, ok.2, ok.3, ok.4, ok.5));
    }
    for e in LINE_ENDS {
        out.push(body(ok.0, e, ok.2, ok.3, ok.4, ok.5));
    }
    for d in DATA_ENDS {
        out.push(body(ok.0, ok.1, d, ok.3, ok.4, ok.5));
    }
    for l in LAST_CHUNKS {
        out.push(body(ok.0, ok.1, ok.2, l, ok.4, ok.5));
    }
    for t in TRAILERS {
        out.push(body(ok.0, ok.1, ok.2, ok.3, t, ok.5));
    }
    for f in FINAL {
        out.push(body(ok.0, ok.1, ok.2, ok.3, ok.4, f));
    }
    out.push("3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n".into());
    out.push("0\r\n\r\n".into());
    out
}

/// Every request variant.
pub fn requests() -> Vec<Vec<u8>> {
    let mut out: Vec<String> = Vec::new();
    for b in chunked_bodies() {
        out.push(format!("{CHUNKED_HEAD}{b}"));
    }
    for list in TE_LISTS {
        let lines: String = list.iter().map(|v| format!("Transfer-Encoding: {v}\r\n")).collect();
        out.push(format!("POST /v HTTP/1.1\r\nHost: a\r\nConnection: close\r\n{lines}\r\n5\r\nhello\r\n0\r\n\r\n"));
    }
    out.push("POST /v HTTP/1.0\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n".into());
    for cl in ["5", "10", "x"] {
        out.push(format!(
            "POST /v HTTP/1.1\r\nHost: a\r\nConnection: close\r\nContent-Length: {cl}\r\n\
             Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
        ));
    }
    for list in CL_LISTS {
        let lines: String = list.iter().map(|v| format!("Content-Length: {v}\r\n")).collect();
        out.push(format!("POST /v HTTP/1.1\r\nHost: a\r\nConnection: close\r\n{lines}\r\nhello"));
    }
    for hosts in HOSTS {
        let lines: String = hosts.iter().map(|v| format!("Host: {v}\r\n")).collect();
        out.push(format!("GET /v HTTP/1.1\r\n{lines}Connection: close\r\n\r\n"));
    }
    out.push("GET /v HTTP/1.0\r\n\r\n".into());
    out.push("GET /v HTTP/1.0\r\nHost: a b\r\n\r\n".into());
    for (method, target, host) in TARGETS {
        out.push(format!("{method} {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"));
    }
    out.into_iter().map(String::into_bytes).collect()
}

/// Every response variant: chunked bodies, Transfer-Encoding lists and Content-Length
/// values, each a whole response after which the server closes.
pub fn responses() -> Vec<Vec<u8>> {
    let mut out: Vec<String> = Vec::new();
    for b in chunked_bodies() {
        out.push(format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{b}"));
    }
    for list in TE_LISTS {
        let lines: String = list.iter().map(|v| format!("Transfer-Encoding: {v}\r\n")).collect();
        out.push(format!("HTTP/1.1 200 OK\r\n{lines}\r\n5\r\nhello\r\n0\r\n\r\n"));
    }
    for list in CL_LISTS {
        let lines: String = list.iter().map(|v| format!("Content-Length: {v}\r\n")).collect();
        out.push(format!("HTTP/1.1 200 OK\r\n{lines}\r\nhello"));
    }
    out.into_iter().map(String::into_bytes).collect()
}
