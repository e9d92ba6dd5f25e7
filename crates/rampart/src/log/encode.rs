//! `%{+json}` and `%{+cbor}` (HAProxy 3.x; an extension of HAProxy 2.6, which has
//! neither): how one log-format value is written when an encoding is on. JSON values
//! are numbers, `true`/`false`, `null` or strings; CBOR (RFC 8949) items are written
//! as uppercase hexadecimal, two characters a byte, as HAProxy does without `+bin`.
//! What a variable is (number, text, request part ...) is decided by the caller
//! (`format::enc`); this module only knows the two encodings' grammar, byte for byte
//! as HAProxy 3.2 writes them: JSON strings escape only `"` and `\` (HAProxy leaves
//! other bytes as they are), CBOR texts of variables that are `#XX`-encoded are
//! indefinite-length texts whose chunks break at each encoded byte.
//! HAProxy counterpart: the `LOG_OPT_ENCODE_*` paths of `sess_build_logline()` and
//! the `cbor_encode_*` helpers (src/log.c, src/tools.c, 3.2).

/// An encoding of log-format values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enc {
    Json,
    Cbor,
}

/// The type a node is forced to (`%(name:type)`); only an encoding reads it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Cast {
    /// Keep the value's own type.
    #[default]
    Same,
    Str,
    Sint,
    Bool,
    /// The sample's bytes as they are, unencoded.
    Raw,
}

impl Cast {
    /// The `:type` of a node name; `None` for an unknown one.
    pub fn parse(s: &str) -> Option<Cast> {
        Some(match s {
            "str" => Cast::Str,
            "sint" => Cast::Sint,
            "bool" => Cast::Bool,
            "raw" => Cast::Raw,
            _ => return None,
        })
    }
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// CBOR major types, shifted into the initial byte.
const TEXT: u8 = 0x60;
const BYTES: u8 = 0x40;
const BREAK: u8 = 0xFF;

/// Writes encoded values into a line.
pub struct Writer<'a> {
    pub out: &'a mut Vec<u8>,
    pub enc: Enc,
    /// Inside a text opened by [`Writer::start_text`] (HAProxy's `in_text`).
    in_text: bool,
    /// `+Q` on the node: in CBOR, HAProxy still puts raw `"` around a text value.
    pub quote: bool,
}

