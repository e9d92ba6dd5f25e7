//! Expected lines: what haproxy 2.6.12 sent for the same message and target (a
//! `log-forward` with one `log 127.0.0.1:<port> [format X] local3` per format).

use std::time::{Duration, UNIX_EPOCH};

use rampart_proto::syslog::parse;

use super::*;
use crate::log::target;

fn tgt(words: &str) -> Target {
    let args: Vec<String> = words.split_whitespace().map(str::to_owned).collect();
    target::parse(&args).unwrap()
}

/// 2026-12-02 04:20:04.385964 UTC
fn now() -> SystemTime {
    UNIX_EPOCH + Duration::from_micros(1_796_185_204_385_964)
}

/// The line `input` becomes for a `log 127.0.0.1 [format <format>] local3` target.
fn relay(input: &str, format: &str) -> String {
    let t =
        if format == "default" { tgt("127.0.0.1 local3") } else { tgt(&format!("127.0.0.1 format {format} local3")) };
    let m = parse(input.as_bytes());
    let facility = m.facility().unwrap_or(t.facility.into());
    let level = m.level().unwrap_or(0).max(t.minlevel);
    let mut out = Vec::new();
    let r = Relayed { facility, level, has_pri: m.pri.is_some(), meta: &m.meta, msg: m.msg };
    line(&mut out, &t, &r, now());
    String::from_utf8(out).unwrap()
}

fn utc() -> bool {
    date::at(1_796_185_204, true).offset == 0
}

const FORMATS: [&str; 9] = ["default", "rfc3164", "rfc5424", "local", "short", "timed", "iso", "raw", "priority"];

fn check(input: &str, expected: [&str; 9]) {
    for (f, want) in FORMATS.iter().zip(expected) {
        assert_eq!(relay(input, f), format!("{want}\n"), "{input:?} to format {f}");
    }
}

#[test]
fn an_rfc5424_message_in_every_format() {
    check(
        "<134>1 2024-03-01T10:20:30.123456+01:00 host1 app 4242 ID47 [ex@1 a=\"b\"] hello5424",
        [
            "<134>1 2024-03-01T10:20:30.123456+01:00 host1 app 4242 ID47 [ex@1 a=\"b\"] hello5424",
            "<134>Mar  1 10:20:30 host1 app[4242]: hello5424",
            "<134>1 2024-03-01T10:20:30.123456+01:00 host1 app 4242 ID47 [ex@1 a=\"b\"] hello5424",
            "<134>Mar  1 10:20:30 app[4242]: hello5424",
            "<6>hello5424",
            "<6>2024-03-01T10:20:30.123456+01:00 hello5424",
            "2024-03-01T10:20:30.123456+01:00 hello5424",
            "hello5424",
            "<134>hello5424",
        ],
    );
}

#[test]
fn an_rfc3164_message_in_every_format() {
    if !utc() {
        return; // the year of the converted date is this machine's
    }
    check(
        "<30>Mar  1 10:20:30 host1 app[123]: hello3164",
        [
            "<30>Mar  1 10:20:30 host1 app[123]: hello3164",
            "<30>Mar  1 10:20:30 host1 app[123]: hello3164",
            "<30>1 2026-03-01T10:20:30-00:00 host1 app 123 - - hello3164",
            "<30>Mar  1 10:20:30 app[123]: hello3164",
            "<6>hello3164",
            "<6>2026-03-01T10:20:30-00:00 hello3164",
            "2026-03-01T10:20:30-00:00 hello3164",
            "hello3164",
            "<30>hello3164",
        ],
    );
    assert_eq!(
        relay("<30>Mar  1 10:20:30 host1 app: m", "rfc5424"),
        "<30>1 2026-03-01T10:20:30-00:00 host1 app - - - m\n"
    );
    assert_eq!(
        relay("<30>Mar  1 10:20:30 host1 just m", "rfc5424"),
        "<30>1 2026-03-01T10:20:30-00:00 host1 - - - - just m\n"
    );
    assert_eq!(relay("<30>Dec 31 23:59:59 h t: m", "iso"), "2026-12-31T23:59:59-00:00 m\n");
    // in February, a December date was last year's
    let mut out = Vec::new();
    iso_time(&mut out, b"Dec 31 23:59:59", (1_769_904_000, 0));
    assert_eq!(out, b"2025-12-31T23:59:59-00:00 ");
}

#[test]
fn messages_without_metadata_get_the_time_now_and_localhost() {
    if !utc() {
        return;
    }
    check(
        "<13>1 - - - - - - nil5424",
        [
            "<13>nil5424",
            "<13>Dec  2 04:20:04 localhost nil5424",
            "<13>1 - - - - - - nil5424",
            "<13>Dec  2 04:20:04 nil5424",
            "<5>nil5424",
            "<5>2026-12-02T04:20:04.385964+00:00 nil5424",
            "2026-12-02T04:20:04.385964+00:00 nil5424",
            "nil5424",
            "<13>nil5424",
        ],
    );
    // no `<PRI>`: the target's facility, level emerg
    check(
        "no pri at all",
        [
            "no pri at all",
            "<152>Dec  2 04:20:04 localhost no pri at all",
            "<152>1 2026-12-02T04:20:04.385964+00:00 - - - - - no pri at all",
            "<152>Dec  2 04:20:04 no pri at all",
            "<0>no pri at all",
            "<0>2026-12-02T04:20:04.385964+00:00 no pri at all",
            "2026-12-02T04:20:04.385964+00:00 no pri at all",
            "no pri at all",
            "<152>no pri at all",
        ],
    );
    // a bad RFC 5424 header: the priority, and the text less its last two bytes
    assert_eq!(relay("<13>1 bad", "default"), "<13>1 b\n");
    assert_eq!(relay("<13>1 bad", "rfc3164"), "<13>Dec  2 04:20:04 localhost 1 b\n");
}

#[test]
fn odd_priorities_and_tags_as_haproxy_relays_them() {
    assert_eq!(relay("<999>huge", "default"), "<999>huge\n");
    assert_eq!(relay("<999>huge", "short"), "<7>huge\n");
    assert_eq!(relay("<1005>x", "priority"), "<005>x\n", "three digits at most");
    assert_eq!(relay("<30>Mar  1 10:20:30 h foo[12]x: odd", "default"), "<30>Mar  1 10:20:30 h foo: foo[12]x: odd\n");
    assert_eq!(relay("<30>Mar  1 10:20:30 h foo[12]x: odd", "local"), "<30>Mar  1 10:20:30 foo: foo[12]x: odd\n");
}

#[test]
fn lines_are_cut_to_len_then_end_with_a_newline() {
    let t = tgt("127.0.0.1 len 80 local3");
    let m = parse(b"<30>Mar  1 10:20:30 host1 app[123]: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n\n");
    let mut out = Vec::new();
    line(&mut out, &t, &Relayed { facility: 3, level: 6, has_pri: true, meta: &m.meta, msg: m.msg }, now());
    assert_eq!(out.len(), 81);
    assert_eq!(&out[..36], b"<30>Mar  1 10:20:30 host1 app[123]: ");
    assert_eq!(&out[36..], [&[b'x'; 44][..], b"\n"].concat());
    // a header longer than `len` is cut too
    let long = format!("<30>Mar  1 10:20:30 {} t: m", "h".repeat(100));
    let m = parse(long.as_bytes());
    let mut out = Vec::new();
    line(&mut out, &t, &Relayed { facility: 3, level: 6, has_pri: true, meta: &m.meta, msg: m.msg }, now());
    assert_eq!(out.len(), 81);
    assert!(out.ends_with(b"hhh\n"));
}
