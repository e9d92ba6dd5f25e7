//! Rendering of a log-format with `%{+json}` / `%{+cbor}` (HAProxy 3.x): each node
//! as the type HAProxy 3.2 gives it: numbers (timers, sizes, counters, ports, status),
//! texts (names, cookies, the unique id), dates and termination states, request parts
//! and header captures as texts of their `#XX`-encoded form, `%hrl`/`%hsl` as arrays,
//! samples as their own type (integer, boolean, text; binary in CBOR) unless the node
//! is typed `%(name:type)`. With `%{..}o` the line is a map of the named nodes (text
//! and unnamed nodes left out); with an encoding on single nodes only, those nodes are
//! encoded in the plain line. A child of `format` (it reads the segments and reuses
//! the plain renderers for a value's text); the encodings' grammar is `log::encode`.
//! Chosen when the format compiles: a plain format never comes here.

use std::cell::RefCell;

use super::super::encode::{Cast, Enc, Writer};
use super::super::vars::LogVar;
use super::{render_expr, render_var, sample_bytes, text, LogFormat, Opts, Seg, Var};
use crate::sample::cast::cast;
use crate::sample::ctx::SampleCtx;
use crate::sample::types::SmpType;
use crate::sample::Sample;

thread_local! {
    /// A value's plain text, before it is encoded (reused: no allocation per line).
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// `{"name": value, ...}` (or its CBOR map) of the named nodes.
pub(super) fn render_map(f: &LogFormat, enc: Enc, ctx: &SampleCtx<'_>, out: &mut Vec<u8>) {
    let mut w = Writer::new(out, enc);
    w.open_map();
    let mut first = true;
    for n in f.names.iter().filter(|n| !n.name.is_empty()) {
        w.key(&n.name, first);
        first = false;
        node(&mut w, &f.segs[n.seg], n.cast, ctx);
    }
    w.close_map();
}

/// A plain line where single nodes carry an encoding (`%{+json}ci`).
pub(super) fn render_mixed(f: &LogFormat, ctx: &SampleCtx<'_>, out: &mut Vec<u8>) {
    let mut after_sep = true;
    for (i, seg) in f.segs.iter().enumerate() {
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
            Seg::Expr(_, o) | Seg::Var(_, o) | Seg::Const(_, o) if o.enc().is_some() => {
                let cast = f.names.iter().find(|n| n.seg == i).map_or(Cast::Same, |n| n.cast);
                let enc = o.enc().unwrap_or(Enc::Json);
                node(&mut Writer::new(out, enc), seg, cast, ctx);
            }
            Seg::Expr(e, o) => render_expr(e, *o, ctx, out),
            Seg::Var(v, o) => render_var(*v, *o, ctx, out),
            Seg::Const(c, o) => text(out, Some(c), *o),
        }
        if out.len() != before {
            after_sep = false;
        }
    }
}

/// One node's value; `null` when it wrote nothing.
fn node(w: &mut Writer<'_>, seg: &Seg, cast: Cast, ctx: &SampleCtx<'_>) {
    let at = w.out.len();
    w.quote = matches!(seg, Seg::Expr(_, o) | Seg::Var(_, o) | Seg::Const(_, o) if o.has(Opts::QUOTE));
    let raw = match seg {
        Seg::Expr(e, _) => expr(w, e.eval(ctx), cast),
        Seg::Var(v, o) => {
            var(w, *v, *o, cast, ctx);
            false
        }
        Seg::Const(c, _) => {
            w.text(Some(c));
            false
        }
        Seg::Text(_) | Seg::Sep => false,
    };
    if w.out.len() == at && !raw {
        w.null();
    }
    w.end_text();
}

/// A sample (`%[expr]`); true when written `:raw` (never `null`).
fn expr(w: &mut Writer<'_>, smp: Option<Sample<'_>>, c: Cast) -> bool {
    if c == Cast::Raw {
        if let Some(Sample::Bin(b)) = smp.and_then(|s| cast(s, SmpType::Bin)) {
            w.out.extend_from_slice(&b);
        }
        return true;
    }
    let keep = |s: &Sample<'_>| match s {
        Sample::Sint(_) | Sample::Bool(_) => true,
        Sample::Bin(_) => w.enc == Enc::Cbor,
        _ => false,
    };
    let to = match (c, &smp) {
        (Cast::Str, _) => SmpType::Str,
        (Cast::Sint, _) => SmpType::Sint,
        (Cast::Bool, _) => SmpType::Bool,
        (_, Some(s)) if keep(s) => s.smp_type(),
        _ => SmpType::Str,
    };
    match smp.and_then(|s| cast(s, to)) {
        Some(Sample::Sint(i)) => w.int(i, c),
        Some(Sample::Bool(b)) => w.boolean(b),
        Some(Sample::Bin(b)) => w.bytes(&b),
        Some(s) => {
            let mut scratch = [0u8; 48];
            w.text(Some(sample_bytes(&s, &mut scratch)));
        }
        None => w.text(None),
    }
    false
}

