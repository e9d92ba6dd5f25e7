//! The connection a check opens (directly or through a SOCKS4 proxy, in clear or
//! over TLS), how it is closed, and how its errors read in check reports.
//! HAProxy counterpart: the connect step of tcpcheck.c (`tcpcheck_eval_connect()`),
//! `conn_err_code_str()`.

use std::io;
use std::net::SocketAddr;
use std::os::fd::AsFd;

use tokio::net::TcpStream;

use crate::io::Sock;
use crate::tls::stream::TlsSock;

/// A check's connection once up.
pub enum CheckConn {
    Plain(TcpStream),
    Tls(Box<TlsSock<TcpStream>>),
}

impl std::fmt::Debug for CheckConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.is_tls() { "CheckConn::Tls" } else { "CheckConn::Plain" })
    }
}

impl CheckConn {
    pub fn is_tls(&self) -> bool {
        matches!(self, CheckConn::Tls(_))
    }

    /// Whether the TLS handshake negotiated `h2` by ALPN.
    pub fn alpn_h2(&self) -> bool {
        let CheckConn::Tls(s) = self else { return false };
        s.with_conn(|c| match c {
            rustls::Connection::Client(c) => c.alpn_protocol() == Some(b"h2"),
            rustls::Connection::Server(c) => c.alpn_protocol() == Some(b"h2"),
        })
        .unwrap_or(false)
    }

    /// Writes all of `data`.
    pub async fn write_all(&self, data: &[u8]) -> io::Result<()> {
        let res = match self {
            CheckConn::Plain(s) => crate::io::write_all(s, data, None).await,
            CheckConn::Tls(s) => crate::io::write_all(s.as_ref(), data, None).await,
        };
        res.map_err(|e| match e {
            crate::io::IoError::Io(e) => e,
            other => io::Error::new(io::ErrorKind::BrokenPipe, other.to_string()),
        })
    }

    /// Reads at most `room` more bytes into `buf`, waiting for some: `Ok(0)` at the end.
    pub async fn read(&self, buf: &mut Vec<u8>, room: usize) -> io::Result<usize> {
        match self {
            CheckConn::Plain(s) => read_up_to(s, buf, room).await,
            CheckConn::Tls(s) => read_up_to(s.as_ref(), buf, room).await,
        }
    }

    /// Closes the connection: with a reset, as HAProxy closes its checks, unless the
    /// rule asked to `linger` (a clean close).
    pub fn close(self, linger: bool) {
        let fd = match &self {
            CheckConn::Plain(s) => s.as_fd(),
            CheckConn::Tls(s) => s.get_ref().as_fd(),
        };
        if !linger {
            let _ = socket2::SockRef::from(&fd).set_linger(Some(std::time::Duration::ZERO));
        }
    }
}

async fn read_up_to<S: Sock>(s: &S, buf: &mut Vec<u8>, room: usize) -> io::Result<usize> {
    loop {
        let mut chunk = Vec::with_capacity(room.clamp(1, 4096));
        match s.try_read_buf(&mut chunk) {
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                return Ok(n);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => s.readable().await?,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Connects a check to `addr`, through a SOCKS4 proxy (`check-via-socks4`). A `connect()` that fails at once (no route, no
/// permission...) reads "General socket error (<error>)", as HAProxy words a socket
/// error met before the connection was under way; a refusal that arrives later reads
/// as the error alone.
pub async fn connect(addr: SocketAddr, via_socks4: Option<SocketAddr>) -> io::Result<TcpStream> {
    let Some(proxy) = via_socks4 else { return connect_tcp(addr).await };
    let mut stream = connect_tcp(proxy).await?;
    crate::io::socks4::handshake(&mut stream, addr).await?;
    Ok(stream)
}

async fn connect_tcp(addr: SocketAddr) -> io::Result<TcpStream> {
    let sock = socket2::Socket::new(socket2::Domain::for_address(addr), socket2::Type::STREAM, None)?;
    sock.set_nonblocking(true)?;
    sock.set_nodelay(true)?;
    match sock.connect(&addr.into()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(io::Error::new(e.kind(), format!("General socket error ({})", strerror(&e)))),
    }
    let stream = TcpStream::from_std(std::net::TcpStream::from(sock))?;
    stream.writable().await?;
    match stream.take_error()? {
        Some(e) => Err(e),
        None => Ok(stream),
    }
}

/// The text of an I/O error without Rust's ` (os error N)` suffix, as `strerror()`.
pub fn strerror(e: &io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error ") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_errors_as_haproxy_words_them() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        // nothing listens on port 1 of loopback: refused once under way
        let e = rt.block_on(connect("127.0.0.1:1".parse().unwrap(), None)).unwrap_err();
        assert_eq!(strerror(&e), "Connection refused");
        // the broadcast address cannot be connected to: connect() fails at once
        let e = rt.block_on(connect("255.255.255.255:80".parse().unwrap(), None)).unwrap_err();
        assert!(strerror(&e).starts_with("General socket error ("), "{e}");
    }

    #[test]
    fn strerror_drops_the_os_error_suffix() {
        let e = io::Error::from_raw_os_error(libc::ECONNREFUSED);
        assert_eq!(strerror(&e), "Connection refused");
        let e = io::Error::from_raw_os_error(libc::ECONNRESET);
        assert_eq!(strerror(&e), "Connection reset by peer");
    }
}
