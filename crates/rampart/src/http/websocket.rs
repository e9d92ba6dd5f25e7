//! The WebSocket handshake keys (RFC 6455 §4): what a proxy needs when one side of a
//! WebSocket upgrade speaks HTTP/1.1 and the other HTTP/2 (RFC 8441), where no key
//! travels. Towards an HTTP/1 server rampart makes the `Sec-WebSocket-Key` an HTTP/2
//! client could not send and checks the server's `Sec-WebSocket-Accept` against it;
//! towards an HTTP/1 client it makes the `Sec-WebSocket-Accept` an HTTP/2 server does
//! not send. HAProxy counterpart: `h1_generate_random_ws_input_key()`,
//! `h1_calculate_ws_output_key()` of mux_h1.c.

use base64::Engine as _;
use sha1::Digest as _;

use super::uri::comma_items;
use super::MsgView;

/// The GUID RFC 6455 §1.3 appends to the key.
const GUID: &[u8] = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// A new `Sec-WebSocket-Key`: 16 random bytes in base64 (24 characters).
pub fn new_key() -> [u8; 24] {
    let mut raw = [0u8; 16];
    if aws_lc_rs::rand::fill(&mut raw).is_err() {
        // the key only proves the server speaks WebSocket; it is no secret
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        raw.copy_from_slice(&t.as_nanos().to_le_bytes());
    }
    let mut out = [0u8; 24];
    let n = base64::engine::general_purpose::STANDARD.encode_slice(raw, &mut out).unwrap_or(0);
    debug_assert_eq!(n, 24);
    out
}

/// The `Sec-WebSocket-Accept` a server answers `key` with: base64(SHA-1(key + GUID)).
pub fn accept_key(key: &[u8]) -> [u8; 28] {
    let mut h = sha1::Sha1::new();
    h.update(key);
    h.update(GUID);
    let digest = h.finalize();
    let mut out = [0u8; 28];
    let n = base64::engine::general_purpose::STANDARD.encode_slice(digest, &mut out).unwrap_or(0);
    debug_assert_eq!(n, 28);
    out
}

/// Whether a message asks for (or agrees to) the WebSocket protocol: an `Upgrade`
/// header naming `websocket`.
pub fn is_websocket(msg: MsgView<'_>) -> bool {
    msg.full_values(b"upgrade").any(|v| comma_items(v).any(|t| t.eq_ignore_ascii_case(b"websocket")))
}

/// The first protocol an `Upgrade` header names (what becomes HTTP/2's `:protocol`,
/// single-valued: RFC 8441 §4).
pub fn first_protocol<'a>(msg: MsgView<'a>) -> Option<&'a [u8]> {
    msg.full_values(b"upgrade").flat_map(comma_items).find(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_key_is_rfc6455s_example() {
        assert_eq!(&accept_key(b"dGhlIHNhbXBsZSBub25jZQ=="), b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    }

    #[test]
    fn new_keys_are_24_base64_characters_and_differ() {
        let (a, b) = (new_key(), new_key());
        assert_ne!(a, b);
        let raw = base64::engine::general_purpose::STANDARD.decode(a).unwrap();
        assert_eq!(raw.len(), 16);
    }
}
