//! Global keywords of real configurations that name the process (`node`,
//! `description`), make warnings fatal (`zero-warning`), pace accepts (`maxconnrate`,
//! `maxsessrate`), turn off splicing or `SO_REUSEPORT` (`nosplice`, `noreuseport`), or tune what rampart does its own way (pollers, accept batches,
//! idle pools): those are accepted with a one-line warning saying so, or, when
//! rampart behaves as the keyword asks anyway, without one (the keyword table says it).
//! `tune.pool-low-fd-ratio`/`tune.pool-high-fd-ratio` set the idle connections' budget
//! (`conn_pool::set_fd_budget`).
//! HAProxy counterpart: their branches of `cfg_parse_global()` (src/cfgparse-global.c),
//! `cfg_parse_pool_fd_ratio()` (src/server.c).

use crate::span::Span;

use super::global::{time_error, too_many};
use super::value::{atol, parse_time_ms, TimeError};
use super::{arg, Parser};

/// Whether `word` is one of this file's keywords.
pub(super) fn is_misc_kw(word: &str) -> bool {
    matches!(
        word,
        "node"
            | "description"
            | "zero-warning"
            | "maxconnrate"
            | "maxsessrate"
            | "maxsslconn"
            | "maxsslrate"
            | "close-spread-time"
            | "insecure-setuid-wanted"
            | "noepoll"
            | "nopoll"
            | "nogetaddrinfo"
            | "tune.maxaccept"
            | "tune.maxpollevents"
            | "tune.idletimer"
            | "tune.pool-low-fd-ratio"
            | "tune.pool-high-fd-ratio"
            | "fd-hard-limit"
            | "nosplice"
            | "noreuseport"
            | "h1-case-adjust"
            | "h1-case-adjust-file"
    )
}

pub(super) fn parse_misc_kw(p: &mut Parser, words: &[String], span: &Span) {
    let kw = words[0].as_str();
    match kw {
        "node" => parse_node(p, words, span),
        "description" if arg(words, 1).is_empty() => p.alert(span, "'description' expects a string argument."),
        "description" => p.global.description = Some(words[1..].join(" ")),
        "zero-warning" if !too_many(p, words, 0, span) => p.global.zero_warning = true,
        // rampart never sets PR_SET_NO_NEW_PRIVS: what this keyword asks for (HAProxy
        // 2.6 refuses `no insecure-setuid-wanted`, as the dispatcher does)
        "insecure-setuid-wanted" => {
            too_many(p, words, 0, span);
        }
        // HAProxy picks epoll on Linux before poll: turning poll off changes nothing
        "nopoll" => {
            too_many(p, words, 0, span);
        }
        "noepoll" if !too_many(p, words, 0, span) => {
            no_effect(p, span, kw, "its event loop always uses epoll on Linux")
        }
        "nogetaddrinfo" if !too_many(p, words, 0, span) => {
            no_effect(p, span, kw, "names are resolved with the system's getaddrinfo()")
        }
        "nosplice" if !too_many(p, words, 0, span) => p.global.nosplice = true,
        "noreuseport" if !too_many(p, words, 0, span) => p.global.noreuseport = true,
        "h1-case-adjust" => parse_case_adjust(p, words, span),
        "h1-case-adjust-file" => parse_case_adjust_file(p, words, span),
        "maxconnrate" | "maxsessrate" | "maxsslrate" => parse_rate(p, words, span),
        "maxsslconn" => parse_maxsslconn(p, words, span),
        "close-spread-time" => parse_close_spread(p, words, span),
        "tune.maxaccept" | "tune.maxpollevents" => parse_tune_int(p, words, span),
        "tune.idletimer" => parse_idletimer(p, words, span),
        "tune.pool-low-fd-ratio" | "tune.pool-high-fd-ratio" => parse_fd_ratio(p, words, span),
        "fd-hard-limit" => parse_fd_hard_limit(p, words, span),
        _ => {}
    }
}

fn no_effect(p: &mut Parser, span: &Span, kw: &str, why: &str) {
    p.warning(span, format!("'{kw}' is accepted but has no effect in rampart ({why}); ignored."));
}

