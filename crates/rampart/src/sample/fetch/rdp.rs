//! RDP cookies: the `Cookie: <name>=<value>\r\n` line a Remote Desktop client puts in
//! its X.224 Connection Request, right after the 4-byte TPKT header and the 7-byte
//! X.224 header (`Cookie: mstshash=<user>` from the client, `msts=<ip>.<port>.0000`
//! when a connection broker redirects it). `rdp_cookie([<name>])`,
//! `rdp_cookie_cnt([<name>])` and their `req.` spellings read it from a TCP stream's
//! request bytes; `balance rdp-cookie` and `persist rdp-cookie` read it with
//! [`cookie`].
//! HAProxy counterpart: `fetch_rdp_cookie_name()`, `smp_fetch_rdp_cookie()`,
//! `smp_fetch_rdp_cookie_cnt()` (src/payload.c).
//!
//! As HAProxy, the line is looked for at offset 11 only, and the value is what lies
//! between the `=` and the first CR, which must be followed by LF. Bytes that may still
//! complete a line are "not yet" ([`SampleCtx::may_change`]): content rules wait for
//! more within their inspect delay.

use crate::sample::ctx::{Dir, SampleCtx};
use crate::sample::kw::{uses, Arg, ArgSpec, ArgT, FetchKw};
use crate::sample::types::{Sample, SmpType};

use super::Emit;

/// Where the cookie line starts: after TPKT (4 bytes) and X.224 (7 bytes) headers.
const COOKIE_AT: usize = 11;
const COOKIE: &[u8] = b"Cookie:";

/// Why [`cookie`] found no value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Miss {
    /// More bytes could complete the line.
    Short,
    /// The bytes are no cookie line, or not one for this name.
    NotCookie,
}

/// The value of the RDP cookie `name` (any cookie's when `name` is empty) in `data`,
/// the first bytes a client sent.
pub fn cookie<'a>(data: &'a [u8], name: &[u8]) -> Result<&'a [u8], Miss> {
    if data.len() <= COOKIE_AT {
        return Err(Miss::Short);
    }
    let d = &data[COOKIE_AT..];
    if d.len() <= COOKIE.len() {
        return Err(Miss::Short);
    }
    if !d[..COOKIE.len()].eq_ignore_ascii_case(COOKIE) {
        return Err(Miss::NotCookie);
    }
    let d = &d[COOKIE.len()..];
    let d = &d[d.iter().take_while(|&&b| b == b' ').count()..];
    let value = if name.is_empty() { after_any_name(d)? } else { after_name(d, name)? };
    let Some(cr) = value.iter().position(|&b| b == b'\r') else { return Err(Miss::Short) };
    match value.get(cr + 1) {
        None => Err(Miss::Short),
        Some(b'\n') => Ok(&value[..cr]),
        Some(_) => Err(Miss::NotCookie),
    }
}

/// What follows `<name>=` at the start of `d`.
fn after_name<'a>(d: &'a [u8], name: &[u8]) -> Result<&'a [u8], Miss> {
    if d.len() <= name.len() {
        return Err(Miss::Short);
    }
    if d[name.len()] != b'=' || !d[..name.len()].eq_ignore_ascii_case(name) {
        return Err(Miss::NotCookie);
    }
    Ok(&d[name.len() + 1..])
}

/// What follows the first `=` of `d`, which no line end may precede.
fn after_any_name(d: &[u8]) -> Result<&[u8], Miss> {
    for (i, &b) in d.iter().enumerate() {
        match b {
            b'=' => return Ok(&d[i + 1..]),
            b'\r' | b'\n' => return Err(Miss::NotCookie),
            _ => {}
        }
    }
    Err(Miss::Short)
}

/// The cookie of a TCP stream's request bytes for the fetch's optional name; `Short`
/// sets `may_change`. HTTP streams have no such bytes (HAProxy: "meaningless for HTX").
fn lookup<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>) -> Option<Result<&'a [u8], Miss>> {
    let data = ctx.payload.filter(|_| ctx.dir == Dir::Request)?;
    let name = args.first().and_then(Arg::as_bytes).unwrap_or_default();
    let found = cookie(data, name);
    if found == Err(Miss::Short) {
        ctx.may_change.set(true);
    }
    Some(found)
}

