//! Test backends (the servers behind the proxy), each on `127.0.0.1:0` with its own
//! threads, stopped on drop; the VTest `server` blocks of HAProxy's reg-tests play the
//! same part.
//!
//! - [`HttpBackend`] parses HTTP/1.x and answers through a [`Reply`] responder.
//! - [`RawBackend`] runs a byte-exact [`Step`] script per connection.
//! - [`TcpEchoBackend`] echoes, with half-close.
//! - [`closed_port`] gives an address that refuses connections.
//!
//! [`TestBackend`] lets [`Differential`](crate::Differential) start fresh ones per run.

mod echo;
mod http;
mod raw;
mod reply;
mod server;

pub use echo::TcpEchoBackend;
pub use http::{HttpBackend, HttpBackendBuilder};
pub use raw::{RawBackend, RawConn, Step};
pub use reply::{Reply, ReplyFraming};

use std::net::{SocketAddr, TcpListener};
use std::os::fd::AsRawFd;
use std::time::Duration;

use crate::http::Request;

/// A loopback address where connections are refused, for connection-refused cases.
///
/// The port stays reserved for the life of the test process: its socket is kept bound
/// but disconnected (`shutdown(SHUT_RD)` on a listening socket refuses connections and
/// keeps the port), so no backend of a concurrent test can be given the same port (a
/// port that was merely released could be, and then the "refused" server answers).
pub fn closed_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("testkit: bind 127.0.0.1:0");
    nix::sys::socket::shutdown(listener.as_raw_fd(), nix::sys::socket::Shutdown::Read)
        .expect("testkit: disconnect the reserved port");
    let addr = listener.local_addr().expect("testkit: local_addr");
    RESERVED.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(listener);
    addr
}

/// The sockets holding the ports [`closed_port`] handed out.
static RESERVED: std::sync::Mutex<Vec<TcpListener>> = std::sync::Mutex::new(Vec::new());

/// What a backend saw during a scenario, for comparison between two runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seen {
    /// Requests parsed by an [`HttpBackend`].
    Http(Vec<Request>),
    /// Connections of a [`RawBackend`] or [`TcpEchoBackend`].
    Raw(Vec<RawConn>),
}

/// A backend [`Differential`](crate::Differential) can start afresh for each binary.
pub trait TestBackend: Send {
    /// The address the proxy should connect to.
    fn addr(&self) -> SocketAddr;
    /// Waits until its connections are closed (or `timeout` passes).
    fn wait_idle(&self, timeout: Duration) -> bool;
    /// What it saw so far.
    fn seen(&self) -> Seen;
}

impl TestBackend for HttpBackend {
    fn addr(&self) -> SocketAddr {
        HttpBackend::addr(self)
    }
    fn wait_idle(&self, timeout: Duration) -> bool {
        HttpBackend::wait_idle(self, timeout)
    }
    fn seen(&self) -> Seen {
        Seen::Http(self.requests())
    }
}

impl TestBackend for RawBackend {
    fn addr(&self) -> SocketAddr {
        RawBackend::addr(self)
    }
    fn wait_idle(&self, timeout: Duration) -> bool {
        RawBackend::wait_idle(self, timeout)
    }
    fn seen(&self) -> Seen {
        Seen::Raw(self.connections())
    }
}

impl TestBackend for TcpEchoBackend {
    fn addr(&self) -> SocketAddr {
        TcpEchoBackend::addr(self)
    }
    fn wait_idle(&self, timeout: Duration) -> bool {
        TcpEchoBackend::wait_idle(self, timeout)
    }
    fn seen(&self) -> Seen {
        Seen::Raw(self.connections())
    }
}
