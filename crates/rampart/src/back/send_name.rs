//! `http-send-name-header <name>`: the request head written for an HTTP/1 server
//! carries the server's name in that header, any copy the client sent removed; a
//! redispatch to another server rewrites it. Only built when the backend has the
//! keyword: other requests pay one `Option` check.
//! HAProxy counterpart: the `server_id_hdr_name` branches of `h1_process_mux()`
//! (mux_h1.c). As in HAProxy 2.6, HTTP/2 servers do not get it (mux_h2.c has no such
//! branch).

/// The header line to write and where it went in the last request head.
#[derive(Debug)]
pub struct SendName {
    /// `<name>: <server>\r\n`, the name lowercased.
    line: Vec<u8>,
    /// The header name's length in `line`.
    name_len: usize,
    /// Where `line` sits in the head written last.
    at: Option<usize>,
}

impl SendName {
    /// The line for header `name` (lowercase) and server `server`.
    pub fn new(name: &[u8], server: &str) -> SendName {
        let mut line = Vec::with_capacity(name.len() + server.len() + 4);
        line.extend_from_slice(name);
        line.extend_from_slice(b": ");
        line.extend_from_slice(server.as_bytes());
        line.extend_from_slice(b"\r\n");
        SendName { line, name_len: name.len(), at: None }
    }

    /// Rewrites the head that ends `out` (`...\r\n\r\n`, header names lowercase as
    /// written): drops the header lines of this name, adds the server's line last. In
    /// place: the kept lines move down over the dropped ones (no allocation once the
    /// buffer has room for the line).
    pub fn apply(&mut self, out: &mut Vec<u8>) {
        debug_assert!(out.ends_with(b"\r\n\r\n"));
        let name_len = self.name_len;
        let line_end =
            |from: usize, out: &[u8]| memchr::memchr(b'\n', &out[from..]).map_or(out.len(), |i| from + i + 1);
        let mut write = line_end(0, out);
        let mut read = write;
        while read < out.len() {
            let end = line_end(read, out);
            let l = &out[read..end];
            let ours = l.len() > name_len && l.starts_with(&self.line[..name_len]) && l[name_len] == b':';
            if !ours {
                out.copy_within(read..end, write);
                write += end - read;
            }
            read = end;
        }
        out.truncate(write - 2);
        self.at = Some(out.len());
        out.extend_from_slice(&self.line);
        out.extend_from_slice(b"\r\n");
    }

    /// The request in `out` goes to server `server` now: its line is rewritten.
    pub fn rename(&mut self, out: &mut Vec<u8>, server: &str) {
        let Some(at) = self.at else { return };
        let old = at..at + self.line.len();
        self.line.truncate(self.name_len + 2);
        self.line.extend_from_slice(server.as_bytes());
        self.line.extend_from_slice(b"\r\n");
        out.splice(old, self.line.iter().copied());
    }
}

#[cfg(test)]
mod tests {
    use super::SendName;

    #[test]
    fn the_clients_copies_go_and_the_servers_name_comes_last() {
        let mut out = b"GET / HTTP/1.1\r\nx-srv: forged\r\nhost: a\r\nx-srv2: keep\r\nx-srv: again\r\n\r\n".to_vec();
        let mut sn = SendName::new(b"x-srv", "s1");
        sn.apply(&mut out);
        assert_eq!(out, b"GET / HTTP/1.1\r\nhost: a\r\nx-srv2: keep\r\nx-srv: s1\r\n\r\n");
        out.extend_from_slice(b"body");
        sn.rename(&mut out, "server-two");
        assert_eq!(out, b"GET / HTTP/1.1\r\nhost: a\r\nx-srv2: keep\r\nx-srv: server-two\r\n\r\nbody");
        sn.rename(&mut out, "s");
        assert_eq!(out, b"GET / HTTP/1.1\r\nhost: a\r\nx-srv2: keep\r\nx-srv: s\r\n\r\nbody");
    }
}
