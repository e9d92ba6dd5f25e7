//! One SMTP exchange with a mailer, as HAProxy 2.6 words it: wait for the 220
//! greeting, `HELO <myhostname>`, `MAIL FROM:<from>`, `RCPT TO:<to>`, `DATA`, the
//! message (`From`, `To`, `Date`, `Subject: [HAProxy Alert] <msg>`, a blank line, the
//! message again, a blank line, `.`), then `QUIT`. Each reply is read whole
//! (multi-line replies too, `rampart_proto::smtp`) and must carry the expected code.

use std::net::SocketAddr;

use rampart_proto::smtp::{parse_reply, Reply, ReplyError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// What one alert says.
pub(super) struct Message<'a> {
    pub helo: &'a str,
    pub from: &'a str,
    pub to: &'a str,
    pub date: &'a str,
    pub subject: &'a str,
}

/// Why an exchange failed.
#[derive(Debug, thiserror::Error)]
pub(super) enum SmtpError {
    /// Connecting, reading or writing failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The server closed the connection before its reply.
    #[error("connection closed by the mailer")]
    Closed,
    /// The reply does not read as SMTP.
    #[error("bad reply: {0}")]
    Reply(#[from] ReplyError),
    /// The reply has another code than the step expects.
    #[error("expected {expected} after {step}, got '{code} {text}'")]
    Refused { step: &'static str, expected: u16, code: u16, text: String },
}

/// The alert body of HAProxy 2.6 (after DATA, dot-stuffing included).
pub(super) fn body(m: &Message<'_>) -> String {
    let mut text = format!(
        "From: {}\r\nTo: {}\r\nDate: {}\r\nSubject: [HAProxy Alert] {}\r\n\r\n{}\r\n\r\n",
        m.from, m.to, m.date, m.subject, m.subject
    );
    // COMPAT: HAProxy sends the message as is; a line starting with '.' would end
    // the data early, so it is doubled here (RFC 5321 section 4.5.2). Server
    // messages never start a line with one.
    if text.contains("\n.") {
        text = text.replace("\n.", "\n..");
    }
    text.push_str(".\r\n");
    text
}

/// Runs the exchange with the mailer at `addr`.
pub(super) async fn send(addr: SocketAddr, m: &Message<'_>) -> Result<(), SmtpError> {
    let mut conn = Conn { sock: TcpStream::connect(addr).await?, buf: Vec::new() };
    conn.expect("the greeting", 220).await?;
    let steps: [(String, &'static str, u16); 5] = [
        (format!("HELO {}\r\n", m.helo), "HELO", 250),
        (format!("MAIL FROM:<{}>\r\n", m.from), "MAIL FROM", 250),
        (format!("RCPT TO:<{}>\r\n", m.to), "RCPT TO", 250),
        ("DATA\r\n".to_owned(), "DATA", 354),
        (body(m), "the message", 250),
    ];
    for (line, step, code) in &steps {
        conn.sock.write_all(line.as_bytes()).await?;
        conn.expect(step, *code).await?;
    }
    conn.sock.write_all(b"QUIT\r\n").await?;
    conn.expect("QUIT", 221).await
}

struct Conn {
    sock: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    /// Reads the next reply and checks its code.
    async fn expect(&mut self, step: &'static str, expected: u16) -> Result<(), SmtpError> {
        let reply = self.reply().await?;
        if reply.code == expected {
            return Ok(());
        }
        let text = reply.lines.last().cloned().unwrap_or_default();
        Err(SmtpError::Refused { step, expected, code: reply.code, text })
    }

    async fn reply(&mut self) -> Result<Reply, SmtpError> {
        loop {
            if let Some((reply, used)) = parse_reply(&self.buf)? {
                self.buf.drain(..used);
                return Ok(reply);
            }
            let mut chunk = [0u8; 1024];
            let n = self.sock.read(&mut chunk).await?;
            if n == 0 {
                return Err(SmtpError::Closed);
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_as_haproxy_2_6_sends_it() {
        let m = Message {
            helo: "h",
            from: "from@domain.tld",
            to: "to@domain.tld",
            date: "Fri, 04 Dec 2026 13:00:00 +0000 (UTC)",
            subject: "Server be1/srv1 is DOWN",
        };
        assert_eq!(
            body(&m),
            "From: from@domain.tld\r\nTo: to@domain.tld\r\nDate: Fri, 04 Dec 2026 13:00:00 +0000 (UTC)\r\n\
             Subject: [HAProxy Alert] Server be1/srv1 is DOWN\r\n\r\nServer be1/srv1 is DOWN\r\n\r\n.\r\n"
        );
    }
}
