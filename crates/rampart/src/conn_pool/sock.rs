//! The socket of a server connection: plain TCP or unix socket, or TLS over either
//! (`server ... ssl`).
//! The muxes and the idle pool use it as any [`Sock`]; only what differs (the TLS
//! state, liveness of an idle TLS connection) is asked here.
//! HAProxy counterpart: the `xprt` layer of a backend connection (`xprt_raw`,
//! `xprt_ssl` in src/raw_sock.c and src/ssl_sock.c).

use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::task::{Context, Poll};

use tokio::io::Interest;
use tokio::net::{TcpStream, UnixStream};

use std::sync::Arc;

use crate::io::Sock;
use crate::tls::stream::TlsSock;
use crate::tls::TlsInfo;

/// A connected server socket.
#[derive(Debug)]
pub enum BackSock {
    Plain(PlainSock),
    // PERF: boxed, as the rustls state is large and most connections are plain.
    Tls(Box<TlsConn>),
}

/// The socket under a server connection (`server <addr>` or `server /path`).
#[derive(Debug)]
pub enum PlainSock {
    Tcp(TcpStream),
    Unix(UnixStream),
}

/// A TLS server connection and what its handshake negotiated.
#[derive(Debug)]
pub struct TlsConn {
    pub sock: TlsSock<PlainSock>,
    /// Shared with the streams it serves (`ssl_bc*`), read once after the handshake.
    pub info: Arc<TlsInfo>,
    /// The generation of the server's `crt` it presented (`ServerCrt::generation`).
    pub crt_generation: u64,
    /// Its count against `maxsslconn`.
    pub ssl_slot: Option<crate::tls::limit::SslSlot>,
}

impl TlsConn {
    pub fn new(sock: TlsSock<PlainSock>, crt_generation: u64, ssl_slot: Option<crate::tls::limit::SslSlot>) -> TlsConn {
        let none = TlsInfo {
            sni: None,
            version: "",
            cipher: "",
            bits: 0,
            alpn: None,
            resumed: false,
            peer_certs: Vec::new(),
            local_cert: None,
            verify: Default::default(),
        };
        let info = sock.with_conn(TlsInfo::of).unwrap_or(none);
        TlsConn { sock, info: Arc::new(info), crt_generation, ssl_slot }
    }
}

impl PlainSock {
    /// The local address of a TCP connection (none for a unix socket).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        match self {
            PlainSock::Tcp(s) => s.local_addr(),
            PlainSock::Unix(_) => Err(io::ErrorKind::Unsupported.into()),
        }
    }

    /// The same socket, registered with the event loop of the calling thread instead
    /// of the one that opened it (the descriptor stays open and non-blocking). Must
    /// run inside a tokio runtime.
    fn rehome(self) -> io::Result<PlainSock> {
        Ok(match self {
            PlainSock::Tcp(s) => PlainSock::Tcp(TcpStream::from_std(s.into_std()?)?),
            PlainSock::Unix(s) => PlainSock::Unix(UnixStream::from_std(s.into_std()?)?),
        })
    }
}

impl BackSock {
    /// The socket under TLS, or the plain socket.
    pub fn plain(&self) -> &PlainSock {
        match self {
            BackSock::Plain(s) => s,
            BackSock::Tls(t) => t.sock.get_ref(),
        }
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.plain().local_addr()
    }

    /// Whether the connection presented the certificate `server` presents now (a
    /// `commit ssl cert` replaced none since it opened).
    pub fn current_crt(&self, server: &crate::proxy::ServerRt) -> bool {
        let now = server.tls.as_deref().and_then(|t| t.crt.as_ref()).map(|c| c.generation());
        match (self, now) {
            (BackSock::Tls(t), Some(g)) => t.crt_generation == g,
            _ => true,
        }
    }

    /// The TLS connection, when the server speaks TLS.
    pub fn tls(&self) -> Option<&TlsConn> {
        match self {
            BackSock::Plain(_) => None,
            BackSock::Tls(t) => Some(t),
        }
    }

