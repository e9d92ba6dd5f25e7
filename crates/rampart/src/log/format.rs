//! Log-format strings, compiled once into segments and rendered per stream into a
//! caller's buffer: literal text, `%[expr]` sample expressions, `%{+Q,-E}` options,
//! `%%`, and the `%` variables a [`SampleCtx`] can answer. HAProxy counterpart:
//! `parse_logformat_string()`, `add_sample_to_logformat_list()` and
//! `sess_build_logline()` (src/log.c).
//!
//! Used by `http-request set-header`/`add-header`, `redirect`, `return lf-string`,
//! `set-var-fmt`, `use_backend %[...]`, `unique-id-format`, the `tcp-check` / `http-check`
//! rules (`LfMode::Raw`), and by the log lines
//! (`LfMode::Log`), which alone answer the timing, size and termination-state
//! variables (`super::vars`; rules get "'%X' is not supported yet in this context").

use std::io::Write as _;
use std::net::{IpAddr, SocketAddr};

use crate::sample::ctx::SampleCtx;
use crate::sample::expr::{compile_prefix, CompileCx, Expr, ExprError, Place};
use crate::sample::fetch::http::full_version;
use crate::sample::fetch::ssl;
use crate::sample::kw::uses;
use crate::sample::Sample;

use super::encode::{Cast, Enc};
use super::vars::{self as logvars, LogVar};

#[path = "format_enc.rs"]
mod enc;

/// How a format's output is used: it decides the defaults HAProxy gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LfMode {
    /// Header values, redirect locations, bodies, variables, backend names
    /// (HAProxy's `LOG_OPT_HTTP`): control characters of expressions are `%XX`-encoded,
    /// an absent sample is empty.
    Http,
    /// Log lines (`LOG_OPT_MANDATORY|LOG_OPT_MERGE_SPACES`): an absent value is `-`,
    /// runs of spaces collapse.
    Log,
    /// The formats of `tcp-check` and `http-check` rules (no option in HAProxy): values
    /// as they are, an absent sample is empty.
    Raw,
}

/// Per-node options (`%{+M,+Q,+X,+E}`; `-` removes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Opts(u8);

impl Opts {
    const MANDATORY: u8 = 1;
    const QUOTE: u8 = 2;
    const HEXA: u8 = 4;
    const ESC: u8 = 8;
    const HTTP: u8 = 16;
    /// `+json`, `+cbor` (HAProxy 3.x, an extension here): values encoded, and with
    /// `%{..}o` the line is a map of the named nodes (`%(name)...`); see `enc`.
    const JSON: u8 = 32;
    const CBOR: u8 = 64;
    const ENC: u8 = Opts::JSON | Opts::CBOR;
    /// `+bin` (HAProxy 3.x): refused when the format compiles.
    const BIN: u8 = 128;

    fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }

    /// Applies `+Q,-E,...` (unknown names are ignored, as HAProxy).
    fn apply(mut self, spec: &str) -> Opts {
        for item in spec.split(',') {
            let (add, name) = match item.as_bytes().first() {
                Some(b'+') => (true, &item[1..]),
                Some(b'-') => (false, &item[1..]),
                _ => continue,
            };
            let bit = match name {
                "M" => Opts::MANDATORY,
                "Q" => Opts::QUOTE,
                "X" => Opts::HEXA,
                "E" => Opts::ESC,
                "json" => Opts::JSON,
                "cbor" => Opts::CBOR,
                "bin" => Opts::BIN,
                _ => continue,
            };
            // as HAProxy, an encoding already set stays: another is not added
            let bit = if add && self.has(Opts::ENC) { bit & !Opts::ENC } else { bit };
            self.0 = if add { self.0 | bit } else { self.0 & !bit };
        }
        self
    }

    /// The encoding these options ask for.
    fn enc(self) -> Option<Enc> {
        if self.has(Opts::JSON) {
            Some(Enc::Json)
        } else if self.has(Opts::CBOR) {
            Some(Enc::Cbor)
        } else {
            None
        }
    }

    /// These options with the encoding `g` of the whole format, if any (HAProxy's
    /// `lf_expr_postcheck_node_opt`: a global encoding wins; `+E` goes with any).
    fn settle(self, g: Option<Enc>) -> Opts {
        let mut o = self.0;
        if let Some(g) = g {
            o = (o & !Opts::ENC) | if g == Enc::Json { Opts::JSON } else { Opts::CBOR };
        }
        if o & Opts::ENC != 0 {
            o &= !Opts::ESC;
        }
        Opts(o)
    }
}

