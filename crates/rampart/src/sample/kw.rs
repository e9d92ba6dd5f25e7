//! The shape of fetch and converter keywords: their compiled arguments and the
//! functions the evaluator calls. Each `fetch/*.rs` and `conv/*.rs` file ends with a
//! `KEYWORDS` table of these (HAProxy ends src/http_fetch.c with its own), listed once
//! in `sample/mod.rs`; no link-time registration.
//!
//! Tables are written with the `const fn` constructors [`FetchKw::new`] and
//! [`ConvKw::new`] (plus `.check(..)` / `.uses(..)`), so that a field added here does
//! not touch every table.

use std::any::Any;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use super::ctx::SampleCtx;
use super::expr::CompileCx;
use super::types::{Sample, SmpType};
use super::vars::VarRef;

/// A compiled argument of a fetch or converter (HAProxy's `struct arg`), resolved at
/// startup: strings unescaped, integers parsed, regexes compiled, names turned into
/// indices.
#[derive(Clone)]
pub enum Arg {
    /// An integer, a delay (`ArgT::Time`, in milliseconds) or a size.
    Sint(i64),
    Str(Box<[u8]>),
    /// An IPv4 address, or an IPv4 mask (`ArgT::Msk4`, as HAProxy stores it).
    Ipv4(Ipv4Addr),
    /// An IPv6 address, or an IPv6 mask (`ArgT::Msk6`).
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
    /// A variable (`txn.foo`), resolved to its scope and name hash.
    Var(VarRef),
    /// A `userlist` section (`http_auth(<userlist>)`), built for this generation.
    Userlist(Arc<crate::auth::UserlistRt>),
    /// Whatever a keyword's [`CheckFn`] compiled from its arguments (a loaded map, the
    /// conditions of `set-var` ...); the keyword downcasts it.
    Private(Arc<dyn Any + Send + Sync>),
}

impl std::fmt::Debug for Arg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Arg::Sint(i) => write!(f, "Sint({i})"),
            Arg::Str(s) => write!(f, "Str({:?})", String::from_utf8_lossy(s)),
            Arg::Ipv4(a) => write!(f, "Ipv4({a})"),
            Arg::Ipv6(a) => write!(f, "Ipv6({a})"),
            Arg::Net4(a, m) => write!(f, "Net4({a}/{m})"),
            Arg::Net6(a, l) => write!(f, "Net6({a}/{l})"),
            Arg::Regex(r) => write!(f, "Regex({:?})", r.as_str()),
            Arg::Proxy(p) => write!(f, "Proxy({p})"),
            Arg::Server(p, s) => write!(f, "Server({p}, {s})"),
            Arg::Var(v) => write!(f, "Var({})", v.name),
            Arg::Userlist(u) => write!(f, "Userlist({})", u.name),
            Arg::Private(_) => f.write_str("Private(..)"),
        }
    }
}

impl Arg {
    pub fn as_sint(&self) -> Option<i64> {
        match self {
            Arg::Sint(i) => Some(*i),
            _ => None,
        }
    }

    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Arg::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The keyword-private data of a [`Arg::Private`] argument, if it is a `T`.
    pub fn private<T: Any + Send + Sync>(&self) -> Option<&T> {
        match self {
            Arg::Private(p) => p.downcast_ref(),
            _ => None,
        }
    }
}

/// The type an argument is parsed as (HAProxy's `ARGT_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgT {
    Sint,
    Str,
    Ipv4,
    Ipv6,
    /// `ipmask`'s IPv4 mask (dotted or a prefix length), stored as [`Arg::Ipv4`].
    Msk4,
    /// An IPv6 mask (colon notation or a prefix length), stored as [`Arg::Ipv6`].
    Msk6,
    Regex,
    /// A frontend name, resolved to [`Arg::Proxy`].
    Frontend,
    /// A backend name, resolved to [`Arg::Proxy`]; empty: the expression's own proxy.
    Backend,
    /// A `backend/server` or `server` name, resolved to [`Arg::Server`].
    Server,
    /// A variable name (`txn.foo`), resolved to [`Arg::Var`].
    Var,
    /// A duration (`10s`), stored as milliseconds in [`Arg::Sint`].
    Time,
    /// A size (`10k`), stored in [`Arg::Sint`].
    Size,
    /// A map file, for the `map_*` converters: kept as [`Arg::Str`] for their
    /// [`CheckFn`] to load.
    Map,
    /// A stick table (named after its proxy; empty: the expression's proxy), resolved
    /// to [`Arg::Proxy`].
    Table,
    /// A `userlist` name, resolved to [`Arg::Userlist`] (HAProxy's `ARGT_USR`).
    Usr,
}

