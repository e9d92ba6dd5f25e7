//! Builds the runtime model (`crate::proxy`) from the configuration model, once per
//! configuration generation: names become indices, rules, ACLs, log-formats and checks
//! are compiled, TLS contexts and error pages loaded, counters sized. What the model
//! holds but the runtime refuses is reported here with its line.
//! HAProxy counterpart: check_config_validity() (cfgparse.c), the post-parsing of
//! proxy.c and server.c.
//!
//! - `balancer`: a backend's balancer and its `balance hash` expression
//! - `dns`: the `resolvers` sections, and what servers with a name ask of them
//! - `server_state`: servers' states read from state files (and the reload handover)
//! - `server`: one server of a backend, from the configuration or `add server`
//! - `readers`: which code reads each accepted keyword (checked against the tables)
//! - `unsupported`: what the model holds and the runtime refuses at startup

mod balancer;
mod dns;
pub mod lua_host;
pub mod readers;
mod server;
pub mod server_state;
mod unsupported;

pub use server::dynamic_server;

use std::sync::atomic::{AtomicBool, AtomicU32};
use std::sync::Arc;

use rampart_cfg::model::{BackendTarget, Config, ForwardFor, HttpReuse, Mode, OriginalTo};
use rampart_cfg::{Diag, Level, Span};
use tokio::sync::Notify;

use crate::action::{self, WaitBody};
use crate::check as health_check;
use crate::counters::CounterSlab;
use crate::errors::ErrorPages;
use crate::proxy::{BackendRt, FrontendRt, GlobalRt, ListenerRt, ProxyRt, Runtime, Timeouts};
use crate::sample::vars::{ProcVars, VarLimits};

/// Builds the runtime from a parsed configuration. Features the model holds but the
/// runtime does not implement yet are reported as alerts with their line.
/// `threads` sizes the per-thread counters.
pub fn build(cfg: &Config, maxconn: u32, threads: usize) -> Result<Runtime, Vec<Diag>> {
    build_with_warnings(cfg, maxconn, threads).0
}

