//! What a sample evaluation can see: the connection, the proxies, the request and
//! response heads, buffered payload, and the variables.
//!
//! The stream builds one per evaluation from references to its own state, so fetches
//! read without copying, and the borrow checker keeps rules from writing a message
//! while a sample still points into it.

use std::net::SocketAddr;
use std::os::fd::RawFd;

use crate::http::MsgView;
use crate::proxy::Runtime;

/// Which way the data an evaluation runs on flows (HAProxy's `SMP_OPT_DIR_REQ/RES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    Request,
    Response,
}

/// A client connection's addresses, as the rules see them.
#[derive(Debug)]
pub struct ConnInfo {
    /// Client address (`src`); `None` for a unix socket.
    pub src: Option<SocketAddr>,
    /// The socket, to read the local address when asked.
    pub fd: RawFd,
}

impl ConnInfo {
    pub fn new(src: Option<SocketAddr>, fd: RawFd) -> ConnInfo {
        ConnInfo { src, fd }
    }

    /// The local address (`getsockname`), `None` for a unix socket or a closed socket.
    ///
    /// PERF: read when a rule asks (one system call) rather than kept per connection:
    /// an idle connection stays small, and few configurations read `dst`.
    pub fn dst(&self) -> Option<SocketAddr> {
        local_addr(self.fd)
    }
}

fn local_addr(fd: RawFd) -> Option<SocketAddr> {
    use nix::sys::socket::{getsockname, SockaddrStorage};
    let ss: SockaddrStorage = getsockname(fd).ok()?;
    if let Some(v4) = ss.as_sockaddr_in() {
        return Some(SocketAddr::V4((*v4).into()));
    }
    ss.as_sockaddr_in6().map(|v6| SocketAddr::V6((*v6).into()))
}

/// Everything one evaluation may read.
pub struct SampleCtx<'a> {
    pub rt: &'a Runtime,
    pub conn: &'a ConnInfo,
    /// The frontend (index into `rt.proxies`).
    pub fe: usize,
    /// The backend once chosen.
    pub be: Option<usize>,
    /// The server (index into the backend's servers) once chosen.
    pub srv: Option<usize>,
    pub dir: Dir,
    /// The request head, in HTTP streams.
    pub req: Option<MsgView<'a>>,
    /// The response head, once received.
    pub res: Option<MsgView<'a>>,
    /// The request body bytes in hand (buffered by `wait-for-body` /
    /// `option http-buffer-request`).
    pub req_body: Option<&'a [u8]>,
    /// The bytes waiting in the direction being inspected (`req.payload` in
    /// `tcp-request content`, `res.payload` in `tcp-response content`).
    pub payload: Option<&'a [u8]>,
}
