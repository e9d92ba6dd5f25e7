//! HTTP/2 frames (RFC 9113 §4, §6): the connection preface, the 9-byte frame header,
//! one parser per frame type with every check §6 puts on lengths, padding and stream
//! ids, and the encoders a mux sends with.
//!
//! HAProxy counterpart: `h2_frame_check()` and the `h2c_handle_*()`/`h2c_send_*()`
//! functions of src/mux_h2.c, `struct h2_fh` (include/haproxy/h2.h). What needs the
//! connection's state (is the stream idle, is a CONTINUATION expected, flow-control
//! windows, does this role accept PUSH_PROMISE) is the mux's; this module only knows
//! one frame at a time, and the receiver's SETTINGS_MAX_FRAME_SIZE it is given.
//!
//! Reading: [`FrameHeader::parse`] as soon as 9 bytes are there, [`FrameHeader::check`]
//! before buffering the payload (a too large frame is refused without reading it),
//! then [`parse`]; or [`next_frame`] for all three over a buffer. Writing: the
//! `encode_*` functions append one frame (or a HEADERS + CONTINUATION sequence) to the
//! caller's `Vec<u8>`.

use super::error::{ErrorCode, H2Error};
use super::settings::{Setting, SettingsParams};

/// The client connection preface (§3.4), sent before the client's first SETTINGS.
pub const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// Size of a frame header (§4.1).
pub const FRAME_HEADER_LEN: usize = 9;
/// Largest stream identifier, and largest flow-control window (2^31-1).
pub const MAX_STREAM_ID: u32 = 0x7fff_ffff;
/// Largest flow-control window and WINDOW_UPDATE increment (§6.9.1).
pub const MAX_WINDOW_SIZE: u32 = 0x7fff_ffff;
/// The reserved high bit of a stream identifier, ignored on receipt (§4.1).
const RESERVED_BIT: u32 = 0x8000_0000;

/// Frame flags (§6). One bit can mean different things for different types.
pub mod flags {
    /// DATA, HEADERS: the last frame the sender sends on this stream.
    pub const END_STREAM: u8 = 0x01;
    /// SETTINGS, PING: this frame acknowledges the peer's.
    pub const ACK: u8 = 0x01;
    /// HEADERS, PUSH_PROMISE, CONTINUATION: the field block ends in this frame.
    pub const END_HEADERS: u8 = 0x04;
    /// DATA, HEADERS, PUSH_PROMISE: a Pad Length byte and padding are present.
    pub const PADDED: u8 = 0x08;
    /// HEADERS: the (deprecated) priority fields are present.
    pub const PRIORITY: u8 = 0x20;
}

/// A frame's type (§6, §11.2). Unknown types are kept so they can be skipped (§4.1:
/// "Implementations MUST ignore and discard frames of unknown types").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrameType {
    /// 0x0, §6.1.
    Data,
    /// 0x1, §6.2.
    Headers,
    /// 0x2, §6.3.
    Priority,
    /// 0x3, §6.4.
    RstStream,
    /// 0x4, §6.5.
    Settings,
    /// 0x5, §6.6.
    PushPromise,
    /// 0x6, §6.7.
    Ping,
    /// 0x7, §6.8.
    GoAway,
    /// 0x8, §6.9.
    WindowUpdate,
    /// 0x9, §6.10.
    Continuation,
    /// Any other type.
    Unknown(u8),
}

impl FrameType {
    /// The type a byte stands for.
    pub fn from_u8(b: u8) -> FrameType {
        match b {
            0x0 => FrameType::Data,
            0x1 => FrameType::Headers,
            0x2 => FrameType::Priority,
            0x3 => FrameType::RstStream,
            0x4 => FrameType::Settings,
            0x5 => FrameType::PushPromise,
            0x6 => FrameType::Ping,
            0x7 => FrameType::GoAway,
            0x8 => FrameType::WindowUpdate,
            0x9 => FrameType::Continuation,
            b => FrameType::Unknown(b),
        }
    }

    /// The type's byte on the wire.
    pub fn to_u8(self) -> u8 {
        match self {
            FrameType::Data => 0x0,
            FrameType::Headers => 0x1,
            FrameType::Priority => 0x2,
            FrameType::RstStream => 0x3,
            FrameType::Settings => 0x4,
            FrameType::PushPromise => 0x5,
            FrameType::Ping => 0x6,
            FrameType::GoAway => 0x7,
            FrameType::WindowUpdate => 0x8,
            FrameType::Continuation => 0x9,
            FrameType::Unknown(b) => b,
        }
    }
}

