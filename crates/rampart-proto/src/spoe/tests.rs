use super::data::{put_data, put_varint};
use super::frame::{decode_ack, decode_notify, encode_ack, version_number};
use super::*;

fn varint_bytes(v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    put_varint(&mut out, v);
    out
}

#[test]
fn varints_have_spoe_txt_lengths_and_round_trip() {
    assert_eq!(varint_bytes(239), [239]);
    assert_eq!(varint_bytes(240), [0xf0, 0x00]);
    assert_eq!(varint_bytes(2287), [0xff, 0x7f]);
    assert_eq!(varint_bytes(2288), [0xf0, 0x80, 0x00]);
    assert_eq!(varint_bytes(264431).len(), 3);
    assert_eq!(varint_bytes(264432).len(), 4);
    for v in [0, 1, 239, 240, 2287, 2288, 264431, 264432, 33818863, 1 << 40, u64::MAX - 1, u64::MAX] {
        let b = varint_bytes(v);
        let mut r = Reader::new(&b);
        assert_eq!(r.varint(), Ok(v), "{v}");
        assert!(r.is_empty());
        // every prefix is truncated
        for cut in 0..b.len() {
            assert_eq!(Reader::new(&b[..cut]).varint(), Err(Error::Truncated));
        }
    }
    // an endless continuation is refused, not looped on
    let mut long = vec![0xff];
    long.extend([0xff; 20]);
    assert!(matches!(Reader::new(&long).varint(), Err(Error::Invalid(_))));
}

#[test]
fn typed_data_round_trips() {
    let all = [
        Data::Null,
        Data::Bool(true),
        Data::Bool(false),
        Data::Int32(-5),
        Data::Uint32(70000),
        Data::Int64(-1),
        Data::Uint64(u64::MAX),
        Data::Ipv4([10, 0, 0, 1]),
        Data::Ipv6([1; 16]),
        Data::Str(b"hello"),
        Data::Bin(b"\x00\xff"),
    ];
    let mut out = Vec::new();
    for d in &all {
        put_data(&mut out, d);
    }
    let mut r = Reader::new(&out);
    for d in &all {
        assert_eq!(r.data().as_ref(), Ok(d));
    }
    assert!(r.is_empty());
    assert!(matches!(Reader::new(&[0x0a]).data(), Err(Error::Invalid(_))));
}

#[test]
fn haproxy_hello_is_haproxys_bytes() {
    // the frame of `option spop-check`, captured from haproxy 2.6.12, is the same
    // HAPROXY-HELLO with the healthcheck flag
    let hello = HaproxyHello {
        versions: "2.0",
        max_frame_size: MAX_FRAME_SIZE,
        capabilities: "",
        healthcheck: true,
        engine_id: None,
    };
    let mut out = Vec::new();
    hello.encode(&mut out).unwrap();
    let want: &[u8] = b"\x00\x00\x00\x4e\x01\x00\x00\x00\x01\x00\x00\
        \x12supported-versions\x08\x032.0\
        \x0emax-frame-size\x03\xfc\xf0\x06\
        \x0ccapabilities\x08\x00\
        \x0bhealthcheck\x11";
    assert_eq!(out, want);
    let (f, n) = next_frame(&out, MAX_FRAME_SIZE).unwrap().unwrap();
    assert_eq!((f.ty, f.is_fin(), n), (FrameType::HaproxyHello, true, out.len()));
    assert_eq!(HaproxyHello::decode(f.payload).unwrap(), hello);
}

#[test]
fn frames_split_anywhere_are_incomplete() {
    let mut out = Vec::new();
    let mut w = NotifyWriter::new(&mut out, 7, 300);
    w.message("check-client-ip");
    w.arg(b"ip", &Data::Ipv4([127, 0, 0, 1]));
    w.arg(b"", &Data::Str(b"x"));
    w.message("empty");
    w.finish(MAX_FRAME_SIZE).unwrap();
    for cut in 0..out.len() {
        assert_eq!(next_frame(&out[..cut], MAX_FRAME_SIZE), Ok(None), "cut at {cut}");
    }
    let (f, n) = next_frame(&out, MAX_FRAME_SIZE).unwrap().unwrap();
    assert_eq!((f.ty, f.stream_id, f.frame_id, n), (FrameType::Notify, 7, 300, out.len()));
    let msgs = decode_notify(f.payload).unwrap();
    assert_eq!(msgs.len(), 2);
    assert_eq!(msgs[0].0, b"check-client-ip");
    assert_eq!(msgs[0].1, [(&b"ip"[..], Data::Ipv4([127, 0, 0, 1])), (&b""[..], Data::Str(b"x"))]);
    assert!(msgs[1].1.is_empty());
}

