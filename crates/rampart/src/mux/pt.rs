//! TCP passthrough (`mode tcp`): connect to a server as soon as the client is
//! accepted, then splice both directions until both have ended, half-closing each
//! side when the other one closes. HAProxy counterpart: mux_pt.c plus the TCP part of
//! stream.c.

use crate::backend::{self, Reuse};
use crate::io::Sock;
use crate::session::Session;
use crate::splice::{forward, Activity, DirTimeouts};

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
    // COMPAT: `timeout tunnel` (from the backend) supersedes client and server timeouts
    // once the session is established, as in HAProxy.
    let tunnel = be.timeouts.tunnel;
    let client_side = tunnel.or(fe.timeouts.client);
    let server_side = tunnel.or(be.timeouts.server);
    let activity = Activity::default();
    // After the client half-closed, the server->client direction runs under
    // `timeout client-fin`; after the server did, client->server under `server-fin`.
    let up = DirTimeouts { read: client_side, write: server_side, fin: be.timeouts.server_fin.or(tunnel) };
    let down = DirTimeouts { read: server_side, write: client_side, fin: fe.timeouts.client_fin.or(tunnel) };
    let _ = tokio::try_join!(
        forward(&client, &conn.stream, None, up, &activity),
        forward(&conn.stream, &client, None, down, &activity),
    );
}
