//! What makes two connections to the same server not interchangeable: a request may
//! only be sent on an idle connection opened for the same key.
//! HAProxy counterpart: `struct conn_hash_params` and `conn_calculate_hash()`
//! (src/connection.c), filled in `connect_server()` (src/backend.c).

use std::net::SocketAddr;

/// The parameters a server connection was opened with, beyond its server. All `None`
/// for a plain server with a fixed address, the common case (no allocation).
///
/// COMPAT: HAProxy keys its idle connections by a 64-bit hash of these parameters;
/// rampart compares the values themselves, so two keys never collide.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnKey {
    /// The address connected to, when it came from the client connection rather than
    /// the `server` line: an address without a port or with a `+N`/`-N` offset, the
    /// hidden server of `option transparent` (after `set-dst`, `set-dst-port`).
    pub dst: Option<SocketAddr>,
    /// The SNI a TLS connection announced (`server ... ssl sni <expr>`).
    pub sni: Option<Box<str>>,
    /// The PROXY header the connection started with (`send-proxy`, `send-proxy-v2`).
    // PERF: a Vec, as made by `send_proxy::header` (a boxed slice would reallocate)
    pub proxy: Option<Vec<u8>>,
    /// The server's TLS trust when the connection was verified
    /// (`ServerTlsRt::trust_epoch`: moves with each `commit ssl ca-file|crl-file`).
    pub trust: u64,
    /// Opened for a WebSocket stream in the protocol the server's `ws` names rather
    /// than its own (`ServerRt::ws_apart`): never reused, never shared.
    pub ws: bool,
    /// The netfilter mark and TOS the socket was given (`set-bc-mark`, `set-bc-tos`,
    /// HAProxy 3.x, which keys its idle connections by them too).
    pub mark: Option<u32>,
    pub tos: Option<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_differ_by_any_parameter() {
        let plain = ConnKey::default();
        let dst1 = ConnKey { dst: Some("127.0.0.1:8001".parse().unwrap()), ..ConnKey::default() };
        let dst2 = ConnKey { dst: Some("127.0.0.1:8002".parse().unwrap()), ..ConnKey::default() };
        let sni = ConnKey { sni: Some("a.example".into()), ..ConnKey::default() };
        let pp1 = ConnKey { proxy: Some(b"PROXY TCP4 1.1.1.1 2.2.2.2 40000 80\r\n".to_vec()), ..ConnKey::default() };
        let pp2 = ConnKey { proxy: Some(b"PROXY TCP4 1.1.1.1 2.2.2.2 50000 80\r\n".to_vec()), ..ConnKey::default() };
        let trust = ConnKey { trust: 1, ..ConnKey::default() };
        let ws = ConnKey { ws: true, ..ConnKey::default() };
        let mark1 = ConnKey { mark: Some(1), ..ConnKey::default() };
        let mark2 = ConnKey { mark: Some(2), ..ConnKey::default() };
        let tos = ConnKey { tos: Some(1), ..ConnKey::default() };
        let all = [&plain, &dst1, &dst2, &sni, &pp1, &pp2, &trust, &ws, &mark1, &mark2, &tos];
        for (i, a) in all.iter().enumerate() {
            for (j, b) in all.iter().enumerate() {
                assert_eq!(a == b, i == j, "{a:?} {b:?}");
            }
        }
        assert_eq!(dst1.clone(), dst1);
    }
}
