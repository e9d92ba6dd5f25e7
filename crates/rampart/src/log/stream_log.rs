//! What a stream measures for its log line, and the line itself: the dates and
//! instants HAProxy takes (accept, request start, request head complete, connection
//! start and end, response head, end), the bytes each way, the status, the retries,
//! the request line, and the termination state (which side or rule ended the stream,
//! and in which phase). The stream and its muxes fill a [`StreamLog`]; at the end the
//! frontend's format renders it and [`emit`] sends it.
//! HAProxy counterpart: the `logs` fields of `struct stream` (`accept_date`,
//! `t_handshake`, `t_idle`, `t_queue`, `t_connect`, `t_data`, `t_close`, `bytes_in/out`),
//! `sess_set_term_flags()`, `strm_log()`/`sess_log()` (src/log.c, src/http_ana.c).

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Instant, SystemTime};

use super::format::LogFormat;
use super::sink::Loggers;
use super::target::level;
pub use super::types::{Cause, CookieLog, LevelSet, Phase, StreamLog};
use crate::sample::SampleCtx;

/// The most of a request line a log record keeps without `tune.http.logurilen`.
pub const MAX_URI: usize = 1024;

impl Default for StreamLog {
    fn default() -> Self {
        let (now, date) = (Instant::now(), SystemTime::now());
        StreamLog::blank((date, now), (date, now), 0, Default::default())
    }
}

/// A millisecond clock for instants kept where space is tight (a kept-alive
/// connection's last exchange end): milliseconds since the first call, wrapping every
/// 49 days (differences taken with `wrapping_sub` stay right below that).
pub fn clock_ms() -> u32 {
    clock_ms_at(Instant::now())
}

/// [`clock_ms`] at `now` (for a caller that already read the clock).
pub fn clock_ms_at(now: Instant) -> u32 {
    static BASE: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let base = *BASE.get_or_init(|| now);
    now.saturating_duration_since(base).as_millis() as u32
}

/// What HAProxy 2.6 counts in `%B` for a response head: its internal message (HTX)
/// holds the start line's three parts with a fixed overhead, and each header's name
/// and value without separators; the connection headers the HTTP/1 mux adds on output
/// are not counted. Checked against haproxy for pages, redirects, `return` and
/// forwarded responses.
pub fn htx_head_size(res: crate::http::MsgView<'_>, status: u16) -> u64 {
    let version = 8; // `HTTP/1.x`
    let status_len = if status >= 100 { 3 } else { 1 };
    SL_OVERHEAD + version + status_len + res.reason().len() as u64 + htx_fields_size(res)
}

/// The start line block's own size in HAProxy's internal message (`struct htx_sl`
/// and its block header).
const SL_OVERHEAD: u64 = 21;

/// The headers of a head as HAProxy's internal message counts them: name and value,
/// without separators.
pub fn htx_fields_size(m: crate::http::MsgView<'_>) -> u64 {
    m.headers().map(|(_, n, v)| (n.len() + v.len()) as u64).sum()
}

/// The request headers as HAProxy's internal message counts them: as
/// [`htx_fields_size`], without the `Connection` headers that only say `close` or
/// `keep-alive` (its HTTP/1 parser consumes them).
pub fn htx_req_fields_size(m: crate::http::MsgView<'_>) -> u64 {
    let consumed = |n: &[u8], v: &[u8]| {
        n.eq_ignore_ascii_case(b"connection")
            && v.split(|&c| c == b',').all(|t| {
                let t = t.trim_ascii();
                t.eq_ignore_ascii_case(b"close") || t.eq_ignore_ascii_case(b"keep-alive")
            })
    };
    m.headers().filter(|(_, n, v)| !consumed(n, v)).map(|(_, n, v)| (n.len() + v.len()) as u64).sum()
}

/// What HAProxy 2.6 counts in `%U` for a request head, as [`htx_head_size`] for a
/// response: the request line's three parts as received with the start line's
/// overhead, plus `fields` ([`htx_req_fields_size`] of the parsed head). Checked
/// against haproxy 2.6.12 (`POST / HTTP/1.1` with `Host` and `Content-Length`: 57).
pub fn htx_req_head_size(line: &[u8], fields: u64) -> u64 {
    let parts = line.split(|&c| c == b' ').filter(|p| !p.is_empty()).map(|p| p.len() as u64);
    SL_OVERHEAD + parts.sum::<u64>() + fields
}

