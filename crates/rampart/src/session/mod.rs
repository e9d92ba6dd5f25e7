//! One client connection's life: its slot under the global and frontend `maxconn`,
//! its addresses, the `tcp-request connection|session` rules (`rules`), and the mux
//! that serves it (HTTP/1 or TCP passthrough).
//! HAProxy counterpart: session.c.

pub mod pp;
pub mod rules;
pub mod types;

pub use types::{ConnSlot, Session};

use std::net::SocketAddr;
use std::os::fd::RawFd;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::io::Parkable;
use crate::mux;
use crate::proxy::Runtime;
use crate::sample::ctx::ConnInfo;
use crate::sample::vars::VarStore;

impl Session {
    /// A session holding `slot`, which it releases when dropped, for a connection
    /// accepted on listener `listener` of the frontend (see [`ConnInfo::listener`]).
    ///
    /// PERF: the slot's own reference to the runtime is given up here, so that an idle
    /// connection holds one.
    pub fn new(peer: Option<SocketAddr>, fd: RawFd, lfd: i32, listener: u32, slot: ConnSlot) -> Session {
        let (rt, fe, counted) = slot.into_parts();
        let f = &rt.proxies[fe].fe;
        f.cum_conn.inc();
        if let Some(l) = f.listeners.get(listener as usize) {
            if counted.is_none() {
                l.conns.fetch_add(1, Ordering::Relaxed);
            }
            if let Some(c) = l.counters() {
                c.cum_conn.inc();
                let now = c.cur.fetch_add(1, Ordering::Relaxed) + 1;
                crate::counters::note_max(&c.max, now);
            }
        }
        Session { rt, fe, conn: ConnInfo { listener, ..ConnInfo::new(peer, fd) }, lfd }
    }
}

impl Session {
    /// The counters of the session's listener, under `option socket-stats`.
    pub fn listener_counters(&self) -> Option<&crate::counters::stats::ListenerStats> {
        self.rt.proxies[self.fe].fe.listeners.get(self.conn.listener as usize).and_then(|l| l.counters())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(l) = self.rt.proxies[self.fe].fe.listeners.get(self.conn.listener as usize) {
            release_listener(&self.rt, self.fe, l);
            if let Some(c) = l.counters() {
                c.cur.fetch_sub(1, Ordering::Relaxed);
            }
        }
        release(&self.rt, self.fe);
    }
}

/// Runs the `tcp-request connection` rules on a freshly accepted connection, reads its
/// PROXY header if `accept-proxy` or an `expect-proxy` rule asks for one, runs the
/// `tcp-request session` rules, then starts serving it on the current thread, unless
/// something closed it.
///
/// PERF: a frontend without such rules or `accept-proxy` goes straight to its mux.
pub fn start<S: Parkable>(sock: S, mut sess: Session) {
    let px = &sess.rt.proxies[sess.fe];
    if let Some(ka) = &px.clitcpka {
        crate::io::set_keepalive(&sock, ka);
    }
    if px.nolinger {
        crate::io::reset_on_close(&sock);
    }
    let bufs = &sess.rt.sockbufs;
    if bufs.client_set() {
        crate::io::set_sockbufs(&sock, bufs.client_rcv, bufs.client_snd);
    }
    let accept_proxy = px.fe.listeners.get(sess.conn.listener as usize).is_some_and(|l| l.accept_proxy);
    if !accept_proxy && px.rules.tcp_conn.is_empty() && px.rules.tcp_sess.is_empty() {
        log_connect(&sess);
        return spawn(sock, sess, None);
    }
    let passed = match rules::run_connection(&mut sess, &sock) {
        Ok(p) => p,
        Err(verdict) => return close(&sock, verdict),
    };
    if accept_proxy || passed.expect_proxy {
        // PERF: a header already in the socket costs no task of its own
        match pp::try_read_header(&sock) {
            Some(Ok(h)) => sess.conn.set_proxy_header(h),
            Some(Err(fail)) => return pp_failed(&sess, std::time::SystemTime::now(), fail),
            None => {
                drop(tokio::spawn(handshake(sock, sess, passed.vars)));
                return;
            }
        }
    }
    finish(sock, sess, passed.vars);
}

