//! Integer patterns: a value, or a range `a:b` (also `a-b`), `:b`, `a:`, as `-m int`,
//! `-m len` and the dotted versions of `req.ssl_ver` read them; the ACL operators
//! `eq ge gt le lt` are rewritten into ranges by the ACL parser. The set answers
//! "which pattern, first in order, holds this integer" by binary search over the
//! elementary segments that the ranges cut the integer line into.
//!
//! HAProxy counterpart: `pat_parse_int()`, `pat_parse_dotted_ver()`, `pat_match_int()`,
//! `pat_match_len()` (src/pattern.c), `strl2llrc()` (src/tools.c).

use std::collections::BTreeMap;

use super::NONE;

/// An inclusive range; `None` is unbounded on that side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub min: Option<i64>,
    pub max: Option<i64>,
}

impl Range {
    pub fn contains(&self, v: i64) -> bool {
        !matches!(self.min, Some(m) if m > v) && !matches!(self.max, Some(m) if v > m)
    }
}

/// A strict decimal integer (an optional `-`, then digits only), as HAProxy's
/// `strl2llrc`: `010` is ten, `+1`, ` 1` and `1.0` are not numbers, overflow is refused.
pub fn parse_strict(s: &[u8]) -> Option<i64> {
    if s.is_empty() {
        return None;
    }
    let (neg, digits) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    let mut v: i64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        let d = i64::from(c - b'0');
        v = v.checked_mul(10)?;
        v = if neg { v.checked_sub(d)? } else { v.checked_add(d)? };
    }
    Some(v)
}

/// `major.minor` (minor defaults to 0), each below 65536, as one integer
/// `major << 16 | minor` (HAProxy's `strl2llrc_dotted`).
pub fn parse_dotted(s: &[u8]) -> Option<i64> {
    let (maj, min) = match s.iter().position(|&c| c == b'.') {
        Some(dot) => (&s[..dot], Some(&s[dot + 1..])),
        None => (s, None),
    };
    let maj = parse_strict(maj)?;
    let min = match min {
        Some(m) => parse_strict(m)?,
        None => 0,
    };
    if !(..65536).contains(&maj) || !(..65536).contains(&min) {
        return None;
    }
    Some((maj << 16) | (min & 0xffff))
}

/// Parses an integer pattern (`pat_parse_int`). Note HAProxy's reading of `-5`: the
/// dash is the range separator, so it means `:5`.
pub fn parse_int(text: &str) -> Result<Range, String> {
    parse_range(text, parse_strict).map_err(|not_number| {
        if not_number {
            format!("'{text}' is not a number")
        } else {
            format!("'{text}' is not a valid number range")
        }
    })
}

/// Parses a dotted version pattern (`pat_parse_dotted_ver`).
pub fn parse_dotted_ver(text: &str) -> Result<Range, String> {
    if text.is_empty() {
        return Err(format!("'{text}' is not a valid dotted number range"));
    }
    parse_range(text, parse_dotted).map_err(|not_number| {
        if not_number {
            format!("'{text}' is not a dotted number")
        } else {
            format!("'{text}' is not a valid dotted number range")
        }
    })
}

/// The range grammar shared by both: `Err(true)` when a lone value is not a number,
/// `Err(false)` when a range is malformed.
fn parse_range(text: &str, num: fn(&[u8]) -> Option<i64>) -> Result<Range, bool> {
    let b = text.as_bytes();
    if b.is_empty() {
        return Err(false);
    }
    let Some(sep) = b.iter().position(|&c| c == b':' || c == b'-') else {
        let v = num(b).ok_or(true)?;
        return Ok(Range { min: Some(v), max: Some(v) });
    };
    let (lo, hi) = (&b[..sep], &b[sep + 1..]);
    if sep == 0 && !hi.is_empty() {
        return Ok(Range { min: None, max: Some(num(hi).ok_or(false)?) });
    }
    if hi.is_empty() {
        return Ok(Range { min: Some(num(lo).ok_or(false)?), max: None });
    }
    let (min, max) = (num(lo).ok_or(false)?, num(hi).ok_or(false)?);
    if min > max {
        return Err(false);
    }
    Ok(Range { min: Some(min), max: Some(max) })
}

/// The comparison operators of ACL lines (`get_std_op`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Gt,
    Ge,
    Lt,
    Le,
}

