//! The analysers, one file each, called by [`super::run`] in HAProxy's order. Each
//! reads the stream's state and returns a [`Verdict`].
//! HAProxy counterpart: the `AN_REQ_*` / `AN_RES_*` analysers of http_ana.c and
//! tcp_rules.c.
//!
//! - `wait_http`: `monitor-uri`, `capture request header`
//! - `inspect`: `tcp-request content` rules (HTTP mode; TCP mode runs them in
//!   `stream::tcp`, which waits for data)
//! - `http_req`: `http-request` rules of the frontend, then of the backend
//! - `switching`: `use_backend` / `default_backend`, `use-server`
//! - `rdp`: `persist rdp-cookie` (TCP mode)
//! - `sticking`: `stick on|match|store-request` rules (persistence by stick table)
//! - `cookie`: cookie-based persistence and `capture cookie` (request and response)
//! - `inner`: unique id, `option forwardfor`, `option originalto`
//! - `http_res`: `http-response` rules of the backend then the frontend, and
//!   `http-after-response`
//! - `filters`: what compression and the cache do on the heads, the body filters

mod checkcache;
pub mod cookie;
pub mod filters;
pub mod http_req;
pub mod http_res;
pub mod inner;
pub mod inspect;
pub mod rdp;
pub mod sticking;
pub mod switching;
pub mod wait_http;

/// What an analyser decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Go on with the next analyser.
    Continue,
    /// Answer with the response built in the stream's built-response head.
    Reply,
    /// `tarpit`: hold the connection for `timeout tarpit`, then answer as `Reply`.
    Tarpit,
    /// Close the client connection without a response.
    Close,
    /// Close it so that the client does not notice (`silent-drop`).
    SilentDrop,
    /// `wait-for-body`: wait for the request body, then run the rest of the rules.
    WaitBody(crate::action::WaitBody),
    /// `do-resolve`: resolve the name the rule asked (the stream waits, its thread does
    /// not), then run the rules again from that rule.
    Resolve,
    /// A Lua action or service gave the event loop back: wait as it asks, then run the
    /// rules again from that rule, which resumes it.
    LuaWait(crate::action::lua::LuaWait),
    /// A `send-spoe-group` rule waits for the stream to talk to the agent (the group
    /// is in the stream's SPOE state); the rules then run again from it.
    Spoe,
}