/// The 9-byte header every frame starts with (§4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// Payload length (24 bits), the 9 header bytes not included.
    pub len: u32,
    /// Frame type.
    pub kind: FrameType,
    /// Type-specific flags ([`flags`]); unused ones are ignored.
    pub flags: u8,
    /// Stream identifier, reserved bit cleared; 0 is the connection.
    pub stream_id: u32,
}

impl FrameHeader {
    /// Reads a frame header from the start of `buf`; `None` while fewer than 9 bytes
    /// are there. The reserved bit is ignored.
    pub fn parse(buf: &[u8]) -> Option<FrameHeader> {
        let h: &[u8; FRAME_HEADER_LEN] = buf.get(..FRAME_HEADER_LEN)?.try_into().ok()?;
        Some(FrameHeader {
            len: u32::from_be_bytes([0, h[0], h[1], h[2]]),
            kind: FrameType::from_u8(h[3]),
            flags: h[4],
            stream_id: u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & !RESERVED_BIT,
        })
    }

    /// Appends the header (reserved bit unset) to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        debug_assert!(self.len < 1 << 24, "frame payload of {} bytes", self.len);
        out.extend_from_slice(&self.len.to_be_bytes()[1..]);
        out.push(self.kind.to_u8());
        out.push(self.flags);
        out.extend_from_slice(&(self.stream_id & !RESERVED_BIT).to_be_bytes());
    }

    /// Whole frame size on the wire: header and payload.
    pub fn frame_len(&self) -> usize {
        FRAME_HEADER_LEN + self.len as usize
    }

    /// Whether a flag is set.
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// Everything the header alone says is wrong, so a frame can be refused before
    /// its payload is read: a length above `max_frame_size` (the SETTINGS_MAX_FRAME_SIZE
    /// we advertised), a stream id of 0 where a stream is needed or the reverse, and the
    /// fixed or minimum length of a type (§4.2, §6).
    ///
    /// COMPAT: a frame larger than the limit is a connection error whatever its type.
    /// HAProxy (`h2_frame_check()`, include/haproxy/h2.h) does the same for the types
    /// it knows and lets unknown ones through; §4.2 applies the limit to every frame.
    /// §4.2 would allow a stream error for a DATA frame, but its bytes still count
    /// against the connection window.
    pub fn check(&self, max_frame_size: u32) -> Result<(), H2Error> {
        if self.len > max_frame_size {
            return Err(conn(ErrorCode::FrameSizeError));
        }
        match self.kind {
            FrameType::Data | FrameType::Headers | FrameType::PushPromise | FrameType::Continuation => self.on_stream(),
            FrameType::Priority => self.on_stream().and(self.len_is(5, H2Error::Stream(self.stream_id, FRAME_SIZE))),
            FrameType::RstStream => self.on_stream().and(self.len_is(4, conn(FRAME_SIZE))),
            FrameType::WindowUpdate => self.len_is(4, conn(FRAME_SIZE)),
            FrameType::Settings => self.on_connection().and(self.check_settings_len()),
            FrameType::Ping => self.on_connection().and(self.len_is(8, conn(FRAME_SIZE))),
            FrameType::GoAway => self.on_connection().and(self.len_at_least(8)),
            FrameType::Unknown(_) => Ok(()),
        }
    }

    /// Frames that "MUST be associated with a stream".
    fn on_stream(&self) -> Result<(), H2Error> {
        if self.stream_id == 0 {
            return Err(conn(ErrorCode::ProtocolError));
        }
        Ok(())
    }

    /// Frames that apply to the connection only (SETTINGS, PING, GOAWAY).
    fn on_connection(&self) -> Result<(), H2Error> {
        if self.stream_id != 0 {
            return Err(conn(ErrorCode::ProtocolError));
        }
        Ok(())
    }

    fn len_is(&self, n: u32, err: H2Error) -> Result<(), H2Error> {
        if self.len != n {
            return Err(err);
        }
        Ok(())
    }

    fn len_at_least(&self, n: u32) -> Result<(), H2Error> {
        if self.len < n {
            return Err(conn(FRAME_SIZE));
        }
        Ok(())
    }

    /// §6.5: an ACK is empty, parameters come 6 bytes each.
    fn check_settings_len(&self) -> Result<(), H2Error> {
        if (self.has(flags::ACK) && self.len != 0) || !self.len.is_multiple_of(6) {
            return Err(conn(FRAME_SIZE));
        }
        Ok(())
    }
}

