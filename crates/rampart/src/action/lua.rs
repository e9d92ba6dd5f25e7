//! `http-request lua.<name>`, `http-response lua.<name>` and `http-request use-service
//! lua.<name>`: the rule side of Lua actions and services, and the interface through
//! which the rules call the Lua runtime (`crate::lua` implements [`LuaRunner`] and
//! installs itself once, when a configuration loads a script).
//! HAProxy counterpart: `action_register_lua()`, `action_register_service_http()`
//! (src/hlua.c).
//!
//! PERF: a configuration without `lua-load` has no such action: nothing here runs.

use std::sync::OnceLock;
use std::time::Duration;

use super::http::{Env, Exec};
use super::Flow;
use crate::sample::SampleCtx;

/// A compiled `lua.<name> [args...]` action.
#[derive(Debug)]
pub struct LuaAct {
    /// The action's number among those the scripts registered.
    pub id: usize,
    pub name: Box<str>,
    pub args: Box<[Box<str>]>,
}

/// What a stream keeps of the Lua runtime: the handle of what the Lua states hold for
/// it (a script's private value, a coroutine waiting to be resumed), released with
/// it, and which state its Lua calls run in.
#[derive(Default)]
pub struct Slot {
    pub data: Option<Box<dyn std::any::Any + Send>>,
    /// The kind of state of the stream's first Lua call (action, fetch or converter):
    /// [`KIND_SHARED`], [`KIND_OWN`], or 0 before any. As HAProxy 2.6 (`s->hlua`,
    /// created by the first call), the stream's later calls run in that state: a
    /// function of the other kind fails there.
    pub kind: std::cell::Cell<u8>,
    /// An HTTP service whose response started and goes on in pieces: the stream sends
    /// the head, then drives the script ([`LuaRunner::http_service_piece`]).
    pub stream: Option<HttpStream>,
}

/// An HTTP service streaming its response ([`Slot::stream`]).
#[derive(Debug, Clone, Copy)]
pub struct HttpStream {
    /// The service's number among those the scripts registered.
    pub id: usize,
    /// What the script waits for before its next turn.
    pub wait: LuaWait,
    /// The `content-length` the script gave, if any (else the body goes out chunked
    /// to HTTP/1.1 clients).
    pub length: Option<u64>,
}

/// How a turn of a streaming HTTP service ended ([`LuaRunner::http_service_piece`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpPiece {
    /// Wait as asked, then run the next turn.
    Wait(LuaWait),
    /// The script returned: the response ends.
    Done,
    /// It failed (logged): the response is cut short.
    Failed,
}

/// [`Slot::kind`]: the stream's Lua calls run in the state `lua-load` shares.
pub const KIND_SHARED: u8 = 1;
/// [`Slot::kind`]: they run in the thread's state of `lua-load-per-thread`.
pub const KIND_OWN: u8 = 2;

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("Slot");
        d.field("data", &self.data.is_some()).field("kind", &self.kind.get()).field("stream", &self.stream).finish()
    }
}

/// What a Lua action or service that gave the event loop back asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LuaWait {
    /// `core.sleep`/`core.msleep`: come back after this long.
    Sleep(Duration),
    /// `core.yield` or a forced yield: come back at the next loop turn.
    Yield,
    /// A socket or an HTTP client of the script waits for the network: await the
    /// future parked under this token ([`take_io`]), then come back.
    Io(u64),
}

/// What a script waits for on the network (a connection, a socket turning readable
/// or writable, bounded by the socket's timeout). `Send`: the stream awaits it.
pub type IoFuture = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

thread_local! {
    /// The futures scripts of this thread parked, until the stream (or the task) that
    /// resumed the script takes them: it does so at once, in the same turn of the
    /// event loop, so the table holds at most one entry per waiting script.
    static IO_WAITS: std::cell::RefCell<Vec<(u64, IoFuture)>> = const { std::cell::RefCell::new(Vec::new()) };
    static IO_NEXT: std::cell::Cell<u64> = const { std::cell::Cell::new(1) };
}

/// Parks `f` for the stream or task that resumed the script; returns its token.
pub fn park_io(f: IoFuture) -> u64 {
    let token = IO_NEXT.with(|n| {
        let t = n.get();
        n.set(t.wrapping_add(1));
        t
    });
    IO_WAITS.with(|w| w.borrow_mut().push((token, f)));
    token
}

/// The future parked under `token` (`None` if it was taken or dropped); dropping it
/// cancels the wait (a connection attempt in progress is abandoned).
pub fn take_io(token: u64) -> Option<IoFuture> {
    IO_WAITS.with(|w| {
        let mut w = w.borrow_mut();
        let i = w.iter().position(|(t, _)| *t == token)?;
        Some(w.swap_remove(i).1)
    })
}

/// Waits as a script asked (`Io`: the parked future; nothing if it is gone).
pub async fn wait(w: LuaWait) {
    match w {
        LuaWait::Sleep(d) => tokio::time::sleep(d).await,
        LuaWait::Yield => tokio::task::yield_now().await,
        LuaWait::Io(token) => {
            if let Some(f) = take_io(token) {
                f.await
            }
        }
    }
}

