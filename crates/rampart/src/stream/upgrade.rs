//! A TCP stream that becomes HTTP: a `tcp-request content switch-mode http` rule
//! fired, or the backend chosen for it is in `mode http`. The TCP stream hands the
//! client connection, the bytes its rules read and its variables to the front mux
//! ([`Upgrade`]); HTTP/1 goes on with them as its first request's stream
//! ([`Upgraded`]: the frontend's content rules do not run again, its `txn.`/`req.`
//! variables are kept), HTTP/2 starts afresh (the TCP stream ends unlogged).
//! HAProxy counterpart: `stream_set_http_mode()` (src/stream.c) and
//! `tcp_action_switch_stream_mode()`.

use crate::action::tcp::SwitchProto;
use crate::buf::Buf;
use crate::sample::vars::VarStore;

/// What a TCP stream hands over when it becomes HTTP.
#[derive(Debug)]
pub struct Upgrade {
    /// The protocol asked for (`proto`); [`SwitchProto::Auto`] for a backend in `mode
    /// http`.
    pub proto: SwitchProto,
    /// The client's bytes the content rules read (the start of its first request).
    pub held: Option<Buf>,
    /// The connection's `sess.` variables.
    pub sess: Option<Box<VarStore>>,
    /// What the first HTTP/1 request's stream inherits.
    pub first: Box<Upgraded>,
}

/// The state of a TCP stream that its first HTTP/1 request's stream carries on with.
#[derive(Debug)]
pub struct Upgraded {
    /// Its `txn.` variables.
    pub txn: VarStore,
    /// Its `req.` variables.
    pub req: VarStore,
    /// The backend already chosen (an implicit upgrade, by a backend in `mode http`):
    /// the switching rules do not run again.
    pub be: Option<usize>,
}
