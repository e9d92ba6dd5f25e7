//! HPACK tests: the examples of RFC 7541 Appendix C (decoder and encoder, with and
//! without Huffman), the primitives, the Huffman code, the dynamic table against a
//! naive model, every decoding error, truncated blocks, list-size bounds and HPACK
//! bombs, and random field lists through evictions and size changes.

use std::collections::VecDeque;

use super::primitive::{decode_int, Cursor};
use super::table::DynTable;
use super::*;

fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

type Field = (Vec<u8>, Vec<u8>, Flags);

/// Decodes a block into owned fields.
fn decode_all(dec: &mut Decoder, block: &[u8]) -> Result<Vec<Field>, HpackError> {
    let mut out = Vec::new();
    dec.decode(block, |n, v, f| {
        out.push((n.to_vec(), v.to_vec(), f));
        Ok::<(), HpackError>(())
    })?;
    Ok(out)
}

/// "name: value" lines, as the RFC prints header lists (pseudo-header names start
/// with ':').
fn list(text: &str) -> Vec<Field> {
    text.lines()
        .map(|l| {
            let at = l[1..].find(": ").unwrap() + 1;
            (l.as_bytes()[..at].to_vec(), l.as_bytes()[at + 2..].to_vec(), Flags::NONE)
        })
        .collect()
}

fn encode_list(enc: &mut Encoder, fields: &[Field]) -> Vec<u8> {
    let mut out = Vec::new();
    enc.encode(fields.iter().map(|(n, v, f)| (&n[..], &v[..], *f)), &mut out);
    out
}

// === RFC 7541 C.1: integers ===

fn int_of(bytes: &[u8], prefix: u8) -> Result<usize, HpackError> {
    decode_int(&mut Cursor::new(bytes), prefix)
}

fn int_bytes(value: usize, prefix: u8) -> Vec<u8> {
    let mut out = Vec::new();
    encode_int(&mut out, value, prefix, 0);
    out
}

#[test]
fn c1_integer_examples() {
    assert_eq!(int_bytes(10, 5), [0x0a]);
    assert_eq!(int_bytes(1337, 5), [0x1f, 0x9a, 0x0a]);
    assert_eq!(int_bytes(42, 8), [0x2a]);
    assert_eq!(int_of(&[0x0a], 5), Ok(10));
    assert_eq!(int_of(&[0x1f, 0x9a, 0x0a], 5), Ok(1337));
    assert_eq!(int_of(&[0x2a], 8), Ok(42));
    // The bits above the prefix are not part of the integer.
    assert_eq!(int_of(&[0xea], 5), Ok(10));
}

#[test]
fn integers_round_trip_at_every_prefix() {
    let values =
        [0, 1, 6, 7, 14, 15, 30, 31, 126, 127, 128, 254, 255, 256, 1337, 16383, 16384, 1 << 21, u32::MAX as usize];
    for prefix in 1..=8 {
        for &v in &values {
            let bytes = int_bytes(v, prefix);
            assert_eq!(int_of(&bytes, prefix), Ok(v), "{v} with a {prefix}-bit prefix");
            for cut in 0..bytes.len() {
                assert_eq!(int_of(&bytes[..cut], prefix), Err(HpackError::Truncated), "{v} cut at {cut}");
            }
        }
    }
}

#[test]
fn integers_too_large_or_too_long_are_refused() {
    // 2^32 with a 5-bit prefix: one past the limit.
    let bytes = int_bytes(1 << 32, 5);
    assert_eq!(int_of(&bytes, 5), Err(HpackError::IntegerOverflow));
    // Zero-valued continuation bytes, more than 5 of them.
    assert_eq!(int_of(&[0x1f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00], 5), Err(HpackError::IntegerOverflow));
    // Five are still read.
    assert_eq!(int_of(&[0x1f, 0x80, 0x80, 0x80, 0x80, 0x00], 5), Ok(31));
}

// === Huffman ===

fn huff(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    huffman::encode(s, &mut out);
    assert_eq!(out.len(), huffman::encoded_len(s));
    out
}

fn unhuff(b: &[u8]) -> Result<Vec<u8>, HpackError> {
    let mut out = Vec::new();
    huffman::decode(b, &mut out).map(|()| out)
}

