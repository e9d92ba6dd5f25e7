//! Unit tests of `tls::stream`: real handshakes over loopback sockets, both sides.

use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore, ServerConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::*;
use crate::io::{read_some, write_all, IoError};

struct Pki {
    cert: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
}

fn pki(name: &str) -> Pki {
    let kp = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let cert = rcgen::CertificateParams::new(vec![name.to_string()]).unwrap().self_signed(&kp).unwrap();
    Pki { cert: cert.der().clone(), key: PrivatePkcs8KeyDer::from(kp.serialize_der()).into() }
}

fn server_config(p: &Pki, alpn: &[&[u8]]) -> Arc<ServerConfig> {
    let mut c = ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(vec![p.cert.clone()], p.key.clone_key())
        .unwrap();
    c.alpn_protocols = alpn.iter().map(|a| a.to_vec()).collect();
    Arc::new(c)
}

fn client_config(trusted: &Pki, alpn: &[&[u8]]) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    roots.add(trusted.cert.clone()).unwrap();
    let mut c = ClientConfig::builder().with_root_certificates(roots).with_no_client_auth();
    c.alpn_protocols = alpn.iter().map(|a| a.to_vec()).collect();
    Arc::new(c)
}

async fn pair() -> (TcpStream, TcpStream) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let c = TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
    let (s, _) = l.accept().await.unwrap();
    (s, c)
}

fn name(n: &str) -> ServerName<'static> {
    ServerName::try_from(n.to_string()).unwrap()
}

/// Both sides through `accept`/`connect`; then a large exchange both ways, read and
/// written through `Sock` as the muxes do.
#[tokio::test]
async fn handshake_and_bulk_exchange_both_ways() {
    let p = pki("a.test");
    let (s, c) = pair().await;
    let sc = server_config(&p, &[b"http/1.1"]);
    let seen_sni = std::cell::Cell::new(None);
    let server = accept(s, None, |hello| {
        seen_sni.set(hello.server_name().map(str::to_string));
        Ok(sc.clone())
    });
    let client = connect(c, client_config(&p, &[b"h2", b"http/1.1"]), name("a.test"), None);
    let (server, client) = tokio::join!(server, client);
    let (server, client) = (server.unwrap(), client.unwrap());
    assert_eq!(seen_sni.take().as_deref(), Some("a.test"));
    assert_eq!(server.sni().as_deref(), Some("a.test"));
    assert_eq!(server.with_conn(|c| c.alpn_protocol().map(<[u8]>::to_vec)).flatten(), Some(b"http/1.1".to_vec()));
    assert!(!server.splices());

    let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let send = async {
        write_all(&client, &data, Some(Duration::from_secs(5))).await.unwrap();
        crate::io::shutdown_write(&client);
    };
    let echo = async {
        let mut got = Vec::new();
        loop {
            let mut buf = Vec::with_capacity(10_000);
            match read_some(&server, &mut buf, None).await.unwrap() {
                0 => break,
                _ => {
                    write_all(&server, &buf, None).await.unwrap();
                    got.extend_from_slice(&buf);
                }
            }
        }
        crate::io::shutdown_write(&server);
        got
    };
    let back = async {
        let mut got = Vec::new();
        loop {
            let mut buf = Vec::with_capacity(50_000);
            match read_some(&client, &mut buf, None).await.unwrap() {
                0 => break,
                _ => got.extend_from_slice(&buf),
            }
        }
        got
    };
    let ((), echoed, back) = tokio::join!(send, echo, back);
    assert_eq!(echoed.len(), data.len());
    assert!(echoed == data);
    assert!(back == data);
}

/// A tokio-rustls client (another implementation of the client loop) against `accept`.
#[tokio::test]
async fn tokio_rustls_client_talks_to_accept() {
    let p = pki("b.test");
    let (s, c) = pair().await;
    let sc = server_config(&p, &[]);
    let server = async {
        let t = accept(s, None, |_| Ok(sc.clone())).await.unwrap();
        let mut buf = Vec::with_capacity(64);
        let n = read_some(&t, &mut buf, None).await.unwrap();
        assert_eq!(&buf[..n], b"ping");
        write_all(&t, b"pong", None).await.unwrap();
        crate::io::shutdown_write(&t);
        // the client's close_notify ends the stream
        let mut rest = Vec::with_capacity(16);
        assert_eq!(read_some(&t, &mut rest, None).await.unwrap(), 0);
    };
    let client = async {
        let cx = tokio_rustls::TlsConnector::from(client_config(&p, &[]));
        let mut t = cx.connect(name("b.test"), c).await.unwrap();
        t.write_all(b"ping").await.unwrap();
        let mut got = Vec::new();
        t.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, b"pong");
        t.shutdown().await.unwrap();
    };
    tokio::join!(server, client);
}

