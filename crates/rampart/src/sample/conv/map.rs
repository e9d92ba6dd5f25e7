//! Maps: `map*(<file>[,<default>])` converters look the sample up in a map file (key,
//! blanks, value to the end of the line; `#` comments and blank lines skipped) with
//! one of the match methods, and return the value of the matching line, or the
//! default, or fail. The map file is read once per path and shared
//! ([`crate::pattern::PatRefs`]); each converter compiles its view of it ([`PatIndex`]), which
//! runtime updates replace whole (see [`crate::pattern::patref`]).
//!
//! Which line wins is HAProxy's: the first in file order, except for `map_beg` and
//! `map_ip`, where the longest matching prefix wins. `map_regm` expands `\1`..`\9`
//! in the value with the regex groups.
//!
//! HAProxy counterpart: src/map.c (`sample_load_map`, `sample_conv_map`,
//! `map_parse_*`, its converter table).

use crate::pattern::patref::{PatIndex, Snapshot};
use crate::pattern::reg::expand;
use crate::pattern::value::{parse_value, MapValue, ValueKind};
use crate::pattern::{MatchMethod, PatFlags};
use crate::sample::expr::CompileCx;
use crate::sample::kw::{Arg, ArgList, ArgSpec, ArgT, ConvKw};
use crate::sample::{Sample, SampleCtx, SmpType};
use std::borrow::Cow;

/// Longest value a `map_regm` expansion may produce (HAProxy's trash buffer,
/// `tune.bufsize`'s default).
const REGM_MAX: usize = 16384;

/// `sample_conv_map`: one function for every map converter; the view in `args[0]`
/// knows the method and the value type.
fn conv_map<'a>(args: &'a [Arg], smp: Sample<'a>, _ctx: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let map = map_of(args.first()?)?;
    apply(map, args.get(1), smp)
}

/// Looks `smp` up in `map`: the value of the matching line, else `default` (the
/// converter's second argument), else `None` (the converter fails).
pub fn apply<'a>(map: &'a PatIndex, default: Option<&'a Arg>, smp: Sample<'a>) -> Option<Sample<'a>> {
    // PERF: a map never updated at run time is read in place and its string values
    // are borrowed; after an update, values are copied out of the snapshot, which may
    // be replaced while the sample lives (HAProxy copies them into a trash chunk).
    if let Some(snap) = map.unchanged() {
        if let Some(v) = lookup(map, snap, &smp, Cow::Borrowed) {
            return v;
        }
    } else {
        let snap = map.load();
        if let Some(v) = lookup(map, &snap, &smp, |b| Cow::Owned(b.to_vec())) {
            return v;
        }
    }
    match default? {
        Arg::Str(s) => Some(Sample::Str(Cow::Borrowed(s))),
        Arg::Sint(i) => Some(Sample::Sint(*i)),
        Arg::Ipv4(a) => Some(Sample::Ipv4(*a)),
        Arg::Ipv6(a) => Some(Sample::Ipv6(*a)),
        _ => None,
    }
}

/// The value for `smp`: `None` when no line matches, `Some(None)` when the matching
/// line's `map_regm` expansion fails.
fn lookup<'s, 'a>(
    map: &PatIndex,
    snap: &'s Snapshot,
    smp: &Sample<'_>,
    bytes: impl Fn(&'s [u8]) -> Cow<'a, [u8]>,
) -> Option<Option<Sample<'a>>> {
    let (n, re) = snap.set.lookup(smp)?;
    let v = snap.values.get(n as usize)?;
    Some(match v {
        MapValue::Str(s) if map.method == MatchMethod::Regm => {
            let (Some(re), Sample::Str(input)) = (re, smp) else { return Some(None) };
            expand(re, input, s, REGM_MAX).map(|out| Sample::Str(Cow::Owned(out)))
        }
        MapValue::Str(s) => Some(Sample::Str(bytes(s))),
        MapValue::Int(i) => Some(Sample::Sint(*i)),
        MapValue::V4(a) => Some(Sample::Ipv4(*a)),
        MapValue::V6(a) => Some(Sample::Ipv6(*a)),
    })
}

const ARGS_STR: ArgSpec = ArgSpec::new(&[ArgT::Map, ArgT::Str], 1);
const ARGS_INT: ArgSpec = ArgSpec::new(&[ArgT::Map, ArgT::Sint], 1);

// Match methods and value kinds as const parameters of [`check_map`] (one check
// function per converter, since a check does not know its keyword).
const STR: u8 = 0;
const BEG: u8 = 1;
const SUB: u8 = 2;
const DIR: u8 = 3;
const DOM: u8 = 4;
const END: u8 = 5;
const REG: u8 = 6;
const REGM: u8 = 7;
const INT: u8 = 8;
const IP: u8 = 9;

const fn method(code: u8) -> MatchMethod {
    match code {
        BEG => MatchMethod::Beg,
        SUB => MatchMethod::Sub,
        DIR => MatchMethod::Dir,
        DOM => MatchMethod::Dom,
        END => MatchMethod::End,
        REG => MatchMethod::Reg,
        REGM => MatchMethod::Regm,
        INT => MatchMethod::Int,
        IP => MatchMethod::Ip,
        _ => MatchMethod::Str,
    }
}

