//! Arbitrary bytes as the start of a connection with `accept-proxy`
//! (`rampart_proto::pp::decode`): never a panic; a decoded header takes no more bytes
//! than given and every shorter prefix is incomplete or refused, never decoded;
//! re-encoded (`pp::encode`) it decodes to the same header, taking all the bytes.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rampart_proto::pp::{decode, encode, Decoded};

fuzz_target!(|data: &[u8]| {
    let Decoded::Done(h, n) = decode(data) else { return };
    assert!(n > 0 && n <= data.len());
    for cut in [0, n / 2, n - 1] {
        assert!(!matches!(decode(&data[..cut]), Decoded::Done(..)), "a prefix of {cut} bytes decoded");
    }
    let mut out = Vec::new();
    encode(&mut out, &h);
    match decode(&out) {
        Decoded::Done(again, m) => {
            assert_eq!(m, out.len());
            assert_eq!(again, h);
        }
        other => panic!("re-encoded header does not decode: {other:?}"),
    }
});
