//! Expected values come from haproxy 2.6.12: each packet was sent as a request body
//! to `http-request set-var(txn.r) req.body,<converter>` and the variable read back
//! with `lf-string "%[var(txn.r),concat('[',,']')]"` (absent: no variable set). The
//! packets were built for these tests.

use super::super::testing::{agree, bin, borrows, check, fuzz_inputs, run_may_change, s, Case};
use super::*;

#[test]
fn values_agree_with_haproxy() {
    agree(MQTT_EXPRS, MQTT_CASES, bin);
}

/// An MQTT 3.1.1 CONNECT with a will, a user name and a password.
const CONNECT311: &[u8] =
    b"\x10\x2a\x00\x04MQTT\x04\xee\x00\x1e\x00\x05dev-2\x00\x08lastwill\x00\x04gone\x00\x03bob\x00\x02pw";
/// An MQTT 5.0 CONNACK with properties.
const CONNACK5: &[u8] = b"\x20\x0a\x00\x00\x07\x11\x00\x00\x0e\x10\x24\x00";

#[test]
fn whole_broken_or_not_yet() {
    assert_eq!(validate(CONNECT311), Validity::Valid);
    for n in 0..CONNECT311.len() {
        assert_eq!(validate(&CONNECT311[..n]), Validity::NeedMore, "cut at {n}");
    }
    assert_eq!(validate(b"\xc0\x00"), Validity::Invalid, "PINGREQ is not understood");
    assert_eq!(validate(b"\x10\xff\xff\xff\xff\x01"), Validity::Invalid, "5-byte length");
}

#[test]
fn not_yet_sets_may_change_and_a_verdict_clears_it() {
    assert_eq!(run_may_change("mqtt_is_valid", vec![], bin(&CONNECT311[..10])), (None, true));
    assert_eq!(run_may_change("mqtt_is_valid", vec![], bin(CONNECT311)), (Some(Sample::Bool(true)), false));
    assert_eq!(run_may_change("mqtt_is_valid", vec![], bin(b"\xc0\x00")), (Some(Sample::Bool(false)), false));
    let field = |t: &str, f: &str, p: &'static [u8]| run_may_change("mqtt_field_value", vec![s(t), s(f)], bin(p));
    assert_eq!(field("connect", "username", CONNECT311), (Some(Sample::str(b"bob").into_owned()), false));
    assert_eq!(field("connect", "username", &CONNECT311[..20]), (None, true));
    assert_eq!(field("connack", "flags", CONNECT311), (None, false), "another packet type");
    assert_eq!(field("connack", "36", CONNACK5), (Some(Sample::str(b"0").into_owned()), false));
    // COMPAT with haproxy: an unknown CONNACK property reads as "not yet"
    assert_eq!(field("connack", "flags", b"\x20\x05\x00\x00\x02\x7f\x00"), (None, true));
}

#[test]
fn text_fields_borrow_the_packet() {
    assert!(borrows("mqtt_field_value", vec![s("connect"), s("will_topic")], bin(CONNECT311)));
    assert!(!borrows("mqtt_field_value", vec![s("connect"), s("keepalive")], bin(CONNECT311)));
}

#[test]
fn types_and_fields_compile_to_numbers() {
    let c = |t: &str, f: &str| check("mqtt_field_value", vec![s(t), s(f)]);
    assert!(matches!(c("CONNECT", "Username").unwrap()[..], [Arg::Sint(1), Arg::Sint(8)]));
    assert!(matches!(c("2", "39").unwrap()[..], [Arg::Sint(2), Arg::Sint(0x127)]));
    assert!(matches!(c("auth", "21").unwrap()[..], [Arg::Sint(15), Arg::Sint(0x115)]));
    // as haproxy 2.6.12 words them (`-c` on `req.body,mqtt_field_value(...)`)
    assert_eq!(c("foo", "flags").unwrap_err(), "Unknown MQTT type 'foo'");
    assert_eq!(c("16", "flags").unwrap_err(), "Unknown MQTT type '16'");
    assert_eq!(
        c("connect", "reason_code").unwrap_err(),
        "Unknown MQTT field name 'reason_code' for packet type 'connect'"
    );
    assert_eq!(c("pingreq", "flags").unwrap_err(), "Unknown MQTT field name 'flags' for packet type 'pingreq'");
    assert_eq!(c("connect", "039").unwrap_err(), "Unknown MQTT field name '039' for packet type 'connect'");
    assert_eq!(c("connect", "").unwrap_err(), "Unknown MQTT field name '' for packet type 'connect'");
}

