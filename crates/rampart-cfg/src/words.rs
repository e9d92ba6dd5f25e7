//! Splitting one line into words: quotes, backslash escapes and `"${VAR}"` expansion, for
//! the lexer (configuration lines) and `-cc` ([`crate::cond::eval_str`]).
//! HAProxy counterpart: `parse_line()` in src/tools.c, whose rules are followed byte for
//! byte since configurations depend on them:
//!
//! - words are separated by runs of blanks (space, tab, vertical tab, form feed); a
//!   carriage return or line feed ends the line, and so does `#` outside quotes when
//!   comments are enabled (they are in files, not in `-cc`);
//! - `"..."` and `'...'` group text into a word and may be glued to other parts
//!   (`a"b c"d` is `ab cd`); inside single quotes every byte is literal;
//! - a backslash outside single quotes escapes a blank, `\`, `#`, `'`, `"` and (inside
//!   double quotes) `$`; `\r`, `\n`, `\t` and `\xHH` give the byte; any other
//!   backslash is kept as is (`a\1` stays `a\1`);
//! - `$NAME`, `${NAME}`, `${NAME-default}` and `${NAME[*]}` expand **only inside double
//!   quotes** (an unquoted `${HOME}` stays literal, as in HAProxy 2.6); an undefined
//!   variable expands to nothing; `[*]` splits the value into one word per blank-separated
//!   part; `.LINE`, `.FILE` and `.SECTION` are built-in names.
//!
//! The output keeps HAProxy's layout (every word followed by a NUL byte in one buffer) so
//! that the quirks configurations can observe stay identical: a word produced by `\x00`
//! ends at that byte, trailing blanks yield a final empty word (which counts towards the
//! 64-word limit), and `.if` re-joins the words of its line with single spaces.
//!
//! COMPAT: one HAProxy 2.6.12 bug is deliberately not reproduced. `readcfgfile()` re-runs
//! `parse_line()` when its output buffer (reused across lines, empty at the start of each
//! file) is too small, but the first run has already written a NUL over the `}` of any
//! `${NAME-default}`, so the second run reports "unmatched brace". Such a default is thus
//! refused on the first line of a file that produces output, or on any line longer than
//! every previous one past 1 KiB; rampart accepts it.

/// Most words a line may hold (HAProxy's `MAX_LINE_ARGS`).
pub(crate) const MAX_WORDS: usize = 64;

/// What the splitter must know about the place it reads from, for the built-in
/// `${.LINE}`, `${.FILE}` and `${.SECTION}` names.
pub(crate) struct Place<'a> {
    pub line: u32,
    /// `None` where HAProxy has no current file (`-cc`).
    pub file: Option<&'a str>,
    pub section: Option<&'a str>,
}

/// A failure of [`split`]; every offset is a byte index into the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SplitError {
    /// A quote opened at this offset is never closed.
    Quote(usize),
    /// The `{` at this offset has no matching `}`.
    Brace(usize),
    /// A variable name starts with a forbidden byte at this offset.
    VarName(usize),
    /// An unknown built-in `.NAME` starts at this offset.
    PseudoVar(usize),
    /// `\x` at this offset is not followed by two hexadecimal digits.
    Hex(usize),
    /// The `[` at this offset does not open `[*]`.
    Expand(usize),
}

/// The words of one line, stored as HAProxy stores them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Words {
    /// Every byte emitted, each word followed by a NUL.
    buf: Vec<u8>,
    /// Offset in `buf` of each word (at most [`MAX_WORDS`]).
    starts: Vec<usize>,
    /// The line would produce more than [`MAX_WORDS`] words.
    pub too_many: bool,
    /// Offsets of the input where HAProxy writes a NUL while parsing, which truncates the
    /// line it prints in an error message.
    pub cuts: Vec<usize>,
}

