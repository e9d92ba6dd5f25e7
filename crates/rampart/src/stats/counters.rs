//! The counters `show stat` reads that the proxies do not keep themselves: requests and
//! responses by status class per frontend, backend and server, server sessions, and
//! the highest concurrent sessions seen. Per-thread [`Counter`]s (no locked instruction
//! per request); the maxima are relaxed atomics written only when a new maximum is
//! reached. HAProxy counterpart: the fe/be/srv counters of counters-t.h.
//!
//! Another module adds a counter by adding a field here (built in [`ProxyStats::new`] /
//! [`ServerStats::new`]), bumping it where the event happens, and reading it in
//! `stats::stat` under its HAProxy field name.

use std::sync::atomic::Ordering;

pub use crate::counters::stats::{ByClass, ProxyStats, ServerStats};
use crate::counters::Counter;
use crate::proxy::Runtime;

pub use crate::counters::note_max;

/// Counts one HTTP exchange that ended: a request on frontend `fe`, on backend `be`
/// and server `srv` when they were chosen, and its response status (`None`: no
/// response reached the client, or rampart sent a raw error file it did not parse).
pub fn count_http(rt: &Runtime, fe: usize, be: Option<usize>, srv: Option<usize>, status: Option<u16>) {
    let f = &rt.proxies[fe].stats;
    f.fe_req.inc();
    if let Some(st) = status {
        f.fe_rsp.count(st);
    }
    let Some(be) = be else { return };
    let b = &rt.proxies[be];
    b.stats.be_req.inc();
    if let Some(st) = status {
        b.stats.be_rsp.count(st);
    }
    if let Some(s) = srv.and_then(|s| b.be.servers.get(s)) {
        s.stats.req().inc();
        if let Some(st) = status {
            s.stats.count_rsp(st);
        }
    }
}

/// Counts the bytes of one exchange or session, (from the client, to the client), on
/// its frontend and listener (`fe`: the frontend, the listener's index in it), backend
/// and server (per-thread counters).
pub fn count_bytes(rt: &Runtime, fe: (usize, u32), be: Option<usize>, srv: Option<usize>, (bin, bout): (u64, u64)) {
    let px = &rt.proxies[fe.0];
    px.stats.fe_bin.add(bin);
    px.stats.fe_bout.add(bout);
    if let Some(c) = px.fe.listeners.get(fe.1 as usize).and_then(|l| l.counters()) {
        c.bin.add(bin);
        c.bout.add(bout);
    }
    let Some(be) = be else { return };
    let b = &rt.proxies[be];
    b.stats.be_bin.add(bin);
    b.stats.be_bout.add(bout);
    if let Some(s) = srv.and_then(|s| b.be.servers.get(s)) {
        s.stats.bin().add(bin);
        s.stats.bout().add(bout);
    }
}

/// Counts a server connection of backend `be`, server `srv`: a new attempt, or a
/// reuse of an idle or kept one.
pub fn count_server_conn(rt: &Runtime, be: usize, srv: usize, reused: bool) {
    let b = &rt.proxies[be];
    let Some(s) = b.be.servers.get(srv) else { return };
    if reused {
        b.stats.be_reuse.inc();
        s.stats.reuse().inc();
    } else {
        b.stats.be_connect.inc();
        s.stats.connect().inc();
    }
}

/// `clear counters [all]`: the maxima (concurrent sessions, rates) restart from the
/// current values; with `all`, every counter of every proxy and server restarts from 0.
pub fn clear(rt: &Runtime, all: bool) {
    for px in &rt.proxies {
        let st = &px.stats;
        st.fe_smax.store(px.fe.cur_conns.load(Ordering::Relaxed), Ordering::Relaxed);
        for r in [&st.fe_conn_rate, &st.fe_sess_rate, &st.fe_req_rate, &st.be_sess_rate] {
            r.clear_max();
        }
        for srv in &px.be.servers {
            srv.stats.smax.store(srv.cur_conns.load(Ordering::Relaxed), Ordering::Relaxed);
            srv.stats.sess_rate.clear_max();
        }
        for c in px.fe.listeners.iter().filter_map(|l| l.counters()) {
            c.max.store(c.cur.load(Ordering::Relaxed), Ordering::Relaxed);
            if all {
                c.all().into_iter().for_each(Counter::clear);
            }
        }
        if !all {
            continue;
        }
        let fe = &px.fe;
        let proxy_counters = [
            &fe.cum_conn,
            &fe.denied_conn,
            &fe.denied_sess,
            &fe.denied_req,
            &px.be.cum_conn,
            &st.fe_req,
            &st.be_req,
            &st.fe_ereq,
            &st.fe_intercepted,
            &st.be_econ,
            &st.be_eresp,
            &st.be_wretr,
            &st.be_wredis,
            &st.be_lbtot,
            &st.fe_bin,
            &st.be_connect,
            &st.be_reuse,
            &st.fe_dresp,
            &st.be_dresp,
            &st.fe_bout,
            &st.be_bin,
            &st.be_bout,
        ];
        let comp =
            [&st.fe_comp, &st.be_comp].into_iter().flat_map(|c| [&c.bytes_in, &c.bytes_out, &c.bypassed, &c.responses]);
        let h2 = st.fe_h2.counters();
        proxy_counters
            .into_iter()
            .chain(&st.fe_rsp.0)
            .chain(&st.be_rsp.0)
            .chain(comp)
            .chain(h2)
            .for_each(Counter::clear);
        for srv in &px.be.servers {
            srv.stats.all().for_each(crate::counters::CounterRef::clear);
        }
    }
    rt.stats.conn_rate.clear_max();
    rt.stats.sess_rate.clear_max();
}

/// Which error of a server exchange to count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SrvError {
    /// Every connection attempt failed (`econ`).
    Connect,
    /// A connection attempt is retried, on the same server or (`redispatch`) another one
    /// (`wretr`, and `wredis`).
    Retry { redispatch: bool },
    /// The response failed (`eresp`).
    Response,
}

/// Counts `err` on backend `be` and its server `srv`.
pub fn count_srv_error(rt: &Runtime, be: usize, srv: Option<usize>, err: SrvError) {
    let p = &rt.proxies[be];
    let s = srv.and_then(|s| p.be.servers.get(s)).map(|s| &s.stats);
    let (b, sv) = match err {
        SrvError::Connect => (&p.stats.be_econ, s.map(|s| s.econ())),
        SrvError::Response => (&p.stats.be_eresp, s.map(|s| s.eresp())),
        SrvError::Retry { redispatch } => {
            if redispatch {
                p.stats.be_wredis.inc();
                if let Some(s) = s {
                    s.wredis().inc();
                }
            }
            (&p.stats.be_wretr, s.map(|s| s.wretr()))
        }
    };
    b.inc();
    if let Some(c) = sv {
        c.inc();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counters_add_up() {
        let st = ProxyStats::new(&mut crate::counters::CounterSlab::new(1), false);
        st.fe_bin.add(10);
        st.fe_bin.add(5);
        assert_eq!(st.fe_bin.get(), 15);
    }
}