/// `h1-case-adjust <from> <to>`.
fn parse_case_adjust(p: &mut Parser, words: &[String], span: &Span) {
    if too_many(p, words, 2, span) {
        return;
    }
    let (from, to) = (arg(words, 1), arg(words, 2));
    if from.is_empty() || to.is_empty() {
        return p.alert(span, "'h1-case-adjust' expects <from> and <to> as argument.");
    }
    if let Err(e) = add_case_adjust(&mut p.global.h1_case_adjust, from, to) {
        p.alert(span, e);
    }
}

/// `h1-case-adjust-file <file>`: a `<from> <to>` pair per line, `#` comments. Read
/// now, with the configuration (HAProxy reads it once the configuration is parsed).
fn parse_case_adjust_file(p: &mut Parser, words: &[String], span: &Span) {
    if too_many(p, words, 1, span) {
        return;
    }
    let path = arg(words, 1);
    if path.is_empty() {
        return p.alert(span, "'h1-case-adjust-file' expects <file> as argument.");
    }
    let Ok(text) = std::fs::read_to_string(path) else {
        return p.alert(span, format!("h1-headers-case-adjust-file '{path}': failed to open file."));
    };
    for (n, line) in text.lines().enumerate() {
        let line = line.trim_start_matches([' ', '\t']);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (from, rest) = line.split_once([' ', '\t']).unwrap_or((line, ""));
        let to = rest.trim_matches([' ', '\t', '\r']);
        if let Err(e) = add_case_adjust(&mut p.global.h1_case_adjust, from, to) {
            return p.alert(span, format!("h1-headers-case-adjust-file '{path}' : {e} at line {}.", n + 1));
        }
    }
}

/// One pair, checked as HAProxy's `add_hdr_case_adjust()` does (its words).
fn add_case_adjust(map: &mut Vec<(String, String)>, from: &str, to: &str) -> Result<(), String> {
    if to.is_empty() {
        return Err("expect <to>".into());
    }
    if !from.eq_ignore_ascii_case(to) {
        return Err("<from> and <to> must not differ execpt the case".into());
    }
    if map.iter().any(|(f, _)| f == from) {
        return Err(format!("duplicate entry '{from}'"));
    }
    map.push((from.to_owned(), to.to_owned()));
    Ok(())
}

/// `node <name>`: letters, digits, `.`, `-`, `_`.
fn parse_node(p: &mut Parser, words: &[String], span: &Span) {
    if too_many(p, words, 1, span) {
        return;
    }
    let name = arg(words, 1);
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    if name.is_empty() || !name.chars().all(ok) {
        return p.alert(
            span,
            "'node' requires valid node name - non-empty string with digits(0-9), letters(A-Z, a-z), dot(.), \
             hyphen(-) or underscode(_).",
        );
    }
    p.global.node = Some(name.to_owned());
}

/// `maxconnrate <n>` / `maxsessrate <n>` / `maxsslrate <n>`, read with `atol()`.
fn parse_rate(p: &mut Parser, words: &[String], span: &Span) {
    let kw = words[0].as_str();
    if too_many(p, words, 1, span) {
        return;
    }
    let slot = match kw {
        "maxconnrate" => p.global.maxconnrate,
        "maxsessrate" => p.global.maxsessrate,
        _ => p.global.maxsslrate,
    };
    if slot != 0 {
        return p.alert(span, format!("'{kw}' already specified. Continuing."));
    }
    if arg(words, 1).is_empty() {
        return p.alert(span, format!("'{kw}' expects an integer argument."));
    }
    let v = u32::try_from(atol(arg(words, 1))).unwrap_or(0);
    match kw {
        "maxconnrate" => p.global.maxconnrate = v,
        "maxsessrate" => p.global.maxsessrate = v,
        _ => p.global.maxsslrate = v,
    }
}

/// `maxsslconn <n>`, read with `atoi()` (HAProxy's `ssl_parse_global_int()`).
fn parse_maxsslconn(p: &mut Parser, words: &[String], span: &Span) {
    let kw = words[0].as_str();
    if too_many(p, words, 1, span) {
        return;
    }
    if arg(words, 1).is_empty() {
        return p.alert(span, format!("'{kw}' expects an integer argument."));
    }
    let v = atol(arg(words, 1)).clamp(i32::MIN.into(), i32::MAX.into()) as i32;
    match u32::try_from(v) {
        Ok(v) => p.global.maxsslconn = v,
        Err(_) => p.alert(span, format!("'{kw}' expects a positive numeric value.")),
    }
}