/// [`build`], with the warnings met on the way (rules, ACLs).
pub fn build_with_warnings(cfg: &Config, maxconn: u32, threads: usize) -> (Result<Runtime, Vec<Diag>>, Vec<Diag>) {
    // the scripts register the `lua.<name>` keywords the rules may use
    let lua_alerts = crate::lua::prepare(cfg);
    if !lua_alerts.is_empty() {
        return (Err(lua_alerts), Vec::new());
    }
    let mut alerts = Vec::new();
    let mut pool_key = 0;
    let mut shared = action::compile::Shared {
        pats: Default::default(),
        userlists: Default::default(),
        proc_vars: Vec::new(),
        warnings: Vec::new(),
        files: Vec::new(),
        req_line: false,
        named_servers: Vec::new(),
        pat_acts: Vec::new(),
    };
    let mut proxies = Vec::with_capacity(cfg.proxies.len());
    let notifies = crate::peers::section_notifies(cfg);
    let mut tls_warnings = Vec::new();
    let mut key_files = crate::tls::ticket_keys::KeyFiles::new(cfg);
    let mut logs = crate::log::setup::Opener::new(cfg, &mut alerts);
    let timed = crate::counters::histogram::wanted(cfg);
    let case_map = crate::h1::case_adjust::CaseMap::new(&cfg.global.h1_case_adjust);
    // the counters of every proxy and server, in shared blocks
    let mut slab = CounterSlab::new(threads);
    for (idx, px) in cfg.proxies.iter().enumerate() {
        let backend_checks = check_rules(cfg, idx, &mut shared, &mut alerts);
        let backups_cut = px.servers.iter().any(|s| s.check.shutdown_backups_on_up);
        let sids = rampart_cfg::model::haproxy_ids(px.effective_servers().iter().map(|s| s.id));
        // `dispatch` / `option transparent` without servers: one hidden server
        let servers = px
            .effective_servers()
            .iter()
            .enumerate()
            .filter_map(|(pos, srv)| {
                pool_key += 1;
                let files = &crate::tls::bind::on_disk;
                let at = server::At { cfg, idx, sid: sids[pos], pool_key: pool_key - 1, timed, backups_cut, files };
                server::server_rt(&at, &mut slab, srv, &backend_checks, &mut alerts, &mut tls_warnings)
            })
            .collect::<Vec<_>>();
        let (lb, lb_expr, lb_backup) = balancer::build(cfg, idx, &mut alerts);
        let backend = default_backend(cfg, idx);
        unsupported::refuse(px, &mut alerts);
        let rules = match action::compile_proxy(cfg, idx, &mut shared) {
            Ok(r) => r,
            Err(e) => {
                alerts.extend(e);
                Default::default()
            }
        };
        // the frontend's and backend's own counters share their cache lines
        let mut counters = slab.group(7);
        proxies.push(ProxyRt {
            name: px.name.clone(),
            cap: px.cap,
            mode: px.mode,
            timeouts: Timeouts { indep: px.options.independent_streams, ..timeouts(&px.timeouts) },
            forwardfor: px.options.forwardfor.as_ref().map(forwardfor),
            originalto: px.options.originalto.as_ref().map(originalto),
            restrict_req_hdr_names: px.options.restrict_req_hdr_names,
            // a FastCGI backend waits for the body too (HAProxy's fcgi-app filter does):
            // CONTENT_LENGTH of a chunked body is then the whole of it (up to a buffer)
            buffer_request: (px.options.http_buffer_request || px.fcgi_app.is_some())
                .then(|| WaitBody { time: timeouts(&px.timeouts).http_request, at_least: 0 }),
            http_conn_mode: px.options.http_conn_mode,
            pretend_keepalive: px.options.http_pretend_keepalive,
            accept_invalid_req: px.options.accept_invalid_req,
            accept_invalid_res: px.options.accept_invalid_res,
            ignore_probes: px.options.http_ignore_probes,
            no_h2_upgrade: px.options.disable_h2_upgrade,
            nolinger: px.options.nolinger,
            use_proxy_header: px.options.http_use_proxy_header,
            idle_close_on_response: px.options.idle_close_on_response,
            // as in HAProxy, an HTTP-only option
            checkcache: px.options.checkcache && px.mode == Mode::Http,
            redir_servers: px.mode == Mode::Http && px.servers.iter().any(|s| s.redir.is_some()),
            h1_case_client: case_map.clone().filter(|_| px.options.h1_case_adjust_bogus_client),
            h1_case_server: case_map.clone().filter(|_| px.options.h1_case_adjust_bogus_server),
            // HAProxy keeps connections without a server private to their session
            http_reuse: if px.implicit_server.is_some() { HttpReuse::Never } else { px.http_reuse },
            max_ka_queue: px.max_keep_alive_queue,
            fcgi: fcgi_app(cfg, px, &mut logs, &mut alerts),
            // `retry-on none`: a failed connection is not retried
            retries: if px.retry_on_conn_failure { px.retries } else { 0 },
            // as in HAProxy, ignored outside HTTP mode
            retry_on_response: (px.mode == Mode::Http && px.retry_on_response.any())
                .then(|| Box::new(px.retry_on_response.clone())),
            l7_retries: px.retries,
            redispatch: px.options.redispatch,
            persist: px.options.persist,
            persist_rdp: px.persist_rdp_cookie.as_deref().filter(|_| px.mode == Mode::Tcp).map(Box::from),
            replay_on_close: px.mode == Mode::Http
                && !px.retry_on_response.explicit
                && px.options.redispatch
                && px.retries > 0,
            abortonclose: px.options.abortonclose,
            clitcpka: crate::io::keepalive(&px.options.clitcpka),
            srvtcpka: crate::io::keepalive(&px.options.srvtcpka),
            errors: ErrorPages::new(&px.errorfiles),
            description: px.description.as_deref().map(Box::from),
            disabled: px.disabled,
            rules,
            fe: FrontendRt {
                // with the `fullconn` below and the global limits: `set_maxconn`
                maxconn: AtomicU32::new(0),
                cur_conns: AtomicU32::new(0),
                conn_released: Notify::new(),
                listen: tokio::sync::watch::Sender::new(crate::proxy::ListenState::Running),
                backend,
                // a TCP frontend whose content rules have nothing to read in TCP mode
                // is served as HTTP from the start: its stream would become HTTP at once
                http: px.mode == Mode::Http
                    || (px.rules.tcp_request_content.is_empty() && serves_http_backend(cfg, idx)),
                cum_conn: counters.counter(),
                denied_conn: counters.counter(),
                denied_sess: counters.counter(),
                denied_req: counters.counter(),
                pp_failed: counters.counter(),
                tls_failed: counters.counter(),
                listeners: listeners(px, &cfg.global.ssl, &mut key_files, &mut alerts, &mut tls_warnings, threads),
                capture_cookie: px.captures.cookie.as_ref().map(|c| (c.name.as_bytes().into(), c.len)),
                keep_req_line: false,
            },
            be: BackendRt {
                lb,
                lb_expr,
                lb_backup: lb_backup.map(Box::new),
                has_sni: servers
                    .iter()
                    .any(|s| s.tls.as_deref().is_some_and(|t| t.traffic().is_some() && t.sni.is_some())),
                servers: servers.into(),
                queue: Default::default(),
                cookie: px.cookie.clone().map(Box::new),
                fullconn: 0,
                cum_conn: counters.counter(),
                state: Default::default(),
                send_name: px.send_name_header.as_deref().map(|h| h.as_bytes().into()),
            },
            stats: crate::stats::ProxyStats::new(&mut slab, timed),
            stats_page: px.stats.as_ref().map(|p| Box::new(crate::stats::page::Page::new(p, &cfg.global))),
            log: logs.proxy(cfg, idx, &mut alerts),
            email_alert: crate::mailers::EmailAlertRt::build(cfg, &px.name, &px.options.email_alert).map(Box::new),
            comp: px.compression.clone().filter(|_| px.mode == Mode::Http).map(Box::new),
            trace: px.filters.iter().find_map(|f| match &f.kind {
                rampart_cfg::model::FilterKind::Trace(t) if px.mode == Mode::Http => Some(Box::new(t.clone())),
                _ => None,
            }),
            table: stick_table(cfg, idx, &notifies),
        });
    }
    crate::health::resolve_tracks(cfg, &mut proxies, &mut alerts);
    // COMPAT: HAProxy keeps the request line when its frontend logs it or has an HTTP
    // fetch in a log-format; rampart keeps it in every frontend once any rule reads it.
    for px in proxies.iter_mut().filter(|_| shared.req_line) {
        px.fe.keep_req_line = true;
    }
    let log_forwards = crate::log::forward::build(cfg, &mut logs, &mut alerts);
    shared.bind_pat_refs();
    crate::lua::publish_maps(shared.pats.files());
    let peer_tables = peer_tables(cfg, &notifies);
    let all_tables: Vec<_> =
        proxies.iter().map(|p| p.table.clone()).chain(peer_tables.iter().cloned().map(Some)).collect();
    let mut peer_diags = Vec::new();
    let peers = crate::peers::build(cfg, &all_tables, &notifies, &mut peer_diags);
    let peers_logs = peers_logs(cfg, &peers, &mut logs, &mut alerts);
    let (peer_alerts, peer_warnings): (Vec<_>, Vec<_>) = peer_diags.into_iter().partition(|d| d.level == Level::Alert);
    alerts.extend(peer_alerts);
    let mut warnings = shared.warnings;
    warnings.extend(peer_warnings);
    warnings.extend(tls_warnings);
    // Password hashes rampart cannot verify are alerts; hashes no password matches,
    // warnings.
    for d in crate::auth::diagnostics(cfg) {
        if d.level == Level::Alert {
            alerts.push(d);
        } else {
            warnings.push(d);
        }
    }
    if !alerts.is_empty() {
        return (Err(alerts), warnings);
    }
    crate::splice::set_pipe_size(cfg.global.pipesize);
    crate::splice::set_disabled(cfg.global.nosplice);
    // HAProxy counts the start line in `tune.http.maxhdr`
    rampart_proto::h1::set_max_headers(
        cfg.global.http_maxhdr.map_or(rampart_proto::h1::MAX_HEADERS, |n| usize::from(n) - 1),
    );
    let mut rt = Runtime {
        stats: crate::stats::Facts::new(cfg, threads),
        proxies,
        bufsize: cfg.global.bufsize,
        max_head: cfg.global.bufsize.saturating_sub(cfg.global.maxrewrite).max(1024),
        log_uri_len: cfg.global.http_log_uri_len.unwrap_or(crate::log::stream_log::MAX_URI),
        h2: cfg.global.h2,
        comp_level: cfg.global.comp_maxlevel,
        comp_limits: std::sync::Arc::new(crate::comp::limit::Limits::new(
            cfg.global.comp_rate_lim,
            cfg.global.comp_min_idle,
            cfg.global.maxzlibmem,
        )),
        sockbufs: cfg.global.sockbufs,
        caches: cfg.caches.iter().map(|c| std::sync::Arc::new(crate::cache::Cache::new(c.clone()))).collect(),
        global: GlobalRt {
            maxconn: AtomicU32::new(0),
            hard_maxconn: 0,
            cur_conns: AtomicU32::new(0),
            conn_released: Notify::new(),
            stopping: AtomicBool::new(false),
            listeners_open: AtomicU32::new(0),
            listener_closed: Notify::new(),
            max_spread_checks: cfg.global.max_spread_checks,
            accept_rate: [cfg.global.maxconnrate, cfg.global.maxsessrate]
                .into_iter()
                .filter(|&l| l > 0)
                .min()
                .map(crate::counters::accept_rate::AcceptRate::new),
            rate_limits: (cfg.global.maxconnrate, cfg.global.maxsessrate),
            grace: cfg.global.grace,
            stop_announced: AtomicBool::new(false),
            close_spread: cfg.global.close_spread,
            stop_started: std::sync::OnceLock::new(),
            ssl: crate::tls::limit::SslLimits::new(cfg.global.maxsslconn, cfg.global.maxsslrate),
        },
        proc_vars: ProcVars::new(var_limits(&cfg.global.vars)),
        rule_files: std::mem::take(&mut shared.files).into_boxed_slice(),
        log_forwards,
        resolvers: dns::resolvers(cfg),
        peer_tables,
        peers,
        peers_logs,
        named_servers: std::mem::take(&mut shared.named_servers).into_boxed_slice(),
        pat_refs: shared.pats.finish(),
    };
    set_maxconn(&mut rt, cfg, maxconn);
    for v in &shared.proc_vars {
        rt.proc_vars.declare(v);
    }
    if let Err(alerts) = global_set_vars(cfg, &rt) {
        return (Err(alerts), warnings);
    }
    crate::log::set_global(logs.global_loggers());
    crate::log::ring::set_rings(logs.rings.clone());
    (Ok(rt), warnings)
}

