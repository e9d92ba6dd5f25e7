//! Chunked transfer-coding, validated while the bytes are forwarded unchanged: the
//! scanner only says how many bytes belong to the body and where it ends, so the
//! runtime can pass chunk data on (or splice it) without looking at it.
//!
//! HAProxy counterpart: `h1_parse_chunk_size` and `h1_skip_chunk_crlf`
//! (include/haproxy/h1.h), the chunk states of `h1_parse_msg_data` and the trailers
//! parsed by `h1_parse_msg_tlrs` (src/h1_htx.c). As there: at most 13 hex digits of
//! value (leading zeros free), blanks allowed between the size and the CRLF or the
//! extension, bare LF accepted for CRLF, a CR not followed by LF refused.
//!
//! COMPAT: chunk extensions are checked as HAProxy 3.4 does (commit "MEDIUM: h1:
//! strictly verify quoting in chunk extensions"), not skipped blindly as in 2.6: quotes
//! must pair up before the line ends, a backslash only escapes inside quotes, and no
//! control character but HTAB may appear. Extensions are only used by attacks, and a
//! CRLF inside quotes would frame the body differently for a server that honours the
//! quotes.
//!
//! COMPAT: trailer fields follow the head's rules (token name, no blank before the
//! colon, no control character but HTAB in the value, no obsolete folding), stricter
//! than HAProxy which forwards control characters and unfolds. HAProxy also applies
//! its Content-Length checks to a trailer named so; rampart does not read trailer
//! values.

use super::startline::is_token;
use super::types::{H1Error, MAX_HEADERS};

/// Default for [`ChunkedState::with_limit`]: HAProxy's default `tune.bufsize` minus
/// `tune.maxrewrite`, the most a chunk-size line or the trailers may take there.
pub const DEFAULT_LINE_LIMIT: usize = 16384 - 1024;

/// HAProxy refuses chunk sizes of 2^52 and more (values a float could not hold).
const SIZE_OVERFLOW_MASK: u64 = 0xF0_0000_0000_0000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    /// Before the first hex digit of a chunk size.
    SizeFirst,
    /// In the hex digits.
    Size,
    /// Blanks after the size.
    SizeBlank,
    /// In a chunk extension (`;...`), up to the line end: inside a quoted string or
    /// not, just after a backslash or not.
    Ext { quoted: bool, escaped: bool },
    /// Got the CR ending the size line, the LF must follow.
    SizeLf,
    /// In chunk data: `ChunkedState::left` bytes remain.
    Data,
    /// After chunk data: CRLF (or LF) must follow.
    DataCr,
    /// Got the CR after chunk data, the LF must follow.
    DataLf,
    /// At the start of a trailer line, or of the final empty line.
    TrailerStart,
    /// In a trailer name.
    TrailerName,
    /// In a trailer value.
    TrailerValue,
    /// Got the CR ending a trailer line.
    TrailerLf,
    /// Got the CR of the final empty line.
    EndLf,
    /// The body is over; following bytes are the next message.
    Done,
}

/// Where a chunked body scan stands between two calls.
#[derive(Debug, Clone)]
pub struct ChunkedState {
    st: St,
    /// The chunk size being read, then the data bytes left in the chunk.
    left: u64,
    /// Bytes in the current size line, or in the trailer section so far.
    line_len: usize,
    /// Most bytes a size line or the trailer section may take.
    limit: usize,
    /// Trailer fields seen.
    trailers: usize,
    /// Set by the first error, returned again by later calls.
    failed: Option<H1Error>,
}

impl Default for ChunkedState {
    fn default() -> Self {
        ChunkedState::with_limit(DEFAULT_LINE_LIMIT)
    }
}

impl ChunkedState {
    pub fn new() -> Self {
        ChunkedState::default()
    }

    /// A scanner allowing `limit` bytes for a chunk-size line (extensions included)
    /// and for the whole trailer section; past it, [`H1Error::TooLarge`].
    pub fn with_limit(limit: usize) -> Self {
        ChunkedState { st: St::SizeFirst, left: 0, line_len: 0, limit, trailers: 0, failed: None }
    }