/// `close-spread-time <time>|infinite` (the last one wins; 0 is as if unset).
fn parse_close_spread(p: &mut Parser, words: &[String], span: &Span) {
    let kw = words[0].as_str();
    let text = arg(words, 1);
    if text.is_empty() {
        return p.alert(span, format!("'{kw}' expects <time> as argument."));
    }
    if text == "infinite" {
        p.global.close_spread = crate::model::CloseSpread::Never;
        return;
    }
    match parse_time_ms(text) {
        Ok(ms) => {
            p.global.close_spread =
                ms.duration().map_or(crate::model::CloseSpread::AtOnce, crate::model::CloseSpread::Window);
        }
        Err(e) => time_error(p, span, kw, text, e),
    }
}

/// `tune.maxaccept <n>` / `tune.maxpollevents <n>`: checked, then a warning.
fn parse_tune_int(p: &mut Parser, words: &[String], span: &Span) {
    let kw = words[0].as_str();
    if too_many(p, words, 1, span) {
        return;
    }
    if arg(words, 1).is_empty() {
        return p.alert(span, format!("'{kw}' expects an integer argument."));
    }
    if kw == "tune.maxaccept" && atol(arg(words, 1)) > i64::from(i32::MAX) {
        return p.alert(span, format!("'{kw}' expects -1 or an integer from 0 to INT_MAX."));
    }
    let why = if kw == "tune.maxaccept" {
        "each listener accepts up to 64 connections per wake-up"
    } else {
        "the event loop sizes its own batches of events"
    };
    no_effect(p, span, kw, why);
}

/// `tune.idletimer <time>` (0..65535 ms).
fn parse_idletimer(p: &mut Parser, words: &[String], span: &Span) {
    let kw = words[0].as_str();
    if too_many(p, words, 1, span) {
        return;
    }
    let text = arg(words, 1);
    let bad = || format!("'{kw}' expects a timer value between 0 and 65535 ms.");
    if text.is_empty() {
        return p.alert(span, bad());
    }
    match parse_time_ms(text) {
        Ok(t) if t.ms <= 65535 => {
            no_effect(p, span, kw, "it does not grow its buffers on idle streams, so has nothing to time")
        }
        Ok(_) | Err(TimeError::Overflow) => {
            p.alert(span, format!("timer overflow in argument <{text}> to <{kw}>, maximum value is 65535 ms."))
        }
        Err(TimeError::Underflow) => {
            p.alert(span, format!("timer underflow in argument <{text}> to <{kw}>, minimum non-null value is 1 ms."))
        }
        Err(TimeError::BadChar(c)) => p.alert(span, format!("unexpected character '{c}' in argument to <{kw}>.")),
    }
}

/// `tune.pool-low-fd-ratio <pct>` / `tune.pool-high-fd-ratio <pct>` (0..100).
fn parse_fd_ratio(p: &mut Parser, words: &[String], span: &Span) {
    let kw = words[0].as_str();
    if too_many(p, words, 1, span) {
        return;
    }
    let v = atol(arg(words, 1));
    if arg(words, 1).is_empty() || !(0..=100).contains(&v) {
        return p.alert(span, format!("'{kw}' expects an integer argument between 0 and 100."));
    }
    let v = v as u8; // 0..=100
    if kw == "tune.pool-low-fd-ratio" {
        p.global.pool_fd_ratios.0 = v;
    } else {
        p.global.pool_fd_ratios.1 = v;
    }
}

/// `fd-hard-limit <n>`.
fn parse_fd_hard_limit(p: &mut Parser, words: &[String], span: &Span) {
    if too_many(p, words, 1, span) {
        return;
    }
    if arg(words, 1).is_empty() {
        return p.alert(span, "'fd-hard-limit' expects an integer argument.");
    }
    no_effect(
        p,
        span,
        "fd-hard-limit",
        "it raises the descriptor limit only to what maxconn or ulimit-n need, never to the hard limit",
    );
}

#[cfg(test)]
mod tests {
    use crate::parse::tests::{alerts, parse_ok, warnings};

