//! Fetches of stick-table counters: those of the entries the stream tracks (`sc_*`
//! with the slot as first argument, `sc0_*`, `sc1_*`, `sc2_*`) and those of the
//! client address's entry in a table (`src_*`).
//! HAProxy counterpart: the `smp_fetch_sc_*` functions and `smp_fetch_sc_stkctr()`
//! (src/stick_table.c).
//!
//! As HAProxy: a slot that tracks nothing gives no value (an ACL on it is false); an
//! address absent from the table reads 0; a data type the table does not store gives
//! no value. `src_inc_gpc0`/`src_clr_gpc0` create the entry when missing. `gpc0`,
//! `gpc1`, `gpt0` and their rates read the first elements of the arrays (`gpc(<n>)`)
//! in a table that stores those instead; `*_gpc(<idx>,...)` read the arrays only.

use rampart_cfg::model::DataType as D;

use crate::sample::ctx::SampleCtx;
use crate::sample::expr::CompileCx;
use crate::sample::kw::{uses, Arg, ArgList, ArgSpec, ArgT, FetchKw};
use crate::sample::types::{Sample, SmpType};
use crate::stick::data::Row;
use crate::stick::{Key, StickTable};

use super::Emit;

/// `sc_*`: the slot is the first argument.
const SC: usize = 3;
/// `src_*`: the client address in a table.
const SRC: usize = 4;

/// The table and the entry (if present) a fetch of family `WHO` reads; `None` when
/// the slot tracks nothing. `create`: make the `src_*` entry when missing.
fn entry<'a, const WHO: usize>(
    args: &'a [Arg],
    ctx: &SampleCtx<'a>,
    create: bool,
) -> Option<(&'a StickTable, Option<Row>)> {
    let (slot, tab) = match WHO {
        SC => (usize::try_from(args.first()?.as_sint()?).ok()?, args.get(1)),
        SRC => return src_entry(args, ctx, create),
        n => (n, args.first()),
    };
    let tracked = ctx.tracked(slot)?;
    match tab {
        Some(&Arg::Proxy(px)) => {
            let other: &'a StickTable = ctx.rt.stick_table(px)?;
            if std::ptr::eq(other, &*tracked.table) {
                return Some((other, Some(tracked.row.clone())));
            }
            // the tracked key, looked up in another table
            let row = other.lookup(&tracked.key);
            Some((other, row))
        }
        _ => Some((&tracked.table, Some(tracked.row.clone()))),
    }
}

fn src_entry<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, create: bool) -> Option<(&'a StickTable, Option<Row>)> {
    let Some(&Arg::Proxy(px)) = args.first() else { return None };
    let t: &'a StickTable = ctx.rt.stick_table(px)?;
    let key = addr_key(t, ctx.conn.src?.ip())?;
    let row = if create { t.get_or_create(&key) } else { t.lookup(&key) };
    Some((t, row))
}

/// The key of a client address in table `t` (an IPv6 address in an `ip` table only
/// when it maps an IPv4 one).
pub fn addr_key(t: &StickTable, ip: std::net::IpAddr) -> Option<Key> {
    let smp = match ip {
        std::net::IpAddr::V4(a) => Sample::Ipv4(a),
        std::net::IpAddr::V6(a) => Sample::Ipv6(a),
    };
    crate::sample::conv::stick::sample_key(t, smp)
}

/// `<family>_<data>`: the value of data type `D::ALL[DT]`, shifted right by `SHIFT`
/// (`kbytes_*`).
fn fetch_data<'a, const WHO: usize, const DT: usize, const SHIFT: u32>(
    args: &'a [Arg],
    ctx: &SampleCtx<'a>,
    emit: Emit<'_, 'a>,
) {
    read::<WHO>(args, ctx, D::ALL[DT], 0, SHIFT, emit);
}

