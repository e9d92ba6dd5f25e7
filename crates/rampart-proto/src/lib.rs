//! I/O-free wire codecs. Bytes in, structure out; "incomplete" is not an error.
//!
//! - `dns`: DNS queries and responses a resolver sends and reads (A, AAAA, CNAME, SRV, EDNS0)
//! - `fcgi`: FastCGI records and the CGI response head (the web server's side)
//! - `http`: protocol-neutral pieces of a message head (slices, method, version, headers)
//! - `h1`: HTTP/1.x heads (on httparse, with HAProxy's strictness), chunked framing
//! - `h2`: HTTP/2 frames and SETTINGS (RFC 9113), HPACK field compression (RFC 7541)
//! - `peers`: the peers protocol that replicates stick tables (handshake, messages, updates)
//! - `pp`: PROXY protocol v1/v2 headers (decode with HAProxy's limits, encode)
//! - `smtp`: SMTP server replies (the email alerts' client side)
//! - `spoe`: SPOP 2.0 frames between HAProxy and SPOE agents (HELLO, NOTIFY, ACK, DISCONNECT)
//! - `syslog`: syslog messages a `log-forward` receives (RFC 5424/3164 headers, TCP framing)
//! - `xfer`: the records of HAProxy's listening-socket transfer (`_getsocks`, `-x`)

pub mod dns;
pub mod fcgi;
pub mod h1;
pub mod h2;
pub mod http;
pub mod peers;
pub mod pp;
pub mod smtp;
pub mod spoe;
pub mod syslog;
pub mod xfer;
