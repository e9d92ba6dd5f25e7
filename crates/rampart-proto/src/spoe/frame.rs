//! The payloads of SPOP frames (SPOE.txt §3.2): HAPROXY-HELLO / AGENT-HELLO (version,
//! max-frame-size, capabilities), HAPROXY-DISCONNECT / AGENT-DISCONNECT (status code,
//! message), NOTIFY (messages with their arguments) and ACK (actions: set-var,
//! unset-var). Both directions are written and read, so a test agent and the fuzz
//! target use the same code as the runtime.
//! HAProxy counterpart: `spoe_prepare_hahello_frame()`, `spoe_handle_agenthello_frame()`,
//! `spoe_handle_agentdiscon_frame()`, `spoe_encode_message()`,
//! `spoe_handle_agentack_frame()`, `spoe_process_actions()` (src/flt_spoe.c).

use super::data::{put_bytes, put_data, put_kv, Data, Reader};
use super::{begin_frame, end_frame, status, Error, FrameType, FLAG_FIN};

/// What HAProxy announces in its HELLO.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HaproxyHello<'a> {
    /// `supported-versions` (HAProxy: "2.0").
    pub versions: &'a str,
    pub max_frame_size: u32,
    /// Comma-separated: `pipelining`, `async`, `fragmentation`.
    pub capabilities: &'a str,
    /// `healthcheck`: the agent answers and closes.
    pub healthcheck: bool,
    /// `engine-id`: the SPOE engine's unique id.
    pub engine_id: Option<&'a str>,
}

impl HaproxyHello<'_> {
    /// The whole frame (length included).
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), Error> {
        let at = begin_frame(out, FrameType::HaproxyHello, FLAG_FIN, 0, 0);
        put_kv(out, b"supported-versions", &Data::Str(self.versions.as_bytes()));
        put_kv(out, b"max-frame-size", &Data::Uint32(self.max_frame_size));
        put_kv(out, b"capabilities", &Data::Str(self.capabilities.as_bytes()));
        if self.healthcheck {
            put_kv(out, b"healthcheck", &Data::Bool(true));
        }
        if let Some(id) = self.engine_id {
            put_kv(out, b"engine-id", &Data::Str(id.as_bytes()));
        }
        end_frame(out, at, self.max_frame_size.max(super::MAX_FRAME_SIZE))
    }

    /// Reads a HAPROXY-HELLO payload (a test agent's side); unknown keys are skipped.
    pub fn decode(payload: &[u8]) -> Result<HaproxyHello<'_>, Error> {
        let mut h =
            HaproxyHello { versions: "", max_frame_size: 0, capabilities: "", healthcheck: false, engine_id: None };
        let mut r = Reader::new(payload);
        while !r.is_empty() {
            match r.kv()? {
                (b"supported-versions", Data::Str(s)) => h.versions = utf8(s)?,
                (b"max-frame-size", d) => h.max_frame_size = uint(d).ok_or(Error::Invalid("max-frame-size"))?,
                (b"capabilities", Data::Str(s)) => h.capabilities = utf8(s)?,
                (b"healthcheck", Data::Bool(b)) => h.healthcheck = b,
                (b"engine-id", Data::Str(s)) => h.engine_id = Some(utf8(s)?),
                _ => {}
            }
        }
        Ok(h)
    }
}

/// What an agent answers in its HELLO.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentHello<'a> {
    pub version: &'a str,
    pub max_frame_size: u32,
    pub capabilities: &'a str,
}

