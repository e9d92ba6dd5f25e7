//! A server address that DNS or the runtime API may change while streams read it: a
//! sequence lock over plain atomics. Readers (one per connection attempt) take three
//! relaxed loads between two acquire loads of the sequence and retry only while a
//! write is under way; the rare writers (the resolver, `set server addr`) are
//! serialized by the sequence itself.
//! HAProxy counterpart: `srv->addr` under the server lock (`srv_update_addr()`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{fence, AtomicU64, Ordering};

/// An address readable from every thread without a lock.
#[derive(Debug)]
pub struct AddrCell {
    /// Even: stable; odd: a write is under way.
    seq: AtomicU64,
    /// The IPv6 address (an IPv4 one is stored mapped, `::ffff:a.b.c.d`).
    hi: AtomicU64,
    lo: AtomicU64,
    /// The port in the low 16 bits, bit 16 set for an IPv6 address.
    meta: AtomicU64,
}

impl AddrCell {
    pub fn new(addr: SocketAddr) -> AddrCell {
        let (hi, lo, meta) = encode(addr);
        AddrCell { seq: AtomicU64::new(0), hi: AtomicU64::new(hi), lo: AtomicU64::new(lo), meta: AtomicU64::new(meta) }
    }

    /// The current address.
    #[inline]
    pub fn get(&self) -> SocketAddr {
        loop {
            let before = self.seq.load(Ordering::Acquire);
            let (hi, lo, meta) =
                (self.hi.load(Ordering::Relaxed), self.lo.load(Ordering::Relaxed), self.meta.load(Ordering::Relaxed));
            fence(Ordering::Acquire);
            if before & 1 == 0 && self.seq.load(Ordering::Relaxed) == before {
                return decode(hi, lo, meta);
            }
            std::hint::spin_loop();
        }
    }

    /// The current IP address.
    #[inline]
    pub fn ip(&self) -> IpAddr {
        self.get().ip()
    }

    /// The current port.
    #[inline]
    pub fn port(&self) -> u16 {
        self.get().port()
    }

    /// Replaces the address; returns the previous one.
    pub fn set(&self, addr: SocketAddr) -> SocketAddr {
        let mut seq = self.seq.load(Ordering::Relaxed);
        loop {
            if seq & 1 == 0 {
                match self.seq.compare_exchange_weak(seq, seq + 1, Ordering::Acquire, Ordering::Relaxed) {
                    Ok(_) => {
                        // the data stores below are not seen before the odd sequence
                        fence(Ordering::Release);
                        break;
                    }
                    Err(now) => seq = now,
                }
            } else {
                std::hint::spin_loop();
                seq = self.seq.load(Ordering::Relaxed);
            }
        }
        let old =
            decode(self.hi.load(Ordering::Relaxed), self.lo.load(Ordering::Relaxed), self.meta.load(Ordering::Relaxed));
        let (hi, lo, meta) = encode(addr);
        self.hi.store(hi, Ordering::Relaxed);
        self.lo.store(lo, Ordering::Relaxed);
        self.meta.store(meta, Ordering::Relaxed);
        self.seq.store(seq + 2, Ordering::Release);
        old
    }
}

fn encode(addr: SocketAddr) -> (u64, u64, u64) {
    let (bits, v6) = match addr.ip() {
        IpAddr::V4(v4) => (u128::from(v4.to_ipv6_mapped()), 0),
        IpAddr::V6(v6) => (u128::from(v6), 1 << 16),
    };
    ((bits >> 64) as u64, bits as u64, v6 | u64::from(addr.port()))
}

fn decode(hi: u64, lo: u64, meta: u64) -> SocketAddr {
    let v6 = Ipv6Addr::from((u128::from(hi) << 64) | u128::from(lo));
    let ip = match (meta >> 16) & 1 {
        0 => IpAddr::V4(v6.to_ipv4_mapped().unwrap_or(Ipv4Addr::UNSPECIFIED)),
        _ => IpAddr::V6(v6),
    };
    SocketAddr::new(ip, meta as u16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn both_families_round_trip() {
        for text in ["127.0.0.1:80", "0.0.0.0:0", "[::1]:443", "[::ffff:1.2.3.4]:8080", "[fe80::1]:65535"] {
            let a: SocketAddr = text.parse().unwrap();
            let cell = AddrCell::new(a);
            assert_eq!(cell.get(), a, "{text}");
            assert_eq!(cell.set("10.0.0.1:1".parse().unwrap()), a);
            assert_eq!(cell.get(), "10.0.0.1:1".parse::<SocketAddr>().unwrap());
        }
    }

    #[test]
    fn readers_never_see_a_torn_address() {
        let a: SocketAddr = "10.0.0.1:1111".parse().unwrap();
        let b: SocketAddr = "[fd00::2]:2222".parse().unwrap();
        let cell = Arc::new(AddrCell::new(a));
        let writer = {
            let cell = cell.clone();
            std::thread::spawn(move || {
                for i in 0..20_000 {
                    cell.set(if i % 2 == 0 { b } else { a });
                }
            })
        };
        for _ in 0..200_000 {
            let got = cell.get();
            assert!(got == a || got == b, "torn read {got}");
        }
        writer.join().unwrap();
    }
}
