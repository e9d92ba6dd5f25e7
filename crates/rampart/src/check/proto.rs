//! The protocol checks built on the tcp-check engine: the rule set of each (`option
//! redis-check`, `smtpchk`, `mysql-check`, `pgsql-check`, `ldap-check`, `spop-check`,
//! `ssl-hello-chk`), the request each sends and the replies each understands (the
//! "custom" expect rules that decode a MySQL packet, an LDAP bind response or an SPOP
//! AGENT-HELLO frame).
//! HAProxy counterpart: `proxy_parse_{redis,smtpchk,mysql,pgsql,ldap,spop}_check_opt()`,
//! `proxy_parse_ssl_hello_chk_opt()`, `tcpcheck_mysql_expect_packet()`,
//! `tcpcheck_ldap_expect_bindrsp()`, `tcpcheck_spop_expect_agenthello()`
//! (src/tcpcheck.c) and `spoe_handle_healthcheck_response()` (src/flt_spoe.c).

use rampart_cfg::model::{MysqlUser, ProtoCheck};
use regex::bytes::Regex;

use super::rules::{Action, Connect, Expect, Matcher, Msg, Rule, Send, StatusCode};
use super::status::{CheckStatus, Outcome};

// === rule sets ===

/// The rules of protocol check `p` (not `option tcp-check`), numbered as HAProxy's,
/// after an implicit connect when they do not start with one.
pub(super) fn rules(p: &ProtoCheck) -> Vec<Rule> {
    let actions = match p {
        ProtoCheck::TcpCheck => Vec::new(),
        ProtoCheck::Redis => redis(),
        ProtoCheck::Smtp { hello } => smtp(hello),
        ProtoCheck::Mysql { user } => mysql(user.as_ref()),
        ProtoCheck::Pgsql { user } => pgsql(user),
        ProtoCheck::Ldap => ldap(),
        ProtoCheck::Spop => spop(),
        ProtoCheck::SslHello => ssl_hello(),
    };
    let mut out = Vec::with_capacity(actions.len() + 1);
    if !matches!(actions.first(), Some(Action::Connect(_))) {
        let c = Connect { implicit: true, default: true, ..Connect::default() };
        out.push(Rule { step: 0, action: Action::Connect(c), comment: None, head: 0 });
    }
    let n = out.len();
    out.extend(actions.into_iter().enumerate().map(|(i, action)| Rule {
        step: i + 1,
        action,
        comment: None,
        head: n + i,
    }));
    out
}

/// `connect default` (with `linger` for SMTP, as HAProxy's rule set).
fn connect_default(linger: bool) -> Action {
    Action::Connect(Connect { default: true, linger, ..Connect::default() })
}

/// A pattern written in this file (a test compiles each one).
fn constant_regex(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| unreachable!("constant pattern {pattern}: {e}"))
}

/// `option redis-check`: PING, expect `+PONG`.
fn redis() -> Vec<Action> {
    let expect = Expect::proto(
        Matcher::String(b"+PONG\r\n".to_vec()),
        None,
        CheckStatus::L7Sts,
        Msg::Fixed("Redis server is ok"),
        Msg::Payload { skip: 0, ltrim: false, crlf: true },
    );
    vec![Action::Send(Send::Bytes(b"*1\r\n$4\r\nPING\r\n".to_vec())), Action::Expect(expect)]
}

