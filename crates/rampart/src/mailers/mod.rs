//! Email alerts (`mailers` sections, `email-alert` of a proxy): the messages of server
//! state changes mailed over SMTP to every mailer of the proxy's section. Each mailer
//! has a bounded queue drained by one task that talks to it, in order, each exchange
//! within the section's `timeout mail`; a failure is logged and the next alert goes
//! on. Nothing here blocks a thread, and nothing is on the request path.
//! HAProxy counterpart: src/mailers.c (`send_email_alert()`, `enqueue_one_email_alert()`).
//!
//! - `smtp`: one exchange with a mailer (HELO, MAIL FROM, RCPT TO, DATA, QUIT)

mod smtp;

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rampart_cfg::model::{Config, EmailAlert};
use tokio::sync::mpsc;

/// Alerts waiting for one mailer beyond which new ones are dropped (and logged).
const QUEUE: usize = 64;

/// The email alerts of one proxy.
#[derive(Debug)]
pub struct EmailAlertRt {
    proxy: String,
    /// Messages at or below this syslog level are mailed.
    level: u8,
    mail: Arc<Mail>,
    mailers: Vec<MailerRt>,
}

/// What every alert of a proxy shares.
#[derive(Debug)]
struct Mail {
    from: String,
    to: String,
    myhostname: String,
    timeout: Duration,
}

/// One mailer: its address and the queue of its sending task, started with the
/// first alert (on the runtime of the thread that raised it).
#[derive(Debug)]
struct MailerRt {
    name: String,
    addr: SocketAddr,
    queue: OnceLock<mpsc::Sender<String>>,
}

impl EmailAlertRt {
    /// The alerts of proxy `name` configured by `ea`, `None` when not enabled.
    pub fn build(cfg: &Config, name: &str, ea: &EmailAlert) -> Option<EmailAlertRt> {
        let section = &cfg.mailers[ea.mailers_idx?];
        let myhostname = ea.myhostname.clone().unwrap_or_else(|| {
            nix::unistd::gethostname().map(|h| h.to_string_lossy().into_owned()).unwrap_or_default()
        });
        let mail = Mail { from: ea.from.clone()?, to: ea.to.clone()?, myhostname, timeout: section.timeout };
        Some(EmailAlertRt {
            proxy: name.to_owned(),
            level: ea.level(),
            mail: Arc::new(mail),
            mailers: section
                .mailers
                .iter()
                .map(|m| MailerRt { name: m.name.clone(), addr: m.addr, queue: OnceLock::new() })
                .collect(),
        })
    }

    /// Mails `msg` (HAProxy's message without its final period) when `level` is at
    /// or below the configured one. Returns at once.
    pub fn send(&self, level: u8, msg: &str) {
        if level > self.level {
            return;
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            self.failed("?", "no event loop on this thread");
            return;
        };
        for m in &self.mailers {
            let queue = m.queue.get_or_init(|| {
                let (tx, rx) = mpsc::channel(QUEUE);
                rt.spawn(drain(rx, self.proxy.clone(), m.name.clone(), m.addr, self.mail.clone()));
                tx
            });
            if queue.try_send(msg.to_owned()).is_err() {
                self.failed(&m.name, "too many alerts waiting, this one is dropped");
            }
        }
    }

    fn failed(&self, mailer: &str, why: &str) {
        report_failure(&self.proxy, mailer, why);
    }
}

/// Sends the alerts queued for one mailer, one exchange at a time.
async fn drain(mut rx: mpsc::Receiver<String>, proxy: String, name: String, addr: SocketAddr, mail: Arc<Mail>) {
    while let Some(msg) = rx.recv().await {
        let text =
            smtp::Message { helo: &mail.myhostname, from: &mail.from, to: &mail.to, date: &date_now(), subject: &msg };
        match tokio::time::timeout(mail.timeout, smtp::send(addr, &text)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => report_failure(&proxy, &name, &e.to_string()),
            Err(_) => report_failure(&proxy, &name, "timeout mail expired"),
        }
    }
}

/// HAProxy's `Date:` value: `%a, %d %b %Y %T %z (%Z)` in the local time zone.
fn date_now() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let bytes = crate::sample::conv::local_strftime(b"%a, %d %b %Y %T %z (%Z)", now as i64);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A mail that did not go: a warning on stderr and in the `global` logs.
fn report_failure(proxy: &str, mailer: &str, why: &str) {
    let msg = format!("Email alert [{proxy}] to mailer '{mailer}' failed: {why}");
    let line = format!("{}({}) : {msg}.\n", rampart_cfg::Level::Warning.tag(), std::process::id());
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
    crate::log::setup::send_global(crate::log::level::WARNING, &msg);
}