#[test]
fn huffman_examples_of_appendix_c() {
    let cases = [
        ("www.example.com", "f1e3c2e5f23a6ba0ab90f4ff"),
        ("no-cache", "a8eb10649cbf"),
        ("custom-key", "25a849e95ba97d7f"),
        ("custom-value", "25a849e95bb8e8b4bf"),
        ("302", "6402"),
        ("private", "aec3771a4b"),
        ("Mon, 21 Oct 2013 20:13:21 GMT", "d07abe941054d444a8200595040b8166e082a62d1bff"),
        ("https://www.example.com", "9d29ad171863c78f0b97c8e9ae82ae43d3"),
        ("307", "640eff"),
        ("gzip", "9bd9ab"),
        (
            "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1",
            "94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007",
        ),
    ];
    for (text, hex) in cases {
        assert_eq!(huff(text.as_bytes()), unhex(hex), "{text}");
        assert_eq!(unhuff(&unhex(hex)).unwrap(), text.as_bytes(), "{text}");
    }
}

#[test]
fn huffman_round_trips_every_octet() {
    let all: Vec<u8> = (0..=255).collect();
    assert_eq!(unhuff(&huff(&all)).unwrap(), all);
    for b in 0..=255u8 {
        assert_eq!(unhuff(&huff(&[b])).unwrap(), [b], "octet {b}");
        assert_eq!(unhuff(&huff(&[b, b, b])).unwrap(), [b, b, b], "octet {b}");
    }
    assert_eq!(unhuff(&[]).unwrap(), b"");
}

#[test]
fn huffman_refuses_eos_and_bad_padding() {
    // '/' is 011000 (the RFC's own example) and 'a' is 00011.
    assert_eq!(huff(b"/"), [0b0110_0011]);
    assert_eq!(huff(b"a"), [0b0001_1111]);
    // Padding not made of ones.
    assert_eq!(unhuff(&[0b0001_1000]), Err(HpackError::Huffman));
    assert_eq!(unhuff(&[0b0001_1110]), Err(HpackError::Huffman));
    // Padding of 8 bits and more: a whole byte of ones after a symbol, or alone.
    assert_eq!(unhuff(&[0b0001_1111, 0xff]), Err(HpackError::Huffman));
    assert_eq!(unhuff(&[0xff]), Err(HpackError::Huffman));
    // EOS itself (30 ones), padded or followed by a symbol.
    assert_eq!(unhuff(&[0xff, 0xff, 0xff, 0xff]), Err(HpackError::Huffman));
    assert_eq!(unhuff(&[0xff, 0xff, 0xff, 0xfc, 0x7f]), Err(HpackError::Huffman));
    // Seven bits of padding are fine: '0' is 00000, padded with 111.
    assert_eq!(unhuff(&[0b0000_0111]).unwrap(), b"0");
    // A string cut inside a long code is not valid padding either.
    // Two 13-bit codes: cut after 16 bits, the 3 bits left are ones (valid padding);
    // cut after 24, the 11 bits left are not.
    let long = huff(&[0x00, 0x00]);
    assert_eq!(unhuff(&long[..2]).unwrap(), [0x00]);
    assert_eq!(unhuff(&long[..3]), Err(HpackError::Huffman));
}

#[test]
fn huffman_never_panics_on_any_short_input() {
    for a in 0..=255u8 {
        for b in 0..=255u8 {
            if let Ok(s) = unhuff(&[a, b]) {
                assert_eq!(huff(&s), [a, b], "{a:02x}{b:02x} decodes to {s:?}");
            }
        }
    }
}

// === static table ===

#[test]
fn static_table_lookups_agree_with_the_table() {
    assert_eq!(STATIC_TABLE.len(), 61);
    assert_eq!(static_table::get(2), Some((&b":method"[..], &b"GET"[..])));
    assert_eq!(static_table::get(61), Some((&b"www-authenticate"[..], &b""[..])));
    assert_eq!(static_table::get(0), None);
    assert_eq!(static_table::get(62), None);
    for (i, (name, value)) in STATIC_TABLE.iter().enumerate() {
        let (n, v) = (name.as_bytes(), value.as_bytes());
        assert_eq!(static_table::find(n, v), Some((i + 1, true)), "{name}: {value}");
        let (first, exact) = static_table::find(n, b"\0no such value").unwrap();
        assert!(!exact && first <= i + 1 && STATIC_TABLE[first - 1].0 == *name);
    }
    assert_eq!(static_table::find(b"x-unknown", b""), None);
    assert_eq!(static_table::find(b":status", b"418"), Some((8, false)));
}

// === dynamic table ===

