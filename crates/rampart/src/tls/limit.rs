//! `maxsslconn` and `maxsslrate`: the TLS connections the process holds at once,
//! incoming and outgoing together (one deciphered then ciphered again counts twice),
//! and the connections per second its TLS listeners accept (counted before the
//! handshake, so that bad handshakes cost their share too).
//! HAProxy counterpart: `global.maxsslconn`/`sslconns` in `ssl_sock_init()` and
//! `ssl_sock_close()`, `global.ssl_lim`/`ssl_per_sec` in `listener_accept()`
//! (src/ssl_sock.c, src/listener.c).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use crate::counters::accept_rate::AcceptRate;
use crate::tls::types::SslCount;
pub use crate::tls::types::SslSlot;

/// The TLS connection counts and limits of the process.
#[derive(Debug)]
pub struct SslLimits {
    /// `maxsslconn` (0: no limit).
    max_conns: u32,
    /// Shared with each [`SslSlot`], which gives its count back when dropped.
    count: Arc<SslCount>,
    /// `maxsslrate`, only built when set.
    rate: Option<AcceptRate>,
    /// `maxsslrate` as set (0: none), for `show info`.
    rate_limit: u32,
}

impl SslLimits {
    pub fn new(max_conns: u32, rate: u32) -> SslLimits {
        SslLimits {
            max_conns,
            count: Arc::default(),
            rate: (rate > 0).then(|| AcceptRate::new(rate)),
            rate_limit: rate,
        }
    }

    /// Counts one more TLS connection, unless `maxsslconn` of them are open already
    /// (`None`: HAProxy's "Too many SSL connections", the connection is not made).
    pub fn try_acquire(&self) -> Option<SslSlot> {
        let before = self.count.cur.fetch_add(1, Ordering::AcqRel);
        if self.max_conns != 0 && before >= self.max_conns {
            self.count.cur.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        self.count.cum.fetch_add(1, Ordering::Relaxed);
        Some(SslSlot(self.count.clone()))
    }

    /// `maxsslrate`: whether a TLS listener may accept now; `Err` is how long to
    /// pause first.
    pub fn check_rate(&self) -> Result<(), Duration> {
        self.rate.as_ref().map_or(Ok(()), AcceptRate::check)
    }

    /// Counts a connection a TLS listener accepted, against `maxsslrate`.
    pub fn count_rate(&self) {
        if let Some(r) = &self.rate {
            r.count();
        }
    }

    /// `show info`'s `MaxSslConns`, `CurrSslConns`, `CumSslConns`, `SslRateLimit`.
    pub fn max_conns(&self) -> u32 {
        self.max_conns
    }

    pub fn cur_conns(&self) -> u32 {
        self.count.cur.load(Ordering::Relaxed)
    }

    pub fn cum_conns(&self) -> u64 {
        self.count.cum.load(Ordering::Relaxed)
    }

    pub fn rate_limit(&self) -> u32 {
        self.rate_limit
    }
}

#[cfg(test)]
mod tests {
    use super::SslLimits;

    #[test]
    fn maxsslconn_counts_until_the_slots_are_dropped() {
        let l = SslLimits::new(2, 0);
        let a = l.try_acquire().expect("first");
        let b = l.try_acquire().expect("second");
        assert!(l.try_acquire().is_none(), "a third is refused");
        assert_eq!((l.cur_conns(), l.cum_conns()), (2, 2));
        drop(a);
        let c = l.try_acquire().expect("room again");
        assert_eq!((l.cur_conns(), l.cum_conns()), (2, 3));
        drop((b, c));
        assert_eq!(l.cur_conns(), 0);
        // no limit: counted only
        let free = SslLimits::new(0, 0);
        let slots: Vec<_> = (0..100).filter_map(|_| free.try_acquire()).collect();
        assert_eq!((slots.len(), free.cur_conns()), (100, 100));
        assert!(free.check_rate().is_ok());
    }

    #[test]
    fn maxsslrate_pauses_past_the_limit() {
        let l = SslLimits::new(0, 3);
        for _ in 0..3 {
            assert!(l.check_rate().is_ok());
            l.count_rate();
        }
        assert!(l.check_rate().is_err());
        assert_eq!(l.rate_limit(), 3);
    }
}
