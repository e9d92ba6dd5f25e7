//! What a client connection is to the layers below the session: the runtime it was
//! accepted under, its frontend, its addresses ([`Session`]), and its slot under the
//! `maxconn` limits ([`ConnSlot`]). The muxes hold a `Session` for the connection's
//! life; its behaviour (rules, handshakes, release) is `crate::session`'s.

use std::sync::Arc;

use crate::proxy::Runtime;
use crate::sample::ctx::ConnInfo;

/// A client connection and where it came in.
#[derive(Debug)]
pub struct Session {
    pub rt: Arc<Runtime>,
    /// Index of the frontend that accepted it.
    pub fe: usize,
    /// The connection's addresses as rules see them (client address `conn.src`,
    /// `None` for unix sockets).
    pub conn: ConnInfo,
    /// The listening socket it came through (for `-d` output).
    pub lfd: i32,
}

/// One connection counted against the global, the frontend and the listener's
/// `maxconn`; released on drop, waking accept loops paused at the limit.
#[derive(Debug)]
pub struct ConnSlot {
    /// `None` once handed over to a session.
    pub(super) rt: Option<Arc<Runtime>>,
    pub(super) fe: usize,
    /// The listener whose `bind ... maxconn` counted this connection already (its
    /// `conns`); `None` for a listener without its own limit (counted on accept).
    pub(super) listener: Option<u32>,
}
