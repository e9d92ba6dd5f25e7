//! Arbitrary bytes as what an SPOE agent sends (`rampart_proto::spoe`): never a panic;
//! no prefix of a frame decodes; every payload reader returns a value or an error; an
//! ACK's actions re-encoded decode to the same actions.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rampart_proto::spoe::frame::{decode_ack, decode_notify, encode_ack};
use rampart_proto::spoe::{next_frame, AgentHello, Disconnect, FrameType, HaproxyHello, MAX_FRAME_SIZE};

fuzz_target!(|data: &[u8]| {
    let mut at = 0;
    while let Ok(Some((f, n))) = next_frame(&data[at..], MAX_FRAME_SIZE) {
        assert!(n >= 4 && at + n <= data.len());
        assert_eq!(next_frame(&data[at..at + n - 1], MAX_FRAME_SIZE), Ok(None));
        match f.ty {
            FrameType::AgentHello => {
                let _ = AgentHello::decode(f.payload, MAX_FRAME_SIZE);
            }
            FrameType::HaproxyHello => {
                let _ = HaproxyHello::decode(f.payload);
            }
            FrameType::AgentDisconnect | FrameType::HaproxyDisconnect => {
                let _ = Disconnect::decode(f.payload);
            }
            FrameType::Notify => {
                let _ = decode_notify(f.payload);
            }
            FrameType::Ack => {
                if let Ok(acts) = decode_ack(f.payload) {
                    let mut out = Vec::new();
                    if encode_ack(&mut out, f.stream_id, f.frame_id, &acts).is_ok() {
                        let (g, _) = next_frame(&out, MAX_FRAME_SIZE).unwrap().unwrap();
                        assert_eq!(decode_ack(g.payload).unwrap(), acts);
                    }
                }
            }
        }
        at += n;
    }
});
