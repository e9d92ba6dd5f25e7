//! Event rates for the stats (`rate`, `req_rate`, `conn_rate` and their maxima,
//! `ConnRate`, `SessRate`): a task on the main thread samples the per-thread counters
//! once a second and keeps the last second's count and the highest seen, so the
//! request path pays nothing for them.
//!
//! COMPAT: HAProxy keeps a sliding one-second window per event (a shared atomic
//! per event); here the rate is the count of the last whole second sampled, so it lags
//! by up to a second.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::proxy::Runtime;

/// One rate: the total at the last sample, the last second's count, the maximum.
#[derive(Debug, Default)]
pub struct RateCell {
    prev: AtomicU64,
    cur: AtomicU32,
    max: AtomicU32,
    /// Samples taken (the rate is known from the second one).
    samples: AtomicU32,
}

impl RateCell {
    /// Records the counter's `total` now, one second after the previous sample.
    pub fn sample(&self, total: u64) {
        let prev = self.prev.swap(total, Ordering::Relaxed);
        if self.samples.fetch_add(1, Ordering::Relaxed) == 0 {
            return;
        }
        let n = u32::try_from(total.saturating_sub(prev)).unwrap_or(u32::MAX);
        self.cur.store(n, Ordering::Relaxed);
        self.max.fetch_max(n, Ordering::Relaxed);
    }

    /// The last second's count; `None` before the second sample.
    pub fn current(&self) -> Option<u32> {
        self.known().then(|| self.cur.load(Ordering::Relaxed))
    }

    /// The highest count of a second so far; `None` before the second sample.
    pub fn max(&self) -> Option<u32> {
        self.known().then(|| self.max.load(Ordering::Relaxed))
    }

    /// Forgets the maximum (`clear counters`).
    pub fn clear_max(&self) {
        self.max.store(self.cur.load(Ordering::Relaxed), Ordering::Relaxed);
    }

    fn known(&self) -> bool {
        self.samples.load(Ordering::Relaxed) >= 2
    }
}

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
                srv.stats.sess_rate.sample(srv.stats.stot.get());
            }
        }
    }
    rt.stats.conn_rate.sample(conns);
    rt.stats.sess_rate.sample(sess);
}

/// Samples once a second, forever (a task of the worker's main thread).
pub async fn run(rt: Arc<Runtime>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        sample(&rt);
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
