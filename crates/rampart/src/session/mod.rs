//! One client connection's life: its slot under the global and frontend `maxconn`,
//! its addresses, the `tcp-request connection|session` rules (`rules`), and the mux
//! that serves it (HTTP/1 or TCP passthrough).
//! HAProxy counterpart: session.c.

pub mod rules;

use std::net::SocketAddr;
use std::os::fd::RawFd;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::mux;
use crate::proxy::Runtime;
use crate::sample::ctx::ConnInfo;
use crate::sample::vars::VarStore;

/// A client connection and where it came in.
#[derive(Debug)]
pub struct Session {
    pub rt: Arc<Runtime>,
    /// Index of the frontend that accepted it.
    pub fe: usize,
    /// The connection's addresses as rules see them (client address `conn.src`,
    /// `None` for unix sockets).
    pub conn: ConnInfo,
    /// The listening socket it came through (for `-d` output).
    pub lfd: i32,
}

impl Session {
    /// A session holding `slot`, which it releases when dropped, for a connection
    /// accepted on listener `listener` of the frontend (see [`ConnInfo::listener`]).
    ///
    /// PERF: the slot's own reference to the runtime is given up here, so that an idle
    /// connection holds one.
    pub fn new(peer: Option<SocketAddr>, fd: RawFd, lfd: i32, listener: u32, slot: ConnSlot) -> Session {
        let (rt, fe) = slot.into_parts();
        rt.proxies[fe].fe.cum_conn.inc();
        Session { rt, fe, conn: ConnInfo { listener, ..ConnInfo::new(peer, fd) }, lfd }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        release(&self.rt, self.fe);
    }
}

/// Runs the `tcp-request connection` and `session` rules on a freshly accepted
/// connection, then starts serving it on the current thread, unless they closed it.
///
/// PERF: a frontend without such rules goes straight to its mux.
pub fn start<S: mux::h1::park::Parkable>(sock: S, mut sess: Session) {
    if let Some(pl) = sess.rt.proxies[sess.fe].log.as_deref() {
        crate::log::setup::log_connect(&sess.rt, sess.fe, pl, &sess.conn);
    }
    let fe_rules = &sess.rt.proxies[sess.fe].rules;
    if fe_rules.tcp_conn.is_empty() && fe_rules.tcp_sess.is_empty() {
        return spawn(sock, sess, None);
    }
    match rules::run(&mut sess) {
        rules::Accepted::Serve(vars) => spawn(sock, sess, vars),
        // HAProxy resets a connection its connection rules refused (no TIME_WAIT left)
        rules::Accepted::Reset => crate::io::reset_on_close(&sock),
        // as HAProxy: a plain close, a reset if the client's first bytes are unread
        rules::Accepted::Close => {}
        rules::Accepted::SilentDrop => crate::io::silent_drop(&sock),
    }
}

/// Starts serving a connection on the current thread, with the `sess.` variables the
/// connection rules set.
///
/// PERF: each mux is its own task type, so an idle HTTP connection's task is as small
/// as the HTTP mux's idle state, not as large as the biggest mux.
fn spawn<S: mux::h1::park::Parkable>(sock: S, sess: Session, vars: Option<Box<VarStore>>) {
    if sess.rt.proxies[sess.fe].fe.http {
        drop(tokio::spawn(mux::h1::serve(sock, sess, vars)));
    } else {
        drop(tokio::spawn(mux::pt::serve(sock, sess, vars)));
    }
}

/// One connection counted against the global and the frontend `maxconn`; released on
/// drop, waking accept loops paused at the limit.
#[derive(Debug)]
pub struct ConnSlot {
    /// `None` once handed over to a session.
    rt: Option<Arc<Runtime>>,
    fe: usize,
}

impl ConnSlot {
    /// Takes a slot if both limits allow one more connection.
    pub fn try_acquire(rt: &Arc<Runtime>, fe: usize) -> Option<ConnSlot> {
        let g = &rt.global;
        if g.cur_conns.fetch_add(1, Ordering::AcqRel) >= g.maxconn {
            g.cur_conns.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        let f = &rt.proxies[fe].fe;
        if f.cur_conns.fetch_add(1, Ordering::AcqRel) >= f.maxconn {
            f.cur_conns.fetch_sub(1, Ordering::AcqRel);
            g.cur_conns.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        Some(ConnSlot { rt: Some(rt.clone()), fe })
    }

    /// The slot's runtime and frontend, the release left to the caller.
    fn into_parts(mut self) -> (Arc<Runtime>, usize) {
        let rt = self.rt.take().expect("a slot is handed over once");
        (rt, self.fe)
    }

    /// Whether a slot could be taken now (no reservation).
    pub fn available(rt: &Runtime, fe: usize) -> bool {
        rt.global.cur_conns.load(Ordering::Acquire) < rt.global.maxconn
            && rt.proxies[fe].fe.cur_conns.load(Ordering::Acquire) < rt.proxies[fe].fe.maxconn
    }
}

impl Drop for ConnSlot {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            release(&rt, self.fe);
        }
    }
}

/// Gives back one connection of the global and frontend `maxconn`, waking accept loops
/// paused at the limit.
fn release(rt: &Runtime, fe: usize) {
    let g = &rt.global;
    if g.cur_conns.fetch_sub(1, Ordering::AcqRel) >= g.maxconn {
        g.conn_released.notify_waiters();
    }
    let f = &rt.proxies[fe].fe;
    if f.cur_conns.fetch_sub(1, Ordering::AcqRel) >= f.maxconn {
        f.conn_released.notify_waiters();
    }
    if g.is_stopping() {
        // The main thread waits for the last connection of a soft stop.
        g.conn_released.notify_waiters();
    }
}