/// How HAProxy writes a variable when encoding.
enum Kind {
    /// A number (`+X`: its hexadecimal text).
    Int,
    /// An address: text (`+X`: hexadecimal text).
    Ip,
    /// A text; none or empty: `""` in JSON, nothing in CBOR.
    Text,
    /// A text of its own even inside a text: dates, termination states.
    Raw,
    /// Request parts: an open text of the `#XX`-encoded bytes.
    Url,
    Frontend,
    /// `%hr`, `%hs`: `{a|b}` as an open text; `%hrl`, `%hsl`: an array of texts.
    Caps {
        list: bool,
    },
}

fn kind(v: Var) -> Kind {
    use LogVar as L;
    match v {
        Var::ClientIp | Var::FrontendIp | Var::ServerIp | Var::Log(L::BackIp) => Kind::Ip,
        Var::Frontend
        | Var::Backend
        | Var::Server
        | Var::Hostname
        | Var::UniqueId
        | Var::SslVersion
        | Var::SslCipher
        | Var::Log(L::CliCookie | L::SrvCookie) => Kind::Text,
        Var::Log(
            L::AcceptDate
            | L::AcceptGmt
            | L::AcceptLocal
            | L::ReqDate
            | L::ReqGmt
            | L::ReqLocal
            | L::Term
            | L::TermCookie,
        ) => Kind::Raw,
        Var::Method | Var::Uri | Var::Path | Var::PathOnly | Var::Query | Var::Version | Var::Request => Kind::Url,
        Var::FrontendXprt => Kind::Frontend,
        Var::ReqHdrs | Var::ResHdrs => Kind::Caps { list: false },
        Var::ReqHdrList | Var::ResHdrList => Kind::Caps { list: true },
        _ => Kind::Int,
    }
}

fn var(w: &mut Writer<'_>, v: Var, o: Opts, c: Cast, ctx: &SampleCtx<'_>) {
    match kind(v) {
        Kind::Frontend => {
            w.start_text();
            w.rawtext(ctx.rt.proxy_name(ctx.fe).unwrap_or_default().as_bytes());
            if ctx.conn.tls().is_some() {
                w.ch(b'~');
            }
        }
        Kind::Caps { list } => {
            let caps = if matches!(v, Var::ReqHdrs | Var::ReqHdrList) { ctx.req_caps } else { ctx.res_caps };
            captures(w, caps, list);
        }
        k => {
            let hex = o.has(Opts::HEXA) && honours_hex(v);
            SCRATCH.with(|s| {
                let Ok(mut s) = s.try_borrow_mut() else { return };
                s.clear();
                render_var(v, Opts(if hex { Opts::HEXA } else { 0 }), ctx, &mut s);
                plain_value(w, k, hex, c, &s);
            });
        }
    }
}

/// The variables `+X` writes in hexadecimal (HAProxy ignores it on the others).
fn honours_hex(v: Var) -> bool {
    use LogVar as L;
    matches!(
        v,
        Var::ClientIp
            | Var::ClientPort
            | Var::FrontendIp
            | Var::FrontendPort
            | Var::ServerIp
            | Var::ServerPort
            | Var::Pid
            | Var::Counter
            | Var::Log(L::BackIp | L::BackPort | L::AcceptTs | L::AcceptMs | L::LogCount)
    )
}

/// A variable from its plain text (`-`: none).
fn plain_value(w: &mut Writer<'_>, k: Kind, hex: bool, c: Cast, s: &[u8]) {
    let none = s.is_empty() || s == b"-";
    match k {
        _ if hex => w.rawtext(s),
        Kind::Int if none => w.text(None),
        // the `+` `option logasap` puts before totals is no part of the value
        Kind::Int => w.int(crate::sample::cast::read_int64(s.strip_prefix(b"+").unwrap_or(s)).0, c),
        Kind::Ip | Kind::Text => w.text((!none).then_some(s)),
        Kind::Raw => w.rawtext(s),
        Kind::Url => {
            w.start_text();
            w.encoded(s);
        }
        Kind::Frontend | Kind::Caps { .. } => {}
    }
}

/// The `#XX` form of a captured header (HAProxy's `hdr_encode_map`).
fn capture_text(out: &mut Vec<u8>, v: &[u8]) {
    super::encode(out, v, b'#', super::hdr_encoded, Opts(0));
}

fn captures(w: &mut Writer<'_>, caps: &[Option<Vec<u8>>], list: bool) {
    if caps.is_empty() {
        return;
    }
    SCRATCH.with(|s| {
        let Ok(mut s) = s.try_borrow_mut() else { return };
        if list {
            w.start_array();
        } else {
            w.start_text();
            w.ch(b'{');
        }
        for (n, cap) in caps.iter().enumerate() {
            match (n > 0, list) {
                (true, true) => w.next_in_array(),
                (true, false) => w.ch(b'|'),
                _ => {}
            }
            if list {
                w.start_text();
            }
            match cap {
                Some(v) => {
                    s.clear();
                    capture_text(&mut s, v);
                    w.encoded(&s);
                }
                None if list && !w.quote => w.ch(b'-'),
                None => {}
            }
            if list {
                w.end_text();
            }
        }
        if list {
            w.end_array();
        } else {
            w.ch(b'}');
        }
    });
}
