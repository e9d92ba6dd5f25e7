//! The PROXY protocol header a new server connection starts with (`server ...
//! send-proxy`, `send-proxy-v2`, `send-proxy-v2-ssl[-cn]`, `proxy-v2-options`).
//! HAProxy counterpart: `conn_send_proxy()` and `make_proxy_line()` (src/connection.c);
//! the bytes come from `rampart_proto::pp`.
//!
//! The header is made once per connection attempt, as part of the connection's key
//! (`backend::conn_key`): an idle connection is reused only for a stream that would
//! send the same header, as HAProxy does.

use std::time::Duration;

use rampart_cfg::model::SendProxy;
use rampart_proto::pp::{self, tlv};

use super::ServerConn;
use crate::io::write_all;
use crate::proxy::Runtime;
use crate::sample::ctx::ConnInfo;

/// What the header of a new server connection is made of.
#[derive(Debug, Clone, Copy)]
pub struct ConnectCtx<'a> {
    /// The client connection as the stream sees it (addresses after a received PROXY
    /// header, `set-src` ...).
    pub conn: &'a ConnInfo,
    /// The stream's unique id for `proxy-v2-options unique-id`: `None` leaves the TLV
    /// out, an empty value is sent when the frontend has no `unique-id-format` (as
    /// HAProxy does).
    pub unique_id: Option<&'a [u8]>,
    /// The stream's place in a queue (`set-priority-class`/`-offset`).
    pub prio: super::Priority,
    /// The values of the backend's `sni` expressions for this stream (empty without
    /// any): a TLS server with `sni` announces its own.
    pub sni: &'a [(usize, Box<str>)],
    /// `force-persist` applied: the server a rule chose is used even when down or in
    /// maintenance, and a failed connection is not redispatched.
    pub force_persist: bool,
    /// A WebSocket stream (an HTTP/1 `Upgrade: websocket`, an HTTP/2 client's
    /// extended CONNECT): the server's `ws` chooses its protocol.
    pub ws: bool,
    /// `set-bc-mark`, `set-bc-tos`: the server socket's mark and TOS.
    pub bc: crate::action::sockopt::BcOpts,
}