/// `option smtpchk`: the banner, the greeting, QUIT, each answered by a 2xx.
fn smtp(hello: &str) -> Vec<Action> {
    let reply = || Msg::Payload { skip: 4, ltrim: true, crlf: true };
    let expect = |pattern: &str, min_recv, err, on_success, on_error, code: bool| {
        let mut e = Expect::proto(Matcher::Rstring(constant_regex(pattern)), min_recv, err, on_success, on_error);
        if code {
            e.status_code = StatusCode::Leading;
        }
        Action::Expect(e)
    };
    let banner = Msg::Payload { skip: 0, ltrim: false, crlf: true };
    vec![
        connect_default(true),
        expect("^[0-9]{3}[ \r]", Some(4), CheckStatus::L7Rsp, Msg::Default, banner, false),
        expect("^2[0-9]{2}[ \r]", Some(4), CheckStatus::L7Sts, Msg::Default, reply(), true),
        Action::Send(Send::Bytes(format!("{hello}\r\n").into_bytes())),
        expect("^(2[0-9]{2}-[^\r]*\r\n)*2[0-9]{2}[ \r]", None, CheckStatus::L7Sts, reply(), reply(), true),
        Action::Send(Send::Bytes(b"QUIT\r\n".to_vec())),
        expect("^2[0-9]{2}[- \r]", Some(4), CheckStatus::L7Sts, reply(), reply(), true),
    ]
}

/// `option mysql-check [user <name> [post-41|pre-41]]`: the greeting, then with a user
/// an authentication packet and the reply to it.
fn mysql(user: Option<&MysqlUser>) -> Vec<Action> {
    let mut rules = vec![connect_default(false)];
    if let Some(u) = user {
        rules.push(Action::Send(Send::Bytes(mysql_request(u))));
    }
    rules.push(Action::Custom(Custom::MysqlGreeting));
    if user.is_some() {
        rules.push(Action::Custom(Custom::MysqlOk));
    }
    rules
}

/// `option pgsql-check user <name>`: a startup message; an error reply (`E`) fails
/// with its text, anything but an authentication request fails.
fn pgsql(user: &str) -> Vec<Action> {
    let mut not_error = Expect::proto(
        Matcher::String(b"E".to_vec()),
        Some(5),
        CheckStatus::L7Rsp,
        Msg::Default,
        Msg::Payload { skip: 6, ltrim: false, crlf: false },
    );
    not_error.inverse = true;
    let auth = Expect::proto(
        Matcher::Rbinary(constant_regex("^52000000[A-Z0-9]{2}000000(00|02|03|04|05|06|07|09|0A)")),
        Some(9),
        CheckStatus::L7Sts,
        Msg::Fixed("PostgreSQL server is ok"),
        Msg::Fixed("PostgreSQL unknown error"),
    );
    vec![
        connect_default(false),
        Action::Send(Send::Bytes(pgsql_request(user))),
        Action::Expect(not_error),
        Action::Expect(auth),
    ]
}

/// `option ldap-check`: an anonymous bind, expect a successful bind response.
fn ldap() -> Vec<Action> {
    let ber = Expect::proto(
        Matcher::Rbinary(constant_regex("^30")),
        Some(14),
        CheckStatus::L7Rsp,
        Msg::Default,
        Msg::Fixed("Not LDAPv3 protocol"),
    );
    vec![Action::Send(Send::Bytes(LDAP_BIND.to_vec())), Action::Expect(ber), Action::Custom(Custom::LdapBind)]
}

/// `option spop-check`: a HAPROXY-HELLO frame, expect an AGENT-HELLO.
fn spop() -> Vec<Action> {
    vec![Action::Send(Send::Bytes(SPOP_HELLO.to_vec())), Action::Custom(Custom::SpopHello)]
}

/// `option ssl-hello-chk`: an SSLv3 ClientHello, expect a handshake (0x16) or an
/// alert (0x15) record; the results are layer 6 ones.
fn ssl_hello() -> Vec<Action> {
    let mut e = Expect::proto(
        Matcher::Rbinary(constant_regex("^1[56]")),
        Some(5),
        CheckStatus::L6Rsp,
        Msg::Default,
        Msg::Default,
    );
    e.ok_status = Some(CheckStatus::L6Ok);
    e.tout_status = Some(CheckStatus::L6Tout);
    vec![Action::Send(Send::SslHello), Action::Expect(e)]
}

