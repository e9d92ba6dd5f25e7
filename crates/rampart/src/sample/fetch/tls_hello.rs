//! A TLS ClientHello read from the first bytes of a TCP stream, for the
//! `req.ssl_*` fetches: the record and handshake headers, then the extensions.
//! Pure parsing with every length checked against what arrived; no allocation.
//! HAProxy counterpart: `smp_fetch_ssl_hello_sni()` and its siblings in src/payload.c.
//!
//! Like HAProxy, only a ClientHello that starts in the first record is read (no
//! reassembly across records).

/// Why no value came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// More bytes could complete it.
    Short,
    /// Not a (valid) TLS ClientHello.
    NotHello,
}

pub const EXT_SERVER_NAME: u16 = 0;
pub const EXT_SUPPORTED_GROUPS: u16 = 10;
pub const EXT_ALPN: u16 = 16;
pub const EXT_SESSION_TICKET: u16 = 35;

/// A parsed ClientHello: its extension block.
#[derive(Debug, Clone, Copy)]
pub struct Hello<'a> {
    extensions: &'a [u8],
}

fn u16_at(b: &[u8], i: usize) -> Option<usize> {
    Some(usize::from(*b.get(i)?) << 8 | usize::from(*b.get(i + 1)?))
}

fn u24_at(b: &[u8], i: usize) -> Option<usize> {
    Some(usize::from(*b.get(i)?) << 16 | u16_at(b, i + 1)?)
}

/// Reads the ClientHello at the start of `p`.
pub fn parse(p: &[u8]) -> Result<Hello<'_>, Error> {
    use Error::*;
    // Record header: type 22 (handshake), version >= 3.x, length.
    match p.first() {
        None => return Err(Short),
        Some(&0x16) => {}
        Some(_) => return Err(NotHello),
    }
    if p.len() < 3 {
        return Err(Short);
    }
    if p[1] < 3 {
        return Err(NotHello);
    }
    let rec_len = u16_at(p, 3).ok_or(Short)?;
    // Handshake type, length, version, random, session id length: the smallest
    // hello with one cipher, one compression method and an extension list.
    if rec_len < 1 + 3 + 2 + 32 + 1 + 2 + 2 + 1 + 1 + 2 + 2 {
        return Err(NotHello);
    }
    let hs = &p[5..];
    match hs.first() {
        None => return Err(Short),
        Some(&1) => {}
        Some(_) => return Err(NotHello),
    }
    let hs_len = u24_at(hs, 1).ok_or(Short)?;
    if hs_len < 2 + 32 + 1 + 2 + 2 + 1 + 1 + 2 + 2 {
        return Err(NotHello);
    }
    let body = hs.get(4..4 + hs_len).ok_or(Short)?;
    // client_version: TLS 1.0 (3.1) at least.
    if body[0] < 3 || body[1] < 1 {
        return Err(NotHello);
    }
    let sid = usize::from(body[34]);
    if sid > 32 {
        return Err(NotHello);
    }
    let mut i = 35 + sid;
    let ciphers = u16_at(body, i).ok_or(NotHello)?;
    if ciphers < 2 {
        return Err(NotHello);
    }
    i += 2 + ciphers;
    let comp = usize::from(*body.get(i).ok_or(NotHello)?);
    if comp < 1 {
        return Err(NotHello);
    }
    i += 1 + comp;
    let ext_len = u16_at(body, i).ok_or(NotHello)?;
    let extensions = body.get(i + 2..i + 2 + ext_len).ok_or(NotHello)?;
    Ok(Hello { extensions })
}

