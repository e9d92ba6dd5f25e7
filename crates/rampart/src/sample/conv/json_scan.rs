//! The JSON scanner and path matcher behind `json_query`: it walks the input once,
//! token by token, following a JSONPath (`$`, `.key`, `[index]`) and stops at the
//! first value the path designates, without building anything. HAProxy 2.6 does this
//! with the mjson library (`mjson_find()` in src/mjson.c); this module is rampart's
//! own code reproducing what it accepts and finds, quirks included, since rules match
//! on the results:
//!
//! - the input is only checked up to the value found (`{"a":1,,}` still gives `a`),
//!   and nesting deeper than 20 containers is refused;
//! - trailing commas are accepted in arrays and objects;
//! - keys are compared with the bytes as written in the input (escapes are not
//!   decoded), the path's backslash escaping its next character (`$.my\.key`);
//! - `[n]` selects element n; an index that is no number reads as 0, and index 0 is
//!   taken to be written in three characters (`[0]`), so `$[a]` is `$[0]` while
//!   `$['a']` (bracketed names) matches nothing;
//! - numbers are scanned by mjson's own `strtod`.
//!
//! COMPAT: mjson reads numbers and escaped path characters past the end of their
//! buffer (a top-level `7` read from a request body can give `700`); rampart stops at
//! the end.

/// Deepest nesting of objects and arrays (mjson's `MJSON_MAX_DEPTH`).
const MAX_DEPTH: usize = 20;

/// A token of the scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tok {
    /// `{` or `[`.
    Open(u8),
    /// `}` or `]`.
    Close(u8),
    Colon,
    Comma,
    Key,
    Str,
    Num,
    True,
    False,
    Null,
}

impl Tok {
    fn is_value(self) -> bool {
        matches!(self, Tok::Str | Tok::Num | Tok::True | Tok::False | Tok::Null)
    }
}

/// What the scan expects next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Value,
    Key,
    Colon,
    CommaOrEnd,
}

/// The input is not JSON (as far as it was read), or nests too deep.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Malformed;

/// Byte `i` of `s`, 0 past its end (as a C string reads).
fn at(s: &[u8], i: usize) -> u8 {
    s.get(i).copied().unwrap_or(0)
}

/// mjson's `strtod`: an optional sign, digits, an optional fraction and exponent,
/// computed the same way (so with the same rounding). Returns the value and how
/// many bytes make the number; 0 when they do not (nothing, or a bare `-` or `1.`),
/// in which case the value is still what was read.
pub(super) fn strtod(s: &[u8]) -> (f64, usize) {
    let is_digit = |i: usize| at(s, i).is_ascii_digit();
    let (mut d, mut sign, mut p) = (0.0f64, 1.0f64, 0usize);
    match at(s, 0) {
        b'-' => (sign, p) = (-1.0, 1),
        b'+' => p = 1,
        _ => {}
    }
    let mut end = 0;
    if is_digit(p) {
        while is_digit(p) {
            d = d * 10.0 + f64::from(at(s, p) - b'0');
            p += 1;
        }
        end = p;
    } else if at(s, p) != b'.' {
        return (d, 0);
    }
    d *= sign;
    if at(s, p) == b'.' {
        let (mut f, mut base) = (0.0f64, 0.1f64);
        p += 1;
        while is_digit(p) {
            f += base * f64::from(at(s, p) - b'0');
            base /= 10.0;
            p += 1;
        }
        d += f * sign;
        end = p;
    }
    if matches!(at(s, p), b'e' | b'E') {
        p += 1;
        let neg = at(s, p) == b'-';
        if neg {
            p += 1;
        }
        if at(s, p) == b'+' {
            p += 1;
        }
        let mut e = 0i32;
        while is_digit(p) {
            e = e.wrapping_mul(10).wrapping_add(i32::from(at(s, p) - b'0'));
            p += 1;
        }
        let mut i = e;
        if neg {
            e = e.wrapping_neg();
        }
        let (mut exp, mut f) = (10.0f64, 1.0f64);
        while i > 0 {
            if i & 1 != 0 {
                f *= exp;
            }
            exp *= exp;
            i >>= 1;
        }
        if e > 0 {
            d *= f;
        } else if e < 0 {
            d /= f;
        }
        end = p;
    } else if p > 0 && !is_digit(p - 1) {
        end = 0;
    }
    (d, end)
}