#[test]
fn varints_as_haproxy_reads_them() {
    let read = |b: &[u8]| {
        let mut r = Reader { buf: b, pos: 0, end: b.len() };
        (r.varint(), r.pos)
    };
    assert_eq!(read(b"\x00"), (Some(0), 1));
    assert_eq!(read(b"\x7f"), (Some(127), 1));
    assert_eq!(read(b"\x80\x01"), (Some(128), 2));
    assert_eq!(read(b"\xff\xff\xff\x7f"), (Some(268_435_455), 4));
    assert_eq!(read(b"\xff\xff\xff\xff"), (None, 4));
    // cut: what was read so far
    assert_eq!(read(b"\x85"), (Some(5), 1));
    assert_eq!(read(b""), (Some(0), 0));
}

#[test]
fn random_and_cut_inputs_never_panic() {
    let seeds: Vec<&[u8]> = MQTT_CASES.iter().map(|(b, _)| *b).filter(|b| b.len() < 200).collect();
    let mut seen = [0usize; 3];
    for input in fuzz_inputs(&seeds, b"\x00\x01\x02\x10\x20\x26\x80\xff", 60, 3000) {
        seen[validate(&input) as usize] += 1;
        for kind in [CONNECT, CONNACK, 3] {
            for field in (1..=10).chain((0..=42).map(|p| PROP | p)) {
                if let FieldValue::Found(Value::Text(r)) = field_value(&input, kind, field) {
                    assert!(r.end <= input.len());
                }
            }
        }
    }
    assert!(seen.iter().all(|&n| n > 0), "{seen:?}");
}

const MQTT_EXPRS: &[(&str, &[&str])] = &[
    ("mqtt_is_valid", &[]),
    ("mqtt_field_value", &["connect", "flags"]),
    ("mqtt_field_value", &["CONNECT", "protocol_name"]),
    ("mqtt_field_value", &["1", "protocol_version"]),
    ("mqtt_field_value", &["connect", "client_identifier"]),
    ("mqtt_field_value", &["connect", "will_topic"]),
    ("mqtt_field_value", &["connect", "will_payload"]),
    ("mqtt_field_value", &["connect", "username"]),
    ("mqtt_field_value", &["connect", "password"]),
    ("mqtt_field_value", &["connect", "keepalive"]),
    ("mqtt_field_value", &["connect", "39"]),
    ("mqtt_field_value", &["connect", "23"]),
    ("mqtt_field_value", &["connect", "17"]),
    ("mqtt_field_value", &["connect", "34"]),
    ("mqtt_field_value", &["connect", "25"]),
    ("mqtt_field_value", &["connect", "33"]),
    ("mqtt_field_value", &["connect", "21"]),
    ("mqtt_field_value", &["connect", "22"]),
    ("mqtt_field_value", &["connect", "1"]),
    ("mqtt_field_value", &["connect", "2"]),
    ("mqtt_field_value", &["connect", "3"]),
    ("mqtt_field_value", &["connect", "8"]),
    ("mqtt_field_value", &["connect", "9"]),
    ("mqtt_field_value", &["connect", "24"]),
    ("mqtt_field_value", &["connect", "38"]),
    ("mqtt_field_value", &["connack", "flags"]),
    ("mqtt_field_value", &["connack", "protocol_version"]),
    ("mqtt_field_value", &["connack", "reason_code"]),
    ("mqtt_field_value", &["connack", "17"]),
    ("mqtt_field_value", &["connack", "33"]),
    ("mqtt_field_value", &["connack", "36"]),
    ("mqtt_field_value", &["connack", "37"]),
    ("mqtt_field_value", &["connack", "39"]),
    ("mqtt_field_value", &["connack", "34"]),
    ("mqtt_field_value", &["connack", "19"]),
    ("mqtt_field_value", &["connack", "40"]),
    ("mqtt_field_value", &["connack", "41"]),
    ("mqtt_field_value", &["2", "42"]),
    ("mqtt_field_value", &["connack", "18"]),
    ("mqtt_field_value", &["connack", "31"]),
    ("mqtt_field_value", &["connack", "26"]),
    ("mqtt_field_value", &["connack", "28"]),
    ("mqtt_field_value", &["connack", "21"]),
    ("mqtt_field_value", &["connack", "22"]),
];