impl<'a> Hello<'a> {
    /// The data of the first extension of type `t`. A malformed extension list ends
    /// the search.
    pub fn extension(&self, t: u16) -> Option<&'a [u8]> {
        let e = self.extensions;
        let mut i = 0;
        while i + 4 <= e.len() {
            let ty = u16_at(e, i)?;
            let len = u16_at(e, i + 2)?;
            let data = e.get(i + 4..i + 4 + len)?;
            if ty == usize::from(t) {
                return Some(data);
            }
            i += 4 + len;
        }
        None
    }

    /// The host name of the server_name extension.
    pub fn sni(&self) -> Option<&'a [u8]> {
        let d = self.extension(EXT_SERVER_NAME)?;
        let list = u16_at(d, 0)?;
        if list < 4 {
            return None;
        }
        let list = d.get(2..2 + list)?;
        // Entries: type (0 = host_name), length, name.
        let mut i = 0;
        while i + 3 <= list.len() {
            let len = u16_at(list, i + 1)?;
            let name = list.get(i + 3..i + 3 + len)?;
            if list[i] == 0 {
                return Some(name);
            }
            i += 3 + len;
        }
        None
    }

    /// The protocol names of the ALPN extension, in order.
    pub fn alpn_names(&self) -> impl Iterator<Item = &'a [u8]> {
        let list = self.extension(EXT_ALPN).and_then(|d| d.get(2..2 + u16_at(d, 0)?)).unwrap_or_default();
        let mut i = 0;
        std::iter::from_fn(move || {
            let len = usize::from(*list.get(i)?);
            let name = list.get(i + 1..i + 1 + len)?;
            i += 1 + len;
            Some(name)
        })
    }
}

/// The handshake type of an SSLv3/TLS record starting `p` (1 = ClientHello,
/// 2 = ServerHello), once the whole handshake message arrived.
pub fn handshake_type(p: &[u8]) -> Result<u8, Error> {
    use Error::*;
    let first = *p.first().ok_or(Short)?;
    if !((0x14..=0x17).contains(&first) || first == 0xff) {
        return Err(NotHello);
    }
    if p.len() < 9 {
        return Err(Short);
    }
    if (usize::from(p[1]) << 16 | usize::from(p[2])) < 0x0003_0000 || u16_at(p, 3).unwrap_or(0) < 4 {
        return Err(NotHello);
    }
    let hs_len = u24_at(p, 6).ok_or(Short)?;
    if p.len() < 9 + hs_len {
        return Err(Short);
    }
    Ok(p[5])
}

/// The version a client asks for in its hello, as HAProxy encodes it: major << 16 |
/// minor (`0x0003_0003` for TLS 1.2 ...), SSLv2
/// hellos included, as HAProxy's `req.ssl_ver` (the `max` bytes a buffer may hold
/// bound how much of the message must have arrived).
pub fn client_version(p: &[u8], max: usize) -> Result<u32, Error> {
    use Error::*;
    let first = *p.first().ok_or(Short)?;
    let (version, msg_len, rest) = if (0x14..=0x17).contains(&first) || first == 0xff {
        if p.len() < 11 {
            return Err(Short);
        }
        let record_ver = u32::from(p[1]) << 16 | u32::from(p[2]);
        let msg_len = u16_at(p, 3).ok_or(Short)?;
        if record_ver < 0x0003_0000 || !(6..=(1 << 14) + 2048).contains(&msg_len) {
            return Err(NotHello);
        }
        (u32::from(p[9]) << 16 | u32::from(p[10]), msg_len, p.len() - 5)
    } else {
        sslv2_version(p)?
    };
    if rest < msg_len.min(max) {
        return Err(Short);
    }
    Ok(version)
}

