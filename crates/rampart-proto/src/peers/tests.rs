use super::table::*;
use super::*;

#[test]
fn handshake_lines() {
    assert_eq!(hello("B", "A", 42), "HAProxyS 2.1\nB\nA 42 1\n");
    assert_eq!(check_version(b"HAProxyS 2.1"), Ok(1));
    assert_eq!(check_version(b"HAProxyS 2.0"), Ok(0));
    assert_eq!(check_version(b"HAProxyS 2.2"), Err(status::ERR_VERSION));
    assert_eq!(check_version(b"HAProxyS 3.0"), Err(status::ERR_VERSION));
    assert_eq!(check_version(b"HAProxyS 2."), Err(status::ERR_VERSION));
    assert_eq!(check_version(b"GET / HTTP/1.1"), Err(status::ERR_PROTO));
    assert_eq!(peer_name(b"A 123 1"), Ok(&b"A"[..]));
    assert_eq!(peer_name(b"A"), Err(status::ERR_PROTO));
    assert_eq!(parse_status(b"200"), 200);
    assert_eq!(parse_status(b"x"), 0);
    assert_eq!(take_line(b"200\r\nrest"), Ok(Some((&b"200"[..], 5))));
    assert_eq!(take_line(b"20"), Ok(None));
    assert_eq!(take_line(&[b'a'; 2000]), Err(MsgError::TooBig));
}

fn shape() -> Shape {
    let mut s = Shape {
        key_type: key_type::STRING,
        key_len: 33,
        // server_id, gpc0, conn_rate, conn_cur, bytes_in_cnt, gpc (array)
        data: 1 | 1 << 2 | 1 << 5 | 1 << 6 | 1 << 13 | 1 << 23,
        expire: Some(30_000),
        params: [Param::default(); DATA_TYPES],
    };
    s.params[5].period = 50_000;
    s.params[23].nbelem = 2;
    s
}

#[test]
fn a_definition_round_trips() {
    let mut out = Vec::new();
    encode_define(3, b"stkt", &shape(), &mut out);
    let Ok(Some((Message::Define(body), n))) = next_message(&out, MAX_BODY) else { panic!("{out:?}") };
    assert_eq!(n, out.len());
    let d = decode_define(body).unwrap();
    assert_eq!((d.id, d.name), (3, &b"stkt"[..]));
    assert_eq!(d.shape, Ok(shape()));
    // a 2.0 definition (no expiry, no parameters) with an array is unusable
    let mut body = vec![1, 1, b't', 6, 32];
    varint::encode(1 << 23, &mut body);
    assert_eq!(decode_define(&body).unwrap().shape, Err(ShapeError::Unusable));
    assert_eq!(decode_define(&[1, 5, b'a']), Err(MsgError::Malformed));
    assert_eq!(decode_define(&[1, 1, b'a']), Err(MsgError::Malformed), "nothing after the name");
    assert_eq!(decode_define(&[1, 1, b'a', 6]).unwrap().shape, Err(ShapeError::Malformed));
}

#[test]
fn an_update_round_trips() {
    let values = [
        Value::Int(u64::MAX),
        Value::Int(5),
        Value::Freq { elapsed: 1200, curr: 3, prev: 7 },
        Value::Int(1),
        Value::Int(5_000_000_000),
        Value::Int(1),
        Value::Int(2),
    ];
    let kind = KeyKind::String { size: 33 };
    let mut out = Vec::new();
    encode_update(Some(7), Some(29_000), kind, b"/c1_client", &values, &mut out);
    encode_update(None, None, kind, b"k", &values, &mut out);
    let Ok(Some((Message::Update { with_id, timed, body }, n))) = next_message(&out, MAX_BODY) else { panic!() };
    assert!(with_id && timed);
    let u = decode_update(body, with_id, timed, kind, &shape()).unwrap();
    assert_eq!((u.id, u.expire, u.key), (Some(7), Some(29_000), &b"/c1_client"[..]));
    let got: Vec<Value<'_>> = u.values.iter().map(|v| v.2).collect();
    assert_eq!(got, values);
    assert_eq!(u.values[6].0 as usize, 23);
    assert_eq!(u.values[6].1, 1);
    let Ok(Some((Message::Update { with_id, timed, body }, m))) = next_message(&out[n..], MAX_BODY) else { panic!() };
    assert_eq!(n + m, out.len());
    let u = decode_update(body, with_id, timed, kind, &shape()).unwrap();
    assert_eq!((u.id, u.expire, u.key), (None, None, &b"k"[..]));
    // a key longer than the table's keeps its first size-1 bytes
    let u = decode_update(body, false, false, KeyKind::String { size: 1 }, &shape()).unwrap();
    assert_eq!(u.key, b"");
    // cut anywhere, the body is malformed
    for cut in 0..body.len() {
        assert!(decode_update(&body[..cut], false, false, kind, &shape()).is_err(), "{cut}");
    }
}

#[test]
fn every_split_of_a_stream_is_incomplete_until_whole() {
    let mut out = Vec::new();
    encode_control(Control::ResyncRequest, &mut out);
    encode_define(1, b"t", &shape(), &mut out);
    encode_switch(1, &mut out);
    encode_ack(1, 0xdead_beef, &mut out);
    encode_control(Control::Heartbeat, &mut out);
    let mut whole = Vec::new();
    let mut at = 0;
    while let Some((m, n)) = next_message(&out[at..], MAX_BODY).unwrap() {
        for cut in 0..n {
            assert_eq!(next_message(&out[at..at + cut], MAX_BODY), Ok(None));
        }
        whole.push(format!("{m:?}"));
        at += n;
    }
    assert_eq!(at, out.len());
    assert_eq!(whole.len(), 5);
    assert!(whole[3].contains("3735928559"), "{}", whole[3]);
}

#[test]
fn bad_streams() {
    assert_eq!(next_message(&[255, 0], MAX_BODY), Err(MsgError::Malformed));
    assert_eq!(next_message(&[10, 0x80, 0xf0, 0xff, 0xff, 0xff, 0xff, 0x7f], MAX_BODY), Err(MsgError::Malformed));
    let mut big = vec![10, 0x80];
    varint::encode(MAX_BODY as u64 + 1, &mut big);
    assert_eq!(next_message(&big, MAX_BODY), Err(MsgError::TooBig));
    assert_eq!(next_message(&[10, 0x84, 2, 1, 0], MAX_BODY), Err(MsgError::Malformed), "ack without its id");
    assert_eq!(next_message(&[0, 9], MAX_BODY), Ok(Some((Message::Ignored, 2))));
    assert_eq!(next_message(&[1, 1], MAX_BODY), Ok(Some((Message::Error(1), 2))));
}

#[test]
fn arbitrary_bytes_never_panic() {
    // a definition first, so that updates are read against a shape
    let mut prefix = Vec::new();
    encode_define(1, b"t", &shape(), &mut prefix);
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..20_000 {
        let mut data = prefix.clone();
        let len = (x % 96) as usize;
        for _ in 0..len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            data.push(if x.is_multiple_of(5) { 10 } else { x as u8 });
        }
        let mut at = 0;
        while let Ok(Some((m, n))) = next_message(&data[at..], MAX_BODY) {
            at += n;
            if let Message::Update { with_id, timed, body } = m {
                for kind in [KeyKind::String { size: 33 }, KeyKind::Int, KeyKind::Fixed(16)] {
                    let _ = decode_update(body, with_id, timed, kind, &shape());
                }
            } else if let Message::Define(body) = m {
                let _ = decode_define(body);
            }
        }
        assert!(at <= data.len());
    }
}
