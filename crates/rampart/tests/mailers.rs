//! Email alerts (`mailers` sections, `email-alert`): a server going DOWN is mailed to
//! a test SMTP server with HAProxy 2.6's commands and text, the same as haproxy sends
//! for the same configuration; a mailer that refuses is logged and nothing else
//! breaks. HAProxy counterpart: src/mailers.c.

mod smtp_server;

use std::time::Duration;

use rampart_testkit::{haproxy_or_skip, patience, Proxy, Running};
use smtp_server::{Script, SmtpServer};

const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");

/// A backend whose only server refuses connections (port 1): DOWN at its first check.
fn config(level: &str) -> String {
    format!(
        "defaults\n mode http\n timeout client 5s\n timeout server 5s\n timeout connect 1s\n\
         frontend fe1\n bind fd@${{fe1}}\n default_backend be1\n\
         backend be1\n email-alert mailers mymailers\n{level}\
         \x20email-alert from from@domain.tld\n email-alert to to@domain.tld\n email-alert myhostname rampart.test\n\
         \x20server srv1 127.0.0.1:1 check inter 100ms rise 1 fall 1\n\
         mailers mymailers\n mailer smtp1 ${{smtp_addr}}:${{smtp_port}}\n timeout mail 5s\n"
    )
}

fn start(binary: &str, smtp: &SmtpServer, level: &str) -> Running {
    Proxy::new(binary)
        .listener("fe1")
        .backend("smtp", smtp.addr())
        .config(&config(level))
        .start()
        .expect("proxy starts")
}

/// The session with the `Date:` value and the check duration blanked.
fn normalized(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .map(|l| {
            if l.starts_with("Date: ") {
                return "Date: <date>\r\n".to_owned();
            }
            match l.find("check duration: ") {
                Some(i) => {
                    let rest = &l[i + 16..];
                    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
                    format!("{}check duration: Nms{}", &l[..i], &rest[digits + 2..])
                }
                None => l.clone(),
            }
        })
        .collect()
}

const DOWN: &str = "Server be1/srv1 is DOWN, reason: Layer4 connection problem, info: \"Connection refused\", \
    check duration: Nms. 0 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue";

fn expected() -> Vec<String> {
    [
        "HELO rampart.test\r\n".to_owned(),
        "MAIL FROM:<from@domain.tld>\r\n".to_owned(),
        "RCPT TO:<to@domain.tld>\r\n".to_owned(),
        "DATA\r\n".to_owned(),
        "From: from@domain.tld\r\n".to_owned(),
        "To: to@domain.tld\r\n".to_owned(),
        "Date: <date>\r\n".to_owned(),
        format!("Subject: [HAProxy Alert] {DOWN}\r\n"),
        "\r\n".to_owned(),
        format!("{DOWN}\r\n"),
        "\r\n".to_owned(),
        ".\r\n".to_owned(),
        "QUIT\r\n".to_owned(),
    ]
    .to_vec()
}

#[test]
fn a_server_going_down_is_mailed_with_haproxy_text() {
    let smtp = SmtpServer::start(Script::Accept);
    let proxy = start(RAMPART, &smtp, "");
    let session = smtp.next_session(patience() * 2).unwrap_or_else(|| panic!("no mail; {}", proxy.output()));
    assert_eq!(normalized(&session), expected());
    let date = session.iter().find(|l| l.starts_with("Date: ")).unwrap();
    // `%a, %d %b %Y %T %z (%Z)`
    assert!(date.trim_end().ends_with(')') && (date.contains(" +") || date.contains(" -")), "{date}");
    // the default level (alert) mails DOWN only: nothing else comes
    assert!(smtp.next_session(Duration::from_millis(500)).is_none());
}

#[test]
fn level_info_also_mails_the_health_check_messages() {
    let smtp = SmtpServer::start(Script::Accept);
    let proxy = Proxy::new(RAMPART)
        .listener("fe1")
        .backend("smtp", smtp.addr())
        .config(&config(" email-alert level info\n option log-health-checks\n"))
        .start()
        .expect("proxy starts");
    let first = smtp.next_session(patience() * 2).unwrap_or_else(|| panic!("no mail; {}", proxy.output()));
    let subject = first.iter().find(|l| l.starts_with("Subject: ")).unwrap();
    assert!(
        subject.starts_with(
            "Subject: [HAProxy Alert] Health check for server be1/srv1 failed, reason: Layer4 connection problem"
        ),
        "{subject}"
    );
    // as HAProxy, the DOWN message leaves the reason to the health check's message
    let second = smtp.next_session(patience() * 2).expect("the DOWN mail");
    let subject = second.iter().find(|l| l.starts_with("Subject: ")).unwrap();
    assert_eq!(
        subject,
        "Subject: [HAProxy Alert] Server be1/srv1 is DOWN. 0 active and 0 backup servers left. \
         0 sessions active, 0 requeued, 0 remaining in queue\r\n"
    );
}

#[test]
fn a_refusing_mailer_is_logged() {
    let smtp = SmtpServer::start(Script::RefuseRcpt);
    let proxy = start(RAMPART, &smtp, "");
    let session = smtp.next_session(patience() * 2).expect("a session");
    assert_eq!(session.last().map(String::as_str), Some("RCPT TO:<to@domain.tld>\r\n"));
    assert!(
        proxy.wait_output(
            "Email alert [be1] to mailer 'smtp1' failed: expected 250 after RCPT TO, got '550 5.1.1 no such user'",
            patience()
        ),
        "{}",
        proxy.output()
    );
    assert!(proxy.output().contains("Server be1/srv1 is DOWN"));
}

#[test]
fn haproxy_sends_the_same_mail() {
    let Some(haproxy) = haproxy_or_skip("haproxy_sends_the_same_mail") else { return };
    let smtp = SmtpServer::start(Script::Accept);
    let proxy = start(haproxy.to_str().unwrap(), &smtp, "");
    let session = smtp.next_session(patience() * 2).unwrap_or_else(|| panic!("no mail; {}", proxy.output()));
    assert_eq!(normalized(&session), expected());
}
