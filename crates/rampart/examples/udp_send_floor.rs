//! The kernel's floor for logging one line per request over UDP: the CPU a process
//! spends doing nothing but sending datagrams of a log line's size to a receiver, in
//! batches as rampart's log batching sends them (`sendmmsg`). No proxy, no formatting:
//! what is left is the kernel's send path (and, on loopback, the receiver's side of
//! each datagram, which runs in the sender's system call).
//!
//! `scripts/bench-log-cpu.py --floor` runs it next to the proxies' measurement, so the
//! floor can be compared with the CPU of one keep-alive request.
//!
//!     cargo run --release --example udp_send_floor -- 127.0.0.1:5514 [count] [batch] [len]
//!
//! Prints one line: `floor_us_per_datagram <µs> batch <n> len <bytes> sent <n>`.

use std::io::IoSlice;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd as _;
use std::time::Duration;

use nix::sys::resource::{getrusage, UsageWho};
use nix::sys::socket::{sendmmsg, ControlMessage, MsgFlags, MultiHeaders, SockaddrIn};

fn cpu(u: &nix::sys::resource::Usage) -> Duration {
    let t = |tv: nix::sys::time::TimeVal| Duration::new(tv.tv_sec() as u64, tv.tv_usec() as u32 * 1000);
    t(u.user_time()) + t(u.system_time())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let Some(to) = args.first().and_then(|a| a.parse::<SocketAddr>().ok()) else {
        eprintln!("usage: udp_send_floor <ip:port> [count] [batch] [len]");
        std::process::exit(2);
    };
    let (count, batch, len) = (arg(1, 200_000), arg(2, 16).clamp(1, 64), arg(3, 220));
    let sock = UdpSocket::bind(if to.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" }).expect("bind");
    sock.connect(to).expect("connect");
    let line = vec![b'x'; len];
    let group: Vec<[IoSlice<'_>; 1]> = (0..batch).map(|_| [IoSlice::new(&line)]).collect();
    let addrs: Vec<Option<SockaddrIn>> = vec![None; batch];
    let no_cmsg: [ControlMessage<'_>; 0] = [];
    let mut headers = MultiHeaders::<SockaddrIn>::preallocate(batch, None);
    let before = getrusage(UsageWho::RUSAGE_SELF).expect("getrusage");
    let mut sent = 0;
    while sent < count {
        // a refused send (no receiver yet) costs the same path: count it as sent
        let _ = sendmmsg(sock.as_raw_fd(), &mut headers, &group, &addrs, no_cmsg, MsgFlags::MSG_DONTWAIT);
        sent += batch;
    }
    let after = getrusage(UsageWho::RUSAGE_SELF).expect("getrusage");
    let us = (cpu(&after) - cpu(&before)).as_secs_f64() * 1e6 / sent as f64;
    println!("floor_us_per_datagram {us:.3} batch {batch} len {len} sent {sent}");
}
