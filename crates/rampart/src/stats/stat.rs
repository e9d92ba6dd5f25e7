//! `show stat [desc|json|no-maint|typed|up]* [<px> <type> <sid>]`: one row per
//! frontend, server and backend with HAProxy 2.6's columns, in its order. A field
//! HAProxy fills but rampart does not measure yet is empty (never invented); a field
//! about a feature rampart lacks (TLS, compression, cache, HTTP/2) reads 0.
//! HAProxy counterpart: stats_fill_fe_stats(), stats_fill_sv_stats(),
//! stats_fill_be_stats() and the CSV/typed/JSON dumpers in stats.c.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use rampart_cfg::model::Mode;

use super::cmd::Level;
use super::fields::{MODULE_FIELDS_AT, STAT_FIELDS};
use super::{json_field, Val};
use crate::proxy::{ProxyRt, Runtime, ServerRt};

/// The kind of a row, with HAProxy's type number (the `type` field, the filter bit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Frontend,
    Backend,
    Server,
    /// A listener of a frontend with `option socket-stats` (HAProxy's type 3, "socket").
    Listener,
}

impl Kind {
    fn bit(self) -> i64 {
        match self {
            Kind::Frontend => 1,
            Kind::Backend => 2,
            Kind::Server => 4,
            Kind::Listener => 8,
        }
    }

    /// The field's `tags:type` for this kind (`""`: always empty).
    pub(super) fn desc(self, field: usize) -> &'static str {
        let (name, f, b, s) = STAT_FIELDS[field];
        match self {
            Kind::Frontend => f,
            Kind::Backend => b,
            Kind::Server => s,
            Kind::Listener => LISTENER_FIELDS.iter().find(|l| l.0 == name).map_or("", |l| l.1),
        }
    }

    fn letter(self) -> char {
        match self {
            Kind::Frontend => 'F',
            Kind::Backend => 'B',
            Kind::Server => 'S',
            Kind::Listener => 'L',
        }
    }

    fn json_name(self) -> &'static str {
        match self {
            Kind::Frontend => "Frontend",
            Kind::Backend => "Backend",
            Kind::Server => "Server",
            Kind::Listener => "Listener",
        }
    }
}

/// The fields of a listener row and their `tags:type`, as HAProxy 2.6.12 types them
/// (`stats_fill_li_stats()` and the SSL module's listener counters).
const LISTENER_FIELDS: &[(&str, &str)] = &[
    ("pxname", "KNS:str"),
    ("svname", "KNS:str"),
    ("scur", "MGP:u32"),
    ("smax", "MMP:u32"),
    ("slim", "CLP:u32"),
    ("stot", "MCP:u64"),
    ("bin", "MCP:u64"),
    ("bout", "MCP:u64"),
    ("dreq", "MCP:u64"),
    ("dresp", "MCP:u64"),
    ("ereq", "MCP:u64"),
    ("status", "SGP:str"),
    ("pid", "KGP:u32"),
    ("iid", "KGS:u32"),
    ("sid", "KGS:u32"),
    ("type", "CGS:u32"),
    ("addr", "CGS:str"),
    ("mode", "CGS:str"),
    ("dcon", "MCP:u64"),
    ("dses", "MCP:u64"),
    ("wrew", "MCP:u64"),
    ("eint", "MCP:u64"),
    ("ssl_sess", "MCP:u64"),
    ("ssl_reused_sess", "MCP:u64"),
    ("ssl_failed_handshake", "MCP:u64"),
];

/// Output form and row filter of one `show stat`.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub typed: bool,
    pub json: bool,
    /// `no-maint`: leave out servers in maintenance.
    pub no_maint: bool,
    /// `up`: only servers that are up.
    pub up_only: bool,
    /// `<px> <type> <sid>`: a proxy (None: all), a mask of kinds, a server id (-1: all).
    pub filter: Option<(Option<usize>, i64, i64)>,
}