/// Waits for the PROXY header (within `timeout client`), then goes on as [`start`]
/// in the same task, the mux included.
async fn handshake<S: Parkable>(sock: S, mut sess: Session, vars: VarStore) {
    let px = &sess.rt.proxies[sess.fe];
    let accepted = std::time::SystemTime::now();
    let started = std::time::Instant::now();
    match pp::read_header(&sock, px.timeouts.client).await {
        Ok(h) => {
            sess.conn.set_proxy_header(h);
            sess.conn.add_handshake_time(started.elapsed());
        }
        Err(fail) => return pp_failed(&sess, accepted, fail),
    }
    log_connect(&sess);
    if let Some(tls) = listener_tls(&sess) {
        return tls_handshake(sock, sess, AfterTls::SessionRules(vars), tls).await;
    }
    match rules::run_session(&mut sess, vars, &sock) {
        rules::Accepted::Serve(vars) => serve_here(sock, sess, vars).await,
        other => close(&sock, other),
    }
}

/// A missing or bad PROXY header (waited for since `accepted`) closes the connection,
/// counts in `pp_failed` and is logged as HAProxy does (`log::setup::log_embryonic`).
fn pp_failed(sess: &Session, accepted: std::time::SystemTime, fail: pp::PpFail) {
    sess.rt.proxies[sess.fe].fe.pp_failed.inc();
    let null = matches!(fail, pp::PpFail::Empty | pp::PpFail::Abort | pp::PpFail::Timeout);
    log_embryonic(sess, accepted, &fail, null);
}

/// HAProxy's line for a connection that failed before it became a stream, when the
/// frontend logs (`log::setup::log_embryonic`).
fn log_embryonic(sess: &Session, accepted: std::time::SystemTime, fail: &dyn std::fmt::Display, null: bool) {
    let px = &sess.rt.proxies[sess.fe];
    let Some(pl) = px.log.as_deref() else { return };
    let listener = px.fe.listeners.get(sess.conn.listener as usize).and_then(|l| l.name.as_deref());
    crate::log::setup::log_embryonic((pl, &px.name, listener), &sess.conn, accepted, fail, null);
}

/// Runs the session rules, then serves the connection or closes it.
fn finish<S: Parkable>(sock: S, mut sess: Session, vars: VarStore) {
    log_connect(&sess);
    if let Some(tls) = listener_tls(&sess) {
        // as HAProxy: the handshake first, so that session rules can read `ssl_fc*`
        drop(tokio::spawn(tls_handshake(sock, sess, AfterTls::SessionRules(vars), tls)));
        return;
    }
    match rules::run_session(&mut sess, vars, &sock) {
        rules::Accepted::Serve(vars) => spawn(sock, sess, vars),
        other => close(&sock, other),
    }
}

/// HAProxy's `Connect from` line, for a frontend that logs without a format, once the
/// connection's addresses are known (after its PROXY header).
fn log_connect(sess: &Session) {
    let px = &sess.rt.proxies[sess.fe];
    if let Some(pl) = px.log.as_deref() {
        crate::log::setup::log_connect(pl, &px.name, px.fe.http, &sess.conn);
    }
}

/// Prepares the close the rules asked for; the caller then drops the socket.
fn close<S: Parkable>(sock: &S, verdict: rules::Accepted) {
    match verdict {
        // HAProxy resets a connection its connection rules refused (no TIME_WAIT left)
        rules::Accepted::Reset => crate::io::reset_on_close(sock),
        rules::Accepted::SilentDrop => crate::io::silent_drop(sock),
        // as HAProxy: a plain close, a reset if the client's first bytes are unread
        rules::Accepted::Close | rules::Accepted::Serve(_) => {}
    }
}

