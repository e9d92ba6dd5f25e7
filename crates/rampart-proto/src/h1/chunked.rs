//! Chunked transfer-coding, validated while the bytes are forwarded unchanged.

use super::types::H1Error;

/// Where a chunked body scan stands between two calls.
#[derive(Debug, Clone, Default)]
pub struct ChunkedState {
    _private: (),
}

impl ChunkedState {
    pub fn new() -> Self {
        ChunkedState::default()
    }

    /// Scans the next body bytes. Returns how many bytes of `buf` belong to the body and
    /// whether the body ended there (last chunk, trailers and final CRLF seen).
    /// Bytes after the end belong to the next message and are not counted.
    pub fn scan(&mut self, _buf: &[u8]) -> Result<(usize, bool), H1Error> {
        Err(H1Error::Chunk)
    }
}