impl Op {
    pub fn from_word(w: &str) -> Option<Op> {
        Some(match w {
            "eq" => Op::Eq,
            "gt" => Op::Gt,
            "ge" => Op::Ge,
            "lt" => Op::Lt,
            "le" => Op::Le,
            _ => return None,
        })
    }
}

/// Rewrites an ACL word under operator `op` into the range text the pattern parser
/// reads, as HAProxy's `parse_acl_expr` does: `gt 5` is `6:`, `lt 5` is `:4`. Words
/// holding `:` or `-`, and every word under `eq`, are left alone.
pub fn apply_op(op: Op, word: &str, dotted: bool) -> Result<Option<String>, String> {
    if op == Op::Eq || word.contains([':', '-']) {
        return Ok(None);
    }
    let bad = || format!("'{word}' is neither a number nor a supported operator");
    let (maj, min) = match word.split_once('.') {
        Some((maj, min)) if dotted => {
            let min = parse_strict(min.as_bytes()).ok_or_else(bad)?;
            if min >= 65536 {
                return Err(format!("'{word}' contains too large a minor value"));
            }
            (maj, min)
        }
        Some(_) => return Err(bad()),
        None => (word, 0),
    };
    let mut v = parse_strict(maj.as_bytes()).ok_or_else(bad)?;
    if dotted {
        if v >= 65536 {
            return Err(format!("'{word}' contains too large a major value"));
        }
        v = (v << 16) | (min & 0xffff);
    }
    let v = match op {
        Op::Gt => v.wrapping_add(1),
        Op::Lt => v.wrapping_sub(1),
        _ => v,
    };
    let text = |v: i64| if dotted { format!("{}.{}", v >> 16, v & 0xffff) } else { v.to_string() };
    Ok(Some(match op {
        Op::Gt | Op::Ge => format!("{}:", text(v)),
        _ => format!(":{}", text(v)),
    }))
}

/// Ranges cut the integer line into segments; each segment knows the first pattern (in
/// order) that covers it. Lookup is a binary search: O(log n) for any mix of values
/// and ranges.
#[derive(Debug, Default)]
pub struct IntSet {
    /// Segment `i` is `[starts[i], starts[i + 1])`; `starts[0]` is `i64::MIN`.
    starts: Vec<i64>,
    /// The first pattern covering segment `i`, or [`NONE`].
    first: Vec<u32>,
}

impl IntSet {
    pub fn build(ranges: &[(Range, u32)]) -> IntSet {
        // Events: at a point, patterns start (+) or stop covering (-).
        let mut events: BTreeMap<i64, Vec<(u32, bool)>> = BTreeMap::new();
        events.entry(i64::MIN).or_default();
        for &(r, idx) in ranges {
            events.entry(r.min.unwrap_or(i64::MIN)).or_default().push((idx, true));
            if let Some(end) = r.max.and_then(|m| m.checked_add(1)) {
                events.entry(end).or_default().push((idx, false));
            }
        }
        let mut active: BTreeMap<u32, u32> = BTreeMap::new();
        let mut set = IntSet::default();
        for (at, evs) in events {
            for (idx, start) in evs {
                let n = active.entry(idx).or_default();
                if start {
                    *n += 1;
                } else {
                    *n -= 1;
                    if *n == 0 {
                        active.remove(&idx);
                    }
                }
            }
            let first = active.keys().next().copied().unwrap_or(NONE);
            if set.first.last() != Some(&first) {
                set.starts.push(at);
                set.first.push(first);
            }
        }
        set
    }