impl Request {
    /// Parses the words after `show stat`; `Err` is HAProxy's message.
    pub fn parse(rt: &Runtime, words: &[&str]) -> Result<Request, String> {
        let mut req = Request::default();
        let mut rest = Vec::new();
        for w in words {
            match *w {
                "typed" => req.typed = true,
                "json" => req.json = true,
                "no-maint" => req.no_maint = true,
                "up" => req.up_only = true,
                "desc" => {}
                w => rest.push(w),
            }
        }
        if rest.len() >= 3 {
            let px = if rest[0] == "-1" {
                None
            } else {
                Some(super::find_proxy(rt, rest[0]).ok_or_else(|| "No such proxy.\n".to_owned())?)
            };
            let num = |s: &str| s.parse::<i64>().unwrap_or(0);
            req.filter = Some((px, num(rest[1]), num(rest[2])));
        }
        Ok(req)
    }

    fn wants(&self, px: usize, kind: Kind, sid: u32) -> bool {
        let Some((p, mask, id)) = self.filter else { return true };
        p.is_none_or(|p| p == px) && (mask == -1 || mask & kind.bit() != 0) && (id == -1 || id == i64::from(sid))
    }
}

/// One row of the stats: a proxy, its kind, and the server of a server row (the
/// listener's index in its frontend for a listener row).
pub(super) type Row = (usize, Kind, Option<usize>);

/// The rows `req` asks for, in HAProxy's order (per proxy: frontend, listeners with
/// `option socket-stats`, servers, backend).
pub(super) fn rows(rt: &Runtime, req: &Request) -> Vec<Row> {
    let mut rows: Vec<Row> = Vec::new();
    // COMPAT: as HAProxy 2.6, a `disabled` proxy has no row
    for (idx, px) in rt.proxies.iter().enumerate().filter(|(_, px)| !px.disabled) {
        if px.cap.frontend && req.wants(idx, Kind::Frontend, 0) {
            rows.push((idx, Kind::Frontend, None));
        }
        if px.cap.frontend {
            for (i, li) in px.fe.listeners.iter().enumerate() {
                if li.stats.as_ref().is_some_and(|st| req.wants(idx, Kind::Listener, st.sid)) {
                    rows.push((idx, Kind::Listener, Some(i)));
                }
            }
        }
        if px.cap.backend {
            for (i, srv) in px.be.servers.iter().enumerate() {
                let skip =
                    !srv.is_shown() || (req.no_maint && srv.state.is_maint()) || (req.up_only && !srv.state.is_up());
                if !skip && req.wants(idx, Kind::Server, srv.stats.sid) {
                    rows.push((idx, Kind::Server, Some(i)));
                }
            }
            if req.wants(idx, Kind::Backend, 0) {
                rows.push((idx, Kind::Backend, None));
            }
        }
    }
    rows
}

/// The value of the field called `name` in `row` (`None`: empty or no such field).
pub(super) fn cell(rt: &Runtime, row: Row, level: Level, name: &str) -> Option<Val> {
    let i = STAT_FIELDS.iter().position(|f| f.0 == name)?;
    field(rt, row.0, row.1, row.2, level, i)
}

/// An object of the stats, as Lua's `get_stats()` methods name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Object {
    Frontend(usize),
    Backend(usize),
    Server(usize, usize),
    Listener(usize, usize),
}

/// The generic fields of `obj` that have a value (not the per-module ones), by name,
/// at the admin level: what HAProxy's Lua `get_stats()` methods return
/// (`stats_fill_*_stats(..., STAT_SHLGNDS)` over `ST_F_TOTAL_FIELDS`). A listener
/// without `option socket-stats` has no counters: no field.
pub fn object_fields(rt: &Runtime, obj: Object) -> Vec<(&'static str, Val)> {
    let (idx, kind, sub) = match obj {
        Object::Frontend(p) => (p, Kind::Frontend, None),
        Object::Backend(p) => (p, Kind::Backend, None),
        Object::Server(p, s) => (p, Kind::Server, Some(s)),
        Object::Listener(p, l) => (p, Kind::Listener, Some(l)),
    };
    if kind == Kind::Listener && sub.is_some_and(|l| rt.proxies[idx].fe.listeners[l].stats.is_none()) {
        return Vec::new();
    }
    (0..MODULE_FIELDS_AT)
        .filter_map(|i| field(rt, idx, kind, sub, Level::Admin, i).map(|v| (STAT_FIELDS[i].0, v)))
        .collect()
}