#[test]
fn table_accounts_evicts_and_refuses_oversized_entries() {
    let mut t = DynTable::new(100);
    t.insert(b"aaaa", b"1111"); // 40
    t.insert(b"bbbb", b"2222"); // 40
    assert_eq!((t.len(), t.size()), (2, 80));
    assert_eq!(t.get(0), Some((&b"bbbb"[..], &b"2222"[..])));
    assert_eq!(t.get(1), Some((&b"aaaa"[..], &b"1111"[..])));
    assert_eq!(t.get(2), None);
    // 80 + 41 > 100: the oldest goes.
    t.insert(b"ccccc", b"3333");
    assert_eq!((t.len(), t.size()), (2, 81));
    assert_eq!(t.get(1), Some((&b"bbbb"[..], &b"2222"[..])));
    assert_eq!(t.find(b"bbbb", b"2222"), Some((1, true)));
    assert_eq!(t.find(b"bbbb", b"9"), Some((1, false)));
    assert_eq!(t.find(b"dddd", b""), None);
    // Exactly the maximum fits.
    t.insert(&[b'x'; 60], b"12345678");
    assert_eq!((t.len(), t.size()), (1, 100));
    // Larger than the maximum: the table empties and keeps nothing.
    t.insert(&[b'x'; 60], b"123456789");
    assert_eq!((t.len(), t.size()), (0, 0));
    t.insert(b"a", b"b");
    t.set_max_size(10);
    assert_eq!((t.len(), t.size(), t.max_size()), (0, 0, 10));
}

struct Rng(u64);

impl Rng {
    /// xorshift64*.
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// `min` to `min + spread - 1` bytes drawn from `alphabet`.
    fn bytes(&mut self, min: usize, spread: usize, alphabet: &[u8]) -> Vec<u8> {
        let len = min + self.below(spread);
        (0..len).map(|_| alphabet[self.below(alphabet.len())]).collect()
    }
}

#[test]
fn table_matches_a_naive_model_through_compactions() {
    let mut rng = Rng(0x5eed);
    for max in [0, 33, 64, 300, 4096] {
        let mut t = DynTable::new(max);
        let mut model: VecDeque<(Vec<u8>, Vec<u8>)> = VecDeque::new();
        for round in 0..3000 {
            if round % 500 == 499 {
                let m = rng.below(max + 1);
                t.set_max_size(m);
                while model.iter().map(|(n, v)| entry_size(n, v)).sum::<usize>() > m {
                    model.pop_back();
                }
            }
            let name = rng.bytes(1, 20, b"abcdefgh");
            let value = rng.bytes(0, max / 2 + 10, b"0123456789");
            t.insert(&name, &value);
            model.push_front((name, value));
            while model.iter().map(|(n, v)| entry_size(n, v)).sum::<usize>() > t.max_size() {
                model.pop_back();
            }
            assert_eq!(t.len(), model.len(), "max {max} round {round}");
            assert_eq!(t.size(), model.iter().map(|(n, v)| entry_size(n, v)).sum::<usize>());
            for (pos, (n, v)) in model.iter().enumerate() {
                assert_eq!(t.get(pos), Some((&n[..], &v[..])), "max {max} round {round} pos {pos}");
            }
        }
    }
}

// === RFC 7541 C.2: single representations ===

#[test]
fn c2_field_representations() {
    let cases: [(&str, &str, Flags, usize); 4] = [
        (
            "custom-key: custom-header",
            "400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572",
            Flags::NONE,
            55,
        ),
        (":path: /sample/path", "040c 2f73 616d 706c 652f 7061 7468", Flags::NONE, 0),
        ("password: secret", "1008 7061 7373 776f 7264 0673 6563 7265 74", Flags::NEVER_INDEXED, 0),
        (":method: GET", "82", Flags::NONE, 0),
    ];
    for (text, hex, flags, table_size) in cases {
        let mut fields = list(text);
        fields[0].2 = flags;
        let block = unhex(hex);
        let mut dec = Decoder::new(4096);
        assert_eq!(decode_all(&mut dec, &block).unwrap(), fields, "{text}");
        assert_eq!(dec.table_size(), table_size, "{text}");
        let mut enc = Encoder::new();
        enc.set_huffman(false);
        assert_eq!(encode_list(&mut enc, &fields), block, "{text}");
        assert_eq!(enc.table_size(), table_size, "{text}");
    }
}

