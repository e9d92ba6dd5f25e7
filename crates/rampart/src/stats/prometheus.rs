//! The Prometheus exporter (`http-request use-service prometheus-exporter`): the
//! `show info` and `show stat` values under HAProxy 2.6's metric names and labels
//! (`haproxy_process_*`, `haproxy_frontend_*{proxy}`, `haproxy_backend_*{proxy}`,
//! `haproxy_server_*{proxy,server}`), in the text exposition format. A value rampart does
//! not measure yet is exported as `NaN`, as HAProxy exports a field it has no value for,
//! never as 0. `?scope=global|frontend|backend|server|sticktable` (repeatable, `*` for
//! all) limits the output, as in HAProxy. The stick tables (`haproxy_sticktable_size`,
//! `haproxy_sticktable_used`, labelled `name` and `type`) come last, byte for byte as
//! HAProxy 2.6 writes them. Beyond HAProxy: latency histograms per backend and server
//! (`haproxy_backend_response_time_seconds_bucket{proxy,le}` ..., see
//! `counters::histogram`) after each part's metrics.
//! HAProxy counterpart: addons/promex/service-prometheus.c.

use std::fmt::Write as _;

use super::cmd::Level;
use super::stat::{self, Kind, Request, Row};
use super::{histogram, info, Val};
use crate::proxy::Runtime;

