//! The rules language as the parser leaves it: `acl` lines and the `http-request` /
//! `http-response` / `http-after-response` / `tcp-request` / `tcp-response` rule lists with
//! their actions.
//!
//! Everything an action's arguments say is typed and checked here, except three kinds of
//! text the daemon compiles with its own engines and that therefore stay text with their
//! line: sample expressions ([`ExprSrc`]), log-format strings ([`FmtSrc`]) and regexes
//! ([`RegexSrc`]); conditions and `acl` lines stay words ([`Condition`], [`AclDef`]). `AclDef`
//! is defined here, the others in `source` (replies use them too).
//!
//! HAProxy counterparts: `struct act_rule` (include/haproxy/action-t.h), the per-action
//! argument layouts of src/http_act.c, src/tcp_act.c, src/vars.c, src/stream.c.

use std::time::Duration;

use super::reply::{HttpReply, Redirect};
use super::source::{Condition, ExprSrc, FmtSrc, RegexSrc};
use crate::span::Span;

/// `acl <name> <criterion> [flags] [operator] <value>...`: the words after the name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AclDef {
    pub name: String,
    pub words: Vec<String>,
    pub span: Span,
}

/// What a proxy or a named `defaults` section holds of the rules language, each list in
/// file order. The conditions of a section's rules refer to that section's `acls` only
/// (a proxy does not see the ACLs of its `defaults` section, nor the reverse).
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    pub acls: Vec<AclDef>,
    pub http_request: Vec<HttpReqRule>,
    pub http_response: Vec<HttpResRule>,
    pub http_after_response: Vec<HttpAfterResRule>,
    pub tcp_request_connection: Vec<TcpReqRule>,
    pub tcp_request_session: Vec<TcpReqRule>,
    pub tcp_request_content: Vec<TcpReqRule>,
    pub tcp_response_content: Vec<TcpResRule>,
}

impl RuleSet {
    /// `true` when the section defines any rule (HAProxy's test for "defines TCP/HTTP
    /// rules" in `defaults` inheritance; ACLs alone do not count).
    pub fn has_rules(&self) -> bool {
        !(self.http_request.is_empty()
            && self.http_response.is_empty()
            && self.http_after_response.is_empty()
            && self.tcp_request_connection.is_empty()
            && self.tcp_request_session.is_empty()
            && self.tcp_request_content.is_empty()
            && self.tcp_response_content.is_empty())
    }
}

/// A named `defaults` section whose rules run before those of the proxies built from it
/// (`Proxy::defaults_rules` points here), with the ACLs those rules may use.
#[derive(Debug, Clone)]
pub struct DefaultsRules {
    pub name: String,
    pub rules: RuleSet,
    pub span: Span,
}

// === variables ===

/// Scope of a variable (`proc.`, `sess.`, `txn.`, `req.`, `res.`, `check.`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarScope {
    Proc,
    Sess,
    Txn,
    Req,
    Res,
    Check,
}

/// A variable name with its scope; `name` is what follows the scope and its dot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarName {
    pub scope: VarScope,
    pub name: String,
}

/// The `set-var(<var>,<cond>...)` conditions (src/vars.c `conditions_array`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarCond {
    IfExists,
    IfNotExists,
    IfEmpty,
    IfNotEmpty,
    IfSet,
    IfNotSet,
    IfGt,
    IfLt,
}

/// `set-var(...) <expr>`, `set-var-fmt(...) <fmt>` and `unset-var(...)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VarAction {
    Set { var: VarName, conds: Vec<VarCond>, expr: ExprSrc },
    SetFmt { var: VarName, conds: Vec<VarCond>, fmt: FmtSrc },
    Unset(VarName),
}

// === shared action arguments ===

/// `set-log-level <level>|silent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    Silent,
    Emerg,
    Alert,
    Crit,
    Err,
    Warning,
    Notice,
    Info,
    Debug,
}

