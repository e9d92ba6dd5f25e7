//! WebSocket frames and the handshake's accept key, for the tests that carry
//! WebSocket through the proxy (RFC 6455).

use base64::Engine as _;
use sha1::Digest as _;

/// RFC 6455 §4.2.2: the accept key for `key`.
pub fn accept_of(key: &str) -> String {
    let mut h = sha1::Sha1::new();
    h.update(key.as_bytes());
    h.update(b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11");
    base64::engine::general_purpose::STANDARD.encode(h.finalize())
}

/// A client's WebSocket text frame (masked, RFC 6455 §5.3), payload under 126 bytes.
pub fn client_frame(payload: &[u8]) -> Vec<u8> {
    let mask = [0x12, 0x34, 0x56, 0x78];
    let mut f = vec![0x81, 0x80 | payload.len() as u8];
    f.extend_from_slice(&mask);
    f.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    f
}

/// A server's WebSocket text frame (not masked).
pub fn server_frame(payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0x81, payload.len() as u8];
    f.extend_from_slice(payload);
    f
}
