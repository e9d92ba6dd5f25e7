//! SPOP's encoded items: variable-length integers, typed data and key-value lists
//! (SPOE.txt §3.1). HAProxy counterpart: `encode_varint()` / `decode_varint()`
//! (include/haproxy/intops.h) and `spoe_encode_data()` / `spoe_decode_data()`
//! (include/haproxy/spoe.h).

use super::Error;

/// The type numbers of typed data (the low 4 bits of the type byte).
pub const T_NULL: u8 = 0;
pub const T_BOOL: u8 = 1;
pub const T_INT32: u8 = 2;
pub const T_UINT32: u8 = 3;
pub const T_INT64: u8 = 4;
pub const T_UINT64: u8 = 5;
pub const T_IPV4: u8 = 6;
pub const T_IPV6: u8 = 7;
pub const T_STR: u8 = 8;
pub const T_BIN: u8 = 9;
/// The flag of a `true` boolean (bit 4 of the type byte).
const F_TRUE: u8 = 0x10;

/// One typed value; strings and binaries point into the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Data<'a> {
    Null,
    Bool(bool),
    Int32(i32),
    Uint32(u32),
    Int64(i64),
    Uint64(u64),
    Ipv4([u8; 4]),
    Ipv6([u8; 16]),
    Str(&'a [u8]),
    Bin(&'a [u8]),
}

/// Appends `v` as a SPOP variable-length integer: below 240 one byte, else 4 bits in
/// the first byte and 7 per following byte, the high bit meaning "more".
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    if v < 240 {
        out.push(v as u8);
        return;
    }
    out.push((v as u8) | 240);
    v = (v - 240) >> 4;
    while v >= 128 {
        out.push((v as u8) | 128);
        v = (v - 128) >> 7;
    }
    out.push(v as u8);
}

/// A cursor over a frame's payload.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf }
    }

    /// Whether every byte was read.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        self.buf
    }

    pub fn byte(&mut self) -> Result<u8, Error> {
        let (&b, rest) = self.buf.split_first().ok_or(Error::Truncated)?;
        self.buf = rest;
        Ok(b)
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        if self.buf.len() < n {
            return Err(Error::Truncated);
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }

    /// A variable-length integer (the inverse of [`put_varint`]); one that does not fit
    /// 64 bits is invalid.
    pub fn varint(&mut self) -> Result<u64, Error> {
        let first = self.byte()?;
        if first < 240 {
            return Ok(u64::from(first));
        }
        let mut v = u64::from(first);
        let mut shift = 4u32;
        loop {
            let b = self.byte()?;
            if shift > 60 {
                return Err(Error::Invalid("varint too long"));
            }
            v = v.checked_add(u64::from(b) << shift).ok_or(Error::Invalid("varint overflow"))?;
            shift += 7;
            if b < 128 {
                return Ok(v);
            }
        }
    }

    /// A length-prefixed byte string.
    pub fn bytes(&mut self) -> Result<&'a [u8], Error> {
        let n = self.varint()?;
        let n = usize::try_from(n).map_err(|_| Error::Truncated)?;
        self.take(n)
    }

    /// One typed value.
    pub fn data(&mut self) -> Result<Data<'a>, Error> {
        let tb = self.byte()?;
        Ok(match tb & 0x0f {
            T_NULL => Data::Null,
            T_BOOL => Data::Bool(tb & F_TRUE != 0),
            T_INT32 => Data::Int32(self.varint()? as i32),
            T_UINT32 => Data::Uint32(self.varint()? as u32),
            T_INT64 => Data::Int64(self.varint()? as i64),
            T_UINT64 => Data::Uint64(self.varint()?),
            T_IPV4 => Data::Ipv4(self.take(4)?.try_into().map_err(|_| Error::Truncated)?),
            T_IPV6 => Data::Ipv6(self.take(16)?.try_into().map_err(|_| Error::Truncated)?),
            T_STR => Data::Str(self.bytes()?),
            T_BIN => Data::Bin(self.bytes()?),
            _ => return Err(Error::Invalid("unknown data type")),
        })
    }

    /// One key-value pair of a list (a name, then a typed value).
    pub fn kv(&mut self) -> Result<(&'a [u8], Data<'a>), Error> {
        let name = self.bytes()?;
        Ok((name, self.data()?))
    }
}

/// Appends a length-prefixed byte string.
pub fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// Appends a typed value.
pub fn put_data(out: &mut Vec<u8>, d: &Data<'_>) {
    match *d {
        Data::Null => out.push(T_NULL),
        Data::Bool(b) => out.push(T_BOOL | if b { F_TRUE } else { 0 }),
        Data::Int32(v) => {
            out.push(T_INT32);
            put_varint(out, v as i64 as u64);
        }
        Data::Uint32(v) => {
            out.push(T_UINT32);
            put_varint(out, u64::from(v));
        }
        Data::Int64(v) => {
            out.push(T_INT64);
            put_varint(out, v as u64);
        }
        Data::Uint64(v) => {
            out.push(T_UINT64);
            put_varint(out, v);
        }
        Data::Ipv4(a) => {
            out.push(T_IPV4);
            out.extend_from_slice(&a);
        }
        Data::Ipv6(a) => {
            out.push(T_IPV6);
            out.extend_from_slice(&a);
        }
        Data::Str(s) => {
            out.push(T_STR);
            put_bytes(out, s);
        }
        Data::Bin(s) => {
            out.push(T_BIN);
            put_bytes(out, s);
        }
    }
}

/// Appends a key-value pair.
pub fn put_kv(out: &mut Vec<u8>, name: &[u8], d: &Data<'_>) {
    put_bytes(out, name);
    put_data(out, d);
}
