//! A small SMTP server for the email-alert tests: it answers each connection with a
//! script of replies (multi-line ones included), records every line the client sent,
//! and hands each finished session over a channel.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::Duration;

/// How the server answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Script {
    /// Accepts the mail: 220, a multi-line 250 to HELO, 250, 250, 354, 250, 221.
    Accept,
    /// Refuses the recipient with 550.
    RefuseRcpt,
}

pub struct SmtpServer {
    addr: SocketAddr,
    sessions: mpsc::Receiver<Vec<String>>,
}

impl SmtpServer {
    pub fn start(script: Script) -> SmtpServer {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = l.local_addr().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for conn in l.incoming().flatten() {
                let tx = tx.clone();
                std::thread::spawn(move || {
                    let lines = serve(conn, script);
                    let _ = tx.send(lines);
                });
            }
        });
        SmtpServer { addr, sessions: rx }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The lines of the next finished session.
    pub fn next_session(&self, wait: Duration) -> Option<Vec<String>> {
        self.sessions.recv_timeout(wait).ok()
    }
}

/// One session: the client's lines, CRLF kept.
fn serve(mut conn: TcpStream, script: Script) -> Vec<String> {
    conn.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut got = Vec::new();
    let send = |c: &mut TcpStream, text: &str| c.write_all(text.as_bytes());
    if send(&mut conn, "220 test.smtp ESMTP ready\r\n").is_err() {
        return got;
    }
    let mut in_data = false;
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return got,
            Ok(_) => {}
        }
        got.push(line.clone());
        let reply = if in_data {
            if line != ".\r\n" {
                continue;
            }
            in_data = false;
            "250 2.0.0 queued\r\n"
        } else if line.starts_with("HELO") || line.starts_with("EHLO") {
            "250-test.smtp greets you\r\n250-PIPELINING\r\n250 8BITMIME\r\n"
        } else if line.starts_with("MAIL FROM:") {
            "250 2.1.0 ok\r\n"
        } else if line.starts_with("RCPT TO:") && script == Script::RefuseRcpt {
            "550 5.1.1 no such user\r\n"
        } else if line.starts_with("RCPT TO:") {
            "250 2.1.5 ok\r\n"
        } else if line.starts_with("DATA") {
            in_data = true;
            "354 end data with <CR><LF>.<CR><LF>\r\n"
        } else if line.starts_with("QUIT") {
            let _ = send(&mut conn, "221 2.0.0 bye\r\n");
            return got;
        } else {
            "500 unknown command\r\n"
        };
        if send(&mut conn, reply).is_err() {
            return got;
        }
    }
}
