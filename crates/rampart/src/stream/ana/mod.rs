//! The analysers, one file each, called by [`super::run`] in HAProxy's order. Each
//! reads the stream's state and returns a [`Verdict`].
//! HAProxy counterpart: the `AN_REQ_*` / `AN_RES_*` analysers of http_ana.c and
//! tcp_rules.c.
//!
//! - `http_req`: `http-request` rules of the frontend, then of the backend
//! - `switching`: `use_backend` / `default_backend`, `use-server`
//! - `http_res`: `http-response` rules of the backend then the frontend, and
//!   `http-after-response`

pub mod http_req;
pub mod http_res;
pub mod switching;

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
}
