//! What a sample evaluation can see: the connection, the proxies, the request and
//! response heads, buffered payload, and the variables.
//!
//! The stream builds one per evaluation from references to its own state, so fetches
//! read without copying, and the borrow checker keeps rules from writing a message
//! while a sample still points into it.

use std::cell::Cell;
use std::net::SocketAddr;
use std::os::fd::RawFd;
use std::sync::Arc;
use std::time::Duration;

use super::host::Host;
use super::unique_id::UniqueId;
use super::vars::Vars;
use crate::http::MsgView;

/// Which way the data an evaluation runs on flows (HAProxy's `SMP_OPT_DIR_REQ/RES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    Request,
    Response,
}

/// A client connection's addresses, as the rules see them. The session keeps the
/// connection's (which `tcp-request connection|session` rules may change) and each
/// stream a copy of it (which `tcp-request content` rules may change for that stream
/// only), as HAProxy keeps addresses per connection, session and stream connector.
///
/// PERF: every idle connection holds one: the rare `set-dst` override and PROXY
/// header are behind one pointer.
#[derive(Debug, Clone)]
pub struct ConnInfo {
    /// Client address (`src`); `None` for a unix socket.
    pub src: Option<SocketAddr>,
    /// The socket, to read the local address when asked.
    pub fd: RawFd,
    /// The listener (one address of a `bind` line) the connection came through: an
    /// index into its frontend's [`crate::proxy::FrontendRt::listeners`]
    /// (`so_name`, `so_id`).
    ///
    /// PERF: it takes the padding after `fd`, so an idle connection does not grow.
    pub listener: u32,
    /// What few connections carry (a `set-dst` address, a PROXY header).
    ///
    /// PERF: shared, so that the copy each stream takes costs no allocation; a rule
    /// that changes it copies it first.
    pub ext: Option<Arc<ConnExt>>,
}

/// The rarely used part of a connection's addresses.
#[derive(Debug, Clone, Default)]
pub struct ConnExt {
    /// The local address a rule set (`set-dst`, `set-dst-port`) or a PROXY header
    /// carried, which replaces the socket's.
    pub dst: Option<SocketAddr>,
    /// The PROXY header the connection started with (`accept-proxy`, `expect-proxy`).
    pub pp: Option<rampart_proto::pp::Header>,
    /// The connection's own addresses (`fc_src`, `fc_dst`) when `tcp-request
    /// connection` rules changed them; later rules and PROXY headers change only the
    /// session's (`src`, `dst`), as HAProxy keeps `conn->src` apart from `sess->src`.
    pub fc: Option<(Option<SocketAddr>, Option<SocketAddr>)>,
    /// What the TLS handshake negotiated, on a `bind ... ssl` listener.
    pub tls: Option<Arc<crate::tls::types::TlsInfo>>,
    /// How long the handshakes (PROXY header, TLS) took after the accept (`%Th`).
    pub handshake: std::time::Duration,
    /// The entries `tcp-request connection|session track-sc<n>` track for the whole
    /// connection: released (their `conn_cur` taken back) when the last copy of the
    /// connection's addresses goes, with the connection.
    pub sc: Option<Arc<crate::stick::Trackers>>,
    /// The glitches of an HTTP/2 connection, counted by its mux (`fc_glitches`);
    /// `None` on HTTP/1 and TCP connections.
    pub glitches: Option<Arc<std::sync::atomic::AtomicU32>>,
    /// A TLS connection's count against `maxsslconn`, from before its handshake to
    /// the end of the connection (kept here rather than in the session, which parks).
    pub ssl_slot: Option<Arc<crate::tls::types::SslSlot>>,
}

impl ConnInfo {
    /// A connection on the first listener of its frontend (set
    /// [`ConnInfo::listener`] for another).
    pub fn new(src: Option<SocketAddr>, fd: RawFd) -> ConnInfo {
        ConnInfo { src, fd, listener: 0, ext: None }
    }

    /// The local address (`getsockname`, unless a rule or a PROXY header set it),
    /// `None` for a unix socket or a closed socket.
    ///
    /// PERF: read when a rule asks (one system call) rather than kept per connection:
    /// an idle connection stays small, and few configurations read `dst`.
    pub fn dst(&self) -> Option<SocketAddr> {
        self.ext.as_ref().and_then(|e| e.dst).or_else(|| local_addr(self.fd))
    }

    /// An HTTP/2 connection's glitch count, for `fc_glitches`.
    pub fn set_glitches(&mut self, count: Arc<std::sync::atomic::AtomicU32>) {
        Arc::make_mut(self.ext.get_or_insert_with(Arc::default)).glitches = Some(count);
    }