/// Where a metric's value comes from.
#[derive(Debug, Clone, Copy)]
enum Src {
    /// A `show info` field.
    Info(&'static str),
    /// A `show stat` field of the rows of the metric's kind.
    Stat(&'static str),
    /// `hrsp_1xx` ... `hrsp_other`, one sample per `code` label.
    Codes,
    /// The row's status, one sample per `state` label.
    Status,
    /// `haproxy_process_build_info{version}`.
    BuildInfo,
    /// A server's last health check status, one sample per `state` label (the
    /// statuses of finished checks), for servers with a health check.
    CheckStatus,
}

use Src::{Codes, Info, Stat, Status};

type Metric = (&'static str, &'static str, Src);

const PROCESS: &[Metric] = &[
    ("nbthread", "gauge", Info("Nbthread")),
    ("nbproc", "gauge", Info("Nbproc")),
    ("relative_process_id", "gauge", Info("Process_num")),
    ("uptime_seconds", "gauge", Info("Uptime_sec")),
    ("pool_failures_total", "counter", Info("PoolFailed")),
    ("max_fds", "gauge", Info("Ulimit-n")),
    ("max_sockets", "gauge", Info("Maxsock")),
    ("max_connections", "gauge", Info("Maxconn")),
    ("hard_max_connections", "gauge", Info("Hard_maxconn")),
    ("current_connections", "gauge", Info("CurrConns")),
    ("connections_total", "counter", Info("CumConns")),
    ("requests_total", "counter", Info("CumReq")),
    ("max_ssl_connections", "gauge", Info("MaxSslConns")),
    ("current_ssl_connections", "gauge", Info("CurrSslConns")),
    ("ssl_connections_total", "counter", Info("CumSslConns")),
    ("max_pipes", "gauge", Info("Maxpipes")),
    ("pipes_used_total", "counter", Info("PipesUsed")),
    ("pipes_free_total", "counter", Info("PipesFree")),
    ("current_connection_rate", "gauge", Info("ConnRate")),
    ("limit_connection_rate", "gauge", Info("ConnRateLimit")),
    ("max_connection_rate", "gauge", Info("MaxConnRate")),
    ("current_session_rate", "gauge", Info("SessRate")),
    ("limit_session_rate", "gauge", Info("SessRateLimit")),
    ("max_session_rate", "gauge", Info("MaxSessRate")),
    ("current_ssl_rate", "gauge", Info("SslRate")),
    ("limit_ssl_rate", "gauge", Info("SslRateLimit")),
    ("max_ssl_rate", "gauge", Info("MaxSslRate")),
    ("current_frontend_ssl_key_rate", "gauge", Info("SslFrontendKeyRate")),
    ("max_frontend_ssl_key_rate", "gauge", Info("SslFrontendMaxKeyRate")),
    ("frontend_ssl_reuse", "gauge", Info("SslFrontendSessionReuse_pct")),
    ("current_backend_ssl_key_rate", "gauge", Info("SslBackendKeyRate")),
    ("max_backend_ssl_key_rate", "gauge", Info("SslBackendMaxKeyRate")),
    ("ssl_cache_lookups_total", "counter", Info("SslCacheLookups")),
    ("ssl_cache_misses_total", "counter", Info("SslCacheMisses")),
    ("http_comp_bytes_in_total", "counter", Info("CompressBpsIn")),
    ("http_comp_bytes_out_total", "counter", Info("CompressBpsOut")),
    ("limit_http_comp", "gauge", Info("CompressBpsRateLim")),
    ("current_zlib_memory", "gauge", Info("ZlibMemUsage")),
    ("max_zlib_memory", "gauge", Info("MaxZlibMemUsage")),
    ("current_tasks", "gauge", Info("Tasks")),
    ("current_run_queue", "gauge", Info("Run_queue")),
    ("idle_time_percent", "gauge", Info("Idle_pct")),
    ("stopping", "gauge", Info("Stopping")),
    ("jobs", "gauge", Info("Jobs")),
    ("unstoppable_jobs", "gauge", Info("Unstoppable Jobs")),
    ("listeners", "gauge", Info("Listeners")),
    ("active_peers", "gauge", Info("ActivePeers")),
    ("connected_peers", "gauge", Info("ConnectedPeers")),
    ("dropped_logs_total", "counter", Info("DroppedLogs")),
    ("busy_polling_enabled", "gauge", Info("BusyPolling")),
    ("failed_resolutions", "counter", Info("FailedResolutions")),
    ("bytes_out_total", "counter", Info("TotalBytesOut")),
    ("spliced_bytes_out_total", "counter", Info("TotalSplicdedBytesOut")),
    ("bytes_out_rate", "gauge", Info("BytesOutRate")),
    ("recv_logs_total", "counter", Info("CumRecvLogs")),
    ("build_info", "gauge", Src::BuildInfo),
    ("max_memory_bytes", "gauge", Info("Memmax_bytes")),
    ("pool_allocated_bytes", "gauge", Info("PoolAlloc_bytes")),
    ("pool_used_bytes", "gauge", Info("PoolUsed_bytes")),
    ("start_time_seconds", "gauge", Info("Start_time_sec")),
];

const FRONTEND: &[Metric] = &[
    ("current_sessions", "gauge", Stat("scur")),
    ("max_sessions", "gauge", Stat("smax")),
    ("limit_sessions", "gauge", Stat("slim")),
    ("sessions_total", "counter", Stat("stot")),
    ("bytes_in_total", "counter", Stat("bin")),
    ("bytes_out_total", "counter", Stat("bout")),
    ("requests_denied_total", "counter", Stat("dreq")),
    ("responses_denied_total", "counter", Stat("dresp")),
    ("request_errors_total", "counter", Stat("ereq")),
    ("status", "gauge", Status),
    ("limit_session_rate", "gauge", Stat("rate_lim")),
    ("max_session_rate", "gauge", Stat("rate_max")),
    ("http_responses_total", "counter", Codes),
    ("http_requests_rate_max", "gauge", Stat("req_rate_max")),
    ("http_requests_total", "counter", Stat("req_tot")),
    ("http_comp_bytes_in_total", "counter", Stat("comp_in")),
    ("http_comp_bytes_out_total", "counter", Stat("comp_out")),
    ("http_comp_bytes_bypassed_total", "counter", Stat("comp_byp")),
    ("http_comp_responses_total", "counter", Stat("comp_rsp")),
    ("connections_rate_max", "gauge", Stat("conn_rate_max")),
    ("connections_total", "counter", Stat("conn_tot")),
    ("intercepted_requests_total", "counter", Stat("intercepted")),
    ("denied_connections_total", "counter", Stat("dcon")),
    ("denied_sessions_total", "counter", Stat("dses")),
    ("failed_header_rewriting_total", "counter", Stat("wrew")),
    ("http_cache_lookups_total", "counter", Stat("cache_lookups")),
    ("http_cache_hits_total", "counter", Stat("cache_hits")),
    ("internal_errors_total", "counter", Stat("eint")),
];

/// The listener metrics (`option socket-stats`), labelled `proxy` and `listener`.
const LISTENER: &[Metric] = &[
    ("current_sessions", "gauge", Stat("scur")),
    ("max_sessions", "gauge", Stat("smax")),
    ("limit_sessions", "gauge", Stat("slim")),
    ("sessions_total", "counter", Stat("stot")),
    ("bytes_in_total", "counter", Stat("bin")),
    ("bytes_out_total", "counter", Stat("bout")),
    ("requests_denied_total", "counter", Stat("dreq")),
    ("responses_denied_total", "counter", Stat("dresp")),
    ("request_errors_total", "counter", Stat("ereq")),
    ("status", "gauge", Status),
    ("denied_connections_total", "counter", Stat("dcon")),
    ("denied_sessions_total", "counter", Stat("dses")),
    ("failed_header_rewriting_total", "counter", Stat("wrew")),
    ("internal_errors_total", "counter", Stat("eint")),
];

const BACKEND: &[Metric] = &[
    ("current_queue", "gauge", Stat("qcur")),
    ("max_queue", "gauge", Stat("qmax")),
    ("current_sessions", "gauge", Stat("scur")),
    ("max_sessions", "gauge", Stat("smax")),
    ("limit_sessions", "gauge", Stat("slim")),
    ("sessions_total", "counter", Stat("stot")),
    ("bytes_in_total", "counter", Stat("bin")),
    ("bytes_out_total", "counter", Stat("bout")),
    ("requests_denied_total", "counter", Stat("dreq")),
    ("responses_denied_total", "counter", Stat("dresp")),
    ("connection_errors_total", "counter", Stat("econ")),
    ("response_errors_total", "counter", Stat("eresp")),
    ("retry_warnings_total", "counter", Stat("wretr")),
    ("redispatch_warnings_total", "counter", Stat("wredis")),
    ("status", "gauge", Status),
    ("weight", "gauge", Stat("weight")),
    ("active_servers", "gauge", Stat("act")),
    ("backup_servers", "gauge", Stat("bck")),
    ("check_up_down_total", "counter", Stat("chkdown")),
    ("check_last_change_seconds", "gauge", Stat("lastchg")),
    ("downtime_seconds_total", "counter", Stat("downtime")),
    ("loadbalanced_total", "counter", Stat("lbtot")),
    ("max_session_rate", "gauge", Stat("rate_max")),
    ("http_responses_total", "counter", Codes),
    ("http_requests_total", "counter", Stat("req_tot")),
    ("client_aborts_total", "counter", Stat("cli_abrt")),
    ("server_aborts_total", "counter", Stat("srv_abrt")),
    ("http_comp_bytes_in_total", "counter", Stat("comp_in")),
    ("http_comp_bytes_out_total", "counter", Stat("comp_out")),
    ("http_comp_bytes_bypassed_total", "counter", Stat("comp_byp")),
    ("http_comp_responses_total", "counter", Stat("comp_rsp")),
    ("last_session_seconds", "gauge", Stat("lastsess")),
    ("queue_time_average_seconds", "gauge", Stat("qtime")),
    ("connect_time_average_seconds", "gauge", Stat("ctime")),
    ("response_time_average_seconds", "gauge", Stat("rtime")),
    ("total_time_average_seconds", "gauge", Stat("ttime")),
    ("failed_header_rewriting_total", "counter", Stat("wrew")),
    ("connection_attempts_total", "counter", Stat("connect")),
    ("connection_reuses_total", "counter", Stat("reuse")),
    ("http_cache_lookups_total", "counter", Stat("cache_lookups")),
    ("http_cache_hits_total", "counter", Stat("cache_hits")),
    ("max_queue_time_seconds", "gauge", Stat("qtime_max")),
    ("max_connect_time_seconds", "gauge", Stat("ctime_max")),
    ("max_response_time_seconds", "gauge", Stat("rtime_max")),
    ("max_total_time_seconds", "gauge", Stat("ttime_max")),
    ("internal_errors_total", "counter", Stat("eint")),
    ("uweight", "gauge", Stat("uweight")),
    ("agg_server_status", "gauge", Stat("agg_server_status")),
    ("agg_server_check_status", "gauge", Stat("agg_server_check_status")),
    ("agg_check_status", "gauge", Stat("agg_check_status")),
];

const SERVER: &[Metric] = &[
    ("current_queue", "gauge", Stat("qcur")),
    ("max_queue", "gauge", Stat("qmax")),
    ("current_sessions", "gauge", Stat("scur")),
    ("max_sessions", "gauge", Stat("smax")),
    ("limit_sessions", "gauge", Stat("slim")),
    ("sessions_total", "counter", Stat("stot")),
    ("bytes_in_total", "counter", Stat("bin")),
    ("bytes_out_total", "counter", Stat("bout")),
    ("responses_denied_total", "counter", Stat("dresp")),
    ("connection_errors_total", "counter", Stat("econ")),
    ("response_errors_total", "counter", Stat("eresp")),
    ("retry_warnings_total", "counter", Stat("wretr")),
    ("redispatch_warnings_total", "counter", Stat("wredis")),
    ("status", "gauge", Status),
    ("weight", "gauge", Stat("weight")),
    ("check_failures_total", "counter", Stat("chkfail")),
    ("check_up_down_total", "counter", Stat("chkdown")),
    ("check_last_change_seconds", "gauge", Stat("lastchg")),
    ("downtime_seconds_total", "counter", Stat("downtime")),
    ("queue_limit", "gauge", Stat("qlimit")),
    ("current_throttle", "gauge", Stat("throttle")),
    ("loadbalanced_total", "counter", Stat("lbtot")),
    ("max_session_rate", "gauge", Stat("rate_max")),
    ("check_status", "gauge", Src::CheckStatus),
    ("http_responses_total", "counter", Codes),
    ("client_aborts_total", "counter", Stat("cli_abrt")),
    ("server_aborts_total", "counter", Stat("srv_abrt")),
    ("last_session_seconds", "gauge", Stat("lastsess")),
    ("queue_time_average_seconds", "gauge", Stat("qtime")),
    ("connect_time_average_seconds", "gauge", Stat("ctime")),
    ("response_time_average_seconds", "gauge", Stat("rtime")),
    ("total_time_average_seconds", "gauge", Stat("ttime")),
    ("failed_header_rewriting_total", "counter", Stat("wrew")),
    ("connection_attempts_total", "counter", Stat("connect")),
    ("connection_reuses_total", "counter", Stat("reuse")),
    ("idle_connections_current", "gauge", Stat("srv_icur")),
    ("idle_connections_limit", "gauge", Stat("src_ilim")),
    ("max_queue_time_seconds", "gauge", Stat("qtime_max")),
    ("max_connect_time_seconds", "gauge", Stat("ctime_max")),
    ("max_response_time_seconds", "gauge", Stat("rtime_max")),
    ("max_total_time_seconds", "gauge", Stat("ttime_max")),
    ("internal_errors_total", "counter", Stat("eint")),
    ("unsafe_idle_connections_current", "gauge", Stat("idle_conn_cur")),
    ("safe_idle_connections_current", "gauge", Stat("safe_conn_cur")),
    ("used_connections_current", "gauge", Stat("used_conn_cur")),
    ("need_connections_current", "gauge", Stat("need_conn_est")),
    ("uweight", "gauge", Stat("uweight")),
];

/// Which parts to export (`?scope=`).
#[derive(Debug, Clone, Copy)]
pub struct Scope {
    pub global: bool,
    pub frontend: bool,
    pub listener: bool,
    pub backend: bool,
    pub server: bool,
    pub sticktable: bool,
}

impl Scope {
    const ALL: Scope =
        Scope { global: true, frontend: true, listener: true, backend: true, server: true, sticktable: true };
    const NONE: Scope =
        Scope { global: false, frontend: false, listener: false, backend: false, server: false, sticktable: false };

    /// From a request's query string: everything without `scope`, else the scopes
    /// named (`scope=` alone: none, `*`: all). `Err` (HAProxy's 400) for a `scope`
    /// without a value or naming no scope, or a parameter with two `=`.
    #[allow(clippy::result_unit_err)]
    pub fn from_query(query: &[u8]) -> Result<Scope, ()> {
        let query = query.split(|&c| c == b'#').next().unwrap_or_default();
        let mut s = Scope::ALL;
        let mut named = false;
        for p in query.split(|&c| c == b'&').filter(|p| !p.is_empty()) {
            let mut kv = p.splitn(3, |&c| c == b'=');
            let (key, value) = (kv.next().unwrap_or_default(), kv.next());
            if kv.next().is_some() {
                return Err(());
            }
            if key != b"scope" {
                continue;
            }
            if !named {
                (named, s) = (true, Scope::NONE);
            }
            match value.ok_or(())? {
                b"" => s = Scope::NONE,
                b"*" => s = Scope::ALL,
                b"global" => s.global = true,
                b"frontend" => s.frontend = true,
                b"listener" => s.listener = true,
                b"backend" => s.backend = true,
                b"server" => s.server = true,
                b"sticktable" => s.sticktable = true,
                _ => return Err(()),
            }
        }
        Ok(s)
    }
}

/// The exposition text.
pub fn render(rt: &Runtime, scope: Scope) -> String {
    let mut out = String::with_capacity(64 * 1024);
    if scope.global {
        for m in PROCESS {
            metric(&mut out, rt, "process", m, &[]);
        }
    }
    let rows = stat::rows(rt, &Request::default());
    for (on, kind, table, part) in [
        (scope.frontend, Kind::Frontend, FRONTEND, "frontend"),
        (scope.listener, Kind::Listener, LISTENER, "listener"),
        (scope.backend, Kind::Backend, BACKEND, "backend"),
        (scope.server, Kind::Server, SERVER, "server"),
    ] {
        if !on {
            continue;
        }
        let mine: Vec<Row> = rows.iter().copied().filter(|r| r.1 == kind).collect();
        for m in table {
            metric(&mut out, rt, part, m, &mine);
        }
        if matches!(kind, Kind::Backend | Kind::Server) && rt.stats.histograms {
            histograms(&mut out, rt, part, &mine);
        }
    }
    if scope.sticktable {
        sticktables(&mut out, rt);
    }
    out
}

/// The stick-table metrics: name and HELP text (HAProxy's `promex_sticktable_metrics`).
const STICKTABLE: &[(&str, &str)] =
    &[("size", "Stick table size."), ("used", "Number of entries used in this stick table.")];

/// `haproxy_sticktable_*`: each metric's HELP and TYPE, then a sample per table, the
/// tables last declared first (HAProxy's `stktables_list`); nothing without a table.
fn sticktables(out: &mut String, rt: &Runtime) {
    let tables: Vec<_> = rt.stick_tables().collect();
    if tables.is_empty() {
        return;
    }
    for (name, help) in STICKTABLE {
        let _ = writeln!(out, "# HELP haproxy_sticktable_{name} {help}\n# TYPE haproxy_sticktable_{name} gauge");
        for t in tables.iter().rev() {
            let v = if *name == "size" { t.size } else { t.used() };
            let _ =
                writeln!(out, "haproxy_sticktable_{name}{{name=\"{}\",type=\"{}\"}} {v}", t.name, t.key_type.name());
        }
    }
}

/// The latency histograms of the backends or servers in `rows` (a rampart extension:
/// `counters::histogram`), as Prometheus histograms. A row's series appear once it has
/// a sample (as a labelled histogram of a Prometheus client library appears when first
/// observed): an idle configuration exports what HAProxy exports, no more.
fn histograms(out: &mut String, rt: &Runtime, part: &str, rows: &[Row]) {
    let timers = |row: Row| {
        let px = &rt.proxies[row.0];
        match row.2 {
            Some(s) => px.be.servers[s].stats.timers.as_deref(),
            None => px.stats.be_timers.as_deref(),
        }
    };
    let Some(first) = rows.iter().find_map(|&row| timers(row)) else { return };
    for (i, (name, help, _)) in first.named().into_iter().enumerate() {
        let snaps: Vec<_> = rows
            .iter()
            .filter_map(|&row| Some((row, timers(row)?.named()[i].2.snapshot())))
            .filter(|(_, snap)| snap.count() > 0)
            .collect();
        if snaps.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "# HELP haproxy_{part}_{name} {help} (rampart extension)\n# TYPE haproxy_{part}_{name} histogram"
        );
        for (row, snap) in snaps {
            let l = labels(rt, row);
            for (le, n) in histogram::BOUNDS_LE.iter().zip(snap.cumulative) {
                let _ = writeln!(out, "haproxy_{part}_{name}_bucket{{{l},le=\"{le}\"}} {n}");
            }
            let _ = writeln!(out, "haproxy_{part}_{name}_bucket{{{l},le=\"+Inf\"}} {}", snap.count());
            let _ = writeln!(out, "haproxy_{part}_{name}_sum{{{l}}} {}", snap.sum_seconds);
            let _ = writeln!(out, "haproxy_{part}_{name}_count{{{l}}} {}", snap.count());
        }
    }
}

/// One metric: its HELP and TYPE lines, then a sample per row (and label value); nothing
/// when no row has the metric.
fn metric(out: &mut String, rt: &Runtime, part: &str, (name, ty, src): &Metric, rows: &[Row]) {
    let mut samples = String::new();
    match src {
        // HAProxy's libslz builds have no zlib memory to report
        Info(field @ ("ZlibMemUsage" | "MaxZlibMemUsage")) if info::value(rt, 0, field).is_none() => return,
        Info(field) => {
            let v = info::value(rt, 0, field).map_or_else(|| "NaN".to_owned(), |v| number(&v, name));
            let _ = writeln!(samples, "haproxy_{part}_{name} {v}");
        }
        Src::BuildInfo => {
            let _ = writeln!(samples, "haproxy_{part}_{name}{{version=\"{}\"}} 1", crate::version::version_string());
        }
        Stat(field) => {
            for &row in rows.iter().filter(|r| applies(rt, **r, field)) {
                let v = stat::cell(rt, row, Level::User, field);
                let v = v.map_or_else(|| "NaN".to_owned(), |v| number(&v, name));
                let _ = writeln!(samples, "haproxy_{part}_{name}{{{}}} {v}", labels(rt, row));
            }
        }
        Codes => {
            for &row in rows {
                for code in ["1xx", "2xx", "3xx", "4xx", "5xx", "other"] {
                    if let Some(v) = stat::cell(rt, row, Level::User, &format!("hrsp_{code}")) {
                        let l = labels(rt, row);
                        let _ = writeln!(samples, "haproxy_{part}_{name}{{{l},code=\"{code}\"}} {v}");
                    }
                }
            }
        }
        Src::CheckStatus => {}
        Status => {
            for &row in rows {
                let now = stat::cell(rt, row, Level::User, "status").map(|v| v.to_string()).unwrap_or_default();
                // COMPAT: without health checks a server is UP unless in maintenance.
                let now = match now.as_str() {
                    "no check" | "OPEN" if row.1 != Kind::Listener => "UP".to_owned(),
                    "MAINT (resolution)" => "MAINT".to_owned(),
                    _ => now,
                };
                let states: &[&str] = match row.1 {
                    Kind::Server => &["DOWN", "UP", "MAINT", "DRAIN", "NOLB"],
                    Kind::Listener => &["WAITING", "OPEN", "FULL"],
                    _ => &["DOWN", "UP"],
                };
                for st in states {
                    let l = labels(rt, row);
                    let _ = writeln!(samples, "haproxy_{part}_{name}{{{l},state=\"{st}\"}} {}", u8::from(now == *st));
                }
            }
        }
    }
    if let Src::CheckStatus = src {
        check_status(&mut samples, rt, part, name, rows);
    }
    if samples.is_empty() {
        return;
    }
    let what = match src {
        Info(f) => format!("the '{f}' field of 'show info'"),
        Stat(f) => format!("the '{f}' field of 'show stat'"),
        Codes => "HTTP responses by status class (the 'hrsp_*' fields of 'show stat')".to_owned(),
        Status => "1 for the current state (the 'status' field of 'show stat'), 0 for the others".to_owned(),
        Src::BuildInfo => "the version, as a label".to_owned(),
        Src::CheckStatus => "1 for the status of the last health check, 0 for the others".to_owned(),
    };
    let _ = writeln!(out, "# HELP haproxy_{part}_{name} {what}.\n# TYPE haproxy_{part}_{name} {ty}");
    out.push_str(&samples);
}

/// The statuses of a finished health check, in HAProxy's order (`check_statuses[]`
/// entries whose result is at least "failed").
const CHECK_STATUSES: &[&str] = &[
    "HANA", "SOCKERR", "L4OK", "L4TOUT", "L4CON", "L6OK", "L6TOUT", "L6RSP", "L7TOUT", "L7RSP", "L7OK", "L7OKC",
    "L7STS", "PROCERR", "PROCTOUT", "PROCOK",
];

/// `haproxy_server_check_status{proxy,server,state}`: for each server with a health
/// check, 1 for its last check's status (none before the first check), 0 for the others.
fn check_status(samples: &mut String, rt: &Runtime, part: &str, name: &str, rows: &[Row]) {
    for &row in rows {
        let Some(srv) = row.2.map(|s| &rt.proxies[row.0].be.servers[s]) else { continue };
        if srv.check.is_none() {
            continue;
        }
        let last = srv.state.last_check().map(|r| r.status.code());
        let l = labels(rt, row);
        for st in CHECK_STATUSES {
            let _ = writeln!(samples, "haproxy_{part}_{name}{{{l},state=\"{st}\"}} {}", u8::from(last == Some(*st)));
        }
    }
}

/// Whether `field` is a metric of `row`: HTTP-only fields are not exported for a TCP
/// proxy (as HAProxy skips them); any other field is, as `NaN` when it has no value.
fn applies(rt: &Runtime, row: Row, field: &str) -> bool {
    let http_only = field.starts_with("req_")
        || field.starts_with("comp_")
        || field.starts_with("cache_")
        || matches!(field, "intercepted" | "wrew");
    !http_only || rt.proxies[row.0].mode == rampart_cfg::model::Mode::Http
}

/// The labels of a row: `proxy="…"`, and `server="…"` for a server, `listener="…"`
/// for a listener.
fn labels(rt: &Runtime, row: Row) -> String {
    let px = escape(&rt.proxies[row.0].name);
    match row.2 {
        Some(l) if row.1 == Kind::Listener => {
            let name = rt.proxies[row.0].fe.listeners[l].stats.as_ref().map_or("", |st| &*st.name);
            format!("proxy=\"{px}\",listener=\"{}\"", escape(name))
        }
        Some(s) => format!("proxy=\"{px}\",server=\"{}\"", escape(&rt.proxies[row.0].be.servers[s].name)),
        None => format!("proxy=\"{px}\""),
    }
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// A sample value; times kept in milliseconds by the stats are exported in seconds.
fn number(v: &Val, name: &str) -> String {
    let ms = name.ends_with("_time_average_seconds") || name.ends_with("_time_seconds");
    match v {
        Val::Uint(n) if ms => format!("{}", *n as f64 / 1000.0),
        Val::Sint(n) if ms => format!("{}", *n as f64 / 1000.0),
        Val::Str(_) => "NaN".to_owned(),
        v => v.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt() -> Runtime {
        let ctx = rampart_cfg::LexCtx { env: &|_| None, version: "2.6", features: &[] };
        let text = "defaults\n mode http\nfrontend fe\n bind :80\n default_backend be\n\
                    backend be\n server s1 127.0.0.1:1\n server s2 127.0.0.1:2 disabled\n";
        let cfg = rampart_cfg::parse_str("t.cfg", text, &ctx).config.expect("valid");
        crate::build::build(&cfg, 100, 1).expect("built")
    }

    #[test]
    fn metrics_carry_haproxys_names_and_labels() {
        let rt = rt();
        rt.proxies[0].stats.fe_rsp.count(200);
        let text = render(&rt, Scope::from_query(b"").unwrap());
        for line in [
            "haproxy_process_max_connections 100",
            "haproxy_frontend_http_responses_total{proxy=\"fe\",code=\"2xx\"} 1",
            "haproxy_frontend_status{proxy=\"fe\",state=\"UP\"} 1",
            "haproxy_server_status{proxy=\"be\",server=\"s2\",state=\"MAINT\"} 1",
            "haproxy_server_status{proxy=\"be\",server=\"s1\",state=\"UP\"} 1",
            "haproxy_backend_active_servers{proxy=\"be\"} 1",
            "# TYPE haproxy_server_sessions_total counter",
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line:?}");
        }
        // not measured: NaN, never 0
        assert!(text.lines().any(|l| l == "haproxy_frontend_internal_errors_total{proxy=\"fe\"} NaN"));
        assert!(text.lines().any(|l| l == "haproxy_frontend_bytes_in_total{proxy=\"fe\"} 0"));
        // no exporter in this configuration: no histogram recorded nor exported
        assert!(!text.contains("_bucket"));
    }

    #[test]
    fn histograms_are_exported_when_an_exporter_is_configured() {
        let ctx = rampart_cfg::LexCtx { env: &|_| None, version: "2.6", features: &[] };
        let text = "defaults\n mode http\nfrontend fe\n bind :80\n\
                    http-request use-service prometheus-exporter if { path /metrics }\n default_backend be\n\
                    backend be\n server s1 127.0.0.1:1\n";
        let cfg = rampart_cfg::parse_str("t.cfg", text, &ctx).config.expect("valid");
        let rt = crate::build::build(&cfg, 100, 1).expect("built");
        let be_timers = rt.proxies[1].stats.be_timers.as_deref().expect("recorded with an exporter");
        be_timers.response.record(std::time::Duration::from_millis(30));
        let srv_timers = rt.proxies[1].be.servers[0].stats.timers.as_deref().expect("recorded");
        srv_timers.response.record(std::time::Duration::from_millis(30));
        let text = render(&rt, Scope::from_query(b"").unwrap());
        for line in [
            "# TYPE haproxy_backend_response_time_seconds histogram",
            "haproxy_backend_response_time_seconds_bucket{proxy=\"be\",le=\"0.025\"} 0",
            "haproxy_backend_response_time_seconds_bucket{proxy=\"be\",le=\"0.05\"} 1",
            "haproxy_backend_response_time_seconds_bucket{proxy=\"be\",le=\"+Inf\"} 1",
            "haproxy_backend_response_time_seconds_sum{proxy=\"be\"} 0.03",
            "haproxy_backend_response_time_seconds_count{proxy=\"be\"} 1",
            "haproxy_server_response_time_seconds_count{proxy=\"be\",server=\"s1\"} 1",
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line:?}");
        }
        // a histogram without a sample is not exported yet
        assert!(!text.contains("haproxy_server_connect_time_seconds"), "{text}");
    }

    #[test]
    fn scopes_limit_the_output() {
        let rt = rt();
        let text = render(&rt, Scope::from_query(b"scope=backend&scope=server").unwrap());
        assert!(!text.contains("haproxy_process_") && !text.contains("haproxy_frontend_"));
        assert!(text.contains("haproxy_backend_") && text.contains("haproxy_server_"));
        assert!(render(&rt, Scope::from_query(b"scope=").unwrap()).is_empty());
        assert!(render(&rt, Scope::from_query(b"scope=&scope=global").unwrap()).contains("haproxy_process_"));
        for bad in [&b"scope"[..], b"scope=all", b"scope=nope", b"scope=a=b"] {
            assert!(Scope::from_query(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn listeners_have_their_metrics_under_socket_stats() {
        let ctx = rampart_cfg::LexCtx { env: &|_| None, version: "2.6", features: &[] };
        let text = "defaults\n mode http\n option socket-stats\nfrontend fe\n bind 127.0.0.1:80\n\
                    bind 127.0.0.1:81 name web\n default_backend be\nbackend be\n server s1 127.0.0.1:1\n";
        let cfg = rampart_cfg::parse_str("t.cfg", text, &ctx).config.expect("valid");
        let rt = crate::build::build(&cfg, 100, 1).expect("built");
        let all = render(&rt, Scope::from_query(b"").unwrap());
        for line in [
            "haproxy_listener_status{proxy=\"fe\",listener=\"sock-1\",state=\"OPEN\"} 1",
            "haproxy_listener_status{proxy=\"fe\",listener=\"web\",state=\"WAITING\"} 0",
            "haproxy_listener_sessions_total{proxy=\"fe\",listener=\"web\"} 0",
            "haproxy_listener_request_errors_total{proxy=\"fe\",listener=\"web\"} NaN",
        ] {
            assert!(all.lines().any(|l| l == line), "missing {line:?} in\n{all}");
        }
        let only = render(&rt, Scope::from_query(b"scope=listener").unwrap());
        assert!(only.contains("haproxy_listener_") && !only.contains("haproxy_frontend_"), "{only}");
        assert!(!render(&rt, Scope::from_query(b"scope=frontend").unwrap()).contains("haproxy_listener_"));
    }
}