/// A node named `%(name)` or typed `%(name:type)` (HAProxy 3.x).
#[derive(Debug)]
struct Named {
    /// Empty for `%(:type)`: typed, left out of the map.
    name: Box<str>,
    /// Index into the format's segments.
    seg: usize,
    cast: Cast,
}

/// The `%` variables rendered from a sample context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Var {
    ClientIp,
    ClientPort,
    FrontendIp,
    FrontendPort,
    Frontend,
    FrontendXprt,
    Backend,
    Server,
    ServerIp,
    ServerPort,
    Hostname,
    Pid,
    UniqueId,
    Method,
    Uri,
    Path,
    PathOnly,
    Query,
    Version,
    Request,
    ReqHdrs,
    ReqHdrList,
    ResHdrs,
    ResHdrList,
    Status,
    Counter,
    ActConn,
    FeConn,
    BeConn,
    SrvConn,
    /// `%sslv`, `%sslc`: the client connection's TLS version and cipher.
    SslVersion,
    SslCipher,
    /// A variable only log lines answer.
    Log(LogVar),
}

/// HAProxy's log-format variables: name, HTTP-only, and what rampart renders (`None`:
/// the logging issue will).
const VARS: &[(&str, bool, Option<Var>)] = &[
    ("B", false, None),
    ("CC", true, None),
    ("CS", true, None),
    ("H", false, Some(Var::Hostname)),
    ("ID", false, Some(Var::UniqueId)),
    ("ST", false, Some(Var::Status)),
    ("T", false, None),
    ("Ta", true, None),
    ("Tc", false, None),
    ("Th", false, None),
    ("Ti", true, None),
    ("Tl", false, None),
    ("Tq", true, None),
    ("Tr", true, None),
    ("TR", true, None),
    ("Td", false, None),
    ("Ts", false, None),
    ("Tt", false, None),
    ("Tu", false, None),
    ("Tw", false, None),
    ("U", false, None),
    ("ac", false, Some(Var::ActConn)),
    ("b", false, Some(Var::Backend)),
    ("bc", false, Some(Var::BeConn)),
    ("bi", false, None),
    ("bp", false, None),
    ("bq", false, None),
    ("ci", false, Some(Var::ClientIp)),
    ("cp", false, Some(Var::ClientPort)),
    ("f", false, Some(Var::Frontend)),
    ("fc", false, Some(Var::FeConn)),
    ("fi", false, Some(Var::FrontendIp)),
    ("fp", false, Some(Var::FrontendPort)),
    ("ft", false, Some(Var::FrontendXprt)),
    ("hr", false, Some(Var::ReqHdrs)),
    ("hrl", false, Some(Var::ReqHdrList)),
    ("hs", false, Some(Var::ResHdrs)),
    ("hsl", false, Some(Var::ResHdrList)),
    ("HM", true, Some(Var::Method)),
    ("HP", true, Some(Var::Path)),
    ("HPO", true, Some(Var::PathOnly)),
    ("HQ", true, Some(Var::Query)),
    ("HU", true, Some(Var::Uri)),
    ("HV", true, Some(Var::Version)),
    ("lc", false, None),
    ("ms", false, None),
    ("pid", false, Some(Var::Pid)),
    ("r", true, Some(Var::Request)),
    ("rc", false, None),
    ("rt", false, Some(Var::Counter)),
    ("s", false, Some(Var::Server)),
    ("sc", false, Some(Var::SrvConn)),
    ("si", false, Some(Var::ServerIp)),
    ("sp", false, Some(Var::ServerPort)),
    ("sq", false, None),
    ("sslc", false, Some(Var::SslCipher)),
    ("sslv", false, Some(Var::SslVersion)),
    ("t", false, None),
    ("tr", true, None),
    ("trg", true, None),
    ("trl", true, None),
    ("ts", false, None),
    ("tsc", false, None),
];

/// One compiled piece of a format.
#[derive(Debug)]
enum Seg {
    Text(Box<[u8]>),
    /// A run of spaces in a log line: one space unless the output already ends with one.
    Sep,
    Expr(Expr, Opts),
    Var(Var, Opts),
    /// A value fixed at startup (`%H`), rendered as text.
    Const(Box<[u8]>, Opts),
}