    /// The glitches of the connection's mux, `None` when it counts none (HTTP/1).
    pub fn glitches(&self) -> Option<u32> {
        let count = self.ext.as_ref()?.glitches.as_ref()?;
        Some(count.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Replaces the local address rules see.
    pub fn set_dst(&mut self, a: SocketAddr) {
        Arc::make_mut(self.ext.get_or_insert_with(Arc::default)).dst = Some(a);
    }

    /// What the connection's TLS handshake negotiated (`None`: not TLS).
    pub fn tls(&self) -> Option<&crate::tls::types::TlsInfo> {
        self.ext.as_ref().and_then(|e| e.tls.as_deref())
    }

    /// Counts `d` in the connection's handshake time (`%Th`).
    pub fn add_handshake_time(&mut self, d: std::time::Duration) {
        Arc::make_mut(self.ext.get_or_insert_with(Arc::default)).handshake += d;
    }

    /// How long the connection's handshakes took (`%Th`): zero without any.
    pub fn handshake_time(&self) -> std::time::Duration {
        self.ext.as_ref().map_or(std::time::Duration::ZERO, |e| e.handshake)
    }

    /// Keeps what the TLS handshake negotiated.
    /// Keeps the connection's count against `maxsslconn` until it ends.
    pub fn set_ssl_slot(&mut self, slot: crate::tls::types::SslSlot) {
        Arc::make_mut(self.ext.get_or_insert_with(Arc::default)).ssl_slot = Some(Arc::new(slot));
    }

    pub fn set_tls(&mut self, info: crate::tls::types::TlsInfo) {
        Arc::make_mut(self.ext.get_or_insert_with(Arc::default)).tls = Some(Arc::new(info));
    }

    /// The entries the session tracks (`tcp-request connection|session track-sc<n>`).
    pub fn sess_trackers(&self) -> Option<&crate::stick::Trackers> {
        self.ext.as_ref().and_then(|e| e.sc.as_deref())
    }

    /// The PROXY header received on this connection, if any (`fc_rcvd_proxy`).
    pub fn proxy_header(&self) -> Option<&rampart_proto::pp::Header> {
        self.ext.as_ref().and_then(|e| e.pp.as_ref())
    }

    /// Keeps a received PROXY header; its TCP addresses (if any) become `src`/`dst`.
    pub fn set_proxy_header(&mut self, h: rampart_proto::pp::Header) {
        if let Some((src, dst)) = h.tcp_addrs() {
            self.src = Some(src);
            self.set_dst(dst);
        }
        Arc::make_mut(self.ext.get_or_insert_with(Arc::default)).pp = Some(h);
    }

    /// Fixes the connection's own addresses as they are now (after the `tcp-request
    /// connection` rules changed them): `fc_src`/`fc_dst` keep them from now on.
    pub fn pin_fc(&mut self) {
        let fc = (self.src, self.dst());
        Arc::make_mut(self.ext.get_or_insert_with(Arc::default)).fc = Some(fc);
    }

    /// `fc_src`: the client address of the connection itself, as HAProxy 2.6 defines
    /// it: the socket's peer, or what a `tcp-request connection` rule set, even when a
    /// PROXY header or a later rule gave `src` another.
    pub fn fc_src(&self) -> Option<SocketAddr> {
        if let Some((src, _)) = self.ext.as_ref().and_then(|e| e.fc) {
            return src;
        }
        if self.proxy_header().is_some() {
            return peer_addr(self.fd);
        }
        self.src
    }

    /// `fc_dst`: the connection's own local address (see [`ConnInfo::fc_src`]).
    pub fn fc_dst(&self) -> Option<SocketAddr> {
        if let Some((_, dst)) = self.ext.as_ref().and_then(|e| e.fc) {
            return dst;
        }
        if self.proxy_header().is_some() {
            return local_addr(self.fd);
        }
        self.dst()
    }
}

fn peer_addr(fd: RawFd) -> Option<SocketAddr> {
    use nix::sys::socket::{getpeername, SockaddrStorage};
    let ss: SockaddrStorage = getpeername(fd).ok()?;
    if let Some(v4) = ss.as_sockaddr_in() {
        return Some(SocketAddr::V4((*v4).into()));
    }
    ss.as_sockaddr_in6().map(|v6| SocketAddr::V6((*v6).into()))
}

fn local_addr(fd: RawFd) -> Option<SocketAddr> {
    use nix::sys::socket::{getsockname, SockaddrStorage};
    let ss: SockaddrStorage = getsockname(fd).ok()?;
    if let Some(v4) = ss.as_sockaddr_in() {
        return Some(SocketAddr::V4((*v4).into()));
    }
    ss.as_sockaddr_in6().map(|v6| SocketAddr::V6((*v6).into()))
}

/// Everything one evaluation may read. Build it with [`SampleCtx::new`] and struct
/// update syntax (`SampleCtx { req: Some(view), ..SampleCtx::new(rt, conn, fe) }`), so
/// that fields added later keep a default.
pub struct SampleCtx<'a> {
    /// The running process: proxies, servers, process facts ([`Host`]).
    pub rt: &'a dyn Host,
    pub conn: &'a ConnInfo,
    /// The frontend (a proxy index of [`Host`]).
    pub fe: usize,
    /// The backend once chosen.
    pub be: Option<usize>,
    /// The server (index into the backend's servers) once chosen.
    pub srv: Option<usize>,
    pub dir: Dir,
    /// The request head, in HTTP streams.
    pub req: Option<MsgView<'a>>,
    /// The response head, once received.
    pub res: Option<MsgView<'a>>,
    /// The request body bytes in hand (buffered by `wait-for-body` /
    /// `option http-buffer-request`).
    pub req_body: Option<&'a [u8]>,
    /// The response body data in hand, without its transfer framing (buffered by
    /// `http-response wait-for-body`).
    pub res_body: Option<&'a [u8]>,
    /// The bytes waiting in the direction being inspected (`req.payload` in
    /// `tcp-request content`, `res.payload` in `tcp-response content`).
    pub payload: Option<&'a [u8]>,
    /// The variables this evaluation can read and set ([`SampleCtx::new`] fills the
    /// `proc` scope from the runtime; the stream adds its `sess`, `txn`, `req`/`res`).
    pub vars: Vars<'a>,
    /// Set by a fetch that found too few bytes in [`SampleCtx::payload`] to answer but
    /// could once more arrive (HAProxy's `SMP_F_MAY_CHANGE`): `tcp-request content`
    /// rules then wait for more data until `inspect-delay`. Reset by the caller.
    pub may_change: Cell<bool>,
    /// Whether the data being inspected is final (HAProxy's `SMP_OPT_FINAL`): true
    /// everywhere but in `tcp-request content` / `tcp-response content` conditions
    /// while the inspection may still wait for more data (`wait_end` then answers
    /// "not yet").
    pub final_data: bool,
    /// The last rule that ended a rule list of the stream (`last_rule_file`,
    /// `last_rule_line`): `accept`, `reject`, `allow`, `deny`, `redirect` ...
    pub last_rule: Option<RuleAt>,
    /// `capture request header` slots of the frontend (`capture.req.hdr(n)`, `%hr`):
    /// `None` where the header was not seen.
    pub req_caps: &'a [Option<Vec<u8>>],
    /// `capture response header` slots (`capture.res.hdr(n)`, `%hs`).
    pub res_caps: &'a [Option<Vec<u8>>],
    /// The stream's unique id, rendered on first use from the frontend's
    /// `unique-id-format` (`unique-id`, `%ID`): read it with [`SampleCtx::unique_id`].
    pub unique_id: Option<&'a UniqueId>,
    /// The stream's request counter (HAProxy's `uniq_id`: `%rt`, `%ID` formats).
    pub uniq_id: u64,
    /// The timeouts `set-timeout` rules set for the stream (`cur_server_timeout`).
    pub timeouts: TimeoutOverride,
    /// The status of a response rampart produced itself (deny, return, redirect,
    /// errors), which the logs report when there is no server response (`%ST`).
    pub status: Option<u16>,
    /// Whether this is the first request of its connection (`http_first_req`).
    pub first_req: bool,
    /// The request's method when it is one HAProxy knows, kept for the whole
    /// transaction: `method` still answers in response rules, as in HAProxy.
    pub txn_meth: Option<crate::http::Method>,
    /// The request's version, kept for the whole transaction (`capture.req.ver`).
    pub txn_ver: Option<crate::http::Version>,
    /// The request line as received, before any rule rewrote it (`capture.req.method`,
    /// `capture.req.uri`); empty when the frontend does not keep it.
    pub req_line: &'a [u8],
    /// Set by [`crate::sample::expr::Expr::each`] while it runs: a multi-valued fetch
    /// then emits every value (HAProxy's `SMP_OPT_ITERATE`); otherwise it emits only
    /// the one a sample keeps (the last header, the first URL parameter ...).
    pub iterate: Cell<bool>,
    /// What the stream measured for its log line (timers, sizes, termination state,
    /// the request line): set only while a log line is rendered.
    pub log: Option<&'a crate::log::types::StreamLog>,
    /// The TLS connection to the server, once connected (`ssl_bc*`).
    pub back_tls: Option<&'a crate::tls::types::TlsInfo>,
    /// The stick-table entries the stream tracks (`sc_*`, `sc0_*` ...); a slot it does
    /// not track reads the session's ([`ConnInfo::sess_trackers`]), as in HAProxy.
    pub sc: Option<&'a crate::stick::Trackers>,
    /// What the filters decided (`res.comp`, `res.cache_hit` ...).
    pub flt: FltFacts,
    /// The kind of Lua state the stream's Lua calls run in, decided by its first one
    /// (`crate::action::lua::Slot::kind`); `None` without a stream.
    pub lua_kind: Option<&'a Cell<u8>>,
}

/// What the filters decided for a stream, as fetches read it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FltFacts {
    /// The algorithm the request accepts (chosen before the response came).
    pub comp_algo: Option<rampart_cfg::model::CompAlgo>,
    /// The response is being compressed with `comp_algo`.
    pub compressing: bool,
    /// The response came from this cache (index into the runtime's caches).
    pub cache_hit: Option<u32>,
}

