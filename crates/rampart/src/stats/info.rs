//! `show info [typed|json]`: facts about the running process, in HAProxy 2.6's field
//! order. A field rampart does not measure yet keeps its line with an empty value (and
//! is left out of the typed and JSON forms, as HAProxy leaves out its empty fields); a
//! feature rampart does not have (TLS, peers, resolvers) reads 0.
//! HAProxy counterpart: stats_fill_info() and stats_dump_info_to_buffer() in stats.c.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use super::fields::INFO_FIELDS;
use super::{json_field, Cli, Val};
use crate::proxy::Runtime;
use crate::version;

/// The value of info field `name`; `None` when rampart does not measure it.
/// `cli_sessions`: the CLI sessions accepted so far (HAProxy counts them as connections
/// and requests).
pub(super) fn value(rt: &Runtime, cli_sessions: u64, name: &str) -> Option<Val> {
    let g = &rt.global;
    let up = super::uptime(rt);
    Some(match name {
        "Name" => "HAProxy".into(),
        "Version" | "Build info" => Val::Str(version::version_string()),
        "Release_date" => version::RELEASE_DATE.into(),
        "Nbthread" => (rt.stats.nbthread as u64).into(),
        "Nbproc" | "Process_num" => 1u64.into(),
        "Pid" => std::process::id().into(),
        "Uptime" => Val::Str(format!("{}d {}h{:02}m{:02}s", up / 86400, up / 3600 % 24, up / 60 % 60, up % 60)),
        "Uptime_sec" => up.into(),
        "Ulimit-n" => rt.stats.ulimit_n.into(),
        "Maxconn" => g.maxconn().into(),
        "Hard_maxconn" => g.hard_maxconn.into(),
        "CurrConns" => g.cur_conns.load(Ordering::Relaxed).into(),
        "CumConns" => (rt.proxies.iter().map(|p| p.fe.cum_conn.get()).sum::<u64>() + cli_sessions).into(),
        // HAProxy counts every stream: HTTP requests, TCP sessions and CLI sessions
        "CumReq" => {
            let streams =
                |p: &crate::proxy::ProxyRt| if p.fe.http { p.stats.fe_req.get() } else { p.fe.cum_conn.get() };
            let front: u64 = rt.proxies.iter().filter(|p| p.cap.frontend).map(streams).sum();
            (front + cli_sessions).into()
        }
        "node" => Val::Str(rt.stats.node.clone()),
        "ConnRateLimit" => u64::from(g.rate_limits.0).into(),
        "SessRateLimit" => u64::from(g.rate_limits.1).into(),
        "description" => Val::Str(rt.stats.description.clone()?),
        "Stopping" => u64::from(g.stop_announced()).into(),
        "Listeners" => rt.stats.listeners.into(),
        "DroppedLogs" => crate::log::dropped_logs().into(),
        // messages the `log-forward` sections received
        "CumRecvLogs" => rt.log_forwards.iter().map(|f| f.messages.load(Ordering::Relaxed)).sum::<u64>().into(),
        "ConnRate" => rt.stats.conn_rate.current()?.into(),
        "MaxConnRate" => rt.stats.conn_rate.max()?.into(),
        "SessRate" => rt.stats.sess_rate.current()?.into(),
        "MaxSessRate" => rt.stats.sess_rate.max()?.into(),
        "Start_time_sec" => rt.stats.started_unix.into(),
        "Tainted" => "0".into(),
        "CompressBpsIn" => rt.comp_limits.bps_in().into(),
        "CompressBpsOut" => rt.comp_limits.bps_out().into(),
        "CompressBpsRateLim" => rt.comp_limits.rate_lim().into(),
        "ZlibMemUsage" | "MaxZlibMemUsage" if !zlib_shown(rt) => return None,
        "ZlibMemUsage" => rt.comp_limits.mem_used().into(),
        "MaxZlibMemUsage" => rt.comp_limits.max_mem().into(),
        "MaxSslConns" => u64::from(g.ssl.max_conns()).into(),
        "CurrSslConns" => u64::from(g.ssl.cur_conns()).into(),
        "CumSslConns" => g.ssl.cum_conns().into(),
        "SslRateLimit" => u64::from(g.ssl.rate_limit()).into(),
        // features rampart does not have: nothing to count
        "SslRate"
        | "MaxSslRate"
        | "SslFrontendKeyRate"
        | "SslFrontendMaxKeyRate"
        | "SslFrontendSessionReuse_pct"
        | "SslBackendKeyRate"
        | "SslBackendMaxKeyRate"
        | "SslCacheLookups"
        | "SslCacheMisses"
        | "ActivePeers"
        | "ConnectedPeers"
        | "BusyPolling"
        | "FailedResolutions"
        | "DebugCommandsIssued"
        | "Unstoppable Jobs" => 0u64.into(),
        _ => return None,
    })
}

/// Whether `ZlibMemUsage` and `MaxZlibMemUsage` are shown: HAProxy builds on zlib
/// print them, Debian's 2.6 (on libslz) does not. COMPAT: rampart's gzip/deflate is
/// zlib's (zlib-rs) and reports them when `maxzlibmem` is set; without it the fields
/// are those of the libslz build.
fn zlib_shown(rt: &Runtime) -> bool {
    rt.comp_limits.max_mem() > 0
}

/// Whether `show info` lists field `name` at all.
fn listed(rt: &Runtime, name: &str) -> bool {
    // as HAProxy, `description` only when the global section has one
    (zlib_shown(rt) || !matches!(name, "ZlibMemUsage" | "MaxZlibMemUsage"))
        && (name != "description" || rt.stats.description.is_some())
}

/// `show info`: `Name: value` lines.
pub fn plain(cli: &Cli) -> String {
    let mut out = String::with_capacity(2048);
    for (_, name, _) in INFO_FIELDS.iter().filter(|(_, n, _)| listed(&cli.rt, n)) {
        let v =
            value(&cli.rt, cli.cum_sessions.load(Ordering::Relaxed), name).map(|v| v.to_string()).unwrap_or_default();
        let v = if *name == "description" { csv_quoted(v) } else { v };
        let _ = writeln!(out, "{name}: {v}");
    }
    out
}

/// A free text as HAProxy's `csv_enc()` prints it: in double quotes (inner ones
/// doubled) when it holds a comma, a quote, a line break or edge spaces.
fn csv_quoted(v: String) -> String {
    let needs = v.contains([',', '"', '\r', '\n']) || v.starts_with(' ') || v.ends_with(' ');
    if needs {
        format!("\"{}\"", v.replace('"', "\"\""))
    } else {
        v
    }
}

/// `show info typed`: `pos.name.process:tags:type:value` lines.
pub fn typed(cli: &Cli) -> String {
    let mut out = String::with_capacity(4096);
    for (pos, name, desc) in INFO_FIELDS {
        if let Some(v) = value(&cli.rt, cli.cum_sessions.load(Ordering::Relaxed), name) {
            let _ = writeln!(out, "{pos}.{name}.1:{desc}:{v}");
        }
    }
    out
}

/// `show info json`: one array of field objects.
pub fn json(cli: &Cli) -> String {
    let mut out = String::with_capacity(16384);
    out.push('[');
    let mut first = true;
    for (pos, name, desc) in INFO_FIELDS {
        let Some(v) = value(&cli.rt, cli.cum_sessions.load(Ordering::Relaxed), name) else { continue };
        if !first {
            out.push(',');
        }
        first = false;
        out.push('{');
        json_field(&mut out, *pos as usize, name, desc, &v);
        out.push('}');
    }
    out.push_str("]\n");
    out
}
