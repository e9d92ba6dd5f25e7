//! A TLS connection over a connected socket, usable wherever a plain socket is
//! ([`crate::io::Sock`]): the muxes read and write plaintext through it, readiness based,
//! as they do on TCP. Also the handshake helpers ([`accept`], [`connect`]) that turn a
//! socket into one, under a timeout. Both sides (front: rustls server, back: rustls
//! client) use the same type through [`rustls::Connection`].
//! HAProxy counterpart: ssl_sock.c (`ssl_sock_to_buf()`, `ssl_sock_from_buf()`,
//! `ssl_sock_handshake()`).
//!
//! Design: the rustls state lives in an [`AtomicRefCell`] beside the socket. The
//! `Sock` trait takes `&self` (a mux reads and writes the same socket from two futures
//! of one task), and every borrow is taken and dropped inside one synchronous call, so
//! it never waits and never conflicts: one atomic flag, no lock.
//!
//! Not here: certificate stores and configurations (`tls::bind`, `tls::client`).

use std::future::Future;
use std::io::{self, IoSlice, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use atomic_refcell::AtomicRefCell;
use nix::sys::socket::{recv, send, sendmsg, MsgFlags, SockaddrStorage};
use rustls::server::{Acceptor, ClientHello};
use rustls::{ClientConfig, ClientConnection, Connection, ServerConfig};
use rustls_pki_types::ServerName;
use tokio::io::Interest;

use crate::io::Parkable;
use crate::io::Sock;

/// Most plaintext bytes encrypted by one `try_write` (one full TLS record of 16 KB
/// each four): bounds the ciphertext a slow peer leaves buffered.
const WRITE_MAX: usize = 64 * 1024;

/// A TLS connection over the socket `S`, after its handshake.
pub struct TlsSock<S> {
    sock: S,
    conn: AtomicRefCell<Connection>,
}

impl<S> std::fmt::Debug for TlsSock<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsSock").finish_non_exhaustive()
    }
}

/// Why a handshake did not complete. [`HandshakeError::haproxy_msg`] gives the words
/// HAProxy logs for the same failure.
#[derive(Debug, thiserror::Error)]
pub enum HandshakeError {
    /// The handshake timeout expired.
    #[error("timeout during the TLS handshake")]
    Timeout,
    /// The peer closed before the handshake completed.
    #[error("connection closed during the TLS handshake")]
    Closed,
    /// The peer's bytes were not a TLS handshake the configuration accepts.
    #[error("TLS handshake failure: {0}")]
    Tls(#[from] rustls::Error),
    /// A CA of the client's chain failed verification (an error `ca-ignore-err` does
    /// not list); the alert sent is the error's, as for [`HandshakeError::Tls`].
    #[error("TLS handshake failure on the client's CA chain: {0}")]
    CaChain(rustls::Error),
    /// No configuration was chosen for this client hello (e.g. `strict-sni`).
    #[error("TLS handshake refused: {0}")]
    Refused(&'static str),
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl HandshakeError {
    /// HAProxy's connection error string for this failure (`conn_err_code_str()`).
    pub fn haproxy_msg(&self) -> &'static str {
        match self {
            HandshakeError::Timeout => "Timeout during SSL handshake",
            HandshakeError::Closed => "Connection closed during SSL handshake",
            HandshakeError::Io(_) => "Connection error during SSL handshake",
            HandshakeError::CaChain(_) => "SSL client CA chain cannot be verified",
            HandshakeError::Tls(rustls::Error::InvalidCertificate(_)) => "SSL client certificate not trusted",
            // as HAProxy: no certificate with `verify required` is no verification error
            HandshakeError::Tls(rustls::Error::NoCertificatesPresented) => "SSL handshake failure",
            HandshakeError::Tls(_) | HandshakeError::Refused(_) => "SSL handshake failure",
        }
    }
}

/// Reads and writes the raw socket for rustls, clearing the event loop's readiness
/// when the kernel says `EAGAIN` (so the next wait really waits).
struct Raw<'a, S>(&'a S);

impl<S: Sock> Read for Raw<'_, S> {
    /// PERF: a short read drained the socket, so its readiness is forgotten at once, as
    /// [`crate::io::try_read_some`] does on plain sockets: the wait for the next
    /// keep-alive request then waits for new records instead of waking up for a read
    /// that would only return `EAGAIN`. (Plaintext rustls still holds is checked before
    /// the socket's readiness, see [`TlsSock::wait_readable`].)
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let fd = self.0.as_raw_fd();
        let n =
            self.0.try_io(Interest::READABLE, || recv(fd, &mut *buf, MsgFlags::empty()).map_err(io::Error::from))?;
        if n > 0 && n < buf.len() {
            crate::io::clear_read_readiness(self.0);
        }
        Ok(n)
    }
}