/// Milliseconds from `a` to `b`, `-1` when either did not happen.
fn ms(a: Option<Instant>, b: Option<Instant>) -> i64 {
    match (a, b) {
        (Some(a), Some(b)) => b.saturating_duration_since(a).as_millis() as i64,
        _ => -1,
    }
}

impl StreamLog {
    /// A record with nothing measured yet.
    fn blank(
        accept: (SystemTime, Instant),
        req: (SystemTime, Instant),
        idle_ms: i64,
        (req_line, cookie): (Vec<u8>, CookieLog),
    ) -> Self {
        StreamLog {
            accept_date: accept.0,
            accept: accept.1,
            req_date: req.0,
            req_start: req.1,
            idle_ms,
            head_done: None,
            connect_start: None,
            queue_ms: None,
            connected: None,
            res_head: None,
            end: None,
            bytes_out: 0,
            res_head_size: 0,
            bytes_in: 0,
            status: None,
            asap: false,
            retries: 0,
            srv_queue: 0,
            be_queue: 0,
            back_src: None,
            cause: Cause::None,
            phase: Phase::None,
            req_line,
            cookie,
            level: LevelSet::Unset,
            applet: None,
        }
    }

    /// Starts a stream of a connection accepted at `accept` (date and instant), whose
    /// request started at `req_start` after `idle_ms` of idle time.
    ///
    /// PERF: reads no clock (the caller read it once for the request).
    pub fn begin(&mut self, accept: (SystemTime, Instant), req: (SystemTime, Instant), idle_ms: i64) {
        let mut line = std::mem::take(&mut self.req_line);
        line.clear();
        let mut cookie = std::mem::take(&mut self.cookie);
        cookie.reset();
        *self = StreamLog::blank(accept, req, idle_ms, (line, cookie));
    }

    /// Records a wait in a queue: its time becomes `Tw` (and leaves `Tc`, which starts
    /// when the wait ended), its positions `%sq` and `%bq`. A stream that did not
    /// wait records nothing (`Tw` 0).
    pub fn queued(&mut self, w: super::types::QueueWait) {
        if w == super::types::QueueWait::default() {
            return;
        }
        let wait = std::time::Duration::from_millis(w.ms.into());
        self.queue_ms = Some(w.ms.into());
        self.connect_start = self.connect_start.map(|t| t + wait);
        self.srv_queue = w.srv_pos;
        self.be_queue = w.be_pos;
    }

    /// Records the end of the stream by `cause` in `phase`, unless an earlier event
    /// already decided it.
    pub fn end_by(&mut self, cause: Cause, phase: Phase) {
        if self.cause == Cause::None {
            self.cause = cause;
            self.phase = phase;
        }
    }

    /// The phase the stream was in, from the instants it reached.
    pub fn current_phase(&self) -> Phase {
        if self.res_head.is_some() {
            Phase::Data
        } else if self.connected.is_some() {
            Phase::Headers
        } else if self.connect_start.is_some() {
            Phase::Connect
        } else {
            Phase::Request
        }
    }

    /// `%ts`: the two termination characters.
    pub fn term(&self) -> [u8; 2] {
        let phase = if self.cause == Cause::None { Phase::None } else { self.phase };
        [self.cause.code(), phase.code()]
    }

    /// `Th`: from the accept to the end of the handshakes (PROXY header, TLS), 0 but
    /// for a connection's first request: its accept is set that long before the
    /// request's start, and a later request's accept is the previous end, `Ti` before.
    pub fn th(&self) -> i64 {
        (ms(Some(self.accept), Some(self.req_start)) - self.idle_ms).max(0)
    }

    /// `Ti`.
    pub fn ti(&self) -> i64 {
        self.idle_ms
    }

    /// `TR`: from the request start to its complete head.
    pub fn t_req(&self) -> i64 {
        ms(Some(self.req_start), self.head_done)
    }