/// A client that does not trust the certificate aborts; the server sees the alert.
#[tokio::test]
async fn untrusted_certificate_fails_both_sides() {
    let p = pki("c.test");
    let other = pki("c.test");
    let (s, c) = pair().await;
    let sc = server_config(&p, &[]);
    let server = accept(s, None, |_| Ok(sc.clone()));
    let client = connect(c, client_config(&other, &[]), name("c.test"), None);
    let (server, client) = tokio::join!(server, client);
    let ce = client.unwrap_err();
    assert!(matches!(ce, HandshakeError::Tls(rustls::Error::InvalidCertificate(_))), "{ce:?}");
    let se = server.unwrap_err();
    assert!(matches!(se, HandshakeError::Tls(rustls::Error::AlertReceived(_))), "{se:?}");
    assert_eq!(se.haproxy_msg(), "SSL handshake failure");
}

/// The chooser refuses the hello (as `strict-sni` does): the handshake fails.
#[tokio::test]
async fn refused_hello_fails() {
    let p = pki("d.test");
    let (s, c) = pair().await;
    let server = accept(s, None, |_| Err("no certificate for this name"));
    let client = connect(c, client_config(&p, &[]), name("d.test"), None);
    let (server, client) = tokio::join!(server, client);
    assert!(matches!(server.unwrap_err(), HandshakeError::Refused("no certificate for this name")));
    assert!(client.is_err());
}

/// A peer that sends no hello, and one that is not TLS at all.
#[tokio::test]
async fn silent_and_plaintext_peers() {
    let p = pki("e.test");
    let sc = server_config(&p, &[]);
    let (s, c) = pair().await;
    let r = tokio::select! {
        biased; // the wheel must run before the handshake arms its timer
        () = crate::timer::run_wheel(|| false, || ()) => unreachable!("the wheel runs forever"),
        r = accept(s, Some(Duration::from_millis(100)), |_| Ok(sc.clone())) => r,
    };
    let e = r.unwrap_err();
    assert!(matches!(e, HandshakeError::Timeout));
    assert_eq!(e.haproxy_msg(), "Timeout during SSL handshake");
    drop(c);

    let (s, mut c) = pair().await;
    c.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
    let e = accept(s, None, |_| Ok(sc.clone())).await.unwrap_err();
    assert!(matches!(e, HandshakeError::Tls(_)), "{e:?}");

    let (s, c) = pair().await;
    drop(c);
    let e = accept(s, None, |_| Ok(sc.clone())).await.unwrap_err();
    assert!(matches!(e, HandshakeError::Closed), "{e:?}");
    assert_eq!(e.haproxy_msg(), "Connection closed during SSL handshake");
}

/// Bytes rustls decrypted but the caller's buffer could not take stay readable without
/// the socket showing anything: `buffered_input` and `readable()` see them.
#[tokio::test]
async fn buffered_plaintext_is_seen_without_the_socket() {
    let p = pki("f.test");
    let (s, c) = pair().await;
    let sc = server_config(&p, &[]);
    let (server, client) =
        tokio::join!(accept(s, None, |_| Ok(sc.clone())), connect(c, client_config(&p, &[]), name("f.test"), None));
    let (server, client) = (server.unwrap(), client.unwrap());
    write_all(&client, &[b'x'; 1000], None).await.unwrap();
    let mut small = Vec::with_capacity(100);
    assert_eq!(read_some(&server, &mut small, None).await.unwrap(), 100);
    assert!(server.buffered_input());
    assert!(crate::io::input_pending(&server));
    tokio::time::timeout(Duration::from_secs(1), server.readable()).await.unwrap().unwrap();
    let mut rest = Vec::with_capacity(4096);
    assert_eq!(read_some(&server, &mut rest, None).await.unwrap(), 900);
    assert!(!server.buffered_input());
    drop(client);
    let mut end = Vec::with_capacity(16);
    let r = read_some(&server, &mut end, Some(Duration::from_secs(1))).await;
    assert!(matches!(r, Ok(0) | Err(IoError::Io(_))), "{r:?}");
}