/// An SSLv2 ClientHello: version, length of what follows, bytes left.
fn sslv2_version(p: &[u8]) -> Result<(u32, usize, usize), Error> {
    use Error::*;
    let (rlen, plen, hdr) = if p[0] & 0x80 != 0 {
        if p.len() < 3 {
            return Err(Short);
        }
        (usize::from(p[0] & 0x7f) << 8 | usize::from(p[1]), 0, 2)
    } else {
        if p.len() < 4 {
            return Err(Short);
        }
        (usize::from(p[0] & 0x3f) << 8 | usize::from(p[1]), usize::from(p[2]), 3)
    };
    if p[hdr] != 1 {
        return Err(NotHello);
    }
    let d = &p[hdr + 1..];
    if d.len() < 8 {
        return Err(Short);
    }
    let version = u32::from(d[0]) << 16 | u32::from(d[1]);
    let (cilen, silen, chlen) = (u16_at(d, 2).unwrap_or(0), u16_at(d, 4).unwrap_or(0), u16_at(d, 6).unwrap_or(0));
    if cilen % 3 != 0 || (silen != 0 && silen != 16) || !(16..=32).contains(&chlen) || rlen != 9 + cilen + silen + chlen
    {
        return Err(NotHello);
    }
    Ok((version, cilen + silen + chlen + plen, d.len() - 8))
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// A ClientHello with SNI `host`, ALPN `h2,http/1.1`, supported groups, and an
    /// empty session ticket extension.
    pub fn client_hello(host: &str) -> Vec<u8> {
        let mut ext = Vec::new();
        let mut push_ext = |ty: u16, data: &[u8]| {
            ext.extend_from_slice(&ty.to_be_bytes());
            ext.extend_from_slice(&(data.len() as u16).to_be_bytes());
            ext.extend_from_slice(data);
        };
        let mut sni = Vec::new();
        sni.extend_from_slice(&((host.len() + 3) as u16).to_be_bytes());
        sni.push(0);
        sni.extend_from_slice(&(host.len() as u16).to_be_bytes());
        sni.extend_from_slice(host.as_bytes());
        push_ext(EXT_SUPPORTED_GROUPS, &[0, 2, 0, 29]);
        push_ext(EXT_SERVER_NAME, &sni);
        push_ext(EXT_ALPN, b"\x00\x0c\x02h2\x08http/1.1");
        push_ext(EXT_SESSION_TICKET, b"");
        let mut body = vec![3, 3];
        body.extend_from_slice(&[7; 32]);
        body.push(0); // session id
        body.extend_from_slice(&[0, 2, 0x13, 0x01]); // one cipher
        body.extend_from_slice(&[1, 0]); // null compression
        body.extend_from_slice(&(ext.len() as u16).to_be_bytes());
        body.extend_from_slice(&ext);
        let mut hs = vec![1];
        hs.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
        hs.extend_from_slice(&body);
        let mut rec = vec![0x16, 3, 1];
        rec.extend_from_slice(&(hs.len() as u16).to_be_bytes());
        rec.extend_from_slice(&hs);
        rec
    }

    #[test]
    fn a_client_hello_gives_its_name_protocols_and_version() {
        let p = client_hello("www.example.com");
        let h = parse(&p).unwrap();
        assert_eq!(h.sni(), Some(&b"www.example.com"[..]));
        assert_eq!(h.alpn_names().collect::<Vec<_>>(), [&b"h2"[..], b"http/1.1"]);
        assert_eq!(h.extension(EXT_SESSION_TICKET), Some(&b""[..]));
        assert_eq!(handshake_type(&p), Ok(1));
        assert_eq!(client_version(&p, 16384), Ok(0x0003_0003));
    }

    #[test]
    fn every_truncation_is_short_never_a_panic() {
        let p = client_hello("a.example");
        for n in 0..p.len() {
            assert_eq!(parse(&p[..n]).map(|_| ()), Err(Error::Short), "cut at {n}");
            assert!(handshake_type(&p[..n]).is_err());
            assert!(client_version(&p[..n], 16384).map(|_| ()) != Err(Error::NotHello), "cut at {n}");
        }
    }

    #[test]
    fn corrupted_lengths_are_refused_not_overread() {
        let p = client_hello("a.example");
        for i in 0..p.len() {
            for v in [0u8, 1, 0x7f, 0xff] {
                let mut q = p.clone();
                q[i] = v;
                if let Ok(h) = parse(&q) {
                    let _ = (h.sni(), h.alpn_names().count(), h.extension(EXT_ALPN));
                }
                let _ = (handshake_type(&q), client_version(&q, 16384));
            }
        }
        assert_eq!(parse(b"GET / HTTP/1.1\r\n").map(|_| ()), Err(Error::NotHello));
        assert_eq!(handshake_type(b"GET /"), Err(Error::NotHello));
    }

    #[test]
    fn sslv2_hellos_report_their_version() {
        // Short header, type 1, version 3.0, 3 bytes of cipher, no session id, 16
        // bytes of challenge.
        let mut p = vec![0x80, 9 + 3 + 16, 1, 3, 0, 0, 3, 0, 0, 0, 16];
        p.extend_from_slice(&[0; 3 + 16]);
        assert_eq!(client_version(&p, 16384), Ok(0x0003_0000));
        assert_eq!(client_version(&p[..p.len() - 1], 16384), Err(Error::Short));
    }
}
