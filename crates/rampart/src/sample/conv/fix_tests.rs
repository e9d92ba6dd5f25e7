//! Expected values come from haproxy 2.6.12: each message was sent as a request body
//! to `http-request set-var(txn.r) req.body,<converter>` and the variable read back
//! with `lf-string "%[var(txn.r),concat('[',,']')]"` (absent: no variable set). The
//! messages were written for these tests.

use super::super::testing::{agree, bin, check, fuzz_inputs, run_may_change, s, Case};
use super::*;

#[test]
fn values_agree_with_haproxy() {
    agree(FIX_EXPRS, FIX_CASES, bin);
}

/// A FIX 4.4 logon, whole.
const LOGON: &[u8] = b"8=FIX.4.4\x019=96\x0135=A\x0149=GATEWAY\x0156=BROKER\x0134=7\x0152=20240301-09:30:00.000\
\x0198=0\x01108=60\x01141=Y\x01553=trader\x01554=s3cret\x0110=135\x01";

#[test]
fn whole_broken_or_not_yet() {
    assert_eq!(validate(LOGON), Validity::Valid);
    // cut anywhere: not yet (a cut in the CheckSum value too)
    for n in 0..LOGON.len() {
        assert_eq!(validate(&LOGON[..n]), Validity::NeedMore, "cut at {n}");
    }
    let mut bad = LOGON.to_vec();
    bad[25] = b'X'; // in a value: the checksum no longer matches
    assert_eq!(validate(&bad), Validity::Invalid);
}

#[test]
fn not_yet_sets_may_change_and_a_verdict_clears_it() {
    assert_eq!(run_may_change("fix_is_valid", vec![], bin(&LOGON[..40])), (None, true));
    assert_eq!(run_may_change("fix_is_valid", vec![], bin(LOGON)), (Some(Sample::Bool(true)), false));
    assert!(!run_may_change("fix_is_valid", vec![], bin(b"9=1\x018=FIX.4.4\x0135=A\x0110=000\x01xxxx")).1);
    let tag = |v: &str, msg: &'static [u8]| run_may_change("fix_tag_value", vec![s(v)], bin(msg));
    assert_eq!(tag("49", LOGON), (Some(Sample::Bin(b"GATEWAY".as_slice().into())), false));
    // the message ends before the tag, or the tag has an empty value: not yet
    assert_eq!(tag("49", &LOGON[..24]), (None, true));
    assert_eq!(tag("98", b"35=A\x0198=\x01"), (None, true));
    // met CheckSum first, or a malformed field: absent for good
    assert_eq!(tag("999", LOGON), (None, false));
    assert_eq!(tag("49", b"35=A\x01=x\x0149=ME\x01"), (None, false));
}

#[test]
fn tag_value_borrows_the_message() {
    assert!(super::super::testing::borrows("fix_tag_value", vec![s("SenderCompID")], bin(LOGON)));
}

#[test]
fn tag_names_and_numbers_compile_to_numbers() {
    assert!(matches!(check("fix_tag_value", vec![s("targetcompid")]).unwrap()[..], [Arg::Sint(56)]));
    assert!(matches!(check("fix_tag_value", vec![s("0049")]).unwrap()[..], [Arg::Sint(49)]));
    assert!(matches!(check("fix_tag_value", vec![s("4294967304")]).unwrap()[..], [Arg::Sint(8)]));
    // as haproxy 2.6.12 words them (`-c` on `req.body,fix_tag_value(...)`)
    assert_eq!(check("fix_tag_value", vec![s("Foo")]).unwrap_err(), "Unknown FIX tag name 'Foo'");
    assert_eq!(check("fix_tag_value", vec![s("0")]).unwrap_err(), "Unknown FIX tag name '0'");
    assert_eq!(check("fix_tag_value", vec![s("")]).unwrap_err(), "Unknown FIX tag name ''");
    assert_eq!(check("fix_tag_value", vec![s("35x")]).unwrap_err(), "Unknown FIX tag name '35x'");
}

