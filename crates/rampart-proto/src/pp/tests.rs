//! Codec tests: known headers, every truncation, HAProxy's limits, round trips.

use std::net::SocketAddr;

use super::*;

fn sa(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn done(buf: &[u8]) -> (Header, usize) {
    match decode(buf) {
        Decoded::Done(h, n) => (h, n),
        other => panic!("{:?}: {other:?}", String::from_utf8_lossy(buf)),
    }
}

fn invalid(buf: &[u8]) -> PpError {
    match decode(buf) {
        Decoded::Invalid(e) => e,
        other => panic!("{:?}: {other:?}", String::from_utf8_lossy(buf)),
    }
}

/// Every strict prefix of a valid header is Incomplete, the whole is Done with its
/// length, and bytes after it are not taken.
fn assert_prefixes(whole: &[u8]) {
    for cut in 0..whole.len() {
        assert_eq!(decode(&whole[..cut]), Decoded::Incomplete, "cut at {cut} of {:?}", String::from_utf8_lossy(whole));
    }
    let mut more = whole.to_vec();
    more.extend_from_slice(b"GET / HTTP/1.1\r\n\r\n");
    assert_eq!(done(&more).1, whole.len());
}

// === v1 ===

#[test]
fn v1_tcp4() {
    let line = b"PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\n";
    let (h, n) = done(line);
    assert_eq!(n, line.len());
    assert_eq!(h.version, Version::V1);
    assert_eq!(h.command, Command::Proxy);
    assert_eq!(h.tcp_addrs(), Some((sa("192.0.2.1:56324"), sa("198.51.100.2:443"))));
    assert!(h.tlvs.is_empty());
    assert_prefixes(line);
}

#[test]
fn v1_tcp6() {
    let line = b"PROXY TCP6 2001:db8::1 ::ffff:10.0.0.1 65535 0\r\n";
    let (h, _) = done(line);
    assert_eq!(h.tcp_addrs(), Some((sa("[2001:db8::1]:65535"), sa("[::ffff:10.0.0.1]:0"))));
    assert_prefixes(line);
}

#[test]
fn v1_unknown_with_or_without_addresses() {
    for line in [&b"PROXY UNKNOWN\r\n"[..], b"PROXY UNKNOWN ffff:f...f:ffff ffff:f...f:ffff 65535 65535\r\n"] {
        let (h, n) = done(line);
        assert_eq!(n, line.len());
        assert_eq!(h.addrs, Addresses::Unspec);
        assert_eq!(h.tcp_addrs(), None);
        assert_prefixes(line);
    }
}

#[test]
fn v1_longest_line_is_accepted_and_one_more_byte_is_not() {
    // The spec's worst case: TCP6 with two full-length addresses and ports.
    let a = "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff";
    let line = format!("PROXY TCP6 {a} {a} 65535 65535\r\n");
    assert_eq!(line.len(), V1_MAX_LEN - 3);
    assert!(matches!(decode(line.as_bytes()), Decoded::Done(_, 104)));
    let line = format!("PROXY UNKNOWN {}\r\n", "x".repeat(V1_MAX_LEN - 16));
    assert_eq!(line.len(), V1_MAX_LEN);
    assert!(matches!(decode(line.as_bytes()), Decoded::Done(_, V1_MAX_LEN)));
    let line = format!("PROXY UNKNOWN {}\r\n", "x".repeat(V1_MAX_LEN - 15));
    assert_eq!(invalid(line.as_bytes()), PpError::BadHeader("v1 line longer than 107 bytes"));
    // Without a line end at all, 107 bytes are enough to refuse.
    assert_eq!(decode(&line.as_bytes()[..V1_MAX_LEN - 1]), Decoded::Incomplete);
    assert!(matches!(decode(&line.as_bytes()[..V1_MAX_LEN]), Decoded::Invalid(_)));
}

#[test]
fn v1_errors() {
    let bad_header: &[&[u8]] = &[
        b"PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n",
        b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n",
        b"PROXY TCP4 1.2.3.4  5.6.7.8 1 2\r\n",
        b"PROXY TCP4 1.2.3 5.6.7.8 1 2\r\n",
        b"PROXY TCP4 1.2.3.256 5.6.7.8 1 2\r\n",
        b"PROXY TCP4 ::1 ::1 1 2\r\n",
        b"PROXY TCP6 1.2.3.4 5.6.7.8 1 2\r\n",
        b"PROXY TCP4 1.2.3.4 5.6.7.8 65536 2\r\n",
        b"PROXY TCP4 1.2.3.4 5.6.7.8 1 -2\r\n",
        b"PROXY TCP4 1.2.3.4 5.6.7.8 1 \r\n",
        b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n",
        b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2 \r\n",
        b"PROXY TCP4\r\n",
        b"PROXY TCP4 1.2.3.4 5.6.7.8 1\r2\r\n",
    ];
    for line in bad_header {
        assert!(matches!(invalid(line), PpError::BadHeader(_)), "{:?}", String::from_utf8_lossy(line));
    }
    for line in [&b"PROXY TCP5 1.2.3.4 5.6.7.8 1 2\r\n"[..], b"PROXY \r\n", b"PROXY tcp4 1.2.3.4 5.6.7.8 1 2\r\n"] {
        assert_eq!(invalid(line), PpError::BadProto, "{:?}", String::from_utf8_lossy(line));
    }
    assert_eq!(invalid(b"GET / HTTP/1.1\r\n"), PpError::NotHeader);
    assert_eq!(invalid(b"PROXy"), PpError::NotHeader);
    assert_eq!(invalid(b"X"), PpError::NotHeader);
}

#[test]
fn v1_refuses_early_when_the_protocol_word_is_wrong() {
    assert_eq!(decode(b"PROXY TC"), Decoded::Incomplete);
    assert_eq!(invalid(b"PROXY TCX"), PpError::BadProto);
    assert_eq!(invalid(b"PROXY TCP4X"), PpError::BadProto);
    assert_eq!(decode(b"PROXY TCP4 1.2"), Decoded::Incomplete);
    assert!(matches!(invalid(b"PROXY TCP4 1.2\rx"), PpError::BadHeader(_)));
}

#[test]
fn v1_leading_zero_ports_are_accepted_as_haproxy_does() {
    let (h, _) = done(b"PROXY TCP4 1.2.3.4 5.6.7.8 00080 08\r\n");
    assert_eq!(h.tcp_addrs(), Some((sa("1.2.3.4:80"), sa("5.6.7.8:8"))));
}

// === v2 ===

fn v2(ver_cmd: u8, fam: u8, body: &[u8]) -> Vec<u8> {
    let mut v = V2_SIGNATURE.to_vec();
    v.push(ver_cmd);
    v.push(fam);
    v.extend_from_slice(&u16::try_from(body.len()).unwrap().to_be_bytes());
    v.extend_from_slice(body);
    v
}

const INET4: [u8; 12] = [192, 0, 2, 1, 198, 51, 100, 2, 0xDC, 0x04, 0x01, 0xBB];

#[test]
fn v2_proxy_tcp4() {
    let hdr = v2(0x21, 0x11, &INET4);
    let (h, n) = done(&hdr);
    assert_eq!(n, 28);
    assert_eq!(h.version, Version::V2);
    assert_eq!(h.tcp_addrs(), Some((sa("192.0.2.1:56324"), sa("198.51.100.2:443"))));
    assert_prefixes(&hdr);
}

#[test]
fn v2_proxy_tcp6_and_udp() {
    let mut body = [0u8; 36];
    body[15] = 1;
    body[16] = 0x20;
    body[17] = 0x01;
    body[32..36].copy_from_slice(&[0, 80, 1, 0]);
    let (h, _) = done(&v2(0x21, 0x21, &body));
    assert_eq!(h.tcp_addrs(), Some((sa("[::1]:80"), sa("[2001::]:256"))));
    let (h, _) = done(&v2(0x21, 0x22, &body));
    assert!(matches!(h.addrs, Addresses::Inet { dgram: true, .. }));
    assert_eq!(h.tcp_addrs(), None, "UDP addresses are not used");
    assert_prefixes(&v2(0x21, 0x21, &body));
}

#[test]
fn v2_local_keeps_the_real_addresses() {
    let (h, n) = done(&v2(0x20, 0x00, &[]));
    assert_eq!((h.command, n, h.tcp_addrs()), (Command::Local, 16, None));
    let (h, _) = done(&v2(0x20, 0x11, &INET4));
    assert_eq!(h.command, Command::Local);
    assert_eq!(h.tcp_addrs(), None);
    assert!(h.tlvs.is_empty(), "the address block is skipped, not read as TLVs");
}

#[test]
fn v2_unix() {
    let mut body = vec![0u8; 216];
    body[..5].copy_from_slice(b"/a.so");
    body[108..113].copy_from_slice(b"/b.so");
    let (h, n) = done(&v2(0x21, 0x31, &body));
    assert_eq!(n, 232);
    let Addresses::Unix { src, dst, dgram: false } = &h.addrs else { panic!("{:?}", h.addrs) };
    assert_eq!((&src[..5], &dst[..5]), (&b"/a.so"[..], &b"/b.so"[..]));
    assert_eq!(h.tcp_addrs(), None);
}

#[test]
fn v2_errors() {
    let not_hdr = [v2(0x11, 0x11, &INET4), v2(0x31, 0x11, &INET4)];
    for h in &not_hdr {
        assert_eq!(invalid(h), PpError::NotHeader);
    }
    // The version nibble is refused as soon as byte 12 arrives.
    assert_eq!(invalid(&not_hdr[0][..13]), PpError::NotHeader);
    let bad = [
        v2(0x22, 0x11, &INET4),                                   // command 2
        v2(0x21, 0x11, &INET4[..11]),                             // short INET block
        v2(0x21, 0x21, &[0; 35]),                                 // short INET6 block
        v2(0x21, 0x31, &[0; 215]),                                // short UNIX block
        v2(0x21, 0x41, &[0; 12]),                                 // unknown family
        v2(0x21, 0x13, &INET4),                                   // unknown transport
        v2(0x21, 0x10, &INET4),                                   // INET with UNSPEC transport
        v2(0x21, 0x11, &[&INET4[..], &[1, 0]].concat()),          // TLV head cut
        v2(0x21, 0x11, &[&INET4[..], &[1, 0, 2, b'h']].concat()), // TLV value cut
    ];
    for h in &bad {
        assert!(matches!(invalid(h), PpError::BadHeader(_)), "{h:x?}");
    }
    let mut huge = v2(0x21, 0x11, &INET4);
    huge[14..16].copy_from_slice(&u16::try_from(V2_MAX_LEN - 15).unwrap().to_be_bytes());
    assert_eq!(invalid(&huge[..16]), PpError::BadHeader("v2 header larger than a buffer"));
}

fn with_tlvs(tlvs: &[(u8, &[u8])], crc: bool) -> Vec<u8> {
    let mut out = Vec::new();
    encode_v2(&mut out, Some((sa("10.0.0.1:1000"), sa("10.0.0.2:80"))), tlvs, crc);
    out
}

#[test]
fn v2_tlvs_are_kept_and_found() {
    let ssl = [&[0x07, 0, 0, 0, 0][..], &[0x21, 0, 7], b"TLSv1.3", &[0x22, 0, 3], b"bob"].concat();
    let aws = [&[tlv::AWS_VPCE_ID][..], b"vpce-08d2bf15fac5001c9"].concat();
    let hdr = with_tlvs(
        &[
            (tlv::ALPN, b"h2"),
            (tlv::AUTHORITY, b"example.com"),
            (tlv::UNIQUE_ID, b"abc-123"),
            (tlv::NOOP, b""),
            (tlv::SSL, &ssl),
            (tlv::NETNS, b"blue"),
            (tlv::AWS, &aws),
            (0xE0, b"custom"),
        ],
        true,
    );
    let (h, n) = done(&hdr);
    assert_eq!(n, hdr.len());
    assert_eq!(h.tlvs[0].kind, tlv::CRC32C);
    assert_eq!(h.alpn(), Some(&b"h2"[..]));
    assert_eq!(h.authority(), Some(&b"example.com"[..]));
    assert_eq!(h.unique_id(), Some(&b"abc-123"[..]));
    assert_eq!(h.netns(), Some(&b"blue"[..]));
    assert_eq!(h.aws_vpce_id(), Some(&b"vpce-08d2bf15fac5001c9"[..]));
    assert_eq!(h.tlv(0xE0), Some(&b"custom"[..]));
    assert_eq!(h.tlv(tlv::NOOP), Some(&b""[..]));
    assert_eq!(h.tlv(0xE1), None);
    let s = h.ssl().unwrap();
    assert_eq!((s.client, s.verify), (0x07, 0));
    assert_eq!(s.sub(tlv::SSL_VERSION), Some(&b"TLSv1.3"[..]));
    assert_eq!(s.sub(tlv::SSL_CN), Some(&b"bob"[..]));
    assert_eq!(s.sub(tlv::SSL_CIPHER), None);
    assert_prefixes(&hdr);
}

#[test]
fn v2_malformed_ssl_tlv_is_accepted_but_not_split() {
    let (h, _) = done(&with_tlvs(&[(tlv::SSL, &[1, 0, 0])], false));
    assert_eq!(h.ssl(), None);
    let (h, _) = done(&with_tlvs(&[(tlv::SSL, &[1, 0, 0, 0, 0, 0x21, 0, 9, b'x'])], false));
    assert_eq!(h.ssl(), None);
}

#[test]
fn v2_crc32c_is_checked() {
    let hdr = with_tlvs(&[(tlv::AUTHORITY, b"a.example")], true);
    assert!(matches!(decode(&hdr), Decoded::Done(..)));
    // Flipping any byte after the fixed part breaks the CRC (or the structure), but
    // for the CRC TLV's own type byte (28), which makes it an unchecked unknown TLV.
    for i in (16..hdr.len()).filter(|&i| i != 28) {
        let mut bad = hdr.clone();
        bad[i] ^= 0x40;
        assert!(matches!(decode(&bad), Decoded::Invalid(PpError::BadHeader(_))), "byte {i}");
    }
    let short = with_tlvs(&[(tlv::CRC32C, &[0, 0, 0])], false);
    assert_eq!(invalid(&short), PpError::BadHeader("v2 CRC32C TLV not 4 bytes"));
    // Computed independently of the encoder: CRC32c over the header with a zero CRC.
    let mut h = v2(0x20, 0x00, &[tlv::CRC32C, 0, 4, 0, 0, 0, 0]);
    let crc = crc32c::crc32c(&h);
    h[19..23].copy_from_slice(&crc.to_be_bytes());
    assert!(matches!(decode(&h), Decoded::Done(_, 23)));
}

#[test]
fn v2_authority_and_unique_id_limits() {
    let a = vec![b'a'; AUTHORITY_MAX];
    assert!(matches!(decode(&with_tlvs(&[(tlv::AUTHORITY, &a)], false)), Decoded::Done(..)));
    let a = vec![b'a'; AUTHORITY_MAX + 1];
    assert_eq!(invalid(&with_tlvs(&[(tlv::AUTHORITY, &a)], false)), PpError::BadHeader("v2 AUTHORITY too long"));
    let u = vec![b'u'; UNIQUE_ID_MAX];
    assert!(matches!(decode(&with_tlvs(&[(tlv::UNIQUE_ID, &u)], false)), Decoded::Done(..)));
    let u = vec![b'u'; UNIQUE_ID_MAX + 1];
    assert_eq!(invalid(&with_tlvs(&[(tlv::UNIQUE_ID, &u)], false)), PpError::BadHeader("v2 UNIQUE_ID too long"));
}

// === encode ===

#[test]
fn encode_v1_forms() {
    let mut out = Vec::new();
    encode_v1(&mut out, Some((sa("1.2.3.4:5"), sa("6.7.8.9:10"))));
    assert_eq!(out, b"PROXY TCP4 1.2.3.4 6.7.8.9 5 10\r\n");
    out.clear();
    encode_v1(&mut out, Some((sa("1.2.3.4:5"), sa("[2001:db8::2]:10"))));
    assert_eq!(out, b"PROXY TCP6 ::ffff:1.2.3.4 2001:db8::2 5 10\r\n");
    out.clear();
    encode_v1(&mut out, None);
    assert_eq!(out, b"PROXY UNKNOWN\r\n");
}

#[test]
fn encode_v2_bytes() {
    let mut out = Vec::new();
    encode_v2(&mut out, Some((sa("192.0.2.1:56324"), sa("198.51.100.2:443"))), &[], false);
    assert_eq!(out, v2(0x21, 0x11, &INET4));
    out.clear();
    encode_v2(&mut out, None, &[], false);
    assert_eq!(out, v2(0x20, 0x00, &[]));
    out.clear();
    encode_v2(&mut out, Some((sa("[::1]:1"), sa("127.0.0.1:2"))), &[(tlv::UNIQUE_ID, b"x")], false);
    assert_eq!(&out[12..16], &[0x21, 0x21, 0, 40]);
    assert_eq!(&out[16 + 16..16 + 32], &"::ffff:127.0.0.1".parse::<std::net::Ipv6Addr>().unwrap().octets());
    assert_eq!(&out[52..], &[tlv::UNIQUE_ID, 0, 1, b'x']);
}

#[test]
fn decode_of_encode_round_trips() {
    let pairs = [(sa("1.2.3.4:5"), sa("6.7.8.9:10")), (sa("[2001:db8::1]:65535"), sa("[::]:0"))];
    for (src, dst) in pairs {
        let mut out = Vec::new();
        encode_v1(&mut out, Some((src, dst)));
        assert_eq!(done(&out).0.tcp_addrs(), Some((src, dst)));
        for crc in [false, true] {
            let mut out = Vec::new();
            encode_v2(&mut out, Some((src, dst)), &[(tlv::AUTHORITY, b"h"), (0xF0, &[0; 300])], crc);
            let (h, n) = done(&out);
            assert_eq!((h.tcp_addrs(), n), (Some((src, dst)), out.len()));
            let mut again = Vec::new();
            encode(&mut again, &h);
            assert_eq!(again, out, "a decoded header re-encodes to the same bytes");
        }
    }
}

#[test]
fn display_matches_haproxy_messages() {
    assert_eq!(PpError::BadHeader("x").to_string(), "Received an invalid PROXY protocol header");
    assert_eq!(PpError::NotHeader.to_string(), "Received something which does not look like a PROXY protocol header");
}
