//! SETTINGS parameters (RFC 9113 §6.5): their identifiers, the parameter list of a
//! SETTINGS frame, and [`Settings`], one endpoint's values with the RFC's defaults and
//! the range checks of §6.5.2.
//!
//! HAProxy counterpart: `h2c_handle_settings()` (src/mux_h2.c) and the `H2_SETTINGS_*`
//! identifiers (include/haproxy/h2.h). What a change implies (resizing stream windows,
//! the HPACK encoder's table size, the PUSH_PROMISE rule of a client) is the mux's.

use super::error::{ErrorCode, H2Error};
use super::frame::{encode_settings, MAX_WINDOW_SIZE};

/// Initial SETTINGS_HEADER_TABLE_SIZE (§6.5.2).
pub const DEFAULT_HEADER_TABLE_SIZE: u32 = 4096;
/// Initial SETTINGS_INITIAL_WINDOW_SIZE, also the connection's first window (§6.9.2).
pub const DEFAULT_INITIAL_WINDOW_SIZE: u32 = 65_535;
/// Initial SETTINGS_MAX_FRAME_SIZE, and the smallest value it may take (§4.2).
pub const DEFAULT_MAX_FRAME_SIZE: u32 = 16_384;
/// Largest value SETTINGS_MAX_FRAME_SIZE may take (2^24-1).
pub const MAX_MAX_FRAME_SIZE: u32 = 16_777_215;

/// A setting identifier (§6.5.2, §11.3). Unknown ones are kept, and ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SettingId {
    /// 0x1 SETTINGS_HEADER_TABLE_SIZE: largest HPACK table the sender's decoder keeps.
    HeaderTableSize,
    /// 0x2 SETTINGS_ENABLE_PUSH: 0 or 1.
    EnablePush,
    /// 0x3 SETTINGS_MAX_CONCURRENT_STREAMS: streams the sender lets the peer open.
    MaxConcurrentStreams,
    /// 0x4 SETTINGS_INITIAL_WINDOW_SIZE: the sender's initial stream window.
    InitialWindowSize,
    /// 0x5 SETTINGS_MAX_FRAME_SIZE: largest frame payload the sender accepts.
    MaxFrameSize,
    /// 0x6 SETTINGS_MAX_HEADER_LIST_SIZE: largest field section the sender accepts
    /// (names, values and 32 bytes per field).
    MaxHeaderListSize,
    /// 0x8 SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 8441 §3): extended CONNECT, 0 or 1.
    EnableConnectProtocol,
    /// Any other identifier.
    Unknown(u16),
}

impl SettingId {
    /// The identifier a number stands for.
    pub fn from_u16(n: u16) -> SettingId {
        match n {
            0x1 => SettingId::HeaderTableSize,
            0x2 => SettingId::EnablePush,
            0x3 => SettingId::MaxConcurrentStreams,
            0x4 => SettingId::InitialWindowSize,
            0x5 => SettingId::MaxFrameSize,
            0x6 => SettingId::MaxHeaderListSize,
            0x8 => SettingId::EnableConnectProtocol,
            n => SettingId::Unknown(n),
        }
    }

    /// The identifier's number on the wire.
    pub fn to_u16(self) -> u16 {
        match self {
            SettingId::HeaderTableSize => 0x1,
            SettingId::EnablePush => 0x2,
            SettingId::MaxConcurrentStreams => 0x3,
            SettingId::InitialWindowSize => 0x4,
            SettingId::MaxFrameSize => 0x5,
            SettingId::MaxHeaderListSize => 0x6,
            SettingId::EnableConnectProtocol => 0x8,
            SettingId::Unknown(n) => n,
        }
    }
}

/// One parameter of a SETTINGS frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    /// Which setting.
    pub id: SettingId,
    /// Its new value.
    pub value: u32,
}

/// The parameters of a SETTINGS frame, as received (a multiple of 6 bytes, checked by
/// the frame parser). Iterate them in order with [`SettingsParams::iter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettingsParams<'a> {
    payload: &'a [u8],
}

impl<'a> SettingsParams<'a> {
    /// Over a SETTINGS payload; a trailing partial parameter is never yielded.
    pub fn new(payload: &'a [u8]) -> SettingsParams<'a> {
        SettingsParams { payload }
    }

    /// The parameters, in the order they came.
    pub fn iter(&self) -> SettingsIter<'a> {
        SettingsIter { chunks: self.payload.chunks_exact(6) }
    }

    /// How many parameters.
    pub fn len(&self) -> usize {
        self.payload.len() / 6
    }

    /// No parameter (an ACK, or an empty SETTINGS frame).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<'a> IntoIterator for SettingsParams<'a> {
    type Item = Setting;
    type IntoIter = SettingsIter<'a>;

    fn into_iter(self) -> SettingsIter<'a> {
        self.iter()
    }
}

/// Iterator over the parameters of a SETTINGS frame.
#[derive(Debug, Clone)]
pub struct SettingsIter<'a> {
    chunks: std::slice::ChunksExact<'a, u8>,
}

