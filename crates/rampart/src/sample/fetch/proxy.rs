//! Fetches of the proxies and servers: names, ids, connection counts, server states,
//! timeouts. HAProxy counterpart: src/frontend.c, src/backend.c.
//!
//! Ids: HAProxy numbers proxies from 1 in declaration order, after the internal
//! `GLOBAL` proxy a `stats socket` creates, and servers from 1 in their backend
//! (explicit `id` keywords are not supported by the configuration model yet).

use std::time::Duration;

use crate::sample::ctx::SampleCtx;
use crate::sample::host::SrvFacts;
use crate::sample::kw::{uses, Arg, ArgSpec, ArgT, FetchKw};
use crate::sample::types::{Sample, SmpType};

use super::Emit;

/// The proxy an argument names, else `default`.
fn arg_proxy(args: &[Arg], default: usize) -> usize {
    match args.first() {
        Some(Arg::Proxy(p)) => *p,
        _ => default,
    }
}

fn fetch_fe_name<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(name) = ctx.rt.proxy_name(ctx.fe) {
        emit(Sample::str(name.as_bytes()));
    }
}

fn fetch_fe_id<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(id) = ctx.rt.proxy_id(ctx.fe) {
        emit(Sample::Sint(id.into()));
    }
}

/// `fe_defbe`: the frontend's default backend.
fn fetch_fe_defbe<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(name) = ctx.rt.default_backend(ctx.fe).and_then(|b| ctx.rt.proxy_name(b)) {
        emit(Sample::str(name.as_bytes()));
    }
}

fn fetch_be_name<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(name) = ctx.rt.proxy_name(ctx.be_or_fe()) {
        emit(Sample::str(name.as_bytes()));
    }
}

fn fetch_be_id<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(id) = ctx.rt.proxy_id(ctx.be_or_fe()) {
        emit(Sample::Sint(id.into()));
    }
}

fn fetch_srv_name<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(s) = ctx.be.zip(ctx.srv).and_then(|(b, s)| ctx.rt.server(b, s)) {
        emit(Sample::str(s.name.as_bytes()));
    }
}

fn fetch_srv_id<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(s) = ctx.be.zip(ctx.srv).and_then(|(b, s)| ctx.rt.server(b, s)) {
        emit(Sample::Sint(s.id.into()));
    }
}

/// `nbsrv([backend])`: usable active servers, else usable backup servers.
fn fetch_nbsrv<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let be = arg_proxy(args, ctx.be_or_fe());
    if ctx.rt.proxy_name(be).is_none() {
        return;
    }
    let servers = (0..ctx.rt.server_count(be)).filter_map(|i| ctx.rt.server(be, i));
    let up = |backup: bool| servers.clone().filter(|s| s.backup == backup && s.usable).count();
    let n = match up(false) {
        0 => up(true),
        n => n,
    };
    emit(Sample::Sint(n as i64));
}

fn server<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>) -> Option<SrvFacts<'a>> {
    match args.first() {
        Some(Arg::Server(p, s)) => ctx.rt.server(*p, *s),
        _ => None,
    }
}

/// `srv_is_up(srv)`: not in maintenance and not marked DOWN by its checks.
fn fetch_srv_is_up<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(s) = server(args, ctx) {
        emit(Sample::Bool(s.up));
    }
}

fn fetch_srv_conn<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(s) = server(args, ctx) {
        emit(Sample::Sint(i64::from(s.cur_conns)));
    }
}

/// `be_conn(backend)`: connections in use to the backend's servers.
/// COMPAT: HAProxy counts the backend's streams (queued ones too).
fn fetch_be_conn<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let be = arg_proxy(args, ctx.be_or_fe());
    if ctx.rt.proxy_name(be).is_some() {
        let n: u64 =
            (0..ctx.rt.server_count(be)).filter_map(|i| ctx.rt.server(be, i)).map(|s| u64::from(s.cur_conns)).sum();
        emit(Sample::Sint(n as i64));
    }
}