impl Words {
    /// Number of words, including empty ones.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Word `i` up to its first NUL, or empty past the last word (C callers test `*args[i]`).
    pub fn arg(&self, i: usize) -> &[u8] {
        match self.starts.get(i) {
            Some(&start) => {
                let rest = &self.buf[start..];
                let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
                &rest[..end]
            }
            None => &[],
        }
    }

    /// Offset of word `i` in the output buffer (HAProxy reports it for too many words).
    pub fn offset(&self, i: usize) -> usize {
        self.starts.get(i).copied().unwrap_or(self.buf.len())
    }

    /// Words `first..` joined by single spaces, as `.if` and `-cc` re-merge them.
    pub fn joined_from(&self, first: usize) -> Vec<u8> {
        let Some(&start) = self.starts.get(first) else { return Vec::new() };
        let end = self.buf.len().saturating_sub(1).max(start);
        self.buf[start..end].iter().map(|&b| if b == 0 { b' ' } else { b }).collect()
    }

    /// The words as strings, without the trailing empty ones (which C callers cannot tell
    /// from absent ones). Bytes that are not UTF-8 (from `\xHH`) are kept as the
    /// private-use characters [`RAW_BASE`]` + byte`; [`raw_bytes`] gives them back.
    pub fn to_strings(&self) -> Vec<String> {
        let mut n = self.len();
        while n > 0 && self.arg(n - 1).is_empty() {
            n -= 1;
        }
        (0..n).map(|i| escape_raw(self.arg(i))).collect()
    }

    fn emit(&mut self, b: u8) {
        self.buf.push(b);
    }

    /// Ends the current word and starts the next one.
    fn next_word(&mut self) {
        self.buf.push(0);
        if self.starts.len() < MAX_WORDS {
            self.starts.push(self.buf.len());
        } else {
            self.too_many = true;
        }
    }
}

/// C's `isspace()` in the C locale.
pub(crate) fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Splits `input` into words. `comments` enables `#` comments (and the `\#` escape).
/// `env` looks up ordinary variable names.
pub(crate) fn split(
    input: &[u8],
    comments: bool,
    place: &Place<'_>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Words, (SplitError, Words)> {
    let mut words = Words::default();
    match split_into(&mut words, input, comments, place, env) {
        Ok(()) => Ok(words),
        Err(e) => Err((e, words)),
    }
}

/// [`split`] into `words`, whose buffers are reused (the lexer keeps one [`Words`] for
/// all its lines).
///
/// PERF: 140 000 lines of a large configuration made three to six allocations each here
/// (the buffers grown byte by byte); now none once the buffers have grown.
pub(crate) fn split_into(
    words: &mut Words,
    input: &[u8],
    comments: bool,
    place: &Place<'_>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), SplitError> {
    words.buf.clear();
    words.starts.clear();
    words.cuts.clear();
    words.too_many = false;
    // every input byte gives at most one output byte, but for expansions
    words.buf.reserve(input.len() + 1);
    let mut s = Splitter { input, i: 0, comments, words, quote: None, squote: false, dquote: false };
    s.words.starts.push(0);
    s.run(place, env)
}

struct Splitter<'a> {
    input: &'a [u8],
    i: usize,
    comments: bool,
    words: &'a mut Words,
    /// Offset of the quote currently open.
    quote: Option<usize>,
    squote: bool,
    dquote: bool,
}

