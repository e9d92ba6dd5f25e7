//! Check result codes, as `show stat` (`check_status`) and the state-change messages
//! name them, and the outcome of one check. HAProxy counterpart: `check_statuses[]`
//! (src/check.c).

/// The outcome of one check: status, code (the HTTP status, 0 when none) and `info`
/// text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub status: CheckStatus,
    pub code: u16,
    pub desc: String,
}

impl Outcome {
    pub fn new(status: CheckStatus, desc: impl Into<String>) -> Outcome {
        Outcome { status, code: 0, desc: desc.into() }
    }
}

/// The outcome class of a check status (HAProxy's `CHK_RES_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckResult {
    Failed,
    Passed,
    /// Passed, but the server asks for no new traffic (404 with `disable-on-404`).
    CondPass,
}

/// A finished check's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckStatus {
    /// A passive check (`observe`) counted enough errors.
    Hana,
    SockErr,
    L4Ok,
    L4Tout,
    L4Con,
    /// TLS handshake done (`check-ssl` without a layer 7 check).
    L6Ok,
    /// TLS handshake timed out.
    L6Tout,
    /// TLS handshake failed (certificate refused, no common version...).
    L6Rsp,
    L7Tout,
    L7Rsp,
    L7Ok,
    L7OkC,
    L7Sts,
    /// The external check's command failed (its exit status is the code).
    ProcErr,
    /// The external check's command outlived the check's time.
    ProcTout,
    /// The external check's command exited with 0.
    ProcOk,
}

impl CheckResult {
    /// HAProxy's `CHK_RES_*` number (`show servers state`).
    pub fn id(self) -> u8 {
        match self {
            CheckResult::Failed => 2,
            CheckResult::Passed => 3,
            CheckResult::CondPass => 4,
        }
    }
}

impl CheckStatus {
    /// HAProxy's `HCHK_STATUS_*` number (`show servers state`).
    pub fn id(self) -> u8 {
        match self {
            CheckStatus::Hana => 4,
            CheckStatus::SockErr => 5,
            CheckStatus::L4Ok => 6,
            CheckStatus::L4Tout => 7,
            CheckStatus::L4Con => 8,
            CheckStatus::L6Ok => 9,
            CheckStatus::L6Tout => 10,
            CheckStatus::L6Rsp => 11,
            CheckStatus::L7Tout => 12,
            CheckStatus::L7Rsp => 13,
            CheckStatus::L7Ok => 15,
            CheckStatus::L7OkC => 16,
            CheckStatus::L7Sts => 17,
            CheckStatus::ProcErr => 18,
            CheckStatus::ProcTout => 19,
            CheckStatus::ProcOk => 20,
        }
    }

    /// The short code of `show stat` (`L4OK`, `L7STS`...).
    pub fn code(self) -> &'static str {
        match self {
            CheckStatus::Hana => "HANA",
            CheckStatus::SockErr => "SOCKERR",
            CheckStatus::L4Ok => "L4OK",
            CheckStatus::L4Tout => "L4TOUT",
            CheckStatus::L4Con => "L4CON",
            CheckStatus::L6Ok => "L6OK",
            CheckStatus::L6Tout => "L6TOUT",
            CheckStatus::L6Rsp => "L6RSP",
            CheckStatus::L7Tout => "L7TOUT",
            CheckStatus::L7Rsp => "L7RSP",
            CheckStatus::L7Ok => "L7OK",
            CheckStatus::L7OkC => "L7OKC",
            CheckStatus::L7Sts => "L7STS",
            CheckStatus::ProcErr => "PROCERR",
            CheckStatus::ProcTout => "PROCTOUT",
            CheckStatus::ProcOk => "PROCOK",
        }
    }

    /// The `reason:` text of the messages.
    pub fn description(self) -> &'static str {
        match self {
            CheckStatus::Hana => "Health analyze",
            CheckStatus::SockErr => "Socket error",
            CheckStatus::L4Ok => "Layer4 check passed",
            CheckStatus::L4Tout => "Layer4 timeout",
            CheckStatus::L4Con => "Layer4 connection problem",
            CheckStatus::L6Ok => "Layer6 check passed",
            CheckStatus::L6Tout => "Layer6 timeout",
            CheckStatus::L6Rsp => "Layer6 invalid response",
            CheckStatus::L7Tout => "Layer7 timeout",
            CheckStatus::L7Rsp => "Layer7 invalid response",
            CheckStatus::L7Ok => "Layer7 check passed",
            CheckStatus::L7OkC => "Layer7 check conditionally passed",
            CheckStatus::L7Sts => "Layer7 wrong status",
            CheckStatus::ProcErr => "External check error",
            CheckStatus::ProcTout => "External check timeout",
            CheckStatus::ProcOk => "External check passed",
        }
    }

    pub fn result(self) -> CheckResult {
        match self {
            CheckStatus::L4Ok | CheckStatus::L6Ok | CheckStatus::L7Ok | CheckStatus::ProcOk => CheckResult::Passed,
            CheckStatus::L7OkC => CheckResult::CondPass,
            _ => CheckResult::Failed,
        }
    }

    /// Whether the status carries an HTTP code (`code: N` in messages): HAProxy's
    /// statuses from `HCHK_STATUS_L57DATA` on.
    pub fn has_code(self) -> bool {
        matches!(
            self,
            CheckStatus::L7Ok
                | CheckStatus::L7OkC
                | CheckStatus::L7Sts
                | CheckStatus::ProcErr
                | CheckStatus::ProcTout
                | CheckStatus::ProcOk
        )
    }
}
