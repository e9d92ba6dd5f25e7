//! Lua scripting: HAProxy's Lua API over an embedded Lua 5.4 (the `mlua` crate and
//! its vendored sources), for `lua-load` and `lua-load-per-thread`.
//! HAProxy counterpart: src/hlua.c, src/hlua_fcn.c.
//!
//! - `state`: the Lua states (the one `lua-load` shares between the threads, one per
//!   thread for `lua-load-per-thread`), the scripts loaded in them, what they registered
//! - `core`: the native functions of the `core` table (`register_*`, `log`, `now` ...);
//!   the rest of the API is written in Lua, in `prelude.lua`
//! - `cur`: what a running script reaches of its stream (`txn.f`, `txn.http`, variables)
//! - `run`: actions, services, fetches, converters and tasks run as coroutines under
//!   the `tune.lua.*` budgets; the interfaces the rules call ([`crate::action::lua`],
//!   [`crate::sample::lua`])
//! - `value`: samples to Lua values and back
//! - `map`: the `Map` and `Regex` classes, on the rules' pattern code
//! - `cli`: the stats socket's commands scripts register (`core.register_cli`)
//! - `applet_tcp`: `tcp` services (`tcp-request content use-service lua.<name>`) and
//!   their AppletTCP object
//! - `proxy`: the Proxy, Server and Listener classes, `core.proxies` ... (on a
//!   [`ProxyHost`] the process installs)
//! - `addr`: `core.parse_addr`, `core.match_addr`
//! - `channel`: `txn.req`/`txn.res` in TCP content actions
//! - `stktable`: the StickTable class (a Proxy's `stktable`)
//! - `sock`: `core.tcp()` sockets on the event loop (the prelude's Socket class and
//!   `core.httpclient()` sit on them)
//!
//! The model, HAProxy 2.6's: the files of `lua-load` run in one state shared by the
//! threads, a thread holding its lock for one turn of a script; those of
//! `lua-load-per-thread` in a state of each thread, lock-free (see
//! docs/COMPATIBILITY.md, section Lua). A script never blocks its thread: it runs
//! as a coroutine that the stream (or the task) resumes; `core.sleep` and
//! `core.yield` give the event loop back, and a count hook makes a runaway script
//! yield every `tune.lua.forced-yield` instructions and fails it past its timeout.
//!
//! PERF: nothing here runs, nor is any state created, unless a configuration loads a
//! script: the rules only hold Lua actions when one does.

mod addr;
mod applet_http;
mod applet_tcp;
mod channel;
pub mod cli;
mod core;
mod cur;
mod map;
mod proxy;
mod run;
mod sock;
mod stktable;

pub use sock::{set_httpclient_resolver, NameResolver};
mod state;
mod value;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rampart_cfg::model::LuaSettings;
use rampart_cfg::{Config, Diag};

pub use proxy::{set_proxy_host, CheckKind, Forced, LuaVal, Obj, ProxyHost, PxInfo, PxOp, SrvOp};
pub use run::start_thread;

/// What the Lua runtime reads of the configuration, once per process.
#[derive(Debug)]
pub(crate) struct Settings {
    pub lua: LuaSettings,
    /// The configuration, for the expressions `txn.f`/`txn.c` compile at run time.
    pub cfg: Arc<Config>,
    /// `tune.lua.forced-yield` (HAProxy's default: 10000).
    pub forced_yield: u32,
    /// `tune.lua.session-timeout` (default 4s): actions, fetches, converters.
    pub session_timeout: Option<Duration>,
    /// `tune.lua.task-timeout` (default: none).
    pub task_timeout: Option<Duration>,
    /// `tune.lua.service-timeout` (default 4s).
    pub service_timeout: Option<Duration>,
    /// `quiet`: Lua's log messages are not copied to stderr.
    pub quiet: bool,
    /// The TLS configuration of `core.httpclient()`'s `https` requests; `None`: its
    /// CA file did not load, TLS is disabled for it (as HAProxy 2.6).
    pub hc_tls: Option<Arc<rustls::ClientConfig>>,
}

static SETTINGS: OnceLock<Settings> = OnceLock::new();

pub(crate) fn settings() -> Option<&'static Settings> {
    SETTINGS.get()
}

