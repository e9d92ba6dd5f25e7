//! Sample expressions: `fetch[(args)][,conv[(args)]]...` compiled once at startup and
//! evaluated per stream. HAProxy counterpart: `sample_parse_expr()`,
//! `sample_process()` and `sample_casts` (src/sample.c, 2.6).
//!
//! Entry points: [`compile`] (one configuration word, wholly), [`compile_prefix`] (an
//! expression that ends where the text stops being one: `%[...]` in log-formats) and
//! [`compile_words`] (an expression that may continue over the next words of a line,
//! as HAProxy accepts `req.hdr(host), lower`). Errors carry HAProxy's messages
//! ([`ExprError`]), and a did-you-mean hint for unknown keywords.

use std::fmt;

use super::arg::{self, ArgError};
use super::cast::{can_cast, cast};
use super::ctx::SampleCtx;
use super::kw::{uses, Arg, ArgList, ConvKw, FetchKw};
use super::types::{Sample, SmpType};
use super::vars::{Scope, VarRef};
use super::{conv, fetch};

/// Where in the configuration an expression is written, for the messages that name
/// it (HAProxy's `ARGC_*`: "in http-request expression in proxy 'fe'").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Site {
    Acl,
    HttpReq,
    /// `http-response` and `http-after-response` rules.
    HttpRes,
    TcpReqConn,
    TcpReqSess,
    TcpReqCont,
    TcpResCont,
    Log,
    UniqueId,
    Redirect,
    Capture,
    Stick,
    Track,
    UseBackend,
    /// `use-server` and `balance` expressions.
    UseServer,
    Server,
    HttpErr,
    TcpCheck,
    /// Anywhere else (global section expressions, tests).
    Cfg,
}

impl Site {
    /// HAProxy's `where` wording (and `ctx`, which differs for ACLs).
    fn wording(self) -> (&'static str, &'static str) {
        let w = match self {
            Site::Acl => return ("ACL keyword", "in"),
            Site::HttpReq => "in http-request expression in",
            Site::HttpRes => "in http-response response in",
            Site::TcpReqConn => "in tcp-request connection expression in",
            Site::TcpReqSess => "in tcp-request session expression in",
            Site::TcpReqCont => "in tcp-request content expression in",
            Site::TcpResCont => "in tcp-response content expression in",
            Site::Log => "in log-format string in",
            Site::UniqueId => "in unique-id-format string in",
            Site::Redirect => "in redirect format string in",
            Site::Capture => "in capture rule in",
            Site::Stick => "in stick rule in",
            Site::Track => "in tracking rule in",
            Site::UseBackend => "in use_backend expression in",
            Site::UseServer => "in use-server or balance expression in",
            Site::Server => "in server directive in",
            Site::HttpErr => "in http-error directive in",
            Site::TcpCheck => "in tcp-check expression in",
            Site::Cfg => "in configuration expression in",
        };
        ("sample fetch keyword", w)
    }
}

/// What compiling an expression may look up: the configuration (proxy and server
/// names), the proxy the expression belongs to and where in it.
#[derive(Debug)]
pub struct CompileCx<'c> {
    pub cfg: &'c rampart_cfg::Config,
    /// Index of the proxy whose rule holds the expression.
    pub px: usize,
    pub site: Site,
    /// `proc.` variables named by compiled expressions: the runtime declares them at
    /// startup ([`super::vars::ProcVars::declare`]), as HAProxy creates them while
    /// parsing. Keep one `CompileCx` per proxy, or collect them.
    pub proc_vars: Vec<VarRef>,
    /// Pattern and map files (ACL `-f`, `map_*` converters), loaded once per path: give
    /// every proxy's context the same one (`cx.pats = shared.clone()`).
    pub pats: std::rc::Rc<crate::pattern::PatRefs>,
    /// The runtime userlists (`http_auth(<userlist>)`), built once: give every proxy's
    /// context the same one (`cx.userlists = shared.clone()`).
    pub userlists: std::rc::Rc<crate::auth::Userlists>,
    /// An expression read the request line as received (`capture.req.method`,
    /// `capture.req.uri`): the frontends then keep it for their streams, as HAProxy
    /// keeps `txn->uri` once something asks for it.
    pub req_line: bool,
    /// Servers named by an argument (`srv_conn(be/s1)`): `del server` refuses them
    /// (HAProxy's `SRV_F_NON_PURGEABLE`). By (proxy, server) index.
    pub named_servers: Vec<(usize, usize)>,
    /// The expression belongs to a rule of a named `defaults` section (compiled in
    /// each proxy that uses it): a server argument must name its backend.
    pub in_defaults: bool,
    /// That section's name, which HAProxy's messages name as the expression's proxy.
    pub defaults_name: Option<&'c str>,
}

