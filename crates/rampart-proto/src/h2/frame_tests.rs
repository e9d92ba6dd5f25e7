//! Frame and SETTINGS tests: the header, every frame type through its encoder and
//! back, padding, every error of RFC 9113 §6 (table-driven), frame sequences split at
//! every offset, HEADERS + CONTINUATION splitting, and SETTINGS application.

use super::frame::*;
use super::hpack::{Decoder, Encoder, Flags, HpackError};
use super::*;

const MAX: u32 = DEFAULT_MAX_FRAME_SIZE;

/// A frame built by hand, for what the encoders never write (padding, bad lengths).
fn raw(kind: u8, flags: u8, stream_id: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    FrameHeader { len: payload.len() as u32, kind: FrameType::from_u8(kind), flags, stream_id }.encode(&mut out);
    out.extend_from_slice(payload);
    out
}

/// The only frame in `buf`, which it must take whole.
fn one(buf: &[u8]) -> Frame<'_> {
    match next_frame(buf, MAX) {
        Ok(Some((frame, n))) => {
            assert_eq!(n, buf.len(), "{frame:?}");
            frame
        }
        other => panic!("{buf:02x?}: {other:?}"),
    }
}

fn err(buf: &[u8]) -> H2Error {
    match next_frame(buf, MAX) {
        Err(e) => e,
        other => panic!("{buf:02x?}: {other:?}"),
    }
}

// === header ===

#[test]
fn preface_is_the_rfc_octets() {
    let hex = "505249202a20485454502f322e300d0a0d0a534d0d0a0d0a";
    let bytes: Vec<u8> = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    assert_eq!(&PREFACE[..], &bytes[..]);
}

#[test]
fn frame_header_parse_ignores_the_reserved_bit_and_encode_clears_it() {
    let bytes = [0x00, 0x40, 0x00, 0x01, 0x25, 0x80, 0x00, 0x00, 0x03, 0xaa];
    let h = FrameHeader::parse(&bytes).unwrap();
    assert_eq!(h, FrameHeader { len: 16384, kind: FrameType::Headers, flags: 0x25, stream_id: 3 });
    assert_eq!(h.frame_len(), 16393);
    assert!(h.has(flags::END_STREAM) && h.has(flags::END_HEADERS) && h.has(flags::PRIORITY));
    assert!(!h.has(flags::PADDED));
    let mut out = Vec::new();
    h.encode(&mut out);
    assert_eq!(out, [0x00, 0x40, 0x00, 0x01, 0x25, 0x00, 0x00, 0x00, 0x03]);
    for cut in 0..FRAME_HEADER_LEN {
        assert_eq!(FrameHeader::parse(&bytes[..cut]), None);
    }
    for b in 0..=255u8 {
        assert_eq!(FrameType::from_u8(b).to_u8(), b);
    }
    let h = FrameHeader::parse(&[0xff, 0xff, 0xff, 0xfa, 0, 0xff, 0xff, 0xff, 0xff]).unwrap();
    assert_eq!((h.len, h.kind, h.stream_id), (0xff_ffff, FrameType::Unknown(0xfa), MAX_STREAM_ID));
}

// === every type, encoder to parser ===