impl AgentHello<'_> {
    /// Reads an AGENT-HELLO payload and checks it as HAProxy does: `Err` is the SPOP
    /// status code to disconnect with. `our_max` is the max-frame-size HAProxy sent.
    pub fn decode(payload: &[u8], our_max: u32) -> Result<AgentHello<'_>, u32> {
        let (mut version, mut size, mut caps) = (None, None, None);
        let mut r = Reader::new(payload);
        while !r.is_empty() {
            match r.kv().map_err(|_| status::INVALID)? {
                (b"version", Data::Str(s)) => version = Some(utf8(s).map_err(|_| status::INVALID)?),
                (b"version", _) => return Err(status::INVALID),
                (b"max-frame-size", d) => size = Some(uint(d).ok_or(status::INVALID)?),
                (b"capabilities", Data::Str(s)) => caps = Some(utf8(s).map_err(|_| status::INVALID)?),
                (b"capabilities", _) => return Err(status::INVALID),
                _ => {}
            }
        }
        let version = version.ok_or(status::NO_VSN)?;
        if version_number(version) != Some(2000) {
            return Err(status::BAD_VSN);
        }
        let max_frame_size = size.ok_or(status::NO_FRAME_SIZE)?;
        if !(super::MIN_FRAME_SIZE..=our_max).contains(&max_frame_size) {
            return Err(status::BAD_FRAME_SIZE);
        }
        Ok(AgentHello { version, max_frame_size, capabilities: caps.unwrap_or("") })
    }

    /// The whole frame (an agent's side).
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), Error> {
        let at = begin_frame(out, FrameType::AgentHello, FLAG_FIN, 0, 0);
        put_kv(out, b"version", &Data::Str(self.version.as_bytes()));
        put_kv(out, b"max-frame-size", &Data::Uint32(self.max_frame_size));
        put_kv(out, b"capabilities", &Data::Str(self.capabilities.as_bytes()));
        end_frame(out, at, super::MAX_FRAME_SIZE)
    }

    /// Whether the agent announced capability `cap`.
    pub fn has(&self, cap: &str) -> bool {
        self.capabilities.split(',').any(|c| c.trim() == cap)
    }
}

/// `MAJOR.MINOR` as MAJOR * 1000 + MINOR (HAProxy's `spoe_str_to_vsn()`).
pub fn version_number(v: &str) -> Option<u32> {
    let (maj, min) = v.trim().split_once('.')?;
    let (maj, min): (u32, u32) = (maj.parse().ok()?, min.parse().ok()?);
    (min < 1000).then(|| maj.checked_mul(1000)?.checked_add(min)).flatten()
}

/// A DISCONNECT frame's payload, either direction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disconnect<'a> {
    pub status: u32,
    pub message: &'a str,
}

impl Disconnect<'_> {
    pub fn encode(&self, ty: FrameType, out: &mut Vec<u8>) -> Result<(), Error> {
        let at = begin_frame(out, ty, FLAG_FIN, 0, 0);
        put_kv(out, b"status-code", &Data::Uint32(self.status));
        put_kv(out, b"message", &Data::Str(self.message.as_bytes()));
        end_frame(out, at, super::MAX_FRAME_SIZE)
    }

    pub fn decode(payload: &[u8]) -> Result<Disconnect<'_>, Error> {
        let mut d = Disconnect { status: status::UNKNOWN, message: "" };
        let mut r = Reader::new(payload);
        while !r.is_empty() {
            match r.kv()? {
                (b"status-code", v) => d.status = uint(v).ok_or(Error::Invalid("status-code"))?,
                (b"message", Data::Str(s)) => d.message = utf8(s)?,
                _ => {}
            }
        }
        Ok(d)
    }
}

/// Writes a NOTIFY frame: [`NotifyWriter::message`] then its arguments, one
/// [`NotifyWriter::arg`] each, then [`NotifyWriter::finish`].
#[derive(Debug)]
pub struct NotifyWriter<'o> {
    out: &'o mut Vec<u8>,
    at: usize,
    /// Where the current message's argument count is, and the count so far.
    nargs_at: Option<usize>,
}

impl<'o> NotifyWriter<'o> {
    pub fn new(out: &'o mut Vec<u8>, stream_id: u64, frame_id: u64) -> Self {
        let at = begin_frame(out, FrameType::Notify, FLAG_FIN, stream_id, frame_id);
        NotifyWriter { out, at, nargs_at: None }
    }

    /// Starts a message.
    pub fn message(&mut self, name: &str) {
        put_bytes(self.out, name.as_bytes());
        self.nargs_at = Some(self.out.len());
        self.out.push(0);
    }

    /// Adds an argument to the current message (`name` may be empty). At most 255.
    pub fn arg(&mut self, name: &[u8], value: &Data<'_>) {
        let Some(n) = self.nargs_at else { return };
        if self.out[n] == u8::MAX {
            return;
        }
        self.out[n] += 1;
        put_kv(self.out, name, value);
    }

    /// Ends the frame; `Err` when it is larger than `max`.
    pub fn finish(self, max: u32) -> Result<(), Error> {
        end_frame(self.out, self.at, max)
    }
}