    /// `Tq` = `Th + Ti + TR`.
    pub fn tq(&self) -> i64 {
        match self.t_req() {
            -1 => -1,
            tr => self.th() + self.ti() + tr,
        }
    }

    /// `Tw`: time in a queue or a tarpit; 0 for a stream that asked for a server and
    /// got one at once.
    pub fn tw(&self) -> i64 {
        if let Some(q) = self.queue_ms {
            return q;
        }
        if self.connect_start.is_some() {
            0
        } else {
            -1
        }
    }

    /// `Tc`.
    pub fn tc(&self) -> i64 {
        ms(self.connect_start, self.connected)
    }

    /// `Tr`: from the connection to the response head.
    pub fn tr(&self) -> i64 {
        ms(self.connected, self.res_head)
    }

    /// `Ta`: from the request start to the end.
    pub fn ta(&self) -> i64 {
        ms(Some(self.req_start), self.end)
    }

    /// `Tt`: `Th + Ti + Ta`.
    pub fn tt(&self) -> i64 {
        self.th() + self.ti() + self.ta().max(0)
    }

    /// `Tu`: `Tt` without the idle time.
    pub fn tu(&self) -> i64 {
        self.tt() - self.ti()
    }

    /// `Td`: `Tt` less everything before the data.
    pub fn td(&self) -> i64 {
        let tr = self.tr();
        if tr < 0 {
            return -1;
        }
        (self.ta() - self.t_req().max(0) - self.tw().max(0) - self.tc().max(0) - tr).max(0)
    }
}

/// A frontend's log settings, compiled.
#[derive(Debug)]
pub struct ProxyLog {
    pub loggers: Loggers,
    /// `None`: the proxy's lines only carry operational messages (a backend, or a
    /// frontend without a format).
    pub format: Option<LogFormat>,
    /// `error-log-format`: lines of streams that ended in error.
    pub error_format: Option<LogFormat>,
    /// `log-format-sd`: the structured data of the lines' RFC 5424 headers.
    pub sd_format: Option<LogFormat>,
    pub dontlognull: bool,
    pub dontlog_normal: bool,
    pub separate_errors: bool,
    /// `option logasap`.
    pub logasap: bool,
    /// A format reads the server connection's source (`%bi`, `%bp`): only then does
    /// the mux ask the kernel for it.
    pub back_src: bool,
    /// Lines logged so far (`%lc`).
    pub count: AtomicU64,
}

