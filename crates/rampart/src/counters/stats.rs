//! The counters `show stat` reads that the proxies do not keep themselves: requests and
//! responses by status class per frontend, backend and server, server sessions, and
//! the highest concurrent sessions seen. Per-thread [`Counter`]s (no locked instruction
//! per request); the maxima are relaxed atomics written only when a new maximum is
//! reached. HAProxy counterpart: the fe/be/srv counters of counters-t.h.
//!
//! Another module adds a counter by adding a field here (built in [`ProxyStats::new`] /
//! [`ServerStats::new`]), bumping it where the event happens, and reading it in
//! `stats::stat` under its HAProxy field name. The functions that count an event on the
//! runtime's proxies live in `stats::counters`.

use std::sync::atomic::AtomicU32;

use super::capture::LastError;
use super::histogram::Timers;
use super::rate::RateCell;
use super::{Counter, CounterGroup, CounterRef, CounterSet, CounterSlab};

/// HTTP responses by status class, in `show stat` order: 1xx, 2xx, 3xx, 4xx, 5xx, other.
#[derive(Debug)]
pub struct ByClass(pub [Counter; 6]);

impl ByClass {
    fn new(group: &mut CounterGroup) -> ByClass {
        ByClass(std::array::from_fn(|_| group.counter()))
    }

    /// Counts one response with `status`.
    #[inline]
    pub fn count(&self, status: u16) {
        self.0[class_of(status)].inc();
    }
}

/// The class of a response `status` in [`ByClass`] order.
#[inline]
fn class_of(status: u16) -> usize {
    match status {
        100..=599 => usize::from(status / 100 - 1),
        _ => 5,
    }
}

/// The HTTP/2 counters of a frontend (HAProxy's `h2` stats module: the `h2_*` fields
/// of `show stat`), counted by the client side's mux (`mux::h2::conn`).
#[derive(Debug)]
pub struct H2Stats {
    /// Frames received: HEADERS, DATA, SETTINGS, RST_STREAM, GOAWAY.
    pub headers_rcvd: Counter,
    pub data_rcvd: Counter,
    pub settings_rcvd: Counter,
    pub rst_stream_rcvd: Counter,
    pub goaway_rcvd: Counter,
    /// Connection and stream errors detected (GOAWAY or RST_STREAM for a protocol
    /// error, a flood, a glitch threshold).
    pub conn_proto_err: Counter,
    pub strm_proto_err: Counter,
    /// RST_STREAM sent, GOAWAY sent with an error code.
    pub rst_stream_resp: Counter,
    pub goaway_resp: Counter,
    /// HTTP/2 connections open now, and since the start.
    pub open_conns: std::sync::atomic::AtomicU64,
    pub total_conns: Counter,
    /// Streams open now, and since the start (HAProxy names them
    /// `h2_backend_open_streams`, `h2_backend_total_streams` on frontends too).
    pub open_streams: std::sync::atomic::AtomicU64,
    pub total_streams: Counter,
}

impl H2Stats {
    fn new(slab: &mut CounterSlab) -> std::sync::Arc<H2Stats> {
        let mut g = slab.group(11);
        std::sync::Arc::new(H2Stats {
            headers_rcvd: g.counter(),
            data_rcvd: g.counter(),
            settings_rcvd: g.counter(),
            rst_stream_rcvd: g.counter(),
            goaway_rcvd: g.counter(),
            conn_proto_err: g.counter(),
            strm_proto_err: g.counter(),
            rst_stream_resp: g.counter(),
            goaway_resp: g.counter(),
            open_conns: std::sync::atomic::AtomicU64::new(0),
            total_conns: g.counter(),
            open_streams: std::sync::atomic::AtomicU64::new(0),
            total_streams: g.counter(),
        })
    }

    /// The counters `clear counters all` resets.
    pub fn counters(&self) -> [&Counter; 11] {
        [
            &self.headers_rcvd,
            &self.data_rcvd,
            &self.settings_rcvd,
            &self.rst_stream_rcvd,
            &self.goaway_rcvd,
            &self.conn_proto_err,
            &self.strm_proto_err,
            &self.rst_stream_resp,
            &self.goaway_resp,
            &self.total_conns,
            &self.total_streams,
        ]
    }
}