impl Splitter<'_> {
    /// The byte at `i`, or NUL past the end (the input is a C string for HAProxy).
    fn at(&self, i: usize) -> u8 {
        self.input.get(i).copied().unwrap_or(0)
    }

    fn run(&mut self, place: &Place<'_>, env: &dyn Fn(&str) -> Option<String>) -> Result<(), SplitError> {
        loop {
            let c = self.at(self.i);
            match c {
                0 | b'\n' | b'\r' => break,
                b'#' if self.comments && !self.squote && !self.dquote => break,
                b'"' if !self.squote => {
                    self.dquote = !self.dquote;
                    self.quote = self.dquote.then_some(self.i);
                    self.i += 1;
                }
                b'\'' if !self.dquote => {
                    self.squote = !self.squote;
                    self.quote = self.squote.then_some(self.i);
                    self.i += 1;
                }
                b'\\' if !self.squote => self.escape()?,
                _ if is_space(c) && !self.squote && !self.dquote => {
                    while is_space(self.at(self.i)) {
                        self.i += 1;
                    }
                    self.words.next_word();
                }
                b'$' if self.dquote => self.expand(place, env)?,
                _ => {
                    self.words.emit(c);
                    self.i += 1;
                }
            }
        }
        self.words.buf.push(0);
        match self.quote {
            Some(q) => Err(SplitError::Quote(q)),
            None => Ok(()),
        }
    }

    /// A backslash outside single quotes, at `self.i`.
    fn escape(&mut self) -> Result<(), SplitError> {
        let next = self.at(self.i + 1);
        let (byte, len) = match next {
            b' ' | b'\\' => (next, 2),
            b't' => (b'\t', 2),
            b'n' => (b'\n', 2),
            b'r' => (b'\r', 2),
            b'#' if self.comments => (b'#', 2),
            b'\'' | b'"' => (next, 2),
            b'$' if self.dquote => (b'$', 2),
            b'x' => {
                let (Some(hi), Some(lo)) = (hex_value(self.at(self.i + 2)), hex_value(self.at(self.i + 3))) else {
                    return Err(SplitError::Hex(self.i));
                };
                (hi << 4 | lo, 4)
            }
            // Not an escape sequence: the backslash is kept and the next byte is read
            // normally.
            _ => (b'\\', 1),
        };
        self.words.emit(byte);
        self.i += len;
        Ok(())
    }

    /// `$` inside double quotes, at `self.i`.
    fn expand(&mut self, place: &Place<'_>, env: &dyn Fn(&str) -> Option<String>) -> Result<(), SplitError> {
        self.i += 1;
        let brace = (self.at(self.i) == b'{').then_some(self.i);
        if brace.is_some() {
            self.i += 1;
        }
        let first = self.at(self.i);
        if !(first.is_ascii_alphabetic() || first == b'_' || first == b'.') {
            return Err(SplitError::VarName(self.i));
        }
        let name_start = self.i;
        if first == b'.' {
            self.i += 1;
        }
        while self.at(self.i).is_ascii_alphanumeric() || self.at(self.i) == b'_' {
            self.i += 1;
        }
        let name = String::from_utf8_lossy(&self.input[name_start..self.i]).into_owned();
        let mut value = match name.as_str() {
            ".LINE" => Some(place.line.to_string()),
            ".FILE" => place.file.map(str::to_owned),
            ".SECTION" => place.section.map(str::to_owned),
            _ if first == b'.' => {
                // COMPAT: HAProxy leaves a NUL after the name in the line it then prints.
                self.words.cuts.push(self.i);
                return Err(SplitError::PseudoVar(name_start));
            }
            _ => env(&name),
        }
        .map(String::into_bytes);

        let mut split_words = false;
        if let Some(b) = brace {
            if self.at(self.i) == b'[' {
                let open = self.i;
                if self.at(self.i + 1) != b'*' || self.at(self.i + 2) != b']' {
                    return Err(SplitError::Expand(open));
                }
                self.i += 3;
                split_words = true;
            }
            if self.at(self.i) == b'-' {
                let default_start = self.i + 1;
                while !matches!(self.at(self.i), 0 | b'}') {
                    self.i += 1;
                }
                if self.at(self.i) == 0 {
                    return Err(SplitError::Brace(b));
                }
                if value.is_none() {
                    value = Some(self.input[default_start..self.i].to_vec());
                }
                // COMPAT: HAProxy ends the default value by writing a NUL over the `}`.
                self.words.cuts.push(self.i);
            } else if self.at(self.i) != b'}' {
                return Err(SplitError::Brace(b));
            }
            self.i += 1;
        }
        self.emit_value(&value.unwrap_or_default(), split_words);
        Ok(())
    }

    /// Emits an expanded value; with `[*]`, each run of blanks in it separates words.
    fn emit_value(&mut self, value: &[u8], split_words: bool) {
        let mut j = 0;
        while j < value.len() {
            if split_words && is_space(value[j]) {
                self.words.next_word();
                while j < value.len() && is_space(value[j]) {
                    j += 1;
                }
            } else {
                self.words.emit(value[j]);
                j += 1;
            }
        }
    }
}

