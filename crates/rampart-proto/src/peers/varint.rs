//! The peers protocol's encoded integers: values below 240 take one byte; larger ones
//! set the low nibble of the first byte on top of 0xf0 and continue in 7-bit groups,
//! each byte with its high bit set but the last.
//! HAProxy counterpart: `intencode()`, `intdecode()` (src/peers.c), doc/peers-v2.0.txt §I.

/// The first value that takes two bytes.
const TWO_BYTES_MIN: u64 = 0xf0;
/// The most bytes a 64-bit value takes.
pub const MAX_LEN: usize = 10;

/// Appends `v` encoded.
pub fn encode(mut v: u64, out: &mut Vec<u8>) {
    if v < TWO_BYTES_MIN {
        out.push(v as u8);
        return;
    }
    out.push((v as u8) | 0xf0);
    v = (v - TWO_BYTES_MIN) >> 4;
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v = (v - 0x80) >> 7;
    }
    out.push(v as u8);
}

/// The value at the start of `buf` and the bytes it took; `None` when `buf` ends before
/// the value does, or when it runs past [`MAX_LEN`] bytes (no 64-bit value does).
pub fn decode(buf: &[u8]) -> Option<(u64, usize)> {
    let first = *buf.first()?;
    let mut v = u64::from(first);
    if v < TWO_BYTES_MIN {
        return Some((v, 1));
    }
    let mut shift = 4u32;
    for (i, &b) in buf.iter().enumerate().skip(1) {
        if i >= MAX_LEN {
            return None;
        }
        // COMPAT: HAProxy adds without checking; the wrapping add keeps its result
        v = v.wrapping_add(u64::from(b).checked_shl(shift).unwrap_or(0));
        shift += 7;
        if b < 0x80 {
            return Some((v, i + 1));
        }
    }
    None
}

/// A reader over a message body: each step takes what it reads, `None` when the body is
/// too short (a malformed message).
#[derive(Debug, Clone, Copy)]
pub struct Reader<'a> {
    pub buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf }
    }

    pub fn int(&mut self) -> Option<u64> {
        let (v, n) = decode(self.buf)?;
        self.buf = &self.buf[n..];
        Some(v)
    }

    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.buf.len() {
            return None;
        }
        let (a, b) = self.buf.split_at(n);
        self.buf = b;
        Some(a)
    }

    pub fn u32(&mut self) -> Option<u32> {
        self.bytes(4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_boundaries() {
        for (v, len) in [
            (0u64, 1),
            (239, 1),
            (240, 2),
            (2287, 2),
            (2288, 3),
            (264_431, 3),
            (264_432, 4),
            (33_818_863, 4),
            (33_818_864, 5),
            (4_328_786_159, 5),
            (u64::MAX, 10),
        ] {
            let mut out = Vec::new();
            encode(v, &mut out);
            assert_eq!(out.len(), len, "{v}");
            assert_eq!(decode(&out), Some((v, len)), "{v}");
            assert_eq!(decode(&out[..len - 1]), None, "{v} truncated");
        }
    }

    #[test]
    fn endless_continuations_are_refused() {
        assert_eq!(decode(&[0xff; 32]), None);
    }
}