/// The text of `show stat` for `req`, at the session's `level`.
pub fn render(rt: &Runtime, req: &Request, level: Level) -> String {
    let mut out = String::with_capacity(8192);
    let rows = rows(rt, req);
    if req.json {
        json(rt, &rows, level, &mut out);
    } else if req.typed {
        for &(idx, kind, srv) in &rows {
            typed_row(rt, idx, kind, srv, level, &mut out);
        }
    } else {
        header(&mut out);
        out.push_str(&render_rows(rt, rows.into_iter(), level));
    }
    out
}

/// The CSV lines of `rows`.
pub(super) fn render_rows(rt: &Runtime, rows: impl Iterator<Item = Row>, level: Level) -> String {
    let mut out = String::with_capacity(4096);
    for (idx, kind, srv) in rows {
        csv_row(rt, idx, kind, srv, level, &mut out);
    }
    out
}

/// The CSV header line: `# pxname,svname,...,`.
pub fn header(out: &mut String) {
    out.push_str("# ");
    for (i, (name, ..)) in STAT_FIELDS.iter().enumerate() {
        if i == MODULE_FIELDS_AT {
            out.push_str("-,");
        }
        out.push_str(name);
        out.push(',');
    }
    out.push('\n');
}

fn csv_row(rt: &Runtime, idx: usize, kind: Kind, srv: Option<usize>, level: Level, out: &mut String) {
    for i in 0..STAT_FIELDS.len() {
        if i == MODULE_FIELDS_AT {
            out.push_str("-,");
        }
        if let Some(v) = field(rt, idx, kind, srv, level, i) {
            let _ = write!(out, "{}", Csv(&v));
        }
        out.push(',');
    }
    out.push('\n');
}

/// A value as a CSV cell: HAProxy quotes strings holding a comma or a quote.
struct Csv<'a>(&'a Val);

impl std::fmt::Display for Csv<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Val::Str(s) if s.contains([',', '"']) => write!(f, "\"{}\"", s.replace('"', "\"\"")),
            v => write!(f, "{v}"),
        }
    }
}

fn typed_row(rt: &Runtime, idx: usize, kind: Kind, srv: Option<usize>, level: Level, out: &mut String) {
    let sid = sid_of(rt, idx, kind, srv);
    for (i, (name, ..)) in STAT_FIELDS.iter().enumerate() {
        if let Some(v) = field(rt, idx, kind, srv, level, i) {
            let _ = writeln!(out, "{}.{}.{sid}.{i}.{name}.1:{}:{v}", kind.letter(), super::iid(rt, idx), kind.desc(i));
        }
    }
}

fn json(rt: &Runtime, rows: &[Row], level: Level, out: &mut String) {
    out.push('[');
    for (r, &(idx, kind, srv)) in rows.iter().enumerate() {
        if r > 0 {
            out.push(',');
        }
        out.push('[');
        let sid = sid_of(rt, idx, kind, srv);
        let mut first = true;
        for (i, (name, ..)) in STAT_FIELDS.iter().enumerate() {
            let Some(v) = field(rt, idx, kind, srv, level, i) else { continue };
            if !first {
                out.push(',');
            }
            first = false;
            let _ =
                write!(out, "{{\"objType\":\"{}\",\"proxyId\":{},\"id\":{sid},", kind.json_name(), super::iid(rt, idx));
            json_field(out, i, name, kind.desc(i), &v);
            out.push('}');
        }
        out.push(']');
    }
    out.push_str("]\n");
}

fn sid_of(rt: &Runtime, idx: usize, kind: Kind, srv: Option<usize>) -> u32 {
    match (kind, srv) {
        (Kind::Listener, Some(l)) => rt.proxies[idx].fe.listeners[l].stats.as_ref().map_or(0, |st| st.sid),
        (_, Some(s)) => rt.proxies[idx].be.servers[s].stats.sid,
        (_, None) => 0,
    }
}

