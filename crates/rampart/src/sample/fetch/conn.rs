//! Fetches of the client connection: addresses and ports (`src`, `dst`, `fc_*`).
//! HAProxy counterpart: src/tcp_sample.c, src/connection.c.
//!
//! Not yet (rejected as unknown): `src_is_local`/`dst_is_local` (need the local
//! interfaces), `fc_rtt` and the other `TCP_INFO` counters, `bc_*` (server side),
//! `fc_err*`. The PROXY-protocol fetches are in `fetch::pp`.

use std::net::{IpAddr, SocketAddr};

use crate::sample::ctx::SampleCtx;
use crate::sample::kw::{uses, Arg, ArgSpec, FetchKw};
use crate::sample::types::{Sample, SmpType};

use super::Emit;

fn ip(a: SocketAddr) -> Sample<'static> {
    match a.ip() {
        IpAddr::V4(v4) => Sample::Ipv4(v4),
        IpAddr::V6(v6) => Sample::Ipv6(v6),
    }
}

fn fetch_src<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(a) = ctx.conn.src {
        emit(ip(a));
    }
}

fn fetch_src_port<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(a) = ctx.conn.src {
        emit(Sample::Sint(i64::from(a.port())));
    }
}

fn fetch_dst<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(a) = ctx.conn.dst() {
        emit(ip(a));
    }
}

fn fetch_dst_port<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(a) = ctx.conn.dst() {
        emit(Sample::Sint(i64::from(a.port())));
    }
}

/// `fc_src`: the socket's peer, not a PROXY header's client (`ConnInfo::fc_src`).
fn fetch_fc_src<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(a) = ctx.conn.fc_src() {
        emit(ip(a));
    }
}

fn fetch_fc_src_port<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(a) = ctx.conn.fc_src() {
        emit(Sample::Sint(i64::from(a.port())));
    }
}

/// `fc_dst`: the socket's local address, not a PROXY header's destination.
fn fetch_fc_dst<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(a) = ctx.conn.fc_dst() {
        emit(ip(a));
    }
}

fn fetch_fc_dst_port<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(a) = ctx.conn.fc_dst() {
        emit(Sample::Sint(i64::from(a.port())));
    }
}

/// `fc_http_major`: 1 for HTTP/1 (the only protocol rampart serves yet).
fn fetch_fc_http_major<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if ctx.req.is_some() {
        emit(Sample::Sint(1));
    }
}

/// `fc_glitches` (HAProxy 3.x): the glitches the HTTP/2 mux counted on the client
/// connection (`mux::h2::glitch`); no value on an HTTP/1 or TCP connection, as
/// HAProxy 3.2 whose HTTP/1 mux counts none.
fn fetch_fc_glitches<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(n) = ctx.conn.glitches() {
        emit(Sample::Sint(i64::from(n)));
    }
}

const L4: u32 = uses::L4CLI;

// COMPAT: `src`/`dst` are declared ipv4 as in HAProxy 2.6 (so `src,ipmask(24)`
// compiles) and return ipv6 for IPv6 clients, casts applying at run time.
pub const KEYWORDS: &[FetchKw] = &[
    FetchKw::new("src", ArgSpec::NONE, SmpType::Ipv4, fetch_src).uses(L4),
    FetchKw::new("src_port", ArgSpec::NONE, SmpType::Sint, fetch_src_port).uses(L4),
    FetchKw::new("dst", ArgSpec::NONE, SmpType::Ipv4, fetch_dst).uses(L4),
    FetchKw::new("dst_port", ArgSpec::NONE, SmpType::Sint, fetch_dst_port).uses(L4),
    FetchKw::new("fc_src", ArgSpec::NONE, SmpType::Ipv4, fetch_fc_src).uses(L4),
    FetchKw::new("fc_src_port", ArgSpec::NONE, SmpType::Sint, fetch_fc_src_port).uses(L4),
    FetchKw::new("fc_dst", ArgSpec::NONE, SmpType::Ipv4, fetch_fc_dst).uses(L4),
    FetchKw::new("fc_dst_port", ArgSpec::NONE, SmpType::Sint, fetch_fc_dst_port).uses(L4),
    FetchKw::new("fc_http_major", ArgSpec::NONE, SmpType::Sint, fetch_fc_http_major).uses(L4),
    FetchKw::new("fc_glitches", ArgSpec::NONE, SmpType::Sint, fetch_fc_glitches).uses(L4),
];

#[cfg(test)]
mod tests {
    use crate::sample::ctx::{ConnInfo, SampleCtx};
    use crate::sample::testutil::*;
    use crate::sample::Sample;

    #[test]
    fn client_addresses_and_ports() {
        let cfg = config(CFG);
        let rt = runtime(&cfg);
        let c = conn();
        let ctx = SampleCtx::new(&rt, &c, 0);
        let v = |t: &str| compile_in(&cfg, 0, t).unwrap().eval(&ctx).map(Sample::into_owned);
        assert_eq!(v("src"), Some(Sample::Ipv4("192.168.1.10".parse().unwrap())));
        assert_eq!(v("fc_src"), v("src"));
        assert_eq!(v("src_port"), Some(Sample::Sint(40000)));
        assert_eq!(v("fc_src_port"), Some(Sample::Sint(40000)));
        // No socket behind the test connection: no local address.
        assert_eq!(v("dst"), None);
        assert_eq!(v("dst_port"), None);
        assert_eq!(v("fc_http_major"), None);
        // an HTTP/1 connection: no glitch counter (HAProxy 3.2: no value either)
        assert_eq!(v("fc_glitches"), None);
        let mut h2 = conn();
        let count = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        h2.set_glitches(count.clone());
        count.store(7, std::sync::atomic::Ordering::Relaxed);
        let e = compile_in(&cfg, 0, "fc_glitches").unwrap();
        assert_eq!(e.eval(&SampleCtx::new(&rt, &h2, 0)), Some(Sample::Sint(7)));
        let c6 = ConnInfo::new(Some("[2001:db8::7]:443".parse().unwrap()), -1);
        let ctx6 = SampleCtx::new(&rt, &c6, 0);
        let e = compile_in(&cfg, 0, "src").unwrap();
        assert_eq!(e.eval(&ctx6), Some(Sample::Ipv6("2001:db8::7".parse().unwrap())));
        let unix = ConnInfo::new(None, -1);
        assert_eq!(e.eval(&SampleCtx::new(&rt, &unix, 0)), None);
    }

    #[test]
    fn the_local_address_comes_from_the_socket() {
        use std::os::fd::AsRawFd;
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let cfg = config(CFG);
        let rt = runtime(&cfg);
        let c = ConnInfo::new(None, l.as_raw_fd());
        let ctx = SampleCtx::new(&rt, &c, 0);
        let v = |t: &str| compile_in(&cfg, 0, t).unwrap().eval(&ctx).map(Sample::into_owned);
        assert_eq!(v("dst"), Some(Sample::Ipv4("127.0.0.1".parse().unwrap())));
        assert_eq!(v("fc_dst_port"), Some(Sample::Sint(i64::from(port))));
    }
}