// === RFC 7541 C.3 to C.6: sequences on one connection ===

/// One header list of a sequence: the fields, the block, the table size after it.
struct Step {
    fields: &'static str,
    hex: &'static str,
    table_size: usize,
}

const REQUESTS: &str = ":method: GET\n:scheme: http\n:path: /\n:authority: www.example.com";
const REQUESTS_2: &str = ":method: GET\n:scheme: http\n:path: /\n:authority: www.example.com\ncache-control: no-cache";
const REQUESTS_3: &str =
    ":method: GET\n:scheme: https\n:path: /index.html\n:authority: www.example.com\ncustom-key: custom-value";
const RESPONSE_1: &str =
    ":status: 302\ncache-control: private\ndate: Mon, 21 Oct 2013 20:13:21 GMT\nlocation: https://www.example.com";
const RESPONSE_2: &str =
    ":status: 307\ncache-control: private\ndate: Mon, 21 Oct 2013 20:13:21 GMT\nlocation: https://www.example.com";
const RESPONSE_3: &str = ":status: 200\ncache-control: private\ndate: Mon, 21 Oct 2013 20:13:22 GMT\nlocation: https://www.example.com\ncontent-encoding: gzip\nset-cookie: foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1";

const C3: [Step; 3] = [
    Step { fields: REQUESTS, hex: "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d", table_size: 57 },
    Step { fields: REQUESTS_2, hex: "8286 84be 5808 6e6f 2d63 6163 6865", table_size: 110 },
    Step {
        fields: REQUESTS_3,
        hex: "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
        table_size: 164,
    },
];

const C4: [Step; 3] = [
    Step { fields: REQUESTS, hex: "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff", table_size: 57 },
    Step { fields: REQUESTS_2, hex: "8286 84be 5886 a8eb 1064 9cbf", table_size: 110 },
    Step { fields: REQUESTS_3, hex: "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf", table_size: 164 },
];

const C5: [Step; 3] = [
    Step {
        fields: RESPONSE_1,
        hex: "4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
        table_size: 222,
    },
    Step { fields: RESPONSE_2, hex: "4803 3330 37c1 c0bf", table_size: 222 },
    Step {
        fields: RESPONSE_3,
        hex: "88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d 54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049 5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31",
        table_size: 215,
    },
];

const C6: [Step; 3] = [
    Step {
        fields: RESPONSE_1,
        hex: "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
        table_size: 222,
    },
    Step { fields: RESPONSE_2, hex: "4883 640e ffc1 c0bf", table_size: 222 },
    Step {
        fields: RESPONSE_3,
        hex: "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07",
        table_size: 215,
    },
];

/// Decodes a sequence on one decoder, checking each list and table size, and that
/// no truncation of a block decodes to more than a strict prefix of its list.
fn decode_sequence(steps: &[Step], table: usize) {
    let mut dec = Decoder::new(table);
    for (i, step) in steps.iter().enumerate() {
        let block = unhex(step.hex);
        let expected = list(step.fields);
        assert_truncations_fail(&dec, &block, &expected);
        assert_eq!(decode_all(&mut dec, &block).unwrap(), expected, "block {i}");
        assert_eq!(dec.table_size(), step.table_size, "block {i}");
    }
}

/// Every strict prefix of a block either fails or decodes to a strict prefix of its
/// list (when it ends between two representations); none panics.
fn assert_truncations_fail(dec: &Decoder, block: &[u8], expected: &[Field]) {
    let mut failures = 0;
    for cut in 0..block.len() {
        match decode_all(&mut dec.clone(), &block[..cut]) {
            Ok(fields) => {
                assert!(fields.len() < expected.len(), "cut at {cut} decoded the whole list");
                assert_eq!(fields[..], expected[..fields.len()], "cut at {cut}");
            }
            Err(e) => {
                assert!(e.is_compression_error());
                failures += 1;
            }
        }
    }
    assert!(block.len() <= expected.len() || failures > 0);
}

/// Encodes a sequence on one encoder and compares with the RFC's bytes.
fn encode_sequence(steps: &[Step], mut enc: Encoder, huffman: bool) {
    enc.set_huffman(huffman);
    for (i, step) in steps.iter().enumerate() {
        assert_eq!(encode_list(&mut enc, &list(step.fields)), unhex(step.hex), "block {i}");
        assert_eq!(enc.table_size(), step.table_size, "block {i}");
    }
}

