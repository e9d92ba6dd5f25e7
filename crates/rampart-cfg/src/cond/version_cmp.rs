//! Version comparison for `version_atleast()` / `version_before()`. HAProxy counterpart:
//! `split_version()` and `compare_current_version()` in src/haproxy.c.
//!
//! A version `a.b.c.d-<tag><n>-<commit>` becomes seven numbers: the four dotted numbers
//! (missing ones are 0), the tag's rank (`dev` 1, `rc` and `pre` 2, none 3, so that
//! `2.6-dev1` < `2.6-rc1` < `2.6`), the tag's number, and the number after the last `-`
//! (a commit count, 0 when not numeric). Numbers are read like C's `strtol()`, leading
//! blanks and sign included. A string that does not fit this shape is "unparsable".

use std::cmp::Ordering;

type Split = [u32; 7];

/// How `version` compares with `current`: `Ok(Less)` when `version` is older. `Err(())`
/// when either does not parse.
pub(super) fn compare(current: &str, version: &[u8]) -> Result<Ordering, ()> {
    let current = split_version(current.as_bytes()).ok_or(())?;
    let version = split_version(version).ok_or(())?;
    Ok(version.cmp(&current))
}

/// `version_atleast()`: true when `current` is `version` or newer. An unparsable version
/// counts as "at least" (HAProxy treats the error code as a negative comparison).
pub(super) fn at_least(current: &str, version: &[u8]) -> bool {
    compare(current, version) != Ok(Ordering::Greater)
}

/// `version_before()`: true when `current` is older than `version`.
pub(super) fn before(current: &str, version: &[u8]) -> bool {
    compare(current, version) == Ok(Ordering::Greater)
}

fn split_version(s: &[u8]) -> Option<Split> {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let mut v: Split = [0, 0, 0, 0, 3, 0, 0];
    if s.is_empty() {
        return None;
    }
    let mut p = 0;
    // Up to four dotted numbers; a `-` after any of them starts the tag.
    for (idx, slot) in v.iter_mut().take(4).enumerate() {
        let (value, end) = strtol(s, p);
        *slot = value;
        p = end + 1;
        match at(end) {
            0 => return Some(v),
            b'-' => return split_tag(s, p, v),
            b'.' if idx < 3 => {}
            _ => return None,
        }
    }
    None
}

/// The part after the first `-`, starting at `p`.
fn split_tag(s: &[u8], mut p: usize, mut v: Split) -> Option<Split> {
    let rest = s.get(p..).unwrap_or_default();
    if !rest.first().is_some_and(u8::is_ascii_digit) {
        let tag = if rest.starts_with(b"dev") {
            Some((1, 3))
        } else if rest.starts_with(b"rc") {
            Some((2, 2))
        } else if rest.starts_with(b"pre") {
            Some((2, 3))
        } else {
            None
        };
        if let Some((rank, len)) = tag {
            v[4] = rank;
            let (value, end) = strtol(s, p + len);
            v[5] = value;
            match s.get(end).copied().unwrap_or(0) {
                0 => return Some(v),
                b'-' => p = end + 1,
                _ => return None,
            }
        }
    }
    split_commit(s, p, v)
}

/// The commit count: the number after the last `-` from `p`, or the text at `p` itself.
fn split_commit(s: &[u8], p: usize, mut v: Split) -> Option<Split> {
    let rest = s.get(p..).unwrap_or_default();
    let from = match rest.iter().rposition(|&b| b == b'-') {
        Some(dash) if dash + 1 == rest.len() => return None,
        Some(dash) => p + dash + 1,
        None => p,
    };
    let (value, end) = strtol(s, from);
    v[6] = if end >= s.len() { value } else { 0 };
    Some(v)
}

/// C's `strtol(s + from, &end, 10)` stored in an `unsigned int`: skips blanks, takes a
/// sign and digits, saturates at the `long` range, then keeps the low 32 bits. With no
/// digits the value is 0 and `end` is `from`.
fn strtol(s: &[u8], from: usize) -> (u32, usize) {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let mut i = from;
    while crate::words::is_space(at(i)) {
        i += 1;
    }
    let negative = at(i) == b'-';
    if matches!(at(i), b'+' | b'-') {
        i += 1;
    }
    let digits_start = i;
    let mut value: i64 = 0;
    while at(i).is_ascii_digit() {
        let d = i64::from(at(i) - b'0');
        value = if negative {
            value.saturating_mul(10).saturating_sub(d)
        } else {
            value.saturating_mul(10).saturating_add(d)
        };
        i += 1;
    }
    if i == digits_start {
        return (0, from);
    }
    (value as u32, i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(s: &str) -> Option<Split> {
        split_version(s.as_bytes())
    }

    #[test]
    fn versions_split_as_in_haproxy() {
        // The examples of split_version()'s contract.
        assert_eq!(split("1.2.1-pre2"), Some([1, 2, 1, 0, 2, 2, 0]));
        assert_eq!(split("1.2.1"), Some([1, 2, 1, 0, 3, 0, 0]));
        assert_eq!(split("1.2.10.1"), Some([1, 2, 10, 1, 3, 0, 0]));
        assert_eq!(split("1.3.16-rc1"), Some([1, 3, 16, 0, 2, 1, 0]));
        assert_eq!(split("1.4-dev3"), Some([1, 4, 0, 0, 1, 3, 0]));
        assert_eq!(split("1.5-dev18-43"), Some([1, 5, 0, 0, 1, 18, 43]));
        assert_eq!(split("2.4-dev18-f6818d-20"), Some([2, 4, 0, 0, 1, 18, 20]));
        // Debian's version string: the packaging suffix is not a number.
        assert_eq!(split("2.6.12-1+deb12u3"), Some([2, 6, 12, 0, 3, 0, 0]));
    }

    #[test]
    fn odd_versions() {
        assert_eq!(split(""), None);
        assert_eq!(split("abc"), None);
        assert_eq!(split("2.6.12rc"), None);
        assert_eq!(split("1.2.3.4.5"), None);
        assert_eq!(split("2.6.12-"), Some([2, 6, 12, 0, 3, 0, 0]));
        assert_eq!(split("2.6.12-x-1"), Some([2, 6, 12, 0, 3, 0, 1]));
        assert_eq!(split("2.6.12-1-"), None);
        assert_eq!(split(" 2.-1"), Some([2, u32::MAX, 0, 0, 3, 0, 0]));
        assert_eq!(split("99999999999999999999"), Some([u32::MAX, 0, 0, 0, 3, 0, 0]));
    }

    #[test]
    fn comparisons_follow_the_split() {
        assert!(at_least("2.6.12", b"2.6"));
        assert!(at_least("2.6.12", b"2.6.12.0"));
        assert!(!at_least("2.6.12", b"2.6.12.1"));
        assert!(at_least("2.6.12", b"2.6.12-dev3"), "a -dev version is older than the release");
        assert!(!at_least("2.6.12", b"2.6.12-1"), "a commit count makes it newer");
        assert!(at_least("2.6.12", b"garbage") && !before("2.6.12", b"garbage"));
        assert!(at_least("garbage", b"9") && !before("garbage", b"9"));
        assert!(before("2.6.12", b"2.7-dev0") && !before("2.6.12", b"2.6.12"));
    }
}