impl Iterator for SettingsIter<'_> {
    type Item = Setting;

    fn next(&mut self) -> Option<Setting> {
        let c = self.chunks.next()?;
        Some(Setting {
            id: SettingId::from_u16(u16::from_be_bytes([c[0], c[1]])),
            value: u32::from_be_bytes([c[2], c[3], c[4], c[5]]),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.chunks.size_hint()
    }
}

/// One endpoint's settings: what we advertised, or what the peer did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// SETTINGS_HEADER_TABLE_SIZE, 4096 at first.
    pub header_table_size: u32,
    /// SETTINGS_ENABLE_PUSH, true at first (meaningless from a client's peer).
    pub enable_push: bool,
    /// SETTINGS_MAX_CONCURRENT_STREAMS; `None` (no limit) at first.
    pub max_concurrent_streams: Option<u32>,
    /// SETTINGS_INITIAL_WINDOW_SIZE, 65535 at first, at most 2^31-1.
    pub initial_window_size: u32,
    /// SETTINGS_MAX_FRAME_SIZE, 16384 at first, within 2^14..=2^24-1.
    pub max_frame_size: u32,
    /// SETTINGS_MAX_HEADER_LIST_SIZE; `None` (unlimited) at first.
    pub max_header_list_size: Option<u32>,
    /// SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 8441), false at first.
    pub enable_connect_protocol: bool,
}

impl Default for Settings {
    /// The initial values of §6.5.2, in force until a SETTINGS frame changes them.
    fn default() -> Settings {
        Settings {
            header_table_size: DEFAULT_HEADER_TABLE_SIZE,
            enable_push: true,
            max_concurrent_streams: None,
            initial_window_size: DEFAULT_INITIAL_WINDOW_SIZE,
            max_frame_size: DEFAULT_MAX_FRAME_SIZE,
            max_header_list_size: None,
            enable_connect_protocol: false,
        }
    }
}

impl Settings {
    /// Applies a SETTINGS frame's parameters in order (§6.5.3). A value out of range is
    /// a connection error: ENABLE_PUSH or ENABLE_CONNECT_PROTOCOL other than 0/1 and
    /// MAX_FRAME_SIZE outside 2^14..=2^24-1 are PROTOCOL_ERROR, INITIAL_WINDOW_SIZE above
    /// 2^31-1 is FLOW_CONTROL_ERROR. Unknown identifiers are ignored. On error the
    /// parameters before the bad one stay applied; the connection is closing anyway.
    pub fn apply(&mut self, params: SettingsParams<'_>) -> Result<(), H2Error> {
        params.iter().try_for_each(|s| self.apply_one(s))
    }

    /// Applies one parameter, with the checks of [`Settings::apply`].
    pub fn apply_one(&mut self, s: Setting) -> Result<(), H2Error> {
        match s.id {
            SettingId::HeaderTableSize => self.header_table_size = s.value,
            SettingId::EnablePush => self.enable_push = flag(s.value)?,
            SettingId::MaxConcurrentStreams => self.max_concurrent_streams = Some(s.value),
            SettingId::InitialWindowSize => self.initial_window_size = window(s.value)?,
            SettingId::MaxFrameSize => self.max_frame_size = frame_size(s.value)?,
            SettingId::MaxHeaderListSize => self.max_header_list_size = Some(s.value),
            SettingId::EnableConnectProtocol => self.enable_connect_protocol = flag(s.value)?,
            SettingId::Unknown(_) => {}
        }
        Ok(())
    }

    /// Appends a SETTINGS frame carrying every value that differs from `from` (the
    /// defaults for the connection preface, or what the peer already acknowledged).
    /// A limit cannot go back to "unlimited": such a change is left out.
    pub fn encode_changes(&self, from: &Settings, out: &mut Vec<u8>) {
        let mut list = [Setting { id: SettingId::Unknown(0), value: 0 }; 7];
        let mut n = 0;
        for (mine, theirs) in self.as_params().into_iter().zip(from.as_params()) {
            if let Some(s) = mine.filter(|_| mine != theirs) {
                list[n] = s;
                n += 1;
            }
        }
        encode_settings(out, &list[..n]);
    }

    /// Every value as a parameter, in identifier order; `None` for "unlimited".
    fn as_params(&self) -> [Option<Setting>; 7] {
        let p = |id, value| Some(Setting { id, value });
        [
            p(SettingId::HeaderTableSize, self.header_table_size),
            p(SettingId::EnablePush, self.enable_push as u32),
            self.max_concurrent_streams.and_then(|v| p(SettingId::MaxConcurrentStreams, v)),
            p(SettingId::InitialWindowSize, self.initial_window_size),
            p(SettingId::MaxFrameSize, self.max_frame_size),
            self.max_header_list_size.and_then(|v| p(SettingId::MaxHeaderListSize, v)),
            p(SettingId::EnableConnectProtocol, self.enable_connect_protocol as u32),
        ]
    }
}

/// A 0/1 setting; anything else is a PROTOCOL_ERROR.
fn flag(v: u32) -> Result<bool, H2Error> {
    match v {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(H2Error::Connection(ErrorCode::ProtocolError)),
    }
}

/// "Values above the maximum flow-control window size of 2^31-1 MUST be treated as a
/// connection error of type FLOW_CONTROL_ERROR."
fn window(v: u32) -> Result<u32, H2Error> {
    if v > MAX_WINDOW_SIZE {
        return Err(H2Error::Connection(ErrorCode::FlowControlError));
    }
    Ok(v)
}

/// SETTINGS_MAX_FRAME_SIZE within 2^14..=2^24-1, else PROTOCOL_ERROR.
fn frame_size(v: u32) -> Result<u32, H2Error> {
    if !(DEFAULT_MAX_FRAME_SIZE..=MAX_MAX_FRAME_SIZE).contains(&v) {
        return Err(H2Error::Connection(ErrorCode::ProtocolError));
    }
    Ok(v)
}