fn hex_value(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Prepares `line` for an error message the way HAProxy does (`sanitize_for_printing()`):
/// the text stops at the first NUL, blanks become spaces and other non-printable bytes
/// `?`, and a line longer than `width` is cut around `pos` with `...` marks. Returns the
/// text and where `pos` lands in it.
pub(crate) fn sanitize_for_printing(line: &[u8], pos: usize, width: usize) -> (String, usize) {
    let mut out = String::new();
    let mut from = 0;
    let mut limit = width;
    let mut shift = 0;
    if pos >= width {
        shift = pos - width / 2;
        from = shift + 3;
        limit = width - 3;
        out.push_str("...");
    }
    for &b in line.iter().skip(from).take_while(|&&b| b != 0) {
        if out.len() >= limit {
            break;
        }
        out.push(if is_space(b) {
            ' '
        } else if b.is_ascii_graphic() {
            b as char
        } else {
            '?'
        });
    }
    if limit < width {
        out.push_str("...");
    }
    (out, pos - shift)
}

/// The first of the 256 private-use characters (U+10FF00..U+10FFFF) that stand for the
/// bytes of a word that are not UTF-8 (a `\xE0` in a quoted string), the way Python's
/// `surrogateescape` keeps them: the configuration model is text, and what reaches the
/// wire (sample arguments, log-format text) gets the bytes back with [`raw_bytes`].
pub const RAW_BASE: u32 = 0x10_FF00;

/// `s` read whole as C's `strtol` base 10 reads it (leading blanks, a sign, digits,
/// saturating as `strtol` does; the empty string is 0); `None` when something is left
/// over. How HAProxy's runtime API reads `#<id>` references (maps, ACLs, TLS ticket
/// key files).
pub fn strtol_whole(s: &str) -> Option<i64> {
    if s.is_empty() {
        return Some(0);
    }
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: i64 = digits.parse().unwrap_or(i64::MAX);
    Some(if neg { -n } else { n })
}

/// `bytes` as a string, each byte of an invalid UTF-8 sequence kept as
/// [`RAW_BASE`]` + byte`.
pub fn escape_raw(mut bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    loop {
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                out.push_str(s);
                return out;
            }
            Err(e) => {
                let (good, rest) = bytes.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(good).unwrap_or_default());
                let bad = e.error_len().unwrap_or(rest.len());
                for &b in &rest[..bad] {
                    out.push(char::from_u32(RAW_BASE + u32::from(b)).unwrap_or(char::REPLACEMENT_CHARACTER));
                }
                bytes = &rest[bad..];
            }
        }
    }
}

