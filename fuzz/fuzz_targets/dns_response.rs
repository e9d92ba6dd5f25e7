//! Arbitrary bytes as a DNS response from a nameserver (`rampart_proto::dns`): never a
//! panic nor a hang (compression pointers only point back, names stay under 255
//! bytes); a decoded response has at most `MAX_RECORDS` records and names of at most
//! 255 bytes.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rampart_proto::dns::{decode_response, RData, MAX_RECORDS};

fuzz_target!(|data: &[u8]| {
    let Ok(r) = decode_response(data) else { return };
    assert!(r.answers.len() + r.additional.len() <= MAX_RECORDS);
    let names = r.answers.iter().chain(&r.additional).flat_map(|rec| {
        let inner = match &rec.data {
            RData::Cname(t) | RData::Srv { target: t, .. } => Some(t.len()),
            _ => None,
        };
        [Some(rec.name.len()), inner]
    });
    for len in names.flatten().chain([r.qname.len()]) {
        assert!(len <= 255, "name of {len} bytes");
    }
});
