use super::*;

/// A response to `q` (id 7) with `answers` (records in wire form) and flags `flags`.
fn response(flags: u16, q: &str, qtype: u16, an: u16, ar: u16, records: &[u8]) -> Vec<u8> {
    let mut out = vec![0, 7];
    out.extend_from_slice(&flags.to_be_bytes());
    out.extend_from_slice(&[0, 1]);
    out.extend_from_slice(&an.to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&ar.to_be_bytes());
    write_name(&mut out, q).unwrap();
    out.extend_from_slice(&qtype.to_be_bytes());
    out.extend_from_slice(&[0, 1]);
    out.extend_from_slice(records);
    out
}

/// A record whose name is a pointer to the question (offset 12).
fn rr(rtype: u16, data: &[u8]) -> Vec<u8> {
    let mut out = vec![0xc0, 12];
    out.extend_from_slice(&rtype.to_be_bytes());
    out.extend_from_slice(&[0, 1, 0, 0, 0, 60]);
    out.extend_from_slice(&(data.len() as u16).to_be_bytes());
    out.extend_from_slice(data);
    out
}

#[test]
fn query_with_and_without_edns() {
    let mut q = Vec::new();
    encode_query(&mut q, 0x1234, "www.Example.com.", TYPE_A, 512).unwrap();
    assert_eq!(q[..12], [0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
    assert_eq!(q[12..], *b"\x03www\x07Example\x03com\x00\x00\x01\x00\x01");
    let mut q = Vec::new();
    encode_query(&mut q, 1, "a", TYPE_SRV, 4096).unwrap();
    assert_eq!(q[11], 1, "one additional record");
    assert_eq!(q[q.len() - 11..], [0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(encode_query(&mut Vec::new(), 1, "a..b", TYPE_A, 512), Err(NameError::BadLabel));
    let long = "x".repeat(64);
    assert_eq!(encode_query(&mut Vec::new(), 1, &long, TYPE_A, 512), Err(NameError::BadLabel));
    let many = vec!["abcdefghi"; 30].join(".");
    assert_eq!(encode_query(&mut Vec::new(), 1, &many, TYPE_A, 512), Err(NameError::TooLong));
}

#[test]
fn a_aaaa_and_cname_answers() {
    let mut recs = rr(TYPE_CNAME, b"\x03web\x00");
    let mut a = b"\x03web\x00".to_vec();
    a.extend_from_slice(&[0, 1, 0, 1, 0, 0, 0, 9, 0, 4, 10, 0, 0, 1]);
    recs.extend_from_slice(&a);
    recs.extend(rr(TYPE_AAAA, &[0; 16]));
    let r = decode_response(&response(0x8180, "Srv.Local", TYPE_A, 3, 0, &recs)).unwrap();
    assert_eq!((r.id, r.rcode, r.truncated, r.qname.as_str(), r.qtype), (7, Rcode::NoError, false, "srv.local", 1));
    assert_eq!(r.answers[0].data, RData::Cname("web".into()));
    assert_eq!(r.answers[1], Record { name: "web".into(), ttl: 9, data: RData::A(Ipv4Addr::new(10, 0, 0, 1)) });
    assert_eq!(r.answers[2].data, RData::Aaaa(Ipv6Addr::UNSPECIFIED));
    assert_eq!(r.answers[2].name, "srv.local");
}

#[test]
fn srv_answers_with_additional_records() {
    let mut srv = vec![0, 1, 0, 5, 0x1f, 0x90];
    srv.extend_from_slice(b"\x02s1\x04test\x00");
    let mut recs = rr(TYPE_SRV, &srv);
    // the additional A record names the target by a pointer into the SRV data
    let target_at = (12 + "_http._tcp.test".len() + 2 + 4 + 12 + 6) as u8;
    recs.extend_from_slice(&[0xc0, target_at, 0, 1, 0, 1, 0, 0, 0, 5, 0, 4, 127, 0, 0, 2]);
    let r = decode_response(&response(0x8580, "_http._tcp.test", TYPE_SRV, 1, 1, &recs)).unwrap();
    assert_eq!(r.answers[0].data, RData::Srv { priority: 1, weight: 5, port: 8080, target: "s1.test".into() });
    assert_eq!(r.additional[0].name, "s1.test");
    assert_eq!(r.additional[0].data, RData::A(Ipv4Addr::new(127, 0, 0, 2)));
}

#[test]
fn rcodes_and_flags() {
    let r = decode_response(&response(0x8383, "x", TYPE_A, 0, 0, &[])).unwrap();
    assert_eq!((r.rcode, r.truncated), (Rcode::NxDomain, true));
    assert_eq!(decode_response(&response(0x8185, "x", TYPE_A, 0, 0, &[])).unwrap().rcode, Rcode::Refused);
    assert_eq!(decode_response(&response(0x8182, "x", TYPE_A, 0, 0, &[])).unwrap().rcode, Rcode::Other(2));
    assert_eq!(message_id(&[1, 2, 3]), Some(0x0102));
    assert_eq!(message_id(&[1]), None);
}

#[test]
fn bad_responses_are_refused() {
    assert_eq!(decode_response(&[0; 11]), Err(DnsError::Truncated));
    assert_eq!(decode_response(&response(0x0100, "x", TYPE_A, 0, 0, &[])), Err(DnsError::Invalid("not a response")));
    // an answer announced but missing, an answer cut short
    assert_eq!(decode_response(&response(0x8180, "x", TYPE_A, 1, 0, &[])), Err(DnsError::Truncated));
    let a = rr(TYPE_A, &[1, 2, 3, 4]);
    assert_eq!(decode_response(&response(0x8180, "x", TYPE_A, 1, 0, &a[..a.len() - 1])), Err(DnsError::Truncated));
    assert_eq!(
        decode_response(&response(0x8180, "x", TYPE_A, 1, 0, &rr(TYPE_A, &[1, 2, 3]))),
        Err(DnsError::Invalid("A length"))
    );
    assert_eq!(decode_response(&response(0x8180, "x", TYPE_A, 400, 200, &[])), Err(DnsError::TooManyRecords));
    // a pointer to itself, and one pointing ahead
    let mut m = response(0x8180, "x", TYPE_A, 1, 0, &[]);
    let at = m.len() as u8;
    m.extend_from_slice(&[0xc0, at]);
    assert_eq!(decode_response(&m), Err(DnsError::Name(NameError::BadPointer)));
    let mut m = response(0x8180, "x", TYPE_A, 1, 0, &[]);
    m.extend_from_slice(&[0xc0, 200]);
    assert_eq!(decode_response(&m), Err(DnsError::Name(NameError::BadPointer)));
    let mut m = response(0x8180, "x", TYPE_A, 1, 0, &[]);
    m.extend_from_slice(&[0x40, 1]);
    assert_eq!(decode_response(&m), Err(DnsError::Name(NameError::BadLabelType)));
    // a CNAME whose name runs past its record data
    assert_eq!(
        decode_response(&response(0x8180, "x", TYPE_A, 1, 0, &rr(TYPE_CNAME, b"\x03web"))),
        Err(DnsError::Truncated)
    );
}

#[test]
fn every_prefix_of_a_response_is_refused_without_panic() {
    let mut srv = vec![0, 1, 0, 5, 0x1f, 0x90];
    srv.extend_from_slice(b"\x02s1\x04test\x00");
    let m = response(0x8180, "_http._tcp.test", TYPE_SRV, 1, 0, &rr(TYPE_SRV, &srv));
    assert!(decode_response(&m).is_ok());
    for cut in 0..m.len() {
        assert!(decode_response(&m[..cut]).is_err(), "prefix of {cut} bytes");
    }
}

#[test]
fn looping_names_are_bounded() {
    // a question whose name points back into itself: abc.abc.abc... until 255 bytes
    let mut m = vec![0, 7, 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0];
    m.extend_from_slice(&[3, b'a', b'b', b'c', 0xc0, 12, 0, 1, 0, 1]);
    assert_eq!(decode_response(&m), Err(DnsError::Name(NameError::TooLong)));
}
