//! The line a forwarded message becomes for one target: the target's header format
//! rebuilt from the message's own metadata (priority, date, host, tag, pid, msgid,
//! structured data), so that the original tag and pid survive the relay, then the
//! message. A target without `format` picks one from what the message carries, as
//! HAProxy does. Pure: no socket, no clock but the `now` given.
//! HAProxy counterpart: `build_log_header()` with metadata and `__do_send_log()`
//! (src/log.c).

use std::io::Write as _;
use std::time::SystemTime;

use rampart_proto::syslog::{Meta, ISO_TIME_MIN_LEN, LEGACY_TIME_LEN};

use crate::log::date;
use crate::log::target::{HdrFormat, Target};

const MONTHS: [&[u8; 3]; 12] =
    [b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec"];

/// The header format for a message: the target's `format`, or without one, rfc5424
/// for a message with a host and an RFC 5424 date, rfc3164 for one with a host, `local`
/// for one with a tag, `priority` for one with a priority, else nothing.
fn format_for(t: &Target, meta: &Meta<'_>, has_pri: bool) -> HdrFormat {
    if t.explicit {
        return t.format;
    }
    if !meta.host.is_empty() {
        if meta.time == b"-" || meta.time.len() >= ISO_TIME_MIN_LEN {
            HdrFormat::Rfc5424
        } else {
            HdrFormat::Rfc3164
        }
    } else if !meta.tag.is_empty() {
        HdrFormat::Local
    } else if has_pri {
        HdrFormat::Priority
    } else {
        HdrFormat::Raw
    }
}

/// `<PRI>` as HAProxy writes it: at most three digits (the last ones) of a large value.
fn pri(out: &mut Vec<u8>, value: u32) {
    if value >= 1000 {
        let _ = write!(out, "<{:03}>", value % 1000);
    } else {
        let _ = write!(out, "<{value}>");
    }
}

/// `Mmm dd hh:mm:ss ` from the message's date (RFC 3164 as is, RFC 5424 converted),
/// else the local time now.
fn legacy_time(out: &mut Vec<u8>, time: &[u8], now: i64) {
    if time.len() == LEGACY_TIME_LEN {
        out.extend_from_slice(time);
        out.push(b' ');
        return;
    }
    if time.len() >= ISO_TIME_MIN_LEN {
        let digit = |i: usize| i32::from(time[i]) - i32::from(b'0');
        let mut month = 10 * digit(5) + digit(6);
        if month != 0 {
            month -= 1;
        }
        if let Some(name) = usize::try_from(month).ok().and_then(|m| MONTHS.get(m)) {
            out.extend_from_slice(*name);
            out.push(b' ');
            out.push(if time[8] != b'0' { time[8] } else { b' ' });
            out.push(time[9]);
            out.push(b' ');
            out.extend_from_slice(&time[11..19]);
            out.push(b' ');
            return;
        }
    }
    date::syslog(out, now);
    out.push(b' ');
}

/// `yyyy-mm-ddThh:mm:ss...` from the message's date (RFC 5424 as is, RFC 3164 in the
/// current year, or the one before when its month is still to come, zone `-00:00`),
/// else the local time now.
fn iso_time(out: &mut Vec<u8>, time: &[u8], now: (i64, u32)) {
    if time.len() >= ISO_TIME_MIN_LEN {
        out.extend_from_slice(time);
        out.push(b' ');
        return;
    }
    if time.len() == LEGACY_TIME_LEN {
        if let Some(m) = MONTHS.iter().position(|m| time.starts_with(*m)) {
            let local = date::at(now.0, true);
            let mut year = i32::from(local.year);
            if usize::try_from(local.month - 1).unwrap_or(0) < m {
                year -= 1;
            }
            let day = if time[4] != b' ' { time[4] } else { b'0' };
            let _ = write!(out, "{year:4}-{:02}-", m + 1);
            out.extend_from_slice(&[day, time[5], b'T']);
            out.extend_from_slice(&time[7..15]);
            out.extend_from_slice(b"-00:00 ");
            return;
        }
    }
    date::iso(out, now.0, now.1);
    out.push(b' ');
}

/// A field of an RFC 5424 header and its space; `-` when absent.
fn field(out: &mut Vec<u8>, f: &[u8]) {
    out.extend_from_slice(if f.is_empty() { b"-" } else { f });
    out.push(b' ');
}

/// A received message as one target relays it.
#[derive(Debug, Clone, Copy)]
pub struct Relayed<'a> {
    /// The message's facility, else the target's.
    pub facility: u32,
    /// The message's level (else emerg), raised to the target's `minlevel`.
    pub level: u8,
    /// Whether the message had a `<PRI>`.
    pub has_pri: bool,
    pub meta: &'a Meta<'a>,
    pub msg: &'a [u8],
}

/// Writes the header of target `t` for message `r`.
pub fn write(out: &mut Vec<u8>, t: &Target, r: &Relayed<'_>, now: SystemTime) {
    let Relayed { facility, level, has_pri, meta, .. } = *r;
    let (secs, usec) = date::split(now);
    let format = format_for(t, meta, has_pri);
    let full = facility.wrapping_shl(3).wrapping_add(u32::from(level));
    match format {
        HdrFormat::Rfc3164 | HdrFormat::Local => {
            pri(out, full);
            legacy_time(out, meta.time, secs);
            if format == HdrFormat::Rfc3164 {
                out.extend_from_slice(if meta.host.is_empty() { b"localhost" } else { meta.host });
                out.push(b' ');
            }
            if !meta.tag.is_empty() {
                out.extend_from_slice(meta.tag);
                if !meta.pid.is_empty() {
                    out.push(b'[');
                    out.extend_from_slice(meta.pid);
                    out.push(b']');
                }
                out.extend_from_slice(b": ");
            }
        }
        HdrFormat::Rfc5424 => {
            pri(out, full);
            out.extend_from_slice(b"1 ");
            if meta.time == b"-" {
                out.extend_from_slice(b"- ");
            } else {
                iso_time(out, meta.time, (secs, usec));
            }
            for f in [meta.host, meta.tag, meta.pid, meta.msgid, meta.sd] {
                field(out, f);
            }
        }
        HdrFormat::Priority => pri(out, full),
        HdrFormat::Short => pri(out, level.into()),
        HdrFormat::Timed => {
            pri(out, level.into());
            iso_time(out, meta.time, (secs, usec));
        }
        HdrFormat::Iso => iso_time(out, meta.time, (secs, usec)),
        HdrFormat::Raw => {}
    }
}

/// Appends the whole line: the header, the message without its trailing LFs and NULs,
/// both cut to the target's `len`, then a LF (so a line takes at most `len + 1` bytes,
/// as HAProxy's).
pub fn line(out: &mut Vec<u8>, t: &Target, r: &Relayed<'_>, now: SystemTime) {
    let start = out.len();
    write(out, t, r, now);
    out.truncate(start + t.maxlen.min(out.len() - start));
    let msg = trim_end(r.msg);
    let room = t.maxlen - (out.len() - start);
    out.extend_from_slice(&msg[..msg.len().min(room)]);
    out.push(b'\n');
}

/// A message without its trailing LFs and NULs (HAProxy drops them before sending).
pub fn trim_end(msg: &[u8]) -> &[u8] {
    let end = msg.iter().rposition(|&c| c != b'\n' && c != 0).map_or(0, |p| p + 1);
    &msg[..end]
}

#[cfg(test)]
#[path = "header_tests.rs"]
mod tests;
