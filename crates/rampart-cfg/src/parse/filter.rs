//! `compression algo|type|offload` and `filter compression|cache|trace` lines of proxy
//! sections, and the checks once every section is read: each cache a filter names
//! exists, the compression filter comes after the cache's, and a proxy that declares
//! filters declares the ones its `compression` lines and cache rules need.
//!
//! HAProxy counterparts: `parse_compression_options()`, `parse_http_comp_flt()` and
//! `check_implicit_http_comp_flt()` (src/flt_http_comp.c), `parse_filter()`
//! (src/filters.c), `parse_trace_flt()` (src/flt_trace.c), `parse_cache_flt()`,
//! `parse_cache_rule()` and `cache_store_check()` (src/cache.c). Messages are HAProxy's.

use crate::model::{CompAlgo, Compression, FilterDecl, FilterKind, TraceFilter};
use crate::span::Span;

use super::ctx::{Ctx, Kind};
use super::{arg, Parser};

/// `compression algo <algo>... | type <type>... | offload`.
pub(super) fn parse_compression(cx: &mut Ctx<'_>, words: &[String]) {
    let defaults = cx.pb.kind == Kind::Defaults;
    let comp = cx.pb.px.compression.get_or_insert_with(Compression::default);
    let rest = words.get(2..).unwrap_or_default();
    match arg(words, 1) {
        "algo" if rest.is_empty() => {
            let at = format!("parsing [{}:{}] : ", cx.span.file, cx.span.line);
            cx.alert(format!("{at}'compression' expects <algorithm>."));
        }
        "algo" => {
            for w in rest {
                let Some(algo) = CompAlgo::from_cfg(w) else {
                    cx.alert(format!("'compression' : '{w}' is not a supported algorithm."));
                    return;
                };
                // as HAProxy's `comp_append_algo()`, which prepends
                comp.algos.insert(0, algo);
            }
        }
        "type" if rest.is_empty() => cx.alert("'compression' expects <type>."),
        "type" => {
            for w in rest {
                comp.types.insert(0, w.clone());
            }
        }
        "offload" if defaults => cx.warning("'compression' : 'offload' ignored in 'defaults' section."),
        "offload" => comp.offload = true,
        _ => cx.alert("'compression' expects 'algo', 'type' or 'offload'"),
    }
}

/// `filter <name> [param*]`.
pub(super) fn parse_filter(cx: &mut Ctx<'_>, words: &[String]) {
    let at = format!("parsing [{}:{}] : ", cx.span.file, cx.span.line);
    if cx.pb.kind == Kind::Defaults {
        cx.alert(format!("{at}filter is not allowed in a 'default' section."));
        return;
    }
    let name = arg(words, 1);
    let (kind, next) = match name {
        "" => {
            let (ty, px) = (cx.pb.kind.type_str(), cx.pb.px.name.clone());
            cx.alert(format!("{at}missing argument for 'filter' in {ty} '{px}'."));
            return;
        }
        "compression" => {
            if cx.pb.px.filters.iter().any(|f| f.kind == FilterKind::Compression) {
                let px = cx.pb.px.name.clone();
                cx.alert(format!("'filter' : '{px}: Proxy supports only one compression filter\n'"));
                return;
            }
            (FilterKind::Compression, 2)
        }
        "cache" => match parse_cache_filter(cx, words) {
            Some(kind) => (kind, 3),
            None => return,
        },
        "trace" => match parse_trace(words) {
            Ok(r) => r,
            Err(msg) => {
                cx.alert(format!("'filter' : ''trace' : {msg}'"));
                return;
            }
        },
        "spoe" => match super::spoe::parse_filter_line(words) {
            Ok(f) => (FilterKind::Spoe(Box::new(f)), words.len()),
            Err(msg) => {
                cx.alert(format!("'filter' : {msg}"));
                return;
            }
        },
        "fcgi-app" | "opentracing" => {
            cx.alert(format!("'filter {name}' is not supported yet"));
            return;
        }
        other => {
            cx.alert(format!(
                "'filter' : unknown keyword '{other}'. Registered keywords :\n    [CACHE] cache\n    [COMP] compression\n    [TRACE] trace"
            ));
            return;
        }
    };
    if let Some(extra) = words.get(next) {
        cx.alert(format!("'filter {name}' : unknown keyword '{extra}'."));
        return;
    }
    cx.pb.px.filters.push(FilterDecl { kind, implicit: false, span: cx.span.clone() });
}