    /// The same connection, registered with the calling thread's event loop: an idle
    /// connection another thread takes over (HAProxy's `takeover` of a mux). A TLS
    /// connection keeps its rustls state. Must run inside a tokio runtime.
    pub fn rehome(self) -> io::Result<BackSock> {
        Ok(match self {
            BackSock::Plain(s) => BackSock::Plain(s.rehome()?),
            BackSock::Tls(t) => {
                let TlsConn { sock, info, crt_generation, ssl_slot } = *t;
                let sock = sock.map_sock(PlainSock::rehome)?;
                BackSock::Tls(Box::new(TlsConn { sock, info, crt_generation, ssl_slot }))
            }
        })
    }

    /// Whether an idle connection can still carry a request. A TLS connection may
    /// receive records while idle that carry no data (TLSv1.3 session tickets): they
    /// are consumed here, while data, a close_notify or a FIN mean it must go.
    pub fn idle_alive(&self) -> bool {
        match self {
            BackSock::Plain(s) => crate::io::idle_conn_alive(s),
            BackSock::Tls(t) => {
                if !crate::io::has_pending_event(t.sock.get_ref()) {
                    return true;
                }
                let mut probe = Vec::with_capacity(64);
                matches!(t.sock.try_read_buf(&mut probe), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
            }
        }
    }
}

impl AsFd for BackSock {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.plain().as_fd()
    }
}

impl AsRawFd for BackSock {
    fn as_raw_fd(&self) -> RawFd {
        self.plain().as_raw_fd()
    }
}

impl AsFd for PlainSock {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            PlainSock::Tcp(s) => s.as_fd(),
            PlainSock::Unix(s) => s.as_fd(),
        }
    }
}

impl AsRawFd for PlainSock {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            PlainSock::Tcp(s) => s.as_raw_fd(),
            PlainSock::Unix(s) => s.as_raw_fd(),
        }
    }
}

/// Calls the same method on whichever socket `self` holds.
macro_rules! both {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            BackSock::Plain($s) => $e,
            BackSock::Tls(t) => {
                let $s = &t.sock;
                $e
            }
        }
    };
}

/// [`both`] for the plain sockets.
macro_rules! either {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            PlainSock::Tcp($s) => $e,
            PlainSock::Unix($s) => $e,
        }
    };
}

impl Sock for PlainSock {
    async fn readable(&self) -> io::Result<()> {
        either!(self, s => s.readable().await)
    }
    async fn writable(&self) -> io::Result<()> {
        either!(self, s => s.writable().await)
    }
    fn try_read_buf(&self, buf: &mut Vec<u8>) -> io::Result<usize> {
        either!(self, s => s.try_read_buf(buf))
    }
    fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        either!(self, s => s.try_write(buf))
    }
    fn try_io<R>(&self, interest: Interest, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
        either!(self, s => s.try_io(interest, f))
    }
    fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        either!(self, s => s.poll_read_ready(cx))
    }
    fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        either!(self, s => s.poll_write_ready(cx))
    }
}

impl Sock for BackSock {
    async fn readable(&self) -> io::Result<()> {
        both!(self, s => s.readable().await)
    }
    async fn writable(&self) -> io::Result<()> {
        both!(self, s => s.writable().await)
    }
    fn try_read_buf(&self, buf: &mut Vec<u8>) -> io::Result<usize> {
        both!(self, s => s.try_read_buf(buf))
    }
    fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        both!(self, s => s.try_write(buf))
    }
    fn try_io<R>(&self, interest: Interest, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
        both!(self, s => s.try_io(interest, f))
    }
    fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        both!(self, s => s.poll_read_ready(cx))
    }
    fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        both!(self, s => s.poll_write_ready(cx))
    }
    fn try_flush(&self) -> io::Result<()> {
        both!(self, s => s.try_flush())
    }
    fn buffered_input(&self) -> bool {
        both!(self, s => s.buffered_input())
    }
    fn splices(&self) -> bool {
        both!(self, s => s.splices())
    }
    fn close_notify(&self) {
        both!(self, s => s.close_notify())
    }
}
