use super::*;

fn p(s: &str) -> Message<'_> {
    parse(s.as_bytes())
}

fn s(b: &[u8]) -> &str {
    std::str::from_utf8(b).unwrap()
}

#[test]
fn rfc5424_headers_give_every_field() {
    let m = p("<134>1 2024-03-01T10:20:30.123456+01:00 host1 app 4242 ID47 [ex@1 a=\"b\"] hello world");
    assert_eq!(m.pri, Some(134));
    assert_eq!((m.facility(), m.level()), (Some(16), Some(6)));
    assert_eq!(s(m.meta.time), "2024-03-01T10:20:30.123456+01:00");
    assert_eq!((s(m.meta.host), s(m.meta.tag), s(m.meta.pid)), ("host1", "app", "4242"));
    assert_eq!((s(m.meta.msgid), s(m.meta.sd)), ("ID47", "[ex@1 a=\"b\"]"));
    assert_eq!(s(m.msg), "hello world");
    // NILVALUEs are absent fields, but the timestamp keeps its `-`
    let m = p("<13>1 - - - - - - msg");
    assert_eq!(m.meta, Meta { time: b"-", ..Meta::default() });
    assert_eq!(s(m.msg), "msg");
    let m = p("<13>1 2024-03-01T10:20:30Z h t 1 - [a][b c=\"x\\]y\"] m");
    assert_eq!(s(m.meta.time), "2024-03-01T10:20:30Z");
    assert_eq!(s(m.meta.sd), "[a][b c=\"x\\]y\"]");
    assert_eq!(s(m.msg), "m");
    // an empty message after the header
    assert_eq!(s(p("<13>1 - h t 1 - - ").msg), "");
}

#[test]
fn a_bad_rfc5424_header_keeps_the_priority_and_loses_two_bytes() {
    for bad in [
        "<13>1 bad",
        "<13>1 2024-03-01T10:20:30.12x+01:00 h t 1 - - m",
        "<13>1 2024-03-01T10:20:30Z  t 1 - - m",
        "<13>1 - h t 1 - [a]x m",
        "<13>1 - h t 1 - x m",
        "<13>1 - h t 1 - [a m",
        "<13>1 - h t 1 - -",
        "<13>1 - h t",
    ] {
        let m = p(bad);
        assert_eq!(m.pri, Some(13), "{bad}");
        assert_eq!(m.meta, Meta::default(), "{bad}");
        let after = &bad[4..];
        assert_eq!(s(m.msg), &after[..after.len() - 2], "{bad}");
    }
}

#[test]
fn rfc3164_headers_and_the_variants_haproxy_takes() {
    let m = p("<30>Mar  1 10:20:30 host1 app[123]: hello: x");
    assert_eq!((m.facility(), m.level()), (Some(3), Some(6)));
    assert_eq!(s(m.meta.time), "Mar  1 10:20:30");
    assert_eq!((s(m.meta.host), s(m.meta.tag), s(m.meta.pid)), ("host1", "app", "123"));
    assert_eq!(s(m.msg), "hello: x");
    let m = p("<30>Mar  1 10:20:30 host1 app: hello");
    assert_eq!((s(m.meta.tag), s(m.meta.pid), s(m.msg)), ("app", "", "hello"));
    // no tag: the message follows the host
    let m = p("<30>Mar  1 10:20:30 host1 just a message");
    assert_eq!((s(m.meta.host), s(m.meta.tag), s(m.msg)), ("host1", "", "just a message"));
    let m = p("<30>Mar  1 10:20:30 host1 tag:nospace");
    assert_eq!((s(m.meta.tag), s(m.msg)), ("", "tag:nospace"));
    // a `]` not right before the colon: the tag so far, no pid, the message after the host
    let m = p("<30>Mar  1 10:20:30 h foo[12]x: msg");
    assert_eq!((s(m.meta.tag), s(m.meta.pid), s(m.msg)), ("foo", "", "foo[12]x: msg"));
    // the last `[` starts the pid; a `[` first leaves the whole word as the tag
    let m = p("<30>Mar  1 10:20:30 h a[b[c]: m");
    assert_eq!((s(m.meta.tag), s(m.meta.pid)), ("a[b", "c"));
    let m = p("<30>Mar  1 10:20:30 h [12]: m");
    assert_eq!((s(m.meta.tag), s(m.meta.pid)), ("[12]", "12"));
    let m = p("<30>Mar  1 10:20:30 h foo[12: m");
    assert_eq!((s(m.meta.tag), s(m.meta.pid), s(m.msg)), ("foo", "", "m"));
    // the host ends the header
    let m = p("<30>Mar  1 10:20:30 host1 ");
    assert_eq!((s(m.meta.host), s(m.msg)), ("host1", ""));
}

