//! The peers protocol (v2.1, as HAProxy 2.6 speaks it) that replicates stick tables
//! between nodes: the text handshake, then binary messages, each a class byte and a
//! type byte, followed for stick-table messages (type >= 128) by an encoded length and
//! a body. HAProxy counterpart: src/peers.c (`peer_prepare_*msg()`, `peer_recv_msg()`,
//! `peer_treat_*msg()`), doc/peers-v2.0.txt.
//!
//! Input is untrusted: every length is checked against the buffer and against the
//! message limit, anything else is a [`MsgError`], never a panic. The table a message
//! names and what an update means for it are the caller's business (`rampart::peers`).
//!
//! - `varint`: encoded integers
//! - `table`: table definitions and updates (keys, data values by wire type)

pub mod table;
#[cfg(test)]
mod tests;
pub mod varint;

pub use table::{Define, KeyKind, Update, Value, WireType};

/// The protocol name of the hello line.
pub const PROTO_NAME: &str = "HAProxyS";
/// The version announced (`2.1`: updates may carry their expiry).
pub const MAJOR: u32 = 2;
pub const MINOR: u32 = 1;
/// The longest handshake line read.
pub const MAX_LINE: usize = 1024;
/// The largest message body accepted (HAProxy's `trash.size`, `tune.bufsize`): a longer
/// one is answered with a size-limit error.
pub const MAX_BODY: usize = 16384;

/// Handshake status codes (the reply to a hello).
pub mod status {
    pub const SUCCESS: u16 = 200;
    pub const TRY_AGAIN: u16 = 300;
    pub const ERR_PROTO: u16 = 501;
    pub const ERR_VERSION: u16 = 502;
    pub const ERR_HOST: u16 = 503;
    pub const ERR_PEER: u16 = 504;
}

/// The hello a connecting peer sends: `HAProxyS 2.1`, the name it gives the peer it
/// connects to, then its own name, pid and relative pid.
pub fn hello(remote: &str, local: &str, pid: u32) -> String {
    format!("{PROTO_NAME} {MAJOR}.{MINOR}\n{remote}\n{local} {pid} 1\n")
}

/// A status line (`200\n`).
pub fn status_line(code: u16) -> String {
    format!("{code}\n")
}

/// The first line ending in `buf` (without its `\n` nor a `\r` before it) and the bytes
/// it took. `Ok(None)`: not complete yet; `Err`: longer than [`MAX_LINE`].
pub fn take_line(buf: &[u8]) -> Result<Option<(&[u8], usize)>, MsgError> {
    match memchr::memchr(b'\n', buf) {
        Some(n) if n < MAX_LINE => {
            let line = &buf[..n];
            Ok(Some((line.strip_suffix(b"\r").unwrap_or(line), n + 1)))
        }
        Some(_) => Err(MsgError::TooBig),
        None if buf.len() >= MAX_LINE => Err(MsgError::TooBig),
        None => Ok(None),
    }
}

/// Checks a hello's first line (`HAProxyS <major>.<minor>`): the minor version it
/// announces, else the status to answer (501 for another protocol, 502 for a version
/// this side does not speak).
pub fn check_version(line: &[u8]) -> Result<u32, u16> {
    let rest = line.strip_prefix(PROTO_NAME.as_bytes()).and_then(|r| r.strip_prefix(b" "));
    let Some(rest) = rest else { return Err(status::ERR_PROTO) };
    let text = std::str::from_utf8(rest).map_err(|_| status::ERR_VERSION)?;
    let (maj, min) = text.split_once('.').ok_or(status::ERR_VERSION)?;
    let num =
        |s: &str| (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse::<u32>().ok()).flatten();
    match (num(maj), num(min)) {
        (Some(MAJOR), Some(m)) if m <= MINOR => Ok(m),
        _ => Err(status::ERR_VERSION),
    }
}

/// The peer name of a hello's last line (`<name> <pid> <relative pid>`); `Err(501)`
/// without a space.
pub fn peer_name(line: &[u8]) -> Result<&[u8], u16> {
    let n = memchr::memchr(b' ', line).ok_or(status::ERR_PROTO)?;
    Ok(&line[..n])
}

/// The code of a status line (`atoi()`: leading digits, 0 without).
pub fn parse_status(line: &[u8]) -> u16 {
    let digits = line.iter().take_while(|b| b.is_ascii_digit()).take(5);
    digits.fold(0u32, |v, b| v * 10 + u32::from(b - b'0')).min(u32::from(u16::MAX)) as u16
}

/// Message classes.
pub mod class {
    pub const CONTROL: u8 = 0;
    pub const ERROR: u8 = 1;
    pub const STICK_TABLE: u8 = 10;
    pub const RESERVED: u8 = 255;
}

/// Control messages (class 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// The sender wants every entry this side knows.
    ResyncRequest,
    /// Everything was taught, and the sender was up to date.
    ResyncFinished,
    /// Everything was taught, but the sender was not up to date itself.
    ResyncPartial,
    /// Acknowledges a finished or partial resync.
    ResyncConfirm,
    Heartbeat,
}

impl Control {
    pub fn code(self) -> u8 {
        match self {
            Control::ResyncRequest => 0,
            Control::ResyncFinished => 1,
            Control::ResyncPartial => 2,
            Control::ResyncConfirm => 3,
            Control::Heartbeat => 4,
        }
    }

    fn from_code(c: u8) -> Option<Control> {
        Some(match c {
            0 => Control::ResyncRequest,
            1 => Control::ResyncFinished,
            2 => Control::ResyncPartial,
            3 => Control::ResyncConfirm,
            4 => Control::Heartbeat,
            _ => return None,
        })
    }
}