const FRAME_SIZE: ErrorCode = ErrorCode::FrameSizeError;

fn conn(code: ErrorCode) -> H2Error {
    H2Error::Connection(code)
}

/// The (deprecated, §5.3.2) priority fields of HEADERS and PRIORITY frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Priority {
    /// The dependency is exclusive.
    pub exclusive: bool,
    /// The stream this one depends on.
    pub dependency: u32,
    /// Weight as sent, 0..=255 (the weight is this plus one).
    pub weight: u8,
}

impl Priority {
    fn parse(b: &[u8; 5]) -> Priority {
        let dep = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        Priority { exclusive: dep & RESERVED_BIT != 0, dependency: dep & !RESERVED_BIT, weight: b[4] }
    }

    fn encode(&self, out: &mut Vec<u8>) {
        let excl = if self.exclusive { RESERVED_BIT } else { 0 };
        out.extend_from_slice(&((self.dependency & !RESERVED_BIT) | excl).to_be_bytes());
        out.push(self.weight);
    }
}

/// One parsed frame. Slices point into the payload given to [`parse`]; padding is
/// already removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame<'a> {
    /// DATA (§6.1).
    Data {
        /// Stream the data belongs to (never 0).
        stream_id: u32,
        /// Application data, padding removed.
        data: &'a [u8],
        /// END_STREAM was set.
        end_stream: bool,
        /// The whole payload length, padding included: what counts against the
        /// flow-control windows.
        flow_len: u32,
    },
    /// HEADERS (§6.2): the first fragment of a field block.
    Headers {
        /// Stream opened or continued (never 0).
        stream_id: u32,
        /// Field block fragment, padding and priority removed.
        fragment: &'a [u8],
        /// END_STREAM was set.
        end_stream: bool,
        /// END_HEADERS was set: no CONTINUATION follows.
        end_headers: bool,
        /// Priority fields, when the PRIORITY flag was set.
        priority: Option<Priority>,
    },
    /// PRIORITY (§6.3), deprecated: can be ignored once parsed.
    Priority {
        /// Stream the priority is for (never 0).
        stream_id: u32,
        /// The fields.
        priority: Priority,
    },
    /// RST_STREAM (§6.4).
    RstStream {
        /// Stream to reset (never 0).
        stream_id: u32,
        /// Why.
        error: ErrorCode,
    },
    /// SETTINGS (§6.5): an acknowledgement, or parameters to apply in order.
    Settings {
        /// ACK was set (then `params` is empty).
        ack: bool,
        /// The parameters ([`SettingsParams::iter`]).
        params: SettingsParams<'a>,
    },
    /// PUSH_PROMISE (§6.6).
    PushPromise {
        /// Stream the promise is associated with (never 0).
        stream_id: u32,
        /// Stream reserved by the promise (never 0).
        promised_id: u32,
        /// Field block fragment, padding removed.
        fragment: &'a [u8],
        /// END_HEADERS was set.
        end_headers: bool,
    },
    /// PING (§6.7).
    Ping {
        /// ACK was set: this answers one of ours.
        ack: bool,
        /// Opaque data, to echo in the answer.
        data: [u8; 8],
    },
    /// GOAWAY (§6.8).
    GoAway {
        /// Highest stream the sender might have processed.
        last_stream_id: u32,
        /// Why the connection closes.
        error: ErrorCode,
        /// Additional debug data (opaque, possibly sensitive).
        debug: &'a [u8],
    },
    /// WINDOW_UPDATE (§6.9).
    WindowUpdate {
        /// Stream whose window grows, 0 for the connection's.
        stream_id: u32,
        /// Increment, 1..=2^31-1.
        increment: u32,
    },
    /// CONTINUATION (§6.10): a further fragment of a field block.
    Continuation {
        /// Stream of the field block (never 0).
        stream_id: u32,
        /// Field block fragment.
        fragment: &'a [u8],
        /// END_HEADERS was set.
        end_headers: bool,
    },
    /// A frame of a type this version does not know: to be ignored (§4.1, §5.5), except
    /// inside a field block where it is a PROTOCOL_ERROR (the mux's to see).
    Unknown {
        /// Type byte.
        kind: u8,
        /// Flags as received.
        flags: u8,
        /// Stream id, reserved bit cleared.
        stream_id: u32,
        /// Payload as received.
        payload: &'a [u8],
    },
}

