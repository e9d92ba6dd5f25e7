//! SMTP server replies (RFC 5321 section 4.2), as the client that sends email alerts
//! reads them: `<code>-<text>` continuation lines, then `<code> <text>` (or a bare
//! `<code>`), each ending with CRLF (a lone LF is accepted). A reply is bounded:
//! [`MAX_REPLY`] bytes, and every line carries the same three-digit code.
//! HAProxy counterpart: none as such, its mail alerts expect strings in what the
//! server sends (src/mailers.c); rampart reads the whole reply.

/// The largest reply rampart reads (RFC 5321 allows 512-byte lines; multi-line EHLO
/// answers stay far below this).
pub const MAX_REPLY: usize = 16 * 1024;

/// One complete reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The three-digit code, 200..=599 in practice (100..=599 accepted).
    pub code: u16,
    /// The text of each line, without the code, the separator and the line end.
    pub lines: Vec<String>,
}

impl Reply {
    /// 2xx and 3xx: the command went through (3xx: send more, as after DATA).
    pub fn is_positive(&self) -> bool {
        (200..400).contains(&self.code)
    }
}

/// Why bytes are not an SMTP reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyError {
    /// A line does not start with three digits then ' ', '-' or the line end.
    Malformed,
    /// A continuation line changed the code.
    CodeChanged,
    /// More than [`MAX_REPLY`] bytes without the end of the reply.
    TooLong,
}

impl std::fmt::Display for ReplyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ReplyError::Malformed => "malformed reply line",
            ReplyError::CodeChanged => "reply code changed between lines",
            ReplyError::TooLong => "reply too long",
        })
    }
}

impl std::error::Error for ReplyError {}

/// Reads one reply at the start of `buf`: `Ok(None)` while it is incomplete, else
/// the reply and the bytes it took.
pub fn parse_reply(buf: &[u8]) -> Result<Option<(Reply, usize)>, ReplyError> {
    let mut pos = 0;
    let mut code = None;
    let mut lines = Vec::new();
    loop {
        let Some(nl) = buf[pos..].iter().position(|&b| b == b'\n') else {
            return if buf.len() > MAX_REPLY { Err(ReplyError::TooLong) } else { Ok(None) };
        };
        let end = pos + nl + 1;
        if end > MAX_REPLY {
            return Err(ReplyError::TooLong);
        }
        let line = &buf[pos..pos + nl];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let (this, last, text) = parse_line(line)?;
        if *code.get_or_insert(this) != this {
            return Err(ReplyError::CodeChanged);
        }
        lines.push(String::from_utf8_lossy(text).into_owned());
        pos = end;
        if last {
            return Ok(Some((Reply { code: this, lines }, pos)));
        }
    }
}

/// `(code, last line, text)` of one line without its end.
fn parse_line(line: &[u8]) -> Result<(u16, bool, &[u8]), ReplyError> {
    let digits = line.get(..3).ok_or(ReplyError::Malformed)?;
    if !digits.iter().all(u8::is_ascii_digit) || !(b'1'..=b'5').contains(&digits[0]) {
        return Err(ReplyError::Malformed);
    }
    let code = digits.iter().fold(0u16, |n, d| n * 10 + u16::from(d - b'0'));
    match line.get(3) {
        None => Ok((code, true, &[])),
        Some(b' ') => Ok((code, true, &line[4..])),
        Some(b'-') => Ok((code, false, &line[4..])),
        Some(_) => Err(ReplyError::Malformed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(text: &str) -> Reply {
        let (r, used) = parse_reply(text.as_bytes()).expect("valid").expect("complete");
        assert_eq!(used, text.len());
        r
    }

    #[test]
    fn single_and_multi_line_replies() {
        assert_eq!(whole("220 Welcome\r\n"), Reply { code: 220, lines: vec!["Welcome".into()] });
        let r = whole("250-mx.example.org greets you\r\n250-PIPELINING\r\n250 8BITMIME\r\n");
        assert_eq!(r.code, 250);
        assert_eq!(r.lines, ["mx.example.org greets you", "PIPELINING", "8BITMIME"]);
        assert_eq!(whole("354\n").lines, [""], "a bare code and a lone LF");
        assert!(whole("354 go on\r\n").is_positive());
        assert!(!whole("550 no such user\r\n").is_positive());
    }

    #[test]
    fn a_reply_is_complete_only_with_its_last_line() {
        let text = b"250-a\r\n250-b\r\n250 c\r\n221 next\r\n";
        let (r, used) = parse_reply(text).unwrap().unwrap();
        assert_eq!((r.code, used), (250, 21), "the next reply is left");
        for cut in 0..21 {
            assert_eq!(parse_reply(&text[..cut]), Ok(None), "cut at {cut}");
        }
    }

    #[test]
    fn bad_replies() {
        assert_eq!(parse_reply(b"hello\r\n"), Err(ReplyError::Malformed));
        assert_eq!(parse_reply(b"25\r\n"), Err(ReplyError::Malformed));
        assert_eq!(parse_reply(b"250x\r\n"), Err(ReplyError::Malformed));
        assert_eq!(parse_reply(b"650 x\r\n"), Err(ReplyError::Malformed));
        assert_eq!(parse_reply(b"250-a\r\n251 b\r\n"), Err(ReplyError::CodeChanged));
        let long = vec![b'2'; MAX_REPLY + 1];
        assert_eq!(parse_reply(&long), Err(ReplyError::TooLong));
        let many = "250-x\r\n".repeat(MAX_REPLY / 7 + 1);
        assert_eq!(parse_reply(many.as_bytes()), Err(ReplyError::TooLong));
    }
}