impl<'c> CompileCx<'c> {
    pub fn new(cfg: &'c rampart_cfg::Config, px: usize, site: Site) -> CompileCx<'c> {
        CompileCx {
            cfg,
            px,
            site,
            proc_vars: Vec::new(),
            pats: Default::default(),
            userlists: Default::default(),
            req_line: false,
            named_servers: Vec::new(),
            in_defaults: false,
            defaults_name: None,
        }
    }

    /// The name of the expression's proxy.
    pub fn px_name(&self) -> &'c str {
        self.cfg.proxies.get(self.px).map_or("", |p| p.name.as_str())
    }

    /// Records a variable an expression names (for `proc.` declarations).
    pub fn note_var(&mut self, v: &VarRef) {
        if v.scope == Scope::Proc && !self.proc_vars.contains(v) {
            self.proc_vars.push(v.clone());
        }
    }
}

/// Why an expression does not compile.
///
/// `Display` gives HAProxy's message without the final period. A [`ExprError::Resolve`]
/// is a whole message in HAProxy (`parsing [f:l]: unable to find backend ...`); the
/// others follow `failed to parse sample expression <text> : `.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExprError {
    /// `missing fetch method`, argument errors, `missing comma ...`.
    Parse(String),
    UnknownFetch {
        name: String,
        suggestion: Option<&'static str>,
    },
    UnknownConv {
        name: String,
        suggestion: Option<&'static str>,
    },
    /// A name in an argument that does not resolve (backend, server, regex).
    Resolve(String),
    /// A fetch or converter of HAProxy 2.6 that rampart does not implement yet.
    NotYet(String),
}

impl ExprError {
    pub fn is_resolve(&self) -> bool {
        matches!(self, ExprError::Resolve(_))
    }

    /// A hint line for unknown keywords: `did you mean 'req.hdr' ?`.
    pub fn hint(&self) -> Option<String> {
        match self {
            ExprError::UnknownFetch { suggestion: Some(s), .. }
            | ExprError::UnknownConv { suggestion: Some(s), .. } => Some(format!("did you mean '{s}' ?")),
            _ => None,
        }
    }
}

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExprError::Parse(m) | ExprError::Resolve(m) => f.write_str(m),
            ExprError::UnknownFetch { name, .. } => write!(f, "unknown fetch method '{name}'"),
            ExprError::UnknownConv { name, .. } => write!(f, "unknown converter '{name}'"),
            ExprError::NotYet(name) => write!(f, "'{name}' is not supported yet"),
        }
    }
}

impl std::error::Error for ExprError {}