/// The compiled check rules of proxy `idx`, with its patterns and variables shared;
/// a plain connect check when they do not compile (the alerts say why).
fn check_rules(
    cfg: &Config,
    idx: usize,
    shared: &mut action::compile::Shared,
    alerts: &mut Vec<Diag>,
) -> std::sync::Arc<health_check::TcpChk> {
    if !cfg.proxies[idx].cap.backend {
        return std::sync::Arc::new(health_check::TcpChk::plain());
    }
    let mut cx = crate::sample::expr::CompileCx::new(cfg, idx, crate::sample::expr::Site::TcpCheck);
    cx.pats = shared.pats.clone();
    cx.userlists = shared.userlists.clone();
    let rules = health_check::compile_backend(&cfg.proxies[idx], &mut cx).unwrap_or_else(|d| {
        alerts.extend(d);
        std::sync::Arc::new(health_check::TcpChk::plain())
    });
    for v in cx.proc_vars {
        if !shared.proc_vars.contains(&v) {
            shared.proc_vars.push(v);
        }
    }
    shared.named_servers.extend(cx.named_servers);
    rules
}

/// Runs the `set-var` / `set-var-fmt` lines of `global` in order, as HAProxy does
/// while parsing: each sees the `proc.` variables the lines above it set.
fn global_set_vars(cfg: &Config, rt: &Runtime) -> Result<(), Vec<Diag>> {
    let mut alerts = Vec::new();
    for gv in &cfg.global.set_vars {
        let Ok(var) = crate::sample::vars::parse_name(format!("proc.{}", gv.var.name).as_bytes()) else { continue };
        if let Err(msg) = crate::proxy::proc_vars::set(cfg, rt, &var, &gv.value) {
            alerts.push(Diag::alert(Some(gv.span.clone()), msg));
        }
    }
    if alerts.is_empty() {
        Ok(())
    } else {
        Err(alerts)
    }
}

