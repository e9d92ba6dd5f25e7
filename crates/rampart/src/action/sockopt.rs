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

/// A compiled `set-mark` / `set-tos` (or 3.x `set-fc-*`, `set-bc-*`).
#[derive(Debug)]
pub struct FcSet {
    pub what: FcOpt,
    pub value: FcVal,
    /// `set-bc-*`: for the server connection the stream will open.
    pub bc: bool,
}

/// The value: a number, or an expression evaluated when the rule runs.
#[derive(Debug)]
pub enum FcVal {
    Int(u32),
    Expr(Expr),
}

/// The socket options rules asked for and that are not set yet; the last rule wins.
/// `back` (`set-bc-*`) stays with the stream: its server connection is opened with
/// them, and only an idle connection opened with the same ones is reused for it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct FcPending {
    pub mark: Option<u32>,
    pub tos: Option<u32>,
    pub back: BcOpts,
}

/// The server connection's mark and TOS a stream asked for (`set-bc-mark`,
/// `set-bc-tos`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BcOpts {
    pub mark: Option<u32>,
    pub tos: Option<u32>,
}

impl FcPending {
    /// The client socket's options pending, if any, leaving none pending (the server
    /// connection's stay).
    pub fn take(&mut self) -> Option<FcPending> {
        if self.mark.is_none() && self.tos.is_none() {
            return None;
        }
        let front = FcPending { mark: self.mark.take(), tos: self.tos.take(), back: BcOpts::default() };
        Some(front)
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
        match (self.what, self.bc) {
            (FcOpt::Mark, false) => into.mark = Some(v),
            (FcOpt::Tos, false) => into.tos = Some(v),
            (FcOpt::Mark, true) => into.back.mark = Some(v),
            (FcOpt::Tos, true) => into.back.tos = Some(v),
        }
    }
}
