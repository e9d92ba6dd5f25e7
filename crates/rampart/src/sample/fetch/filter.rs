//! Fetches of what the filters decided: `res.comp` and `res.comp_algo` (compression),
//! `res.cache_hit` and `res.cache_name` (the cache).
//! HAProxy counterparts: `smp_fetch_res_comp()` and `smp_fetch_res_comp_algo()`
//! (src/flt_http_comp.c), `smp_fetch_res_cache_hit()` and `smp_fetch_res_cache_name()`
//! (src/cache.c).

use crate::sample::ctx::SampleCtx;
use crate::sample::kw::{uses, Arg, ArgSpec, FetchKw};
use crate::sample::types::{Sample, SmpType};

use super::Emit;

fn fetch_res_comp<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    emit(Sample::Bool(ctx.flt.compressing));
}

fn fetch_res_comp_algo<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(algo) = ctx.flt.comp_algo.filter(|_| ctx.flt.compressing) {
        emit(Sample::str(algo.cfg_name().as_bytes()));
    }
}

fn fetch_res_cache_hit<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    emit(Sample::Bool(ctx.flt.cache_hit.is_some()));
}

fn fetch_res_cache_name<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(name) = ctx.flt.cache_hit.and_then(|c| ctx.rt.cache_name(c)) {
        emit(Sample::str(name.as_bytes()));
    }
}

pub const KEYWORDS: &[FetchKw] = &[
    FetchKw::new("res.comp", ArgSpec::NONE, SmpType::Bool, fetch_res_comp).uses(uses::HRSHP),
    FetchKw::new("res.comp_algo", ArgSpec::NONE, SmpType::Str, fetch_res_comp_algo).uses(uses::HRSHP),
    FetchKw::new("res.cache_hit", ArgSpec::NONE, SmpType::Bool, fetch_res_cache_hit).uses(uses::HRSHP),
    FetchKw::new("res.cache_name", ArgSpec::NONE, SmpType::Str, fetch_res_cache_name).uses(uses::HRSHP),
];