fn fetch_rdp_cookie<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(Ok(v)) = lookup(args, ctx) {
        emit(Sample::str(v));
    }
}

/// 1 when the cookie is there, 0 when the bytes say it is not; nothing while they may
/// still change.
fn fetch_rdp_cookie_cnt<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    match lookup(args, ctx) {
        Some(Ok(_)) => {
            emit(Sample::Sint(1));
        }
        Some(Err(Miss::NotCookie)) => {
            emit(Sample::Sint(0));
        }
        Some(Err(Miss::Short)) | None => {}
    }
}

const NAME: ArgSpec = ArgSpec::new(&[ArgT::Str], 0);

pub const KEYWORDS: &[FetchKw] = &[
    FetchKw::new("rdp_cookie", NAME, SmpType::Str, fetch_rdp_cookie).uses(uses::L6REQ),
    FetchKw::new("rdp_cookie_cnt", NAME, SmpType::Sint, fetch_rdp_cookie_cnt).uses(uses::L6REQ),
    FetchKw::new("req.rdp_cookie", NAME, SmpType::Str, fetch_rdp_cookie).uses(uses::L6REQ),
    FetchKw::new("req.rdp_cookie_cnt", NAME, SmpType::Sint, fetch_rdp_cookie_cnt).uses(uses::L6REQ),
];

#[cfg(test)]
mod tests {
    use super::{cookie, Miss};

    /// A TPKT + X.224 Connection Request header (11 bytes) followed by `rest`.
    fn cr(rest: &[u8]) -> Vec<u8> {
        let mut v = vec![0x03, 0x00, 0x00, 0x2c, 0x27, 0xe0, 0x00, 0x00, 0x00, 0x00, 0x00];
        v.extend_from_slice(rest);
        v
    }

    #[test]
    fn finds_the_named_cookie_or_any() {
        let req = cr(b"Cookie: mstshash=alice\r\n\x01\x00\x08\x00\x03\x00\x00\x00");
        assert_eq!(cookie(&req, b"mstshash"), Ok(&b"alice"[..]));
        assert_eq!(cookie(&req, b"MSTSHASH"), Ok(&b"alice"[..]), "names compare without case");
        assert_eq!(cookie(&req, b""), Ok(&b"alice"[..]));
        assert_eq!(cookie(&req, b"msts"), Err(Miss::NotCookie));
        assert_eq!(cookie(&cr(b"cookie:msts=1.2.0000\r\n"), b"msts"), Ok(&b"1.2.0000"[..]));
        assert_eq!(cookie(&cr(b"Cookie: a=\r\n"), b"a"), Ok(&b""[..]));
    }

    #[test]
    fn partial_lines_are_short_and_others_are_not_cookies() {
        let full = cr(b"Cookie: mstshash=alice\r\n");
        for cut in 0..full.len() {
            assert_eq!(cookie(&full[..cut], b"mstshash"), Err(Miss::Short), "cut at {cut}");
        }
        for cut in 0..full.len() {
            assert_eq!(cookie(&full[..cut], b""), Err(Miss::Short), "cut at {cut}");
        }
        assert_eq!(cookie(&cr(b"Cookie: mstshash=alice\rX"), b"mstshash"), Err(Miss::NotCookie));
        assert_eq!(cookie(&cr(b"Cookie: novalue\r\nx"), b""), Err(Miss::NotCookie));
        assert_eq!(cookie(&cr(b"Hello: mstshash=a\r\n"), b""), Err(Miss::NotCookie));
        // a TLS ClientHello: 7 bytes past offset 11 are still "short", as in HAProxy
        let hello = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00";
        assert_eq!(cookie(&hello[..18], b""), Err(Miss::Short));
        assert_eq!(cookie(hello, b""), Err(Miss::NotCookie));
    }
}