/// Field `i` of a row, `None` when it is empty.
fn field(rt: &Runtime, idx: usize, kind: Kind, srv: Option<usize>, level: Level, i: usize) -> Option<Val> {
    let desc = kind.desc(i);
    if desc.is_empty() {
        return None;
    }
    let px = &rt.proxies[idx];
    let name = STAT_FIELDS[i].0;
    let v = match name {
        "pxname" => Some(Val::Str(px.name.clone())),
        "pid" => Some(1u64.into()),
        "iid" => Some(super::iid(rt, idx).into()),
        "mode" => Some(if px.mode == Mode::Http { "http" } else { "tcp" }.into()),
        _ => match (kind, srv) {
            (Kind::Frontend, _) => frontend(rt, px, name),
            (Kind::Backend, _) => backend(rt, idx, px, name, level),
            (Kind::Server, Some(s)) => server(rt, px, &px.be.servers[s], name, level),
            (Kind::Listener, Some(l)) => listener(rt, px, l, name, level),
            (Kind::Server | Kind::Listener, None) => None,
        },
    };
    v.or_else(|| zero_for_missing_feature(name))
}

/// Fields about features rampart does not count (TLS, HTTP/2 towards servers, streams
/// of a frontend's HTTP/2 connections towards servers): they read 0.
fn zero_for_missing_feature(name: &str) -> Option<Val> {
    let absent = name.starts_with("ssl_") || name.starts_with("h2_") || name == "rate_lim";
    absent.then(|| 0u64.into())
}

/// `comp_in`, `comp_out`, `comp_byp`, `comp_rsp` of one side of a proxy.
fn comp(c: &crate::counters::stats::CompStats, name: &str) -> Option<Val> {
    let n = match name {
        "comp_in" => &c.bytes_in,
        "comp_out" => &c.bytes_out,
        "comp_byp" => &c.bypassed,
        "comp_rsp" => &c.responses,
        _ => return None,
    };
    Some(n.get().into())
}

fn by_class(c: &super::counters::ByClass, name: &str) -> Option<Val> {
    Some(c.0[class_index(name)?].get().into())
}

/// [`by_class`] for a server's counters.
fn srv_by_class(s: &super::counters::ServerStats, name: &str) -> Option<Val> {
    Some(s.rsp(class_index(name)?).get().into())
}

/// The class `hrsp_*` field `name` counts, in `ByClass` order.
fn class_index(name: &str) -> Option<usize> {
    ["hrsp_1xx", "hrsp_2xx", "hrsp_3xx", "hrsp_4xx", "hrsp_5xx", "hrsp_other"].iter().position(|n| *n == name)
}

fn frontend(rt: &Runtime, px: &ProxyRt, name: &str) -> Option<Val> {
    let fe = &px.fe;
    Some(match name {
        "svname" => "FRONTEND".into(),
        "scur" => fe.cur_conns.load(Ordering::Relaxed).into(),
        "smax" => px.stats.fe_smax.load(Ordering::Relaxed).into(),
        "slim" => fe.maxconn().into(),
        "stot" => fe.cum_conn.get().saturating_sub(fe.denied_conn.get()).into(),
        "conn_tot" => fe.cum_conn.get().into(),
        "dreq" => fe.denied_req.get().into(),
        "dresp" => px.stats.fe_dresp.get().into(),
        "bin" => px.stats.fe_bin.get().into(),
        "bout" => px.stats.fe_bout.get().into(),
        "ereq" => px.stats.fe_ereq.get().into(),
        "intercepted" if fe.http => px.stats.fe_intercepted.get().into(),
        "rate" => px.stats.fe_sess_rate.current()?.into(),
        "rate_max" => px.stats.fe_sess_rate.max()?.into(),
        "conn_rate" => px.stats.fe_conn_rate.current()?.into(),
        "conn_rate_max" => px.stats.fe_conn_rate.max()?.into(),
        "req_rate" if fe.http => px.stats.fe_req_rate.current()?.into(),
        "req_rate_max" if fe.http => px.stats.fe_req_rate.max()?.into(),
        "dcon" => fe.denied_conn.get().into(),
        "dses" => fe.denied_sess.get().into(),
        "status" => if rt.global.is_stopping() { "STOP" } else { "OPEN" }.into(),
        "sid" => 0u32.into(),
        "type" => 0u32.into(),
        "req_tot" if fe.http => px.stats.fe_req.get().into(),
        n if n.starts_with("hrsp_") && fe.http => by_class(&px.stats.fe_rsp, n)?,
        "cache_lookups" if fe.http => px.stats.fe_cache_lookups.get().into(),
        "cache_hits" if fe.http => px.stats.fe_cache_hits.get().into(),
        n if n.starts_with("comp_") => comp(&px.stats.fe_comp, n)?,
        n if n.starts_with("h2_") => h2(&px.stats.fe_h2, n)?,
        _ => return None,
    })
}