impl ArgT {
    /// HAProxy's name of the type in messages (`arg_type_names[]`).
    pub fn name(self) -> &'static str {
        match self {
            ArgT::Sint => "integer",
            ArgT::Str => "string",
            ArgT::Ipv4 => "IPv4 address",
            ArgT::Msk4 => "IPv4 mask",
            ArgT::Ipv6 => "IPv6 address",
            ArgT::Msk6 => "IPv6 mask",
            ArgT::Time => "delay",
            ArgT::Size => "size",
            ArgT::Frontend => "frontend",
            ArgT::Backend => "backend",
            ArgT::Table => "table",
            ArgT::Server => "server",
            ArgT::Map => "map",
            ArgT::Regex => "regex",
            ArgT::Var => "variable",
            ArgT::Usr => "user list",
        }
    }
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
pub type CheckFn = fn(args: &mut ArgList, cx: &mut CompileCx<'_>) -> Result<(), String>;

/// The arguments a [`CheckFn`] works on (a `Vec<Arg>`).
#[derive(Debug, Clone, Default)]
pub struct ArgList(pub Vec<Arg>);

impl std::ops::Deref for ArgList {
    type Target = Vec<Arg>;
    fn deref(&self) -> &Vec<Arg> {
        &self.0
    }
}

impl std::ops::DerefMut for ArgList {
    fn deref_mut(&mut self) -> &mut Vec<Arg> {
        &mut self.0
    }
}

/// Where the data a fetch reads comes from (HAProxy's `SMP_USE_*` bits, in
/// `SMP_SRC_*` order), to refuse a fetch where its data never exists
/// (see [`super::expr::Place`]).
pub mod uses {
    /// Constants: available everywhere (`always_true`, `int` ...).
    pub const CONST: u32 = 1 << 0;
    /// Internal state (`env`, `date`, `nbsrv`, variables ...).
    pub const INTRN: u32 = 1 << 1;
    pub const LISTN: u32 = 1 << 2;
    pub const FTEND: u32 = 1 << 3;
    pub const L4CLI: u32 = 1 << 4;
    pub const L5CLI: u32 = 1 << 5;
    pub const TRACK: u32 = 1 << 6;
    pub const L6REQ: u32 = 1 << 7;
    pub const HRQHV: u32 = 1 << 8;
    pub const HRQHP: u32 = 1 << 9;
    pub const HRQBO: u32 = 1 << 10;
    pub const BKEND: u32 = 1 << 11;
    pub const SERVR: u32 = 1 << 12;
    pub const L4SRV: u32 = 1 << 13;
    pub const L5SRV: u32 = 1 << 14;
    pub const L6RES: u32 = 1 << 15;
    pub const HRSHV: u32 = 1 << 16;
    pub const HRSHP: u32 = 1 << 17;
    pub const HRSBO: u32 = 1 << 18;
    pub const RQFIN: u32 = 1 << 19;
    pub const RSFIN: u32 = 1 << 20;
    pub const TXFIN: u32 = 1 << 21;
    pub const SSFIN: u32 = 1 << 22;
    /// Number of sources.
    pub const COUNT: usize = 23;
}

/// A fetch keyword.
#[derive(Clone, Copy)]
pub struct FetchKw {
    /// The exact configuration spelling (`req.hdr`).
    pub name: &'static str,
    pub args: ArgSpec,
    pub out: SmpType,
    pub f: FetchFn,
    /// Argument checks run once the arguments are parsed.
    pub check: Option<CheckFn>,
    /// The [`uses`] bits of the data read.
    pub uses: u32,
}

impl FetchKw {
    /// A fetch of internal state (change with [`FetchKw::uses`]) without check.
    pub const fn new(name: &'static str, args: ArgSpec, out: SmpType, f: FetchFn) -> FetchKw {
        FetchKw { name, args, out, f, check: None, uses: uses::INTRN }
    }

    pub const fn uses(mut self, uses: u32) -> FetchKw {
        self.uses = uses;
        self
    }

    pub const fn check(mut self, check: CheckFn) -> FetchKw {
        self.check = Some(check);
        self
    }
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
