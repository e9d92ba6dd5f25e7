//! HTTP/2 wire codec (RFC 9113, RFC 7541), I/O-free: frames in and out, SETTINGS,
//! and HPACK field compression. The HTTP/2 muxes of the daemon (front and back) build
//! on it and own everything that needs a connection: stream states, flow-control
//! windows, the CONTINUATION sequence, field validation, the role's rules.
//!
//! HAProxy counterpart: src/h2.c and the frame handling of src/mux_h2.c, and the
//! src/hpack-*.c files.
//!
//! - `error`: [`ErrorCode`] (§7) and [`H2Error`], a connection or a stream error
//! - `frame`: the preface, [`FrameHeader`], [`Frame`] and [`parse`] with the checks of
//!   §6, [`next_frame`], the `encode_*` functions
//! - `settings`: [`SettingId`], the parameters of a SETTINGS frame, [`Settings`] with
//!   the defaults and range checks of §6.5.2
//! - `hpack`: field block [`hpack::Decoder`] and [`hpack::Encoder`]

mod error;
pub mod frame;
#[cfg(test)]
mod frame_tests;
pub mod hpack;
mod settings;

pub use error::{ErrorCode, H2Error};
pub use frame::{next_frame, parse, Frame, FrameHeader, FrameType, Priority};
pub use settings::{
    Setting, SettingId, Settings, SettingsIter, SettingsParams, DEFAULT_HEADER_TABLE_SIZE, DEFAULT_INITIAL_WINDOW_SIZE,
    DEFAULT_MAX_FRAME_SIZE, MAX_MAX_FRAME_SIZE,
};