/// The ClientHello of `option ssl-hello-chk` at unix time `now` (HAProxy's
/// `sslv3_client_hello`): SSLv3, no session, the 39 most common old cipher suites.
pub(super) fn ssl_client_hello(now: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(126);
    // record: handshake, SSLv3, 0x79 bytes; ClientHello of 0x75 bytes, version SSLv3
    out.extend_from_slice(&[0x16, 0x03, 0x00, 0x00, 0x79, 0x01, 0x00, 0x00, 0x75, 0x03, 0x00]);
    out.extend_from_slice(&now.to_be_bytes());
    out.extend_from_slice(b"HAPROXYSSLCHK\nHAPROXYSSLCHK\n");
    // no session id, 78 bytes of cipher suites
    out.extend_from_slice(&[0x00, 0x00, 0x4e]);
    for cs in (0x01u16..=0x1b).chain(0x2f..=0x3a) {
        out.extend_from_slice(&cs.to_be_bytes());
    }
    // one compression method: none
    out.extend_from_slice(&[0x01, 0x00]);
    out
}

// === reply decoders ===

/// A reply decoder standing for an `expect` rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Custom {
    /// The MySQL server greeting (initial handshake packet).
    MysqlGreeting,
    /// The packet that follows the greeting: OK, or an error packet.
    MysqlOk,
    /// An LDAP bindResponse with resultCode 0.
    LdapBind,
    /// An SPOP AGENT-HELLO frame the check can accept.
    SpopHello,
}

/// What a decoder made of the bytes received so far.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Eval {
    /// Not enough bytes yet.
    Wait,
    /// Good, go on with the next rule.
    Continue,
    /// Good, and the check passed with this result.
    Pass(Outcome),
    /// The check failed.
    Fail(Outcome),
}

impl Custom {
    /// Decodes `buf`; `closed` when no more bytes will come, `final_rule` when no rule
    /// follows this one.
    pub(super) fn eval(self, buf: &[u8], closed: bool, final_rule: bool) -> Eval {
        match self {
            Custom::MysqlGreeting => mysql_packet(buf, 0, closed, final_rule),
            Custom::MysqlOk => {
                let Some(hs) = buf.get(..3) else { return mysql_packet(buf, usize::MAX, closed, final_rule) };
                mysql_packet(buf, 4 + le24(hs), closed, final_rule)
            }
            Custom::LdapBind => ldap_bind(buf, closed),
            Custom::SpopHello => spop_hello(buf, closed),
        }
    }
}

/// A 3-byte little-endian length.
fn le24(b: &[u8]) -> usize {
    usize::from(b[0]) | usize::from(b[1]) << 8 | usize::from(b[2]) << 16
}

