//! Arbitrary bytes as what a peer sends after the handshake (`rampart_proto::peers`):
//! never a panic; no prefix of a message decodes; definitions and updates read with
//! every key kind never fail other than with an error, and an update re-encoded decodes
//! to the same update.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rampart_proto::peers::table::{decode_define, decode_update, encode_update, KeyKind, Shape};
use rampart_proto::peers::{next_message, Message, MAX_BODY};

fuzz_target!(|data: &[u8]| {
    let mut shape: Option<Shape> = None;
    let mut at = 0;
    while let Ok(Some((msg, n))) = next_message(&data[at..], MAX_BODY) {
        assert!(n >= 2 && at + n <= data.len());
        assert_eq!(next_message(&data[at..at + n - 1], MAX_BODY), Ok(None));
        match msg {
            Message::Define(body) => {
                if let Ok(d) = decode_define(body) {
                    shape = d.shape.ok();
                }
            }
            Message::Update { with_id, timed, body } => {
                let Some(s) = &shape else { break };
                for kind in [KeyKind::String { size: 33 }, KeyKind::Int, KeyKind::Fixed(4), KeyKind::Fixed(16)] {
                    let Ok(u) = decode_update(body, with_id, timed, kind, s) else { continue };
                    if matches!(kind, KeyKind::String { .. }) && u.key.len() == 32 {
                        continue; // cut to the table's size: re-encoding differs
                    }
                    let values: Vec<_> = u.values.iter().map(|v| v.2).collect();
                    let mut out = Vec::new();
                    encode_update(u.id, u.expire, kind, u.key, &values, &mut out);
                    let Ok(Some((Message::Update { body: b2, .. }, _))) = next_message(&out, usize::MAX) else {
                        panic!("re-encoded update does not parse")
                    };
                    let again = decode_update(b2, with_id, timed, kind, s).expect("re-encoded update decodes");
                    assert_eq!((again.id, again.expire, again.key), (u.id, u.expire, u.key));
                    assert_eq!(again.values, u.values);
                }
            }
            _ => {}
        }
        at += n;
    }
});
