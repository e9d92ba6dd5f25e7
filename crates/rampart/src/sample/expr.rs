//! Sample expressions: `fetch[(args)][,conv[(args)]]...` compiled once at startup and
//! evaluated per stream. HAProxy counterpart: `sample_parse_expr()`,
//! `sample_process()` and `sample_casts` (src/sample.c).
//!
//! STUB: the API the rest of the daemon codes against; the compiler and evaluator are
//! being written (rules issue #5).

use super::ctx::SampleCtx;
use super::kw::{Arg, ConvKw, FetchKw};
use super::types::{Sample, SmpType};

/// What compiling an expression may look up: the configuration (proxy and server
/// names), and the proxy the expression belongs to.
#[derive(Debug)]
pub struct CompileCx<'c> {
    pub cfg: &'c rampart_cfg::Config,
    /// Index of the proxy whose rule holds the expression.
    pub px: usize,
    /// Pattern and map files, loaded once per path for the whole configuration.
    pub pats: &'c crate::acl::PatRefs,
}

/// A compiled sample expression.
#[derive(Debug)]
pub struct Expr {
    pub fetch: &'static FetchKw,
    pub args: Box<[Arg]>,
    pub convs: Vec<(&'static ConvKw, Box<[Arg]>)>,
}

/// Compiles `text` (one word of the configuration). `Err` is HAProxy's message
/// (`unknown fetch method 'foo'` ...), without the `parsing [file:line]` prefix.
pub fn compile(text: &str, cx: &mut CompileCx<'_>) -> Result<Expr, String> {
    let _ = cx;
    Err(format!("sample expressions are not supported yet ('{text}')"))
}

impl Expr {
    /// The type of the values the expression produces.
    pub fn out_type(&self) -> SmpType {
        self.convs.last().map_or(self.fetch.out, |(c, _)| c.out)
    }

    /// The value of the expression in a sample context: the last value of a
    /// multi-valued fetch, through the converters. `None`: absent or failed.
    pub fn eval<'a>(&'a self, ctx: &SampleCtx<'a>) -> Option<Sample<'a>> {
        let mut last = None;
        self.each(ctx, &mut |s| {
            last = Some(s);
            true
        });
        last
    }

    /// Every value of the expression, each through the converters, until `f` returns
    /// `false` (ACL matching).
    pub fn each<'a>(&'a self, ctx: &SampleCtx<'a>, f: &mut dyn FnMut(Sample<'a>) -> bool) {
        (self.fetch.f)(&self.args, ctx, &mut |smp| {
            let mut cur = Some(smp);
            for (conv, args) in &self.convs {
                cur = cur.and_then(|s| (conv.f)(args, s, ctx));
            }
            match cur {
                Some(s) => f(s),
                None => true,
            }
        });
    }
}