impl<'a> SampleCtx<'a> {
    /// A context with only the connection and its frontend: no message, no
    /// variables; the caller fills what it has.
    pub fn new(rt: &'a dyn Host, conn: &'a ConnInfo, fe: usize) -> SampleCtx<'a> {
        SampleCtx {
            rt,
            conn,
            fe,
            be: None,
            srv: None,
            dir: Dir::Request,
            req: None,
            res: None,
            req_body: None,
            res_body: None,
            payload: None,
            vars: Vars { proc: Some(rt.proc_vars()), ..Vars::default() },
            may_change: Cell::new(false),
            final_data: true,
            last_rule: None,
            req_caps: &[],
            res_caps: &[],
            unique_id: None,
            uniq_id: 0,
            timeouts: TimeoutOverride::default(),
            status: None,
            first_req: true,
            txn_meth: None,
            txn_ver: None,
            req_line: &[],
            iterate: Cell::new(false),
            log: None,
            back_tls: None,
            flt: FltFacts { comp_algo: None, compressing: false, cache_hit: None },
            sc: None,
            lua_kind: None,
        }
    }

    /// The message of the direction being inspected.
    pub fn msg(&self) -> Option<MsgView<'a>> {
        match self.dir {
            Dir::Request => self.req,
            Dir::Response => self.res,
        }
    }

    /// The stream's unique id (generated now if this is the first use); `None` without
    /// a stream or a `unique-id-format`.
    pub fn unique_id(&self) -> Option<&'a [u8]> {
        self.unique_id?.get(self)
    }

    /// The entry tracked in slot `n`: the stream's, else the session's.
    pub fn tracked(&self, n: usize) -> Option<&'a crate::stick::Tracked> {
        self.sc.and_then(|s| s.get(n)).or_else(|| self.conn.sess_trackers()?.get(n))
    }

    /// The backend, or the frontend while none is chosen (HAProxy's `s->be` starts as
    /// the frontend).
    pub fn be_or_fe(&self) -> usize {
        self.be.unwrap_or(self.fe)
    }
}