/// The `h2_*` fields of a frontend (HAProxy's h2 stats module, its quirks included:
/// the `h2_backend_*_streams` count the frontend's streams). The backend's read 0:
/// the server side does not count them yet.
fn h2(c: &crate::counters::stats::H2Stats, name: &str) -> Option<Val> {
    let n = match name {
        "h2_headers_rcvd" => &c.headers_rcvd,
        "h2_data_rcvd" => &c.data_rcvd,
        "h2_settings_rcvd" => &c.settings_rcvd,
        "h2_rst_stream_rcvd" => &c.rst_stream_rcvd,
        "h2_goaway_rcvd" => &c.goaway_rcvd,
        "h2_detected_conn_protocol_errors" => &c.conn_proto_err,
        "h2_detected_strm_protocol_errors" => &c.strm_proto_err,
        "h2_rst_stream_resp" => &c.rst_stream_resp,
        "h2_goaway_resp" => &c.goaway_resp,
        "h2_open_connections" => return Some(c.open_conns.load(Ordering::Relaxed).into()),
        "h2_total_connections" => &c.total_conns,
        "h2_backend_open_streams" => return Some(c.open_streams.load(Ordering::Relaxed).into()),
        "h2_backend_total_streams" => &c.total_streams,
        _ => return None,
    };
    Some(n.get().into())
}

/// A listener's row: its own counters; the fields rampart does not count per
/// listener (`dreq`, `dresp`, `ereq`, `wrew`, `eint`) are empty.
fn listener(rt: &Runtime, px: &ProxyRt, l: usize, name: &str, level: Level) -> Option<Val> {
    let st = px.fe.listeners[l].stats.as_deref()?;
    let c = &st.counters;
    Some(match name {
        "svname" => Val::Str(st.name.to_string()),
        "scur" => c.cur.load(Ordering::Relaxed).into(),
        "smax" => c.max.load(Ordering::Relaxed).into(),
        // `bind ... maxconn` is not supported: no per-listener limit
        "slim" => 0u32.into(),
        "stot" => c.cum_conn.get().into(),
        "bin" => c.bin.get().into(),
        "bout" => c.bout.get().into(),
        "dcon" => c.denied_conn.get().into(),
        "dses" => c.denied_sess.get().into(),
        "status" => listener_status(rt, px).into(),
        "sid" => st.sid.into(),
        "type" => 3u32.into(),
        "addr" if level >= Level::Operator => Val::Str(st.addr.as_deref()?.to_owned()),
        _ => return None,
    })
}

/// A listener's state as HAProxy names it: `WAITING` while the frontend or the process
/// is at its `maxconn` (accepting is paused), else `OPEN`.
pub(super) fn listener_status(rt: &Runtime, px: &ProxyRt) -> &'static str {
    let full = |cur: &std::sync::atomic::AtomicU32, max: u32| cur.load(Ordering::Relaxed) >= max;
    if full(&px.fe.cur_conns, px.fe.maxconn()) || full(&rt.global.cur_conns, rt.global.maxconn()) {
        "WAITING"
    } else {
        "OPEN"
    }
}