#[test]
fn the_checksum_is_read_without_digit_checks() {
    // strl2ui("01D") = 10 * 1 - '0' + 'D' = 30: the sum of the bytes before it
    let msg = b"8=FIX.4.4\x019=11\x0135=A\x0149=ME\x0110=01D\x01";
    assert_eq!(validate(msg), Validity::Valid);
    assert_eq!(strl2ui(b"01D"), 30);
    assert_eq!(read_uint(b"4294967304"), (8, 10));
}

#[test]
fn random_and_cut_inputs_never_panic() {
    let seeds: &[&[u8]] =
        &[LOGON, b"8=FIXT.1.1\x019=12\x0135=A\x011621=x\x0110=176\x01", b"49=me\x0110=123\x0135=A\x01"];
    let mut seen = [0usize; 3];
    for input in fuzz_inputs(seeds, b"=\x0189", 400, 3000) {
        seen[validate(&input) as usize] += 1;
        for id in [8, 9, 10, 35, 49, 98, 1621, u32::MAX] {
            if let TagValue::Found(r) = tag_value(&input, id) {
                assert!(r.end <= input.len());
            }
        }
    }
    // the inputs reach every verdict
    assert!(seen.iter().all(|&n| n > 0), "{seen:?}");
}

const FIX_EXPRS: &[(&str, &[&str])] = &[
    ("fix_is_valid", &[]),
    ("fix_tag_value", &["35"]),
    ("fix_tag_value", &["MsgType"]),
    ("fix_tag_value", &["checksum"]),
    ("fix_tag_value", &["BODYLENGTH"]),
    ("fix_tag_value", &["BeginString"]),
    ("fix_tag_value", &["SenderCompID"]),
    ("fix_tag_value", &["targetcompid"]),
    ("fix_tag_value", &["98"]),
    ("fix_tag_value", &["999"]),
    ("fix_tag_value", &["553"]),
    ("fix_tag_value", &["0049"]),
];

