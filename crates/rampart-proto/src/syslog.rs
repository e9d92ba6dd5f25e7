//! Syslog messages as a `log-forward` section receives them: the header of one message
//! read into its priority and metadata (RFC 5424 and RFC 3164, with HAProxy 2.6's
//! leniency and quirks), and the framing of a TCP stream of messages (RFC 6587: octet
//! counting and LF-terminated). Bytes in, structure out; nothing here panics on input.
//!
//! HAProxy counterpart: `parse_log_message()` and the framing part of
//! `syslog_io_handler()` (src/log.c).

/// Length of an RFC 3164 date (`Mmm dd hh:mm:ss`).
pub const LEGACY_TIME_LEN: usize = 15;
/// Shortest RFC 5424 date HAProxy takes for one when rebuilding a header.
pub const ISO_TIME_MIN_LEN: usize = 20;

const MONTHS: [&[u8; 3]; 12] =
    [b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec"];

/// The header fields of a message; an empty slice is an absent field (as the NILVALUE
/// `-` of RFC 5424, but for the timestamp, which keeps its `-`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Meta<'a> {
    pub time: &'a [u8],
    pub host: &'a [u8],
    pub tag: &'a [u8],
    pub pid: &'a [u8],
    pub msgid: &'a [u8],
    /// RFC 5424 structured data (`[id k="v"]...`).
    pub sd: &'a [u8],
}

/// One message read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'a> {
    /// `<PRI>` read as HAProxy reads it (`facility * 8 + level`, digits accumulated
    /// with wrap-around); `None` without one.
    pub pri: Option<u32>,
    pub meta: Meta<'a>,
    /// What follows the header.
    pub msg: &'a [u8],
}

impl Message<'_> {
    /// The level (0..=7) of the `<PRI>`.
    pub fn level(&self) -> Option<u8> {
        self.pri.map(|p| (p & 7) as u8)
    }

    /// The facility of the `<PRI>` (may exceed 23: HAProxy does not check it).
    pub fn facility(&self) -> Option<u32> {
        self.pri.map(|p| p >> 3)
    }
}

/// Reads `buf` as HAProxy 2.6 does. Without `<PRI>`, the whole buffer is the message
/// and nothing else is known. A header that does not follow the format the
/// version/date announce keeps only its priority; then the message starts after the
/// `<PRI>` (and, as HAProxy, an RFC 5424 one loses its last two bytes).
pub fn parse(buf: &[u8]) -> Message<'_> {
    let mut out = Message { pri: None, meta: Meta::default(), msg: buf };
    if buf.len() < 2 || buf[0] != b'<' {
        return out;
    }
    let Some(close) = buf.iter().position(|&c| c == b'>') else { return out };
    let digits = &buf[1..close];
    if !digits.iter().all(u8::is_ascii_digit) {
        return out;
    }
    let pri = digits.iter().fold(0u32, |acc, &d| acc.wrapping_mul(10).wrapping_add(u32::from(d - b'0')));
    out.pri = Some(pri);
    let rest = &buf[close + 1..];
    out.msg = rest;
    if rest.len() > 2 && rest.starts_with(b"1 ") {
        match rfc5424(&rest[2..]) {
            Some((meta, msg)) => (out.meta, out.msg) = (meta, msg),
            // COMPAT: HAProxy keeps the message after `<PRI>` but its length minus the
            // two bytes of `1 `: the message loses its last two bytes.
            None => out.msg = &rest[..rest.len() - 2],
        }
    } else if rest.len() > LEGACY_TIME_LEN {
        if let Some((meta, msg)) = rfc3164(rest) {
            (out.meta, out.msg) = (meta, msg);
        }
    }
    out
}

/// A field up to the next space, at `*p`: `None` when it starts with a space or no
/// space follows. Leaves `*p` on that space.
fn field<'a>(b: &'a [u8], p: &mut usize) -> Option<&'a [u8]> {
    if b.get(*p).is_none_or(|&c| c == b' ') {
        return None;
    }
    let start = *p;
    let len = b[start..].iter().position(|&c| c == b' ')?;
    *p = start + len;
    Some(&b[start..*p])
}

/// `-` is no value.
fn nil(f: &[u8]) -> &[u8] {
    if f == b"-" {
        b""
    } else {
        f
    }
}

