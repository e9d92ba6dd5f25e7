//! HTTP/2 on the client side (server role): a connection task that reads and writes
//! frames and runs each stream as a rampart stream, through the same `HttpFront` as
//! HTTP/1. Reached by ALPN `h2` on a TLS listener, or by the connection preface on a
//! cleartext HTTP listener. HAProxy counterpart: mux_h2.c.
//!
//! - `conn`: the connection task (frames in and out, settings, windows, streams)
//! - `shared`: what the connection and its streams share (output, HPACK encoder,
//!   windows, one slot per stream)
//! - `front`: one stream as the stream sees it ([`front::H2Front`], its response half
//!   [`front::H2Sink`])
//! - `glitch`: the connection's glitches (HAProxy 3.x), its flood bounds
//! - `streams`: the connection's streams, each polled when it was woken
//!
//! Reached by ALPN `h2`, `bind ... proto h2`, or the preface on an HTTP/1 listener.
//!
//! A CONNECT or an extended CONNECT (WebSocket over HTTP/2, RFC 8441, offered in our
//! SETTINGS) becomes a tunnel carried by DATA frames once answered.
//!
//! COMPAT: streams running at the same time each work on a copy of the `sess.`
//! variables (the last to end writes it back); request trailers are not forwarded to
//! HTTP/1 servers; no `-d` traces.

pub mod conn;
pub mod front;
pub mod glitch;
mod shared;
mod streams;

pub use conn::serve;
pub use shared::trim_spares;