thread_local! {
    /// The line being rendered: reused, so a line allocates nothing once warm.
    static LINE: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// Its structured data (`log-format-sd`), likewise.
    static SD: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Whether the stream ended in error, as HAProxy decides which lines
/// `dontlog-normal` skips and `log-separate-errors` raises.
fn is_error(log: &StreamLog) -> bool {
    log.cause != Cause::None || log.status.is_some_and(|s| s >= 500)
}

/// Renders and sends the log line of a stream of a frontend with `pl`; `ctx.log` is
/// the stream's [`StreamLog`]. `null`: nothing at all was received from the client
/// (`option dontlognull` skips those).
pub fn emit(pl: &ProxyLog, ctx: &SampleCtx<'_>, null: bool) {
    let (Some(log), Some(format)) = (ctx.log, &pl.format) else { return };
    let err = is_error(log);
    if (pl.dontlognull && null) || (pl.dontlog_normal && !err) {
        return;
    }
    let lvl = match log.level {
        LevelSet::Silent => return,
        LevelSet::Level(l) => l,
        LevelSet::Unset if err && pl.separate_errors => level::ERR,
        LevelSet::Unset => level::INFO,
    };
    let fmt = match &pl.error_format {
        Some(f) if err => f,
        _ => format,
    };
    // the headers are dated at the stream's end, which it read already
    let date = log.end.map_or_else(SystemTime::now, super::date::wall);
    LINE.with(|b| {
        let Ok(mut line) = b.try_borrow_mut() else { return };
        line.clear();
        fmt.render(ctx, &mut line);
        pl.count.fetch_add(1, Ordering::Relaxed);
        let Some(sd_format) = &pl.sd_format else {
            pl.loggers.send_sd_at(lvl, &line, b"", date);
            return;
        };
        SD.with(|s| {
            let Ok(mut sd) = s.try_borrow_mut() else { return };
            sd.clear();
            sd_format.render(ctx, &mut sd);
            pl.loggers.send_sd_at(lvl, &line, &sd, date);
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(base: Instant, ms: u64) -> Option<Instant> {
        Some(base + Duration::from_millis(ms))
    }

    #[test]
    fn timers_of_a_served_request() {
        let t0 = Instant::now();
        let mut l = StreamLog::default();
        l.begin((SystemTime::now(), t0), (SystemTime::now(), t0), 0);
        l.head_done = at(t0, 2);
        l.connect_start = at(t0, 3);
        l.connected = at(t0, 8);
        l.res_head = at(t0, 20);
        l.end = at(t0, 25);
        assert_eq!((l.th(), l.ti(), l.t_req(), l.tq()), (0, 0, 2, 2));
        assert_eq!((l.tw(), l.tc(), l.tr(), l.ta(), l.tt(), l.td()), (0, 5, 12, 25, 25, 6));
        assert_eq!(l.term(), *b"--");
    }

    #[test]
    fn timers_of_a_denied_request_are_minus_one() {
        let t0 = Instant::now();
        let mut l = StreamLog::default();
        l.begin((SystemTime::now(), t0), (SystemTime::now(), t0), 7);
        l.head_done = at(t0, 1);
        l.end = at(t0, 1);
        l.end_by(Cause::Proxy, Phase::Request);
        assert_eq!((l.tw(), l.tc(), l.tr(), l.td(), l.tt()), (-1, -1, -1, -1, 8));
        assert_eq!(l.term(), *b"PR");
        // the first decision stays
        l.end_by(Cause::ClientAbort, Phase::Data);
        assert_eq!(l.term(), *b"PR");
    }

    #[test]
    fn phases_follow_the_instants_reached() {
        let t0 = Instant::now();
        let mut l = StreamLog::default();
        assert_eq!(l.current_phase(), Phase::Request);
        l.connect_start = Some(t0);
        assert_eq!(l.current_phase(), Phase::Connect);
        l.connected = Some(t0);
        assert_eq!(l.current_phase(), Phase::Headers);
        l.res_head = Some(t0);
        assert_eq!(l.current_phase(), Phase::Data);
        l.end_by(Cause::ServerTimeout, l.current_phase());
        assert_eq!(l.term(), *b"sD");
    }

    #[test]
    fn begin_keeps_the_request_line_capacity() {
        let mut l = StreamLog::default();
        l.req_line.extend_from_slice(b"GET / HTTP/1.1");
        let cap = l.req_line.capacity();
        l.status = Some(200);
        let now = (SystemTime::now(), Instant::now());
        l.begin(now, now, 0);
        assert_eq!((l.req_line.len(), l.req_line.capacity(), l.status), (0, cap, None));
    }

    #[test]
    fn a_queued_stream_waits_in_tw_not_in_tc_and_keeps_its_positions() {
        let t0 = Instant::now();
        let mut l = StreamLog::default();
        l.begin((SystemTime::now(), t0), (SystemTime::now(), t0), 0);
        l.head_done = at(t0, 1);
        l.connect_start = at(t0, 2);
        l.queued(crate::log::types::QueueWait { ms: 30, srv_pos: 0, be_pos: 3 });
        l.connected = at(t0, 40);
        l.res_head = at(t0, 50);
        l.end = at(t0, 50);
        assert_eq!((l.tw(), l.tc(), l.tr(), l.td()), (30, 8, 10, 1));
        assert_eq!((l.srv_queue, l.be_queue), (0, 3));
        // a stream that got a server at once: Tw 0
        let mut l = StreamLog { connect_start: at(t0, 2), ..StreamLog::default() };
        l.queued(crate::log::types::QueueWait::default());
        l.connected = at(t0, 5);
        assert_eq!((l.tw(), l.tc(), l.be_queue), (0, 3, 0));
    }
}
