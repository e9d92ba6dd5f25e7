//! The protocol-neutral HTTP message between the muxes and the stream (HAProxy's HTX):
//! what rules, logs and balancers read and write, whatever protocol carried it.
//! HAProxy counterpart: htx.c, http_htx.c, http.c.
//!
//! - `msg`: [`MsgHead`] (start line, header entries into the receive buffer, rewrites
//!   in an arena) and its read view [`MsgView`]
//! - `uri`: the parts of a request target, comma-separated header values
//! - `cookie`: the cookie walks of persistence and `capture cookie`, the inserted
//!   `Set-Cookie`
//! - `reply`: responses rampart builds itself (error pages, `return`, `deny` ...)
//! - `websocket`: the WebSocket handshake keys, for upgrades between HTTP/1 and HTTP/2
//!
//! - [`Method`], [`Version`]: the vocabulary every protocol shares
//!
//! Not here: wire formats (the muxes), bodies (streamed by the muxes).

pub mod cookie;
pub mod msg;
pub mod reply;
pub mod uri;
pub mod websocket;

pub use msg::{BodyLen, MsgHead, MsgView, NoRoom};
/// The vocabulary every protocol shares: the request method and the protocol version
/// (HTTP/1.0 to HTTP/3), defined by the I/O-free codec crate.
pub use rampart_proto::http::{Method, Version};
pub use reply::{ReplyTpl, Synth};

/// The reason phrase HAProxy 2.6 gives a status it writes itself (`set-status`
/// without `reason`, `return`, `deny` without an error page): its own table
/// (`http_get_reason`), which keeps some pre-RFC 9110 wordings (`302 Moved
/// Temporarily`, `413 Request Entity Too Large`) and falls back to the status class.
#[allow(clippy::match_overlapping_arm, reason = "specific statuses first, then their class")]
pub fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        101 => "Switching Protocols",
        102 => "Processing",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        203 => "Non-Authoritative Information",
        204 => "No Content",
        205 => "Reset Content",
        206 => "Partial Content",
        207 => "Multi-Status",
        210 => "Content Different",
        226 => "IM Used",
        300 => "Multiple Choices",
        301 => "Moved Permanently",
        302 => "Moved Temporarily",
        303 => "See Other",
        304 => "Not Modified",
        305 => "Use Proxy",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        310 => "Too many Redirects",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        407 => "Proxy Authentication Required",
        408 => "Request Time-out",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        412 => "Precondition Failed",
        413 => "Request Entity Too Large",
        414 => "Request-URI Too Long",
        415 => "Unsupported Media Type",
        416 => "Requested range unsatisfiable",
        417 => "Expectation failed",
        418 => "I'm a teapot",
        421 => "Misdirected Request",
        422 => "Unprocessable Content",
        423 => "Locked",
        424 => "Method failure",
        425 => "Too Early",
        426 => "Upgrade Required",
        428 => "Precondition Required",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        449 => "Retry With",
        450 => "Blocked by Windows Parental Controls",
        451 => "Unavailable For Legal Reasons",
        456 => "Unrecoverable Error",
        499 => "client has closed connection",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway or Proxy Error",
        503 => "Service Unavailable",
        504 => "Gateway Time-out",
        505 => "HTTP Version not supported",
        506 => "Variant also negotiate",
        507 => "Insufficient storage",
        508 => "Loop detected",
        509 => "Bandwidth Limit Exceeded",
        510 => "Not extended",
        511 => "Network authentication required",
        520 => "Web server is returning an unknown error",
        100..=199 => "Informational",
        200..=299 => "Success",
        300..=399 => "Redirection",
        400..=499 => "Client Error",
        500..=599 => "Server Error",
        _ => "Other",
    }
}
