//! TCP passthrough (`mode tcp`): connect to a server as soon as the client is
//! accepted, then splice both directions until both have ended, half-closing each
//! side when the other one closes. HAProxy counterpart: mux_pt.c plus the TCP part of
//! stream.c.

use std::os::fd::AsRawFd;

use crate::backend::{self, Reuse};
use crate::debug::{self, Trace};
use crate::io::Sock;
use crate::session::Session;
use crate::splice::{forward, tunnel_timeouts, Activity};

/// Serves one TCP-mode client connection.
pub async fn serve<S: Sock>(client: S, sess: Session) {
    if !debug::on() {
        return forward_session(&client, &sess, None).await;
    }
    let fe = &sess.rt.proxies[sess.fe];
    let trace = Trace::accept(&fe.name, sess.lfd, client.as_raw_fd(), sess.conn.src);
    forward_session(&client, &sess, Some(&trace)).await;
    trace.end(&fe.fe.backend.map_or(fe, |be| &sess.rt.proxies[be]).name);
    // COMPAT: `-d` names the default backend at the end of a TCP stream, even when a
    // `use_backend` rule chose another one.
}

async fn forward_session<S: Sock>(client: &S, sess: &Session, trace: Option<&Trace>) {
    let rt = &sess.rt;
    let fe = &rt.proxies[sess.fe];
    let Some(be_idx) = crate::stream::tcp_backend(rt, &sess.conn, sess.fe) else {
        // No backend: HAProxy closes the connection.
        return discard_pending_input(client, rt.bufsize);
    };
    rt.proxies[be_idx].be.cum_conn.inc();
    let Some(Ok(conn)) = backend::connect_unless_aborted(client, rt, be_idx, Reuse::No, None).await else {
        // No server (refused after the retries, queue timeout), or the client left
        // meanwhile with `option abortonclose`: close the client.
        return discard_pending_input(client, rt.bufsize);
    };
    if let Some(t) = trace {
        t.set_server(conn.stream.as_raw_fd());
    }
    let be = &rt.proxies[be_idx];
    let (up, down) = tunnel_timeouts(&fe.timeouts, &be.timeouts);
    let activity = Activity::default();
    let _ = tokio::try_join!(
        forward(client, &conn.stream, None, up, &activity),
        forward(&conn.stream, client, None, down, &activity),
    );
}

/// Reads and drops what the client already sent (at most a buffer, what HAProxy would
/// have read while connecting), so that closing sends a FIN as HAProxy's close does,
/// not the reset the kernel sends when unread bytes are left.
fn discard_pending_input<S: Sock>(client: &S, max: usize) {
    let mut scratch = Vec::with_capacity(max.min(16 * 1024));
    let mut left = max;
    while left > 0 {
        scratch.clear();
        match client.try_read_buf(&mut scratch) {
            Ok(n) if n > 0 => left = left.saturating_sub(n),
            _ => return,
        }
    }
}