const FIX_CASES: &[Case] = &[
    (b"8=FIX.4.4\x019=96\x0135=A\x0149=GATEWAY\x0156=BROKER\x0134=7\x0152=20240301-09:30:00.000\x0198=0\x01108=60\x01141=Y\x01553=trader\x01554=s3cret\x0110=135\x01", &[(0, b"1"), (1, b"A"), (2, b"A"), (3, b"135"), (4, b"96"), (5, b"FIX.4.4"), (6, b"GATEWAY"), (7, b"BROKER"), (8, b"0"), (10, b"trader"), (11, b"GATEWAY")]),
    (b"8=FIX.4.4\x019=96\x0135=A\x0149=GATEWAY", &[(1, b"A"), (2, b"A"), (4, b"96"), (5, b"FIX.4.4")]),
    (b"8=FIX.4.4\x019=96\x0135=A\x0149=GA", &[(1, b"A"), (2, b"A"), (4, b"96"), (5, b"FIX.4.4")]),
    (b"8=FIX.4.4\x019=96\x0135=A\x0149=GATEWAY\x0156=BROKER\x0134=7\x0152=20240301-09:30:00.000\x0198=0\x01108=60\x01141=Y\x01553=trader\x01554=s3cret\x0110=135\x01XXX", &[(0, b"1"), (1, b"A"), (2, b"A"), (3, b"135"), (4, b"96"), (5, b"FIX.4.4"), (6, b"GATEWAY"), (7, b"BROKER"), (8, b"0"), (10, b"trader"), (11, b"GATEWAY")]),
    (b"8=FIX.4.4\x019=96\x0135=A\x0149=GATEWAY\x0156=BROKER\x0134=7\x0152=20240301-09:30:00.000\x0198=0\x01108=60\x01141=Y\x01553=trader\x01554=s3cret\x0110=135", &[(1, b"A"), (2, b"A"), (4, b"96"), (5, b"FIX.4.4"), (6, b"GATEWAY"), (7, b"BROKER"), (8, b"0"), (10, b"trader"), (11, b"GATEWAY")]),
    (b"8=FIX.4.4\x019=96\x0135=A\x0149=GATEWAY\x0156=BROKER\x0134=7\x0152=20240301-09:30:00.000\x0198=0\x01108=60\x01141=Y\x01553=trader\x01554=s3cret\x0110=", &[(1, b"A"), (2, b"A"), (4, b"96"), (5, b"FIX.4.4"), (6, b"GATEWAY"), (7, b"BROKER"), (8, b"0"), (10, b"trader"), (11, b"GATEWAY")]),
    (b"8=FIX.4.4\x019=90\x0135=A\x0149=GATEWAY\x0156=BROKER\x0134=7\x0152=20240301-09:30:00.000\x0198=0\x01108=60\x01141=Y\x01553=trader\x01554=s3cret\x0110=129\x01", &[(0, b"0"), (1, b"A"), (2, b"A"), (3, b"129"), (4, b"90"), (5, b"FIX.4.4"), (6, b"GATEWAY"), (7, b"BROKER"), (8, b"0"), (10, b"trader"), (11, b"GATEWAY")]),
    (b"8=FIX.4.4\x019=200\x0135=A\x0149=GATEWAY\x0156=BROKER\x0134=7\x0152=20240301-09:30:00.000\x0198=0\x01108=60\x01141=Y\x01553=trader\x01554=s3cret\x0110=170\x01", &[(0, b"0"), (1, b"A"), (2, b"A"), (3, b"170"), (4, b"200"), (5, b"FIX.4.4"), (6, b"GATEWAY"), (7, b"BROKER"), (8, b"0"), (10, b"trader"), (11, b"GATEWAY")]),
    (b"8=FIX.4.4\x019=96\x0135=A\x0149=GATEWAY\x0156=BROKER\x0134=7\x0152=20240301-09:30:00.000\x0198=0\x01108=60\x01141=Y\x01553=trader\x01554=s3cret\x0110=136\x01", &[(0, b"0"), (1, b"A"), (2, b"A"), (3, b"136"), (4, b"96"), (5, b"FIX.4.4"), (6, b"GATEWAY"), (7, b"BROKER"), (8, b"0"), (10, b"trader"), (11, b"GATEWAY")]),
    (b"8=FIX.4.4\x019=96\x0135=A\x0149=GATEWAY\x0156=BROKER\x0134=7\x0152=20240301-09:30:00.000\x0198=0\x01108=60\x01141=Y\x01553=trader\x01554=s3cret\x0110=12\x01", &[(0, b"0"), (1, b"A"), (2, b"A"), (3, b"12"), (4, b"96"), (5, b"FIX.4.4"), (6, b"GATEWAY"), (7, b"BROKER"), (8, b"0"), (10, b"trader"), (11, b"GATEWAY")]),
    (b"8=FIX.4.4\x019=96\x0135=A\x0149=GATEWAY\x0156=BROKER\x0134=7\x0152=20240301-09:30:00.000\x0198=0\x01108=60\x01141=Y\x01553=trader\x01554=s3cret\x0110=1234\x01", &[(0, b"0"), (1, b"A"), (2, b"A"), (3, b"1234"), (4, b"96"), (5, b"FIX.4.4"), (6, b"GATEWAY"), (7, b"BROKER"), (8, b"0"), (10, b"trader"), (11, b"GATEWAY")]),
    (b"8=FIX.4.2\x019=96\x0135=A\x0149=GATEWAY\x0156=BROKER\x0134=7\x0152=20240301-09:30:00.000\x0198=0\x01108=60\x01141=Y\x01553=trader\x01554=s3cret\x0110=133\x01", &[(0, b"0"), (1, b"A"), (2, b"A"), (3, b"133"), (4, b"96"), (5, b"FIX.4.2"), (6, b"GATEWAY"), (7, b"BROKER"), (8, b"0"), (10, b"trader"), (11, b"GATEWAY")]),
    (b"8=FIXT.1.1\x019=96\x0135=A\x0149=GATEWAY\x0156=BROKER\x0134=7\x0152=20240301-09:30:00.000\x0198=0\x01108=60\x01141=Y\x01553=trader\x01554=s3cret\x0110=213\x01", &[(0, b"1"), (1, b"A"), (2, b"A"), (3, b"213"), (4, b"96"), (5, b"FIXT.1.1"), (6, b"GATEWAY"), (7, b"BROKER"), (8, b"0"), (10, b"trader"), (11, b"GATEWAY")]),
    (b"8=FIX.4.5\x019=96\x0135=A\x0149=GATEWAY\x0156=BROKER\x0134=7\x0152=20240301-09:30:00.000\x0198=0\x01108=60\x01141=Y\x01553=trader\x01554=s3cret\x0110=136\x01", &[(0, b"0"), (1, b"A"), (2, b"A"), (3, b"136"), (4, b"96"), (5, b"FIX.4.5"), (6, b"GATEWAY"), (7, b"BROKER"), (8, b"0"), (10, b"trader"), (11, b"GATEWAY")]),
    (b"8=fix.4.4\x019=96\x0135=A\x0149=GATEWAY\x0156=BROKER\x0134=7\x0152=20240301-09:30:00.000\x0198=0\x01108=60\x01141=Y\x01553=trader\x01554=s3cret\x0110=231\x01", &[(0, b"0"), (1, b"A"), (2, b"A"), (3, b"231"), (4, b"96"), (5, b"fix.4.4"), (6, b"GATEWAY"), (7, b"BROKER"), (8, b"0"), (10, b"trader"), (11, b"GATEWAY")]),
    (b"8=FIX.4.4\x019=16\x0135=A\x0198=\x01108=60\x0110=210\x01", &[(0, b"1"), (1, b"A"), (2, b"A"), (3, b"210"), (4, b"16"), (5, b"FIX.4.4")]),
    (b"8=FIX.4.4\x019=11\x0135=A\x01957=x\x0110=060\x01", &[(0, b"0"), (1, b"A"), (2, b"A"), (3, b"060"), (4, b"11"), (5, b"FIX.4.4")]),
    (b"8=FIX.4.4\x019=11\x0135=A\x01956=x\x0110=059\x01", &[(0, b"1"), (1, b"A"), (2, b"A"), (3, b"059"), (4, b"11"), (5, b"FIX.4.4")]),
    (b"8=FIX.4.4\x019=13\x0135=A\x0119999=x\x0110=174\x01", &[(0, b"1"), (1, b"A"), (2, b"A"), (3, b"174"), (4, b"13"), (5, b"FIX.4.4")]),
    (b"8=FIX.4.4\x019=13\x0135=A\x0120000=x\x0110=139\x01", &[(0, b"0"), (1, b"A"), (2, b"A"), (3, b"139"), (4, b"13"), (5, b"FIX.4.4")]),
    (b"8=FIXT.1.1\x019=12\x0135=A\x011622=x\x0110=177\x01", &[(0, b"0"), (1, b"A"), (2, b"A"), (3, b"177"), (4, b"12"), (5, b"FIXT.1.1")]),
    (b"8=FIXT.1.1\x019=12\x0135=A\x011621=x\x0110=176\x01", &[(0, b"1"), (1, b"A"), (2, b"A"), (3, b"176"), (4, b"12"), (5, b"FIXT.1.1")]),
    (b"8=FIX.4.0\x019=11\x0135=A\x01141=Y\x0110=010\x01", &[(0, b"0"), (1, b"A"), (2, b"A"), (3, b"010"), (4, b"11"), (5, b"FIX.4.0")]),
    (b"8=FIX.4.1\x019=11\x0135=A\x01141=Y\x0110=011\x01", &[(0, b"1"), (1, b"A"), (2, b"A"), (3, b"011"), (4, b"11"), (5, b"FIX.4.1")]),
    (b"4294967304=FIX.4.4\x019=11\x0135=A\x0149=ME\x0110=246\x01", &[(0, b"1"), (1, b"A"), (2, b"A"), (3, b"246"), (4, b"11"), (5, b"FIX.4.4"), (6, b"ME"), (11, b"ME")]),
    (b"8=FIX.4.4\x019=11\x0135=A\x0149=ME\x0110=01D\x01", &[(0, b"1"), (1, b"A"), (2, b"A"), (3, b"01D"), (4, b"11"), (5, b"FIX.4.4"), (6, b"ME"), (11, b"ME")]),
    (b"8=FIX.4.4\x019=13\x0135=A\x010049=ME\x0110=128\x01", &[(0, b"1"), (1, b"A"), (2, b"A"), (3, b"128"), (4, b"13"), (5, b"FIX.4.4"), (6, b"ME"), (11, b"ME")]),
    (b"8=FIX.4.4\x019=12\x01035=A\x0149=ME\x0110=079\x01", &[(0, b"1"), (1, b"A"), (2, b"A"), (3, b"079"), (4, b"12"), (5, b"FIX.4.4"), (6, b"ME"), (11, b"ME")]),
    (b"8=FIX.4.4\x019=11\x0149=ME\x0135=A\x0110=030\x01", &[(0, b"0"), (1, b"A"), (2, b"A"), (3, b"030"), (4, b"11"), (5, b"FIX.4.4"), (6, b"ME"), (11, b"ME")]),
    (b"8=FIX.4.4\x019=14\x0135=A\x01=x\x0149=ME\x0110=215\x01", &[(0, b"0"), (1, b"A"), (2, b"A"), (4, b"14"), (5, b"FIX.4.4")]),
    (b"8=FIX.4.4\x019=12\x0135=A\x0149\x01=ME\x0110=032\x01", &[(0, b"0"), (1, b"A"), (2, b"A"), (4, b"12"), (5, b"FIX.4.4")]),
    (b"8=FIX.4.4\x019=12\x0135=A\x01x49=ME\x0110=151\x01", &[(0, b"0"), (1, b"A"), (2, b"A"), (4, b"12"), (5, b"FIX.4.4")]),
    (b"8=FIX.4.4\x019=0\x0135=A\x0110=000\x01xxxxxxxx", &[(0, b"0"), (1, b"A"), (2, b"A"), (3, b"000"), (4, b"0"), (5, b"FIX.4.4")]),
    (b"8=FIX.4.4\x019=5x\x0135=A\x0110=000\x01xxxxxxx", &[(0, b"0"), (1, b"A"), (2, b"A"), (3, b"000"), (4, b"5x"), (5, b"FIX.4.4")]),
    (b"9=5\x018=FIX.4.4\x0135=A\x0110=000\x01xxxxxxxxxx", &[(0, b"0"), (1, b"A"), (2, b"A"), (3, b"000"), (4, b"5"), (5, b"FIX.4.4")]),
    (b"8=FIX.4.4\x0135=A\x019=5\x0110=000\x01xxxxxxxxxx", &[(0, b"0"), (1, b"A"), (2, b"A"), (3, b"000"), (4, b"5"), (5, b"FIX.4.4")]),
    (b"8=FIX.4.4\x019=5\x0110=A\x0135=000\x01xxxxxxx", &[(0, b"0"), (3, b"A"), (4, b"5"), (5, b"FIX.4.4")]),
    (b"49=me\x0135=A\x01", &[(1, b"A"), (2, b"A"), (6, b"me"), (11, b"me")]),
    (b"49=me\x0110=123\x0135=A\x01", &[(3, b"123"), (6, b"me"), (11, b"me")]),
    (b"49=me\x0135=A", &[(6, b"me"), (11, b"me")]),
    (b"49=me\x0135=\x01", &[(6, b"me"), (11, b"me")]),
    (b"abc=1\x0135=A\x01", &[]),
    (b"=1\x0135=A\x01", &[]),
    (b"", &[]),
];