impl<'a> ConnectCtx<'a> {
    /// A context without a unique id.
    pub fn new(conn: &'a ConnInfo) -> ConnectCtx<'a> {
        ConnectCtx {
            conn,
            unique_id: None,
            prio: super::Priority::default(),
            sni: &[],
            force_persist: false,
            ws: false,
            bc: crate::action::sockopt::BcOpts { mark: None, tos: None },
        }
    }
}

/// The header for a connection relaying `cx.conn`, or `None` without `send-proxy*`.
/// Addresses are the ones the rules see (after a received PROXY header or `set-src`);
/// a unix-socket client gives "PROXY UNKNOWN" (v1) or a LOCAL header (v2), as in
/// HAProxy. TLVs come in HAProxy's order: CRC32C, AUTHORITY, UNIQUE_ID, SSL.
pub fn header(opts: &SendProxy, cx: ConnectCtx<'_>) -> Option<Vec<u8>> {
    let client = cx.conn;
    let version = opts.version?;
    let addrs = client.src.zip(client.dst());
    let mut out = Vec::with_capacity(64);
    if version == 1 {
        pp::encode_v1(&mut out, addrs);
        return Some(out);
    }
    // HAProxy forwards the AUTHORITY it received (or the TLS SNI, which rampart lacks).
    let authority = opts.authority.then(|| client.proxy_header().and_then(|h| h.authority())).flatten();
    let unique_id = cx.unique_id.filter(|_| opts.unique_id);
    let ssl = opts.ssl.then(|| ssl_tlv(opts, client.ext.as_ref().and_then(|e| e.tls.as_deref())));
    let tlvs = [
        authority.map(|a| (tlv::AUTHORITY, a)),
        unique_id.map(|u| (tlv::UNIQUE_ID, u)),
        ssl.as_deref().map(|v| (tlv::SSL, v)),
    ];
    let tlvs: Vec<(u8, &[u8])> = tlvs.into_iter().flatten().collect();
    pp::encode_v2(&mut out, addrs, &tlvs, opts.crc32c);
    Some(out)
}

/// The value of the SSL TLV (`send-proxy-v2-ssl[-cn]`, `proxy-v2-options ssl|cert-cn|
/// ssl-cipher`) for a client connection whose handshake gave `tls` (`None`: plain): a
/// client byte (TLS; a certificate on this connection / in its session), the
/// certificate's verification result (32 bits, 0: verified), then sub-TLVs: the
/// version, and as asked the certificate's common name and the cipher.
/// HAProxy counterpart: the `SRV_PP_V2_SSL` part of `make_proxy_line_v2()`.
fn ssl_tlv(opts: &SendProxy, tls: Option<&crate::tls::types::TlsInfo>) -> Vec<u8> {
    const CLIENT_SSL: u8 = 0x01;
    const CLIENT_CERT_CONN: u8 = 0x02;
    const CLIENT_CERT_SESS: u8 = 0x04;
    let mut v = vec![0u8; 5];
    let Some(t) = tls else { return v };
    v[0] |= CLIENT_SSL;
    push_sub(&mut v, tlv::SSL_VERSION, t.version.as_bytes());
    let leaf = t.peer_certs.first();
    if leaf.is_some() {
        v[0] |= CLIENT_CERT_SESS;
        if !t.resumed {
            v[0] |= CLIENT_CERT_CONN;
        }
        v[1..5].copy_from_slice(&t.verify.result.to_be_bytes());
    }
    if opts.ssl_cn {
        if let Some(cn) = leaf.and_then(|der| common_name(der)) {
            push_sub(&mut v, tlv::SSL_CN, cn.as_bytes());
        }
    }
    // as HAProxy: of the certificate the frontend presented (`SSL_get_certificate()`)
    let local = t.local_cert.as_ref().and_then(|c| c.leaf());
    if opts.ssl_cert_key {
        if let Some(key) = local.and_then(key_algo) {
            push_sub(&mut v, tlv::SSL_KEY_ALG, key.as_bytes());
        }
    }
    if opts.ssl_cert_sig {
        if let Some(sig) = local.and_then(sig_algo) {
            push_sub(&mut v, tlv::SSL_SIG_ALG, sig.as_bytes());
        }
    }
    if opts.ssl_cipher {
        push_sub(&mut v, tlv::SSL_CIPHER, t.cipher.as_bytes());
    }
    v
}

/// `cert-key`: the key type and its size in bits (`RSA2048`, `EC256`), none for another
/// type (rustls has no DSA). HAProxy counterpart: `cert_get_pkey_algo()`.
fn key_algo(der: &[u8]) -> Option<String> {
    use x509_parser::public_key::PublicKey;
    let (_, c) = x509_parser::parse_x509_certificate(der).ok()?;
    match c.public_key().parsed().ok()? {
        PublicKey::RSA(k) => Some(format!("RSA{}", k.key_size())),
        PublicKey::EC(k) => Some(format!("EC{}", k.key_size())),
        _ => None,
    }
}

/// `cert-sig`: OpenSSL's short name of the certificate's signature algorithm
/// (`RSA-SHA256`, `ecdsa-with-SHA256`).
fn sig_algo(der: &[u8]) -> Option<String> {
    let (_, c) = x509_parser::parse_x509_certificate(der).ok()?;
    Some(crate::sample::fetch::ssl_bc::openssl_oid_name(&c.signature_algorithm.algorithm.to_id_string()))
}

/// Appends a sub-TLV: type, 16-bit length, value.
fn push_sub(out: &mut Vec<u8>, kind: u8, value: &[u8]) {
    out.push(kind);
    out.extend_from_slice(&(value.len().min(u16::MAX as usize) as u16).to_be_bytes());
    out.extend_from_slice(&value[..value.len().min(u16::MAX as usize)]);
}

/// The first common name of a certificate's subject.
fn common_name(der: &[u8]) -> Option<String> {
    let (_, c) = x509_parser::parse_x509_certificate(der).ok()?;
    let cn = c.subject().iter_common_name().next()?;
    cn.as_str().ok().map(str::to_owned)
}

/// Writes the header `sc` was opened for (its key's) on a connection just opened
/// (never one from the pool) to a server of backend `be`; `false` when the write
/// failed. A TLS connection sent it before its handshake (`backend::connect_server`).
pub async fn send(rt: &Runtime, be: usize, sc: &ServerConn) -> bool {
    if sc.stream.tls().is_some() {
        return true;
    }
    let Some(bytes) = &sc.key.proxy else { return true };
    let timeout: Option<Duration> = rt.proxies[be].timeouts.server;
    write_all(&sc.stream, bytes, timeout).await.is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rampart_proto::pp::{decode, Decoded};

    fn client() -> ConnInfo {
        ConnInfo::new(Some("192.0.2.9:5000".parse().unwrap()), -1)
    }

    #[test]
    fn ssl_tlv_says_whether_the_client_came_over_tls() {
        let opts = SendProxy { version: Some(2), ssl: true, ssl_cipher: true, ..SendProxy::default() };
        let plain = client();
        let bytes = header(&opts, ConnectCtx::new(&plain)).unwrap();
        let Decoded::Done(h, _) = decode(&bytes) else { panic!("{bytes:?}") };
        let ssl = h.ssl().unwrap();
        assert_eq!((ssl.client, ssl.verify, ssl.subs.len()), (0, 0, 0));
        let mut tls = client();
        tls.set_tls(crate::tls::types::TlsInfo {
            sni: None,
            version: "TLSv1.3",
            cipher: "TLS_AES_128_GCM_SHA256",
            bits: 128,
            alpn: None,
            resumed: false,
            peer_certs: Vec::new(),
            local_cert: None,
            verify: Default::default(),
        });
        let bytes = header(&opts, ConnectCtx::new(&tls)).unwrap();
        let Decoded::Done(h, _) = decode(&bytes) else { panic!("{bytes:?}") };
        let ssl = h.ssl().unwrap();
        assert_eq!(ssl.client, 0x01);
        assert_eq!(ssl.subs, [(tlv::SSL_VERSION, &b"TLSv1.3"[..]), (tlv::SSL_CIPHER, &b"TLS_AES_128_GCM_SHA256"[..])]);
    }

    #[test]
    fn cert_key_and_sig_name_the_certificate_algorithms() {
        let ca = crate::tls::testpki::ca("pp ca");
        let der = ca.der();
        assert_eq!(key_algo(&der).as_deref(), Some("EC256"));
        assert_eq!(sig_algo(&der).as_deref(), Some("ecdsa-with-SHA256"));
        assert_eq!((key_algo(b"junk"), sig_algo(b"junk")), (None, None));
    }

    #[test]
    fn v1_and_v2_headers() {
        let mut c = client();
        c.set_dst("198.51.100.3:80".parse().unwrap());
        let v1 = SendProxy { version: Some(1), ..SendProxy::default() };
        assert_eq!(header(&v1, ConnectCtx::new(&c)).unwrap(), b"PROXY TCP4 192.0.2.9 198.51.100.3 5000 80\r\n");
        let v2 = SendProxy { version: Some(2), crc32c: true, authority: true, ..SendProxy::default() };
        let bytes = header(&v2, ConnectCtx::new(&c)).unwrap();
        let Decoded::Done(h, n) = decode(&bytes) else { panic!("{bytes:?}") };
        assert_eq!(n, bytes.len());
        assert_eq!(h.tcp_addrs(), Some(("192.0.2.9:5000".parse().unwrap(), "198.51.100.3:80".parse().unwrap())));
        assert_eq!(h.tlvs.iter().map(|t| t.kind).collect::<Vec<_>>(), [tlv::CRC32C]);
        assert_eq!(header(&SendProxy::default(), ConnectCtx::new(&c)), None);
        let uid = SendProxy { version: Some(2), unique_id: true, ..SendProxy::default() };
        let with = |u: Option<&[u8]>| {
            let cx = ConnectCtx { unique_id: u, ..ConnectCtx::new(&c) };
            let Decoded::Done(h, _) = decode(&header(&uid, cx).unwrap()) else { panic!() };
            h.unique_id().map(<[u8]>::to_vec)
        };
        assert_eq!(with(Some(b"id-9")), Some(b"id-9".to_vec()));
        assert_eq!(with(Some(b"")), Some(Vec::new()));
        assert_eq!(with(None), None);
    }

    #[test]
    fn authority_is_forwarded_from_the_received_header() {
        let mut received = Vec::new();
        let addrs = Some(("10.1.1.1:1".parse().unwrap(), "10.2.2.2:2".parse().unwrap()));
        pp::encode_v2(&mut received, addrs, &[(tlv::AUTHORITY, b"svc.example")], false);
        let Decoded::Done(h, _) = decode(&received) else { panic!() };
        let mut c = client();
        c.set_proxy_header(h);
        let v2 = SendProxy { version: Some(2), authority: true, ..SendProxy::default() };
        let Decoded::Done(out, _) = decode(&header(&v2, ConnectCtx::new(&c)).unwrap()) else { panic!() };
        assert_eq!(out.authority(), Some(&b"svc.example"[..]));
        assert_eq!(out.tcp_addrs(), Some(("10.1.1.1:1".parse().unwrap(), "10.2.2.2:2".parse().unwrap())));
    }

    #[test]
    fn unknown_addresses() {
        let c = ConnInfo::new(None, -1);
        let v1 = SendProxy { version: Some(1), ..SendProxy::default() };
        assert_eq!(header(&v1, ConnectCtx::new(&c)).unwrap(), b"PROXY UNKNOWN\r\n");
        let v2 = SendProxy { version: Some(2), ..SendProxy::default() };
        let Decoded::Done(h, _) = decode(&header(&v2, ConnectCtx::new(&c)).unwrap()) else { panic!() };
        assert_eq!(h.command, pp::Command::Local);
    }
}