/// The compression counters of one side of a proxy (`comp_in`, `comp_out`,
/// `comp_byp`, `comp_rsp`), shared with the responses being compressed.
#[derive(Debug)]
pub struct CompStats {
    /// Bytes fed to the compressors, and the bytes they gave.
    pub bytes_in: Counter,
    pub bytes_out: Counter,
    /// Bytes of responses selected for compression that went out uncompressed
    /// (`compression algo identity`, or the level lowered to 0 by the limits).
    pub bypassed: Counter,
    /// Responses compressed to their end.
    pub responses: Counter,
}

impl CompStats {
    fn new(slab: &mut CounterSlab) -> std::sync::Arc<CompStats> {
        let mut g = slab.group(4);
        std::sync::Arc::new(CompStats {
            bytes_in: g.counter(),
            bytes_out: g.counter(),
            bypassed: g.counter(),
            responses: g.counter(),
        })
    }
}

/// The per-proxy counters of the stats (both sides of a `listen`).
#[derive(Debug)]
pub struct ProxyStats {
    /// HTTP requests the frontend received (`req_tot` of the FRONTEND row).
    pub fe_req: Counter,
    /// Responses the frontend sent (`hrsp_*` of the FRONTEND row).
    pub fe_rsp: ByClass,
    /// HTTP requests the backend handled (`req_tot` of the BACKEND row).
    pub be_req: Counter,
    /// Responses to requests the backend handled (`hrsp_*` of the BACKEND row).
    pub be_rsp: ByClass,
    /// Highest concurrent client connections of the frontend (`smax`).
    pub fe_smax: AtomicU32,
    /// Requests the frontend's mux refused (invalid, incomplete, too slow: `ereq`).
    pub fe_ereq: Counter,
    /// Requests answered by the statistics page (`intercepted`).
    pub fe_intercepted: Counter,
    /// Streams whose connection attempts to a server all failed (`econ`).
    pub be_econ: Counter,
    /// Server responses that failed (invalid, cut, too slow: `eresp`).
    pub be_eresp: Counter,
    /// Connection attempts retried (`wretr`).
    pub be_wretr: Counter,
    /// Retries moved to another server (`wredis`).
    pub be_wredis: Counter,
    /// Servers the balancer chose (`lbtot`).
    pub be_lbtot: Counter,
    /// Bytes received from clients and sent to them, through the frontend and
    /// through the backend (`bin`, `bout`).
    pub fe_bin: Counter,
    /// New server connections attempted, idle or kept ones reused (`connect`,
    /// `reuse` of the BACKEND row).
    pub be_connect: Counter,
    pub be_reuse: Counter,
    /// Responses refused by `http-response deny` or `tcp-response content reject`,
    /// counted in the frontend and in the backend (`dresp`).
    pub fe_dresp: Counter,
    pub be_dresp: Counter,
    pub fe_bout: Counter,
    pub be_bin: Counter,
    pub be_bout: Counter,
    /// The backend's latency histograms, when recorded (`histogram::wanted`).
    pub be_timers: Option<Box<Timers>>,
    /// The last request the frontend refused (`show errors`).
    pub last_error: LastError,
    /// Rates of the frontend's connections, sessions and requests, of the backend's
    /// sessions (`conn_rate`, `rate`, `req_rate`, with their maxima).
    pub fe_conn_rate: RateCell,
    pub fe_sess_rate: RateCell,
    pub fe_req_rate: RateCell,
    pub be_sess_rate: RateCell,
    /// Requests `http-request cache-use` looked up in a cache, and those it answered
    /// from there, counted on the side whose rule ran (`cache_lookups`, `cache_hits`).
    pub fe_cache_lookups: Counter,
    pub fe_cache_hits: Counter,
    pub be_cache_lookups: Counter,
    pub be_cache_hits: Counter,
    /// Compression through the frontend and through the backend.
    pub fe_comp: std::sync::Arc<CompStats>,
    pub be_comp: std::sync::Arc<CompStats>,
    /// The frontend's HTTP/2 connections.
    pub fe_h2: std::sync::Arc<H2Stats>,
}