/// A compiled log-format string.
#[derive(Debug, Default)]
pub struct LogFormat {
    segs: Vec<Seg>,
    /// `%(name)` and `%(name:type)` of nodes, for the encodings.
    names: Vec<Named>,
    /// `%{+json}o`, `%{+cbor}o`: the line is a map of the named nodes.
    enc: Option<Enc>,
    /// Without a global encoding, some nodes are encoded (`%{+json}ci`).
    node_enc: bool,
    /// HAProxy's warnings while compiling (an L6 fetch in an HTTP format ...), for the
    /// caller to report with its `[file:line]`.
    pub warnings: Vec<String>,
}

/// Why a format does not compile: HAProxy's message (without the caller's prefix)
/// and, for unknown keywords, a did-you-mean hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LfError {
    pub msg: String,
    pub hint: Option<String>,
    /// A name that did not resolve: HAProxy reports these as a whole line
    /// (`parsing [f:l]: unable to find backend ...`), see [`ExprError::Resolve`].
    pub resolve: bool,
}

impl std::fmt::Display for LfError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.msg)
    }
}

fn err(msg: String) -> LfError {
    LfError { msg, hint: None, resolve: false }
}

impl LogFormat {
    /// Compiles `fmt`. `places`: where it is evaluated (a fetch must be valid at one of
    /// them; empty: no check).
    pub fn compile(fmt: &str, cx: &mut CompileCx<'_>, mode: LfMode, places: &[Place]) -> Result<LogFormat, LfError> {
        let http_px = cx.cfg.proxies.get(cx.px).is_some_and(|p| p.mode == rampart_cfg::model::Mode::Http);
        let defaults = match mode {
            LfMode::Http => Opts(Opts::HTTP),
            LfMode::Log => Opts(Opts::MANDATORY),
            LfMode::Raw => Opts(0),
        };
        let mut p = Parser {
            name: None,
            fmt,
            i: 0,
            text: Vec::new(),
            out: LogFormat::default(),
            mode,
            http_px,
            places,
            defaults,
            global: None,
        };
        p.run(cx)?;
        p.settle_encoding();
        Ok(p.out)
    }

    /// A format that is only `text` (no `%` interpretation).
    pub fn literal(text: &[u8]) -> LogFormat {
        let segs = if text.is_empty() { Vec::new() } else { vec![Seg::Text(text.into())] };
        LogFormat { segs, warnings: Vec::new(), ..LogFormat::default() }
    }

    /// The format's text when it has no variable (callers may pre-render it).
    pub fn as_text(&self) -> Option<&[u8]> {
        match &self.segs[..] {
            [] => Some(b""),
            [Seg::Text(t)] => Some(t),
            _ => None,
        }
    }

    /// Appends the rendering of the format in `ctx` to `out`. Allocates nothing but
    /// what converters produce and `out`'s growth.
    pub fn render(&self, ctx: &SampleCtx<'_>, out: &mut Vec<u8>) {
        if let Some(e) = self.enc {
            return enc::render_map(self, e, ctx, out);
        }
        if self.node_enc {
            return enc::render_mixed(self, ctx, out);
        }
        // As HAProxy, a separator is written only after something else, once.
        // A segment that wrote nothing (`%hr` without captures) leaves the separator
        // state as it was, so that no double space appears.
        let mut after_sep = true;
        for seg in &self.segs {
            let before = out.len();
            match seg {
                Seg::Sep => {
                    if !after_sep {
                        out.push(b' ');
                    }
                    after_sep = true;
                    continue;
                }
                Seg::Text(t) => out.extend_from_slice(t),
                Seg::Expr(e, o) => render_expr(e, *o, ctx, out),
                Seg::Var(v, o) => render_var(*v, *o, ctx, out),
                Seg::Const(c, o) => text(out, Some(c), *o),
            }
            if out.len() != before {
                after_sep = false;
            }
        }
    }
}

struct Parser<'f, 'p> {
    /// The `%(name)` or `%(name:type)` waiting for its node.
    name: Option<(Box<str>, Cast)>,
    fmt: &'f str,
    i: usize,
    text: Vec<u8>,
    out: LogFormat,
    mode: LfMode,
    http_px: bool,
    places: &'p [Place],
    defaults: Opts,
    /// The options every `%o` of the format has in common (HAProxy's
    /// `lf_expr->nodes.options`): an encoding there encodes the whole line.
    global: Option<Opts>,
}

