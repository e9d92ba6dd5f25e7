//! Arbitrary text as a servers' state file (`server-state-file`, or the servers part of
//! the reload handover read from the previous worker): never a panic; every line read
//! has 20 to 25 fields, and checking one either gives values within HAProxy's bounds or
//! a message.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rampart_cfg::state_file::{check, parse};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(lines) = parse(&text) else { return };
    for l in &lines {
        assert!((20..=25).contains(&l.fields.len()));
        match check(l) {
            Ok(st) => assert!(st.op_state <= 3 && st.uweight <= 256 && st.iweight <= 256),
            Err(msg) => assert!(msg.starts_with(", invalid ")),
        }
    }
});