/// The `tune.vars.*-max-size` budgets.
/// `None` (unlimited) is 0 for the variable stores.
fn var_limits(m: &rampart_cfg::model::VarsLimits) -> VarLimits {
    let bytes = |v: Option<u64>| v.map_or(0, |n| n as usize);
    VarLimits {
        global: bytes(m.global),
        proc: bytes(m.proc),
        sess: bytes(m.sess),
        txn: bytes(m.txn),
        reqres: bytes(m.reqres),
        check: bytes(m.check),
    }
}

/// The alerts and warnings [`build`] would report, for `-c` and startup before binding.
pub fn check(cfg: &Config) -> Vec<Diag> {
    check_then(cfg, AfterCheck::Drop).0
}

/// What follows a check: it decides what becomes of the runtime built for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterCheck {
    /// The runtime is freed.
    Drop,
    /// The process runs with `threads` worker threads: the runtime is built for them
    /// and kept, to be sized for the process's `maxconn` ([`set_maxconn`]) instead of
    /// built again (a second build was a third of the time to listening at 20 000
    /// backends, and the counters of idle servers cost no memory whatever the threads:
    /// `counters::Cells`).
    Keep { threads: usize },
    /// The process exits (`-c`): it is not freed at all (a tenth of a check's time at
    /// 20 000 backends), the exit gives it back.
    Exit,
}