impl Parser<'_, '_> {
    fn flush(&mut self) {
        if !self.text.is_empty() {
            let text = std::mem::take(&mut self.text);
            let text = rampart_cfg::lexer::raw_bytes(&text).into_owned();
            self.out.segs.push(Seg::Text(text.into_boxed_slice()));
        }
    }

    fn run(&mut self, cx: &mut CompileCx<'_>) -> Result<(), LfError> {
        let b = self.fmt.as_bytes();
        while self.i < b.len() {
            match b[self.i] {
                b'%' => self.percent(cx)?,
                b' ' if self.mode == LfMode::Log => {
                    self.flush();
                    self.out.segs.push(Seg::Sep);
                    self.i += 1;
                }
                c => {
                    self.text.push(c);
                    self.i += 1;
                }
            }
        }
        self.flush();
        Ok(())
    }

    /// What follows a `%` at `self.i`.
    fn percent(&mut self, cx: &mut CompileCx<'_>) -> Result<(), LfError> {
        let b = self.fmt.as_bytes();
        let at = self.i + 1;
        match b.get(at) {
            None => Err(err("truncated line after '%'".into())),
            Some(b'%') => {
                self.text.push(b'%');
                self.i += 2;
                Ok(())
            }
            Some(b'{') => {
                let Some(close) = self.fmt[at + 1..].find('}').map(|n| at + 1 + n) else {
                    return Err(err(format!("truncated line after '{}'", &self.fmt[at + 1..])));
                };
                let arg = &self.fmt[at + 1..close];
                let opts = self.defaults.apply(arg);
                if opts.has(Opts::BIN) {
                    return Err(err("'+bin' is not supported yet".into()));
                }
                match b.get(close + 1) {
                    Some(b'[') => self.expr(close + 2, opts, cx),
                    Some(c) if c.is_ascii_alphanumeric() => self.var(close + 1, opts),
                    _ => Err(err(format!("parse argument modifier without variable name near '%{{{arg}}}'"))),
                }
            }
            Some(b'[') => self.expr(at + 1, self.defaults, cx),
            Some(b'(') => {
                self.name = Some(self.node_name(at)?);
                self.percent(cx)
            }
            Some(c) if c.is_ascii_alphabetic() => self.var(at, self.defaults),
            Some(&c) if c.is_ascii_digit() || c == b' ' || c == b'\t' => Err(err(format!(
                "unexpected variable name near '{}' at position {at} line : '{}'. Maybe you want to write a \
                 single '%', use the syntax '%%'",
                c as char, self.fmt
            ))),
            // HAProxy drops a `%` before anything else.
            Some(_) => {
                self.i += 1;
                Ok(())
            }
        }
    }

    /// `%[expr]` with the expression starting at `start`.
    fn expr(&mut self, start: usize, opts: Opts, cx: &mut CompileCx<'_>) -> Result<(), LfError> {
        let text = &self.fmt[start..];
        let (e, n) = compile_prefix(text, cx).map_err(|e| match e {
            ExprError::Resolve(m) => LfError { msg: m, hint: None, resolve: true },
            other => LfError {
                msg: format!("failed to parse sample expression <{text}> : {other}"),
                hint: other.hint(),
                resolve: false,
            },
        })?;
        match text.as_bytes().get(n) {
            Some(b']') => {}
            Some(&c) if c.is_ascii_graphic() || c == b' ' => {
                return Err(err(format!("expected ']' after '{}', but found '{}'", &text[..n], c as char)))
            }
            _ => return Err(err(format!("missing ']' after '{}'", &text[..n]))),
        }
        if !self.places.is_empty() && !self.places.iter().any(|p| e.valid_at(*p)) {
            let needs = e.check_place(self.places[0]).err().unwrap_or_default();
            return Err(err(format!(
                "sample fetch <{text}> may not be reliably used here because it needs '{needs}' which is not \
                 available here"
            )));
        }
        if self.mode == LfMode::Http && e.fetch.uses & (uses::L6REQ | uses::L6RES) != 0 {
            self.out.warnings.push(format!("L6 sample fetch <{text}> ignored in HTTP log-format string."));
        }
        self.flush();
        self.out.segs.push(Seg::Expr(e, opts));
        self.named();
        self.i = start + n + 1;
        Ok(())
    }

