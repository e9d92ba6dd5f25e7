//! HTTP/2 error codes (RFC 9113 §7) and the two classes of errors a peer's frames can
//! cause (§5.4): one that ends the connection and one that only resets a stream.
//!
//! HAProxy counterpart: `enum h2_err` and `h2_err_str()` (include/haproxy/h2.h,
//! src/h2.c). The mux turns an [`H2Error`] into a GOAWAY or a RST_STREAM; nothing here
//! decides how the connection ends.

use std::fmt;

/// An error code, as carried by RST_STREAM and GOAWAY (RFC 9113 §7). Codes this
/// version does not know are kept as they came: they "MUST NOT trigger any special
/// behavior".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// 0x0: not an error (graceful shutdown, end of a stream the peer no longer needs).
    NoError,
    /// 0x1: an unspecific protocol error.
    ProtocolError,
    /// 0x2: an unexpected internal error.
    InternalError,
    /// 0x3: the peer violated flow control.
    FlowControlError,
    /// 0x4: a SETTINGS frame was not acknowledged in time.
    SettingsTimeout,
    /// 0x5: a frame came on a half-closed stream.
    StreamClosed,
    /// 0x6: a frame had an invalid size.
    FrameSizeError,
    /// 0x7: the stream was refused before any processing (safe to retry).
    RefusedStream,
    /// 0x8: the stream is no longer needed.
    Cancel,
    /// 0x9: the field compression context cannot be maintained.
    CompressionError,
    /// 0xa: the connection of a CONNECT request was reset or closed abnormally.
    ConnectError,
    /// 0xb: the peer is generating excessive load.
    EnhanceYourCalm,
    /// 0xc: the transport does not meet the security requirements.
    InadequateSecurity,
    /// 0xd: HTTP/1.1 is required for this request.
    Http11Required,
    /// A code RFC 9113 does not define, kept as received.
    Unknown(u32),
}

impl ErrorCode {
    /// The code's number on the wire.
    pub fn code(self) -> u32 {
        match self {
            ErrorCode::NoError => 0x0,
            ErrorCode::ProtocolError => 0x1,
            ErrorCode::InternalError => 0x2,
            ErrorCode::FlowControlError => 0x3,
            ErrorCode::SettingsTimeout => 0x4,
            ErrorCode::StreamClosed => 0x5,
            ErrorCode::FrameSizeError => 0x6,
            ErrorCode::RefusedStream => 0x7,
            ErrorCode::Cancel => 0x8,
            ErrorCode::CompressionError => 0x9,
            ErrorCode::ConnectError => 0xa,
            ErrorCode::EnhanceYourCalm => 0xb,
            ErrorCode::InadequateSecurity => 0xc,
            ErrorCode::Http11Required => 0xd,
            ErrorCode::Unknown(n) => n,
        }
    }

    /// The code a number stands for; unknown numbers are kept.
    pub fn from_code(n: u32) -> ErrorCode {
        match n {
            0x0 => ErrorCode::NoError,
            0x1 => ErrorCode::ProtocolError,
            0x2 => ErrorCode::InternalError,
            0x3 => ErrorCode::FlowControlError,
            0x4 => ErrorCode::SettingsTimeout,
            0x5 => ErrorCode::StreamClosed,
            0x6 => ErrorCode::FrameSizeError,
            0x7 => ErrorCode::RefusedStream,
            0x8 => ErrorCode::Cancel,
            0x9 => ErrorCode::CompressionError,
            0xa => ErrorCode::ConnectError,
            0xb => ErrorCode::EnhanceYourCalm,
            0xc => ErrorCode::InadequateSecurity,
            0xd => ErrorCode::Http11Required,
            n => ErrorCode::Unknown(n),
        }
    }

    /// The RFC's name for the code ("PROTOCOL_ERROR"), or "UNKNOWN" (HAProxy's
    /// `h2_err_str()` says "_UNKNOWN_").
    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::NoError => "NO_ERROR",
            ErrorCode::ProtocolError => "PROTOCOL_ERROR",
            ErrorCode::InternalError => "INTERNAL_ERROR",
            ErrorCode::FlowControlError => "FLOW_CONTROL_ERROR",
            ErrorCode::SettingsTimeout => "SETTINGS_TIMEOUT",
            ErrorCode::StreamClosed => "STREAM_CLOSED",
            ErrorCode::FrameSizeError => "FRAME_SIZE_ERROR",
            ErrorCode::RefusedStream => "REFUSED_STREAM",
            ErrorCode::Cancel => "CANCEL",
            ErrorCode::CompressionError => "COMPRESSION_ERROR",
            ErrorCode::ConnectError => "CONNECT_ERROR",
            ErrorCode::EnhanceYourCalm => "ENHANCE_YOUR_CALM",
            ErrorCode::InadequateSecurity => "INADEQUATE_SECURITY",
            ErrorCode::Http11Required => "HTTP_1_1_REQUIRED",
            ErrorCode::Unknown(_) => "UNKNOWN",
        }
    }
}

impl From<u32> for ErrorCode {
    fn from(n: u32) -> ErrorCode {
        ErrorCode::from_code(n)
    }
}

impl From<ErrorCode> for u32 {
    fn from(e: ErrorCode) -> u32 {
        e.code()
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorCode::Unknown(n) => write!(f, "UNKNOWN(0x{n:x})"),
            e => f.write_str(e.name()),
        }
    }
}

/// What a peer's frame did wrong, and how much of the connection it takes down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum H2Error {
    /// A connection error (RFC 9113 §5.4.1): send GOAWAY with this code and close.
    Connection(ErrorCode),
    /// A stream error (§5.4.2): send RST_STREAM with this code on this stream; the
    /// connection goes on.
    Stream(u32, ErrorCode),
}

impl H2Error {
    /// The error code to send, whichever the class.
    pub fn code(self) -> ErrorCode {
        match self {
            H2Error::Connection(c) | H2Error::Stream(_, c) => c,
        }
    }

    /// Whether the whole connection must end.
    pub fn is_connection(self) -> bool {
        matches!(self, H2Error::Connection(_))
    }
}

impl fmt::Display for H2Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            H2Error::Connection(c) => write!(f, "connection error {c}"),
            H2Error::Stream(id, c) => write!(f, "stream error {c} on stream {id}"),
        }
    }
}

impl std::error::Error for H2Error {}
