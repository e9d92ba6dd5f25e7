//! SOCKS4 CONNECT through a server's `socks4` proxy: once the TCP connection to the
//! proxy is up, ask it for the server's address and wait for its grant, before any
//! byte of the stream (or of a check with `check-via-socks4`) goes out.
//! HAProxy counterpart: `conn_send_socks4_proxy_request()` and
//! `conn_recv_socks4_proxy_response()` (src/connection.c).

use std::io;
use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The user id HAProxy sends.
const USER_ID: &[u8; 8] = b"HAProxy\0";
/// The reply code of a granted request.
const GRANTED: u8 = 0x5a;

/// The CONNECT request for `dst`: version 4, command 1, port, IPv4 address, user id.
/// `None` for an IPv6 destination (SOCKS4 carries IPv4 only).
pub fn request(dst: SocketAddr) -> Option<[u8; 16]> {
    let SocketAddr::V4(v4) = dst else { return None };
    let mut req = [0u8; 16];
    req[0] = 4;
    req[1] = 1;
    req[2..4].copy_from_slice(&v4.port().to_be_bytes());
    req[4..8].copy_from_slice(&v4.ip().octets());
    req[8..].copy_from_slice(USER_ID);
    Some(req)
}

/// Asks the proxy at the other end of `stream` to connect to `dst`; `Ok` once it
/// granted the request (its 8-byte reply read in full).
pub async fn handshake(stream: &mut TcpStream, dst: SocketAddr) -> io::Result<()> {
    // COMPAT: HAProxy sends garbage for an IPv6 server; rampart fails the connection
    let req = request(dst)
        .ok_or_else(|| io::Error::new(io::ErrorKind::Unsupported, "SOCKS4 proxies reach IPv4 addresses only"))?;
    stream.write_all(&req).await?;
    let mut reply = [0u8; 8];
    stream.read_exact(&mut reply).await?;
    if reply[1] != GRANTED {
        return Err(io::Error::new(io::ErrorKind::ConnectionRefused, "SOCKS4 proxy refused the connection"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_bytes() {
        let r = request("127.0.0.1:8080".parse().unwrap()).unwrap();
        assert_eq!(r, *b"\x04\x01\x1f\x90\x7f\x00\x00\x01HAProxy\x00");
        assert_eq!(request("[::1]:80".parse().unwrap()), None);
    }

    #[test]
    fn handshake_reads_the_grant() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let at = l.local_addr().unwrap();
            let proxy = tokio::spawn(async move {
                for code in [0x5au8, 0x5b] {
                    let (mut c, _) = l.accept().await.unwrap();
                    let mut req = [0u8; 16];
                    c.read_exact(&mut req).await.unwrap();
                    assert_eq!(&req[..2], [4, 1]);
                    c.write_all(&[0, code, 0, 0, 0, 0, 0, 0]).await.unwrap();
                }
            });
            let dst: SocketAddr = "10.0.0.1:80".parse().unwrap();
            let mut s = TcpStream::connect(at).await.unwrap();
            handshake(&mut s, dst).await.unwrap();
            let mut s = TcpStream::connect(at).await.unwrap();
            assert_eq!(handshake(&mut s, dst).await.unwrap_err().kind(), io::ErrorKind::ConnectionRefused);
            proxy.await.unwrap();
        });
    }
}
