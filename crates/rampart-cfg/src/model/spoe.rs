//! SPOE: the `filter spoe` line of a proxy and the SPOE configuration file it names
//! (`spoe-agent`, `spoe-message`, `spoe-group` sections, optionally inside an
//! `[engine]` scope).
//!
//! HAProxy counterparts: `struct spoe_config`, `struct spoe_agent`, `struct
//! spoe_message`, `struct spoe_group` (include/haproxy/spoe-t.h); doc/SPOE.txt §2.

use std::time::Duration;

use crate::span::Span;

use super::Condition;

/// `filter spoe [engine <name>] config <file>`, with the file's contents once read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpoeFilter {
    /// `engine <name>`: the scope of the file to read.
    pub engine: Option<String>,
    pub file: String,
    /// Filled once every section of haproxy.cfg is read (the file is parsed then).
    pub conf: Option<Box<SpoeConf>>,
}

/// What an SPOE engine's scope of the file declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpoeConf {
    /// The engine's name: `engine <name>` of the filter, else the agent's id.
    pub id: String,
    pub agent: SpoeAgent,
    /// The messages the agent sends, those of its groups included, in declaration
    /// order.
    pub messages: Vec<SpoeMessage>,
    pub groups: Vec<SpoeGroup>,
}

/// A `spoe-agent <name>` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpoeAgent {
    pub id: String,
    /// `messages <name>...`: sent on their event.
    pub messages: Vec<String>,
    /// `groups <name>...`: sent by `send-spoe-group`.
    pub groups: Vec<String>,
    /// `option var-prefix` (default `spoe`).
    pub var_prefix: String,
    pub set_on_error: Option<String>,
    pub set_process_time: Option<String>,
    pub set_total_time: Option<String>,
    pub continue_on_error: bool,
    pub async_: bool,
    pub pipelining: bool,
    /// `option send-frag-payload` (on by default): NOTIFY frames larger than the
    /// max-frame-size are fragmented, for agents that announce `fragmentation`.
    pub send_frag_payload: bool,
    /// `maxconnrate` / `maxerrrate` (0: unlimited).
    pub maxconnrate: u32,
    pub maxerrrate: u32,
    /// `max-frame-size` (default 16380).
    pub max_frame_size: u32,
    /// `max-waiting-frames` (default 20).
    pub max_waiting_frames: u32,
    pub timeout_hello: Option<Duration>,
    pub timeout_idle: Option<Duration>,
    pub timeout_processing: Option<Duration>,
    /// `use-backend <name>`.
    pub use_backend: String,
    /// `register-var-names <name>...`: the names the agent may set (with the prefix).
    pub register_var_names: Vec<String>,
    /// `log global`.
    pub log_global: bool,
    pub span: Span,
}

/// When an event's messages are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpoeEvent {
    ClientSession,
    FrontendTcpRequest,
    BackendTcpRequest,
    TcpResponse,
    FrontendHttpRequest,
    BackendHttpRequest,
    HttpResponse,
}

impl SpoeEvent {
    pub const ALL: [SpoeEvent; 7] = [
        SpoeEvent::ClientSession,
        SpoeEvent::FrontendTcpRequest,
        SpoeEvent::BackendTcpRequest,
        SpoeEvent::TcpResponse,
        SpoeEvent::FrontendHttpRequest,
        SpoeEvent::BackendHttpRequest,
        SpoeEvent::HttpResponse,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SpoeEvent::ClientSession => "on-client-session",
            SpoeEvent::FrontendTcpRequest => "on-frontend-tcp-request",
            SpoeEvent::BackendTcpRequest => "on-backend-tcp-request",
            SpoeEvent::TcpResponse => "on-tcp-response",
            SpoeEvent::FrontendHttpRequest => "on-frontend-http-request",
            SpoeEvent::BackendHttpRequest => "on-backend-http-request",
            SpoeEvent::HttpResponse => "on-http-response",
        }
    }

    pub fn from_name(s: &str) -> Option<SpoeEvent> {
        SpoeEvent::ALL.into_iter().find(|e| e.name() == s)
    }
}

/// An argument of `args`: `[name=]<sample expression>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpoeArg {
    /// Empty when unnamed.
    pub name: String,
    pub expr: String,
}

/// A `spoe-message <name>` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpoeMessage {
    pub name: String,
    pub args: Vec<SpoeArg>,
    /// `event <name> [if|unless <cond>]`.
    pub event: Option<SpoeEvent>,
    pub cond: Option<Condition>,
    pub span: Span,
}

/// A `spoe-group <name>` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpoeGroup {
    pub name: String,
    /// Indices into [`SpoeConf::messages`].
    pub messages: Vec<usize>,
    pub span: Span,
}