/// Element `idx` of `d` in the entry, shifted right by `shift`; no value when the
/// table does not store it, 0 when the entry is absent.
fn read<'a, const WHO: usize>(args: &'a [Arg], ctx: &SampleCtx<'a>, d: D, idx: usize, shift: u32, emit: Emit<'_, 'a>) {
    let Some((t, row)) = entry::<WHO>(args, ctx, false) else { return };
    let Some(c) = t.layout.cell(d, idx) else { return };
    let v = row.map_or(0, |r| r.get_cell(c, crate::stick::now_ms()));
    emit(Sample::Sint((v >> shift) as i64));
}

/// The array index of `<family>_get_gpc(<idx>,...)` and the arguments after it.
fn split_idx(args: &[Arg]) -> Option<(usize, &[Arg])> {
    let idx = usize::try_from(args.first()?.as_sint()?).ok()?;
    Some((idx, &args[1..]))
}

/// `<family>_get_gpc`, `_get_gpt`, `_gpc_rate(<idx>,...)`: element `idx` of the array.
fn fetch_elem<'a, const WHO: usize, const DT: usize>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let Some((idx, rest)) = split_idx(args) else { return };
    read::<WHO>(rest, ctx, D::ALL[DT], idx, 0, emit);
}

/// `<family>_inc_gpc0/1`: adds one (and one event to the matching rate), returns the
/// new value (the rate's events in its current period when only the rate is stored).
fn fetch_inc<'a, const WHO: usize, const DT: usize>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    inc::<WHO>(args, ctx, D::ALL[DT], 0, emit);
}

/// `<family>_inc_gpc(<idx>,...)`: likewise for element `idx` of `gpc`, `gpc_rate`.
fn fetch_inc_elem<'a, const WHO: usize>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let Some((idx, rest)) = split_idx(args) else { return };
    inc::<WHO>(rest, ctx, D::Gpc, idx, emit);
}

fn inc<'a, const WHO: usize>(args: &'a [Arg], ctx: &SampleCtx<'a>, gpc: D, idx: usize, emit: Emit<'_, 'a>) {
    let Some((t, row)) = entry::<WHO>(args, ctx, true) else { return };
    let (l, now) = (&t.layout, crate::stick::now_ms());
    let mut v = 0;
    if let Some(row) = row {
        if let Some(c) = gpc.gpc_rate().and_then(|r| l.cell(r, idx)) {
            v = row.add_cell(c, 1, now);
        }
        if let Some(c) = l.cell(gpc, idx) {
            v = row.add_cell(c, 1, now);
        }
    }
    emit(Sample::Sint(v as i64));
}

/// `<family>_clr_gpc0/1`: sets it to 0, returns the value it had.
fn fetch_clr<'a, const WHO: usize, const DT: usize>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    clr::<WHO>(args, ctx, D::ALL[DT], 0, emit);
}

/// `<family>_clr_gpc(<idx>,...)`: likewise for element `idx` of `gpc`.
fn fetch_clr_elem<'a, const WHO: usize>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let Some((idx, rest)) = split_idx(args) else { return };
    clr::<WHO>(rest, ctx, D::Gpc, idx, emit);
}

fn clr<'a, const WHO: usize>(args: &'a [Arg], ctx: &SampleCtx<'a>, gpc: D, idx: usize, emit: Emit<'_, 'a>) {
    let Some((t, row)) = entry::<WHO>(args, ctx, true) else { return };
    let Some(c) = t.layout.cell(gpc, idx) else { return };
    let now = crate::stick::now_ms();
    let old = row.map_or(0, |r| {
        let v = r.get_cell(c, now);
        r.set_cell(c, 0, now);
        v
    });
    emit(Sample::Sint(old as i64));
}

/// `<family>_tracked`: whether the slot tracks an entry.
fn fetch_tracked<'a, const WHO: usize>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let slot = if WHO == SC { args.first().and_then(Arg::as_sint).unwrap_or(-1) } else { WHO as i64 };
    let on = usize::try_from(slot).ok().and_then(|s| ctx.tracked(s)).is_some();
    emit(Sample::Bool(on));
}

/// `<family>_trackers`: how many streams track the entry now.
fn fetch_trackers<'a, const WHO: usize>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let Some((_, row)) = entry::<WHO>(args, ctx, false) else { return };
    emit(Sample::Sint(row.map_or(0, |r| r.users().saturating_sub(1)) as i64));
}