/// PERF: `send`/`sendmsg`/`recv` rather than `write`/`writev`/`read`: the socket calls
/// skip the VFS layer (file position lock, permission and fsnotify hooks), about 3 % of
/// an HTTPS keep-alive request's CPU, and `MSG_NOSIGNAL` spares a SIGPIPE.
impl<S: Sock> Write for Raw<'_, S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let fd = self.0.as_raw_fd();
        self.0.try_io(Interest::WRITABLE, || send(fd, buf, MsgFlags::MSG_NOSIGNAL).map_err(io::Error::from))
    }
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        let fd = self.0.as_raw_fd();
        self.0.try_io(Interest::WRITABLE, || {
            sendmsg::<SockaddrStorage>(fd, bufs, &[], MsgFlags::MSG_NOSIGNAL, None).map_err(io::Error::from)
        })
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn busy() -> io::Error {
    io::Error::other("TLS connection state already in use")
}

fn tls_err(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

/// Sends what rustls has queued: `Ok(())` once nothing is left, `WouldBlock` when the
/// socket is full.
fn flush<S: Sock>(sock: &S, conn: &mut Connection) -> io::Result<()> {
    while conn.wants_write() {
        match conn.write_tls(&mut Raw(sock)) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Reads what rustls already decrypted into `out`: `Ok(0)` at the end of the stream,
/// `WouldBlock` when nothing is buffered.
fn read_plain(conn: &mut Connection, out: &mut [u8]) -> io::Result<usize> {
    match conn.reader().read(out) {
        // COMPAT: as HAProxy, a TCP close without close_notify ends the stream cleanly
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(0),
        other => other,
    }
}

impl<S: Sock> TlsSock<S> {
    /// Wraps a socket whose handshake completed.
    fn new(sock: S, conn: Connection) -> Self {
        TlsSock { sock, conn: AtomicRefCell::new(conn) }
    }

    /// The socket under the TLS layer.
    pub fn get_ref(&self) -> &S {
        &self.sock
    }

    /// The same TLS connection over the socket `f` makes of this one (an idle server
    /// connection that moves to another thread's event loop): the rustls state, with
    /// whatever it holds decrypted or queued, goes along unchanged.
    pub fn map_sock<T>(self, f: impl FnOnce(S) -> io::Result<T>) -> io::Result<TlsSock<T>> {
        Ok(TlsSock { sock: f(self.sock)?, conn: self.conn })
    }

    /// Runs `f` on the rustls connection (to read what the handshake negotiated).
    pub fn with_conn<R>(&self, f: impl FnOnce(&Connection) -> R) -> Option<R> {
        self.conn.try_borrow().ok().map(|c| f(&c))
    }

    /// The SNI the client sent (front side).
    pub fn sni(&self) -> Option<String> {
        self.with_conn(|c| match c {
            Connection::Server(s) => s.server_name().map(str::to_string),
            Connection::Client(_) => None,
        })
        .flatten()
    }

    /// Whether plaintext is waiting in rustls (readable without a system call).
    fn plaintext_buffered(&self) -> bool {
        let Ok(mut c) = self.conn.try_borrow_mut() else { return false };
        c.process_new_packets().is_ok_and(|st| st.plaintext_bytes_to_read() > 0 || st.peer_has_closed())
    }

    /// Sends queued ciphertext as far as the socket takes it.
    fn flush_now(&self) -> io::Result<()> {
        let mut c = self.conn.try_borrow_mut().map_err(|_| busy())?;
        flush(&self.sock, &mut c)
    }

    /// Waits until reading may make progress: plaintext is buffered, or the socket is
    /// readable. Queued ciphertext is sent meanwhile, as the socket takes it.
    async fn wait_readable(&self) -> io::Result<()> {
        loop {
            if self.plaintext_buffered() {
                return Ok(());
            }
            match self.flush_now() {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                _ => return self.sock.readable().await,
            }
            tokio::select! {
                r = self.sock.readable() => return r,
                r = self.sock.writable() => r?,
            }
        }
    }
}

impl<S: AsFd> AsFd for TlsSock<S> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.sock.as_fd()
    }
}

impl<S: AsRawFd> AsRawFd for TlsSock<S> {
    fn as_raw_fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }
}