const MQTT_CASES: &[Case] = &[
    (b"\x10\x11\x00\x04MQTT\x04\x02\x00\x1e\x00\x05dev-1", &[(0, b"1"), (1, b"2"), (2, b"MQTT"), (3, b"4"), (4, b"dev-1"), (9, b"30")]),
    (b"\x10\xc7\x01\x00\x04MQTT\x04\x02\x02X\x00\xbbsensor-zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", &[(0, b"1"), (1, b"2"), (2, b"MQTT"), (3, b"4"), (4, b"sensor-zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"), (9, b"600")]),
    (b"\x10\x1b\x00\x04MQTT\x04\xc2\x00\x1e\x00\x00\x00\x05alice\x00\x06secret", &[(0, b"1"), (1, b"194"), (2, b"MQTT"), (3, b"4"), (7, b"alice"), (8, b"secret"), (9, b"30")]),
    (b"\x10*\x00\x04MQTT\x04\xee\x00\x1e\x00\x05dev-2\x00\x08lastwill\x00\x04gone\x00\x03bob\x00\x02pw", &[(0, b"1"), (1, b"238"), (2, b"MQTT"), (3, b"4"), (4, b"dev-2"), (5, b"lastwill"), (6, b"gone"), (7, b"bob"), (8, b"pw"), (9, b"30")]),
    (b"\x10\x17\x00\x06MQIsdp\x03\xc2\x00\x1e\x00\x03old\x00\x01u\x00\x01p", &[(0, b"1"), (1, b"194"), (2, b"MQIsdp"), (3, b"3"), (4, b"old"), (7, b"u"), (8, b"p"), (9, b"30")]),
    (b"\x10\x15\x00\x04MQTT\x05\x02\x00\x1e\x03!\x00\x14\x00\x05dev-1", &[(0, b"1"), (1, b"2"), (2, b"MQTT"), (3, b"5"), (4, b"dev-1"), (9, b"30"), (10, b"0"), (11, b"0"), (12, b"0"), (13, b"0"), (14, b"0"), (15, b"20")]),
    (b"\x10\x1e\x00\x04MQTT\x05\xc2\x00\x1e\x00\x00\x05dev-1\x00\x05carol\x00\x03pw5", &[(0, b"1"), (1, b"194"), (2, b"MQTT"), (3, b"5"), (4, b"dev-1"), (7, b"carol"), (8, b"pw5"), (9, b"30"), (10, b"0"), (11, b"0"), (12, b"0"), (13, b"0"), (14, b"0"), (15, b"0")]),
    (b"\x10\x92\x01\x00\x04MQTT\x05\xee\x00-/'\x00\x00\x00@\x17\x01\x11\x00\x00\x01,\"\x00\x07\x19\x01\x15\x00\x05SCRAM\x16\x00\x03xyz&\x00\x01k\x00\x01v&\x00\x02k2\x00\x02v2\x00\x05dev-15\x01\x01\x02\x00\x00\x00<\x03\x00\x10application/json\x08\x00\x05reply\x09\x00\x04corr\x18\x00\x00\x00\x05&\x00\x01w\x00\x01x\x00\x06status\x00\x07offline\x00\x04dave\x00\x02pw", &[(0, b"1"), (1, b"238"), (2, b"MQTT"), (3, b"5"), (4, b"dev-1"), (5, b"status"), (6, b"offline"), (7, b"dave"), (8, b"pw"), (9, b"45"), (10, b"64"), (11, b"1"), (12, b"300"), (13, b"7"), (14, b"1"), (15, b"0"), (16, b"SCRAM"), (17, b"xyz"), (18, b"1"), (19, b"60"), (20, b"application/json"), (21, b"reply"), (22, b"corr"), (23, b"5")]),
    (b"\x10\x18\x00\x04MQTT\x05\x06\x00\x1e\x00\x00\x05dev-1\x00\x00\x01t\x00\x00", &[(0, b"1"), (1, b"6"), (2, b"MQTT"), (3, b"5"), (4, b"dev-1"), (5, b"t"), (9, b"30"), (10, b"0"), (11, b"0"), (12, b"0"), (13, b"0"), (14, b"0"), (15, b"0"), (18, b"0"), (19, b"0"), (23, b"0")]),
    (b"\x11\x11\x00\x04MQTT\x04\x02\x00\x1e\x00\x05dev-1", &[(0, b"0")]),
    (b"\x10\x11\x00\x04MQTT\x04\x03\x00\x1e\x00\x05dev-1", &[(0, b"0")]),
    (b"\x10\x11\x00\x04MQTT\x04\x18\x00\x1e\x00\x05dev-1", &[(0, b"0")]),
    (b"\x10\x11\x00\x04MQTT\x04\x1a\x00\x1e\x00\x05dev-1", &[(0, b"0")]),
    (b"\x10\x11\x00\x04MQTT\x048\x00\x1e\x00\x05dev-1", &[(0, b"1"), (1, b"56"), (2, b"MQTT"), (3, b"4"), (4, b"dev-1"), (9, b"30")]),
    (b"\x10\x11\x00\x04MQTT\x06\x02\x00\x1e\x00\x05dev-1", &[(0, b"0")]),
    (b"\x10\x11\x00\x04MQTX\x04\x02\x00\x1e\x00\x05dev-1", &[(0, b"0")]),
    (b"\x10\x11\x00\x04mqtt\x04\x02\x00\x1e\x00\x05dev-1", &[(0, b"1"), (1, b"2"), (2, b"mqtt"), (3, b"4"), (4, b"dev-1"), (9, b"30")]),
    (b"\x10\x17\x00\x04MQTT\x05\x02\x00\x1e\x05\x16\x00\x02ad\x00\x05dev-1", &[(0, b"0")]),
    (b"\x10\x1c\x00\x04MQTT\x05\x02\x00\x1e\x0a\x11\x00\x00\x00\x01\x11\x00\x00\x00\x02\x00\x05dev-1", &[(0, b"0")]),
    (b"\x10\x15\x00\x04MQTT\x05\x02\x00\x1e\x03!\x00\x00\x00\x05dev-1", &[(0, b"0")]),
    (b"\x10\x17\x00\x04MQTT\x05\x02\x00\x1e\x05'\x00\x00\x00\x00\x00\x05dev-1", &[(0, b"0")]),
    (b"\x10\x14\x00\x04MQTT\x05\x02\x00\x1e\x02\x17\x02\x00\x05dev-1", &[(0, b"0")]),
    (b"\x10\x14\x00\x04MQTT\x05\x02\x00\x1e\x020\x00\x00\x05dev-1", &[(0, b"0")]),
    (b"\x10C\x00\x04MQTT\x05\x02\x00\x1e1&\x00\x01a\x00\x01b&\x00\x01a\x00\x01b&\x00\x01a\x00\x01b&\x00\x01a\x00\x01b&\x00\x01a\x00\x01b&\x00\x01a\x00\x01b&\x00\x01a\x00\x01b\x00\x05dev-1", &[(0, b"1"), (1, b"2"), (2, b"MQTT"), (3, b"5"), (4, b"dev-1"), (9, b"30"), (10, b"0"), (11, b"0"), (12, b"0"), (13, b"0"), (14, b"0"), (15, b"0")]),
    (b"\x10\x15\x00\x04MQTT\x05\x02\x00\x1e\x03\x11\x00\x00\x00\x05dev-1", &[(0, b"0")]),
    (b"\x10\x1b\x00\x04MQTT\x05\x06\x00\x1e\x00\x00\x05dev-1\x02\x01\x02\x00\x01t\x00\x01p", &[(0, b"0")]),
    (b"\x10\x1e\x00\x04MQTT\x05\x06\x00\x1e\x00\x00\x05dev-1\x05'\x00\x00\x00\x01\x00\x01t\x00\x01p", &[(0, b"0")]),
    (b"\x10\x12\x00\x04MQTT\x04\x02\x00\x1e\x00\x05dev-1\x00", &[(0, b"0")]),
    (b"\x10\x11\x00\x04MQTT\x04\x02\x00\x1e\x00\x05dev-1\x10\x00", &[(0, b"1"), (1, b"2"), (2, b"MQTT"), (3, b"4"), (4, b"dev-1"), (9, b"30")]),
    (b"\x10\x11\x00\x04MQTT\x04\x02\x00\x1e\x00\x05de", &[]),
    (b"\x10\xff\xff\xff\xff\x01", &[(0, b"0")]),
    (b"\x10\x80", &[(0, b"0")]),
    (b"\x10\x80\x80\x80", &[(0, b"0")]),
    (b"\x10", &[]),
    (b"", &[]),
    (b"\xc0\x00", &[(0, b"0")]),
    (b"0\x05ab", &[(0, b"0")]),
    (b"?\x05ab", &[]),
    (b"?\x02ab", &[(0, b"0")]),
    (b"\x00\x00", &[(0, b"0")]),
    (b" \x02\x00\x00", &[(0, b"1"), (25, b"0"), (26, b"4"), (27, b"0")]),
    (b" \x02\x01\x05", &[(0, b"1"), (25, b"1"), (26, b"4"), (27, b"5")]),
    (b" \x02\x02\x00", &[(0, b"0")]),
    (b" \x02\x00\x00\x00", &[(0, b"0")]),
    (b" \x01\x00", &[(0, b"0")]),
    (b" \x00", &[(0, b"0")]),
    (b" \x03\x00\x00\x00", &[(0, b"1"), (25, b"0"), (26, b"5"), (27, b"0"), (28, b"0"), (29, b"0"), (30, b"0"), (31, b"0"), (32, b"0"), (33, b"0"), (34, b"0"), (35, b"0"), (36, b"0"), (37, b"0")]),
    (b"  \x00\x00\x1d\x11\x00\x00\x0e\x10!\x01\x00$\x00%\x01'\x00\x01\x00\x00\"\x00\x08\x13\x00<(\x01)\x00*\x01", &[(0, b"1"), (25, b"0"), (26, b"5"), (27, b"0"), (28, b"3600"), (29, b"256"), (30, b"0"), (31, b"1"), (32, b"65536"), (33, b"8"), (34, b"60"), (35, b"1"), (36, b"0"), (37, b"1")]),
    (b" 3\x00\x870\x12\x00\x06auto-1\x1f\x00\x06denied\x1a\x00\x04info\x1c\x00\x03srv\x15\x00\x02m1\x16\x00\x02d1&\x00\x01a\x00\x01b", &[(0, b"1"), (25, b"0"), (26, b"5"), (27, b"135"), (28, b"0"), (29, b"0"), (30, b"0"), (31, b"0"), (32, b"0"), (33, b"0"), (34, b"0"), (35, b"0"), (36, b"0"), (37, b"0"), (38, b"auto-1"), (39, b"denied"), (40, b"info"), (41, b"srv"), (42, b"m1"), (43, b"d1")]),
    (b" \x06\x00\x00\x03\x12\x00\x00", &[(0, b"0")]),
    (b" \x05\x00\x00\x02$\x02", &[(0, b"0")]),
    (b" \x05\x00\x00\x02\x7f\x00", &[]),
    (b" \x09\x00\x00\x06\x11\x00\x00\x00\x01\x7f", &[]),
    (b" \x07\x00\x00\x04$\x01$\x01", &[(0, b"0")]),
    (b" \x06\x00\x00\x03!\x00\x00", &[(0, b"0")]),
];