#[test]
fn c3_requests_without_huffman() {
    decode_sequence(&C3, 4096);
    encode_sequence(&C3, Encoder::new(), false);
}

#[test]
fn c4_requests_with_huffman() {
    decode_sequence(&C4, 4096);
    encode_sequence(&C4, Encoder::new(), true);
}

#[test]
fn c5_responses_without_huffman() {
    decode_sequence(&C5, 256);
    encode_sequence(&C5, Encoder::with_agreed_table_size(256), false);
}

#[test]
fn c6_responses_with_huffman() {
    decode_sequence(&C6, 256);
    encode_sequence(&C6, Encoder::with_agreed_table_size(256), true);
}

// === decoding errors ===

#[test]
fn decoding_errors() {
    let long_int = [0xff, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00];
    let cases: &[(&str, &[u8], HpackError)] = &[
        ("index 0", &[0x80], HpackError::BadIndex),
        ("index past an empty dynamic table", &[0xbe], HpackError::BadIndex),
        ("literal name index past the tables", &[0x7f, 0x00, 0x00], HpackError::BadIndex),
        ("never-indexed name index past the tables", &[0x1f, 0x40, 0x00], HpackError::BadIndex),
        ("index of 2^32", &[0xff, 0x81, 0xff, 0xff, 0xff, 0x0f], HpackError::IntegerOverflow),
        ("index with 6 continuation bytes", &long_int, HpackError::IntegerOverflow),
        ("index cut", &[0xff], HpackError::Truncated),
        ("index cut after a continuation byte", &[0xff, 0x80], HpackError::Truncated),
        ("literal without a name", &[0x40], HpackError::Truncated),
        ("name longer than the block", &[0x40, 0x05, b'a'], HpackError::Truncated),
        ("value missing", &[0x00, 0x01, b'a'], HpackError::Truncated),
        ("string length of 2^32-1", &[0x00, 0x7f, 0x80, 0xff, 0xff, 0xff, 0x0f], HpackError::Truncated),
        ("name padded with 8 ones", &[0x40, 0x81, 0xff, 0x00], HpackError::Huffman),
        ("value holding EOS", &[0x04, 0x84, 0xff, 0xff, 0xff, 0xff], HpackError::Huffman),
        ("size update above 4096", &[0x3f, 0xe2, 0x1f], HpackError::SizeUpdateTooLarge),
        ("size update after a field", &[0x82, 0x20], HpackError::LateSizeUpdate),
        ("size update cut", &[0x3f], HpackError::Truncated),
    ];
    for (what, block, err) in cases {
        assert_eq!(decode_all(&mut Decoder::new(4096), block), Err(*err), "{what}");
        assert!(err.is_compression_error());
    }
}

#[test]
fn size_updates_at_the_start_of_a_block() {
    let mut dec = Decoder::new(4096);
    // Two updates then a field; 4096 is the limit itself.
    assert_eq!(decode_all(&mut dec, &[0x20, 0x3f, 0xe1, 0x1f, 0x82]).unwrap(), list(":method: GET"));
    assert_eq!(dec.table_max_size(), 4096);
    // Raising our setting lets the encoder grow the table; no update is owed.
    dec.set_max_table_size(8192);
    assert_eq!(decode_all(&mut dec, &[0x82]).unwrap().len(), 1);
    assert_eq!(decode_all(&mut dec, &[0x3f, 0xe1, 0x3f]).unwrap(), []);
    assert_eq!(dec.table_max_size(), 8192);
}

#[test]
fn lowering_the_table_size_requires_an_update() {
    let mut dec = Decoder::new(4096);
    decode_all(&mut dec, &unhex(C3[0].hex)).unwrap();
    dec.set_max_table_size(100);
    assert_eq!(decode_all(&mut dec, &[0x82]), Err(HpackError::MissingSizeUpdate));
    assert_eq!(decode_all(&mut dec, &[]), Err(HpackError::MissingSizeUpdate));
    // An update above the new limit is refused, one within it is taken.
    assert_eq!(decode_all(&mut dec.clone(), &[0x3f, 0x46]), Err(HpackError::SizeUpdateTooLarge));
    assert_eq!(decode_all(&mut dec, &[0x3f, 0x45, 0xbe]).unwrap(), list(":authority: www.example.com"));
    assert_eq!(dec.table_max_size(), 100);
    // Later blocks need none.
    assert_eq!(decode_all(&mut dec, &[0x82]).unwrap().len(), 1);
    // Down to 0: the table empties.
    dec.set_max_table_size(0);
    assert_eq!(decode_all(&mut dec, &[0x20, 0x82]).unwrap().len(), 1);
    assert_eq!((dec.table_len(), dec.table_size()), (0, 0));
    assert_eq!(decode_all(&mut dec, &[0xbe]), Err(HpackError::BadIndex));
}