/// A compiled sample expression.
#[derive(Debug)]
pub struct Expr {
    pub fetch: &'static FetchKw,
    pub args: Box<[Arg]>,
    pub convs: Vec<(&'static ConvKw, Box<[Arg]>)>,
}

/// Compiles `text` (one word of the configuration), which must be wholly an
/// expression.
pub fn compile(text: &str, cx: &mut CompileCx<'_>) -> Result<Expr, ExprError> {
    let mut idx = 0;
    compile_at(&[text], &mut idx, false, cx).map(|(e, _)| e)
}

/// Compiles the expression at the start of `text` and returns it with the number of
/// bytes it spans; the caller checks what follows (`]` in a log-format).
pub fn compile_prefix(text: &str, cx: &mut CompileCx<'_>) -> Result<(Expr, usize), ExprError> {
    let mut idx = 0;
    compile_at(&[text], &mut idx, true, cx)
}

/// Compiles an expression starting at `words[*idx]` that may go on over the next
/// words while they are converters (`req.hdr(host), lower`, HAProxy's multi-word
/// form). On success `*idx` is the first word not consumed.
pub fn compile_words(words: &[&str], idx: &mut usize, cx: &mut CompileCx<'_>) -> Result<Expr, ExprError> {
    let (e, _) = compile_at(words, idx, false, cx)?;
    Ok(e)
}

/// A fetch name rampart does not have: "not supported yet" when HAProxy 2.6 has it,
/// HAProxy's "unknown fetch method" with a suggestion otherwise.
fn unknown_fetch(name: &str) -> ExprError {
    if super::haproxy26::FETCHES.binary_search(&name).is_ok() {
        return ExprError::NotYet(name.to_owned());
    }
    ExprError::UnknownFetch { name: name.to_owned(), suggestion: rampart_cfg::kw::suggest(name, fetch::names()) }
}

/// HAProxy's `is_idchar`: the characters of a keyword name.
fn is_idchar(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-' | b'+' | b':')
}

fn keyword_len(s: &str) -> usize {
    s.bytes().take_while(|&c| is_idchar(c)).count()
}

/// The parser behind the three entry points. `stop_at_end`: an unexpected character
/// ends the expression instead of failing (HAProxy's `endptr`).
fn compile_at(
    words: &[&str],
    idx: &mut usize,
    stop_at_end: bool,
    cx: &mut CompileCx<'_>,
) -> Result<(Expr, usize), ExprError> {
    let text = words.get(*idx).copied().unwrap_or("");
    let kl = keyword_len(text);
    if kl == 0 {
        return Err(ExprError::Parse("missing fetch method".into()));
    }
    let fname = &text[..kl];
    let (fetch, args, used) = match super::lua::resolve(fname, &text[kl..], false, cx) {
        Some(r) => {
            let (args, used) = r?;
            (&super::lua::LUA_FETCH, args, used)
        }
        None => {
            let fetch = fetch::find(fname).ok_or_else(|| unknown_fetch(fname))?;
            let (args, used) = arg::parse(&text[kl..], &fetch.args, cx).map_err(|e| arg_error(e, fname, None, cx))?;
            (fetch, args, used)
        }
    };
    let mut args = ArgList(args);
    if let Some(check) = fetch.check {
        check(&mut args, cx).map_err(|m| ExprError::Parse(format!("invalid args in fetch method '{fname}' : {m}")))?;
    }
    note_vars(&args, cx);
    let mut expr = Expr { fetch, args: args.0.into_boxed_slice(), convs: Vec::new() };
    let mut prev = fetch.out;
    let mut cur = text;
    let mut at = kl + used;
    let mut last_conv: Option<&str> = None;
    loop {
        let rest = &cur.as_bytes()[at..];
        if rest.first().is_some_and(|&c| c != b',') {
            if stop_at_end {
                break;
            }
            return Err(ExprError::Parse(match last_conv {
                Some(c) => format!("missing comma after converter '{c}'"),
                None => format!("missing comma after fetch keyword '{fname}'"),
            }));
        }
        at += rest.iter().take_while(|&&c| c == b',').count();
        let mut fresh_word = false;
        if at == cur.len() {
            // Nothing left in this word: converters may continue in the next one.
            if stop_at_end {
                break;
            }
            *idx += 1;
            match words.get(*idx) {
                Some(w) if !w.is_empty() => {
                    cur = w;
                    at = 0;
                    fresh_word = true;
                }
                _ => break,
            }
        }
        let word = &cur[at..];
        let cl = keyword_len(word);
        let cname = &word[..cl];
        if let Some(r) = super::lua::resolve(cname, &word[cl..], true, cx) {
            let (cargs, used) = r?;
            prev = super::lua::LUA_CONV.out;
            expr.convs.push((&super::lua::LUA_CONV, cargs.into_boxed_slice()));
            last_conv = Some(cname);
            at += cl + used;
            continue;
        }
        let Some(conv) = conv::find(cname) else {
            if rampart_cfg::kw::CONVERTERS.contains(&cname) {
                return Err(ExprError::NotYet(cname.to_owned()));
            }
            if fresh_word {
                // An isolated word that is no converter is not ours (`if`, ...).
                break;
            }
            return Err(ExprError::UnknownConv {
                name: cname.to_owned(),
                suggestion: (!cname.is_empty()).then(|| rampart_cfg::kw::suggest(cname, conv::names())).flatten(),
            });
        };
        if !can_cast(prev, conv.input) {
            return Err(ExprError::Parse(format!("converter '{cname}' cannot be applied")));
        }
        prev = conv.out;
        let (cargs, used) =
            arg::parse(&word[cl..], &conv.args, cx).map_err(|e| arg_error(e, fname, Some(cname), cx))?;
        let mut cargs = ArgList(cargs);
        if let Some(check) = conv.check {
            check(&mut cargs, cx)
                .map_err(|m| ExprError::Parse(format!("invalid args in converter '{cname}' : {m}")))?;
        }
        note_vars(&cargs, cx);
        expr.convs.push((conv, cargs.0.into_boxed_slice()));
        last_conv = Some(cname);
        at += cl + used;
    }
    Ok((expr, at))
}

fn note_vars(args: &[Arg], cx: &mut CompileCx<'_>) {
    for a in args {
        if let Arg::Var(v) = a {
            cx.note_var(v);
        }
    }
}

/// Words an argument error as HAProxy does for a fetch or a converter.
fn arg_error(e: ArgError, fname: &str, conv: Option<&str>, cx: &CompileCx<'_>) -> ExprError {
    match (e, conv) {
        (ArgError::Syntax { msg, .. }, None) => ExprError::Parse(format!("fetch method '{fname}' : {msg}")),
        (ArgError::Syntax { pos, msg }, Some(c)) => {
            ExprError::Parse(format!("invalid arg {} in converter '{c}' : {msg}", pos + 1))
        }
        (ArgError::Check(m), None) => ExprError::Parse(format!("invalid args in fetch method '{fname}' : {m}")),
        (ArgError::Check(m), Some(c)) => ExprError::Parse(format!("invalid args in converter '{c}' : {m}")),
        (ArgError::Resolve { what, tail, detail }, conv) => {
            let (ctx, place) = cx.site.wording();
            let conv_part = conv.map(|c| format!("conversion keyword '{c}' for ")).unwrap_or_default();
            ExprError::Resolve(format!(
                "{what} of {conv_part}{ctx} '{fname}' {place} proxy '{}'{tail}{detail}",
                cx.defaults_name.filter(|_| cx.in_defaults).unwrap_or(cx.px_name())
            ))
        }
    }
}

/// Where an expression is evaluated (HAProxy's `SMP_CKP_*` check points): some data
/// does not exist at some places (a response header in an `http-request` rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    FeConAcc,
    FeSesAcc,
    FeReqCnt,
    FeHrqHdr,
    FeHrqBdy,
    FeSetBck,
    BeReqCnt,
    BeHrqHdr,
    BeHrqBdy,
    BeSetSrv,
    BeSrvCon,
    BeResCnt,
    BeHrsHdr,
    BeHrsBdy,
    BeStoRul,
    FeResCnt,
    FeHrsHdr,
    FeHrsBdy,
    FeLogEnd,
    BeChkRul,
    CfgParser,
    CliParser,
}