/// The bytes a configuration string stands for: its UTF-8, with the characters
/// [`escape_raw`] made of raw bytes turned back into those bytes.
pub fn raw_bytes(s: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    // U+10FF00..U+10FFFF is F4 8F BC..BF 80..BF in UTF-8
    let is_raw = |w: &[u8]| w.len() >= 4 && w[0] == 0xF4 && w[1] == 0x8F && (0xBC..=0xBF).contains(&w[2]);
    if !s.windows(4).any(is_raw) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if is_raw(&s[i..]) {
            out.push(((s[i + 2] - 0xBC) << 6) | (s[i + 3] & 0x3F));
            i += 4;
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod raw_tests {
    use super::*;

    #[test]
    fn raw_bytes_survive_the_round_trip() {
        let word = b"a\xe0b\xff\x80\xc3\xa9";
        let s = escape_raw(word);
        assert!(s.starts_with('a') && s.ends_with('\u{e9}'));
        assert_eq!(&raw_bytes(s.as_bytes())[..], word);
        assert!(matches!(raw_bytes(b"plain \xc3\xa9"), std::borrow::Cow::Borrowed(_)));
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn strtol_whole_reads_numbers_as_strtol() {
        assert_eq!(super::strtol_whole(""), Some(0));
        assert_eq!(super::strtol_whole("01"), Some(1));
        assert_eq!(super::strtol_whole(" +2"), Some(2));
        assert_eq!(super::strtol_whole(" -3"), Some(-3));
        assert_eq!(super::strtol_whole("12"), Some(12));
        assert_eq!(super::strtol_whole("99999999999999999999"), Some(i64::MAX));
        assert_eq!(super::strtol_whole("1x"), None);
        assert_eq!(super::strtol_whole(" "), None);
        assert_eq!(super::strtol_whole("-"), None);
    }

    use super::*;

    fn words(input: &str) -> Vec<String> {
        let env = |name: &str| match name {
            "HOME" => Some("/root".to_owned()),
            "LIST" => Some("a  b c".to_owned()),
            "EMPTY" => Some(String::new()),
            _ => None,
        };
        let place = Place { line: 7, file: Some("f.cfg"), section: None };
        split(input.as_bytes(), true, &place, &env)
            .map(|w| w.to_strings())
            .unwrap_or_else(|(e, _)| vec![format!("{e:?}")])
    }

    #[test]
    fn words_keep_the_layout_of_haproxy() {
        let place = Place { line: 1, file: None, section: None };
        let w = split(b".if a  b ", true, &place, &|_| None).unwrap_or_default();
        assert_eq!(w.len(), 4, "the trailing blank opens an empty word");
        assert_eq!(w.joined_from(1), b"a b ");
        assert_eq!(w.offset(2), 6);
        let w = split(b"a\\x00b c", true, &place, &|_| None).unwrap_or_default();
        assert_eq!(w.arg(0), b"a");
        assert_eq!(w.joined_from(0), b"a b c");
    }

    #[test]
    fn expansion_happens_in_double_quotes_only() {
        assert_eq!(words(r#""${HOME}" ${HOME} '${HOME}' "$HOME/x""#), ["/root", "${HOME}", "${HOME}", "/root/x"]);
        assert_eq!(words(r#""${LIST[*]}""#), ["a", "b", "c"]);
        assert_eq!(words(r#""${EMPTY-d}" "${NOPE-d e}""#), ["", "d e"]);
        assert_eq!(words(r#""${.LINE}${.FILE}${.SECTION-none}""#), ["7f.cfgnone"]);
    }

    #[test]
    fn errors_point_at_the_offending_byte() {
        assert_eq!(words(r#"a "b"#), ["Quote(2)"]);
        assert_eq!(words(r#"a "${B""#), ["Brace(4)"]);
        assert_eq!(words(r#"a "$1""#), ["VarName(4)"]);
        assert_eq!(words(r#"a "${.X}""#), ["PseudoVar(5)"]);
        assert_eq!(words(r"a \x4g"), ["Hex(2)"]);
        assert_eq!(words(r#""${B[x]}""#), ["Expand(4)"]);
    }

    #[test]
    fn sanitize_marks_cuts_and_non_printables() {
        assert_eq!(sanitize_for_printing(b"a\tb\x01c", 2, 80), ("a b?c".to_owned(), 2));
        assert_eq!(sanitize_for_printing(b"ab\0cd", 1, 80), ("ab".to_owned(), 1));
        let long = [b'x'; 200];
        let (text, pos) = sanitize_for_printing(&long, 150, 80);
        assert_eq!(pos, 40);
        assert_eq!(text.len(), 80);
        assert!(text.starts_with("...x") && text.ends_with("x..."));
    }
}
