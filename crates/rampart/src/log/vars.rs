//! The log-format variables only a log line answers: dates, timers, sizes, the
//! termination state, counters of the line and the queues, and the request line as it
//! was received. They read the stream's [`StreamLog`] (`ctx.log`); outside a log line
//! (rules) they are refused when the format compiles.
//! HAProxy counterpart: the `LOG_FMT_*` cases of `sess_build_logline()` (src/log.c).

use std::io::Write as _;
use std::net::SocketAddr;

use super::date;
use super::StreamLog;
use crate::sample::SampleCtx;

/// A variable read from the stream's log record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogVar {
    /// `%t`: accept date, local, with milliseconds.
    AcceptDate,
    /// `%T`: accept date, GMT, with zone.
    AcceptGmt,
    /// `%Tl`: accept date, local, with zone.
    AcceptLocal,
    /// `%Ts`: accept date, seconds since the epoch.
    AcceptTs,
    /// `%ms`: milliseconds of the accept date.
    AcceptMs,
    /// `%tr`, `%trg`, `%trl`: request date (local with ms; GMT; local with zone).
    ReqDate,
    ReqGmt,
    ReqLocal,
    Th,
    Ti,
    TR,
    Tq,
    Tw,
    Tc,
    Tr,
    Td,
    Ta,
    Tt,
    Tu,
    /// `%B`, `%U`.
    BytesOut,
    BytesIn,
    /// `%CC`, `%CS`: the cookies `capture cookie` found in the request and the response.
    CliCookie,
    SrvCookie,
    /// `%ts`, `%tsc`.
    Term,
    TermCookie,
    /// `%rc`, `%sq`, `%bq`, `%lc`.
    Retries,
    SrvQueue,
    BeQueue,
    LogCount,
    /// `%bi`, `%bp`: the server connection's source address.
    BackIp,
    BackPort,
}

/// `%` name to variable, for the names only a log line answers.
pub fn by_name(name: &str) -> Option<LogVar> {
    Some(match name {
        "t" => LogVar::AcceptDate,
        "T" => LogVar::AcceptGmt,
        "Tl" => LogVar::AcceptLocal,
        "Ts" => LogVar::AcceptTs,
        "ms" => LogVar::AcceptMs,
        "tr" => LogVar::ReqDate,
        "trg" => LogVar::ReqGmt,
        "trl" => LogVar::ReqLocal,
        "Th" => LogVar::Th,
        "Ti" => LogVar::Ti,
        "TR" => LogVar::TR,
        "Tq" => LogVar::Tq,
        "Tw" => LogVar::Tw,
        "Tc" => LogVar::Tc,
        "Tr" => LogVar::Tr,
        "Td" => LogVar::Td,
        "Ta" => LogVar::Ta,
        "Tt" => LogVar::Tt,
        "Tu" => LogVar::Tu,
        "B" => LogVar::BytesOut,
        "U" => LogVar::BytesIn,
        "CC" => LogVar::CliCookie,
        "CS" => LogVar::SrvCookie,
        "ts" => LogVar::Term,
        "tsc" => LogVar::TermCookie,
        "rc" => LogVar::Retries,
        "sq" => LogVar::SrvQueue,
        "bq" => LogVar::BeQueue,
        "lc" => LogVar::LogCount,
        "bi" => LogVar::BackIp,
        "bp" => LogVar::BackPort,
        _ => return None,
    })
}

fn num(out: &mut Vec<u8>, n: i64, hex: bool) {
    if hex {
        let _ = write!(out, "{n:04X}");
    } else {
        super::format::decimal(out, n);
    }
}