/// `filter cache <name>`: replaces the implicit filter a `cache-use` / `cache-store`
/// rule declared for the same cache.
fn parse_cache_filter(cx: &mut Ctx<'_>, words: &[String]) -> Option<FilterKind> {
    let name = arg(words, 2);
    if name.is_empty() {
        cx.alert("'filter' : 'cache : expects a <name> argument'");
        return None;
    }
    let filters = &mut cx.pb.px.filters;
    let same = |f: &FilterDecl| matches!(&f.kind, FilterKind::Cache { name: n, .. } if n == name);
    if let Some(i) = filters.iter().position(same) {
        if !filters[i].implicit {
            let px = cx.pb.px.name.clone();
            cx.alert(format!("'filter' : '{px}: multiple explicit declarations of the cache filter '{name}''"));
            return None;
        }
        filters.remove(i);
    }
    Some(FilterKind::Cache { name: name.to_owned(), index: 0 })
}

/// `filter trace [name <name>] [quiet] [random-parsing] [random-forwarding] [hexdump]`:
/// the filter and the index of the first word it did not take.
fn parse_trace(words: &[String]) -> Result<(FilterKind, usize), String> {
    let mut t = TraceFilter::default();
    let mut i = 2;
    while let Some(w) = words.get(i) {
        match w.as_str() {
            "name" => {
                let Some(v) = words.get(i + 1) else { return Err("'name' option without value".into()) };
                t.name = Some(v.clone());
                i += 1;
            }
            "quiet" => t.quiet = true,
            // accepted and ignored by HAProxy 2.6 too
            "random-parsing" => {}
            "random-forwarding" => t.random_forwarding = true,
            "hexdump" => t.hexdump = true,
            _ => break,
        }
        i += 1;
    }
    Ok((FilterKind::Trace(t), i))
}

/// The filter a `cache-use` or `cache-store` rule naming `cache` needs: declared
/// implicitly unless the proxy declared it already.
pub(crate) fn implicit_cache_filter(cx: &mut Ctx<'_>, cache: &str) {
    let filters = &mut cx.pb.px.filters;
    if !filters.iter().any(|f| matches!(&f.kind, FilterKind::Cache { name, .. } if name == cache)) {
        let kind = FilterKind::Cache { name: cache.to_owned(), index: 0 };
        filters.push(FilterDecl { kind, implicit: true, span: cx.span.clone() });
    }
}

/// Once every section is read: resolves the caches filters name, checks the order of
/// the filters, and declares the compression filter of a proxy with `compression`
/// lines and no `filter compression` (last, as HAProxy does).
pub(super) fn check_filters(p: &mut Parser) {
    for i in 0..p.proxies.len() {
        let mut errs = Vec::new();
        let pb = &mut p.proxies[i];
        let (ty, name) = (pb.kind.type_str(), pb.px.name.clone());
        for f in &mut pb.px.filters {
            if let FilterKind::Cache { name: c, index } = &mut f.kind {
                match p.caches.iter().position(|s| s.name == *c) {
                    Some(at) => *index = at,
                    None => errs.push(format!(
                        "config: {ty} '{name}': unable to find the cache '{c}' referenced by the filter 'cache'."
                    )),
                }
            }
        }
        if errs.is_empty() {
            errs.extend(order_errors(&pb.px.filters, ty, &name, &p.caches));
        }
        if errs.is_empty() && pb.px.compression.is_some() {
            errs.extend(implicit_compression(&mut pb.px.filters, &pb.px.span, ty, &name));
        }
        for e in errs {
            p.diags.push(crate::diag::Diag::alert(None, e));
        }
    }
}

/// HAProxy's `cache_store_check()`: no compression filter before a cache filter, and
/// an implicit cache filter only beside compression.
fn order_errors(filters: &[FilterDecl], ty: &str, px: &str, caches: &[crate::model::CacheSection]) -> Option<String> {
    for (i, f) in filters.iter().enumerate() {
        let FilterKind::Cache { index, .. } = &f.kind else { continue };
        let cache = caches.get(*index).map_or("", |c| c.name.as_str());
        let before = &filters[..i];
        if before.iter().any(|b| b.kind == FilterKind::Compression) {
            return Some(format!(
                "config: {ty} '{px}': unable to enable the compression filter before the cache '{cache}'."
            ));
        }
        let others = filters.iter().any(|o| matches!(o.kind, FilterKind::Trace(_)));
        if f.implicit && others {
            return Some(format!(
                "config: {ty} '{px}': require an explicit filter declaration to use the cache '{cache}'."
            ));
        }
    }
    None
}

