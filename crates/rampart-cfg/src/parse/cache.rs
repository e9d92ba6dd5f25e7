//! `cache <name>` sections: `total-max-size`, `max-object-size`, `max-age`,
//! `process-vary`, `max-secondary-entries`, and their checks once the section ends.
//!
//! HAProxy counterpart: `cfg_parse_cache()` and `cfg_post_parse_section_cache()`
//! (src/cache.c). Messages are HAProxy's; where HAProxy only warns but stops loading
//! (`ERR_ABORT` with a warning), rampart does the same: the warning, then a refusal.

use crate::diag::Diag;
use crate::model::CacheSection;
use crate::span::Span;

use super::value::atol;
use super::{arg, too_many_args, Parser};

/// The most `total-max-size` may say, in megabytes (`UINT_MAX >> 20`).
const MAX_MEGABYTES: u64 = (u32::MAX >> 20) as u64;

/// `cache <name>`: the index of the new section, `None` when refused.
pub(super) fn open_cache(p: &mut Parser, words: &[String], span: &Span) -> Option<usize> {
    let name = arg(words, 1);
    if name.is_empty() {
        p.alert(span, "'cache' expects a <name> argument");
        return None;
    }
    if let Some(extra) = words.get(2) {
        p.alert(span, too_many_args("cache", extra));
        return None;
    }
    let mut name = name.to_owned();
    if name.len() > 32 {
        name.truncate(32);
        p.warning(span, format!("cache name is limited to 32 characters, truncate to '{name}'."));
    }
    if p.caches.iter().any(|c| c.name == name) {
        p.alert(span, format!("Duplicate cache name '{name}'."));
        return None;
    }
    p.caches.push(CacheSection {
        name,
        total_max_size: 0,
        max_object_size: 0,
        max_age: 60,
        process_vary: false,
        max_secondary_entries: 10,
        span: span.clone(),
    });
    Some(p.caches.len() - 1)
}

/// What a line of a cache section did wrong.
enum Bad {
    /// HAProxy warns and goes on.
    Warn(String),
    /// HAProxy warns and refuses the configuration (`ERR_ABORT`).
    Abort(String),
    Alert(String),
}

/// A line inside cache `idx`.
pub(super) fn parse_cache_line(p: &mut Parser, idx: usize, words: &[String], span: &Span) {
    let word = words[0].as_str();
    if let Some(extra) = words.get(2).filter(|_| word != "cache") {
        p.alert(span, too_many_args(word, extra));
        return;
    }
    let c = &mut p.caches[idx];
    let v = arg(words, 1);
    let bad = match word {
        "total-max-size" => match strtoul(v) {
            None => Some(Bad::Abort(format!("total-max-size wrong value '{v}'"))),
            Some(mb) if mb > MAX_MEGABYTES => {
                Some(Bad::Abort(format!("\"total-max-size\" ({v}) must not be greater than {MAX_MEGABYTES}")))
            }
            Some(mb) => {
                c.total_max_size = mb << 20;
                None
            }
        },
        "max-age" => {
            c.max_age = atol(v).clamp(0, i64::from(i32::MAX)) as u32;
            v.is_empty().then(|| Bad::Warn(format!("'{word}' expects an age parameter in seconds.")))
        }
        "max-object-size" => match strtoul(v) {
            Some(n) => {
                c.max_object_size = n;
                None
            }
            None => Some(Bad::Abort(format!("max-object-size wrong value '{v}'"))),
        },
        "process-vary" => match v {
            "on" | "off" => {
                c.process_vary = v == "on";
                None
            }
            _ => Some(Bad::Warn(format!("'{word}' expects \"on\" or \"off\" (enable or disable vary processing)."))),
        },
        "max-secondary-entries" => match strtoul(v).filter(|&n| n > 0 && n <= u64::from(u32::MAX)) {
            Some(n) => {
                c.max_secondary_entries = n as u32;
                None
            }
            None => Some(Bad::Abort(format!("max-secondary-entries wrong value '{v}'"))),
        },
        other => Some(Bad::Alert(format!("unknown keyword '{other}' in 'cache' section"))),
    };
    match bad {
        None => {}
        Some(Bad::Warn(m)) => p.warning(span, m),
        Some(Bad::Abort(m)) => {
            p.warning(span, m);
            p.alert(span, "Error(s) found in 'cache' section: the configuration is refused.");
        }
        Some(Bad::Alert(m)) => p.alert(span, m),
    }
}

/// C's `strtoul()` over the whole word: `None` for an empty word or trailing garbage.
fn strtoul(v: &str) -> Option<u64> {
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    v.parse().ok()
}

/// Once every section is read: a size is mandatory, `max-object-size` at most half
/// of it.
pub(super) fn check_caches(caches: &[CacheSection], out: &mut Vec<Diag>) {
    for c in caches {
        if c.total_max_size == 0 {
            out.push(Diag::alert(Some(c.span.clone()), format!("Size not specified for cache '{}'", c.name)));
        } else if c.max_object_size > c.total_max_size / 2 {
            let half = c.total_max_size / 2;
            out.push(Diag::alert(
                Some(c.span.clone()),
                format!("\"max-object-size\" is limited to an half of \"total-max-size\" => {half}"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::tests::{alerts, parse_ok, warnings};

    #[test]
    fn a_cache_section_is_read_with_its_defaults() {
        let cfg = parse_ok("cache c\n total-max-size 4\n max-age 240\n process-vary on\n max-secondary-entries 3\n");
        let c = &cfg.caches[0];
        assert_eq!((c.total_max_size, c.max_age, c.process_vary, c.max_secondary_entries), (4 << 20, 240, true, 3));
        assert_eq!(c.object_limit(), (4 << 20) / 256);
        let cfg = parse_ok("cache d\n total-max-size 1\n max-object-size 1000\n");
        assert_eq!((cfg.caches[0].object_limit(), cfg.caches[0].max_age), (1000, 60));
    }

    #[test]
    fn bad_cache_sections_are_refused() {
        assert_eq!(alerts("cache\n"), ["'cache' expects a <name> argument"]);
        assert_eq!(alerts("cache c\n total-max-size 1\ncache c\n"), ["Duplicate cache name 'c'."]);
        assert_eq!(alerts("cache c\n"), ["Size not specified for cache 'c'"]);
        assert_eq!(
            alerts("cache c\n total-max-size 1\n max-object-size 600000\n"),
            ["\"max-object-size\" is limited to an half of \"total-max-size\" => 524288"]
        );
        assert_eq!(alerts("cache c\n total-max-size 1\n foo\n"), ["unknown keyword 'foo' in 'cache' section"]);
        let w = warnings("cache c\n total-max-size 1\n process-vary maybe\n");
        assert!(w.iter().any(|m| m.starts_with("'process-vary' expects \"on\" or \"off\"")), "{w:?}");
        assert!(!alerts("cache c\n total-max-size x\n").is_empty());
    }
}
