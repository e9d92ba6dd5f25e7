//! `-d` traffic debug output, in HAProxy's line format on standard output: one
//! `accept` line per stream, the request line and headers (`clireq`, `clihdr`), the
//! response line and headers (`srvrep`, `srvhdr`), then `clicls`, `srvcls` and
//! `closed` when the stream ends. A stream is one HTTP exchange (a keep-alive
//! connection makes several, each with its own id) or one TCP connection.
//! HAProxy counterpart: the MODE_DEBUG blocks of frontend.c, http_ana.c and stream.c.
//!
//! PERF: when `-d` is not given, the request path pays one relaxed atomic load.

use std::fmt::Write as _;
use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};

use rampart_proto::h1::Head;

static ON: AtomicBool = AtomicBool::new(false);
static NEXT_ID: AtomicU32 = AtomicU32::new(0);

/// Turns the output on (`-d` without `-q`, or with `-V`).
pub fn enable() {
    ON.store(true, Ordering::Relaxed);
}

/// Whether traffic is traced.
#[inline]
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// The traced identity of one stream: its id and client descriptor; the server
/// descriptor is filled in once a server connection is used.
#[derive(Debug)]
pub struct Trace {
    id: u32,
    cfd: i32,
    /// -1 until a server connection is used (an atomic only to keep futures `Send`).
    sfd: AtomicI32,
}

impl Trace {
    /// Starts a stream of frontend `fe` for the connection `cfd` accepted on the
    /// listening socket `lfd`: prints its `accept` line.
    pub fn accept(fe: &str, lfd: i32, cfd: i32, peer: Option<SocketAddr>) -> Trace {
        let trace = Trace { id: NEXT_ID.fetch_add(1, Ordering::Relaxed), cfd, sfd: AtomicI32::new(-1) };
        let from = match peer {
            Some(addr) => format!("{}:{}", addr.ip(), addr.port()),
            None => "unix:1".to_owned(),
        };
        emit(&format!("{:08x}:{fe}.accept({:04x})={:04x} from [{from}] ALPN=<none>\n", trace.id, fd16(lfd), fd16(cfd)));
        trace
    }

    /// A server connection carries the stream from now on.
    pub fn set_server(&self, sfd: i32) {
        self.sfd.store(sfd, Ordering::Relaxed);
    }

    fn server(&self) -> Option<i32> {
        Some(self.sfd.load(Ordering::Relaxed)).filter(|&fd| fd >= 0)
    }

    /// `clireq` and `clihdr` lines for the request head in `buf`, under proxy `px`.
    pub fn request(&self, px: &str, buf: &[u8], head: &Head) {
        self.message(px, "clireq", "clihdr", buf, head);
    }

    /// `srvrep` and `srvhdr` lines for a response head in `buf`, under backend `px`.
    pub fn response(&self, px: &str, buf: &[u8], head: &Head) {
        self.message(px, "srvrep", "srvhdr", buf, head);
    }

    /// `clireq` and `clihdr` lines for a request given as its first line and its
    /// fields (an HTTP/2 stream's).
    pub fn request_fields<'b>(&self, px: &str, first_line: &[u8], fields: impl Iterator<Item = (&'b [u8], &'b [u8])>) {
        self.lines(px, "clireq", "clihdr", first_line, fields);
    }

    fn message(&self, px: &str, line_tag: &str, hdr_tag: &str, buf: &[u8], head: &Head) {
        let first_line = buf[..head.len].split(|&b| b == b'\n').next().unwrap_or_default();
        let first_line = first_line.strip_suffix(b"\r").unwrap_or(first_line);
        let fields = head.headers.iter().map(|h| (h.name.get(buf), h.value.get(buf)));
        self.lines(px, line_tag, hdr_tag, first_line, fields);
    }

    fn lines<'b>(
        &self,
        px: &str,
        line_tag: &str,
        hdr_tag: &str,
        first_line: &[u8],
        fields: impl Iterator<Item = (&'b [u8], &'b [u8])>,
    ) {
        // Before a server is attached, HAProxy prints the missing descriptor as an
        // int (-1 in %04x), after that as an unsigned short.
        let sfd = self.server().map_or_else(|| "ffffffff".to_owned(), |fd| format!("{:04x}", fd16(fd)));
        let prefix = format!("{:08x}:{px}.", self.id);
        let ids = format!("[{:04x}:{sfd}]: ", fd16(self.cfd));
        let mut out = String::with_capacity(1024);
        let _ = writeln!(out, "{prefix}{line_tag}{ids}{}", String::from_utf8_lossy(first_line));
        for (name, value) in fields {
            let name = String::from_utf8_lossy(name).to_ascii_lowercase();
            let _ = writeln!(out, "{prefix}{hdr_tag}{ids}{name}: {}", String::from_utf8_lossy(value));
        }
        emit(&out);
    }

    /// The stream ends under proxy `px`: `clicls`, `srvcls` when a server connection
    /// was used, `closed`.
    pub fn end(&self, px: &str) {
        let server = self.server();
        let sfd = server.map_or(0xffff, fd16);
        let ids = format!("[{:04x}:{sfd:04x}]", fd16(self.cfd));
        let mut out = format!("{:08x}:{px}.clicls{ids}\n", self.id);
        if server.is_some() {
            let _ = writeln!(out, "{:08x}:{px}.srvcls{ids}", self.id);
        }
        let _ = writeln!(out, "{:08x}:{px}.closed{ids}", self.id);
        emit(&out);
    }
}

/// A descriptor as HAProxy prints it (`(unsigned short)fd`).
fn fd16(fd: i32) -> u16 {
    fd as u16
}

/// One write per event, so lines of concurrent streams do not interleave.
fn emit(text: &str) {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_print_as_unsigned_shorts() {
        assert_eq!(format!("{:04x}", fd16(12)), "000c");
        assert_eq!(format!("{:04x}", fd16(-1)), "ffff");
    }
}