/// The length of the string body starting at `s` (after its opening quote), up to
/// the closing quote: a backslash protects a quote, a backslash or a raw control
/// character among `\b \f \n \r \t`; a NUL byte or the end is malformed.
fn string_len(s: &[u8]) -> Result<usize, Malformed> {
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'\\' if matches!(at(s, i + 1), 0x08 | 0x0C | b'\n' | b'\r' | b'\t' | b'\\' | b'"') && i + 1 < s.len() => {
                i += 1;
            }
            0 => return Err(Malformed),
            b'"' => return Ok(i),
            _ => {}
        }
        i += 1;
    }
    Err(Malformed)
}

/// Scans `s` as mjson does, calling `f(token, start, len)` for each token until it
/// returns `true` (found, or nothing to find) or the top-level value ends. A number
/// mjson cannot read is reported with length 0, and its first byte is then read again
/// (which fails, unless the number was the top-level value).
pub(super) fn scan(s: &[u8], f: &mut dyn FnMut(Tok, usize, usize) -> bool) -> Result<(), Malformed> {
    let mut nesting = [0u8; MAX_DEPTH];
    let mut depth = 0usize;
    let mut expect = Expect::Value;
    let mut i = 0usize;
    while i < s.len() {
        let (start, c) = (i, s[i]);
        if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
            i += 1;
            continue;
        }
        // `end` is one past the token's last byte (mjson's `i + 1`).
        let (tok, end) = match expect {
            Expect::Value => {
                let (tok, end) = match c {
                    b'{' | b'[' => {
                        if depth >= MAX_DEPTH {
                            return Err(Malformed);
                        }
                        nesting[depth] = c;
                        depth += 1;
                        expect = if c == b'{' { Expect::Key } else { Expect::Value };
                        if f(Tok::Open(c), start, 1) {
                            return Ok(());
                        }
                        i += 1;
                        continue;
                    }
                    b']' if depth > 0 => {
                        close(&nesting, &mut depth, c)?;
                        if depth == 0 {
                            f(Tok::Close(c), start, 1);
                            return Ok(());
                        }
                        (Tok::Close(c), start + 1)
                    }
                    b't' if s[i..].starts_with(b"true") => (Tok::True, start + 4),
                    b'n' if s[i..].starts_with(b"null") => (Tok::Null, start + 4),
                    b'f' if s[i..].starts_with(b"false") => (Tok::False, start + 5),
                    b'-' | b'0'..=b'9' => (Tok::Num, start + strtod(&s[i..]).1),
                    b'"' => (Tok::Str, start + string_len(&s[i + 1..])? + 2),
                    _ => return Err(Malformed),
                };
                if depth == 0 {
                    f(tok, start, end - start);
                    return Ok(());
                }
                expect = Expect::CommaOrEnd;
                (tok, end)
            }
            Expect::Key => match c {
                b'"' => {
                    expect = Expect::Colon;
                    (Tok::Key, start + string_len(&s[i + 1..])? + 2)
                }
                b'}' => {
                    close(&nesting, &mut depth, c)?;
                    if depth == 0 {
                        f(Tok::Close(c), start, 1);
                        return Ok(());
                    }
                    expect = Expect::CommaOrEnd;
                    (Tok::Close(c), start + 1)
                }
                _ => return Err(Malformed),
            },
            Expect::Colon if c == b':' => {
                expect = Expect::Value;
                (Tok::Colon, start + 1)
            }
            Expect::Colon => return Err(Malformed),
            Expect::CommaOrEnd => match c {
                _ if depth == 0 => return Err(Malformed),
                b',' => {
                    expect = if nesting[depth - 1] == b'{' { Expect::Key } else { Expect::Value };
                    (Tok::Comma, start + 1)
                }
                b']' | b'}' => {
                    close(&nesting, &mut depth, c)?;
                    if depth == 0 {
                        f(Tok::Close(c), start, 1);
                        return Ok(());
                    }
                    (Tok::Close(c), start + 1)
                }
                _ => return Err(Malformed),
            },
        };
        if f(tok, start, end - start) {
            return Ok(());
        }
        // An unreadable number (length 0) has its first byte read again, which then
        // fails as it is no comma or closing.
        i = end;
    }
    Err(Malformed)
}

/// Closes the innermost container with `c`, which must match its opening.
fn close(nesting: &[u8; MAX_DEPTH], depth: &mut usize, c: u8) -> Result<(), Malformed> {
    // `]` is two after `[` in ASCII, as `}` after `{`.
    if *depth == 0 || c != nesting[*depth - 1] + 2 {
        return Err(Malformed);
    }
    *depth -= 1;
    Ok(())
}

/// What [`find`] found: the token's kind, where it starts and its length (a whole
/// object or array for `Tok::Open`).
pub(super) type Found = (Tok, usize, usize);