impl ProxyStats {
    /// `timed`: the latency histograms are recorded. The counters come from `slab`.
    pub fn new(slab: &mut CounterSlab, timed: bool) -> ProxyStats {
        let threads = slab.threads();
        let mut g = slab.group(33);
        ProxyStats {
            fe_req: g.counter(),
            fe_rsp: ByClass::new(&mut g),
            be_req: g.counter(),
            be_rsp: ByClass::new(&mut g),
            fe_smax: AtomicU32::new(0),
            fe_ereq: g.counter(),
            fe_intercepted: g.counter(),
            be_econ: g.counter(),
            be_eresp: g.counter(),
            be_wretr: g.counter(),
            be_wredis: g.counter(),
            be_lbtot: g.counter(),
            fe_bin: g.counter(),
            be_connect: g.counter(),
            be_reuse: g.counter(),
            fe_dresp: g.counter(),
            be_dresp: g.counter(),
            fe_bout: g.counter(),
            be_bin: g.counter(),
            be_bout: g.counter(),
            fe_cache_lookups: g.counter(),
            fe_cache_hits: g.counter(),
            be_cache_lookups: g.counter(),
            be_cache_hits: g.counter(),
            be_timers: Timers::boxed(threads, timed),
            last_error: Default::default(),
            fe_conn_rate: RateCell::default(),
            fe_sess_rate: RateCell::default(),
            fe_req_rate: RateCell::default(),
            be_sess_rate: RateCell::default(),
            fe_comp: CompStats::new(slab),
            be_comp: CompStats::new(slab),
            fe_h2: H2Stats::new(slab),
        }
    }
}

/// The per-server counters of the stats, by number in their [`CounterSet`]: the
/// accessors below name them.
#[derive(Debug)]
pub struct ServerStats {
    counters: CounterSet,
    /// Highest concurrent connections in use (`smax`).
    pub smax: AtomicU32,
    /// Sessions per second (`rate`, `rate_max`).
    pub sess_rate: RateCell,
    /// The server's latency histograms, when recorded (`histogram::wanted`).
    pub timers: Option<Box<Timers>>,
    /// The configured weight (`uweight`; also `weight` until weights change at run time).
    pub weight: u32,
    /// The server's `id` (`sid`): its position in the backend from 1, or `id N`.
    pub sid: u32,
}

/// The numbers of a server's counters in its set, then the 6 response classes.
const STOT: usize = 0;
const REQ: usize = 1;
const ECON: usize = 2;
const ERESP: usize = 3;
const WRETR: usize = 4;
const WREDIS: usize = 5;
const LBTOT: usize = 6;
const BIN: usize = 7;
const BOUT: usize = 8;
const CONNECT: usize = 9;
const REUSE: usize = 10;
const DRESP: usize = 11;
const RSP: usize = 12;
const SERVER_COUNTERS: usize = RSP + 6;

impl ServerStats {
    /// The counters come from `slab`.
    pub fn new(slab: &mut CounterSlab, weight: u32, sid: u32, timed: bool) -> ServerStats {
        let threads = slab.threads();
        ServerStats {
            counters: CounterSet::new(slab.group(SERVER_COUNTERS)),
            smax: AtomicU32::new(0),
            sess_rate: RateCell::default(),
            timers: Timers::boxed(threads, timed),
            weight,
            sid,
        }
    }

