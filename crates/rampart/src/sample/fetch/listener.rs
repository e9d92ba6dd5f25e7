//! Fetches of the listener a connection came through: `so_name` (the `name` of its
//! `bind` line), `so_id`, and `dst_conn` (the connections open on it). HAProxy
//! counterpart: src/listener.c, `smp_fetch_dconn` (src/tcp_sample.c).
//!
//! Ids: HAProxy numbers a frontend's listeners (each address of its `bind` lines)
//! from 1 in declaration order; explicit `bind ... id` is not supported yet, so the
//! number is always that one.

use std::borrow::Cow;

use crate::sample::ctx::SampleCtx;
use crate::sample::kw::{uses, Arg, ArgSpec, FetchKw};
use crate::sample::types::{Sample, SmpType};

use super::Emit;

/// `so_name`: absent for a `bind` line without `name`.
fn fetch_so_name<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(name) = ctx.rt.listener_name(ctx.fe, ctx.conn.listener) {
        emit(Sample::Str(Cow::Borrowed(name.as_bytes())));
    }
}

fn fetch_so_id<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(id) = ctx.rt.listener_id(ctx.fe, ctx.conn.listener) {
        emit(Sample::Sint(i64::from(id)));
    }
}

/// `dst_conn`: the connections open on the listener that accepted this one, this one
/// included, over all threads.
fn fetch_dst_conn<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(n) = ctx.rt.listener_conns(ctx.fe, ctx.conn.listener) {
        emit(Sample::Sint(i64::from(n)));
    }
}

pub const KEYWORDS: &[FetchKw] = &[
    FetchKw::new("dst_conn", ArgSpec::NONE, SmpType::Sint, fetch_dst_conn).uses(uses::FTEND),
    FetchKw::new("so_id", ArgSpec::NONE, SmpType::Sint, fetch_so_id).uses(uses::FTEND),
    FetchKw::new("so_name", ArgSpec::NONE, SmpType::Str, fetch_so_name).uses(uses::FTEND),
];

#[cfg(test)]
mod tests {
    use crate::sample::ctx::{ConnInfo, SampleCtx};
    use crate::sample::testutil::*;
    use crate::sample::Sample;

    // Expected values checked against haproxy 2.6.12 with the same bind lines
    // (`http-request return ... hdr x "%[so_id] %[so_name]"`, one request per port).
    const CFG: &str = "\
defaults
  mode http
frontend fe
  bind 127.0.0.1:18101 name first
  bind 127.0.0.1:18102,127.0.0.1:18103
  bind 127.0.0.1:18104-18105 name range
  default_backend be
backend be
";

    fn fetch(listener: u32, text: &str) -> Option<Sample<'static>> {
        let cfg = config(CFG);
        let rt = runtime(&cfg);
        let c = ConnInfo { listener, ..ConnInfo::new(None, -1) };
        let ctx = SampleCtx::new(&rt, &c, 0);
        compile_in(&cfg, 0, text).unwrap().eval(&ctx).map(Sample::into_owned)
    }

    #[test]
    fn name_and_id_of_each_listener() {
        let want = [(1, Some("first")), (2, None), (3, None), (4, Some("range")), (5, Some("range"))];
        for (li, (id, name)) in want.into_iter().enumerate() {
            let li = li as u32;
            assert_eq!(fetch(li, "so_id"), Some(Sample::Sint(id)), "listener {li}");
            assert_eq!(fetch(li, "so_name"), name.map(|n| Sample::str(n.as_bytes()).into_owned()), "listener {li}");
        }
    }

    #[test]
    fn an_unknown_listener_has_neither() {
        assert_eq!(fetch(9, "so_id"), None);
        assert_eq!(fetch(9, "so_name"), None);
    }
}
