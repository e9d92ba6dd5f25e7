//! `set-mark`, `set-tos` (HAProxy 2.6) and `set-fc-mark`, `set-fc-tos` (HAProxy 3.x):
//! the netfilter mark and the TOS / traffic class of the client connection's socket.
//! Actions never see a socket: a rule notes the value in an [`FcPending`] and whoever
//! holds the socket (the session for `tcp-request connection|session`, the client mux
//! for the stream's rules) sets it once the rule list ran (`crate::io::set_fc`).
//! HAProxy counterparts: `tcp_action_set_mark()`, `tcp_action_set_tos()`
//! (src/tcp_act.c), `conn_set_mark()`, `conn_set_tos()` (include/haproxy/connection.h).

use rampart_cfg::model::FcOpt;

use crate::sample::cast::cast;
use crate::sample::expr::Expr;
use crate::sample::{Sample, SampleCtx, SmpType};

/// A compiled `set-mark` / `set-tos` (or 3.x `set-fc-*`).
#[derive(Debug)]
pub struct FcSet {
    pub what: FcOpt,
    pub value: FcVal,
}

/// The value: a number, or an expression evaluated when the rule runs.
#[derive(Debug)]
pub enum FcVal {
    Int(u32),
    Expr(Expr),
}

/// The socket options rules asked for and that are not set yet; the last rule wins.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct FcPending {
    pub mark: Option<u32>,
    pub tos: Option<u32>,
}

impl FcPending {
    /// What is pending, if anything, leaving nothing pending.
    pub fn take(&mut self) -> Option<FcPending> {
        if self.mark.is_none() && self.tos.is_none() {
            return None;
        }
        Some(std::mem::take(self))
    }
}

impl FcSet {
    /// Notes the value in `into`; an expression without an integer value changes nothing
    /// (as HAProxy 3.x).
    pub fn run(&self, ctx: &SampleCtx<'_>, into: &mut FcPending) {
        let v = match &self.value {
            FcVal::Int(v) => *v,
            FcVal::Expr(e) => match e.eval(ctx).and_then(|s| cast(s, SmpType::Sint)) {
                Some(Sample::Sint(v)) => v as u32,
                _ => return,
            },
        };
        match self.what {
            FcOpt::Mark => into.mark = Some(v),
            FcOpt::Tos => into.tos = Some(v),
        }
    }
}
