//! TCP passthrough (`mode tcp`): connect to a server as soon as the client is
//! accepted, then splice both directions until both have ended, half-closing each
//! side when the other one closes. HAProxy counterpart: mux_pt.c plus the TCP part of
//! stream.c.

use crate::backend::{self, Reuse};
use crate::io::Sock;
use crate::session::Session;
use crate::splice::{forward, tunnel_timeouts, Activity};

/// Serves one TCP-mode client connection.
pub async fn serve<S: Sock>(client: S, sess: Session) {
    let rt = &sess.rt;
    let fe = &rt.proxies[sess.fe];
    let Some(be_idx) = fe.fe.backend else {
        return; // no backend: HAProxy closes the connection
    };
    let Ok(conn) = backend::connect(rt, be_idx, Reuse::No).await else {
        return; // connection refused after the retries: close the client
    };
    let be = &rt.proxies[be_idx];
    let (up, down) = tunnel_timeouts(&fe.timeouts, &be.timeouts);
    let activity = Activity::default();
    let _ = tokio::try_join!(
        forward(&client, &conn.stream, None, up, &activity),
        forward(&conn.stream, &client, None, down, &activity),
    );
}
