//! FastCGI records (the FastCGI 1.0 specification), in the role of a web server talking
//! to an application (PHP-FPM...): the 8-byte record header, BEGIN_REQUEST, PARAMS
//! (name-value pairs, `params`), STDIN, STDOUT, STDERR, END_REQUEST, GET_VALUES /
//! GET_VALUES_RESULT, ABORT_REQUEST, padding; and the CGI response head an application
//! writes at the start of its STDOUT (`cgi`).
//!
//! HAProxy counterpart: src/fcgi.c (record and parameter codec) and the record parts of
//! src/mux_fcgi.c. Running out of bytes is not an error: [`next_record`] says
//! "incomplete" with `Ok(None)`.
//!
//! - `params`: name-value pairs (1- or 4-byte lengths), encoded and decoded
//! - `cgi`: the response head at the start of STDOUT (`Status:`, `Location:`, headers)

pub mod cgi;
pub mod params;

#[cfg(test)]
mod tests;

/// The only protocol version (`FCGI_VERSION_1`).
pub const VERSION: u8 = 1;
/// Size of a record header.
pub const HEADER_LEN: usize = 8;
/// The most content bytes one record carries.
pub const MAX_CONTENT: usize = 0xffff;
/// The request id of management records (GET_VALUES ...).
pub const NULL_REQUEST_ID: u16 = 0;
/// BEGIN_REQUEST's flag: the application keeps the connection open after the request.
pub const KEEP_CONN: u8 = 1;
/// The one role a web server asks for.
pub const ROLE_RESPONDER: u16 = 1;

/// A record's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    BeginRequest,
    AbortRequest,
    EndRequest,
    Params,
    Stdin,
    Stdout,
    Stderr,
    Data,
    GetValues,
    GetValuesResult,
    UnknownType,
    /// A type this version of the protocol does not define.
    Other(u8),
}

impl Kind {
    pub fn from_byte(b: u8) -> Kind {
        match b {
            1 => Kind::BeginRequest,
            2 => Kind::AbortRequest,
            3 => Kind::EndRequest,
            4 => Kind::Params,
            5 => Kind::Stdin,
            6 => Kind::Stdout,
            7 => Kind::Stderr,
            8 => Kind::Data,
            9 => Kind::GetValues,
            10 => Kind::GetValuesResult,
            11 => Kind::UnknownType,
            b => Kind::Other(b),
        }
    }

    pub fn to_byte(self) -> u8 {
        match self {
            Kind::BeginRequest => 1,
            Kind::AbortRequest => 2,
            Kind::EndRequest => 3,
            Kind::Params => 4,
            Kind::Stdin => 5,
            Kind::Stdout => 6,
            Kind::Stderr => 7,
            Kind::Data => 8,
            Kind::GetValues => 9,
            Kind::GetValuesResult => 10,
            Kind::UnknownType => 11,
            Kind::Other(b) => b,
        }
    }
}

/// Why bytes are not a FastCGI record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FcgiError {
    /// The header's version is not 1.
    Version(u8),
    /// The content does not have the size its type requires.
    BadLength(Kind),
    /// A name-value pair runs past the end of its content.
    BadParam,
}

impl std::fmt::Display for FcgiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FcgiError::Version(v) => write!(f, "FastCGI version {v} (expected 1)"),
            FcgiError::BadLength(k) => write!(f, "{k:?} record of a wrong length"),
            FcgiError::BadParam => f.write_str("name-value pair past the end of its record"),
        }
    }
}

impl std::error::Error for FcgiError {}

/// One record: its type, request id and content (padding left out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    pub kind: Kind,
    pub id: u16,
    pub content: &'a [u8],
}

/// The record at the start of `buf` and the bytes it takes (padding included);
/// `Ok(None)` until the whole record is in `buf`.
pub fn next_record(buf: &[u8]) -> Result<Option<(Record<'_>, usize)>, FcgiError> {
    let Some(h) = buf.get(..HEADER_LEN) else { return Ok(None) };
    if h[0] != VERSION {
        return Err(FcgiError::Version(h[0]));
    }
    let kind = Kind::from_byte(h[1]);
    let id = u16::from_be_bytes([h[2], h[3]]);
    let len = usize::from(u16::from_be_bytes([h[4], h[5]]));
    let total = HEADER_LEN + len + usize::from(h[6]);
    if buf.len() < total {
        return Ok(None);
    }
    let content = &buf[HEADER_LEN..HEADER_LEN + len];
    let fixed = match kind {
        Kind::BeginRequest | Kind::EndRequest | Kind::UnknownType => Some(8),
        Kind::AbortRequest => Some(0),
        _ => None,
    };
    if fixed.is_some_and(|n| n != len) {
        return Err(FcgiError::BadLength(kind));
    }
    Ok(Some((Record { kind, id, content }, total)))
}

