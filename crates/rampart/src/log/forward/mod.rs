//! `log-forward` sections: syslog relays. Each receiver (a `dgram-bind` UDP socket, a
//! `bind` TCP listener) reads messages, [`rampart_proto::syslog::parse`] reads their
//! header, and each message goes to the section's `log` targets with the target's
//! header rebuilt from the message's metadata (`header`), after the targets' level
//! filters. A `bind ... ssl` line's connections complete a TLS handshake first, with
//! the configuration a proxy's `bind` line would get (`tls::bind`).
//!
//! Where they run: each receiver is one tokio task on one worker thread (receiver `i`
//! on thread `i % nbthread`), beside that thread's accept loops. A relay costs a parse
//! and a non-blocking send per target, like a stream's log line, so the worker
//! threads' event loops can carry it, and their per-turn batching ([`super::batch`])
//! sends the relayed lines with one `sendmmsg` per turn. A dedicated thread would only
//! add a hop. Sockets are bound with the listeners (`listener::bind_all`), so a busy
//! port refuses startup.
//! HAProxy counterpart: `syslog_fd_handler()`, `syslog_io_handler()`,
//! `process_send_log()` (src/log.c).
//!
//! - `header`: the line of a relayed message for one target (pure)
//!
//! The UDP and TCP receivers are `crate::listener::log_forward`'s.

pub mod header;

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rampart_cfg::model::Config;
use rampart_cfg::Diag;

use super::setup::Opener;
use super::sink::Sink;

thread_local! {
    /// Scratch for lines written to a ring.
    static RING_LINE: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A `log-forward` section at run time.
#[derive(Debug)]
pub struct Forwarder {
    pub name: String,
    sinks: Vec<Arc<Sink>>,
    /// TCP connections at once, at most.
    pub(crate) maxconn: u32,
    /// An idle TCP connection closes after this long.
    pub(crate) timeout_client: Option<Duration>,
    /// Largest message (HAProxy's buffer size).
    pub(crate) bufsize: usize,
    /// TCP connections open now.
    pub(crate) conns: AtomicU32,
    /// Woken when a TCP connection ends (a receiver at `maxconn` waits for it).
    pub(crate) conn_released: tokio::sync::Notify,
    /// Messages received (HAProxy's `cum_log_messages`).
    pub messages: AtomicU64,
    /// The TLS side of each `bind` line (`None`: plain TCP), in file order.
    pub(crate) tls: Vec<Option<Arc<crate::tls::bind::BindTls>>>,
}

/// The sections of `cfg`, their targets opened through `logs` (shared with the proxies).
pub fn build(cfg: &Config, logs: &mut Opener, alerts: &mut Vec<Diag>) -> Vec<Forwarder> {
    cfg.log_forwards
        .iter()
        .map(|lf| Forwarder {
            name: lf.name.clone(),
            sinks: logs.sinks(&lf.name, &lf.logs, alerts),
            maxconn: lf.maxconn,
            timeout_client: lf.timeout_client,
            bufsize: cfg.global.bufsize,
            conns: AtomicU32::new(0),
            conn_released: tokio::sync::Notify::new(),
            messages: AtomicU64::new(0),
            tls: lf.binds.iter().map(|b| bind_tls(b, &cfg.global.ssl, alerts)).collect(),
        })
        .collect()
}

/// The TLS side of a `bind ... ssl` line, built as a proxy's (`tls::bind`); alerts
/// and warnings are worded with the line's context.
fn bind_tls(
    b: &rampart_cfg::model::Bind,
    g: &rampart_cfg::model::GlobalSsl,
    alerts: &mut Vec<Diag>,
) -> Option<Arc<crate::tls::bind::BindTls>> {
    let ssl = b.ssl.as_deref().filter(|s| s.enabled)?;
    match crate::tls::bind::build(ssl, g) {
        Ok((tls, warns)) => {
            alerts.extend(warns.into_iter().map(|w| Diag::warning(Some(b.span.clone()), format!("{} : {w}", b.ctx))));
            Some(Arc::new(tls))
        }
        Err(errs) => {
            alerts.extend(errs.into_iter().map(|e| Diag::alert(Some(b.span.clone()), format!("{} : {e}", b.ctx))));
            None
        }
    }
}

impl Forwarder {
    /// Relays one received message to every target that takes its level.
    pub fn relay(&self, raw: &[u8]) {
        self.messages.fetch_add(1, Ordering::Relaxed);
        let m = rampart_proto::syslog::parse(raw);
        let now = SystemTime::now();
        for s in &self.sinks {
            // without `<PRI>`: no level filter, the target's `minlevel` (HAProxy's -1)
            let Some(level) = s.admit(m.level().unwrap_or(0)) else { continue };
            let facility = m.facility().unwrap_or(u32::from(s.target.facility));
            let r = header::Relayed { facility, level, has_pri: m.pri.is_some(), meta: &m.meta, msg: m.msg };
            if let Some((ring, ring_hdr)) = s.ring_hdr() {
                // as HAProxy's sink_write(): the message cut to the target's `len`, the
                // header in the ring's format, the whole cut to the ring's `maxlen`
                let msg = header::trim_end(m.msg);
                let msg = &msg[..msg.len().min(s.target.maxlen)];
                RING_LINE.with(|b| {
                    let Ok(mut line) = b.try_borrow_mut() else { return };
                    line.clear();
                    header::write(&mut line, ring_hdr, &r, now);
                    line.extend_from_slice(msg);
                    ring.write_raw(&line);
                });
                continue;
            }
            s.send_with(|out| header::line(out, &s.target, &r, now));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::UdpSocket;
    use std::time::Duration;

    use crate::sample::testutil::config;

    #[test]
    fn relayed_messages_reach_the_targets_that_take_their_level_and_are_counted_for_show_info() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
        let a = rx.local_addr().unwrap();
        let text = format!(
            "log-forward lf\n  dgram-bind 127.0.0.1:1\n  log {a} format raw local0 err\n  log {a} format short local0 info\n"
        );
        let rt = crate::build::build(&config(&text), 100, 1).expect("built");
        let fwd = &rt.log_forwards[0];
        fwd.relay(b"<14>1 - h t 1 - - info line");
        fwd.relay(b"<11>1 - h t 1 - - err line");
        let mut got = Vec::new();
        let mut buf = [0u8; 256];
        while let Ok(n) = rx.recv(&mut buf) {
            got.push(String::from_utf8_lossy(&buf[..n]).into_owned());
        }
        assert_eq!(got, ["<6>info line\n", "err line\n", "<3>err line\n"]);
        assert_eq!(fwd.messages.load(std::sync::atomic::Ordering::Relaxed), 2);
    }
}