// === what rules leave in the stream for fetches ===

/// Where a rule was written: its configuration file, as an index into
/// the runtime's `rule_files`, and its line. `line` 0: a rule that never
/// reports itself as the last one (proxy-level `redirect`, as in HAProxy).
///
/// PERF: `Copy` and 8 bytes, so that a stream notes the last final rule that ran
/// (`last_rule_file`) without touching the file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RuleAt {
    pub file: u32,
    pub line: u32,
}

impl RuleAt {
    /// `Some(self)` for a rule that reports itself (a line is known).
    pub fn reported(self) -> Option<RuleAt> {
        (self.line != 0).then_some(self)
    }
}

/// Timeouts a rule set for one stream; `None`: the backend's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeoutOverride {
    /// `Some(None)`: no server timeout at all (a value of 0).
    pub server: Option<Option<Duration>>,
    pub tunnel: Option<Option<Duration>>,
}

impl TimeoutOverride {
    /// The server timeout to apply: the override, else `configured`.
    pub fn server(&self, configured: Option<Duration>) -> Option<Duration> {
        self.server.unwrap_or(configured)
    }

    /// The tunnel timeout to apply: the override, else `configured`.
    pub fn tunnel(&self, configured: Option<Duration>) -> Option<Duration> {
        self.tunnel.unwrap_or(configured)
    }
}
