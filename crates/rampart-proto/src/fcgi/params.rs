//! FastCGI name-value pairs (PARAMS, GET_VALUES, GET_VALUES_RESULT content): each
//! length on 1 byte when below 128, else on 4 bytes with the high bit set.

use super::FcgiError;

/// The most a length may say (31 bits).
pub const MAX_LEN: usize = 0x7fff_ffff;

/// Appends one length.
fn push_len(out: &mut Vec<u8>, len: usize) {
    debug_assert!(len <= MAX_LEN);
    if len < 0x80 {
        out.push(len as u8);
    } else {
        out.extend_from_slice(&((len as u32) | 0x8000_0000).to_be_bytes());
    }
}

/// Appends the pair `name` = `value` as they are.
pub fn push_pair(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    push_len(out, name.len());
    push_len(out, value.len());
    out.extend_from_slice(name);
    out.extend_from_slice(value);
}

/// Appends a CGI variable: its name `prefix` + `name` written as HAProxy writes every
/// parameter name (letters and digits upper-cased, any other byte becomes `_`:
/// `HTTP_` + `x-forwarded-for` is `HTTP_X_FORWARDED_FOR`).
pub fn push_cgi_var(out: &mut Vec<u8>, prefix: &[u8], name: &[u8], value: &[u8]) {
    push_len(out, prefix.len() + name.len());
    push_len(out, value.len());
    let cgi = |&c: &u8| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { b'_' };
    out.extend(prefix.iter().map(cgi));
    out.extend(name.iter().map(cgi));
    out.extend_from_slice(value);
}

/// Reads one length at the start of `buf`: the length and the bytes it took.
fn read_len(buf: &[u8]) -> Result<(usize, usize), FcgiError> {
    match buf {
        [b, ..] if b & 0x80 == 0 => Ok((usize::from(*b), 1)),
        [a, b, c, d, ..] => Ok(((u32::from_be_bytes([*a, *b, *c, *d]) & 0x7fff_ffff) as usize, 4)),
        _ => Err(FcgiError::BadParam),
    }
}

/// The pair at the start of `buf` and the bytes it took.
pub fn next_pair(buf: &[u8]) -> Result<(&[u8], &[u8], usize), FcgiError> {
    let (nlen, a) = read_len(buf)?;
    let (vlen, b) = read_len(&buf[a..])?;
    let start = a + b;
    let end = start.checked_add(nlen).and_then(|n| n.checked_add(vlen)).ok_or(FcgiError::BadParam)?;
    if end > buf.len() {
        return Err(FcgiError::BadParam);
    }
    Ok((&buf[start..start + nlen], &buf[start + nlen..end], end))
}

/// The pairs of a record's content, in order; an error ends the walk.
pub fn pairs(mut buf: &[u8]) -> impl Iterator<Item = Result<(&[u8], &[u8]), FcgiError>> {
    std::iter::from_fn(move || {
        if buf.is_empty() {
            return None;
        }
        match next_pair(buf) {
            Ok((n, v, used)) => {
                buf = &buf[used..];
                Some(Ok((n, v)))
            }
            Err(e) => {
                buf = &[];
                Some(Err(e))
            }
        }
    })
}