#[test]
fn an_inserted_field_may_take_its_name_from_the_entry_it_evicts() {
    let mut dec = Decoder::new(100);
    let mut block = vec![0x40, 0x0a];
    block.extend_from_slice(b"x-long-one");
    block.push(50);
    block.extend_from_slice(&[b'v'; 50]);
    decode_all(&mut dec, &block).unwrap();
    assert_eq!(dec.table_size(), 92);
    // Name from index 62, the entry the insertion must evict.
    let got = decode_all(&mut dec, &[0x7e, 0x03, b'n', b'e', b'w']).unwrap();
    assert_eq!(got, [(b"x-long-one".to_vec(), b"new".to_vec(), Flags::NONE)]);
    assert_eq!(decode_all(&mut dec, &[0xbe]).unwrap(), got);
    assert_eq!(dec.table_len(), 1);
}

// === bounds ===

#[test]
fn list_too_large_stops_emitting_but_keeps_the_table_in_step() {
    let mut dec = Decoder::new(4096);
    dec.set_max_list_size(100);
    let mut enc = Encoder::new();
    let first: Vec<Field> = (0..5).map(|i| (format!("x-h{i}").into_bytes(), b"v".to_vec(), Flags::NONE)).collect();
    let block = encode_list(&mut enc, &first);
    let mut seen = 0;
    let r = dec.decode(&block, |_, _, _| {
        seen += 1;
        Ok::<(), HpackError>(())
    });
    assert_eq!(r, Err(HpackError::ListTooLarge));
    assert!(!HpackError::ListTooLarge.is_compression_error());
    // 37 bytes each: two fit in 100, the third does not.
    assert_eq!(seen, 2);
    assert_eq!(dec.table_len(), 5);
    // The next block refers to entries inserted after the limit was passed.
    let again = encode_list(&mut enc, &first[3..]);
    assert_eq!(again, [0xbf, 0xbe]);
    assert_eq!(decode_all(&mut dec, &again).unwrap(), first[3..]);
}

#[test]
fn an_hpack_bomb_is_bounded_by_the_list_size() {
    // One 4000-byte entry, then 100000 references to it: 400 MB if expanded.
    let mut block = vec![0x40, 0x01, b'x'];
    encode_int(&mut block, 4000, 7, 0);
    block.extend(std::iter::repeat_n(b'b', 4000));
    block.extend(std::iter::repeat_n(0xbe, 100_000));
    let mut dec = Decoder::new(4096);
    dec.set_max_list_size(16_384);
    let mut emitted = 0;
    let r = dec.decode(&block, |n, v, _| {
        emitted += n.len() + v.len() + 32;
        Ok::<(), HpackError>(())
    });
    assert_eq!(r, Err(HpackError::ListTooLarge));
    assert!(emitted <= 16_384, "{emitted} bytes handed over");
    assert_eq!(dec.table_len(), 1);
}

#[test]
fn an_error_from_the_callback_stops_decoding() {
    #[derive(Debug, PartialEq)]
    enum E {
        Hpack(HpackError),
        Refused,
    }
    impl From<HpackError> for E {
        fn from(e: HpackError) -> E {
            E::Hpack(e)
        }
    }
    let block = unhex(C3[2].hex);
    let mut calls = 0;
    let r = Decoder::new(4096).decode(&block, |n, _, _| {
        calls += 1;
        if n == b":path" {
            return Err(E::Refused);
        }
        Ok(())
    });
    assert_eq!((r, calls), (Err(E::Refused), 3));
    let r = Decoder::new(4096).decode(&[0x80], |_, _, _| Ok::<(), E>(()));
    assert_eq!(r, Err(E::Hpack(HpackError::BadIndex)));
}

// === encoder ===

