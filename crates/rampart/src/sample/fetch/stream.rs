//! Fetches of the stream's own record: `last_rule_file` and `last_rule_line`, the
//! configuration file and line of the last rule that ended one of the stream's rule
//! lists (`tcp-request content`, `tcp-response content`, `http-request`,
//! `http-response`, `http-after-response`) with a final action: `accept`, `reject`,
//! `allow`, `deny`, `tarpit`, `redirect`, `return` ... No value while none did.
//! HAProxy counterpart: `smp_fetch_last_rule_file()` and `smp_fetch_last_rule_line()`
//! (src/stream.c), `s->last_rule_file`/`s->last_rule_line`.

use crate::sample::ctx::SampleCtx;
use crate::sample::kw::{uses, Arg, ArgSpec, FetchKw};
use crate::sample::types::{Sample, SmpType};

use super::Emit;

fn fetch_last_rule_file<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    let Some(at) = ctx.last_rule else { return };
    if let Some(file) = ctx.rt.rule_file(at.file) {
        emit(Sample::str(file.as_bytes()));
    }
}

fn fetch_last_rule_line<'a>(_: &'a [Arg], ctx: &SampleCtx<'a>, emit: Emit<'_, 'a>) {
    if let Some(at) = ctx.last_rule {
        emit(Sample::Sint(i64::from(at.line)));
    }
}

pub const KEYWORDS: &[FetchKw] = &[
    FetchKw::new("last_rule_file", ArgSpec::NONE, SmpType::Str, fetch_last_rule_file).uses(uses::INTRN),
    FetchKw::new("last_rule_line", ArgSpec::NONE, SmpType::Sint, fetch_last_rule_line).uses(uses::INTRN),
];
