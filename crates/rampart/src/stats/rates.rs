//! Event rates for the stats (`rate`, `req_rate`, `conn_rate` and their maxima,
//! `ConnRate`, `SessRate`), and the CPU usage `maxcompcpuusage` compares with: a task on the main thread samples the per-thread counters
//! once a second and keeps the last second's count and the highest seen, so the
//! request path pays nothing for them.
//!
//! The same task forgets the expired entries of the stick tables once a second (each
//! shard pops the heads of its expiry order: no scan), so idle keys leave even when
//! nothing touches their shard (HAProxy's `process_table_expire()` task).
//!
//! COMPAT: HAProxy keeps a sliding one-second window per event (a shared atomic
//! per event); here the rate is the count of the last whole second sampled, so it lags
//! by up to a second.

use std::sync::Arc;
use std::time::Duration;

pub use crate::counters::rate::RateCell;
use crate::proxy::Runtime;

/// Samples every counter with a rate once.
pub fn sample(rt: &Runtime) {
    let (mut conns, mut sess) = (0, 0);
    for px in &rt.proxies {
        let st = &px.stats;
        if px.cap.frontend {
            let c = px.fe.cum_conn.get();
            let s = c.saturating_sub(px.fe.denied_conn.get());
            st.fe_conn_rate.sample(c);
            st.fe_sess_rate.sample(s);
            st.fe_req_rate.sample(st.fe_req.get());
            conns += c;
            sess += s;
        }
        if px.cap.backend {
            st.be_sess_rate.sample(px.be.cum_conn.get());
            for srv in &px.be.servers {
                srv.stats.sess_rate.sample(srv.stats.stot().get());
            }
        }
    }
    rt.stats.conn_rate.sample(conns);
    rt.stats.sess_rate.sample(sess);
    if rt.comp_limits.watches_cpu() {
        // `maxcompcpuusage`: the process's CPU time over the last second
        if let Ok(t) = nix::time::clock_gettime(nix::time::ClockId::CLOCK_PROCESS_CPUTIME_ID) {
            let cpu = std::time::Duration::from(t);
            rt.comp_limits.sample_cpu(cpu, rt.stats.nbthread);
        }
    }
}

/// Samples once a second and purges the tables, forever (a task of the worker's main
/// thread).
pub async fn run(rt: Arc<Runtime>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        sample(&rt);
        for t in rt.proxies.iter().filter_map(|p| p.table.as_deref()) {
            t.purge_expired();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_is_the_last_seconds_count_and_its_maximum_stays() {
        let r = RateCell::default();
        r.sample(10);
        assert_eq!(r.current(), None, "one sample gives no rate");
        r.sample(15);
        assert_eq!((r.current(), r.max()), (Some(5), Some(5)));
        r.sample(17);
        assert_eq!((r.current(), r.max()), (Some(2), Some(5)));
    }
}
