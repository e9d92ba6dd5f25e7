//! Converters that look their input up in a stick table: `in_table` and the
//! `table_*` family (`table_http_req_rate(<table>)` ..., `table_gpc(<idx>,<table>)`).
//! HAProxy counterpart: the `sample_conv_table_*` functions (src/stick_table.c).
//!
//! As HAProxy: a key absent from the table reads 0 (`in_table`: false); a data type
//! the table does not store gives no value. Lookups do not refresh the entry.

use rampart_cfg::model::{DataType as D, StickKeyType};

use crate::sample::cast::cast;
use crate::sample::ctx::SampleCtx;
use crate::sample::kw::{Arg, ArgSpec, ArgT, ConvKw};
use crate::sample::types::{Sample, SmpType};
use crate::stick::data::Row;
use crate::stick::{Key, StickTable};

/// The key sample `smp` gives in table `t` (cast to the table's type as HAProxy's
/// `smp_to_stkey()` does); `None` when it does not convert.
pub fn sample_key(t: &StickTable, smp: Sample<'_>) -> Option<Key> {
    let kt = t.key_type;
    Some(match kt {
        StickKeyType::Ip => match cast(smp, SmpType::Ipv4)? {
            Sample::Ipv4(a) => Key::Ip4(a.octets()),
            _ => return None,
        },
        StickKeyType::Ipv6 => match cast(smp, SmpType::Ipv6)? {
            Sample::Ipv6(a) => Key::Ip6(a.octets()),
            _ => return None,
        },
        StickKeyType::Integer => match cast(smp, SmpType::Sint)? {
            Sample::Sint(n) => Key::Int(n as u32),
            _ => return None,
        },
        StickKeyType::String(_) => match cast(smp, SmpType::Str)? {
            Sample::Str(b) => Key::from_bytes(kt, &b),
            _ => return None,
        },
        StickKeyType::Binary(_) => match cast(smp, SmpType::Bin)? {
            Sample::Bin(b) => Key::from_bytes(kt, &b),
            _ => return None,
        },
    })
}

/// The table of the first argument and the entry of `smp` in it.
fn lookup<'a>(args: &'a [Arg], smp: Sample<'a>, ctx: &SampleCtx<'a>) -> Option<(&'a StickTable, Option<Row>)> {
    let Some(&Arg::Proxy(px)) = args.first() else { return None };
    let t: &'a StickTable = ctx.rt.stick_table(px)?;
    let key = sample_key(t, smp)?;
    Some((t, t.lookup(&key)))
}

fn conv_in_table<'a>(args: &'a [Arg], smp: Sample<'a>, ctx: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let (_, row) = lookup(args, smp, ctx)?;
    Some(Sample::Bool(row.is_some()))
}

/// `table_<data>`: the value of `D::ALL[DT]` shifted right by `SHIFT` (`kbytes`).
fn conv_table<'a, const DT: usize, const SHIFT: u32>(
    args: &'a [Arg],
    smp: Sample<'a>,
    ctx: &SampleCtx<'a>,
) -> Option<Sample<'a>> {
    let (t, row) = lookup(args, smp, ctx)?;
    let d = D::ALL[DT];
    let c = t.layout.cell(d, 0)?;
    let v = row.map_or(0, |r| r.get_cell(c, crate::stick::now_ms()));
    let v = if d == D::ServerId { i64::from(v as u32 as i32) } else { (v >> SHIFT) as i64 };
    Some(Sample::Sint(v))
}

/// `table_gpc(<idx>,<table>)`, `table_gpt`, `table_gpc_rate`: element `idx` of the
/// array `D::ALL[DT]`.
fn conv_table_elem<'a, const DT: usize>(args: &'a [Arg], smp: Sample<'a>, ctx: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let idx = usize::try_from(args.first()?.as_sint()?).ok()?;
    let (t, row) = lookup(&args[1..], smp, ctx)?;
    let c = t.layout.cell(D::ALL[DT], idx)?;
    Some(Sample::Sint(row.map_or(0, |r| r.get_cell(c, crate::stick::now_ms())) as i64))
}

fn conv_table_trackers<'a>(args: &'a [Arg], smp: Sample<'a>, ctx: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let (_, row) = lookup(args, smp, ctx)?;
    // the lookup holds a reference of its own
    Some(Sample::Sint(row.map_or(0, |r| r.users().saturating_sub(1)) as i64))
}

const TAB: ArgSpec = ArgSpec::new(&[ArgT::Table], 1);
const IDX_TAB: ArgSpec = ArgSpec::new(&[ArgT::Sint, ArgT::Table], 2);

macro_rules! table {
    ($name:literal, $dt:expr) => {
        ConvKw::new($name, TAB, SmpType::Any, SmpType::Sint, conv_table::<{ $dt as usize }, 0>)
    };
    ($name:literal, $dt:expr, kbytes) => {
        ConvKw::new($name, TAB, SmpType::Any, SmpType::Sint, conv_table::<{ $dt as usize }, 10>)
    };
}

pub const KEYWORDS: &[ConvKw] = &[
    ConvKw::new("in_table", TAB, SmpType::Any, SmpType::Bool, conv_in_table),
    table!("table_bytes_in_rate", D::BytesInRate),
    table!("table_bytes_out_rate", D::BytesOutRate),
    table!("table_conn_cnt", D::ConnCnt),
    table!("table_conn_cur", D::ConnCur),
    table!("table_conn_rate", D::ConnRate),
    ConvKw::new("table_gpc", IDX_TAB, SmpType::Any, SmpType::Sint, conv_table_elem::<{ D::Gpc as usize }>),
    table!("table_gpc0", D::Gpc0),
    table!("table_gpc0_rate", D::Gpc0Rate),
    table!("table_gpc1", D::Gpc1),
    table!("table_gpc1_rate", D::Gpc1Rate),
    ConvKw::new("table_gpc_rate", IDX_TAB, SmpType::Any, SmpType::Sint, conv_table_elem::<{ D::GpcRate as usize }>),
    ConvKw::new("table_gpt", IDX_TAB, SmpType::Any, SmpType::Sint, conv_table_elem::<{ D::Gpt as usize }>),
    table!("table_gpt0", D::Gpt0),
    table!("table_http_err_cnt", D::HttpErrCnt),
    table!("table_http_err_rate", D::HttpErrRate),
    table!("table_http_fail_cnt", D::HttpFailCnt),
    table!("table_http_fail_rate", D::HttpFailRate),
    table!("table_http_req_cnt", D::HttpReqCnt),
    table!("table_http_req_rate", D::HttpReqRate),
    table!("table_kbytes_in", D::BytesInCnt, kbytes),
    table!("table_kbytes_out", D::BytesOutCnt, kbytes),
    table!("table_server_id", D::ServerId),
    table!("table_sess_cnt", D::SessCnt),
    table!("table_sess_rate", D::SessRate),
    ConvKw::new("table_trackers", TAB, SmpType::Any, SmpType::Sint, conv_table_trackers),
];