fn fetch_fe_conn<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let fe = arg_proxy(args, ctx.fe);
    if ctx.rt.proxy_name(fe).is_some() {
        emit(Sample::Sint(i64::from(ctx.rt.fe_conns(fe))));
    }
}

/// The servers of backend `be`, as the fetches read them.
fn servers<'a>(ctx: &SampleCtx<'a>, be: usize) -> impl Iterator<Item = SrvFacts<'a>> + Clone + 'a {
    let rt = ctx.rt;
    (0..rt.server_count(be)).filter_map(move |i| rt.server(be, i))
}

/// `queue([backend])`: streams waiting for a server of the backend, in its queue and
/// its servers' queues.
fn fetch_queue<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(b) = ctx.rt.backend(arg_proxy(args, ctx.be_or_fe())) {
        emit(Sample::Sint(b.queued.into()));
    }
}

/// `avg_queue([backend])`: the queued streams per usable server, rounded up; twice the
/// queue when no server is usable (HAProxy's way to make it look bad).
fn fetch_avg_queue<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let be = arg_proxy(args, ctx.be_or_fe());
    let Some(b) = ctx.rt.backend(be) else { return };
    let up = |backup: bool| servers(ctx, be).filter(|s| s.backup == backup && s.usable).count() as i64;
    let usable = match (up(false), up(true)) {
        (0, 0) => 0,
        (0, _) if !b.all_backups => 1,
        (0, bck) => bck,
        (act, _) => act,
    };
    let queued = i64::from(b.queued);
    emit(Sample::Sint(if usable > 0 { (queued + usable - 1) / usable } else { queued * 2 }));
}

/// `be_sess_rate([backend])`: sessions per second over the last second.
fn fetch_be_sess_rate<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(b) = ctx.rt.backend(arg_proxy(args, ctx.be_or_fe())) {
        emit(Sample::Sint(b.sess_rate.into()));
    }
}

/// `connslots([backend])`: free connection and queue slots over the servers that are
/// not stopped; -1 when one of them has no `maxconn` or no `maxqueue`, as HAProxy.
fn fetch_connslots<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let be = arg_proxy(args, ctx.be_or_fe());
    if ctx.rt.backend(be).is_none() {
        return;
    }
    let mut slots = 0i64;
    for s in servers(ctx, be).filter(|s| !s.stopped) {
        let Some(max) = s.maxconn.filter(|_| s.maxqueue > 0) else {
            emit(Sample::Sint(-1));
            return;
        };
        slots += i64::from(max) - i64::from(s.cur_conns) + i64::from(s.maxqueue) - i64::from(s.queued);
    }
    emit(Sample::Sint(slots));
}

/// `be_conn_free([backend])`: free connection slots over the servers that would take
/// traffic now (the active ones, else the backups the balancer uses); -1 when one of
/// them has no `maxconn`.
fn fetch_be_conn_free<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let be = arg_proxy(args, ctx.be_or_fe());
    let Some(b) = ctx.rt.backend(be) else { return };
    let any_active = servers(ctx, be).any(|s| !s.backup && s.usable);
    let mut first_backup = true;
    let mut free = 0i64;
    for s in servers(ctx, be).filter(|s| s.usable) {
        if s.backup {
            // the first usable backup, or all of them with `option allbackups`
            let used = !any_active && (first_backup || b.all_backups);
            first_backup = false;
            if !used {
                continue;
            }
        }
        let Some(max) = s.maxconn else {
            emit(Sample::Sint(-1));
            return;
        };
        free += i64::from(max.saturating_sub(s.cur_conns));
    }
    emit(Sample::Sint(free));
}

/// `srv_conn_free(srv)`: free connection slots; -1 without `maxconn`.
fn fetch_srv_conn_free<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(s) = server(args, ctx) {
        emit(Sample::Sint(s.maxconn.map_or(-1, |m| i64::from(m.saturating_sub(s.cur_conns)))));
    }
}

fn fetch_srv_queue<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(s) = server(args, ctx) {
        emit(Sample::Sint(s.queued.into()));
    }
}

