//! Global tuning keywords common in real configurations: `busy-polling`,
//! `ssl-mode-async`, `tune.fd.edge-triggered`, `tune.pipesize`, `tune.http.maxhdr`, `tune.zlib.memlevel`,
//! `max-spread-checks`. Checked with HAProxy 2.6's messages; what each changes in
//! rampart is said in the keyword table (`kw::tables`).
//! HAProxy counterparts: `cfg_parse_global()` (src/cfgparse-global.c),
//! `ssl_parse_global_ssl_async()` (src/cfgparse-ssl.c),
//! `cfg_parse_tune_fd_edge_triggered()` (src/fd.c), `zlib_parse_global_memlevel()`
//! (src/compression.c).

use std::time::Duration;

use crate::span::Span;

use super::global::too_many;
use super::value::{atol, parse_time_ms, TimeError};
use super::{arg, Modifier, Parser};

/// Whether `word` is one of this file's keywords.
pub(super) fn is_tune_kw(word: &str) -> bool {
    matches!(
        word,
        "busy-polling"
            | "ssl-mode-async"
            | "tune.fd.edge-triggered"
            | "tune.pipesize"
            | "tune.http.cookielen"
            | "tune.http.logurilen"
            | "tune.http.maxhdr"
            | "tune.zlib.memlevel"
            | "max-spread-checks"
    )
}

pub(super) fn parse_tune_kw(p: &mut Parser, words: &[String], kwm: Modifier, span: &Span) {
    match words[0].as_str() {
        "busy-polling" => {
            if !too_many(p, words, 0, span) {
                p.global.busy_polling = kwm != Modifier::No;
                if p.global.busy_polling {
                    no_effect(p, span, "busy-polling", "an idle rampart thread sleeps in epoll_wait");
                }
            }
        }
        // HAProxy reads no argument and looks at none
        "ssl-mode-async" => {
            p.global.ssl_mode_async = true;
            no_effect(p, span, "ssl-mode-async", "rustls has no asynchronous crypto engine");
        }
        "tune.fd.edge-triggered" => parse_edge_triggered(p, words, span),
        "tune.pipesize" => parse_pipesize(p, words, span),
        "tune.http.cookielen" | "tune.http.logurilen" => parse_http_len(p, words, span),
        "tune.http.maxhdr" => parse_maxhdr(p, words, span),
        "tune.zlib.memlevel" => parse_zlib_memlevel(p, words, span),
        _ => parse_max_spread_checks(p, words, span),
    }
}

/// The one-line warning for a global accepted for compatibility that changes nothing,
/// in the shape of HAProxy's warnings for keywords it ignores.
fn no_effect(p: &mut Parser, span: &Span, kw: &str, why: &str) {
    p.warning(span, format!("'{kw}' is accepted but has no effect in rampart ({why}); ignored."));
}

/// `tune.fd.edge-triggered on|off`, an experimental directive.
fn parse_edge_triggered(p: &mut Parser, words: &[String], span: &Span) {
    let kw = &words[0];
    if !p.global.expose_experimental {
        let msg =
            format!("'{kw}' directive is experimental, must be allowed via a global 'expose-experimental-directives'");
        return p.alert(span, msg);
    }
    if let Some(extra) = words.get(2) {
        return p.alert(span, format!("'{kw}' cannot handle unexpected argument '{extra}'."));
    }
    match arg(words, 1) {
        "on" => p.global.fd_edge_triggered = true,
        "off" => p.global.fd_edge_triggered = false,
        other => return p.alert(span, format!("'{kw}' expects either 'on' or 'off' but got '{other}'.")),
    }
    no_effect(p, span, kw, "its event loop always registers descriptors edge-triggered");
}

/// `tune.pipesize <bytes>`, read as C's `atol()` (0: the system's default).
fn parse_pipesize(p: &mut Parser, words: &[String], span: &Span) {
    if too_many(p, words, 1, span) {
        return;
    }
    let text = arg(words, 1);
    if text.is_empty() {
        return p.alert(span, "'tune.pipesize' expects an integer argument.");
    }
    p.global.pipesize = usize::try_from(atol(text)).ok().filter(|&n| n > 0);
}

/// `tune.http.cookielen <n>` (the longest `capture cookie` value kept) and
/// `tune.http.logurilen <n>` (the longest request line a log record keeps): `n` bytes,
/// as HAProxy reads them (atol, so a negative or bad value keeps nothing).
fn parse_http_len(p: &mut Parser, words: &[String], span: &Span) {
    if too_many(p, words, 1, span) {
        return;
    }
    let (kw, text) = (&words[0], arg(words, 1));
    if text.is_empty() {
        return p.alert(span, format!("'{kw}' expects an integer argument."));
    }
    let n = usize::try_from(atol(text)).unwrap_or(0);
    if kw == "tune.http.cookielen" {
        p.global.http_cookie_len = Some(n);
    } else {
        p.global.http_log_uri_len = Some(n);
    }
}