/// Builds the runtime for the check of `cfg`: its alerts and warnings, and the runtime
/// when `after` keeps it (and the configuration has no alert).
pub fn check_then(cfg: &Config, after: AfterCheck) -> (Vec<Diag>, Option<Runtime>) {
    let threads = match after {
        AfterCheck::Keep { threads } => threads,
        AfterCheck::Drop | AfterCheck::Exit => 1,
    };
    let (rt, mut diags) = build_with_warnings(cfg, 1, threads);
    let kept = match rt {
        Err(alerts) => {
            diags.extend(alerts);
            None
        }
        Ok(rt) if after == AfterCheck::Exit => {
            std::mem::forget(rt);
            None
        }
        Ok(rt) => Some(rt).filter(|_| after != AfterCheck::Drop),
    };
    diags.extend(crate::stats::socket::check(cfg));
    (diags, kept)
}

/// Sets what depends on the process's `maxconn` in runtime `rt` of `cfg`: the global
/// limit, the frontends' (without their own `maxconn`) and the backends' default
/// `fullconn`. [`build`] ends with it; a runtime kept by [`check_then`] is sized so
/// once the process knows its `maxconn`.
pub fn set_maxconn(rt: &mut Runtime, cfg: &Config, maxconn: u32) {
    let fe_maxconns = frontend_maxconns(cfg, maxconn);
    for ((p, px), fe_maxconn) in rt.proxies.iter_mut().zip(&cfg.proxies).zip(fe_maxconns) {
        p.fe.maxconn = AtomicU32::new(px.maxconn.unwrap_or(maxconn));
        p.be.fullconn = fullconn(px, fe_maxconn);
    }
    rt.global.maxconn = AtomicU32::new(maxconn);
    rt.global.hard_maxconn = maxconn;
}

fn not_supported(span: &Span, what: &str) -> Diag {
    Diag::alert(Some(span.clone()), format!("{what} are not supported yet"))
}

/// The backend's `fullconn`, else HAProxy's default: a tenth of the `maxconn` of the
/// frontends that send it traffic (at least 1; [`frontend_maxconns`]).
fn fullconn(px: &rampart_cfg::model::Proxy, fe_maxconn: u64) -> u32 {
    if px.fullconn > 0 {
        return px.fullconn;
    }
    u32::try_from(fe_maxconn.div_ceil(10)).unwrap_or(u32::MAX).max(1)
}

/// Per proxy, the summed `maxconn` of the frontends whose default backend it is (and
/// of a `listen` itself), in one pass over the proxies. `global_maxconn` is a
/// frontend's `maxconn` when it sets none.
// COMPAT: HAProxy also counts the frontends naming it in a `use_backend` rule; this
// counts only those whose default backend it is (and a `listen` itself).
fn frontend_maxconns(cfg: &Config, global_maxconn: u32) -> Vec<u64> {
    let mut sums = vec![0u64; cfg.proxies.len()];
    for (f, px) in cfg.proxies.iter().enumerate().filter(|(_, px)| px.cap.frontend) {
        if let Some(b) = default_backend(cfg, f) {
            sums[b] += u64::from(px.maxconn.unwrap_or(global_maxconn));
        }
    }
    sums
}

/// The backend of frontend `idx` when no `use_backend` rule applies: its
/// `default_backend`, else itself for a `listen`.
fn default_backend(cfg: &Config, idx: usize) -> Option<usize> {
    let px = &cfg.proxies[idx];
    match &px.default_backend {
        Some(db) => Some(db.index),
        None => px.cap.backend.then_some(idx),
    }
}