/// HAProxy's `check_implicit_http_comp_flt()`.
fn implicit_compression(filters: &mut Vec<FilterDecl>, span: &Span, ty: &str, px: &str) -> Option<String> {
    if filters.iter().any(|f| f.kind == FilterKind::Compression) {
        return None;
    }
    if filters.iter().any(|f| matches!(f.kind, FilterKind::Trace(_))) {
        return Some(format!("config: {ty} '{px}': require an explicit filter declaration to use HTTP compression"));
    }
    filters.push(FilterDecl { kind: FilterKind::Compression, implicit: true, span: span.clone() });
    None
}

#[cfg(test)]
mod tests {
    use crate::model::{CompAlgo, FilterKind};
    use crate::parse::tests::{alerts, parse_ok, warnings};

    const HEAD: &str = "defaults\n mode http\n";

    #[test]
    fn compression_lines_build_the_lists_as_haproxy_does() {
        let cfg = parse_ok(&format!(
            "{HEAD} compression algo gzip\nbackend b\n compression algo deflate br\n compression type text/html text/plain\n compression offload\n"
        ));
        let c = cfg.proxies[0].compression.as_ref().unwrap();
        // each word is prepended, onto what `defaults` gave
        assert_eq!(c.algos, [CompAlgo::Brotli, CompAlgo::Deflate, CompAlgo::Gzip]);
        assert_eq!(c.types, ["text/plain", "text/html"]);
        assert!(c.offload);
        // declared implicitly, last
        assert_eq!(cfg.proxies[0].filters.last().map(|f| &f.kind), Some(&FilterKind::Compression));
    }

    #[test]
    fn bad_compression_and_filter_lines_get_haproxys_messages() {
        let got = alerts(&format!(
            "{HEAD}frontend f\n bind :80\n compression algo\n compression algo foo\n compression type\n compression bar\n\
             filter\n filter foo\n filter trace name\n filter compression x\n filter cache\n filter compression\n filter compression\n"
        ));
        let at = |l: u32| format!("parsing [t.cfg:{l}] : ");
        assert_eq!(got[0], format!("{}'compression' expects <algorithm>.", at(5)));
        assert_eq!(got[1], "'compression' : 'foo' is not a supported algorithm.");
        assert_eq!(got[2], "'compression' expects <type>.");
        assert_eq!(got[3], "'compression' expects 'algo', 'type' or 'offload'");
        assert_eq!(got[4], format!("{}missing argument for 'filter' in frontend 'f'.", at(9)));
        assert!(got[5].starts_with("'filter' : unknown keyword 'foo'. Registered keywords :"), "{}", got[5]);
        assert_eq!(got[6], "'filter' : ''trace' : 'name' option without value'");
        assert_eq!(got[7], "'filter compression' : unknown keyword 'x'.");
        assert_eq!(got[8], "'filter' : 'cache : expects a <name> argument'");
        assert_eq!(got[9], "'filter' : 'f: Proxy supports only one compression filter\n'");
        let w = warnings(&format!("{HEAD} compression offload\n"));
        assert!(w.iter().any(|m| m == "'compression' : 'offload' ignored in 'defaults' section."), "{w:?}");
    }

    #[test]
    fn filters_are_checked_once_every_section_is_read() {
        let alerts = |text: &str| -> Vec<String> {
            let (_, diags) = crate::parse::tests::parse(text);
            diags.list.iter().filter(|d| d.level == crate::diag::Level::Alert).map(|d| d.message.clone()).collect()
        };
        let got = alerts(&format!("{HEAD}backend b\n filter cache nope\n"));
        assert!(
            got.iter()
                .any(|m| m == "config: backend 'b': unable to find the cache 'nope' referenced by the filter 'cache'."),
            "{got:?}"
        );
        let got =
            alerts(&format!("{HEAD}backend b\n filter compression\n filter cache c\ncache c\n total-max-size 1\n"));
        assert!(
            got.iter()
                .any(|m| m == "config: backend 'b': unable to enable the compression filter before the cache 'c'."),
            "{got:?}"
        );
        let got = alerts(&format!("{HEAD}backend b\n filter trace\n compression algo gzip\n"));
        assert!(
            got.iter()
                .any(|m| m == "config: backend 'b': require an explicit filter declaration to use HTTP compression"),
            "{got:?}"
        );
    }

    #[test]
    fn trace_options_are_read() {
        let cfg = parse_ok(&format!(
            "{HEAD}backend b\n filter trace name T random-parsing random-forwarding hexdump quiet\n"
        ));
        let FilterKind::Trace(t) = &cfg.proxies[0].filters[0].kind else { panic!() };
        assert_eq!((t.name.as_deref(), t.random_forwarding, t.hexdump, t.quiet), (Some("T"), true, true, true));
    }
}