impl<'a> Writer<'a> {
    pub fn new(out: &'a mut Vec<u8>, enc: Enc) -> Writer<'a> {
        Writer { out, enc, in_text: false, quote: false }
    }

    /// One CBOR byte, in hexadecimal.
    fn byte(&mut self, b: u8) {
        self.out.extend_from_slice(&[HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
    }

    /// A CBOR head: `major` with the argument `v` in its shortest form.
    fn head(&mut self, major: u8, v: u64) {
        match v {
            0..=23 => self.byte(major | v as u8),
            24..=0xFF => {
                self.byte(major | 24);
                self.byte(v as u8);
            }
            0x100..=0xFFFF => {
                self.byte(major | 25);
                (v as u16).to_be_bytes().into_iter().for_each(|b| self.byte(b));
            }
            0x1_0000..=0xFFFF_FFFF => {
                self.byte(major | 26);
                (v as u32).to_be_bytes().into_iter().for_each(|b| self.byte(b));
            }
            _ => {
                self.byte(major | 27);
                v.to_be_bytes().into_iter().for_each(|b| self.byte(b));
            }
        }
    }

    /// A definite-length CBOR string of major type `major`.
    fn chunk(&mut self, major: u8, s: &[u8]) {
        self.head(major, s.len() as u64);
        s.iter().for_each(|&b| self.byte(b));
    }

    /// `s` with `"` and `\` backslash-escaped, up to a NUL (HAProxy's `escape_string`).
    fn json_escaped(&mut self, s: &[u8]) {
        for &c in until_nul(s) {
            if c == b'"' || c == b'\\' {
                self.out.push(b'\\');
            }
            self.out.push(c);
        }
    }

    /// The map's opening (`{` / an indefinite-length map).
    pub fn open_map(&mut self) {
        match self.enc {
            Enc::Json => self.out.push(b'{'),
            Enc::Cbor => self.byte(0xBF),
        }
    }

    pub fn close_map(&mut self) {
        match self.enc {
            Enc::Json => self.out.push(b'}'),
            Enc::Cbor => self.byte(BREAK),
        }
    }

    /// A node's name as the key of the value that follows.
    pub fn key(&mut self, name: &str, first: bool) {
        match self.enc {
            Enc::Json => {
                if !first {
                    self.out.extend_from_slice(b", ");
                }
                self.out.push(b'"');
                self.out.extend_from_slice(name.as_bytes());
                self.out.extend_from_slice(b"\": ");
            }
            Enc::Cbor => self.chunk(TEXT, name.as_bytes()),
        }
    }

    /// What a node that wrote nothing is.
    pub fn null(&mut self) {
        match self.enc {
            Enc::Json => self.out.extend_from_slice(b"null"),
            Enc::Cbor => self.byte(0xF6),
        }
    }

    pub fn boolean(&mut self, v: bool) {
        match (self.enc, v) {
            (Enc::Json, true) => self.out.extend_from_slice(b"true"),
            (Enc::Json, false) => self.out.extend_from_slice(b"false"),
            (Enc::Cbor, v) => self.byte(if v { 0xF5 } else { 0xF4 }),
        }
    }

    /// An integer: a number, a boolean with `:bool`, a JSON string with `:str`
    /// (HAProxy's `lf_int_encode`).
    pub fn int(&mut self, v: i64, cast: Cast) {
        match (self.enc, cast) {
            (_, Cast::Bool) => self.boolean(v != 0),
            (Enc::Json, Cast::Str) => {
                self.out.push(b'"');
                super::format::decimal(self.out, v);
                self.out.push(b'"');
            }
            (Enc::Json, _) => super::format::decimal(self.out, v),
            (Enc::Cbor, _) if v >= 0 => self.head(0x00, v as u64),
            (Enc::Cbor, _) => self.head(0x20, !(v as u64)),
        }
    }

    /// A text value (HAProxy's `lf_text_len`): a JSON string, `""` for none; a CBOR
    /// text, nothing for none (the node is then `null`); with `+Q`, HAProxy writes
    /// `"` before and after the CBOR item, as they are.
    pub fn text(&mut self, s: Option<&[u8]>) {
        let s = s.unwrap_or_default();
        if self.quote && self.enc == Enc::Cbor {
            self.out.push(b'"');
            if !s.is_empty() {
                self.chunk(TEXT, until_nul(s));
            }
            self.out.push(b'"');
            return;
        }
        match self.enc {
            Enc::Json => {
                self.out.push(b'"');
                self.json_escaped(s);
                self.out.push(b'"');
            }
            Enc::Cbor if s.is_empty() => {}
            Enc::Cbor => self.chunk(TEXT, until_nul(s)),
        }
    }

    /// Text that is no string of its own inside an open text (`lf_rawtext_len`).
    pub fn rawtext(&mut self, s: &[u8]) {
        match self.enc {
            Enc::Json if !self.in_text => self.text(Some(s)),
            Enc::Json => self.json_escaped(s),
            Enc::Cbor if s.is_empty() => {}
            Enc::Cbor => self.chunk(TEXT, until_nul(s)),
        }
    }

    /// Opens a text written in pieces (`LOG_VARTEXT_START`).
    pub fn start_text(&mut self) {
        self.in_text = true;
        match self.enc {
            Enc::Json => self.out.push(b'"'),
            Enc::Cbor => self.byte(TEXT | 0x1F),
        }
    }

    /// Closes the open text, if any (`LOG_VARTEXT_END`).
    pub fn end_text(&mut self) {
        if !std::mem::take(&mut self.in_text) {
            return;
        }
        match self.enc {
            Enc::Json => self.out.push(b'"'),
            Enc::Cbor => self.byte(BREAK),
        }
    }

    /// One character of an open text (`LOGCHAR`): a chunk of its own in CBOR.
    pub fn ch(&mut self, c: u8) {
        match self.enc {
            Enc::Cbor if self.in_text => self.chunk(TEXT, &[c]),
            _ => self.out.push(c),
        }
    }

    /// Text already `#XX`-encoded by the plain renderer (every `#` starts an encoded
    /// byte: the maps that produce it all encode `#`), written as HAProxy's
    /// `lf_encode_string` writes it: in CBOR, the runs between encoded bytes and each
    /// encoded byte are chunks of their own (an empty run before an encoded byte too).
    pub fn encoded(&mut self, s: &[u8]) {
        if self.enc == Enc::Json {
            return self.json_escaped(s);
        }
        let own = !self.in_text;
        if own {
            self.byte(TEXT | 0x1F);
        }
        let mut rest = s;
        while let Some(at) = memchr::memchr(b'#', rest) {
            let end = (at + 3).min(rest.len());
            self.chunk(TEXT, &rest[..at]);
            self.chunk(TEXT, &rest[at..end]);
            rest = &rest[end..];
        }
        if !rest.is_empty() {
            self.chunk(TEXT, rest);
        }
        if own {
            self.byte(BREAK);
        }
    }

    /// Binary data: an indefinite-length CBOR byte string of one chunk (JSON has no
    /// binary: callers give it text).
    pub fn bytes(&mut self, s: &[u8]) {
        self.byte(BYTES | 0x1F);
        if !s.is_empty() {
            self.chunk(BYTES, s);
        }
        self.byte(BREAK);
    }

    pub fn start_array(&mut self) {
        match self.enc {
            Enc::Json => self.out.push(b'['),
            Enc::Cbor => self.byte(0x9F),
        }
    }

    pub fn next_in_array(&mut self) {
        if self.enc == Enc::Json {
            self.out.extend_from_slice(b", ");
        }
    }

    pub fn end_array(&mut self) {
        match self.enc {
            Enc::Json => self.out.push(b']'),
            Enc::Cbor => self.byte(BREAK),
        }
    }
}

/// `s` up to its first NUL, as HAProxy's C strings end.
fn until_nul(s: &[u8]) -> &[u8] {
    &s[..memchr::memchr(0, s).unwrap_or(s.len())]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(enc: Enc, f: impl FnOnce(&mut Writer<'_>)) -> String {
        let mut out = Vec::new();
        f(&mut Writer::new(&mut out, enc));
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn json_strings_escape_quotes_and_backslashes_only() {
        assert_eq!(with(Enc::Json, |w| w.text(Some(b"a\"b\\c\td\x01"))), "\"a\\\"b\\\\c\td\x01\"");
        assert_eq!(with(Enc::Json, |w| w.text(None)), "\"\"");
        assert_eq!(with(Enc::Json, |w| w.text(Some(b"cut\0here"))), "\"cut\"");
        assert_eq!(with(Enc::Json, |w| w.rawtext(b"--")), "\"--\"");
        let ft = with(Enc::Json, |w| {
            w.start_text();
            w.rawtext(b"fe");
            w.ch(b'~');
            w.end_text();
        });
        assert_eq!(ft, "\"fe~\"");
        assert_eq!(with(Enc::Json, |w| w.encoded(b"x#22y\\z")), "x#22y\\\\z");
    }

    #[test]
    fn json_numbers_booleans_and_casts() {
        assert_eq!(with(Enc::Json, |w| w.int(-12, Cast::Same)), "-12");
        assert_eq!(with(Enc::Json, |w| w.int(8, Cast::Str)), "\"8\"");
        assert_eq!(with(Enc::Json, |w| w.int(2, Cast::Bool)), "true");
        assert_eq!(with(Enc::Json, |w| w.boolean(false)), "false");
        assert_eq!(with(Enc::Json, |w| w.null()), "null");
        let arr = with(Enc::Json, |w| {
            w.start_array();
            for (i, v) in ["a", "b"].iter().enumerate() {
                if i > 0 {
                    w.next_in_array();
                }
                w.start_text();
                w.encoded(v.as_bytes());
                w.end_text();
            }
            w.end_array();
        });
        assert_eq!(arr, r#"["a", "b"]"#);
        let map = with(Enc::Json, |w| {
            w.open_map();
            w.key("a", true);
            w.int(1, Cast::Same);
            w.key("b", false);
            w.null();
            w.close_map();
        });
        assert_eq!(map, r#"{"a": 1, "b": null}"#);
    }

    #[test]
    fn cbor_integers_take_the_shortest_head() {
        for (v, hex) in [
            (0, "00"),
            (23, "17"),
            (24, "1818"),
            (255, "18FF"),
            (256, "190100"),
            (65536, "1A00010000"),
            (1 << 32, "1B0000000100000000"),
            (-1, "20"),
            (-24, "37"),
            (-25, "3818"),
            (-500, "3901F3"),
            (i64::MIN, "3B7FFFFFFFFFFFFFFF"),
        ] {
            assert_eq!(with(Enc::Cbor, |w| w.int(v, Cast::Same)), hex, "{v}");
        }
        assert_eq!(with(Enc::Cbor, |w| w.int(5, Cast::Str)), "05", "CBOR has no string numbers");
        assert_eq!(with(Enc::Cbor, |w| w.int(5, Cast::Bool)), "F5");
        assert_eq!(with(Enc::Cbor, |w| w.boolean(false)), "F4");
        assert_eq!(with(Enc::Cbor, |w| w.null()), "F6");
    }

    #[test]
    fn cbor_strings_arrays_and_maps() {
        assert_eq!(with(Enc::Cbor, |w| w.text(Some(b"be"))), "626265");
        assert_eq!(with(Enc::Cbor, |w| w.text(None)), "");
        let quoted = |s: Option<&'static [u8]>| {
            with(Enc::Cbor, |w| {
                w.quote = true;
                w.text(s)
            })
        };
        assert_eq!(quoted(Some(b"be")), "\"626265\"");
        assert_eq!(quoted(None), "\"\"");
        let long = [b'a'; 24];
        assert_eq!(with(Enc::Cbor, |w| w.text(Some(&long))), format!("7818{}", "61".repeat(24)));
        // runs and encoded bytes are chunks of their own, an empty run too
        assert_eq!(with(Enc::Cbor, |w| w.encoded(b"x#22y")), "7F61786323323261 79FF".replace(' ', ""));
        assert_eq!(with(Enc::Cbor, |w| w.encoded(b"#22")), "7F6063233232FF");
        let hr = with(Enc::Cbor, |w| {
            w.start_text();
            w.ch(b'{');
            w.encoded(b"h");
            w.ch(b'}');
            w.end_text();
        });
        assert_eq!(hr, "7F617B6168617DFF");
        assert_eq!(with(Enc::Cbor, |w| w.bytes(&[0, 0xFF])), "5F4200FFFF");
        let doc = with(Enc::Cbor, |w| {
            w.open_map();
            w.key("a", true);
            w.start_array();
            w.int(1, Cast::Same);
            w.next_in_array();
            w.int(2, Cast::Same);
            w.end_array();
            w.close_map();
        });
        assert_eq!(doc, "BF61619F0102FFFF");
        assert_eq!(Cast::parse("sint"), Some(Cast::Sint));
        assert_eq!(Cast::parse("int"), None);
    }
}
