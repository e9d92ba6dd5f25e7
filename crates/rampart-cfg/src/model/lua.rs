//! The Lua settings of `global`: `lua-load`, `lua-load-per-thread`, `lua-prepend-path`,
//! `tune.lua.*`.

use std::time::Duration;

use crate::span::Span;

/// The Lua settings of the `global` section (HAProxy's src/hlua.c keywords).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LuaSettings {
    /// `lua-load <file> [args]` and `lua-load-per-thread <file> [args]`, in order.
    pub loads: Vec<LuaLoad>,
    /// `lua-prepend-path <path> [path|cpath]`: (path, `path` or `cpath`), in order.
    pub prepend_paths: Vec<(String, String)>,
    /// `tune.lua.maxmem <MB>`, in bytes; `None`: unlimited.
    pub maxmem: Option<usize>,
    /// `tune.lua.forced-yield <n>`: instructions between two forced yields (default
    /// 10000).
    pub forced_yield: Option<u32>,
    /// `tune.lua.session-timeout` (default 4s): Lua time of an action, fetch or
    /// converter. `Some(None)`: set to 0, no limit.
    pub session_timeout: Option<Option<Duration>>,
    /// `tune.lua.task-timeout` (default: none).
    pub task_timeout: Option<Option<Duration>>,
    /// `tune.lua.service-timeout` (default 4s).
    pub service_timeout: Option<Option<Duration>>,
    /// `httpclient.resolvers.id <id>`: the section the HTTP client resolves host names
    /// with (`None`: `default`, and no error when it does not exist).
    pub httpclient_resolvers: Option<String>,
    /// `httpclient.resolvers.prefer ipv4|ipv6`: `Some(true)` for IPv6.
    pub httpclient_prefer_v6: Option<bool>,
    /// `httpclient.ssl.verify none|required`: `Some(false)` for `none` (HAProxy's
    /// default: `required`).
    pub httpclient_ssl_verify: Option<bool>,
    /// `httpclient.ssl.ca-file <file>` (HAProxy's default: `@system-ca`).
    pub httpclient_ssl_ca_file: Option<String>,
}

/// One `lua-load` or `lua-load-per-thread` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LuaLoad {
    pub path: String,
    /// The words after the file name (`table.pack(...)` in the script).
    pub args: Vec<String>,
    pub per_thread: bool,
    pub span: Span,
}