/// `tune.http.maxhdr <1..32767>`: the header fields of a message, start line included.
fn parse_maxhdr(p: &mut Parser, words: &[String], span: &Span) {
    if too_many(p, words, 1, span) {
        return;
    }
    let (kw, text) = (&words[0], arg(words, 1));
    if text.is_empty() {
        return p.alert(span, format!("'{kw}' expects an integer argument."));
    }
    match u16::try_from(atol(text)) {
        Ok(n @ 1..=32767) => p.global.http_maxhdr = Some(n),
        _ => p.alert(span, format!("'{kw}' expects a numeric value between 1 and 32767")),
    }
}

/// `tune.zlib.memlevel <1..9>`.
fn parse_zlib_memlevel(p: &mut Parser, words: &[String], span: &Span) {
    let kw = &words[0];
    if let Some(extra) = words.get(2) {
        return p.alert(span, format!("'{kw}' cannot handle unexpected argument '{extra}'."));
    }
    let v = atol(arg(words, 1));
    if arg(words, 1).is_empty() || !(1..=9).contains(&v) {
        return p.alert(span, format!("'{kw}' expects a numeric value between 1 and 9."));
    }
    p.global.zlib_memlevel = v as u8;
}

/// `max-spread-checks <delay>`: the most the first checks are spread over.
fn parse_max_spread_checks(p: &mut Parser, words: &[String], span: &Span) {
    if too_many(p, words, 1, span) {
        return;
    }
    let text = arg(words, 1);
    if text.is_empty() {
        return p.alert(span, "'max-spread-checks' expects an integer argument (0..50).");
    }
    match parse_time_ms(text) {
        Ok(t) => p.global.max_spread_checks = Some(Duration::from_millis(u64::from(t.ms))).filter(|d| !d.is_zero()),
        Err(TimeError::Overflow) => p.alert(
            span,
            format!(
                "timer overflow in argument <{text}> to <max-spread-checks>, maximum value is 2147483647 ms \
                 (~24.8 days)."
            ),
        ),
        Err(TimeError::Underflow) => p.alert(
            span,
            format!("timer underflow in argument <{text}> to <max-spread-checks>, minimum non-null value is 1 ms."),
        ),
        Err(TimeError::BadChar(c)) => {
            p.alert(span, format!("unsupported character '{c}' in 'max-spread-checks' (wants an integer delay)."))
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::tests::{alerts, parse_ok, warnings};

    #[test]
    fn tuning_keywords_are_read() {
        let g = parse_ok(
            "global\n busy-polling\n ssl-mode-async\n expose-experimental-directives\n tune.fd.edge-triggered on\n\
             tune.pipesize 262144\n tune.zlib.memlevel 9\n max-spread-checks 2s\n",
        )
        .global;
        assert!(g.busy_polling && g.ssl_mode_async && g.fd_edge_triggered);
        assert_eq!(g.pipesize, Some(262144));
        assert_eq!(g.zlib_memlevel, 9);
        assert_eq!(g.max_spread_checks, Some(std::time::Duration::from_secs(2)));
        assert!(!parse_ok("global\n busy-polling\n no busy-polling\n").global.busy_polling);
    }

    #[test]
    fn no_effect_globals_warn_one_line_each() {
        let w = warnings(
            "global\n busy-polling\n ssl-mode-async\n expose-experimental-directives\n tune.fd.edge-triggered off\n",
        );
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[0].starts_with("'busy-polling' is accepted but has no effect in rampart ("), "{w:?}");
        assert!(w[1].starts_with("'ssl-mode-async' is accepted but has no effect"), "{w:?}");
        assert!(w[2].starts_with("'tune.fd.edge-triggered' is accepted but has no effect"), "{w:?}");
        assert!(w.iter().all(|l| !l.contains('\n') && l.ends_with("; ignored.")));
        assert!(warnings("global\n no busy-polling\n").is_empty());
    }

    #[test]
    fn bad_values_get_haproxys_messages() {
        let one = |l: &str| alerts(&format!("global\n{l}")).join("\n");
        assert_eq!(one(" tune.zlib.memlevel 10\n"), "'tune.zlib.memlevel' expects a numeric value between 1 and 9.");
        assert_eq!(
            one(" tune.fd.edge-triggered on\n"),
            "'tune.fd.edge-triggered' directive is experimental, must be allowed via a global \
             'expose-experimental-directives'"
        );
        assert_eq!(
            one(" expose-experimental-directives\n tune.fd.edge-triggered yes\n"),
            "'tune.fd.edge-triggered' expects either 'on' or 'off' but got 'yes'."
        );
        assert_eq!(one(" tune.pipesize\n"), "'tune.pipesize' expects an integer argument.");
        assert_eq!(
            one(" max-spread-checks 1x\n"),
            "unsupported character 'x' in 'max-spread-checks' (wants an integer delay)."
        );
        assert_eq!(one(" busy-polling 1\n"), "'busy-polling' cannot handle unexpected argument '1'.");
    }
}