    /// Streams sent to the server (`stot`).
    #[inline]
    pub fn stot(&self) -> CounterRef<'_> {
        self.counters.at(STOT)
    }

    /// HTTP requests sent to the server (`req_tot`).
    #[inline]
    pub fn req(&self) -> CounterRef<'_> {
        self.counters.at(REQ)
    }

    /// `econ`, `eresp`, `wretr`, `wredis` of this server (see [`ProxyStats`]).
    #[inline]
    pub fn econ(&self) -> CounterRef<'_> {
        self.counters.at(ECON)
    }

    #[inline]
    pub fn eresp(&self) -> CounterRef<'_> {
        self.counters.at(ERESP)
    }

    #[inline]
    pub fn wretr(&self) -> CounterRef<'_> {
        self.counters.at(WRETR)
    }

    #[inline]
    pub fn wredis(&self) -> CounterRef<'_> {
        self.counters.at(WREDIS)
    }

    /// Times the balancer chose this server (`lbtot`).
    #[inline]
    pub fn lbtot(&self) -> CounterRef<'_> {
        self.counters.at(LBTOT)
    }

    /// Bytes of the client's requests and of the responses through this server
    /// (`bin`, `bout`).
    #[inline]
    pub fn bin(&self) -> CounterRef<'_> {
        self.counters.at(BIN)
    }

    #[inline]
    pub fn bout(&self) -> CounterRef<'_> {
        self.counters.at(BOUT)
    }

    /// New connections attempted to this server, connections reused (`connect`, `reuse`).
    #[inline]
    pub fn connect(&self) -> CounterRef<'_> {
        self.counters.at(CONNECT)
    }

    #[inline]
    pub fn reuse(&self) -> CounterRef<'_> {
        self.counters.at(REUSE)
    }

    /// Responses of this server refused by a rule (`dresp`).
    #[inline]
    pub fn dresp(&self) -> CounterRef<'_> {
        self.counters.at(DRESP)
    }

    /// Responses to requests sent to the server of class `class` (`hrsp_*`, in
    /// [`ByClass`] order).
    #[inline]
    pub fn rsp(&self, class: usize) -> CounterRef<'_> {
        assert!(class < 6, "response class {class}");
        self.counters.at(RSP + class)
    }

    /// Counts one response with `status` (`hrsp_*`).
    #[inline]
    pub fn count_rsp(&self, status: u16) {
        self.rsp(class_of(status)).inc();
    }

    /// Every counter, for `clear counters all`.
    pub fn all(&self) -> impl Iterator<Item = CounterRef<'_>> {
        (0..SERVER_COUNTERS).map(|i| self.counters.at(i))
    }
}

/// The counters of one listener under `option socket-stats` (a `show stat` row of
/// type 3; HAProxy's `listener->counters`).
#[derive(Debug)]
pub struct ListenerStats {
    /// Connections open through this listener now, and the most seen (`scur`, `smax`).
    pub cur: AtomicU32,
    pub max: AtomicU32,
    /// Connections accepted (`stot`).
    pub cum_conn: Counter,
    /// Connections and sessions refused by `tcp-request connection|session` rules
    /// (`dcon`, `dses`).
    pub denied_conn: Counter,
    pub denied_sess: Counter,
    /// Bytes from and to the clients of this listener (`bin`, `bout`).
    pub bin: Counter,
    pub bout: Counter,
}

impl ListenerStats {
    pub fn new(threads: usize) -> ListenerStats {
        let mut g = CounterGroup::new(threads, 5);
        ListenerStats {
            cur: AtomicU32::new(0),
            max: AtomicU32::new(0),
            cum_conn: g.counter(),
            denied_conn: g.counter(),
            denied_sess: g.counter(),
            bin: g.counter(),
            bout: g.counter(),
        }
    }

    /// The counters `clear counters all` restarts from 0.
    pub fn all(&self) -> [&Counter; 5] {
        [&self.cum_conn, &self.denied_conn, &self.denied_sess, &self.bin, &self.bout]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_counters_are_apart_and_count_their_responses_by_class() {
        let s = ServerStats::new(&mut CounterSlab::new(1), 1, 1, false);
        s.stot().inc();
        s.dresp().add(3);
        for st in [200, 204, 503, 0] {
            s.count_rsp(st);
        }
        let got: Vec<u64> = s.all().map(CounterRef::get).collect();
        assert_eq!(got, [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 2, 0, 0, 1, 1]);
        s.all().for_each(CounterRef::clear);
        assert!(s.all().all(|c| c.get() == 0));
    }

    #[test]
    fn statuses_fall_in_their_class_and_the_rest_in_other() {
        let c = ByClass::new(&mut CounterGroup::new(1, 6));
        for st in [100, 101, 200, 204, 302, 404, 503, 599, 600, 0, 99] {
            c.count(st);
        }
        let got: Vec<u64> = c.0.iter().map(Counter::get).collect();
        assert_eq!(got, [2, 2, 1, 1, 2, 3]);
    }
}