/// Servers of a backend that take traffic: (active count, backup count, their weight).
fn usable(px: &ProxyRt) -> (u32, u32, u64) {
    let up = px.be.servers.iter().filter(|s| s.is_shown() && s.state.counts_as_available());
    up.fold(
        (0, 0, 0),
        |(a, b, w), s| if s.backup { (a, b + 1, w) } else { (a + 1, b, w + u64::from(s.state.eweight())) },
    )
}

fn backend(rt: &Runtime, idx: usize, px: &ProxyRt, name: &str, level: Level) -> Option<Val> {
    let be = &px.be;
    let (act, bck, weight) = usable(px);
    let http = px.mode == Mode::Http;
    Some(match name {
        "svname" => "BACKEND".into(),
        "scur" => be.servers.iter().map(|s| s.cur_conns.load(Ordering::Relaxed)).sum::<u32>().into(),
        "stot" => be.cum_conn.get().into(),
        "qcur" => be.queue.len().into(),
        "qmax" => be.queue.max().into(),
        "econ" => px.stats.be_econ.get().into(),
        "bin" => px.stats.be_bin.get().into(),
        "connect" => px.stats.be_connect.get().into(),
        "dresp" => px.stats.be_dresp.get().into(),
        "reuse" => px.stats.be_reuse.get().into(),
        "bout" => px.stats.be_bout.get().into(),
        "lbtot" => px.stats.be_lbtot.get().into(),
        "rate" => px.stats.be_sess_rate.current()?.into(),
        "rate_max" => px.stats.be_sess_rate.max()?.into(),
        "eresp" => px.stats.be_eresp.get().into(),
        "wretr" => px.stats.be_wretr.get().into(),
        "wredis" => px.stats.be_wredis.get().into(),
        // as HAProxy, a backend without servers (`dispatch`, `option transparent`) is up
        "status" => if act + bck > 0 || be.servers.iter().all(|s| !s.is_shown()) { "UP" } else { "DOWN" }.into(),
        "weight" | "uweight" => weight.into(),
        "act" => act.into(),
        "bck" => bck.into(),
        "lastchg" => be.state.last_change().map_or_else(|| super::uptime(rt), since).into(),
        "chkdown" => be.state.down_transitions().into(),
        // as HAProxy, only for a backend with servers
        "downtime" if !be.servers.is_empty() => be.state.downtime().into(),
        "sid" => 0u32.into(),
        "type" => 1u32.into(),
        "algo" if level >= Level::Operator => rt.stats.algos[idx].into(),
        "req_tot" if http => px.stats.be_req.get().into(),
        n if n.starts_with("hrsp_") && http => by_class(&px.stats.be_rsp, n)?,
        "cache_lookups" if http => px.stats.be_cache_lookups.get().into(),
        "cache_hits" if http => px.stats.be_cache_hits.get().into(),
        n if n.starts_with("comp_") => comp(&px.stats.be_comp, n)?,
        _ => return None,
    })
}

fn server(_rt: &Runtime, px: &ProxyRt, srv: &ServerRt, name: &str, level: Level) -> Option<Val> {
    let http = px.mode == Mode::Http;
    Some(match name {
        "svname" => Val::Str(srv.name.clone()),
        "scur" => srv.cur_conns.load(Ordering::Relaxed).into(),
        "smax" => srv.stats.smax.load(Ordering::Relaxed).into(),
        "slim" => srv.maxconn()?.into(),
        "qcur" => srv.queue.len().into(),
        "qmax" => srv.queue.max().into(),
        "qlimit" => (srv.maxqueue > 0).then_some(srv.maxqueue)?.into(),
        "src_ilim" => srv.pool_max_conn?.into(),
        "stot" => srv.stats.stot().get().into(),
        "econ" => srv.stats.econ().get().into(),
        "bin" => srv.stats.bin().get().into(),
        "connect" => srv.stats.connect().get().into(),
        "dresp" => srv.stats.dresp().get().into(),
        "reuse" => srv.stats.reuse().get().into(),
        "bout" => srv.stats.bout().get().into(),
        "lbtot" => srv.stats.lbtot().get().into(),
        "rate" => srv.stats.sess_rate.current()?.into(),
        "rate_max" => srv.stats.sess_rate.max()?.into(),
        "eresp" => srv.stats.eresp().get().into(),
        "wretr" => srv.stats.wretr().get().into(),
        "wredis" => srv.stats.wredis().get().into(),
        "status" => Val::Str(crate::health::status_text(srv)),
        "weight" | "uweight" => srv.state.eweight().into(),
        "act" => u32::from(!srv.backup).into(),
        "bck" => u32::from(srv.backup).into(),
        "lastchg" => since(srv.state.last_change()).into(),
        "sid" => srv.stats.sid.into(),
        "type" => 2u32.into(),
        "addr" if level >= Level::Operator => Val::Str(shown_addr(srv)?),
        "req_tot" if http => srv.stats.req().get().into(),
        n if n.starts_with("hrsp_") && http => srv_by_class(&srv.stats, n)?,
        n => check_cell(srv, n)?,
    })
}