fn fetch_srv_sess_rate<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(s) = server(args, ctx) {
        emit(Sample::Sint(s.sess_rate.into()));
    }
}

/// `srv_weight(srv)` and `srv_uweight(srv)`: the weight in use (`set weight`, slow
/// start, agent). COMPAT: HAProxy's `uweight` is the weight `set weight` gave, before
/// slow start scales it; rampart keeps one effective weight.
fn fetch_srv_weight<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(s) = server(args, ctx) {
        emit(Sample::Sint(s.weight.into()));
    }
}

/// `srv_iweight(srv)`: the weight of the configuration.
fn fetch_srv_iweight<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(s) = server(args, ctx) {
        emit(Sample::Sint(s.initial_weight.into()));
    }
}

/// `fe_sess_rate([frontend])`: sessions per second over the last second.
fn fetch_fe_sess_rate<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(r) = ctx.rt.fe_rates(arg_proxy(args, ctx.fe)) {
        emit(Sample::Sint(r.sess.into()));
    }
}

/// `fe_req_rate([frontend])`: HTTP requests per second over the last second.
fn fetch_fe_req_rate<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(r) = ctx.rt.fe_rates(arg_proxy(args, ctx.fe)) {
        emit(Sample::Sint(r.req.into()));
    }
}

fn ms(d: Option<Duration>) -> Sample<'static> {
    Sample::Sint(d.map_or(0, |d| d.as_millis() as i64))
}

fn fetch_fe_client_timeout<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(t) = ctx.rt.timeouts(ctx.fe) {
        emit(ms(t.client));
    }
}

fn fetch_be_server_timeout<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(t) = ctx.rt.timeouts(ctx.be_or_fe()) {
        emit(ms(t.server));
    }
}

fn fetch_be_tunnel_timeout<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(t) = ctx.rt.timeouts(ctx.be_or_fe()) {
        emit(ms(t.tunnel));
    }
}

/// `cur_server_timeout`: the stream's server timeout, `set-timeout` included.
fn fetch_cur_server_timeout<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(t) = ctx.rt.timeouts(ctx.be_or_fe()) {
        emit(ms(ctx.timeouts.server(t.server)));
    }
}

/// `cur_tunnel_timeout`: the stream's tunnel timeout, `set-timeout` included.
fn fetch_cur_tunnel_timeout<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(t) = ctx.rt.timeouts(ctx.be_or_fe()) {
        emit(ms(ctx.timeouts.tunnel(t.tunnel)));
    }
}

const BE: ArgSpec = ArgSpec::new(&[ArgT::Backend], 1);
const FE: ArgSpec = ArgSpec::new(&[ArgT::Frontend], 1);
const SRV: ArgSpec = ArgSpec::new(&[ArgT::Server], 1);