// === parsing ===

/// Parses one frame whose header was read with [`FrameHeader::parse`]; `payload` is
/// exactly the `header.len` bytes after it. Runs [`FrameHeader::check`] first, then
/// the payload checks of §6 (padding, priority fields, increments).
///
/// On a stream error ([`H2Error::Stream`]) the frame is still `header.frame_len()`
/// bytes long: skip them and go on.
pub fn parse(header: FrameHeader, payload: &[u8], max_frame_size: u32) -> Result<Frame<'_>, H2Error> {
    header.check(max_frame_size)?;
    if payload.len() != header.len as usize {
        debug_assert!(false, "payload of {} bytes for a frame of {}", payload.len(), header.len);
        return Err(conn(ErrorCode::InternalError));
    }
    let (h, p) = (&header, payload);
    match header.kind {
        FrameType::Data => parse_data(h, p),
        FrameType::Headers => parse_headers(h, p),
        FrameType::Priority => parse_priority(h, p),
        FrameType::RstStream => Ok(Frame::RstStream { stream_id: h.stream_id, error: read_u32(p).into() }),
        FrameType::Settings => Ok(Frame::Settings { ack: h.has(flags::ACK), params: SettingsParams::new(p) }),
        FrameType::PushPromise => parse_push_promise(h, p),
        FrameType::Ping => Ok(Frame::Ping { ack: h.has(flags::ACK), data: read_array(p) }),
        FrameType::GoAway => Ok(parse_goaway(p)),
        FrameType::WindowUpdate => parse_window_update(h, p),
        FrameType::Continuation => {
            Ok(Frame::Continuation { stream_id: h.stream_id, fragment: p, end_headers: h.has(flags::END_HEADERS) })
        }
        FrameType::Unknown(kind) => Ok(Frame::Unknown { kind, flags: h.flags, stream_id: h.stream_id, payload: p }),
    }
}

/// Reads the frame at the start of `buf`: `Ok(None)` while it is incomplete, else the
/// frame and the bytes it took. A frame header that [`FrameHeader::check`] refuses is
/// reported as soon as its 9 bytes are there, without waiting for the payload.
pub fn next_frame(buf: &[u8], max_frame_size: u32) -> Result<Option<(Frame<'_>, usize)>, H2Error> {
    let Some(header) = FrameHeader::parse(buf) else { return Ok(None) };
    header.check(max_frame_size)?;
    let Some(payload) = buf.get(FRAME_HEADER_LEN..header.frame_len()) else { return Ok(None) };
    parse(header, payload, max_frame_size).map(|f| Some((f, header.frame_len())))
}

/// Removes the Pad Length byte and the padding of a PADDED frame (§6.1, §6.2, §6.6).
/// Padding bytes are not checked for zeros (a receiver "is not obligated to").
fn strip_padding<'a>(h: &FrameHeader, p: &'a [u8]) -> Result<&'a [u8], H2Error> {
    if !h.has(flags::PADDED) {
        return Ok(p);
    }
    let Some((&pad, rest)) = p.split_first() else { return Err(conn(FRAME_SIZE)) };
    // "If the length of the padding is the length of the frame payload or greater".
    if pad as usize >= p.len() {
        return Err(conn(ErrorCode::ProtocolError));
    }
    Ok(&rest[..rest.len() - pad as usize])
}

fn parse_data<'a>(h: &FrameHeader, p: &'a [u8]) -> Result<Frame<'a>, H2Error> {
    let data = strip_padding(h, p)?;
    Ok(Frame::Data { stream_id: h.stream_id, data, end_stream: h.has(flags::END_STREAM), flow_len: h.len })
}

