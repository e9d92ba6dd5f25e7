//! The global limits of HTTP compression: `maxcomprate`, `maxcompcpuusage`,
//! `maxzlibmem`. HAProxy counterpart: `cfg_parse_global()` (src/cfgparse-global.c).

use crate::span::Span;

use super::global::too_many;
use super::value::atol;
use super::{arg, Parser};

/// `maxcomprate <kB/s>`, `maxcompcpuusage <0..100>`, `maxzlibmem <MB>`, read as C's
/// `atoi()`/`atol()` as HAProxy 2.6 does.
pub(super) fn parse_comp_limit(p: &mut Parser, words: &[String], span: &Span) {
    if too_many(p, words, 1, span) {
        return;
    }
    let word = words[0].as_str();
    let text = arg(words, 1);
    if text.is_empty() {
        let what = match word {
            "maxcomprate" => "an integer argument in kb/s",
            "maxcompcpuusage" => "an integer argument between 0 and 100",
            _ => "an integer argument",
        };
        p.alert(span, format!("'{word}' expects {what}."));
        return;
    }
    let v = atol(text);
    match word {
        // COMPAT: HAProxy stores `atoi() * 1024` in an int; a negative value there
        // means no limit, as 0 does
        "maxcomprate" => p.global.comp_rate_lim = u64::try_from(v).unwrap_or(0).saturating_mul(1024),
        "maxcompcpuusage" => match v {
            0..=100 => p.global.comp_min_idle = 100 - v as u32,
            _ => p.alert(span, format!("'{word}' expects an integer argument between 0 and 100.")),
        },
        _ => p.global.maxzlibmem = u64::try_from(v).unwrap_or(0).saturating_mul(1024 * 1024),
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::tests::{alerts, parse_ok};

    #[test]
    fn limits_are_read_in_haproxys_units() {
        let cfg = parse_ok("global\n maxcomprate 100\n maxcompcpuusage 90\n maxzlibmem 10\n");
        assert_eq!(cfg.global.comp_rate_lim, 102_400);
        assert_eq!(cfg.global.comp_min_idle, 10);
        assert_eq!(cfg.global.maxzlibmem, 10 << 20);
        let cfg = parse_ok("global\n maxcomprate -3\n");
        assert_eq!(cfg.global.comp_rate_lim, 0);
    }

    #[test]
    fn bad_values_get_haproxys_messages() {
        assert_eq!(
            alerts("global\n maxcompcpuusage 101\n maxcomprate\n maxzlibmem\n"),
            [
                "'maxcompcpuusage' expects an integer argument between 0 and 100.",
                "'maxcomprate' expects an integer argument in kb/s.",
                "'maxzlibmem' expects an integer argument."
            ]
        );
    }
}
