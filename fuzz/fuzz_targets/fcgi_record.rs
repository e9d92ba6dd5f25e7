//! Arbitrary bytes as what a FastCGI application sends (`rampart_proto::fcgi`): never a
//! panic; no prefix of a record decodes; a record re-encoded decodes to the same
//! record; the pairs of every record and the CGI head of the STDOUT stream are read
//! without a panic, their slices inside the bytes.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rampart_proto::fcgi::cgi::{parse_cgi_head, CgiHead, Reason};
use rampart_proto::fcgi::params::pairs;
use rampart_proto::fcgi::{next_record, push_record, Kind};

fuzz_target!(|data: &[u8]| {
    let mut at = 0;
    let mut stdout = Vec::new();
    while let Ok(Some((rec, n))) = next_record(&data[at..]) {
        assert!(n >= 8 && at + n <= data.len());
        assert_eq!(next_record(&data[at..at + n - 1]), Ok(None));
        if !matches!(rec.kind, Kind::BeginRequest | Kind::EndRequest | Kind::UnknownType | Kind::AbortRequest) {
            let mut out = Vec::new();
            push_record(&mut out, rec.kind, rec.id, rec.content);
            let (again, _) = next_record(&out).expect("re-encoded").expect("whole");
            assert_eq!(again, rec);
        }
        for p in pairs(rec.content) {
            if p.is_err() {
                break;
            }
        }
        if rec.kind == Kind::Stdout {
            stdout.extend_from_slice(rec.content);
        }
        at += n;
    }
    let mut head = CgiHead::default();
    if let Ok(true) = parse_cgi_head(&stdout, 8192, &mut head) {
        assert!(head.len <= stdout.len());
        for h in &head.headers {
            assert!(h.name.end as usize <= head.len && h.value.end as usize <= head.len);
        }
        if let Reason::In(r) = head.reason {
            assert!(r.end as usize <= head.len);
        }
        assert!((100..1000).contains(&head.status));
    }
});