#[test]
fn oversized_frames_are_refused_early() {
    let big = [0, 0, 0x40, 0x01, 3];
    assert_eq!(next_frame(&big, MAX_FRAME_SIZE), Err(Error::TooBig));
    let mut out = Vec::new();
    let mut w = NotifyWriter::new(&mut out, 1, 1);
    w.message("m");
    w.arg(b"a", &Data::Bin(&[0; 400]));
    assert_eq!(w.finish(MIN_FRAME_SIZE), Err(Error::TooBig));
    assert_eq!(Error::TooBig.status(), status::TOO_BIG);
}

#[test]
fn ack_actions_round_trip_and_stop_at_unknown_ones() {
    let acts = [
        Action::SetVar { scope: VarScope::Sess, name: b"ip_score", value: Data::Uint32(42) },
        Action::UnsetVar { scope: VarScope::Txn, name: b"old" },
        Action::SetVar { scope: VarScope::Res, name: b"s", value: Data::Str(b"v") },
    ];
    let mut out = Vec::new();
    encode_ack(&mut out, 3, 4, &acts).unwrap();
    let (f, _) = next_frame(&out, MAX_FRAME_SIZE).unwrap().unwrap();
    assert_eq!((f.ty, f.stream_id, f.frame_id), (FrameType::Ack, 3, 4));
    assert_eq!(decode_ack(f.payload).unwrap(), acts);
    // an unknown action type ends the list
    let mut p = f.payload.to_vec();
    let first_len = {
        let mut one = Vec::new();
        encode_ack(&mut one, 3, 4, &acts[..1]).unwrap();
        one.len() - (out.len() - f.payload.len())
    };
    p.insert(first_len, 9);
    p.insert(first_len + 1, 0);
    assert_eq!(decode_ack(&p).unwrap(), acts[..1]);
    // a bad scope or a cut action is an error
    assert!(decode_ack(&[1, 3, 9, 1, b'a', 0]).is_err());
    assert_eq!(decode_ack(&[1, 3, 1, 5, b'a']), Err(Error::Truncated));
}

#[test]
fn agent_hello_is_checked_as_haproxy_does() {
    let mut out = Vec::new();
    AgentHello { version: "2.0", max_frame_size: 1024, capabilities: "pipelining,async" }.encode(&mut out).unwrap();
    let (f, _) = next_frame(&out, MAX_FRAME_SIZE).unwrap().unwrap();
    let h = AgentHello::decode(f.payload, MAX_FRAME_SIZE).unwrap();
    assert_eq!(h.max_frame_size, 1024);
    assert!(h.has("async") && h.has("pipelining") && !h.has("fragmentation"));
    assert_eq!(AgentHello::decode(f.payload, 512), Err(status::BAD_FRAME_SIZE));
    let hello = |v: &str, size: u32| {
        let mut o = Vec::new();
        AgentHello { version: v, max_frame_size: size, capabilities: "" }.encode(&mut o).unwrap();
        o
    };
    let v1 = hello("1.0", 1024);
    assert_eq!(AgentHello::decode(&v1[9..], MAX_FRAME_SIZE), Err(status::BAD_VSN));
    let small = hello("2.0", 10);
    assert_eq!(AgentHello::decode(&small[9..], MAX_FRAME_SIZE), Err(status::BAD_FRAME_SIZE));
    assert_eq!(AgentHello::decode(&[], MAX_FRAME_SIZE), Err(status::NO_VSN));
    assert_eq!(version_number("2.0"), Some(2000));
    assert_eq!(version_number("x"), None);
}

#[test]
fn disconnect_round_trips() {
    let mut out = Vec::new();
    let d = Disconnect { status: status::TIMEOUT, message: "a timeout occurred" };
    d.encode(FrameType::AgentDisconnect, &mut out).unwrap();
    let (f, _) = next_frame(&out, MAX_FRAME_SIZE).unwrap().unwrap();
    assert_eq!(f.ty, FrameType::AgentDisconnect);
    assert_eq!(Disconnect::decode(f.payload).unwrap(), d);
    assert_eq!(status_reason(status::FRAG_NOT_SUPPORTED), "fragmentation not supported");
}

#[test]
fn frame_headers_are_checked() {
    // unknown frame type
    assert!(matches!(next_frame(&[0, 0, 0, 7, 50, 0, 0, 0, 1, 0, 0], MAX_FRAME_SIZE), Err(Error::Invalid(_))));
    // flags cut short
    assert_eq!(next_frame(&[0, 0, 0, 3, 103, 0, 0], MAX_FRAME_SIZE), Err(Error::Truncated));
    // a fragment without FIN is read as such
    let (f, _) = next_frame(&[0, 0, 0, 7, 103, 0, 0, 0, 0, 1, 2], MAX_FRAME_SIZE).unwrap().unwrap();
    assert!(!f.is_fin());
}
