//! The shape of fetch and converter keywords: their compiled arguments and the
//! functions the evaluator calls. Each `fetch/*.rs` and `conv/*.rs` file ends with a
//! `KEYWORDS` table of these (HAProxy ends src/http_fetch.c with its own), listed once
//! in `sample/mod.rs`; no link-time registration.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use super::ctx::SampleCtx;
use super::expr::CompileCx;
use super::types::{Sample, SmpType};

/// A compiled argument of a fetch or converter (HAProxy's `struct arg`), resolved at
/// startup: strings unescaped, integers parsed, regexes compiled, names turned into
/// indices.
#[derive(Debug, Clone)]
pub enum Arg {
    Sint(i64),
    Str(Box<[u8]>),
    Ipv4(Ipv4Addr),
    Ipv6(Ipv6Addr),
    /// An IPv4 network (`ipmask`): address and mask.
    Net4(Ipv4Addr, Ipv4Addr),
    /// An IPv6 network: address and prefix length.
    Net6(Ipv6Addr, u8),
    Regex(Arc<regex::bytes::Regex>),
    /// A proxy (`be_name`-like arguments), index into `Runtime::proxies`.
    Proxy(usize),
    /// A server: proxy index and server index.
    Server(usize, usize),
}

/// The type an argument is parsed as (HAProxy's `ARGT_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgT {
    Sint,
    Str,
    Ipv4,
    Ipv6,
    /// `ipmask`'s IPv4 mask (dotted or a prefix length).
    Msk4,
    Msk6,
    Regex,
    /// A backend name.
    Backend,
    /// A `backend/server` or `server` name.
    Server,
    /// A variable name (`txn.foo`).
    Var,
    /// A duration (`10s`), stored as milliseconds.
    Time,
    /// A map file, for the `map_*` converters.
    Map,
}

/// The arguments a keyword takes: their types in order, how many are mandatory.
#[derive(Debug, Clone, Copy)]
pub struct ArgSpec {
    pub types: &'static [ArgT],
    pub mandatory: usize,
}

impl ArgSpec {
    pub const NONE: ArgSpec = ArgSpec { types: &[], mandatory: 0 };

    pub const fn new(types: &'static [ArgT], mandatory: usize) -> ArgSpec {
        ArgSpec { types, mandatory }
    }
}

/// A fetch calls `emit` for each value it has, in order, and stops when `emit` returns
/// `false`. Most fetches have one value; `req.hdr` has one per occurrence, so that an
/// ACL matches any of them while a sample expression keeps the last one (HAProxy's
/// `SMP_OPT_ITERATE` versus `occ = -1`). Absent data: no call at all.
pub type FetchFn = for<'a> fn(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: &mut dyn FnMut(Sample<'a>) -> bool);

/// A converter takes one value and returns the new one, or `None` when the conversion
/// fails (the sample is then absent, as in HAProxy).
pub type ConvFn = for<'a> fn(args: &'a [Arg], smp: Sample<'a>, ctx: &SampleCtx<'a>) -> Option<Sample<'a>>;

/// Checks and compiles a keyword's parsed arguments at startup (HAProxy's `val_args`):
/// may rewrite them (a map file name into [`Arg::Private`]) and may append optional
/// ones it defaults. `Err` is the reason, which the compiler wraps into HAProxy's
/// `invalid args in fetch method 'x' : <reason>`.
pub type CheckFn = fn(args: &mut Vec<Arg>, cx: &mut CompileCx<'_>) -> Result<(), String>;

/// A fetch keyword.
#[derive(Clone, Copy)]
pub struct FetchKw {
    /// The exact configuration spelling (`req.hdr`).
    pub name: &'static str,
    pub args: ArgSpec,
    pub out: SmpType,
    pub f: FetchFn,
}

/// A converter keyword.
#[derive(Clone, Copy)]
pub struct ConvKw {
    pub name: &'static str,
    pub args: ArgSpec,
    /// The input type; the evaluator casts to it first (HAProxy's `sample_casts`).
    pub input: SmpType,
    pub out: SmpType,
    pub f: ConvFn,
    pub check: Option<CheckFn>,
}

impl ConvKw {
    pub const fn new(name: &'static str, args: ArgSpec, input: SmpType, out: SmpType, f: ConvFn) -> ConvKw {
        ConvKw { name, args, input, out, f, check: None }
    }

    pub const fn check(mut self, check: CheckFn) -> ConvKw {
        self.check = Some(check);
        self
    }
}

impl std::fmt::Debug for FetchKw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl std::fmt::Debug for ConvKw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}