    /// `%name` with the name starting at `start`.
    fn var(&mut self, start: usize, opts: Opts) -> Result<(), LfError> {
        let b = self.fmt.as_bytes();
        let len = b[start..].iter().take_while(|c| c.is_ascii_alphanumeric()).count();
        let name = &self.fmt[start..start + len];
        self.i = start + len;
        if name == "o" {
            self.defaults = opts;
            self.global = Some(self.global.map_or(opts, |g| Opts(g.0 & opts.0)));
            return Ok(());
        }
        let Some(&(_, http_only, var)) = VARS.iter().find(|(n, _, _)| *n == name) else {
            return Err(err(format!(
                "no such format variable '{name}'. If you wanted to emit the '%' character verbatim, you need to \
                 use '%%'"
            )));
        };
        if http_only && !self.http_px {
            return Err(err(format!("format variable '{name}' is reserved for HTTP mode")));
        }
        let var = match (var, self.mode) {
            (Some(v), _) => v,
            (None, LfMode::Log) => match logvars::by_name(name) {
                Some(lv) => Var::Log(lv),
                None => return Err(err(format!("'%{name}' is not supported yet"))),
            },
            (None, LfMode::Http | LfMode::Raw) => {
                return Err(err(format!("'%{name}' is not supported yet in this context")))
            }
        };
        self.flush();
        self.out.segs.push(match var {
            Var::Hostname => Seg::Const(crate::sample::fetch::internal::hostname().into_bytes().into(), opts),
            _ => Seg::Var(var, opts),
        });
        self.named();
        Ok(())
    }

    /// Gives the node just pushed the `%(name)` that preceded it.
    fn named(&mut self) {
        if let Some((name, cast)) = self.name.take() {
            self.out.names.push(Named { name, seg: self.out.segs.len() - 1, cast });
        }
    }

    /// `%(name)` or `%(name:type)` with its `(` at `at`; leaves `self.i` on the `)`.
    fn node_name(&mut self, at: usize) -> Result<(Box<str>, Cast), LfError> {
        let b = self.fmt.as_bytes();
        let mut colon = None;
        let mut i = at + 1;
        loop {
            match b.get(i) {
                None => return Err(err("truncated line after '%'".into())),
                Some(b')') => break,
                Some(b':') if colon.is_none() => colon = Some(i),
                Some(&c) if colon.is_none() && !c.is_ascii_alphanumeric() && c != b'_' && c != b'-' => {
                    return Err(err(format!(
                        "invalid character in custom name near '{}' at position {i} line : '{}'",
                        c as char, self.fmt
                    )))
                }
                Some(_) => {}
            }
            i += 1;
        }
        self.i = i;
        let Some(colon) = colon else { return Ok((self.fmt[at + 1..i].into(), Cast::Same)) };
        let ty = &self.fmt[colon + 1..i];
        let Some(cast) = Cast::parse(ty) else {
            return Err(err(format!(
                "unexpected output type '{ty}' at position {} line : '{}'. Supported types are: str, sint, bool, raw",
                colon + 1,
                self.fmt
            )));
        };
        Ok((self.fmt[at + 1..colon].into(), cast))
    }

    /// Where the encodings apply once the whole format is read: to log lines only (as
    /// HAProxy drops them from HTTP formats); a global one to every node.
    fn settle_encoding(&mut self) {
        let global = self.global.and_then(Opts::enc).filter(|_| self.mode == LfMode::Log);
        for seg in &mut self.out.segs {
            if let Seg::Expr(_, o) | Seg::Var(_, o) | Seg::Const(_, o) = seg {
                *o = if self.mode == LfMode::Log { o.settle(global) } else { Opts(o.0 & !Opts::ENC) };
                self.out.node_enc |= o.has(Opts::ENC);
            }
        }
        self.out.enc = global;
        self.out.node_enc &= global.is_none();
    }
}

// === rendering ===

/// Bytes HAProxy `%XX`-encodes in HTTP formats: controls but HTAB, and DEL.
fn http_encoded(c: u8) -> bool {
    (c < 0x20 && c != b'\t') || c == 0x7f
}

/// Bytes `+E` escapes with a backslash (RFC 5424 PARAM-VALUE).
fn rfc5424_escaped(c: u8) -> bool {
    matches!(c, b'"' | b'\\' | b']')
}