    /// Scans the next body bytes. Returns how many bytes of `buf` belong to the body and
    /// whether the body ended there (last chunk, trailers and final CRLF seen).
    /// Bytes after the end belong to the next message and are not counted.
    pub fn scan(&mut self, buf: &[u8]) -> Result<(usize, bool), H1Error> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        let mut i = 0;
        while i < buf.len() {
            match self.st {
                St::Done => break,
                St::Data => {
                    let n = self.left.min((buf.len() - i) as u64);
                    i += n as usize;
                    self.skip_data(n);
                }
                _ => {
                    if let Err(e) = self.step(buf[i]) {
                        self.failed = Some(e);
                        return Err(e);
                    }
                    i += 1;
                }
            }
        }
        Ok((i, self.st == St::Done))
    }

    /// Bytes of chunk data that follow and may be passed on without being scanned
    /// (then reported with [`ChunkedState::skip_data`]). Zero outside chunk data.
    pub fn data_left(&self) -> u64 {
        if self.st == St::Data {
            self.left
        } else {
            0
        }
    }

    /// Records that `n` bytes of chunk data were passed on without [`scan`](Self::scan).
    /// `n` must not exceed [`data_left`](Self::data_left); the excess is ignored.
    pub fn skip_data(&mut self, n: u64) {
        debug_assert!(n <= self.data_left(), "skip_data({n}) past the chunk ({})", self.data_left());
        if self.st != St::Data {
            return;
        }
        self.left -= n.min(self.left);
        if self.left == 0 {
            self.st = St::DataCr;
        }
    }

    /// Whether the whole body (final CRLF included) has been seen.
    pub fn is_done(&self) -> bool {
        self.st == St::Done
    }

    /// Whether the last chunk was seen and the trailer section is being read.
    pub fn in_trailers(&self) -> bool {
        matches!(self.st, St::TrailerStart | St::TrailerName | St::TrailerValue | St::TrailerLf | St::EndLf)
    }

    /// Consumes one byte outside chunk data.
    fn step(&mut self, b: u8) -> Result<(), H1Error> {
        self.line_len += 1;
        if self.line_len > self.limit {
            return Err(H1Error::TooLarge);
        }
        self.st = match self.st {
            St::SizeFirst => match hex_value(b) {
                Some(d) => {
                    self.left = d;
                    St::Size
                }
                None => return Err(H1Error::Chunk),
            },
            St::Size => match hex_value(b) {
                Some(d) => {
                    self.left = (self.left << 4) | d;
                    if self.left & SIZE_OVERFLOW_MASK != 0 {
                        return Err(H1Error::Chunk);
                    }
                    St::Size
                }
                None => self.after_size(b)?,
            },
            St::SizeBlank => self.after_size(b)?,
            St::Ext { quoted, escaped } => self.in_extension(b, quoted, escaped)?,
            St::SizeLf => match b {
                b'\n' => self.size_line_done(),
                _ => return Err(H1Error::Chunk),
            },
            St::DataCr => match b {
                b'\r' => St::DataLf,
                b'\n' => self.next_size_line(),
                _ => return Err(H1Error::Chunk),
            },
            St::DataLf => match b {
                b'\n' => self.next_size_line(),
                _ => return Err(H1Error::Chunk),
            },
            St::TrailerStart => match b {
                b'\r' => St::EndLf,
                b'\n' => St::Done,
                _ if is_token(b) => {
                    self.trailers += 1;
                    if self.trailers > MAX_HEADERS {
                        return Err(H1Error::TooManyHeaders);
                    }
                    St::TrailerName
                }
                _ => return Err(H1Error::HeaderSyntax),
            },
            St::TrailerName => match b {
                b':' => St::TrailerValue,
                _ if is_token(b) => St::TrailerName,
                _ => return Err(H1Error::HeaderSyntax),
            },
            St::TrailerValue => match b {
                b'\r' => St::TrailerLf,
                b'\n' => St::TrailerStart,
                b'\t' | 0x20..=0x7e | 0x80..=0xff => St::TrailerValue,
                _ => return Err(H1Error::HeaderSyntax),
            },
            St::TrailerLf => match b {
                b'\n' => St::TrailerStart,
                _ => return Err(H1Error::HeaderSyntax),
            },
            St::EndLf => match b {
                b'\n' => St::Done,
                _ => return Err(H1Error::HeaderSyntax),
            },
            // handled by `scan`, which never steps through them
            St::Data | St::Done => self.st,
        };
        Ok(())
    }

    /// After the hex digits: blanks, then an extension or the line end.
    fn after_size(&mut self, b: u8) -> Result<St, H1Error> {
        Ok(match b {
            b' ' | b'\t' => St::SizeBlank,
            b';' => St::Ext { quoted: false, escaped: false },
            b'\r' => St::SizeLf,
            b'\n' => self.size_line_done(),
            _ => return Err(H1Error::Chunk),
        })
    }

    /// One byte of a chunk extension.
    fn in_extension(&mut self, b: u8, quoted: bool, escaped: bool) -> Result<St, H1Error> {
        let is_ctl = b < 0x20 || b == 0x7f;
        if is_ctl && b != b'\t' {
            return match b {
                _ if quoted || escaped => Err(H1Error::Chunk),
                b'\r' => Ok(St::SizeLf),
                b'\n' => Ok(self.size_line_done()),
                _ => Err(H1Error::Chunk),
            };
        }
        Ok(match b {
            _ if escaped => St::Ext { quoted, escaped: false },
            b'\\' if quoted => St::Ext { quoted, escaped: true },
            b'\\' => return Err(H1Error::Chunk),
            b'"' => St::Ext { quoted: !quoted, escaped: false },
            _ => St::Ext { quoted, escaped: false },
        })
    }

    /// The size line is over: data follows, or the trailers after the last chunk.
    fn size_line_done(&mut self) -> St {
        self.line_len = 0;
        if self.left == 0 {
            St::TrailerStart
        } else {
            St::Data
        }
    }

    /// A chunk is over: the next size line starts.
    fn next_size_line(&mut self) -> St {
        self.line_len = 0;
        St::SizeFirst
    }
}

#[inline]
fn hex_value(b: u8) -> Option<u64> {
    match b {
        b'0'..=b'9' => Some(u64::from(b - b'0')),
        b'a'..=b'f' => Some(u64::from(b - b'a' + 10)),
        b'A'..=b'F' => Some(u64::from(b - b'A' + 10)),
        _ => None,
    }
}