/// HEADERS: padding, then the optional priority fields.
///
/// COMPAT: a stream depending on itself is a stream error in RFC 7540 §5.3.1; HAProxy
/// makes it a connection error in a HEADERS frame (`h2c_dec_hdrs()`), since the field
/// block must still be decoded to keep the HPACK contexts in step. So does rampart.
fn parse_headers<'a>(h: &FrameHeader, p: &'a [u8]) -> Result<Frame<'a>, H2Error> {
    let mut fragment = strip_padding(h, p)?;
    let mut priority = None;
    if h.has(flags::PRIORITY) {
        let Some((fields, rest)) = fragment.split_first_chunk::<5>() else { return Err(conn(FRAME_SIZE)) };
        let prio = Priority::parse(fields);
        if prio.dependency == h.stream_id {
            return Err(conn(ErrorCode::ProtocolError));
        }
        priority = Some(prio);
        fragment = rest;
    }
    Ok(Frame::Headers {
        stream_id: h.stream_id,
        fragment,
        end_stream: h.has(flags::END_STREAM),
        end_headers: h.has(flags::END_HEADERS),
        priority,
    })
}

/// PRIORITY: a stream cannot depend on itself (RFC 7540 §5.3.1), a stream error.
fn parse_priority<'a>(h: &FrameHeader, p: &'a [u8]) -> Result<Frame<'a>, H2Error> {
    let priority = Priority::parse(&read_array(p));
    if priority.dependency == h.stream_id {
        return Err(H2Error::Stream(h.stream_id, ErrorCode::ProtocolError));
    }
    Ok(Frame::Priority { stream_id: h.stream_id, priority })
}

/// PUSH_PROMISE: padding, then the promised stream id, which cannot be 0 (never a
/// valid new stream id, §5.1.1).
fn parse_push_promise<'a>(h: &FrameHeader, p: &'a [u8]) -> Result<Frame<'a>, H2Error> {
    let rest = strip_padding(h, p)?;
    let Some((id, fragment)) = rest.split_first_chunk::<4>() else { return Err(conn(FRAME_SIZE)) };
    let promised_id = u32::from_be_bytes(*id) & !RESERVED_BIT;
    if promised_id == 0 {
        return Err(conn(ErrorCode::ProtocolError));
    }
    Ok(Frame::PushPromise { stream_id: h.stream_id, promised_id, fragment, end_headers: h.has(flags::END_HEADERS) })
}

fn parse_goaway(p: &[u8]) -> Frame<'_> {
    Frame::GoAway { last_stream_id: read_u32(p) & !RESERVED_BIT, error: read_u32(&p[4..]).into(), debug: &p[8..] }
}

/// WINDOW_UPDATE: an increment of 0 is a PROTOCOL_ERROR, of the stream or of the
/// connection as the frame's stream id says (§6.9).
fn parse_window_update<'a>(h: &FrameHeader, p: &'a [u8]) -> Result<Frame<'a>, H2Error> {
    let increment = read_u32(p) & !RESERVED_BIT;
    if increment == 0 {
        return Err(match h.stream_id {
            0 => conn(ErrorCode::ProtocolError),
            id => H2Error::Stream(id, ErrorCode::ProtocolError),
        });
    }
    Ok(Frame::WindowUpdate { stream_id: h.stream_id, increment })
}

/// The first 4 bytes, big endian; the caller checked the length.
fn read_u32(p: &[u8]) -> u32 {
    u32::from_be_bytes(read_array(p))
}

/// The first N bytes; the caller checked the length (zeros if it did not).
fn read_array<const N: usize>(p: &[u8]) -> [u8; N] {
    let mut a = [0; N];
    if let Some(b) = p.get(..N) {
        a.copy_from_slice(b);
    }
    a
}

// === encoding ===

fn put_header(out: &mut Vec<u8>, len: usize, kind: FrameType, flags: u8, stream_id: u32) {
    FrameHeader { len: len as u32, kind, flags, stream_id }.encode(out);
}

/// A DATA frame; `data` must fit the peer's SETTINGS_MAX_FRAME_SIZE and the windows.
pub fn encode_data(out: &mut Vec<u8>, stream_id: u32, data: &[u8], end_stream: bool) {
    let f = if end_stream { flags::END_STREAM } else { 0 };
    put_header(out, data.len(), FrameType::Data, f, stream_id);
    out.extend_from_slice(data);
}

/// A field block (HPACK output) as a HEADERS frame followed by as many CONTINUATION
/// frames as `max_frame_size` (the peer's SETTINGS_MAX_FRAME_SIZE) requires.
/// END_STREAM goes on the HEADERS frame, END_HEADERS on the last one.
pub fn encode_headers(out: &mut Vec<u8>, stream_id: u32, block: &[u8], end_stream: bool, max_frame_size: u32) {
    let f = if end_stream { flags::END_STREAM } else { 0 };
    encode_field_block(out, FrameType::Headers, f, stream_id, &[], block, max_frame_size);
}