    /// The first pattern holding `v`.
    pub fn find(&self, v: i64) -> Option<u32> {
        let seg = self.starts.partition_point(|&s| s <= v).checked_sub(1)?;
        let idx = self.first[seg];
        (idx != NONE).then_some(idx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(min: Option<i64>, max: Option<i64>) -> Range {
        Range { min, max }
    }

    #[test]
    fn strict_numbers() {
        assert_eq!(parse_strict(b"010"), Some(10));
        assert_eq!(parse_strict(b"-12"), Some(-12));
        assert_eq!(parse_strict(b"-"), Some(0));
        assert_eq!(parse_strict(b"+1"), None);
        assert_eq!(parse_strict(b" 1"), None);
        assert_eq!(parse_strict(b"1/"), None);
        assert_eq!(parse_strict(b""), None);
        assert_eq!(parse_strict(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_strict(b"9223372036854775808"), None);
        assert_eq!(parse_strict(b"-9223372036854775808"), Some(i64::MIN));
    }

    #[test]
    fn int_patterns() {
        assert_eq!(parse_int("010"), Ok(r(Some(10), Some(10))));
        assert_eq!(parse_int("3:7"), Ok(r(Some(3), Some(7))));
        assert_eq!(parse_int("3-7"), Ok(r(Some(3), Some(7))));
        assert_eq!(parse_int(":7"), Ok(r(None, Some(7))));
        assert_eq!(parse_int("3:"), Ok(r(Some(3), None)));
        // The dash is a separator: "-5" is "up to 5".
        assert_eq!(parse_int("-5"), Ok(r(None, Some(5))));
        assert_eq!(parse_int("x").unwrap_err(), "'x' is not a number");
        assert_eq!(parse_int("7:3").unwrap_err(), "'7:3' is not a valid number range");
        assert_eq!(parse_int("1:x").unwrap_err(), "'1:x' is not a valid number range");
        assert_eq!(parse_int("-").unwrap_err(), "'-' is not a valid number range");
        assert_eq!(parse_int("").unwrap_err(), "'' is not a valid number range");
        assert_eq!(parse_int("1--5").unwrap_err(), "'1--5' is not a valid number range");
    }

    #[test]
    fn dotted_versions() {
        assert_eq!(parse_dotted_ver("3.1"), Ok(r(Some(3 << 16 | 1), Some(3 << 16 | 1))));
        assert_eq!(parse_dotted_ver("3"), Ok(r(Some(3 << 16), Some(3 << 16))));
        assert_eq!(parse_dotted_ver("3.0-3.1"), Ok(r(Some(3 << 16), Some(3 << 16 | 1))));
        assert_eq!(parse_dotted_ver("65536").unwrap_err(), "'65536' is not a dotted number");
        assert_eq!(parse_dotted_ver(":x").unwrap_err(), "':x' is not a valid dotted number range");
    }

    #[test]
    fn operators() {
        assert_eq!(apply_op(Op::Gt, "5", false), Ok(Some("6:".into())));
        assert_eq!(apply_op(Op::Ge, "5", false), Ok(Some("5:".into())));
        assert_eq!(apply_op(Op::Lt, "5", false), Ok(Some(":4".into())));
        assert_eq!(apply_op(Op::Le, "5", false), Ok(Some(":5".into())));
        assert_eq!(apply_op(Op::Eq, "5", false), Ok(None));
        assert_eq!(apply_op(Op::Gt, "1:5", false), Ok(None));
        assert_eq!(apply_op(Op::Gt, "x", false).unwrap_err(), "'x' is neither a number nor a supported operator");
        assert_eq!(apply_op(Op::Gt, "3.1", true), Ok(Some("3.2:".into())));
        assert_eq!(apply_op(Op::Lt, "3", true), Ok(Some(":2.65535".into())));
        assert_eq!(apply_op(Op::Gt, "3.70000", true).unwrap_err(), "'3.70000' contains too large a minor value");
        assert_eq!(apply_op(Op::Gt, "70000", true).unwrap_err(), "'70000' contains too large a major value");
        assert_eq!(Op::from_word("GT"), None);
    }

    #[test]
    fn set_first_in_order() {
        let set = IntSet::build(&[
            (r(Some(10), Some(20)), 0),
            (r(Some(5), Some(5)), 1),
            (r(Some(15), None), 2),
            (r(None, Some(0)), 3),
            (r(Some(12), Some(12)), 4),
        ]);
        assert_eq!(set.find(5), Some(1));
        assert_eq!(set.find(6), None);
        assert_eq!(set.find(12), Some(0));
        assert_eq!(set.find(20), Some(0));
        assert_eq!(set.find(21), Some(2));
        assert_eq!(set.find(i64::MAX), Some(2));
        assert_eq!(set.find(i64::MIN), Some(3));
        assert_eq!(set.find(0), Some(3));
        assert_eq!(set.find(1), None);
        assert_eq!(IntSet::build(&[]).find(0), None);
    }
}