/// `set-src`, `set-dst`, `set-src-port`, `set-dst-port`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddrAction {
    SetSrc(ExprSrc),
    SetDst(ExprSrc),
    SetSrcPort(ExprSrc),
    SetDstPort(ExprSrc),
}

/// Where a `capture` action stores its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptureSlot {
    /// `len <n>`: the slot this rule declared, an index into the proxy's request
    /// captures ([`super::Captures::request`]).
    Declared(usize),
    /// `id <n>`: a slot declared by the frontend (checked when the rule is in a frontend).
    Id(usize),
}

/// `capture <expr> len <n>` / `capture <expr> id <n>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureAction {
    pub expr: ExprSrc,
    pub slot: CaptureSlot,
}

/// How `del-header -m` compares header names (default `str`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HdrMatch {
    Str,
    Beg,
    End,
    Sub,
    /// `-m reg`: the name is a regex.
    Reg(RegexSrc),
}

/// The header actions shared by the three HTTP rule lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderAction {
    /// `set-header <name> <fmt>`: removes every occurrence, then adds.
    Set { name: String, value: FmtSrc },
    /// `add-header <name> <fmt>`.
    Add { name: String, value: FmtSrc },
    /// `del-header <name> [-m <meth>]`.
    Del { name: String, matcher: HdrMatch },
    /// `replace-header <name> <regex> <fmt>`: on the whole header value.
    Replace { name: String, regex: RegexSrc, replace: FmtSrc },
    /// `replace-value <name> <regex> <fmt>`: on each comma-separated value.
    ReplaceValue { name: String, regex: RegexSrc, replace: FmtSrc },
}

/// The request-line actions of `http-request`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UriAction {
    SetMethod(FmtSrc),
    SetPath(FmtSrc),
    SetPathq(FmtSrc),
    SetQuery(FmtSrc),
    SetUri(FmtSrc),
    ReplacePath { regex: RegexSrc, replace: FmtSrc },
    ReplacePathq { regex: RegexSrc, replace: FmtSrc },
    ReplaceUri { regex: RegexSrc, replace: FmtSrc },
}

/// `normalize-uri <normalizer> [option]` (every normalizer of HAProxy 2.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Normalizer {
    PathMergeSlashes,
    PathStripDot,
    /// `path-strip-dotdot [full]`.
    PathStripDotdot {
        full: bool,
    },
    QuerySortByName,
    /// `percent-to-uppercase [strict]`.
    PercentToUppercase {
        strict: bool,
    },
    /// `percent-decode-unreserved [strict]`.
    PercentDecodeUnreserved {
        strict: bool,
    },
    FragmentStrip,
    FragmentEncode,
}

/// `wait-for-body time <time> [at-least <bytes>]`; `at_least` 0 = the whole body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitForBody {
    pub time: Duration,
    pub at_least: u64,
}

/// Which timeout `set-timeout` changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutName {
    Server,
    Tunnel,
}

/// `set-timeout server|tunnel <time>|<expr>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimeoutValue {
    Fixed(Duration),
    /// An expression giving milliseconds.
    Expr(ExprSrc),
}

/// `set-status <code> [reason <str>]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetStatus {
    /// 100..=999.
    pub status: u16,
    /// `None`: the standard reason of the status.
    pub reason: Option<String>,
}

// === client socket options, 3.x log emission ===

/// `set-mark`/`set-tos` (HAProxy 2.6) and `set-fc-mark`/`set-fc-tos` (HAProxy 3.x): a
/// socket option of the client connection (`SO_MARK`, `IP_TOS`/`IPV6_TCLASS`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FcSockOpt {
    pub what: FcOpt,
    pub value: FcValue,
    /// Spelled as HAProxy 3.x does (`set-fc-mark`, `set-fc-tos`).
    pub v3: bool,
}

/// Which option [`FcSockOpt`] sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FcOpt {
    /// `SO_MARK`, the netfilter mark.
    Mark,
    /// `IP_TOS` (IPv4) or `IPV6_TCLASS` (IPv6).
    Tos,
}