/// Error messages (class 1): the sender closes after it.
pub mod error {
    pub const PROTOCOL: u8 = 0;
    pub const SIZE_LIMIT: u8 = 1;
}

/// Stick-table message types (class 10); those with the high bit carry a body.
pub mod stkt {
    pub const UPDATE: u8 = 0x80;
    pub const INC_UPDATE: u8 = 0x81;
    pub const DEFINE: u8 = 0x82;
    pub const SWITCH: u8 = 0x83;
    pub const ACK: u8 = 0x84;
    pub const UPDATE_TIMED: u8 = 0x85;
    pub const INC_UPDATE_TIMED: u8 = 0x86;
}

/// One message, borrowed from the receive buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message<'a> {
    Control(Control),
    /// An error message (`error::PROTOCOL`, `error::SIZE_LIMIT`, or another code).
    Error(u8),
    /// A table definition: later updates are for this table.
    Define(&'a [u8]),
    /// Later updates are for the table the sender defined with this id.
    Switch(u64),
    /// An update (`with_id`: it carries its update id; `timed`: its expiry).
    Update {
        with_id: bool,
        timed: bool,
        body: &'a [u8],
    },
    /// The receiver applied the updates of table `table` (the sender's id) up to `update`.
    Ack {
        table: u64,
        update: u32,
    },
    /// A message of a known class this side has no use for (ignored, as HAProxy does).
    Ignored,
}

/// Why a stream of messages cannot be read further.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MsgError {
    /// Not the protocol (a malformed body, a reserved class, a line too long): answered
    /// with a protocol error, then the connection closes.
    Malformed,
    /// A body longer than the limit: answered with a size-limit error.
    TooBig,
}

/// The next message of `buf` and the bytes it takes; `Ok(None)` until it is complete.
/// Bodies longer than `max_body` are refused ([`MsgError::TooBig`]).
pub fn next_message(buf: &[u8], max_body: usize) -> Result<Option<(Message<'_>, usize)>, MsgError> {
    let [cls, typ, rest @ ..] = buf else { return Ok(None) };
    if typ & 0x80 == 0 {
        let msg = match *cls {
            class::CONTROL => Control::from_code(*typ).map_or(Message::Ignored, Message::Control),
            class::ERROR => Message::Error(*typ),
            class::RESERVED => return Err(MsgError::Malformed),
            _ => Message::Ignored,
        };
        return Ok(Some((msg, 2)));
    }
    let Some((len, n)) = varint::decode(rest) else {
        // COMPAT: a length is at most 5 bytes (HAProxy reads 5 after the head)
        return if rest.len() >= 5 { Err(MsgError::Malformed) } else { Ok(None) };
    };
    if n > 5 {
        return Err(MsgError::Malformed);
    }
    let len = usize::try_from(len).map_err(|_| MsgError::TooBig)?;
    if len > max_body {
        return Err(MsgError::TooBig);
    }
    let Some(body) = rest.get(n..n + len) else { return Ok(None) };
    let total = 2 + n + len;
    let msg = match (*cls, *typ) {
        (class::STICK_TABLE, stkt::DEFINE) => Message::Define(body),
        (class::STICK_TABLE, stkt::SWITCH) => {
            Message::Switch(varint::Reader::new(body).int().ok_or(MsgError::Malformed)?)
        }
        (class::STICK_TABLE, stkt::ACK) => {
            let mut r = varint::Reader::new(body);
            let table = r.int().ok_or(MsgError::Malformed)?;
            Message::Ack { table, update: r.u32().ok_or(MsgError::Malformed)? }
        }
        (class::STICK_TABLE, t @ (stkt::UPDATE | stkt::INC_UPDATE | stkt::UPDATE_TIMED | stkt::INC_UPDATE_TIMED)) => {
            Message::Update {
                with_id: matches!(t, stkt::UPDATE | stkt::UPDATE_TIMED),
                timed: matches!(t, stkt::UPDATE_TIMED | stkt::INC_UPDATE_TIMED),
                body,
            }
        }
        (class::RESERVED, _) => return Err(MsgError::Malformed),
        _ => Message::Ignored,
    };
    Ok(Some((msg, total)))
}

/// Appends a control message.
pub fn encode_control(c: Control, out: &mut Vec<u8>) {
    out.extend_from_slice(&[class::CONTROL, c.code()]);
}

/// Appends an error message.
pub fn encode_error(code: u8, out: &mut Vec<u8>) {
    out.extend_from_slice(&[class::ERROR, code]);
}

/// Appends a stick-table message of type `typ` whose body `body` writes.
pub fn encode_stkt(typ: u8, out: &mut Vec<u8>, body: impl FnOnce(&mut Vec<u8>)) {
    let mut b = Vec::with_capacity(64);
    body(&mut b);
    out.extend_from_slice(&[class::STICK_TABLE, typ]);
    varint::encode(b.len() as u64, out);
    out.extend_from_slice(&b);
}

/// Appends a table switch.
pub fn encode_switch(table: u64, out: &mut Vec<u8>) {
    encode_stkt(stkt::SWITCH, out, |b| varint::encode(table, b));
}

/// Appends an update acknowledgement (`table`: the id the receiver of the ack gave it).
pub fn encode_ack(table: u64, update: u32, out: &mut Vec<u8>) {
    encode_stkt(stkt::ACK, out, |b| {
        varint::encode(table, b);
        b.extend_from_slice(&update.to_be_bytes());
    });
}