/// The bytes up to the first NUL, as text (HAProxy hands these as C strings).
fn c_str(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// The MySQL packet at `off`: an error packet (first payload byte 0xff) fails with its
/// error code and text; otherwise the check goes on, or passes with the server
/// version of the greeting when this is the last rule.
fn mysql_packet(buf: &[u8], off: usize, closed: bool, final_rule: bool) -> Eval {
    let short = |closed| if closed { Eval::Fail(Outcome::new(CheckStatus::L7Rsp, "")) } else { Eval::Wait };
    let Some(head) = buf.get(off..off.saturating_add(4)) else { return short(closed) };
    let plen = le24(head);
    if buf.len() < off + 4 + plen {
        return short(closed);
    }
    if buf.get(off + 4) == Some(&0xff) {
        let code = match buf.get(off + 5..off + 7) {
            Some(c) => u16::from_le_bytes([c[0], c[1]]),
            None => 0,
        };
        let desc = c_str(buf.get(off + 7..).unwrap_or_default());
        return Eval::Fail(Outcome { status: CheckStatus::L7Sts, code, desc });
    }
    if !final_rule {
        return Eval::Continue;
    }
    Eval::Pass(Outcome::new(CheckStatus::L7Ok, c_str(buf.get(5..).unwrap_or_default())))
}

/// An LDAPv3 bindResponse (RFC 4511 4.2.2) with messageID 1 and resultCode 0.
fn ldap_bind(buf: &[u8], closed: bool) -> Eval {
    let not_ldap = || Eval::Fail(Outcome::new(CheckStatus::L7Rsp, "Not LDAPv3 protocol"));
    let short = || if closed { Eval::Fail(Outcome::new(CheckStatus::L7Rsp, "")) } else { Eval::Wait };
    let Some(&len0) = buf.get(1) else { return short() };
    // the message length: short form, or long form on 2 or 4 bytes
    let (nbytes, msglen) = if len0 & 0x80 != 0 {
        let n = usize::from(len0 & 0x7f);
        if buf.len() < 1 + n {
            return short();
        }
        let Some(b) = buf.get(2..2 + n) else { return short() };
        match n {
            4 => (4, u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize),
            2 => (2, usize::from(u16::from_be_bytes([b[0], b[1]]))),
            _ => return not_ldap(),
        }
    } else {
        (0, usize::from(len0))
    };
    if buf.len() < 2 + nbytes + msglen {
        return short();
    }
    let mut p = 2 + nbytes;
    // messageID INTEGER 1, then the bindResponse tag
    if buf.get(p..p + 4) != Some(b"\x02\x01\x01\x61") {
        return not_ldap();
    }
    p += 4;
    let skip = match buf.get(p) {
        Some(&l) if l & 0x80 != 0 => usize::from(l & 0x7f),
        _ => 0,
    };
    p += 1 + skip;
    // ldapResult: resultCode ENUMERATED
    if buf.get(p..p + 2) != Some(b"\x0a\x01") {
        return not_ldap();
    }
    match buf.get(p + 2) {
        Some(0) => Eval::Pass(Outcome::new(CheckStatus::L7Ok, "Success")),
        Some(&code) => Eval::Fail(Outcome {
            status: CheckStatus::L7Sts,
            code: code.into(),
            desc: "See RFC: http://tools.ietf.org/html/rfc4511#section-4.1.9".into(),
        }),
        None => short(),
    }
}

/// The HAPROXY-HELLO frame of `option spop-check`: supported-versions "2.0",
/// max-frame-size 16380, no capabilities, healthcheck true.
pub(super) const SPOP_HELLO: &[u8] = b"\x00\x00\x00\x4e\x01\x00\x00\x00\x01\x00\x00\
\x12supported-versions\x08\x032.0\
\x0emax-frame-size\x03\xfc\xf0\x06\
\x0ccapabilities\x08\x00\
\x0bhealthcheck\x11";

/// The largest frame an agent may announce (HAProxy's `MAX_FRAME_SIZE`).
const SPOP_MAX_FRAME: u64 = 16380;
/// The smallest (HAProxy's `MIN_FRAME_SIZE`).
const SPOP_MIN_FRAME: u64 = 256;

/// SPOP error reasons, by status code (HAProxy's `spoe_frm_err_reasons`).
fn spop_reason(code: u64) -> &'static str {
    match code {
        0 => "normal",
        1 => "I/O error",
        2 => "a timeout occurred",
        3 => "frame is too big",
        4 => "invalid frame received",
        5 => "version value not found",
        6 => "max-frame-size value not found",
        7 => "capabilities value not found",
        8 => "unsupported version",
        9 => "max-frame-size too big or too small",
        10 => "fragmentation not supported",
        11 => "invalid interlaced frames",
        12 => "frame-id not found",
        13 => "resource allocation error",
        _ => "an unknown error occurred",
    }
}

/// The agent's reply: a 4-byte length, then an AGENT-HELLO frame (or an
/// AGENT-DISCONNECT, which fails with its status code's reason).
fn spop_hello(buf: &[u8], closed: bool) -> Eval {
    let fail = |code| Eval::Fail(Outcome::new(CheckStatus::L7Rsp, spop_reason(code)));
    let Some(len) = buf.get(..4) else { return if closed { fail(4) } else { Eval::Wait } };
    let size = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
    if !closed && buf.len() < 4 + size {
        return Eval::Wait;
    }
    let frame = &buf[4..buf.len().min(4 + size)];
    match spop_frame(frame) {
        Ok(()) => Eval::Pass(Outcome::new(CheckStatus::L7Ok, "SPOA server is ok")),
        Err(code) => fail(code),
    }
}

