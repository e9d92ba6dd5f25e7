//! Arbitrary bytes as the records of a listening-socket transfer (`rampart_proto::xfer`,
//! what `-x` reads from the old process): never a panic; what parses encodes to bytes
//! that parse to the same records, no longer than the input.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rampart_proto::xfer::{encode, parse};

fuzz_target!(|data: &[u8]| {
    let Some((&count, bytes)) = data.split_first() else { return };
    if let Ok(records) = parse(bytes, usize::from(count)) {
        assert_eq!(records.len(), usize::from(count));
        let mut again = Vec::new();
        for r in &records {
            encode(r, &mut again).expect("parsed names fit in a byte");
        }
        // (the options words come back as zeroes whatever they held)
        assert!(again.len() <= bytes.len());
        assert_eq!(parse(&again, records.len()), Ok(records));
    }
});
