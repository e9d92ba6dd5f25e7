//! SPOP 2.0, the Stream Processing Offload Protocol between HAProxy and an agent
//! (HAProxy's doc/SPOE.txt §3): frames, typed data, the HELLO handshake, NOTIFY
//! messages, ACK actions and DISCONNECT. I/O-free: bytes in, structure out; a
//! frame not fully received is "incomplete", not an error.
//! HAProxy counterpart: the frame builders and readers of src/flt_spoe.c.
//!
//! - `data`: variable-length integers, typed data, key-value lists
//! - `frame`: HELLO, DISCONNECT, NOTIFY and ACK payloads
//! - `frag`: a NOTIFY cut into fragments

pub mod data;
pub mod frag;
pub mod frame;
#[cfg(test)]
mod tests;

pub use data::{Data, Reader};
pub use frame::{Action, AgentHello, Disconnect, HaproxyHello, NotifyWriter, VarScope};

/// Frame types (SPOE.txt §3.2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameType {
    /// A fragment after the first of a fragmented frame (HAProxy's `SPOE_FRM_T_UNSET`).
    Unset,
    HaproxyHello,
    HaproxyDisconnect,
    Notify,
    AgentHello,
    AgentDisconnect,
    Ack,
}

impl FrameType {
    pub fn code(self) -> u8 {
        match self {
            FrameType::Unset => 0,
            FrameType::HaproxyHello => 1,
            FrameType::HaproxyDisconnect => 2,
            FrameType::Notify => 3,
            FrameType::AgentHello => 101,
            FrameType::AgentDisconnect => 102,
            FrameType::Ack => 103,
        }
    }

    pub fn from_code(c: u8) -> Option<FrameType> {
        Some(match c {
            0 => FrameType::Unset,
            1 => FrameType::HaproxyHello,
            2 => FrameType::HaproxyDisconnect,
            3 => FrameType::Notify,
            101 => FrameType::AgentHello,
            102 => FrameType::AgentDisconnect,
            103 => FrameType::Ack,
            _ => return None,
        })
    }
}

/// Frame flag: the last fragment of a frame (every unfragmented frame has it).
pub const FLAG_FIN: u32 = 1;
/// Frame flag: the fragmented frame is abandoned.
pub const FLAG_ABORT: u32 = 2;

/// The largest frame HAProxy sends or accepts by default (`tune.bufsize` minus the
/// 4-byte length), and the smallest either side may announce.
pub const MAX_FRAME_SIZE: u32 = 16380;
pub const MIN_FRAME_SIZE: u32 = 256;

/// SPOP status codes (SPOE.txt §3.2.6), as DISCONNECT frames carry them.
pub mod status {
    pub const NONE: u32 = 0;
    pub const IO: u32 = 1;
    pub const TIMEOUT: u32 = 2;
    pub const TOO_BIG: u32 = 3;
    pub const INVALID: u32 = 4;
    pub const NO_VSN: u32 = 5;
    pub const NO_FRAME_SIZE: u32 = 6;
    pub const NO_CAP: u32 = 7;
    pub const BAD_VSN: u32 = 8;
    pub const BAD_FRAME_SIZE: u32 = 9;
    pub const FRAG_NOT_SUPPORTED: u32 = 10;
    pub const INTERLACED_FRAMES: u32 = 11;
    pub const FRAMEID_NOTFOUND: u32 = 12;
    pub const RES: u32 = 13;
    pub const UNKNOWN: u32 = 99;
}

/// The reason of status `code` (HAProxy's `spoe_frm_err_reasons`).
pub fn status_reason(code: u32) -> &'static str {
    match code {
        status::NONE => "normal",
        status::IO => "I/O error",
        status::TIMEOUT => "a timeout occurred",
        status::TOO_BIG => "frame is too big",
        status::INVALID => "invalid frame received",
        status::NO_VSN => "version value not found",
        status::NO_FRAME_SIZE => "max-frame-size value not found",
        status::NO_CAP => "capabilities value not found",
        status::BAD_VSN => "unsupported version",
        status::BAD_FRAME_SIZE => "max-frame-size too big or too small",
        status::FRAG_NOT_SUPPORTED => "fragmentation not supported",
        status::INTERLACED_FRAMES => "invalid interlaced frames",
        status::FRAMEID_NOTFOUND => "frame-id not found",
        status::RES => "resource allocation error",
        _ => "an unknown error occurred",
    }
}

/// Why bytes are not a valid frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// An item runs past the end of its frame.
    Truncated,
    /// The frame is larger than the size agreed on.
    TooBig,
    /// A malformed item (the reason).
    Invalid(&'static str),
}

impl Error {
    /// The SPOP status code a DISCONNECT reports for it.
    pub fn status(self) -> u32 {
        match self {
            Error::TooBig => status::TOO_BIG,
            Error::Truncated | Error::Invalid(_) => status::INVALID,
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Truncated => f.write_str("truncated frame"),
            Error::TooBig => f.write_str("frame is too big"),
            Error::Invalid(why) => write!(f, "invalid frame: {why}"),
        }
    }
}

impl std::error::Error for Error {}

/// One frame as read: its header and its payload (pointing into the input).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    pub ty: FrameType,
    pub flags: u32,
    pub stream_id: u64,
    pub frame_id: u64,
    pub payload: &'a [u8],
}

impl Frame<'_> {
    /// Whether this is the last (or only) fragment.
    pub fn is_fin(&self) -> bool {
        self.flags & FLAG_FIN != 0
    }
}

/// Reads the frame at the start of `buf`: the frame and the bytes it used, `None` while
/// it is incomplete. A frame larger than `max` bytes (without its 4-byte length) is
/// refused before it is all there.
pub fn next_frame(buf: &[u8], max: u32) -> Result<Option<(Frame<'_>, usize)>, Error> {
    let Some(len) = buf.get(..4) else { return Ok(None) };
    let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]);
    if len > max {
        return Err(Error::TooBig);
    }
    let end = 4 + len as usize;
    let Some(body) = buf.get(4..end) else { return Ok(None) };
    let mut r = Reader::new(body);
    let code = r.byte()?;
    let ty = FrameType::from_code(code).ok_or(Error::Invalid("unknown frame type"))?;
    let f = r.take(4)?;
    let flags = u32::from_be_bytes([f[0], f[1], f[2], f[3]]);
    let stream_id = r.varint()?;
    let frame_id = r.varint()?;
    Ok(Some((Frame { ty, flags, stream_id, frame_id, payload: r.rest() }, end)))
}

/// Starts a frame in `out`: its length (patched by [`end_frame`]) and header. Returns
/// where the frame starts.
pub fn begin_frame(out: &mut Vec<u8>, ty: FrameType, flags: u32, stream_id: u64, frame_id: u64) -> usize {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    out.push(ty.code());
    out.extend_from_slice(&flags.to_be_bytes());
    data::put_varint(out, stream_id);
    data::put_varint(out, frame_id);
    at
}

/// Ends the frame begun at `at`: writes its length. `Err` when it is larger than `max`.
pub fn end_frame(out: &mut [u8], at: usize, max: u32) -> Result<(), Error> {
    let len = out.len() - at - 4;
    if len > max as usize {
        return Err(Error::TooBig);
    }
    out[at..at + 4].copy_from_slice(&(len as u32).to_be_bytes());
    Ok(())
}
