//! Arbitrary bytes as the HPACK field blocks of one connection
//! (`rampart_proto::h2::hpack::Decoder`, 1 KiB maximum list size), each block a length
//! byte and that many bytes (a length of 0 instead lowers or raises our
//! SETTINGS_HEADER_TABLE_SIZE to the next byte times 32): never a panic; the fields
//! handed over never pass the list size; a block that decodes, re-encoded by an
//! `Encoder`, decodes to the same fields on a second decoder. A COMPRESSION_ERROR ends
//! the input, as it ends the connection.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rampart_proto::h2::hpack::{entry_size, Decoder, Encoder, Flags, HpackError};

const MAX_LIST: usize = 1024;

type Fields = Vec<(Vec<u8>, Vec<u8>, Flags)>;

fn decode(dec: &mut Decoder, block: &[u8], fields: &mut Fields) -> Result<(), HpackError> {
    fields.clear();
    dec.decode(block, |n, v, f| {
        fields.push((n.to_vec(), v.to_vec(), f));
        Ok(())
    })
}

fuzz_target!(|data: &[u8]| {
    let mut dec = Decoder::new(4096);
    dec.set_max_list_size(MAX_LIST);
    let (mut enc, mut dec2) = (Encoder::new(), Decoder::new(4096));
    let (mut fields, mut again, mut block2) = (Fields::new(), Fields::new(), Vec::new());
    let mut rest = data;
    while let Some((&len, tail)) = rest.split_first() {
        if len == 0 {
            let Some((&size, tail)) = tail.split_first() else { return };
            dec.set_max_table_size(size as usize * 32);
            rest = tail;
            continue;
        }
        let (block, tail) = tail.split_at((len as usize).min(tail.len()));
        rest = tail;
        let result = decode(&mut dec, block, &mut fields);
        assert!(fields.iter().map(|(n, v, _)| entry_size(n, v)).sum::<usize>() <= MAX_LIST);
        match result {
            Ok(()) => {}
            Err(HpackError::ListTooLarge) => continue,
            Err(_) => return,
        }
        block2.clear();
        enc.encode(fields.iter().map(|(n, v, f)| (&n[..], &v[..], *f)), &mut block2);
        decode(&mut dec2, &block2, &mut again).expect("the encoder's block decodes");
        assert_eq!(again, fields);
    }
});