/// Renders `v` from `ctx.log`; `-` when there is no log record (`hex`: `+X`; `quote`:
/// `+Q`, which only the absent cookies honour, as in HAProxy).
pub fn render(v: LogVar, hex: bool, quote: bool, ctx: &SampleCtx<'_>, out: &mut Vec<u8>) {
    let Some(l) = ctx.log else {
        out.push(b'-');
        return;
    };
    // `option logasap`: HAProxy marks the totals of every line of the frontend, sent
    // early or not
    let asap = || ctx.rt.logasap(ctx.fe);
    if matches!(v, LogVar::Ta | LogVar::Tt | LogVar::Tu | LogVar::BytesOut) && (l.asap || asap()) {
        out.push(b'+');
    }
    // (split only for the variables that write a date: it is not free)
    let acc = || date::split(l.accept_date);
    let req = || date::split(l.req_date);
    match v {
        LogVar::AcceptDate => {
            let (s, us) = acc();
            date::clf(out, s, true, Some(us / 1000), false)
        }
        LogVar::AcceptGmt => date::clf(out, acc().0, false, None, true),
        LogVar::AcceptLocal => date::clf(out, acc().0, true, None, true),
        LogVar::AcceptTs => {
            let s = acc().0;
            let _ = if hex { write!(out, "{s:08X}") } else { write!(out, "{s}") };
        }
        LogVar::AcceptMs => {
            let ms = acc().1 / 1000;
            let _ = if hex { write!(out, "{ms:02X}") } else { write!(out, "{ms:03}") };
        }
        LogVar::ReqDate => {
            let (s, us) = req();
            date::clf(out, s, true, Some(us / 1000), false)
        }
        LogVar::ReqGmt => date::clf(out, req().0, false, None, true),
        LogVar::ReqLocal => date::clf(out, req().0, true, None, true),
        LogVar::Th => num(out, l.th(), hex),
        LogVar::Ti => num(out, l.ti(), hex),
        LogVar::TR => num(out, l.t_req(), hex),
        LogVar::Tq => num(out, l.tq(), hex),
        LogVar::Tw => num(out, l.tw(), hex),
        LogVar::Tc => num(out, l.tc(), hex),
        LogVar::Tr => num(out, l.tr(), hex),
        LogVar::Td => num(out, l.td(), hex),
        LogVar::Ta => num(out, l.ta(), hex),
        LogVar::Tt => num(out, l.tt(), hex),
        LogVar::Tu => num(out, l.tu(), hex),
        LogVar::BytesOut => num(out, l.bytes_out as i64, hex),
        LogVar::BytesIn => num(out, l.bytes_in as i64, hex),
        LogVar::CliCookie | LogVar::SrvCookie => {
            let c = if v == LogVar::CliCookie { &l.cookie.cli } else { &l.cookie.srv };
            match (quote, c.is_empty()) {
                (true, _) => {
                    out.push(b'"');
                    out.extend_from_slice(c);
                    out.push(b'"');
                }
                (false, true) => out.push(b'-'),
                (false, false) => out.extend_from_slice(c),
            }
        }
        LogVar::Term => out.extend_from_slice(&l.term()),
        LogVar::TermCookie => {
            out.extend_from_slice(&l.term());
            // HAProxy reports the persistence states only for a backend with a cookie
            // mode or `indirect` (`PR_CK_ANY`)
            let be = ctx.rt.cookie(ctx.be_or_fe());
            if be.is_some_and(|c| c.any()) {
                out.extend_from_slice(&[l.cookie.req.code(), l.cookie.res.code()]);
            } else {
                out.extend_from_slice(b"--");
            }
        }
        LogVar::Retries => num(out, i64::from(l.retries), hex),
        LogVar::SrvQueue => num(out, l.srv_queue.into(), hex),
        LogVar::BeQueue => num(out, l.be_queue.into(), hex),
        LogVar::LogCount => {
            let n = ctx.rt.log_count(ctx.fe);
            num(out, n as i64, hex)
        }
        LogVar::BackIp | LogVar::BackPort => back_addr(v, l, out),
    }
}

fn back_addr(v: LogVar, l: &StreamLog, out: &mut Vec<u8>) {
    match (l.back_src, v) {
        (Some(a), LogVar::BackIp) => {
            let _ = write!(out, "{}", a.ip());
        }
        (Some(a), _) => {
            let _ = write!(out, "{}", a.port());
        }
        (None, _) => out.push(b'-'),
    }
}

/// The parts of a received request line `<method> <uri> <version>`.
pub struct ReqLine<'a> {
    pub method: &'a [u8],
    pub uri: &'a [u8],
    pub version: &'a [u8],
}

/// Splits a captured request line; `None` when none was captured.
pub fn req_line(l: &StreamLog) -> Option<ReqLine<'_>> {
    if l.req_line.is_empty() {
        return None;
    }
    let mut it = l.req_line.splitn(3, |&c| c == b' ');
    let method = it.next().unwrap_or_default();
    let uri = it.next().unwrap_or_default();
    let version = it.next().unwrap_or_default();
    Some(ReqLine { method, uri, version })
}

/// The path of an absolute or origin-form URI, without its query.
pub fn path_only(uri: &[u8]) -> &[u8] {
    let no_query = uri.split(|&c| c == b'?').next().unwrap_or_default();
    match memchr::memmem::find(no_query, b"://") {
        Some(i) => {
            let rest = &no_query[i + 3..];
            memchr::memchr(b'/', rest).map_or(&b"/"[..], |p| &rest[p..])
        }
        None => no_query,
    }
}

/// Keeps the source address of the server connection (`%bi`, `%bp`).
pub fn set_back_src(l: &mut StreamLog, a: Option<SocketAddr>) {
    l.back_src = a;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_line_parts() {
        let mut l = StreamLog::default();
        assert!(req_line(&l).is_none());
        l.req_line.extend_from_slice(b"GET http://h/p/a?x=1 HTTP/1.1");
        let r = req_line(&l).unwrap();
        assert_eq!((r.method, r.uri, r.version), (&b"GET"[..], &b"http://h/p/a?x=1"[..], &b"HTTP/1.1"[..]));
        assert_eq!(path_only(r.uri), b"/p/a");
        assert_eq!(path_only(b"/a/b?c"), b"/a/b");
        assert_eq!(path_only(b"http://h"), b"/");
    }

    #[test]
    fn every_log_only_name_is_known() {
        for n in [
            "t", "T", "Tl", "Ts", "ms", "tr", "trg", "trl", "Th", "Ti", "TR", "Tq", "Tw", "Tc", "Tr", "Td", "Ta", "Tt",
            "Tu", "B", "U", "CC", "CS", "ts", "tsc", "rc", "sq", "bq", "lc", "bi", "bp",
        ] {
            assert!(by_name(n).is_some(), "{n}");
        }
        assert!(by_name("ci").is_none());
    }
}