/// The content of an END_REQUEST record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndRequest {
    /// The application's exit status.
    pub app_status: u32,
    /// `protocol_status`: 0 request complete, 1 cannot multiplex, 2 overloaded, 3
    /// unknown role.
    pub protocol_status: u8,
}

/// `protocol_status` values of END_REQUEST.
pub const REQUEST_COMPLETE: u8 = 0;
pub const CANT_MPX_CONN: u8 = 1;
pub const OVERLOADED: u8 = 2;
pub const UNKNOWN_ROLE: u8 = 3;

impl EndRequest {
    /// Reads the content of an END_REQUEST record (8 bytes, [`next_record`] checked).
    pub fn decode(content: &[u8]) -> Result<EndRequest, FcgiError> {
        match content {
            [a, b, c, d, s, _, _, _] => {
                Ok(EndRequest { app_status: u32::from_be_bytes([*a, *b, *c, *d]), protocol_status: *s })
            }
            _ => Err(FcgiError::BadLength(Kind::EndRequest)),
        }
    }

    pub fn encode(&self, id: u16, out: &mut Vec<u8>) {
        let s = self.app_status.to_be_bytes();
        push_record(out, Kind::EndRequest, id, &[s[0], s[1], s[2], s[3], self.protocol_status, 0, 0, 0]);
    }
}

/// Appends a record header for `len` content bytes followed by `pad` padding bytes.
pub fn push_header(out: &mut Vec<u8>, kind: Kind, id: u16, len: usize, pad: u8) {
    debug_assert!(len <= MAX_CONTENT);
    let [i0, i1] = id.to_be_bytes();
    let [l0, l1] = (len as u16).to_be_bytes();
    out.extend_from_slice(&[VERSION, kind.to_byte(), i0, i1, l0, l1, pad, 0]);
}

/// The padding that brings `len` content bytes to a multiple of 8 (what the
/// specification recommends).
pub fn padding(len: usize) -> u8 {
    ((8 - len % 8) % 8) as u8
}

/// Appends one record holding `content` (at most [`MAX_CONTENT`] bytes), padded.
pub fn push_record(out: &mut Vec<u8>, kind: Kind, id: u16, content: &[u8]) {
    let pad = padding(content.len());
    push_header(out, kind, id, content.len(), pad);
    out.extend_from_slice(content);
    out.resize(out.len() + usize::from(pad), 0);
}

/// Appends `data` as records of a stream type (PARAMS, STDIN ...), as many as its
/// length needs; nothing for empty `data` (the empty record that ends a stream is
/// [`push_stream_end`]).
pub fn push_stream(out: &mut Vec<u8>, kind: Kind, id: u16, data: &[u8]) {
    for part in data.chunks(MAX_CONTENT) {
        push_record(out, kind, id, part);
    }
}

/// Appends the empty record that ends a stream (PARAMS, STDIN ...).
pub fn push_stream_end(out: &mut Vec<u8>, kind: Kind, id: u16) {
    push_header(out, kind, id, 0, 0);
}

/// Appends a BEGIN_REQUEST record for the responder role.
pub fn push_begin_request(out: &mut Vec<u8>, id: u16, keep_conn: bool) {
    let [r0, r1] = ROLE_RESPONDER.to_be_bytes();
    push_record(out, Kind::BeginRequest, id, &[r0, r1, u8::from(keep_conn) * KEEP_CONN, 0, 0, 0, 0, 0]);
}

/// Appends an ABORT_REQUEST record.
pub fn push_abort_request(out: &mut Vec<u8>, id: u16) {
    push_header(out, Kind::AbortRequest, id, 0, 0);
}

/// Appends a GET_VALUES record asking for the variables `names` (`FCGI_MAX_REQS`,
/// `FCGI_MPXS_CONNS` ...).
pub fn push_get_values(out: &mut Vec<u8>, names: &[&[u8]]) {
    let mut content = Vec::new();
    for n in names {
        params::push_pair(&mut content, n, b"");
    }
    push_record(out, Kind::GetValues, NULL_REQUEST_ID, &content);
}