const fn input(code: u8) -> SmpType {
    match code {
        INT => SmpType::Sint,
        IP => SmpType::Addr,
        _ => SmpType::Str,
    }
}

const fn value_kind(out: SmpType) -> ValueKind {
    match out {
        SmpType::Sint => ValueKind::Int,
        SmpType::Addr => ValueKind::Addr,
        _ => ValueKind::Str,
    }
}

/// `map_<method>[_<out>]` matching with method `M` and returning `out`.
const fn conv<const M: u8, const O: u8>(name: &'static str) -> ConvKw {
    let out = match O {
        INT => SmpType::Sint,
        IP => SmpType::Addr,
        _ => SmpType::Str,
    };
    let args = if O == INT { ARGS_INT } else { ARGS_STR };
    ConvKw::new(name, args, input(M), out, conv_map).check(check_map::<M, O>)
}

/// The map converters (HAProxy's src/map.c table).
pub const KEYWORDS: &[ConvKw] = &[
    conv::<STR, STR>("map"),
    conv::<STR, STR>("map_str"),
    conv::<BEG, STR>("map_beg"),
    conv::<SUB, STR>("map_sub"),
    conv::<DIR, STR>("map_dir"),
    conv::<DOM, STR>("map_dom"),
    conv::<END, STR>("map_end"),
    conv::<REG, STR>("map_reg"),
    conv::<REGM, STR>("map_regm"),
    conv::<INT, STR>("map_int"),
    conv::<IP, STR>("map_ip"),
    conv::<STR, INT>("map_str_int"),
    conv::<BEG, INT>("map_beg_int"),
    conv::<SUB, INT>("map_sub_int"),
    conv::<DIR, INT>("map_dir_int"),
    conv::<DOM, INT>("map_dom_int"),
    conv::<END, INT>("map_end_int"),
    conv::<REG, INT>("map_reg_int"),
    conv::<INT, INT>("map_int_int"),
    conv::<IP, INT>("map_ip_int"),
    conv::<STR, IP>("map_str_ip"),
    conv::<BEG, IP>("map_beg_ip"),
    conv::<SUB, IP>("map_sub_ip"),
    conv::<DIR, IP>("map_dir_ip"),
    conv::<DOM, IP>("map_dom_ip"),
    conv::<END, IP>("map_end_ip"),
    conv::<REG, IP>("map_reg_ip"),
    conv::<INT, IP>("map_int_ip"),
    conv::<IP, IP>("map_ip_ip"),
];

/// The match method of a map converter, from its name (`map_<method>[_<out>]`).
pub fn method_of(name: &str) -> Option<MatchMethod> {
    let rest = name.strip_prefix("map")?;
    let m = match rest.strip_prefix('_') {
        Some(r) => r.split('_').next().unwrap_or(r),
        None if rest.is_empty() => "str",
        None => return None,
    };
    MatchMethod::from_name(m)
        .filter(|m| !matches!(m, MatchMethod::Found | MatchMethod::Bool | MatchMethod::Bin | MatchMethod::Len))
}

/// The check of map converter `M`/`O` (HAProxy's `sample_load_map`), run by the
/// expression compiler once it parsed the arguments: `args[0]`, the file path as
/// `Arg::Str`, becomes the compiled view (`Arg::Private` holding a [`PatIndex`]); an
/// address default becomes `Arg::Ipv4`/`Arg::Ipv6`. The error is HAProxy's text
/// for `invalid args in converter '<name>' : <error>`.
fn check_map<const M: u8, const O: u8>(args: &mut ArgList, cx: &mut CompileCx<'_>) -> Result<(), String> {
    let out = match O {
        INT => SmpType::Sint,
        IP => SmpType::Addr,
        _ => SmpType::Str,
    };
    load_args(method(M), value_kind(out), args, cx)
}

/// Loads the map of `args[0]` for `method` and values of `kind` (see [`check_map`]).
pub fn load_args(method: MatchMethod, kind: ValueKind, args: &mut [Arg], cx: &mut CompileCx<'_>) -> Result<(), String> {
    let path = match args.first() {
        Some(Arg::Str(p)) => String::from_utf8_lossy(p).into_owned(),
        _ => return Err("missing map file name".into()),
    };
    let src = cx.pats.file(&path, true)?;
    // COMPAT: maps never resolve host names (HAProxy loads them with PAT_MF_NO_DNS).
    let flags = PatFlags { icase: false, no_dns: true };
    let map = src.index(method, flags, Some(kind), false)?;
    if kind == ValueKind::Addr {
        if let Some(Arg::Str(d)) = args.get(1) {
            let text = String::from_utf8_lossy(d);
            args[1] = match parse_value(ValueKind::Addr, &text) {
                Some(MapValue::V4(a)) => Arg::Ipv4(a),
                Some(MapValue::V6(a)) => Arg::Ipv6(a),
                _ => return Err(format!("map: cannot parse default ip <{text}>.")),
            };
        }
    }
    args[0] = Arg::Private(map);
    Ok(())
}

/// The view behind a compiled map argument.
pub fn map_of(arg: &Arg) -> Option<&PatIndex> {
    arg.private::<PatIndex>()
}

#[cfg(test)]
mod tests;
