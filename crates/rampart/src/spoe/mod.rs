//! SPOE engines as the rules see them: each `filter spoe` line compiled once (the
//! messages' argument expressions and conditions, the groups, the variables the agent's
//! answers and errors go to), the NOTIFY frame a set of messages makes from a stream's
//! sample context, and how an agent's answer (or failure) becomes variables. No
//! sockets here: the agent connections live in `filter::spoe`, and the stream awaits
//! them.
//! HAProxy counterpart: src/flt_spoe.c (`spoe_encode_messages()`,
//! `spoe_process_actions()`, `spoe_set_var()`, `spoe_handle_processing_error()`).
//!
//! PERF: a proxy without `filter spoe` has no engine: nothing here runs.

pub mod compile;

use std::time::Duration;

use rampart_proto::spoe::{frag, Action, Data, NotifyWriter, VarScope};

use crate::acl::Cond;
use crate::sample::expr::Expr;
use crate::sample::vars::{parse_name, SetCond, VarRef, Vars};
use crate::sample::{Sample, SampleCtx};

pub use rampart_cfg::model::SpoeEvent;

/// Index of an event in [`Engine::events`].
pub fn event_index(ev: SpoeEvent) -> usize {
    SpoeEvent::ALL.iter().position(|&e| e == ev).unwrap_or(0)
}

/// One SPOE engine (a `filter spoe` line and its agent).
#[derive(Debug)]
pub struct Engine {
    /// The engine's id (`engine <name>`, else the agent's name).
    pub id: Box<str>,
    pub agent: Box<str>,
    /// The backend of `use-backend` (index into the runtime's proxies).
    pub be: usize,
    pub messages: Box<[Message]>,
    pub groups: Box<[Group]>,
    /// The messages each event sends (by [`event_index`]).
    pub events: [Box<[usize]>; 7],
    pub var_prefix: Box<str>,
    /// `option set-on-error` / `set-process-time` / `set-total-time`, as `txn.` variables.
    pub on_error: Option<VarRef>,
    pub process_time: Option<VarRef>,
    pub total_time: Option<VarRef>,
    pub continue_on_error: bool,
    /// `option async` / `option pipelining` (both on by default): announced in the
    /// HELLO; what the agent announces back decides how its connections are used.
    pub async_mode: bool,
    pub pipelining: bool,
    /// `option send-frag-payload` (on by default): a NOTIFY larger than the
    /// max-frame-size goes out fragmented to an agent that announced `fragmentation`.
    pub send_frag_payload: bool,
    /// `max-waiting-frames`: NOTIFY frames in flight on one pipelined connection.
    pub max_waiting_frames: u32,
    /// `maxconnrate` / `maxerrrate` per thread and second (0: unlimited).
    pub maxconnrate: u32,
    pub maxerrrate: u32,
    pub max_frame_size: u32,
    pub timeout_hello: Option<Duration>,
    pub timeout_idle: Option<Duration>,
    pub timeout_processing: Option<Duration>,
    /// A process-wide number for the per-thread idle connection pools.
    pub key: usize,
}

/// A `spoe-message`.
#[derive(Debug)]
pub struct Message {
    pub name: Box<str>,
    /// `[name=]expr`, the name empty when not given.
    pub args: Box<[(Box<str>, Expr)]>,
    pub cond: Option<Cond>,
}

/// A `spoe-group`: indices into [`Engine::messages`].
#[derive(Debug)]
pub struct Group {
    pub name: Box<str>,
    pub messages: Box<[usize]>,
}

/// A `send-spoe-group` the stream is to send: the engine (index into the proxy's
/// engines) and its group.
#[derive(Debug, Clone, Copy)]
pub struct Ask {
    pub engine: usize,
    pub group: usize,
}

/// A stream's SPOE state, boxed in its state only once a rule or event uses SPOE.
#[derive(Debug, Default)]
pub struct SpoeTxn {
    /// A `send-spoe-group` waiting for the stream to send it.
    pub pending: Option<Ask>,
    /// The stream sent the group: the rule that asked goes on.
    pub done: bool,
    /// Engines disabled for the transaction by an error without
    /// `option continue-on-error` (a bit per engine index, up to 64).
    pub disabled: u64,
    /// Time spent waiting for agents in this transaction.
    pub total: Duration,
    /// The frame-id of each engine's next NOTIFY (by engine key), from 1.
    pub frame_ids: Vec<(usize, u64)>,
}

impl SpoeTxn {
    /// The frame-id the next NOTIFY of engine `key` carries (HAProxy: per stream and
    /// engine, from 1).
    // COMPAT: HAProxy 2.6 reuses the frame-id of a NOTIFY that failed; rampart takes the
    // next one, so a late ACK of a failed frame never answers the next one.
    pub fn next_frame_id(&mut self, key: usize) -> u64 {
        match self.frame_ids.iter_mut().find(|(k, _)| *k == key) {
            Some((_, id)) => {
                *id += 1;
                *id
            }
            None => {
                self.frame_ids.push((key, 1));
                1
            }
        }
    }

    pub fn is_disabled(&self, engine: usize) -> bool {
        engine < 64 && self.disabled & (1 << engine) != 0
    }
}

/// How an exchange with an agent ended.
#[derive(Debug)]
pub enum Outcome {
    /// The ACK payload.
    Ack(Vec<u8>),
    /// The SPOE error code `set-on-error` reports: 1 timeout, 2 resources, 3 frame too
    /// big, 255 unknown, 256 + N a SPOP status N.
    Error(u32),
}