/// The value of a [`FcSockOpt`]: a number (2.6's only form), or a sample expression
/// evaluated when the rule runs (3.x's `set-fc-*`); a value that is not an integer
/// leaves the socket alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FcValue {
    Int(u32),
    Expr(ExprSrc),
}

impl FcSockOpt {
    /// The action's name as the rule spells it.
    pub fn name(&self) -> &'static str {
        match (self.what, self.v3) {
            (FcOpt::Mark, false) => "set-mark",
            (FcOpt::Tos, false) => "set-tos",
            (FcOpt::Mark, true) => "set-fc-mark",
            (FcOpt::Tos, true) => "set-fc-tos",
        }
    }

    /// The name of the `set-bc-*` action with these arguments.
    pub fn bc_name(&self) -> &'static str {
        match self.what {
            FcOpt::Mark => "set-bc-mark",
            FcOpt::Tos => "set-bc-tos",
        }
    }
}

// === http-request ===

/// One `http-request` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpReqRule {
    pub action: HttpReqAction,
    pub cond: Option<Condition>,
    pub span: Span,
}

/// The `http-request` actions rampart parses (HAProxy 2.6's list is in
/// `kw::HTTP_REQUEST_ACTIONS`; the others are refused as not supported yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpReqAction {
    Allow,
    /// `deny [deny_status <code>] [<reply>]`; the status defaults to 403.
    Deny(HttpReply),
    /// `tarpit [deny_status <code>] [<reply>]`; the status defaults to 500.
    Tarpit(HttpReply),
    /// `auth [realm <realm>]`; `None` uses the proxy name.
    Auth {
        realm: Option<String>,
    },
    Redirect(Redirect),
    Return(HttpReply),
    Header(HeaderAction),
    Uri(UriAction),
    Var(VarAction),
    SetLogLevel(LogLevel),
    Capture(CaptureAction),
    SetPriorityClass(ExprSrc),
    SetPriorityOffset(ExprSrc),
    NormalizeUri(Normalizer),
    Addr(AddrAction),
    WaitForBody(WaitForBody),
    SilentDrop,
    /// `early-hint <name> <fmt>`: a header of a 103 response.
    EarlyHint {
        name: String,
        value: FmtSrc,
    },
    /// `strict-mode on|off`.
    StrictMode(bool),
    DisableL7Retry,
    SetTimeout {
        timeout: TimeoutName,
        value: TimeoutValue,
    },
    /// `use-service <name>`: `prometheus-exporter` or `lua.<name>`.
    UseService(String),
    /// `lua.<name> [args...]`: an action a Lua script registers.
    Lua(LuaCall),
    Reject,
    /// `cache-use <cache>`: serve from the cache when it holds the response.
    CacheUse(String),
    /// `track-sc<n> <key> [table <t>]`.
    TrackSc(super::TrackSc),
    /// `sc-inc-gpc0/1(<n>)`, `sc-set-gpt0(<n>) <v>`.
    Sc(super::ScAction),
    /// `set-mark`, `set-tos`, `set-fc-mark`, `set-fc-tos`.
    SetFc(FcSockOpt),
    /// `set-bc-mark`, `set-bc-tos` (HAProxy 3.x): the server connection's options.
    SetBc(FcSockOpt),
    /// `do-log` (HAProxy 3.x): a log line now, in the frontend's format.
    DoLog,
    /// `do-resolve(<var>,<resolvers>[,ipv4|ipv6]) <expr>`.
    DoResolve(DoResolve),
    /// `send-spoe-group <engine> <group>`: the group's messages to the SPOE engine's
    /// agent, waiting for its answer.
    SendSpoeGroup {
        engine: String,
        group: String,
    },
    /// `add-acl(<file>) <key>`, `del-acl(...)`, `set-map(...) <key> <value>`, `del-map(...)`.
    PatRef(PatRefAction),
}

