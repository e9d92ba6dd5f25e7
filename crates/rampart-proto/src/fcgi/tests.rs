use super::cgi::{parse_cgi_head, CgiError, CgiHead, Reason};
use super::params::{pairs, push_cgi_var, push_pair};
use super::*;

#[test]
fn a_request_encodes_as_the_specification_shows() {
    let mut out = Vec::new();
    push_begin_request(&mut out, 1, true);
    assert_eq!(out, [1, 1, 0, 1, 0, 8, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0]);
    out.clear();
    push_record(&mut out, Kind::Stdin, 258, b"abc");
    assert_eq!(out, [1, 5, 1, 2, 0, 3, 5, 0, b'a', b'b', b'c', 0, 0, 0, 0, 0]);
    out.clear();
    push_stream_end(&mut out, Kind::Params, 1);
    push_abort_request(&mut out, 1);
    assert_eq!(out, [1, 4, 0, 1, 0, 0, 0, 0, 1, 2, 0, 1, 0, 0, 0, 0]);
}

#[test]
fn records_decode_whole_or_not_at_all() {
    let mut out = Vec::new();
    push_record(&mut out, Kind::Stdout, 1, b"Status: 200\r\n\r\nhello");
    EndRequest { app_status: 7, protocol_status: REQUEST_COMPLETE }.encode(1, &mut out);
    let (rec, n) = next_record(&out).unwrap().unwrap();
    assert_eq!((rec.kind, rec.id, rec.content), (Kind::Stdout, 1, &b"Status: 200\r\n\r\nhello"[..]));
    assert_eq!(n % 8, 0);
    for cut in 0..n {
        assert_eq!(next_record(&out[..cut]), Ok(None), "cut at {cut}");
    }
    let (rec, m) = next_record(&out[n..]).unwrap().unwrap();
    assert_eq!(rec.kind, Kind::EndRequest);
    assert_eq!(EndRequest::decode(rec.content), Ok(EndRequest { app_status: 7, protocol_status: 0 }));
    assert_eq!(n + m, out.len());
}

#[test]
fn bad_records_are_errors() {
    assert_eq!(next_record(&[2, 6, 0, 1, 0, 0, 0, 0]), Err(FcgiError::Version(2)));
    assert_eq!(next_record(&[1, 3, 0, 1, 0, 1, 0, 0, 9]), Err(FcgiError::BadLength(Kind::EndRequest)));
    let (rec, _) = next_record(&[1, 42, 0, 0, 0, 0, 0, 0]).unwrap().unwrap();
    assert_eq!(rec.kind, Kind::Other(42));
}

#[test]
fn long_streams_are_split_in_records() {
    let data = vec![b'x'; MAX_CONTENT + 10];
    let mut out = Vec::new();
    push_stream(&mut out, Kind::Stdin, 1, &data);
    let (a, n) = next_record(&out).unwrap().unwrap();
    let (b, _) = next_record(&out[n..]).unwrap().unwrap();
    assert_eq!((a.content.len(), b.content.len()), (MAX_CONTENT, 10));
}

#[test]
fn pairs_take_one_or_four_byte_lengths() {
    let long = vec![b'v'; 200];
    let mut out = Vec::new();
    push_pair(&mut out, b"SHORT", b"1");
    push_pair(&mut out, b"LONG", &long);
    assert_eq!(&out[..2], [5, 1]);
    assert_eq!(&out[8..14], [4, 0x80, 0, 0, 200, b'L']);
    let got: Vec<_> = pairs(&out).collect::<Result<_, _>>().unwrap();
    assert_eq!(got, [(&b"SHORT"[..], &b"1"[..]), (&b"LONG"[..], &long[..])]);
    assert!(pairs(&out[..out.len() - 1]).any(|p| p.is_err()));
}

#[test]
fn cgi_variable_names_are_upper_case_with_underscores() {
    let mut out = Vec::new();
    push_cgi_var(&mut out, b"HTTP_", b"x-forwarded-for", b"1.2.3.4");
    let got: Vec<_> = pairs(&out).collect::<Result<_, _>>().unwrap();
    assert_eq!(got, [(&b"HTTP_X_FORWARDED_FOR"[..], &b"1.2.3.4"[..])]);
}

#[test]
fn get_values_asks_with_empty_values() {
    let mut out = Vec::new();
    push_get_values(&mut out, &[b"FCGI_MAX_REQS", b"FCGI_MPXS_CONNS"]);
    let (rec, _) = next_record(&out).unwrap().unwrap();
    assert_eq!((rec.kind, rec.id), (Kind::GetValues, 0));
    let got: Vec<_> = pairs(rec.content).collect::<Result<_, _>>().unwrap();
    assert_eq!(got, [(&b"FCGI_MAX_REQS"[..], &b""[..]), (&b"FCGI_MPXS_CONNS"[..], &b""[..])]);
}

fn head_of(text: &[u8]) -> Result<CgiHead, CgiError> {
    let mut h = CgiHead::default();
    parse_cgi_head(text, 16384, &mut h).map(|done| {
        assert!(done);
        h
    })
}

#[test]
fn the_cgi_head_gives_the_status() {
    let text = b"X-Powered-By: PHP\r\nStatus: 404 Not Found\r\nContent-type: text/html\r\n\r\nbody";
    let h = head_of(text).unwrap();
    assert_eq!(h.status, 404);
    let Reason::In(r) = h.reason else { panic!("{:?}", h.reason) };
    assert_eq!(r.get(text), b"Not Found");
    assert_eq!(h.len, text.len() - 4);
    let kept: Vec<_> = h.headers.iter().filter(|x| !x.drop).map(|x| x.name.get(text)).collect();
    assert_eq!(kept, [&b"X-Powered-By"[..], b"Content-type"]);

    let h = head_of(b"Location: /next\r\n\r\n").unwrap();
    assert_eq!((h.status, h.reason), (302, Reason::Default));
    let h = head_of(b"Content-Length: 5\r\n\r\nhello").unwrap();
    assert_eq!((h.status, h.length), (200, Some(5)));
    let h = head_of(b"Content-Type: text/plain\n\n").unwrap();
    assert_eq!(h.status, 200);
}

#[test]
fn bad_cgi_heads_are_errors() {
    assert_eq!(head_of(b"Status: abc\r\n\r\n"), Err(CgiError::BadStatus));
    assert_eq!(head_of(b"Content-Length: 1x\r\n\r\n"), Err(CgiError::BadLength));
    assert_eq!(head_of(b"Transfer-Encoding: chunked\r\n\r\n"), Err(CgiError::TransferEncoding));
    assert_eq!(head_of(b"Bad Name: 1\r\n\r\n"), Err(CgiError::Invalid));
    let mut h = CgiHead::default();
    let text = b"Content-Type: text/html\r\nX: 1\r\n\r\n";
    for cut in 0..text.len() - 1 {
        assert_eq!(parse_cgi_head(&text[..cut], 1024, &mut h), Ok(false), "cut at {cut}");
    }
    assert_eq!(parse_cgi_head(b"X: 1\r\nY: 2", 8, &mut h), Err(CgiError::TooLarge));
}