/// A server's `addr` cell: `unix` for a unix-socket server; none while it waits for its
/// address from DNS (`init-addr none`, a free `server-template` slot), as HAProxy leaves
/// the cell of an address without family empty.
fn shown_addr(srv: &ServerRt) -> Option<String> {
    if srv.unix.is_some() {
        return Some("unix".to_owned());
    }
    let a = srv.addr.get();
    (srv.dns.is_none() || !a.ip().is_unspecified()).then(|| a.to_string())
}

/// Seconds since the unix time `t`.
fn since(t: u64) -> u64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    now.saturating_sub(t)
}

/// The check columns of a server: empty without the check they describe, and the
/// last-check ones empty before its first result, as HAProxy.
fn check_cell(srv: &ServerRt, name: &str) -> Option<Val> {
    let st = &srv.state;
    let chk = srv.check.as_deref();
    let report = |agent: bool| {
        if agent {
            srv.agent.as_deref()?;
            st.last_agent_check()
        } else {
            chk?;
            st.last_check()
        }
    };
    Some(match name {
        "chkfail" => {
            chk?;
            st.failed_checks().into()
        }
        "chkdown" => {
            chk?;
            st.down_transitions().into()
        }
        "downtime" => {
            chk?;
            st.downtime().into()
        }
        "hanafail" => {
            chk?.observe?;
            st.failed_hana().into()
        }
        "check_rise" => chk?.rise.into(),
        "check_fall" => chk?.fall.into(),
        "check_health" => st.health_or(chk?.rise).into(),
        "agent_rise" | "agent_fall" => {
            srv.agent.as_deref()?;
            1u32.into()
        }
        "check_status" | "agent_status" => report(name == "agent_status")?.status.code().into(),
        "check_code" | "agent_code" => {
            let r = report(name == "agent_code")?;
            if !r.status.has_code() {
                return None;
            }
            u32::from(r.code).into()
        }
        "check_duration" | "agent_duration" => (report(name == "agent_duration")?.duration.as_millis() as u64).into(),
        "last_chk" | "last_agt" => Val::Str(report(name == "last_agt")?.desc.clone()),
        "check_desc" | "agent_desc" => report(name == "agent_desc")?.status.description().into(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_has_every_column_of_haproxy_2_6_in_order() {
        let mut h = String::new();
        header(&mut h);
        let cols: Vec<&str> = h.trim_start_matches("# ").trim_end().split(',').collect();
        assert_eq!(cols.len(), 129, "128 columns and the trailing comma");
        assert_eq!(&cols[..4], ["pxname", "svname", "qcur", "qmax"]);
        assert_eq!(
            &cols[100..106],
            ["agg_server_status", "agg_server_check_status", "agg_check_status", "-", "ssl_sess", "ssl_reused_sess"]
        );
        assert_eq!(cols[127], "h1_spliced_bytes_out");
    }

    #[test]
    fn csv_cells_with_commas_are_quoted() {
        assert_eq!(Csv(&Val::Str("a,b".into())).to_string(), "\"a,b\"");
        assert_eq!(Csv(&Val::Str("ab".into())).to_string(), "ab");
        assert_eq!(Csv(&Val::Uint(3)).to_string(), "3");
    }
}