/// A PUSH_PROMISE frame reserving `promised_id`, continued like [`encode_headers`].
pub fn encode_push_promise(out: &mut Vec<u8>, stream_id: u32, promised_id: u32, block: &[u8], max_frame_size: u32) {
    let prefix = (promised_id & !RESERVED_BIT).to_be_bytes();
    encode_field_block(out, FrameType::PushPromise, 0, stream_id, &prefix, block, max_frame_size);
}

/// The first frame carries `prefix` (the promised id of PUSH_PROMISE) and as much of
/// the block as fits; CONTINUATION frames carry the rest.
fn encode_field_block(
    out: &mut Vec<u8>,
    kind: FrameType,
    first_flags: u8,
    stream_id: u32,
    prefix: &[u8],
    block: &[u8],
    max_frame_size: u32,
) {
    let max = (max_frame_size as usize).max(prefix.len() + 1);
    let (first, mut rest) = block.split_at(block.len().min(max - prefix.len()));
    let end = if rest.is_empty() { flags::END_HEADERS } else { 0 };
    put_header(out, prefix.len() + first.len(), kind, first_flags | end, stream_id);
    out.extend_from_slice(prefix);
    out.extend_from_slice(first);
    while !rest.is_empty() {
        let (chunk, tail) = rest.split_at(rest.len().min(max));
        let end = if tail.is_empty() { flags::END_HEADERS } else { 0 };
        put_header(out, chunk.len(), FrameType::Continuation, end, stream_id);
        out.extend_from_slice(chunk);
        rest = tail;
    }
}

/// A PRIORITY frame.
pub fn encode_priority(out: &mut Vec<u8>, stream_id: u32, priority: Priority) {
    put_header(out, 5, FrameType::Priority, 0, stream_id);
    priority.encode(out);
}

/// A RST_STREAM frame.
pub fn encode_rst_stream(out: &mut Vec<u8>, stream_id: u32, error: ErrorCode) {
    put_header(out, 4, FrameType::RstStream, 0, stream_id);
    out.extend_from_slice(&error.code().to_be_bytes());
}

/// A SETTINGS frame with these parameters, in this order (may be empty).
pub fn encode_settings(out: &mut Vec<u8>, params: &[Setting]) {
    put_header(out, params.len() * 6, FrameType::Settings, 0, 0);
    for s in params {
        out.extend_from_slice(&s.id.to_u16().to_be_bytes());
        out.extend_from_slice(&s.value.to_be_bytes());
    }
}

/// The acknowledgement of a peer's SETTINGS frame.
pub fn encode_settings_ack(out: &mut Vec<u8>) {
    put_header(out, 0, FrameType::Settings, flags::ACK, 0);
}

/// A PING frame.
pub fn encode_ping(out: &mut Vec<u8>, data: [u8; 8]) {
    put_header(out, 8, FrameType::Ping, 0, 0);
    out.extend_from_slice(&data);
}

/// The answer to a peer's PING: same data, ACK set.
pub fn encode_ping_ack(out: &mut Vec<u8>, data: [u8; 8]) {
    put_header(out, 8, FrameType::Ping, flags::ACK, 0);
    out.extend_from_slice(&data);
}

/// A GOAWAY frame; `debug` may be empty.
pub fn encode_goaway(out: &mut Vec<u8>, last_stream_id: u32, error: ErrorCode, debug: &[u8]) {
    put_header(out, 8 + debug.len(), FrameType::GoAway, 0, 0);
    out.extend_from_slice(&(last_stream_id & !RESERVED_BIT).to_be_bytes());
    out.extend_from_slice(&error.code().to_be_bytes());
    out.extend_from_slice(debug);
}

/// A WINDOW_UPDATE frame, for a stream or (stream id 0) the connection;
/// `increment` is 1..=2^31-1.
pub fn encode_window_update(out: &mut Vec<u8>, stream_id: u32, increment: u32) {
    debug_assert!(increment > 0 && increment <= MAX_WINDOW_SIZE, "window increment {increment}");
    put_header(out, 4, FrameType::WindowUpdate, 0, stream_id);
    out.extend_from_slice(&(increment & !RESERVED_BIT).to_be_bytes());
}
