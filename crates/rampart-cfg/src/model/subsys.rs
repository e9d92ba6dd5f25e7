//! The side subsystems of HAProxy 2.6 that live off the request path: `mailers`
//! sections and a proxy's `email-alert` settings, external checks (`external-check`),
//! and `program` sections (processes the master of master-worker mode runs).
//! HAProxy counterparts: `struct mailers` (include/haproxy/mailers-t.h), the
//! `email_alert` part of `struct proxy`, `check_command`/`check_path` (proxy-t.h),
//! `struct mworker_proc` of type `PROC_O_TYPE_PROG` (mworker-t.h).

use std::net::SocketAddr;
use std::time::Duration;

use crate::span::Span;

/// HAProxy's default `timeout mail` of a `mailers` section.
pub const DEFAULT_MAIL_TIMEOUT: Duration = Duration::from_secs(10);

/// A `mailers <name>` section: the SMTP servers alerts are sent to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mailers {
    pub name: String,
    /// `mailer <name> <ip>:<port>` lines, in order.
    pub mailers: Vec<Mailer>,
    /// `timeout mail <time>`: the whole exchange with one mailer (10s by default).
    pub timeout: Duration,
    pub span: Span,
}

/// One `mailer` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mailer {
    pub name: String,
    pub addr: SocketAddr,
    pub span: Span,
}

/// A proxy's `email-alert` lines, as written (inherited from `defaults`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EmailAlert {
    /// `email-alert mailers <name>`.
    pub mailers: Option<String>,
    /// Index of that section in [`super::Config::mailers`], resolved by the final checks.
    pub mailers_idx: Option<usize>,
    pub from: Option<String>,
    pub to: Option<String>,
    /// `email-alert myhostname`; the host name when unset.
    pub myhostname: Option<String>,
    /// `email-alert level`: the syslog level at or below which messages are mailed
    /// (`alert`, 1, when unset: see [`EmailAlert::level`]).
    pub level: Option<u8>,
    /// Some `email-alert` line was written (HAProxy's `email_alert.set`).
    pub set: bool,
}

impl EmailAlert {
    /// The syslog level at or below which messages are mailed.
    pub fn level(&self) -> u8 {
        self.level.unwrap_or(1)
    }

    /// Alerts are sent: the mailers section was found and `from` and `to` are set.
    pub fn enabled(&self) -> bool {
        self.mailers_idx.is_some() && self.from.is_some() && self.to.is_some()
    }
}

/// `external-check command|path` of a proxy (run with `option external-check`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExternalCheck {
    pub command: Option<String>,
    /// `external-check path`: the `PATH` the command gets (and is searched in).
    pub path: Option<String>,
}

/// A `program <name>` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    pub name: String,
    /// `command <path> [args...]`.
    pub command: Vec<String>,
    /// `user`, `group`: names, resolved by the daemon when it starts the program.
    pub user: Option<String>,
    pub group: Option<String>,
    /// `option start-on-reload` (the default): a reload starts the program anew;
    /// `no option start-on-reload` keeps the running one.
    pub start_on_reload: bool,
    pub span: Span,
}