#[test]
fn a_bad_rfc3164_header_keeps_the_priority_and_the_text() {
    for bad in [
        "<30>Foo  1 10:20:30 h t: m",
        "<30>Mar  1 10:20:30x h t: m",
        "<30>Mar  1 10:20:30  h",
        "<30>Mar  1 10:20:30 host",
    ] {
        let m = p(bad);
        assert_eq!((m.pri, m.meta), (Some(30), Meta::default()), "{bad}");
        assert_eq!(s(m.msg), &bad[4..], "{bad}");
    }
    // too short for a date: a priority and a message
    let m = p("<30>short");
    assert_eq!((m.pri, s(m.msg)), (Some(30), "short"));
}

#[test]
fn without_a_priority_the_whole_buffer_is_the_message() {
    for raw in ["hello", "<", "<12", "<1a>x", "", "x<13>1 - - - - - - m"] {
        let m = p(raw);
        assert_eq!((m.pri, m.meta, s(m.msg)), (None, Meta::default(), raw));
    }
    let m = p("<>x");
    assert_eq!((m.pri, s(m.msg)), (Some(0), "x"));
    assert_eq!(p("<999>m").facility(), Some(124));
}

#[test]
fn stream_framing_octet_counting_and_lf() {
    let b = b"<13>one\n<14>two\r\nrest";
    assert_eq!(next_frame(b, 100), Frame::Message { start: 0, end: 7, consumed: 8 });
    assert_eq!(next_frame(&b[8..], 100), Frame::Message { start: 0, end: 7, consumed: 9 });
    assert_eq!(next_frame(b"<13>no lf yet", 100), Frame::Incomplete);
    assert_eq!(next_frame(b"<13>too long for the buffer", 10), Frame::Invalid);
    assert_eq!(next_frame(b"12 <13>1 - - -x", 100), Frame::Message { start: 3, end: 15, consumed: 15 });
    assert_eq!(next_frame(b"12 <13>1 -", 100), Frame::Incomplete);
    assert_eq!(next_frame(b"12", 100), Frame::Incomplete);
    assert_eq!(next_frame(b"", 100), Frame::Incomplete);
    for bad in [&b"0 x"[..], b"x", b"12x <13>", b"99999999999 x", b" 1"] {
        assert_eq!(next_frame(bad, 100), Frame::Invalid, "{:?}", String::from_utf8_lossy(bad));
    }
    assert_eq!(next_frame(b"101 x", 100), Frame::Invalid, "longer than the buffer");
}

#[test]
fn no_input_panics_split_at_every_offset() {
    let samples: [&[u8]; 6] = [
        b"<134>1 2024-03-01T10:20:30.123456+01:00 host1 app 4242 ID47 [ex@1 a=\"b\\]\"] hello",
        b"<30>Mar  1 10:20:30 host1 app[123]: hello",
        b"<13>1 2024-03-01T10:20:30.",
        b"<13>1 2024-03-01T10:20:30.1234",
        b"<30>Mar  1 10:20:30 h a[b]",
        b"17 <13>1 - - - - - - x\n",
    ];
    for sample in samples {
        for i in 0..=sample.len() {
            let m = parse(&sample[..i]);
            assert!(m.msg.len() <= i);
            let _ = next_frame(&sample[..i], 64);
            let _ = parse(&sample[i..]);
        }
    }
}
