//! Per-connection drivers on the client side: bytes in, exchanges out. The session
//! hands each connection to the one its frontend speaks ([`spawn`], [`serve`]).
//! - `h1`: HTTP/1.0 and 1.1 on the client side (keep-alive, pipelining, errors)
//! - `pt`: TCP passthrough (`mode tcp`)

pub mod h1;
pub mod pt;

use crate::io::Parkable;
use crate::sample::vars::VarStore;
use crate::session::types::Session;

/// Starts serving the connection in a task of its own: HTTP/1 when its frontend serves
/// HTTP, TCP passthrough otherwise; `vars`: the `sess.` variables the connection rules
/// set.
///
/// PERF: each mux is its own task type, so an idle HTTP connection's task is as small
/// as the HTTP mux's idle state, not as large as the biggest mux.
pub fn spawn<S: Parkable>(sock: S, sess: Session, vars: Option<Box<VarStore>>) {
    if sess.rt.proxies[sess.fe].fe.http {
        drop(tokio::spawn(h1::serve(sock, sess, vars)));
    } else {
        drop(tokio::spawn(pt::serve(sock, sess, vars)));
    }
}

/// Serves the connection in the calling task, as [`spawn`] would in a task of its own.
pub async fn serve<S: Parkable>(sock: S, sess: Session, vars: Option<Box<VarStore>>) {
    if sess.rt.proxies[sess.fe].fe.http {
        h1::serve(sock, sess, vars).await;
    } else {
        pt::serve(sock, sess, vars).await;
    }
}