/// Frame types and data types of SPOP.
const AGENT_HELLO: u8 = 101;
const AGENT_DISCON: u8 = 102;
const T_STR: u8 = 8;

/// Checks an AGENT-HELLO frame; `Err` carries the SPOP status code.
fn spop_frame(frame: &[u8]) -> Result<(), u64> {
    let kind = frame.first().copied();
    if kind != Some(AGENT_HELLO) && kind != Some(AGENT_DISCON) {
        return Err(4);
    }
    if frame.len() < 7 {
        return Err(4);
    }
    if frame[4] & 1 == 0 {
        return Err(10);
    }
    if frame[5] != 0 || frame[6] != 0 {
        return Err(4);
    }
    let mut r = Reader { b: frame, p: 7 };
    if kind == Some(AGENT_DISCON) {
        return Err(discon_status(&mut r));
    }
    let (mut vsn, mut max_frame) = (false, false);
    while r.p < frame.len() {
        let key = r.bytes().filter(|k| !k.is_empty()).ok_or(4u64)?;
        if key.starts_with(b"version") {
            if r.byte().ok_or(4u64)? & 0x0f != T_STR {
                return Err(4);
            }
            let v = r.bytes().ok_or(4u64)?;
            if spop_version(v) != Some(2000) {
                return Err(8);
            }
            vsn = true;
        } else if key.starts_with(b"max-frame-size") {
            if !(2..=5).contains(&(r.byte().ok_or(4u64)? & 0x0f)) {
                return Err(4);
            }
            let sz = r.varint().ok_or(4u64)?;
            if !(SPOP_MIN_FRAME..=SPOP_MAX_FRAME).contains(&sz) {
                return Err(9);
            }
            max_frame = true;
        } else if key.starts_with(b"capabilities") {
            if r.byte().ok_or(4u64)? & 0x0f != T_STR {
                return Err(4);
            }
            r.bytes().ok_or(4u64)?;
        } else {
            r.skip_data().ok_or(4u64)?;
        }
    }
    match (vsn, max_frame) {
        (false, _) => Err(5),
        (_, false) => Err(6),
        _ => Ok(()),
    }
}

/// The `status-code` of an AGENT-DISCONNECT frame (99 when it has none).
fn discon_status(r: &mut Reader<'_>) -> u64 {
    let mut status = 99;
    while r.p < r.b.len() {
        let Some(key) = r.bytes().filter(|k| !k.is_empty()) else { return 4 };
        if key.starts_with(b"status-code") {
            let ok_type = r.byte().is_some_and(|t| (2..=5).contains(&(t & 0x0f)));
            match r.varint() {
                Some(v) if ok_type => status = v,
                _ => return 4,
            }
        } else if r.skip_data().is_none() {
            return 4;
        }
    }
    status
}

/// `MAJOR.MINOR` as MAJOR * 1000 + MINOR (HAProxy's `spoe_str_to_vsn()`).
fn spop_version(v: &[u8]) -> Option<u32> {
    let text = std::str::from_utf8(v).ok()?.trim();
    let (maj, min) = text.split_once('.')?;
    let maj: u32 = maj.parse().ok().filter(|&m| m > 0)?;
    let min: u32 = min.parse().ok().filter(|&m| m <= 999)?;
    Some(maj * 1000 + min)
}