/// Each encoder's output with the frame it must parse to.
fn encoded_frames() -> Vec<(Vec<u8>, Frame<'static>)> {
    let prio = Priority { exclusive: true, dependency: 7, weight: 200 };
    let params: &[Setting] = &[
        Setting { id: SettingId::HeaderTableSize, value: 0 },
        Setting { id: SettingId::MaxConcurrentStreams, value: 100 },
        Setting { id: SettingId::Unknown(0x99), value: 1 },
    ];
    let mut v: Vec<(Vec<u8>, Frame<'static>)> = Vec::new();
    let mut add = |f: &dyn Fn(&mut Vec<u8>), frame| {
        let mut out = Vec::new();
        f(&mut out);
        v.push((out, frame));
    };
    add(
        &|o| encode_data(o, 1, b"hello", false),
        Frame::Data { stream_id: 1, data: b"hello", end_stream: false, flow_len: 5 },
    );
    add(&|o| encode_data(o, 3, b"", true), Frame::Data { stream_id: 3, data: b"", end_stream: true, flow_len: 0 });
    add(
        &|o| encode_headers(o, 5, b"\x82\x84", true, MAX),
        Frame::Headers { stream_id: 5, fragment: b"\x82\x84", end_stream: true, end_headers: true, priority: None },
    );
    add(&|o| encode_priority(o, 9, prio), Frame::Priority { stream_id: 9, priority: prio });
    add(&|o| encode_rst_stream(o, 1, ErrorCode::Cancel), Frame::RstStream { stream_id: 1, error: ErrorCode::Cancel });
    add(
        &|o| encode_rst_stream(o, 1, ErrorCode::Unknown(0x42)),
        Frame::RstStream { stream_id: 1, error: ErrorCode::Unknown(0x42) },
    );
    add(&|o| encode_settings(o, params), Frame::Settings { ack: false, params: SettingsParams::new(SETTINGS_PAYLOAD) });
    add(&|o| encode_settings(o, &[]), Frame::Settings { ack: false, params: SettingsParams::new(b"") });
    add(&encode_settings_ack, Frame::Settings { ack: true, params: SettingsParams::new(b"") });
    add(
        &|o| encode_push_promise(o, 1, 2, b"\x82", MAX),
        Frame::PushPromise { stream_id: 1, promised_id: 2, fragment: b"\x82", end_headers: true },
    );
    add(&|o| encode_ping(o, *b"rampart!"), Frame::Ping { ack: false, data: *b"rampart!" });
    add(&|o| encode_ping_ack(o, *b"rampart!"), Frame::Ping { ack: true, data: *b"rampart!" });
    add(
        &|o| encode_goaway(o, 11, ErrorCode::EnhanceYourCalm, b"calm down"),
        Frame::GoAway { last_stream_id: 11, error: ErrorCode::EnhanceYourCalm, debug: b"calm down" },
    );
    add(
        &|o| encode_goaway(o, MAX_STREAM_ID, ErrorCode::NoError, b""),
        Frame::GoAway { last_stream_id: MAX_STREAM_ID, error: ErrorCode::NoError, debug: b"" },
    );
    add(
        &|o| encode_window_update(o, 0, MAX_WINDOW_SIZE),
        Frame::WindowUpdate { stream_id: 0, increment: MAX_WINDOW_SIZE },
    );
    add(&|o| encode_window_update(o, 7, 1), Frame::WindowUpdate { stream_id: 7, increment: 1 });
    v.push((
        raw(0x9, flags::END_HEADERS, 5, b"\x86"),
        Frame::Continuation { stream_id: 5, fragment: b"\x86", end_headers: true },
    ));
    v.push((raw(0xfa, 0x3, 0, b"ext"), Frame::Unknown { kind: 0xfa, flags: 0x3, stream_id: 0, payload: b"ext" }));
    v
}

const SETTINGS_PAYLOAD: &[u8] = &[0, 1, 0, 0, 0, 0, 0, 3, 0, 0, 0, 100, 0, 0x99, 0, 0, 0, 1];

#[test]
fn every_frame_type_round_trips() {
    for (bytes, frame) in encoded_frames() {
        assert_eq!(one(&bytes), frame);
        let header = FrameHeader::parse(&bytes).unwrap();
        assert_eq!(parse(header, &bytes[FRAME_HEADER_LEN..], MAX), Ok(frame));
    }
}

#[test]
fn a_sequence_of_frames_split_at_every_offset() {
    let frames = encoded_frames();
    let stream: Vec<u8> = frames.iter().flat_map(|(b, _)| b.clone()).collect();
    let mut at = 0;
    for (bytes, frame) in &frames {
        let rest = &stream[at..];
        for cut in 0..bytes.len() {
            assert_eq!(next_frame(&rest[..cut], MAX), Ok(None), "cut at {cut} of {frame:?}");
        }
        assert_eq!(next_frame(rest, MAX), Ok(Some((*frame, bytes.len()))));
        at += bytes.len();
    }
    assert_eq!(at, stream.len());
}

#[test]
fn settings_parameters_iterate_in_order() {
    let bytes = raw(0x4, 0, 0, SETTINGS_PAYLOAD);
    let Frame::Settings { ack: false, params } = one(&bytes) else { panic!() };
    assert_eq!(params.len(), 3);
    let got: Vec<Setting> = params.iter().collect();
    assert_eq!(
        got,
        [
            Setting { id: SettingId::HeaderTableSize, value: 0 },
            Setting { id: SettingId::MaxConcurrentStreams, value: 100 },
            Setting { id: SettingId::Unknown(0x99), value: 1 },
        ]
    );
    for n in 0..=0xffu16 {
        assert_eq!(SettingId::from_u16(n).to_u16(), n);
    }
}

// === padding and priority ===

#[test]
fn padding_and_priority_are_removed() {
    let priority = Some(Priority { exclusive: false, dependency: 1, weight: 15 });
    let cases: [(&str, Vec<u8>, Frame<'static>); 6] = [
        (
            "DATA, pad length 2: flow control counts all 5 bytes",
            raw(0x0, flags::PADDED | flags::END_STREAM, 1, b"\x02hi\0\0"),
            Frame::Data { stream_id: 1, data: b"hi", end_stream: true, flow_len: 5 },
        ),
        (
            "DATA, padding taking every byte but the pad length",
            raw(0x0, flags::PADDED, 1, b"\x02\0\0"),
            Frame::Data { stream_id: 1, data: b"", end_stream: false, flow_len: 3 },
        ),
        (
            "DATA, a pad length of zero",
            raw(0x0, flags::PADDED, 1, b"\x00x"),
            Frame::Data { stream_id: 1, data: b"x", end_stream: false, flow_len: 2 },
        ),
        (
            "HEADERS with padding and priority",
            raw(0x1, flags::PADDED | flags::PRIORITY | flags::END_HEADERS, 3, b"\x01\x00\x00\x00\x01\x0f\x82\0"),
            Frame::Headers { stream_id: 3, fragment: b"\x82", end_stream: false, end_headers: true, priority },
        ),
        (
            "PUSH_PROMISE with padding, the promised id's reserved bit ignored",
            raw(0x5, flags::PADDED, 1, b"\x01\x80\x00\x00\x02\x82\0"),
            Frame::PushPromise { stream_id: 1, promised_id: 2, fragment: b"\x82", end_headers: false },
        ),
        (
            "PRIORITY, unused flags ignored",
            raw(0x2, 0xff, 3, b"\x80\x00\x00\x01\x00"),
            Frame::Priority { stream_id: 3, priority: Priority { exclusive: true, dependency: 1, weight: 0 } },
        ),
    ];
    for (what, bytes, frame) in cases {
        assert_eq!(one(&bytes), frame, "{what}");
    }
}

// === errors of §6 ===

#[test]
fn frame_errors() {
    use ErrorCode::{FrameSizeError as Size, ProtocolError as Proto};
    use H2Error::{Connection as Conn, Stream};
    let (p, e, pr, ph) = (flags::PADDED, flags::END_HEADERS, flags::PRIORITY, flags::PADDED | flags::PRIORITY);
    let cases: Vec<(&str, Vec<u8>, H2Error)> = vec![
        ("DATA on stream 0", raw(0x0, 0, 0, b"x"), Conn(Proto)),
        ("DATA padded without a pad length", raw(0x0, p, 1, b""), Conn(Size)),
        ("DATA padding as long as the payload", raw(0x0, p, 1, b"\x03ab"), Conn(Proto)),
        ("DATA padding longer than the payload", raw(0x0, p, 1, b"\xff"), Conn(Proto)),
        ("HEADERS on stream 0", raw(0x1, e, 0, b"\x82"), Conn(Proto)),
        ("HEADERS padded without a pad length", raw(0x1, p, 1, b""), Conn(Size)),
        ("HEADERS padding as long as the payload", raw(0x1, p | e, 1, b"\x03\x82\0"), Conn(Proto)),
        ("HEADERS priority cut", raw(0x1, pr, 1, b"\0\0\0"), Conn(Size)),
        ("HEADERS priority cut by the padding", raw(0x1, ph, 1, b"\x02\0\0\0\0\0\0"), Conn(Size)),
        ("HEADERS depending on itself", raw(0x1, pr | e, 3, b"\0\0\0\x03\x10\x82"), Conn(Proto)),
        ("PRIORITY on stream 0", raw(0x2, 0, 0, b"\0\0\0\x01\x10"), Conn(Proto)),
        ("PRIORITY of 4 bytes", raw(0x2, 0, 3, b"\0\0\0\x01"), Stream(3, Size)),
        ("PRIORITY of 6 bytes", raw(0x2, 0, 3, b"\0\0\0\x01\x10\0"), Stream(3, Size)),
        ("PRIORITY depending on itself", raw(0x2, 0, 3, b"\x80\0\0\x03\x10"), Stream(3, Proto)),
        ("RST_STREAM on stream 0", raw(0x3, 0, 0, b"\0\0\0\x08"), Conn(Proto)),
        ("RST_STREAM of 3 bytes", raw(0x3, 0, 1, b"\0\0\x08"), Conn(Size)),
        ("RST_STREAM of 5 bytes", raw(0x3, 0, 1, b"\0\0\0\x08\0"), Conn(Size)),
        ("SETTINGS on stream 1", raw(0x4, 0, 1, b""), Conn(Proto)),
        ("SETTINGS ACK with a parameter", raw(0x4, flags::ACK, 0, &SETTINGS_PAYLOAD[..6]), Conn(Size)),
        ("SETTINGS of 5 bytes", raw(0x4, 0, 0, &SETTINGS_PAYLOAD[..5]), Conn(Size)),
        ("SETTINGS of 7 bytes", raw(0x4, 0, 0, &SETTINGS_PAYLOAD[..7]), Conn(Size)),
        ("PUSH_PROMISE on stream 0", raw(0x5, e, 0, b"\0\0\0\x02"), Conn(Proto)),
        ("PUSH_PROMISE without a promised id", raw(0x5, e, 1, b"\0\0\0"), Conn(Size)),
        ("PUSH_PROMISE promised id cut by padding", raw(0x5, p, 1, b"\x01\0\0\0\x02"), Conn(Size)),
        ("PUSH_PROMISE padding too long", raw(0x5, p, 1, b"\x09\0\0\0\x02"), Conn(Proto)),
        ("PUSH_PROMISE promising stream 0", raw(0x5, e, 1, b"\x80\0\0\0"), Conn(Proto)),
        ("PING on stream 1", raw(0x6, 0, 1, b"12345678"), Conn(Proto)),
        ("PING of 7 bytes", raw(0x6, 0, 0, b"1234567"), Conn(Size)),
        ("PING of 9 bytes", raw(0x6, flags::ACK, 0, b"123456789"), Conn(Size)),
        ("GOAWAY on stream 1", raw(0x7, 0, 1, b"\0\0\0\0\0\0\0\0"), Conn(Proto)),
        ("GOAWAY of 7 bytes", raw(0x7, 0, 0, b"\0\0\0\0\0\0\0"), Conn(Size)),
        ("WINDOW_UPDATE of 3 bytes", raw(0x8, 0, 0, b"\0\0\x01"), Conn(Size)),
        ("WINDOW_UPDATE of 5 bytes on a stream", raw(0x8, 0, 1, b"\0\0\0\x01\0"), Conn(Size)),
        ("WINDOW_UPDATE of 0 for the connection", raw(0x8, 0, 0, b"\0\0\0\0"), Conn(Proto)),
        ("WINDOW_UPDATE of 0 for a stream", raw(0x8, 0, 5, b"\0\0\0\0"), Stream(5, Proto)),
        ("WINDOW_UPDATE of 0 but the reserved bit", raw(0x8, 0, 5, b"\x80\0\0\0"), Stream(5, Proto)),
        ("CONTINUATION on stream 0", raw(0x9, e, 0, b"\x82"), Conn(Proto)),
    ];
    for (what, bytes, expected) in cases {
        assert_eq!(err(&bytes), expected, "{what}");
        let header = FrameHeader::parse(&bytes).unwrap();
        assert_eq!(parse(header, &bytes[FRAME_HEADER_LEN..], MAX), Err(expected), "{what}");
    }
}

#[test]
fn a_frame_above_max_frame_size_is_refused_from_its_header() {
    for kind in [0x0, 0x1, 0x4, 0x8, 0xfa] {
        let mut bytes = raw(kind, 0, 1, &[]);
        bytes[..3].copy_from_slice(&[0x00, 0x40, 0x01]); // 16385
        assert_eq!(next_frame(&bytes, MAX), Err(H2Error::Connection(ErrorCode::FrameSizeError)), "type {kind}");
        bytes[2] = 0x00; // 16384: waits for the payload
        assert_eq!(FrameHeader::parse(&bytes).unwrap().check(MAX).is_ok(), kind != 0x4 && kind != 0x8);
    }
    // A larger limit admits it.
    let big = raw(0x0, 0, 1, &[0; 16385]);
    assert!(matches!(next_frame(&big, MAX_MAX_FRAME_SIZE), Ok(Some((Frame::Data { .. }, 16394)))));
    assert_eq!(next_frame(&big, MAX), Err(H2Error::Connection(ErrorCode::FrameSizeError)));
}

#[test]
fn after_a_stream_error_the_next_frame_is_read() {
    let mut buf = raw(0x2, 0, 3, b"\0\0\0\x01");
    buf.extend(raw(0x6, 0, 0, b"12345678"));
    assert_eq!(next_frame(&buf, MAX), Err(H2Error::Stream(3, ErrorCode::FrameSizeError)));
    let skip = FrameHeader::parse(&buf).unwrap().frame_len();
    assert_eq!(one(&buf[skip..]), Frame::Ping { ack: false, data: *b"12345678" });
}

#[test]
fn error_codes_keep_their_numbers() {
    for n in 0..=0x20u32 {
        assert_eq!(ErrorCode::from_code(n).code(), n);
    }
    assert_eq!(ErrorCode::from(0xd), ErrorCode::Http11Required);
    assert_eq!(u32::from(ErrorCode::CompressionError), 9);
    assert_eq!(ErrorCode::from(0xdead), ErrorCode::Unknown(0xdead));
    assert_eq!(ErrorCode::FlowControlError.to_string(), "FLOW_CONTROL_ERROR");
    assert_eq!(ErrorCode::Unknown(0x42).to_string(), "UNKNOWN(0x42)");
    let e = H2Error::Stream(3, ErrorCode::Cancel);
    assert_eq!((e.code(), e.is_connection()), (ErrorCode::Cancel, false));
    assert_eq!(e.to_string(), "stream error CANCEL on stream 3");
}

// === HEADERS and CONTINUATION ===

/// Reassembles the field block of a HEADERS + CONTINUATION sequence, checking the
/// flags as a mux would.
fn reassemble(mut buf: &[u8], max: u32) -> (Vec<u8>, bool, usize) {
    let mut block = Vec::new();
    let mut frames = 0;
    let mut end_stream = false;
    loop {
        let (frame, n) = next_frame(buf, max).unwrap().unwrap();
        buf = &buf[n..];
        frames += 1;
        let done = match frame {
            Frame::Headers { fragment, end_headers, end_stream: es, .. } if frames == 1 => {
                end_stream = es;
                block.extend_from_slice(fragment);
                end_headers
            }
            Frame::Continuation { fragment, end_headers, stream_id: 5 } if frames > 1 => {
                block.extend_from_slice(fragment);
                end_headers
            }
            other => panic!("frame {frames}: {other:?}"),
        };
        if done {
            assert!(buf.is_empty(), "END_HEADERS before the end");
            return (block, end_stream, frames);
        }
    }
}

#[test]
fn headers_split_into_continuation_frames() {
    let block: Vec<u8> = (0..40_000u32).map(|i| i as u8).collect();
    for (len, max, frames) in
        [(0, MAX, 1), (16384, MAX, 1), (16385, MAX, 2), (40_000, MAX, 3), (100, 10, 10), (101, 10, 11)]
    {
        let mut out = Vec::new();
        encode_headers(&mut out, 5, &block[..len], true, max);
        let (got, end_stream, n) = reassemble(&out, MAX);
        assert_eq!((&got[..], end_stream, n), (&block[..len], true, frames), "{len} bytes in frames of {max}");
    }
    // PUSH_PROMISE: the promised id takes 4 bytes of the first frame.
    let mut out = Vec::new();
    encode_push_promise(&mut out, 1, 2, &block[..20], 10);
    let (f, n) = next_frame(&out, MAX).unwrap().unwrap();
    assert_eq!(f, Frame::PushPromise { stream_id: 1, promised_id: 2, fragment: &block[..6], end_headers: false });
    assert_eq!(one(&out[n..n + 19]), Frame::Continuation { stream_id: 1, fragment: &block[6..16], end_headers: false });
}

#[test]
fn a_field_list_through_hpack_and_small_frames() {
    let fields: Vec<(&[u8], &[u8], Flags)> = vec![
        (b":method", b"GET", Flags::NONE),
        (b":scheme", b"https", Flags::NONE),
        (b":path", b"/a/very/long/path/to/split/across/frames?q=1", Flags::NONE),
        (b":authority", b"example.com", Flags::NONE),
        (b"cookie", b"session=secret", Flags::NEVER_INDEXED),
    ];
    let mut enc = Encoder::new();
    let mut dec = Decoder::new(4096);
    for _ in 0..3 {
        let mut block = Vec::new();
        enc.encode(fields.iter().copied(), &mut block);
        let mut wire = Vec::new();
        encode_headers(&mut wire, 5, &block, false, 16);
        let (got, end_stream, _) = reassemble(&wire, MAX);
        assert!(!end_stream);
        let mut decoded = Vec::new();
        dec.decode(&got, |n, v, f| {
            decoded.push((n.to_vec(), v.to_vec(), f));
            Ok::<(), HpackError>(())
        })
        .unwrap();
        let expected: Vec<_> = fields.iter().map(|(n, v, f)| (n.to_vec(), v.to_vec(), *f)).collect();
        assert_eq!(decoded, expected);
    }
}

// === SETTINGS ===

fn apply(params: &[(u16, u32)]) -> Result<Settings, H2Error> {
    let list: Vec<Setting> = params.iter().map(|&(id, value)| Setting { id: SettingId::from_u16(id), value }).collect();
    let mut wire = Vec::new();
    encode_settings(&mut wire, &list);
    let Frame::Settings { ack: false, params } = one(&wire) else { panic!() };
    let mut s = Settings::default();
    s.apply(params).map(|()| s)
}

#[test]
fn settings_defaults_and_application() {
    let d = Settings::default();
    assert_eq!((d.header_table_size, d.enable_push, d.max_concurrent_streams), (4096, true, None));
    assert_eq!((d.initial_window_size, d.max_frame_size, d.max_header_list_size), (65_535, 16_384, None));
    assert!(!d.enable_connect_protocol);
    let s =
        apply(&[(1, 0), (2, 0), (3, 100), (4, MAX_WINDOW_SIZE), (5, MAX_MAX_FRAME_SIZE), (6, 8192), (8, 1), (0x99, 7)])
            .unwrap();
    let expected = Settings {
        header_table_size: 0,
        enable_push: false,
        max_concurrent_streams: Some(100),
        initial_window_size: MAX_WINDOW_SIZE,
        max_frame_size: MAX_MAX_FRAME_SIZE,
        max_header_list_size: Some(8192),
        enable_connect_protocol: true,
    };
    assert_eq!(s, expected);
    // In order: the last value wins.
    assert_eq!(apply(&[(5, 20000), (5, 16384)]).unwrap().max_frame_size, 16384);
    assert_eq!(apply(&[]).unwrap(), d);
}

#[test]
fn settings_out_of_range() {
    use ErrorCode::{FlowControlError as Flow, ProtocolError as Proto};
    let cases: [(&str, u16, u32, ErrorCode); 7] = [
        ("ENABLE_PUSH 2", 2, 2, Proto),
        ("ENABLE_PUSH 2^32-1", 2, u32::MAX, Proto),
        ("INITIAL_WINDOW_SIZE 2^31", 4, 1 << 31, Flow),
        ("MAX_FRAME_SIZE 2^14-1", 5, 16_383, Proto),
        ("MAX_FRAME_SIZE 2^24", 5, 1 << 24, Proto),
        ("MAX_FRAME_SIZE 0", 5, 0, Proto),
        ("ENABLE_CONNECT_PROTOCOL 2", 8, 2, Proto),
    ];
    for (what, id, value, code) in cases {
        assert_eq!(apply(&[(id, value)]), Err(H2Error::Connection(code)), "{what}");
    }
}

#[test]
fn settings_changes_are_encoded_against_a_base() {
    let d = Settings::default();
    let mut out = Vec::new();
    d.encode_changes(&d, &mut out);
    assert_eq!(out, [0, 0, 0, 4, 0, 0, 0, 0, 0]);
    let mine = Settings {
        max_concurrent_streams: Some(100),
        initial_window_size: 1 << 20,
        enable_push: false,
        ..Settings::default()
    };
    out.clear();
    mine.encode_changes(&d, &mut out);
    let Frame::Settings { ack: false, params } = one(&out) else { panic!() };
    assert_eq!(params.len(), 3);
    let mut s = d;
    s.apply(params).unwrap();
    assert_eq!(s, mine);
}
