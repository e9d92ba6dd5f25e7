//! Chunked transfer-coding, validated while the bytes are forwarded unchanged: the
//! scanner only says how many bytes belong to the body and where it ends, so the
//! runtime can pass chunk data on (or splice it) without looking at it.
//!
//! HAProxy counterpart: `h1_parse_chunk_size` and `h1_skip_chunk_crlf`
//! (include/haproxy/h1.h), the chunk states of `h1_parse_msg_data` and the trailers
//! parsed by `h1_parse_msg_tlrs` (src/h1_htx.c). HAProxy re-chunks what it forwards, so
//! its parser may be lenient; rampart forwards the bytes as they came, so it accepts
//! only the grammar of RFC 9112 §7.1 to the letter, and refuses (400 on a request, 502
//! on a response) every form two parsers could read differently:
//!
//! ```text
//! chunked-body    = *chunk last-chunk trailer-section CRLF
//! chunk           = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
//! chunk-ext       = *( ";" chunk-ext-name [ "=" chunk-ext-val ] )   ; no BWS, see below
//! chunk-ext-val   = token / quoted-string
//! trailer-section = *( field-line CRLF )
//! ```
//!
//! - Line ends are CRLF, nothing else: a bare LF or a CR not followed by LF in a size
//!   line, after chunk data, in the trailer section or as the final line is refused
//!   (RFC 9112 §2.2 lets a recipient accept a bare LF; a server that does not would
//!   frame the body differently).
//! - No whitespace after the size nor around `;` and `=` in extensions: RFC 9112
//!   §7.1.1 writes it `BWS`, which a sender MUST NOT generate (RFC 9110 §5.6.3), and
//!   servers disagree on whether `3 ` is a size.
//! - An extension has a token name, and a value that is a token or a well-formed
//!   quoted-string (RFC 9110 §5.6.2, §5.6.4): no empty name (`3;`, `3;=x`), no control
//!   character but HTAB inside quotes, quotes that pair up before the line ends.
//! - At most 16 hex digits, leading zeros included (a server parsing the size into 64
//!   bits would wrap), and, as HAProxy, a value below 2^52.
//! - After the last chunk only field lines (RFC 9110 §5.5: token name, colon, value of
//!   visible characters, SP, HTAB or obs-text; no obsolete folding) and the final CRLF.
//!
//! COMPAT: haproxy 2.6 accepts bare LF, blanks after the size and skips extensions
//! blindly; it also unfolds trailers and lets control characters through. rampart
//! refuses all of these (docs/COMPATIBILITY.md, "Stricter than HAProxy").

use super::startline::is_token;
use super::types::{max_headers, H1Error};

/// Default for [`ChunkedState::with_limit`]: HAProxy's default `tune.bufsize` minus
/// `tune.maxrewrite`, the most a chunk-size line or the trailers may take there.
pub const DEFAULT_LINE_LIMIT: usize = 16384 - 1024;

/// HAProxy refuses chunk sizes of 2^52 and more (values a float could not hold).
const SIZE_OVERFLOW_MASK: u64 = 0xF0_0000_0000_0000;