/// A cursor over SPOP's encoded items.
struct Reader<'a> {
    b: &'a [u8],
    p: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Option<u8> {
        let v = *self.b.get(self.p)?;
        self.p += 1;
        Some(v)
    }

    /// SPOP's variable-length integer (HAProxy's `decode_varint()`).
    fn varint(&mut self) -> Option<u64> {
        let mut v = u64::from(self.byte()?);
        if v < 240 {
            return Some(v);
        }
        let mut shift = 4u32;
        loop {
            let b = u64::from(self.byte()?);
            v = v.checked_add(b.checked_shl(shift)?)?;
            if b < 128 {
                return Some(v);
            }
            shift += 7;
            if shift > 60 {
                return None;
            }
        }
    }

    /// A length-prefixed string or binary.
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.varint()?).ok()?;
        let v = self.b.get(self.p..self.p.checked_add(n)?)?;
        self.p += n;
        Some(v)
    }

    /// Skips one typed value.
    fn skip_data(&mut self) -> Option<()> {
        match self.byte()? & 0x0f {
            1 => {}
            2..=5 => {
                self.varint()?;
            }
            6 => self.p = self.p.checked_add(4).filter(|&p| p <= self.b.len())?,
            7 => self.p = self.p.checked_add(16).filter(|&p| p <= self.b.len())?,
            8 | 9 => {
                self.bytes()?;
            }
            _ => {}
        }
        Some(())
    }
}

/// The packets of `option mysql-check user <name>`: a client authentication packet
/// in the 4.1 or the 4.0 format, followed by COM_QUIT.
pub(super) fn mysql_request(user: &MysqlUser) -> Vec<u8> {
    let name = user.name.as_bytes();
    let len = name.len() + 7 + if user.post41 { 27 } else { 0 };
    let mut out = vec![(len & 0xff) as u8, ((len >> 8) & 0xff) as u8, ((len >> 16) & 0xff) as u8, 1];
    if user.post41 {
        // capabilities, max packet, charset utf8, 23 zero bytes
        out.extend_from_slice(&[0x00, 0x82, 0x00, 0x00, 0x00, 0x80, 0x00, 0x01, 0x21]);
        out.extend_from_slice(&[0; 23]);
    } else {
        out.extend_from_slice(&[0x00, 0x80, 0x00, 0x00, 0x01]);
    }
    out.extend_from_slice(name);
    // NUL, filler, then COM_QUIT (length 1, sequence 0)
    out.extend_from_slice(&[0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01]);
    out
}

/// The startup message of `option pgsql-check user <name>` (protocol 3.0).
pub(super) fn pgsql_request(user: &str) -> Vec<u8> {
    let len = u32::try_from(15 + user.len()).unwrap_or(u32::MAX);
    let mut out = len.to_be_bytes().to_vec();
    out.extend_from_slice(&[0x00, 0x03, 0x00, 0x00]);
    out.extend_from_slice(b"user\0");
    out.extend_from_slice(user.as_bytes());
    out.extend_from_slice(&[0, 0]);
    out
}