impl<S: Sock> Sock for TlsSock<S> {
    fn readable(&self) -> impl Future<Output = io::Result<()>> + Send {
        self.wait_readable()
    }

    fn writable(&self) -> impl Future<Output = io::Result<()>> + Send {
        self.sock.writable()
    }

    /// Decrypts into the spare capacity of `buf`, reading the socket only when rustls
    /// has nothing buffered.
    ///
    /// PERF: rustls copies into initialised memory only (and this crate has no
    /// `unsafe`), so the bytes it is about to copy are zeroed first: only those, as
    /// rustls says how many it holds.
    fn try_read_buf(&self, buf: &mut Vec<u8>) -> io::Result<usize> {
        if buf.len() == buf.capacity() {
            buf.reserve(4096);
        }
        let mut c = self.conn.try_borrow_mut().map_err(|_| busy())?;
        let ready = fill_plain(&self.sock, &mut c)?;
        let start = buf.len();
        buf.resize(start + ready.min(buf.capacity() - start), 0);
        let res = read_plain(&mut c, &mut buf[start..]);
        buf.truncate(start + *res.as_ref().unwrap_or(&0));
        res
    }

    /// Encrypts up to [`WRITE_MAX`] bytes of `data` and sends what the socket takes.
    /// Ciphertext left over is sent by the next call, by `readable()` or by
    /// [`Sock::try_flush`]; while some is left, this returns `WouldBlock`.
    fn try_write(&self, data: &[u8]) -> io::Result<usize> {
        let mut c = self.conn.try_borrow_mut().map_err(|_| busy())?;
        flush(&self.sock, &mut c)?;
        let n = c.writer().write(&data[..data.len().min(WRITE_MAX)])?;
        match flush(&self.sock, &mut c) {
            Err(e) if e.kind() != io::ErrorKind::WouldBlock => Err(e),
            _ => Ok(n),
        }
    }

    /// Runs `f` without touching the event loop's readiness: rustls may hold bytes the
    /// socket no longer shows, so only a real read may clear it (see [`Raw`]).
    fn try_io<R>(&self, _interest: Interest, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
        f()
    }

    fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.plaintext_buffered() {
            return Poll::Ready(Ok(()));
        }
        self.sock.poll_read_ready(cx)
    }

    fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.sock.poll_write_ready(cx)
    }

    fn try_flush(&self) -> io::Result<()> {
        self.flush_now()
    }

    fn buffered_input(&self) -> bool {
        self.plaintext_buffered()
    }

    fn splices(&self) -> bool {
        false
    }

    fn close_notify(&self) {
        if let Ok(mut c) = self.conn.try_borrow_mut() {
            c.send_close_notify();
            let _ = flush(&self.sock, &mut c);
        }
    }
}

/// Makes plaintext ready in rustls: what it already holds, else records read from the
/// socket. Returns how many plaintext bytes rustls holds, 0 at the end of the stream
/// (close_notify, or a TCP close: see [`read_plain`]), `WouldBlock` when the socket
/// has nothing yet.
fn fill_plain<S: Sock>(sock: &S, c: &mut Connection) -> io::Result<usize> {
    let mut eof = false;
    loop {
        let state = match c.process_new_packets() {
            Ok(state) => state,
            Err(e) => {
                let _ = flush(sock, c); // the alert, if the socket takes it
                return Err(tls_err(e));
            }
        };
        if c.wants_write() {
            // post-handshake messages (tickets, key updates): sent now or later
            let _ = flush(sock, c);
        }
        let ready = state.plaintext_bytes_to_read();
        if ready > 0 || eof || state.peer_has_closed() {
            return Ok(ready);
        }
        match c.read_tls(&mut Raw(sock)) {
            Ok(n) => eof = n == 0,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Drives a handshake to its end on `sock`: sends what rustls queues, reads what it
/// needs, until it is done or fails (an alert is sent when the socket takes it).
async fn drive<S: Sock>(sock: &S, conn: &mut Connection) -> Result<(), HandshakeError> {
    while conn.is_handshaking() {
        match flush(sock, conn) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                sock.writable().await?;
                continue;
            }
            Err(_) => return Err(HandshakeError::Closed),
        }
        if !conn.is_handshaking() {
            break;
        }
        if !handshake_read(sock, |raw| conn.read_tls(raw)).await? {
            continue;
        }
        if let Err(e) = conn.process_new_packets() {
            let _ = flush(sock, conn);
            // the client verifier ran within `process_new_packets`, on this thread
            if super::verify::take_ca_refusal() {
                return Err(HandshakeError::CaChain(e));
            }
            return Err(e.into());
        }
    }
    // the last flight (and TLS 1.3 tickets) leave now if the socket takes them, or
    // with the next write or wait
    let _ = flush(sock, conn);
    Ok(())
}

/// One read of handshake records by `read` (the acceptor's or the connection's
/// `read_tls`): `true` when bytes came, `false` when there were none yet (the socket
/// has been waited for) or the read was interrupted, so the caller loops.
async fn handshake_read<'a, S: Sock>(
    sock: &'a S,
    read: impl FnOnce(&mut Raw<'a, S>) -> io::Result<usize>,
) -> Result<bool, HandshakeError> {
    match read(&mut Raw(sock)) {
        Ok(0) => Err(HandshakeError::Closed),
        Ok(_) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
            sock.readable().await?;
            Ok(false)
        }
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(false),
        Err(e) if e.kind() == io::ErrorKind::ConnectionReset => Err(HandshakeError::Closed),
        Err(e) => Err(e.into()),
    }
}