/// `add-acl(<file>) <key-fmt>`, `del-acl(<file>) <key-fmt>`,
/// `set-map(<file>) <key-fmt> <value-fmt>`, `del-map(<file>) <key-fmt>`: an entry of the
/// pattern file `file` (as named by the ACLs and maps that load it) changed at run time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatRefAction {
    pub op: PatRefOp,
    /// The reference's name, the text between the parentheses.
    pub file: String,
    pub key: FmtSrc,
    /// `set-map` only.
    pub value: Option<FmtSrc>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatRefOp {
    AddAcl,
    DelAcl,
    SetMap,
    DelMap,
}

impl PatRefOp {
    pub fn name(self) -> &'static str {
        match self {
            PatRefOp::AddAcl => "add-acl",
            PatRefOp::DelAcl => "del-acl",
            PatRefOp::SetMap => "set-map",
            PatRefOp::DelMap => "del-map",
        }
    }
}

/// `http-request do-resolve(<var>,<resolvers>[,ipv4|ipv6]) <expr>`: the address the
/// name `expr` gives, asked of a `resolvers` section, into variable `var`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoResolve {
    pub var: VarName,
    pub resolvers: String,
    /// `ipv6` (the default) or `ipv4`: the family asked first.
    pub prefer_v6: bool,
    pub expr: ExprSrc,
}

impl HttpReqAction {
    /// The action's keyword as written in the configuration (without `(var)`).
    pub fn name(&self) -> &'static str {
        use HttpReqAction as A;
        match self {
            A::Allow => "allow",
            A::Deny(_) => "deny",
            A::Tarpit(_) => "tarpit",
            A::Auth { .. } => "auth",
            A::Redirect(_) => "redirect",
            A::Return(_) => "return",
            A::Header(h) => h.name(),
            A::Uri(u) => u.name(),
            A::Var(v) => v.name(),
            A::SetLogLevel(_) => "set-log-level",
            A::Capture(_) => "capture",
            A::SetPriorityClass(_) => "set-priority-class",
            A::SetPriorityOffset(_) => "set-priority-offset",
            A::NormalizeUri(_) => "normalize-uri",
            A::Addr(a) => a.name(),
            A::WaitForBody(_) => "wait-for-body",
            A::SilentDrop => "silent-drop",
            A::EarlyHint { .. } => "early-hint",
            A::StrictMode(_) => "strict-mode",
            A::DisableL7Retry => "disable-l7-retry",
            A::SetTimeout { .. } => "set-timeout",
            A::UseService(_) => "use-service",
            A::Lua(_) => "lua.",
            A::DoResolve(_) => "do-resolve",
            A::SetFc(o) => o.name(),
            A::SetBc(o) => o.bc_name(),
            A::DoLog => "do-log",
            A::SendSpoeGroup { .. } => "send-spoe-group",
            A::PatRef(p) => p.op.name(),
            A::Reject => "reject",
            A::CacheUse(_) => "cache-use",
            A::TrackSc(_) => "track-sc",
            A::Sc(a) => a.name(),
        }
    }
}

// === http-response ===

/// One `http-response` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResRule {
    pub action: HttpResAction,
    pub cond: Option<Condition>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpResAction {
    Allow,
    /// `deny [deny_status <code>] [<reply>]`; the status defaults to 502.
    Deny(HttpReply),
    Header(HeaderAction),
    SetStatus(SetStatus),
    /// Only `redirect location ...` is allowed on responses.
    Redirect(Redirect),
    Return(HttpReply),
    Var(VarAction),
    /// Always `id <n>` (a response capture slot of the frontend).
    Capture {
        expr: ExprSrc,
        id: usize,
    },
    SetLogLevel(LogLevel),
    SilentDrop,
    StrictMode(bool),
    WaitForBody(WaitForBody),
    /// `cache-store <cache>`: store the response (its head as it is at this rule).
    CacheStore(String),
    /// `track-sc<n> <key> [table <t>]`: the key taken from the response.
    TrackSc(super::TrackSc),
    /// `sc-inc-gpc0/1(<n>)`, `sc-set-gpt0(<n>) <v>`.
    Sc(super::ScAction),
    /// `lua.<name> [args...]`.
    Lua(LuaCall),
    /// `set-mark`, `set-tos`, `set-fc-mark`, `set-fc-tos`.
    SetFc(FcSockOpt),
    /// `do-log` (HAProxy 3.x).
    DoLog,
    /// `add-acl`, `del-acl`, `set-map`, `del-map`.
    PatRef(PatRefAction),
}