/// The anonymous bind request of `option ldap-check` (LDAPv3, messageID 1).
pub(super) const LDAP_BIND: &[u8] = b"\x30\x0c\x02\x01\x01\x60\x07\x02\x01\x03\x04\x00\x80\x00";

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    const GREETING: &str = "4A0000000A382E302E3139000A0000006F3C025E6249410D00FFFFFF0200FFC7150000000000000000\
                            00007C182159106E2761144322200063616368696E675F736861325F70617373776F726400";

    #[test]
    fn requests_are_haproxys_bytes() {
        let pre = mysql_request(&MysqlUser { name: "user".into(), post41: false });
        assert_eq!(pre, hex("0B00000100800000017573657200000100000001"));
        let post = mysql_request(&MysqlUser { name: "user".into(), post41: true });
        assert_eq!(
            post,
            hex("260000010082000000800001210000000000000000000000000000000000000000000000757365720000010000\
                 0001")
        );
        assert_eq!(pgsql_request("postgres"), hex("00000017000300007573657200706f7374677265730000"));
        assert_eq!(LDAP_BIND, hex("300C020101600702010304008000"));
        // captured from haproxy 2.6.12's spop-check
        assert_eq!(
            SPOP_HELLO,
            hex("0000004e0100000001000012737570706f727465642d76657273696f6e730803322e300e6d61782d6672616d\
                 652d73697a6503fcf0060c6361706162696c697469657308000b6865616c7468636865636b11")
        );
    }

    #[test]
    fn mysql_greeting_and_errors() {
        let g = hex(GREETING);
        assert_eq!(Custom::MysqlGreeting.eval(&g[..10], false, true), Eval::Wait);
        assert_eq!(Custom::MysqlGreeting.eval(&g, false, false), Eval::Continue);
        assert_eq!(Custom::MysqlGreeting.eval(&g, false, true), Eval::Pass(Outcome::new(CheckStatus::L7Ok, "8.0.19")));
        let mut both = g.clone();
        both.extend(hex("07000002 00000002000000"));
        assert_eq!(Custom::MysqlOk.eval(&both, false, true), Eval::Pass(Outcome::new(CheckStatus::L7Ok, "8.0.19")));
        let mut err = g.clone();
        err.extend(hex("0A000002FF E304 4E6F207761792E"));
        let Eval::Fail(o) = Custom::MysqlOk.eval(&err, false, true) else { panic!("fails") };
        assert_eq!((o.status, o.code, o.desc.as_str()), (CheckStatus::L7Sts, 1251, "No way."));
        assert_eq!(Custom::MysqlOk.eval(&g, false, true), Eval::Wait);
        assert_eq!(Custom::MysqlOk.eval(&g, true, true), Eval::Fail(Outcome::new(CheckStatus::L7Rsp, "")));
    }

    #[test]
    fn ldap_bind_responses() {
        let ok = hex("300C020101 61 070A01 00 04000400");
        assert_eq!(Custom::LdapBind.eval(&ok, false, true), Eval::Pass(Outcome::new(CheckStatus::L7Ok, "Success")));
        let not = hex("300C020101 60 070A01 00 04000400");
        assert_eq!(
            Custom::LdapBind.eval(&not, false, true),
            Eval::Fail(Outcome::new(CheckStatus::L7Rsp, "Not LDAPv3 protocol"))
        );
        let Eval::Fail(o) = Custom::LdapBind.eval(&hex("300C020101 61 070A01 01 04000400"), false, true) else {
            panic!("fails")
        };
        assert_eq!((o.status, o.code), (CheckStatus::L7Sts, 1));
        // long-form lengths, the end still to come
        let long = hex("308400000010020101 61 84000000070A01");
        assert_eq!(Custom::LdapBind.eval(&long, false, true), Eval::Wait);
        let mut whole = long.clone();
        whole.extend(hex("00 04000400"));
        assert_eq!(Custom::LdapBind.eval(&whole, false, true), Eval::Pass(Outcome::new(CheckStatus::L7Ok, "Success")));
        assert_eq!(Custom::LdapBind.eval(&hex("3083"), true, true), Eval::Fail(Outcome::new(CheckStatus::L7Rsp, "")));
    }

    #[test]
    fn spop_agent_hello() {
        let desc = |b: &str| match Custom::SpopHello.eval(&hex(b), true, true) {
            Eval::Pass(o) | Eval::Fail(o) => o.desc,
            other => panic!("{other:?}"),
        };
        let ok = "00000036 65 00000001 0000 0776657273696F6E 0803322E30 0E6D61782D6672616D652D73697A65 03FCF0 \
                  060C6361706162696C6974696573 0800";
        assert_eq!(desc(ok), "SPOA server is ok");
        assert_eq!(desc("00000000"), "invalid frame received");
        assert_eq!(desc("00000007 65 00000000 0000"), "fragmentation not supported");
        assert_eq!(desc("00000014 65 00000001 0000 0776657273696F6E 0803312E30"), "unsupported version");
        assert_eq!(desc("00000007 65 00000001 0000"), "version value not found");
        assert_eq!(Custom::SpopHello.eval(&hex("00000036 65"), false, true), Eval::Wait);
        // an AGENT-DISCONNECT with status-code 3
        assert_eq!(desc("00000015 66 00000001 0000 0B7374617475732D636F6465 0303"), "frame is too big");
    }
}
