//! `filter trace`: HAProxy's debugging filter. It writes to stderr, in HAProxy's
//! format, the request and response heads of each stream of its proxy (start line,
//! then one line per header), then each block of the response body forwarded
//! (`offset`, `len`; with `hexdump`, the bytes as a hex dump) and its end. `quiet`
//! silences it; `random-forwarding` and `random-parsing` are accepted and change
//! nothing (rampart forwards every block as it arrives). Request bodies are not
//! traced.
//! HAProxy counterpart: src/flt_trace.c (`trace_http_headers()`,
//! `trace_http_payload()`, `trace_http_end()`).

use std::io::Write;

use rampart_cfg::model::TraceFilter;

use crate::http::MsgView;

/// One `filter trace` at run time.
#[derive(Debug, Clone)]
pub struct Trace {
    /// `<name>/<proxy>`, or `TRACE/<proxy>`.
    pub name: String,
    pub hexdump: bool,
}

impl Trace {
    /// The filter of proxy `px`, `None` when `quiet`.
    pub fn new(t: &TraceFilter, px: &str) -> Option<Trace> {
        let name = format!("{}/{px}", t.name.as_deref().unwrap_or("TRACE"));
        (!t.quiet).then_some(Trace { name, hexdump: t.hexdump })
    }

    fn line(&self, uniq_id: u64, text: &str) {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        let _ = writeln!(
            std::io::stderr().lock(),
            "{}.{:06} [{:<20}] [strm 0x0({:x}) 0x00000000 0x00000000] {text}",
            now.as_secs(),
            now.subsec_micros(),
            self.name,
            uniq_id as u32
        );
    }

    /// A message head: `response` for a response, `backend` once the backend is known.
    pub fn headers(&self, uniq_id: u64, msg: MsgView<'_>, response: bool, backend: bool) {
        let (chn, pos) = (if response { "RESPONSE" } else { "REQUEST" }, if backend { "backend" } else { "frontend" });
        let h = msg.head;
        let ver = match h.version {
            crate::http::Version::Http10 => "HTTP/1.0",
            _ => "HTTP/1.1",
        };
        let sl = if response {
            format!("{ver} {} {}", h.status, String::from_utf8_lossy(msg.reason()))
        } else {
            format!("{} {} {ver}", String::from_utf8_lossy(msg.method()), String::from_utf8_lossy(msg.uri()))
        };
        self.line(uniq_id, &format!("{:<25}: channel={chn:<10} - mode=HTTP  ({pos})\t{sl}", "trace_http_headers"));
        for (_, n, v) in msg.headers() {
            self.line(uniq_id, &format!("\t{}: {}", String::from_utf8_lossy(n), String::from_utf8_lossy(v)));
        }
    }
}

/// Traces a response body as it is forwarded.
pub struct TraceTap {
    pub trace: Trace,
    pub uniq_id: u64,
    pub offset: u64,
}

impl super::Tap for TraceTap {
    fn data(&mut self, data: &[u8]) {
        let (offset, len) = (self.offset, data.len());
        let text = format!(
            "{:<25}: channel={:<10} - mode=HTTP  (backend) - offset={offset} - len={len} - forward={len}",
            "trace_http_payload", "RESPONSE"
        );
        self.trace.line(self.uniq_id, &text);
        if self.trace.hexdump {
            let _ = std::io::stderr().lock().write_all(hexdump(data).as_bytes());
        }
        self.offset += len as u64;
    }

    fn end(&mut self) {
        let text = format!("{:<25}: channel={:<10} - mode=HTTP  (backend)", "trace_http_end", "RESPONSE");
        self.trace.line(self.uniq_id, &text);
    }
}

/// HAProxy's hex dump: 16 bytes a line, in two groups of 8, then the printable ones.
fn hexdump(data: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for (l, line) in data.chunks(16).enumerate() {
        let _ = write!(out, "\t0x{:06x}: ", l * 16);
        for i in 0..16 {
            if i == 8 {
                out.push_str("  ");
            }
            match line.get(i) {
                Some(b) => {
                    let _ = write!(out, "{b:02x} ");
                }
                None => out.push_str("   "),
            }
        }
        out.push_str("  |");
        out.extend(line.iter().map(|&b| if b.is_ascii_graphic() || b == b' ' { b as char } else { '.' }));
        out.push_str("|\n");
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn hexdump_as_haproxy_prints_it() {
        let d = super::hexdump(b"hello, world!\n\x00abcdef");
        let lines: Vec<&str> = d.lines().collect();
        assert_eq!(lines[0], "\t0x000000: 68 65 6c 6c 6f 2c 20 77   6f 72 6c 64 21 0a 00 61   |hello, world!..a|");
        assert!(lines[1].starts_with("\t0x000010: 62 63 64 65 66 "), "{}", lines[1]);
        assert!(lines[1].ends_with("|bcdef|"));
    }
}