/// Loads the scripts of `cfg` once in the calling thread, to report what does not
/// load (HAProxy's messages, at the `lua-load` line) and to publish what they
/// register before the rules are compiled; then installs the Lua runtime for the
/// worker threads. Nothing happens for a configuration without `lua-load`.
pub fn prepare(cfg: &Config) -> Vec<Diag> {
    let lua = &cfg.global.lua;
    if lua.loads.is_empty() {
        return Vec::new();
    }
    let settings = Settings {
        lua: lua.clone(),
        cfg: Arc::new(cfg.clone()),
        forced_yield: lua.forced_yield.unwrap_or(10_000),
        session_timeout: lua.session_timeout.unwrap_or(Some(Duration::from_secs(4))),
        task_timeout: lua.task_timeout.unwrap_or(None),
        service_timeout: lua.service_timeout.unwrap_or(Some(Duration::from_secs(4))),
        quiet: cfg.global.quiet,
        hc_tls: match httpclient_tls(lua) {
            Ok(c) => c,
            Err(d) => return vec![d],
        },
    };
    LOADED.store(true, std::sync::atomic::Ordering::Relaxed);
    let (names, diags) = state::check_load(&settings);
    if !diags.is_empty() {
        return diags;
    }
    crate::sample::lua::set_names(names);
    // (a second build in the process, `-c` then the run, keeps the first settings:
    // the configuration is the same)
    let _ = SETTINGS.set(settings);
    run::install();
    Vec::new()
}

/// The HTTP client's TLS configuration (`httpclient.ssl.verify`, `ca-file`). As HAProxy
/// 2.6, a CA file that does not load disables TLS for the client, and fails startup
/// when one of the two keywords was set.
fn httpclient_tls(lua: &LuaSettings) -> Result<Option<Arc<rustls::ClientConfig>>, Diag> {
    let hard = lua.httpclient_ssl_verify.is_some() || lua.httpclient_ssl_ca_file.is_some();
    match crate::tls::httpclient::config(
        lua.httpclient_ssl_verify.unwrap_or(true),
        lua.httpclient_ssl_ca_file.as_deref(),
    ) {
        Ok(c) => Ok(Some(c)),
        Err(m) if hard => Err(Diag::alert(None, format!("httpclient: cannot initialize: {m}"))),
        Err(_) => Ok(None),
    }
}

/// Whether the configuration loads Lua scripts (set by [`prepare`]): their servers
/// may have their connections cut by `Server:shut_sess()` and
/// `Proxy:shut_bcksess()` (see [`crate::server::sessions::track_for_lua`]).
pub fn loaded() -> bool {
    LOADED.load(std::sync::atomic::Ordering::Relaxed)
}

static LOADED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The map and pattern files of the configuration, by path, for `core.set_map` and
/// `core.del_map`: those of the last build (startup builds twice, the check then the
/// run; the run's are the ones its rules read).
type Maps = Vec<(String, Arc<crate::pattern::patref::PatRef>)>;
static MAPS: arc_swap::ArcSwapOption<Maps> = arc_swap::ArcSwapOption::const_empty();

/// Publishes the pattern files a build loaded (after its rules are compiled).
pub fn publish_maps(files: Maps) {
    if settings().is_some() {
        MAPS.store(Some(Arc::new(files)));
    }
}

pub(crate) fn map(path: &str) -> Option<Arc<crate::pattern::patref::PatRef>> {
    MAPS.load().as_ref()?.iter().find(|(p, _)| p == path).map(|(_, r)| r.clone())
}

/// `[level] ddd/hhmmss (pid) : msg` on stderr, as HAProxy copies Lua's log messages
/// (not for `debug`, nor under `quiet`), and the message to the `global` log targets.
pub(crate) fn send_log(level: u8, msg: &str) {
    let clean: String = msg.chars().map(|c| if c.is_control() { '.' } else { c }).collect();
    crate::log::setup::send_global(level, &clean);
    if settings().is_some_and(|s| s.quiet) || level >= crate::log::level::DEBUG {
        return;
    }
    const NAMES: [&str; 8] = ["emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"];
    let (secs, _) = crate::log::date::split(std::time::SystemTime::now());
    let c = crate::log::date::at(secs, true);
    eprintln!(
        "[{}] {:03}/{:02}{:02}{:02} ({}) : {clean}",
        NAMES[usize::from(level.min(7))],
        year_day(c.year.into(), c.month, c.day),
        c.hour,
        c.minute,
        c.second,
        std::process::id()
    );
}

/// The day of the year, from 0 (`tm_yday`).
fn year_day(year: i32, month: i8, day: i8) -> i32 {
    const BEFORE: [i32; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let m = usize::try_from(month - 1).unwrap_or(0).min(11);
    BEFORE[m] + i32::from(leap && m >= 2) + i32::from(day) - 1
}

/// HAProxy's `SEND_ERR`: a Lua error, at `err` in the logs and as an alert on stderr.
pub(crate) fn send_err(msg: &str) {
    crate::log::setup::send_global(crate::log::level::ERR, msg);
    if !settings().is_some_and(|s| s.quiet) {
        eprintln!("[ALERT]    ({}) : {msg}", std::process::id());
    }
}