/// Whether a `mode tcp` frontend hands its connections to an HTTP backend (its
/// default one, or the one of an unconditional `use_backend`): HAProxy then upgrades
/// the stream to HTTP, and rampart serves the connection as HTTP from the start.
fn serves_http_backend(cfg: &Config, idx: usize) -> bool {
    let px = &cfg.proxies[idx];
    let first_static = px.use_backends.iter().find_map(|ub| match (&ub.cond, &ub.target) {
        (None, BackendTarget::Static(b)) => Some(b.index),
        _ => None,
    });
    first_static.or_else(|| default_backend(cfg, idx)).is_some_and(|b| cfg.proxies[b].mode == Mode::Http)
}

/// `option forwardfor` with its header name lowercased, as HAProxy writes every header
/// name on HTTP/1 output (`header X-Client` arrives as `x-client`).
fn forwardfor(ff: &ForwardFor) -> ForwardFor {
    ForwardFor { header: ff.header.to_ascii_lowercase(), ..ff.clone() }
}

/// `option originalto` with its header name lowercased (see [`forwardfor`]).
fn originalto(ot: &OriginalTo) -> OriginalTo {
    OriginalTo { header: ot.header.to_ascii_lowercase(), ..ot.clone() }
}

fn timeouts(t: &rampart_cfg::model::Timeouts) -> Timeouts {
    let http_request = t.http_request.or(t.client);
    Timeouts {
        client: t.client,
        server: t.server,
        connect: t.connect,
        queue: t.queue.or(t.connect),
        http_request,
        http_keep_alive: t.http_keep_alive.or(http_request),
        tunnel: t.tunnel,
        client_fin: t.client_fin,
        server_fin: t.server_fin,
        indep: false,
    }
}

/// The listeners of `px`, in the order the listener registry binds them, with the
/// TLS configuration of each `bind ... ssl` line (alerts and warnings go to
/// `alerts` and `warnings`); `key_files`: the `tls-ticket-keys` files read so far.
/// The number of each listener of `px` (every address of its `bind` lines, in order):
/// its `bind ... id`, else the first number not taken from its position on, as
/// HAProxy's check_config_validity() numbers them (the position counts every
/// listener, numbered or not).
fn listener_ids(px: &rampart_cfg::model::Proxy) -> Vec<u32> {
    let mut used: std::collections::HashSet<u32> = px.binds.iter().filter_map(|b| b.id).collect();
    let mut next = 1;
    let mut out = Vec::new();
    for b in &px.binds {
        for _ in &b.addrs {
            let id = b.id.unwrap_or_else(|| {
                while used.contains(&next) {
                    next += 1;
                }
                used.insert(next);
                next
            });
            out.push(id);
            next += 1;
        }
    }
    out
}

fn listeners(
    px: &rampart_cfg::model::Proxy,
    global: &rampart_cfg::model::GlobalSsl,
    key_files: &mut crate::tls::ticket_keys::KeyFiles,
    alerts: &mut Vec<Diag>,
    warnings: &mut Vec<Diag>,
    threads: usize,
) -> Box<[ListenerRt]> {
    let mut out: Vec<ListenerRt> = Vec::new();
    let ids = listener_ids(px);
    for b in &px.binds {
        // as HAProxy, a bind without `ssl` reads its key file too
        let plain_keys = b.ssl.as_deref().filter(|s| !s.enabled).and_then(|s| s.tls_ticket_keys.as_deref());
        if let Some(Err(e)) = plain_keys.map(|f| key_files.get(f)) {
            alerts.push(Diag::alert(Some(b.span.clone()), format!("{} : {e}", b.ctx)));
        }
        let mut build = |s| crate::tls::bind::build_keyed(s, global, key_files);
        let tls = b.ssl.as_deref().filter(|s| s.enabled).and_then(|s| match build(s) {
            Ok((mut tls, warns)) => {
                warnings
                    .extend(warns.into_iter().map(|w| Diag::warning(Some(b.span.clone()), format!("{} : {w}", b.ctx))));
                tls.origin = crate::tls::bind::BindOrigin {
                    proxy: px.name.clone(),
                    addr: b.ctx.strip_prefix("'bind ").and_then(|r| r.split('\'').next()).unwrap_or("").to_owned(),
                    file: b.span.file.to_string(),
                    line: b.span.line,
                };
                Some(Arc::new(tls))
            }
            Err(errs) => {
                alerts.extend(errs.into_iter().map(|e| Diag::alert(Some(b.span.clone()), format!("{} : {e}", b.ctx))));
                None
            }
        });
        if let Some(p) = b.proto.filter(|p| !p.usable(px.mode == Mode::Http)) {
            let mode = if px.mode == Mode::Http { "http" } else { "tcp" };
            let msg =
                format!("{} : MUX protocol '{}' is not usable in mode {mode} on the client side", b.ctx, p.name());
            alerts.push(Diag::alert(Some(b.span.clone()), msg));
        }
        for a in &b.addrs {
            let sid = ids[out.len()];
            let stats = px.options.socket_stats.then(|| Box::new(listener_stats(b.name.as_deref(), sid, a, threads)));
            out.push(ListenerRt {
                id: sid,
                maxconn: b.maxconn.unwrap_or(0),
                name: b.name.as_deref().map(Box::from),
                accept_proxy: b.accept_proxy,
                tls: tls.clone(),
                proto: b.proto,
                conns: std::sync::atomic::AtomicU32::new(0),
                stats,
            });
        }
    }
    out.into_boxed_slice()
}