/// Bytes of URI-like variables encoded as `#XX`.
fn url_encoded(c: u8) -> bool {
    !(0x20..0x7f).contains(&c) || c == b'"' || c == b'#'
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// `s` with the bytes `enc` selects written as `<esc>XX`, and with `+E` the
/// RFC 5424 ones backslash-escaped (HAProxy's `lf_encode_chunk`).
fn encode(out: &mut Vec<u8>, s: &[u8], esc: u8, enc: fn(u8) -> bool, o: Opts) {
    for &c in s {
        if enc(c) {
            out.extend_from_slice(&[esc, HEX[usize::from(c >> 4)], HEX[usize::from(c & 15)]]);
        } else {
            if o.has(Opts::ESC) && rfc5424_escaped(c) {
                out.push(b'\\');
            }
            out.push(c);
        }
    }
}

/// Text with `+Q` quotes, `+E` escapes, and `-` for nothing when mandatory (HAProxy's
/// `lf_text_len`).
fn text(out: &mut Vec<u8>, s: Option<&[u8]>, o: Opts) {
    if o.has(Opts::QUOTE) {
        out.push(b'"');
    }
    match s {
        Some(s) if !s.is_empty() => {
            for &c in s {
                if o.has(Opts::ESC) && rfc5424_escaped(c) {
                    out.push(b'\\');
                }
                out.push(c);
            }
        }
        _ if o.has(Opts::MANDATORY) && !o.has(Opts::QUOTE) => out.push(b'-'),
        _ => {}
    }
    if o.has(Opts::QUOTE) {
        out.push(b'"');
    }
}

/// A sample as a string (HAProxy casts `%[...]` results to `str`).
fn sample_bytes<'s>(smp: &'s Sample<'_>, scratch: &'s mut [u8; 48]) -> &'s [u8] {
    let mut cur = std::io::Cursor::new(&mut scratch[..]);
    let _ = match smp {
        Sample::Str(b) => return b,
        Sample::Bin(b) => return &b[..memchr::memchr(0, b).unwrap_or(b.len())],
        Sample::Meth(_, b) => return b,
        Sample::Bool(v) => return if *v { b"1" } else { b"0" },
        Sample::Sint(i) => write!(cur, "{i}"),
        Sample::Ipv4(a) => write!(cur, "{a}"),
        Sample::Ipv6(a) => write!(cur, "{a}"),
    };
    let n = cur.position() as usize;
    &scratch[..n]
}

fn render_expr(e: &Expr, o: Opts, ctx: &SampleCtx<'_>, out: &mut Vec<u8>) {
    let smp = e.eval(ctx);
    let mut scratch = [0u8; 48];
    let bytes = smp.as_ref().map(|s| sample_bytes(s, &mut scratch));
    if o.has(Opts::HTTP) {
        encode(out, bytes.unwrap_or_default(), b'%', http_encoded, o);
    } else {
        text(out, bytes, o);
    }
}

fn ip_text(out: &mut Vec<u8>, a: Option<SocketAddr>, o: Opts) {
    match a {
        Some(a) if o.has(Opts::HEXA) => match a.ip() {
            IpAddr::V4(v4) => v4.octets().iter().for_each(|b| {
                let _ = write!(out, "{b:02X}");
            }),
            IpAddr::V6(v6) => v6.octets().iter().for_each(|b| {
                let _ = write!(out, "{b:02X}");
            }),
        },
        Some(SocketAddr::V4(a)) if !o.has(Opts::QUOTE) => dotted(out, *a.ip()),
        Some(a) => {
            let mut scratch = [0u8; 48];
            let mut cur = std::io::Cursor::new(&mut scratch[..]);
            let _ = write!(cur, "{}", a.ip());
            let n = cur.position() as usize;
            text(out, Some(&scratch[..n]), o);
        }
        None => text(out, None, o),
    }
}

fn port_text(out: &mut Vec<u8>, a: Option<SocketAddr>, o: Opts) {
    match a {
        Some(a) if o.has(Opts::HEXA) => {
            let _ = write!(out, "{:04X}", a.port());
        }
        Some(a) => decimal(out, a.port().into()),
        None => text(out, None, o),
    }
}

/// A counter: decimal, or `%04X` with `+X`.
fn number(out: &mut Vec<u8>, n: i64, o: Opts) {
    if o.has(Opts::HEXA) {
        let _ = write!(out, "{n:04X}");
    } else {
        decimal(out, n);
    }
}