/// A NOTIFY's messages: each name with its named arguments.
pub type Messages<'a> = Vec<(&'a [u8], Vec<(&'a [u8], Data<'a>)>)>;

/// Reads a NOTIFY payload (a test agent's side): each message with its arguments.
pub fn decode_notify(payload: &[u8]) -> Result<Messages<'_>, Error> {
    let mut r = Reader::new(payload);
    let mut msgs = Vec::new();
    while !r.is_empty() {
        let name = r.bytes()?;
        let n = r.byte()?;
        let mut args = Vec::with_capacity(usize::from(n));
        for _ in 0..n {
            args.push(r.kv()?);
        }
        msgs.push((name, args));
    }
    Ok(msgs)
}

/// The scope of a variable an action names (SPOE.txt §3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarScope {
    Proc,
    Sess,
    Txn,
    Req,
    Res,
}

impl VarScope {
    pub fn from_code(c: u8) -> Option<VarScope> {
        Some(match c {
            0 => VarScope::Proc,
            1 => VarScope::Sess,
            2 => VarScope::Txn,
            3 => VarScope::Req,
            4 => VarScope::Res,
            _ => return None,
        })
    }

    pub fn code(self) -> u8 {
        self as u8
    }

    /// Its name in a variable name (`sess.`...).
    pub fn name(self) -> &'static str {
        match self {
            VarScope::Proc => "proc",
            VarScope::Sess => "sess",
            VarScope::Txn => "txn",
            VarScope::Req => "req",
            VarScope::Res => "res",
        }
    }
}

/// An action an ACK carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action<'a> {
    SetVar { scope: VarScope, name: &'a [u8], value: Data<'a> },
    UnsetVar { scope: VarScope, name: &'a [u8] },
}

const ACT_SET_VAR: u8 = 1;
const ACT_UNSET_VAR: u8 = 2;

/// Reads an ACK payload: its actions. Like HAProxy, an action of an unknown type or
/// with an unexpected argument count ends the list (what came before applies); a
/// truncated or malformed known action is an error.
pub fn decode_ack(payload: &[u8]) -> Result<Vec<Action<'_>>, Error> {
    let mut r = Reader::new(payload);
    let mut acts = Vec::new();
    while !r.is_empty() {
        let ty = r.byte()?;
        let nargs = r.byte()?;
        let scope = match (ty, nargs) {
            (ACT_SET_VAR, 3) | (ACT_UNSET_VAR, 2) => {
                VarScope::from_code(r.byte()?).ok_or(Error::Invalid("unknown variable scope"))?
            }
            _ => break,
        };
        let name = r.bytes()?;
        acts.push(match ty {
            ACT_SET_VAR => Action::SetVar { scope, name, value: r.data()? },
            _ => Action::UnsetVar { scope, name },
        });
    }
    Ok(acts)
}

/// Writes an ACK frame with `actions` (a test agent's side).
pub fn encode_ack(out: &mut Vec<u8>, stream_id: u64, frame_id: u64, actions: &[Action<'_>]) -> Result<(), Error> {
    let at = begin_frame(out, FrameType::Ack, FLAG_FIN, stream_id, frame_id);
    for a in actions {
        match *a {
            Action::SetVar { scope, name, value } => {
                out.extend_from_slice(&[ACT_SET_VAR, 3, scope.code()]);
                put_bytes(out, name);
                put_data(out, &value);
            }
            Action::UnsetVar { scope, name } => {
                out.extend_from_slice(&[ACT_UNSET_VAR, 2, scope.code()]);
                put_bytes(out, name);
            }
        }
    }
    end_frame(out, at, super::MAX_FRAME_SIZE)
}

fn utf8(b: &[u8]) -> Result<&str, Error> {
    std::str::from_utf8(b).map_err(|_| Error::Invalid("not UTF-8"))
}

/// An unsigned value of any integer type (agents send `max-frame-size` as uint32, some
/// as another integer type).
fn uint(d: Data<'_>) -> Option<u32> {
    match d {
        Data::Uint32(v) => Some(v),
        Data::Int32(v) => u32::try_from(v).ok(),
        Data::Uint64(v) => u32::try_from(v).ok(),
        Data::Int64(v) => u32::try_from(v).ok(),
        _ => None,
    }
}
