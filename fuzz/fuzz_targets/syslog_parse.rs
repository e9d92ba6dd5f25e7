//! Syslog messages as a `log-forward` receives them: the header reader and the TCP
//! framing must never panic, and what they return must lie inside the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rampart_proto::syslog::{next_frame, parse, Frame};

fuzz_target!(|data: &[u8]| {
    let m = parse(data);
    assert!(m.msg.len() <= data.len());
    if let Frame::Message { start, end, consumed } = next_frame(data, 1024) {
        assert!(start <= end && end <= consumed && consumed <= data.len());
        let _ = parse(&data[start..end]);
    }
});