#[test]
fn encoder_signals_table_size_changes() {
    let mut enc = Encoder::new();
    let get = list(":method: GET");
    // No change, no update.
    assert_eq!(encode_list(&mut enc, &get), [0x82]);
    // Down to 0 then up to 256 between two blocks: the minimum, then the final size.
    enc.set_peer_table_size(0);
    enc.set_peer_table_size(256);
    assert_eq!(encode_list(&mut enc, &get), [0x20, 0x3f, 0xe1, 0x01, 0x82]);
    // Above our cap (4096), the cap holds.
    enc.set_peer_table_size(1 << 20);
    assert_eq!(encode_list(&mut enc, &get), [0x3f, 0xe1, 0x1f, 0x82]);
    enc.set_peer_table_size(1 << 20);
    assert_eq!(encode_list(&mut enc, &get), [0x82]);
    // A smaller cap is announced in the first block, and 0 indexes nothing.
    let mut enc = Encoder::with_table_cap(0);
    enc.set_huffman(false);
    let custom = list("x-a: b");
    assert_eq!(encode_list(&mut enc, &custom), [0x20, 0x00, 0x03, b'x', b'-', b'a', 0x01, b'b']);
    assert_eq!(encode_list(&mut enc, &custom), [0x00, 0x03, b'x', b'-', b'a', 0x01, b'b']);
    assert_eq!(enc.table_len(), 0);
}

#[test]
fn encoder_indexes_repeated_fields_but_not_sensitive_ones() {
    let mut enc = Encoder::new();
    enc.set_huffman(false);
    let mut fields = list("user-agent: rampart\n:path: /a/b");
    fields.push((b"authorization".to_vec(), b"Basic Zm9vOmJhcg==".to_vec(), Flags::NEVER_INDEXED));
    let first = encode_list(&mut enc, &fields);
    assert_eq!(first[0], 0x40 | 58, "user-agent, indexed name 58, added");
    assert_eq!(enc.table_len(), 1);
    let second = encode_list(&mut enc, &fields);
    // user-agent is now entry 62; :path is never added; authorization stays never-indexed.
    assert_eq!(second[0], 0xbe);
    assert_eq!(second[1], 0x04);
    let auth = &second[2 + 1 + 4..];
    assert_eq!(auth[0], 0x1f, "never-indexed, name index 23 on 4 bits");
    assert_eq!(auth[1], 23 - 15);
    assert_eq!(enc.table_len(), 1);
    let mut dec = Decoder::new(4096);
    assert_eq!(decode_all(&mut dec, &first).unwrap(), fields);
    assert_eq!(decode_all(&mut dec, &second).unwrap(), fields);
}

// === random lists through evictions ===

/// Random field lists, encoded and decoded through one encoder/decoder pair whose
/// table sizes change now and then, as SETTINGS would change them.
#[test]
fn random_lists_round_trip_through_evictions() {
    let names: [&[u8]; 10] =
        [b":method", b":path", b":status", b"content-type", b"cookie", b"x-a", b"x-bb", b"x-ccc", b"accept", b"date"];
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    for cap in [0, 64, 256, 4096] {
        let mut enc = Encoder::with_table_cap(cap);
        let mut dec = Decoder::new(4096);
        for round in 0..2000 {
            enc.set_huffman(rng.below(4) != 0);
            if rng.below(50) == 0 {
                let n = rng.below(5000);
                dec.set_max_table_size(n);
                enc.set_peer_table_size(n as u32);
            }
            let fields: Vec<Field> = (0..rng.below(12))
                .map(|_| {
                    let name = match rng.below(4) {
                        0 => rng.bytes(1, 8, b"abcdefghijklmnopqrstuvwxyz-"),
                        _ => names[rng.below(names.len())].to_vec(),
                    };
                    let value = match rng.below(8) {
                        0 => (0..rng.below(40)).map(|_| rng.next() as u8).collect(),
                        1 => rng.bytes(0, 300, b"abc123 /;="),
                        _ => rng.bytes(0, 12, b"abc"),
                    };
                    let flags = if rng.below(10) == 0 { Flags::NEVER_INDEXED } else { Flags::NONE };
                    (name, value, flags)
                })
                .collect();
            let block = encode_list(&mut enc, &fields);
            let got = decode_all(&mut dec, &block).unwrap_or_else(|e| panic!("cap {cap} round {round}: {e}"));
            assert_eq!(got, fields, "cap {cap} round {round}");
            assert_eq!((dec.table_len(), dec.table_size()), (enc.table_len(), enc.table_size()), "round {round}");
        }
    }
}

#[test]
fn an_empty_string_is_a_raw_literal() {
    let mut out = Vec::new();
    encode_string(&mut out, b"", true);
    assert_eq!(out, [0x00]);
}
