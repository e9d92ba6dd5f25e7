//! Request and response heads on httparse, plus the checks httparse leaves to us
//! (framing headers, Connection tokens, size limit).

use super::types::{H1Error, Head, Method};

/// Parses the request head at the start of `buf` into `head` (reset first).
/// `Ok(true)`: complete, `head.len` bytes consumed. `Ok(false)`: more bytes needed.
/// A head that is not complete within `max_len` bytes is [`H1Error::TooLarge`].
pub fn parse_request(_buf: &[u8], _max_len: usize, _head: &mut Head) -> Result<bool, H1Error> {
    Err(H1Error::StartLine)
}

/// Parses a response head; `req_method` decides whether a body may follow (HEAD).
pub fn parse_response(_buf: &[u8], _max_len: usize, _req_method: Method, _head: &mut Head) -> Result<bool, H1Error> {
    Err(H1Error::StartLine)
}