/// Starts serving a connection on the current thread, with the `sess.` variables the
/// connection rules set (after its TLS handshake, for a `bind ... ssl` listener).
fn spawn<S: Parkable>(sock: S, sess: Session, vars: Option<Box<VarStore>>) {
    if let Some(tls) = listener_tls(&sess) {
        drop(tokio::spawn(tls_handshake(sock, sess, AfterTls::Serve(vars), tls)));
        return;
    }
    serve(sock, sess, vars);
}

/// The TLS configuration of the listener the connection came through (`bind ... ssl`).
fn listener_tls(sess: &Session) -> Option<std::sync::Arc<crate::tls::bind::BindTls>> {
    sess.rt.proxies[sess.fe].fe.listeners.get(sess.conn.listener as usize).and_then(|l| l.tls.clone())
}

/// What follows a completed handshake.
enum AfterTls {
    /// The `tcp-request session` rules, then the mux.
    SessionRules(VarStore),
    /// The mux, with the `sess.` variables the connection rules set.
    Serve(Option<Box<VarStore>>),
}

/// Completes the TLS handshake of a `bind ... ssl` connection within `timeout client`
/// (after the connection rules and the PROXY header, before the session rules, as
/// HAProxy), then goes on. A failed handshake closes the connection, counts in the
/// frontend's `tls_failed` and is logged with HAProxy's error string.
async fn tls_handshake<S: Parkable>(
    sock: S,
    mut sess: Session,
    next: AfterTls,
    tls: std::sync::Arc<crate::tls::bind::BindTls>,
) {
    // `maxsslconn`: past it the connection closes before the handshake, as HAProxy's
    // "Too many SSL connections"
    let Some(slot) = sess.rt.global.ssl.try_acquire() else { return };
    sess.conn.set_ssl_slot(slot);
    let px = &sess.rt.proxies[sess.fe];
    let accepted = std::time::SystemTime::now();
    let started = std::time::Instant::now();
    let mut served = None;
    let mut verifier = None;
    let choose = |hello: &rustls::server::ClientHello<'_>| {
        // the certificate the resolver serves, for `ssl_f_*`
        served = tls.resolver.resolve_for(hello.server_name(), hello.signature_schemes()).map(crate::tls::LocalCert);
        // the verifier of the configuration chosen (a crt-list line's, else the
        // bind's), asked again for what `ssl_c_verify` and the error fetches report
        let (config, v) = tls.choose(hello)?;
        verifier = v;
        Ok(config)
    };
    match crate::tls::stream::accept(sock, px.timeouts.client, choose).await {
        Ok(t) => {
            if let Some(mut info) = t.with_conn(crate::tls::TlsInfo::of) {
                info.local_cert = served;
                if let Some(v) = verifier {
                    info.verify = v.outcome(&info.peer_certs);
                }
                sess.conn.set_tls(info);
            }
            sess.conn.add_handshake_time(started.elapsed());
            match next {
                AfterTls::Serve(vars) => serve(t, sess, vars),
                AfterTls::SessionRules(vars) => match rules::run_session(&mut sess, vars, &t) {
                    rules::Accepted::Serve(vars) => serve(t, sess, vars),
                    other => close(&t, other),
                },
            }
        }
        Err(e) => {
            px.fe.tls_failed.inc();
            let null =
                matches!(e, crate::tls::stream::HandshakeError::Closed | crate::tls::stream::HandshakeError::Io(_));
            log_embryonic(&sess, accepted, &e.haproxy_msg(), null);
        }
    }
}

/// Starts the connection's mux in a task of its own.
fn serve<S: Parkable>(sock: S, sess: Session, vars: Option<Box<VarStore>>) {
    mux::spawn(sock, sess, vars);
}