pub const KEYWORDS: &[FetchKw] = &[
    FetchKw::new("fe_client_timeout", ArgSpec::NONE, SmpType::Sint, fetch_fe_client_timeout).uses(uses::FTEND),
    FetchKw::new("fe_conn", FE, SmpType::Sint, fetch_fe_conn),
    FetchKw::new("fe_defbe", ArgSpec::NONE, SmpType::Str, fetch_fe_defbe).uses(uses::FTEND),
    FetchKw::new("fe_id", ArgSpec::NONE, SmpType::Sint, fetch_fe_id).uses(uses::FTEND),
    FetchKw::new("fe_name", ArgSpec::NONE, SmpType::Str, fetch_fe_name).uses(uses::FTEND),
    FetchKw::new("be_conn", BE, SmpType::Sint, fetch_be_conn),
    FetchKw::new("be_id", ArgSpec::NONE, SmpType::Sint, fetch_be_id).uses(uses::BKEND),
    FetchKw::new("be_name", ArgSpec::NONE, SmpType::Str, fetch_be_name).uses(uses::BKEND),
    FetchKw::new("be_server_timeout", ArgSpec::NONE, SmpType::Sint, fetch_be_server_timeout).uses(uses::BKEND),
    FetchKw::new("be_tunnel_timeout", ArgSpec::NONE, SmpType::Sint, fetch_be_tunnel_timeout).uses(uses::BKEND),
    FetchKw::new("cur_server_timeout", ArgSpec::NONE, SmpType::Sint, fetch_cur_server_timeout).uses(uses::BKEND),
    FetchKw::new("cur_tunnel_timeout", ArgSpec::NONE, SmpType::Sint, fetch_cur_tunnel_timeout).uses(uses::BKEND),
    FetchKw::new("fe_req_rate", FE, SmpType::Sint, fetch_fe_req_rate),
    FetchKw::new("fe_sess_rate", FE, SmpType::Sint, fetch_fe_sess_rate),
    FetchKw::new("avg_queue", BE, SmpType::Sint, fetch_avg_queue),
    FetchKw::new("be_conn_free", BE, SmpType::Sint, fetch_be_conn_free),
    FetchKw::new("be_sess_rate", BE, SmpType::Sint, fetch_be_sess_rate),
    FetchKw::new("connslots", BE, SmpType::Sint, fetch_connslots),
    FetchKw::new("queue", BE, SmpType::Sint, fetch_queue),
    FetchKw::new("nbsrv", BE, SmpType::Sint, fetch_nbsrv),
    FetchKw::new("srv_conn", SRV, SmpType::Sint, fetch_srv_conn),
    FetchKw::new("srv_conn_free", SRV, SmpType::Sint, fetch_srv_conn_free),
    FetchKw::new("srv_iweight", SRV, SmpType::Sint, fetch_srv_iweight),
    FetchKw::new("srv_queue", SRV, SmpType::Sint, fetch_srv_queue),
    FetchKw::new("srv_sess_rate", SRV, SmpType::Sint, fetch_srv_sess_rate),
    FetchKw::new("srv_uweight", SRV, SmpType::Sint, fetch_srv_weight),
    FetchKw::new("srv_weight", SRV, SmpType::Sint, fetch_srv_weight),
    FetchKw::new("srv_id", ArgSpec::NONE, SmpType::Sint, fetch_srv_id).uses(uses::SERVR),
    FetchKw::new("srv_is_up", SRV, SmpType::Bool, fetch_srv_is_up),
    FetchKw::new("srv_name", ArgSpec::NONE, SmpType::Str, fetch_srv_name).uses(uses::SERVR),
];

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::sample::ctx::SampleCtx;
    use crate::sample::testutil::*;
    use crate::sample::Sample;

    #[test]
    fn names_and_ids() {
        let cfg = config(CFG);
        let rt = runtime(&cfg);
        let c = conn();
        let mut ctx = SampleCtx::new(&rt, &c, 0);
        let v = |ctx: &SampleCtx<'_>, t: &str| compile_in(&cfg, 1, t).unwrap().eval(ctx).map(Sample::into_owned);
        assert_eq!(v(&ctx, "fe_name"), Some(s("fe")));
        assert_eq!(v(&ctx, "fe_id"), Some(Sample::Sint(1)));
        assert_eq!(v(&ctx, "fe_defbe"), Some(s("be")));
        // No backend yet: the frontend stands for it, as HAProxy's `s->be`.
        assert_eq!(v(&ctx, "be_name"), Some(s("fe")));
        assert_eq!(v(&ctx, "srv_name"), None);
        assert_eq!(v(&ctx, "srv_id"), None);
        ctx.be = Some(1);
        ctx.srv = Some(1);
        assert_eq!(v(&ctx, "be_name"), Some(s("be")));
        assert_eq!(v(&ctx, "be_id"), Some(Sample::Sint(2)));
        assert_eq!(v(&ctx, "srv_name"), Some(s("s2")));
        assert_eq!(v(&ctx, "srv_id"), Some(Sample::Sint(2)));
        assert_eq!(v(&ctx, "fe_client_timeout"), Some(Sample::Sint(1000)));
        assert_eq!(v(&ctx, "be_server_timeout"), Some(Sample::Sint(1000)));
        assert_eq!(v(&ctx, "be_tunnel_timeout"), Some(Sample::Sint(0)));
        assert_eq!(v(&ctx, "cur_server_timeout"), Some(Sample::Sint(1000)));
        ctx.timeouts.server = Some(Some(Duration::from_millis(3000)));
        ctx.timeouts.tunnel = Some(Some(Duration::from_millis(7)));
        assert_eq!(v(&ctx, "cur_server_timeout"), Some(Sample::Sint(3000)));
        assert_eq!(v(&ctx, "cur_tunnel_timeout"), Some(Sample::Sint(7)));
    }

    #[test]
    fn ids_count_the_global_proxy_of_a_stats_socket() {
        let text = format!("global\n  stats socket /tmp/rampart-test.sock\n{CFG}");
        let cfg = config(&text);
        let rt = runtime(&cfg);
        let c = conn();
        let ctx = SampleCtx::new(&rt, &c, 0);
        let e = compile_in(&cfg, 0, "fe_id").unwrap();
        assert_eq!(e.eval(&ctx), Some(Sample::Sint(2)));
    }

    #[test]
    fn explicit_ids_and_the_numbers_of_the_others() {
        let text = CFG
            .replace("\nbackend be\n", "\nbackend be\n  id 7\n")
            .replace("server s2 127.0.0.1:18003", "server s2 127.0.0.1:18003 id 1");
        let cfg = config(&text);
        let rt = runtime(&cfg);
        let c = conn();
        let mut ctx = SampleCtx::new(&rt, &c, 0);
        ctx.be = Some(1);
        let v = |ctx: &SampleCtx<'_>, t: &str| compile_in(&cfg, 0, t).unwrap().eval(ctx).map(Sample::into_owned);
        assert_eq!(v(&ctx, "fe_id"), Some(Sample::Sint(1)));
        assert_eq!(v(&ctx, "be_id"), Some(Sample::Sint(7)));
        ctx.srv = Some(0);
        assert_eq!(v(&ctx, "srv_id"), Some(Sample::Sint(2)), "s1 takes the first number s2 leaves");
        ctx.srv = Some(1);
        assert_eq!(v(&ctx, "srv_id"), Some(Sample::Sint(1)));
        ctx.be = Some(2);
        ctx.srv = None;
        assert_eq!(v(&ctx, "be_id"), Some(Sample::Sint(3)), "li: third in line");
    }

    #[test]
    fn servers_and_counts() {
        let cfg = config(CFG);
        let rt = runtime(&cfg);
        let c = conn();
        let ctx = SampleCtx::new(&rt, &c, 0);
        let v = |t: &str| compile_in(&cfg, 2, t).unwrap().eval(&ctx).map(Sample::into_owned);
        assert_eq!(v("nbsrv(be)"), Some(Sample::Sint(1)));
        assert_eq!(v("nbsrv"), Some(Sample::Sint(1)));
        assert_eq!(v("srv_is_up(be/s1)"), Some(Sample::Bool(true)));
        assert_eq!(v("srv_is_up(be/s2)"), Some(Sample::Bool(false)));
        assert_eq!(v("srv_is_up(s3)"), Some(Sample::Bool(true)));
        rt.proxies[1].be.servers[0].cur_conns.store(3, std::sync::atomic::Ordering::Relaxed);
        assert_eq!(v("srv_conn(be/s1)"), Some(Sample::Sint(3)));
        assert_eq!(v("be_conn(be)"), Some(Sample::Sint(3)));
        assert_eq!(v("fe_conn(fe)"), Some(Sample::Sint(0)));
        let e = compile_in(&cfg, 0, "srv_is_up(s1)").unwrap_err();
        assert!(e.is_resolve(), "{e}");
        let e = compile_in(&cfg, 0, "nbsrv").unwrap_err().to_string();
        assert_eq!(
            e,
            "proxy 'fe', referenced in arg 1 of sample fetch keyword 'nbsrv' in http-request expression in \
             proxy 'fe', has not backend capability"
        );
    }
}
