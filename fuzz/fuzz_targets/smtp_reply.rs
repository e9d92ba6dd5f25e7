//! Arbitrary bytes as SMTP server replies (`rampart_proto::smtp`): never a panic; a
//! reply is read whole or not at all, never past [`MAX_REPLY`] bytes, with one code.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rampart_proto::smtp::{parse_reply, MAX_REPLY};

fuzz_target!(|data: &[u8]| {
    let mut rest = data;
    while let Ok(Some((reply, used))) = parse_reply(rest) {
        assert!(used > 0 && used <= rest.len() && used <= MAX_REPLY);
        assert!((100..600).contains(&reply.code));
        assert!(!reply.lines.is_empty());
        rest = &rest[used..];
    }
});