/// The stats row of listener `sid` (from 1) of a frontend with `option socket-stats`:
/// named as its `bind` line names it, else `sock-<sid>` (HAProxy's naming).
fn listener_stats(
    name: Option<&str>,
    sid: u32,
    addr: &rampart_cfg::model::ListenAddr,
    threads: usize,
) -> crate::proxy::ListenerStatsRt {
    use rampart_cfg::model::ListenAddr;
    let addr = match addr {
        ListenAddr::Inet(sa) => Some(sa.to_string().into()),
        ListenAddr::Unix(_) => Some("unix".into()),
        // an inherited socket: the address it is bound to, as HAProxy reads it
        ListenAddr::Fd(fd) => {
            let ss: Option<nix::sys::socket::SockaddrStorage> = nix::sys::socket::getsockname(*fd).ok();
            let sa = ss.as_ref().and_then(|ss| {
                ss.as_sockaddr_in()
                    .map(|v4| std::net::SocketAddr::V4((*v4).into()))
                    .or_else(|| ss.as_sockaddr_in6().map(|v6| std::net::SocketAddr::V6((*v6).into())))
            });
            sa.map(|sa| sa.to_string().into())
        }
    };
    crate::proxy::ListenerStatsRt {
        name: name.map_or_else(|| format!("sock-{sid}").into(), Box::from),
        sid,
        addr,
        counters: crate::counters::stats::ListenerStats::new(threads),
    }
}

/// The stick table of proxy `idx`, if it declares one. As HAProxy, a table that `stick`
/// rules store servers in stores `server_id` and `server_key` even when its `store`
/// list omits them.
fn stick_table(cfg: &Config, idx: usize, notifies: &Notifies) -> Option<std::sync::Arc<crate::stick::StickTable>> {
    let px = &cfg.proxies[idx];
    let def = with_server_types(cfg, &px.name, px.stick_table.clone()?);
    Some(std::sync::Arc::new(replicated(crate::stick::StickTable::new(&px.name, &def), &def, notifies)))
}

/// Table `def`, named `name` in `stick` rules, with `server_id` and `server_key` added
/// when some proxy's `stick` rules store servers in it (as HAProxy does).
fn with_server_types(
    cfg: &Config,
    name: &str,
    mut def: rampart_cfg::model::StickTableDef,
) -> rampart_cfg::model::StickTableDef {
    use rampart_cfg::model::{DataType, StickKind, StoreSpec};
    let stored_in = |p: &rampart_cfg::model::Proxy| {
        p.stick_rules
            .iter()
            .any(|r| r.kind != StickKind::Match && r.table.as_deref().map_or(p.name == name, |t| t == name))
    };
    if cfg.proxies.iter().any(stored_in) {
        for data in [DataType::ServerId, DataType::ServerKey] {
            if def.stores(data).is_none() {
                def.store.push(StoreSpec { data, period: None, nb: 1 });
            }
        }
        def.store.sort_by_key(|s| s.data);
    }
    def
}

/// The wake-ups of the replicating `peers` sections, by name.
type Notifies = std::collections::HashMap<String, std::sync::Arc<tokio::sync::Notify>>;