/// Appends `n` in decimal.
///
/// PERF: a log line writes about fifteen numbers; `write!` goes through `fmt`'s
/// machinery for each, this writes the digits straight into the line.
pub fn decimal(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    let mut v = n.unsigned_abs();
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// Appends an IPv4 address in dotted decimal.
fn dotted(out: &mut Vec<u8>, a: std::net::Ipv4Addr) {
    for (i, b) in a.octets().into_iter().enumerate() {
        if i > 0 {
            out.push(b'.');
        }
        decimal(out, b.into());
    }
}

/// The captured headers in `{a|b}` form (`%hr`, `%hs`), or one quoted-or-dash field
/// each (`%hrl`, `%hsl`); nothing without captures.
fn captures(out: &mut Vec<u8>, caps: &[Option<Vec<u8>>], o: Opts, list: bool) {
    if caps.is_empty() {
        return;
    }
    if !list {
        if o.has(Opts::QUOTE) {
            out.push(b'"');
        }
        out.push(b'{');
    }
    for (n, c) in caps.iter().enumerate() {
        if n > 0 {
            out.push(if list { b' ' } else { b'|' });
        }
        if list && o.has(Opts::QUOTE) {
            out.push(b'"');
        }
        match c {
            Some(v) => encode(out, v, b'#', hdr_encoded, o),
            None if list && !o.has(Opts::QUOTE) => out.push(b'-'),
            None => {}
        }
        if list && o.has(Opts::QUOTE) {
            out.push(b'"');
        }
    }
    if !list {
        out.push(b'}');
        if o.has(Opts::QUOTE) {
            out.push(b'"');
        }
    }
}

/// Bytes of captured headers encoded as `#XX`.
fn hdr_encoded(c: u8) -> bool {
    url_encoded(c) || matches!(c, b'{' | b'|' | b'}')
}

/// Parts of the request line, `#XX`-encoded, quoted with `+Q`; `<BADREQ>` without a
/// request.
fn uri_parts(out: &mut Vec<u8>, parts: Option<&[&[u8]]>, o: Opts) {
    if o.has(Opts::QUOTE) {
        out.push(b'"');
    }
    for p in parts.unwrap_or(&[b"<BADREQ>"]) {
        encode(out, p, b'#', url_encoded, o);
    }
    if o.has(Opts::QUOTE) {
        out.push(b'"');
    }
}

fn uri_part(out: &mut Vec<u8>, part: Option<&[u8]>, o: Opts) {
    uri_parts(out, part.as_ref().map(std::slice::from_ref), o);
}

/// The request variables of a log line, from the request line it captured.
fn logged_req_var(v: Var, o: Opts, l: &super::StreamLog, out: &mut Vec<u8>) -> bool {
    // PERF: the line is split only for these variables, not for each of a line's
    // twenty-odd nodes
    if !matches!(v, Var::Request | Var::Method | Var::Uri | Var::Path | Var::PathOnly | Var::Query | Var::Version) {
        return false;
    }
    let r = logvars::req_line(l);
    match v {
        Var::Request => uri_part(out, r.map(|_| &l.req_line[..]), o),
        Var::Method => uri_part(out, r.map(|r| r.method), o),
        Var::Uri => uri_part(out, r.map(|r| r.uri), o),
        Var::Path => uri_part(out, r.map(|r| r.uri.split(|&c| c == b'?').next().unwrap_or_default()), o),
        Var::PathOnly => uri_part(out, r.map(|r| logvars::path_only(r.uri)), o),
        Var::Query => uri_part(out, r.map(|r| memchr::memchr(b'?', r.uri).map_or(&b""[..], |q| &r.uri[q..])), o),
        Var::Version => uri_part(out, r.map(|r| r.version), o),
        _ => return false,
    }
    true
}

/// `<lua.NAME>`: how HAProxy names a Lua service where a server name goes.
fn applet_name(id: u32) -> String {
    let names = crate::sample::lua::names().unwrap_or_default();
    let name = names.services.get(id as usize).map_or("", |s| s.0.as_str());
    format!("<lua.{name}>")
}

fn render_var(v: Var, o: Opts, ctx: &SampleCtx<'_>, out: &mut Vec<u8>) {
    if let Some(l) = ctx.log {
        if logged_req_var(v, o, l, out) {
            return;
        }
    }
    let name = |i: usize| ctx.rt.proxy_name(i).map(str::as_bytes);
    // PERF: looked up by the variables that name the server only
    let srv = || ctx.be.zip(ctx.srv).and_then(|(b, s)| ctx.rt.server(b, s));
    let req = ctx.req;
    match v {
        Var::ClientIp => ip_text(out, ctx.conn.src, o),
        Var::ClientPort => port_text(out, ctx.conn.src, o),
        Var::FrontendIp => ip_text(out, ctx.conn.dst(), o),
        Var::FrontendPort => port_text(out, ctx.conn.dst(), o),
        // `%ft`: the frontend's name, with `~` after it when the connection is TLS
        Var::FrontendXprt if ctx.conn.tls().is_some() => {
            text(out, name(ctx.fe).map(|n| [n, b"~"].concat()).as_deref(), o)
        }
        Var::Frontend | Var::FrontendXprt => text(out, name(ctx.fe), o),
        Var::Backend => text(out, name(ctx.be_or_fe()), o),
        Var::Server => match (srv(), ctx.log.and_then(|l| l.applet)) {
            (Some(s), _) => text(out, Some(s.name.as_bytes()), o),
            (None, Some(id)) => text(out, Some(applet_name(id).as_bytes()), o),
            // the cache's applet served the response, as HAProxy names it
            (None, None) if ctx.flt.cache_hit.is_some() => text(out, Some(b"<CACHE>"), o),
            (None, None) => text(out, Some(b"<NOSRV>"), o),
        },
        Var::ServerIp => ip_text(out, srv().map(|s| s.addr), o),
        Var::ServerPort => port_text(out, srv().map(|s| s.addr), o),
        Var::Hostname => {}
        Var::Pid => number(out, i64::from(std::process::id()), o),
        Var::UniqueId => text(out, ctx.unique_id(), o),
        Var::Method => uri_part(out, req.map(|m| m.method()), o),
        Var::Uri => uri_part(out, req.map(|m| m.uri()), o),
        Var::Path => uri_part(out, req.map(|m| m.uri().split(|&c| c == b'?').next().unwrap_or_default()), o),
        Var::PathOnly => uri_part(out, req.map(|m| m.target().path), o),
        Var::Query => uri_part(out, req.map(|m| memchr::memchr(b'?', m.uri()).map_or(&b""[..], |q| &m.uri()[q..])), o),
        Var::Version => uri_part(out, req.map(full_version), o),
        Var::Request => {
            uri_parts(out, req.map(|m| [m.method(), b" ", m.uri(), b" ", full_version(m)]).as_ref().map(|p| &p[..]), o)
        }
        Var::ReqHdrs => captures(out, ctx.req_caps, o, false),
        Var::ReqHdrList => captures(out, ctx.req_caps, o, true),
        Var::ResHdrs => captures(out, ctx.res_caps, o, false),
        Var::ResHdrList => captures(out, ctx.res_caps, o, true),
        Var::Status => {
            let st = ctx.status.or(ctx.res.map(|r| r.head.status)).map_or(-1, i64::from);
            decimal(out, st);
        }
        Var::Counter => number(out, ctx.uniq_id as i64, o),
        Var::ActConn => number(out, i64::from(ctx.rt.act_conns()), o),
        Var::FeConn => number(out, i64::from(ctx.rt.fe_conns(ctx.fe)), o),
        Var::BeConn => {
            let be = ctx.be_or_fe();
            let servers = (0..ctx.rt.server_count(be)).filter_map(|i| ctx.rt.server(be, i));
            number(out, servers.map(|s| i64::from(s.cur_conns)).sum::<i64>(), o)
        }
        Var::SrvConn => number(out, srv().map_or(0, |s| i64::from(s.cur_conns)), o),
        Var::SslVersion => text(out, ssl::fc_protocol(ctx).map(str::as_bytes), o),
        Var::SslCipher => text(out, ssl::fc_cipher(ctx).map(str::as_bytes), o),
        // `%CC`, `%CS`: text, `+E` escapes included (HAProxy's `lf_text`)
        Var::Log(LogVar::CliCookie) => text(out, ctx.log.map(|l| &l.cookie.cli[..]), o),
        Var::Log(LogVar::SrvCookie) => text(out, ctx.log.map(|l| &l.cookie.srv[..]), o),
        Var::Log(lv) => logvars::render(lv, o.has(Opts::HEXA), o.has(Opts::QUOTE), ctx, out),
    }
}
