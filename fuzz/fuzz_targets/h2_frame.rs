//! Arbitrary bytes as the frames a peer sends on an HTTP/2 connection
//! (`rampart_proto::h2::next_frame`), after a first byte choosing our
//! SETTINGS_MAX_FRAME_SIZE: never a panic; a frame takes no more bytes than given
//! and no prefix of it is a frame; a frame re-encoded by its encoder parses back the
//! same; SETTINGS parameters apply or fail with a connection error. A stream error
//! skips the frame, a connection error ends the input, as a mux would.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rampart_proto::h2::frame::{
    encode_data, encode_goaway, encode_ping, encode_ping_ack, encode_priority, encode_rst_stream, encode_settings,
    encode_settings_ack, encode_window_update,
};
use rampart_proto::h2::{
    next_frame, Frame, FrameHeader, H2Error, Setting, Settings, DEFAULT_MAX_FRAME_SIZE, MAX_MAX_FRAME_SIZE,
};

fuzz_target!(|data: &[u8]| {
    let Some((&choice, mut buf)) = data.split_first() else { return };
    let max = if choice & 1 == 0 { DEFAULT_MAX_FRAME_SIZE } else { MAX_MAX_FRAME_SIZE };
    let mut settings = Settings::default();
    loop {
        match next_frame(buf, max) {
            Ok(None) => break,
            Ok(Some((frame, n))) => {
                assert!(n >= 9 && n <= buf.len());
                assert_eq!(next_frame(&buf[..n - 1], max), Ok(None), "a prefix of {frame:?}");
                check_reencoded(&frame);
                if let Frame::Settings { params, .. } = frame {
                    if let Err(e) = settings.apply(params) {
                        assert!(e.is_connection());
                    }
                }
                buf = &buf[n..];
            }
            Err(H2Error::Stream(id, _)) => {
                let header = FrameHeader::parse(buf).expect("a stream error needs a header");
                assert_eq!(id, header.stream_id);
                let Some(rest) = buf.get(header.frame_len()..) else { break };
                buf = rest;
            }
            Err(H2Error::Connection(_)) => break,
        }
    }
});

/// Frames with an encoder parse back from its output as they came (DATA without its
/// padding).
fn check_reencoded(frame: &Frame<'_>) {
    let mut out = Vec::new();
    let expected = match *frame {
        Frame::Data { stream_id, data, end_stream, .. } => {
            encode_data(&mut out, stream_id, data, end_stream);
            Frame::Data { stream_id, data, end_stream, flow_len: data.len() as u32 }
        }
        Frame::Priority { stream_id, priority } => {
            encode_priority(&mut out, stream_id, priority);
            *frame
        }
        Frame::RstStream { stream_id, error } => {
            encode_rst_stream(&mut out, stream_id, error);
            *frame
        }
        Frame::Settings { ack: true, .. } => {
            encode_settings_ack(&mut out);
            *frame
        }
        Frame::Settings { ack: false, params } => {
            encode_settings(&mut out, &params.iter().collect::<Vec<Setting>>());
            *frame
        }
        Frame::Ping { ack, data } => {
            if ack {
                encode_ping_ack(&mut out, data)
            } else {
                encode_ping(&mut out, data)
            }
            *frame
        }
        Frame::GoAway { last_stream_id, error, debug } => {
            encode_goaway(&mut out, last_stream_id, error, debug);
            *frame
        }
        Frame::WindowUpdate { stream_id, increment } => {
            encode_window_update(&mut out, stream_id, increment);
            *frame
        }
        _ => return,
    };
    match next_frame(&out, MAX_MAX_FRAME_SIZE) {
        Ok(Some((again, n))) => {
            assert_eq!(n, out.len());
            assert_eq!(again, expected);
        }
        other => panic!("{frame:?} re-encoded does not parse: {other:?}"),
    }
}