/// `t`, replicated when its `peers` section replicates.
fn replicated(
    t: crate::stick::StickTable,
    def: &rampart_cfg::model::StickTableDef,
    notifies: &Notifies,
) -> crate::stick::StickTable {
    match def.peers.as_ref().and_then(|p| notifies.get(p)) {
        Some(n) => t.replicated(n.clone()),
        None => t,
    }
}

/// The tables of the `peers` sections (`<section>/<table>`), in order.
/// The `log` targets of each replicating `peers` section (`peers`, in its order).
fn peers_logs(
    cfg: &Config,
    peers: &[std::sync::Arc<crate::peers::types::PeersRt>],
    logs: &mut crate::log::setup::Opener,
    alerts: &mut Vec<rampart_cfg::Diag>,
) -> Vec<crate::log::sink::Loggers> {
    let sections = peers.iter().map(|p| cfg.peers.iter().find(|s| s.name == p.name));
    let mut out = Vec::with_capacity(peers.len());
    for s in sections {
        let lines = s.map_or(&[][..], |s| &s.logs);
        let sinks = logs.sinks(&s.map(|s| s.name.clone()).unwrap_or_default(), lines, alerts);
        out.push(crate::log::sink::Loggers { sinks, ident: logs.ident.clone() });
    }
    out
}

fn peer_tables(cfg: &Config, notifies: &Notifies) -> Vec<std::sync::Arc<crate::stick::StickTable>> {
    let mut out = Vec::new();
    for s in &cfg.peers {
        for t in &s.tables {
            let def = with_server_types(cfg, &format!("{}/{}", s.name, t.name), t.def.clone());
            let table = crate::stick::StickTable::new(&s.table_id(t), &def);
            let table = match notifies.get(&s.name) {
                Some(n) => table.replicated(n.clone()),
                None => table,
            };
            out.push(std::sync::Arc::new(table));
        }
    }
    out
}

/// The FastCGI application of backend `px` (`use-fcgi-app`), compiled.
fn fcgi_app(
    cfg: &rampart_cfg::model::Config,
    px: &rampart_cfg::model::Proxy,
    logs: &mut crate::log::setup::Opener,
    alerts: &mut Vec<Diag>,
) -> Option<Arc<crate::proxy::fcgi::FcgiAppRt>> {
    let (name, span) = px.fcgi_app.as_ref()?;
    let app = cfg.fcgi_apps.iter().find(|a| &a.name == name)?;
    match crate::proxy::fcgi::FcgiAppRt::build(app) {
        Ok(mut rt) => {
            // `log-stderr`: the application's name as the lines' tag (HAProxy)
            if !app.log_stderr.is_empty() {
                let sinks = logs.sinks(&app.name, &app.log_stderr, alerts);
                let ident = logs.ident.with_tag(Some(&app.name));
                rt.stderr = Some(crate::log::sink::Loggers { sinks, ident });
            }
            Some(Arc::new(rt))
        }
        Err(msg) => {
            alerts.push(Diag::alert(Some(span.clone()), msg));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn keep_alive_timeout_falls_back_to_http_request_then_client() {
        let t = rampart_cfg::model::Timeouts { client: Some(Duration::from_secs(9)), ..Default::default() };
        assert_eq!(timeouts(&t).http_keep_alive, Some(Duration::from_secs(9)));
        let t = rampart_cfg::model::Timeouts {
            client: Some(Duration::from_secs(9)),
            http_request: Some(Duration::from_secs(2)),
            ..Default::default()
        };
        assert_eq!(timeouts(&t).http_keep_alive, Some(Duration::from_secs(2)));
    }

    #[test]
    fn replay_on_close_needs_redispatch_retries_and_no_retry_on_line() {
        let replay = |lines: &str| {
            let text = format!(
                "defaults\n  mode http\n  timeout client 1s\n  timeout server 1s\n  timeout connect 1s\n\
                 backend b\n{lines}  server s1 127.0.0.1:1\n"
            );
            build(&crate::sample::testutil::config(&text), 100, 1).unwrap().proxies[0].replay_on_close
        };
        assert!(replay("  option redispatch\n"));
        assert!(!replay(""));
        assert!(!replay("  option redispatch\n  retries 0\n"));
        assert!(!replay("  option redispatch\n  retry-on conn-failure\n"));
        assert!(!replay("  option redispatch\n  retry-on empty-response\n"));
        assert!(!replay("  option redispatch\n  mode tcp\n"));
    }
}