/// `TIMESTAMP HOST APP PROCID MSGID SD MSG` (after `1 `); `None`: a bad header.
fn rfc5424(b: &[u8]) -> Option<(Meta<'_>, &[u8])> {
    let mut meta = Meta::default();
    let mut p;
    if b.len() > 2 && b.starts_with(b"- ") {
        meta.time = &b[..1];
        p = 1;
    } else if b.len() > ISO_TIME_MIN_LEN {
        // the date is not checked but for its fraction and zone, as HAProxy
        p = 19;
        if b[p] == b'.' {
            p += 1;
            loop {
                let c = *b.get(p)?;
                if matches!(c, b'Z' | b'+' | b'-') {
                    break;
                }
                if !c.is_ascii_digit() {
                    return None;
                }
                p += 1;
            }
            b.get(p)?;
        }
        p += if b[p] == b'Z' { 1 } else { 6 };
        if b.get(p) != Some(&b' ') {
            return None;
        }
        meta.time = &b[..p];
    } else {
        return None;
    }
    p += 1;
    meta.host = nil(field(b, &mut p)?);
    p += 1;
    meta.tag = nil(field(b, &mut p)?);
    p += 1;
    meta.pid = nil(field(b, &mut p)?);
    p += 1;
    meta.msgid = nil(field(b, &mut p)?);
    p += 1;
    let sd_start = p;
    match b.get(p) {
        Some(b'[') => {
            let mut in_elem = false;
            loop {
                let c = b[p];
                if in_elem {
                    // a `]` escaped in a value does not close the element
                    if c == b']' && b[p - 1] != b'\\' {
                        in_elem = false;
                    }
                } else if c == b'[' {
                    in_elem = true;
                } else if c == b' ' {
                    break;
                } else {
                    return None;
                }
                p += 1;
                if p >= b.len() {
                    return None;
                }
            }
        }
        Some(b'-') => {
            p += 1;
            if b.get(p) != Some(&b' ') {
                return None;
            }
        }
        _ => return None,
    }
    meta.sd = nil(&b[sd_start..p]);
    Some((meta, &b[p + 1..]))
}

/// `Mmm dd hh:mm:ss HOST [TAG[[PID]]: ]MSG`; `None`: a bad header (no month, no host).
/// A missing or odd tag is not an error: the message then starts after the host.
fn rfc3164(b: &[u8]) -> Option<(Meta<'_>, &[u8])> {
    if !MONTHS.iter().any(|m| b.starts_with(*m)) {
        return None;
    }
    let mut meta = Meta { time: &b[..LEGACY_TIME_LEN], ..Meta::default() };
    let mut p = LEGACY_TIME_LEN;
    if b.get(p) != Some(&b' ') {
        return None;
    }
    p += 1;
    meta.host = field(b, &mut p)?;
    let rest = &b[p + 1..];
    let stop = rest.iter().position(|&c| c == b' ' || c == b':');
    let Some(colon) = stop.filter(|&i| rest[i] == b':' && rest.get(i + 1) == Some(&b' ')) else {
        return Some((meta, rest));
    };
    // the tag, and the pid between its last `[` and a `]` right before the colon
    let (mut tag_len, mut pid_start) = (0, None);
    for (i, &c) in rest[..colon].iter().enumerate() {
        if c == b'[' {
            tag_len = i;
            pid_start = Some(i + 1);
        } else if let (b']', Some(s)) = (c, pid_start) {
            if rest[i + 1] != b':' {
                // COMPAT: as HAProxy, what was read of the tag stays (without pid)
                meta.tag = &rest[..tag_len];
                return Some((meta, rest));
            }
            meta.pid = &rest[s..i];
        }
    }
    meta.tag = &rest[..if tag_len == 0 { colon } else { tag_len }];
    Some((meta, &rest[colon + 2..]))
}

/// What the start of a TCP stream of messages holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame {
    /// A message at `buf[start..end]`; `consumed` bytes are done with.
    Message { start: usize, end: usize, consumed: usize },
    /// More bytes are needed.
    Incomplete,
    /// Not a syslog stream (or a message longer than allowed): the connection closes.
    Invalid,
}

/// Reads one message of a stream: `<...>` up to LF (a CR before it dropped), or
/// `<len> <msg>` (octet counting, the length starting with 1-9). A message longer
/// than `max` bytes is [`Frame::Invalid`], as one that does not fit HAProxy's buffer.
pub fn next_frame(buf: &[u8], max: usize) -> Frame {
    let Some(&first) = buf.first() else { return Frame::Incomplete };
    if first == b'<' {
        let Some(lf) = buf.iter().take(max).position(|&c| c == b'\n') else {
            return if buf.len() >= max { Frame::Invalid } else { Frame::Incomplete };
        };
        let end = if lf > 0 && buf[lf - 1] == b'\r' { lf - 1 } else { lf };
        return Frame::Message { start: 0, end, consumed: lf + 1 };
    }
    if !(b'1'..=b'9').contains(&first) {
        return Frame::Invalid;
    }
    let Some(sp) = buf.iter().take(max).position(|&c| c == b' ') else {
        let digits = buf.iter().take(max).all(u8::is_ascii_digit);
        return if digits && buf.len() < max { Frame::Incomplete } else { Frame::Invalid };
    };
    let len_text = &buf[..sp];
    if !len_text.iter().all(u8::is_ascii_digit) || len_text.len() > 10 {
        return Frame::Invalid;
    }
    let len = len_text.iter().fold(0usize, |acc, &d| acc * 10 + usize::from(d - b'0'));
    if len > max {
        return Frame::Invalid;
    }
    let start = sp + 1;
    if buf.len() < start + len {
        return Frame::Incomplete;
    }
    Frame::Message { start, end: start + len, consumed: start + len }
}

#[cfg(test)]
#[path = "syslog_tests.rs"]
mod tests;
