//! HPACK's two primitive types (RFC 7541 §5): integers with an N-bit prefix, and
//! string literals, raw or Huffman-coded.
//!
//! HAProxy counterpart: `get_var_int()` (src/hpack-dec.c) and `hpack_encode_int_*()`
//! (include/haproxy/hpack-enc.h). A header block is decoded whole, so running out of
//! bytes here is an error ([`HpackError::Truncated`]), not "incomplete".

use super::{huffman, HpackError};

/// Largest integer accepted: every HPACK integer is an index, a length or a table
/// size, none of which can usefully pass 32 bits. It also bounds the continuation
/// bytes (at most 5), so runs of `0x80` cannot make the decoder loop.
const MAX_INT: u64 = u32::MAX as u64;

/// A read position in a header block.
#[derive(Debug)]
pub(crate) struct Cursor<'b> {
    buf: &'b [u8],
    pos: usize,
}

impl<'b> Cursor<'b> {
    pub fn new(buf: &'b [u8]) -> Cursor<'b> {
        Cursor { buf, pos: 0 }
    }

    /// The next byte, not consumed.
    pub fn peek(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    fn next(&mut self) -> Result<u8, HpackError> {
        let b = self.peek().ok_or(HpackError::Truncated)?;
        self.pos += 1;
        Ok(b)
    }

    fn take(&mut self, n: usize) -> Result<&'b [u8], HpackError> {
        let end = self.pos.checked_add(n).ok_or(HpackError::Truncated)?;
        let s = self.buf.get(self.pos..end).ok_or(HpackError::Truncated)?;
        self.pos = end;
        Ok(s)
    }
}

/// Reads an integer whose prefix is the low `prefix_bits` bits of the next byte (§5.1);
/// the bits above the prefix are the caller's (the representation's pattern).
pub(crate) fn decode_int(cur: &mut Cursor<'_>, prefix_bits: u8) -> Result<usize, HpackError> {
    debug_assert!((1..=8).contains(&prefix_bits));
    let mask = (1u16 << prefix_bits) as u64 - 1;
    let mut value = cur.next()? as u64 & mask;
    if value < mask {
        return Ok(value as usize);
    }
    let mut shift = 0;
    loop {
        let b = cur.next()?;
        value += ((b & 0x7f) as u64) << shift;
        if b & 0x80 == 0 {
            break;
        }
        shift += 7;
        if shift > 28 {
            return Err(HpackError::IntegerOverflow);
        }
    }
    if value > MAX_INT {
        return Err(HpackError::IntegerOverflow);
    }
    Ok(value as usize)
}

/// Appends `value` with an N-bit prefix; `pattern` holds the bits above the prefix in
/// the first byte.
pub fn encode_int(out: &mut Vec<u8>, value: usize, prefix_bits: u8, pattern: u8) {
    debug_assert!((1..=8).contains(&prefix_bits));
    let mask = (1usize << prefix_bits) - 1;
    if value < mask {
        out.push(pattern | value as u8);
        return;
    }
    out.push(pattern | mask as u8);
    let mut rest = value - mask;
    while rest >= 0x80 {
        out.push(0x80 | (rest & 0x7f) as u8);
        rest >>= 7;
    }
    out.push(rest as u8);
}

/// Reads a string literal (§5.2): raw octets are returned from the block itself,
/// Huffman-coded ones are decoded into `scratch` (cleared first).
pub(crate) fn decode_string<'b: 's, 's>(
    cur: &mut Cursor<'b>,
    scratch: &'s mut Vec<u8>,
) -> Result<&'s [u8], HpackError> {
    let huffman = cur.peek().is_some_and(|b| b & 0x80 != 0);
    let len = decode_int(cur, 7)?;
    let raw = cur.take(len)?;
    if !huffman {
        return Ok(raw);
    }
    scratch.clear();
    huffman::decode(raw, scratch)?;
    Ok(scratch)
}

/// Appends a string literal, Huffman-coded when `huffman` is allowed and that is not
/// longer (at equal length, as the examples of RFC 7541 Appendix C.6 do). An empty
/// string is always a raw literal: some decoders (VTest's) refuse an empty Huffman one.
pub fn encode_string(out: &mut Vec<u8>, s: &[u8], huffman: bool) {
    let coded_len = if huffman { huffman::encoded_len(s) } else { usize::MAX };
    if !s.is_empty() && coded_len <= s.len() {
        encode_int(out, coded_len, 7, 0x80);
        huffman::encode(s, out);
    } else {
        encode_int(out, s.len(), 7, 0);
        out.extend_from_slice(s);
    }
}