/// How the rules run Lua code (implemented by `crate::lua`).
pub trait LuaRunner: Sync + Send {
    /// Runs (or resumes) an action on the message of `x`.
    fn http_action(&self, act: &LuaAct, x: &mut Exec<'_, '_>, env: &Env<'_>) -> Flow;
    /// Runs (or resumes) a `tcp-request content` action. While the inspection is not
    /// final ([`super::tcp::TcpExec::final_data`]) and the stream keeps a slot, a
    /// script that waits returns [`super::TcpFlow::LuaWait`]: the caller waits, then
    /// runs the list again from that rule. On final data a script cannot wait, as in
    /// HAProxy (`ACT_OPT_FINAL`): its forced yields go on at once, and a sleep or a
    /// socket that must wait ends it.
    fn tcp_action(&self, act: &LuaAct, x: &mut super::tcp::TcpExec<'_>) -> super::TcpFlow;
    /// Runs (or resumes) HTTP service number `id`; once it is done, its response is
    /// built in `x.out` and `x.reply` ([`Flow::Reply`]).
    /// Once it started its response and waited (a sleep, a socket, a full output), the
    /// response goes out in pieces: [`Flow::Reply`] then holds the head and what was
    /// sent so far, and [`Slot::stream`] says how to go on. A service reading more of
    /// the request body than is in hand asks for it with [`Flow::WaitBody`].
    fn http_service(&self, id: usize, x: &mut Exec<'_, '_>, env: &Env<'_>) -> Flow;
    /// One more turn of a streaming HTTP service ([`Slot::stream`]): what it sent
    /// meanwhile is appended to `out`.
    fn http_service_piece(&self, id: usize, x: &mut Exec<'_, '_>, env: &Env<'_>, out: &mut Vec<u8>) -> HttpPiece;
    /// Runs one turn of a `tcp` service on a TCP stream: starts it on the first call
    /// (`input` then holds what the content rules read), resumes it after that. What
    /// it sent during the turn is appended to `out`, for the stream to write to the
    /// client before it does what the returned step asks.
    fn tcp_service(&self, svc: &mut TcpSvc, input: SvcIn<'_>, ctx: &SampleCtx<'_>, out: &mut Vec<u8>) -> SvcStep;
}

/// A Lua `tcp` service serving one TCP stream (`tcp-request content use-service
/// lua.<name>`). The script's coroutine lives in the thread's Lua state; `slot` is
/// the handle that releases it when the stream drops this.
pub struct TcpSvc {
    /// The service's number among those the scripts registered.
    pub id: usize,
    pub slot: Option<Box<dyn std::any::Any + Send>>,
}

/// What the stream hands a turn of a `tcp` service.
#[derive(Debug, Clone, Copy)]
pub enum SvcIn<'a> {
    /// Nothing new (the wait it asked for is over).
    Resume,
    /// Bytes from the client.
    Data(&'a [u8]),
    /// The client closed its side: nothing more will come.
    End,
}

/// What a `tcp` service asks of its stream after a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SvcStep {
    /// Wait as asked, then resume it.
    Wait(LuaWait),
    /// It reads (`getline`, `receive`): resume it with what the client sends next.
    Input,
    /// It returned: the stream closes its side, reads what the client still sends
    /// until the client closes too, then ends.
    Done,
    /// It failed (logged): the stream closes the connection.
    Failed,
}

static RUNNER: OnceLock<&'static dyn LuaRunner> = OnceLock::new();

/// Installs the Lua runtime (once per process).
pub fn install(r: &'static dyn LuaRunner) {
    let _ = RUNNER.set(r);
}

/// The Lua runtime, when a configuration loaded a script.
pub fn runner() -> Option<&'static dyn LuaRunner> {
    RUNNER.get().copied()
}

/// Compiles `lua.<name> [args...]` in a rule list (`which`: `http-req`, `http-res`,
/// as scripts name the lists). `Err`: the message for the rule.
pub fn compile_action(call: &rampart_cfg::model::LuaCall, which: &str) -> Result<LuaAct, String> {
    let names = crate::sample::lua::names().unwrap_or_default();
    let Some(id) = names.actions.iter().position(|(n, _, _)| *n == call.name) else {
        return Err(format!(
            "Lua action '{}' is not registered by any loaded script (core.register_action)",
            call.name
        ));
    };
    let (_, lists, nargs) = &names.actions[id];
    if !lists.iter().any(|l| l == which) {
        return Err(format!("Lua action '{}' is not registered for '{which}'", call.name));
    }
    if call.args.len() < *nargs {
        return Err(format!("expect {nargs} arguments"));
    }
    if let Some(extra) = call.args.get(*nargs) {
        return Err(format!("expects either 'if' or 'unless' followed by a condition but found '{extra}'"));
    }
    Ok(LuaAct { id, name: call.name.as_str().into(), args: call.args.iter().map(|a| a.as_str().into()).collect() })
}

/// Compiles `tcp-request content use-service lua.<name>` (a `tcp` service, in a proxy
/// not in HTTP mode); `Err`: HAProxy 2.6's message.
pub fn compile_tcp_service(full: &str, http_proxy: bool) -> Result<usize, String> {
    let name = &full["lua.".len()..];
    let names = crate::sample::lua::names().unwrap_or_default();
    match names.services.iter().position(|(n, _)| n == name) {
        None => Err("'content' unknown service name.".to_owned()),
        Some(id) if names.services[id].1 => Err("HTTP applets are forbidden from 'tcp-request' rulesets".to_owned()),
        Some(_) if http_proxy => Err("Lua TCP services cannot be used on HTTP proxies".to_owned()),
        Some(id) => Ok(id),
    }
}

/// Compiles `use-service lua.<name>` (an `http` service); `Err`: the message.
pub fn compile_service(full: &str) -> Result<usize, String> {
    let name = &full["lua.".len()..];
    let names = crate::sample::lua::names().unwrap_or_default();
    match names.services.iter().position(|(n, _)| n == name) {
        Some(id) if names.services[id].1 => Ok(id),
        Some(_) => Err(format!("'{full}' is a 'tcp' service: only 'http' services answer 'http-request' rules")),
        None => Err(format!("'{full}' unknown service name")),
    }
}