impl Place {
    /// HAProxy's name of the check point, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Place::FeConAcc => "frontend tcp-request connection rule",
            Place::FeSesAcc => "frontend tcp-request session rule",
            Place::FeReqCnt => "frontend tcp-request content rule",
            Place::FeHrqHdr => "frontend http-request header rule",
            Place::FeHrqBdy => "frontend http-request body rule",
            Place::FeSetBck => "frontend use-backend rule",
            Place::BeReqCnt => "backend tcp-request content rule",
            Place::BeHrqHdr => "backend http-request header rule",
            Place::BeHrqBdy => "backend http-request body rule",
            Place::BeSetSrv => "backend use-server, balance or stick-match rule",
            Place::BeSrvCon => "server source selection",
            Place::BeResCnt => "backend tcp-response content rule",
            Place::BeHrsHdr => "backend http-response header rule",
            Place::BeHrsBdy => "backend http-response body rule",
            Place::BeStoRul => "backend stick-store rule",
            Place::FeResCnt => "frontend tcp-response content rule",
            Place::FeHrsHdr => "frontend http-response header rule",
            Place::FeHrsBdy => "frontend http-response body rule",
            Place::FeLogEnd => "logs",
            Place::BeChkRul => "backend tcp-check rule",
            Place::CfgParser => "configuration parser",
            Place::CliParser => "CLI parser",
        }
    }
}

/// HAProxy's `fetch_cap[]`: for each data source (bit of [`uses`]), the first and last
/// check point where it exists, plus whether the tcp-check rules have it.
fn source_valid(src: usize, place: Place) -> bool {
    let p = place as usize;
    let chk = Place::BeChkRul as usize;
    let log = Place::FeLogEnd as usize;
    let range = |a: Place, b: Place| (a as usize..=b as usize).contains(&p);
    match src {
        0 => true,
        1 => p != Place::CfgParser as usize,
        2 | 3 | 6 => p <= log,
        4 => p <= chk,
        5 => range(Place::FeSesAcc, Place::FeLogEnd),
        7 | 8 => range(Place::FeReqCnt, Place::BeSrvCon),
        9 => range(Place::FeReqCnt, Place::FeLogEnd),
        10 => range(Place::FeHrqBdy, Place::BeSrvCon),
        11 => range(Place::BeReqCnt, Place::BeChkRul),
        12 => range(Place::BeSrvCon, Place::BeChkRul),
        13 | 14 | 17 => range(Place::BeResCnt, Place::BeChkRul),
        15 | 16 => range(Place::BeResCnt, Place::FeHrsBdy) || p == chk,
        18 => range(Place::BeHrsBdy, Place::FeHrsBdy) || p == chk,
        _ => p == log,
    }
}