/// Most hex digits a chunk size may have, leading zeros included: what fits 64 bits.
pub const MAX_SIZE_DIGITS: u8 = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    /// Before the first hex digit of a chunk size.
    SizeFirst,
    /// In the hex digits (`ChunkedState::digits` of them so far).
    Size,
    /// Just after a `;`: the first byte of an extension name.
    ExtNameFirst,
    /// In an extension name.
    ExtName,
    /// Just after the `=` of an extension: a token or a quoted string follows.
    ExtValueFirst,
    /// In an extension value that is a token.
    ExtToken,
    /// In a quoted extension value; `escaped` just after a backslash.
    ExtQuoted { escaped: bool },
    /// After the closing quote: `;` or the CR ending the line.
    ExtQuoteEnd,
    /// Got the CR ending the size line, the LF must follow.
    SizeLf,
    /// In chunk data: `ChunkedState::left` bytes remain.
    Data,
    /// After chunk data: the CR must follow.
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
    /// Hex digits of the size read so far.
    digits: u8,
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
        ChunkedState { st: St::SizeFirst, left: 0, digits: 0, line_len: 0, limit, trailers: 0, failed: None }
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
            St::SizeFirst | St::Size => self.size_digit(b)?,
            St::ExtNameFirst => match b {
                _ if is_token(b) => St::ExtName,
                _ => return Err(H1Error::Chunk),
            },
            St::ExtName => match b {
                _ if is_token(b) => St::ExtName,
                b'=' => St::ExtValueFirst,
                _ => end_of_extension(b)?,
            },
            St::ExtValueFirst => match b {
                b'"' => St::ExtQuoted { escaped: false },
                _ if is_token(b) => St::ExtToken,
                _ => return Err(H1Error::Chunk),
            },
            St::ExtToken => match b {
                _ if is_token(b) => St::ExtToken,
                _ => end_of_extension(b)?,
            },
            St::ExtQuoted { escaped } => in_quoted_string(b, escaped)?,
            St::ExtQuoteEnd => end_of_extension(b)?,
            St::SizeLf => match b {
                b'\n' => self.size_line_done(),
                _ => return Err(H1Error::Chunk),
            },
            St::DataCr => match b {
                b'\r' => St::DataLf,
                _ => return Err(H1Error::Chunk),
            },
            St::DataLf => match b {
                b'\n' => self.next_size_line(),
                _ => return Err(H1Error::Chunk),
            },
            St::TrailerStart => match b {
                b'\r' => St::EndLf,
                _ if is_token(b) => {
                    self.trailers += 1;
                    if self.trailers > max_headers() {
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

    /// A byte of the size: a hex digit, or after at least one, `;` or the CR.
    fn size_digit(&mut self, b: u8) -> Result<St, H1Error> {
        if let Some(d) = hex_value(b) {
            // RFC 9112 §7.1: chunk-size = 1*HEXDIG; more than 16 digits cannot be read
            // into 64 bits by every parser, even when the leading ones are zeros.
            self.digits += 1;
            self.left = (self.left << 4) | d;
            if self.digits > MAX_SIZE_DIGITS || self.left & SIZE_OVERFLOW_MASK != 0 {
                return Err(H1Error::Chunk);
            }
            return Ok(St::Size);
        }
        match b {
            _ if self.st == St::SizeFirst => Err(H1Error::Chunk),
            b';' => Ok(St::ExtNameFirst),
            b'\r' => Ok(St::SizeLf),
            // blanks (BWS), a bare LF, anything else
            _ => Err(H1Error::Chunk),
        }
    }

    /// The size line is over: data follows, or the trailers after the last chunk.
    fn size_line_done(&mut self) -> St {
        self.line_len = 0;
        self.digits = 0;
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

/// After an extension (its name, token value or closing quote): another one, or the
/// CR ending the size line. Blanks (BWS) and a bare LF are refused.
fn end_of_extension(b: u8) -> Result<St, H1Error> {
    match b {
        b';' => Ok(St::ExtNameFirst),
        b'\r' => Ok(St::SizeLf),
        _ => Err(H1Error::Chunk),
    }
}

/// One byte of a quoted string (RFC 9110 §5.6.4): `qdtext` is HTAB, SP, visible
/// characters but `"` and `\`, and obs-text; a backslash escapes HTAB, SP, a visible
/// character or obs-text.
fn in_quoted_string(b: u8, escaped: bool) -> Result<St, H1Error> {
    let text = matches!(b, b'\t' | 0x20..=0x7e | 0x80..=0xff);
    Ok(match b {
        _ if !text => return Err(H1Error::Chunk),
        _ if escaped => St::ExtQuoted { escaped: false },
        b'\\' => St::ExtQuoted { escaped: true },
        b'"' => St::ExtQuoteEnd,
        _ => St::ExtQuoted { escaped: false },
    })
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