/// `table_avl([<table>])`: free entries; `table_cnt`: used ones.
fn fetch_table_room<'a, const USED: bool>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let Some(&Arg::Proxy(px)) = args.first() else { return };
    let Some(t) = ctx.rt.stick_table(px) else { return };
    let n = if USED { t.used() } else { t.size.saturating_sub(t.used()) };
    emit(Sample::Sint(i64::from(n)));
}

/// `src_*` without a table argument read the table of the proxy the rule is in.
fn check_src(args: &mut ArgList, cx: &mut CompileCx<'_>) -> Result<(), String> {
    if args.is_empty() {
        if cx.cfg.proxies.get(cx.px).is_none_or(|p| p.stick_table.is_none()) {
            return Err(format!("no table in proxy '{}'", cx.px_name()));
        }
        args.push(Arg::Proxy(cx.px));
    }
    Ok(())
}

const SC_ARGS: ArgSpec = ArgSpec::new(&[ArgT::Sint, ArgT::Table], 1);
const TAB_ARGS: ArgSpec = ArgSpec::new(&[ArgT::Table], 0);
const I: u32 = uses::INTRN;
const L4: u32 = uses::L4CLI;

/// The five keywords of one fetch (`sc_x`, `sc0_x`, `sc1_x`, `sc2_x`, `src_x`).
macro_rules! family {
    ($name:literal, $out:expr, $f:ident $(, $c:expr)*) => {
        [
            FetchKw::new(concat!("sc_", $name), SC_ARGS, $out, $f::<SC $(, $c)*>).uses(I),
            FetchKw::new(concat!("sc0_", $name), TAB_ARGS, $out, $f::<0 $(, $c)*>).uses(I),
            FetchKw::new(concat!("sc1_", $name), TAB_ARGS, $out, $f::<1 $(, $c)*>).uses(I),
            FetchKw::new(concat!("sc2_", $name), TAB_ARGS, $out, $f::<2 $(, $c)*>).uses(I),
            FetchKw::new(concat!("src_", $name), TAB_ARGS, $out, $f::<SRC $(, $c)*>).uses(L4).check(check_src),
        ]
    };
}

macro_rules! data {
    ($name:literal, $dt:expr) => {
        family!($name, SmpType::Sint, fetch_data, { $dt as usize }, 0)
    };
    ($name:literal, $dt:expr, kbytes) => {
        family!($name, SmpType::Sint, fetch_data, { $dt as usize }, 10)
    };
}

const S: SmpType = SmpType::Sint;

const FAMILIES: [[FetchKw; 5]; 24] = [
    data!("conn_cnt", D::ConnCnt),
    data!("conn_cur", D::ConnCur),
    data!("conn_rate", D::ConnRate),
    data!("sess_cnt", D::SessCnt),
    data!("sess_rate", D::SessRate),
    data!("http_req_cnt", D::HttpReqCnt),
    data!("http_req_rate", D::HttpReqRate),
    data!("http_err_cnt", D::HttpErrCnt),
    data!("http_err_rate", D::HttpErrRate),
    data!("http_fail_cnt", D::HttpFailCnt),
    data!("http_fail_rate", D::HttpFailRate),
    data!("bytes_in_rate", D::BytesInRate),
    data!("bytes_out_rate", D::BytesOutRate),
    data!("kbytes_in", D::BytesInCnt, kbytes),
    data!("kbytes_out", D::BytesOutCnt, kbytes),
    data!("get_gpc0", D::Gpc0),
    data!("get_gpc1", D::Gpc1),
    data!("get_gpt0", D::Gpt0),
    data!("gpc0_rate", D::Gpc0Rate),
    data!("gpc1_rate", D::Gpc1Rate),
    family!("inc_gpc0", S, fetch_inc, { D::Gpc0 as usize }),
    family!("inc_gpc1", S, fetch_inc, { D::Gpc1 as usize }),
    family!("clr_gpc0", S, fetch_clr, { D::Gpc0 as usize }),
    family!("clr_gpc1", S, fetch_clr, { D::Gpc1 as usize }),
];