/// HAProxy's names of the data sources, in [`uses`] bit order.
const SOURCE_NAMES: [&str; uses::COUNT] = [
    "constant",
    "internal state",
    "listener",
    "frontend",
    "client address",
    "client-side connection",
    "track counters",
    "request buffer",
    "HTTP request headers",
    "HTTP request",
    "HTTP request body",
    "backend",
    "server",
    "server address",
    "server-side connection",
    "response buffer",
    "HTTP response headers",
    "HTTP response",
    "HTTP response body",
    "request buffer statistics",
    "response buffer statistics",
    "transaction statistics",
    "session statistics",
];

impl Expr {
    /// The type of the values the expression produces.
    pub fn out_type(&self) -> SmpType {
        self.convs.last().map_or(self.fetch.out, |(c, _)| c.out)
    }

    /// Whether the fetch's data exists at `place` (any of its sources does).
    pub fn valid_at(&self, place: Place) -> bool {
        (0..uses::COUNT).any(|b| self.fetch.uses & (1 << b) != 0 && source_valid(b, place))
    }

    /// `Err` with the names of the data the fetch needs (HAProxy's
    /// `sample_src_names`), for `sample fetch <x> may not be reliably used here because
    /// it needs '<names>' which is not available here`.
    pub fn check_place(&self, place: Place) -> Result<(), String> {
        if self.valid_at(place) {
            return Ok(());
        }
        let names: Vec<&str> =
            (0..uses::COUNT).filter(|b| self.fetch.uses & (1 << b) != 0).map(|b| SOURCE_NAMES[b]).collect();
        Err(names.join(","))
    }

    /// The value of the expression in a sample context: the last value of a
    /// multi-valued fetch, through the converters. `None`: absent or failed.
    pub fn eval<'a>(&'a self, ctx: &SampleCtx<'a>) -> Option<Sample<'a>> {
        let mut last = None;
        let was = ctx.iterate.replace(false);
        (self.fetch.f)(&self.args, ctx, &mut |s| {
            last = Some(s);
            true
        });
        ctx.iterate.set(was);
        if last.is_none() {
            self.http_pending(ctx);
        }
        self.convert(last?, ctx)
    }

    /// An HTTP fetch over a TCP stream whose request head is not complete yet: the
    /// content rules wait for more, as HAProxy's `smp_prefetch_htx()` makes them.
    fn http_pending(&self, ctx: &SampleCtx<'_>) {
        if self.fetch.uses & (uses::HRQHV | uses::HRQHP) != 0
            && ctx.dir == crate::sample::ctx::Dir::Request
            && ctx.req.is_none()
            && ctx.payload.is_some()
            && !ctx.final_data
        {
            ctx.may_change.set(true);
        }
    }

    /// Every value of the expression, each through the converters, until `f` returns
    /// `false` (ACL matching). A value the converters reject is skipped.
    pub fn each<'a>(&'a self, ctx: &SampleCtx<'a>, f: &mut dyn FnMut(Sample<'a>) -> bool) {
        let was = ctx.iterate.replace(true);
        let mut any = false;
        (self.fetch.f)(&self.args, ctx, &mut |s| {
            any = true;
            match self.convert(s, ctx) {
                Some(v) => f(v),
                None => true,
            }
        });
        ctx.iterate.set(was);
        if !any {
            self.http_pending(ctx);
        }
    }

    /// Runs the converters on one value (HAProxy's `sample_process_cnv`).
    pub fn convert<'a>(&'a self, mut smp: Sample<'a>, ctx: &SampleCtx<'a>) -> Option<Sample<'a>> {
        for (conv, args) in &self.convs {
            smp = cast(smp, conv.input)?;
            smp = (conv.f)(args, smp, ctx)?;
        }
        Some(smp)
    }
}
