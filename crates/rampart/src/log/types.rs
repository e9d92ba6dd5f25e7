//! The record of what a stream measured for its log line ([`StreamLog`]: dates,
//! timers, sizes, retries, queue positions, termination state, persistence cookie
//! states), kept apart from the code that fills and renders it so that the rules
//! language, which reads it for log-format variables, can sit below the log module
//! (HAProxy's `log-t.h` beside `log.h`). Its methods live in `log::stream_log`.

use std::time::{Instant, SystemTime};

use crate::http::cookie::{CkReq, CkRes};

/// Who ended the stream (HAProxy's `SF_ERR_*`), the first character of `%ts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Cause {
    /// `-`: ended normally.
    #[default]
    None,
    /// `C`: the client aborted.
    ClientAbort,
    /// `c`: the client-side timeout expired.
    ClientTimeout,
    /// `S`: the server aborted or refused.
    ServerAbort,
    /// `s`: the server-side timeout expired.
    ServerTimeout,
    /// `P`: a proxy rule refused the request (`deny`, `tarpit`, a bad request ...).
    Proxy,
    /// `L`: the proxy answered itself (`return`, `redirect`, stats).
    Local,
    /// `R`: a resource ran out.
    Resource,
    /// `I`: an internal error.
    Internal,
    /// `D`: the server went down.
    Down,
    /// `K`: killed by an administrator.
    Killed,
}

impl Cause {
    /// Its character in the termination state (`%ts`).
    pub fn code(self) -> u8 {
        match self {
            Cause::None => b'-',
            Cause::ClientAbort => b'C',
            Cause::ClientTimeout => b'c',
            Cause::ServerAbort => b'S',
            Cause::ServerTimeout => b's',
            Cause::Proxy => b'P',
            Cause::Local => b'L',
            Cause::Resource => b'R',
            Cause::Internal => b'I',
            Cause::Down => b'D',
            Cause::Killed => b'K',
        }
    }
}

/// Where the stream was when it ended (HAProxy's `SF_FINST_*`), the second character.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Phase {
    /// `-`: it completed.
    #[default]
    None,
    /// `R`: waiting for (or analysing) the request.
    Request,
    /// `Q`: in a queue.
    Queue,
    /// `C`: connecting to the server.
    Connect,
    /// `H`: waiting for the response head.
    Headers,
    /// `D`: transferring data.
    Data,
    /// `L`: sending the last bytes.
    Last,
    /// `T`: tarpitted.
    Tarpit,
}

impl Phase {
    /// Its character in the termination state (`%ts`).
    pub fn code(self) -> u8 {
        match self {
            Phase::None => b'-',
            Phase::Request => b'R',
            Phase::Queue => b'Q',
            Phase::Connect => b'C',
            Phase::Headers => b'H',
            Phase::Data => b'D',
            Phase::Last => b'L',
            Phase::Tarpit => b'T',
        }
    }
}

/// What `set-log-level` made of a stream's log line (HAProxy's `s->logs.level`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LevelSet {
    /// No rule set it: `info`, or `err` for an error under `option log-separate-errors`.
    #[default]
    Unset,
    /// `silent`: the stream sends no line at all.
    Silent,
    /// The syslog severity of the line (`0` emerg .. `7` debug, [`crate::log::level`]).
    Level(u8),
}

/// What one stream measured for its log line. Reset per stream; its request line
/// keeps its capacity (it lives in the pooled transaction).
#[derive(Debug, Clone)]
pub struct StreamLog {
    /// The connection's accept date (`%t`, `%Ts`, `%ms`).
    pub accept_date: SystemTime,
    pub accept: Instant,
    /// When the request started: its first byte, or the accept (`%tr`, `Ti`).
    pub req_date: SystemTime,
    pub req_start: Instant,
    /// Idle time before the request (`Ti`): 0 for the first request.
    pub idle_ms: i64,
    /// The request head was complete (`TR`).
    pub head_done: Option<Instant>,
    /// The stream asked for a server connection (end of `Tw` starts `Tc`).
    pub connect_start: Option<Instant>,
    /// Time spent waiting in a queue or a tarpit (`Tw`), when it was measured.
    pub queue_ms: Option<i64>,
    /// The server connection was established (`Tc`).
    pub connected: Option<Instant>,
    /// The response head arrived (`Tr`).
    pub res_head: Option<Instant>,
    /// The end of the stream (`Ta`, `Tt`): set when the line is rendered.
    pub end: Option<Instant>,
    /// Bytes sent to the client (`%B`) and received from it (`%U`).
    pub bytes_out: u64,
    /// The size HAProxy counts for the response head sent ([`htx_head_size`]).
    pub res_head_size: u64,
    pub bytes_in: u64,
    /// The status sent to the client (`%ST`).
    pub status: Option<u16>,
    /// The line was sent at the response head (`option logasap`): its totals are
    /// `+`-prefixed, and the end of the stream sends nothing more.
    pub asap: bool,
    /// Connection retries (`%rc`).
    pub retries: u32,
    /// Positions in the server's and the backend's queue (`%sq`, `%bq`).
    pub srv_queue: u32,
    pub be_queue: u32,
    /// The source address of the server connection (`%bi`, `%bp`).
    pub back_src: Option<std::net::SocketAddr>,
    pub cause: Cause,
    pub phase: Phase,
    /// `<method> <uri> <version>` as received (`%r`, `%HM`, `%HU`, ...); empty before a
    /// request was parsed (HAProxy's `<BADREQ>`).
    pub req_line: Vec<u8>,
    /// The persistence cookie's states and the captured cookies.
    pub cookie: CookieLog,
    /// The severity a `set-log-level` rule gave the line.
    pub level: LevelSet,
    /// The Lua service that served the stream in place of a server (its number among
    /// those the scripts registered): `%s` is then `<lua.NAME>`, as in HAProxy.
    pub applet: Option<u32>,
}

/// What `%tsc` (its 3rd and 4th characters), `%CC` and `%CS` report: the persistence
/// cookie's state in the request and in the response, and `capture cookie`'s finds
/// (empty: none). HAProxy counterpart: `TX_CK_*`, `TX_SCK_*`, `cli_cookie` and
/// `srv_cookie` of `struct http_txn`.
#[derive(Debug, Clone, Default)]
pub struct CookieLog {
    pub req: CkReq,
    pub res: CkRes,
    pub cli: Vec<u8>,
    pub srv: Vec<u8>,
    /// The server the cookie of a request the rules refused names: HAProxy made it the
    /// stream's target, so `%s` shows it (nothing else counts it).
    pub target: Option<usize>,
}

impl CookieLog {
    /// Forgets the previous stream's, keeping the capacity.
    pub fn reset(&mut self) {
        self.req = Default::default();
        self.res = Default::default();
        self.cli.clear();
        self.srv.clear();
        self.target = None;
    }
}

/// A stream's wait in a queue for a server (`%Tw`, `%sq`, `%bq`); all 0 when a server
/// had room at once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueWait {
    /// Milliseconds in the queue.
    pub ms: u32,
    /// The position in the server's queue (`%sq`: a stream a rule sent to a server
    /// that was full) or the backend's (`%bq`): as HAProxy counts it, 1 plus the
    /// streams that left that queue with a server while this one waited.
    pub srv_pos: u32,
    pub be_pos: u32,
}