/// `lua.<name> [args...]` in a rule: the name without `lua.`, and the words up to the
/// condition (their number is checked against the script's registration at startup).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LuaCall {
    pub name: String,
    pub args: Vec<String>,
}

impl HttpResAction {
    pub fn name(&self) -> &'static str {
        use HttpResAction as A;
        match self {
            A::Allow => "allow",
            A::Deny(_) => "deny",
            A::Header(h) => h.name(),
            A::SetStatus(_) => "set-status",
            A::Redirect(_) => "redirect",
            A::Return(_) => "return",
            A::Var(v) => v.name(),
            A::Capture { .. } => "capture",
            A::SetLogLevel(_) => "set-log-level",
            A::SilentDrop => "silent-drop",
            A::StrictMode(_) => "strict-mode",
            A::WaitForBody(_) => "wait-for-body",
            A::CacheStore(_) => "cache-store",
            A::TrackSc(_) => "track-sc",
            A::Sc(a) => a.name(),
            A::Lua(_) => "lua.",
            A::SetFc(o) => o.name(),
            A::DoLog => "do-log",
            A::PatRef(p) => p.op.name(),
        }
    }
}

// === http-after-response ===

/// One `http-after-response` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpAfterResRule {
    pub action: HttpAfterResAction,
    pub cond: Option<Condition>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpAfterResAction {
    Allow,
    Header(HeaderAction),
    SetStatus(SetStatus),
    Var(VarAction),
    Capture {
        expr: ExprSrc,
        id: usize,
    },
    StrictMode(bool),
    /// `do-log` (HAProxy 3.x).
    DoLog,
}

impl HttpAfterResAction {
    pub fn name(&self) -> &'static str {
        use HttpAfterResAction as A;
        match self {
            A::Allow => "allow",
            A::Header(h) => h.name(),
            A::SetStatus(_) => "set-status",
            A::Var(v) => v.name(),
            A::Capture { .. } => "capture",
            A::StrictMode(_) => "strict-mode",
            A::DoLog => "do-log",
        }
    }
}

// === tcp-request / tcp-response ===

/// One `tcp-request connection|session|content` rule (the list it is in says which).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcpReqRule {
    pub action: TcpReqAction,
    pub cond: Option<Condition>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TcpReqAction {
    Accept,
    Reject,
    /// `capture <expr> len <n>` (content rules only): the request capture slot it declared.
    Capture {
        expr: ExprSrc,
        slot: usize,
    },
    Var(VarAction),
    Addr(AddrAction),
    SilentDrop,
    /// Content rules only.
    SetLogLevel(LogLevel),
    /// `switch-mode http [proto <name>]` (content rules only).
    SwitchModeHttp {
        proto: Option<String>,
    },
    /// Content rules only.
    SetPriorityClass(ExprSrc),
    SetPriorityOffset(ExprSrc),
    /// `expect-proxy layer4` (connection rules only): read a PROXY header next.
    ExpectProxy,
    /// `track-sc<n> <key> [table <t>]`.
    TrackSc(super::TrackSc),
    /// `sc-inc-gpc*`, `sc-set-gpt*`.
    Sc(super::ScAction),
    /// `lua.<name> [args...]` (content rules only).
    Lua(LuaCall),
    /// `set-mark`, `set-tos`, `set-fc-mark`, `set-fc-tos`.
    SetFc(FcSockOpt),
    /// `set-bc-mark`, `set-bc-tos` (HAProxy 3.x): the server connection's options.
    SetBc(FcSockOpt),
    /// `do-log` (HAProxy 3.x; content rules only).
    DoLog,
    /// `use-service <name>` (content rules only): `lua.<name>`, a Lua `tcp` service.
    UseService(String),
    /// `do-resolve(<var>,<resolvers>[,ipv4|ipv6]) <expr>` (content rules only).
    DoResolve(DoResolve),
}