/// Reads the client hello into `acc`, then returns the chosen configuration's
/// connection, or sends the alert of a refused hello.
async fn read_hello<S: Sock>(
    sock: &S,
    choose: impl FnOnce(&ClientHello<'_>) -> Result<Arc<ServerConfig>, &'static str>,
) -> Result<Connection, HandshakeError> {
    let mut acc = Acceptor::default();
    let accepted = loop {
        if !handshake_read(sock, |raw| acc.read_tls(raw)).await? {
            continue;
        }
        match acc.accept() {
            Ok(Some(a)) => break a,
            Ok(None) => {}
            Err((e, mut alert)) => {
                let _ = alert.write(&mut Raw(sock));
                return Err(e.into());
            }
        }
    };
    let config = match choose(&accepted.client_hello()) {
        Ok(c) => c,
        Err(why) => return Err(HandshakeError::Refused(why)),
    };
    match accepted.into_connection(config) {
        Ok(c) => Ok(Connection::Server(c)),
        Err((e, mut alert)) => {
            let _ = alert.write(&mut Raw(sock));
            Err(e.into())
        }
    }
}

/// Completes the server side of a handshake on an accepted socket within `timeout`.
/// `choose` sees the client hello (SNI, ALPN, signature schemes) and returns the
/// configuration to use, or why the hello is refused.
pub async fn accept<S: Sock>(
    sock: S,
    timeout: Option<Duration>,
    choose: impl FnOnce(&ClientHello<'_>) -> Result<Arc<ServerConfig>, &'static str>,
) -> Result<TlsSock<S>, HandshakeError> {
    let hs = async {
        let mut conn = read_hello(&sock, choose).await?;
        drive(&sock, &mut conn).await?;
        Ok::<_, HandshakeError>(conn)
    };
    let conn = crate::timer::timeout(timeout, hs).await.map_err(|_| HandshakeError::Timeout)??;
    Ok(TlsSock::new(sock, conn))
}

/// Completes the client side of a handshake on a connected socket within `timeout`,
/// naming `name` in SNI and checking the server's certificate against it (as the
/// configuration says).
pub async fn connect<S: Sock>(
    sock: S,
    config: Arc<ClientConfig>,
    name: ServerName<'static>,
    timeout: Option<Duration>,
) -> Result<TlsSock<S>, HandshakeError> {
    let mut conn = Connection::Client(ClientConnection::new(config, name)?);
    crate::timer::timeout(timeout, drive(&sock, &mut conn)).await.map_err(|_| HandshakeError::Timeout)??;
    Ok(TlsSock::new(sock, conn))
}

/// A TLS connection keeps its task while idle: its rustls state is not in the
/// descriptor.
// TODO(#11): park TLS connections with their rustls state in the slab entry.
impl<S: Sock> Parkable for TlsSock<S> {
    const PARKS: bool = false;
    fn into_fd(self) -> std::io::Result<std::os::fd::OwnedFd> {
        Err(std::io::ErrorKind::Unsupported.into())
    }
    fn from_fd(_fd: std::os::fd::OwnedFd) -> std::io::Result<Self> {
        Err(std::io::ErrorKind::Unsupported.into())
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