/// Error codes of `set-on-error` (SPOE.txt, `option set-on-error`).
pub const ERR_TIMEOUT: u32 = 1;
pub const ERR_RES: u32 = 2;
pub const ERR_TOO_BIG: u32 = 3;
pub const ERR_UNKNOWN: u32 = 255;
/// A SPOP status `n` is reported as `ERR_SPOP + n`.
pub const ERR_SPOP: u32 = 256;

impl Engine {
    /// Builds the NOTIFY frame of `msgs` (those whose condition holds) in `out`, its
    /// stream-id and frame-id 0 (one byte each, for the connection to rewrite):
    /// `Ok(false)` when none applies (nothing to send).
    pub fn encode(&self, msgs: &[usize], ctx: &SampleCtx<'_>, out: &mut Vec<u8>) -> Result<bool, u32> {
        out.clear();
        let mut w = NotifyWriter::new(out, 0, 0);
        let mut any = false;
        for &i in msgs {
            let m = &self.messages[i];
            if m.cond.as_ref().is_some_and(|c| !c.eval(ctx)) {
                continue;
            }
            any = true;
            w.message(&m.name);
            for (name, expr) in m.args.iter() {
                let smp = expr.eval(ctx);
                w.arg(name.as_bytes(), &to_data(smp.as_ref()));
            }
        }
        w.finish(u32::MAX).map_err(|_| ERR_TOO_BIG)?;
        // as HAProxy, the payload is cut in frames of the max-frame-size less 32 bytes:
        // an item larger than that is too big, and so is a payload needing several
        // frames without `option send-frag-payload`
        let payload = out.get(11..).unwrap_or_default();
        match frag::cuts(payload, frag::room(self.max_frame_size)) {
            Ok(sizes) if sizes.len() == 1 || self.send_frag_payload => Ok(any),
            _ => Err(ERR_TOO_BIG),
        }
    }

    /// Applies what an exchange gave: the ACK's actions as variables (prefixed), or
    /// the error code in `set-on-error`; then `set-process-time`. `Err` on an error.
    pub fn apply(&self, outcome: &Outcome, elapsed: Duration, vars: &Vars<'_>) -> Result<(), u32> {
        let res = match outcome {
            Outcome::Ack(payload) => match rampart_proto::spoe::frame::decode_ack(payload) {
                Ok(acts) => {
                    for a in &acts {
                        self.apply_action(a, vars);
                    }
                    Ok(())
                }
                Err(e) => Err(ERR_SPOP + e.status()),
            },
            Outcome::Error(code) => Err(*code),
        };
        if let (Err(code), Some(v)) = (&res, &self.on_error) {
            vars.set(v, &Sample::Sint(i64::from(*code)), SetCond::NONE);
        }
        // as HAProxy, the processing time is reported on errors too
        if let Some(v) = &self.process_time {
            vars.set(v, &Sample::Sint(elapsed.as_millis() as i64), SetCond::NONE);
        }
        res
    }

    /// `set-total-time`: the time the transaction spent on this engine's agents.
    pub fn set_total(&self, total: Duration, vars: &Vars<'_>) {
        if let Some(v) = &self.total_time {
            vars.set(v, &Sample::Sint(total.as_millis() as i64), SetCond::NONE);
        }
    }

    fn apply_action(&self, a: &Action<'_>, vars: &Vars<'_>) {
        let (scope, name) = match a {
            Action::SetVar { scope, name, .. } | Action::UnsetVar { scope, name } => (*scope, *name),
        };
        let full = self.var_name(scope, name);
        let Ok(var) = parse_name(full.as_bytes()) else { return };
        match a {
            Action::SetVar { value, .. } => {
                let Some(smp) = from_data(value) else { return };
                // COMPAT: as HAProxy's `vars_set_by_name_ifexist()`, an agent creates
                // variables of every scope but `proc`, which must exist already
                let cond = if scope == VarScope::Proc { SetCond(SetCond::IFEXISTS) } else { SetCond::NONE };
                vars.set(&var, &smp, cond);
            }
            Action::UnsetVar { .. } => {
                vars.unset(&var);
            }
        }
    }

    /// `<scope>.<prefix>.<name>`.
    fn var_name(&self, scope: VarScope, name: &[u8]) -> String {
        format!("{}.{}.{}", scope.name(), self.var_prefix, String::from_utf8_lossy(name))
    }
}

/// A sample as SPOP typed data; no sample is NULL.
fn to_data<'a>(smp: Option<&'a Sample<'a>>) -> Data<'a> {
    match smp {
        None => Data::Null,
        Some(Sample::Bool(b)) => Data::Bool(*b),
        Some(Sample::Sint(v)) => Data::Int64(*v),
        Some(Sample::Ipv4(a)) => Data::Ipv4(a.octets()),
        Some(Sample::Ipv6(a)) => Data::Ipv6(a.octets()),
        Some(Sample::Str(s)) => Data::Str(s),
        Some(Sample::Bin(s)) => Data::Bin(s),
        Some(Sample::Meth(_, s)) => Data::Str(s),
    }
}

/// Typed data as a sample (HAProxy's `spoe_decode_data()` types); NULL sets nothing.
fn from_data<'a>(d: &Data<'a>) -> Option<Sample<'a>> {
    Some(match *d {
        Data::Null => return None,
        Data::Bool(b) => Sample::Bool(b),
        Data::Int32(v) => Sample::Sint(i64::from(v)),
        Data::Uint32(v) => Sample::Sint(i64::from(v)),
        Data::Int64(v) => Sample::Sint(v),
        Data::Uint64(v) => Sample::Sint(v as i64),
        Data::Ipv4(a) => Sample::Ipv4(a.into()),
        Data::Ipv6(a) => Sample::Ipv6(a.into()),
        Data::Str(s) => Sample::Str(s.into()),
        Data::Bin(s) => Sample::Bin(s.into()),
    })
}

#[cfg(test)]
mod tests;