    #[test]
    fn naming_and_rates_are_read() {
        let g = parse_ok(
            "global\n node lb-1.eu_west\n description two   words\n zero-warning\n maxconnrate 50\n maxsessrate 7\n",
        )
        .global;
        assert_eq!((g.node.as_deref(), g.description.as_deref()), (Some("lb-1.eu_west"), Some("two words")));
        assert!(g.zero_warning);
        assert_eq!((g.maxconnrate, g.maxsessrate), (50, 7));
    }

    #[test]
    fn tls_limits_and_close_spread_are_read() {
        use crate::model::CloseSpread;
        let g = parse_ok("global\n maxsslconn 20\n maxsslrate 5\n close-spread-time 2s\n").global;
        assert_eq!(
            (g.maxsslconn, g.maxsslrate, g.close_spread),
            (20, 5, CloseSpread::Window(std::time::Duration::from_secs(2)))
        );
        let spread = |v: &str| parse_ok(&format!("global\n close-spread-time {v}\n")).global.close_spread;
        assert_eq!(spread("infinite"), CloseSpread::Never);
        assert_eq!(spread("0"), CloseSpread::AtOnce);
        assert_eq!(parse_ok("global\n").global.close_spread, CloseSpread::AtOnce);
        assert_eq!(
            alerts("global\n maxsslconn -1\n maxsslconn\n maxsslrate 1\n maxsslrate 2\n close-spread-time\n close-spread-time 5x\n"),
            [
                "'maxsslconn' expects a positive numeric value.",
                "'maxsslconn' expects an integer argument.",
                "'maxsslrate' already specified. Continuing.",
                "'close-spread-time' expects <time> as argument.",
                "unexpected character 'x' in argument to <close-spread-time>."
            ]
        );
    }

    #[test]
    fn keywords_without_effect_say_so_in_one_line() {
        let w = warnings(
            "global\n noepoll\n nopoll\n nogetaddrinfo\n insecure-setuid-wanted\n\
             tune.maxaccept 100\n tune.maxpollevents 200\n tune.idletimer 1s\n tune.pool-low-fd-ratio 20\n\
             tune.pool-high-fd-ratio 25\n fd-hard-limit 50000\n",
        );
        let kws: Vec<&str> = w.iter().map(|l| l.split('\'').nth(1).unwrap_or_default()).collect();
        assert_eq!(
            kws,
            ["noepoll", "nogetaddrinfo", "tune.maxaccept", "tune.maxpollevents", "tune.idletimer", "fd-hard-limit"]
        );
        assert!(w
            .iter()
            .all(|l| l.contains("is accepted but has no effect in rampart (") && l.ends_with("; ignored.")));
    }

    #[test]
    fn pool_fd_ratios_are_kept() {
        let ratios = |text: &str| parse_ok(text).global.pool_fd_ratios;
        assert_eq!(
            ratios(
                "global
"
            ),
            (20, 25)
        );
        assert_eq!(
            ratios(
                "global
 tune.pool-low-fd-ratio 5
 tune.pool-high-fd-ratio 100
"
            ),
            (5, 100)
        );
    }

    #[test]
    fn bad_values_get_haproxys_messages() {
        let one = |l: &str| alerts(&format!("global\n{l}")).join("\n");
        assert_eq!(
            one(" node a/b\n"),
            "'node' requires valid node name - non-empty string with digits(0-9), letters(A-Z, a-z), dot(.), \
             hyphen(-) or underscode(_)."
        );
        assert_eq!(one(" description\n"), "'description' expects a string argument.");
        assert_eq!(one(" maxconnrate\n"), "'maxconnrate' expects an integer argument.");
        assert_eq!(one(" maxconnrate 5\n maxconnrate 6\n"), "'maxconnrate' already specified. Continuing.");
        assert_eq!(one(" zero-warning 1\n"), "'zero-warning' cannot handle unexpected argument '1'.");
        assert_eq!(one(" tune.maxaccept\n"), "'tune.maxaccept' expects an integer argument.");
        assert_eq!(
            one(" tune.idletimer 70s\n"),
            "timer overflow in argument <70s> to <tune.idletimer>, maximum value is 65535 ms."
        );
        assert_eq!(
            one(" tune.pool-low-fd-ratio 101\n"),
            "'tune.pool-low-fd-ratio' expects an integer argument between 0 and 100."
        );
        assert_eq!(one(" fd-hard-limit\n"), "'fd-hard-limit' expects an integer argument.");
    }
}