impl TcpReqAction {
    pub fn name(&self) -> &'static str {
        use TcpReqAction as A;
        match self {
            A::Accept => "accept",
            A::Reject => "reject",
            A::Capture { .. } => "capture",
            A::Var(v) => v.name(),
            A::Addr(a) => a.name(),
            A::SilentDrop => "silent-drop",
            A::SetLogLevel(_) => "set-log-level",
            A::SwitchModeHttp { .. } => "switch-mode",
            A::SetPriorityClass(_) => "set-priority-class",
            A::SetPriorityOffset(_) => "set-priority-offset",
            A::ExpectProxy => "expect-proxy",
            A::TrackSc(_) => "track-sc",
            A::Sc(a) => a.name(),
            A::Lua(_) => "lua.",
            A::SetFc(o) => o.name(),
            A::SetBc(o) => o.bc_name(),
            A::DoLog => "do-log",
            A::UseService(_) => "use-service",
            A::DoResolve(_) => "do-resolve",
        }
    }
}

/// One `tcp-response content` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcpResRule {
    pub action: TcpResAction,
    pub cond: Option<Condition>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TcpResAction {
    Accept,
    Reject,
    /// `close`: closes the server connection once the response is forwarded.
    Close,
    Var(VarAction),
    SilentDrop,
    SetLogLevel(LogLevel),
    /// `set-mark`, `set-tos`, `set-fc-mark`, `set-fc-tos`.
    SetFc(FcSockOpt),
    /// `do-log` (HAProxy 3.x).
    DoLog,
    /// `lua.<name> [args...]`.
    Lua(LuaCall),
}

impl TcpResAction {
    pub fn name(&self) -> &'static str {
        use TcpResAction as A;
        match self {
            A::Accept => "accept",
            A::Reject => "reject",
            A::Close => "close",
            A::Var(v) => v.name(),
            A::SilentDrop => "silent-drop",
            A::SetLogLevel(_) => "set-log-level",
            A::SetFc(o) => o.name(),
            A::DoLog => "do-log",
            A::Lua(_) => "lua.",
        }
    }
}

// === names ===

impl HeaderAction {
    pub fn name(&self) -> &'static str {
        match self {
            HeaderAction::Set { .. } => "set-header",
            HeaderAction::Add { .. } => "add-header",
            HeaderAction::Del { .. } => "del-header",
            HeaderAction::Replace { .. } => "replace-header",
            HeaderAction::ReplaceValue { .. } => "replace-value",
        }
    }
}

impl UriAction {
    pub fn name(&self) -> &'static str {
        match self {
            UriAction::SetMethod(_) => "set-method",
            UriAction::SetPath(_) => "set-path",
            UriAction::SetPathq(_) => "set-pathq",
            UriAction::SetQuery(_) => "set-query",
            UriAction::SetUri(_) => "set-uri",
            UriAction::ReplacePath { .. } => "replace-path",
            UriAction::ReplacePathq { .. } => "replace-pathq",
            UriAction::ReplaceUri { .. } => "replace-uri",
        }
    }
}

impl VarAction {
    pub fn name(&self) -> &'static str {
        match self {
            VarAction::Set { .. } => "set-var",
            VarAction::SetFmt { .. } => "set-var-fmt",
            VarAction::Unset(_) => "unset-var",
        }
    }
}

impl AddrAction {
    pub fn name(&self) -> &'static str {
        match self {
            AddrAction::SetSrc(_) => "set-src",
            AddrAction::SetDst(_) => "set-dst",
            AddrAction::SetSrcPort(_) => "set-src-port",
            AddrAction::SetDstPort(_) => "set-dst-port",
        }
    }
}
