//! `option get-values`: on a new connection, before its first request, a GET_VALUES
//! record asks the application for `FCGI_MAX_REQS` and `FCGI_MPXS_CONNS` (not
//! `FCGI_MAX_CONNS`, as HAProxy 2.6: a value it could not act on), and the request
//! waits for the GET_VALUES_RESULT (or an UNKNOWN_TYPE from an application that does
//! not know the record). Anything else as the first record, a malformed one, or a close
//! fails the connection. HAProxy counterpart: `fcgi_conn_send_get_values()` and
//! `fcgi_conn_handle_values_result()` in src/mux_fcgi.c (states `FCGI_CS_INIT` and
//! `FCGI_CS_SETTINGS`).
//!
//! COMPAT (partial): what the application answers is read and checked, but rampart
//! does not multiplex requests on a FastCGI connection yet, so the answer changes
//! nothing: one request per connection at a time whatever it says.

use std::time::Duration;

use rampart_proto::fcgi::params::pairs;
use rampart_proto::fcgi::{self, next_record, Kind};

use crate::conn_pool::BackSock;
use crate::io::{read_some, write_all, IoError};

/// What an application said of its limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Values {
    /// `FCGI_MPXS_CONNS` is `1`.
    pub mpxs_conns: bool,
    /// `FCGI_MAX_REQS` (1 when the application does not multiplex, as HAProxy).
    pub max_reqs: u32,
}

/// Asks the application on `sock` for its values, `max_reqs` the configured limit
/// (`option max-reqs`); bytes read after the answer are left in `raw`.
pub async fn ask(
    sock: &BackSock,
    raw: &mut Vec<u8>,
    max_reqs: u32,
    timeout: Option<Duration>,
) -> Result<Values, IoError> {
    let mut out = Vec::with_capacity(48);
    fcgi::push_get_values(&mut out, &[b"FCGI_MAX_REQS", b"FCGI_MPXS_CONNS"]);
    write_all(sock, &out, timeout).await?;
    loop {
        if let Some(answer) = answer(raw, max_reqs)? {
            return Ok(answer);
        }
        if read_some(sock, raw, timeout).await? == 0 {
            return Err(IoError::Closed);
        }
    }
}

/// The answer at the start of `raw` once whole (then drained from `raw`); `Err`: the
/// first record is not one, or is malformed.
fn answer(raw: &mut Vec<u8>, max_reqs: u32) -> Result<Option<Values>, IoError> {
    let (values, n) = match next_record(raw) {
        Ok(None) => return Ok(None),
        Err(_) => return Err(IoError::Closed),
        Ok(Some((rec, _))) if rec.id != fcgi::NULL_REQUEST_ID => return Err(IoError::Closed),
        Ok(Some((rec, n))) => match rec.kind {
            Kind::GetValuesResult => (decode(rec.content, max_reqs)?, n),
            Kind::UnknownType => (Values { mpxs_conns: false, max_reqs: 1 }, n),
            _ => return Err(IoError::Closed),
        },
    };
    raw.drain(..n);
    Ok(Some(values))
}

/// The values of a GET_VALUES_RESULT's content; names are compared without case and
/// other names ignored, as HAProxy does.
fn decode(content: &[u8], max_reqs: u32) -> Result<Values, IoError> {
    let mut v = Values { mpxs_conns: false, max_reqs };
    for pair in pairs(content) {
        let (name, value) = pair.map_err(|_| IoError::Closed)?;
        if name.eq_ignore_ascii_case(b"FCGI_MPXS_CONNS") {
            v.mpxs_conns = value == b"1";
        } else if name.eq_ignore_ascii_case(b"FCGI_MAX_REQS") {
            v.max_reqs = leading_number(value);
        }
    }
    if !v.mpxs_conns {
        v.max_reqs = 1;
    }
    Ok(v)
}

/// HAProxy's `strl2ui()`: the leading digits, 0 when none.
fn leading_number(v: &[u8]) -> u32 {
    v.iter().take_while(|b| b.is_ascii_digit()).fold(0u32, |n, &d| n.wrapping_mul(10).wrapping_add(u32::from(d - b'0')))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rampart_proto::fcgi::params::push_pair;

    fn result(kind: Kind, id: u16, pairs: &[(&[u8], &[u8])]) -> Vec<u8> {
        let mut content = Vec::new();
        pairs.iter().for_each(|(n, v)| push_pair(&mut content, n, v));
        let mut out = Vec::new();
        fcgi::push_record(&mut out, kind, id, &content);
        out
    }

    #[test]
    fn an_application_that_multiplexes_gives_its_limit() {
        let mut raw = result(Kind::GetValuesResult, 0, &[(b"fcgi_max_reqs", b"8"), (b"FCGI_MPXS_CONNS", b"1")]);
        raw.extend_from_slice(b"next");
        assert_eq!(answer(&mut raw, 1).unwrap(), Some(Values { mpxs_conns: true, max_reqs: 8 }));
        assert_eq!(raw, b"next");
    }

    #[test]
    fn an_application_that_does_not_multiplex_takes_one_request() {
        let mut raw = result(Kind::GetValuesResult, 0, &[(b"FCGI_MAX_REQS", b"50"), (b"FCGI_MPXS_CONNS", b"0")]);
        assert_eq!(answer(&mut raw, 10).unwrap(), Some(Values { mpxs_conns: false, max_reqs: 1 }));
        // UNKNOWN_TYPE's body: the type it did not know (GET_VALUES, 9) and 7 reserved bytes
        let mut raw = Vec::new();
        fcgi::push_record(&mut raw, Kind::UnknownType, 0, &[9, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(answer(&mut raw, 10).unwrap(), Some(Values { mpxs_conns: false, max_reqs: 1 }));
        // nothing said of the limit: the configured one
        let mut raw = result(Kind::GetValuesResult, 0, &[(b"FCGI_MPXS_CONNS", b"1")]);
        assert_eq!(answer(&mut raw, 10).unwrap(), Some(Values { mpxs_conns: true, max_reqs: 10 }));
    }

    #[test]
    fn a_partial_record_waits_and_anything_else_fails() {
        let whole = result(Kind::GetValuesResult, 0, &[(b"FCGI_MPXS_CONNS", b"1")]);
        let mut raw = whole[..whole.len() - 1].to_vec();
        assert_eq!(answer(&mut raw, 1).unwrap(), None);
        assert!(answer(&mut result(Kind::Stdout, 1, &[]), 1).is_err());
        assert!(answer(&mut result(Kind::GetValuesResult, 1, &[]), 1).is_err());
        assert!(answer(&mut vec![2, 10, 0, 0, 0, 0, 0, 0], 1).is_err());
    }
}