/// The matcher's state while following the path (mjson's `msjon_get_data`).
struct Walk<'p> {
    path: &'p [u8],
    /// Position in the path of the next step (`.key` or `[n]`).
    pos: usize,
    /// Containers open around the current token.
    depth: i64,
    /// Containers the path has entered so far.
    matched: i64,
    /// Current index in the array being searched, and the index sought.
    idx: i64,
    want: i64,
    /// Where the object or array designated by the whole path starts.
    obj: Option<usize>,
    found: Option<Found>,
}

/// mjson's `(int)` of a double on x86: out of range (or NaN) gives `INT_MIN`.
fn c_int(d: f64) -> i64 {
    if d.is_nan() || !(-2_147_483_648.0..2_147_483_648.0).contains(&d) {
        i64::from(i32::MIN)
    } else {
        d as i64
    }
}

/// The length of the path step at the start of `s` up to `.`, `[` or the end: in
/// characters (a backslash and the character it escapes count as one) and in bytes.
fn step_len(s: &[u8]) -> (usize, usize) {
    let (mut n, mut i) = (0, 0);
    while i < s.len() && s[i] != b'.' && s[i] != b'[' {
        n += 1;
        i += if s[i] == b'\\' { 2 } else { 1 };
    }
    (n, i)
}

/// Whether key `key` (as written in the input) is the path step `step` (backslashes
/// escaping their next byte).
fn key_is(key: &[u8], step: &[u8]) -> bool {
    let mut i = 0;
    for &k in key {
        if at(step, i) == b'\\' {
            i += 1;
        }
        if k != at(step, i) {
            return false;
        }
        i += 1;
    }
    true
}

impl Walk<'_> {
    fn at_end(&self) -> bool {
        self.pos >= self.path.len()
    }

    /// Takes one token; `true` stops the scan.
    fn token(&mut self, s: &[u8], tok: Tok, off: usize, len: usize) -> bool {
        match tok {
            Tok::Open(c) => {
                if c == b'[' && self.depth == self.matched && at(self.path, self.pos) == b'[' {
                    self.idx = 0;
                    self.want = c_int(strtod(self.path.get(self.pos + 1..).unwrap_or_default()).0);
                    if self.idx == self.want {
                        self.matched += 1;
                        self.pos += 3;
                    }
                }
                if self.at_end() && self.depth == self.matched {
                    self.obj = Some(off);
                }
                self.depth += 1;
            }
            Tok::Comma if self.depth == self.matched + 1 => {
                self.idx += 1;
                if self.idx == self.want {
                    while self.pos < self.path.len() && self.path[self.pos] != b']' {
                        self.pos += 1;
                    }
                    self.pos += 1;
                    self.matched += 1;
                }
            }
            Tok::Key
                if self.depth == self.matched + 1
                    && at(self.path, self.pos) == b'.'
                    && self.key_matches(s, off, len) =>
            {
                let (_, bytes) = step_len(self.path.get(self.pos + 1..).unwrap_or_default());
                self.matched += 1;
                self.pos += bytes + 1;
            }
            // Another key of the object the path entered: the value sought was not in
            // the member passed.
            Tok::Key if self.depth == self.matched => return true,
            Tok::Close(c) => {
                self.depth -= 1;
                if let (true, true, Some(obj)) = (self.at_end(), self.depth == self.matched, self.obj) {
                    self.found = Some((Tok::Open(c - 2), obj, off - obj + 1));
                    return true;
                }
            }
            t if t.is_value() && self.depth == self.matched && self.at_end() => {
                self.found = Some((tok, off, len));
                return true;
            }
            _ => {}
        }
        false
    }

    /// Whether the key token at `off` (quotes included) is the path's next step.
    fn key_matches(&self, s: &[u8], off: usize, len: usize) -> bool {
        let step = self.path.get(self.pos + 1..).unwrap_or_default();
        let Some(key) = s.get(off + 1..off + len - 1) else { return false };
        step_len(step).0 == key.len() && key_is(key, step)
    }
}

/// The value path `path` designates in JSON text `s` (mjson's `mjson_find`): the path
/// must start with `$`; `None` when it designates nothing or the input is malformed
/// before it is found.
pub(super) fn find(s: &[u8], path: &[u8]) -> Option<Found> {
    let path = &path[..memchr::memchr(0, path).unwrap_or(path.len())];
    if path.first() != Some(&b'$') {
        return None;
    }
    let mut w = Walk { path, pos: 1, depth: 0, matched: 0, idx: 0, want: 0, obj: None, found: None };
    scan(s, &mut |tok, off, len| w.token(s, tok, off, len)).ok()?;
    w.found
}

#[cfg(test)]
#[path = "json_scan_tests.rs"]
mod tests;