/// Runs the connection's mux in the calling task (one that had to wait for a PROXY
/// header already).
async fn serve_here<S: Parkable>(sock: S, sess: Session, vars: Option<Box<VarStore>>) {
    mux::serve(sock, sess, vars).await;
}

impl ConnSlot {
    /// Takes a slot if the global, frontend and listener `li` limits allow one more
    /// connection.
    pub fn try_acquire(rt: &Arc<Runtime>, fe: usize, li: u32) -> Option<ConnSlot> {
        let g = &rt.global;
        if g.cur_conns.fetch_add(1, Ordering::AcqRel) >= g.maxconn() {
            g.cur_conns.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        let f = &rt.proxies[fe].fe;
        let before = f.cur_conns.fetch_add(1, Ordering::AcqRel);
        if before >= f.maxconn() {
            f.cur_conns.fetch_sub(1, Ordering::AcqRel);
            g.cur_conns.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        // `bind ... maxconn`: counted here, before the accept, so that threads sharing
        // the listener cannot pass the limit together
        let listener = match f.listeners.get(li as usize).filter(|l| l.maxconn != 0) {
            Some(l) if l.conns.fetch_add(1, Ordering::AcqRel) >= l.maxconn => {
                l.conns.fetch_sub(1, Ordering::AcqRel);
                f.cur_conns.fetch_sub(1, Ordering::AcqRel);
                g.cur_conns.fetch_sub(1, Ordering::AcqRel);
                return None;
            }
            Some(_) => Some(li),
            None => None,
        };
        crate::counters::note_max(&rt.proxies[fe].stats.fe_smax, before + 1);
        Some(ConnSlot { rt: Some(rt.clone()), fe, listener })
    }

    /// The slot's runtime and frontend, and the listener that counted it already, the
    /// release left to the caller.
    fn into_parts(mut self) -> (Arc<Runtime>, usize, Option<u32>) {
        let rt = self.rt.take().expect("a slot is handed over once");
        (rt, self.fe, self.listener)
    }

    /// Whether a slot could be taken now on listener `li` (no reservation).
    pub fn available(rt: &Runtime, fe: usize, li: u32) -> bool {
        let f = &rt.proxies[fe].fe;
        rt.global.cur_conns.load(Ordering::Acquire) < rt.global.maxconn()
            && f.cur_conns.load(Ordering::Acquire) < f.maxconn()
            && f.listeners
                .get(li as usize)
                .is_none_or(|l| l.maxconn == 0 || l.conns.load(Ordering::Acquire) < l.maxconn)
    }
}

impl Drop for ConnSlot {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            if let Some(l) = self.listener.and_then(|li| rt.proxies[self.fe].fe.listeners.get(li as usize)) {
                release_listener(&rt, self.fe, l);
            }
            release(&rt, self.fe);
        }
    }
}

/// Gives back one connection of listener `l`, waking the accept loops of the frontend
/// if `l` was at its `bind ... maxconn`.
fn release_listener(rt: &Runtime, fe: usize, l: &crate::proxy::ListenerRt) {
    if l.conns.fetch_sub(1, Ordering::AcqRel) >= l.maxconn && l.maxconn != 0 {
        rt.proxies[fe].fe.conn_released.notify_waiters();
    }
}

/// Gives back one connection of the global and frontend `maxconn`, waking accept loops
/// paused at the limit.
fn release(rt: &Runtime, fe: usize) {
    let g = &rt.global;
    if g.cur_conns.fetch_sub(1, Ordering::AcqRel) >= g.maxconn() {
        g.conn_released.notify_waiters();
    }
    let f = &rt.proxies[fe].fe;
    if f.cur_conns.fetch_sub(1, Ordering::AcqRel) >= f.maxconn() {
        f.conn_released.notify_waiters();
    }
    if g.is_stopping() {
        // The main thread waits for the last connection of a soft stop.
        g.conn_released.notify_waiters();
    }
}
