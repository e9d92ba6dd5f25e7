//! Per-connection drivers on the client side: bytes in, exchanges out. The session
//! hands each connection to the one its frontend speaks ([`spawn`], [`serve`]).
//! - `h1`: HTTP/1.0 and 1.1 on the client side (keep-alive, pipelining, errors)
//! - `h2`: HTTP/2 on the client side (ALPN `h2`, or the preface on cleartext)
//! - `pt`: TCP passthrough (`mode tcp`)

pub mod h1;
pub mod h2;
pub mod pt;

use crate::io::Parkable;
use crate::sample::vars::VarStore;
use crate::session::types::Session;
use rampart_cfg::model::BindProto;

/// Starts serving the connection in a task of its own: HTTP/1 when its frontend serves
/// HTTP, TCP passthrough otherwise; `vars`: the `sess.` variables the connection rules
/// set.
///
/// PERF: each mux is its own task type, so an idle HTTP connection's task is as small
/// as the HTTP mux's idle state, not as large as the biggest mux.
pub fn spawn<S: Parkable>(sock: S, sess: Session, vars: Option<Box<VarStore>>) {
    match protocol(&sess) {
        Protocol::H1 => drop(tokio::spawn(h1::serve(sock, sess, vars))),
        Protocol::H2 => drop(tokio::spawn(h2::serve(sock, sess, None, vars))),
        Protocol::Tcp => drop(tokio::spawn(pt::serve(sock, sess, vars))),
    }
}

/// Serves the connection in the calling task, as [`spawn`] would in a task of its own.
///
/// PERF: TCP passthrough's future (about 7 KB) is boxed, so that the calling task (a
/// TLS or PROXY-protocol handshake's, which then serves the connection) is as small as
/// the HTTP muxes' futures (about 1.5 KB) on HTTP frontends, idle TLS connections
/// included.
pub async fn serve<S: Parkable>(sock: S, sess: Session, vars: Option<Box<VarStore>>) {
    match protocol(&sess) {
        Protocol::H1 => h1::serve(sock, sess, vars).await,
        Protocol::H2 => h2::serve(sock, sess, None, vars).await,
        Protocol::Tcp => Box::pin(pt::serve(sock, sess, vars)).await,
    }
}

/// The protocol a connection speaks.
enum Protocol {
    H1,
    H2,
    Tcp,
}

/// The listener's `proto` if it has one; else HTTP/2 when TLS negotiated `h2` (ALPN),
/// HTTP/1 on other HTTP frontends (which turns to HTTP/2 on the preface, `h1`), TCP
/// otherwise.
fn protocol(sess: &Session) -> Protocol {
    let fe = &sess.rt.proxies[sess.fe].fe;
    match fe.listeners.get(sess.conn.listener as usize).and_then(|l| l.proto) {
        Some(BindProto::H2) => return Protocol::H2,
        Some(BindProto::H1) => return Protocol::H1,
        // `none` and `fcgi` are refused on HTTP frontends at startup
        Some(BindProto::None | BindProto::Fcgi) | None => {}
    }
    if !fe.http {
        return Protocol::Tcp;
    }
    match sess.conn.tls().and_then(|t| t.alpn.as_deref()) {
        Some(b"h2") => Protocol::H2,
        _ => Protocol::H1,
    }
}