/// The array forms (HAProxy 2.6 requires the table of `src_*` here), and the stray
/// `sc1_clr_gpc` HAProxy 2.6 registers.
const ELEMS: [FetchKw; 11] = {
    const SC3: ArgSpec = ArgSpec::new(&[ArgT::Sint, ArgT::Sint, ArgT::Table], 2);
    const SRC2: ArgSpec = ArgSpec::new(&[ArgT::Sint, ArgT::Table], 2);
    const IDX: ArgSpec = ArgSpec::new(&[ArgT::Sint, ArgT::Table], 1);
    const GPC: usize = D::Gpc as usize;
    const GPT: usize = D::Gpt as usize;
    const RATE: usize = D::GpcRate as usize;
    [
        FetchKw::new("sc_get_gpc", SC3, S, fetch_elem::<SC, GPC>).uses(I),
        FetchKw::new("src_get_gpc", SRC2, S, fetch_elem::<SRC, GPC>).uses(L4),
        FetchKw::new("sc_get_gpt", SC3, S, fetch_elem::<SC, GPT>).uses(I),
        FetchKw::new("src_get_gpt", SRC2, S, fetch_elem::<SRC, GPT>).uses(L4),
        FetchKw::new("sc_gpc_rate", SC3, S, fetch_elem::<SC, RATE>).uses(I),
        FetchKw::new("src_gpc_rate", SRC2, S, fetch_elem::<SRC, RATE>).uses(L4),
        FetchKw::new("sc_inc_gpc", SC3, S, fetch_inc_elem::<SC>).uses(I),
        FetchKw::new("src_inc_gpc", SRC2, S, fetch_inc_elem::<SRC>).uses(L4),
        FetchKw::new("sc_clr_gpc", SC3, S, fetch_clr_elem::<SC>).uses(I),
        FetchKw::new("src_clr_gpc", SRC2, S, fetch_clr_elem::<SRC>).uses(L4),
        FetchKw::new("sc1_clr_gpc", IDX, S, fetch_clr_elem::<1>).uses(I),
    ]
};

/// `*_tracked`, `*_trackers`, `table_avl`, `table_cnt`.
const EXTRA: usize = 10;

/// Every keyword of the file.
const COUNT: usize = 24 * 5 + EXTRA + ELEMS.len();

const fn flatten() -> [FetchKw; COUNT] {
    let tracked = [
        FetchKw::new("sc_tracked", ArgSpec::new(&[ArgT::Sint, ArgT::Table], 1), SmpType::Bool, fetch_tracked::<SC>),
        FetchKw::new("sc0_tracked", TAB_ARGS, SmpType::Bool, fetch_tracked::<0>),
        FetchKw::new("sc1_tracked", TAB_ARGS, SmpType::Bool, fetch_tracked::<1>),
        FetchKw::new("sc2_tracked", TAB_ARGS, SmpType::Bool, fetch_tracked::<2>),
        FetchKw::new("sc_trackers", SC_ARGS, S, fetch_trackers::<SC>),
        FetchKw::new("sc0_trackers", TAB_ARGS, S, fetch_trackers::<0>),
        FetchKw::new("sc1_trackers", TAB_ARGS, S, fetch_trackers::<1>),
        FetchKw::new("sc2_trackers", TAB_ARGS, S, fetch_trackers::<2>),
        FetchKw::new("table_avl", TAB_ARGS, S, fetch_table_room::<false>).check(check_src),
        FetchKw::new("table_cnt", TAB_ARGS, S, fetch_table_room::<true>).check(check_src),
    ];
    let mut out = [tracked[0]; COUNT];
    let mut i = 0;
    while i < 24 * 5 {
        out[i] = FAMILIES[i / 5][i % 5];
        i += 1;
    }
    let mut j = 0;
    while j < EXTRA {
        out[i + j] = tracked[j];
        j += 1;
    }
    let mut k = 0;
    while k < ELEMS.len() {
        out[i + j + k] = ELEMS[k];
        k += 1;
    }
    out
}

const ALL: [FetchKw; COUNT] = flatten();

pub const KEYWORDS: &[FetchKw] = &ALL;
